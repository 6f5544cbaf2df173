/* session_fixture.h - for the plugin and action unit tests: a cluster from
 * YAML manifests (load_cluster.h), its snapshot, a configuration from a
 * string and a real session over them, with the effects recorded.
 *
 *   fx *f = fx_new();
 *   fx_loadf(f, NODE("n1", "{cpu: '4', memory: 8Gi}"));
 *   fx_open(f, CONF_TEXT);        (NULL: the built-in default)
 *   ... ask the framework (kb_job_less, kb_preemptable ...) or run actions
 *   fx_free(f);
 *
 * Include after <cmocka.h>. Everything is freed by fx_free().
 */
#ifndef KB_TESTS_UNIT_SESSION_FIXTURE_H
#define KB_TESTS_UNIT_SESSION_FIXTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cluster.h"
#include "plugins/registry.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"
#include "tests/unit/load_cluster.h"

#define FX_MAX_EFFECTS 64

typedef struct fx {
	kb_cluster cluster;
	kb_snapshot snap;
	kb_conf conf;
	kb_session ssn;
	bool opened;
	/* What the session's effects were asked to do, by task key. */
	const char *bound[FX_MAX_EFFECTS];
	const char *bound_node[FX_MAX_EFFECTS];
	int nbound;
	const char *evicted[FX_MAX_EFFECTS];
	int nevicted;
	/* At close: each pending task's reason, copied (the arena goes). */
	const char *pending[FX_MAX_EFFECTS];
	char pending_reason[FX_MAX_EFFECTS][512];
	int npending;
	/* At close: each PodGroup's status phase and unschedulable reason. */
	const char *group[FX_MAX_EFFECTS];
	kb_pg_phase group_phase[FX_MAX_EFFECTS];
	char group_reason[FX_MAX_EFFECTS][512];
	int ngroups;
} fx;

static int fx_rec_bind(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		       const kb_node *n)
{
	fx *f = ctx;
	assert_true(f->nbound < FX_MAX_EFFECTS);
	f->bound_node[f->nbound] = n->name;
	f->bound[f->nbound++] = t->key;
	return 0;
}

static int fx_rec_evict(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
			const char *why)
{
	fx *f = ctx;
	assert_true(f->nevicted < FX_MAX_EFFECTS);
	f->evicted[f->nevicted++] = t->key;
	return 0;
}

static int fx_rec_pending(void *ctx, const kb_snapshot *snap, const kb_task *t, const char *why)
{
	fx *f = ctx;
	assert_true(f->npending < FX_MAX_EFFECTS);
	snprintf(f->pending_reason[f->npending], sizeof(f->pending_reason[0]), "%s", why);
	f->pending[f->npending++] = t->key;
	return 0;
}

static int fx_rec_job_status(void *ctx, const kb_snapshot *snap, const kb_job *j,
			     const kb_job_status *st)
{
	fx *f = ctx;
	if (j->flavor == KB_PG_NONE)
		return 0;
	assert_true(f->ngroups < FX_MAX_EFFECTS);
	f->group_phase[f->ngroups] = st->phase;
	snprintf(f->group_reason[f->ngroups], sizeof(f->group_reason[0]), "%s",
		 st->unschedulable ? st->unschedulable : "");
	f->group[f->ngroups++] = j->key;
	return 0;
}

static const kb_effects fx_recorder = {.bind = fx_rec_bind,
				       .evict = fx_rec_evict,
				       .job_status = fx_rec_job_status,
				       .task_pending = fx_rec_pending};

static inline fx *fx_new(void)
{
	fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	kb_cluster_init(&f->cluster, "kube-batchd", "default");
	kb_snapshot_init(&f->snap);
	return f;
}

/* Loads manifests formatted from fmt. */
static inline void fx_loadf(fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void fx_loadf(fx *f, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	load_cluster(&f->cluster, buf);
}

/* Builds the snapshot and opens a session with conf_text (NULL: the
 * built-in default configuration), at session time now_ms. */
static inline void fx_open_at(fx *f, const char *conf_text, int64_t now_ms)
{
	kb_err err = {0};
	assert_int_equal(kb_cluster_snapshot(&f->cluster, &f->snap, &err), 0);
	if (conf_text)
		assert_int_equal(kb_conf_load_buffer(conf_text, strlen(conf_text), "conf",
						     &kb_builtin_registry, &f->conf, &err),
				 0);
	else
		assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &f->conf, &err), 0);
	assert_int_equal(
		kb_session_open(&f->ssn, &f->snap, &f->conf, &fx_recorder, f, now_ms, &err), 0);
	f->opened = true;
}

static inline void fx_open(fx *f, const char *conf_text)
{
	fx_open_at(f, conf_text, 0);
}

static inline void fx_run(fx *f)
{
	kb_err err = {0};
	assert_int_equal(kb_session_run_actions(&f->ssn, &err), 0);
	assert_true(kb_snapshot_check(&f->snap, NULL, 0));
}

/* Closes the session (the pending reasons are recorded then). */
static inline void fx_close(fx *f)
{
	assert_true(f->opened);
	f->opened = false;
	kb_session_close(&f->ssn);
}

/* A fixture with manifests loaded and one session with conf_text run and
 * closed (statuses and pending reasons recorded). Free with fx_free. */
static inline fx *fx_session(const char *conf_text, const char *manifests)
{
	fx *f = fx_new();
	fx_loadf(f, "%s", manifests);
	fx_open(f, conf_text);
	fx_run(f);
	fx_close(f);
	return f;
}

/* The reason recorded at close for a pending task, or NULL. */
static inline const char *fx_pending_reason(const fx *f, const char *key)
{
	for (int i = 0; i < f->npending; i++)
		if (strcmp(f->pending[i], key) == 0)
			return f->pending_reason[i];
	return NULL;
}

/* The status phase reported at close for PodGroup key ("ns/name"). */
static inline kb_pg_phase fx_group_phase(const fx *f, const char *key)
{
	for (int i = 0; i < f->ngroups; i++)
		if (strcmp(f->group[i], key) == 0)
			return f->group_phase[i];
	fail_msg("no status reported for PodGroup %s", key);
	return KB_PG_UNKNOWN;
}

/* The unschedulable reason reported at close for PodGroup key ("" when none). */
static inline const char *fx_group_reason(const fx *f, const char *key)
{
	for (int i = 0; i < f->ngroups; i++)
		if (strcmp(f->group[i], key) == 0)
			return f->group_reason[i];
	fail_msg("no status reported for PodGroup %s", key);
	return "";
}

static inline void fx_free(fx *f)
{
	if (f->opened)
		kb_session_close(&f->ssn);
	kb_conf_release(&f->conf);
	kb_snapshot_release(&f->snap);
	kb_cluster_release(&f->cluster);
	free(f);
}

static inline const kb_task *fx_task(const fx *f, const char *key)
{
	for (uint32_t i = 0; i < f->snap.ntasks; i++)
		if (strcmp(f->snap.tasks[i].key, key) == 0)
			return &f->snap.tasks[i];
	fail_msg("no task %s", key);
	return NULL;
}

static inline uint32_t fx_task_index(const fx *f, const char *key)
{
	return (uint32_t)(fx_task(f, key) - f->snap.tasks);
}

static inline const kb_job *fx_job(const fx *f, const char *key)
{
	int32_t j = kb_snapshot_find_job(&f->snap, key);
	if (j < 0)
		fail_msg("no job %s", key);
	return &f->snap.jobs[j];
}

static inline const kb_queue *fx_queue(const fx *f, const char *name)
{
	int32_t q = kb_snapshot_find_queue(&f->snap, name);
	if (q < 0)
		fail_msg("no queue %s", name);
	return &f->snap.queues[q];
}

static inline const kb_node *fx_node(const fx *f, const char *name)
{
	int32_t n = kb_snapshot_find_node(&f->snap, name);
	if (n < 0)
		fail_msg("no node %s", name);
	return &f->snap.nodes[n];
}

static inline bool fx_was_evicted(const fx *f, const char *key)
{
	for (int i = 0; i < f->nevicted; i++)
		if (strcmp(f->evicted[i], key) == 0)
			return true;
	return false;
}

/* The node a task was bound to by the session, or NULL. */
static inline const char *fx_bound_to(const fx *f, const char *key)
{
	for (int i = 0; i < f->nbound; i++)
		if (strcmp(f->bound[i], key) == 0)
			return f->bound_node[i];
	return NULL;
}

/* Runs the framework's victim selection over the named candidates (in that
 * order, NULL-terminated) for preemptor `by`; returns a bit mask of the
 * candidates chosen (bit i = the i-th name). */
static inline unsigned fx_victims(const fx *f, bool reclaim, const char *by, ...)
{
	uint32_t cands[32], out[32];
	uint32_t n = 0;
	va_list ap;
	va_start(ap, by);
	for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
		assert_true(n < 32);
		cands[n++] = fx_task_index(f, k);
	}
	va_end(ap);
	const kb_task *t = fx_task(f, by);
	int nv = reclaim ? kb_reclaimable(&f->ssn, t, cands, n, out)
			 : kb_preemptable(&f->ssn, t, cands, n, out);
	assert_true(nv >= 0);
	unsigned mask = 0;
	for (int i = 0; i < nv; i++)
		for (uint32_t k = 0; k < n; k++)
			if (cands[k] == out[i])
				mask |= 1u << k;
	return mask;
}

/* ---- manifests ------------------------------------------------------------------- */

/* A node: name, allocatable as a flow map, e.g. "{cpu: '4', memory: 8Gi}". */
#define NODE(name, alloc)                                                                       \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                          \
	"status: {allocatable: " alloc "}\n"

/* A volcano PodGroup: name, minMember, more spec fields ("" or ", queue: q"). */
#define PODGROUP(name, min, extra)                                                              \
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: " name \
	"}\nspec: {minMember: " #min extra "}\n"

/* A volcano Queue: name, more spec fields ("weight: 1, reclaimable: true"). */
#define QUEUE(name, spec)                                                                       \
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " name   \
	"}\nspec: {" spec "}\n"

#define PRIORITY_CLASS(name, value)                                                             \
	"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " name    \
	"}\nvalue: " #value "\n"

/* A pending pod of group (NULL-free: "" for a lone pod is not allowed here;
 * use LONE_POD), its requests as a flow map, and more spec fields. */
#define POD(name, group, req, spec)                                                             \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                 \
	", annotations: {scheduling.k8s.io/group-name: " group "}}\n"                            \
	"spec: {schedulerName: kube-batchd, " spec                                               \
	"containers: [{name: c, resources: {requests: " req "}}]}\n"

/* A pod of group running on node. */
#define RUNNING(name, group, node, req, spec)                                                   \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                 \
	", annotations: {scheduling.k8s.io/group-name: " group "}}\n"                            \
	"spec: {schedulerName: kube-batchd, nodeName: " node ", " spec                           \
	"containers: [{name: c, resources: {requests: " req "}}]}\nstatus: {phase: Running}\n"

/* A pod of no group (a job of one). */
#define LONE_POD(name, req, spec)                                                               \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n"                           \
	"spec: {schedulerName: kube-batchd, " spec                                               \
	"containers: [{name: c, resources: {requests: " req "}}]}\n"

#define LONE_RUNNING(name, node, req, spec)                                                     \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n"                           \
	"spec: {schedulerName: kube-batchd, nodeName: " node ", " spec                           \
	"containers: [{name: c, resources: {requests: " req "}}]}\nstatus: {phase: Running}\n"

#endif

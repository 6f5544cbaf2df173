/* fuzz_sessions.c - one session and its invariants (see fuzz_sessions.h). */
#include "tests/fuzz/fuzz_sessions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

typedef struct fz_bind {
	char *pod, *node; /* copies: the snapshot's names live in objects the
			   * store may retire once it changes */
	int32_t job;      /* index into the snapshot's jobs */
	uint32_t gpu_mask; /* devices chosen */
} fz_bind;

typedef struct fz_rec {
	KB_VEC(fz_bind) binds;
	KB_VEC(char *) evicts;
	size_t npending;
} fz_rec;

static int rec_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		    const kb_node *n)
{
	fz_rec *rec = ctx;
	if (!t->key || !n->name || t->job < 0 || t->foreign)
		abort(); /* a foreign pod or a task of no job bound */
	fz_bind b = {.pod = strdup(t->key), .node = strdup(n->name), .job = t->job,
		     .gpu_mask = t->gpu_mask};
	if (!b.pod || !b.node || KB_VEC_PUSH(&rec->binds, b) < 0) {
		free(b.pod);
		free(b.node);
		return -ENOMEM;
	}
	return 0;
}

/* The simulator's PV controller: claims bound at once. */
static int rec_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
			    const kb_node *n, const kb_task_volumes *vol, const int32_t *picks)
{
	return 1;
}

static int rec_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		     const char *reason)
{
	fz_rec *rec = ctx;
	if (!reason || !reason[0] || t->foreign)
		abort();
	char *pod = strdup(t->key);
	if (!pod || KB_VEC_PUSH(&rec->evicts, pod) < 0) {
		free(pod);
		return -ENOMEM;
	}
	return 0;
}

static int rec_pending(void *ctx, const kb_snapshot *snap, const kb_task *t, const char *reason)
{
	fz_rec *rec = ctx;
	if (!reason || !reason[0] || t->foreign || t->status != KB_TASK_PENDING)
		abort();
	rec->npending++;
	return 0;
}

static const kb_effects rec_effects = {
	.bind = rec_bind,
	.bind_volumes = rec_bind_volumes,
	.evict = rec_evict,
	.task_pending = rec_pending,
};

static bool evicted(const fz_rec *rec, const char *pod)
{
	for (size_t i = 0; i < rec->evicts.n; i++)
		if (strcmp(rec->evicts.v[i], pod) == 0)
			return true;
	return false;
}

static bool bound_now(const fz_rec *rec, const char *pod)
{
	for (size_t i = 0; i < rec->binds.n; i++)
		if (strcmp(rec->binds.v[i].pod, pod) == 0)
			return true;
	return false;
}

/* The store's view of a pod: its node (NULL: none) and whether it finished. */
static const char *store_node(const kb_slot *sl, bool *ret_finished)
{
	const kb_pod_obj *p = &sl->obj->u.pod;
	if (sl->overridden) {
		*ret_finished = sl->status == KB_TASK_SUCCEEDED || sl->status == KB_TASK_FAILED;
		return sl->node;
	}
	*ret_finished = p->phase == KB_POD_SUCCEEDED || p->phase == KB_POD_FAILED;
	return p->node_name;
}

/* No pod twice, none already on a node. */
static void check_binds(kb_cluster *c, const fz_rec *rec)
{
	for (size_t i = 0; i < rec->binds.n; i++) {
		const char *pod = rec->binds.v[i].pod;
		for (size_t k = 0; k < i; k++)
			if (strcmp(rec->binds.v[k].pod, pod) == 0)
				abort(); /* bound twice in one session */
		const kb_slot *sl = kb_cluster_slot(c, KB_KIND_POD, pod);
		bool finished;
		if (!sl)
			abort(); /* a binding of a pod the store does not have */
		if (store_node(sl, &finished) && !evicted(rec, pod))
			abort(); /* bound while on a node */
	}
}

/* The kubelet's admission rule on the nodes that got a pod, for the
 * resources the new pods ask for. */
static void check_capacity(kb_cluster *c, const kb_snapshot *snap, const fz_rec *rec)
{
	for (size_t i = 0; i < rec->binds.n; i++) {
		const char *node = rec->binds.v[i].node;
		int32_t ni = kb_snapshot_find_node(snap, node);
		if (ni < 0)
			abort();
		bool asked[KB_RES_MAX] = {false};
		kb_res sum;
		memset(&sum, 0, sizeof(sum));
		for (size_t k = 0; k < rec->binds.n; k++) {
			if (strcmp(rec->binds.v[k].node, node) != 0)
				continue;
			const kb_slot *sl = kb_cluster_slot(c, KB_KIND_POD, rec->binds.v[k].pod);
			for (int r = 0; r < KB_RES_MAX; r++)
				if (sl->obj->u.pod.req.q[r] > 0)
					asked[r] = true;
			kb_res_add(&sum, &sl->obj->u.pod.req);
		}
		for (size_t s = 0; s < c->pods.slots.n; s++) {
			const kb_slot *sl = &c->pods.slots.v[s];
			bool finished;
			const char *on = sl->obj ? store_node(sl, &finished) : NULL;
			if (!on || finished || strcmp(on, node) != 0 ||
			    evicted(rec, sl->obj->meta.key) || bound_now(rec, sl->obj->meta.key))
				continue;
			kb_res_add(&sum, &sl->obj->u.pod.req);
		}
		for (int r = 0; r < KB_RES_MAX; r++)
			if (asked[r] && sum.q[r] > snap->nodes[ni].allocatable.q[r])
				abort(); /* the node is over its allocatable */
	}
}

/* A gang that got a pod has minMember placed. */
static void check_gangs(kb_cluster *c, const kb_snapshot *snap, const fz_rec *rec)
{
	for (size_t i = 0; i < rec->binds.n; i++) {
		const kb_job *j = &snap->jobs[rec->binds.v[i].job];
		if (j->flavor == KB_PG_NONE)
			continue;
		int32_t placed = 0;
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &snap->tasks[snap->job_tasks[j->first_task + k]];
			const kb_slot *sl = kb_cluster_slot(c, KB_KIND_POD, t->key);
			bool finished = false;
			const char *on = sl ? store_node(sl, &finished) : NULL;
			if (bound_now(rec, t->key) || finished || (on && !evicted(rec, t->key)))
				placed++;
		}
		if (placed < j->min_member)
			abort(); /* a gang partly placed */
	}
}

/* Every pending task of ours reported once. */
static void check_pending(const kb_snapshot *snap, const fz_rec *rec)
{
	size_t want = 0;
	for (uint32_t t = 0; t < snap->ntasks; t++)
		if (!snap->tasks[t].foreign && snap->tasks[t].status == KB_TASK_PENDING)
			want++;
	if (want != rec->npending)
		abort();
}

/* The decisions into the store, as the simulator applies them. */
static int apply_decisions(kb_cluster *c, const fz_rec *rec, int64_t now_ms)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < rec->evicts.n; i++)
		if ((r = kb_cluster_set_pod(c, rec->evicts.v[i], NULL, KB_TASK_PENDING, 0, 0)) == 0)
			r = kb_cluster_note_eviction(c, rec->evicts.v[i], now_ms);
	for (size_t i = 0; r == 0 && i < rec->binds.n; i++)
		r = kb_cluster_set_pod(c, rec->binds.v[i].pod, rec->binds.v[i].node, KB_TASK_RUNNING,
				       now_ms, rec->binds.v[i].gpu_mask);
	return r;
}

int fz_session(kb_cluster *c, const kb_conf *conf, kb_session_memo *memo, int64_t now_ms,
	       bool apply, kb_err *err)
{
	kb_snapshot *snap;
	int r = kb_cluster_session_snapshot(c, &snap, err);
	if (r < 0)
		return r;
	fz_rec rec;
	memset(&rec, 0, sizeof(rec));
	kb_session ssn;
	if ((r = kb_session_open(&ssn, snap, conf, &rec_effects, &rec, now_ms, err)) < 0)
		goto out;
	kb_session_use_memo(&ssn, memo);
	r = kb_session_run_actions(&ssn, err);
	int rc = kb_session_close(&ssn);
	if (r == 0 && rc < 0)
		r = kb_err_set(err, rc, "effects: %d", rc);
	if (r < 0)
		goto out;
	check_binds(c, &rec);
	check_capacity(c, snap, &rec);
	check_gangs(c, snap, &rec);
	check_pending(snap, &rec);
	if (apply && (r = apply_decisions(c, &rec, now_ms)) < 0)
		kb_err_set(err, r, "applying the decisions");
out:
	if (r < 0 && (err->code != r || !err->msg[0]))
		abort(); /* a failure without its message */
	for (size_t i = 0; i < rec.binds.n; i++) {
		free(rec.binds.v[i].pod);
		free(rec.binds.v[i].node);
	}
	for (size_t i = 0; i < rec.evicts.n; i++)
		free(rec.evicts.v[i]);
	KB_VEC_RELEASE(&rec.binds);
	KB_VEC_RELEASE(&rec.evicts);
	return r;
}

/* estimate.c - estimated starts of pending gangs (see estimate.h). */
#include "scheduler/estimate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/defaults.h"

#define AFTER_MAX 3    /* jobs named in "after" and in "waits for" */
#define TEXT_MAX 512   /* an estimate's after or reason */

/* ---- the input ------------------------------------------------------------------- */

void kb_estimate_input_release(kb_estimate_input *in)
{
	for (size_t i = 0; i < in->ends.n; i++)
		free((char *)in->ends.v[i].pod);
	for (size_t i = 0; i < in->unknown.n; i++)
		free(in->unknown.v[i]);
	for (size_t i = 0; i < in->pending.n; i++)
		free(in->pending.v[i]);
	for (size_t i = 0; i < in->groups.n; i++)
		free(in->groups.v[i]);
	KB_VEC_RELEASE(&in->ends);
	KB_VEC_RELEASE(&in->unknown);
	KB_VEC_RELEASE(&in->pending);
	KB_VEC_RELEASE(&in->groups);
	memset(in, 0, sizeof(*in));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Pushes a copy of s onto a vector of char *. 0 or -ENOMEM. */
static int push_copy(void *vec_, const char *s)
{
	KB_VEC(char *) *vec = vec_;
	char *d = strdup(s);
	if (!d || KB_VEC_PUSH(vec, d) < 0) {
		free(d);
		return -ENOMEM;
	}
	return 0;
}

/* Sorts a vector of owned strings and drops repeats. */
static void sort_unique(void *vec_)
{
	KB_VEC(char *) *vec = vec_;
	if (!vec->n)
		return;
	qsort(vec->v, vec->n, sizeof(char *), cmp_str);
	size_t keep = 1;
	for (size_t i = 1; i < vec->n; i++) {
		if (strcmp(vec->v[i], vec->v[keep - 1]) == 0)
			free(vec->v[i]);
		else
			vec->v[keep++] = vec->v[i];
	}
	vec->n = keep;
}

/* When the pod of slot sl, on a node, ends (estimate.h), or -1 for
 * unknown; *ret_history whether the history said. */
static int64_t expected_end(const kb_slot *sl, const kb_estimate_options *opt, const char *queue,
			    bool *ret_history)
{
	const kb_object *o = sl->obj;
	const kb_pod_obj *p = &o->u.pod;
	*ret_history = false;
	if (o->meta.deleting)
		return opt->now_ms; /* going: its grace period is not counted */
	int64_t start = p->start_ms > 0 ? p->start_ms : sl->started_ms > 0 ? sl->started_ms
									  : sl->created_ms;
	if (p->sim_duration_ms >= 0)
		return start + p->sim_duration_ms;
	if (p->active_deadline_ms >= 0)
		return start + p->active_deadline_ms;
	if (!opt->history)
		return -1;
	char job[320];
	int64_t ms = kb_runtimes_expect(opt->history, kb_runtimes_job_name(o, job, sizeof(job)),
					queue, NULL);
	if (ms < 0)
		return -1;
	*ret_history = true;
	return start + ms;
}

/* Whether the pod of sl is on a node and not finished. */
static bool on_node(const kb_slot *sl)
{
	if (sl->overridden)
		return sl->node && kb_task_status_allocated(sl->status);
	const kb_pod_obj *p = &sl->obj->u.pod;
	return p->node_name && p->phase != KB_POD_SUCCEEDED && p->phase != KB_POD_FAILED;
}

/* Each pod on a node: its end into in->ends, or its job into in->unknown.
 * job_of_slot: the snapshot's job of each pod slot (-1: none). */
static int read_ends(kb_cluster *c, const kb_snapshot *s, const int32_t *job_of_slot,
		     const kb_estimate_options *opt, kb_estimate_input *in)
{
	for (size_t i = 0; i < c->pods.slots.n; i++) {
		const kb_slot *sl = &c->pods.slots.v[i];
		if (!sl->obj || !on_node(sl))
			continue;
		int32_t j = job_of_slot[i];
		const char *queue = j >= 0 && s->jobs[j].queue >= 0
					    ? s->queues[s->jobs[j].queue].name
					    : NULL;
		bool history;
		int64_t end = expected_end(sl, opt, queue, &history);
		int r;
		if (end < 0) {
			r = push_copy(&in->unknown, j >= 0 ? s->jobs[j].key : sl->obj->meta.key);
		} else {
			kb_sim_end e = {.pod = strdup(sl->obj->meta.key), .end_ms = end};
			r = e.pod && KB_VEC_PUSH(&in->ends, e) == 0 ? 0 : -ENOMEM;
			if (r < 0)
				free((char *)e.pod);
			in->from_history += history;
		}
		if (r < 0)
			return r;
	}
	sort_unique(&in->unknown);
	return 0;
}

/* Whether j is a gang of ours: a group (not a lone pod) whose pods name
 * this scheduler. */
static bool is_group(const kb_job *j)
{
	return j->flavor != KB_PG_NONE && !j->foreign;
}

/* A PodGroup of ours waiting to run whole: fewer than minMember placed,
 * and not a group that ran whose members finished and left (the cache
 * holds no finished pods: it stays Running, api/jobstatus.h). */
static bool job_pending(const kb_job *j)
{
	if (!is_group(j) || j->phase == KB_PG_COMPLETED)
		return false;
	if (j->phase == KB_PG_RUNNING && j->nstatus[KB_TASK_PENDING] == 0)
		return false;
	int32_t min = j->min_member > 0 ? j->min_member : 1;
	return kb_job_ready_count(j) < min;
}

int kb_estimate_input_read(kb_cluster *c, const kb_estimate_options *opt,
			   kb_estimate_input *ret, kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_snapshot s;
	kb_snapshot_init(&s);
	int32_t *job_of_slot = NULL;
	int r = kb_cluster_snapshot(c, &s, err);
	if (r < 0)
		goto out;
	job_of_slot = malloc((c->pods.slots.n + 1) * sizeof(*job_of_slot));
	if (!job_of_slot) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->pods.slots.n; i++)
		job_of_slot[i] = -1;
	for (uint32_t t = 0; t < s.ntasks; t++)
		if (s.tasks[t].cache_slot < c->pods.slots.n)
			job_of_slot[s.tasks[t].cache_slot] = s.tasks[t].job;
	if ((r = read_ends(c, &s, job_of_slot, opt, ret)) < 0)
		goto out;
	for (uint32_t j = 0; j < s.njobs && r == 0; j++)
		if (job_pending(&s.jobs[j]) && (!opt->only || strcmp(opt->only, s.jobs[j].key) == 0))
			r = push_copy(&ret->pending, s.jobs[j].key);
	sort_unique(&ret->pending);
	for (uint32_t j = 0; j < s.njobs && r == 0 && opt->list_groups; j++)
		if (is_group(&s.jobs[j]))
			r = push_copy(&ret->groups, s.jobs[j].key);
	sort_unique(&ret->groups);
out:
	if (r == -ENOMEM)
		kb_err_set(err, r, "estimate: out of memory");
	if (r < 0)
		kb_estimate_input_release(ret);
	free(job_of_slot);
	kb_snapshot_release(&s);
	return r;
}

int kb_estimate_input_add_new(kb_cluster *c, kb_estimate_input *in, kb_err *err)
{
	kb_snapshot s;
	kb_snapshot_init(&s);
	KB_VEC(char *) added = {0};
	int r = kb_cluster_snapshot(c, &s, err);
	for (uint32_t j = 0; j < s.njobs && r == 0; j++) {
		const char *key = s.jobs[j].key;
		if (is_group(&s.jobs[j]) &&
		    (!in->groups.n ||
		     !bsearch(&key, in->groups.v, in->groups.n, sizeof(char *), cmp_str)))
			r = push_copy(&added, key);
	}
	sort_unique(&added);
	for (size_t i = 0; i < added.n; i++) {
		if (r == 0 && KB_VEC_PUSH(&in->pending, added.v[i]) == 0)
			continue;
		free(added.v[i]);
		r = -ENOMEM;
	}
	KB_VEC_RELEASE(&added);
	kb_snapshot_release(&s);
	if (r == -ENOMEM)
		kb_err_set(err, r, "estimate: out of memory");
	return r;
}

/* ---- the estimates --------------------------------------------------------------- */

/* The job of pod key in c: its PodGroup's key, else the pod's own. */
static const char *job_of_pod(kb_cluster *c, const char *key)
{
	const kb_slot *sl = kb_cluster_pod(c, key);
	if (sl && sl->obj->u.pod.group_key)
		return sl->obj->u.pod.group_key;
	return key;
}

/* Whether the pod key belongs to PodGroup pg (its group_key). */
static bool pod_of(kb_cluster *c, const char *key, const char *pg)
{
	const kb_slot *sl = kb_cluster_pod(c, key);
	return sl && sl->obj->u.pod.group_key && strcmp(sl->obj->u.pod.group_key, pg) == 0;
}

/* Appends ", name" (or "name" first) to buf unless there already or
 * AFTER_MAX names are in; counts the names left out in *more. */
static void add_name(char *buf, size_t n, uint32_t *count, uint32_t *more, const char *name)
{
	size_t len = strlen(name), have = strlen(buf);
	for (const char *p = buf; (p = strstr(p, name)); p += len)
		if ((p == buf || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0'))
			return;
	if (*count >= AFTER_MAX) {
		(*more)++;
		return;
	}
	(void)snprintf(buf + have, n - have, "%s%s", have ? ", " : "", name);
	(*count)++;
}

/* The jobs whose pods ended by time t on the nodes where pg's pods were
 * bound at t, latest end first, into buf. */
#define AFTER_NODES 64

static void after_of(kb_cluster *c, const kb_sim_result *res, const char *pg, int64_t t,
		     char *buf, size_t n)
{
	buf[0] = '\0';
	uint32_t count = 0, more = 0;
	/* The nodes pg's pods were bound to at t (its first AFTER_NODES: the
	 * text names a few jobs at most), then the completions on them: once
	 * over the bindings and once over the completions, not the one inside
	 * the other (which cost most of a run at 1,000 nodes). */
	const char *nodes[AFTER_NODES];
	uint32_t nn = 0;
	for (size_t b = 0; b < res->bindings.n && nn < AFTER_NODES; b++) {
		const kb_sim_binding *bd = &res->bindings.v[b];
		if (bd->time_ms != t || !pod_of(c, bd->pod, pg))
			continue;
		bool seen = false;
		for (uint32_t k = 0; k < nn && !seen; k++)
			seen = strcmp(nodes[k], bd->node) == 0;
		if (!seen)
			nodes[nn++] = bd->node;
	}
	for (size_t i = res->completions.n; nn > 0 && i-- > 0;) {
		const kb_sim_completion *done = &res->completions.v[i];
		if (done->time_ms > t)
			continue;
		bool near = false;
		for (uint32_t k = 0; k < nn && !near; k++)
			near = strcmp(nodes[k], done->node) == 0;
		if (near)
			add_name(buf, n, &count, &more, job_of_pod(c, done->pod));
	}
	if (more) {
		size_t have = strlen(buf);
		(void)snprintf(buf + have, n - have, " and %u more", more);
	}
}

static const char *group_reason(const kb_sim_result *res, const char *pg)
{
	for (size_t i = 0; i < res->groups.n; i++)
		if (strcmp(res->groups.v[i].name, pg) == 0)
			return res->groups.v[i].reason;
	return NULL;
}

/* Why pg has no estimate, into buf. */
static void unknown_of(const kb_estimate_input *in, const kb_sim_result *res, const char *pg,
		       int64_t horizon_ms, char *buf, size_t n)
{
	char tb[32];
	(void)snprintf(tb, sizeof(tb), "%" PRId64 "s", res->end_ms / 1000);
	switch (res->stop) {
	case KB_SIM_STOP_MAX_TIME:
		(void)snprintf(buf, n, "not within the horizon of %" PRId64 "h", horizon_ms / 3600000);
		return;
	case KB_SIM_STOP_MAX_SESSIONS:
		(void)snprintf(buf, n, "estimate cut short at its limit of %u sessions (%s of virtual "
			       "time)", res->sessions, tb);
		return;
	case KB_SIM_STOP_BUDGET:
		(void)snprintf(buf, n, "estimate cut short at its CPU budget (%u sessions, %s of "
			       "virtual time)", res->sessions, tb);
		return;
	case KB_SIM_STOP_QUIET:
		break;
	}
	if (in->unknown.n) {
		char jobs[TEXT_MAX] = "";
		uint32_t count = 0, more = 0;
		for (size_t i = 0; i < in->unknown.n; i++)
			add_name(jobs, sizeof(jobs), &count, &more, in->unknown.v[i]);
		(void)snprintf(buf, n, "waits for pods with no known end (no %s annotation, "
			       "activeDeadlineSeconds or runtime history) of %s%s", KB_ANN_SIM_DURATION,
			       jobs, more ? " and more" : "");
		return;
	}
	const char *why = group_reason(res, pg);
	(void)snprintf(buf, n, "would not start once every known end has come: %s",
		       why ? why : "no reason given");
}

static int add_estimate(kb_sim_result *res, const char *pg, bool known, int64_t t,
			const char *text)
{
	kb_sim_estimate e = {.podgroup = strdup(pg), .known = known, .time_ms = known ? t : 0};
	char *copy = strdup(text);
	if (known)
		e.after = copy;
	else
		e.unknown = copy;
	if (!e.podgroup || !copy || KB_VEC_PUSH(&res->estimates, e) < 0) {
		free(e.podgroup);
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

int kb_estimate_fill(kb_cluster *c, const kb_estimate_input *in, int64_t horizon_ms,
		     kb_sim_result *res)
{
	for (size_t i = 0; i < in->pending.n; i++) {
		const char *pg = in->pending.v[i];
		int64_t t = -1;
		for (size_t g = 0; g < res->gang_starts.n && t < 0; g++)
			if (strcmp(res->gang_starts.v[g].name, pg) == 0)
				t = res->gang_starts.v[g].time_ms;
		char text[TEXT_MAX];
		if (t >= 0)
			after_of(c, res, pg, t, text, sizeof(text));
		else
			unknown_of(in, res, pg, horizon_ms, text, sizeof(text));
		if (add_estimate(res, pg, t >= 0, t, text) < 0)
			return -ENOMEM;
	}
	return 0;
}

const kb_sim_estimate *kb_estimate_find(const kb_sim_result *res, const char *key)
{
	for (size_t i = 0; i < res->estimates.n; i++)
		if (strcmp(res->estimates.v[i].podgroup, key) == 0)
			return &res->estimates.v[i];
	return NULL;
}

int kb_estimate_run(const kb_cluster *src, const kb_estimate_options *opt, kb_sim_result *ret,
		    kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_cluster copy;
	if (kb_cluster_share_copy(&copy, src) < 0)
		return kb_err_set(err, -ENOMEM, "estimate: out of memory copying the store");
	kb_estimate_input in;
	int r = kb_estimate_input_read(&copy, opt, &in, err);
	if (r < 0)
		goto out_copy;
	int64_t horizon = opt->horizon_ms > 0 ? opt->horizon_ms : KB_ESTIMATE_HORIZON_MS;
	if (in.pending.n) {
		kb_sim_options so = {
			.conf = opt->conf,
			.scheduler_name = src->scheduler_names[0],
			.default_queue = src->default_queue,
			.period_ms = opt->period_ms,
			.max_time_ms = horizon,
			.cluster = &copy,
			.start_ms = opt->now_ms,
			.max_sessions = opt->max_sessions ? opt->max_sessions : KB_ESTIMATE_MAX_SESSIONS,
			.ends = in.ends.v,
			.nends = (uint32_t)in.ends.n,
			.budget_ms = opt->budget_ms == 0 ? KB_ESTIMATE_BUDGET_MS
				     : opt->budget_ms < 0 ? 0 : opt->budget_ms,
		};
		r = kb_simulate_run(&so, ret, err);
		if (r == 0 && (r = kb_estimate_fill(&copy, &in, horizon, ret)) < 0)
			kb_err_set(err, r, "estimate: out of memory");
	}
	kb_estimate_input_release(&in);
out_copy:
	kb_cluster_release(&copy);
	return r;
}

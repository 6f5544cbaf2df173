/* summary.c - one session's figures for /metrics and Queue status (see summary.h). */
#include "daemon/summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/framework.h"

static const char *const class_names[KB_REASON_COUNT] = {
	[KB_REASON_RESOURCES] = "resources", [KB_REASON_PLACEMENT] = "placement",
	[KB_REASON_QUEUE] = "queue",         [KB_REASON_GANG] = "gang",
	[KB_REASON_PIPELINED] = "pipelined", [KB_REASON_INVALID] = "invalid",
	[KB_REASON_OTHER] = "other",
};

const char *kb_reason_class_name(kb_reason_class c)
{
	return (unsigned)c < KB_REASON_COUNT ? class_names[c] : "other";
}

/* The cause is looked for before the gang's own words: a gang reason
 * carries its members' ("gang \"ns/pg\": 2/4 tasks in gang fit: 0/3 nodes
 * are available: Insufficient cpu"), which is what a person acts on. */
kb_reason_class kb_reason_classify(const char *r)
{
	if (!r)
		return KB_REASON_OTHER;
	if (strstr(r, "queue \"") || strstr(r, "enqueueable") || strstr(r, "overused"))
		return KB_REASON_QUEUE;
	if (strstr(r, "Insufficient ") || strstr(r, "Too many pods"))
		return KB_REASON_RESOURCES;
	if (strstr(r, "node(s)") || strstr(r, "topology") || strstr(r, "domain"))
		return KB_REASON_PLACEMENT;
	if (strstr(r, "pipelined"))
		return KB_REASON_PIPELINED;
	if (strncmp(r, "gang ", 5) == 0 || strstr(r, "minMember") || strstr(r, "minCount"))
		return KB_REASON_GANG;
	return KB_REASON_OTHER;
}

void kb_summary_init(kb_summary *s)
{
	memset(s, 0, sizeof(*s));
}

void kb_summary_release(kb_summary *s)
{
	for (uint32_t i = 0; i < s->nqueues; i++)
		free(s->queues[i].name);
	for (uint32_t i = 0; i < s->nnodes; i++)
		free(s->nodes[i].name);
	free(s->queues);
	free(s->nodes);
	kb_summary_init(s);
}

int kb_summary_begin(kb_summary *s, const kb_snapshot *snap)
{
	kb_summary_release(s);
	s->resnames = snap->resnames;
	if (snap->nqueues &&
	    !(s->queues = calloc(snap->nqueues, sizeof(*s->queues))))
		return -ENOMEM;
	s->nqueues = snap->nqueues;
	for (uint32_t i = 0; i < snap->nqueues; i++)
		if (!(s->queues[i].name = strdup(snap->queues[i].name))) {
			kb_summary_release(s);
			return -ENOMEM;
		}
	return 0;
}

void kb_summary_session(kb_summary *s, const kb_session *ssn)
{
	const kb_snapshot *snap = ssn->snap;
	for (uint32_t i = 0; i < s->nqueues && i < snap->nqueues; i++)
		s->queues[i].overused = kb_queue_overused(ssn, &snap->queues[i]);
	s->nactions = 0;
	for (uint32_t i = 0; i < ssn->conf->nactions && i < KB_SUMMARY_MAX_ACTIONS; i++) {
		kb_summary_action *a = &s->actions[s->nactions++];
		a->name = ssn->conf->actions[i]->name;
		a->ran = ssn->action_ns && ssn->action_ns[i] > 0;
		a->seconds = ssn->action_ns ? (double)ssn->action_ns[i] / 1e9 : 0;
		a->evictions = ssn->action_evictions ? ssn->action_evictions[i] : 0;
		if (strcmp(a->name, "preempt") == 0 || strcmp(a->name, "reclaim") == 0)
			s->victims += a->evictions;
	}
	s->scheduled = ssn->binds;
}

/* volcano's proportion share: the largest allocated/deserved. */
static double share_of(const kb_res *allocated, const kb_res *deserved, int n)
{
	double share = 0;
	for (int i = 0; i < n; i++) {
		if (i == KB_RES_PODS)
			continue;
		double r;
		if (deserved->q[i] > 0)
			r = (double)allocated->q[i] / (double)deserved->q[i];
		else
			r = allocated->q[i] > 0 ? 1 : 0;
		if (r > share)
			share = r;
	}
	return share;
}

int kb_summary_end(kb_summary *s, const kb_snapshot *snap, double seconds)
{
	s->valid = true;
	s->seconds = seconds;
	for (uint32_t i = 0; i < s->nqueues && i < snap->nqueues; i++) {
		const kb_queue *q = &snap->queues[i];
		kb_summary_queue *sq = &s->queues[i];
		sq->weight = q->weight;
		sq->state = q->state;
		sq->allocated = q->allocated;
		sq->request = q->request;
		sq->capability = q->capability;
		sq->capability_mask = q->capability_mask;
		sq->guarantee = q->guarantee;
		sq->share = share_of(&sq->allocated, &sq->deserved, s->resnames.n);
	}
	int g = snap->gpu_res;
	if (g < 0)
		return s->oom ? -ENOMEM : 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < snap->nnodes; i++)
		n += snap->nodes[i].allocatable.q[g] > 0;
	if (n && !(s->nodes = calloc(n, sizeof(*s->nodes)))) {
		s->oom = true;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < snap->nnodes; i++) {
		const kb_node *nd = &snap->nodes[i];
		if (nd->allocatable.q[g] <= 0)
			continue;
		kb_summary_node *sn = &s->nodes[s->nnodes];
		if (!(sn->name = strdup(nd->name))) {
			s->oom = true;
			return -ENOMEM;
		}
		sn->gpu_total_milli = nd->allocatable.q[g];
		sn->gpu_allocated_milli = nd->used.q[g];
		s->nnodes++;
	}
	return s->oom ? -ENOMEM : 0;
}

/* ---- the tee ----------------------------------------------------------------------- */

static int tee_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		    const kb_node *node)
{
	const kb_summary_tee *t = ctx;
	int r = t->next && t->next->bind ? t->next->bind(t->next_ctx, snap, now_ms, task, node) : 0;
	if (r < 0)
		t->sum->errors++;
	return r;
}

static int tee_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		     const char *reason)
{
	const kb_summary_tee *t = ctx;
	int r = t->next && t->next->evict ? t->next->evict(t->next_ctx, snap, now_ms, task, reason)
					  : 0;
	if (r < 0)
		t->sum->errors++;
	return r;
}

/* Groups whose status is written: not lone pods, not Workload gangs, not
 * another scheduler's. */
static bool counted_group(const kb_job *j)
{
	return !j->foreign && j->flavor != KB_PG_NONE && j->flavor != KB_PG_K8S_WORKLOAD;
}

static int tee_job_status(void *ctx, const kb_snapshot *snap, const kb_job *job,
			  const kb_job_status *st)
{
	const kb_summary_tee *t = ctx;
	kb_summary *s = t->sum;
	if (counted_group(job) && job->queue >= 0 && (uint32_t)job->queue < s->nqueues &&
	    (unsigned)st->phase < KB_SUMMARY_NPHASES)
		s->queues[job->queue].podgroups[st->phase]++;
	if (!job->foreign && st->unschedulable && st->phase != KB_PG_RUNNING &&
	    st->phase != KB_PG_COMPLETED)
		s->pending_jobs[job->invalid ? KB_REASON_INVALID
					     : kb_reason_classify(st->unschedulable)]++;
	int r = t->next && t->next->job_status ? t->next->job_status(t->next_ctx, snap, job, st) : 0;
	if (r < 0)
		s->errors++;
	return r;
}

static int tee_queue_status(void *ctx, const kb_snapshot *snap, const kb_queue *queue,
			    const kb_res *deserved)
{
	const kb_summary_tee *t = ctx;
	kb_summary *s = t->sum;
	uint32_t i = (uint32_t)(queue - snap->queues);
	if (i < s->nqueues)
		s->queues[i].deserved = *deserved;
	int r = t->next && t->next->queue_status
			? t->next->queue_status(t->next_ctx, snap, queue, deserved)
			: 0;
	if (r < 0)
		s->errors++;
	return r;
}

static int tee_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *task,
			    const char *reason)
{
	const kb_summary_tee *t = ctx;
	kb_summary *s = t->sum;
	const kb_job *j = task->job >= 0 ? &snap->jobs[task->job] : NULL;
	s->pending_pods[j && j->invalid ? KB_REASON_INVALID : kb_reason_classify(reason)]++;
	s->unschedulable++;
	int r = t->next && t->next->task_pending
			? t->next->task_pending(t->next_ctx, snap, task, reason)
			: 0;
	if (r < 0)
		s->errors++;
	return r;
}

static int tee_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
			    const kb_node *node, const kb_task_volumes *vol, const int32_t *picks)
{
	const kb_summary_tee *t = ctx;
	int r = t->next && t->next->bind_volumes
			? t->next->bind_volumes(t->next_ctx, snap, now_ms, task, node, vol, picks)
			: 0;
	if (r < 0)
		t->sum->errors++;
	return r;
}

const kb_effects kb_summary_effects = {
	.bind = tee_bind,
	.bind_volumes = tee_bind_volumes,
	.evict = tee_evict,
	.job_status = tee_job_status,
	.queue_status = tee_queue_status,
	.task_pending = tee_task_pending,
};

/* proportion - fair shares between queues.
 *
 * At open, every queue's deserved share is computed by weighted
 * water-filling over the cluster's allocatable (queue/deserved.h), each queue
 * capped by what its jobs request and by its capability and raised to its
 * guarantee. Then:
 *  - queue order: the queue with the smaller share (largest, over the
 *    resources it deserves, of allocated / deserved) goes first;
 *  - overused: a queue is overused once allocated >= deserved in every
 *    resource it asks for;
 *  - job enqueueable: REJECT when the job's minimum would take the queue
 *    above its capability;
 *  - predicate: a task may not take its queue above its capability (the
 *    allocate action thus never lets a queue exceed it);
 *  - reclaimable: a victim's queue gives back only what it holds above its
 *    deserved share, and only if it is reclaimable;
 *  - close: a job that waits because its queue's capability cannot take it
 *    says so (the capability, not "using its share", is what the user must
 *    change): "queue "q" would exceed its capability of 2 cpu (...)".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "plugins/plugins.h"
#include "queue/deserved.h"
#include "scheduler/actions/actions.h"

static int prop_open(kb_session *ssn, const kb_plugin_conf *pc, void **ret, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	kb_share_input *in = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(*in));
	if (!in)
		return kb_err_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->nqueues; i++)
		kb_share_input_of(&s->queues[i], &in[i]);
	kb_deserved_compute(&s->total_allocatable, in, s->nqueues, ssn->deserved);
	for (uint32_t i = 0; i < s->nqueues; i++)
		ssn->deserved[i].q[KB_RES_PODS] = 0;
	*ret = NULL;
	return 0;
}

static double queue_share(const kb_session *ssn, const kb_queue *q)
{
	const kb_snapshot *s = ssn->snap;
	const kb_res *deserved = &ssn->deserved[q - s->queues];
	double share = 0;
	for (int r = 0; r < s->resnames.n; r++) {
		if (r == KB_RES_PODS)
			continue;
		double v;
		if (deserved->q[r] > 0)
			v = (double)q->allocated.q[r] / (double)deserved->q[r];
		else
			v = q->allocated.q[r] > 0 ? 1.0 : 0.0;
		if (v > share)
			share = v;
	}
	return share;
}

static int prop_queue_order(void *st, const kb_session *ssn, const kb_queue *l, const kb_queue *r)
{
	double ls = queue_share(ssn, l), rs = queue_share(ssn, r);
	if (ls == rs)
		return 0;
	return ls < rs ? -1 : 1;
}

static kb_vote prop_overused(void *st, const kb_session *ssn, const kb_queue *q)
{
	bool asks = false;
	for (int r = 0; r < KB_RES_MAX; r++) {
		if (r == KB_RES_PODS || q->request.q[r] <= q->allocated.q[r])
			continue;
		asks = true;
		if (q->allocated.q[r] < ssn->deserved[q - ssn->snap->queues].q[r])
			return KB_ABSTAIN;
	}
	return asks ? KB_PERMIT : KB_ABSTAIN;
}

/* The first capped resource that allocated + extra would take above capability, or -1. */
static int over_capability(const kb_queue *q, const kb_res *extra)
{
	if (!q->capability_mask)
		return -1; /* most queues: nothing to check, on every node of every task */
	for (int r = 0; r < KB_RES_MAX; r++)
		if ((q->capability_mask & (1u << r)) && extra->q[r] > 0 &&
		    q->allocated.q[r] + extra->q[r] > q->capability.q[r])
			return r;
	return -1;
}

static kb_vote prop_enqueueable(void *st, const kb_session *ssn, const kb_job *j)
{
	if (j->queue < 0)
		return KB_ABSTAIN;
	const kb_queue *q = &ssn->snap->queues[j->queue];
	if (!q->capability_mask)
		return KB_ABSTAIN;
	kb_res min;
	kb_job_min_request(ssn, j, &min);
	kb_res_sub(&min, &j->allocated);
	return over_capability(q, &min) >= 0 ? KB_REJECT : KB_PERMIT;
}

static int prop_predicate(void *st, const kb_session *ssn, const kb_task *t, const kb_node *n,
			  const char **ret)
{
	if (t->job < 0)
		return KB_FIT_OK;
	const kb_job *j = &ssn->snap->jobs[t->job];
	if (j->queue < 0)
		return KB_FIT_OK;
	const kb_queue *q = &ssn->snap->queues[j->queue];
	int r = over_capability(q, &t->req);
	if (r < 0)
		return KB_FIT_OK;
	char cap[KB_QUANTITY_BUFSZ];
	*ret = kb_session_printf(ssn, "queue \"%s\" would exceed its capability of %s %s",
			       q->name, kb_res_format_one(q->capability.q[r], &ssn->snap->resnames, r, cap),
			       ssn->snap->resnames.name[r]);
	return KB_FIT_FAIL;
}

/* Whether j waits because of q's capability: the rest of its minimum while
 * its gang is not ready, else every pending task, would take q above it.
 * Then *ret_need is what it needs, *ret_min its whole minimum (or the task)
 * and the result the resource index; else -1. O(tasks of j). */
static int capability_blocks(const kb_session *ssn, const kb_job *j, const kb_queue *q,
			     kb_res *ret_need, kb_res *ret_min)
{
	const kb_snapshot *s = ssn->snap;
	if (kb_job_ready_count(j) < j->min_member) {
		kb_job_min_request(ssn, j, ret_min);
		*ret_need = *ret_min;
		kb_res_sub(ret_need, &j->allocated);
		return over_capability(q, ret_need);
	}
	int first = -1;
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->status != KB_TASK_PENDING)
			continue;
		int r = over_capability(q, &t->req);
		if (r < 0)
			return -1; /* this one fits: something else holds the job */
		if (first < 0) {
			first = r;
			*ret_need = *ret_min = t->req;
		}
	}
	return first;
}

/* Jobs that wait because of their queue's capability get that as their
 * reason; the gang plugin, closing later, prefixes its own. Cost: O(tasks). */
static void prop_close(kb_session *ssn, void *st)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->invalid || j->queue < 0 || j->nstatus[KB_TASK_PENDING] == 0)
			continue;
		const kb_queue *q = &s->queues[j->queue];
		if (!q->capability_mask || q->state != KB_QUEUE_OPEN)
			continue;
		kb_res need, min;
		int r = capability_blocks(ssn, j, q, &need, &min);
		if (r < 0)
			continue;
		char c[KB_QUANTITY_BUFSZ], h[KB_QUANTITY_BUFSZ], n[KB_QUANTITY_BUFSZ];
		const char *res = s->resnames.name[r];
		kb_res_format_one(q->capability.q[r], &s->resnames, r, c);
		if (min.q[r] > q->capability.q[r])
			kb_job_out(ssn, j)->pending_reason = kb_arena_printf(
				&ssn->arena,
				"queue \"%s\" would exceed its capability of %s %s: the job needs %s %s "
				"at once, more than the queue may ever hold",
				q->name, c, res, kb_res_format_one(min.q[r], &s->resnames, r, n), res);
		else
			kb_job_out(ssn, j)->pending_reason = kb_arena_printf(
				&ssn->arena,
				"queue \"%s\" would exceed its capability of %s %s: it holds %s %s and "
				"the job needs %s %s more",
				q->name, c, res, kb_res_format_one(q->allocated.q[r], &s->resnames, r, h),
				res, kb_res_format_one(need.q[r], &s->resnames, r, n), res);
	}
}

static kb_vote prop_reclaimable(void *st, const kb_session *ssn, const kb_task *reclaimer,
				const uint32_t *cands, uint32_t n, bool *allow)
{
	const kb_snapshot *s = ssn->snap;
	/* What each victim queue still holds above its deserved share, as victims are taken. */
	kb_res *above = calloc(s->nqueues ? s->nqueues : 1, sizeof(kb_res));
	bool *seen = calloc(s->nqueues ? s->nqueues : 1, sizeof(bool));
	if (!above || !seen) {
		free(above);
		free(seen);
		for (uint32_t i = 0; i < n; i++)
			allow[i] = false;
		return KB_PERMIT;
	}
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[cands[i]];
		if (t->job < 0 || s->jobs[t->job].queue < 0) {
			allow[i] = false;
			continue;
		}
		int32_t qi = s->jobs[t->job].queue;
		const kb_queue *q = &s->queues[qi];
		if (!q->reclaimable) {
			allow[i] = false;
			continue;
		}
		if (!seen[qi]) {
			seen[qi] = true;
			above[qi] = q->allocated;
			kb_res_sub(&above[qi], &ssn->deserved[qi]);
		}
		/* Taking t must not bring the queue below its deserved share in any
		 * resource t holds. */
		bool ok = true;
		for (int r = 0; r < KB_RES_MAX; r++)
			if (r != KB_RES_PODS && t->req.q[r] > 0 && above[qi].q[r] < t->req.q[r])
				ok = false;
		if (ok)
			kb_res_sub(&above[qi], &t->req);
		allow[i] = ok;
	}
	free(above);
	free(seen);
	return KB_PERMIT;
}

const kb_plugin_ops kb_plugin_proportion = {
	.name = "proportion",
	.open = prop_open,
	.close = prop_close,
	.queue_order = prop_queue_order,
	.overused = prop_overused,
	.job_enqueueable = prop_enqueueable,
	.predicate = prop_predicate,
	.reclaimable = prop_reclaimable,
};

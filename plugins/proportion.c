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
 *  - preemptive: a queue may reclaim for a task only while it stays within
 *    its deserved share in every resource the task asks (volcano's);
 *  - reclaimable: volcano's rule: a victim's queue (if reclaimable) gives
 *    up tasks while what it holds, less the victims already chosen, is
 *    above its deserved share in some resource;
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
#include "scheduler/job.h"

/* Scratch of the reclaimable filter, per queue: what a queue holds less
 * the candidates already taken in the current call (seen[q] == gen). */
typedef struct prop_state {
	kb_res *left;
	uint32_t *seen;
	uint32_t gen;
} prop_state;

static int prop_open(kb_session *ssn, const kb_plugin_conf *pc, void **ret, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	size_t nq = s->nqueues ? s->nqueues : 1;
	kb_share_input *in = kb_arena_calloc(&ssn->arena, nq, sizeof(*in));
	prop_state *st = kb_arena_calloc(&ssn->arena, 1, sizeof(*st));
	if (st) {
		st->left = kb_arena_alloc(&ssn->arena, nq * sizeof(*st->left));
		st->seen = kb_arena_calloc(&ssn->arena, nq, sizeof(*st->seen));
	}
	if (!in || !st || !st->left || !st->seen)
		return kb_err_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->nqueues; i++)
		kb_share_input_of(&s->queues[i], &in[i]);
	kb_deserved_compute(&s->total_allocatable, in, s->nqueues, ssn->deserved);
	for (uint32_t i = 0; i < s->nqueues; i++)
		ssn->deserved[i].q[KB_RES_PODS] = 0;
	*ret = st;
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
		    (__int128)q->allocated.q[r] + extra->q[r] > q->capability.q[r])
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
	if (kb_job_min_request(ssn, j, &min) < 0)
		return KB_REJECT; /* out of memory: not admitted this session */
	kb_res_sub(&min, &j->allocated);
	return over_capability(q, &min) >= 0 ? KB_REJECT : KB_PERMIT;
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
		if (kb_job_min_request(ssn, j, ret_min) < 0)
			return -1; /* out of memory: no explanation, not a wrong one */
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

/* volcano's rule: in the order given, a candidate may go while its queue is
 * reclaimable and its allocation, less the candidates already taken, is
 * still above its deserved share in some resource. O(n), scratch from the
 * plugin's state (per queue, reset by a generation count). */
static kb_vote prop_reclaimable(void *state, const kb_session *ssn, const kb_task *reclaimer,
				const uint32_t *cands, uint32_t n, bool *allow)
{
	prop_state *st = state;
	const kb_snapshot *s = ssn->snap;
	st->gen++;
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[cands[i]];
		int32_t qi = t->job >= 0 ? s->jobs[t->job].queue : -1;
		if (qi < 0 || !s->queues[qi].reclaimable) {
			allow[i] = false;
			continue;
		}
		if (st->seen[qi] != st->gen) {
			st->seen[qi] = st->gen;
			st->left[qi] = s->queues[qi].allocated;
		}
		allow[i] = kb_res_above_but_pods(&st->left[qi], &ssn->deserved[qi]);
		if (allow[i])
			kb_res_sub(&st->left[qi], &t->req);
	}
	return KB_PERMIT;
}

/* volcano's PreemptiveFn: the queue may reclaim for task only if it then
 * stays within its deserved share in every resource the task asks; what it
 * already pipelined this session counts, as in volcano's queue accounting. */
static kb_vote prop_preemptive(void *state, const kb_session *ssn, const kb_queue *q,
			       const kb_task *task)
{
	const kb_res *deserved = &ssn->deserved[q - ssn->snap->queues];
	for (int r = 0; r < KB_RES_MAX; r++)
		if (r != KB_RES_PODS && task->req.q[r] > 0 &&
		    (__int128)q->allocated.q[r] + q->pipelined.q[r] + task->req.q[r] > deserved->q[r])
			return KB_REJECT;
	return KB_PERMIT;
}

const kb_plugin_ops kb_plugin_proportion = {
	.name = "proportion",
	.open = prop_open,
	.close = prop_close,
	.queue_order = prop_queue_order,
	.overused = prop_overused,
	.job_enqueueable = prop_enqueueable,
	.reclaimable = prop_reclaimable,
	.preemptive = prop_preemptive,
};

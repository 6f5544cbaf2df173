/* allocate - place pending jobs, a gang at a time, all or nothing.
 *
 * kube-batch's allocate, with volcano's refinements:
 *  - queues come out in queue order; an overused queue is skipped for the
 *    rest of the session;
 *  - inside a queue, jobs come out in job order; each job's pending tasks
 *    (BestEffort ones are backfill's) come out in task order;
 *  - every task goes to the best feasible node, through one statement per
 *    job: onto idle resources (allocate) or onto resources being released
 *    (pipeline);
 *  - once the job is ready (gang: minMember reached) and tasks remain, the
 *    job goes back into its queue so that other jobs get a turn;
 *  - at the end of a job's turn: ready -> commit (bind); pipelined -> the
 *    placements stay in the session but nothing is bound; otherwise discard,
 *    leaving no trace, and the job records why.
 * When the enqueue action is configured, only jobs it admitted (Inqueue or
 * already Running) are considered. A job whose remaining minimum exceeds the
 * whole cluster's free resources is skipped without searching nodes.
 *
 * Cost: O(tasks placed x nodes x predicates) plus heap operations.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "scheduler/actions/actions.h"
#include "scheduler/actions/placement.h"
#include "base/pqueue.h"
#include "scheduler/statement.h"

typedef struct alloc_ctx {
	kb_session *ssn;
	kb_pq *jobs_of_queue; /* one heap per queue */
	kb_pq *tasks_of_job;  /* one heap per job, filled lazily */
	bool *tasks_built;
} alloc_ctx;

static bool queue_less(const void *ctx, uint32_t a, uint32_t b)
{
	const kb_session *ssn = ctx;
	return kb_queue_less(ssn, &ssn->snap->queues[a], &ssn->snap->queues[b]);
}

static bool job_less(const void *ctx, uint32_t a, uint32_t b)
{
	const kb_session *ssn = ctx;
	return kb_job_less(ssn, &ssn->snap->jobs[a], &ssn->snap->jobs[b]);
}

static bool task_less(const void *ctx, uint32_t a, uint32_t b)
{
	const kb_session *ssn = ctx;
	return kb_task_less(ssn, &ssn->snap->tasks[a], &ssn->snap->tasks[b]);
}

bool kb_job_has_pending(const kb_snapshot *s, const kb_job *j, bool best_effort)
{
	if (j->nstatus[KB_TASK_PENDING] == 0)
		return false; /* most jobs of a busy cluster: no walk over their tasks */
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->status == KB_TASK_PENDING && t->best_effort == best_effort)
			return true;
	}
	return false;
}

bool kb_job_admitted(const kb_session *ssn, const kb_job *j)
{
	if (!ssn->enqueue_configured || j->flavor == KB_PG_NONE)
		return true;
	return j->phase != KB_PG_PENDING;
}

/* "2 need cpu: 1, largest free cpu: 500m": the first resource the failing task
 * asks for more of than any node has free, or NULL when no single resource
 * explains the failure. */
static const char *shortage(kb_session *ssn, const kb_task *t, uint32_t remaining)
{
	const kb_snapshot *s = ssn->snap;
	kb_res largest = {{0}};
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const kb_node *n = &s->nodes[i];
		if (!n->ready || n->unschedulable)
			continue;
		kb_res future = n->idle;
		kb_res_add(&future, &n->releasing);
		kb_res_sub(&future, &n->pipelined);
		kb_res_max(&largest, &future);
	}
	int r = kb_res_first_short(&t->req, &largest);
	if (r < 0)
		return NULL;
	char need[KB_QUANTITY_BUFSZ], have[KB_QUANTITY_BUFSZ];
	kb_res_format_one(t->req.q[r], &s->resnames, r, need);
	kb_res_format_one(largest.q[r] < 0 ? 0 : largest.q[r], &s->resnames, r, have);
	const char *name = s->resnames.name[r];
	return kb_arena_printf(&ssn->arena, "%u need %s %s, largest free %s %s", remaining, need, name,
			       have, name);
}

static int cmp_res(const void *a, const void *b)
{
	const kb_res *x = a, *y = b;
	for (int i = 0; i < KB_RES_MAX; i++)
		if (x->q[i] != y->q[i])
			return x->q[i] < y->q[i] ? -1 : 1;
	return 0;
}

/* Whether the cluster's total future idle could hold what gang j still needs
 * to reach minMember (the smallest requests of that many pending tasks).
 * When it cannot, no node search can succeed: returns the reason, else NULL
 * (also for lone pods and gangs already ready, which the node search
 * explains better).
 * O(tasks of j log tasks of j). */
static const char *cannot_hold(kb_session *ssn, const kb_job *j)
{
	const kb_snapshot *s = ssn->snap;
	int32_t placed = kb_job_placed_count(j);
	int32_t k = j->min_member - placed;
	if (j->min_member <= 1 || k <= 0)
		return NULL; /* lone pods and ready gangs get the node search's reason */
	kb_res *reqs = kb_arena_calloc(&ssn->arena, j->ntasks ? j->ntasks : 1, sizeof(kb_res));
	if (!reqs)
		return NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (t->status == KB_TASK_PENDING && !t->best_effort)
			reqs[n++] = t->req;
	}
	if ((uint32_t)k > n)
		return NULL; /* job valid decides that */
	bool alike = true; /* a gang's members usually ask the same: no sort then */
	for (uint32_t i = 1; i < n && alike; i++)
		alike = memcmp(&reqs[i], &reqs[0], sizeof(kb_res)) == 0;
	if (!alike)
		qsort(reqs, n, sizeof(kb_res), cmp_res);
	kb_res need = {{0}};
	for (int32_t i = 0; i < k; i++)
		kb_res_add(&need, &reqs[i]);
	int r = kb_res_first_short(&need, &s->total_future_idle);
	if (r < 0)
		return NULL;
	char want[KB_QUANTITY_BUFSZ], have[KB_QUANTITY_BUFSZ];
	int64_t free_ = s->total_future_idle.q[r] > 0 ? s->total_future_idle.q[r] : 0;
	return kb_arena_printf(&ssn->arena,
			       "gang \"%s\": %d more tasks needing %s %s in all are needed to reach "
			       "minMember %d, and the whole cluster has %s %s free",
			       j->key, k, kb_res_format_one(need.q[r], &s->resnames, r, want),
			       s->resnames.name[r], j->min_member,
			       kb_res_format_one(free_, &s->resnames, r, have), s->resnames.name[r]);
}

static int build_tasks(alloc_ctx *ac, uint32_t ji)
{
	kb_session *ssn = ac->ssn;
	const kb_snapshot *s = ssn->snap;
	const kb_job *j = &s->jobs[ji];
	kb_pq *pq = &ac->tasks_of_job[ji];
	kb_pq_init(pq, &ssn->arena, task_less, ssn);
	for (uint32_t k = 0; k < j->ntasks; k++) {
		uint32_t ti = s->job_tasks[j->first_task + k];
		const kb_task *t = &s->tasks[ti];
		if (t->status == KB_TASK_PENDING && !t->best_effort) {
			int r = kb_pq_push(pq, ti);
			if (r < 0)
				return r;
		}
	}
	ac->tasks_built[ji] = true;
	return 0;
}

static int allocate_execute(kb_session *ssn, kb_err *err)
{
	kb_snapshot *s = ssn->snap_rw;
	alloc_ctx ac = {.ssn = ssn};
	ac.jobs_of_queue = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(kb_pq));
	ac.tasks_of_job = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(kb_pq));
	ac.tasks_built = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(bool));
	if (!ac.jobs_of_queue || !ac.tasks_of_job || !ac.tasks_built)
		return kb_err_set(err, -ENOMEM, "out of memory");

	kb_pq queues;
	kb_pq_init(&queues, &ssn->arena, queue_less, ssn);
	for (uint32_t q = 0; q < s->nqueues; q++)
		kb_pq_init(&ac.jobs_of_queue[q], &ssn->arena, job_less, ssn);
	bool *queued = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(bool));
	if (!queued)
		return kb_err_set(err, -ENOMEM, "out of memory");
	for (uint32_t ji = 0; ji < s->njobs; ji++) {
		kb_job *j = &s->jobs[ji];
		if (j->queue < 0 || !kb_job_has_pending(s, j, false))
			continue;
		const char *invalid = kb_job_valid(ssn, j);
		if (invalid) {
			kb_job_out(ssn, j)->pending_reason = invalid;
			continue;
		}
		if (!kb_job_admitted(ssn, j)) {
			if (!kb_job_out(ssn, j)->pending_reason)
				kb_job_out(ssn, j)->pending_reason = "waiting to be enqueued: the cluster or its queue "
						    "cannot hold its minimum resources yet";
			continue;
		}
		if (s->queues[j->queue].state != KB_QUEUE_OPEN) {
			kb_job_out(ssn, j)->pending_reason = kb_arena_printf(&ssn->arena, "queue \"%s\" is not open",
							    s->queues[j->queue].name);
			continue;
		}
		if (kb_pq_push(&ac.jobs_of_queue[j->queue], ji) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
		if (!queued[j->queue]) {
			queued[j->queue] = true;
			if (kb_pq_push(&queues, (uint32_t)j->queue) < 0)
				return kb_err_set(err, -ENOMEM, "out of memory");
		}
	}

	while (!kb_pq_empty(&queues)) {
		uint32_t qi = kb_pq_pop(&queues);
		kb_queue *q = &s->queues[qi];
		kb_pq *jobs = &ac.jobs_of_queue[qi];
		if (kb_queue_overused(ssn, q)) {
			/* The rest of this queue's jobs wait: say so. */
			while (!kb_pq_empty(jobs)) {
				kb_job *j = &s->jobs[kb_pq_pop(jobs)];
				if (!kb_job_out(ssn, j)->pending_reason)
					kb_job_out(ssn, j)->pending_reason = kb_arena_printf(
						&ssn->arena, "queue \"%s\" is using its share", q->name);
			}
			continue;
		}
		if (kb_pq_empty(jobs))
			continue;
		uint32_t ji = kb_pq_pop(jobs);
		kb_job *j = &s->jobs[ji];
		const char *hopeless = cannot_hold(ssn, j);
		if (hopeless) {
			kb_job_out(ssn, j)->fit_tasks = kb_job_placed_count(j);
			if (!kb_job_ready(ssn, j) || !kb_job_out(ssn, j)->pending_reason)
				kb_job_out(ssn, j)->pending_reason = hopeless;
			if (!kb_pq_empty(jobs) && kb_pq_push(&queues, qi) < 0)
				return kb_err_set(err, -ENOMEM, "out of memory");
			continue;
		}
		if (!ac.tasks_built[ji] && build_tasks(&ac, ji) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
		kb_pq *tasks = &ac.tasks_of_job[ji];

		kb_statement st;
		kb_stmt_init(&st, ssn);
		const char *fail = NULL;
		bool pushed_back = false;
		while (!kb_pq_empty(tasks)) {
			uint32_t ti = kb_pq_pop(tasks);
			kb_task *t = &s->tasks[ti];
			kb_fit_report rep;
			int32_t ni = kb_best_node(ssn, t, &rep);
			if (ni < 0) {
				int32_t fit = kb_job_placed_count(j);
				uint32_t remaining = 1 + tasks->n;
				if (j->min_member > fit && (uint32_t)(j->min_member - fit) < remaining)
					remaining = (uint32_t)(j->min_member - fit);
				const char *why = kb_fit_report_format(ssn, &rep);
				const char *short_ = shortage(ssn, t, remaining);
				fail = short_ ? kb_arena_printf(&ssn->arena, "%s (%s)", short_, why) : why;
				kb_job_out(ssn, j)->fit_tasks = fit;
				/* The task stays pending; put it back for a later turn. */
				if (kb_pq_push(tasks, ti) < 0)
					return kb_err_set(err, -ENOMEM, "out of memory");
				break;
			}
			kb_node *n = &s->nodes[ni];
			int r = kb_fits_idle(t, n) ? kb_stmt_allocate(&st, ti, (uint32_t)ni)
						   : kb_stmt_pipeline(&st, ti, (uint32_t)ni);
			if (r < 0) {
				kb_stmt_discard(&st);
				return kb_err_set(err, r, "out of memory");
			}
			if (kb_job_ready(ssn, j) && !kb_pq_empty(tasks)) {
				/* Minimum reached: let other jobs have a turn first. */
				if (kb_pq_push(jobs, ji) < 0)
					return kb_err_set(err, -ENOMEM, "out of memory");
				pushed_back = true;
				break;
			}
		}
		if (kb_job_ready(ssn, j)) {
			kb_stmt_commit(&st);
			if (fail && !pushed_back)
				kb_job_out(ssn, j)->pending_reason = fail; /* ready, but some tasks still wait */
		} else if (kb_job_pipelined(ssn, j)) {
			kb_stmt_commit(&st);
			kb_job_out(ssn, j)->pending_reason = "pipelined: waiting for resources being released";
		} else {
			kb_stmt_discard(&st);
			kb_job_out(ssn, j)->pending_reason = fail ? fail : "not enough tasks to reach minMember";
		}
		if (!kb_pq_empty(jobs))
			if (kb_pq_push(&queues, qi) < 0)
				return kb_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

const kb_action_ops kb_action_allocate = {
	.name = "allocate",
	.execute = allocate_execute,
};

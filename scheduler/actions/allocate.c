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
 *  - a task that finds no node stays pending; the job's turn goes on with
 *    its siblings while they could still reach minMember (volcano's
 *    NeedContinueAllocating), so an elastic job places what it can and one
 *    pod with an impossible selector does not hold back the rest;
 *  - at the end of a job's turn: ready -> commit (bind); pipelined -> the
 *    placements stay in the session but nothing is bound; otherwise discard,
 *    leaving no trace, and the job records why.
 * When the enqueue action is configured, only jobs it admitted (Inqueue or
 * already Running) are considered; when it is not, allocate admits Pending
 * PodGroups itself (Pending -> Inqueue), pods or not, as volcano's does.
 * A job whose remaining minimum exceeds the whole cluster's free resources
 * is skipped without searching nodes. A gang with a network-topology wish
 * (scheduler/topology.h) gets its turn once per scope of a short list,
 * best first, until one makes it ready or pipelined; the scope that did
 * stays for its later turns; when none did, its reason names the best
 * domain and what it lacks.
 *
 * Cost: O(tasks placed x nodes x predicates) plus heap operations.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/jobstatus.h"
#include "api/quantity.h"
#include "scheduler/actions/actions.h"
#include "scheduler/actions/placement.h"
#include "base/pqueue.h"
#include "scheduler/statement.h"
#include "scheduler/topology.h"

/* The reason of a job whose turn placed too few of its tasks, none failing. */
#define NOT_ENOUGH_TASKS "not enough tasks to reach minMember"

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

/* Why a pod sharing a GPU (KB_ANN_GPU_MILLI) is short of resource r: its
 * share, or, when it asks for nvidia.com/gpu, the whole GPU the kubelet
 * counts. "" for any other pod or resource. */
static const char *share_note(kb_session *ssn, const kb_task *t, int r)
{
	const kb_snapshot *s = ssn->snap;
	if (r != s->gpu_res || !t->spec || t->spec->gpu_milli <= 0)
		return "";
	const char *pod = t->key ? t->key : "";
	if (t->req.q[r] > t->spec->gpu_milli) {
		char asked[KB_QUANTITY_BUFSZ];
		return kb_arena_printf(&ssn->arena,
				       " (pod \"%s\" shares a GPU by %s: %d, but asks for %s %s, "
				       "which the kubelet counts whole)",
				       pod, KB_ANN_GPU_MILLI, (int)t->spec->gpu_milli,
				       kb_res_format_one(t->req.q[r], &s->resnames, r, asked),
				       s->resnames.name[r]);
	}
	return kb_arena_printf(&ssn->arena, " (pod \"%s\": its share of one GPU, %s: %d)", pod,
			       KB_ANN_GPU_MILLI, (int)t->spec->gpu_milli);
}

/* "2 need cpu: 1, largest free cpu: 500m": the first resource the failing task
 * asks for more of than any node has free, or NULL when no single resource
 * explains the failure. A pod sharing a GPU that is short of GPUs is named,
 * with its annotation (share_note). */
static const char *shortage(kb_session *ssn, const kb_task *t, uint32_t remaining)
{
	const kb_snapshot *s = ssn->snap;
	kb_res largest = {{0}};
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const kb_node *n = &s->nodes[i];
		if (!kb_node_schedulable(n))
			continue;
		kb_res future;
		kb_node_future_idle(n, &future);
		kb_res_max(&largest, &future);
	}
	int r = kb_res_first_short(&t->req, &largest);
	if (r < 0)
		return NULL;
	char need[KB_QUANTITY_BUFSZ], have[KB_QUANTITY_BUFSZ];
	kb_res_format_one(t->req.q[r], &s->resnames, r, need);
	kb_res_format_one(largest.q[r] < 0 ? 0 : largest.q[r], &s->resnames, r, have);
	const char *name = s->resnames.name[r];
	const char *note = share_note(ssn, t, r);
	if (!note)
		return NULL; /* out of memory: no single reason then */
	return kb_arena_printf(&ssn->arena, "%u need %s %s%s, largest free %s %s", remaining, need,
			       name, note, have, name);
}

/* Whether the cluster's total future idle could hold what gang j still needs
 * to reach minMember (the smallest requests of that many pending tasks).
 * When it cannot, no node search can succeed: returns the reason, else NULL
 * (also for lone pods and gangs already ready, which the node search
 * explains better). O(tasks of j log tasks of j). */
static const char *cannot_hold(kb_session *ssn, const kb_job *j)
{
	const kb_snapshot *s = ssn->snap;
	kb_res need;
	int32_t k;
	if (j->min_member <= 1 || kb_job_remaining_need(ssn, j, &need, &k) < 0 || k <= 0)
		return NULL; /* lone pods, ready gangs and invalid ones: the node search's reason */
	int r = kb_res_first_short(&need, &s->total_future_idle);
	if (r < 0)
		return NULL;
	char want[KB_QUANTITY_BUFSZ], have[KB_QUANTITY_BUFSZ];
	int64_t free_ = s->total_future_idle.q[r] > 0 ? s->total_future_idle.q[r] : 0;
	return kb_arena_printf(&ssn->arena,
			       "gang \"%s\": %d more tasks needing %s %s in all are needed to reach "
			       "%s %d, and the whole cluster has %s %s free",
			       j->key, k, kb_res_format_one(need.q[r], &s->resnames, r, want),
			       s->resnames.name[r], kb_job_min_name(j), j->min_member,
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

/* Whether job j can still reach minMember with the tasks left in its heap:
 * volcano's NeedContinueAllocating. A member that cannot be placed does not
 * end the job's turn while its siblings could still make the gang. O(1). */
static bool can_still_reach(const kb_job *j, const kb_pq *tasks)
{
	return kb_job_placed_count(j) + (int32_t)tasks->n >= j->min_member;
}

/* Why task t (of job j, with remaining tasks still to place) found no node. */
static const char *no_node_reason(kb_session *ssn, const kb_job *j, const kb_task *t,
				  const kb_fit_report *rep, const kb_pq *tasks)
{
	int32_t fit = kb_job_placed_count(j);
	uint32_t remaining = 1 + tasks->n;
	if (j->min_member > fit && (uint32_t)(j->min_member - fit) < remaining)
		remaining = (uint32_t)(j->min_member - fit);
	const char *why = kb_fit_report_format(ssn, rep);
	const char *short_ = shortage(ssn, t, remaining);
	return short_ ? kb_arena_printf(&ssn->arena, "%s (%s)", short_, why) : why;
}

/* One turn of job ji: its tasks in task order onto their best nodes, through
 * statement st. A task that finds no node stays pending and out of the heap
 * for the rest of the session (nothing placed later makes room for it); the
 * turn goes on while the rest could still make the gang. Ends early once the
 * job is ready with tasks left (*ret_pushed_back: then it is back in its
 * queue's heap). *ret_fail: the last placement failure, or NULL.
 * Returns 0 or -ENOMEM (the caller discards st). */
static int job_turn(alloc_ctx *ac, uint32_t ji, kb_statement *st, kb_pq *jobs,
		    const char **ret_fail, bool *ret_pushed_back)
{
	kb_session *ssn = ac->ssn;
	kb_snapshot *s = ssn->snap_rw;
	kb_job *j = &s->jobs[ji];
	kb_pq *tasks = &ac->tasks_of_job[ji];
	while (!kb_pq_empty(tasks)) {
		uint32_t ti = kb_pq_pop(tasks);
		kb_task *t = &s->tasks[ti];
		kb_fit_report rep;
		int32_t ni = kb_best_node(ssn, t, &rep);
		if (ni < 0) {
			*ret_fail = no_node_reason(ssn, j, t, &rep, tasks);
			kb_job_out(ssn, j)->fit_tasks = kb_job_placed_count(j);
			if (can_still_reach(j, tasks))
				continue;
			break;
		}
		int r = kb_fits_idle(s, t, &s->nodes[ni]) ? kb_stmt_allocate(st, ti, (uint32_t)ni)
							: kb_stmt_pipeline(st, ti, (uint32_t)ni);
		if (r < 0)
			return r;
		if (kb_job_ready(ssn, j) && !kb_pq_empty(tasks)) {
			/* Minimum reached: let other jobs have a turn first. */
			if (kb_pq_push(jobs, ji) < 0)
				return -ENOMEM;
			*ret_pushed_back = true;
			break;
		}
	}
	return 0;
}

/* Without the enqueue action, a Pending PodGroup of an open queue is
 * admitted by allocate (volcano's allocate does the same), pods or not, so
 * that no configuration leaves a group that waits for Inqueue before
 * creating its pods waiting forever; not one the cache found invalid. O(1). */
static void admit_without_enqueue(const kb_session *ssn, kb_job *j)
{
	if (!ssn->enqueue_configured && j->flavor != KB_PG_NONE && j->phase == KB_PG_PENDING &&
	    !j->invalid && ssn->snap->queues[j->queue].state == KB_QUEUE_OPEN)
		j->phase = KB_PG_INQUEUE;
}

/* Why job j, which has pending tasks, may not be allocated this session,
 * or NULL when it may. */
static const char *not_allocatable(kb_session *ssn, const kb_job *j)
{
	const kb_queue *q = &ssn->snap->queues[j->queue];
	if (q->state != KB_QUEUE_OPEN)
		return kb_arena_printf(&ssn->arena, "queue \"%s\" is not open", q->name);
	const char *invalid = kb_job_valid(ssn, j);
	if (invalid)
		return invalid;
	if (!kb_job_admitted(ssn, j))
		return kb_job_out(ssn, j)->pending_reason
			       ? kb_job_out(ssn, j)->pending_reason
			       : "waiting to be enqueued: the cluster or its queue cannot hold its "
				 "minimum resources yet";
	return NULL;
}

/* Every job with something to place into its queue's heap, and every such
 * queue into queues. Returns 0 or -ENOMEM. */
static int fill_queues(alloc_ctx *ac, kb_pq *queues)
{
	kb_session *ssn = ac->ssn;
	kb_snapshot *s = ssn->snap_rw;
	bool *queued = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(bool));
	if (!queued)
		return -ENOMEM;
	for (uint32_t ji = 0; ji < s->njobs; ji++) {
		kb_job *j = &s->jobs[ji];
		if (j->queue < 0)
			continue;
		admit_without_enqueue(ssn, j);
		if (!kb_job_has_pending(s, j, false))
			continue; /* nothing to place: not queued, and no reason either */
		const char *why = not_allocatable(ssn, j);
		if (why) {
			kb_job_out(ssn, j)->pending_reason = why;
			continue;
		}
		if (kb_pq_push(&ac->jobs_of_queue[j->queue], ji) < 0)
			return -ENOMEM;
		if (!queued[j->queue]) {
			queued[j->queue] = true;
			if (kb_pq_push(queues, (uint32_t)j->queue) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The rest of an overused queue's jobs wait: say so. */
static void queue_waits(kb_session *ssn, const kb_queue *q, kb_pq *jobs)
{
	while (!kb_pq_empty(jobs)) {
		kb_job *j = &ssn->snap_rw->jobs[kb_pq_pop(jobs)];
		if (!kb_job_out(ssn, j)->pending_reason)
			kb_job_out(ssn, j)->pending_reason =
				kb_arena_printf(&ssn->arena, "queue \"%s\" is using its share", q->name);
	}
}

/* One turn of job ji (job_turn) in its own statement: committed when the
 * job is then ready or pipelined (1; its pending reason set), else
 * discarded (0; *ret_fail: the last placement failure, or NULL). Returns 1,
 * 0 or -ENOMEM (discarded). */
static int try_turn(alloc_ctx *ac, uint32_t ji, kb_pq *jobs, const char **ret_fail)
{
	kb_session *ssn = ac->ssn;
	kb_job *j = &ssn->snap_rw->jobs[ji];
	kb_job_outcome *out = kb_job_out(ssn, j);
	kb_statement st;
	kb_stmt_init(&st, ssn);
	const char *fail = NULL;
	bool pushed_back = false;
	if (job_turn(ac, ji, &st, jobs, &fail, &pushed_back) < 0) {
		kb_stmt_discard(&st);
		return -ENOMEM;
	}
	*ret_fail = fail;
	if (kb_job_ready(ssn, j)) {
		kb_stmt_commit(&st);
		if (fail && !pushed_back)
			out->pending_reason = fail; /* ready, but some tasks still wait */
		return 1;
	}
	if (kb_job_pipelined(ssn, j)) {
		kb_stmt_commit(&st);
		out->pending_reason = "pipelined: waiting for resources being released";
		return 1;
	}
	kb_stmt_discard(&st);
	return 0;
}

/* The turn of job ji, which has a topology wish: one try_turn per scope
 * (scheduler/topology.h) until one commits (the scope stays the job's). A
 * job given a scope by an earlier turn of this session keeps it (its task
 * heap too). Returns 0 or -ENOMEM. */
static int topo_turn(alloc_ctx *ac, uint32_t ji, kb_pq *jobs)
{
	kb_session *ssn = ac->ssn;
	kb_job *j = &ssn->snap_rw->jobs[ji];
	kb_job_outcome *out = kb_job_out(ssn, j);
	bool had_scope = kb_topo_scope_of(ssn, (int32_t)ji) != NULL;
	kb_topo_attempts at;
	if (kb_topo_attempts_for(ssn, j, NULL, &at) < 0)
		return -ENOMEM;
	if (at.error) {
		out->fit_tasks = kb_job_placed_count(j);
		out->pending_reason = at.error;
		return 0;
	}
	const char *fail = NULL;
	int32_t fit = kb_job_placed_count(j);
	for (uint32_t a = 0; a < at.n; a++) {
		if (!had_scope && kb_topo_set_scope(ssn, ji, &at.v[a]) < 0)
			return -ENOMEM;
		if (a > 0 && build_tasks(ac, ji) < 0)
			return -ENOMEM;
		int r = try_turn(ac, ji, jobs, &fail);
		if (r != 0)
			return r < 0 ? r : 0;
		if (out->fit_tasks > fit)
			fit = out->fit_tasks;
	}
	if (!had_scope && kb_topo_set_scope(ssn, ji, NULL) < 0)
		return -ENOMEM;
	const char *why = kb_topo_reason(ssn, j, fail);
	out->fit_tasks = fit;
	out->pending_reason = why ? why : fail ? fail : NOT_ENOUGH_TASKS;
	return 0;
}

/* The next job of queue qi (popped from jobs) gets its turn: commit when it is
 * ready or pipelined, else discard. Returns 0 or -ENOMEM (nothing of the
 * turn stays in the snapshot then). */
static int next_job(alloc_ctx *ac, kb_pq *jobs)
{
	kb_session *ssn = ac->ssn;
	uint32_t ji = kb_pq_pop(jobs);
	kb_job *j = &ssn->snap_rw->jobs[ji];
	kb_job_outcome *out = kb_job_out(ssn, j);
	const char *hopeless = cannot_hold(ssn, j);
	if (hopeless) {
		out->fit_tasks = kb_job_placed_count(j);
		if (!kb_job_ready(ssn, j) || !out->pending_reason)
			out->pending_reason = hopeless;
		return 0;
	}
	if (!ac->tasks_built[ji] && build_tasks(ac, ji) < 0)
		return -ENOMEM;
	if (kb_topo_wanted(j))
		return topo_turn(ac, ji, jobs);
	const char *fail;
	int r = try_turn(ac, ji, jobs, &fail);
	if (r == 0)
		out->pending_reason = fail ? fail : NOT_ENOUGH_TASKS;
	return r < 0 ? r : 0;
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
	if (fill_queues(&ac, &queues) < 0)
		return kb_err_set(err, -ENOMEM, "out of memory");
	while (!kb_pq_empty(&queues)) {
		uint32_t qi = kb_pq_pop(&queues);
		kb_pq *jobs = &ac.jobs_of_queue[qi];
		if (kb_queue_overused(ssn, &s->queues[qi])) {
			queue_waits(ssn, &s->queues[qi], jobs);
			continue;
		}
		if (!kb_pq_empty(jobs) && next_job(&ac, jobs) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
		if (!kb_pq_empty(jobs) && kb_pq_push(&queues, qi) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* allocate's one argument: percentage-of-nodes-to-score, a number in
 * (0, 100] (kb_percentage_of_nodes, which the node search reads it with). */
static int check_argument(const char *key, const char *value, kb_err *err)
{
	double v;
	if (strcmp(key, "percentage-of-nodes-to-score") != 0 || kb_percentage_of_nodes(value, &v))
		return 0;
	return kb_err_set(err, -EINVAL,
			  "percentage-of-nodes-to-score: \"%s\" is not a number in (0, 100]",
			  value ? value : "");
}

const kb_action_ops kb_action_allocate = {
	.name = "allocate",
	.execute = allocate_execute,
	.check_arg = check_argument,
};

/* priority - higher priority first; only lower priority may be preempted.
 *
 * Priorities are resolved by the cache (spec.priority, else the pod's
 * PriorityClass, else the global default class, else 0; a job takes its
 * PodGroup's priorityClassName, else its highest task).
 *
 * job starving: fewer of its tasks placed (ready or pipelined) than it has
 * (volcano's), so a job that is whole does not preempt for more.
 */
#include <errno.h>
#include <stdint.h>

#include "plugins/plugins.h"

static int prio_job_order(void *st, const kb_session *ssn, const kb_job *l, const kb_job *r)
{
	if (l->priority == r->priority)
		return 0;
	return l->priority > r->priority ? -1 : 1;
}

static int prio_task_order(void *st, const kb_session *ssn, const kb_task *l, const kb_task *r)
{
	if (l->priority == r->priority)
		return 0;
	return l->priority > r->priority ? -1 : 1;
}

static kb_vote prio_victims(void *st, const kb_session *ssn, const kb_task *preemptor,
			    const uint32_t *cands, uint32_t n, bool *allow)
{
	const kb_snapshot *s = ssn->snap;
	int32_t mine = preemptor->job >= 0 ? s->jobs[preemptor->job].priority : preemptor->priority;
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[cands[i]];
		int32_t theirs = t->job >= 0 ? s->jobs[t->job].priority : t->priority;
		allow[i] = theirs < mine;
	}
	return KB_PERMIT;
}

/* The lowest job priority among tasks that can be victims (running or
 * bound, of a job), per queue, as of open: evictions only remove
 * candidates, so it stays a lower bound for the whole session. */
typedef struct prio_state {
	int32_t *lowest; /* per queue; INT32_MAX when the queue runs nothing */
} prio_state;

static int prio_open(kb_session *ssn, const kb_plugin_conf *conf, void **ret_state, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	prio_state *st = kb_arena_calloc(&ssn->arena, 1, sizeof(*st));
	int32_t *lowest = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(int32_t));
	if (!st || !lowest)
		return kb_err_set(err, -ENOMEM, "priority: out of memory");
	for (uint32_t q = 0; q < s->nqueues; q++)
		lowest[q] = INT32_MAX;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->queue >= 0 && j->nstatus[KB_TASK_RUNNING] + j->nstatus[KB_TASK_BOUND] > 0 &&
		    j->priority < lowest[j->queue])
			lowest[j->queue] = j->priority;
	}
	st->lowest = lowest;
	*ret_state = st;
	return 0;
}

/* Preempt takes victims of other jobs of the preemptor's queue, and only of
 * lower job priority: none when no job of the queue that runs is lower. */
static bool prio_preempt_possible(void *state, const kb_session *ssn, const kb_task *preemptor)
{
	const prio_state *st = state;
	const kb_snapshot *s = ssn->snap;
	if (preemptor->job < 0 || s->jobs[preemptor->job].queue < 0)
		return true;
	const kb_job *j = &s->jobs[preemptor->job];
	return st->lowest[j->queue] < j->priority;
}

static kb_vote prio_job_starving(void *st, const kb_session *ssn, const kb_job *j)
{
	int32_t alive = (int32_t)j->ntasks - j->nstatus[KB_TASK_FAILED] -
			j->nstatus[KB_TASK_RELEASING] - j->nstatus[KB_TASK_UNKNOWN];
	return kb_job_placed_count(j) < alive ? KB_PERMIT : KB_REJECT;
}

const kb_plugin_ops kb_plugin_priority = {
	.name = "priority",
	.job_order = prio_job_order,
	.task_order = prio_task_order,
	.open = prio_open,
	.preemptable = prio_victims,
	.preempt_possible = prio_preempt_possible,
	.job_starving = prio_job_starving,
};

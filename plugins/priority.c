/* priority - higher priority first; only lower priority may be preempted.
 *
 * Priorities are resolved by the cache (spec.priority, else the pod's
 * PriorityClass, else the global default class, else 0; a job takes its
 * PodGroup's priorityClassName, else its highest task).
 *
 * job starving: fewer of its tasks placed (ready or pipelined) than it has
 * (volcano's), so a job that is whole does not preempt for more.
 */
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
	.preemptable = prio_victims,
	.job_starving = prio_job_starving,
};

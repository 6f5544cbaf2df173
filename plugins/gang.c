/* gang - all or nothing: a job runs only once minMember of its tasks can.
 *
 * job valid:     the tasks that exist (pending or placed or succeeded) number
 *                at least minMember;
 * job ready:     Allocated + Binding + Bound + Running + Succeeded >= minMember;
 * job pipelined: the same plus Pipelined >= minMember;
 * job order:     jobs not yet ready go first (kube-batch's rule);
 * preemptable / reclaimable: a victim job is never left running below
 *                minMember: of one job's candidates, at most
 *                (ready - minMember) may go, unless the candidates are
 *                the whole job, which may go whole;
 * close:         jobs that are not ready get a reason a person can act on:
 *                gang "ns/pg": 4/6 tasks in gang fit: 2 need 1 cpu, largest free 500m cpu (...)
 */
#include <string.h>

#include "plugins/plugins.h"

static int32_t valid_count(const kb_job *j)
{
	return kb_job_ready_count(j) + j->nstatus[KB_TASK_PENDING] + j->nstatus[KB_TASK_PIPELINED];
}

static kb_vote gang_job_valid(void *st, const kb_session *ssn, const kb_job *j, const char **ret)
{
	if (valid_count(j) >= j->min_member)
		return KB_PERMIT;
	*ret = kb_session_printf(ssn,
			       "gang \"%s\": %d pods exist, fewer than minMember %d", j->key,
			       valid_count(j), j->min_member);
	return KB_REJECT;
}

static kb_vote gang_job_ready(void *st, const kb_session *ssn, const kb_job *j)
{
	return kb_job_ready_count(j) >= j->min_member ? KB_PERMIT : KB_REJECT;
}

static kb_vote gang_job_pipelined(void *st, const kb_session *ssn, const kb_job *j)
{
	return kb_job_ready_count(j) + j->nstatus[KB_TASK_PIPELINED] >= j->min_member ? KB_PERMIT
										       : KB_REJECT;
}

static int gang_job_order(void *st, const kb_session *ssn, const kb_job *l, const kb_job *r)
{
	bool lr = kb_job_ready_count(l) >= l->min_member;
	bool rr = kb_job_ready_count(r) >= r->min_member;
	if (lr == rr)
		return 0;
	return lr ? 1 : -1;
}

/* Tasks of j that hold a node: the ones an eviction can take. */
static int32_t holding_count(const kb_job *j)
{
	return j->nstatus[KB_TASK_ALLOCATED] + j->nstatus[KB_TASK_BINDING] + j->nstatus[KB_TASK_BOUND] +
	       j->nstatus[KB_TASK_RUNNING];
}

/* A victim job keeps minMember, or goes whole: of one job's candidates, at
 * most (ready - minMember) may be taken, unless the candidates are every
 * task the job holds, which may all go. Candidate lists are short (one
 * node's tasks, or one job's), so jobs are counted within the list:
 * O(n^2) in the candidates, no allocation. */
static kb_vote gang_victims(void *st, const kb_session *ssn, const kb_task *preemptor,
			    const uint32_t *cands, uint32_t n, bool *allow)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[cands[i]];
		if (t->job < 0)
			continue;
		const kb_job *j = &s->jobs[t->job];
		if (j->min_member <= 1)
			continue; /* a job of one */
		int32_t offered = 0, taken = 0;
		for (uint32_t k = 0; k < n; k++) {
			const kb_task *o = &s->tasks[cands[k]];
			if (o->job != t->job)
				continue;
			offered += kb_task_status_allocated(o->status);
			taken += k < i && allow[k];
		}
		/* The whole gang: every member that counts toward minMember, so
		 * none may have finished. */
		if (offered >= holding_count(j) && holding_count(j) == kb_job_ready_count(j))
			continue;
		allow[i] = taken < kb_job_ready_count(j) - j->min_member;
	}
	return KB_PERMIT;
}

static void gang_close(kb_session *ssn, void *st)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->min_member <= 1 || j->invalid || kb_job_ready_count(j) >= j->min_member)
			continue;
		if (j->nstatus[KB_TASK_PENDING] == 0)
			continue;
		if (kb_job_out(ssn, j)->pending_reason && strncmp(kb_job_out(ssn, j)->pending_reason, "gang ", 5) == 0)
			continue;
		const char *detail = kb_job_out(ssn, j)->pending_reason ? kb_job_out(ssn, j)->pending_reason : "not scheduled yet";
		kb_job_out(ssn, j)->pending_reason = kb_arena_printf(&ssn->arena, "gang \"%s\": %d/%d tasks in gang fit: %s",
						    j->key, kb_job_out(ssn, j)->fit_tasks, j->min_member, detail);
	}
}

const kb_plugin_ops kb_plugin_gang = {
	.name = "gang",
	.close = gang_close,
	.job_order = gang_job_order,
	.job_valid = gang_job_valid,
	.job_ready = gang_job_ready,
	.job_pipelined = gang_job_pipelined,
	.preemptable = gang_victims,
	.reclaimable = gang_victims,
};

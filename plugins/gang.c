/* gang - all or nothing: a job runs only once minMember of its tasks can.
 *
 * job valid:     the tasks that exist (pending or placed or succeeded) number
 *                at least minMember, and at least minTaskMember of each
 *                task role (volcano's, read from the pods' volcano.sh/task-spec);
 *                pods held back by spec.schedulingGates are not tasks yet,
 *                so a gang waits until enough of its members are ungated;
 * job ready:     Allocated + Binding + Bound + Running + Succeeded >= minMember,
 *                and as many of each role as its minTaskMember;
 * job pipelined: the same plus Pipelined;
 * job starving:  fewer than minMember placed (ready + pipelined), or a role
 *                below its minTaskMember: the job may preempt (volcano's);
 * job order:     jobs not yet ready go first (kube-batch's rule);
 * preemptable / reclaimable: a victim job is never left running below
 *                minMember: of one job's candidates, at most
 *                (ready - minMember) may go, unless the candidates are
 *                the whole job, which may go whole;
 * close:         jobs that are not ready get a reason a person can act on:
 *                gang "ns/pg": 4/6 tasks in gang fit: 2 need 1 cpu, largest free 500m cpu (...)
 */
#include <errno.h>

#include <string.h>

#include "api/jobstatus.h"
#include "plugins/plugins.h"

enum role_count { COUNT_EXISTING, COUNT_READY, COUNT_PLACED };

static int32_t valid_count(const kb_job *j)
{
	return kb_job_ready_count(j) + j->nstatus[KB_TASK_PENDING] + j->nstatus[KB_TASK_PIPELINED];
}

static bool counts(kb_task_status st, enum role_count what)
{
	switch (what) {
	case COUNT_EXISTING:
		return st != KB_TASK_FAILED && st != KB_TASK_UNKNOWN && st != KB_TASK_RELEASING;
	case COUNT_READY:
		return kb_task_status_allocated(st) || st == KB_TASK_SUCCEEDED;
	case COUNT_PLACED:
		return kb_task_status_allocated(st) || st == KB_TASK_SUCCEEDED ||
		       st == KB_TASK_PIPELINED;
	}
	return false;
}

/* The first role of j with fewer tasks counted as `what` than its
 * minTaskMember (its index, the count in *ret_have), or -1. O(tasks of j),
 * and O(1) for the many jobs without roles. */
static int short_role(const kb_snapshot *s, const kb_job *j, enum role_count what,
		      int32_t *ret_have)
{
	if (j->nroles == 0)
		return -1;
	int32_t have[KB_MAX_ROLES] = {0};
	uint32_t nroles = j->nroles < KB_MAX_ROLES ? j->nroles : KB_MAX_ROLES;
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->role >= 0 && (uint32_t)t->role < nroles && counts(t->status, what))
			have[t->role]++;
	}
	for (uint32_t r = 0; r < nroles; r++)
		if (have[r] < j->roles[r].min) {
			*ret_have = have[r];
			return (int)r;
		}
	return -1;
}

static kb_vote gang_job_valid(void *st, const kb_session *ssn, const kb_job *j, const char **ret)
{
	if (valid_count(j) < j->min_member) {
		*ret = j->ngated ? kb_session_printf(ssn,
						     "gang \"%s\": %d pods exist, fewer than %s "
						     "%d; %d more held by spec.schedulingGates",
						     j->key, valid_count(j), kb_job_min_name(j),
						     j->min_member, j->ngated)
				 : kb_session_printf(ssn,
						     "gang \"%s\": %d pods exist, fewer than %s %d",
						     j->key, valid_count(j), kb_job_min_name(j),
						     j->min_member);
		return KB_REJECT;
	}
	int32_t have;
	int r = short_role(ssn->snap, j, COUNT_EXISTING, &have);
	if (r < 0)
		return KB_PERMIT;
	*ret = kb_session_printf(ssn,
				 "gang \"%s\": %d pods of task \"%s\" exist, fewer than its "
				 "minTaskMember %d",
				 j->key, have, j->roles[r].role, j->roles[r].min);
	return KB_REJECT;
}

static kb_vote gang_job_ready(void *st, const kb_session *ssn, const kb_job *j)
{
	int32_t have;
	return kb_job_ready_count(j) >= j->min_member &&
			       short_role(ssn->snap, j, COUNT_READY, &have) < 0
		       ? KB_PERMIT
		       : KB_REJECT;
}

static kb_vote gang_job_pipelined(void *st, const kb_session *ssn, const kb_job *j)
{
	int32_t have;
	return kb_job_placed_count(j) >= j->min_member &&
			       short_role(ssn->snap, j, COUNT_PLACED, &have) < 0
		       ? KB_PERMIT
		       : KB_REJECT;
}

/* Starving is the negation of pipelined: fewer than its minimum placed. */
static kb_vote gang_job_starving(void *st, const kb_session *ssn, const kb_job *j)
{
	return gang_job_pipelined(st, ssn, j) == KB_PERMIT ? KB_REJECT : KB_PERMIT;
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

/* Per-job counts for victim selection, from the session arena, reset by a
 * generation stamp instead of a clear (one call per node, many per task). */
typedef struct gang_state {
	uint32_t gen;
	uint32_t *seen;    /* per job: the gen its counts belong to */
	int32_t *offered;  /* per job: its candidates that hold a node */
	int32_t *taken;    /* per job: candidates allowed so far */
} gang_state;

static int gang_open(kb_session *ssn, const kb_plugin_conf *conf, void **ret_state, kb_err *err)
{
	uint32_t n = ssn->snap->njobs ? ssn->snap->njobs : 1;
	gang_state *st = kb_arena_calloc(&ssn->arena, 1, sizeof(*st));
	if (st) {
		st->seen = kb_arena_calloc(&ssn->arena, n, sizeof(uint32_t));
		st->offered = kb_arena_calloc(&ssn->arena, n, sizeof(int32_t));
		st->taken = kb_arena_calloc(&ssn->arena, n, sizeof(int32_t));
	}
	if (!st || !st->seen || !st->offered || !st->taken)
		return kb_err_set(err, -ENOMEM, "gang: out of memory");
	*ret_state = st;
	return 0;
}

/* A victim job keeps minMember, or goes whole: of one job's candidates, at
 * most (ready - minMember) may be taken, in the order given, unless the
 * candidates are every task the job holds, which may all go. O(n). */
static kb_vote gang_victims(void *state, const kb_session *ssn, const kb_task *preemptor,
			    const uint32_t *cands, uint32_t n, bool *allow)
{
	gang_state *st = state;
	const kb_snapshot *s = ssn->snap;
	if (++st->gen == 0) { /* wrapped: every stamp is stale again */
		memset(st->seen, 0, (s->njobs ? s->njobs : 1) * sizeof(uint32_t));
		st->gen = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		int32_t ji = s->tasks[cands[i]].job;
		if (ji < 0)
			continue;
		if (st->seen[ji] != st->gen) {
			st->seen[ji] = st->gen;
			st->offered[ji] = st->taken[ji] = 0;
		}
		st->offered[ji] += kb_task_status_allocated(s->tasks[cands[i]].status);
	}
	for (uint32_t i = 0; i < n; i++) {
		int32_t ji = s->tasks[cands[i]].job;
		if (ji < 0)
			continue;
		const kb_job *j = &s->jobs[ji];
		if (j->min_member <= 1)
			continue; /* a job of one */
		/* The whole gang: every member that counts toward minMember, so
		 * none may have finished. */
		if (st->offered[ji] >= holding_count(j) && holding_count(j) == kb_job_ready_count(j))
			continue;
		allow[i] = st->taken[ji] < kb_job_ready_count(j) - j->min_member;
		st->taken[ji] += allow[i];
	}
	return KB_PERMIT;
}

/* Jobs that are not ready get the gang's reason, in front of whatever the
 * actions said (kept as the detail). O(jobs), plus the roles' counts. */
static void gang_close(kb_session *ssn, void *st)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		kb_job_outcome *out = &ssn->out[i];
		if (j->invalid || j->nstatus[KB_TASK_PENDING] == 0 ||
		    (j->min_member <= 1 && j->nroles == 0) ||
		    gang_job_ready(st, ssn, j) == KB_PERMIT)
			continue;
		if (out->pending_reason && strncmp(out->pending_reason, "gang ", 5) == 0)
			continue;
		const char *detail = out->pending_reason ? out->pending_reason : "not scheduled yet";
		out->pending_reason = kb_arena_printf(&ssn->arena,
						      "gang \"%s\": %d/%d tasks in gang fit: %s",
						      j->key, out->fit_tasks, j->min_member, detail);
	}
}

const kb_plugin_ops kb_plugin_gang = {
	.name = "gang",
	.close = gang_close,
	.job_order = gang_job_order,
	.job_valid = gang_job_valid,
	.job_ready = gang_job_ready,
	.job_pipelined = gang_job_pipelined,
	.job_starving = gang_job_starving,
	.open = gang_open,
	.preemptable = gang_victims,
	.reclaimable = gang_victims,
};

/* backfill - place BestEffort pods (kube-batch's meaning).
 *
 * A BestEffort pod asks for nothing but a pod slot, so it never holds back a
 * gang. For every valid job with pending BestEffort tasks, each such task
 * goes to the best node that passes the predicates (pod count, selectors,
 * taints, ports); the job's placements are committed when the job is ready
 * and discarded otherwise, as everywhere else.
 *
 * Cost: O(BestEffort tasks x nodes x predicates).
 */
#include <errno.h>

#include "scheduler/actions/actions.h"
#include "scheduler/actions/placement.h"
#include "scheduler/statement.h"

static int backfill_execute(kb_session *ssn, kb_err *err)
{
	kb_snapshot *s = ssn->snap_rw;
	for (uint32_t ji = 0; ji < s->njobs; ji++) {
		kb_job *j = &s->jobs[ji];
		if (j->queue < 0 || !kb_job_has_pending(s, j, true))
			continue;
		const char *invalid = kb_job_valid(ssn, j);
		if (invalid) {
			kb_job_out(ssn, j)->pending_reason = invalid;
			continue;
		}
		if (!kb_job_admitted(ssn, j))
			continue;
		kb_statement st;
		kb_stmt_init(&st, ssn);
		const char *fail = NULL;
		for (uint32_t k = 0; k < j->ntasks; k++) {
			uint32_t ti = s->job_tasks[j->first_task + k];
			kb_task *t = &s->tasks[ti];
			if (t->status != KB_TASK_PENDING || !t->best_effort)
				continue;
			kb_fit_report rep;
			int32_t ni = kb_best_node(ssn, t, &rep);
			if (ni < 0) {
				fail = kb_fit_report_format(ssn, &rep);
				continue;
			}
			int r = kb_stmt_allocate(&st, ti, (uint32_t)ni);
			if (r < 0) {
				kb_stmt_discard(&st);
				return kb_err_set(err, r, "out of memory");
			}
		}
		if (kb_job_ready(ssn, j)) {
			kb_stmt_commit(&st);
		} else {
			kb_stmt_discard(&st);
		}
		if (fail)
			kb_job_out(ssn, j)->pending_reason = fail;
	}
	return 0;
}

const kb_action_ops kb_action_backfill = {
	.name = "backfill",
	.execute = backfill_execute,
};

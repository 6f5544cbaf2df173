/* jobstatus.h - what a PodGroup's status should say after a session.
 *
 * Shared by the status writer (cluster mode) and the simulator, so both
 * report the same thing:
 *   phase: Completed when every task has finished and at least minMember
 *          succeeded; Running when minMember tasks are placed or done;
 *          Inqueue when the enqueue action admitted it; else Pending;
 *   counts: running (placed, binding, bound or running), succeeded, failed;
 *   unschedulable: the job's pending reason when it is not running.
 */
#ifndef KB_SCHEDULER_JOBSTATUS_H
#define KB_SCHEDULER_JOBSTATUS_H

#include "scheduler/framework.h"

typedef struct kb_job_status {
	kb_pg_phase phase;
	int32_t running, succeeded, failed, pending;
	int32_t scheduled; /* tasks placed, bound, running or done */
	const char *unschedulable; /* NULL when nothing holds it back */
} kb_job_status;

void kb_job_status_of(const kb_session *ssn, const kb_job *j, kb_job_status *ret);

/* "Pending", "Inqueue", "Running", "Unknown", "Completed". */
const char *kb_pg_phase_name(kb_pg_phase p);

#endif

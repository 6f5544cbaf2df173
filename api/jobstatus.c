#include "api/jobstatus.h"

#include <string.h>

const char *kb_pg_phase_name(kb_pg_phase p)
{
	switch (p) {
	case KB_PG_PENDING:
		return "Pending";
	case KB_PG_INQUEUE:
		return "Inqueue";
	case KB_PG_RUNNING:
		return "Running";
	case KB_PG_UNKNOWN:
		return "Unknown";
	case KB_PG_COMPLETED:
		return "Completed";
	}
	return "Unknown";
}

void kb_job_status_of(const kb_job *j, const char *pending_reason, bool enqueue_configured,
		      kb_job_status *ret)
{
	memset(ret, 0, sizeof(*ret));
	const int32_t *n = j->nstatus;
	ret->running = n[KB_TASK_ALLOCATED] + n[KB_TASK_BINDING] + n[KB_TASK_BOUND] + n[KB_TASK_RUNNING];
	ret->succeeded = n[KB_TASK_SUCCEEDED];
	ret->failed = n[KB_TASK_FAILED];
	/* Members held back (scheduling gates, a refused binding's backoff, an
	 * update that did not decode) are waiting too. */
	ret->pending = n[KB_TASK_PENDING] + n[KB_TASK_PIPELINED] + j->ngated;
	ret->scheduled = ret->running + ret->succeeded + ret->failed;
	bool finished = j->ntasks > 0 && ret->succeeded + ret->failed == (int32_t)j->ntasks;
	/* Members gone, none waiting (they finished: jobstatus.h) count as
	 * running enough. */
	bool vanished = j->phase == KB_PG_RUNNING && ret->pending == 0;
	if (finished && ret->succeeded >= j->min_member)
		ret->phase = KB_PG_COMPLETED;
	else if ((ret->running + ret->succeeded >= j->min_member && j->ntasks > 0) || vanished)
		ret->phase = KB_PG_RUNNING;
	else if (j->phase == KB_PG_INQUEUE)
		ret->phase = KB_PG_INQUEUE; /* admitted: by enqueue, or by allocate without it */
	else if (j->phase == KB_PG_RUNNING)
		ret->phase = enqueue_configured ? KB_PG_INQUEUE : KB_PG_PENDING;
	else
		ret->phase = KB_PG_PENDING;
	if (ret->phase != KB_PG_RUNNING && ret->phase != KB_PG_COMPLETED)
		ret->unschedulable = j->invalid ? j->invalid : pending_reason;
	else if (ret->pending > 0)
		ret->unschedulable = NULL;
}

const char *kb_job_min_name(const kb_job *j)
{
	return j->flavor == KB_PG_K8S || j->flavor == KB_PG_K8S_WORKLOAD ? "minCount" : "minMember";
}

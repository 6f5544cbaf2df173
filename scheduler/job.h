/* job.h - questions about one job that actions and plugins both ask.
 *
 * Below the actions and beside the framework: proportion asks for a job's
 * minimum here, not from the actions. Everything reads the session's
 * snapshot and writes nothing; scratch comes from the session arena.
 */
#ifndef KB_SCHEDULER_JOB_H
#define KB_SCHEDULER_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "api/snapshot.h"
#include "scheduler/framework.h"

/* Whether job j has a pending task that is (best_effort) or is not BestEffort.
 * O(1) for a job with no pending task, else O(tasks of j). */
bool kb_job_has_pending(const kb_snapshot *s, const kb_job *j, bool best_effort);

/* Whether allocate may consider job j: always without the enqueue action;
 * with it, only PodGroups that enqueue admitted (phase not Pending). O(1). */
bool kb_job_admitted(const kb_session *ssn, const kb_job *j);

/* A job's minimum into *ret: its PodGroup's spec.minResources, or else the
 * requests of its minMember smallest tasks (all of them when it has fewer;
 * nothing for a PodGroup whose pods do not exist yet). Returns 0, or -ENOMEM
 * (scratch from the session arena) with *ret zeroed.
 * O(tasks of j log tasks of j); O(tasks of j) when its tasks ask alike. */
int kb_job_min_request(const kb_session *ssn, const kb_job *j, kb_res *ret);

/* What gang j still needs to reach minMember, into *ret: the requests of
 * its (minMember - placed) smallest pending tasks that are not BestEffort
 * (compared resource by resource in index order), and that count into
 * *ret_count. Zero (count 0) for a job that has reached it; count -1 when
 * it has fewer such pending tasks than that (the job is not valid).
 * Returns 0, or -ENOMEM (scratch from the session arena).
 * O(tasks of j log tasks of j); O(tasks of j) when they ask alike. */
int kb_job_remaining_need(const kb_session *ssn, const kb_job *j, kb_res *ret, int32_t *ret_count);

/* A job index with its session, for qsort. */
typedef struct kb_job_ref {
	const kb_session *ssn;
	uint32_t job;
} kb_job_ref;

/* qsort comparator over kb_job_ref: queue order, then job order inside a
 * queue (both through the session's tiers). Jobs must have a queue. */
int kb_job_ref_cmp(const void *a, const void *b);

#endif

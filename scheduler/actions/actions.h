/* actions.h - the built-in actions and what they share.
 *
 * An action is a name and an execute function over a session
 * (scheduler/conf.h: kb_action_ops). The order they run in is the
 * configuration's "actions" string.
 */
#ifndef KB_SCHEDULER_ACTIONS_H
#define KB_SCHEDULER_ACTIONS_H

#include "api/snapshot.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

extern const kb_action_ops kb_action_enqueue;
extern const kb_action_ops kb_action_allocate;
extern const kb_action_ops kb_action_backfill;
extern const kb_action_ops kb_action_preempt;
extern const kb_action_ops kb_action_reclaim;

/* Whether job j has a pending task that is (best_effort) or is not BestEffort.
 * O(1) for a job with no pending task, else O(tasks of j). */
bool kb_job_has_pending(const kb_snapshot *s, const kb_job *j, bool best_effort);

/* Whether allocate may consider job j: always without the enqueue action;
 * with it, only PodGroups that enqueue admitted (phase not Pending). */
bool kb_job_admitted(const kb_session *ssn, const kb_job *j);

/* A job index with its session, for qsort. */
typedef struct kb_job_ref {
	const kb_session *ssn;
	uint32_t job;
} kb_job_ref;

/* qsort comparator over kb_job_ref: queue order, then job order inside a
 * queue (both through the session's tiers). Jobs must have a queue. */
int kb_job_ref_cmp(const void *a, const void *b);

/* A job's minimum: its PodGroup's spec.minResources, or else the requests
 * of its minMember smallest tasks. O(tasks of j log tasks of j). */
void kb_job_min_request(const kb_session *ssn, const kb_job *j, kb_res *ret);

#endif

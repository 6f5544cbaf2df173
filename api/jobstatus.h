/* jobstatus.h - what a PodGroup's status should say after a session.
 *
 * The framework computes it at session close and hands it to the effects
 * table (api/effects.h), so the status writer (cluster mode) and the
 * simulator report the same thing without knowing what a session is:
 *   phase: Completed when every task has finished and at least minMember
 *          succeeded; Running when minMember tasks are placed or done;
 *          Inqueue when the enqueue action admitted it; else Pending;
 *   counts: running (placed, binding, bound or running), succeeded, failed,
 *          pending (waiting, and held back: gated, a refused binding's
 *          backoff, an update that did not decode);
 *   unschedulable: the job's pending reason when it is not running.
 */
#ifndef KB_API_JOBSTATUS_H
#define KB_API_JOBSTATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/types.h"

typedef struct kb_job_status {
	kb_pg_phase phase;
	int32_t running, succeeded, failed, pending;
	int32_t scheduled; /* tasks placed, bound, running or done */
	const char *unschedulable; /* NULL when nothing holds it back */
} kb_job_status;

/* The status of j as a session leaves it. pending_reason is the session's
 * reason for j (NULL when it has none); j->invalid, when set, wins over it.
 * An Inqueue group stays Inqueue until it runs (enqueue admitted it, or
 * allocate did when enqueue is not configured). enqueue_configured: whether
 * the enqueue action ran; without it a group that was Running and fell below
 * minMember with members waiting (held back ones included) reads Pending, as
 * volcano's does. A group
 * that was Running and fell below minMember with no member waiting stays
 * Running: the cluster-mode cache does not hold finished pods (the pod
 * field selector, kube/reflector.h), so members that finished simply
 * vanish, and reading that as Pending (or Inqueue, which would hold the
 * group's minimum in enqueue's room) would be wrong. Writes *ret only.
 * Borrowed strings: ret->unschedulable points at pending_reason or
 * j->invalid. O(1). */
void kb_job_status_of(const kb_job *j, const char *pending_reason, bool enqueue_configured,
		      kb_job_status *ret);

/* "Pending", "Inqueue", "Running", "Unknown", "Completed". */
const char *kb_pg_phase_name(kb_pg_phase p);

/* What users call j's minimum in reasons: "minCount" for Kubernetes' own
 * gang API (KB_PG_K8S, KB_PG_K8S_WORKLOAD), else "minMember". A constant;
 * O(1). */
const char *kb_job_min_name(const kb_job *j);

#endif

/* queue_status.h - what a Queue's status should say, whether the API's copy
 * already says it, and the merge patch that makes it say it.
 *
 * The fields are the two Queue APIs' own:
 *  - volcano, scheduling.volcano.sh/v1beta1 QueueStatus: state (Open,
 *    Closed, Closing, Unknown), the PodGroup counts unknown, pending,
 *    running, inqueue, completed, and allocated (a ResourceList, since
 *    volcano v1.9);
 *  - kube-batch, scheduling.incubator.k8s.io/v1alpha1 QueueStatus: unknown,
 *    pending and running. kube-batch has no Inqueue or Completed phase:
 *    Inqueue groups count as pending there, Completed ones are not counted.
 *
 * The daemon builds a kb_queue_report from the session's summary (the
 * phases it computed for the queue's PodGroups, the queue's allocated
 * resources, its state) and the writers (kube/writers.h:
 * kb_writers_queue_status) write it only when the API's copy, as the
 * watch last delivered it (kb_queue_status_obj), says otherwise.
 *
 * Pure functions, no I/O; the body is a jansson object.
 */
#ifndef KB_KUBE_QUEUE_STATUS_H
#define KB_KUBE_QUEUE_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/resource.h"
#include "api/types.h"
#include "cache/objects.h"

typedef struct kb_queue_report {
	kb_queue_state state;
	int32_t unknown, pending, running, inqueue, completed;
	/* Resources written in status.allocated (volcano only): cpu and memory
	 * always, every other resource the queue holds, and every resource the
	 * API's copy names (written as 0 when no longer held: a merge patch
	 * keeps the keys it does not name). Never "pods". */
	uint32_t allocated_mask;
	kb_res allocated;
} kb_queue_report;

/* The report for a queue: counts by kb_pg_phase (KB_PG_PENDING ..
 * KB_PG_COMPLETED, 5 entries), its state and allocated resources, shaped
 * for the API flavor (KB_PG_KUBE_BATCH folds inqueue into pending and drops
 * completed and allocated), extended by what the API's copy `cached` names
 * (NULL: none). O(KB_RES_MAX). */
void kb_queue_report_make(kb_pg_flavor flavor, const int32_t counts[5], kb_queue_state state,
			  const kb_res *allocated, int nres, const kb_queue_status_obj *cached,
			  kb_queue_report *ret);

/* Whether the API's copy already says what want says, for flavor. */
bool kb_queue_report_matches(kb_pg_flavor flavor, const kb_queue_report *want,
			     const kb_queue_status_obj *cached);

/* Whether two reports are the same. */
bool kb_queue_report_eq(const kb_queue_report *a, const kb_queue_report *b);

/* "Open", "Closed", "Closing". */
const char *kb_queue_state_name(kb_queue_state s);

/* {"status": {...}} for flavor, quantities as kubectl writes them. A new
 * reference, or NULL on -ENOMEM. O(KB_RES_MAX). */
json_t *kb_queue_report_body(kb_pg_flavor flavor, const kb_queue_report *want,
			     const kb_resnames *rn);

#endif

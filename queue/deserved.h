/* deserved.h - each queue's deserved share of the cluster: weighted
 * water-filling, per resource, in exact integer milli-units.
 *
 * For every resource independently, with capacity C (the cluster's
 * allocatable), queue i gets
 *     d_i = max(g_i, min(L * w_i, h_i))
 * where w_i is its weight, g_i its guarantee (floor), h_i = min(request_i,
 * capability_i) its ceiling, and L the largest level at which the d_i still
 * sum to at most C. Leftover milli-units (fewer than the sum of the weights of
 * the queues still below their ceiling) go, in input order, only to queues
 * whose share would grow at the next level (never to a queue held at its
 * guarantee or its ceiling). So the share is:
 *  - proportional to weight among queues that all want more;
 *  - never above what a queue asks for or its capability (leftover from a
 *    queue that asks for less goes to the queues that still ask:
 *    work-conserving);
 *  - never below the guarantee (if the guarantees alone exceed C, each queue
 *    gets C * g_i / sum(g), rounded down).
 * Cost: O(queues x resources x 64).
 */
#ifndef KB_QUEUE_DESERVED_H
#define KB_QUEUE_DESERVED_H

#include <stdint.h>

#include "api/resource.h"
#include "api/types.h"

typedef struct kb_share_input {
	int64_t weight;           /* >= 1 */
	uint32_t capability_mask; /* bit r: capability.q[r] applies */
	kb_res capability;
	kb_res guarantee;
	kb_res request;
} kb_share_input;

/* The input for queue q: its weight (at least 1), capability, guarantee,
 * and as request what its jobs ask for (at least what it holds). */
void kb_share_input_of(const kb_queue *q, kb_share_input *ret);

/* Writes n deserved vectors to ret[0..n). total is the cluster's capacity. */
void kb_deserved_compute(const kb_res *total, const kb_share_input *in, uint32_t n, kb_res *ret);

#endif

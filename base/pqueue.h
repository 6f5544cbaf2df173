/* pqueue.h - a binary heap of indices ordered by a caller's comparator.
 *
 * The actions keep queues, jobs and tasks in these, ordered by the session's
 * tier-dispatched comparators (kb_queue_less, kb_job_less, kb_task_less).
 * Memory comes from the session arena; the heap grows by doubling.
 */
#ifndef KB_SCHEDULER_PQUEUE_H
#define KB_SCHEDULER_PQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"

/* True when index a must come out before index b. */
typedef bool (*kb_pq_less_fn)(const void *ctx, uint32_t a, uint32_t b);

typedef struct kb_pq {
	uint32_t *v;
	uint32_t n, cap;
	kb_pq_less_fn less;
	const void *ctx;
	kb_arena *arena;
} kb_pq;

void kb_pq_init(kb_pq *q, kb_arena *arena, kb_pq_less_fn less, const void *ctx);
/* 0 or -ENOMEM. O(log n). */
int kb_pq_push(kb_pq *q, uint32_t x);
/* The first index; the queue must not be empty. O(log n). */
uint32_t kb_pq_pop(kb_pq *q);
static inline bool kb_pq_empty(const kb_pq *q)
{
	return q->n == 0;
}

#endif

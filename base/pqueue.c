#include "base/pqueue.h"

#include <errno.h>
#include <string.h>

void kb_pq_init(kb_pq *q, kb_arena *arena, kb_pq_less_fn less, const void *ctx)
{
	memset(q, 0, sizeof(*q));
	q->arena = arena;
	q->less = less;
	q->ctx = ctx;
}

int kb_pq_push(kb_pq *q, uint32_t x)
{
	if (q->n == q->cap) {
		uint32_t ncap = q->cap ? q->cap * 2 : 16;
		uint32_t *nv = kb_arena_calloc(q->arena, ncap, sizeof(uint32_t));
		if (!nv)
			return -ENOMEM;
		if (q->n)
			memcpy(nv, q->v, q->n * sizeof(uint32_t));
		q->v = nv;
		q->cap = ncap;
	}
	uint32_t i = q->n++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!q->less(q->ctx, x, q->v[parent]))
			break;
		q->v[i] = q->v[parent];
		i = parent;
	}
	q->v[i] = x;
	return 0;
}

uint32_t kb_pq_pop(kb_pq *q)
{
	uint32_t top = q->v[0];
	uint32_t last = q->v[--q->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, best = i;
		uint32_t bestv = last;
		if (l < q->n && q->less(q->ctx, q->v[l], bestv)) {
			best = l;
			bestv = q->v[l];
		}
		if (r < q->n && q->less(q->ctx, q->v[r], bestv))
			best = r;
		if (best == i)
			break;
		q->v[i] = q->v[best];
		i = best;
	}
	if (q->n)
		q->v[i] = last;
	return top;
}

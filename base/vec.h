/* vec.h - typed growable arrays on the heap.
 *
 *   KB_VEC(int) v = {0};
 *   if (KB_VEC_PUSH(&v, 42) < 0) return -ENOMEM;
 *   ... v.v[i] for i < v.n ...
 *   KB_VEC_RELEASE(&v);
 *
 * The vector owns v.v; KB_VEC_RELEASE frees it and resets the vector.
 * Growth doubles the capacity, so a push is amortised O(1).
 */
#ifndef KB_BASE_VEC_H
#define KB_BASE_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#define KB_VEC(T)                                                                                  \
	struct {                                                                                   \
		T *v;                                                                              \
		size_t n, cap;                                                                     \
	}

/* Makes room for at least `want` elements. Returns 0 or -ENOMEM. */
int kb_vec_grow_(void **v, size_t *cap, size_t elem, size_t want);

#define KB_VEC_RESERVE(vec, want)                                                                  \
	kb_vec_grow_((void **)&(vec)->v, &(vec)->cap, sizeof(*(vec)->v), (want))

/* Appends one element. Evaluates to 0 or -ENOMEM (the vector is unchanged). */
#define KB_VEC_PUSH(vec, x)                                                                        \
	(((vec)->n < (vec)->cap || KB_VEC_RESERVE((vec), (vec)->n + 1) == 0)                       \
		 ? ((vec)->v[(vec)->n++] = (x), 0)                                                 \
		 : -ENOMEM)

#define KB_VEC_RELEASE(vec)                                                                        \
	do {                                                                                       \
		free((vec)->v);                                                                    \
		(vec)->v = NULL;                                                                   \
		(vec)->n = (vec)->cap = 0;                                                         \
	} while (0)

#endif

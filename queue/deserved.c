#include "queue/deserved.h"

#include <stdbool.h>
#include <string.h>

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t ceiling_of(const kb_share_input *q, int r)
{
	int64_t h = max64(q->request.q[r], 0);
	if (q->capability_mask & (1u << r))
		h = min64(h, q->capability.q[r]);
	return h;
}

/* d_i at level L (L in milli-units per unit of weight). */
static int64_t level_share(const kb_share_input *q, int r, __int128 level)
{
	__int128 w = level * q->weight;
	int64_t h = ceiling_of(q, r);
	int64_t d = w < h ? (int64_t)w : h;
	return max64(q->guarantee.q[r], d);
}

static __int128 sum_at(const kb_share_input *in, uint32_t n, int r, __int128 level)
{
	__int128 s = 0;
	for (uint32_t i = 0; i < n; i++)
		s += level_share(&in[i], r, level);
	return s;
}

void kb_deserved_compute(const kb_res *total, const kb_share_input *in, uint32_t n, kb_res *ret)
{
	memset(ret, 0, n * sizeof(kb_res));
	for (int r = 0; r < KB_RES_MAX; r++) {
		int64_t cap = max64(total->q[r], 0);
		__int128 gsum = 0;
		for (uint32_t i = 0; i < n; i++)
			gsum += max64(in[i].guarantee.q[r], 0);
		if (gsum > cap) {
			for (uint32_t i = 0; i < n; i++)
				ret[i].q[r] = gsum ? (int64_t)((__int128)max64(in[i].guarantee.q[r], 0) * cap / gsum) : 0;
			continue;
		}
		/* Largest level L with sum_at(L) <= cap: binary search. */
		__int128 lo = 0, hi = (__int128)cap + 1;
		while (lo + 1 < hi) {
			__int128 mid = lo + (hi - lo) / 2;
			if (sum_at(in, n, r, mid) <= cap)
				lo = mid;
			else
				hi = mid;
		}
		__int128 used = 0;
		for (uint32_t i = 0; i < n; i++) {
			ret[i].q[r] = level_share(&in[i], r, lo);
			used += ret[i].q[r];
		}
		/* Leftover (less than what the next level would add): shared out as
		 * one milli-unit at a time, in input order, would share it to the
		 * queues whose share grows at the next level - below their ceiling
		 * and not held up by their guarantee - each at most up to its share
		 * at the next level. A queue at its floor or its ceiling gets none.
		 * Done in bulk (equal parts, then 1 each in input order) so the cost
		 * does not grow with the weights: O(queues^2) at worst. */
		int64_t left = (int64_t)(cap - used);
		while (left > 0) {
			int64_t growing = 0;
			for (uint32_t i = 0; i < n; i++)
				growing += ret[i].q[r] < level_share(&in[i], r, lo + 1);
			if (growing == 0)
				break;
			int64_t each = left / growing;
			for (uint32_t i = 0; i < n && left > 0; i++) {
				int64_t room = level_share(&in[i], r, lo + 1) - ret[i].q[r];
				if (room <= 0)
					continue;
				int64_t give = each ? min64(each, room) : 1;
				ret[i].q[r] += give;
				left -= give;
			}
		}
	}
}

void kb_share_input_of(const kb_queue *q, kb_share_input *ret)
{
	ret->weight = q->weight > 0 ? q->weight : 1;
	ret->capability_mask = q->capability_mask;
	ret->capability = q->capability;
	ret->guarantee = q->guarantee;
	ret->request = q->request;
	kb_res_max(&ret->request, &q->allocated);
}

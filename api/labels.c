#include "api/labels.h"

#include <string.h>

const char *kb_labels_get(const kb_labels *l, const char *key)
{
	if (!l || !key)
		return NULL;
	uint32_t lo = 0, hi = l->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->v[mid].key, key);
		if (c == 0)
			return l->v[mid].value;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

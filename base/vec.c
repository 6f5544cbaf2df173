#include "base/vec.h"

#include <stdint.h>

int kb_vec_grow_(void **v, size_t *cap, size_t elem, size_t want)
{
	if (want <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	void *p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

/* fuzz_quantity.c - kb_quantity_parse must survive any input, and whatever it
 * accepts must format and parse back to the same value in both formats. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(int64_t v)
{
	static const enum kb_quantity_format fmts[] = { KB_QFMT_DECIMAL, KB_QFMT_BINARY };
	for (size_t i = 0; i < 2; i++) {
		char buf[KB_QUANTITY_BUFSZ];
		const char *s = kb_quantity_format(v, fmts[i], buf);
		int64_t back = 0;
		if (strlen(s) >= KB_QUANTITY_BUFSZ || kb_quantity_parse(s, &back) != 0 || back != v)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int64_t v = 0;
	int r = kb_quantity_parse(s, &v);
	if (r == 0)
		check_round_trip(v);
	else if (r != -EINVAL && r != -ERANGE)
		abort();
	/* Every input is also an int64 for the formatter. */
	if (size >= 8) {
		int64_t x;
		memcpy(&x, data, sizeof(x));
		check_round_trip(x);
	}
	free(s);
	return 0;
}

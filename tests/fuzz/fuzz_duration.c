/* fuzz_duration.c - kb_duration_parse_ms against a reference written the
 * way Go's time.ParseDuration is (its loop: a number, an optional fraction,
 * then a unit that runs up to the next digit or '.'), with the documented
 * differences: no sign, a bare number of seconds only as the whole text,
 * up to (INT64_MAX / 4) milliseconds, each term's fraction rounded up to
 * the nanosecond (Go truncates) and the total rounded up to the
 * millisecond. The two must accept the same texts and agree on the value;
 * a refusal leaves *ret_ms alone. Any difference abort()s. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Go's unitMap. */
static int64_t ref_unit(const char *u, size_t n)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {
		{"ns", 1},
		{"us", 1000},
		{"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
		{"\xce\xbcs", 1000}, /* U+03BC Greek mu */
		{"ms", 1000000},
		{"s", 1000000000},
		{"m", INT64_C(60000000000)},
		{"h", INT64_C(3600000000000)},
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
			return units[i].ns;
	return 0;
}

/* The reference: 0 and *ret_ms, or -EINVAL. */
static int ref_parse(const char *s, int64_t *ret_ms)
{
	const __int128 max_ns = (__int128)(INT64_MAX / 4) * 1000000;
	const char *p = s;
	if (!*p)
		return -EINVAL;
	__int128 total = 0;
	bool first = true;
	while (*p) {
		/* leadingInt: saturates (any value over max_ns is refused below). */
		__int128 whole = 0;
		const char *q = p;
		for (; *p >= '0' && *p <= '9'; p++)
			if (whole <= max_ns)
				whole = whole * 10 + (*p - '0');
		bool pre = p != q;
		/* leadingFraction: the first 18 digits count. */
		__int128 frac = 0, scale = 1;
		bool post = false;
		if (*p == '.') {
			p++;
			q = p;
			for (int k = 0; *p >= '0' && *p <= '9'; p++, k++)
				if (k < 18) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
			post = p != q;
		}
		if (!pre && !post)
			return -EINVAL;
		/* The unit: up to the next '.' or digit. */
		q = p;
		while (*p && *p != '.' && !(*p >= '0' && *p <= '9'))
			p++;
		int64_t unit;
		if (p == q) {
			/* No unit: Go's "missing unit", except a bare number alone
			 * (seconds; Go takes only "0"). */
			if (!first || *p)
				return -EINVAL;
			unit = 1000000000;
		} else if (!(unit = ref_unit(q, (size_t)(p - q)))) {
			return -EINVAL;
		}
		if (whole > max_ns)
			return -EINVAL;
		total += whole * unit + (frac * unit + scale - 1) / scale;
		if (total > max_ns)
			return -EINVAL;
		first = false;
	}
	*ret_ms = (int64_t)((total + 999999) / 1000000);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256)
		return 0; /* longer texts only repeat terms */
	char s[257];
	memcpy(s, data, size);
	s[size] = '\0';
	int64_t got = -7, want = -7;
	int r = kb_duration_parse_ms(s, &got);
	int rr = ref_parse(s, &want);
	if (r != rr || (r == 0 && got != want) || (r < 0 && (r != -EINVAL || got != -7)))
		abort();
	if (r == 0 && got < 0)
		abort();
	return 0;
}

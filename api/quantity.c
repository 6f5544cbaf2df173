/* quantity.c - Kubernetes resource quantities as exact int64 milli-units.
 *
 * Parsing model. A quantity is sign * D * 10^X * 2^B, where D is the digit
 * string with its decimal point, X comes from a decimal suffix or exponent
 * and B from a binary suffix. We want ceil(|value| * 1000) (rounded away from
 * zero for negative values, as Kubernetes' int64 milli conversion does).
 *
 * With the decimal point moved X + 3 places to the right, the digits split
 * into an integer part I and a fraction F (0 <= F < 1), and
 *   milli = I * 2^B + ceil(F * 2^B).
 * I has at most 19 significant digits or the value cannot fit in an int64.
 * ceil(F * 2^B) is computed exactly from the last fraction digit back to the
 * first, using ceil((d * M + ceil(x)) / 10) == ceil((d * M + x) / 10) for an
 * integer d * M and a real x; every intermediate is at most 10 * 2^60. So any
 * number of digits is handled exactly in O(length) without floating point.
 *
 * Where we differ from k8s.io/apimachinery ParseQuantity (on purpose):
 *  - a number must have at least one digit: Kubernetes' scanner reads "Gi",
 *    ".", "+", "-", "m" and "e3" as zero; we return -EINVAL (the documented
 *    grammar, which Kubernetes also states, has no empty number);
 *  - values that do not fit are -ERANGE; Kubernetes caps binary-SI values at
 *    2^63-1 units silently and its MilliValue() overflows silently;
 *  - the exponent is used exactly; Kubernetes truncates it to 32 bits, so
 *    there "1e4294967296" is 1.
 * Same as Kubernetes: the exponent must be [sign]digits and fit in an int64
 * (else -EINVAL), "1E" is 10^18 (the SI suffix wins), "1e" and "1e+" are
 * invalid, "1." and ".5" are valid, no white space anywhere.
 */
#include "api/quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 kb_u128;

/* Milli-values above 2^63 - 1 (or below -2^63) do not fit. */
#define KB_QTY_MAX_POS ((kb_u128)INT64_MAX)
#define KB_QTY_MAX_NEG ((kb_u128)INT64_MAX + 1)

/* A run of digits with a decimal point somewhere: the integer digits, then
 * the fraction digits, addressed as one string. */
typedef struct kb_qty_digits {
	const char *ip, *fp;
	size_t ilen, flen;
} kb_qty_digits;

static int digit_at(const kb_qty_digits *d, size_t i)
{
	return i < d->ilen ? d->ip[i] - '0' : d->fp[i - d->ilen] - '0';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads the suffix s (all that follows the number) into a power of ten and
 * a power of two. Returns 0 or -EINVAL. */
static int parse_suffix(const char *s, int64_t *ret_exp10, int *ret_exp2)
{
	static const struct {
		const char *s;
		int exp10, exp2;
	} table[] = {
		{ "", 0, 0 },	 { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },  { "k", 3, 0 },
		{ "M", 6, 0 },	 { "G", 9, 0 },	  { "T", 12, 0 },  { "P", 15, 0 },  { "E", 18, 0 },
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 },
		{ "Ei", 0, 60 },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(s, table[i].s) == 0) {
			*ret_exp10 = table[i].exp10;
			*ret_exp2 = table[i].exp2;
			return 0;
		}
	}
	/* Decimal exponent: "e" or "E", then what Go's strconv.ParseInt(s, 10, 64)
	 * accepts: an optional sign and at least one digit, within int64. */
	if (s[0] != 'e' && s[0] != 'E')
		return -EINVAL;
	const char *p = s + 1;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return -EINVAL;
	uint64_t mag = 0;
	const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *p; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (mag > (limit - d) / 10)
			return -EINVAL;
		mag = mag * 10 + d;
	}
	*ret_exp10 = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	*ret_exp2 = 0;
	return 0;
}

int kb_quantity_parse(const char *s, int64_t *ret_milli)
{
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';

	kb_qty_digits d = { .ip = p };
	while (is_digit(*p))
		p++;
	d.ilen = (size_t)(p - d.ip);
	d.fp = p;
	if (*p == '.') {
		d.fp = ++p;
		while (is_digit(*p))
			p++;
		d.flen = (size_t)(p - d.fp);
	}
	if (d.ilen + d.flen == 0)
		return -EINVAL;

	int64_t exp10;
	int exp2;
	int r = parse_suffix(p, &exp10, &exp2);
	if (r < 0)
		return r;

	const size_t len = d.ilen + d.flen;
	const kb_u128 mult = (kb_u128)1 << exp2;
	const kb_u128 limit = neg ? KB_QTY_MAX_NEG : KB_QTY_MAX_POS;

	/* Position of the milli point within the digits; may lie before the
	 * first digit (pos < 0) or after the last (pos > len). */
	const __int128 pos = (__int128)d.ilen + exp10 + 3;
	const size_t int_end = pos <= 0 ? 0 : pos >= (__int128)len ? len : (size_t)pos;

	/* Integer part I. */
	kb_u128 ival = 0;
	int sig = 0; /* significant digits of I */
	for (size_t i = 0; i < int_end; i++) {
		int dg = digit_at(&d, i);
		if (sig == 0 && dg == 0)
			continue;
		if (++sig > 19)
			return -ERANGE;
		ival = ival * 10 + (kb_u128)dg;
	}
	if (ival != 0 && pos > (__int128)len) {
		__int128 zeros = pos - (__int128)len;
		if (sig + zeros > 19)
			return -ERANGE;
		for (__int128 z = 0; z < zeros; z++)
			ival *= 10;
	}
	ival *= mult; /* < 10^19 * 2^60, fits */
	if (ival > limit)
		return -ERANGE;

	/* ceil(F * 2^B), from the last digit back. */
	kb_u128 frac = 0;
	for (size_t i = len; i > int_end; i--)
		frac = ((kb_u128)digit_at(&d, i - 1) * mult + frac + 9) / 10;
	if (pos < 0) {
		/* Implicit zeros between the milli point and the first digit. Each
		 * one divides by 10 rounding up; within 20 steps frac is 0 or 1,
		 * which stay fixed, so the loop is bounded. */
		__int128 zeros = -pos;
		for (int z = 0; z < 24 && z < zeros; z++)
			frac = (frac + 9) / 10;
	}

	kb_u128 total = ival + frac;
	if (total > limit)
		return -ERANGE;
	if (neg)
		*ret_milli = total == KB_QTY_MAX_NEG ? INT64_MIN : -(int64_t)total;
	else
		*ret_milli = (int64_t)total;
	return 0;
}

/* The largest binary suffix that writes milli exactly with at most three
 * decimals ("4Gi", "7.5Gi", "51.2Gi"); false when none does. */
static bool format_binary(int64_t milli, char *buf)
{
	static const char *const suffix[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	__int128 v = milli < 0 ? -(__int128)milli : milli;
	for (int k = 6; k >= 1; k--) {
		__int128 unit = (__int128)1000 << (10 * k); /* milli-units in one suffix unit */
		if (v < unit)
			continue;
		__int128 scale = 1;
		for (int d = 0; d <= 3; d++, scale *= 10) {
			if ((v * scale) % unit != 0)
				continue;
			__int128 q = v * scale / unit;
			int64_t whole = (int64_t)(q / scale), frac = (int64_t)(q % scale);
			/* Cannot truncate: at most 20 digits, a sign, a point and
			 * a suffix fit KB_QUANTITY_BUFSZ. */
			if (d == 0)
				(void)snprintf(buf, KB_QUANTITY_BUFSZ, "%s%" PRId64 "%s", milli < 0 ? "-" : "", whole,
					 suffix[k - 1]);
			else
				(void)snprintf(buf, KB_QUANTITY_BUFSZ, "%s%" PRId64 ".%0*" PRId64 "%s",
					 milli < 0 ? "-" : "", whole, d, frac, suffix[k - 1]);
			return true;
		}
	}
	return false;
}

char *kb_quantity_format(int64_t milli, enum kb_quantity_format fmt, char *buf)
{
	if (fmt == KB_QFMT_BINARY && milli != 0 && format_binary(milli, buf))
		return buf;
	/* Cannot truncate: an int64 and "m" fit KB_QUANTITY_BUFSZ. */
	if (milli % 1000 != 0) {
		(void)snprintf(buf, KB_QUANTITY_BUFSZ, "%" PRId64 "m", milli);
		return buf;
	}
	(void)snprintf(buf, KB_QUANTITY_BUFSZ, "%" PRId64, milli / 1000);
	return buf;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

enum kb_quantity_format kb_quantity_format_for(const char *resource_name)
{
	if (!resource_name)
		return KB_QFMT_DECIMAL;
	if (strcmp(resource_name, "memory") == 0 ||
	    strcmp(resource_name, "ephemeral-storage") == 0 ||
	    strcmp(resource_name, "storage") == 0 ||
	    strncmp(resource_name, "hugepages-", strlen("hugepages-")) == 0 ||
	    has_suffix(resource_name, "-mem") || has_suffix(resource_name, "memory"))
		return KB_QFMT_BINARY;
	return KB_QFMT_DECIMAL;
}

/* Nanoseconds per unit of a Go duration, or 0 when s does not start with
 * one; *ret_len is the unit's length. */
static int64_t duration_unit_ns(const char *s, size_t *ret_len)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {
		{"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000}, {"ms", 1000000},
		{"s", 1000000000}, {"m", INT64_C(60000000000)}, {"h", INT64_C(3600000000000)},
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);
		if (strncmp(s, units[i].name, n) == 0) {
			*ret_len = n;
			return units[i].ns;
		}
	}
	return 0;
}

int kb_duration_parse_ms(const char *s, int64_t *ret_ms)
{
	/* Go's time.ParseDuration forms ("1m30s", "250ms", "1.5h", "100us"),
	 * non-negative, plus a bare number of seconds ("1.5"). */
	const __int128 max_ns = (__int128)(INT64_MAX / 4) * 1000000;
	__int128 total = 0;
	const char *p = s;
	if (!*p)
		return -EINVAL;
	for (bool first = true; *p; first = false) {
		__int128 whole = 0, frac = 0, scale = 1;
		bool digits = false;
		for (; *p >= '0' && *p <= '9'; p++, digits = true) {
			whole = whole * 10 + (*p - '0');
			if (whole > max_ns)
				return -EINVAL;
		}
		if (*p == '.')
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
				if (scale < INT64_C(1000000000000000000)) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
		if (!digits)
			return -EINVAL;
		size_t ulen = 0;
		int64_t unit = duration_unit_ns(p, &ulen);
		if (!unit) {
			/* A bare number: seconds, and only as the whole string
			 * (not after a term that came to zero: "0s5"). */
			if (*p || !first)
				return -EINVAL;
			unit = 1000000000;
		}
		p += ulen;
		total += whole * unit + (frac * unit + scale - 1) / scale;
		if (total > max_ns)
			return -EINVAL;
	}
	*ret_ms = (int64_t)((total + 999999) / 1000000);
	return 0;
}

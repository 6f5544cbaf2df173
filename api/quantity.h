/* quantity.h - Kubernetes resource quantities as exact integers.
 *
 * A quantity ("500m", "0.5", "1e3", "4Gi", "1G", "7.5Gi", "100Ki", "+1.5E-3")
 * is held as a count of milli-units in an int64_t: 1 cpu = 1000, 4Gi of
 * memory = 4 * 2^30 * 1000. Parsing is exact (integer arithmetic only; no
 * floating point anywhere); a value with a finer part than 1 milli-unit is
 * rounded UP, as Kubernetes' Quantity.MilliValue() does ("1n" -> 1, "0.1m" -> 1).
 *
 * Grammar (k8s.io/apimachinery/pkg/api/resource):
 *   quantity  = [sign] number [suffix]
 *   number    = digits | digits "." [digits] | "." digits
 *   suffix    = binarySI | decimalSI | decimalExponent
 *   binarySI  = Ki | Mi | Gi | Ti | Pi | Ei
 *   decimalSI = n | u | m | "" | k | M | G | T | P | E
 *   decimalExponent = ("e" | "E") [sign] digits
 * Leading/trailing white space is not allowed. Negative quantities parse
 * (callers that forbid them check the sign).
 *
 * The largest representable value is INT64_MAX milli-units (about 9.2e15
 * units: "8388Ti" of memory parses, "8389Ti" does not); larger values
 * are -ERANGE.
 */
#ifndef KB_API_QUANTITY_H
#define KB_API_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses the NUL-terminated string s. Returns 0 and writes *ret_milli, or
 * -EINVAL (syntax, empty string) or -ERANGE (too large); *ret_milli is not
 * written on failure. Cost: O(strlen(s)). */
int kb_quantity_parse(const char *s, int64_t *ret_milli);

/* Formats: enough for any int64 milli value with a suffix. */
#define KB_QUANTITY_BUFSZ 32

enum kb_quantity_format {
	KB_QFMT_DECIMAL, /* "500m", "4", "1500m", "2k" is NOT used: whole numbers print as digits */
	KB_QFMT_BINARY,  /* memory-like: the largest of Ki..Ei that writes the value exactly
			    with at most three decimals, e.g. "4Gi", "7.5Gi", "51.2Gi";
			    otherwise digits, or "Nm" for a fractional value */
};

/* Writes the canonical text of milli into buf (KB_QUANTITY_BUFSZ bytes) and
 * returns buf. Formatting is exact: kb_quantity_parse(format(x)) == x for
 * every x. DECIMAL prints whole values as plain digits ("4", "64",
 * "-3") and others as milli ("500m", "1500m"). */
char *kb_quantity_format(int64_t milli, enum kb_quantity_format fmt, char *buf);

/* The format Kubernetes users expect for a resource name: BINARY for
 * "memory", "ephemeral-storage", "storage", "hugepages-*" and names ending
 * in "-mem" or "memory" (e.g. "aliyun.com/gpu-mem"), DECIMAL otherwise. */
enum kb_quantity_format kb_quantity_format_for(const char *resource_name);


/* Parses a duration as Go's time.ParseDuration writes them, numbers with
 * units ns, us (or µs), ms, s, m, h in sequence ("1m30s", "250ms", "1.5h",
 * "100us"), or a bare number of seconds ("1.5"), into milliseconds (rounded
 * up to whole milliseconds). Returns 0, or -EINVAL for anything else, a
 * sign, a unit missing between numbers and more than about 73,000 years
 * included. *ret_ms is written only on success. O(length). */
int kb_duration_parse_ms(const char *s, int64_t *ret_ms);

#endif

/* test_quantity.c - Kubernetes quantities parse exactly and format canonically. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/quantity.h"

#define KI (INT64_C(1) << 10)
#define MI (INT64_C(1) << 20)
#define GI (INT64_C(1) << 30)
#define TI (INT64_C(1) << 40)
#define PI (INT64_C(1) << 50)

static int64_t parse_ok(const char *s)
{
	int64_t v = INT64_C(0x5a5a5a5a);
	int r = kb_quantity_parse(s, &v);
	if (r != 0)
		fail_msg("\"%s\": expected success, got %d", s, r);
	return v;
}

static void expect_parse(const char *s, int64_t want)
{
	int64_t got = parse_ok(s);
	if (got != want)
		fail_msg("\"%s\": expected %lld, got %lld", s, (long long)want, (long long)got);
}

static void expect_error(const char *s, int code)
{
	int64_t v = INT64_C(0x5a5a5a5a);
	int r = kb_quantity_parse(s, &v);
	if (r != code)
		fail_msg("\"%s\": expected %d, got %d (value %lld)", s, code, r, (long long)v);
	/* Never written on failure. */
	assert_int_equal(v, INT64_C(0x5a5a5a5a));
}

static void quantity_parses_decimal_si(void **state)
{
	expect_parse("0", 0);
	expect_parse("500m", 500);
	expect_parse("0.5", 500);
	expect_parse("1", 1000);
	expect_parse("64", 64000);
	expect_parse("1k", 1000000);
	expect_parse("1M", INT64_C(1000000000));
	expect_parse("1G", INT64_C(1000000000000));
	expect_parse("2T", INT64_C(2000000000000000));
	expect_parse("3P", INT64_C(3000000000000000000));
	expect_parse("1u", 1);
	expect_parse("1000u", 1);
	expect_parse("1001u", 2);
	expect_parse("100.035k", 100035000);
	expect_parse("10.035M", INT64_C(10035000000));
}

static void quantity_parses_binary_si(void **state)
{
	expect_parse("100Ki", 102400000);
	expect_parse("1Mi", MI * 1000);
	expect_parse("4Gi", 4 * GI * 1000);
	expect_parse("7.5Gi", 7 * GI * 1000 + GI / 2 * 1000);
	expect_parse("1Ti", TI * 1000);
	expect_parse("1Pi", PI * 1000);
	expect_parse("0.5Mi", MI / 2 * 1000);
	expect_parse("100.035Ki", 102435840); /* 102435.84 units */
	expect_parse("0.001Ki", 1024);
}

static void quantity_parses_decimal_exponents(void **state)
{
	expect_parse("1e3", 1000000);
	expect_parse("1E3", 1000000);
	expect_parse("1e+3", 1000000);
	expect_parse("1E-3", 1);
	expect_parse("1.5e-3", 2); /* 1.5 milli rounds up */
	expect_parse("+1.5E-3", 2);
	expect_parse("0.5e-1", 50);
	expect_parse("1.2e3", 1200000);
	expect_parse("1e0", 1000);
	expect_parse("1e-0003", 1);
	expect_parse("1e15", INT64_C(1000000000000000000));
}

static void quantity_accepts_kubernetes_number_spellings(void **state)
{
	expect_parse("1.", 1000);
	expect_parse("1.G", INT64_C(1000000000000));
	expect_parse(".001", 1);
	expect_parse(".5", 500);
	expect_parse("000012", 12000);
	expect_parse("0.50000", 500);
	expect_parse("+5", 5000);
	expect_parse("-0", 0);
	expect_parse("0Gi", 0);
	expect_parse("0.000", 0);
}

static void quantity_rounds_sub_milli_up(void **state)
{
	expect_parse("1n", 1);
	expect_parse("0.1m", 1);
	expect_parse("1.0001m", 2);
	expect_parse("999999n", 1);
	expect_parse("1000001n", 2);
	expect_parse("999999999n", 1000);
	expect_parse("0.0000000001", 1);
	expect_parse("1e-300", 1);
	expect_parse("1e-9223372036854775808", 1);
	expect_parse("0e-9223372036854775808", 0);
	/* Fractions of binary suffixes: 0.0001Ki is 102.4 milli. */
	expect_parse("0.0001Ki", 103);
	expect_parse("0.000000000001Ki", 1);
	/* A long tail of digits still counts. */
	expect_parse("1.0000000000000000000000000000000000000000001", 1001);
	expect_parse("1.0000000000000000000000000000000000000000000", 1000);
}

static void quantity_rounds_negative_values_away_from_zero(void **state)
{
	expect_parse("-500m", -500);
	expect_parse("-1", -1000);
	expect_parse("-4Gi", -4 * GI * 1000);
	expect_parse("-1n", -1);
	expect_parse("-1.5m", -2);
	expect_parse("-1e3", -1000000);
}

static void quantity_accepts_the_int64_range_and_no_more(void **state)
{
	expect_parse("9223372036854775807m", INT64_MAX);
	expect_parse("-9223372036854775808m", INT64_MIN);
	expect_parse("9223372036854775.807", INT64_MAX);
	expect_parse("9223372036854775807000u", INT64_MAX);
	expect_error("9223372036854775808m", -ERANGE);
	expect_error("-9223372036854775809m", -ERANGE);
	expect_error("9223372036854775.8071", -ERANGE); /* rounds up past the max */
	expect_error("9223372036854776", -ERANGE);
	expect_error("10P", -ERANGE);
	expect_error("1E", -ERANGE);
	expect_error("8Ei", -ERANGE);
	expect_error("9Pi", -ERANGE);
	expect_error("1e19", -ERANGE);
	expect_error("1e9223372036854775807", -ERANGE);
	expect_error("100000000000000000000000000000000000000000000", -ERANGE);
	/* The largest memory is about 8 PiB (2^63 milli-bytes). */
	expect_parse("8388Ti", 8388 * TI * 1000);
	expect_error("8389Ti", -ERANGE);
}

static void quantity_rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"", "1x", "Gi", "1.2.3", " 1", "1 ", "--1", "1Gii", "1e", "1e+", "1e-", "1E+",
		"1ee3", "1e3Gi", "1Gie", "1K", "1ki", "1mi", "0.1am", "1i", ".5i", "1+1.0M",
		".", "+", "-", "-.", "m", "e3", "k", "1,5", "0x10", "1e1.5", "1e 3", "1\n",
		"\t1", "1Mi ", "1e99999999999999999999", "1e9223372036854775808", "+-1", "1m1",
		"1\xc2\xb5", "NaN", "inf",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(bad[i], -EINVAL);
}

static void quantity_treats_1E_as_exa_and_1e_as_invalid(void **state)
{
	/* Kubernetes looks the suffix up as an SI suffix before trying it as an
	 * exponent: "E" alone is exa (10^18), "e" alone is nothing. */
	expect_parse("0.001E", INT64_C(1000000000000000000));
	expect_parse("0E", 0);
	expect_error("1E", -ERANGE);
	expect_error("1e", -EINVAL);
	expect_error("1Ei", -ERANGE);
	expect_parse("0.001Ei", INT64_C(1) << 60);
}

static void format_decimal(int64_t milli, const char *want)
{
	char buf[KB_QUANTITY_BUFSZ];
	assert_string_equal(kb_quantity_format(milli, KB_QFMT_DECIMAL, buf), want);
}

static void format_binary(int64_t milli, const char *want)
{
	char buf[KB_QUANTITY_BUFSZ];
	assert_string_equal(kb_quantity_format(milli, KB_QFMT_BINARY, buf), want);
}

static void quantity_formats_decimal_as_digits_or_milli(void **state)
{
	format_decimal(0, "0");
	format_decimal(500, "500m");
	format_decimal(1500, "1500m");
	format_decimal(4000, "4");
	format_decimal(64000, "64");
	format_decimal(-3000, "-3");
	format_decimal(-1, "-1m");
	format_decimal(2000000, "2000");
	format_decimal(INT64_MAX, "9223372036854775807m");
	format_decimal(INT64_MIN, "-9223372036854775808m");
}

static void quantity_formats_binary_with_the_largest_exact_suffix(void **state)
{
	format_binary(0, "0");
	format_binary(4 * GI * 1000, "4Gi");
	format_binary(7680 * MI * 1000, "7.5Gi");
	format_binary(INT64_C(54975581388800), "51.2Gi"); /* a deserved share: 51.2Gi exactly */
	format_binary(1536 * MI * 1000 + 512 * 1000, "1572864.5Ki"); /* Gi, Mi need more decimals */
	format_binary(1024000, "1Ki");
	format_binary(1536000, "1.5Ki");
	format_binary(5000, "5");
	format_binary(500, "500m");
	format_binary(-2 * MI * 1000, "-2Mi");
	format_binary(8191 * TI * 1000, "8191Ti");
	format_binary(8 * PI * 1000, "8Pi");
	format_binary(INT64_C(1) << 60, "1.024Pi");
	format_binary((INT64_C(1) << 60) / 1000 * 1000, "1152921504606846");
}

static void quantity_chooses_binary_format_for_memory_like_names(void **state)
{
	assert_int_equal(kb_quantity_format_for("memory"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("ephemeral-storage"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("storage"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("hugepages-2Mi"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("aliyun.com/gpu-mem"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("example.com/gpumemory"), KB_QFMT_BINARY);
	assert_int_equal(kb_quantity_format_for("cpu"), KB_QFMT_DECIMAL);
	assert_int_equal(kb_quantity_format_for("nvidia.com/gpu"), KB_QFMT_DECIMAL);
	assert_int_equal(kb_quantity_format_for("pods"), KB_QFMT_DECIMAL);
	assert_int_equal(kb_quantity_format_for("memory-bandwidth"), KB_QFMT_DECIMAL);
	assert_int_equal(kb_quantity_format_for(""), KB_QFMT_DECIMAL);
	assert_int_equal(kb_quantity_format_for(NULL), KB_QFMT_DECIMAL);
}

/* splitmix64: a fixed-seed generator, so failures reproduce. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void expect_round_trip(int64_t v)
{
	static const enum kb_quantity_format fmts[] = { KB_QFMT_DECIMAL, KB_QFMT_BINARY };
	for (size_t i = 0; i < 2; i++) {
		char buf[KB_QUANTITY_BUFSZ];
		const char *s = kb_quantity_format(v, fmts[i], buf);
		assert_true(strlen(s) < KB_QUANTITY_BUFSZ);
		int64_t back = 0;
		int r = kb_quantity_parse(s, &back);
		if (r != 0 || back != v)
			fail_msg("%lld -> \"%s\" -> %d, %lld", (long long)v, s, r, (long long)back);
	}
}

static void quantity_format_then_parse_round_trips(void **state)
{
	static const int64_t edges[] = { 0, 1, -1, 999, 1000, 1001, -1000, INT64_MAX, INT64_MIN,
					 INT64_MAX - 999, INT64_MIN + 1000, INT64_C(1) << 62 };
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		expect_round_trip(edges[i]);
	for (int k = 0; k <= 53; k++) {
		int64_t units = INT64_C(1) << k;
		expect_round_trip(units * 1000);
		expect_round_trip(-units * 1000);
		expect_round_trip(units * 1000 + 1);
		if (k < 52)
			expect_round_trip(3 * units * 1000 / 2);
	}
	uint64_t seed = 42;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = next_random(&seed);
		int64_t v;
		switch (i % 4) {
		case 0: /* anything */
			v = (int64_t)r;
			break;
		case 1: /* whole units */
			v = (int64_t)(r >> 12) / 1000 * 1000;
			break;
		case 2: /* binary multiples */
			v = (int64_t)((r >> 40) << (r % 30)) * 1000; /* < 2^53 units */
			break;
		default: /* small */
			v = (int64_t)(r % 2000001) - 1000000;
			break;
		}
		expect_round_trip(v);
	}
}

static void duration_accepts_go_forms_and_bare_seconds(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} ok[] = {
		{"1.5", 1500}, {"0", 0},        {"2s", 2000},      {"500ms", 500},   {"1m30s", 90000},
		{"1h", 3600000}, {"1.5h", 5400000}, {"250ms", 250}, {"100us", 1},     {"100\xc2\xb5s", 1},
		{"1500us", 2},  {"999999ns", 1}, {"1h2m3.5s", 3723500}, {"10m", 600000}, {"0.001s", 1},
		{"1m0.5s", 60500},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ms = -1;
		assert_int_equal(kb_duration_parse_ms(ok[i].s, &ms), 0);
		if (ms != ok[i].ms)
			fail_msg("%s: %lld ms, want %lld", ok[i].s, (long long)ms, (long long)ok[i].ms);
	}
	static const char *bad[] = {"",     "-1s",  "+1s", "1m30", "s",  "1x", "1 s", "1.5.2s",
				    "ms1",  "1e3s", "1.s5", ".",   "1d", "99999999999999999999h",
				    "0s5",  "0.s6", "0h0m1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms = 7;
		if (kb_duration_parse_ms(bad[i], &ms) != -EINVAL)
			fail_msg("\"%s\" accepted as %lld ms", bad[i], (long long)ms);
		assert_int_equal(ms, 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantity_parses_decimal_si),
		cmocka_unit_test(quantity_parses_binary_si),
		cmocka_unit_test(quantity_parses_decimal_exponents),
		cmocka_unit_test(quantity_accepts_kubernetes_number_spellings),
		cmocka_unit_test(quantity_rounds_sub_milli_up),
		cmocka_unit_test(quantity_rounds_negative_values_away_from_zero),
		cmocka_unit_test(quantity_accepts_the_int64_range_and_no_more),
		cmocka_unit_test(quantity_rejects_garbage),
		cmocka_unit_test(quantity_treats_1E_as_exa_and_1e_as_invalid),
		cmocka_unit_test(quantity_formats_decimal_as_digits_or_milli),
		cmocka_unit_test(quantity_formats_binary_with_the_largest_exact_suffix),
		cmocka_unit_test(quantity_chooses_binary_format_for_memory_like_names),
		cmocka_unit_test(quantity_format_then_parse_round_trips),
		cmocka_unit_test(duration_accepts_go_forms_and_bare_seconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_estimates_due.c - when the daemon writes a PodGroup's estimated
 * start (daemon/estimates.h, kb_estimates_write_due): at once when the
 * group has none; never the same value again; otherwise at most once a
 * minute per group, and only when the estimate moved by more than the
 * tolerance (the larger of 15 s and a tenth of the wait) or turned known or
 * unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/estimates.h"

/* 2026-12-07T06:00:00Z and times around it, in ms. */
#define T0 1796623200000LL
#define MIN 60000LL

static void first_write_is_at_once(void **state)
{
	assert_true(kb_estimates_write_due(NULL, "2026-12-07T07:00:00Z", T0 + 60 * MIN, -1, T0));
	assert_true(kb_estimates_write_due(NULL, "unknown", -1, T0 - 1000, T0));
}

static void the_same_value_is_never_written_again(void **state)
{
	assert_false(kb_estimates_write_due("2026-12-07T07:00:00Z", "2026-12-07T07:00:00Z",
					    T0 + 60 * MIN, -1, T0));
	assert_false(kb_estimates_write_due("unknown", "unknown", -1, -1, T0));
}

static void at_most_once_a_minute(void **state)
{
	/* An hour away, moved by 10 minutes (over a tenth of the wait, 6 min). */
	const char *have = "2026-12-07T07:00:00Z", *value = "2026-12-07T07:10:00Z";
	int64_t want = T0 + 70 * MIN;
	assert_true(kb_estimates_write_due(have, value, want, -1, T0));
	assert_false(kb_estimates_write_due(have, value, want, T0 - 59999, T0));
	assert_true(kb_estimates_write_due(have, value, want, T0 - MIN, T0));
	/* Turning unknown, or known, is a move, still once a minute. */
	assert_false(kb_estimates_write_due(have, "unknown", -1, T0 - 1000, T0));
	assert_true(kb_estimates_write_due(have, "unknown", -1, T0 - MIN, T0));
	assert_true(kb_estimates_write_due("unknown", have, T0 + 60 * MIN, -1, T0));
}

static void small_moves_are_not_written(void **state)
{
	/* An hour away: the tolerance is a tenth of the wait, 6 minutes. */
	const char *have = "2026-12-07T07:00:00Z";
	assert_false(kb_estimates_write_due(have, "2026-12-07T07:05:00Z", T0 + 65 * MIN, -1, T0));
	assert_true(kb_estimates_write_due(have, "2026-12-07T07:07:00Z", T0 + 67 * MIN, -1, T0));
	/* A minute away: the tolerance is 15 s, not a tenth (6 s). */
	have = "2026-12-07T06:01:00Z";
	assert_false(kb_estimates_write_due(have, "2026-12-07T06:01:10Z", T0 + MIN + 10000, -1, T0));
	assert_true(kb_estimates_write_due(have, "2026-12-07T06:01:20Z", T0 + MIN + 20000, -1, T0));
	/* An annotation that does not parse (someone else's) is rewritten. */
	assert_true(kb_estimates_write_due("soon", "2026-12-07T06:01:20Z", T0 + MIN + 20000, -1, T0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_write_is_at_once),
		cmocka_unit_test(the_same_value_is_never_written_again),
		cmocka_unit_test(at_most_once_a_minute),
		cmocka_unit_test(small_moves_are_not_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

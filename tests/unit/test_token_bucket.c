/* test_token_bucket.c - kube/token_bucket: the burst, the refill at qps,
 * the cap at burst, the wait computed for the next token. Links no libcurl
 * or libev (kb_kube_pure_dep). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/token_bucket.h"

static void burst_then_one_every_period(void **state)
{
	kb_token_bucket b;
	kb_token_bucket_init(&b, 10, 2, 100000);
	assert_int_equal(kb_token_bucket_take(&b, 100000), 0);
	assert_int_equal(kb_token_bucket_take(&b, 100000), 0);
	/* Burst spent: one token every 100 ms. */
	assert_int_equal(kb_token_bucket_take(&b, 100000), 100);
	assert_int_equal(kb_token_bucket_take(&b, 100050), 50); /* half refilled */
	assert_int_equal(kb_token_bucket_take(&b, 100100), 0);  /* on time */
	assert_int_equal(kb_token_bucket_take(&b, 100100), 100);
}

static void refill_is_capped_at_burst(void **state)
{
	kb_token_bucket b;
	kb_token_bucket_init(&b, 10, 3, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(kb_token_bucket_take(&b, 0), 0);
	/* A long idle time refills up to the burst only. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(kb_token_bucket_take(&b, 1000000), 0);
	assert_true(kb_token_bucket_take(&b, 1000000) > 0);
}

static void the_wait_is_rounded_up(void **state)
{
	kb_token_bucket b;
	kb_token_bucket_init(&b, 3, 1, 0); /* one token every 333.3 ms */
	assert_int_equal(kb_token_bucket_take(&b, 0), 0);
	int64_t w = kb_token_bucket_take(&b, 0);
	assert_int_equal(w, 334);
	assert_true(kb_token_bucket_take(&b, 333) > 0); /* not quite */
	assert_int_equal(kb_token_bucket_take(&b, w), 0);

	/* More than one token a millisecond: the wait is at least 1 ms. */
	kb_token_bucket_init(&b, 5000, 1, 0);
	assert_int_equal(kb_token_bucket_take(&b, 0), 0);
	assert_int_equal(kb_token_bucket_take(&b, 0), 1);
	/* ... and 1 ms brings several: one is taken, the rest wait. */
	assert_int_equal(kb_token_bucket_take(&b, 1), 0);
}

static void time_going_back_adds_nothing(void **state)
{
	kb_token_bucket b;
	kb_token_bucket_init(&b, 1, 1, 5000);
	assert_int_equal(kb_token_bucket_take(&b, 5000), 0);
	assert_int_equal(kb_token_bucket_take(&b, 4000), 1000);
	assert_int_equal(kb_token_bucket_take(&b, 5500), 500);
	assert_int_equal(kb_token_bucket_take(&b, 6000), 0);
}

static void bad_settings_are_taken_as_one(void **state)
{
	kb_token_bucket b;
	kb_token_bucket_init(&b, 1, 0, 0); /* burst < 1 is 1 */
	assert_int_equal(kb_token_bucket_take(&b, 0), 0);
	assert_int_equal(kb_token_bucket_take(&b, 0), 1000);
	kb_token_bucket_init(&b, 0, 1, 0); /* qps <= 0 is 1 a second */
	assert_int_equal(kb_token_bucket_take(&b, 0), 0);
	assert_int_equal(kb_token_bucket_take(&b, 0), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(burst_then_one_every_period),
		cmocka_unit_test(refill_is_capped_at_burst),
		cmocka_unit_test(the_wait_is_rounded_up),
		cmocka_unit_test(time_going_back_adds_nothing),
		cmocka_unit_test(bad_settings_are_taken_as_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

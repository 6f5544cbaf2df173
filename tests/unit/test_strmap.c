#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "base/strmap.h"

static void strmap_finds_what_was_put(void **state)
{
	kb_strmap m;
	kb_strmap_init(&m);
	assert_int_equal(kb_strmap_put(&m, "a", 1), 0);
	assert_int_equal(kb_strmap_put(&m, "b", 2), 0);
	int64_t v = 0;
	assert_true(kb_strmap_get(&m, "a", &v));
	assert_int_equal(v, 1);
	assert_true(kb_strmap_get(&m, "b", &v));
	assert_int_equal(v, 2);
	assert_false(kb_strmap_get(&m, "c", &v));
	kb_strmap_release(&m);
}

static void strmap_put_replaces_value(void **state)
{
	kb_strmap m;
	kb_strmap_init(&m);
	kb_strmap_put(&m, "k", 1);
	kb_strmap_put(&m, "k", 7);
	int64_t v;
	assert_true(kb_strmap_get(&m, "k", &v));
	assert_int_equal(v, 7);
	assert_int_equal(m.n, 1);
	kb_strmap_release(&m);
}

static void strmap_survives_growth_and_deletes(void **state)
{
	enum { N = 5000 };
	static char keys[N][16];
	kb_strmap m;
	kb_strmap_init(&m);
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key-%d", i);
		assert_int_equal(kb_strmap_put(&m, keys[i], i), 0);
	}
	for (int i = 0; i < N; i += 2)
		assert_true(kb_strmap_del(&m, keys[i]));
	assert_false(kb_strmap_del(&m, keys[0]));
	for (int i = 0; i < N; i++) {
		int64_t v;
		bool found = kb_strmap_get(&m, keys[i], &v);
		assert_int_equal(found, i % 2 == 1);
		if (found)
			assert_int_equal(v, i);
	}
	/* Re-inserting over tombstones works. */
	for (int i = 0; i < N; i += 2)
		assert_int_equal(kb_strmap_put(&m, keys[i], -i), 0);
	assert_int_equal(m.n, N);
	kb_strmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strmap_finds_what_was_put),
		cmocka_unit_test(strmap_put_replaces_value),
		cmocka_unit_test(strmap_survives_growth_and_deletes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

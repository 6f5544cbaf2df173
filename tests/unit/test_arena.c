/* test_arena.c - arenas: alignment, reset, and copying out with relocation. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"

static bool aligned16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

static void blocks_are_aligned_and_strings_are_packed(void **state)
{
	kb_arena a;
	kb_arena_init(&a);
	char *s1 = kb_arena_strdup(&a, "ab");
	char *s2 = kb_arena_strdup(&a, "cde");
	assert_ptr_equal(s2, s1 + 3); /* no padding between strings */
	int64_t *v = kb_arena_calloc(&a, 4, sizeof(*v));
	assert_true(aligned16(v));
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], 0);
	char *s3 = kb_arena_printf(&a, "%s-%d", "x", 7);
	assert_string_equal(s3, "x-7");
	assert_true(aligned16(kb_arena_alloc(&a, 1)));
	assert_string_equal(s1, "ab");
	assert_string_equal(s2, "cde");
	assert_null(kb_arena_strdup(&a, NULL));
	kb_arena_release(&a);
}

static void large_blocks_are_zeroed_and_keep_the_head_usable(void **state)
{
	kb_arena a;
	kb_arena_init(&a);
	char *small = kb_arena_strdup(&a, "head");
	size_t big_n = (size_t)5 << 20; /* a huge-page candidate */
	unsigned char *big = kb_arena_alloc(&a, big_n);
	assert_non_null(big);
	assert_true(aligned16(big));
	for (size_t i = 0; i < big_n; i += 4096)
		assert_int_equal(big[i], 0);
	assert_int_equal(big[big_n - 1], 0);
	memset(big, 0xff, big_n);
	char *next = kb_arena_strdup(&a, "tail");
	assert_ptr_equal(next, small + 5); /* still in the first chunk */
	kb_arena_release(&a);
}

static void reset_keeps_one_chunk_for_the_next_round(void **state)
{
	kb_arena a;
	kb_arena_init(&a);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 200; i++) {
			char *s = kb_arena_printf(&a, "round %d string %d", round, i);
			assert_non_null(s);
		}
		int *v = kb_arena_calloc(&a, 100, sizeof(int));
		assert_non_null(v);
		assert_int_equal(v[99], 0); /* zeroed again after a reset */
		memset(v, 0xff, 100 * sizeof(int));
		kb_arena_reset(&a);
		assert_int_equal(a.allocated, 0);
		assert_int_equal(kb_arena_copy_size(&a), 0);
	}
	kb_arena_reset(&a);
	kb_arena_release(&a);
	kb_arena_reset(&a); /* an empty arena: nothing to do */
}

typedef struct rec {
	const char *name;
	const char *alias; /* the same string as name */
	const char *literal;
	const int64_t *nums;
	const char *const *strs;
} rec;

static void copy_out_and_relocate_move_every_pointer(void **state)
{
	kb_arena a;
	kb_arena_init(&a);
	rec r = {0};
	r.name = kb_arena_strdup(&a, "pod-a");
	r.alias = r.name;
	r.literal = "static";
	int64_t *nums = kb_arena_calloc(&a, 3, sizeof(*nums));
	nums[0] = 1, nums[1] = 2, nums[2] = 3;
	r.nums = nums;
	/* Enough strings to need several chunks, and one large block. */
	const char **strs = kb_arena_calloc(&a, 500, sizeof(*strs));
	for (int i = 0; i < 500; i++)
		strs[i] = kb_arena_printf(&a, "value-%03d", i);
	r.strs = strs;
	void *big = kb_arena_alloc(&a, 100000);
	memset(big, 7, 100000);

	size_t n = kb_arena_copy_size(&a);
	assert_true(n >= a.allocated);
	unsigned char *dst = malloc(n);
	assert_non_null(dst);
	kb_arena_copy_out(&a, dst);
	rec c = r;
	c.name = kb_arena_relocate(&a, c.name, dst);
	c.alias = kb_arena_relocate(&a, c.alias, dst);
	c.literal = kb_arena_relocate(&a, c.literal, dst);
	c.nums = kb_arena_relocate(&a, c.nums, dst);
	c.strs = kb_arena_relocate(&a, c.strs, dst);
	const char **cs = (const char **)c.strs;
	for (int i = 0; i < 500; i++)
		cs[i] = kb_arena_relocate(&a, cs[i], dst);
	unsigned char *cbig = kb_arena_relocate(&a, big, dst);
	assert_null(kb_arena_relocate(&a, NULL, dst));
	/* Rebasing twice changes nothing. */
	assert_ptr_equal(kb_arena_relocate(&a, c.name, dst), c.name);
	kb_arena_release(&a); /* the copy stands alone */

	assert_true(c.name >= (const char *)dst && c.name < (const char *)dst + n);
	assert_string_equal(c.name, "pod-a");
	assert_ptr_equal(c.alias, c.name);
	assert_string_equal(c.literal, "static");
	assert_true(aligned16(c.nums));
	assert_int_equal(c.nums[2], 3);
	for (int i = 0; i < 500; i++) {
		char want[16];
		snprintf(want, sizeof(want), "value-%03d", i);
		assert_string_equal(c.strs[i], want);
		assert_true(c.strs[i] >= (const char *)dst && c.strs[i] < (const char *)dst + n);
	}
	assert_true(aligned16(cbig));
	assert_int_equal(cbig[0], 7);
	assert_int_equal(cbig[99999], 7);
	free(dst);
}

/* A released large block is parked and the next one of about its size
 * reuses it, cleared; one that nothing parked fits gets fresh memory. */
static void released_large_blocks_are_reused_cleared(void **state)
{
	size_t n = (size_t)6 << 20;
	kb_arena a, b;
	kb_arena_init(&a);
	unsigned char *p = kb_arena_alloc(&a, n);
	assert_non_null(p);
	memset(p, 0xab, n);
	kb_arena_release(&a);

	kb_arena_init(&b);
	unsigned char *q = kb_arena_alloc(&b, n - 1000); /* a little smaller: fits */
	assert_ptr_equal(q, p);
	for (size_t i = 0; i < n - 1000; i += 512)
		assert_int_equal(q[i], 0);
	assert_int_equal(q[n - 1001], 0);
	char *s = kb_arena_strdup(&b, "after"); /* the big chunk is the head: room after */
	assert_string_equal(s, "after");
	kb_arena_release(&b);

	kb_arena_init(&a);
	unsigned char *big = kb_arena_alloc(&a, n * 2); /* too large for what is parked */
	assert_non_null(big);
	assert_int_equal(big[n], 0);
	memset(big, 1, n * 2);
	kb_arena_release(&a);
	kb_arena_init(&b);
	unsigned char *small = kb_arena_alloc(&b, n / 2); /* too small for it: fresh */
	assert_non_null(small);
	assert_int_equal(small[n / 2 - 1], 0);
	kb_arena_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blocks_are_aligned_and_strings_are_packed),
		cmocka_unit_test(large_blocks_are_zeroed_and_keep_the_head_usable),
		cmocka_unit_test(reset_keeps_one_chunk_for_the_next_round),
		cmocka_unit_test(copy_out_and_relocate_move_every_pointer),
		cmocka_unit_test(released_large_blocks_are_reused_cleared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

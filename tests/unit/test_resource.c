#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "api/resource.h"

static void resnames_fixed_then_interned_in_order(void **state)
{
	kb_resnames t;
	kb_resnames_init(&t);
	assert_int_equal(kb_resnames_find(&t, "cpu"), KB_RES_CPU);
	assert_int_equal(kb_resnames_find(&t, "memory"), KB_RES_MEMORY);
	assert_int_equal(kb_resnames_find(&t, "pods"), KB_RES_PODS);
	assert_int_equal(kb_resnames_intern(&t, "nvidia.com/gpu"), 3);
	assert_int_equal(kb_resnames_intern(&t, "example.com/fpga"), 4);
	assert_int_equal(kb_resnames_intern(&t, "nvidia.com/gpu"), 3);
	assert_int_equal(kb_resnames_find(&t, "unknown"), -1);
}

static void resnames_refuses_a_seventeenth_name(void **state)
{
	kb_resnames t;
	kb_resnames_init(&t);
	char name[32];
	for (int i = KB_RES_NFIXED; i < KB_RES_MAX; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		assert_int_equal(kb_resnames_intern(&t, name), i);
	}
	assert_int_equal(kb_resnames_intern(&t, "example.com/one-too-many"), -ENOSPC);
	/* What the refusal names: the names holding the slots, in order. */
	char held[512];
	kb_resnames_format_asked(&t, held, sizeof(held));
	assert_string_equal(held, "example.com/r3, example.com/r4, example.com/r5, example.com/r6, "
				  "example.com/r7, example.com/r8, example.com/r9, example.com/r10, "
				  "example.com/r11, example.com/r12, example.com/r13, example.com/r14, "
				  "example.com/r15");
	/* Too long for the buffer: cut after a whole name, with "...". */
	char small[40];
	kb_resnames_format_asked(&t, small, sizeof(small));
	assert_string_equal(small, "example.com/r3, example.com/r4...");
	kb_resnames_init(&t);
	kb_resnames_format_asked(&t, held, sizeof(held));
	assert_string_equal(held, "");
}

static void resnames_known_names_take_a_slot_only_when_asked_for(void **state)
{
	static kb_resnames t; /* large: not on the stack */
	kb_resnames_init(&t);
	char name[32];
	/* Far more names advertised than slots, none of them taking one. */
	for (int k = 0; k < KB_RES_KNOWN_MAX; k++) {
		snprintf(name, sizeof(name), "example.com/adv%d", k);
		assert_int_equal(kb_resnames_intern_known(&t, name), k);
		assert_int_equal(kb_resnames_known_slot(&t, k), -1);
	}
	assert_int_equal(t.n, KB_RES_NFIXED);
	assert_int_equal(kb_resnames_intern_known(&t, "example.com/adv7"), 7); /* again: same */
	assert_int_equal(kb_resnames_intern_known(&t, "example.com/one-too-many"), -ENOSPC);
	/* Asked for: a slot, mapped from the known name. */
	assert_int_equal(kb_resnames_intern(&t, "example.com/adv200"), KB_RES_NFIXED);
	assert_int_equal(kb_resnames_known_slot(&t, 200), KB_RES_NFIXED);
	assert_int_equal(kb_resnames_known_slot(&t, 199), -1);
	/* A name with a slot is not a known name. */
	assert_int_equal(kb_resnames_intern_known(&t, "cpu"), -EEXIST);
	assert_int_equal(kb_resnames_intern_known(&t, "example.com/adv200"), -EEXIST);
	assert_int_equal(kb_resnames_known_slot(&t, KB_RES_KNOWN_MAX), -1);
}

static void res_arithmetic_and_fit(void **state)
{
	kb_res a = {{0}}, b = {{0}};
	a.q[KB_RES_CPU] = 2000;
	a.q[3] = 1000;
	b.q[KB_RES_CPU] = 500;
	kb_res_add(&b, &a);
	assert_int_equal(b.q[KB_RES_CPU], 2500);
	assert_true(kb_res_le(&a, &b));
	assert_false(kb_res_le(&b, &a));
	assert_int_equal(kb_res_first_short(&b, &a), KB_RES_CPU);
	assert_int_equal(kb_res_first_short(&a, &b), -1);
	kb_res_sub(&b, &a);
	assert_int_equal(b.q[KB_RES_CPU], 500);
	assert_int_equal(b.q[3], 0);
}

static void best_effort_means_only_a_pod_slot(void **state)
{
	kb_res r = {{0}};
	r.q[KB_RES_PODS] = 1000;
	assert_true(kb_res_is_best_effort(&r));
	r.q[3] = 1;
	assert_false(kb_res_is_best_effort(&r));
}

static void format_uses_each_resources_unit(void **state)
{
	kb_resnames t;
	kb_resnames_init(&t);
	int gpu = kb_resnames_intern(&t, "nvidia.com/gpu");
	kb_res r = {{0}};
	r.q[KB_RES_CPU] = 1500;
	r.q[KB_RES_MEMORY] = 4LL * 1024 * 1024 * 1024 * 1000;
	r.q[gpu] = 2000;
	char buf[128];
	assert_string_equal(kb_res_format(&r, &t, buf, sizeof(buf)), "cpu: 1500m, memory: 4Gi, nvidia.com/gpu: 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resnames_fixed_then_interned_in_order),
		cmocka_unit_test(resnames_refuses_a_seventeenth_name),
		cmocka_unit_test(resnames_known_names_take_a_slot_only_when_asked_for),
		cmocka_unit_test(res_arithmetic_and_fit),
		cmocka_unit_test(best_effort_means_only_a_pod_slot),
		cmocka_unit_test(format_uses_each_resources_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "api/resource.h"
#include "api/snapshot.h"

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

/* The asks of a pod in names past the slots: set, add and max by known
 * index, each at most KB_RES_SPILL_MAX names, sums never wrapping. */
static void spill_lists_add_max_and_limit(void **state)
{
	kb_res_spill a = {.n = 0}, b = {.n = 0};
	assert_int_equal(kb_res_spill_set(&a, 7, 2000), 0);
	assert_int_equal(kb_res_spill_set(&b, 7, 3000), 0);
	assert_int_equal(kb_res_spill_set(&b, 9, 1000), 0);
	assert_int_equal(kb_res_spill_add(&a, &b), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(kb_res_extra_get(a.e, a.n, 7), 5000);
	assert_int_equal(kb_res_extra_get(a.e, a.n, 9), 1000);
	assert_int_equal(kb_res_extra_get(a.e, a.n, 8), 0);
	kb_res_spill m = {.n = 0};
	assert_int_equal(kb_res_spill_set(&m, 9, 4000), 0);
	assert_int_equal(kb_res_spill_max(&m, &a), 0);
	assert_int_equal(kb_res_extra_get(m.e, m.n, 7), 5000);
	assert_int_equal(kb_res_extra_get(m.e, m.n, 9), 4000);
	/* A sum past INT64_MAX is refused, not wrapped. */
	kb_res_spill big = {.n = 0};
	assert_int_equal(kb_res_spill_set(&big, 7, INT64_MAX), 0);
	assert_int_equal(kb_res_spill_add(&big, &a), -ERANGE);
	/* KB_RES_SPILL_MAX names, then no more; a name already held is fine. */
	kb_res_spill full = {.n = 0};
	for (int k = 0; k < KB_RES_SPILL_MAX; k++)
		assert_int_equal(kb_res_spill_set(&full, 100 + k, 1000), 0);
	assert_int_equal(kb_res_spill_set(&full, 100, 2000), 0);
	assert_int_equal(kb_res_spill_set(&full, 99, 1000), -ENOSPC);
	assert_int_equal(kb_res_spill_add(&full, &a), -ENOSPC);
	assert_int_equal(kb_res_spill_max(&full, &a), -ENOSPC);
}

/* kb_node_spill_short: a node's allocatable of a spilled name less what
 * its tasks ask, counted as kb_node_fits (future: allocated statuses and
 * pipelined) and kb_fits_idle (now: allocated statuses and releasing)
 * count the vector. */
static void spill_fit_counts_the_tasks_on_the_node(void **state)
{
	const kb_res_extra node_has[] = {{.known = 5, .milli = 3000}, {.known = 6, .milli = 1000}};
	const kb_res_extra one5[] = {{.known = 5, .milli = 1000}};
	const kb_res_extra two5[] = {{.known = 5, .milli = 2000}};
	const kb_res_extra one6[] = {{.known = 6, .milli = 1000}};
	kb_pod_spec s_one5 = {.spill = one5, .nspill = 1}, s_two5 = {.spill = two5, .nspill = 1},
		    s_one6 = {.spill = one6, .nspill = 1}, s_none = {0};
	kb_node node = {.name = "n", .extra = node_has, .nextra = 2, .task_head = 0};
	kb_task tasks[4] = {
		{.key = "running", .spec = &s_one5, .spills = true, .status = KB_TASK_RUNNING, .node = 0,
		 .node_prev = -1, .node_next = 1},
		{.key = "releasing", .spec = &s_one5, .spills = true, .status = KB_TASK_RELEASING,
		 .node = 0,
		 .node_prev = 0, .node_next = 2},
		{.key = "plain", .spec = &s_none, .status = KB_TASK_RUNNING, .node = 0,
		 .node_prev = 1, .node_next = -1},
		{.key = "pending", .spec = &s_two5, .spills = true, .status = KB_TASK_PENDING,
		 .node = -1},
	};
	kb_snapshot snap;
	kb_snapshot_init(&snap);
	snap.nodes = &node;
	snap.nnodes = 1;
	snap.tasks = tasks;
	snap.ntasks = 4;
	/* 3 of name 5: running and releasing hold 2 now, 1 in the future. */
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, false), 0);
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, true), -1);
	/* A pipelined task holds the future, not the present. */
	tasks[2].spec = &s_one5;
	tasks[2].spills = true;
	tasks[2].status = KB_TASK_PIPELINED;
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, true), 0);
	/* Name 6, which nothing on the node asks for: 1 of 1 fits; a name the
	 * node does not advertise never does. */
	tasks[3].spec = &s_one6;
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, false), -1);
	const kb_res_extra one7[] = {{.known = 7, .milli = 1}};
	kb_pod_spec s_one7 = {.spill = one7, .nspill = 1};
	tasks[3].spec = &s_one7;
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, true), 0);
	/* A task that asks for none fits whatever the node holds. */
	tasks[3].spec = &s_none;
	tasks[3].spills = false;
	assert_int_equal(kb_node_spill_short(&snap, &tasks[3], &node, false), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resnames_fixed_then_interned_in_order),
		cmocka_unit_test(resnames_refuses_a_seventeenth_name),
		cmocka_unit_test(resnames_known_names_take_a_slot_only_when_asked_for),
		cmocka_unit_test(res_arithmetic_and_fit),
		cmocka_unit_test(spill_lists_add_max_and_limit),
		cmocka_unit_test(spill_fit_counts_the_tasks_on_the_node),
		cmocka_unit_test(best_effort_means_only_a_pod_slot),
		cmocka_unit_test(format_uses_each_resources_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_sums.c - resource sums that cannot overflow (issue 18, item 6).
 *
 * Properties at int64's edges: kb_res_add and kb_res_sub give the exact
 * result clamped into int64 (checked against 128-bit arithmetic over a
 * million pairs drawn mostly near INT64_MAX, INT64_MIN and 0); they are
 * exact, and undo each other, wherever no sum saturates. Then at the
 * cluster level: nodes whose memory sums past INT64_MAX milli-bytes give a
 * saturated total (never a negative one), an exact 128-bit future idle, a
 * snapshot whose invariants hold, a statement undone exactly, and deserved
 * shares that stay within the total. */
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
#include "cache/cluster.h"
#include "queue/deserved.h"
#include "tests/unit/load_cluster.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_u64(void)
{
	uint64_t x = rng_state; /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Mostly values near the edges: INT64_MAX - k, INT64_MIN + k, k, -k for a
 * small k, half of INT64_MAX +- k; else any int64. */
static int64_t edge_value(void)
{
	uint64_t r = next_u64();
	int64_t k = (int64_t)(r >> 60); /* 0..15 */
	switch ((r >> 56) & 7) {
	case 0:
		return INT64_MAX - k;
	case 1:
		return INT64_MIN + k;
	case 2:
		return k;
	case 3:
		return -k;
	case 4:
		return INT64_MAX / 2 + k - 8;
	case 5:
		return INT64_MIN / 2 + k - 8;
	default:
		return (int64_t)next_u64();
	}
}

static int64_t clamp(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

static void saturating_ops_equal_clamped_128_bit_results(void **state)
{
	int saturated = 0;
	for (int n = 0; n < 1000000; n++) {
		int64_t a = edge_value(), b = edge_value();
		assert_true(kb_sat_add64(a, b) == clamp((__int128)a + b));
		assert_true(kb_sat_sub64(a, b) == clamp((__int128)a - b));
		saturated += clamp((__int128)a + b) != (__int128)a + b;
	}
	/* The draw does reach the edges (else the test proves little). */
	assert_true(saturated > 10000);
	assert_true(kb_sat_add64(INT64_MAX, 1) == INT64_MAX);
	assert_true(kb_sat_add64(INT64_MIN, -1) == INT64_MIN);
	assert_true(kb_sat_sub64(INT64_MIN, 1) == INT64_MIN);
	assert_true(kb_sat_sub64(0, INT64_MIN) == INT64_MAX);
	assert_true(kb_sat_sub64(-1, INT64_MIN) == INT64_MAX);
	assert_true(kb_clamp128((__int128)INT64_MAX * 3) == INT64_MAX);
	assert_true(kb_clamp128(-(__int128)INT64_MAX * 3) == INT64_MIN);
}

static void vector_sums_clamp_and_undo_exactly_in_range(void **state)
{
	for (int n = 0; n < 100000; n++) {
		kb_res a, b, c;
		for (int i = 0; i < KB_RES_MAX; i++) {
			a.q[i] = edge_value();
			b.q[i] = edge_value();
		}
		c = a;
		kb_res_add(&c, &b);
		bool exact = true;
		for (int i = 0; i < KB_RES_MAX; i++) {
			__int128 s = (__int128)a.q[i] + b.q[i];
			assert_true(c.q[i] == clamp(s));
			exact &= clamp(s) == s;
		}
		kb_res_sub(&c, &b);
		if (exact)
			assert_memory_equal(&c, &a, sizeof(a));
		c = a;
		kb_res_sub(&c, &b);
		for (int i = 0; i < KB_RES_MAX; i++)
			assert_true(c.q[i] == clamp((__int128)a.q[i] - b.q[i]));
	}
}

/* Three nodes of 8000Ti memory each: 8.8e18 milli-bytes, just under
 * INT64_MAX (9.22e18); together 2.6e19. */
static const char BIG[] =
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
	"status: {allocatable: {cpu: '64', memory: 8000Ti}}\n"
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
	"status: {allocatable: {cpu: '64', memory: 8000Ti}}\n"
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"
	"status: {allocatable: {cpu: '64', memory: 8000Ti}}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge}\n"
	"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: "
	"{cpu: '1', memory: 7000Ti}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: running}\n"
	"spec: {nodeName: n1, schedulerName: kube-batchd, containers: [{name: c, resources: "
	"{requests: {cpu: '1', memory: 7000Ti}}}]}\nstatus: {phase: Running}\n";

static void cluster_totals_saturate_and_stay_exact(void **state)
{
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, BIG);
	kb_snapshot s;
	kb_err err = {0};
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	const int64_t node_mem = (int64_t)8000 * 1024 * 1024 * 1024 * 1024 * 1000;
	const int64_t pod_mem = (int64_t)7000 * 1024 * 1024 * 1024 * 1024 * 1000;
	assert_int_equal(s.nnodes, 3);
	/* Saturated, never wrapped negative. */
	assert_true(s.total_allocatable.q[KB_RES_MEMORY] == INT64_MAX);
	assert_true(s.total_future_idle.q[KB_RES_MEMORY] == INT64_MAX);
	assert_true(s.future_idle_exact[KB_RES_MEMORY] == (__int128)node_mem * 3 - pod_mem);
	assert_int_equal(s.total_allocatable.q[KB_RES_CPU], 192000);
	char why[256];
	assert_true(kb_snapshot_check(&s, why, sizeof(why)));

	/* A tentative placement of the pending pod on n2, undone. */
	uint32_t t = UINT32_MAX, n2 = UINT32_MAX;
	for (uint32_t i = 0; i < s.ntasks; i++)
		if (strcmp(s.tasks[i].name, "huge") == 0)
			t = i;
	for (uint32_t i = 0; i < s.nnodes; i++)
		if (strcmp(s.nodes[i].name, "n2") == 0)
			n2 = i;
	assert_true(t != UINT32_MAX && n2 != UINT32_MAX);
	kb_res future_before = s.total_future_idle;
	__int128 exact_before = s.future_idle_exact[KB_RES_MEMORY];
	assert_int_equal(kb_snapshot_journal_begin(&s), 0);
	kb_snapshot_touch_task(&s, t);
	s.tasks[t].node = (int32_t)n2; /* as kb_statement_allocate does */
	kb_snapshot_set_task_status(&s, t, KB_TASK_ALLOCATED);
	assert_true(kb_snapshot_check(&s, why, sizeof(why)));
	assert_true(s.future_idle_exact[KB_RES_MEMORY] == exact_before - pod_mem);
	assert_true(s.total_future_idle.q[KB_RES_MEMORY] == INT64_MAX); /* 1.1e19: still past */
	assert_true(s.nodes[n2].idle.q[KB_RES_MEMORY] == node_mem - pod_mem);
	assert_int_equal(kb_snapshot_journal_rollback(&s), 0);
	assert_memory_equal(&s.total_future_idle, &future_before, sizeof(kb_res));
	assert_true(s.future_idle_exact[KB_RES_MEMORY] == exact_before);
	assert_true(kb_snapshot_check(&s, why, sizeof(why)));

	/* Shares of the saturated total: within it, none negative. */
	kb_share_input in[3];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 3; i++) {
		in[i].weight = i + 1;
		in[i].request.q[KB_RES_MEMORY] = INT64_MAX;
	}
	kb_res out[3];
	kb_deserved_compute(&s.total_allocatable, in, 3, out);
	__int128 sum = 0;
	for (int i = 0; i < 3; i++) {
		assert_true(out[i].q[KB_RES_MEMORY] >= 0);
		sum += out[i].q[KB_RES_MEMORY];
	}
	assert_true(sum <= INT64_MAX && sum >= INT64_MAX - 3);
	assert_true(out[2].q[KB_RES_MEMORY] > out[1].q[KB_RES_MEMORY] &&
		    out[1].q[KB_RES_MEMORY] > out[0].q[KB_RES_MEMORY]);
	kb_snapshot_release(&s);
	kb_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(saturating_ops_equal_clamped_128_bit_results),
		cmocka_unit_test(vector_sums_clamp_and_undo_exactly_in_range),
		cmocka_unit_test(cluster_totals_saturate_and_stay_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

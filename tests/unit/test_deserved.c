/* Deserved shares (queue/deserved.h): weighted water-filling per resource,
 * pinned on worked examples in exact milli-units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "queue/deserved.h"

#define CPU(n) ((int64_t)(n) * 1000)
#define GPU 3 /* nvidia.com/gpu: the first extended resource's index */

/* A queue of weight w asking for `ask` cpu (milli-units). */
static kb_share_input q_cpu(int64_t w, int64_t ask)
{
	kb_share_input in;
	memset(&in, 0, sizeof(in));
	in.weight = w;
	in.request.q[KB_RES_CPU] = ask;
	return in;
}

static kb_res cpu_total(int64_t milli)
{
	kb_res t;
	memset(&t, 0, sizeof(t));
	t.q[KB_RES_CPU] = milli;
	return t;
}

static void weights_1_3_split_8_cpu_into_2_and_6(void **state)
{
	kb_share_input in[2] = {q_cpu(1, CPU(8)), q_cpu(3, CPU(8))};
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(6));
}

static void weights_1_2_3_4_split_10_cpu_exactly(void **state)
{
	kb_share_input in[4] = {q_cpu(1, CPU(100)), q_cpu(2, CPU(100)), q_cpu(3, CPU(100)),
				q_cpu(4, CPU(100))};
	kb_res total = cpu_total(CPU(10)), out[4];
	kb_deserved_compute(&total, in, 4, out);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i].q[KB_RES_CPU], CPU(i + 1));
}

static void queue_asking_less_leaves_the_rest_to_others(void **state)
{
	/* Equal weights over 8 cpu: A asks 1, so B gets the other 7 (work-conserving). */
	kb_share_input in[2] = {q_cpu(1, CPU(1)), q_cpu(1, CPU(10))};
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(1));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(7));

	/* Three queues, one small: 12 cpu, asks 2 / 100 / 100 at weights 1/1/2 ->
	 * 2, then 10 left at 1:2 -> 3333 + 1 leftover, 6666. */
	kb_share_input in3[3] = {q_cpu(1, CPU(2)), q_cpu(1, CPU(100)), q_cpu(2, CPU(100))};
	kb_res total3 = cpu_total(CPU(12)), out3[3];
	kb_deserved_compute(&total3, in3, 3, out3);
	assert_int_equal(out3[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out3[1].q[KB_RES_CPU], 3334);
	assert_int_equal(out3[2].q[KB_RES_CPU], 6666);
}

static void demand_below_capacity_gives_every_request(void **state)
{
	kb_share_input in[2] = {q_cpu(1, CPU(2)), q_cpu(5, 1500)};
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[1].q[KB_RES_CPU], 1500);
}

static void capability_caps_and_the_rest_goes_to_others(void **state)
{
	/* A weighs 3 but may hold 2 cpu: B gets the other 6. */
	kb_share_input in[2] = {q_cpu(3, CPU(8)), q_cpu(1, CPU(8))};
	in[0].capability_mask = 1u << KB_RES_CPU;
	in[0].capability.q[KB_RES_CPU] = CPU(2);
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(6));
}

static void capability_only_caps_the_resources_it_names(void **state)
{
	/* A capability on memory does not cap cpu. */
	kb_share_input in[2] = {q_cpu(1, CPU(8)), q_cpu(1, CPU(8))};
	in[0].capability_mask = 1u << KB_RES_MEMORY;
	in[0].capability.q[KB_RES_MEMORY] = 0;
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(4));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(4));
}

static void guarantee_is_a_floor_not_an_addition(void **state)
{
	/* C=10, A(w1, g4), B(w1), both hungry: the fair 5 is above A's floor -> 5/5. */
	kb_share_input in[2] = {q_cpu(1, CPU(10)), q_cpu(1, CPU(10))};
	in[0].guarantee.q[KB_RES_CPU] = CPU(4);
	kb_res total = cpu_total(CPU(10)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(5));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(5));

	/* A(w1, g7): the floor wins -> 7/3. */
	in[0].guarantee.q[KB_RES_CPU] = CPU(7);
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(7));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(3));
}

static void guarantee_holds_against_a_much_heavier_weight(void **state)
{
	/* C=8, A(w1, g4), B(w9): 4/4 exactly. The rounding leftover of the level
	 * (B would get 9 x 444m = 3996m) goes to B, not to A sitting on its floor. */
	kb_share_input in[2] = {q_cpu(1, CPU(8)), q_cpu(9, CPU(8))};
	in[0].guarantee.q[KB_RES_CPU] = CPU(4);
	kb_res total = cpu_total(CPU(8)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(4));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(4));
}

static void guarantee_of_an_idle_queue_is_kept(void **state)
{
	/* The floor is reserved even when the queue asks for nothing (volcano's
	 * guarantee): B gets the rest. */
	kb_share_input in[2] = {q_cpu(1, 0), q_cpu(1, CPU(10))};
	in[0].guarantee.q[KB_RES_CPU] = CPU(3);
	kb_res total = cpu_total(CPU(10)), out[2];
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(3));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(7));
}

static void guarantees_above_the_cluster_are_scaled_down(void **state)
{
	/* g 8 + 12 = 20 > C = 10: each gets C x g / sum(g) -> 4 and 6. */
	kb_share_input in[3] = {q_cpu(1, CPU(20)), q_cpu(1, CPU(20)), q_cpu(5, CPU(20))};
	in[0].guarantee.q[KB_RES_CPU] = CPU(8);
	in[1].guarantee.q[KB_RES_CPU] = CPU(12);
	kb_res total = cpu_total(CPU(10)), out[3];
	kb_deserved_compute(&total, in, 3, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(4));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(6));
	assert_int_equal(out[2].q[KB_RES_CPU], 0);
}

static void gpu_is_shared_independently_of_cpu(void **state)
{
	/* 8 cpu and 4 nvidia.com/gpu (index 3). A (w1) asks 8 cpu and 1 gpu, B
	 * (w3) asks 8 cpu and 8 gpu: cpu 2/6 by weight; gpu A 1 (its request),
	 * B the other 3. */
	kb_share_input in[2] = {q_cpu(1, CPU(8)), q_cpu(3, CPU(8))};
	in[0].request.q[GPU] = CPU(1);
	in[1].request.q[GPU] = CPU(8);
	kb_res total = cpu_total(CPU(8)), out[2];
	total.q[GPU] = CPU(4);
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(6));
	assert_int_equal(out[0].q[GPU], CPU(1));
	assert_int_equal(out[1].q[GPU], CPU(3));

	/* A gpu capability caps gpu only; the gpu A gives up goes to B. */
	in[0].request.q[GPU] = CPU(8);
	in[0].capability_mask = 1u << GPU;
	in[0].capability.q[GPU] = 0;
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[0].q[GPU], 0);
	assert_int_equal(out[1].q[GPU], CPU(4));
}

static void leftover_milli_units_go_in_input_order(void **state)
{
	/* 10 cpu over three equal queues: 3333m each and 1m left, to the first. */
	kb_share_input in[3] = {q_cpu(1, CPU(10)), q_cpu(1, CPU(10)), q_cpu(1, CPU(10))};
	kb_res total = cpu_total(CPU(10)), out[3], again[3];
	kb_deserved_compute(&total, in, 3, out);
	assert_int_equal(out[0].q[KB_RES_CPU], 3334);
	assert_int_equal(out[1].q[KB_RES_CPU], 3333);
	assert_int_equal(out[2].q[KB_RES_CPU], 3333);
	kb_deserved_compute(&total, in, 3, again);
	assert_memory_equal(out, again, sizeof(out));

	/* 11 cpu over 3 queues of weight 2, 2 and 3: level 1571m per weight gives
	 * 3142 + 3142 + 4713 = 10997; the 3 left go one at a time in input order. */
	kb_share_input w[3] = {q_cpu(2, CPU(11)), q_cpu(2, CPU(11)), q_cpu(3, CPU(11))};
	kb_res t11 = cpu_total(CPU(11)), o11[3];
	kb_deserved_compute(&t11, w, 3, o11);
	assert_int_equal(o11[0].q[KB_RES_CPU], 3143);
	assert_int_equal(o11[1].q[KB_RES_CPU], 3143);
	assert_int_equal(o11[2].q[KB_RES_CPU], 4714);
	assert_int_equal(o11[0].q[KB_RES_CPU] + o11[1].q[KB_RES_CPU] + o11[2].q[KB_RES_CPU], CPU(11));
}

static void zero_queues_and_an_empty_cluster(void **state)
{
	kb_res total = cpu_total(CPU(8)), out[1];
	kb_deserved_compute(&total, NULL, 0, out); /* nothing to write, nothing to crash */

	kb_share_input in[2] = {q_cpu(1, CPU(8)), q_cpu(3, CPU(8))};
	kb_res none = cpu_total(0), o2[2];
	kb_deserved_compute(&none, in, 2, o2);
	assert_int_equal(o2[0].q[KB_RES_CPU], 0);
	assert_int_equal(o2[1].q[KB_RES_CPU], 0);
}

static void shares_never_exceed_the_cluster(void **state)
{
	/* Odd weights, odd capacity, mixed requests: the sum is exactly C when
	 * the demand is above it, each share is within its request. */
	kb_share_input in[5] = {q_cpu(7, CPU(3)), q_cpu(3, CPU(50)), q_cpu(11, 999), q_cpu(1, CPU(50)),
				q_cpu(2, 1)};
	kb_res total = cpu_total(12345), out[5];
	kb_deserved_compute(&total, in, 5, out);
	int64_t sum = 0;
	for (int i = 0; i < 5; i++) {
		assert_true(out[i].q[KB_RES_CPU] <= in[i].request.q[KB_RES_CPU]);
		sum += out[i].q[KB_RES_CPU];
	}
	assert_int_equal(sum, 12345);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(3));
	assert_int_equal(out[2].q[KB_RES_CPU], 999);
	assert_int_equal(out[4].q[KB_RES_CPU], 1);
	/* The rest, 12345 - 4000 = 8345, at 3:1 -> 6258.75 and 2086.25. */
	assert_int_equal(out[1].q[KB_RES_CPU], 6259);
	assert_int_equal(out[3].q[KB_RES_CPU], 2086);
}

static void readme_worked_example(void **state)
{
	/* queue/README.md: 10 cpu and 4 GPUs; A (w1, guarantee cpu 4), B (w1),
	 * C (w2, capability gpu 1), all hungry -> cpu 4/2/4, gpu 1.5/1.5/1. */
	kb_share_input in[3] = {q_cpu(1, CPU(10)), q_cpu(1, CPU(10)), q_cpu(2, CPU(10))};
	for (int i = 0; i < 3; i++)
		in[i].request.q[GPU] = CPU(4);
	in[0].guarantee.q[KB_RES_CPU] = CPU(4);
	in[2].capability_mask = 1u << GPU;
	in[2].capability.q[GPU] = CPU(1);
	kb_res total = cpu_total(CPU(10)), out[3];
	total.q[GPU] = CPU(4);
	kb_deserved_compute(&total, in, 3, out);
	assert_int_equal(out[0].q[KB_RES_CPU], CPU(4));
	assert_int_equal(out[1].q[KB_RES_CPU], CPU(2));
	assert_int_equal(out[2].q[KB_RES_CPU], CPU(4));
	assert_int_equal(out[0].q[GPU], 1500);
	assert_int_equal(out[1].q[GPU], 1500);
	assert_int_equal(out[2].q[GPU], CPU(1));
}

static void huge_weights_and_quantities_stay_exact_and_fast(void **state)
{
	/* 256Gi (in milli-bytes) + 12345m of memory over weights 2^31-1 and 1:
	 * level 128000 uses exactly 256Gi; of the 12345 left, B may take only 1
	 * (its share at the next level) and A the rest - without handing out
	 * 12345 milli-units one at a time per pass over the queues. */
	const int64_t gib256 = 256LL * 1024 * 1024 * 1024 * 1000;
	kb_share_input in[2];
	memset(in, 0, sizeof(in));
	in[0].weight = INT32_MAX;
	in[1].weight = 1;
	in[0].request.q[KB_RES_MEMORY] = in[1].request.q[KB_RES_MEMORY] = INT64_MAX / 4;
	kb_res total, out[2];
	memset(&total, 0, sizeof(total));
	total.q[KB_RES_MEMORY] = gib256 + 12345;
	kb_deserved_compute(&total, in, 2, out);
	assert_int_equal(out[1].q[KB_RES_MEMORY], 128001);
	assert_int_equal(out[0].q[KB_RES_MEMORY], 128000LL * INT32_MAX + 12344);
	assert_int_equal(out[0].q[KB_RES_MEMORY] + out[1].q[KB_RES_MEMORY], gib256 + 12345);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(weights_1_3_split_8_cpu_into_2_and_6),
		cmocka_unit_test(weights_1_2_3_4_split_10_cpu_exactly),
		cmocka_unit_test(queue_asking_less_leaves_the_rest_to_others),
		cmocka_unit_test(demand_below_capacity_gives_every_request),
		cmocka_unit_test(capability_caps_and_the_rest_goes_to_others),
		cmocka_unit_test(capability_only_caps_the_resources_it_names),
		cmocka_unit_test(guarantee_is_a_floor_not_an_addition),
		cmocka_unit_test(guarantee_holds_against_a_much_heavier_weight),
		cmocka_unit_test(guarantee_of_an_idle_queue_is_kept),
		cmocka_unit_test(guarantees_above_the_cluster_are_scaled_down),
		cmocka_unit_test(gpu_is_shared_independently_of_cpu),
		cmocka_unit_test(leftover_milli_units_go_in_input_order),
		cmocka_unit_test(zero_queues_and_an_empty_cluster),
		cmocka_unit_test(shares_never_exceed_the_cluster),
		cmocka_unit_test(readme_worked_example),
		cmocka_unit_test(huge_weights_and_quantities_stay_exact_and_fast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

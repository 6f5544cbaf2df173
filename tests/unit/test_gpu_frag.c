/*
 * test_gpu_frag.c - plugins/gpu_frag: feasibility, device choice, model
 * matching, the fragmentation measure and the scores.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/gpu_frag.h"

#define BIG_MEM (1 << 20)

/* A node with the given free per GPU (count entries). */
static struct kb_gpu_node node_with(int64_t cpu, int64_t mem, int model,
				    const int32_t *free, int count)
{
	struct kb_gpu_node n;

	assert_int_equal(kb_gpu_node_init(&n, cpu, mem, count, model), 0);
	for (int i = 0; i < count; i++)
		n.gpu_milli_free[i] = free[i];
	return n;
}

static struct kb_gpu_task task_of(int64_t cpu, int64_t mem, int num_gpu,
				  int gpu_milli, uint64_t models)
{
	struct kb_gpu_task t;

	assert_int_equal(kb_gpu_task_init(&t, cpu, mem, num_gpu, gpu_milli,
					  models),
			 0);
	return t;
}

/* Pointer to a task built by task_of (a block-scope compound literal). */
#define TASKP(...) ((struct kb_gpu_task[1]){ task_of(__VA_ARGS__) })

/* Deterministic 64-bit words for the random device choice. */
static uint64_t next_word(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* ---- feasibility ---------------------------------------------------------- */

static void fits_needs_cpu_and_memory(void **state)
{
	const int32_t free[2] = { 1000, 1000 };
	struct kb_gpu_node n = node_with(8000, 16384, 0, free, 2);

	(void)state;
	assert_true(kb_gpu_fits(&n, &(struct kb_gpu_task){ 0 }));
	assert_true(kb_gpu_fits(&n, &(struct kb_gpu_task){
					    .cpu_milli = 8000,
					    .memory_mib = 16384 }));
	assert_false(kb_gpu_fits(&n, &(struct kb_gpu_task){
					     .cpu_milli = 8001 }));
	assert_false(kb_gpu_fits(&n, &(struct kb_gpu_task){
					     .memory_mib = 16385 }));
	/* CPU-only tasks fit on a node whose GPUs are all taken */
	n.gpu_milli_free[0] = n.gpu_milli_free[1] = 0;
	assert_true(kb_gpu_fits(&n, &(struct kb_gpu_task){ .cpu_milli = 1 }));
}

static void sharing_task_needs_one_gpu_with_enough_free(void **state)
{
	const int32_t free[2] = { 600, 600 };
	struct kb_gpu_node n = node_with(64000, BIG_MEM, 0, free, 2);

	(void)state;
	/* 1200 free in all, but no single GPU has 700 */
	assert_false(kb_gpu_fits(&n, &(struct kb_gpu_task){
					     .num_gpu = 1, .gpu_milli = 700 }));
	assert_true(kb_gpu_fits(&n, &(struct kb_gpu_task){
					    .num_gpu = 1, .gpu_milli = 600 }));
}

static void whole_gpu_task_needs_entirely_free_gpus(void **state)
{
	const int32_t free[4] = { 1000, 999, 1000, 1000 };
	struct kb_gpu_node n = node_with(64000, BIG_MEM, 0, free, 4);

	(void)state;
	assert_true(kb_gpu_fits(&n, &(struct kb_gpu_task){
					    .num_gpu = 3, .gpu_milli = 1000 }));
	assert_false(kb_gpu_fits(&n, &(struct kb_gpu_task){
					     .num_gpu = 4, .gpu_milli = 1000 }));
	n.gpu_milli_free[2] = 500;
	assert_false(kb_gpu_fits(&n, &(struct kb_gpu_task){
					     .num_gpu = 3, .gpu_milli = 1000 }));
}

static void task_init_normalises_and_rejects(void **state)
{
	struct kb_gpu_task t;

	(void)state;
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, 4, 250, 0), 0);
	assert_int_equal(t.gpu_milli, 1000); /* whole GPUs beyond one */
	assert_int_equal(kb_gpu_task_gpu_total(&t), 4000);
	assert_false(kb_gpu_task_is_sharing(&t));
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, 0, 300, 5), 0);
	assert_int_equal(t.gpu_milli, 0);
	assert_int_equal(t.models, 0);
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, 1, 250, 0), 0);
	assert_true(kb_gpu_task_is_sharing(&t));
	assert_int_equal(kb_gpu_task_gpu_total(&t), 250);
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, 1, 0, 0), -EINVAL);
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, 1, 1001, 0), -EINVAL);
	assert_int_equal(kb_gpu_task_init(&t, -1, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(kb_gpu_task_init(&t, 1, 1, KB_GPU_NODE_MAX_GPUS + 1,
					  1000, 0),
			 -EINVAL);
	assert_int_equal(kb_gpu_node_init(&(struct kb_gpu_node){ 0 }, 1, 1,
					  KB_GPU_NODE_MAX_GPUS + 1, 0),
			 -EINVAL);
	assert_int_equal(kb_gpu_node_init(&(struct kb_gpu_node){ 0 }, 1, 1, 1,
					  KB_GPU_MODEL_MAX),
			 -EINVAL);
}

/* ---- model matching ---------------------------------------------------- */

static void model_spec_matches_one_name_exactly(void **state)
{
	struct kb_gpu_models m;
	int v100m32, v100m3, t4;
	uint64_t spec;
	const int32_t free[1] = { 1000 };

	(void)state;
	kb_gpu_models_init(&m);
	assert_int_equal(kb_gpu_models_intern(&m, "V100M32", 7, &v100m32), 0);
	assert_int_equal(kb_gpu_models_intern(&m, "T4", 2, &t4), 0);
	assert_int_equal(kb_gpu_models_parse_spec(&m, "V100M16|V100M3", 14,
						  &spec),
			 0);
	assert_int_equal(kb_gpu_models_intern(&m, "V100M3", 6, &v100m3), 0);
	assert_true((spec >> v100m3) & 1u);
	assert_false((spec >> v100m32) & 1u); /* no prefix match */

	struct kb_gpu_node big = node_with(8000, BIG_MEM, v100m32, free, 1);
	struct kb_gpu_node small = node_with(8000, BIG_MEM, v100m3, free, 1);
	struct kb_gpu_task want = task_of(1000, 1, 1, 500, spec);

	assert_false(kb_gpu_model_ok(&big, &want));
	assert_false(kb_gpu_fits(&big, &want));
	assert_true(kb_gpu_fits(&small, &want));

	/* an empty spec (and "|" alone) accepts any model */
	assert_int_equal(kb_gpu_models_parse_spec(&m, "|", 1, &spec), 0);
	assert_int_equal(spec, 0);
	assert_true(kb_gpu_fits(&big, &(struct kb_gpu_task){
					      .num_gpu = 1, .gpu_milli = 500 }));

	/* a CPU-only task ignores models; a GPU task never fits a node
	 * without a model name when it names models */
	assert_true(kb_gpu_model_ok(&big, TASKP(1, 1, 0, 0, 0)));
	struct kb_gpu_node unnamed = node_with(8000, BIG_MEM, -1, free, 1);
	assert_false(kb_gpu_fits(&unnamed, &want));
	assert_true(kb_gpu_fits(&unnamed, TASKP(1, 1, 1, 500, 0)));
}

static void model_table_limits(void **state)
{
	struct kb_gpu_models m;
	char name[KB_GPU_MODEL_NAME_MAX + 1];
	int id;

	(void)state;
	kb_gpu_models_init(&m);
	memset(name, 'x', sizeof(name));
	assert_int_equal(kb_gpu_models_intern(&m, name, 0, &id), -EINVAL);
	assert_int_equal(kb_gpu_models_intern(&m, name, KB_GPU_MODEL_NAME_MAX,
					      &id),
			 -EINVAL);
	for (int i = 0; i < KB_GPU_MODEL_MAX; i++) {
		char buf[8];
		int len = snprintf(buf, sizeof(buf), "m%d", i);

		assert_int_equal(kb_gpu_models_intern(&m, buf, (size_t)len,
						      &id),
				 0);
		assert_int_equal(id, i);
	}
	assert_int_equal(kb_gpu_models_intern(&m, "m5", 2, &id), 0);
	assert_int_equal(id, 5);
	assert_int_equal(kb_gpu_models_intern(&m, "new", 3, &id), -ENOSPC);
}

/* ---- device choice ---------------------------------------------------- */

static void tightest_share_goes_to_least_free_gpu_that_fits(void **state)
{
	const int32_t free[4] = { 1000, 300, 450, 700 };
	struct kb_gpu_node n = node_with(64000, BIG_MEM, 0, free, 4);
	uint32_t dev;

	(void)state;
	assert_int_equal(kb_gpu_devices_choose(&n, TASKP(1, 1, 1, 400, 0),
					       KB_GPU_DEVSEL_TIGHTEST, 0, &dev),
			 0);
	assert_int_equal(dev, 1u << 2);
	assert_int_equal(kb_gpu_devices_choose(&n, TASKP(1, 1, 1, 800, 0),
					       KB_GPU_DEVSEL_TIGHTEST, 0, &dev),
			 0);
	assert_int_equal(dev, 1u << 0);
	assert_int_equal(kb_gpu_devices_choose(&n, TASKP(1, 1, 0, 0, 0),
					       KB_GPU_DEVSEL_FIRST, 0, &dev),
			 0);
	assert_int_equal(dev, 0);
	assert_int_equal(kb_gpu_devices_choose(&n, TASKP(1, 1, 2, 1000, 0),
					       KB_GPU_DEVSEL_FIRST, 0, &dev),
			 -ENOSPC);
	assert_int_equal(kb_gpu_devices_choose(&n, TASKP(1, 1, 1, 100, 0),
					       (enum kb_gpu_devsel)42, 0, &dev),
			 -EINVAL);
}

static void devices_valid_rejects_split_and_overfill(void **state)
{
	const int32_t free[4] = { 1000, 600, 600, 1000 };
	struct kb_gpu_node n = node_with(64000, BIG_MEM, 0, free, 4);
	struct kb_gpu_task share = task_of(1, 1, 1, 700, 0);
	struct kb_gpu_task two = task_of(1, 1, 2, 1000, 0);

	(void)state;
	assert_true(kb_gpu_devices_valid(&n, &share, 1u << 0));
	assert_false(kb_gpu_devices_valid(&n, &share, 1u << 1)); /* overfill */
	assert_false(kb_gpu_devices_valid(&n, &share, (1u << 1) | (1u << 2)));
	assert_false(kb_gpu_devices_valid(&n, &share, 1u << 4)); /* no GPU 4 */
	assert_true(kb_gpu_devices_valid(&n, &two, (1u << 0) | (1u << 3)));
	assert_false(kb_gpu_devices_valid(&n, &two, (1u << 0) | (1u << 1)));
	assert_false(kb_gpu_devices_valid(&n, &two, 1u << 0));
	assert_int_equal(kb_gpu_node_take(&n, &share, 1u << 1), -EINVAL);
	assert_int_equal(n.gpu_milli_free[1], 600); /* untouched */
	assert_int_equal(kb_gpu_node_take(&n, &share, 1u << 3), 0);
	assert_int_equal(n.gpu_milli_free[3], 300);
	assert_int_equal(n.cpu_milli_free, 64000 - 1);
}

/* Fill nodes with random tasks, devices chosen at random, until nothing
 * fits: a sharing task always gets exactly one device with room, whole
 * tasks get num_gpu entirely free devices, and no device is ever below 0. */
static void random_placement_never_splits_or_overfills(void **state)
{
	static const int shares[] = { 50, 110, 230, 320, 470, 650, 810, 1000 };
	uint64_t rs = 7;

	(void)state;
	for (int round = 0; round < 200; round++) {
		const int32_t free[8] = { 1000, 1000, 1000, 1000,
					  1000, 1000, 1000, 1000 };
		struct kb_gpu_node n = node_with(96000, 393216, 0, free, 8);

		for (int k = 0; k < 64; k++) {
			uint64_t w = next_word(&rs);
			int num = (w & 7) < 6 ? 1 : (int)(1u << ((w >> 3) & 3));
			int milli = num == 1 ? shares[(w >> 5) % 8] : 1000;
			struct kb_gpu_task t = task_of(1000, 1024, num, milli, 0);
			struct kb_gpu_node before = n;
			uint32_t dev;
			int r = kb_gpu_devices_choose(&n, &t, KB_GPU_DEVSEL_RANDOM,
						      next_word(&rs), &dev);

			if (!kb_gpu_fits(&n, &t)) {
				assert_int_equal(r, -ENOSPC);
				continue;
			}
			assert_int_equal(r, 0);
			assert_int_equal(__builtin_popcount(dev), num);
			assert_true(kb_gpu_devices_valid(&n, &t, dev));
			assert_int_equal(kb_gpu_node_take(&n, &t, dev), 0);
			for (int i = 0; i < 8; i++) {
				int32_t d = before.gpu_milli_free[i] -
					    n.gpu_milli_free[i];

				assert_true(n.gpu_milli_free[i] >= 0);
				assert_int_equal(d, (dev >> i) & 1u ? milli : 0);
			}
		}
	}
}

/* ---- workload and fragmentation --------------------------------------- */

/* Shapes: A = 600 milli of one GPU, 4 cores (2 of 4 tasks); B = 2 whole
 * GPUs, 8 cores (1 of 4); C = CPU-only, 2 cores (1 of 4). */
static struct kb_gpu_workload example_workload(unsigned flags)
{
	struct kb_gpu_task tasks[4] = {
		task_of(4000, 1000, 1, 600, 0),
		task_of(8000, 1000, 2, 1000, 0),
		task_of(4000, 1000, 1, 600, 0),
		task_of(2000, 1000, 0, 0, 0),
	};
	struct kb_gpu_workload w;

	assert_int_equal(kb_gpu_workload_init(tasks, 4, 1.0, flags, &w), 0);
	assert_int_equal(w.count, 3);
	assert_int_equal(w.shapes[0].task.gpu_milli, 600); /* commonest */
	assert_true(w.shapes[0].weight == 0.5);
	return w;
}

/* Node: GPUs free {1000, 1000, 500, 0} = 2500 idle.
 *   A: two GPUs have >= 600, so A fits; it cannot use the 500 (and 0):
 *      0.5 * 500 = 250
 *   B: two entirely free GPUs, fits; cannot use the 500: 0.25 * 500 = 125
 *   C: asks no GPU, all idle GPU is fragment for it: 0.25 * 2500 = 625
 * frag = 1000. With only 6 cores free, B no longer fits: 0.25 * 2500 = 625,
 * frag = 250 + 625 + 625 = 1500. */
static void fragmentation_worked_example(void **state)
{
	struct kb_gpu_workload w = example_workload(0);
	const int32_t free[4] = { 1000, 1000, 500, 0 };
	struct kb_gpu_node n = node_with(32000, BIG_MEM, 0, free, 4);
	double delta;

	(void)state;
	assert_true(kb_gpu_node_frag(&n, &w) == 1000.0);
	/* a 500 share on GPU 2 fills it: A and B lose nothing, C sees 2000:
	 * frag 500, delta -500 */
	assert_int_equal(kb_gpu_frag_delta(&n, TASKP(1000, 1, 1, 500, 0),
					   1u << 2, &w, &delta),
			 0);
	assert_true(delta == -500.0);
	/* the same share on GPU 0 leaves {500, 1000, 500, 0}: A cannot use
	 * 1000 of it (0.5 * 1000), B does not fit (0.25 * 2000), C 0.25 * 2000:
	 * frag 1500, delta +500 */
	assert_int_equal(kb_gpu_frag_delta(&n, TASKP(1000, 1, 1, 500, 0),
					   1u << 0, &w, &delta),
			 0);
	assert_true(delta == 500.0);
	assert_int_equal(kb_gpu_frag_delta(&n, TASKP(1000, 1, 1, 600, 0),
					   1u << 2, &w, &delta),
			 -EINVAL);
	n.cpu_milli_free = 6000;
	assert_true(kb_gpu_node_frag(&n, &w) == 1500.0);
	/* a node with nothing idle has no fragmentation */
	for (int i = 0; i < 4; i++)
		n.gpu_milli_free[i] = 0;
	assert_true(kb_gpu_node_frag(&n, &w) == 0.0);
	kb_gpu_workload_release(&w);
	assert_null(w.shapes);
}

/* The stranded term, per shape: with 6 cores free and 2500 idle, A (4
 * cores for 600) feeds 6000 * 600 / 4000 = 900, leaving 1600; B (8 cores for
 * 2000) feeds 1500, leaving 1000; weighted over the GPU shapes:
 * (0.5 * 1600 + 0.25 * 1000) / 0.75 = 1400, added to the 1500 above. At
 * their mean (5 milli-CPU per milli-GPU) the shapes would feed 1200, so the
 * per-shape count is larger, as CPU-heavy A needs more than the mean. */
static void stranded_gpu_counts_as_fragment(void **state)
{
	struct kb_gpu_workload w = example_workload(KB_GPU_WORKLOAD_STRAND);
	const int32_t free[4] = { 1000, 1000, 500, 0 };
	struct kb_gpu_node n = node_with(6000, BIG_MEM, 0, free, 4);

	(void)state;
	assert_true(fabs(kb_gpu_node_frag(&n, &w) - (1500.0 + 1400.0)) < 1e-9);
	n.cpu_milli_free = 32000; /* enough CPU for all idle GPU */
	assert_true(kb_gpu_node_frag(&n, &w) == 1000.0);
	kb_gpu_workload_release(&w);
}

/* Model pressure: half the workload (by GPU) names T4 (model 0), the other
 * half any model; the cluster has 1 T4 GPU and 3 G2 GPUs (model 1). The
 * T4-only half brings 0.5 * 4000 = 2000 milli-GPU to 1000 of T4: pressure
 * 1 (capped); G2 0. An any-model GPU then costs 1000 more on the T4 node
 * than on the G2 node, and scores lower there; the T4-only task, which has
 * no choice, pays nothing. */
static void model_pressure_keeps_scarce_models_for_tasks_that_need_them(void **state)
{
	struct kb_gpu_task tasks[2] = {
		task_of(1000, 1000, 1, 1000, 1u << 0),
		task_of(1000, 1000, 1, 1000, 0),
	};
	const int32_t one[1] = { 1000 }, three[3] = { 1000, 1000, 1000 };
	struct kb_gpu_node nodes[2] = {
		node_with(64000, BIG_MEM, 0, one, 1),
		node_with(64000, BIG_MEM, 1, three, 3),
	};
	struct kb_gpu_workload w;
	double on_t4, on_g2, before, after;
	uint32_t dev;

	(void)state;
	assert_int_equal(kb_gpu_workload_init(tasks, 2, 1.0, 0, &w), 0);
	assert_true(w.pressure[0] == 0.0); /* nothing until the cluster is seen */
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, &nodes[0],
				      &tasks[1], &w, &before, &dev),
			 0);
	assert_int_equal(kb_gpu_workload_set_capacity(&w, nodes, 2), 0);
	assert_true(w.pressure[0] == 1.0);
	assert_true(w.pressure[1] == 0.0);
	assert_true(w.models_present == 3u);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, &nodes[0],
				      &tasks[1], &w, &on_t4, &dev),
			 0);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, &nodes[1],
				      &tasks[1], &w, &on_g2, &dev),
			 0);
	assert_true(on_t4 < before);
	assert_true(on_t4 < on_g2);
	/* the T4-only task scores on the T4 node as without pressure */
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, &nodes[0],
				      &tasks[0], &w, &after, &dev),
			 0);
	{
		struct kb_gpu_workload plain;

		assert_int_equal(kb_gpu_workload_init(tasks, 2, 1.0, 0, &plain), 0);
		assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD,
					      &nodes[0], &tasks[0], &plain,
					      &before, &dev),
				 0);
		assert_true(after == before);
		kb_gpu_workload_release(&plain);
	}
	nodes[0].model = KB_GPU_MODEL_MAX; /* out of range */
	assert_int_equal(kb_gpu_workload_set_capacity(&w, nodes, 2), -EINVAL);
	kb_gpu_workload_release(&w);
}

static void memory_flag_makes_memory_a_constraint_of_shapes(void **state)
{
	struct kb_gpu_task tasks[2] = {
		task_of(1000, 8192, 1, 500, 0),
		task_of(1000, 8192, 1, 500, 0),
	};
	struct kb_gpu_workload plain, mem;
	const int32_t free[1] = { 1000 };
	struct kb_gpu_node n = node_with(8000, 4096, 0, free, 1);

	(void)state;
	assert_int_equal(kb_gpu_workload_init(tasks, 2, 1.0, 0, &plain), 0);
	assert_int_equal(kb_gpu_workload_init(tasks, 2, 1.0,
					      KB_GPU_WORKLOAD_MEMORY, &mem),
			 0);
	assert_true(kb_gpu_node_frag(&n, &plain) == 0.0);
	assert_true(kb_gpu_node_frag(&n, &mem) == 1000.0);
	kb_gpu_workload_release(&plain);
	kb_gpu_workload_release(&mem);
}

static void coverage_keeps_commonest_shapes_renormalised(void **state)
{
	struct kb_gpu_task tasks[4] = {
		task_of(4000, 1, 1, 600, 0), task_of(8000, 1, 2, 1000, 0),
		task_of(4000, 1, 1, 600, 0), task_of(2000, 1, 0, 0, 0),
	};
	struct kb_gpu_workload w;

	(void)state;
	assert_int_equal(kb_gpu_workload_init(tasks, 4, 0.5, 0, &w), 0);
	assert_int_equal(w.count, 1);
	assert_true(w.shapes[0].weight == 1.0);
	kb_gpu_workload_release(&w);
	assert_int_equal(kb_gpu_workload_init(tasks, 0, 1.0, 0, &w), -EINVAL);
	assert_int_equal(kb_gpu_workload_init(tasks, 4, 0.0, 0, &w), -EINVAL);
	assert_int_equal(kb_gpu_workload_init_policy(KB_GPU_POLICY_RANDOM,
						     tasks, 4, &w),
			 -EINVAL);
	assert_int_equal(kb_gpu_workload_init_policy(KB_GPU_POLICY_KUBE_BATCHD,
						     tasks, 4, &w),
			 0);
	assert_int_equal(w.count, 3);
	assert_true(w.flags & KB_GPU_WORKLOAD_STRAND);
	kb_gpu_workload_release(&w);
}

/* ---- scores ------------------------------------------------------------ */

/* Only 600-shares are expected. A 400 share on {1000, 600}: on GPU 0 it
 * leaves {600, 600}, both still usable (delta 0); on GPU 1 (the tightest)
 * it leaves {1000, 200} where 200 is a fragment (delta +200). FGD and
 * kube-batchd keep room for the common shape; Best-fit takes the tightest. */
static void frag_score_keeps_room_for_the_common_shape(void **state)
{
	struct kb_gpu_task sample = task_of(1000, 1, 1, 600, 0);
	struct kb_gpu_workload w;
	const int32_t free[2] = { 1000, 600 };
	struct kb_gpu_node n = node_with(64000, BIG_MEM, 0, free, 2);
	struct kb_gpu_task t = task_of(1000, 1, 1, 400, 0);
	double s;
	uint32_t dev;

	(void)state;
	assert_int_equal(kb_gpu_workload_init(&sample, 1, 1.0, 0, &w), 0);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_FGD, &n, &t, &w, &s, &dev),
			 0);
	assert_int_equal(dev, 1u << 0);
	assert_true(s == 50.0); /* int(100 * sigmoid(0)) */
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, &n, &t, &w,
				      &s, &dev),
			 0);
	assert_int_equal(dev, 1u << 0);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_BESTFIT, &n, &t, NULL, &s,
				      &dev),
			 0);
	assert_int_equal(dev, 1u << 1);
	/* 1 - 0.5 * (63000 / 128000 + 1200 / 8000) */
	assert_true(s > 0.67890625 - 1e-12 && s < 0.67890625 + 1e-12);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_FGD, &n, &t, NULL, &s,
				      &dev),
			 -EINVAL);
	assert_int_equal(kb_gpu_score(KB_GPU_POLICY_FGD, &n,
				      TASKP(1, 1, 3, 1000, 0), &w, &s, &dev),
			 -ENOSPC);
	kb_gpu_workload_release(&w);
}

static void policy_names_round_trip(void **state)
{
	enum kb_gpu_policy p;

	(void)state;
	for (int i = KB_GPU_POLICY_KUBE_BATCHD; i <= KB_GPU_POLICY_RANDOM; i++) {
		const char *name = kb_gpu_policy_name((enum kb_gpu_policy)i);

		assert_non_null(name);
		assert_int_equal(kb_gpu_policy_from_name(name, &p), 0);
		assert_int_equal(p, i);
	}
	assert_string_equal(kb_gpu_policy_name(KB_GPU_POLICY_KUBE_BATCHD),
			    "kube-batchd");
	assert_null(kb_gpu_policy_name((enum kb_gpu_policy)99));
	assert_int_equal(kb_gpu_policy_from_name("first-fit", &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fits_needs_cpu_and_memory),
		cmocka_unit_test(sharing_task_needs_one_gpu_with_enough_free),
		cmocka_unit_test(whole_gpu_task_needs_entirely_free_gpus),
		cmocka_unit_test(task_init_normalises_and_rejects),
		cmocka_unit_test(model_spec_matches_one_name_exactly),
		cmocka_unit_test(model_table_limits),
		cmocka_unit_test(tightest_share_goes_to_least_free_gpu_that_fits),
		cmocka_unit_test(devices_valid_rejects_split_and_overfill),
		cmocka_unit_test(random_placement_never_splits_or_overfills),
		cmocka_unit_test(fragmentation_worked_example),
		cmocka_unit_test(stranded_gpu_counts_as_fragment),
		cmocka_unit_test(model_pressure_keeps_scarce_models_for_tasks_that_need_them),
		cmocka_unit_test(memory_flag_makes_memory_a_constraint_of_shapes),
		cmocka_unit_test(coverage_keeps_commonest_shapes_renormalised),
		cmocka_unit_test(frag_score_keeps_room_for_the_common_shape),
		cmocka_unit_test(policy_names_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

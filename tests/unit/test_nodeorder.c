/* test_nodeorder.c - the "nodeorder" plugin's scores and weights.
 *
 * Each priority scores 0..10; these tests pin exact values on a node of
 * 4 cpu and 8Gi, and the weights read from the plugin's arguments.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/plugins.h"
#include "scheduler/framework.h"

#define CPU(c) ((int64_t)((c) * 1000.0))
#define GIB(g) ((int64_t)((g) * 1024.0 * 1024 * 1024) * 1000)
#define EPS 1e-9

typedef struct fx {
	kb_snapshot snap;
	kb_session ssn;
	kb_node nodes[3];
	kb_task task;
	kb_pod_spec spec;
} fx;

static int setup(void **state)
{
	fx *f = test_calloc(1, sizeof(*f));
	kb_resnames_init(&f->snap.resnames);
	f->snap.nodes = f->nodes;
	f->snap.nnodes = 3;
	f->snap.tasks = &f->task;
	f->snap.ntasks = 1;
	for (int i = 0; i < 3; i++) {
		kb_node *n = &f->nodes[i];
		n->name = i == 0 ? "n0" : i == 1 ? "n1" : "n2";
		n->ready = true;
		n->allocatable.q[KB_RES_CPU] = CPU(4);
		n->allocatable.q[KB_RES_MEMORY] = GIB(8);
		n->allocatable.q[KB_RES_PODS] = 110000;
		n->idle = n->allocatable;
		n->task_head = -1;
	}
	f->task.name = "t";
	f->task.node = -1;
	f->task.node_prev = f->task.node_next = -1;
	f->task.req.q[KB_RES_CPU] = CPU(1);
	f->task.req.q[KB_RES_MEMORY] = GIB(2);
	f->task.req.q[KB_RES_PODS] = 1000;
	f->task.spec = &f->spec;
	kb_arena_init(&f->ssn.arena);
	f->ssn.snap = &f->snap;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	kb_arena_release(&f->ssn.arena);
	test_free(f);
	return 0;
}

static void *open_with(fx *f, const kb_plugin_arg *args, uint32_t nargs)
{
	kb_plugin_conf conf = { .name = "nodeorder", .ops = &kb_plugin_nodeorder,
				.node_order = true, .args = args, .nargs = nargs };
	void *st = NULL;
	kb_err err = { 0 };
	assert_int_equal(kb_plugin_nodeorder.open(&f->ssn, &conf, &st, &err), 0);
	assert_non_null(st);
	return st;
}

static double score(fx *f, void *st, int node)
{
	return kb_plugin_nodeorder.node_order(st, &f->ssn, &f->task, &f->nodes[node]);
}

static void use(kb_node *n, double cpu, double gib)
{
	n->used.q[KB_RES_CPU] = CPU(cpu);
	n->used.q[KB_RES_MEMORY] = GIB(gib);
	n->idle = n->allocatable;
	kb_res_sub(&n->idle, &n->used);
}

/* Only one priority on, weight 1. */
static const kb_plugin_arg only_least[] = {
	{ "leastrequested.weight", "1" },
	{ "mostrequested.weight", "0" },
	{ "balancedresource.weight", "0" },
	{ "nodeaffinity.weight", "0" },
};
static const kb_plugin_arg only_most[] = {
	{ "leastrequested.weight", "0" },
	{ "mostrequested.weight", "1" },
	{ "balancedresource.weight", "0" },
	{ "nodeaffinity.weight", "0" },
};
static const kb_plugin_arg only_balanced[] = {
	{ "leastrequested.weight", "0" },
	{ "mostrequested.weight", "0" },
	{ "balancedresource.weight", "1" },
	{ "nodeaffinity.weight", "0" },
};
static const kb_plugin_arg only_affinity[] = {
	{ "leastrequested.weight", "0" },
	{ "mostrequested.weight", "0" },
	{ "balancedresource.weight", "0" },
	{ "nodeaffinity.weight", "1" },
};

static void least_requested_prefers_emptier_node(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_least, 4);
	use(&f->nodes[0], 2, 4);
	assert_true(score(f, st, 1) > score(f, st, 0));
}

static void least_requested_scores_free_share_after_adding_the_task(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_least, 4);
	/* empty node, task 1 cpu 2Gi: cpu 10*3/4, memory 10*6/8 */
	assert_true(fabs(score(f, st, 1) - 7.5) < EPS);
	/* 1 cpu 2Gi used: cpu 10*2/4 = 5, memory 10*4/8 = 5 */
	use(&f->nodes[0], 1, 2);
	assert_true(fabs(score(f, st, 0) - 5.0) < EPS);
	/* cpu and memory weigh the same: 10*(0/4) and 10*(6/8) */
	use(&f->nodes[2], 3, 0);
	assert_true(fabs(score(f, st, 2) - 3.75) < EPS);
}

static void most_requested_prefers_fuller_node(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_most, 4);
	use(&f->nodes[0], 2, 4);
	assert_true(score(f, st, 0) > score(f, st, 1));
	/* 3 of 4 cpu, 6 of 8Gi after adding the task */
	assert_true(fabs(score(f, st, 0) - 7.5) < EPS);
	assert_true(fabs(score(f, st, 1) - 2.5) < EPS);
}

static void most_requested_is_off_by_default(void **state)
{
	fx *f = *state;
	void *def = open_with(f, NULL, 0);
	void *least = open_with(f, only_least, 4);
	void *bal = open_with(f, only_balanced, 4);
	use(&f->nodes[0], 2, 1);
	for (int n = 0; n < 3; n++)
		assert_true(fabs(score(f, def, n) - score(f, least, n) - score(f, bal, n)) < EPS);
}

static void balanced_resource_prefers_balanced_node(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_balanced, 4);
	/* n0: 2/4 cpu, 4/8 memory after the task: perfectly balanced. */
	use(&f->nodes[0], 1, 2);
	/* n1: 3/4 cpu, 2/8 memory: off by half. */
	use(&f->nodes[1], 2, 0);
	assert_true(fabs(score(f, st, 0) - 10.0) < EPS);
	assert_true(fabs(score(f, st, 1) - 5.0) < EPS);
	assert_true(score(f, st, 0) > score(f, st, 1));
}

static void balanced_resource_scores_zero_when_a_resource_is_full(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_balanced, 4);
	use(&f->nodes[0], 3, 6); /* task fills both exactly */
	assert_true(fabs(score(f, st, 0)) < EPS);
}

static void scores_count_pipelined_tasks_as_requested(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_least, 4);
	f->nodes[0].pipelined.q[KB_RES_CPU] = CPU(1);
	f->nodes[0].pipelined.q[KB_RES_MEMORY] = GIB(2);
	assert_true(fabs(score(f, st, 0) - 5.0) < EPS);
	assert_true(score(f, st, 1) > score(f, st, 0));
}

static void zero_allocatable_node_scores_zero_without_dividing_by_zero(void **state)
{
	fx *f = *state;
	static const kb_plugin_arg all[] = {
		{ "leastrequested.weight", "1" },
		{ "mostrequested.weight", "1" },
		{ "balancedresource.weight", "1" },
	};
	void *st = open_with(f, all, 3);
	memset(&f->nodes[0].allocatable, 0, sizeof(f->nodes[0].allocatable));
	memset(&f->nodes[0].idle, 0, sizeof(f->nodes[0].idle));
	double s = score(f, st, 0);
	assert_true(isfinite(s));
	assert_true(fabs(s) < EPS);
	memset(&f->task.req, 0, sizeof(f->task.req));
	s = score(f, st, 0);
	assert_true(isfinite(s));
	assert_true(fabs(s) < EPS);
}

static void overcommitted_node_scores_zero(void **state)
{
	fx *f = *state;
	static const kb_plugin_arg all[] = {
		{ "leastrequested.weight", "1" },
		{ "mostrequested.weight", "1" },
		{ "balancedresource.weight", "1" },
	};
	void *st = open_with(f, all, 3);
	use(&f->nodes[0], 4, 8);
	assert_true(fabs(score(f, st, 0)) < EPS);
}

static void weights_from_arguments_scale_each_priority(void **state)
{
	fx *f = *state;
	static const kb_plugin_arg w[] = {
		{ "leastrequested.weight", "2" },
		{ "mostrequested.weight", "3" },
		{ "balancedresource.weight", "0.5" },
		{ "nodeaffinity.weight", "4" },
		{ "podaffinity.weight", "7" }, /* not ours: ignored */
	};
	void *st = open_with(f, w, 5);
	void *l = open_with(f, only_least, 4);
	void *m = open_with(f, only_most, 4);
	void *b = open_with(f, only_balanced, 4);
	void *a = open_with(f, only_affinity, 4);
	static const char *const zone_a[] = { "a" };
	static const kb_selector_req req = { .key = "zone", .op = KB_SEL_IN, .values = zone_a,
					     .nvalues = 1 };
	static const kb_preferred_term pref = { 10, { &req, 1 } };
	static const kb_label labels[] = { { "zone", "a" } };
	f->spec.preferred = &pref;
	f->spec.npreferred = 1;
	f->nodes[0].labels.v = labels;
	f->nodes[0].labels.n = 1;
	use(&f->nodes[0], 1.5, 1);
	double want = 2 * score(f, l, 0) + 3 * score(f, m, 0) + 0.5 * score(f, b, 0) +
		      4 * score(f, a, 0);
	assert_true(fabs(score(f, a, 0) - 10.0) < EPS);
	assert_true(fabs(score(f, st, 0) - want) < EPS);
}

static void default_weights_are_least_and_balanced_and_affinity(void **state)
{
	fx *f = *state;
	void *st = open_with(f, NULL, 0);
	/* empty node: least 7.5, balanced 10*(1 - |1/4 - 2/8|) = 10, most off */
	assert_true(fabs(score(f, st, 1) - 17.5) < EPS);
}

static void unparsable_weight_falls_back_to_default(void **state)
{
	fx *f = *state;
	static const kb_plugin_arg bad[] = { { "leastrequested.weight", "heavy" } };
	void *st = open_with(f, bad, 1);
	assert_true(fabs(score(f, st, 1) - 17.5) < EPS);
}

static void node_affinity_sums_matching_preferred_weights(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_affinity, 4);
	static const char *const ssd[] = { "ssd" };
	static const char *const a[] = { "a" };
	static const kb_selector_req disk = { .key = "disk", .op = KB_SEL_IN, .values = ssd,
					      .nvalues = 1 };
	static const kb_selector_req zone = { .key = "zone", .op = KB_SEL_IN, .values = a,
					      .nvalues = 1 };
	static const kb_preferred_term pref[] = {
		{ 30, { &disk, 1 } },
		{ 10, { &zone, 1 } },
		{ 0, { &zone, 1 } },  /* weight 0: ignored */
		{ 50, { NULL, 0 } },  /* empty term: matches nothing */
	};
	static const kb_label both[] = { { "disk", "ssd" }, { "zone", "a" } };
	static const kb_label only_zone[] = { { "zone", "a" } };
	f->spec.preferred = pref;
	f->spec.npreferred = 4;
	f->nodes[0].labels.v = both;
	f->nodes[0].labels.n = 2;
	f->nodes[1].labels.v = only_zone;
	f->nodes[1].labels.n = 1;
	/* normalised by the sum of all positive weights (90) */
	assert_true(fabs(score(f, st, 0) - 10.0 * 40 / 90) < EPS);
	assert_true(fabs(score(f, st, 1) - 10.0 * 10 / 90) < EPS);
	assert_true(fabs(score(f, st, 2)) < EPS);
}

static void node_affinity_without_preferences_scores_zero(void **state)
{
	fx *f = *state;
	void *st = open_with(f, only_affinity, 4);
	assert_true(fabs(score(f, st, 0)) < EPS);
	f->task.spec = NULL;
	assert_true(fabs(score(f, st, 0)) < EPS);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(least_requested_prefers_emptier_node),
		T(least_requested_scores_free_share_after_adding_the_task),
		T(most_requested_prefers_fuller_node),
		T(most_requested_is_off_by_default),
		T(balanced_resource_prefers_balanced_node),
		T(balanced_resource_scores_zero_when_a_resource_is_full),
		T(scores_count_pipelined_tasks_as_requested),
		T(zero_allocatable_node_scores_zero_without_dividing_by_zero),
		T(overcommitted_node_scores_zero),
		T(weights_from_arguments_scale_each_priority),
		T(default_weights_are_least_and_balanced_and_affinity),
		T(unparsable_weight_falls_back_to_default),
		T(node_affinity_sums_matching_preferred_weights),
		T(node_affinity_without_preferences_scores_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_predicates.c - a node's fit as every action sees it: the framework's
 * own node fit (ready, cordon, pod slots, resources: kb_node_fits) and then
 * the "predicates" plugin (selectors, taints, ports), in that order as
 * kb_predicate runs them; and the selector and taint helpers of api/labels.
 *
 * Each test builds a small snapshot by hand (nodes and tasks arrays, node
 * accounting set directly) and a session pointing at it, then asks the
 * framework's node fit and the plugin through its callback table, as the
 * framework would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/plugins.h"
#include "api/labels.h"
#include "plugins/predicates.h"
#include "scheduler/framework.h"

#define CPU(c) ((int64_t)(c) * 1000)
#define GIB(g) ((int64_t)(g) * 1024 * 1024 * 1024 * 1000)
#define PODS(n) ((int64_t)(n) * 1000)
#define GPU_RES 3

typedef struct fx {
	kb_snapshot snap;
	kb_session ssn;
	kb_node nodes[4];
	kb_task tasks[8];
	kb_pod_spec specs[8];
	void *state;
	bool opened;
} fx;

static int setup(void **state)
{
	fx *f = test_calloc(1, sizeof(*f));
	kb_resnames_init(&f->snap.resnames);
	assert_int_equal(kb_resnames_intern(&f->snap.resnames, "nvidia.com/gpu"), GPU_RES);
	f->snap.nodes = f->nodes;
	f->snap.nnodes = 1;
	f->snap.tasks = f->tasks;
	f->snap.ntasks = 1;
	f->snap.gpu_res = GPU_RES;
	for (int i = 0; i < 4; i++) {
		kb_node *n = &f->nodes[i];
		n->name = i == 0 ? "n0" : i == 1 ? "n1" : i == 2 ? "n2" : "n3";
		n->ready = true;
		n->allocatable.q[KB_RES_CPU] = CPU(4);
		n->allocatable.q[KB_RES_MEMORY] = GIB(8);
		n->allocatable.q[KB_RES_PODS] = PODS(110);
		n->idle = n->allocatable;
		n->task_head = -1;
	}
	for (int i = 0; i < 8; i++) {
		kb_task *t = &f->tasks[i];
		t->name = "t";
		t->job = -1;
		t->node = -1;
		t->node_prev = t->node_next = -1;
		t->status = KB_TASK_PENDING;
		t->req.q[KB_RES_CPU] = CPU(1);
		t->req.q[KB_RES_MEMORY] = GIB(1);
		t->req.q[KB_RES_PODS] = PODS(1);
		t->spec = &f->specs[i];
	}
	kb_arena_init(&f->ssn.arena);
	f->ssn.snap = &f->snap;
	for (int i = 0; i < KB_RES_MAX; i++) /* what kb_session_open names them */
		f->ssn.insufficient[i] = i == KB_RES_CPU	      ? "Insufficient cpu"
					 : i == KB_RES_MEMORY ? "Insufficient memory"
					 : i == GPU_RES	      ? "Insufficient nvidia.com/gpu"
							      : "Insufficient resources";
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

static void open_plugin(fx *f, const kb_plugin_conf *conf)
{
	kb_plugin_conf none = { .name = "predicates", .ops = &kb_plugin_predicates };
	kb_err err = { 0 };
	assert_int_equal(kb_plugin_predicates.open(&f->ssn, conf ? conf : &none, &f->state, &err),
			 0);
	f->opened = true;
}

/* Runs the framework's node fit, then the plugin's predicate (opening it
 * first if needed), as kb_predicate does; returns the reason, or NULL when
 * the task fits. */
static const char *check(fx *f, int task, int node)
{
	if (!f->opened)
		open_plugin(f, NULL);
	const char *reason = NULL;
	int r = kb_node_fits(&f->ssn, &f->tasks[task], &f->nodes[node], &reason);
	if (r == KB_FIT_OK)
		r = kb_plugin_predicates.predicate(f->state, &f->ssn, &f->tasks[task],
						   &f->nodes[node], &reason);
	if (r == KB_FIT_OK) {
		assert_null(reason);
		return NULL;
	}
	assert_int_equal(r, KB_FIT_FAIL);
	assert_non_null(reason);
	return reason;
}

/* Puts task t on node n in status st and accounts it as the session would. */
static void place(fx *f, int t, int n, kb_task_status st)
{
	kb_task *task = &f->tasks[t];
	kb_node *node = &f->nodes[n];
	task->node = n;
	task->status = st;
	task->node_prev = -1;
	task->node_next = node->task_head;
	if (node->task_head >= 0)
		f->tasks[node->task_head].node_prev = t;
	node->task_head = t;
	node->ntasks++;
	if ((uint32_t)t >= f->snap.ntasks)
		f->snap.ntasks = (uint32_t)t + 1;
	if (st == KB_TASK_PIPELINED) {
		kb_res_add(&node->pipelined, &task->req);
		return;
	}
	if (kb_task_status_on_node(st)) {
		kb_res_add(&node->used, &task->req);
		kb_res_sub(&node->idle, &task->req);
	}
	if (st == KB_TASK_RELEASING)
		kb_res_add(&node->releasing, &task->req);
}

/* ---- node state ------------------------------------------------------------------ */

static void predicate_accepts_task_that_fits_empty_node(void **state)
{
	fx *f = *state;
	assert_null(check(f, 0, 0));
}

static void predicate_rejects_node_not_ready(void **state)
{
	fx *f = *state;
	f->nodes[0].ready = false;
	assert_string_equal(check(f, 0, 0), "node(s) were not ready");
}

static void predicate_reports_not_ready_before_unschedulable_and_resources(void **state)
{
	fx *f = *state;
	f->nodes[0].ready = false;
	f->nodes[0].unschedulable = true;
	f->tasks[0].req.q[KB_RES_CPU] = CPU(100);
	assert_string_equal(check(f, 0, 0), "node(s) were not ready");
}

static void predicate_rejects_cordoned_node(void **state)
{
	fx *f = *state;
	f->nodes[0].unschedulable = true;
	assert_string_equal(check(f, 0, 0), "node(s) were unschedulable");
}

static void predicate_accepts_cordoned_node_when_unschedulable_taint_tolerated(void **state)
{
	fx *f = *state;
	static const kb_toleration tol[] = {
		{ .key = "node.kubernetes.io/unschedulable", .exists = true,
		  .effect = KB_EFFECT_NO_SCHEDULE },
	};
	f->nodes[0].unschedulable = true;
	f->specs[0].tolerations = tol;
	f->specs[0].ntolerations = 1;
	assert_null(check(f, 0, 0));
}

static void predicate_rejects_cordoned_node_when_toleration_is_for_another_effect(void **state)
{
	fx *f = *state;
	static const kb_toleration tol[] = {
		{ .key = "node.kubernetes.io/unschedulable", .exists = true,
		  .effect = KB_EFFECT_NO_EXECUTE },
	};
	f->nodes[0].unschedulable = true;
	f->specs[0].tolerations = tol;
	f->specs[0].ntolerations = 1;
	assert_string_equal(check(f, 0, 0), "node(s) were unschedulable");
}

/* ---- resources ------------------------------------------------------------------- */

static void predicate_rejects_insufficient_cpu(void **state)
{
	fx *f = *state;
	f->tasks[0].req.q[KB_RES_CPU] = CPU(5);
	assert_string_equal(check(f, 0, 0), "Insufficient cpu");
}

static void predicate_rejects_insufficient_memory(void **state)
{
	fx *f = *state;
	f->nodes[0].idle.q[KB_RES_MEMORY] = GIB(1) - 1;
	assert_string_equal(check(f, 0, 0), "Insufficient memory");
}

static void predicate_accepts_request_equal_to_idle(void **state)
{
	fx *f = *state;
	f->tasks[0].req.q[KB_RES_CPU] = CPU(4);
	f->tasks[0].req.q[KB_RES_MEMORY] = GIB(8);
	assert_null(check(f, 0, 0));
}

static void predicate_rejects_when_pod_slots_exhausted(void **state)
{
	fx *f = *state;
	f->nodes[0].idle.q[KB_RES_PODS] = 0;
	assert_string_equal(check(f, 0, 0), "Too many pods");
}

static void predicate_reports_pod_count_before_cpu(void **state)
{
	fx *f = *state;
	f->nodes[0].idle.q[KB_RES_PODS] = 0;
	f->tasks[0].req.q[KB_RES_CPU] = CPU(100);
	assert_string_equal(check(f, 0, 0), "Too many pods");
}

static void predicate_counts_a_pod_slot_even_without_pods_request(void **state)
{
	fx *f = *state;
	f->tasks[0].req.q[KB_RES_PODS] = 0;
	f->nodes[0].idle.q[KB_RES_PODS] = 0;
	assert_string_equal(check(f, 0, 0), "Too many pods");
	f->nodes[0].idle.q[KB_RES_PODS] = PODS(1);
	assert_null(check(f, 0, 0));
}

static void predicate_rejects_insufficient_extended_resource(void **state)
{
	fx *f = *state;
	f->tasks[0].req.q[GPU_RES] = 2000;
	assert_string_equal(check(f, 0, 0), "Insufficient nvidia.com/gpu");
	f->nodes[0].allocatable.q[GPU_RES] = 8000;
	f->nodes[0].idle.q[GPU_RES] = 1000;
	assert_string_equal(check(f, 0, 0), "Insufficient nvidia.com/gpu");
	f->nodes[0].idle.q[GPU_RES] = 2000;
	assert_null(check(f, 0, 0));
}

static void predicate_ignores_resources_the_task_does_not_request(void **state)
{
	fx *f = *state;
	/* Over-committed memory must not block a task that asks for none. */
	f->nodes[0].idle.q[KB_RES_MEMORY] = -GIB(1);
	f->tasks[0].req.q[KB_RES_MEMORY] = 0;
	assert_null(check(f, 0, 0));
}

static void predicate_counts_releasing_as_future_idle(void **state)
{
	fx *f = *state;
	/* A running task of 3 cpu being evicted leaves 1 idle, 4 in the future. */
	f->tasks[1].req.q[KB_RES_CPU] = CPU(3);
	place(f, 1, 0, KB_TASK_RELEASING);
	f->tasks[0].req.q[KB_RES_CPU] = CPU(4);
	assert_int_equal(f->nodes[0].idle.q[KB_RES_CPU], CPU(1));
	assert_null(check(f, 0, 0));
	f->tasks[0].req.q[KB_RES_CPU] = CPU(4) + 1;
	assert_string_equal(check(f, 0, 0), "Insufficient cpu");
}

static void predicate_subtracts_pipelined_from_future_idle(void **state)
{
	fx *f = *state;
	f->tasks[1].req.q[KB_RES_CPU] = CPU(3);
	place(f, 1, 0, KB_TASK_RELEASING);
	f->tasks[2].req.q[KB_RES_CPU] = CPU(2);
	place(f, 2, 0, KB_TASK_PIPELINED);
	/* future = 1 idle + 3 releasing - 2 pipelined = 2 */
	f->tasks[0].req.q[KB_RES_CPU] = CPU(2);
	assert_null(check(f, 0, 0));
	f->tasks[0].req.q[KB_RES_CPU] = CPU(3);
	assert_string_equal(check(f, 0, 0), "Insufficient cpu");
}

static void predicate_lets_best_effort_task_in_with_only_a_pod_slot(void **state)
{
	fx *f = *state;
	kb_task *t = &f->tasks[0];
	memset(&t->req, 0, sizeof(t->req));
	t->req.q[KB_RES_PODS] = PODS(1);
	t->best_effort = true;
	memset(&f->nodes[0].idle, 0, sizeof(f->nodes[0].idle));
	f->nodes[0].idle.q[KB_RES_CPU] = -CPU(1);
	f->nodes[0].idle.q[KB_RES_PODS] = PODS(1);
	assert_null(check(f, 0, 0));
	f->nodes[0].idle.q[KB_RES_PODS] = 0;
	assert_string_equal(check(f, 0, 0), "Too many pods");
}

/* ---- node selector and required affinity ----------------------------------------- */

static const kb_label node_labels[] = {
	{ "disk", "ssd" },
	{ "gpus", "8" },
	{ "zone", "a" },
};

static void label_node(kb_node *n)
{
	n->labels.v = node_labels;
	n->labels.n = 3;
}

static void node_selector_requires_every_label(void **state)
{
	fx *f = *state;
	kb_pod_spec spec = { 0 };
	kb_label sel[] = { { "disk", "ssd" }, { "zone", "a" } };
	label_node(&f->nodes[0]);
	spec.node_selector.v = sel;
	spec.node_selector.n = 2;
	assert_true(kb_match_node_selector(&spec, &f->nodes[0]));
	sel[1].value = "b";
	assert_false(kb_match_node_selector(&spec, &f->nodes[0]));
	sel[1].key = "rack";
	sel[1].value = "a";
	assert_false(kb_match_node_selector(&spec, &f->nodes[0]));
	assert_true(kb_match_node_selector(NULL, &f->nodes[0]));
}

static bool match_one(const kb_node *n, const char *key, kb_selector_op op,
		      const char *const *values, uint32_t nvalues, bool field)
{
	kb_selector_req req = { .key = key, .op = op, .field = field, .values = values,
				.nvalues = nvalues };
	kb_selector_term term = { .reqs = &req, .n = 1 };
	kb_pod_spec spec = { .required = &term, .nrequired = 1 };
	bool a = kb_match_selector_term(&term, n);
	assert_int_equal(a, kb_match_node_selector(&spec, n));
	return a;
}

static void required_affinity_in_and_not_in(void **state)
{
	fx *f = *state;
	kb_node *n = &f->nodes[0];
	static const char *const ab[] = { "b", "a" };
	static const char *const bc[] = { "b", "c" };
	label_node(n);
	assert_true(match_one(n, "zone", KB_SEL_IN, ab, 2, false));
	assert_false(match_one(n, "zone", KB_SEL_IN, bc, 2, false));
	assert_false(match_one(n, "rack", KB_SEL_IN, ab, 2, false));
	assert_false(match_one(n, "zone", KB_SEL_NOT_IN, ab, 2, false));
	assert_true(match_one(n, "zone", KB_SEL_NOT_IN, bc, 2, false));
	/* NotIn holds when the label is absent. */
	assert_true(match_one(n, "rack", KB_SEL_NOT_IN, ab, 2, false));
}

static void required_affinity_exists_and_does_not_exist(void **state)
{
	fx *f = *state;
	kb_node *n = &f->nodes[0];
	label_node(n);
	assert_true(match_one(n, "disk", KB_SEL_EXISTS, NULL, 0, false));
	assert_false(match_one(n, "rack", KB_SEL_EXISTS, NULL, 0, false));
	assert_false(match_one(n, "disk", KB_SEL_DOES_NOT_EXIST, NULL, 0, false));
	assert_true(match_one(n, "rack", KB_SEL_DOES_NOT_EXIST, NULL, 0, false));
}

static void required_affinity_gt_and_lt_compare_integers(void **state)
{
	fx *f = *state;
	kb_node *n = &f->nodes[0];
	static const char *const four[] = { "4" };
	static const char *const eight[] = { "8" };
	static const char *const ten[] = { "10" };
	static const char *const two[] = { "4", "10" };
	static const char *const word[] = { "x" };
	label_node(n); /* gpus=8 */
	assert_true(match_one(n, "gpus", KB_SEL_GT, four, 1, false));
	assert_false(match_one(n, "gpus", KB_SEL_GT, eight, 1, false));
	assert_false(match_one(n, "gpus", KB_SEL_GT, ten, 1, false));
	assert_true(match_one(n, "gpus", KB_SEL_LT, ten, 1, false));
	assert_false(match_one(n, "gpus", KB_SEL_LT, eight, 1, false));
	assert_false(match_one(n, "gpus", KB_SEL_LT, four, 1, false));
	/* Numbers compare as numbers, not strings ("8" > "10" as text). */
	assert_false(match_one(n, "gpus", KB_SEL_GT, ten, 1, false));
	/* Exactly one numeric value, on a label that exists and is numeric. */
	assert_false(match_one(n, "gpus", KB_SEL_GT, two, 2, false));
	assert_false(match_one(n, "gpus", KB_SEL_GT, word, 1, false));
	assert_false(match_one(n, "zone", KB_SEL_GT, four, 1, false));
	assert_false(match_one(n, "rack", KB_SEL_LT, ten, 1, false));
}

static void required_affinity_match_fields_on_node_name(void **state)
{
	fx *f = *state;
	kb_node *n = &f->nodes[0]; /* "n0" */
	static const char *const mine[] = { "n0" };
	static const char *const other[] = { "n1" };
	assert_true(match_one(n, "metadata.name", KB_SEL_IN, mine, 1, true));
	assert_false(match_one(n, "metadata.name", KB_SEL_IN, other, 1, true));
	assert_true(match_one(n, "metadata.name", KB_SEL_NOT_IN, other, 1, true));
	assert_false(match_one(n, "metadata.name", KB_SEL_NOT_IN, mine, 1, true));
	/* A field is not a label: a label named metadata.name does not count. */
	static const kb_label l[] = { { "metadata.name", "n1" } };
	n->labels.v = l;
	n->labels.n = 1;
	assert_false(match_one(n, "metadata.name", KB_SEL_IN, other, 1, true));
	assert_false(match_one(n, "metadata.namespace", KB_SEL_IN, mine, 1, true));
}

static void required_affinity_terms_are_ored_and_requirements_anded(void **state)
{
	fx *f = *state;
	kb_node *n = &f->nodes[0];
	static const char *const ssd[] = { "ssd" };
	static const char *const b[] = { "b" };
	static const char *const a[] = { "a" };
	label_node(n);
	kb_selector_req t0[] = {
		{ .key = "disk", .op = KB_SEL_IN, .values = ssd, .nvalues = 1 },
		{ .key = "zone", .op = KB_SEL_IN, .values = b, .nvalues = 1 },
	};
	kb_selector_req t1[] = {
		{ .key = "zone", .op = KB_SEL_IN, .values = a, .nvalues = 1 },
		{ .key = "rack", .op = KB_SEL_EXISTS },
	};
	kb_selector_term terms[] = { { t0, 2 }, { t1, 2 } };
	kb_pod_spec spec = { .required = terms, .nrequired = 2 };
	/* term 0: zone=b fails; term 1: rack missing. */
	assert_false(kb_match_node_selector(&spec, n));
	t1[1].op = KB_SEL_DOES_NOT_EXIST;
	assert_true(kb_match_node_selector(&spec, n));
	t1[1].op = KB_SEL_EXISTS;
	t0[1].values = a;
	assert_true(kb_match_node_selector(&spec, n));
}

static void required_affinity_empty_term_matches_nothing(void **state)
{
	fx *f = *state;
	kb_selector_term empty = { NULL, 0 };
	kb_pod_spec spec = { .required = &empty, .nrequired = 1 };
	label_node(&f->nodes[0]);
	assert_false(kb_match_selector_term(&empty, &f->nodes[0]));
	assert_false(kb_match_node_selector(&spec, &f->nodes[0]));
	spec.nrequired = 0;
	assert_true(kb_match_node_selector(&spec, &f->nodes[0]));
}

static void predicate_rejects_node_selector_mismatch(void **state)
{
	fx *f = *state;
	static const kb_label sel[] = { { "zone", "b" } };
	label_node(&f->nodes[0]);
	f->specs[0].node_selector.v = sel;
	f->specs[0].node_selector.n = 1;
	assert_string_equal(check(f, 0, 0), "node(s) didn't match Pod's node affinity/selector");
}

static void predicate_rejects_required_affinity_mismatch(void **state)
{
	fx *f = *state;
	static const char *const b[] = { "b" };
	static const kb_selector_req req = { .key = "zone", .op = KB_SEL_IN, .values = b,
					     .nvalues = 1 };
	static const kb_selector_term term = { &req, 1 };
	label_node(&f->nodes[0]);
	f->specs[0].required = &term;
	f->specs[0].nrequired = 1;
	assert_string_equal(check(f, 0, 0), "node(s) didn't match Pod's node affinity/selector");
}

static void predicate_reports_resources_before_selector(void **state)
{
	fx *f = *state;
	static const kb_label sel[] = { { "zone", "b" } };
	label_node(&f->nodes[0]);
	f->specs[0].node_selector.v = sel;
	f->specs[0].node_selector.n = 1;
	f->tasks[0].req.q[KB_RES_MEMORY] = GIB(9);
	assert_string_equal(check(f, 0, 0), "Insufficient memory");
}

/* ---- taints and tolerations ------------------------------------------------------ */

static const kb_taint taints[] = {
	{ "dedicated", "gpu", KB_EFFECT_NO_SCHEDULE },
	{ "soft", "", KB_EFFECT_PREFER_NO_SCHEDULE },
	{ "evict", "now", KB_EFFECT_NO_EXECUTE },
};

static void predicate_rejects_untolerated_noschedule_taint(void **state)
{
	fx *f = *state;
	f->nodes[0].taints = &taints[0];
	f->nodes[0].ntaints = 1;
	assert_string_equal(check(f, 0, 0), "node(s) had untolerated taint {dedicated: gpu}");
}

static void predicate_rejects_untolerated_noexecute_taint(void **state)
{
	fx *f = *state;
	f->nodes[0].taints = &taints[1];
	f->nodes[0].ntaints = 2;
	assert_string_equal(check(f, 0, 0), "node(s) had untolerated taint {evict: now}");
}

static void prefer_no_schedule_taint_never_blocks(void **state)
{
	fx *f = *state;
	f->nodes[0].taints = &taints[1];
	f->nodes[0].ntaints = 1;
	assert_null(check(f, 0, 0));
	assert_true(kb_tolerates_taints(&f->specs[0], &f->nodes[0], NULL));
}

static void predicate_reports_selector_before_taint(void **state)
{
	fx *f = *state;
	static const kb_label sel[] = { { "zone", "b" } };
	f->nodes[0].taints = taints;
	f->nodes[0].ntaints = 3;
	f->specs[0].node_selector.v = sel;
	f->specs[0].node_selector.n = 1;
	assert_string_equal(check(f, 0, 0), "node(s) didn't match Pod's node affinity/selector");
}

static void tolerates_taints_reports_first_untolerated_taint(void **state)
{
	fx *f = *state;
	static const kb_toleration tol[] = {
		{ .key = "dedicated", .value = "gpu", .effect = KB_EFFECT_NO_SCHEDULE },
	};
	const kb_taint *bad = NULL;
	f->nodes[0].taints = taints;
	f->nodes[0].ntaints = 3;
	assert_false(kb_tolerates_taints(&f->specs[0], &f->nodes[0], &bad));
	assert_ptr_equal(bad, &taints[0]);
	f->specs[0].tolerations = tol;
	f->specs[0].ntolerations = 1;
	bad = NULL;
	assert_false(kb_tolerates_taints(&f->specs[0], &f->nodes[0], &bad));
	assert_ptr_equal(bad, &taints[2]);
	assert_false(kb_tolerates_taints(NULL, &f->nodes[0], NULL));
}

static void toleration_equal_needs_same_key_and_value(void **state)
{
	fx *f = *state;
	kb_toleration tol = { .key = "dedicated", .value = "cpu", .effect = KB_EFFECT_NO_SCHEDULE };
	f->specs[0].tolerations = &tol;
	f->specs[0].ntolerations = 1;
	assert_false(kb_tolerates_taint(&f->specs[0], &taints[0]));
	tol.value = "gpu";
	assert_true(kb_tolerates_taint(&f->specs[0], &taints[0]));
	tol.key = "dedicate";
	assert_false(kb_tolerates_taint(&f->specs[0], &taints[0]));
}

static void toleration_exists_ignores_value(void **state)
{
	fx *f = *state;
	kb_toleration tol = { .key = "dedicated", .exists = true, .effect = KB_EFFECT_NO_SCHEDULE };
	f->specs[0].tolerations = &tol;
	f->specs[0].ntolerations = 1;
	assert_true(kb_tolerates_taint(&f->specs[0], &taints[0]));
	assert_false(kb_tolerates_taint(&f->specs[0], &taints[2]));
}

static void toleration_exists_with_empty_key_tolerates_everything(void **state)
{
	fx *f = *state;
	static const kb_toleration tol = { .key = "", .exists = true, .effect = KB_EFFECT_ALL };
	f->specs[0].tolerations = &tol;
	f->specs[0].ntolerations = 1;
	f->nodes[0].taints = taints;
	f->nodes[0].ntaints = 3;
	f->nodes[0].unschedulable = true;
	assert_null(check(f, 0, 0));
}

static void toleration_effect_must_match_unless_all(void **state)
{
	fx *f = *state;
	kb_toleration tol = { .key = "evict", .value = "now", .effect = KB_EFFECT_NO_SCHEDULE };
	f->specs[0].tolerations = &tol;
	f->specs[0].ntolerations = 1;
	f->nodes[0].taints = &taints[2];
	f->nodes[0].ntaints = 1;
	assert_string_equal(check(f, 0, 0), "node(s) had untolerated taint {evict: now}");
	tol.effect = KB_EFFECT_NO_EXECUTE;
	assert_null(check(f, 0, 0));
	tol.effect = KB_EFFECT_ALL;
	assert_null(check(f, 0, 0));
}

static void taint_reason_is_built_once_per_taint(void **state)
{
	fx *f = *state;
	f->nodes[0].taints = &taints[0];
	f->nodes[0].ntaints = 1;
	f->nodes[1].taints = &taints[2];
	f->nodes[1].ntaints = 1;
	f->snap.nnodes = 2;
	const char *a = check(f, 0, 0);
	const char *b = check(f, 0, 0);
	const char *c = check(f, 0, 1);
	assert_ptr_equal(a, b);
	assert_string_equal(a, "node(s) had untolerated taint {dedicated: gpu}");
	assert_string_equal(c, "node(s) had untolerated taint {evict: now}");
	size_t used = f->ssn.arena.allocated;
	for (int i = 0; i < 100; i++)
		check(f, 0, 1);
	assert_int_equal(f->ssn.arena.allocated, used);
}

static void taint_reason_works_for_a_node_outside_the_snapshot(void **state)
{
	fx *f = *state;
	kb_node copy = f->nodes[0];
	open_plugin(f, NULL);
	copy.taints = &taints[0];
	copy.ntaints = 1;
	const char *reason = NULL;
	assert_int_equal(kb_plugin_predicates.predicate(f->state, &f->ssn, &f->tasks[0], &copy,
							&reason),
			 KB_FIT_FAIL);
	assert_string_equal(reason, "node(s) had untolerated taint {dedicated: gpu}");
}

/* ---- host ports ------------------------------------------------------------------ */

static void set_ports(fx *f, int t, const kb_host_port *p, uint32_t n)
{
	f->specs[t].host_ports = p;
	f->specs[t].nhost_ports = n;
}

static void host_port_conflicts_on_same_protocol_and_port(void **state)
{
	fx *f = *state;
	static const kb_host_port mine[] = { { "", 8080, KB_PROTO_TCP } };
	static const kb_host_port theirs[] = { { "", 9090, KB_PROTO_TCP },
					       { "", 8080, KB_PROTO_TCP } };
	set_ports(f, 0, mine, 1);
	set_ports(f, 1, theirs, 2);
	place(f, 1, 0, KB_TASK_RUNNING);
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	assert_string_equal(check(f, 0, 0),
			    "node(s) didn't have free ports for the requested pod ports");
	/* Another node is free. */
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[1]));
}

static void host_port_on_another_protocol_is_free(void **state)
{
	fx *f = *state;
	static const kb_host_port mine[] = { { "", 53, KB_PROTO_UDP } };
	static const kb_host_port tcp[] = { { "", 53, KB_PROTO_TCP } };
	static const kb_host_port sctp[] = { { "", 53, KB_PROTO_SCTP } };
	static const kb_host_port udp[] = { { "", 53, KB_PROTO_UDP } };
	set_ports(f, 0, mine, 1);
	set_ports(f, 1, tcp, 1);
	set_ports(f, 2, sctp, 1);
	place(f, 1, 0, KB_TASK_RUNNING);
	place(f, 2, 0, KB_TASK_BOUND);
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	set_ports(f, 2, udp, 1);
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
}

static void host_port_conflicts_by_ip(void **state)
{
	fx *f = *state;
	kb_host_port mine[] = { { "10.0.0.1", 80, KB_PROTO_TCP } };
	kb_host_port theirs[] = { { "10.0.0.2", 80, KB_PROTO_TCP } };
	set_ports(f, 0, mine, 1);
	set_ports(f, 1, theirs, 1);
	place(f, 1, 0, KB_TASK_RUNNING);
	/* Two different specific addresses do not conflict. */
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	/* The same address does. */
	theirs[0].ip = "10.0.0.1";
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	/* Every-address on either side does. */
	theirs[0].ip = "0.0.0.0";
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	theirs[0].ip = "10.0.0.2";
	mine[0].ip = "";
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	mine[0].ip = "0.0.0.0";
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	mine[0].ip = NULL;
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
}

static void host_port_counts_only_tasks_holding_the_node(void **state)
{
	fx *f = *state;
	static const kb_host_port p[] = { { "", 80, KB_PROTO_TCP } };
	set_ports(f, 0, p, 1);
	set_ports(f, 1, p, 1);
	place(f, 1, 0, KB_TASK_SUCCEEDED);
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	static const kb_task_status holding[] = { KB_TASK_ALLOCATED, KB_TASK_PIPELINED,
						  KB_TASK_BINDING,   KB_TASK_BOUND,
						  KB_TASK_RUNNING,   KB_TASK_RELEASING };
	for (size_t i = 0; i < sizeof(holding) / sizeof(holding[0]); i++) {
		f->tasks[1].status = holding[i];
		assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	}
	f->tasks[1].status = KB_TASK_FAILED;
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
}

static void host_port_conflicts_with_foreign_pod_deep_in_the_list(void **state)
{
	fx *f = *state;
	static const kb_host_port p[] = { { "", 443, KB_PROTO_TCP } };
	f->snap.ntasks = 5;
	set_ports(f, 0, p, 1);
	set_ports(f, 1, p, 1);
	f->tasks[1].foreign = true;
	place(f, 1, 0, KB_TASK_RUNNING);
	place(f, 2, 0, KB_TASK_RUNNING);
	place(f, 3, 0, KB_TASK_RUNNING);
	assert_int_equal(f->nodes[0].task_head, 3);
	assert_false(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
}

static void host_port_does_not_conflict_with_itself_or_port_zero(void **state)
{
	fx *f = *state;
	static const kb_host_port p[] = { { "", 80, KB_PROTO_TCP } };
	static const kb_host_port zero[] = { { "", 0, KB_PROTO_TCP } };
	set_ports(f, 0, p, 1);
	place(f, 0, 0, KB_TASK_ALLOCATED);
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[0], &f->nodes[0]));
	set_ports(f, 1, zero, 1);
	set_ports(f, 2, zero, 1);
	place(f, 2, 0, KB_TASK_RUNNING);
	assert_true(kb_host_ports_free(&f->snap, &f->tasks[1], &f->nodes[0]));
}

static void predicate_reports_taint_before_ports(void **state)
{
	fx *f = *state;
	static const kb_host_port p[] = { { "", 80, KB_PROTO_TCP } };
	set_ports(f, 0, p, 1);
	set_ports(f, 1, p, 1);
	place(f, 1, 0, KB_TASK_RUNNING);
	f->nodes[0].taints = &taints[0];
	f->nodes[0].ntaints = 1;
	assert_string_equal(check(f, 0, 0), "node(s) had untolerated taint {dedicated: gpu}");
}

/* ---- arguments and spec edge cases ----------------------------------------------- */

static void predicates_accept_and_ignore_unknown_arguments(void **state)
{
	fx *f = *state;
	static const kb_plugin_arg args[] = { { "predicate.GPUSharingEnable", "true" },
					      { "whatever", "1" } };
	kb_plugin_conf conf = { .name = "predicates", .ops = &kb_plugin_predicates,
				.predicate = true, .args = args, .nargs = 2 };
	open_plugin(f, &conf);
	assert_null(check(f, 0, 0));
}

static void predicate_treats_missing_spec_as_empty(void **state)
{
	fx *f = *state;
	f->tasks[0].spec = NULL;
	assert_null(check(f, 0, 0));
	f->nodes[0].taints = &taints[0];
	f->nodes[0].ntaints = 1;
	assert_string_equal(check(f, 0, 0), "node(s) had untolerated taint {dedicated: gpu}");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(predicate_accepts_task_that_fits_empty_node),
		T(predicate_rejects_node_not_ready),
		T(predicate_reports_not_ready_before_unschedulable_and_resources),
		T(predicate_rejects_cordoned_node),
		T(predicate_accepts_cordoned_node_when_unschedulable_taint_tolerated),
		T(predicate_rejects_cordoned_node_when_toleration_is_for_another_effect),
		T(predicate_rejects_insufficient_cpu),
		T(predicate_rejects_insufficient_memory),
		T(predicate_accepts_request_equal_to_idle),
		T(predicate_rejects_when_pod_slots_exhausted),
		T(predicate_reports_pod_count_before_cpu),
		T(predicate_counts_a_pod_slot_even_without_pods_request),
		T(predicate_rejects_insufficient_extended_resource),
		T(predicate_ignores_resources_the_task_does_not_request),
		T(predicate_counts_releasing_as_future_idle),
		T(predicate_subtracts_pipelined_from_future_idle),
		T(predicate_lets_best_effort_task_in_with_only_a_pod_slot),
		T(node_selector_requires_every_label),
		T(required_affinity_in_and_not_in),
		T(required_affinity_exists_and_does_not_exist),
		T(required_affinity_gt_and_lt_compare_integers),
		T(required_affinity_match_fields_on_node_name),
		T(required_affinity_terms_are_ored_and_requirements_anded),
		T(required_affinity_empty_term_matches_nothing),
		T(predicate_rejects_node_selector_mismatch),
		T(predicate_rejects_required_affinity_mismatch),
		T(predicate_reports_resources_before_selector),
		T(predicate_rejects_untolerated_noschedule_taint),
		T(predicate_rejects_untolerated_noexecute_taint),
		T(prefer_no_schedule_taint_never_blocks),
		T(predicate_reports_selector_before_taint),
		T(tolerates_taints_reports_first_untolerated_taint),
		T(toleration_equal_needs_same_key_and_value),
		T(toleration_exists_ignores_value),
		T(toleration_exists_with_empty_key_tolerates_everything),
		T(toleration_effect_must_match_unless_all),
		T(taint_reason_is_built_once_per_taint),
		T(taint_reason_works_for_a_node_outside_the_snapshot),
		T(host_port_conflicts_on_same_protocol_and_port),
		T(host_port_on_another_protocol_is_free),
		T(host_port_conflicts_by_ip),
		T(host_port_counts_only_tasks_holding_the_node),
		T(host_port_conflicts_with_foreign_pod_deep_in_the_list),
		T(host_port_does_not_conflict_with_itself_or_port_zero),
		T(predicate_reports_taint_before_ports),
		T(predicates_accept_and_ignore_unknown_arguments),
		T(predicate_treats_missing_spec_as_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

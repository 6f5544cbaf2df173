/* test_action_backfill.c - the "backfill" action over a real session.
 *
 * Backfill places BestEffort pods (no requests, only a pod slot) and
 * nothing else; it places them only on nodes that pass the predicates (a
 * free pod slot, the node selector), and a gang of them is bound whole or
 * not at all. Configuration: backfill alone, over the default tiers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"backfill\"\n"
			   "tiers:\n"
			   "- plugins:\n"
			   "  - name: priority\n"
			   "  - name: gang\n"
			   "- plugins:\n"
			   "  - name: drf\n"
			   "  - name: predicates\n"
			   "  - name: proportion\n"
			   "  - name: nodeorder\n";

/* A BestEffort pod: no requests at all; annotations and spec extras. */
#define BE_POD(name, ann, spec)                                                                 \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", annotations: {" ann "}}\n"   \
	"spec: {schedulerName: kube-batchd, " spec "containers: [{name: c}]}\n"
#define GROUP(g) "scheduling.k8s.io/group-name: " g

static int setup(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {disk: ssd}}\n"
		    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '3'}}\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void backfill_binds_best_effort_pods_and_nothing_else(void **state)
{
	fx *f = *state;
	fx_loadf(f, BE_POD("be", "", "") LONE_POD("burstable", "{cpu: '1', memory: 1Gi}", ""));
	fx_open(f, CONF);
	assert_true(fx_task(f, "default/be")->best_effort);
	assert_false(fx_task(f, "default/burstable")->best_effort);
	fx_run(f);
	assert_int_equal(f->nbound, 1);
	assert_string_equal(fx_bound_to(f, "default/be"), "n1");
	assert_int_equal(fx_task(f, "default/burstable")->status, KB_TASK_PENDING);
}

static void backfill_leaves_best_effort_pods_the_predicates_refuse(void **state)
{
	fx *f = *state;
	fx_loadf(f, BE_POD("ssd", "", "nodeSelector: {disk: ssd}, ")
		 BE_POD("hdd", "", "nodeSelector: {disk: hdd}, "));
	fx_open(f, CONF);
	fx_run(f);
	assert_string_equal(fx_bound_to(f, "default/ssd"), "n1");
	assert_null(fx_bound_to(f, "default/hdd"));
	assert_int_equal(f->nbound, 1);
}

static void backfill_needs_a_free_pod_slot(void **state)
{
	fx *f = *state;
	/* Three pod slots, two taken: one of the two BestEffort pods fits. */
	fx_loadf(f, LONE_RUNNING("r0", "n1", "{cpu: 100m}", "")
		 LONE_RUNNING("r1", "n1", "{cpu: 100m}", "")
		 BE_POD("a", "", "") BE_POD("b", "", ""));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nbound, 1);
	assert_string_equal(f->bound[0], "default/a");
}

static void backfill_binds_a_best_effort_gang_whole(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") BE_POD("g0", GROUP("g"), "") BE_POD("g1", GROUP("g"), ""));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nbound, 2);
	assert_non_null(fx_bound_to(f, "default/g0"));
	assert_non_null(fx_bound_to(f, "default/g1"));
}

static void backfill_binds_nothing_of_a_gang_it_cannot_make_ready(void **state)
{
	fx *f = *state;
	/* Only 3 pod slots for a gang of 4; and a gang whose other member asks
	 * for resources, which backfill does not place. */
	fx_loadf(f, PODGROUP("big", 4, "") BE_POD("b0", GROUP("big"), "")
		 BE_POD("b1", GROUP("big"), "")
		 BE_POD("b2", GROUP("big"), "") BE_POD("b3", GROUP("big"), "")
		 PODGROUP("mixed", 2, "") BE_POD("m0", GROUP("mixed"), "")
		 POD("m1", "mixed", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nbound, 0);
	for (uint32_t i = 0; i < f->snap.ntasks; i++)
		assert_int_equal(f->snap.tasks[i].status, KB_TASK_PENDING);
	assert_int_equal(f->snap.nodes[0].ntasks, 0);
}

static void backfill_skips_a_gang_with_too_few_pods(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 3, "") BE_POD("g0", GROUP("g"), "") BE_POD("g1", GROUP("g"), ""));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nbound, 0);
	fx_close(f);
	const char *why = fx_pending_reason(f, "default/g0");
	assert_non_null(why);
	assert_non_null(strstr(why, "fewer than minMember 3"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(backfill_binds_best_effort_pods_and_nothing_else),
		T(backfill_leaves_best_effort_pods_the_predicates_refuse),
		T(backfill_needs_a_free_pod_slot),
		T(backfill_binds_a_best_effort_gang_whole),
		T(backfill_binds_nothing_of_a_gang_it_cannot_make_ready),
		T(backfill_skips_a_gang_with_too_few_pods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

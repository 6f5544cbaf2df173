/* test_action_enqueue.c - the enqueue action through one real session.
 *
 * Pins volcano's admission: a Pending PodGroup becomes Inqueue when its
 * minimum (spec.minResources, else its minMember smallest pods) fits what
 * the cluster can still hold (allocatable x 1.2 - used) and its queue's
 * capability; before its pods exist; not when it is above either; groups
 * already Inqueue hold their minimum against the next ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tests/unit/session_fixture.h"

static const char ENQUEUE_ONLY[] = "actions: \"enqueue\"\n"
				   "tiers:\n"
				   "- plugins:\n"
				   "  - name: priority\n"
				   "  - name: gang\n"
				   "- plugins:\n"
				   "  - name: proportion\n";

#define A_NODE(name, cpu)                                                                          \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                             \
	"status: {allocatable: {cpu: \"" cpu "\", memory: 64Gi, pods: \"110\"}}\n"
#define A_PG(name, spec)                                                                           \
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                          \
	"metadata: {name: " name ", namespace: default}\nspec: " spec "\n"
#define A_POD(name, group, cpu)                                                                    \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, "          \
	"annotations: {scheduling.k8s.io/group-name: " group "}}\n"                                 \
	"spec:\n  schedulerName: kube-batchd\n"                                                     \
	"  containers: [{name: c, resources: {requests: {cpu: \"" cpu "\"}}}]\n"

static void group_without_pods_is_admitted_on_min_resources(void **state)
{
	fx *f = fx_session(ENQUEUE_ONLY,
		    A_NODE("n1", "8") A_PG("early", "{minMember: 4, minResources: {cpu: \"4\"}}"));
	assert_int_equal(fx_group_phase(f, "default/early"), KB_PG_INQUEUE);
	fx_free(f);
}

static void group_without_pods_or_min_resources_is_admitted(void **state)
{
	fx *f = fx_session(ENQUEUE_ONLY, A_NODE("n1", "8") A_PG("early", "{minMember: 4}"));
	assert_int_equal(fx_group_phase(f, "default/early"), KB_PG_INQUEUE);
	fx_free(f);
}

static void group_above_what_the_cluster_can_hold_waits(void **state)
{
	/* 8 cpu x 1.2 = 9.6 cpu: a minimum of 10 does not fit. */
	fx *f = fx_session(ENQUEUE_ONLY,
		    A_NODE("n1", "8") A_PG("big", "{minMember: 1, minResources: {cpu: \"10\"}}"));
	assert_int_equal(fx_group_phase(f, "default/big"), KB_PG_PENDING);
	fx_free(f);
}

static void minimum_is_the_smallest_pods_when_no_min_resources(void **state)
{
	/* minMember 2 of pods asking 5, 4 and 20 cpu: the minimum is 9 cpu,
	 * which 9.6 holds; counting the 20-cpu pod would not fit. */
	fx *f = fx_session(ENQUEUE_ONLY,
		    A_NODE("n1", "8") A_PG("g", "{minMember: 2}") A_POD("g-0", "g", "20") A_POD("g-1", "g", "5")
			    A_POD("g-2", "g", "4"));
	assert_int_equal(fx_group_phase(f, "default/g"), KB_PG_INQUEUE);
	fx_free(f);
}

static void admitted_groups_hold_their_minimum_against_the_next(void **state)
{
	/* 9.6 cpu of room: the first group's 6 is taken, the second's 6 no
	 * longer fits. Same priority and queue: creation order, then name. */
	fx *f = fx_session(ENQUEUE_ONLY,
		    A_NODE("n1", "8") A_PG("a", "{minMember: 1, minResources: {cpu: \"6\"}}")
			    A_PG("b", "{minMember: 1, minResources: {cpu: \"6\"}}"));
	assert_int_equal(fx_group_phase(f, "default/a"), KB_PG_INQUEUE);
	assert_int_equal(fx_group_phase(f, "default/b"), KB_PG_PENDING);
	fx_free(f);
}

static void group_above_its_queue_capability_waits(void **state)
{
	fx *f = fx_session(ENQUEUE_ONLY,
		    A_NODE("n1", "64") "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
				     "metadata: {name: small}\nspec: {weight: 1, capability: {cpu: \"2\"}}\n"
			    A_PG("g", "{minMember: 1, queue: small, minResources: {cpu: \"4\"}}"));
	assert_int_equal(fx_group_phase(f, "default/g"), KB_PG_PENDING);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(group_without_pods_is_admitted_on_min_resources),
		cmocka_unit_test(group_without_pods_or_min_resources_is_admitted),
		cmocka_unit_test(group_above_what_the_cluster_can_hold_waits),
		cmocka_unit_test(minimum_is_the_smallest_pods_when_no_min_resources),
		cmocka_unit_test(admitted_groups_hold_their_minimum_against_the_next),
		cmocka_unit_test(group_above_its_queue_capability_waits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

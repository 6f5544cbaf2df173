/* test_action_allocate.c - the allocate action through one real session.
 *
 * Pins: a gang binds whole or not at all; an elastic job places what it can
 * and goes on past a member that fits nowhere (volcano's
 * NeedContinueAllocating); without the enqueue action allocate moves a
 * Pending PodGroup to Inqueue itself, pods or not; with it, a Pending group
 * waits for enqueue; a closed queue's jobs are not placed and say why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "run_session.h"

static const char ALLOCATE_ONLY[] = "actions: \"allocate\"\n"
				    "tiers:\n"
				    "- plugins:\n"
				    "  - name: priority\n"
				    "  - name: gang\n"
				    "- plugins:\n"
				    "  - name: predicates\n"
				    "  - name: proportion\n"
				    "  - name: nodeorder\n";

#define NODE(name, gpus)                                                                           \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                             \
	"status: {allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"" gpus  \
	"\"}}\n"
#define PG(name, min) "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"            \
	"metadata: {name: " name ", namespace: default}\nspec: {minMember: " min "}\n"
#define POD(name, group, extra)                                                                    \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, "          \
	"annotations: {scheduling.k8s.io/group-name: " group "}}\n"                                 \
	"spec:\n  schedulerName: kube-batchd\n" extra                                               \
	"  containers: [{name: c, resources: {requests: {cpu: \"4\", memory: 32Gi, "               \
	"nvidia.com/gpu: \"1\"}}}]\n"

static void gang_that_cannot_fit_binds_nothing(void **state)
{
	session_result r;
	run_session(&r, ALLOCATE_ONLY,
		    NODE("n1", "2") PG("big", "3") POD("big-0", "big", "") POD("big-1", "big", "")
			    POD("big-2", "big", ""));
	assert_int_equal(r.nbound, 0);
	assert_true(rs_has(r.reason, r.nreason, "default/big: "));
}

static void gang_that_fits_binds_whole(void **state)
{
	session_result r;
	run_session(&r, ALLOCATE_ONLY,
		    NODE("n1", "4") PG("g", "3") POD("g-0", "g", "") POD("g-1", "g", "")
			    POD("g-2", "g", ""));
	assert_int_equal(r.nbound, 3);
	assert_true(rs_has(r.phase, r.nphase, "default/g=Running"));
}

static void elastic_job_goes_on_past_an_unplaceable_member(void **state)
{
	session_result r;
	/* g-0 comes first in task order and fits nowhere; its three siblings
	 * still make minMember 2, so they are placed. */
	run_session(&r, ALLOCATE_ONLY,
		    NODE("n1", "4") PG("g", "2")
			    POD("g-0", "g", "  nodeSelector: {pool: nowhere}\n") POD("g-1", "g", "")
				    POD("g-2", "g", "") POD("g-3", "g", ""));
	assert_int_equal(r.nbound, 3);
	assert_false(rs_has(r.bound, r.nbound, "default/g-0@"));
}

static void elastic_job_places_more_than_its_minimum(void **state)
{
	session_result r;
	run_session(&r, ALLOCATE_ONLY,
		    NODE("n1", "3") PG("g", "2") POD("g-0", "g", "") POD("g-1", "g", "")
			    POD("g-2", "g", "") POD("g-3", "g", ""));
	assert_int_equal(r.nbound, 3); /* all the node's GPUs, above minMember 2 */
}

static void without_enqueue_a_podgroup_with_no_pods_becomes_inqueue(void **state)
{
	session_result r;
	run_session(&r, ALLOCATE_ONLY, NODE("n1", "4") PG("early", "3"));
	assert_true(rs_has(r.phase, r.nphase, "default/early=Inqueue"));
}

static void with_enqueue_configured_allocate_leaves_pending_groups_to_it(void **state)
{
	session_result r;
	/* enqueue is listed but after allocate: allocate runs first and must
	 * not take a group enqueue has not admitted yet. */
	run_session(&r,
		    "actions: \"allocate, enqueue\"\ntiers:\n- plugins:\n  - name: gang\n"
		    "- plugins:\n  - name: predicates\n  - name: proportion\n",
		    NODE("n1", "4") PG("g", "1") POD("g-0", "g", ""));
	assert_int_equal(r.nbound, 0);
	assert_true(rs_has(r.phase, r.nphase, "default/g=Inqueue")); /* enqueue admitted it after */
}

static void closed_queue_places_nothing_and_says_so(void **state)
{
	session_result r;
	run_session(&r, ALLOCATE_ONLY,
		    NODE("n1", "4") "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
				    "metadata: {name: shut}\nspec: {weight: 1}\nstatus: {state: Closed}\n"
				    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
				    "metadata: {name: g, namespace: default}\nspec: {minMember: 1, queue: shut}\n"
				    POD("g-0", "g", ""));
	assert_int_equal(r.nbound, 0);
	assert_true(rs_has(r.reason, r.nreason, "default/g: queue \"shut\" is not open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gang_that_cannot_fit_binds_nothing),
		cmocka_unit_test(gang_that_fits_binds_whole),
		cmocka_unit_test(elastic_job_goes_on_past_an_unplaceable_member),
		cmocka_unit_test(elastic_job_places_more_than_its_minimum),
		cmocka_unit_test(without_enqueue_a_podgroup_with_no_pods_becomes_inqueue),
		cmocka_unit_test(with_enqueue_configured_allocate_leaves_pending_groups_to_it),
		cmocka_unit_test(closed_queue_places_nothing_and_says_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

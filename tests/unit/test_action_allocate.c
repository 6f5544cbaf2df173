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

#include <string.h>

#include "tests/unit/session_fixture.h"

static const char ALLOCATE_ONLY[] = "actions: \"allocate\"\n"
				    "tiers:\n"
				    "- plugins:\n"
				    "  - name: priority\n"
				    "  - name: gang\n"
				    "- plugins:\n"
				    "  - name: predicates\n"
				    "  - name: proportion\n"
				    "  - name: nodeorder\n";

#define A_NODE(name, gpus)                                                                         \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                             \
	"status: {allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"" gpus  \
	"\"}}\n"
#define A_PG(name, min)                                                                           \
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                          \
	"metadata: {name: " name ", namespace: default}\nspec: {minMember: " min "}\n"
#define A_POD(name, group, extra)                                                                  \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, "          \
	"annotations: {scheduling.k8s.io/group-name: " group "}}\n"                                 \
	"spec:\n  schedulerName: kube-batchd\n" extra                                               \
	"  containers: [{name: c, resources: {requests: {cpu: \"4\", memory: 32Gi, "               \
	"nvidia.com/gpu: \"1\"}}}]\n"

/* Whether s starts with prefix. */
static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void gang_that_cannot_fit_binds_nothing(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
		    A_NODE("n1", "2") A_PG("big", "3") A_POD("big-0", "big", "") A_POD("big-1", "big", "")
			    A_POD("big-2", "big", ""));
	assert_int_equal(f->nbound, 0);
	assert_true(fx_group_reason(f, "default/big")[0] != '\0');
	fx_free(f);
}

static void gang_that_fits_binds_whole(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
		    A_NODE("n1", "4") A_PG("g", "3") A_POD("g-0", "g", "") A_POD("g-1", "g", "")
			    A_POD("g-2", "g", ""));
	assert_int_equal(f->nbound, 3);
	assert_int_equal(fx_group_phase(f, "default/g"), KB_PG_RUNNING);
	fx_free(f);
}

static void elastic_job_goes_on_past_an_unplaceable_member(void **state)
{
	/* g-0 comes first in task order and fits nowhere; its three siblings
	 * still make minMember 2, so they are placed. */
	fx *f = fx_session(ALLOCATE_ONLY,
		    A_NODE("n1", "4") A_PG("g", "2")
			    A_POD("g-0", "g", "  nodeSelector: {pool: nowhere}\n") A_POD("g-1", "g", "")
				    A_POD("g-2", "g", "") A_POD("g-3", "g", ""));
	assert_int_equal(f->nbound, 3);
	assert_null(fx_bound_to(f, "default/g-0"));
	fx_free(f);
}

static void elastic_job_places_more_than_its_minimum(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
		    A_NODE("n1", "3") A_PG("g", "2") A_POD("g-0", "g", "") A_POD("g-1", "g", "")
			    A_POD("g-2", "g", "") A_POD("g-3", "g", ""));
	assert_int_equal(f->nbound, 3); /* all the node's GPUs, above minMember 2 */
	fx_free(f);
}

static void without_enqueue_a_podgroup_with_no_pods_becomes_inqueue(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY, A_NODE("n1", "4") A_PG("early", "3"));
	assert_int_equal(fx_group_phase(f, "default/early"), KB_PG_INQUEUE);
	fx_free(f);
}

static void with_enqueue_configured_allocate_leaves_pending_groups_to_it(void **state)
{
	/* enqueue is listed but after allocate: allocate runs first and must
	 * not take a group enqueue has not admitted yet. */
	fx *f = fx_session("actions: \"allocate, enqueue\"\ntiers:\n- plugins:\n  - name: gang\n"
		    "- plugins:\n  - name: predicates\n  - name: proportion\n",
		    A_NODE("n1", "4") A_PG("g", "1") A_POD("g-0", "g", ""));
	assert_int_equal(f->nbound, 0);
	assert_int_equal(fx_group_phase(f, "default/g"), KB_PG_INQUEUE); /* enqueue admitted it after */
	fx_free(f);
}

static void closed_queue_places_nothing_and_says_so(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
		    A_NODE("n1", "4") "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
				    "metadata: {name: shut}\nspec: {weight: 1}\nstatus: {state: Closed}\n"
				    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
				    "metadata: {name: g, namespace: default}\nspec: {minMember: 1, queue: shut}\n"
				    A_POD("g-0", "g", ""));
	assert_int_equal(f->nbound, 0);
	assert_true(starts_with(fx_group_reason(f, "default/g"), "queue \"shut\" is not open"));
	fx_free(f);
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

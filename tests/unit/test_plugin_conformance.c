/* test_plugin_conformance.c - the "conformance" plugin through the real
 * framework.
 *
 * Pins its one rule, for both victim hooks (preemptable and reclaimable),
 * with conformance alone in the configuration: pods in kube-system and pods
 * of the system-cluster-critical and system-node-critical classes are never
 * victims; every other pod may be.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"allocate\"\n"
			   "tiers:\n"
			   "- plugins:\n"
			   "  - name: conformance\n";

#define REQ "{cpu: '1', memory: 1Gi}"

/* A running pod of ours in namespace ns, with more spec fields. */
#define NS_RUNNING(name, ns, spec)                                                              \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: " ns "}\n"        \
	"spec: {schedulerName: kube-batchd, nodeName: n1, " spec                                 \
	"containers: [{name: c, resources: {requests: " REQ "}}]}\nstatus: {phase: Running}\n"

static int setup(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, NODE("n1", "{cpu: '8', memory: 16Gi}")
		 PRIORITY_CLASS("system-cluster-critical", 2000000000)
		 PRIORITY_CLASS("system-node-critical", 2000001000)
		 LONE_POD("preemptor", REQ, "priority: 1000, ")
		 NS_RUNNING("dns", "kube-system", "")
		 NS_RUNNING("cluster-crit", "monitoring",
			    "priorityClassName: system-cluster-critical, ")
		 NS_RUNNING("node-crit", "monitoring", "priorityClassName: system-node-critical, ")
		 NS_RUNNING("batch", "team-a", "")
		 NS_RUNNING("batch-low", "team-a", "priority: -10, "));
	fx_open(f, CONF);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void critical_pods_are_marked_by_the_cache(void **state)
{
	fx *f = *state;
	assert_true(fx_task(f, "kube-system/dns")->critical);
	assert_true(fx_task(f, "monitoring/cluster-crit")->critical);
	assert_true(fx_task(f, "monitoring/node-crit")->critical);
	assert_false(fx_task(f, "team-a/batch")->critical);
}

static void preemptable_never_takes_kube_system_or_critical_class_pods(void **state)
{
	fx *f = *state;
	unsigned m = fx_victims(f, false, "default/preemptor", "kube-system/dns",
				"monitoring/cluster-crit", "team-a/batch", "monitoring/node-crit",
				"team-a/batch-low", NULL);
	assert_int_equal(m, 0x4 | 0x10);
}

static void reclaimable_never_takes_kube_system_or_critical_class_pods(void **state)
{
	fx *f = *state;
	unsigned m = fx_victims(f, true, "default/preemptor", "team-a/batch", "kube-system/dns",
				"monitoring/cluster-crit", "monitoring/node-crit", NULL);
	assert_int_equal(m, 0x1);
}

static void ordinary_pods_may_all_go(void **state)
{
	fx *f = *state;
	unsigned m = fx_victims(f, false, "default/preemptor", "team-a/batch", "team-a/batch-low",
				NULL);
	assert_int_equal(m, 0x3);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(critical_pods_are_marked_by_the_cache),
		T(preemptable_never_takes_kube_system_or_critical_class_pods),
		T(reclaimable_never_takes_kube_system_or_critical_class_pods),
		T(ordinary_pods_may_all_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_plugin_priority.c - the "priority" plugin through the real framework.
 *
 * Pins each hook it registers, with only that plugin configured so that its
 * answer is the one the framework gives: job order and task order (higher
 * priority first, against the creation/name fallback), job starving (fewer
 * tasks placed than alive) and preemptable (only victims of lower job
 * priority). Clusters come from manifests (session_fixture.h).
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
			   "  - name: priority\n";

#define REQ "{cpu: '1', memory: 1Gi}"

static int setup(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, NODE("n1", "{cpu: '4', memory: 8Gi}") NODE("n2", "{cpu: '4', memory: 8Gi}"));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* "a-low" sorts first by name (the fallback), so only the rule puts "b-high" first. */
static void job_order_puts_higher_priority_job_first(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_POD("a-low", REQ, "priority: 10, ")
		 LONE_POD("b-high", REQ, "priority: 100, "));
	fx_open(f, CONF);
	const kb_job *low = fx_job(f, "default/a-low"), *high = fx_job(f, "default/b-high");
	assert_true(kb_job_less(&f->ssn, high, low));
	assert_false(kb_job_less(&f->ssn, low, high));
}

static void job_order_reads_the_podgroup_priority_class(void **state)
{
	fx *f = *state;
	fx_loadf(f, PRIORITY_CLASS("low", 10) PRIORITY_CLASS("high", 1000)
		 PODGROUP("a", 1, ", priorityClassName: low")
		 PODGROUP("b", 1, ", priorityClassName: high")
		 POD("a0", "a", REQ, "priority: 5000, ") POD("b0", "b", REQ, "priority: 1, "));
	fx_open(f, CONF);
	/* The job's class decides, not its pods' own priorities. */
	assert_int_equal(fx_job(f, "default/a")->priority, 10);
	assert_int_equal(fx_job(f, "default/b")->priority, 1000);
	assert_true(kb_job_less(&f->ssn, fx_job(f, "default/b"), fx_job(f, "default/a")));
}

static void job_order_equal_priority_falls_back_to_name(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_POD("a", REQ, "priority: 10, ") LONE_POD("b", REQ, "priority: 10, "));
	fx_open(f, CONF);
	assert_true(kb_job_less(&f->ssn, fx_job(f, "default/a"), fx_job(f, "default/b")));
	assert_false(kb_job_less(&f->ssn, fx_job(f, "default/b"), fx_job(f, "default/a")));
}

static void task_order_puts_higher_priority_pod_first(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") POD("a-low", "g", REQ, "priority: 1, ")
		 POD("b-high", "g", REQ, "priority: 50, "));
	fx_open(f, CONF);
	const kb_task *low = fx_task(f, "default/a-low"), *high = fx_task(f, "default/b-high");
	assert_true(kb_task_less(&f->ssn, high, low));
	assert_false(kb_task_less(&f->ssn, low, high));
}

static void task_order_switched_off_falls_back_to_name(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") POD("a-low", "g", REQ, "priority: 1, ")
		 POD("b-high", "g", REQ, "priority: 50, "));
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: priority\n"
		   "    enableTaskOrder: false\n");
	const kb_task *low = fx_task(f, "default/a-low"), *high = fx_task(f, "default/b-high");
	assert_true(kb_task_less(&f->ssn, low, high));
}

static void job_starving_while_fewer_placed_than_alive(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("part", 1, "") RUNNING("p0", "part", "n1", REQ, "")
		 RUNNING("p1", "part", "n1", REQ, "") POD("p2", "part", REQ, "")
		 PODGROUP("whole", 1, "") RUNNING("w0", "whole", "n2", REQ, "")
		 RUNNING("w1", "whole", "n2", REQ, ""));
	fx_open(f, CONF);
	/* minMember 1 is met by both: only priority's own rule tells them apart. */
	assert_true(kb_job_starving(&f->ssn, fx_job(f, "default/part")));
	assert_false(kb_job_starving(&f->ssn, fx_job(f, "default/whole")));
}

static void job_starving_does_not_count_failed_tasks_as_alive(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 1, "") RUNNING("g0", "g", "n1", REQ, "")
		 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: g1, annotations: "
		 "{scheduling.k8s.io/group-name: g}}\nspec: {schedulerName: kube-batchd, "
		 "nodeName: n1, containers: [{name: c, resources: {requests: " REQ "}}]}\n"
		 "status: {phase: Failed}\n");
	fx_open(f, CONF);
	const kb_job *j = fx_job(f, "default/g");
	assert_int_equal(j->nstatus[KB_TASK_FAILED], 1);
	assert_false(kb_job_starving(&f->ssn, j));
}

static void preemptable_allows_only_lower_priority_victims(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_POD("preemptor", REQ, "priority: 100, ")
		 LONE_RUNNING("v-low", "n1", REQ, "priority: 10, ")
		 LONE_RUNNING("v-equal", "n1", REQ, "priority: 100, ")
		 LONE_RUNNING("v-high", "n1", REQ, "priority: 1000, ")
		 LONE_RUNNING("v-negative", "n2", REQ, "priority: -5, "));
	fx_open(f, CONF);
	unsigned m = fx_victims(f, false, "default/preemptor", "default/v-low", "default/v-equal",
				"default/v-high", "default/v-negative", NULL);
	assert_int_equal(m, 0x1 | 0x8);
}

static void preemptable_compares_job_priorities_not_pod_priorities(void **state)
{
	fx *f = *state;
	fx_loadf(f, PRIORITY_CLASS("low", 10) PRIORITY_CLASS("high", 1000)
		 PODGROUP("hi", 1, ", priorityClassName: high")
		 PODGROUP("lo", 1, ", priorityClassName: low")
		 POD("preemptor", "lo", REQ, "priority: 5000, ")
		 RUNNING("victim", "hi", "n1", REQ, "priority: 1, "));
	fx_open(f, CONF);
	/* The pod's 5000 over 1 does not count: its job (10) is below the victim's (1000). */
	assert_int_equal(fx_victims(f, false, "default/preemptor", "default/victim", NULL), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(job_order_puts_higher_priority_job_first),
		T(job_order_reads_the_podgroup_priority_class),
		T(job_order_equal_priority_falls_back_to_name),
		T(task_order_puts_higher_priority_pod_first),
		T(task_order_switched_off_falls_back_to_name),
		T(job_starving_while_fewer_placed_than_alive),
		T(job_starving_does_not_count_failed_tasks_as_alive),
		T(preemptable_allows_only_lower_priority_victims),
		T(preemptable_compares_job_priorities_not_pod_priorities),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_action_preempt.c - the "preempt" action over a real session.
 *
 * Configuration: allocate then preempt, over priority, gang and conformance
 * (the tier that decides victims) and drf, predicates, proportion and
 * nodeorder. Pins that preempt evicts only victims of lower priority, of
 * the preemptor's own queue, only when the preemptor then fits (otherwise
 * nothing is evicted), the lowest-priority victim first and no more than
 * needed, never a gang below minMember (the whole gang goes rather than
 * part of it), never a critical pod, and never for a pod with preemptionPolicy
 * Never. The preemptor is pipelined onto the room freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"allocate, preempt\"\n"
			   "tiers:\n"
			   "- plugins:\n"
			   "  - name: priority\n"
			   "  - name: gang\n"
			   "  - name: conformance\n"
			   "- plugins:\n"
			   "  - name: drf\n"
			   "  - name: predicates\n"
			   "  - name: proportion\n"
			   "  - name: nodeorder\n";

#define CPU(n) "{cpu: '" #n "', memory: 1Gi}"
#define PRIO(p) "priority: " #p ", "

static int setup(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, NODE("n1", "{cpu: '4', memory: 8Gi}"));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void preempt_evicts_a_lower_priority_victim_and_pipelines_the_preemptor(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_RUNNING("low", "n1", CPU(4), PRIO(10))
		 LONE_POD("high", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 1);
	assert_string_equal(f->evicted[0], "default/low");
	assert_int_equal(fx_task(f, "default/low")->status, KB_TASK_RELEASING);
	assert_int_equal(fx_task(f, "default/high")->status, KB_TASK_PIPELINED);
	assert_int_equal(fx_task(f, "default/high")->node, 0);
}

static void preempt_never_evicts_equal_or_higher_priority(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_RUNNING("same", "n1", CPU(2), PRIO(100))
		 LONE_RUNNING("above", "n1", CPU(2), PRIO(500))
		 LONE_POD("p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
	assert_int_equal(fx_task(f, "default/p")->status, KB_TASK_PENDING);
}

static void preempt_evicts_nothing_when_the_preemptor_would_still_not_fit(void **state)
{
	fx *f = *state;
	/* Evicting "low" frees 2 cpu; with "keep" (higher) staying, 3 never fit. */
	fx_loadf(f, LONE_RUNNING("low", "n1", CPU(2), PRIO(10))
		 LONE_RUNNING("keep", "n1", CPU(2), PRIO(1000))
		 LONE_POD("p", CPU(3), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
	assert_int_equal(fx_task(f, "default/low")->status, KB_TASK_RUNNING);
	assert_int_equal(fx_task(f, "default/p")->status, KB_TASK_PENDING);
}

static void preempt_takes_the_lowest_priority_victim_and_no_more(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_RUNNING("a-mid", "n1", CPU(2), PRIO(20))
		 LONE_RUNNING("b-low", "n1", CPU(2), PRIO(10))
		 LONE_POD("p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 1);
	assert_string_equal(f->evicted[0], "default/b-low");
}

static void preempt_stays_within_the_preemptor_queue(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1")
		 PODGROUP("other", 1, ", queue: qa") RUNNING("o0", "other", "n1", CPU(4), PRIO(10))
		 PODGROUP("p", 1, ", queue: qb") POD("p0", "p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
	assert_int_equal(fx_task(f, "default/p0")->status, KB_TASK_PENDING);
}

/* Victim gang v: minMember 2, four running members of 1 cpu (two spare). */
#define VICTIM_GANG                                                                             \
	PODGROUP("v", 2, "") RUNNING("v0", "v", "n1", CPU(1), PRIO(10))                          \
	RUNNING("v1", "v", "n1", CPU(1), PRIO(10)) RUNNING("v2", "v", "n1", CPU(1), PRIO(10))    \
	RUNNING("v3", "v", "n1", CPU(1), PRIO(10))

static void preempt_takes_a_gang_whole_rather_than_below_min_member(void **state)
{
	fx *f = *state;
	/* 3 cpu needs three of v's members: v cannot keep minMember, so it goes whole. */
	fx_loadf(f, VICTIM_GANG LONE_POD("p", CPU(3), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	const kb_job *v = fx_job(f, "default/v");
	assert_int_equal(f->nevicted, 4);
	assert_int_equal(kb_job_ready_count(v), 0);
	assert_int_equal(fx_task(f, "default/p")->status, KB_TASK_PIPELINED);
}

static void preempt_takes_only_spare_members_of_a_gang(void **state)
{
	fx *f = *state;
	/* 2 cpu: v's two members above minMember 2 are enough, and all the
	 * plugins allow them (the set is judged before it is evicted, not
	 * against the counts its own eviction lowered). */
	fx_loadf(f, VICTIM_GANG LONE_POD("p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 2);
	assert_int_equal(kb_job_ready_count(fx_job(f, "default/v")), 2);
	assert_int_equal(fx_task(f, "default/p")->status, KB_TASK_PIPELINED);
}

static void preempt_never_evicts_a_critical_pod(void **state)
{
	fx *f = *state;
	fx_loadf(f, "---\napiVersion: v1\nkind: Pod\n"
		    "metadata: {name: dns, namespace: kube-system}\n"
		    "spec: {schedulerName: kube-batchd, nodeName: n1, priority: 10, "
		    "containers: [{name: c, resources: {requests: " CPU(4) "}}]}\n"
		    "status: {phase: Running}\n"
		 LONE_POD("p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
}

static void preempt_never_acts_for_a_pod_with_preemption_policy_never(void **state)
{
	fx *f = *state;
	fx_loadf(f, LONE_RUNNING("low", "n1", CPU(4), PRIO(10))
		 LONE_POD("p", CPU(2), PRIO(100) "preemptionPolicy: Never, "));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
}

static void preempt_spares_a_pod_marked_not_preemptable(void **state)
{
	fx *f = *state;
	fx_loadf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: keep, annotations: "
		    "{volcano.sh/preemptable: 'false'}}\n"
		    "spec: {schedulerName: kube-batchd, nodeName: n1, "
		    "priority: 10, containers: [{name: c, resources: {requests: " CPU(4) "}}]}\n"
		    "status: {phase: Running}\n"
		 LONE_POD("p", CPU(2), PRIO(100)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(preempt_evicts_a_lower_priority_victim_and_pipelines_the_preemptor),
		T(preempt_never_evicts_equal_or_higher_priority),
		T(preempt_evicts_nothing_when_the_preemptor_would_still_not_fit),
		T(preempt_takes_the_lowest_priority_victim_and_no_more),
		T(preempt_stays_within_the_preemptor_queue),
		T(preempt_takes_a_gang_whole_rather_than_below_min_member),
		T(preempt_takes_only_spare_members_of_a_gang),
		T(preempt_never_evicts_a_critical_pod),
		T(preempt_never_acts_for_a_pod_with_preemption_policy_never),
		T(preempt_spares_a_pod_marked_not_preemptable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

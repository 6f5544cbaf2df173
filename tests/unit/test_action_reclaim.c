/* test_action_reclaim.c - the "reclaim" action over a real session.
 *
 * Configuration: allocate then reclaim, over the README's tiers (priority,
 * gang, conformance; drf, predicates, proportion, nodeorder). Pins that
 * reclaim takes resources across queues, by the proportion rule: a queue
 * below its deserved share takes back from a queue above its own, only up
 * to the reclaimer's deserved share (preemptive), never from a queue marked
 * reclaimable: false, never from its own queue, and nothing when the
 * reclaimer would still not fit; with proportion in the tier that decides
 * victims, never a victim queue below its own deserved share. Two nodes of
 * 4 cpu: 8 cpu in all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"allocate, reclaim\"\n"
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

/* A lone running pod in queue q (through its own PodGroup of one). */
#define IN_Q(name, q, node, req, spec)                                                          \
	PODGROUP(name, 1, ", queue: " q) RUNNING(name "-0", name, node, req, spec)
#define WANTS(name, q, req) PODGROUP(name, 1, ", queue: " q) POD(name "-0", name, req, "")

/* qa holds the whole cluster: eight 1-cpu pods, four per node. */
#define QA_HOLDS_ALL                                                                            \
	IN_Q("a0", "qa", "n1", CPU(1), "") IN_Q("a1", "qa", "n1", CPU(1), "")                    \
	IN_Q("a2", "qa", "n1", CPU(1), "") IN_Q("a3", "qa", "n1", CPU(1), "")                    \
	IN_Q("a4", "qa", "n2", CPU(1), "") IN_Q("a5", "qa", "n2", CPU(1), "")                    \
	IN_Q("a6", "qa", "n2", CPU(1), "") IN_Q("a7", "qa", "n2", CPU(1), "")

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

static int evicted_from(const fx *f, const char *prefix)
{
	int n = 0;
	for (int i = 0; i < f->nevicted; i++)
		n += strncmp(f->evicted[i], prefix, strlen(prefix)) == 0;
	return n;
}

static void reclaim_takes_back_from_a_queue_above_its_share(void **state)
{
	fx *f = *state;
	/* qb asks 2: it deserves 2 and qa 6. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1") QA_HOLDS_ALL
		 WANTS("b", "qb", CPU(2)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 2);
	assert_int_equal(evicted_from(f, "default/a"), 2);
	assert_int_equal(fx_task(f, "default/b-0")->status, KB_TASK_PIPELINED);
}

static void reclaim_stops_at_the_reclaimer_deserved_share(void **state)
{
	fx *f = *state;
	/* qb asks four pods of 2 cpu: both queues deserve 4, so qb gets two. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1") QA_HOLDS_ALL
		 WANTS("b", "qb", CPU(2)) WANTS("c", "qb", CPU(2)) WANTS("d", "qb", CPU(2))
		 WANTS("e", "qb", CPU(2)));
	fx_open(f, CONF);
	assert_int_equal(f->ssn.deserved[fx_queue(f, "qb") - f->snap.queues].q[KB_RES_CPU], 4000);
	fx_run(f);
	assert_int_equal(f->nevicted, 4);
	assert_int_equal(fx_queue(f, "qb")->pipelined.q[KB_RES_CPU], 4000);
	int pending = 0;
	const char *keys[] = {"default/b-0", "default/c-0", "default/d-0", "default/e-0"};
	for (int i = 0; i < 4; i++)
		pending += fx_task(f, keys[i])->status == KB_TASK_PENDING;
	assert_int_equal(pending, 2);
}

static void reclaim_never_takes_from_a_queue_that_is_not_reclaimable(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1, reclaimable: false") QUEUE("qb", "weight: 1")
		 QA_HOLDS_ALL WANTS("b", "qb", CPU(2)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
	assert_int_equal(fx_task(f, "default/b-0")->status, KB_TASK_PENDING);
}

static void reclaim_never_takes_from_the_reclaimer_own_queue(void **state)
{
	fx *f = *state;
	/* qb (w3) holds n1 with low-priority pods; qa (w1) holds n2. Of 8 cpu
	 * qb deserves 6, qa 2: only qa's pods may go, although qb's own are
	 * the cheaper victims. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 3")
		 IN_Q("own0", "qb", "n1", CPU(2), "priority: -10, ")
		 IN_Q("own1", "qb", "n1", CPU(2), "priority: -10, ")
		 IN_Q("a0", "qa", "n2", CPU(2), "priority: 10, ")
		 IN_Q("a1", "qa", "n2", CPU(2), "priority: 10, ") WANTS("b", "qb", CPU(2)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 1);
	assert_int_equal(evicted_from(f, "default/a"), 1);
	assert_int_equal(evicted_from(f, "default/own"), 0);
}

static void reclaim_evicts_nothing_when_the_reclaimer_would_still_not_fit(void **state)
{
	fx *f = *state;
	/* 5 cpu fits no node of 4. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1") QA_HOLDS_ALL
		 WANTS("b", "qb", CPU(5)));
	fx_open(f, CONF);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
}

/* With proportion in the tier that decides victims, its reclaimable rule
 * applies: a victim queue gives up tasks only while above its deserved
 * share. */
static const char CONF_PROPORTION_DECIDES[] = "actions: \"allocate, reclaim\"\n"
					      "tiers:\n"
					      "- plugins:\n"
					      "  - name: priority\n"
					      "  - name: gang\n"
					      "  - name: conformance\n"
					      "  - name: proportion\n"
					      "- plugins:\n"
					      "  - name: predicates\n"
					      "  - name: nodeorder\n";

static void reclaim_leaves_a_victim_queue_its_deserved_share(void **state)
{
	fx *f = *state;
	/* qa (w1) runs job a on n1, qc (w1) job c on n2, four 1-cpu pods each
	 * (minMember 1); qb (w2) asks 2 cpu: of 8 cpu, qa and qc deserve 3 each
	 * and qb 2. Each node could give 1 cpu without taking its queue below
	 * its share: never the 2 qb needs on one node. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 2") QUEUE("qc", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", CPU(1), "")
		 RUNNING("a1", "a", "n1", CPU(1), "") RUNNING("a2", "a", "n1", CPU(1), "")
		 RUNNING("a3", "a", "n1", CPU(1), "")
		 PODGROUP("c", 1, ", queue: qc") RUNNING("c0", "c", "n2", CPU(1), "")
		 RUNNING("c1", "c", "n2", CPU(1), "") RUNNING("c2", "c", "n2", CPU(1), "")
		 RUNNING("c3", "c", "n2", CPU(1), "")
		 WANTS("b", "qb", CPU(2)));
	fx_open(f, CONF_PROPORTION_DECIDES);
	assert_int_equal(f->ssn.deserved[fx_queue(f, "qa") - f->snap.queues].q[KB_RES_CPU], 3000);
	fx_run(f);
	assert_int_equal(f->nevicted, 0);
	assert_int_equal(fx_task(f, "default/b-0")->status, KB_TASK_PENDING);
}

static void reclaim_leaves_lone_pods_queue_its_deserved_share(void **state)
{
	fx *f = *state;
	/* As above, with four lone pods per queue: whole victim jobs (step 2)
	 * are judged together, so qa and qc each give at most the 1 cpu above
	 * their share of 3, and neither goes below it. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 2") QUEUE("qc", "weight: 1")
		 IN_Q("a0", "qa", "n1", CPU(1), "") IN_Q("a1", "qa", "n1", CPU(1), "")
		 IN_Q("a2", "qa", "n1", CPU(1), "") IN_Q("a3", "qa", "n1", CPU(1), "")
		 IN_Q("c0", "qc", "n2", CPU(1), "") IN_Q("c1", "qc", "n2", CPU(1), "")
		 IN_Q("c2", "qc", "n2", CPU(1), "") IN_Q("c3", "qc", "n2", CPU(1), "")
		 WANTS("b", "qb", CPU(2)));
	fx_open(f, CONF_PROPORTION_DECIDES);
	fx_run(f);
	assert_true(evicted_from(f, "default/a") <= 1);
	assert_true(evicted_from(f, "default/c") <= 1);
}

static void reclaim_with_proportion_deciding_still_takes_the_surplus(void **state)
{
	fx *f = *state;
	/* qa and qc (w1) hold 4 cpu each on their own node, one job of four
	 * (minMember 1); qb (w2) asks 1 cpu: qa and qc deserve 3.5 and hold 4,
	 * so one pod goes. The set is judged before its eviction lowers the
	 * queue's allocation. */
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 2") QUEUE("qc", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", CPU(1), "")
		 RUNNING("a1", "a", "n1", CPU(1), "") RUNNING("a2", "a", "n1", CPU(1), "")
		 RUNNING("a3", "a", "n1", CPU(1), "")
		 PODGROUP("c", 1, ", queue: qc") RUNNING("c0", "c", "n2", CPU(1), "")
		 RUNNING("c1", "c", "n2", CPU(1), "") RUNNING("c2", "c", "n2", CPU(1), "")
		 RUNNING("c3", "c", "n2", CPU(1), "")
		 WANTS("b", "qb", CPU(1)));
	fx_open(f, CONF_PROPORTION_DECIDES);
	fx_run(f);
	assert_int_equal(f->nevicted, 1);
	assert_int_equal(fx_task(f, "default/b-0")->status, KB_TASK_PIPELINED);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(reclaim_takes_back_from_a_queue_above_its_share),
		T(reclaim_stops_at_the_reclaimer_deserved_share),
		T(reclaim_never_takes_from_a_queue_that_is_not_reclaimable),
		T(reclaim_never_takes_from_the_reclaimer_own_queue),
		T(reclaim_evicts_nothing_when_the_reclaimer_would_still_not_fit),
		T(reclaim_leaves_a_victim_queue_its_deserved_share),
		T(reclaim_leaves_lone_pods_queue_its_deserved_share),
		T(reclaim_with_proportion_deciding_still_takes_the_surplus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

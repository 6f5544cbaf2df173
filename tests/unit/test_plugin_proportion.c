/* test_plugin_proportion.c - the "proportion" plugin through the real
 * framework.
 *
 * Pins, with proportion alone in the configuration: the deserved shares it
 * computes at open (water-filling over weights, capped by what a queue asks
 * and by its capability, raised to its guarantee), queue order (smaller
 * allocated/deserved first), overused, job enqueueable (capability),
 * preemptive (a reclaimer's queue stays within its deserved share),
 * reclaimable (a victim's queue gives up tasks only while above its share,
 * and only if reclaimable), the queue capability check it controls
 * (enabledAllocatable) and the capability reason at close. The cluster is two
 * nodes of 4 cpu and 8Gi: 8 cpu and 16Gi in all.
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
			   "  - name: proportion\n";

#define CPU(n) ((int64_t)(n) * 1000)
#define GIB(n) ((int64_t)(n) * 1024 * 1024 * 1024 * 1000)
#define ONE "{cpu: '1', memory: 1Gi}"

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

static const kb_res *deserved(const fx *f, const char *queue)
{
	return &f->ssn.deserved[fx_queue(f, queue) - f->snap.queues];
}

/* ---- deserved -------------------------------------------------------------------- */

static void deserved_splits_by_weight_when_both_ask_for_everything(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 3")
		 PODGROUP("a", 1, ", queue: qa") POD("a0", "a", "{cpu: '4', memory: 8Gi}", "")
		 POD("a1", "a", "{cpu: '4', memory: 8Gi}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '4', memory: 8Gi}", "")
		 POD("b1", "b", "{cpu: '4', memory: 8Gi}", ""));
	fx_open(f, CONF);
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(2));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_CPU], CPU(6));
	assert_int_equal(deserved(f, "qa")->q[KB_RES_MEMORY], GIB(4));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_MEMORY], GIB(12));
	/* The default queue asks nothing and deserves nothing; pods are no share. */
	assert_int_equal(deserved(f, "default")->q[KB_RES_CPU], 0);
	assert_int_equal(deserved(f, "qb")->q[KB_RES_PODS], 0);
}

static void deserved_is_capped_by_request_and_the_rest_goes_to_others(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 3") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") POD("a0", "a", "{cpu: '1'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(1));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_CPU], CPU(7));
}

static void deserved_counts_running_tasks_in_the_request(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", "{cpu: '3'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(3));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_CPU], CPU(5));
}

static void deserved_is_capped_by_capability(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 3, capability: {cpu: '2'}") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") POD("a0", "a", "{cpu: '8'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(2));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_CPU], CPU(6));
}

static void deserved_is_raised_to_the_guarantee(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1, guarantee: {resource: {cpu: '3'}}")
		 QUEUE("qb", "weight: 9")
		 PODGROUP("a", 1, ", queue: qa") POD("a0", "a", "{cpu: '8'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	/* By weight alone qa would get 800m. */
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(3));
	assert_int_equal(deserved(f, "qb")->q[KB_RES_CPU], CPU(5));
}

/* ---- queue order, overused ------------------------------------------------------- */

/* qa (w1) and qb (w3) both ask 8 cpu: they deserve 2 and 6. qa holds 2
 * (share 1), qb holds 4 (share 2/3). */
static void two_queues_holding(fx *f)
{
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 3")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", "{cpu: '2'}", "")
		 POD("a1", "a", "{cpu: '6'}", "")
		 PODGROUP("b", 1, ", queue: qb") RUNNING("b0", "b", "n2", "{cpu: '4'}", "")
		 POD("b1", "b", "{cpu: '4'}", ""));
}

static void queue_order_puts_the_smaller_share_first(void **state)
{
	fx *f = *state;
	two_queues_holding(f);
	fx_open(f, CONF);
	assert_true(kb_queue_less(&f->ssn, fx_queue(f, "qb"), fx_queue(f, "qa")));
	assert_false(kb_queue_less(&f->ssn, fx_queue(f, "qa"), fx_queue(f, "qb")));
}

static void overused_once_allocated_reaches_deserved(void **state)
{
	fx *f = *state;
	two_queues_holding(f);
	fx_open(f, CONF);
	assert_true(kb_queue_overused(&f->ssn, fx_queue(f, "qa")));
	assert_false(kb_queue_overused(&f->ssn, fx_queue(f, "qb")));
}

/* ---- job enqueueable, queue capability ------------------------------------------- */

static void enqueueable_rejects_a_job_whose_minimum_passes_capability(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qc", "weight: 1, capability: {cpu: '2'}")
		 PODGROUP("big", 3, ", queue: qc") POD("b0", "big", ONE, "")
		 POD("b1", "big", ONE, "")
		 POD("b2", "big", ONE, "")
		 PODGROUP("fits", 2, ", queue: qc") POD("f0", "fits", ONE, "")
		 POD("f1", "fits", ONE, "")
		 POD("f2", "fits", ONE, ""));
	fx_open(f, CONF);
	assert_false(kb_job_enqueueable(&f->ssn, fx_job(f, "default/big")));
	/* Its minimum (2 of 3) fits under the cap. */
	assert_true(kb_job_enqueueable(&f->ssn, fx_job(f, "default/fits")));
}

static void queue_fits_enforces_capability_unless_allocatable_is_off(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qc", "weight: 1, capability: {cpu: '2'}")
		 PODGROUP("g", 1, ", queue: qc") RUNNING("g0", "g", "n1", "{cpu: '2'}", "")
		 POD("g1", "g", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	const char *why = NULL;
	assert_int_equal(kb_queue_fits(&f->ssn, fx_task(f, "default/g1"), &why), KB_FIT_FAIL);
	assert_non_null(why);
	fx_close(f);
	kb_conf_release(&f->conf);
	kb_snapshot_release(&f->snap);
	kb_snapshot_init(&f->snap);
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: proportion\n"
		   "    enabledAllocatable: false\n");
	assert_int_equal(kb_queue_fits(&f->ssn, fx_task(f, "default/g1"), NULL), KB_FIT_OK);
}

static void close_says_the_queue_capability_holds_the_job(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qc", "weight: 1, capability: {cpu: '2'}")
		 PODGROUP("big", 3, ", queue: qc") POD("b0", "big", ONE, "")
		 POD("b1", "big", ONE, "")
		 POD("b2", "big", ONE, ""));
	fx_open(f, "actions: \"backfill\"\ntiers:\n- plugins:\n  - name: proportion\n");
	fx_run(f);
	fx_close(f);
	const char *why = fx_pending_reason(f, "default/b0");
	assert_non_null(why);
	assert_string_equal(why, "queue \"qc\" would exceed its capability of 2 cpu: the job needs "
				 "3 cpu at once, more than the queue may ever hold");
}

/* ---- preemptive, reclaimable ----------------------------------------------------- */

/* qa (w1) holds 6 cpu in six 1-cpu pods; qb (w1) asks 8 cpu: both deserve
 * 4. qn (w1, not reclaimable) holds nothing of note. */
static void reclaim_cluster(fx *f)
{
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", "{cpu: '1'}", "")
		 RUNNING("a1", "a", "n1", "{cpu: '1'}", "")
		 RUNNING("a2", "a", "n1", "{cpu: '1'}", "")
		 RUNNING("a3", "a", "n1", "{cpu: '1'}", "")
		 RUNNING("a4", "a", "n2", "{cpu: '1'}", "")
		 RUNNING("a5", "a", "n2", "{cpu: '1'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '1'}", "")
		 POD("b1", "b", "{cpu: '7'}", ""));
}

static void reclaimable_takes_victims_only_while_their_queue_is_above_deserved(void **state)
{
	fx *f = *state;
	reclaim_cluster(f);
	fx_open(f, CONF);
	assert_int_equal(deserved(f, "qa")->q[KB_RES_CPU], CPU(4));
	/* 6 held, 4 deserved: two may go, the third would take qa below. */
	assert_int_equal(fx_victims(f, true, "default/b0", "default/a0", "default/a1", "default/a2",
				    "default/a3", NULL),
			 0x3);
}

static void reclaimable_spares_queues_within_their_share(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", "{cpu: '1'}", "")
		 RUNNING("a1", "a", "n1", "{cpu: '1'}", "") POD("a2", "a", "{cpu: '2'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	/* qa holds 2 of its 4. */
	assert_int_equal(fx_victims(f, true, "default/b0", "default/a0", "default/a1", NULL), 0);
}

static void reclaimable_spares_a_queue_that_is_not_reclaimable(void **state)
{
	fx *f = *state;
	fx_loadf(f, QUEUE("qa", "weight: 1, reclaimable: false") QUEUE("qb", "weight: 1")
		 PODGROUP("a", 1, ", queue: qa") RUNNING("a0", "a", "n1", "{cpu: '4'}", "")
		 RUNNING("a1", "a", "n2", "{cpu: '2'}", "")
		 PODGROUP("b", 1, ", queue: qb") POD("b0", "b", "{cpu: '8'}", ""));
	fx_open(f, CONF);
	assert_true(fx_queue(f, "qa")->allocated.q[KB_RES_CPU] > deserved(f, "qa")->q[KB_RES_CPU]);
	assert_int_equal(fx_victims(f, true, "default/b0", "default/a0", "default/a1", NULL), 0);
}

static void preemptive_keeps_the_reclaimer_within_its_deserved_share(void **state)
{
	fx *f = *state;
	reclaim_cluster(f);
	fx_open(f, CONF);
	const kb_queue *qb = fx_queue(f, "qb");
	/* qb holds nothing of its 4: 1 cpu more is within, 7 is not. */
	assert_true(kb_queue_preemptive(&f->ssn, qb, fx_task(f, "default/b0")));
	assert_false(kb_queue_preemptive(&f->ssn, qb, fx_task(f, "default/b1")));
	/* qa is already above its share: it may not reclaim even 1 cpu. */
	assert_false(kb_queue_preemptive(&f->ssn, fx_queue(f, "qa"), fx_task(f, "default/b0")));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(deserved_splits_by_weight_when_both_ask_for_everything),
		T(deserved_is_capped_by_request_and_the_rest_goes_to_others),
		T(deserved_counts_running_tasks_in_the_request),
		T(deserved_is_capped_by_capability),
		T(deserved_is_raised_to_the_guarantee),
		T(queue_order_puts_the_smaller_share_first),
		T(overused_once_allocated_reaches_deserved),
		T(enqueueable_rejects_a_job_whose_minimum_passes_capability),
		T(queue_fits_enforces_capability_unless_allocatable_is_off),
		T(close_says_the_queue_capability_holds_the_job),
		T(reclaimable_takes_victims_only_while_their_queue_is_above_deserved),
		T(reclaimable_spares_queues_within_their_share),
		T(reclaimable_spares_a_queue_that_is_not_reclaimable),
		T(preemptive_keeps_the_reclaimer_within_its_deserved_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

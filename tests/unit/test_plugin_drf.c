/* test_plugin_drf.c - the "drf" plugin through the real framework.
 *
 * Pins its two hooks with drf alone in the configuration: job order by
 * dominant share (the largest of allocated / cluster total over cpu, memory
 * and GPUs, never pods), following tentative placements, and preemptable
 * (a victim only when the preemptor's job, with the task, would still have a
 * share no larger than the victim's job without it). The cluster is two
 * nodes of 4 cpu, 8Gi and 4 pods, so 8 cpu, 16Gi and 8 pods in all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scheduler/statement.h"
#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"allocate\"\n"
			   "tiers:\n"
			   "- plugins:\n"
			   "  - name: drf\n";

static int setup(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, NODE("n1", "{cpu: '4', memory: 8Gi, pods: '4'}")
		 NODE("n2", "{cpu: '4', memory: 8Gi, pods: '4'}"));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* "a" holds 1 cpu and 6Gi (dominant: memory, 6/16), "b" 2 cpu and 1Gi
 * (dominant: cpu, 2/8). By cpu alone "a" would go first, and by name too. */
static void job_order_puts_smaller_dominant_share_first(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("a", 1, "") RUNNING("a0", "a", "n1", "{cpu: '1', memory: 6Gi}", "")
		 POD("a1", "a", "{cpu: '1'}", "")
		 PODGROUP("b", 1, "") RUNNING("b0", "b", "n2", "{cpu: '2', memory: 1Gi}", "")
		 POD("b1", "b", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	const kb_job *a = fx_job(f, "default/a"), *b = fx_job(f, "default/b");
	assert_true(kb_job_less(&f->ssn, b, a));
	assert_false(kb_job_less(&f->ssn, a, b));
}

static void job_order_ignores_pod_count(void **state)
{
	fx *f = *state;
	/* Both hold 2 cpu (2/8); "a" in four pods (4/8 of the pod slots), "b" in
	 * one. Counted as a resource, pods would put "b" first; they are not,
	 * so the shares are equal and the name decides. */
	fx_loadf(f, PODGROUP("a", 1, "") RUNNING("a0", "a", "n2", "{cpu: 500m}", "")
		 RUNNING("a1", "a", "n2", "{cpu: 500m}", "")
		 RUNNING("a2", "a", "n2", "{cpu: 500m}", "")
		 RUNNING("a3", "a", "n2", "{cpu: 500m}", "")
		 PODGROUP("b", 1, "") RUNNING("b0", "b", "n1", "{cpu: '2'}", ""));
	fx_open(f, CONF);
	assert_true(kb_job_less(&f->ssn, fx_job(f, "default/a"), fx_job(f, "default/b")));
	assert_false(kb_job_less(&f->ssn, fx_job(f, "default/b"), fx_job(f, "default/a")));
}

static void job_order_counts_gpus_in_the_dominant_share(void **state)
{
	fx *f = *state;
	fx_loadf(f, NODE("g1", "{cpu: '8', memory: 16Gi, nvidia.com/gpu: '2'}")
		 PODGROUP("a", 1, "")
		 RUNNING("a0", "a", "g1", "{cpu: '1', nvidia.com/gpu: '1'}", "")
		 PODGROUP("b", 1, "") RUNNING("b0", "b", "n1", "{cpu: '4'}", ""));
	fx_open(f, CONF);
	/* Totals: 16 cpu, 2 GPUs. a: 1/2 of the GPUs; b: 4/16 of the cpu. */
	assert_true(kb_job_less(&f->ssn, fx_job(f, "default/b"), fx_job(f, "default/a")));
}

static void job_order_follows_tentative_placements(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("a", 1, "") RUNNING("a0", "a", "n1", "{cpu: '1'}", "")
		 POD("a1", "a", "{cpu: '3'}", "")
		 PODGROUP("b", 1, "") RUNNING("b0", "b", "n2", "{cpu: '2'}", ""));
	fx_open(f, CONF);
	const kb_job *a = fx_job(f, "default/a"), *b = fx_job(f, "default/b");
	assert_true(kb_job_less(&f->ssn, a, b));
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/a1"), 0), 0);
	assert_true(kb_job_less(&f->ssn, b, a)); /* a now holds 4 cpu */
	kb_stmt_discard(&st);
	assert_true(kb_job_less(&f->ssn, a, b));
}

static void preemptable_only_from_jobs_left_with_a_share_no_smaller(void **state)
{
	fx *f = *state;
	/* The preemptor's job holds nothing; with its 2 cpu task: 2/8.
	 * big: 4 cpu, less the 1 cpu victim: 3/8 -> may go.
	 * equal: 3 cpu, less 1: 2/8 -> equal shares, may go.
	 * small: 2 cpu, less 1: 1/8 -> protected. */
	fx_loadf(f, PODGROUP("p", 1, "") POD("p0", "p", "{cpu: '2'}", "")
		 PODGROUP("big", 1, "") RUNNING("big0", "big", "n1", "{cpu: '1'}", "")
		 RUNNING("big1", "big", "n1", "{cpu: '3'}", "")
		 PODGROUP("equal", 1, "") RUNNING("eq0", "equal", "n2", "{cpu: '1'}", "")
		 RUNNING("eq1", "equal", "n2", "{cpu: '2'}", "")
		 PODGROUP("small", 1, "") RUNNING("sm0", "small", "n2", "{cpu: '1'}", "")
		 RUNNING("sm1", "small", "n2", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	assert_int_equal(fx_victims(f, false, "default/p0", "default/big0", "default/eq0",
				    "default/sm0", NULL),
			 0x3);
}

static void preemptable_counts_what_the_preemptor_job_already_holds(void **state)
{
	fx *f = *state;
	/* p holds 2 cpu already: with its 1 cpu task 3/8; v: 4 cpu less the
	 * 1 cpu victim = 3/8 -> may go. */
	fx_loadf(f, PODGROUP("p", 1, "") RUNNING("p0", "p", "n2", "{cpu: '2'}", "")
		 POD("p1", "p", "{cpu: '1'}", "") POD("p2", "p", "{cpu: '2'}", "")
		 PODGROUP("v", 1, "") RUNNING("v0", "v", "n1", "{cpu: '1'}", "")
		 RUNNING("v1", "v", "n1", "{cpu: '3'}", ""));
	fx_open(f, CONF);
	assert_int_equal(fx_victims(f, false, "default/p1", "default/v0", NULL), 0x1);
	/* p2 asks 2 cpu: 4/8 after, above v's 3/8. */
	assert_int_equal(fx_victims(f, false, "default/p2", "default/v0", NULL), 0);
}

static void preemptable_switched_off_gives_no_victims(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("p", 1, "") POD("p0", "p", "{cpu: '1'}", "")
		 PODGROUP("v", 1, "") RUNNING("v0", "v", "n1", "{cpu: '4'}", ""));
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: drf\n"
		   "    enablePreemptable: false\n");
	assert_int_equal(fx_victims(f, false, "default/p0", "default/v0", NULL), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(job_order_puts_smaller_dominant_share_first),
		T(job_order_ignores_pod_count),
		T(job_order_counts_gpus_in_the_dominant_share),
		T(job_order_follows_tentative_placements),
		T(preemptable_only_from_jobs_left_with_a_share_no_smaller),
		T(preemptable_counts_what_the_preemptor_job_already_holds),
		T(preemptable_switched_off_gives_no_victims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

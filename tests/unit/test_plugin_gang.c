/* test_plugin_gang.c - the "gang" plugin through the real framework.
 *
 * Pins each hook it registers, with gang alone in the configuration so that
 * its answer is the framework's: job valid (fewer pods than minMember, or
 * than a role's minTaskMember: invalid, with the reason), job ready and job
 * pipelined (minMember and every role's minimum, Succeeded counting,
 * Pipelined only for pipelined), job starving (the negation of pipelined),
 * job order (jobs not ready first), preemptable and reclaimable (a victim
 * job keeps minMember or goes whole) and the reason written at close.
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
			   "  - name: gang\n";

#define REQ "{cpu: '1', memory: 1Gi}"
#define ROLE(r) "metadata: {annotations: {volcano.sh/task-spec: " r "}}, "

/* A pod of group g with a volcano task role. */
#define ROLE_POD(name, group, role, node)                                                       \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                 \
	", annotations: {scheduling.k8s.io/group-name: " group ", volcano.sh/task-spec: " role   \
	"}}\nspec: {schedulerName: kube-batchd, " node                                           \
	"containers: [{name: c, resources: {requests: " REQ "}}]}\n"
#define ON(node) "nodeName: " node ", "
#define RUN "status: {phase: Running}\n"

/* A pod of group g on node n in a given phase. */
#define PHASE_POD(name, group, node, phase)                                                     \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                 \
	", annotations: {scheduling.k8s.io/group-name: " group "}}\n"                            \
	"spec: {schedulerName: kube-batchd, nodeName: " node ", "                                \
	"containers: [{name: c, resources: {requests: " REQ "}}]}\nstatus: {phase: " phase "}\n"

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

/* ---- job valid ------------------------------------------------------------------- */

static void job_valid_rejects_fewer_pods_than_min_member_with_reason(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("short", 3, "") POD("s0", "short", REQ, "") POD("s1", "short", REQ, "")
		 PODGROUP("full", 2, "") POD("f0", "full", REQ, "") POD("f1", "full", REQ, ""));
	fx_open(f, CONF);
	const char *why = kb_job_valid(&f->ssn, fx_job(f, "default/short"));
	assert_non_null(why);
	assert_string_equal(why, "gang \"default/short\": 2 pods exist, fewer than minMember 3");
	assert_null(kb_job_valid(&f->ssn, fx_job(f, "default/full")));
}

static void job_valid_does_not_count_failed_pods(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") PHASE_POD("g0", "g", "n1", "Running")
		 PHASE_POD("g1", "g", "n1", "Failed"));
	fx_open(f, CONF);
	assert_non_null(kb_job_valid(&f->ssn, fx_job(f, "default/g")));
}

static void job_valid_counts_succeeded_pods(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") PHASE_POD("g0", "g", "n1", "Succeeded")
		 POD("g1", "g", REQ, ""));
	fx_open(f, CONF);
	assert_null(kb_job_valid(&f->ssn, fx_job(f, "default/g")));
}

static void job_valid_rejects_a_role_below_its_min_task_member(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, ", minTaskMember: {ps: 1, worker: 2}")
		 ROLE_POD("ps0", "g", "ps", "") ROLE_POD("w0", "g", "worker", "")
		 ROLE_POD("w1", "g", "ps", ""));
	fx_open(f, CONF);
	const char *why = kb_job_valid(&f->ssn, fx_job(f, "default/g"));
	assert_non_null(why);
	assert_string_equal(why, "gang \"default/g\": 1 pods of task \"worker\" exist, "
				 "fewer than its minTaskMember 2");
}

static void job_valid_does_not_count_a_failed_pod_toward_its_role(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, ", minTaskMember: {worker: 2}")
		 ROLE_POD("w0", "g", "worker", ON("n1")) RUN
		 ROLE_POD("w1", "g", "worker", ON("n1")) "status: {phase: Failed}\n"
		 ROLE_POD("x0", "g", "other", "") ROLE_POD("x1", "g", "other", ""));
	fx_open(f, CONF);
	const char *why = kb_job_valid(&f->ssn, fx_job(f, "default/g"));
	assert_non_null(why);
	assert_string_equal(why, "gang \"default/g\": 1 pods of task \"worker\" exist, "
				 "fewer than its minTaskMember 2");
}

/* ---- job ready / pipelined / starving -------------------------------------------- */

static void job_ready_needs_min_member_ready_tasks(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("two", 3, "") RUNNING("t0", "two", "n1", REQ, "")
		 RUNNING("t1", "two", "n1", REQ, "") POD("t2", "two", REQ, "")
		 PODGROUP("three", 3, "") RUNNING("r0", "three", "n2", REQ, "")
		 RUNNING("r1", "three", "n2", REQ, "") PHASE_POD("r2", "three", "n2", "Succeeded"));
	fx_open(f, CONF);
	assert_false(kb_job_ready(&f->ssn, fx_job(f, "default/two")));
	/* A Succeeded member counts toward minMember. */
	assert_true(kb_job_ready(&f->ssn, fx_job(f, "default/three")));
}

static void job_ready_needs_every_role_minimum(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, ", minTaskMember: {ps: 1, worker: 2}")
		 ROLE_POD("ps0", "g", "ps", "") ROLE_POD("w0", "g", "worker", ON("n1")) RUN
		 ROLE_POD("w1", "g", "worker", ON("n1")) RUN);
	fx_open(f, CONF);
	/* Two ready meet minMember 2, but the ps role has none. */
	const kb_job *j = fx_job(f, "default/g");
	assert_int_equal(kb_job_ready_count(j), 2);
	assert_false(kb_job_ready(&f->ssn, j));
	assert_false(kb_job_pipelined(&f->ssn, j));
	assert_true(kb_job_starving(&f->ssn, j));
}

static void job_pipelined_counts_pipelined_tasks_and_ready_does_not(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") RUNNING("g0", "g", "n1", REQ, "") POD("g1", "g", REQ, ""));
	fx_open(f, CONF);
	const kb_job *j = fx_job(f, "default/g");
	assert_false(kb_job_pipelined(&f->ssn, j));
	assert_true(kb_job_starving(&f->ssn, j));
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_pipeline(&st, fx_task_index(f, "default/g1"), 1), 0);
	assert_true(kb_job_pipelined(&f->ssn, j));
	assert_false(kb_job_ready(&f->ssn, j));
	assert_false(kb_job_starving(&f->ssn, j));
	kb_stmt_discard(&st);
	assert_true(kb_job_starving(&f->ssn, j));
}

static void job_starving_stops_at_min_member_not_at_every_task(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("g", 2, "") RUNNING("g0", "g", "n1", REQ, "")
		 RUNNING("g1", "g", "n1", REQ, "") POD("g2", "g", REQ, ""));
	fx_open(f, CONF);
	/* A pending third member does not make a job at minMember starve
	 * (priority's rule would). */
	assert_false(kb_job_starving(&f->ssn, fx_job(f, "default/g")));
}

/* ---- job order ------------------------------------------------------------------- */

static void job_order_puts_jobs_not_ready_first(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("a-ready", 1, "") RUNNING("a0", "a-ready", "n1", REQ, "")
		 POD("a1", "a-ready", REQ, "") PODGROUP("b-waiting", 1, "")
		 POD("b0", "b-waiting", REQ, ""));
	fx_open(f, CONF);
	const kb_job *a = fx_job(f, "default/a-ready"), *b = fx_job(f, "default/b-waiting");
	assert_true(kb_job_less(&f->ssn, b, a));
	assert_false(kb_job_less(&f->ssn, a, b));
}

/* ---- preemptable / reclaimable --------------------------------------------------- */

/* Victim gang v: minMember 2, three running; preemptor p, a lone pod. */
static void victim_gang(fx *f)
{
	fx_loadf(f, PODGROUP("v", 2, "") RUNNING("v0", "v", "n1", REQ, "")
		 RUNNING("v1", "v", "n1", REQ, "") RUNNING("v2", "v", "n2", REQ, "")
		 LONE_POD("p", REQ, ""));
}

static void preemptable_takes_only_members_above_min_member(void **state)
{
	fx *f = *state;
	victim_gang(f);
	fx_open(f, CONF);
	/* Two offered of three: one is spare, the second would break the gang. */
	assert_int_equal(fx_victims(f, false, "default/p", "default/v0", "default/v1", NULL), 0x1);
	assert_int_equal(fx_victims(f, true, "default/p", "default/v0", "default/v1", NULL), 0x1);
}

static void preemptable_takes_a_whole_gang_whole(void **state)
{
	fx *f = *state;
	victim_gang(f);
	fx_open(f, CONF);
	assert_int_equal(fx_victims(f, false, "default/p", "default/v0", "default/v1", "default/v2",
				    NULL),
			 0x7);
	assert_int_equal(fx_victims(f, true, "default/p", "default/v0", "default/v1", "default/v2",
				    NULL),
			 0x7);
}

static void preemptable_protects_a_gang_at_min_member(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("v", 3, "") RUNNING("v0", "v", "n1", REQ, "")
		 RUNNING("v1", "v", "n1", REQ, "") RUNNING("v2", "v", "n2", REQ, "")
		 LONE_POD("p", REQ, "") LONE_RUNNING("lone", "n2", REQ, ""));
	fx_open(f, CONF);
	/* A job of one is no gang: it may go. */
	assert_int_equal(fx_victims(f, false, "default/p", "default/v0", "default/lone", NULL),
			 0x2);
	assert_int_equal(fx_victims(f, true, "default/p", "default/v0", "default/v1", NULL), 0);
}

static void preemptable_whole_gang_with_a_finished_member_keeps_min_member(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("v", 2, "") RUNNING("v0", "v", "n1", REQ, "")
		 RUNNING("v1", "v", "n1", REQ, "") PHASE_POD("v2", "v", "n2", "Succeeded")
		 LONE_POD("p", REQ, ""));
	fx_open(f, CONF);
	/* Every running member offered, but one finished: taking both would
	 * leave 1 < 2 counted toward minMember, so only the spare one goes. */
	assert_int_equal(fx_victims(f, false, "default/p", "default/v0", "default/v1", NULL), 0x1);
}

/* ---- close ----------------------------------------------------------------------- */

static void close_gives_a_gang_not_ready_the_gang_reason(void **state)
{
	fx *f = *state;
	fx_loadf(f, PODGROUP("big", 3, "") POD("b0", "big", REQ, "") POD("b1", "big", REQ, "")
		 POD("b2", "big", REQ, "") LONE_POD("lone", REQ, ""));
	/* No action places anything (backfill only places BestEffort pods), so
	 * the reason is the gang plugin's own. */
	fx_open(f, "actions: \"backfill\"\ntiers:\n- plugins:\n  - name: gang\n");
	fx_run(f);
	fx_close(f);
	const char *why = fx_pending_reason(f, "default/b0");
	assert_non_null(why);
	assert_string_equal(why, "gang \"default/big\": 0/3 tasks in gang fit: not scheduled yet");
	/* A job of one is no gang: it gets no gang reason. */
	why = fx_pending_reason(f, "default/lone");
	assert_true(why == NULL || strncmp(why, "gang ", 5) != 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(job_valid_rejects_fewer_pods_than_min_member_with_reason),
		T(job_valid_does_not_count_failed_pods),
		T(job_valid_counts_succeeded_pods),
		T(job_valid_rejects_a_role_below_its_min_task_member),
		T(job_valid_does_not_count_a_failed_pod_toward_its_role),
		T(job_ready_needs_min_member_ready_tasks),
		T(job_ready_needs_every_role_minimum),
		T(job_pipelined_counts_pipelined_tasks_and_ready_does_not),
		T(job_starving_stops_at_min_member_not_at_every_task),
		T(job_order_puts_jobs_not_ready_first),
		T(preemptable_takes_only_members_above_min_member),
		T(preemptable_takes_a_whole_gang_whole),
		T(preemptable_protects_a_gang_at_min_member),
		T(preemptable_whole_gang_with_a_finished_member_keeps_min_member),
		T(close_gives_a_gang_not_ready_the_gang_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

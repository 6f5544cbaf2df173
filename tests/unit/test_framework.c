/* Tier semantics of the framework, with fake plugins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scheduler/framework.h"

/* Each fake plugin's behaviour comes from its state. */
typedef struct fake {
	int order;      /* job/task/queue order answer */
	kb_vote vote;   /* ready / pipelined / enqueueable / overused answer */
	int fit;        /* predicate */
	double score;   /* node order */
	kb_vote victims_vote;
	bool protect[4]; /* candidates this plugin protects */
} fake;

static fake fakes[4];

static int fk_open(kb_session *ssn, const kb_plugin_conf *pc, void **ret, kb_err *err)
{
	*ret = &fakes[pc->nargs]; /* the test puts the fake's index in nargs */
	return 0;
}
static int fk_job_order(void *st, const kb_session *s, const kb_job *l, const kb_job *r)
{
	return ((fake *)st)->order;
}
static kb_vote fk_vote(void *st, const kb_session *s, const kb_job *j)
{
	return ((fake *)st)->vote;
}
static kb_vote fk_overused(void *st, const kb_session *s, const kb_queue *q)
{
	return ((fake *)st)->vote;
}
static int fk_pred(void *st, const kb_session *s, const kb_task *t, const kb_node *n, const char **why)
{
	*why = "fake says no";
	return ((fake *)st)->fit;
}
static double fk_score(void *st, const kb_session *s, const kb_task *t, const kb_node *n)
{
	return ((fake *)st)->score;
}
static kb_vote fk_victims(void *st, const kb_session *s, const kb_task *t, const uint32_t *c, uint32_t n,
			  bool *allow)
{
	fake *f = st;
	for (uint32_t i = 0; i < n; i++)
		allow[i] = !f->protect[i];
	return f->victims_vote;
}

static const kb_plugin_ops fake_ops = {
	.name = "fake",
	.open = fk_open,
	.job_order = fk_job_order,
	.job_ready = fk_vote,
	.job_pipelined = fk_vote,
	.job_enqueueable = fk_vote,
	.predicate = fk_pred,
	.node_order = fk_score,
	.preemptable = fk_victims,
	.overused = fk_overused,
};

static kb_plugin_conf pcs[4];
static kb_tier tiers[2];
static kb_conf conf;
static kb_snapshot snap;
static kb_session ssn;
static kb_job jobs[2];

/* Two tiers: plugins 0,1 in tier 0; plugins 2,3 in tier 1. */
static int setup(void **state)
{
	memset(fakes, 0, sizeof(fakes));
	memset(pcs, 0, sizeof(pcs));
	for (int i = 0; i < 4; i++) {
		pcs[i].name = "fake";
		pcs[i].ops = &fake_ops;
		pcs[i].nargs = (uint32_t)i;
		pcs[i].job_order = pcs[i].job_ready = pcs[i].job_pipelined = pcs[i].predicate =
			pcs[i].node_order = pcs[i].preemptable = pcs[i].job_enqueued = pcs[i].overused = true;
		fakes[i].vote = KB_ABSTAIN;
	}
	tiers[0] = (kb_tier){&pcs[0], 2};
	tiers[1] = (kb_tier){&pcs[2], 2};
	memset(&conf, 0, sizeof(conf));
	conf.tiers = tiers;
	conf.ntiers = 2;
	kb_snapshot_init(&snap);
	memset(jobs, 0, sizeof(jobs));
	jobs[0] = (kb_job){.uid = "a", .key = "ns/a", .creation_ms = 10};
	jobs[1] = (kb_job){.uid = "b", .key = "ns/b", .creation_ms = 5};
	snap.jobs = jobs;
	snap.njobs = 2;
	return 0;
}

static void open_session(void)
{
	kb_err err;
	assert_int_equal(kb_session_open(&ssn, &snap, &conf, NULL, NULL, 0, &err), 0);
}

static int teardown(void **state)
{
	kb_session_close(&ssn);
	snap.jobs = NULL;
	snap.njobs = 0;
	kb_snapshot_release(&snap);
	return 0;
}

static void order_first_nonzero_answer_in_tier_order_wins(void **state)
{
	fakes[1].order = -1; /* tier 0 says a first */
	fakes[2].order = 1;  /* tier 1 would say b first: not asked */
	open_session();
	assert_true(kb_job_less(&ssn, &jobs[0], &jobs[1]));
}

static void order_falls_back_to_creation_time(void **state)
{
	open_session();
	assert_true(kb_job_less(&ssn, &jobs[1], &jobs[0])); /* b is older */
}

static void disabled_switch_removes_the_callback(void **state)
{
	fakes[0].order = 1;
	pcs[0].job_order = false;
	open_session();
	assert_true(kb_job_less(&ssn, &jobs[1], &jobs[0]));
}

static void ready_is_and_over_every_plugin(void **state)
{
	fakes[0].vote = KB_PERMIT;
	fakes[3].vote = KB_REJECT;
	open_session();
	assert_false(kb_job_ready(&ssn, &jobs[0]));
	assert_false(kb_job_pipelined(&ssn, &jobs[0]));
}

static void enqueueable_first_tier_with_a_permit_admits(void **state)
{
	fakes[0].vote = KB_PERMIT;
	fakes[2].vote = KB_REJECT; /* a later tier is never asked */
	open_session();
	assert_true(kb_job_enqueueable(&ssn, &jobs[0]));
}

static void enqueueable_reject_in_tier_refuses(void **state)
{
	fakes[0].vote = KB_PERMIT;
	fakes[1].vote = KB_REJECT;
	open_session();
	assert_false(kb_job_enqueueable(&ssn, &jobs[0]));
}

static void overused_is_or(void **state)
{
	fakes[3].vote = KB_PERMIT;
	open_session();
	kb_queue q = {.name = "q"};
	assert_true(kb_queue_overused(&ssn, &q));
}

static void predicate_first_failure_reported(void **state)
{
	fakes[2].fit = KB_FIT_FAIL;
	open_session();
	const char *why = NULL;
	kb_task t = {0};
	kb_node n = {.ready = true};
	n.idle.q[KB_RES_PODS] = KB_ONE_POD;
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_FAIL);
	assert_string_equal(why, "fake says no");
}

/* The node's own fit is the framework's, before any plugin and whatever the
 * configuration lists: not ready, no pod slot, or short of a resource the
 * task asks (against future idle: idle + releasing - pipelined). */
static void node_fit_comes_before_every_plugin(void **state)
{
	open_session();
	const char *why = NULL;
	kb_task t = {0};
	t.req.q[KB_RES_CPU] = 2000;
	t.req.q[KB_RES_MEMORY] = 1000;
	kb_node n = {0};
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_FAIL);
	assert_string_equal(why, "node(s) were not ready");
	n.ready = true;
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_FAIL);
	assert_string_equal(why, "Too many pods");
	n.idle.q[KB_RES_PODS] = KB_ONE_POD;
	n.idle.q[KB_RES_CPU] = 1000;
	n.idle.q[KB_RES_MEMORY] = 1000;
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_FAIL);
	assert_string_equal(why, "Insufficient cpu");
	n.releasing.q[KB_RES_CPU] = 1500;
	n.pipelined.q[KB_RES_CPU] = 600; /* future idle 1900m: short */
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_FAIL);
	n.pipelined.q[KB_RES_CPU] = 0;
	assert_int_equal(kb_predicate(&ssn, &t, &n, &why), KB_FIT_OK);
}

static void node_scores_are_summed(void **state)
{
	fakes[0].score = 1.5;
	fakes[3].score = 2;
	open_session();
	kb_task t = {0};
	kb_node n = {0};
	assert_true(kb_node_score(&ssn, &t, &n) == 3.5);
}

static void victims_intersect_within_tier_and_first_deciding_tier_wins(void **state)
{
	/* Tier 0: plugin 0 abstains, plugin 1 protects candidate 1.
	 * Tier 1: would protect everything but is never asked. */
	fakes[0].victims_vote = KB_ABSTAIN;
	fakes[0].protect[0] = true; /* ignored: abstained */
	fakes[1].victims_vote = KB_PERMIT;
	fakes[1].protect[1] = true;
	fakes[2].victims_vote = KB_PERMIT;
	for (int i = 0; i < 4; i++)
		fakes[2].protect[i] = true;
	open_session();
	uint32_t cands[3] = {7, 8, 9}, out[3];
	kb_task t = {0};
	assert_int_equal(kb_preemptable(&ssn, &t, cands, 3, out), 2);
	assert_int_equal(out[0], 7);
	assert_int_equal(out[1], 9);
}

static void victims_none_when_nobody_decides(void **state)
{
	open_session();
	uint32_t cands[2] = {1, 2}, out[2];
	kb_task t = {0};
	assert_int_equal(kb_preemptable(&ssn, &t, cands, 2, out), 0);
}

static void victims_empty_decision_is_final(void **state)
{
	/* Tier 0 decides "nobody": tier 1's generosity does not apply. */
	fakes[1].victims_vote = KB_PERMIT;
	fakes[1].protect[0] = fakes[1].protect[1] = true;
	fakes[2].victims_vote = KB_PERMIT;
	open_session();
	uint32_t cands[2] = {1, 2}, out[2];
	kb_task t = {0};
	assert_int_equal(kb_preemptable(&ssn, &t, cands, 2, out), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(order_first_nonzero_answer_in_tier_order_wins),
		T(order_falls_back_to_creation_time),
		T(disabled_switch_removes_the_callback),
		T(ready_is_and_over_every_plugin),
		T(enqueueable_first_tier_with_a_permit_admits),
		T(enqueueable_reject_in_tier_refuses),
		T(overused_is_or),
		T(predicate_first_failure_reported),
		T(node_fit_comes_before_every_plugin),
		T(node_scores_are_summed),
		T(victims_intersect_within_tier_and_first_deciding_tier_wins),
		T(victims_none_when_nobody_decides),
		T(victims_empty_decision_is_final),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

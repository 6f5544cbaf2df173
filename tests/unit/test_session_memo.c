/* test_session_memo.c - kb_session_memo: a session over a cluster unchanged
 * since one whose preempt and reclaim committed nothing skips them, until
 * the cluster changes, the configuration differs or a cool-down that held
 * them back ends; and what it skips would indeed have done nothing.
 *
 * Sessions run as the daemon runs them: kb_cluster_session_snapshot, open,
 * kb_session_use_memo, actions, close, then the session's evictions noted
 * in the cluster (kb_cluster_note_eviction and RELEASING, as the writers
 * record them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"enqueue, allocate, backfill, preempt, reclaim\"\n"
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

#define T0 1000000 /* when "high" was last evicted */
#define PREEMPT_COOLDOWN 60000 /* preempt's default cooldown (preempt.c) */

typedef struct run {
	bool replayed;
	int evictions;
	const char *evicted; /* the first, or NULL */
} run;

/* One session at now over f->cluster with memo (NULL: none), its
 * evictions then recorded in the cluster as the writers record them. */
static run session(fx *f, const kb_conf *conf, kb_session_memo *memo, int64_t now)
{
	kb_err err = {0};
	kb_snapshot *snap;
	assert_int_equal(kb_cluster_session_snapshot(&f->cluster, &snap, &err), 0);
	kb_session ssn;
	f->nevicted = 0;
	assert_int_equal(kb_session_open(&ssn, snap, conf, &fx_recorder, f, now, &err), 0);
	if (memo)
		kb_session_use_memo(&ssn, memo);
	assert_int_equal(kb_session_run_actions(&ssn, &err), 0);
	run out = {.replayed = ssn.memo_replayed, .evictions = f->nevicted};
	static char first[256];
	if (f->nevicted > 0) {
		snprintf(first, sizeof(first), "%s", f->evicted[0]);
		out.evicted = first;
	}
	kb_session_close(&ssn);
	for (int i = 0; i < out.evictions; i++) {
		char key[256];
		snprintf(key, sizeof(key), "%s", i == 0 ? first : f->evicted[i]);
		assert_int_equal(kb_cluster_note_eviction(&f->cluster, key, now), 0);
	}
	return out;
}

static int setup(void **state)
{
	kb_err err = {0};
	fx *f = fx_new();
	/* "low" fills n1; "high" could take its place, but was itself evicted
	 * at T0, so it may not evict for itself until T0 + the cooldown. */
	fx_loadf(f, NODE("n1", "{cpu: '4', memory: 8Gi}")
		 LONE_RUNNING("low", "n1", CPU(4), PRIO(10))
		 LONE_POD("high", CPU(4), PRIO(100)));
	assert_int_equal(kb_cluster_note_eviction(&f->cluster, "default/high", T0), 0);
	assert_int_equal(kb_conf_load_buffer(CONF, strlen(CONF), "conf", &kb_builtin_registry,
					     &f->conf, &err),
			 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

static void an_unchanged_cluster_skips_preempt_until_the_cooldown_ends(void **state)
{
	fx *f = *state;
	kb_session_memo memo = {0};
	run r = session(f, &f->conf, &memo, T0 + 1000);
	assert_false(r.replayed); /* nothing learnt yet */
	assert_int_equal(r.evictions, 0);
	assert_true(memo.valid);
	assert_int_equal(memo.until_ms, T0 + PREEMPT_COOLDOWN);

	r = session(f, &f->conf, &memo, T0 + 30000);
	assert_true(r.replayed);
	assert_int_equal(r.evictions, 0);
	assert_int_equal(memo.replays, 1);

	/* The cooldown is over: preempt runs, and evicts. */
	r = session(f, &f->conf, &memo, T0 + PREEMPT_COOLDOWN);
	assert_false(r.replayed);
	assert_int_equal(r.evictions, 1);
	assert_string_equal(r.evicted, "default/low");
	assert_false(memo.valid); /* it committed: nothing to stand for */
}

static void a_change_to_the_cluster_runs_preempt_again(void **state)
{
	fx *f = *state;
	kb_session_memo memo = {0};
	session(f, &f->conf, &memo, T0 + 1000);
	assert_true(memo.valid);
	/* A second low-priority pod on a new node: the state differs. */
	fx_loadf(f, NODE("n2", "{cpu: '1', memory: 8Gi}")
		 LONE_RUNNING("low2", "n2", CPU(1), PRIO(10)));
	run r = session(f, &f->conf, &memo, T0 + 2000);
	assert_false(r.replayed);
	assert_int_equal(r.evictions, 0);
	/* ...and the scheduler's own records are changes too. */
	assert_int_equal(kb_cluster_note_eviction(&f->cluster, "default/low2", T0 + 2500), 0);
	r = session(f, &f->conf, &memo, T0 + 3000);
	assert_false(r.replayed);
	r = session(f, &f->conf, &memo, T0 + 4000);
	assert_true(r.replayed);
}

static void another_configuration_or_no_memo_runs_everything(void **state)
{
	fx *f = *state;
	kb_err err = {0};
	kb_session_memo memo = {0};
	session(f, &f->conf, &memo, T0 + 1000);
	assert_true(memo.valid);
	kb_conf other;
	assert_int_equal(kb_conf_load_buffer(CONF, strlen(CONF), "other", &kb_builtin_registry,
					     &other, &err),
			 0);
	assert_false(session(f, &other, &memo, T0 + 2000).replayed);
	assert_false(session(f, &f->conf, NULL, T0 + 3000).replayed);
	kb_conf_release(&other);
}

/* What a replay skips would have done nothing: the same sessions without a
 * memo evict exactly as the memo's do, at every step. */
static void replays_decide_as_full_sessions_do(void **state)
{
	fx *a = *state, *b = fx_new();
	kb_err err = {0};
	fx_loadf(b, NODE("n1", "{cpu: '4', memory: 8Gi}")
		 LONE_RUNNING("low", "n1", CPU(4), PRIO(10))
		 LONE_POD("high", CPU(4), PRIO(100)));
	assert_int_equal(kb_cluster_note_eviction(&b->cluster, "default/high", T0), 0);
	assert_int_equal(kb_conf_load_buffer(CONF, strlen(CONF), "conf", &kb_builtin_registry,
					     &b->conf, &err),
			 0);
	kb_session_memo memo = {0};
	int replays = 0;
	for (int64_t now = T0 + 1000; now <= T0 + 2 * PREEMPT_COOLDOWN; now += 7000) {
		run ra = session(a, &a->conf, &memo, now), rb = session(b, &b->conf, NULL, now);
		replays += ra.replayed;
		assert_false(rb.replayed);
		assert_int_equal(ra.evictions, rb.evictions);
	}
	assert_true(replays > 0);
	fx_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			an_unchanged_cluster_skips_preempt_until_the_cooldown_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(a_change_to_the_cluster_runs_preempt_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(another_configuration_or_no_memo_runs_everything,
						setup, teardown),
		cmocka_unit_test_setup_teardown(replays_decide_as_full_sessions_do, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

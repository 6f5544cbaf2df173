/* test_jobstatus.c - api/jobstatus: the phase a session gives a PodGroup,
 * in particular when members vanish (finished pods are not in the
 * cluster-mode cache: kube/reflector.h's pod field selector). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "api/jobstatus.h"

static kb_job job(kb_pg_phase phase, int32_t min_member, int32_t running, int32_t pending)
{
	kb_job j;
	memset(&j, 0, sizeof(j));
	j.phase = phase;
	j.min_member = min_member;
	j.nstatus[KB_TASK_RUNNING] = running;
	j.nstatus[KB_TASK_PENDING] = pending;
	j.ntasks = (uint32_t)(running + pending);
	return j;
}

static void running_gang_whose_members_finished_stays_running(void **state)
{
	kb_job_status st;
	/* 6 of 6 were running; 2 finished and left the cache, none waits. */
	kb_job j = job(KB_PG_RUNNING, 6, 4, 0);
	kb_job_status_of(&j, NULL, true, &st);
	assert_int_equal(st.phase, KB_PG_RUNNING);
	assert_null(st.unschedulable);
	/* All finished: no pods left at all. */
	j = job(KB_PG_RUNNING, 6, 0, 0);
	kb_job_status_of(&j, NULL, false, &st);
	assert_int_equal(st.phase, KB_PG_RUNNING);
}

static void running_gang_below_min_with_members_waiting_goes_back(void **state)
{
	kb_job_status st;
	kb_job j = job(KB_PG_RUNNING, 6, 4, 2);
	kb_job_status_of(&j, "gang: 4 of 6", true, &st);
	assert_int_equal(st.phase, KB_PG_INQUEUE);
	assert_string_equal(st.unschedulable, "gang: 4 of 6");
	kb_job_status_of(&j, "gang: 4 of 6", false, &st);
	assert_int_equal(st.phase, KB_PG_PENDING); /* volcano's, without enqueue */
}

/* The API refused every member's binding: all are held back for their
 * backoff, none is a task. The group must not read Running (it did: the
 * members looked vanished, as finished ones do). */
static void running_gang_whose_members_are_held_back_goes_back(void **state)
{
	kb_job_status st;
	kb_job j = job(KB_PG_RUNNING, 4, 0, 0);
	j.ngated = 4;
	kb_job_status_of(&j, "binding refused", true, &st);
	assert_int_equal(st.phase, KB_PG_INQUEUE);
	assert_int_equal(st.pending, 4);
	assert_string_equal(st.unschedulable, "binding refused");
	kb_job_status_of(&j, "binding refused", false, &st);
	assert_int_equal(st.phase, KB_PG_PENDING);
}

static void pending_group_without_pods_stays_pending(void **state)
{
	kb_job_status st;
	kb_job j = job(KB_PG_PENDING, 3, 0, 0);
	kb_job_status_of(&j, NULL, true, &st);
	assert_int_equal(st.phase, KB_PG_PENDING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(running_gang_whose_members_finished_stays_running),
		cmocka_unit_test(running_gang_below_min_with_members_waiting_goes_back),
		cmocka_unit_test(running_gang_whose_members_are_held_back_goes_back),
		cmocka_unit_test(pending_group_without_pods_stays_pending),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

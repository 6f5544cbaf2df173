/* test_forked.c - daemon/forked: a child's output read back on the loop
 * while the loop goes on, each way a child can end (failure, signal,
 * deadline, too much output), one child at a time, cancel, the default
 * loop (which reaps children itself), and the child's
 * copy of memory kept apart from the parent's. Real fork(), real pipes, a
 * real libev loop. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <ev.h>

#include "daemon/forked.h"

typedef struct report {
	int calls;
	kb_forked_end end;
	int code;
	char out[256];
	size_t len;
	double wall_s;
} report;

static void on_done(void *arg, const kb_forked_result *res)
{
	report *r = arg;
	r->calls++;
	r->end = res->end;
	r->code = res->code;
	r->len = res->len;
	(void)snprintf(r->out, sizeof(r->out), "%s", res->out);
	r->wall_s = res->wall_s;
}

/* Runs loop until the report arrives, at most 20 s. */
static void run_until_done(struct ev_loop *loop, report *r)
{
	for (int i = 0; i < 20000 && !r->calls; i++) {
		ev_run(loop, EVRUN_ONCE | EVRUN_NOWAIT);
		if (!r->calls)
			usleep(1000);
	}
	assert_int_equal(r->calls, 1);
}

/* One child of fn(arg) on loop (a fresh private loop when NULL), run to
 * its report. */
static report run_one(struct ev_loop *loop, kb_forked_fn fn, void *arg, size_t max_out,
		      double deadline_s)
{
	struct ev_loop *l = loop ? loop : ev_loop_new(EVFLAG_AUTO);
	kb_forked f;
	report r = {0};
	kb_err err = {0};
	kb_forked_init(&f, l, max_out, deadline_s, on_done, &r);
	assert_int_equal(kb_forked_start(&f, fn, arg, &err), 0);
	assert_true(kb_forked_busy(&f));
	run_until_done(l, &r);
	assert_false(kb_forked_busy(&f));
	if (!loop)
		ev_loop_destroy(l);
	return r;
}

static int shared_value = 1;

static int write_hello(void *arg, FILE *out)
{
	(void)arg;
	shared_value = 2; /* the child's copy only */
	fprintf(out, "hello %d", shared_value);
	return 0;
}

static void output_arrives_and_memory_is_apart(void **state)
{
	(void)state;
	report r = run_one(NULL, write_hello, NULL, 1 << 20, 10.0);
	assert_int_equal(r.end, KB_FORKED_OK);
	assert_string_equal(r.out, "hello 2");
	assert_int_equal(r.len, 7);
	assert_int_equal(shared_value, 1);
}

static int fail_with_message(void *arg, FILE *out)
{
	(void)arg;
	fputs("error\tno room", out);
	return -1;
}

static void a_failing_child_says_so(void **state)
{
	(void)state;
	report r = run_one(NULL, fail_with_message, NULL, 1 << 20, 10.0);
	assert_int_equal(r.end, KB_FORKED_FAILED);
	assert_int_equal(r.code, 1);
	assert_string_equal(r.out, "error\tno room"); /* what it wrote still arrives */
}

static int die_by_signal(void *arg, FILE *out)
{
	(void)arg;
	fputs("partial", out);
	fflush(out);
	raise(SIGUSR1);
	return 0;
}

static void a_signal_is_reported(void **state)
{
	(void)state;
	report r = run_one(NULL, die_by_signal, NULL, 1 << 20, 10.0);
	assert_int_equal(r.end, KB_FORKED_SIGNALED);
	assert_int_equal(r.code, SIGUSR1);
}

static int sleep_long(void *arg, FILE *out)
{
	(void)arg;
	(void)out;
	sleep(30);
	return 0;
}

static void a_child_past_its_deadline_is_killed(void **state)
{
	(void)state;
	report r = run_one(NULL, sleep_long, NULL, 1 << 20, 0.3);
	assert_int_equal(r.end, KB_FORKED_DEADLINE);
	assert_true(r.wall_s >= 0.25 && r.wall_s < 5.0);
}

static int write_a_lot(void *arg, FILE *out)
{
	(void)arg;
	for (int i = 0; i < 100000; i++)
		if (fputs("0123456789", out) < 0)
			return -1;
	return 0;
}

static void too_much_output_is_cut(void **state)
{
	(void)state;
	report r = run_one(NULL, write_a_lot, NULL, 4096, 10.0);
	assert_int_equal(r.end, KB_FORKED_TOO_LONG);
}

static void one_at_a_time_and_cancel(void **state)
{
	(void)state;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	kb_forked f;
	report r = {0};
	kb_forked_init(&f, loop, 1 << 20, 10.0, on_done, &r);
	kb_err err = {0};
	assert_int_equal(kb_forked_start(&f, sleep_long, NULL, &err), 0);
	pid_t pid = f.pid;
	assert_int_equal(kb_forked_start(&f, write_hello, NULL, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "still runs"));
	kb_forked_cancel(&f);
	assert_false(kb_forked_busy(&f));
	assert_int_equal(kill(pid, 0), -1); /* reaped: no such process */
	for (int i = 0; i < 50; i++)
		ev_run(loop, EVRUN_ONCE | EVRUN_NOWAIT);
	assert_int_equal(r.calls, 0);
	kb_forked_cancel(&f); /* idle: nothing */
	/* and the next one runs */
	assert_int_equal(kb_forked_start(&f, write_hello, NULL, &err), 0);
	run_until_done(loop, &r);
	assert_int_equal(r.end, KB_FORKED_OK);
	ev_loop_destroy(loop);
}

static int close_then_linger(void *arg, FILE *out)
{
	(void)arg;
	fputs("early", out);
	fflush(out);
	close(fileno(out)); /* the pipe closes now; the exit (code 1: the
			     * stream's own close fails) comes 300 ms later */
	usleep(300 * 1000);
	return 0;
}

/* The pipe may close well before the child's status arrives: the report
 * waits for both, on the default loop and on another. */
static void status_after_the_pipe_closes(void **state)
{
	(void)state;
	struct ev_loop *loops[] = {ev_default_loop(0), NULL};
	for (int i = 0; i < 2; i++) {
		report r = run_one(loops[i], close_then_linger, NULL, 1 << 20, 10.0);
		assert_int_equal(r.end, KB_FORKED_FAILED);
		assert_int_equal(r.code, 1);
		assert_string_equal(r.out, "early");
		assert_true(r.wall_s >= 0.25);
	}
}

/* libev's default loop reaps every child on SIGCHLD (the daemon's loop):
 * the status comes through an ev_child watcher there. Each way to end,
 * and a cancel, on it. */
static void on_the_default_loop(void **state)
{
	(void)state;
	struct ev_loop *loop = ev_default_loop(0);
	kb_forked f;
	kb_err err = {0};
	struct {
		kb_forked_fn fn;
		kb_forked_end end;
		int code;
		const char *out;
	} runs[] = {
		{write_hello, KB_FORKED_OK, 0, "hello 2"},
		{fail_with_message, KB_FORKED_FAILED, 1, "error\tno room"},
		{die_by_signal, KB_FORKED_SIGNALED, SIGUSR1, "partial"},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		report r = run_one(loop, runs[i].fn, NULL, 1 << 20, 10.0);
		assert_int_equal(r.end, runs[i].end);
		assert_int_equal(r.code, runs[i].code);
		assert_string_equal(r.out, runs[i].out);
	}
	report r = {0};
	kb_forked_init(&f, loop, 1 << 20, 10.0, on_done, &r);
	assert_true(f.use_child);
	assert_int_equal(kb_forked_start(&f, sleep_long, NULL, &err), 0);
	pid_t pid = f.pid;
	kb_forked_cancel(&f);
	assert_int_equal(kill(pid, 0), -1);
	for (int i = 0; i < 50; i++)
		ev_run(loop, EVRUN_ONCE | EVRUN_NOWAIT);
	assert_int_equal(r.calls, 0);
}

static int report_fd(void *arg, FILE *out)
{
	int fd = *(int *)arg;
	fputs(fcntl(fd, F_GETFD) < 0 && errno == EBADF ? "closed" : "open", out);
	return 0;
}

/* The parent's descriptors (its sockets, files) are closed in the child. */
static void the_child_holds_none_of_the_parents_files(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY);
	assert_true(fd > 2);
	report r = run_one(NULL, report_fd, &fd, 1 << 20, 10.0);
	assert_int_equal(r.end, KB_FORKED_OK);
	assert_string_equal(r.out, "closed");
	assert_true(fcntl(fd, F_GETFD) >= 0); /* still the parent's */
	close(fd);
}

static int busy_half_second(void *arg, FILE *out)
{
	(void)arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	volatile unsigned long spin = 0;
	do {
		spin++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 500);
	fputs("done", out);
	return 0;
}

static void tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	(*(int *)w->data)++;
}

/* The point of the module: the parent's loop runs its timers while the
 * child computes. */
static void the_loop_goes_on_meanwhile(void **state)
{
	(void)state;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	int ticks = 0;
	ev_timer t;
	ev_timer_init(&t, tick, 0.02, 0.02);
	t.data = &ticks;
	ev_timer_start(loop, &t);
	kb_forked f;
	report r = {0};
	kb_forked_init(&f, loop, 1 << 20, 10.0, on_done, &r);
	kb_err err = {0};
	assert_int_equal(kb_forked_start(&f, busy_half_second, NULL, &err), 0);
	while (!r.calls)
		ev_run(loop, EVRUN_ONCE);
	assert_int_equal(r.end, KB_FORKED_OK);
	assert_string_equal(r.out, "done");
	/* 500 ms of the child's work: 25 ticks of 20 ms; at least 10 on a busy machine */
	assert_true(ticks >= 10);
	ev_timer_stop(loop, &t);
	ev_loop_destroy(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_arrives_and_memory_is_apart),
		cmocka_unit_test(a_failing_child_says_so),
		cmocka_unit_test(a_signal_is_reported),
		cmocka_unit_test(a_child_past_its_deadline_is_killed),
		cmocka_unit_test(too_much_output_is_cut),
		cmocka_unit_test(one_at_a_time_and_cancel),
		cmocka_unit_test(on_the_default_loop),
		cmocka_unit_test(status_after_the_pipe_closes),
		cmocka_unit_test(the_child_holds_none_of_the_parents_files),
		cmocka_unit_test(the_loop_goes_on_meanwhile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* forked.c - work in a forked copy of the daemon (see forked.h). */
#include "daemon/forked.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"

#define CHILD_NICE 10
#define READ_CHUNK 65536

/* The child: never returns. */
static void child_main(int fd, pid_t parent, kb_forked_fn fn, void *arg)
{
	/* The parent's loop handles these signals; here they end the child. */
	(void)signal(SIGTERM, SIG_DFL);
	(void)signal(SIGINT, SIG_DFL);
	(void)signal(SIGHUP, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the parent died before the line above */
	(void)setpriority(PRIO_PROCESS, 0, CHILD_NICE);
	/* The parent's sockets and files: the child has no use for them, and
	 * holding them would keep a connection the parent closes open. */
	if (fd > 3)
		(void)close_range(3, (unsigned)fd - 1, 0);
	(void)close_range((unsigned)fd + 1, ~0U, 0);
	FILE *out = fdopen(fd, "w");
	if (!out)
		_exit(1);
	int r = fn(arg, out);
	if (fclose(out) != 0)
		r = -1;
	_exit(r == 0 ? 0 : 1);
}

/* Stops every watcher and closes the pipe. */
static void stop_watching(kb_forked *f)
{
	ev_io_stop(f->loop, &f->io);
	ev_timer_stop(f->loop, &f->deadline);
	if (f->use_child)
		ev_child_stop(f->loop, &f->child);
	if (f->fd >= 0)
		(void)close(f->fd);
	f->fd = -1;
}

/* Reports once (f idle first: the callback may start the next child). */
static void report(kb_forked *f, kb_forked_end end, int code)
{
	f->pid = 0;
	kb_buf got = f->out;
	memset(&f->out, 0, sizeof(f->out));
	kb_forked_result res = {
		.end = end,
		.code = code,
		.out = got.data ? got.data : "",
		.len = got.len,
		.wall_s = kb_mono_s() - f->started_s,
	};
	f->done(f->arg, &res);
	kb_buf_release(&got);
}

/* The pipe is closed and the child's status known: how it ended. */
static void complete(kb_forked *f)
{
	int st = f->status;
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		report(f, KB_FORKED_FAILED, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		report(f, KB_FORKED_SIGNALED, WTERMSIG(st));
	else
		report(f, KB_FORKED_OK, 0);
}

/* Ends the run early: kills the child, reaps it (before the default
 * loop's SIGCHLD handler can: it runs later, from the loop) and reports. */
static void kill_and_report(kb_forked *f, kb_forked_end end, int code)
{
	stop_watching(f);
	if (!f->exited) { /* once reaped, its pid may be another process's */
		(void)kill(f->pid, SIGKILL);
		while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	report(f, end, code);
}

/* The pipe closed: with the default loop the child's status comes through
 * its ev_child watcher (libev reaps every child there); with another,
 * it is reaped here (the child is exiting: a short wait). */
static void on_eof(kb_forked *f)
{
	/* The child watcher stays: its status may come after the pipe closes. */
	ev_io_stop(f->loop, &f->io);
	(void)close(f->fd);
	f->fd = -1;
	f->eof = true;
	if (!f->use_child) {
		pid_t w;
		do
			w = waitpid(f->pid, &f->status, 0);
		while (w < 0 && errno == EINTR);
		if (w != f->pid) {
			int e = errno;
			stop_watching(f);
			report(f, KB_FORKED_READ_ERROR, e);
			return;
		}
		f->exited = true;
	}
	if (f->exited) {
		stop_watching(f);
		complete(f);
	}
}

static void on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	kb_forked *f = w->data;
	ev_child_stop(loop, w);
	f->status = w->rstatus;
	f->exited = true;
	if (f->eof) {
		stop_watching(f);
		complete(f);
	}
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	kb_forked *f = w->data;
	char chunk[READ_CHUNK];
	for (;;) {
		ssize_t n = read(f->fd, chunk, sizeof(chunk));
		int r = 0;
		if (n > 0 && (r = kb_buf_append(&f->out, chunk, (size_t)n, f->max_out)) == 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == 0)
			on_eof(f);
		else if (n < 0)
			kill_and_report(f, KB_FORKED_READ_ERROR, errno);
		else if (r == -E2BIG)
			kill_and_report(f, KB_FORKED_TOO_LONG, 0);
		else
			kill_and_report(f, KB_FORKED_READ_ERROR, -r);
		return;
	}
}

static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_forked *f = w->data;
	kill_and_report(f, KB_FORKED_DEADLINE, 0);
}

void kb_forked_init(kb_forked *f, struct ev_loop *loop, size_t max_out, double deadline_s,
		    kb_forked_done done, void *arg)
{
	memset(f, 0, sizeof(*f));
	f->loop = loop;
	f->fd = -1;
	f->max_out = max_out;
	f->deadline_s = deadline_s;
	f->done = done;
	f->arg = arg;
	ev_init(&f->io, on_readable);
	f->io.data = f;
	ev_init(&f->deadline, on_deadline);
	f->deadline.data = f;
	f->use_child = ev_is_default_loop(loop);
}

bool kb_forked_busy(const kb_forked *f)
{
	return f->pid != 0;
}

int kb_forked_start(kb_forked *f, kb_forked_fn fn, void *fn_arg, kb_err *err)
{
	if (f->pid)
		return kb_err_set(err, -EBUSY, "a forked child (pid %d) still runs", (int)f->pid);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return kb_err_set(err, -errno, "pipe: %s", strerror(errno));
	/* Whatever the parent's streams hold is written once, by the parent. */
	(void)fflush(NULL);
	pid_t parent = getpid();
	f->started_s = kb_mono_s();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		(void)close(fds[0]);
		(void)close(fds[1]);
		return kb_err_set(err, -e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		(void)close(fds[0]);
		child_main(fds[1], parent, fn, fn_arg);
	}
	(void)close(fds[1]);
	int fl = fcntl(fds[0], F_GETFL);
	if (fl < 0 || fcntl(fds[0], F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		(void)close(fds[0]);
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return kb_err_set(err, -e, "making the child's pipe non-blocking: %s", strerror(e));
	}
	f->pid = pid;
	f->fd = fds[0];
	f->eof = f->exited = false;
	f->status = 0;
	if (f->use_child) {
		ev_child_init(&f->child, on_child, pid, 0);
		f->child.data = f;
		ev_child_start(f->loop, &f->child);
	}
	ev_io_set(&f->io, f->fd, EV_READ);
	ev_io_start(f->loop, &f->io);
	ev_now_update(f->loop);
	ev_timer_set(&f->deadline, f->deadline_s, 0.);
	ev_timer_start(f->loop, &f->deadline);
	return 0;
}

void kb_forked_cancel(kb_forked *f)
{
	if (!f->pid)
		return;
	stop_watching(f);
	if (!f->exited) {
		(void)kill(f->pid, SIGKILL);
		while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	f->pid = 0;
	kb_buf_release(&f->out);
}

/* forked.h - work done in a forked copy of the daemon, its output read back
 * on the loop (the way redis writes a snapshot: fork, and let the child
 * read the copy-on-write image while the parent goes on).
 *
 * kb_forked_start forks. The child sees the whole process as it was at the
 * fork, changes nothing the parent sees, and runs fn(arg, out) with `out`
 * a stream into a pipe; what it writes there, up to max_out bytes, is what
 * the parent gets. The child then _exit()s: 0 when fn returned 0 and the
 * stream was flushed, 1 otherwise (no atexit handlers, no stdio buffers
 * inherited from the parent written twice: the parent flushes them before
 * the fork). The child runs at nice +10, dies with the parent
 * (PR_SET_PDEATHSIG), takes the default action for SIGTERM, SIGINT and
 * SIGHUP, whose handlers are the parent's loop's, and closes every file
 * descriptor but 0-2 and its pipe (the parent's connections stay the
 * parent's alone).
 *
 * The parent reads the pipe from the loop (ev_io, non-blocking). When the
 * child has closed it and been reaped, done(arg, result) runs once, with
 * what it wrote and how it ended. (libev's default loop reaps every child
 * on SIGCHLD: there the status comes through an ev_child watcher; with
 * another loop the child is reaped here once the pipe closes); the output is the callee's to read
 * during the call only. A child still running after deadline_s of wall
 * time, or writing more than max_out bytes, is killed (SIGKILL) and
 * reported so. kb_forked_cancel kills and reaps a running child without a
 * report (shutdown).
 *
 * What fn may do: read anything the parent had (the image is the parent's
 * at the fork), allocate, compute, write to `out`. It must not use the
 * parent's connections, files or loop (they are closed, or the parent's),
 * nor threads the parent had (only the forking thread exists in the
 * child).
 *
 * Errors: kb_forked_start returns -EBUSY while a child runs, or -errno of
 * pipe or fork with err. The report says a failed child's exit code or
 * signal, a deadline passed, or output over its cap.
 *
 * Cost: in the parent, the fork (copying the page tables: 9-20 ms for the
 * daemon at 5,000 nodes and 150,000 pods, bench/README.md) and then copy-on-write
 * faults for the pages the parent changes while the child runs, which
 * can at most double the resident memory for that time; reading the
 * output, O(bytes). The child's CPU is its own (another core on a machine
 * with two).
 *
 * Ownership: the caller owns the kb_forked (embed it; kb_forked_init, and
 * kb_forked_cancel before it goes). Not thread-safe; no global state.
 */
#ifndef KB_DAEMON_FORKED_H
#define KB_DAEMON_FORKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <ev.h>

#include "base/buf.h"
#include "base/error.h"

typedef enum kb_forked_end {
	KB_FORKED_OK,        /* fn returned 0, everything it wrote arrived */
	KB_FORKED_FAILED,    /* exited non-zero: fn failed, or its output could not be written */
	KB_FORKED_SIGNALED,  /* killed by a signal it did not get from us */
	KB_FORKED_DEADLINE,  /* still running at deadline_s: killed */
	KB_FORKED_TOO_LONG,  /* wrote more than max_out bytes: killed */
	KB_FORKED_READ_ERROR /* reading the pipe failed: killed */
} kb_forked_end;

typedef struct kb_forked_result {
	kb_forked_end end;
	int code;          /* FAILED: the exit code; SIGNALED: the signal; READ_ERROR: errno */
	const char *out;   /* what the child wrote, NUL-terminated ("" if nothing) */
	size_t len;
	double wall_s;     /* from the fork to the report */
} kb_forked_result;

typedef int (*kb_forked_fn)(void *arg, FILE *out);
typedef void (*kb_forked_done)(void *arg, const kb_forked_result *res);

typedef struct kb_forked {
	struct ev_loop *loop;
	ev_io io;
	ev_timer deadline;
	ev_child child; /* the default loop's way to the child's status */
	bool use_child; /* the loop is libev's default loop */
	pid_t pid; /* 0: none running */
	int fd;
	bool eof, exited; /* the pipe closed; the child's status known */
	int status;
	kb_buf out;
	size_t max_out;
	double deadline_s;
	double started_s;
	kb_forked_done done;
	void *arg;
} kb_forked;

/* Sets f up; nothing runs. */
void kb_forked_init(kb_forked *f, struct ev_loop *loop, size_t max_out, double deadline_s,
		    kb_forked_done done, void *arg);

/* Forks a child that runs fn(fn_arg, out) (above). 0, -EBUSY while one
 * runs, or -errno with err. */
int kb_forked_start(kb_forked *f, kb_forked_fn fn, void *fn_arg, kb_err *err);

/* Whether a child runs. */
bool kb_forked_busy(const kb_forked *f);

/* Kills and reaps a running child, with no report. Accepts an idle f. */
void kb_forked_cancel(kb_forked *f);

#endif

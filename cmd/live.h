/* live.h - what `kube-batchd top`, `explain` and `simulate --from-cluster`
 * share: their flags (parsed here, not in main.c) and the cluster read
 * through the API with the daemon's configuration.
 *
 * Flags: --kubeconfig F, --master URL (as the daemon: kubeconfig, else
 * in-cluster, else $KUBECONFIG), --scheduler-conf F (default: built in),
 * --queue-conf F (default: none), --scheduler-name N (repeatable, up to
 * KB_MAX_SCHEDULER_NAMES), --default-queue Q, -o/--output json|table,
 * --timeout DURATION (the read, default 60s), and for simulate -f FILE...,
 * --schedule-period D, --max-time D. Each command says which it takes.
 *
 * Errors: kb_live_parse prints usage errors itself (exit status 2);
 * kb_live_load returns -errno with err (the loader's, kube/cluster_read.h,
 * or the queue file's with file:line:column).
 */
#ifndef KB_CMD_LIVE_H
#define KB_CMD_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/defaults.h"
#include "base/error.h"
#include "base/vec.h"
#include "cache/cluster.h"
#include "kube/cluster_read.h"
#include "scheduler/runtimes.h"
#include "queue/queue_conf.h"

typedef struct kb_live_options {
	const char *kubeconfig, *master;
	const char *scheduler_conf, *queue_conf;
	const char *scheduler_names[KB_MAX_SCHEDULER_NAMES];
	uint32_t nscheduler_names; /* 0: KB_DEFAULT_SCHEDULER_NAME */
	const char *default_queue;
	bool json;
	bool output_given;
	long timeout_ms;
	int64_t period_ms, max_time_ms;
	/* Read the finished pods' runs into kb_live.history (explain and
	 * simulate --from-cluster, for estimated starts). */
	bool read_history;
	KB_VEC(const char *) files; /* -f */
	KB_VEC(const char *) args;  /* positional arguments */
} kb_live_options;

/* What a command accepts beyond the common flags. */
enum { KB_LIVE_FILES = 1, KB_LIVE_SIM = 2 };

/* Parses argv[1..argc) (argv[0] is the command's name) into *o. Returns -1
 * to go on, else an exit status: 0 after --help (usage printed to stdout),
 * 2 on a usage error (said on stderr, with usage). */
int kb_live_parse(int argc, char **argv, unsigned accept, void (*usage)(FILE *out),
		  kb_live_options *o);
void kb_live_options_release(kb_live_options *o);

/* The cluster as the daemon would read it. */
typedef struct kb_live {
	kb_cluster cluster;
	kb_queue_conf qconf;
	bool qconf_loaded;
	kb_cluster_read_info info;
	/* The runtime history from the finished pods the API holds (o->
	 * read_history; else empty): what the daemon's would say after a
	 * restart (scheduler/runtimes.h). */
	kb_runtimes history;
} kb_live;

/* Initialises l's store with the options' scheduler names, default queue
 * and queue file, and reads the cluster into it (and the finished pods'
 * runs into l->history when o->read_history). On failure l is released.
 * Cost: kb_cluster_read's. */
int kb_live_load(const kb_live_options *o, kb_live *l, kb_err *err);
void kb_live_release(kb_live *l);

/* Runs the scheduler over l's cluster from the time it was read, as
 * simulate does (scheduler/simulate.h), with the options' scheduler
 * configuration, for at most max_sessions sessions (0: until nothing
 * changes). The store then holds the run's decisions: take snapshots
 * before. ret is released by the caller (kb_sim_result_release). */
struct kb_sim_result;
int kb_live_simulate(kb_live *l, const kb_live_options *o, uint32_t max_sessions,
		     struct kb_sim_result *ret, kb_err *err);

/* "kube-batchd: error: MSG" on stderr; returns 1 (the exit status). */
int kb_live_fail(int r, const kb_err *err);

#endif

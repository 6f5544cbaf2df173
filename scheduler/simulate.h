/* simulate.h - the scheduler over Kubernetes manifests, in virtual time.
 *
 * `kube-batchd simulate -f FILE...` loads Nodes, Pods, PodGroups, Queues and
 * PriorityClasses from multi-document YAML (what `kubectl apply -f` takes),
 * and runs one session per schedule period of virtual time with the same
 * engine as cluster mode. Decisions are applied in memory:
 *  - a pod appears at its `sim.kube-batchd.io/arrival` (seconds, default 0);
 *  - a bound pod runs, and finishes `sim.kube-batchd.io/duration` seconds
 *    after binding (absent: runs forever), freeing its node;
 *  - an evicted pod returns to pending at once, as its controller would
 *    recreate it;
 *  - PodGroup phases the scheduler writes are kept for the next session.
 * Idle stretches are skipped: after a session that changed nothing, virtual
 * time jumps to the next period boundary at or after the next arrival or
 * completion. The run ends when nothing is left to happen, at max_time, or
 * after a million sessions (with a warning on stderr).
 *
 * The result is printed as one JSON object (DESIGN.md) or as a table.
 * Output is deterministic: the same input prints the same bytes.
 */
#ifndef KB_SCHEDULER_SIMULATE_H
#define KB_SCHEDULER_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/vec.h"
#include "cache/cluster.h"
#include "scheduler/conf.h"

typedef enum kb_sim_output { KB_SIM_JSON, KB_SIM_TABLE } kb_sim_output;

typedef struct kb_sim_options {
	const char *const *files;
	uint32_t nfiles;
	const kb_registry *registry; /* what the configuration may name (required) */
	const char *scheduler_conf; /* NULL: built-in default */
	const char *queue_conf;     /* NULL: none */
	const char *scheduler_name; /* required (api/defaults.h) */
	const char *default_queue;  /* required (api/defaults.h) */
	int64_t period_ms;          /* 0: KB_DEFAULT_PERIOD_MS */
	int64_t max_time_ms;        /* default 30 days */
	kb_sim_output output;
} kb_sim_options;

/* Runs the simulation and prints the result to out. Returns 0, or -errno
 * with err saying what was wrong with the input (nothing is printed to out
 * then). */
int kb_simulate(const kb_sim_options *opt, FILE *out, kb_err *err);

#endif

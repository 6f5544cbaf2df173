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
 * The result is printed as one JSON object (docs/design.md) or as a table.
 * Output is deterministic: the same input prints the same bytes.
 *
 * From a live cluster (`simulate --from-cluster`, `explain`, `top`): the
 * caller hands a store already read from the API (kube/cluster_read.h) and
 * the wall-clock time it was read at; virtual time starts there (so pods'
 * ages and preemption cool-downs are as the daemon would see them), the
 * manifests are added as the newest objects, and every time reported is
 * counted from that start. Pods the API has bound stay bound and run for
 * ever, unless the caller says when each ends (opt->ends: worked out by
 * scheduler/estimate.h from the pod's duration annotation, its
 * activeDeadlineSeconds or past runtimes); pods it has pending are pending
 * work like the manifests' pods.
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
#include "api/types.h"

typedef enum kb_sim_output { KB_SIM_JSON, KB_SIM_TABLE } kb_sim_output;

/* When a pod the API has bound ends (kb_sim_options.ends). */
typedef struct kb_sim_end {
	const char *pod; /* "ns/name" */
	int64_t end_ms;  /* absolute, as start_ms; at or before start_ms: at the first session */
} kb_sim_end;

/* Why a run stopped. */
typedef enum kb_sim_stop {
	KB_SIM_STOP_QUIET,        /* nothing left to happen */
	KB_SIM_STOP_MAX_TIME,     /* the next event is past max_time */
	KB_SIM_STOP_MAX_SESSIONS, /* max_sessions */
	KB_SIM_STOP_BUDGET,       /* budget_ms of CPU time */
} kb_sim_stop;

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
	/* A store already loaded (kube/cluster_read.h), its queue file set by
	 * the caller (queue_conf is then not read). Borrowed: the run adds the
	 * manifests' objects to it and records its decisions in it (pods bound
	 * and evicted, PodGroup phases); without manifests it frees or replaces
	 * no object it had, so a snapshot the caller took before stays valid.
	 * The caller releases it. NULL: a store of the run's own. */
	kb_cluster *cluster;
	int64_t start_ms;       /* virtual time of the first session (0 for manifests) */
	uint32_t max_sessions;  /* 0: a million */
	/* A configuration already loaded (borrowed); scheduler_conf is then
	 * not read. NULL: scheduler_conf, else the built-in default. */
	const kb_conf *conf;
	/* Pods of opt->cluster the API has bound that end, and when (borrowed;
	 * a pod named twice ends at its first end, one not bound is ignored):
	 * each finishes (Succeeded) at its end unless the run evicted it
	 * before, freeing its node. */
	const kb_sim_end *ends;
	uint32_t nends;
	/* CPU time the run may take, in ms (0: no bound): it stops after the
	 * first session that passes it (KB_SIM_STOP_BUDGET). */
	int64_t budget_ms;
} kb_sim_options;

/* What a run decided and what its last session reported. Times are
 * milliseconds after start_ms. Strings are owned (kb_sim_result_release). */
typedef struct kb_sim_binding {
	char *pod, *node;
	int64_t time_ms;
	bool has_gpus;
	uint32_t gpu_mask;
} kb_sim_binding;

/* A claim the scheduler bound (volume binding; the simulated PV controller
 * completes it at once). volume NULL: provisioned on node. */
typedef struct kb_sim_volume_binding {
	char *claim, *volume, *node;
	int64_t time_ms;
} kb_sim_volume_binding;

typedef struct kb_sim_eviction {
	char *pod, *node, *reason;
	int64_t time_ms;
} kb_sim_eviction;

typedef struct kb_sim_pending {
	char *pod, *reason;
} kb_sim_pending;

typedef struct kb_sim_group {
	char *name, *reason; /* reason: the Unschedulable condition's message, or NULL */
	kb_pg_phase phase;
	int32_t min_member, scheduled;
	bool left_alone; /* another scheduler's group (kb_job.foreign): reported only */
} kb_sim_group;

/* A PodGroup whose gang first ran: the first session that reported it
 * Running (at least minMember placed), the run's first session for one
 * running already. */
typedef struct kb_sim_gang_start {
	char *name;
	int64_t time_ms;
} kb_sim_gang_start;

/* A pod that finished: its duration, or its end (opt->ends). */
typedef struct kb_sim_completion {
	char *pod, *node;
	int64_t time_ms;
} kb_sim_completion;

/* An estimated start (scheduler/estimate.h fills these; simulate prints
 * them after the queues when there are any). */
typedef struct kb_sim_estimate {
	char *podgroup;
	bool known;
	int64_t time_ms; /* known: after start_ms */
	char *after;     /* known: the jobs whose ends let it start ("" if none) */
	char *unknown;   /* not known: why */
} kb_sim_estimate;

typedef struct kb_sim_queue {
	char *name;
	int32_t weight;
	kb_res deserved, allocated;
} kb_sim_queue;

typedef struct kb_sim_result {
	uint32_t sessions;
	int64_t end_ms; /* the last session's time, after start_ms */
	KB_VEC(kb_sim_binding) bindings;
	KB_VEC(kb_sim_eviction) evictions;
	KB_VEC(kb_sim_volume_binding) volume_binds;
	/* As the last session reported them: */
	KB_VEC(kb_sim_pending) pending;
	KB_VEC(kb_sim_group) groups;
	KB_VEC(kb_sim_queue) queues;
	kb_resnames resnames; /* names of the queues' resource vectors */
	int64_t start_ms;     /* opt->start_ms */
	kb_sim_stop stop;
	KB_VEC(kb_sim_gang_start) gang_starts; /* in the order they started */
	KB_VEC(kb_sim_completion) completions; /* in the order they finished */
	KB_VEC(kb_sim_estimate) estimates;     /* filled by the caller, or empty */
} kb_sim_result;

/* Runs the simulation into *ret (zeroed first; release it with
 * kb_sim_result_release, on failure too). Returns 0, or -errno with err
 * saying what was wrong with the input. Cost: one session per period of
 * virtual time while decisions change, at most max_sessions. */
int kb_simulate_run(const kb_sim_options *opt, kb_sim_result *ret, kb_err *err);

/* Prints a result as JSON (docs/design.md) or as a table. Deterministic. */
void kb_sim_result_print(const kb_sim_result *res, kb_sim_output output, FILE *out);

void kb_sim_result_release(kb_sim_result *res);

/* Runs the simulation and prints the result to out. Returns 0, or -errno
 * with err saying what was wrong with the input (nothing is printed to out
 * then). */
int kb_simulate(const kb_sim_options *opt, FILE *out, kb_err *err);

#endif

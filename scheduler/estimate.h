/* estimate.h - when will a pending gang start: the scheduler simulated
 * forward in virtual time from the cluster's state.
 *
 * Every pod the API has bound gets an expected end, the first of:
 *  1. its start + annotation sim.kube-batchd.io/duration (what kwok's
 *     pod-complete stage and the simulator honour);
 *  2. its start + spec.activeDeadlineSeconds (the kubelet kills it then);
 *  3. its start + the median runtime of its job name, else of its queue,
 *     from the history (scheduler/runtimes.h: the daemon's, or in the
 *     read-only commands the finished pods the API still holds);
 *  4. none: it runs for ever (the API says nothing of when it ends).
 * Its start is status.startTime, else when the scheduler bound it, else
 * its creation. An end already past counts as now (the pod is due).
 *
 * Then the scheduler runs from now (scheduler/simulate.h, the same engine
 * and configuration) with those pods finishing at their ends, and each
 * PodGroup pending now (waiting: fewer than minMember bound, and not a
 * Running group whose members finished and left) gets the
 * virtual time of the first session that runs it whole, with the jobs
 * whose pods ended on its nodes by then ("after"), or "unknown" and why:
 *  - it would wait for pods with no known end (named, up to 3 jobs);
 *  - nothing left to happen lets it start (the scheduler's reason);
 *  - not within the horizon;
 *  - the run was cut short (sessions or CPU budget), at what virtual time.
 *
 * Limits (each a field of kb_estimate_options, with its default here):
 * the horizon of virtual time, the sessions of the run, and the CPU time
 * of the run (checked between sessions, so one session more at most).
 *
 * The caller's store is not changed: kb_estimate_run works on a copy that
 * shares its objects (kb_cluster_share_copy), valid because the store is
 * not changed while it runs (the daemon's loop runs it synchronously).
 *
 * Cost: the copy, O(objects), then a simulation of at most max_sessions
 * sessions; memory: the copy's maps and one session snapshot
 * (cache/cluster.h), about 350 bytes per pod. The CPU budget is checked
 * between sessions, so a run may pass it by one session's cost. Measured
 * by bench-estimate (bench/engine/bench_estimate.c, release build) on 1,000
 * nodes, 8,000 running pods and 200 pending gangs: the copy 3.4 ms, the
 * input read 8.7 ms, then about 0.5 ms of CPU a session (2,000 sessions
 * in 1.05 s without a budget; with the default budget a run stops at about
 * 275 ms, 115 sessions in, 158 of the 200 gangs estimated). The estimates'
 * "after" lists cost one pass over the bindings and one over the
 * completions per pending gang. (A debug build also checks the snapshot's
 * invariants at every step, several times slower.)
 */
#ifndef KB_SCHEDULER_ESTIMATE_H
#define KB_SCHEDULER_ESTIMATE_H

#include <stdint.h>

#include "base/error.h"
#include "base/vec.h"
#include "cache/cluster.h"
#include "scheduler/conf.h"
#include "scheduler/runtimes.h"
#include "scheduler/simulate.h"

#define KB_ESTIMATE_HORIZON_MS (7LL * 24 * 3600 * 1000) /* 7 days */
#define KB_ESTIMATE_MAX_SESSIONS 2000u
#define KB_ESTIMATE_BUDGET_MS 250 /* CPU time */

typedef struct kb_estimate_options {
	const kb_conf *conf;        /* required, borrowed */
	int64_t now_ms;             /* the store's wall-clock time; virtual time starts there */
	int64_t period_ms;          /* 0: KB_DEFAULT_PERIOD_MS */
	int64_t horizon_ms;         /* 0: KB_ESTIMATE_HORIZON_MS */
	uint32_t max_sessions;      /* 0: KB_ESTIMATE_MAX_SESSIONS */
	int64_t budget_ms;          /* 0: KB_ESTIMATE_BUDGET_MS; < 0: no bound */
	const kb_runtimes *history; /* NULL: none */
	const char *only;           /* one PodGroup "ns/name", or NULL: every pending one */
	bool list_groups;           /* also list every group in ->groups (kb_estimate_input_add_new) */
} kb_estimate_options;

/* What the estimate starts from: the ends of the pods bound, and the
 * PodGroups pending. Strings owned (kb_estimate_input_release). */
typedef struct kb_estimate_input {
	KB_VEC(kb_sim_end) ends; /* pods are owned copies */
	KB_VEC(char *) unknown;  /* jobs ("ns/name") with a pod bound and no known end, sorted, unique */
	KB_VEC(char *) pending;  /* PodGroups waiting, sorted; then those kb_estimate_input_add_new adds */
	KB_VEC(char *) groups;   /* with opt->list_groups: every group's key, sorted */
	uint32_t from_history;   /* ends that came from the history */
} kb_estimate_input;

/* Reads c (not changed; takes one snapshot of it, which a later session
 * snapshot replaces) into *ret: each bound pod's end (above) and the
 * pending PodGroups (opt->only: that one, if pending). Returns 0, or
 * -ENOMEM with err (ret released). O(pods + jobs log jobs) and a
 * snapshot build. */
int kb_estimate_input_read(kb_cluster *c, const kb_estimate_options *opt,
			   kb_estimate_input *ret, kb_err *err);
void kb_estimate_input_release(kb_estimate_input *in);

/* The groups of c (gangs: PodGroups, Workloads' pod groups; ours) that
 * in->groups, read with opt->list_groups, does not hold, appended to
 * in->pending, sorted among themselves: the gangs a run added to the store
 * (`simulate --from-cluster -f NEW.yaml`), estimated like the pending ones
 * by kb_estimate_fill, whether the run started them at once or later.
 * Returns 0, or -errno with err. O(jobs log jobs) and a snapshot build. */
int kb_estimate_input_add_new(kb_cluster *c, kb_estimate_input *in, kb_err *err);

/* The estimates of in->pending from a run (res: gang_starts, completions,
 * groups, stop) over the store c the run used (read for pods' jobs), into
 * res->estimates, one per pending PodGroup in in's order. horizon_ms as
 * the run's max_time. Returns 0 or -ENOMEM. O(pending x (bindings +
 * completions)). */
int kb_estimate_fill(kb_cluster *c, const kb_estimate_input *in, int64_t horizon_ms,
		     kb_sim_result *res);

/* The whole estimate over src, which is not changed: a shared copy, its
 * input, a run (opt's limits, max_time the horizon), the estimates in
 * ret->estimates (the rest of ret is the run's; release with
 * kb_sim_result_release, on failure too). Returns 0, or -errno with err.
 * Cost: above. */
int kb_estimate_run(const kb_cluster *src, const kb_estimate_options *opt, kb_sim_result *ret,
		    kb_err *err);

/* The estimate of PodGroup key in res, or NULL. O(estimates). */
const kb_sim_estimate *kb_estimate_find(const kb_sim_result *res, const char *key);

#endif

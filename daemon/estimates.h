/* estimates.h - the daemon's estimated starts of pending PodGroups, and the
 * runtime history they use.
 *
 * History: kb_estimates_pod_gone is called when the watch shows a pod gone
 * (finished pods leave the cache: the pod field selector), before the store
 * forgets it. A pod of ours that was on a node and that the scheduler did
 * not evict has its runtime recorded (scheduler/runtimes.h: from
 * status.startTime, else its binding, to now), under its job name and its
 * queue (its PodGroup's queue, else the pod's queue annotation, else the
 * queue file's namespace mapping, else the default queue). In memory only
 * (a restart forgets it); bounded by KB_RUNTIMES_DEFAULT_KEYS keys of
 * KB_RUNTIMES_DEFAULT_PER_KEY runtimes.
 *
 * Estimates: kb_estimates_after_session, called after each session, runs
 * the estimator (scheduler/estimate.h) over a copy of the store when
 * KB_ESTIMATES_EVERY_MS has passed since the last run and the store
 * changed since, or KB_ESTIMATES_IDLE_MS has passed at all (each at least
 * KB_ESTIMATES_SPACING times the last run's length: estimates hold the
 * loop at most about 5 % of the time at any size), with a CPU
 * budget of KB_ESTIMATES_BUDGET_MS, KB_ESTIMATE_MAX_SESSIONS sessions and
 * the 7-day horizon. It runs from its own timer a quarter period after a
 * session (once the session's bindings are on their way), blocking the
 * loop for its length: under a millisecond on the e2e cluster
 * (tests/e2e/estimate.sh prints the longest), and the budget plus one
 * simulated session (about 0.5 ms) on a large one (scheduler/estimate.h:
 * 1,000 nodes, 200 gangs waiting). Running it on a thread of its own
 * would need a copy of the store that owns its objects: not done.
 *
 * The annotation kube-batchd.io/estimated-start on each pending PodGroup
 * object (not Workloads: they have no object per gang) says the estimate:
 * RFC 3339 UTC to the second, or "unknown" when there is none (the reason
 * is logged at -v 2 and `kube-batchd explain` says it). It is written:
 *  - at once when the group has none, or it now runs (removed);
 *  - otherwise at most once per KB_ESTIMATES_REFRESH_MS per group, and
 *    only when the estimate moved by more than the tolerance (the larger
 *    of KB_ESTIMATES_TOLERANCE_MS and a tenth of the time still to wait)
 *    or turned known or unknown.
 * Writes go through the writers (kb_writers_podgroup_annotation, after the
 * bindings); the watch's copy of the object is what is compared, so a
 * restarted daemon rewrites nothing already right.
 *
 * Ownership: borrows the cluster, the writers and the configuration (all
 * must outlive it). Not thread-safe; no global state.
 */
#ifndef KB_DAEMON_ESTIMATES_H
#define KB_DAEMON_ESTIMATES_H

#include <stdint.h>

#include "cache/cluster.h"
#include "kube/writers.h"
#include "scheduler/conf.h"
#include "scheduler/runtimes.h"

#define KB_ESTIMATES_EVERY_MS 5000
#define KB_ESTIMATES_IDLE_MS 60000
#define KB_ESTIMATES_REFRESH_MS 60000
#define KB_ESTIMATES_TOLERANCE_MS 15000
#define KB_ESTIMATES_BUDGET_MS 100
#define KB_ESTIMATES_SPACING 20 /* a run of C ms: the next not before 20 x C */

typedef struct kb_estimates kb_estimates;

/* NULL on -ENOMEM. period_ms: the daemon's schedule period. */
kb_estimates *kb_estimates_new(kb_cluster *cluster, kb_writers *writers, const kb_conf *conf,
			       int64_t period_ms);
/* Accepts NULL; returns NULL. */
kb_estimates *kb_estimates_free(kb_estimates *e);

/* Pod key is leaving the store at now_ms (above). O(1). */
void kb_estimates_pod_gone(kb_estimates *e, const char *key, int64_t now_ms);

/* After a session at now_ms: maybe an estimate and its writes (above).
 * Cost when it runs: kb_estimate_run's, bounded by the budget, plus
 * O(PodGroups) and a request per annotation written. */
void kb_estimates_after_session(kb_estimates *e, int64_t now_ms);

/* The history, for tests and /metrics. */
const kb_runtimes *kb_estimates_history(const kb_estimates *e);

#endif

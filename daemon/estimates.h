/* estimates.h - the daemon's estimated starts of pending PodGroups, and the
 * runtime history they use.
 *
 * History: kb_estimates_pod_gone is called when the watch shows a pod gone
 * (finished pods leave the cache: the pod field selector), before the store
 * forgets it. A pod of ours that was on a node and that the scheduler did
 * not evict has its runtime recorded (scheduler/runtimes.h: from
 * status.startTime, else its binding, to now), under its job name and its
 * queue (its PodGroup's queue, else the pod's queue annotation, else the
 * queue file's namespace mapping, else the default queue). In memory,
 * seeded at start from the finished pods the API still holds
 * (kb_estimates_seed, daemon/history_seed.h); bounded by
 * KB_RUNTIMES_DEFAULT_KEYS keys of KB_RUNTIMES_DEFAULT_PER_KEY runtimes.
 *
 * Estimates: kb_estimates_after_session, called after each session, starts
 * a run of the estimator (scheduler/estimate.h) when KB_ESTIMATES_EVERY_MS
 * has passed since the last run and the store changed since, or
 * KB_ESTIMATES_IDLE_MS has passed at all (each at least
 * KB_ESTIMATES_SPACING times the last run's length, so that estimates take
 * at most about 5 % of a CPU at any size), with a CPU budget of
 * KB_ESTIMATES_BUDGET_MS, KB_ESTIMATE_MAX_SESSIONS sessions and the 7-day
 * horizon; not while bindings or evictions wait for answers (a burst: the
 * run would compete with it for a CPU, on a store about to change), for up
 * to KB_ESTIMATES_IDLE_MS after a run fell due. The run
 * is done in a forked copy of the daemon (daemon/forked.h):
 * the child reads the store as it was at the fork, simulates, and sends
 * back a report of one line per pending PodGroup; the loop goes on meanwhile
 * (leases renewed, watches read, sessions run), held only for the fork
 * itself (under 5 ms on the e2e cluster, 9-20 ms at 5,000 nodes and
 * 150,000 pods: bench/README.md, failover). The annotations are written when the
 * report arrives, compared with the store as it is then. A run whose process
 * fails, is still running after KB_ESTIMATES_DEADLINE_S or writes more than
 * KB_ESTIMATES_REPORT_MAX bytes is killed, and logged; the annotations stay.
 * One run at a time; kb_estimates_cancel (a stop, a lost lease) kills one in
 * progress and writes nothing. Before the fork, a first run at 5,000 nodes
 * and 150,000 pods held the loop 4 to 5 s, past a 3 s renew deadline (bench/
 * README.md, failover).
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
 * Ownership: borrows the loop, the cluster, the writers and the
 * configuration (all must outlive it). Not thread-safe; no global state.
 */
#ifndef KB_DAEMON_ESTIMATES_H
#define KB_DAEMON_ESTIMATES_H

#include <stdbool.h>
#include <stdint.h>

#include "cache/cluster.h"
#include "kube/writers.h"
#include "scheduler/conf.h"
#include "scheduler/runtimes.h"

#define KB_ESTIMATES_EVERY_MS 5000
#define KB_ESTIMATES_IDLE_MS 60000
#define KB_ESTIMATES_REFRESH_MS 60000
#define KB_ESTIMATES_TOLERANCE_MS 15000
#define KB_ESTIMATES_BUDGET_MS 1000 /* CPU of the forked process */
#define KB_ESTIMATES_DEADLINE_S 60   /* wall time of the forked process */
#define KB_ESTIMATES_REPORT_MAX (64 << 20)
#define KB_ESTIMATES_SPACING 20 /* a run of C ms: the next not before 20 x C */

typedef struct kb_estimates kb_estimates;

struct ev_loop;

/* NULL on -ENOMEM. period_ms: the daemon's schedule period; loop: the
 * daemon's, which reads the runs' reports. */
kb_estimates *kb_estimates_new(struct ev_loop *loop, kb_cluster *cluster, kb_writers *writers,
			       const kb_conf *conf, int64_t period_ms);
/* Kills a run in progress. Accepts NULL; returns NULL. */
kb_estimates *kb_estimates_free(kb_estimates *e);

/* The rule above for one group: whether to write value (the estimate as
 * the annotation says it: RFC 3339, or "unknown"; want_ms its time, or -1
 * when unknown) over have (the object's annotation, or NULL), last_ms the
 * time of the last write for the group (-1: none since the daemon
 * started). O(1). */
bool kb_estimates_write_due(const char *have, const char *value, int64_t want_ms,
			    int64_t last_ms, int64_t now_ms);

/* Pod key is leaving the store at now_ms (above). O(1). */
void kb_estimates_pod_gone(kb_estimates *e, const char *key, int64_t now_ms);

/* After a session at now_ms: maybe a run (above). Cost on the loop: the
 * fork; when the report arrives, O(report + PodGroups) and a request per
 * annotation written. */
void kb_estimates_after_session(kb_estimates *e, int64_t now_ms);

/* Kills a run in progress, writing nothing (the daemon stops, or lost its
 * lease). Accepts NULL. */
void kb_estimates_cancel(kb_estimates *e);

/* Records the runs of finished pods read from the API (borrowed) into the
 * history (kb_runtimes_from_finished; daemon/history_seed.h). 0 or
 * -ENOMEM; *ret_recorded (may be NULL) how many. */
int kb_estimates_seed(kb_estimates *e, kb_object *const *pods, size_t n, uint32_t *ret_recorded);

/* The history, for tests and /metrics. */
const kb_runtimes *kb_estimates_history(const kb_estimates *e);

#endif

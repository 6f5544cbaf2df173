/* metrics.h - the daemon's counters as Prometheus text (GET /metrics).
 *
 * The caller gathers a view (its session counters, the writers' stats, the
 * API clients' counters, whether the cache synced and whether it leads) and
 * kb_metrics_text formats it in the text exposition format 0.0.4. The names
 * are part of the interface (dashboards and the e2e tests read them):
 *   kube_batchd_sessions_total, kube_batchd_session_errors_total,
 *   kube_batchd_session_duration_seconds (summary: _sum, _count),
 *   kube_batchd_binds_total, kube_batchd_bind_failures_total,
 *   kube_batchd_evictions_total, kube_batchd_eviction_failures_total,
 *   kube_batchd_status_writes_total, kube_batchd_events_total,
 *   kube_batchd_api_requests_total, kube_batchd_api_retries_total,
 *   kube_batchd_api_requests_pending, kube_batchd_cache_synced,
 *   kube_batchd_leader.
 *
 * No state of its own; cost: O(1), about 2 KiB of text per call.
 */
#ifndef KB_DAEMON_METRICS_H
#define KB_DAEMON_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/kube_client.h"
#include "kube/writers.h"

/* What the loop counts about its sessions. */
typedef struct kb_session_counters {
	uint64_t sessions;  /* sessions run */
	uint64_t errors;    /* sessions with an error or a failed side effect */
	double seconds_sum; /* time spent in sessions */
} kb_session_counters;

typedef struct kb_metrics_view {
	kb_session_counters sessions;
	kb_writer_stats writes;
	uint64_t api_requests; /* over every client: started */
	uint64_t api_retries;  /* turned away and sent again */
	uint64_t api_pending;  /* queued or in flight, watches aside */
	bool synced;           /* every watch has listed */
	bool leader;           /* leads (true without leader election) */
} kb_metrics_view;

/* Adds client's request counters to v. Accepts a NULL client. O(queued). */
void kb_metrics_add_client(kb_metrics_view *v, const kb_kube_client *client);

/* The text for v in *ret (malloc'd, the caller frees it). Returns 0, or
 * -ENOMEM (nothing in *ret). */
int kb_metrics_text(const kb_metrics_view *v, char **ret);

#endif

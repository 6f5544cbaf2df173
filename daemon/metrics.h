/* metrics.h - the daemon's figures as Prometheus text (GET /metrics).
 *
 * The caller gathers a view (its session counters and totals, the last
 * session's summary (daemon/summary.h), the writers' stats, the API
 * clients' counters, whether the cache synced and whether it leads, the
 * process's figures) and kb_metrics_text formats it in the text exposition
 * format 0.0.4. The names are part of the interface (dashboards, among them
 * deploy/grafana/kube-batchd.json, and the e2e tests read them).
 *
 * Prefix kube_batchd_ for the scheduler's own; the process_* names are the
 * Prometheus client libraries' standard ones, unprefixed. Names, labels and
 * units follow volcano's (pkg/scheduler/metrics, prefix volcano_) and
 * kube-scheduler's (prefix scheduler_) where they have the same figure:
 *
 *  kube_batchd_...                       volcano_ / scheduler_ counterpart
 *  queue_allocated_milli_cpu{queue_name}         volcano_queue_allocated_milli_cpu
 *  queue_allocated_memory_bytes{queue_name}      volcano_queue_allocated_memory_bytes
 *  queue_allocated_scalar_resources{queue_name,resource}
 *                                                volcano_queue_allocated_scalar_resources (*)
 *  queue_request_{milli_cpu,memory_bytes,scalar_resources}    volcano_queue_request_*
 *  queue_deserved_{milli_cpu,memory_bytes,scalar_resources}   volcano_queue_deserved_*
 *  queue_capacity_{milli_cpu,memory_bytes,scalar_resources}   volcano_queue_capacity_*
 *      (the queue's capability; only the resources it caps)
 *  queue_guarantee_{milli_cpu,memory_bytes,scalar_resources}  (no volcano metric; spec.guarantee)
 *  queue_share{queue_name}, queue_weight{queue_name}, queue_overused{queue_name}
 *                                                volcano_queue_share, _weight, _overused
 *  queue_pod_group_{pending,inqueue,running,unknown,completed}_count{queue_name}
 *                                                volcano_queue_pod_group_*_count
 *  e2e_scheduling_latency_milliseconds (histogram)
 *                                                volcano_e2e_scheduling_latency_milliseconds (**)
 *  action_scheduling_latency_milliseconds{action} (histogram)
 *                                                volcano_action_scheduling_latency_milliseconds (**)
 *  schedule_attempts_total{result,profile}       scheduler_schedule_attempts_total
 *      result: scheduled | unschedulable | error; profile: the scheduler name
 *  pending_pods{reason}, pending_jobs{reason}    scheduler_pending_pods{queue} sorted by
 *      reason class instead (summary.h: resources, placement, queue, gang,
 *      pipelined, invalid, other); sum() is volcano_unschedule_task_count
 *      summed over jobs, and volcano_unschedule_job_count
 *  pod_preemption_victims                        volcano_pod_preemption_victims (last session)
 *  preemption_victims_total{action}              (preempt | reclaim; counter)
 *  bind_failures_by_code_total{code}             (HTTP status of refused Bindings; "error" for
 *                                                 no answer; "other" past 12 codes)
 *  node_gpu_allocated{node}, node_gpu_total{node} (nvidia.com/gpu of nodes that advertise it)
 *  queue_status_writes_total                     (Queue status writes the API accepted)
 *  build_info{version}                           (1)
 *  and the earlier: sessions_total, session_errors_total,
 *  session_duration_seconds (summary), binds_total, bind_failures_total,
 *  evictions_total, eviction_failures_total, status_writes_total,
 *  events_total, api_requests_total, api_retries_total,
 *  api_requests_pending, cache_synced, leader.
 *  process_resident_memory_bytes, process_virtual_memory_bytes,
 *  process_cpu_seconds_total, process_start_time_seconds, process_open_fds,
 *  process_max_fds (from /proc/self, as client_golang's process collector).
 *
 * (*) volcano reports scalar resources in milli-units (a GPU is 1000); here
 *     they are in the resource's own unit (a GPU is 1), as kubectl shows
 *     them. "pods" is not reported.
 * (**) volcano's buckets start at 5 ms (5 x 2^k, 15 buckets); a session here
 *     often takes less than a millisecond, so the buckets are 0.1 x 2^k ms,
 *     k = 0..15 (0.1 ms to 3.3 s).
 *
 * Queue and node series are the last session's (summary.h) and vanish with
 * their queue or node; before the first session there are none.
 *
 * Cost: the text is O(queues x resources + GPU nodes + actions) lines, about
 * 40 KiB for 20 queues x 5 resources; kb_metrics_read_process reads four
 * small /proc files and lists /proc/self/fd (O(open fds)).
 */
#ifndef KB_DAEMON_METRICS_H
#define KB_DAEMON_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/summary.h"
#include "kube/kube_client.h"
#include "kube/writers.h"

/* What the loop counts about its sessions. */
typedef struct kb_session_counters {
	uint64_t sessions;  /* sessions run */
	uint64_t errors;    /* sessions with an error or a failed side effect */
	double seconds_sum; /* time spent in sessions */
} kb_session_counters;

#define KB_HIST_MAX_BUCKETS 24

/* A histogram with fixed upper bounds (ascending, +Inf implied). */
typedef struct kb_histogram {
	const double *bounds;
	uint32_t nbounds;                     /* <= KB_HIST_MAX_BUCKETS */
	uint64_t counts[KB_HIST_MAX_BUCKETS + 1]; /* per bucket, not cumulative; last: +Inf */
	uint64_t count;
	double sum;
} kb_histogram;

/* The latency buckets above (**), in milliseconds. */
extern const double kb_latency_ms_buckets[16];

void kb_histogram_init(kb_histogram *h, const double *bounds, uint32_t nbounds);
/* Counts v in the first bucket whose bound is >= v. O(buckets). */
void kb_histogram_observe(kb_histogram *h, double v);

/* What the daemon adds up over every session (summary.h says per session). */
typedef struct kb_metrics_totals {
	kb_histogram e2e_ms;
	struct {
		const char *name; /* static: the action's name */
		kb_histogram ms;
		uint64_t victims;
	} actions[KB_SUMMARY_MAX_ACTIONS];
	uint32_t nactions;
	uint64_t scheduled, unschedulable, errors; /* schedule attempts by result */
} kb_metrics_totals;

void kb_metrics_totals_init(kb_metrics_totals *t);

/* Adds one session's summary (its latency, action times, attempts and
 * victims). O(actions x buckets). */
void kb_metrics_totals_add(kb_metrics_totals *t, const kb_summary *s);

/* The process's own figures (ok false when /proc could not be read). */
typedef struct kb_process_figures {
	bool ok;
	double cpu_seconds;
	double start_time_seconds; /* since the epoch */
	uint64_t resident_bytes, virtual_bytes;
	uint64_t open_fds, max_fds;
} kb_process_figures;

/* Reads /proc/self/stat, /proc/stat (boot time), /proc/self/fd and the fd
 * limit. 0, or -errno of the first read that failed (ret->ok false, the
 * figures read so far kept). */
int kb_metrics_read_process(kb_process_figures *ret);

typedef struct kb_metrics_view {
	kb_session_counters sessions;
	const kb_metrics_totals *totals; /* or NULL */
	const kb_summary *summary;       /* the last session's, or NULL */
	const char *profile;             /* the scheduler name ("profile" label) */
	const char *version;             /* build_info */
	kb_writer_stats writes;
	uint64_t api_requests; /* over every client: started */
	uint64_t api_retries;  /* turned away and sent again */
	uint64_t api_pending;  /* queued or in flight, watches aside */
	bool synced;           /* every watch has listed */
	bool leader;           /* leads (true without leader election) */
	kb_process_figures process;
} kb_metrics_view;

/* Adds client's request counters to v. Accepts a NULL client. O(queued). */
void kb_metrics_add_client(kb_metrics_view *v, const kb_kube_client *client);

/* Appends s to out with \, " and newline escaped as a label value must be
 * (the exposition format). out must hold 2 x strlen(s) + 1 bytes. */
void kb_metrics_escape_label(const char *s, char *out);

/* The text for v in *ret (malloc'd, the caller frees it). Returns 0, or
 * -ENOMEM (nothing in *ret). */
int kb_metrics_text(const kb_metrics_view *v, char **ret);

#endif

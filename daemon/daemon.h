/* daemon.h - cluster mode: the scheduler as a daemon against an API server.
 *
 * One libev loop runs everything: the reflectors (list + watch of Nodes,
 * Pods, PriorityClasses, Namespaces when the queue file maps namespaces, and
 * the PodGroups and Queues of whichever API groups discovery reports) feed
 * the store (cache/cluster.h); a periodic timer (--schedule-period) runs a
 * session when every reflector has synced AND the store changed since the
 * last session, or 10 s have passed (so refused binds and full clusters are
 * retried); the session's decisions go to the writers (kube/writers.h).
 * The queue file is stat'ed every period and reloaded when its mtime or size
 * changes; a bad file is logged and the queues in force stay.
 *
 * A tiny HTTP server on --listen-address (daemon/endpoint.h) answers GET
 * /healthz ("ok" once the cache has synced, 503 before) and GET /metrics
 * (Prometheus text, daemon/metrics.h). With --healthz-address (volcano's
 * separate health port) a second listener serves the same paths there.
 * SIGTERM and SIGINT stop the loop; everything is cancelled and freed and
 * kb_daemon_run returns 0.
 *
 * With --leader-elect, sessions run only while this instance holds the
 * coordination.k8s.io/v1 Lease <lease_namespace>/<lease_name> (default
 * kube-system/<scheduler name>; lease 15 s, renew deadline 10 s, retry 2 s
 * unless the --leader-elect-* flags say otherwise, as client-go:
 * daemon/leader.h); losing it
 * stops the daemon with -ENOLCK so that its Deployment restarts it. On
 * SIGTERM a leader gives the lease up before it stops.
 */
#ifndef KB_SCHEDULER_DAEMON_H
#define KB_SCHEDULER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "api/defaults.h"
#include "base/error.h"
#include "scheduler/conf.h"

typedef struct kb_daemon_options {
	const char *kubeconfig;     /* --kubeconfig; NULL: $KUBECONFIG, else in-cluster */
	const char *master;         /* --master: overrides the kubeconfig's server */
	const char *scheduler_name; /* --scheduler-name (required; api/defaults.h): the
				     * name reported, the Lease's, and the first of: */
	const char *more_scheduler_names[KB_MAX_SCHEDULER_NAMES - 1]; /* --scheduler-name again */
	uint32_t nmore_scheduler_names;
	const kb_registry *registry; /* what the configuration may name (required) */
	const char *scheduler_conf; /* --scheduler-conf, NULL: the built-in default */
	const char *queue_conf;     /* --queue-conf, or NULL */
	const char *default_queue;  /* --default-queue (required; api/defaults.h) */
	const char *listen_address; /* --listen-address, default "127.0.0.1:10251"; "" disables */
	const char *healthz_address; /* --healthz-address: a second listener with the same
				      * paths; NULL or "": none */
	int64_t period_ms;          /* --schedule-period, default 1000 */
	int64_t delay_ms;           /* --schedule-delay, default 150: a session once
				     * changes have stopped this long (within four
				     * of it, at most a period, of the first); 0:
				     * sessions only on the period */
	double qps;                 /* --kube-api-qps: a client-side limit when > 0;
				     * default 0, none (API Priority and Fairness
				     * is the limit: 429s wait out Retry-After) */
	int burst;                  /* --kube-api-burst, with qps; default 400 */
	bool leader_elect;          /* --leader-elect: sessions only while holding the
				     * Lease lease_namespace/lease_name */
	const char *lease_namespace; /* --leader-elect-resource-namespace; NULL: kube-system */
	const char *lease_name;      /* --leader-elect-resource-name; NULL: scheduler_name */
	int64_t lease_duration_ms;   /* --leader-elect-lease-duration; 0: 15 s */
	int64_t renew_deadline_ms;   /* --leader-elect-renew-deadline; 0: 10 s */
	int64_t retry_period_ms;     /* --leader-elect-retry-period; 0: 2 s */
	const char *record;          /* --record FILE: input and decisions (daemon/record.h), or NULL */
	uint64_t record_max_bytes;   /* --record-max-bytes; 0: 1 GiB */
} kb_daemon_options;

/* Runs until SIGTERM or SIGINT. Returns 0 after a clean stop, or -errno with
 * err when start-up fails (bad configuration, no API server configuration,
 * a listen address taken, leader election durations out of order) or -ENOLCK when leadership was lost. Logs
 * through base/log.h. */
int kb_daemon_run(const kb_daemon_options *opt, kb_err *err);

#endif

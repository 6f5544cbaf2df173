/* metrics.c - Prometheus text for the daemon's counters (see metrics.h). */
#include "daemon/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void kb_metrics_add_client(kb_metrics_view *v, const kb_kube_client *client)
{
	if (!client)
		return;
	v->api_requests += kb_kube_client_requests(client);
	v->api_retries += kb_kube_client_retries(client);
	v->api_pending += kb_kube_client_backlog(client);
}

int kb_metrics_text(const kb_metrics_view *v, char **ret)
{
	char *s = NULL;
	size_t n = 0;
	*ret = NULL;
	FILE *f = open_memstream(&s, &n);
	if (!f)
		return -ENOMEM;
	fprintf(f,
		"# HELP kube_batchd_sessions_total Scheduling sessions run.\n"
		"# TYPE kube_batchd_sessions_total counter\n"
		"kube_batchd_sessions_total %" PRIu64 "\n"
		"# HELP kube_batchd_session_errors_total Sessions with an error or a failed side "
		"effect.\n"
		"# TYPE kube_batchd_session_errors_total counter\n"
		"kube_batchd_session_errors_total %" PRIu64 "\n"
		"# HELP kube_batchd_session_duration_seconds Time spent in sessions.\n"
		"# TYPE kube_batchd_session_duration_seconds summary\n"
		"kube_batchd_session_duration_seconds_sum %.6f\n"
		"kube_batchd_session_duration_seconds_count %" PRIu64 "\n"
		"# HELP kube_batchd_binds_total Bindings accepted by the API server.\n"
		"# TYPE kube_batchd_binds_total counter\n"
		"kube_batchd_binds_total %" PRIu64 "\n"
		"# HELP kube_batchd_bind_failures_total Bindings refused or failed.\n"
		"# TYPE kube_batchd_bind_failures_total counter\n"
		"kube_batchd_bind_failures_total %" PRIu64 "\n"
		"# HELP kube_batchd_evictions_total Evictions accepted by the API server.\n"
		"# TYPE kube_batchd_evictions_total counter\n"
		"kube_batchd_evictions_total %" PRIu64 "\n"
		"# HELP kube_batchd_eviction_failures_total Evictions refused or failed.\n"
		"# TYPE kube_batchd_eviction_failures_total counter\n"
		"kube_batchd_eviction_failures_total %" PRIu64 "\n"
		"# HELP kube_batchd_status_writes_total PodGroup status and pod condition writes.\n"
		"# TYPE kube_batchd_status_writes_total counter\n"
		"kube_batchd_status_writes_total %" PRIu64 "\n"
		"# HELP kube_batchd_events_total Events recorded.\n"
		"# TYPE kube_batchd_events_total counter\n"
		"kube_batchd_events_total %" PRIu64 "\n"
		"# HELP kube_batchd_api_requests_total Requests sent to the API server.\n"
		"# TYPE kube_batchd_api_requests_total counter\n"
		"kube_batchd_api_requests_total %" PRIu64 "\n"
		"# HELP kube_batchd_api_retries_total Requests the API server turned away (429) "
		"and that were sent again.\n"
		"# TYPE kube_batchd_api_retries_total counter\n"
		"kube_batchd_api_retries_total %" PRIu64 "\n"
		"# HELP kube_batchd_api_requests_pending Requests to the API server queued or in "
		"flight, watches aside.\n"
		"# TYPE kube_batchd_api_requests_pending gauge\n"
		"kube_batchd_api_requests_pending %" PRIu64 "\n"
		"# HELP kube_batchd_cache_synced 1 once every watch has listed.\n"
		"# TYPE kube_batchd_cache_synced gauge\n"
		"kube_batchd_cache_synced %d\n"
		"# HELP kube_batchd_leader 1 while this instance leads (always 1 without "
		"--leader-elect).\n"
		"# TYPE kube_batchd_leader gauge\n"
		"kube_batchd_leader %d\n",
		v->sessions.sessions, v->sessions.errors, v->sessions.seconds_sum,
		v->sessions.sessions, v->writes.binds, v->writes.bind_failures, v->writes.evictions,
		v->writes.eviction_failures, v->writes.status_writes, v->writes.events,
		v->api_requests, v->api_retries, v->api_pending, v->synced ? 1 : 0,
		v->leader ? 1 : 0);
	/* The stream's errors are sticky: one check covers every write. */
	bool failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

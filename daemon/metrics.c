/* metrics.c - Prometheus text for the daemon's figures (see metrics.h). */
#include "daemon/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define P "kube_batchd_"

const double kb_latency_ms_buckets[16] = {
	0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2, 1638.4, 3276.8,
};

void kb_histogram_init(kb_histogram *h, const double *bounds, uint32_t nbounds)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->nbounds = nbounds < KB_HIST_MAX_BUCKETS ? nbounds : KB_HIST_MAX_BUCKETS;
}

void kb_histogram_observe(kb_histogram *h, double v)
{
	uint32_t i = 0;
	while (i < h->nbounds && v > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum += v;
}

void kb_metrics_totals_init(kb_metrics_totals *t)
{
	memset(t, 0, sizeof(*t));
	kb_histogram_init(&t->e2e_ms, kb_latency_ms_buckets, 16);
}

void kb_metrics_totals_add(kb_metrics_totals *t, const kb_summary *s)
{
	kb_histogram_observe(&t->e2e_ms, s->seconds * 1000.0);
	for (uint32_t i = 0; i < s->nactions; i++) {
		const kb_summary_action *a = &s->actions[i];
		uint32_t k = 0;
		while (k < t->nactions && strcmp(t->actions[k].name, a->name) != 0)
			k++;
		if (k == t->nactions) {
			if (k == KB_SUMMARY_MAX_ACTIONS)
				continue;
			t->actions[k].name = a->name;
			kb_histogram_init(&t->actions[k].ms, kb_latency_ms_buckets, 16);
			t->nactions++;
		}
		if (a->ran)
			kb_histogram_observe(&t->actions[k].ms, a->seconds * 1000.0);
		t->actions[k].victims += a->evictions;
	}
	t->scheduled += s->scheduled;
	t->unschedulable += s->unschedulable;
	t->errors += s->errors;
}

/* ---- /proc ------------------------------------------------------------------------- */

static int read_file(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t got = fread(buf, 1, n - 1, f);
	int e = ferror(f) ? -EIO : 0;
	(void)fclose(f); /* read only: nothing to lose */
	buf[got] = '\0';
	return e;
}

int kb_metrics_read_process(kb_process_figures *ret)
{
	memset(ret, 0, sizeof(*ret));
	char buf[4096];
	int r = read_file("/proc/self/stat", buf, sizeof(buf));
	if (r < 0)
		return r;
	/* Fields after the command (which may hold spaces: skip to its ')'):
	 * 3 state ... 14 utime 15 stime ... 22 starttime 23 vsize 24 rss. */
	const char *p = strrchr(buf, ')');
	unsigned long utime = 0, stime = 0, vsize = 0;
	unsigned long long start = 0;
	long rss = 0;
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d "
			 "%*d %llu %lu %ld",
			 &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	if (tck <= 0 || page <= 0)
		return -EINVAL;
	ret->cpu_seconds = (double)(utime + stime) / (double)tck;
	ret->virtual_bytes = vsize;
	ret->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
	if ((r = read_file("/proc/stat", buf, sizeof(buf))) < 0)
		return r;
	const char *b = strstr(buf, "\nbtime ");
	unsigned long long btime = 0;
	if (!b || sscanf(b + 7, "%llu", &btime) != 1)
		return -EINVAL;
	ret->start_time_seconds = (double)btime + (double)start / (double)tck;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	const struct dirent *de;
	uint64_t n = 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	ret->open_fds = n > 0 ? n - 1 : 0; /* not the directory's own */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		ret->max_fds = rl.rlim_cur;
	ret->ok = true;
	return 0;
}

/* ---- the text ---------------------------------------------------------------------- */

void kb_metrics_add_client(kb_metrics_view *v, const kb_kube_client *client)
{
	if (!client)
		return;
	v->api_requests += kb_kube_client_requests(client);
	v->api_retries += kb_kube_client_retries(client);
	v->api_pending += kb_kube_client_backlog(client);
}

void kb_metrics_escape_label(const char *s, char *out)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			*out++ = '\\';
			*out++ = *s;
		} else if (*s == '\n') {
			*out++ = '\\';
			*out++ = 'n';
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Writes s escaped as a label value. O(length). */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n')
			fputc('\\', f);
		fputc(*s == '\n' ? 'n' : *s, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A value as the exposition format writes it: 15 significant digits, so
 * 0.1 reads "0.1" and whole numbers read as integers. */
static void put_value(FILE *f, double v)
{
	fprintf(f, " %.15g\n", v);
}

static void histogram(FILE *f, const char *name, const char *lname, const char *lvalue,
		      const kb_histogram *h)
{
	uint64_t cum = 0;
	for (uint32_t i = 0; i <= h->nbounds; i++) {
		cum += h->counts[i];
		fprintf(f, "%s_bucket{", name);
		if (lname) {
			fprintf(f, "%s=\"", lname);
			put_label(f, lvalue);
			fputs("\",", f);
		}
		if (i < h->nbounds)
			fprintf(f, "le=\"%.15g\"} %" PRIu64 "\n", h->bounds[i], cum);
		else
			fprintf(f, "le=\"+Inf\"} %" PRIu64 "\n", cum);
	}
	const char *suffix[2] = {"_sum", "_count"};
	for (int k = 0; k < 2; k++) {
		fprintf(f, "%s%s", name, suffix[k]);
		if (lname) {
			fprintf(f, "{%s=\"", lname);
			put_label(f, lvalue);
			fputs("\"}", f);
		}
		if (k == 0)
			put_value(f, h->sum);
		else
			fprintf(f, " %" PRIu64 "\n", h->count);
	}
}

typedef enum { R_ALLOCATED, R_REQUEST, R_DESERVED, R_CAPACITY, R_GUARANTEE, R_COUNT } res_kind;

static const char *const res_word[R_COUNT] = {"allocated", "request", "deserved", "capacity",
					      "guarantee"};
static const char *const res_help[R_COUNT] = {
	"held by the queue's placed, bound and running pods",
	"asked for by the queue's pods that have not finished",
	"the queue's deserved share (the proportion plugin's; 0 without it)",
	"the queue's capability (only the resources it caps)",
	"the queue's guarantee (spec.guarantee)",
};

static const kb_res *res_of(const kb_summary_queue *q, res_kind k)
{
	switch (k) {
	case R_ALLOCATED:
		return &q->allocated;
	case R_REQUEST:
		return &q->request;
	case R_DESERVED:
		return &q->deserved;
	case R_CAPACITY:
		return &q->capability;
	default:
		return &q->guarantee;
	}
}

/* Whether resource i of kind k of q is reported: a capacity only for the
 * resources the queue caps. */
static bool res_shown(const kb_summary_queue *q, res_kind k, int i)
{
	return k != R_CAPACITY || (q->capability_mask & (1u << i));
}

static void queue_resources(FILE *f, const kb_summary *s, res_kind k)
{
	char name[96], help[200];
	/* cpu in milli-cores, memory in bytes (milli-units / 1000). */
	(void)snprintf(name, sizeof(name), P "queue_%s_milli_cpu", res_word[k]);
	(void)snprintf(help, sizeof(help), "CPU (milli-cores) %s.", res_help[k]);
	head(f, name, "gauge", help);
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_summary_queue *q = &s->queues[i];
		if (!res_shown(q, k, KB_RES_CPU))
			continue;
		fprintf(f, "%s{queue_name=\"", name);
		put_label(f, q->name);
		fputs("\"}", f);
		put_value(f, (double)res_of(q, k)->q[KB_RES_CPU]);
	}
	(void)snprintf(name, sizeof(name), P "queue_%s_memory_bytes", res_word[k]);
	(void)snprintf(help, sizeof(help), "Memory (bytes) %s.", res_help[k]);
	head(f, name, "gauge", help);
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_summary_queue *q = &s->queues[i];
		if (!res_shown(q, k, KB_RES_MEMORY))
			continue;
		fprintf(f, "%s{queue_name=\"", name);
		put_label(f, q->name);
		fputs("\"}", f);
		put_value(f, (double)res_of(q, k)->q[KB_RES_MEMORY] / 1000.0);
	}
	(void)snprintf(name, sizeof(name), P "queue_%s_scalar_resources", res_word[k]);
	(void)snprintf(help, sizeof(help),
		       "Extended resources (in their own unit: a GPU is 1) %s.", res_help[k]);
	head(f, name, "gauge", help);
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_summary_queue *q = &s->queues[i];
		for (int r = KB_RES_NFIXED; r < s->resnames.n; r++) {
			if (!res_shown(q, k, r))
				continue;
			fprintf(f, "%s{queue_name=\"", name);
			put_label(f, q->name);
			fputs("\",resource=\"", f);
			put_label(f, s->resnames.name[r]);
			fputs("\"}", f);
			put_value(f, (double)res_of(q, k)->q[r] / 1000.0);
		}
	}
}

static const char *const phase_word[KB_SUMMARY_NPHASES] = {"pending", "inqueue", "running",
							   "unknown", "completed"};

static void queues(FILE *f, const kb_summary *s)
{
	for (res_kind k = 0; k < R_COUNT; k++)
		queue_resources(f, s, k);
	head(f, P "queue_share", "gauge",
	     "The queue's share: the largest allocated/deserved over its resources.");
	for (uint32_t i = 0; i < s->nqueues; i++) {
		fputs(P "queue_share{queue_name=\"", f);
		put_label(f, s->queues[i].name);
		fputs("\"}", f);
		put_value(f, s->queues[i].share);
	}
	head(f, P "queue_weight", "gauge", "The queue's weight.");
	for (uint32_t i = 0; i < s->nqueues; i++) {
		fputs(P "queue_weight{queue_name=\"", f);
		put_label(f, s->queues[i].name);
		fprintf(f, "\"} %d\n", s->queues[i].weight);
	}
	head(f, P "queue_overused", "gauge", "1 when the plugins find the queue overused.");
	for (uint32_t i = 0; i < s->nqueues; i++) {
		fputs(P "queue_overused{queue_name=\"", f);
		put_label(f, s->queues[i].name);
		fprintf(f, "\"} %d\n", s->queues[i].overused ? 1 : 0);
	}
	for (int ph = 0; ph < KB_SUMMARY_NPHASES; ph++) {
		char name[96], help[160];
		(void)snprintf(name, sizeof(name), P "queue_pod_group_%s_count", phase_word[ph]);
		(void)snprintf(help, sizeof(help),
			       "PodGroups of the queue whose phase the last session set to %s.",
			       phase_word[ph]);
		head(f, name, "gauge", help);
		for (uint32_t i = 0; i < s->nqueues; i++) {
			fprintf(f, "%s{queue_name=\"", name);
			put_label(f, s->queues[i].name);
			fprintf(f, "\"} %d\n", s->queues[i].podgroups[ph]);
		}
	}
}

static void pending(FILE *f, const kb_summary *s)
{
	head(f, P "pending_pods", "gauge",
	     "Pods the last session left pending, by the class of their reason.");
	for (int c = 0; c < KB_REASON_COUNT; c++)
		fprintf(f, P "pending_pods{reason=\"%s\"} %u\n", kb_reason_class_name(c),
			s->pending_pods[c]);
	head(f, P "pending_jobs", "gauge",
	     "Jobs (PodGroups and lone pods) the last session left pending, by the class of "
	     "their reason.");
	for (int c = 0; c < KB_REASON_COUNT; c++)
		fprintf(f, P "pending_jobs{reason=\"%s\"} %u\n", kb_reason_class_name(c),
			s->pending_jobs[c]);
	head(f, P "pod_preemption_victims", "gauge",
	     "Pods the last session's preempt and reclaim actions evicted.");
	fprintf(f, P "pod_preemption_victims %u\n", s->victims);
	head(f, P "node_gpu_total", "gauge", "nvidia.com/gpu the node advertises (allocatable).");
	for (uint32_t i = 0; i < s->nnodes; i++) {
		fputs(P "node_gpu_total{node=\"", f);
		put_label(f, s->nodes[i].name);
		fputs("\"}", f);
		put_value(f, (double)s->nodes[i].gpu_total_milli / 1000.0);
	}
	head(f, P "node_gpu_allocated", "gauge",
	     "nvidia.com/gpu held on the node by placed, bound, running and releasing pods.");
	for (uint32_t i = 0; i < s->nnodes; i++) {
		fputs(P "node_gpu_allocated{node=\"", f);
		put_label(f, s->nodes[i].name);
		fputs("\"}", f);
		put_value(f, (double)s->nodes[i].gpu_allocated_milli / 1000.0);
	}
}

static void totals(FILE *f, const kb_metrics_view *v)
{
	const kb_metrics_totals *t = v->totals;
	head(f, P "e2e_scheduling_latency_milliseconds", "histogram",
	     "Session latency in milliseconds (snapshot, actions and queuing the side effects).");
	histogram(f, P "e2e_scheduling_latency_milliseconds", NULL, NULL, &t->e2e_ms);
	head(f, P "action_scheduling_latency_milliseconds", "histogram",
	     "Action latency in milliseconds (not counted when the memo skipped it).");
	for (uint32_t i = 0; i < t->nactions; i++)
		histogram(f, P "action_scheduling_latency_milliseconds", "action",
			  t->actions[i].name, &t->actions[i].ms);
	head(f, P "preemption_victims_total", "counter", "Pods evicted by preempt and reclaim.");
	for (uint32_t i = 0; i < t->nactions; i++) {
		if (strcmp(t->actions[i].name, "preempt") != 0 &&
		    strcmp(t->actions[i].name, "reclaim") != 0)
			continue;
		fprintf(f, P "preemption_victims_total{action=\"%s\"} %" PRIu64 "\n",
			t->actions[i].name, t->actions[i].victims);
	}
	head(f, P "schedule_attempts_total", "counter",
	     "Pending pods a session considered, by the result: scheduled (bound), unschedulable "
	     "(still pending), error (a failed side effect).");
	const char *res[3] = {"scheduled", "unschedulable", "error"};
	uint64_t n[3] = {t->scheduled, t->unschedulable, t->errors};
	for (int i = 0; i < 3; i++) {
		fprintf(f, P "schedule_attempts_total{result=\"%s\",profile=\"", res[i]);
		put_label(f, v->profile ? v->profile : "");
		fprintf(f, "\"} %" PRIu64 "\n", n[i]);
	}
}

static void bind_codes(FILE *f, const kb_writer_stats *w)
{
	head(f, P "bind_failures_by_code_total", "counter",
	     "Bindings refused or failed, by HTTP status (\"error\": no answer).");
	for (uint32_t i = 0; i <= KB_WRITER_CODES; i++) {
		const kb_code_count *c = &w->bind_failure_codes[i];
		if (i >= w->nbind_failure_codes && !(i == KB_WRITER_CODES && c->n))
			continue;
		if (c->code > 0)
			fprintf(f, P "bind_failures_by_code_total{code=\"%d\"} %" PRIu64 "\n", c->code,
				c->n);
		else
			fprintf(f, P "bind_failures_by_code_total{code=\"%s\"} %" PRIu64 "\n",
				c->code == 0 ? "error" : "other", c->n);
	}
}

static void process(FILE *f, const kb_process_figures *p)
{
	if (!p->ok)
		return;
	head(f, "process_cpu_seconds_total", "counter", "Total user and system CPU time in seconds.");
	fprintf(f, "process_cpu_seconds_total %.15g\n", p->cpu_seconds);
	head(f, "process_start_time_seconds", "gauge",
	     "Start time of the process since the epoch in seconds.");
	fprintf(f, "process_start_time_seconds %.15g\n", p->start_time_seconds);
	head(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	fprintf(f, "process_resident_memory_bytes %" PRIu64 "\n", p->resident_bytes);
	head(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	fprintf(f, "process_virtual_memory_bytes %" PRIu64 "\n", p->virtual_bytes);
	head(f, "process_open_fds", "gauge", "Number of open file descriptors.");
	fprintf(f, "process_open_fds %" PRIu64 "\n", p->open_fds);
	head(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	fprintf(f, "process_max_fds %" PRIu64 "\n", p->max_fds);
}

static void counters(FILE *f, const kb_metrics_view *v)
{
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
		"# HELP kube_batchd_queue_status_writes_total Queue status writes accepted.\n"
		"# TYPE kube_batchd_queue_status_writes_total counter\n"
		"kube_batchd_queue_status_writes_total %" PRIu64 "\n"
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
		v->writes.eviction_failures, v->writes.status_writes, v->writes.queue_status_writes,
		v->writes.events, v->api_requests, v->api_retries, v->api_pending,
		v->synced ? 1 : 0, v->leader ? 1 : 0);
}

int kb_metrics_text(const kb_metrics_view *v, char **ret)
{
	char *s = NULL;
	size_t n = 0;
	*ret = NULL;
	FILE *f = open_memstream(&s, &n);
	if (!f)
		return -ENOMEM;
	head(f, P "build_info", "gauge", "1, labelled with the version of kube-batchd.");
	fputs(P "build_info{version=\"", f);
	put_label(f, v->version ? v->version : "");
	fputs("\"} 1\n", f);
	counters(f, v);
	bind_codes(f, &v->writes);
	if (v->totals)
		totals(f, v);
	if (v->summary && v->summary->valid) {
		queues(f, v->summary);
		pending(f, v->summary);
	}
	process(f, &v->process);
	/* The stream's errors are sticky: one check covers every write. */
	bool failed = ferror(f) != 0;
	if (fclose(f) != 0 || failed) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

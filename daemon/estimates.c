/* estimates.c - the daemon's estimated starts (see estimates.h). */
#include "daemon/estimates.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "daemon/forked.h"
#include "scheduler/estimate.h"

/* The first line of a run's report (below). */
#define REPORT_HEADER "kube-batchd estimates 1"

/* When each PodGroup's annotation was last written by this daemon. */
typedef struct written {
	kb_strmap at;          /* key -> wall ms of the last write; keys in `keys` */
	KB_VEC(char *) keys;   /* owned */
} written;

struct kb_estimates {
	kb_cluster *cluster;
	kb_writers *writers;
	const kb_conf *conf;
	int64_t period_ms;
	kb_runtimes history;
	written last;
	int64_t last_run_ms;
	int64_t last_cost_ms; /* the last run's wall time */
	uint64_t last_generation;
	bool ran;
	kb_forked run;       /* the run in its forked process */
	int64_t run_now_ms;  /* the wall time the run simulates from */
	double fork_ms;      /* how long the fork held the loop */
	int64_t waiting_since_ms; /* a run due waits for a burst's answers since (0: none) */
};

static void run_done(void *arg, const kb_forked_result *res);

static void written_init(written *w)
{
	memset(w, 0, sizeof(*w));
	kb_strmap_init(&w->at);
}

static void written_release(written *w)
{
	for (size_t i = 0; i < w->keys.n; i++)
		free(w->keys.v[i]);
	KB_VEC_RELEASE(&w->keys);
	kb_strmap_release(&w->at);
}

/* Sets key's time in w (a copy of key kept). 0 or -ENOMEM. */
static int written_put(written *w, const char *key, int64_t ms)
{
	if (kb_strmap_get(&w->at, key, NULL))
		return kb_strmap_put(&w->at, key, ms);
	char *k = strdup(key);
	if (!k || KB_VEC_PUSH(&w->keys, k) < 0) {
		free(k);
		return -ENOMEM;
	}
	return kb_strmap_put(&w->at, k, ms);
}

kb_estimates *kb_estimates_new(struct ev_loop *loop, kb_cluster *cluster, kb_writers *writers,
			       const kb_conf *conf, int64_t period_ms)
{
	kb_estimates *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cluster = cluster;
	e->writers = writers;
	e->conf = conf;
	e->period_ms = period_ms;
	kb_runtimes_init(&e->history, 0, 0);
	written_init(&e->last);
	kb_forked_init(&e->run, loop, KB_ESTIMATES_REPORT_MAX, KB_ESTIMATES_DEADLINE_S, run_done, e);
	return e;
}

kb_estimates *kb_estimates_free(kb_estimates *e)
{
	if (!e)
		return NULL;
	kb_forked_cancel(&e->run);
	kb_runtimes_release(&e->history);
	written_release(&e->last);
	free(e);
	return NULL;
}

const kb_runtimes *kb_estimates_history(const kb_estimates *e)
{
	return &e->history;
}

/* ---- history --------------------------------------------------------------------- */

int kb_estimates_seed(kb_estimates *e, kb_object *const *pods, size_t n, uint32_t *ret_recorded)
{
	return kb_runtimes_from_finished(&e->history, e->cluster, pods, n, ret_recorded);
}

void kb_estimates_pod_gone(kb_estimates *e, const char *key, int64_t now_ms)
{
	const kb_slot *sl = kb_cluster_slot(e->cluster, KB_KIND_POD, key);
	if (!sl || sl->evicted_ms > 0)
		return; /* unknown, or evicted by the scheduler: not a run that ended */
	const kb_object *o = sl->obj;
	const kb_pod_obj *p = &o->u.pod;
	bool on_node = sl->overridden ? sl->node != NULL : p->node_name != NULL;
	int64_t start = p->start_ms > 0 ? p->start_ms : sl->started_ms;
	if (!on_node || start <= 0 || start > now_ms ||
	    !kb_cluster_name_is_ours(e->cluster, p->scheduler_name))
		return;
	char job[320];
	const char *jn = kb_runtimes_job_name(o, job, sizeof(job));
	const char *queue = kb_cluster_pod_queue(e->cluster, o);
	if (kb_runtimes_record(&e->history, jn, queue, now_ms - start) < 0) {
		kb_warn("runtime history: out of memory recording pod \"%s\"; its run is not counted",
			key);
		return;
	}
	kb_vlog(2, "runtime history: pod \"%s\" ran %" PRId64 " ms (job %s, queue %s)", key,
		now_ms - start, jn ? jn : "-", queue);
}

/* ---- the annotation -------------------------------------------------------------- */

/* "2006-01-02T15:04:05Z" of ms into buf (32 bytes); false if it has none. */
static bool to_rfc3339(int64_t ms, char *buf)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	return gmtime_r(&t, &tm) && strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) != 0;
}

/* The time an annotation value says, or -1 ("unknown", or not ours). */
static int64_t from_rfc3339(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	return (int64_t)timegm(&tm) * 1000;
}

/* Whether the value `want` (a time in ms, or -1 for unknown) differs enough
 * from `have` (the object's annotation) to be written. */
static bool moved(const char *have, int64_t want, int64_t now_ms)
{
	int64_t was = from_rfc3339(have);
	if ((was < 0) != (want < 0))
		return true;
	if (want < 0)
		return strcmp(have, "unknown") != 0;
	int64_t tolerance = (was - now_ms) / 10;
	if (tolerance < KB_ESTIMATES_TOLERANCE_MS)
		tolerance = KB_ESTIMATES_TOLERANCE_MS;
	return llabs(want - was) > tolerance;
}

bool kb_estimates_write_due(const char *have, const char *value, int64_t want_ms,
			    int64_t last_ms, int64_t now_ms)
{
	if (!have)
		return true;
	if (strcmp(have, value) == 0)
		return false;
	return moved(have, want_ms, now_ms) &&
	       (last_ms < 0 || now_ms - last_ms >= KB_ESTIMATES_REFRESH_MS);
}

/* Writes the estimate of one pending group when it is due (estimates.h);
 * records the write in *next. */
static void write_one(kb_estimates *e, const kb_sim_result *res, const kb_sim_estimate *est,
		      int64_t now_ms, written *next)
{
	const kb_slot *sl = kb_cluster_slot(e->cluster, KB_KIND_PODGROUP, est->podgroup);
	if (!sl)
		return; /* a Workload's gang: no object of its own */
	int64_t last = -1;
	(void)kb_strmap_get(&e->last.at, est->podgroup, &last);
	const char *have = kb_labels_get(&sl->obj->meta.annotations, KB_ANN_ESTIMATED_START);
	int64_t want = est->known ? res->start_ms + est->time_ms : -1;
	char value[32] = "unknown";
	if (want >= 0 && !to_rfc3339(want, value))
		return;
	bool due = kb_estimates_write_due(have, value, want, last, now_ms);
	int64_t at = last;
	if (due) {
		int r = kb_writers_podgroup_annotation(e->writers, est->podgroup,
						       KB_ANN_ESTIMATED_START, value);
		if (r < 0 && r != -ENOENT)
			kb_warn("PodGroup \"%s\": writing its estimated start: %s", est->podgroup,
				strerror(-r));
		at = now_ms;
		kb_vlog(2, "PodGroup \"%s\": estimated start %s%s%s", est->podgroup, value,
			est->known ? (est->after[0] ? " after " : "") : ": ",
			est->known ? est->after : est->unknown);
	}
	if (at >= 0 && written_put(next, est->podgroup, at) < 0)
		kb_warn("estimates: out of memory; PodGroup \"%s\" may be written again within a "
			"minute", est->podgroup);
}

/* Removes the annotation of every PodGroup that has one and is not pending
 * (res has no estimate for it). O(PodGroups + pending). */
static void remove_stale(kb_estimates *e, const kb_sim_result *res)
{
	kb_strmap pending;
	kb_strmap_init(&pending);
	for (size_t i = 0; i < res->estimates.n; i++)
		if (kb_strmap_put(&pending, res->estimates.v[i].podgroup, 1) < 0) {
			kb_warn("estimates: out of memory; stale estimated starts are removed at "
				"the next run");
			kb_strmap_release(&pending);
			return;
		}
	const kb_store *s = &e->cluster->podgroups;
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_object *o = s->slots.v[i].obj;
		if (!o || !kb_labels_get(&o->meta.annotations, KB_ANN_ESTIMATED_START) ||
		    kb_strmap_get(&pending, o->meta.key, NULL))
			continue;
		int r = kb_writers_podgroup_annotation(e->writers, o->meta.key,
						       KB_ANN_ESTIMATED_START, NULL);
		if (r < 0)
			kb_warn("PodGroup \"%s\": removing its estimated start: %s", o->meta.key,
				strerror(-r));
		else
			kb_vlog(2, "PodGroup \"%s\": runs or is no more pending; estimated start "
				"removed", o->meta.key);
	}
	kb_strmap_release(&pending);
}

/* ---- the run, in a forked process ------------------------------------------------ */

/* Writes s to out with tabs and newlines as spaces (the report's fields
 * are tab-separated lines). */
static void put_field(FILE *out, const char *s)
{
	for (; s && *s; s++)
		(void)fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* The child: runs the estimate over its copy of the store and writes the
 * report:
 *   REPORT_HEADER \t start_ms \t sessions \t estimates \t the child's CPU ms \n
 *   podgroup \t known (0|1) \t time_ms \t after, or why unknown \n   (each)
 * or, when the run fails, "error \t message \n" and a non-zero exit. */
static int run_child(void *arg, FILE *out)
{
	kb_estimates *e = arg;
	kb_estimate_options opt = {
		.conf = e->conf,
		.now_ms = e->run_now_ms,
		.period_ms = e->period_ms,
		.budget_ms = KB_ESTIMATES_BUDGET_MS,
		.history = &e->history,
	};
	kb_sim_result res;
	kb_err err = {0};
	int r = kb_estimate_run(e->cluster, &opt, &res, &err);
	if (r < 0) {
		(void)fputs("error\t", out);
		put_field(out, err.msg[0] ? err.msg : strerror(-r));
		(void)fputc('\n', out);
		kb_sim_result_release(&res);
		return r;
	}
	struct timespec cpu;
	double cpu_ms = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0
				? (double)cpu.tv_sec * 1e3 + (double)cpu.tv_nsec / 1e6
				: -1;
	(void)fprintf(out, "%s\t%" PRId64 "\t%u\t%zu\t%.1f\n", REPORT_HEADER, res.start_ms,
		      res.sessions, res.estimates.n, cpu_ms);
	for (size_t i = 0; i < res.estimates.n; i++) {
		const kb_sim_estimate *est = &res.estimates.v[i];
		put_field(out, est->podgroup);
		(void)fprintf(out, "\t%d\t%" PRId64 "\t", est->known ? 1 : 0, est->time_ms);
		put_field(out, est->known ? est->after : est->unknown);
		(void)fputc('\n', out);
	}
	kb_sim_result_release(&res);
	return ferror(out) ? -EIO : 0;
}

/* Splits the tab-separated line at *p (ending at end) into at most n
 * fields, NUL-terminating them in place; *p moves past the line. Returns
 * the number of fields, 0 when no line is left. */
static int split_line(char **p, char *end, char **fields, int n)
{
	if (*p >= end)
		return 0;
	char *nl = memchr(*p, '\n', (size_t)(end - *p));
	char *stop = nl ? nl : end;
	*stop = '\0';
	int k = 0;
	for (char *f = *p; k < n;) {
		fields[k++] = f;
		char *tab = strchr(f, '\t');
		if (!tab || k == n)
			break;
		*tab = '\0';
		f = tab + 1;
	}
	*p = nl ? nl + 1 : end;
	return k;
}

/* Reads a report (run_child) into res->start_ms, ->sessions and
 * ->estimates, and the child's CPU into *ret_cpu_ms. 0, -EINVAL with err
 * naming the line, or -ENOMEM. */
static int parse_report(char *text, size_t len, kb_sim_result *res, double *ret_cpu_ms,
			kb_err *err)
{
	char *p = text, *end = text + len;
	char *f[5];
	unsigned long long sessions = 0;
	if (split_line(&p, end, f, 5) != 5 || strcmp(f[0], REPORT_HEADER) != 0 ||
	    sscanf(f[1], "%" SCNd64, &res->start_ms) != 1 || sscanf(f[2], "%llu", &sessions) != 1 ||
	    sscanf(f[4], "%lf", ret_cpu_ms) != 1)
		return kb_err_set(err, -EINVAL, "the report's first line is not \"%s\"",
				  REPORT_HEADER);
	res->sessions = (uint32_t)sessions;
	for (size_t line = 2;; line++) {
		int n = split_line(&p, end, f, 4);
		if (n == 0)
			return 0;
		kb_sim_estimate est = {0};
		if (n != 4 || (strcmp(f[1], "0") != 0 && strcmp(f[1], "1") != 0) ||
		    sscanf(f[2], "%" SCNd64, &est.time_ms) != 1)
			return kb_err_set(err, -EINVAL, "the report's line %zu is not an estimate",
					  line);
		est.known = f[1][0] == '1';
		est.podgroup = strdup(f[0]);
		est.after = strdup(est.known ? f[3] : "");
		est.unknown = est.known ? NULL : strdup(f[3]);
		if (!est.podgroup || !est.after || (!est.known && !est.unknown) ||
		    KB_VEC_PUSH(&res->estimates, est) < 0) {
			free(est.podgroup);
			free(est.after);
			free(est.unknown);
			return kb_err_set(err, -ENOMEM, "out of memory reading the report");
		}
	}
}

/* Why a run's process failed, for the warning. */
static void run_failure(const kb_forked_result *res, char *buf, size_t n)
{
	switch (res->end) {
	case KB_FORKED_FAILED:
		if (strncmp(res->out, "error\t", 6) == 0)
			(void)snprintf(buf, n, "%.*s", (int)strcspn(res->out + 6, "\n"), res->out + 6);
		else
			(void)snprintf(buf, n, "its process exited with code %d", res->code);
		break;
	case KB_FORKED_SIGNALED:
		(void)snprintf(buf, n, "its process was killed by signal %d (%s)", res->code,
			       strsignal(res->code));
		break;
	case KB_FORKED_DEADLINE:
		(void)snprintf(buf, n, "its process still ran after %d s and was killed",
			       KB_ESTIMATES_DEADLINE_S);
		break;
	case KB_FORKED_TOO_LONG:
		(void)snprintf(buf, n, "its report passed %d MiB and its process was killed",
			       KB_ESTIMATES_REPORT_MAX >> 20);
		break;
	default:
		(void)snprintf(buf, n, "reading its report: %s", strerror(res->code));
		break;
	}
}

/* The run's process ended: its estimates are written (the store now is
 * what they are compared with). */
static void run_done(void *arg, const kb_forked_result *fr)
{
	kb_estimates *e = arg;
	e->last_cost_ms = (int64_t)(fr->wall_s * 1000.0);
	char why[512];
	if (fr->end != KB_FORKED_OK) {
		run_failure(fr, why, sizeof(why));
		kb_warn("estimating starts: %s; the annotations %s stay as they are", why,
			KB_ANN_ESTIMATED_START);
		return;
	}
	kb_sim_result res;
	memset(&res, 0, sizeof(res));
	kb_err err = {0};
	char *text = strdup(fr->out);
	double cpu_ms = 0;
	int r = text ? parse_report(text, strlen(text), &res, &cpu_ms, &err)
		     : kb_err_set(&err, -ENOMEM, "out of memory copying the report");
	free(text);
	if (r < 0) {
		kb_warn("estimating starts: %s; the annotations %s stay as they are", err.msg,
			KB_ANN_ESTIMATED_START);
		kb_sim_result_release(&res);
		return;
	}
	int64_t now_ms = kb_wall_ms();
	written next;
	written_init(&next);
	for (size_t i = 0; i < res.estimates.n; i++)
		write_one(e, &res, &res.estimates.v[i], now_ms, &next);
	remove_stale(e, &res);
	written_release(&e->last);
	e->last = next;
	/* After the writes: the generation they bumped is not a change to run for. */
	e->last_generation = e->cluster->generation;
	kb_vlog(1,
		"estimated starts of %zu pending PodGroups: %u sessions in a forked process, "
		"%.1f ms of its CPU, %.1f ms from the fork to the report (the fork held the "
		"loop %.2f ms)",
		res.estimates.n, res.sessions, cpu_ms, fr->wall_s * 1e3, e->fork_ms);
	kb_sim_result_release(&res);
}

void kb_estimates_after_session(kb_estimates *e, int64_t now_ms)
{
	int64_t since = now_ms - e->last_run_ms;
	bool changed = e->cluster->generation != e->last_generation;
	/* A run that took C ms waits at least KB_ESTIMATES_SPACING x C before
	 * the next, so that estimates take a bounded share of a CPU however
	 * large the cluster. */
	int64_t spaced = e->last_cost_ms * KB_ESTIMATES_SPACING;
	int64_t every = spaced > KB_ESTIMATES_EVERY_MS ? spaced : KB_ESTIMATES_EVERY_MS;
	int64_t idle = spaced > KB_ESTIMATES_IDLE_MS ? spaced : KB_ESTIMATES_IDLE_MS;
	if (kb_forked_busy(&e->run) || (e->ran && !(since >= every && changed) && since < idle))
		return;
	/* Bindings or evictions still waiting for answers: a burst is on, the
	 * store is about to change, and the run would take a CPU from it. The
	 * next session after it tries again, for up to the idle interval (a
	 * cluster whose writes never settle still gets its estimates). */
	uint32_t unsettled = kb_writers_unsettled(e->writers);
	if (unsettled > 0) {
		if (e->waiting_since_ms == 0)
			e->waiting_since_ms = now_ms;
		if (now_ms - e->waiting_since_ms < KB_ESTIMATES_IDLE_MS) {
			kb_vlog(2, "estimated starts: %u bindings or evictions unanswered; the run "
				"waits for them", unsettled);
			return;
		}
	}
	e->waiting_since_ms = 0;
	e->ran = true;
	e->last_run_ms = now_ms;
	e->run_now_ms = now_ms;
	kb_err err = {0};
	int64_t t0 = kb_mono_ns();
	int r = kb_forked_start(&e->run, run_child, e, &err);
	e->fork_ms = (double)(kb_mono_ns() - t0) / 1e6;
	if (r < 0)
		kb_warn("estimating starts: %s; the annotations %s stay as they are, and the next "
			"run is tried in %d s", err.msg, KB_ANN_ESTIMATED_START,
			KB_ESTIMATES_EVERY_MS / 1000);
	else
		kb_vlog(2, "estimating starts in process %d (the fork held the loop %.2f ms)",
			(int)e->run.pid, e->fork_ms);
}

void kb_estimates_cancel(kb_estimates *e)
{
	if (e && kb_forked_busy(&e->run)) {
		kb_forked_cancel(&e->run);
		kb_vlog(1, "estimated starts: the run in progress was stopped; nothing written");
	}
}

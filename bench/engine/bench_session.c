/* bench_session.c - the in-process session benchmark (docs/benchmarks.md §1).
 *
 *   bench-session -f FILE [-f FILE...] [--conf FILE | --preset default|enqueue|full]
 *                 [--name NAME] [--json] [--idle N] [--churn K] [--max-sessions N]
 *                 [--sessions-csv FILE] [--check] [--no-memo]
 *
 * Drives the real engine the way simulation mode does, minus virtual time:
 * the manifests go into a kb_cluster (kb_manifests_load; pods with a later
 * arrival are applied at once), then sessions run back to back:
 *
 *   kb_cluster_session_snapshot -> kb_session_open -> kb_session_run_actions ->
 *   kb_session_close -> apply the session's binds (kb_cluster_set_pod ...
 *   KB_TASK_RUNNING) and PodGroup phases
 *
 * until no pod is pending or a session binds and evicts nothing, as the
 * daemon does. An evicted pod is deleted after its session (terminated at
 * once).
 * Binds and phases are collected during the session and applied only after
 * it closed: the cluster never changes under a session. Then --idle (default 5)
 * more sessions run with nothing new to do; their median is idle_session_ms.
 * Then --churn K (default 1000, at most a tenth of the pods; 0 skips it):
 * five rounds, each applying K pods afresh as the API would after a status
 * change (decoded again from the first file: same spec, a new object), then
 * one session; the median is churn_session_ms, the steady state of a daemon
 * whose cluster is never quite still. (Such updates are refreshed in place;
 * past pods/16 + 64 of them the store builds in full once, see
 * cache/cluster.h, which a small workload's rounds reach.)
 *
 * Times are CLOCK_MONOTONIC. Per session: snapshot, open, actions, close
 * (closing the plugins and reporting job statuses / pending reasons through
 * the effects) and apply (in-memory, not part of the session). session_ms =
 * snapshot + open + actions + close. pods_per_sec = pods bound / the sum of
 * session_ms over the placing sessions.
 *
 * session_cpu_ms is the thread's CPU time over the same span
 * (CLOCK_THREAD_CPUTIME_ID); pods_per_cpu_sec = pods bound / that. On a
 * shared machine it is the steadier figure; the wall-clock one is the goal's.
 *
 * Memory: peak_rss_mb is the whole process's peak, which includes decoding
 * the manifest file: the larger of load_peak_rss_mb (VmHWM right after
 * loading) and the peak over the sessions; after loading, VmHWM is reset (/proc/self/clear_refs "5") and
 * sessions_peak_rss_mb is the peak over the sessions alone (-1 when the
 * kernel refuses the reset). Between the two, malloc_trim(0) returns the
 * freed YAML document trees to the kernel (rss_after_load_trimmed_mb), so the
 * sessions' figure is the store plus the sessions, not malloc's free lists.
 *
 * --check runs kb_snapshot_check() on every snapshot after its session
 * (outside the timings) and fails on a broken invariant.
 *
 * Sessions share a kb_session_memo, as the daemon's do: a session over a
 * cluster unchanged since one that changed nothing skips preempt and
 * reclaim (scheduler/framework.h), and its row says "replayed".
 * --no-memo runs every session in full: the idle figure is then the cost of
 * re-examining every waiting gang (the first session after any change).
 *
 * Exit status: 0; 1 on an engine error or a broken invariant; 2 on bad usage.
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "api/snapshot.h"
#include "base/error.h"
#include "base/vec.h"
#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "cache/manifests.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"
#include "api/jobstatus.h"
#include "scheduler/simulate.h"
#include "plugins/registry.h"
#include "api/defaults.h"
#include "bench/engine/clock.h"

/* kube-batch's own default plus the enqueue action (BENCHMARKS/issue 8). */
static const char PRESET_ENQUEUE[] = "actions: \"enqueue, allocate, backfill\"\n"
				     "tiers:\n"
				     "- plugins:\n"
				     "  - name: priority\n"
				     "  - name: gang\n"
				     "- plugins:\n"
				     "  - name: drf\n"
				     "  - name: predicates\n"
				     "  - name: proportion\n"
				     "  - name: nodeorder\n";

/* ---- what one session decided -------------------------------------------------- */

/* Strings of the session's decisions, copied into one buffer (offsets, since
 * the buffer moves as it grows). */
typedef struct bind_rec {
	size_t pod, node;
	uint32_t gpu_mask;
} bind_rec;

typedef struct phase_rec {
	size_t key;
	kb_pg_phase phase;
} phase_rec;

typedef struct bench_fx {
	KB_VEC(char) strs;
	KB_VEC(bind_rec) binds;
	KB_VEC(size_t) evicts; /* pod keys (offsets into strs) */
	KB_VEC(phase_rec) phases;
	uint64_t pending; /* task_pending calls this session */
	uint64_t waiting; /* gangs with pending pods that are not running this session */
	int oom;
} bench_fx;

static size_t fx_str(bench_fx *fx, const char *s)
{
	size_t len = strlen(s) + 1, off = fx->strs.n;
	if (KB_VEC_RESERVE(&fx->strs, fx->strs.n + len) < 0) {
		fx->oom = 1;
		return 0;
	}
	memcpy(fx->strs.v + off, s, len);
	fx->strs.n += len;
	return off;
}

static int fx_bind(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		   const kb_node *n)
{
	bench_fx *fx = ctx;
	bind_rec b = {.pod = fx_str(fx, t->key), .node = fx_str(fx, n->name), .gpu_mask = t->gpu_mask};
	if (fx->oom || KB_VEC_PUSH(&fx->binds, b) < 0)
		return fx->oom = 1, -ENOMEM;
	return 0;
}

/* An eviction: the pod is deleted once the session is over, as if it
 * terminated at once (its controller would make a new pending one). */
static int fx_evict(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		    const char *reason)
{
	bench_fx *fx = ctx;
	size_t key = fx_str(fx, t->key);
	if (fx->oom || KB_VEC_PUSH(&fx->evicts, key) < 0)
		return fx->oom = 1, -ENOMEM;
	return 0;
}

static int fx_job_status(void *ctx, const kb_snapshot *snap, const kb_job *j,
			 const kb_job_status *st)
{
	bench_fx *fx = ctx;
	if (j->flavor == KB_PG_NONE)
		return 0;
	if (st->pending > 0 && st->phase != KB_PG_RUNNING && st->phase != KB_PG_COMPLETED)
		fx->waiting++;
	if (st->phase == j->phase)
		return 0; /* what the store already has: a writer would not write */
	phase_rec p = {.key = fx_str(fx, j->key), .phase = st->phase};
	if (fx->oom || KB_VEC_PUSH(&fx->phases, p) < 0)
		return fx->oom = 1, -ENOMEM;
	return 0;
}

static int fx_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *t, const char *reason)
{
	bench_fx *fx = ctx;
	fx->pending++;
	return 0;
}

static const kb_effects bench_effects = {
	.bind = fx_bind,
	.evict = fx_evict,
	.job_status = fx_job_status,
	.task_pending = fx_task_pending,
};

/* ---- measuring ------------------------------------------------------------------- */

/* A "VmXXX:  1234 kB" line of /proc/self/status, in MB; -1 if absent. */
static double proc_status_mb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	double mb = -1;
	size_t len = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			mb = strtod(line + len + 1, NULL) / 1024.0;
			break;
		}
	fclose(f);
	return mb;
}

static bool reset_hwm(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return false;
	bool ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok;
}

static double maxrss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

typedef struct sess_row {
	double snapshot, open, actions, close, apply, total; /* ms; total excludes apply */
	double cpu; /* thread CPU ms of snapshot .. close */
	uint64_t binds, evictions, pending, waiting;
	bool idle;
	bool replayed; /* preempt and reclaim skipped: nothing changed (memo) */
} sess_row;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- one session ------------------------------------------------------------------ */

typedef struct bench {
	kb_cluster cluster;
	kb_conf conf;
	bench_fx fx;
	bool check;
	bool use_memo;
	kb_session_memo memo;
	int64_t now;
	/* From the first snapshot. */
	uint32_t nodes, tasks, jobs, queues;
} bench;

static int run_one(bench *b, sess_row *row, kb_err *err)
{
	kb_snapshot *snap; /* lent by the cluster, as in the daemon */
	b->fx.strs.n = b->fx.binds.n = b->fx.phases.n = b->fx.evicts.n = 0;
	b->fx.pending = 0;
	b->fx.waiting = 0;

	double c0 = bench_cpu_ms();
	double t0 = bench_mono_ms();
	int r = kb_cluster_session_snapshot(&b->cluster, &snap, err);
	double t1 = bench_mono_ms();
	if (r < 0)
		return kb_err_prefix(err, "snapshot");
	if (b->nodes == 0 && b->tasks == 0) {
		b->nodes = snap->nnodes;
		b->jobs = snap->njobs;
		b->queues = snap->nqueues;
		for (uint32_t i = 0; i < snap->ntasks; i++)
			b->tasks += !snap->tasks[i].foreign;
	}
	kb_session ssn;
	r = kb_session_open(&ssn, snap, &b->conf, &bench_effects, &b->fx, b->now, err);
	double t2 = bench_mono_ms();
	if (r < 0) {
		return kb_err_prefix(err, "session open");
	}
	if (b->use_memo)
		kb_session_use_memo(&ssn, &b->memo);
	r = kb_session_run_actions(&ssn, err);
	double t3 = bench_mono_ms();
	row->replayed = ssn.memo_replayed;
	int rc = kb_session_close(&ssn);
	double t4 = bench_mono_ms();
	double c4 = bench_cpu_ms();
	if (r < 0) {
		return kb_err_prefix(err, "actions");
	}
	if (rc < 0 || b->fx.oom) {
		return kb_err_set(err, rc < 0 ? rc : -ENOMEM, "session close: effects failed: %s",
				  strerror(rc < 0 ? -rc : ENOMEM));
	}
	if (b->check) {
		char why[512];
		if (!kb_snapshot_check(snap, why, sizeof(why))) {
			return kb_err_set(err, -EPROTO, "invariant broken after session: %s", why);
		}
	}
	/* The session is over: now the store may change (the lent snapshot is
	 * put back and refreshed at the next session). */
	double t5 = bench_mono_ms();
	for (size_t i = 0; i < b->fx.binds.n; i++) {
		const bind_rec *br = &b->fx.binds.v[i];
		r = kb_cluster_set_pod(&b->cluster, b->fx.strs.v + br->pod, b->fx.strs.v + br->node,
				       KB_TASK_RUNNING, b->now, br->gpu_mask);
		if (r < 0)
			return kb_err_set(err, r, "binding %s to %s: %s", b->fx.strs.v + br->pod,
					  b->fx.strs.v + br->node, strerror(-r));
	}
	for (size_t i = 0; i < b->fx.phases.n; i++) {
		r = kb_cluster_set_podgroup_phase(&b->cluster, b->fx.strs.v + b->fx.phases.v[i].key,
						  b->fx.phases.v[i].phase);
		if (r < 0 && r != -ENOENT)
			return kb_err_set(err, r, "podgroup phase: %s", strerror(-r));
	}
	for (size_t i = 0; i < b->fx.evicts.n; i++)
		kb_cluster_delete(&b->cluster, KB_KIND_POD, b->fx.strs.v + b->fx.evicts.v[i]);
	double t6 = bench_mono_ms();
	b->now += 1000;

	row->snapshot = t1 - t0;
	row->open = t2 - t1;
	row->actions = t3 - t2;
	row->close = t4 - t3;
	row->apply = t6 - t5;
	row->total = t4 - t0;
	row->cpu = c4 - c0;
	row->binds = b->fx.binds.n;
	row->evictions = b->fx.evicts.n;
	row->pending = b->fx.pending;
	row->waiting = b->fx.waiting;
	return 0;
}

/* ---- churn: sessions after the API updated pods ----------------------------------- */

#define CHURN_ROUNDS 5

/* Decodes the first n pods of path again into ret (new objects, as the
 * API would send after a status change). 0 or -errno with err. */
static int churn_pods(bench *b, const char *path, size_t n, kb_object_vec *ret, kb_err *err)
{
	kb_yaml_stream *ys;
	int r = kb_yaml_stream_open_file(path, &ys, err);
	if (r < 0)
		return r;
	const kb_yaml_node *doc;
	while (ret->n < n && (r = kb_yaml_stream_next(ys, &doc, err)) > 0) {
		const char *kind = kb_yaml_str(kb_yaml_get(doc, "kind"));
		if (!kind || strcmp(kind, "Pod") != 0)
			continue;
		kb_object *o;
		if ((r = kb_object_decode(doc, path, &b->cluster.resnames, &o, err)) < 0)
			break;
		if ((r = KB_VEC_PUSH(ret, o)) < 0) {
			kb_object_free(o);
			r = kb_err_set(err, -ENOMEM, "out of memory");
			break;
		}
	}
	kb_yaml_stream_free(ys);
	return r < 0 ? r : 0;
}

/* CHURN_ROUNDS rounds of: k pods applied afresh, then one session, timed
 * into rows (apply = the k applies). 0 or -errno with err. */
static int churn(bench *b, const char *path, size_t k, sess_row *rows, kb_err *err)
{
	kb_object_vec pods = {0};
	int r = churn_pods(b, path, k * CHURN_ROUNDS, &pods, err);
	for (size_t round = 0; r == 0 && round < CHURN_ROUNDS; round++) {
		double t0 = bench_mono_ms();
		for (size_t i = round * k; r == 0 && i < (round + 1) * k && i < pods.n; i++) {
			r = kb_cluster_apply(&b->cluster, pods.v[i], 0);
			pods.v[i] = NULL; /* the cluster's now, even on failure */
		}
		double apply = bench_mono_ms() - t0;
		if (r < 0) {
			r = kb_err_set(err, r, "applying pods: out of memory");
			break;
		}
		if ((r = run_one(b, &rows[round], err)) == 0)
			rows[round].apply = apply;
	}
	for (size_t i = 0; i < pods.n; i++)
		kb_object_free(pods.v[i]);
	KB_VEC_RELEASE(&pods);
	return r;
}

/* ---- output ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("usage: bench-session -f FILE [-f FILE...] [--conf FILE | --preset default|enqueue|full]\n"
	      "                     [--name NAME] [--json] [--idle N] [--churn K] [--max-sessions N]\n"
	      "                     [--sessions-csv FILE] [--check] [--no-memo]\n",
	      f);
}

static void json_session(FILE *out, const sess_row *s, uint32_t i)
{
	fprintf(out,
		"{\"session\": %u, \"snapshot_ms\": %.3f, \"open_ms\": %.3f, \"actions_ms\": %.3f, "
		"\"close_ms\": %.3f, \"session_ms\": %.3f, \"session_cpu_ms\": %.3f, \"apply_ms\": %.3f, "
		"\"binds\": %" PRIu64
		", \"pending_after\": %" PRIu64 ", \"pods_per_sec\": %.1f, \"idle\": %s, "
		"\"replayed\": %s}",
		i, s->snapshot, s->open, s->actions, s->close, s->total, s->cpu, s->apply, s->binds,
		s->pending, s->total > 0 ? (double)s->binds / (s->total / 1e3) : 0.0,
		s->idle ? "true" : "false", s->replayed ? "true" : "false");
}

int main(int argc, char **argv)
{
	const char *files[64];
	uint32_t nfiles = 0;
	const char *conf_path = NULL, *preset = "default", *name = NULL, *csv_path = NULL;
	bool json = false, check = false, use_memo = true;
	long idle_n = 5, churn_n = 1000, max_sessions = 100000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(a, "--check") == 0) {
			check = true;
			continue;
		}
		if (strcmp(a, "--no-memo") == 0) {
			use_memo = false;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "bench-session: %s needs a value\n", a);
			usage(stderr);
			return 2;
		}
		const char *v = argv[++i];
		if (strcmp(a, "-f") == 0) {
			if (nfiles == sizeof(files) / sizeof(files[0])) {
				fprintf(stderr, "bench-session: too many -f\n");
				return 2;
			}
			files[nfiles++] = v;
		} else if (strcmp(a, "--conf") == 0)
			conf_path = v;
		else if (strcmp(a, "--preset") == 0)
			preset = v;
		else if (strcmp(a, "--name") == 0)
			name = v;
		else if (strcmp(a, "--sessions-csv") == 0)
			csv_path = v;
		else if (strcmp(a, "--idle") == 0)
			idle_n = strtol(v, NULL, 10);
		else if (strcmp(a, "--churn") == 0)
			churn_n = strtol(v, NULL, 10);
		else if (strcmp(a, "--max-sessions") == 0)
			max_sessions = strtol(v, NULL, 10);
		else {
			fprintf(stderr, "bench-session: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (nfiles == 0 || idle_n < 0 || churn_n < 0 || max_sessions < 1 ||
	    (strcmp(preset, "default") != 0 && strcmp(preset, "enqueue") != 0 &&
	     strcmp(preset, "full") != 0)) {
		usage(stderr);
		return 2;
	}
	if (!name)
		name = files[0];

	static bench b;
	kb_err err = {0};
	int r = conf_path ? kb_conf_load_file(conf_path, &kb_builtin_registry, &b.conf, &err)
		: strcmp(preset, "enqueue") == 0
			  ? kb_conf_load_buffer(PRESET_ENQUEUE, sizeof(PRESET_ENQUEUE) - 1,
						"<preset enqueue>", &kb_builtin_registry, &b.conf, &err)
		: strcmp(preset, "full") == 0
			  ? kb_conf_load_buffer(KB_CONF_FULL, strlen(KB_CONF_FULL), "<preset full>",
						&kb_builtin_registry, &b.conf, &err)
			  : kb_conf_load_default(&kb_builtin_registry, &b.conf, &err);
	if (r < 0) {
		fprintf(stderr, "bench-session: configuration: %s\n", err.msg);
		return 1;
	}
	const char *conf_name = conf_path ? conf_path : b.conf.source;
	b.check = check;
	b.use_memo = use_memo;
	kb_cluster_init(&b.cluster, KB_DEFAULT_SCHEDULER_NAME, KB_DEFAULT_QUEUE);

	double l0 = bench_mono_ms();
	kb_object_vec later = {0};
	for (uint32_t i = 0; i < nfiles && r == 0; i++)
		r = kb_manifests_load(&b.cluster, files[i], &later, &err);
	for (size_t i = 0; i < later.n; i++) /* no virtual time here: everything arrives now */
		if (r == 0)
			r = kb_cluster_apply(&b.cluster, later.v[i], 0);
		else
			kb_object_free(later.v[i]);
	KB_VEC_RELEASE(&later);
	double load_ms = bench_mono_ms() - l0;
	if (r < 0) {
		fprintf(stderr, "bench-session: loading: %s\n", err.msg);
		return 1;
	}
	double load_peak = proc_status_mb("VmHWM"), after_load = proc_status_mb("VmRSS");
	/* Give the decoder's freed document trees back to the kernel, so that the
	 * session figures show what the store holds, not malloc's free lists. */
	malloc_trim(0);
	double after_trim = proc_status_mb("VmRSS");
	bool hwm_reset = reset_hwm();

	KB_VEC(sess_row) rows = {0};
	uint64_t bound = 0, pending = 0;
	uint32_t placing = 0;
	for (long s = 0; s < max_sessions; s++) {
		sess_row row = {0};
		if ((r = run_one(&b, &row, &err)) < 0)
			break;
		if (KB_VEC_PUSH(&rows, row) < 0) {
			r = kb_err_set(&err, -ENOMEM, "out of memory");
			break;
		}
		placing++;
		bound += row.binds;
		pending = row.pending;
		if (row.pending == 0 || (row.binds == 0 && row.evictions == 0))
			break;
	}
	for (long s = 0; r == 0 && s < idle_n; s++) {
		sess_row row = {.idle = true};
		if ((r = run_one(&b, &row, &err)) < 0)
			break;
		row.idle = true;
		if (KB_VEC_PUSH(&rows, row) < 0)
			r = kb_err_set(&err, -ENOMEM, "out of memory");
		bound += row.binds;
		if (row.binds)
			pending = row.pending;
	}
	if (r < 0) {
		fprintf(stderr, "bench-session: %s: session %zu: %s\n", name, rows.n, err.msg);
		return 1;
	}
	sess_row churn_rows[CHURN_ROUNDS] = {0};
	double churn_v[3][CHURN_ROUNDS];
	/* Small workloads: distinct pods in every round, from half of them. */
	if ((uint64_t)churn_n > b.tasks / (2 * CHURN_ROUNDS))
		churn_n = (long)(b.tasks / (2 * CHURN_ROUNDS));
	if (churn_n > 0) {
		if ((r = churn(&b, files[0], (size_t)churn_n, churn_rows, &err)) < 0) {
			fprintf(stderr, "bench-session: %s: churn: %s\n", name, err.msg);
			return 1;
		}
		for (int i = 0; i < CHURN_ROUNDS; i++) {
			churn_v[0][i] = churn_rows[i].total;
			churn_v[1][i] = churn_rows[i].snapshot;
			churn_v[2][i] = churn_rows[i].apply;
		}
	}
	double churn_ms = churn_n ? median(churn_v[0], CHURN_ROUNDS) : 0,
	       churn_snap = churn_n ? median(churn_v[1], CHURN_ROUNDS) : 0,
	       churn_apply = churn_n ? median(churn_v[2], CHURN_ROUNDS) : 0;

	/* Totals over the placing sessions. */
	double snap_t = 0, open_t = 0, act_t = 0, close_t = 0, apply_t = 0, total_t = 0, cpu_t = 0;
	uint64_t placed = 0;
	for (uint32_t i = 0; i < placing; i++) {
		const sess_row *s = &rows.v[i];
		snap_t += s->snapshot, open_t += s->open, act_t += s->actions, close_t += s->close;
		apply_t += s->apply, total_t += s->total, cpu_t += s->cpu;
		placed += s->binds;
	}
	double idle_v[5][64];
	size_t ni = 0, idle_replayed = 0;
	for (size_t i = placing; i < rows.n && ni < 64; i++, ni++) {
		idle_replayed += rows.v[i].replayed;
		idle_v[0][ni] = rows.v[i].total;
		idle_v[1][ni] = rows.v[i].snapshot;
		idle_v[2][ni] = rows.v[i].actions;
		idle_v[3][ni] = rows.v[i].close;
		idle_v[4][ni] = rows.v[i].cpu;
	}
	double idle_ms = median(idle_v[0], ni), idle_snap = median(idle_v[1], ni),
	       idle_act = median(idle_v[2], ni), idle_close = median(idle_v[3], ni),
	       idle_cpu = median(idle_v[4], ni);
	double pps_cpu = cpu_t > 0 ? (double)placed / (cpu_t / 1e3) : 0;
	double pps = total_t > 0 ? (double)placed / (total_t / 1e3) : 0;
	double pps_apply = total_t + apply_t > 0 ? (double)placed / ((total_t + apply_t) / 1e3) : 0;
	/* The reset of VmHWM also resets ru_maxrss: the process peak is the larger
	 * of the two phases. */
	double sess_peak = hwm_reset ? proc_status_mb("VmHWM") : -1;
	double peak = maxrss_mb();
	if (load_peak > peak)
		peak = load_peak;
	uint64_t unplaced = b.tasks > bound ? b.tasks - bound : 0;

	if (csv_path) {
		FILE *f = fopen(csv_path, "w");
		if (!f) {
			fprintf(stderr, "bench-session: %s: %s\n", csv_path, strerror(errno));
			return 1;
		}
		fputs("# session elapsed_ms snapshot_ms open_ms actions_ms close_ms session_ms binds "
		      "pending_after idle\n",
		      f);
		/* Row 0: the start, nothing bound yet, every pod pending. */
		fprintf(f, "0 0 0 0 0 0 0 0 %u 0\n", b.tasks);
		double el = 0;
		for (size_t i = 0; i < rows.n; i++) {
			const sess_row *s = &rows.v[i];
			el += s->total;
			fprintf(f, "%zu %.3f %.3f %.3f %.3f %.3f %.3f %" PRIu64 " %" PRIu64 " %d\n", i + 1,
				el, s->snapshot, s->open, s->actions, s->close, s->total, s->binds,
				s->pending, s->idle ? 1 : 0);
		}
		fclose(f);
	}

	if (json) {
		FILE *o = stdout;
		fprintf(o, "{\"workload\": \"%s\", \"conf\": \"%s\", \"nodes\": %u, \"pods\": %u, "
			   "\"jobs\": %u, \"queues\": %u,\n",
			name, conf_name, b.nodes, b.tasks, b.jobs, b.queues);
		fprintf(o,
			" \"load_ms\": %.3f, \"placing_sessions\": %u, \"pods_bound\": %" PRIu64
			", \"pods_pending\": %" PRIu64 ", \"pods_unplaced\": %" PRIu64 ",\n",
			load_ms, placing, placed, pending, unplaced);
		fprintf(o,
			" \"pods_per_sec\": %.1f, \"pods_per_sec_with_apply\": %.1f, "
			"\"pods_per_cpu_sec\": %.1f, \"session_cpu_ms_total\": %.3f, "
			"\"session_ms_total\": %.3f, \"snapshot_ms_total\": %.3f, \"open_ms_total\": %.3f, "
			"\"actions_ms_total\": %.3f, \"close_ms_total\": %.3f, \"apply_ms_total\": %.3f,\n",
			pps, pps_apply, pps_cpu, cpu_t, total_t, snap_t, open_t, act_t, close_t, apply_t);
		fprintf(o,
			" \"idle_session_ms\": %.3f, \"idle_session_cpu_ms\": %.3f, "
			"\"idle_snapshot_ms\": %.3f, \"idle_actions_ms\": %.3f, "
			"\"idle_close_ms\": %.3f, \"idle_sessions_run\": %zu, "
			"\"idle_gangs_waiting\": %" PRIu64 ", \"memo\": %s, \"idle_replayed\": %zu,\n",
			idle_ms, idle_cpu, idle_snap, idle_act, idle_close, ni,
			rows.n ? rows.v[rows.n - 1].waiting : 0, use_memo ? "true" : "false",
			idle_replayed);
		fprintf(o,
			" \"churn_pods\": %ld, \"churn_session_ms\": %.3f, \"churn_snapshot_ms\": %.3f, "
			"\"churn_apply_ms\": %.3f,\n",
			churn_n, churn_ms, churn_snap, churn_apply);
		fprintf(o,
			" \"peak_rss_mb\": %.1f, \"load_peak_rss_mb\": %.1f, \"rss_after_load_mb\": %.1f, "
			"\"rss_after_load_trimmed_mb\": %.1f, \"sessions_peak_rss_mb\": %.1f,\n",
			peak, load_peak, after_load, after_trim, sess_peak);
		fputs(" \"sessions\": [", o);
		for (size_t i = 0; i < rows.n; i++) {
			fputs(i ? ",\n   " : "\n   ", o);
			json_session(o, &rows.v[i], (uint32_t)(i + 1));
		}
		fprintf(o, "\n ],\n \"idle_from_session\": %u}\n", placing + 1);
	} else {
		printf("workload %s: %u nodes, %u pods, %u jobs, %u queues; conf %s\n", name, b.nodes,
		       b.tasks, b.jobs, b.queues, conf_name);
		printf("load %.1f ms; RSS after load %.1f MB (%.1f MB after malloc_trim), load peak "
		       "%.1f MB\n\n",
		       load_ms, after_load, after_trim, load_peak);
		printf("%-8s %11s %9s %11s %9s %11s %9s %9s %8s %9s %12s\n", "SESSION", "SNAPSHOT_MS",
		       "OPEN_MS", "ACTIONS_MS", "CLOSE_MS", "SESSION_MS", "CPU_MS", "APPLY_MS", "BINDS",
		       "PENDING", "PODS/S");
		for (size_t i = 0; i < rows.n; i++) {
			const sess_row *s = &rows.v[i];
			printf("%-8s %11.2f %9.2f %11.2f %9.2f %11.2f %9.2f %9.2f %8" PRIu64 " %9" PRIu64
			       " %12.0f\n",
			       s->idle ? "idle" : "", s->snapshot, s->open, s->actions, s->close, s->total,
			       s->cpu, s->apply, s->binds, s->pending,
			       s->total > 0 ? (double)s->binds / (s->total / 1e3) : 0.0);
		}
		printf("\npods bound %" PRIu64 " in %u sessions, %.1f ms of sessions: %.0f pods/s "
		       "(%.0f pods/s counting the in-memory apply; %.0f pods per CPU second)\n",
		       placed, placing, total_t, pps, pps_apply, pps_cpu);
		printf("still pending %" PRIu64 "\n", pending);
		printf("idle session (median of %zu): %.2f ms (snapshot %.2f, actions %.2f, close "
		       "%.2f)\n",
		       ni, idle_ms, idle_snap, idle_act, idle_close);
		printf("idle session CPU time (median): %.2f ms; gangs waiting in it: %" PRIu64 "\n",
		       idle_cpu, rows.n ? rows.v[rows.n - 1].waiting : 0);
		if (churn_n)
			printf("session after %ld pods updated (median of %d): %.2f ms (snapshot %.2f; "
			       "applying them %.2f ms)\n",
			       churn_n, CHURN_ROUNDS, churn_ms, churn_snap, churn_apply);
		printf("peak RSS %.1f MB (process), %.1f MB (sessions only)\n", peak, sess_peak);
	}
	KB_VEC_RELEASE(&rows);
	KB_VEC_RELEASE(&b.fx.strs);
	KB_VEC_RELEASE(&b.fx.binds);
	KB_VEC_RELEASE(&b.fx.evicts);
	KB_VEC_RELEASE(&b.fx.phases);
	kb_cluster_release(&b.cluster);
	kb_conf_release(&b.conf);
	return 0;
}

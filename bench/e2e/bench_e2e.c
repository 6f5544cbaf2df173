/* bench_e2e.c - the end-to-end benchmark against a real kube-apiserver
 * (docs/benchmarks.md §2). Run through bench/run (step e2e), which brings
 * the local control plane up (tests/cluster/up) and down around it.
 *
 *   bench-e2e --admin ADMIN_KUBECONFIG --scheduler-kubeconfig SCHED_KUBECONFIG
 *             --daemon KUBE_BATCHD --out DIR [--nodes N] [--pods N]
 *             [--latency-pods N] [--gang-min N] [--gang-max N]
 *             [--create-inflight N] [--raw-inflight N[,N...]] [--raw-as scheduler|admin]
 *             [--gang-interval-ms MS] [--schedule-period-ms MS] [--daemon-qps Q]
 *             [--daemon-burst B] [--daemon-v N] [--scheduler-conf F]
 *             [--timeout S] [--seed N] [--cleanup] [--phases raw,sched,raw2,lat,failover]
 *             [--bound-pods N] [--peer BINARY [--peer-arg ARG]... [--peer-name NAME]]
 *             [--scheduler-name NAME] [--group-kind none|kube-batch|k8s]
 *             [--kill-at FRACTION] [--lease-duration-s S] [--renew-deadline-s S]
 *             [--retry-period-s S] [--lease-namespace NS] [--lease-name NAME]
 *
 * One process, one run, four phases, all against the same cluster:
 *
 * Setup: --nodes plain Node objects (64 cpu, 256Gi, 110 pods, Ready; no
 * kubelet: status is kept on create), namespaces e2e-{raw,sched,raw2,lat}-RUN
 * and one watch on the pods of phases 2 and 3 (label kb-bench-e2e=RUN) from
 * the resourceVersion of a LIST made before any of them exists, so no event
 * is missed. A pod is bound when an event first carries spec.nodeName; the
 * time is CLOCK_MONOTONIC when the driver receives that event.
 *
 * Phase 1, raw binding capacity: --pods pods with a schedulerName nobody
 * serves are created (--create-inflight requests in flight), then a v1
 * Binding is POSTed for each (round robin over the nodes) with at most
 * --raw-inflight requests in flight. With several levels, the pods are split
 * evenly between them and the best level is the figure. The binder uses the
 * scheduler's credentials by default (the same user, hence the same API
 * Priority and Fairness level, as the daemon; --raw-as admin for the exempt
 * system:masters user). raw_binds_per_sec = binds / (last response - first
 * request). Then the pods are deleted (gracePeriodSeconds=0).
 *
 * Phase 2, the scheduler's burst: --pods pods in gangs of --gang-min..
 * --gang-max members (a kube-batch PodGroup each, minMember = size, seeded
 * splitmix64 sizes), all created and seen on the watch BEFORE the daemon
 * starts; then kube-batchd is started (fork/exec, log DIR/daemon.log) with
 * the scheduler's kubeconfig. Until every pod is bound: binds per 1 s window
 * from the first bind; sched_binds_per_sec = bound / (last bind - first
 * bind); p50/p99 over the full windows (the last, partial one is left out
 * unless it is the only one). sched_first_bind_ms and sched_all_bound_ms:
 * the first and the last bind after the daemon's start.
 * sched_gang_spread_*: how long gangs stayed partly bound (last member
 * bound - first member bound).
 *
 * Raw again ("raw2"), after the burst: phase 1 once more, with the daemon
 * stopped first (it would watch these pods too), in namespace e2e-raw2-RUN
 * (keys raw_after_*, DIR/raw_after_per_sec.csv). The server slows as a run
 * goes on (its watch cache keeps the recent versions of every pod churned),
 * so a raw phase before the burst alone would favour the raw side:
 * raw_binds_per_sec becomes the mean of the two (the first is kept as
 * raw_before_binds_per_sec) and sched_vs_raw is taken against the mean.
 *
 * Phase 3, latency with the daemon running (started again, and ready, if
 * raw2 stopped it; its figures then add both lives'): one gang every
 * --gang-interval-ms (PodGroup created first, then its members once the
 * PodGroup's create has answered) until --latency-pods pods. create_to_bound
 * = bound - the time the pod's create was sent; gang_complete = last member
 * bound - the time the PodGroup's create was sent.
 *
 * Another scheduler in phase 2 (--peer; bench/run --peers): BINARY is
 * started with the --peer-arg arguments as given (its own kubeconfig and
 * configuration among them; log DIR/scheduler.log) instead of kube-batchd,
 * and the same figures are taken (first bind and all bound from its start,
 * binds/s, gang spread, ratio to raw; its peak RSS). It has no /healthz or
 * /metrics the driver knows, so sched_synced_ms and the daemon's request
 * counts are not measured; it runs phases raw, sched, raw2 only. Told to
 * stop, it must exit by itself; its status is logged, not checked
 * (kube-scheduler without leader election always exits 1). The phase 2 and
 * 3 pods carry --scheduler-name (default kube-batchd) and, per
 * --group-kind, their gang as a kube-batch PodGroup (annotation
 * scheduling.k8s.io/group-name; the default), a scheduling.k8s.io/v1beta1
 * PodGroup (schedulingPolicy.gang.minCount; the pod's
 * spec.schedulingGroup.podGroupName; Kubernetes v1.37 with GenericWorkload,
 * the form of kube-scheduler's own gang benchmark, without a Workload), or
 * none (plain pods: the gangs exist only in the driver's accounting, and
 * their spread is how long such a group stays partly bound without a gang
 * scheduler). e2e.json gets peer (0/1) and group_kind (0 none, 1
 * kube-batch, 2 k8s).
 *
 * Failover (issue 18 item 3; only when --phases names it, after the
 * others, whose daemon is stopped first; bench/run step failover runs it
 * alone on the cold start's cluster): two kube-batchd with --leader-elect
 * and the lease flags given (defaults 4 s / 3 s / 1 s, Lease
 * kube-system/kube-batchd), logs DIR/daemon-0.log and daemon-1.log. Once
 * both answer /livez, both report kube_batchd_cache_synced 1 and exactly
 * one kube_batchd_leader 1, --pods pods in gangs are created in namespace
 * e2e-failover-RUN (watched as phases 2 and 3) while the leader binds
 * them; as soon as the watch shows --kill-at (default 0.2) of them bound,
 * the leader gets SIGKILL (an ev_check after every loop iteration). The
 * standby's /metrics is polled every 20 ms: it took the lease after t_lo
 * (the send time of its last "kube_batchd_leader 0" answer) and before t_hi
 * (the receipt of its first "1"). Keys failover_*: takeover_ms (t_hi -
 * kill), takeover_resolution_ms (t_hi - t_lo), first_bind_after_lease_ms
 * (the first bind after t_lo - t_lo: an upper bound),
 * bound_after_kill_by_old_leader (binds seen between the kill and t_lo:
 * the dead leader's requests already sent), bound_by_new_leader (after
 * t_lo) against the new leader's kube_batchd_binds_total and
 * kube_batchd_bind_failures_total (a Binding refused), node_changes (an
 * event whose spec.nodeName differs from the first one seen; Kubernetes
 * forbids it, so a sanity check of the watch), gangs_partial_at_takeover
 * and _at_end, unbound_at_end (a gang stuck partial shows as pods never
 * bound within --timeout: counted, not failed), all_bound_after_kill_ms,
 * gang_spread_*, lease_transitions (the Lease read at the end).
 *
 * --phases runs a subset, always in the order above (phase 3 without phase
 * 2 starts the daemon itself); bench/run runs "lat" alone once, then
 * "raw,sched,raw2" five times (E2E_REPEAT; bench/README.md says why).
 *
 * At the end of phases 2 and 3 (two schedule periods after the last bind,
 * then once kube_batchd_api_requests_pending is 0, so that the status
 * writes and the Events queued behind the bindings are counted) the
 * daemon's /metrics are read; api_requests_per_pod =
 * kube_batchd_api_requests_total / kube_batchd_binds_total at the end of
 * the run.
 *
 * Writes DIR/e2e.json ({"e2e": {...}}, numbers only), DIR/raw_per_sec.csv and
 * DIR/sched_per_sec.csv ("t_s binds": binds in the 1 s window starting t_s
 * seconds after the phase's first bind request / first bind),
 * DIR/create_to_bound.csv and DIR/gang_complete.csv ("ms fraction", sorted:
 * the CDF), DIR/daemon.log. Progress and errors go to stderr.
 *
 * Errors: any failed API request ends the run with the object named, its
 * HTTP status and the server's message; a wait that times out (--timeout,
 * per wait) says how many objects are missing. The daemon is stopped on every
 * exit path (SIGTERM, then SIGKILL after 15 s; PR_SET_PDEATHSIG covers a
 * driver killed outright). --cleanup deletes what the run created (for a
 * control plane that is reused); otherwise the caller discards the cluster.
 *
 * Exit status: 0; 1 on a failed request, a timeout or the daemon dying;
 * 2 on bad usage.
 */
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json_doc.h"
#include "base/log.h"
#include "kube/kube_client.h"
#include "kube/list_pager.h"

#define LABEL_WATCHED "kb-bench-e2e"  /* pods of phases 2 and 3: the driver's watch */
#define LABEL_RAW     "kb-bench-e2e-raw"
#define LABEL_NODE    "kb-bench-e2e-node"
#define LABEL_BOUND   "kb-bench-e2e-bound" /* --bound-pods: created on their nodes */
#define NOBODY        "kb-bench-e2e-nobody" /* a schedulerName no scheduler serves */
#define PG_API        "/apis/scheduling.incubator.k8s.io/v1alpha1"
#define MAX_LEVELS    8
#define DAEMON_STOP_S 15.0
#define SETTLE_PERIODS 2 /* periods waited before reading /metrics */
#define MAX_PEER_ARGS 32
#define K8S_PG_API    "/apis/scheduling.k8s.io/v1beta1"

/* ---- options -------------------------------------------------------------------- */

typedef struct e2e_opts {
	const char *admin_kubeconfig; /* creates, deletes, watches */
	const char *sched_kubeconfig; /* the daemon's, and the raw binder's by default */
	const char *daemon;           /* the kube-batchd binary */
	const char *daemon_conf;      /* --scheduler-conf, passed on; NULL: built-in */
	const char *out;              /* output directory */
	int nodes, pods, latency_pods;
	size_t bound_pods; /* --bound-pods: pods created already bound, before the phases */
	int gang_min, gang_max;
	int create_inflight;
	int raw_inflight[MAX_LEVELS];
	int nlevels;
	bool raw_as_admin;
	double gang_interval_ms;
	int period_ms;
	double daemon_qps;
	int daemon_burst;
	int daemon_v;
	double timeout_s;
	uint64_t seed;
	bool cleanup;
	unsigned phases; /* bit k: run phase k (--phases; default all) */
	/* Another scheduler in phase 2 (--peer): its binary and arguments,
	 * started as given; NULL: kube-batchd (--daemon). */
	const char *peer;
	const char *peer_args[MAX_PEER_ARGS];
	int npeer_args;
	const char *peer_name;      /* --peer-name, for messages */
	const char *scheduler_name; /* --scheduler-name: the phase 2 and 3 pods' schedulerName */
	int group_kind;             /* --group-kind: GROUP_* */
	/* The failover phase: the leader is killed once this fraction of the
	 * pods is seen bound (--kill-at); the daemons' leader election flags. */
	double kill_at;
	double lease_s, renew_s, retry_s;       /* --lease-duration-s ... */
	const char *lease_ns, *lease_name;      /* --lease-namespace, --lease-name */
} e2e_opts;

/* The gang object of phase 2 and 3 pods (--group-kind): none (plain pods,
 * the gangs exist only in the driver's accounting), kube-batch's PodGroup
 * (annotation scheduling.k8s.io/group-name), or Kubernetes' own
 * scheduling.k8s.io/v1beta1 PodGroup (gang minCount; the pod's
 * spec.schedulingGroup.podGroupName; v1.37 with GenericWorkload). */
enum { GROUP_NONE, GROUP_KUBE_BATCH, GROUP_K8S };
static const char *const GROUP_KIND[] = {"none", "kube-batch", "k8s"};

/* ---- the run's state ------------------------------------------------------------ */

/* Run in this order. PH_RAW2 is phase 1 again after the scheduler's burst
 * (bench/run brackets every burst with two raw phases). */
enum { PH_RAW, PH_SCHED, PH_RAW2, PH_LAT, PH_FAIL, NPHASES };
static const char *const PHASE_TAG[NPHASES] = {"raw", "sched", "raw2", "lat", "failover"};

static bool is_raw(int k)
{
	return k == PH_RAW || k == PH_RAW2;
}

enum { SEEN_ADDED = 1 };

/* The pods (and gangs) of one phase. Pod i is named "p<i>" in ns; gang g
 * ("g<g>") is pods [gang_first[g], gang_first[g + 1]). Arrays owned. */
typedef struct phase {
	char ns[64];
	size_t npods, ngangs;
	size_t *gang_first; /* ngangs + 1 */
	double *t_create;   /* pod create sent (phase 3) */
	double *t_pg;       /* PodGroup create sent (phase 3) */
	double *t_bound;    /* watch delivered spec.nodeName; 0 = not yet */
	uint8_t *seen;      /* SEEN_* */
	uint32_t *node_h;   /* FNV-1a of the spec.nodeName first seen (0 = none) */
	size_t nadded, nbound;
	size_t nmoved;      /* events whose spec.nodeName differs from the first seen */
} phase;

/* What the daemon's /metrics said. */
typedef struct daemon_metrics {
	double api_requests, api_retries, binds, bind_failures, status_writes, events, sessions,
		session_seconds, pending;
} daemon_metrics;

typedef struct bench {
	const e2e_opts *o;
	struct ev_loop *loop;
	kb_kube_client *admin;   /* the admin's client: creates, deletes */
	kb_kube_client *watcher; /* the admin's too, on its own connection: the watch */
	kb_kube_client *binder;  /* the raw binder's client (admin or scheduler user) */
	kb_kube_client *metrics_client;
	char run[16];
	phase ph[NPHASES];

	kb_kube_stream *watch;
	kb_kube_stream *raw_watch; /* the observer of phase 1 (raw_watch_open) */
	uint64_t raw_watch_events;
	char rv[64];
	unsigned watch_restarts;
	uint64_t watch_events;

	pid_t daemon_pid;
	int daemon_lives;             /* starts so far (restarted for phase 3 after raw2) */
	daemon_metrics earlier;       /* an earlier life's counters (earlier_life > 0) */
	int earlier_life;
	ev_child daemon_child;
	bool daemon_exited, daemon_stopping;
	int daemon_status;
	int port;
	double t_daemon_start;
	char daemon_log[4096];
	char bound_ns[64];  /* --bound-pods' namespace */
	ev_timer health;    /* polls /healthz from the daemon's start (health_watch) */
	bool health_inflight;
	double t_synced;    /* its first 200; 0 = not yet */

	bool failed;
	char err[1024];
	ev_signal sigint, sigterm;

	json_t *res; /* the "e2e" object */
} bench;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Records the run's first failure (later ones are consequences) and logs it. */
__attribute__((format(printf, 2, 3))) static void fail(bench *b, const char *fmt, ...)
{
	if (b->failed)
		return;
	b->failed = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	kb_error("%s", b->err);
}

static void res_num(bench *b, const char *key, double v)
{
	json_object_set_new(b->res, key, isfinite(v) ? json_real(v) : json_null());
}

static void res_int(bench *b, const char *key, long long v)
{
	json_object_set_new(b->res, key, json_integer(v));
}

/* ---- running the loop ------------------------------------------------------------ */

typedef bool (*pred_fn)(bench *b, void *ctx);

static void expire_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	*(bool *)w->data = true;
}

/* Runs the loop until pred holds, `seconds` pass or (if stop_on_fail) the
 * run fails. Returns whether pred holds (and, with stop_on_fail, the run has
 * not failed). */
static bool loop_until(bench *b, pred_fn pred, void *ctx, double seconds, bool stop_on_fail)
{
	bool expired = false;
	ev_timer t;
	ev_now_update(b->loop);
	ev_timer_init(&t, expire_cb, seconds, 0.);
	t.data = &expired;
	ev_timer_start(b->loop, &t);
	while (!(stop_on_fail && b->failed) && !expired && !pred(b, ctx))
		ev_run(b->loop, EVRUN_ONCE);
	ev_timer_stop(b->loop, &t);
	return pred(b, ctx) && !(stop_on_fail && b->failed);
}

static bool run_until(bench *b, pred_fn pred, void *ctx, double seconds)
{
	return loop_until(b, pred, ctx, seconds, true);
}

static bool never(bench *b, void *ctx)
{
	return false;
}

/* Lets the loop run for `seconds` (requests and the watch go on). */
static void pause_s(bench *b, double seconds)
{
	run_until(b, never, NULL, seconds);
}

/* ---- one request, waited for ------------------------------------------------------ */

typedef struct reply {
	bool done;
	int status;
	char *body; /* owned */
	size_t len;
} reply;

static void reply_done(void *ctx, int status, const char *body, size_t len)
{
	reply *r = ctx;
	r->done = true;
	r->status = status;
	r->body = malloc(len + 1);
	if (r->body) {
		memcpy(r->body, body ? body : "", len);
		r->body[len] = '\0';
		r->len = len;
	}
}

static bool reply_ready(bench *b, void *ctx)
{
	return ((reply *)ctx)->done;
}

/* Sends one request and waits for it (--timeout). Returns the HTTP status,
 * a negative errno for a transport failure, or -ETIMEDOUT. *ret (optional)
 * gets the body, owned by the caller (free ret->body). Does not fail the run. */
static int call(bench *b, kb_kube_client *c, const char *method, const char *path,
		const char *body, const char *content_type, reply *ret)
{
	reply r = {0};
	int e = kb_kube_request(c, method, path, body, content_type, reply_done, &r);
	if (e < 0)
		return e;
	if (!loop_until(b, reply_ready, &r, b->o->timeout_s, false)) {
		kb_kube_cancel(c, &r);
		return -ETIMEDOUT;
	}
	if (ret)
		*ret = r;
	else
		free(r.body);
	return r.status;
}

/* The "message" of a Kubernetes Status body, else the start of the body. */
static void status_message(const char *body, size_t len, char *buf, size_t n)
{
	json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
	if (m)
		snprintf(buf, n, "%s", m);
	else
		snprintf(buf, n, "%.*s", (int)(len < 300 ? len : 300), body ? body : "");
	json_decref(j);
}

/* A request that must answer `want`: fails the run otherwise, naming what. */
static int must(bench *b, kb_kube_client *c, const char *method, const char *path,
		const char *body, int want, const char *what, reply *ret)
{
	reply r = {0};
	int st = call(b, c, method, path, body, NULL, &r);
	if (st != want) {
		char msg[400];
		if (st == -ETIMEDOUT)
			snprintf(msg, sizeof(msg), "no answer in %.0f s", b->o->timeout_s);
		else
			status_message(r.body, r.len, msg, sizeof(msg));
		fail(b, "%s %s: HTTP %d (want %d): %s", method, what, st, want, msg);
		free(r.body);
		return -EIO;
	}
	if (ret)
		*ret = r;
	else
		free(r.body);
	return 0;
}

/* ---- many requests, a bounded number in flight ------------------------------------ */

/* One request of a pump, built on demand (again for an error message). */
typedef struct pump_req {
	const char *method;
	char path[320];
	char body[2048];
	bool has_body;
	char what[200]; /* the object, for messages: Pod "ns/p12" */
} pump_req;

typedef struct pump pump;
/* Fills *ret with request i. Returns 0 or -ENOSPC (a buffer too small). */
typedef int (*pump_build_fn)(pump *p, size_t i, pump_req *ret);
/* Called when request i answered as wanted, at time t. */
typedef void (*pump_ok_fn)(pump *p, size_t i, double t);

typedef struct pump_op {
	pump *p;
	size_t i;
} pump_op;

struct pump {
	bench *b;
	kb_kube_client *c;
	const char *what; /* "creating pods", for messages */
	size_t total, max_inflight;
	int want1, want2; /* accepted statuses (want2 0: only want1) */
	pump_build_fn build;
	pump_ok_fn on_ok; /* or NULL */
	void *ctx;
	/* run state */
	size_t next, inflight, ok;
	pump_op *ops;
	double t_first, t_last; /* first request sent, last answer */
};

static void pump_fill(pump *p);

static void pump_done(void *ctx, int status, const char *body, size_t len)
{
	pump_op *op = ctx;
	pump *p = op->p;
	double t = now_s();
	p->inflight--;
	if (status == p->want1 || status == p->want2) {
		p->ok++;
		p->t_last = t;
		if (p->on_ok)
			p->on_ok(p, op->i, t);
	} else {
		pump_req r;
		char msg[400];
		p->build(p, op->i, &r);
		status_message(body, len, msg, sizeof(msg));
		fail(p->b, "%s: %s %s: HTTP %d: %s", p->what, r.method, r.what, status, msg);
	}
	pump_fill(p);
}

static void pump_fill(pump *p)
{
	while (!p->b->failed && p->inflight < p->max_inflight && p->next < p->total) {
		size_t i = p->next++;
		pump_req r;
		if (p->build(p, i, &r) < 0) {
			fail(p->b, "%s: request %zu does not fit its buffer", p->what, i);
			return;
		}
		p->ops[i] = (pump_op){.p = p, .i = i};
		int e = kb_kube_request(p->c, r.method, r.path, r.has_body ? r.body : NULL, NULL,
					pump_done, &p->ops[i]);
		if (e < 0) {
			fail(p->b, "%s: %s %s: %s", p->what, r.method, r.what, strerror(-e));
			return;
		}
		if (i == 0)
			p->t_first = now_s();
		p->inflight++;
	}
}

static bool pump_finished(bench *b, void *ctx)
{
	pump *p = ctx;
	return p->ok == p->total;
}

/* Runs every request of p (p->total of them, p->max_inflight at a time)
 * and waits for the answers. Returns 0, or -1 with the run failed (a
 * refused request, or not done in --timeout). Requests still in flight on
 * failure are cancelled (no callback). Cost: O(total). */
static int pump_run(pump *p)
{
	bench *b = p->b;
	if (p->total == 0)
		return 0;
	p->ops = calloc(p->total, sizeof(*p->ops));
	if (!p->ops) {
		fail(b, "%s: out of memory", p->what);
		return -1;
	}
	p->next = p->inflight = p->ok = 0;
	if (p->max_inflight == 0)
		p->max_inflight = 1;
	pump_fill(p);
	bool done = run_until(b, pump_finished, p, b->o->timeout_s);
	if (!done && !b->failed)
		fail(b, "%s: %zu of %zu requests not answered after %.0f s", p->what,
		     p->total - p->ok, p->total, b->o->timeout_s);
	if (p->inflight > 0)
		for (size_t i = 0; i < p->next; i++)
			kb_kube_cancel(p->c, &p->ops[i]);
	free(p->ops);
	p->ops = NULL;
	return done ? 0 : -1;
}

/* ---- objects ------------------------------------------------------------------------ */

#define FIT(n, cap) ((n) >= 0 && (size_t)(n) < (cap) ? 0 : -ENOSPC)

static void node_name(const bench *b, size_t i, char *buf, size_t n)
{
	snprintf(buf, n, "e2e-%s-n%05zu", b->run, i);
}

static int build_node(pump *p, size_t i, pump_req *r)
{
	bench *b = p->b;
	char name[64];
	node_name(b, i, name, sizeof(name));
	r->method = "POST";
	r->has_body = true;
	snprintf(r->path, sizeof(r->path), "/api/v1/nodes");
	snprintf(r->what, sizeof(r->what), "Node \"%s\"", name);
	const char *res = "{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}";
	int n = snprintf(r->body, sizeof(r->body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
			 "\"labels\":{\"kubernetes.io/hostname\":\"%s\",\"" LABEL_NODE "\":\"%s\"}},"
			 "\"status\":{\"capacity\":%s,\"allocatable\":%s,\"conditions\":[{\"type\":"
			 "\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":"
			 "\"bench-e2e\",\"lastHeartbeatTime\":\"2024-01-01T00:00:00Z\","
			 "\"lastTransitionTime\":\"2024-01-01T00:00:00Z\"}]}}",
			 name, name, b->run, res, res);
	return FIT(n, sizeof(r->body));
}

/* The index of the gang of pod i in phase ph (binary search). */
static size_t gang_of(const phase *ph, size_t i)
{
	size_t lo = 0, hi = ph->ngangs;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ph->gang_first[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Pod i of phase k: phase 1's has no group and nobody's schedulerName;
 * the others --scheduler-name and their gang as --group-kind says. */
static int pod_body(const bench *b, int k, size_t i, char *buf, size_t cap)
{
	const phase *ph = &b->ph[k];
	char group[96] = "", spec_group[96] = "";
	if (!is_raw(k) && b->o->group_kind == GROUP_KUBE_BATCH)
		snprintf(group, sizeof(group),
			 ",\"annotations\":{\"scheduling.k8s.io/group-name\":\"g%zu\"}",
			 gang_of(ph, i));
	else if (!is_raw(k) && b->o->group_kind == GROUP_K8S)
		snprintf(spec_group, sizeof(spec_group), "\"schedulingGroup\":{\"podGroupName\":\"g%zu\"},",
			 gang_of(ph, i));
	int n = snprintf(buf, cap,
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%zu\","
			 "\"namespace\":\"%s\",\"labels\":{\"%s\":\"%s\"}%s},\"spec\":{%s"
			 "\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":0,"
			 "\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\","
			 "\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}}",
			 i, ph->ns, is_raw(k) ? LABEL_RAW : LABEL_WATCHED, b->run, group, spec_group,
			 is_raw(k) ? NOBODY : b->o->scheduler_name);
	return FIT(n, cap);
}

/* The PodGroups' collection path in namespace ns (--group-kind kube-batch
 * or k8s). */
static void podgroups_path(const bench *b, const char *ns, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/namespaces/%.63s/podgroups",
		 b->o->group_kind == GROUP_K8S ? K8S_PG_API : PG_API, ns);
}

static int podgroup_body(const bench *b, int k, size_t g, char *buf, size_t cap)
{
	const phase *ph = &b->ph[k];
	size_t members = ph->gang_first[g + 1] - ph->gang_first[g];
	int n;
	if (b->o->group_kind == GROUP_K8S)
		n = snprintf(buf, cap,
			     "{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
			     "\"metadata\":{\"name\":\"g%zu\",\"namespace\":\"%s\"},\"spec\":{"
			     "\"schedulingPolicy\":{\"gang\":{\"minCount\":%zu}}}}",
			     g, ph->ns, members);
	else
		n = snprintf(buf, cap,
			     "{\"apiVersion\":\"scheduling.incubator.k8s.io/v1alpha1\",\"kind\":"
			     "\"PodGroup\",\"metadata\":{\"name\":\"g%zu\",\"namespace\":\"%s\"},"
			     "\"spec\":{\"minMember\":%zu}}",
			     g, ph->ns, members);
	return FIT(n, cap);
}

/* Pump contexts: which phase. */
typedef struct phase_pump {
	int k;
	size_t offset; /* raw binds: the first pod of this level */
} phase_pump;

static int build_pod_create(pump *p, size_t i, pump_req *r)
{
	phase_pump *pp = p->ctx;
	phase *ph = &p->b->ph[pp->k];
	r->method = "POST";
	r->has_body = true;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%s/pods", ph->ns);
	snprintf(r->what, sizeof(r->what), "Pod \"%s/p%zu\"", ph->ns, i);
	return pod_body(p->b, pp->k, i, r->body, sizeof(r->body));
}

static int build_podgroup_create(pump *p, size_t g, pump_req *r)
{
	phase_pump *pp = p->ctx;
	phase *ph = &p->b->ph[pp->k];
	r->method = "POST";
	r->has_body = true;
	podgroups_path(p->b, ph->ns, r->path, sizeof(r->path));
	snprintf(r->what, sizeof(r->what), "PodGroup \"%s/g%zu\"", ph->ns, g);
	return podgroup_body(p->b, pp->k, g, r->body, sizeof(r->body));
}

static int build_binding(pump *p, size_t j, pump_req *r)
{
	phase_pump *pp = p->ctx;
	bench *b = p->b;
	phase *ph = &b->ph[pp->k];
	size_t i = pp->offset + j;
	char node[64];
	node_name(b, i % (size_t)b->o->nodes, node, sizeof(node));
	r->method = "POST";
	r->has_body = true;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%s/pods/p%zu/binding", ph->ns, i);
	snprintf(r->what, sizeof(r->what), "Binding of Pod \"%s/p%zu\" to Node \"%s\"", ph->ns, i,
		 node);
	int n = snprintf(r->body, sizeof(r->body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
			 "\"p%zu\",\"namespace\":\"%s\"},\"target\":{\"apiVersion\":\"v1\","
			 "\"kind\":\"Node\",\"name\":\"%s\"}}",
			 i, ph->ns, node);
	return FIT(n, sizeof(r->body));
}

static int build_pod_delete(pump *p, size_t i, pump_req *r)
{
	phase_pump *pp = p->ctx;
	phase *ph = &p->b->ph[pp->k];
	r->method = "DELETE";
	r->has_body = false;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%s/pods/p%zu?gracePeriodSeconds=0",
		 ph->ns, i);
	snprintf(r->what, sizeof(r->what), "Pod \"%s/p%zu\"", ph->ns, i);
	return 0;
}

/* ---- phases' pods and gangs ----------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Sizes phase k for npods pods; gangs (not for phase 1) of gang_min..gang_max
 * members from the seeded generator, the last one taking what is left.
 * Returns 0 or -ENOMEM. */
static int phase_init(bench *b, int k, size_t npods, uint64_t *rng)
{
	phase *ph = &b->ph[k];
	snprintf(ph->ns, sizeof(ph->ns), "e2e-%s-%s", PHASE_TAG[k], b->run);
	ph->npods = npods;
	size_t cap = npods + 2;
	ph->gang_first = calloc(cap, sizeof(*ph->gang_first));
	ph->t_create = calloc(npods + 1, sizeof(double));
	ph->t_pg = calloc(cap, sizeof(double));
	ph->t_bound = calloc(npods + 1, sizeof(double));
	ph->seen = calloc(npods + 1, 1);
	ph->node_h = calloc(npods + 1, sizeof(uint32_t));
	if (!ph->gang_first || !ph->t_create || !ph->t_pg || !ph->t_bound || !ph->seen ||
	    !ph->node_h)
		return -ENOMEM;
	size_t g = 0, i = 0;
	int span = b->o->gang_max - b->o->gang_min + 1;
	while (i < npods && !is_raw(k)) {
		size_t size = (size_t)b->o->gang_min + (size_t)(splitmix64(rng) % (uint64_t)span);
		ph->gang_first[g++] = i;
		i += size < npods - i ? size : npods - i;
	}
	ph->ngangs = g;
	ph->gang_first[g] = npods;
	return 0;
}

static void phase_release(phase *ph)
{
	free(ph->gang_first);
	free(ph->t_create);
	free(ph->t_pg);
	free(ph->t_bound);
	free(ph->seen);
	free(ph->node_h);
	memset(ph, 0, sizeof(*ph));
}

/* ---- the watch on the pods of phases 2 and 3 ---------------------------------------------- */

static int watch_start(bench *b);

/* The phase whose namespace is ns, or -1. */
static int phase_of_ns(const bench *b, const char *ns)
{
	for (int k = 0; k < NPHASES; k++)
		if (ns && strcmp(b->ph[k].ns, ns) == 0)
			return k;
	return -1;
}

/* Notes an event about pod "p<i>" of phase k at time t. */
static void watch_pod(bench *b, int k, const char *type, const char *name, const char *node,
		      double t)
{
	phase *ph = &b->ph[k];
	char *end;
	if (!name || name[0] != 'p')
		return;
	unsigned long long i = strtoull(name + 1, &end, 10);
	if (*end || i >= ph->npods)
		return;
	if (strcmp(type, "DELETED") == 0)
		return;
	if (!(ph->seen[i] & SEEN_ADDED)) {
		ph->seen[i] |= SEEN_ADDED;
		ph->nadded++;
	}
	if (!node || !node[0])
		return;
	uint32_t h = 2166136261u; /* FNV-1a, never 0 for a node name here (| 1) */
	for (const char *c = node; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	h |= 1;
	if (ph->t_bound[i] == 0) {
		ph->t_bound[i] = t;
		ph->node_h[i] = h;
		ph->nbound++;
	} else if (ph->node_h[i] != h) {
		/* Kubernetes forbids it (spec.nodeName is immutable once set): a
		 * sanity check that the API's own record shows no pod placed twice. */
		ph->node_h[i] = h;
		ph->nmoved++;
	}
}

/* One watch event of the scheduler's pods, parsed with the project's JSON
 * loader (as the daemon reads its own watch) rather than jansson, which
 * cost the driver 70-98 us of CPU per binding in the burst on 2 cores
 * shared with the API server. The raw phases' observer only counts lines
 * (raw_watch_line), as it always has. (kube-apiserver logs closing that
 * observer "due to unresponsiveness" after it is cancelled, when the raw
 * pods' deletions fill its buffer: with or without a parse.) */
typedef struct watch_event {
	kb_yaml_file f;
	const char *type, *rv, *ns, *name, *node, *message;
} watch_event;

/* Returns 0 (release ev->f after) or -1 with err set. */
static int watch_event_parse(const char *line, size_t len, watch_event *ev, kb_err *err)
{
	memset(ev, 0, sizeof(*ev));
	if (kb_json_load_buffer(line, len, "watch event", &ev->f, err) < 0)
		return -1;
	const kb_yaml_node *root = ev->f.ndocs == 1 ? ev->f.docs[0] : NULL;
	const kb_yaml_node *obj = kb_yaml_get(root, "object");
	const kb_yaml_node *meta = kb_yaml_get(obj, "metadata");
	ev->type = kb_yaml_str(kb_yaml_get(root, "type"));
	ev->rv = kb_yaml_str(kb_yaml_get(meta, "resourceVersion"));
	ev->ns = kb_yaml_str(kb_yaml_get(meta, "namespace"));
	ev->name = kb_yaml_str(kb_yaml_get(meta, "name"));
	const kb_yaml_node *node = kb_yaml_get(kb_yaml_get(obj, "spec"), "nodeName");
	ev->node = kb_yaml_is_null(node) ? NULL : kb_yaml_str(node);
	ev->message = kb_yaml_str(kb_yaml_get(obj, "message"));
	return 0;
}

static void watch_line(void *ctx, const char *line, size_t len)
{
	bench *b = ctx;
	double t = now_s();
	watch_event ev;
	kb_err err = {0};
	if (watch_event_parse(line, len, &ev, &err) < 0) {
		fail(b, "watch on pods: bad event: %s", err.msg);
		return;
	}
	b->watch_events++;
	if (ev.type && strcmp(ev.type, "ERROR") == 0) {
		fail(b, "watch on pods: ERROR event: %s", ev.message ? ev.message : "(no message)");
	} else if (ev.type) {
		if (ev.rv)
			snprintf(b->rv, sizeof(b->rv), "%s", ev.rv);
		if (strcmp(ev.type, "BOOKMARK") != 0) {
			int k = phase_of_ns(b, ev.ns);
			if (k >= 0)
				watch_pod(b, k, ev.type, ev.name, ev.node, t);
		}
	}
	kb_yaml_file_release(&ev.f);
}

static void watch_done(void *ctx, int status, const char *body, size_t len)
{
	bench *b = ctx;
	b->watch = NULL;
	if (status == 200 && !b->failed) { /* the server ended it: resume */
		b->watch_restarts++;
		if (watch_start(b) < 0)
			fail(b, "watch on pods: cannot restart it");
		return;
	}
	char msg[400];
	status_message(body, len, msg, sizeof(msg));
	fail(b, "watch on pods (label %s=%s) ended: HTTP %d: %s", LABEL_WATCHED, b->run, status,
	     msg);
}

static int watch_start(bench *b)
{
	char path[512];
	snprintf(path, sizeof(path),
		 "/api/v1/pods?watch=1&allowWatchBookmarks=true&labelSelector=" LABEL_WATCHED
		 "%%3D%s&resourceVersion=%s",
		 b->run, b->rv);
	return kb_kube_stream_start(b->watcher, path, watch_line, watch_done, b, &b->watch);
}

/* LISTs the (no) pods with the label for a resourceVersion, then watches from
 * there. Returns 0 or -1 with the run failed. */
static int watch_open(bench *b)
{
	char path[256];
	reply r;
	snprintf(path, sizeof(path), "/api/v1/pods?limit=1&labelSelector=" LABEL_WATCHED "%%3D%s",
		 b->run);
	if (must(b, b->admin, "GET", path, NULL, 200, "pods (list, for a resourceVersion)", &r) < 0)
		return -1;
	json_t *j = json_loadb(r.body, r.len, 0, NULL);
	const char *rv = json_string_value(
		json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
	if (rv)
		snprintf(b->rv, sizeof(b->rv), "%s", rv);
	json_decref(j);
	free(r.body);
	if (!rv) {
		fail(b, "GET %s: no metadata.resourceVersion in the answer", path);
		return -1;
	}
	if (watch_start(b) < 0) {
		fail(b, "watch on pods: cannot start it");
		return -1;
	}
	return 0;
}

static void watch_close(bench *b)
{
	if (b->watch)
		kb_kube_stream_cancel(b->watcher, b->watch);
	b->watch = NULL;
}

typedef struct count_wait {
	int k;
	bool bound; /* wait for bound (else for added) */
} count_wait;

static bool counts_reached(bench *b, void *ctx)
{
	count_wait *w = ctx;
	phase *ph = &b->ph[w->k];
	return (w->bound ? ph->nbound : ph->nadded) >= ph->npods;
}

/* Waits until the watch saw every pod of phase k added (or bound). Returns
 * 0 or -1 with the run failed, saying how many are missing. */
static int wait_pods(bench *b, int k, bool bound, double seconds)
{
	count_wait w = {.k = k, .bound = bound};
	if (run_until(b, counts_reached, &w, seconds))
		return 0;
	phase *ph = &b->ph[k];
	fail(b, "%s: %zu of %zu pods in namespace \"%s\" not %s after %.0f s", PHASE_TAG[k],
	     ph->npods - (bound ? ph->nbound : ph->nadded), ph->npods, ph->ns,
	     bound ? "bound (no spec.nodeName seen on the watch)" : "seen on the watch", seconds);
	return -1;
}

/* ---- the daemon ------------------------------------------------------------------------- */

static int sched_spawn(bench *b, const char *path, const char *const *argv);

/* A free TCP port on 127.0.0.1 (the kernel's pick), or -1. */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int port = -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* The scheduler phase 2 runs, for messages: kube-batchd or --peer-name. */
static const char *sched_label(const bench *b)
{
	return b->o->peer ? b->o->peer_name : "kube-batchd";
}

static void daemon_exit_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	bench *b = w->data;
	ev_child_stop(loop, w);
	b->daemon_exited = true;
	b->daemon_status = w->rstatus;
	if (!b->daemon_stopping)
		fail(b, "%s (pid %d) exited during the run (%s %d); its log: %s", sched_label(b),
		     (int)b->daemon_pid, WIFSIGNALED(w->rstatus) ? "signal" : "status",
		     WIFSIGNALED(w->rstatus) ? WTERMSIG(w->rstatus) : WEXITSTATUS(w->rstatus),
		     b->daemon_log);
}

/* Starts kube-batchd with the scheduler's kubeconfig, its output to
 * OUT/daemon.log; or, with --peer, that binary with its --peer-arg
 * arguments as given, its output to OUT/scheduler.log. Returns 0 or -1
 * with the run failed. */
static int daemon_start(bench *b)
{
	const e2e_opts *o = b->o;
	char listen[64], period[32], qps[32], burst[32], v[16];
	const char *argv[MAX_PEER_ARGS + 20] = {0};
	const char *path = o->peer ? o->peer : o->daemon;
	if (o->peer) {
		argv[0] = o->peer;
		for (int i = 0; i < o->npeer_args; i++)
			argv[i + 1] = o->peer_args[i];
		argv[o->npeer_args + 1] = NULL;
		return sched_spawn(b, path, argv);
	}
	b->port = free_port();
	if (b->port < 0) {
		fail(b, "no free TCP port on 127.0.0.1 for the daemon: %s", strerror(errno));
		return -1;
	}
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", b->port);
	snprintf(period, sizeof(period), "%dms", o->period_ms);
	/* --daemon-qps 0 (the default): the daemon's own defaults, no flag. */
	snprintf(qps, sizeof(qps), "%g", o->daemon_qps);
	snprintf(burst, sizeof(burst), "%d", o->daemon_burst);
	snprintf(v, sizeof(v), "%d", o->daemon_v);
	const char *fixed[] = {o->daemon, "--kubeconfig", o->sched_kubeconfig, "--listen-address",
			       listen, "--schedule-period", period, "-v", v};
	int n = 9;
	memcpy(argv, fixed, sizeof(fixed));
	if (o->daemon_qps > 0) {
		argv[n++] = "--kube-api-qps";
		argv[n++] = qps;
		argv[n++] = "--kube-api-burst";
		argv[n++] = burst;
	}
	if (o->daemon_conf) {
		argv[n++] = "--scheduler-conf";
		argv[n++] = o->daemon_conf;
	}
	argv[n] = NULL;
	if (sched_spawn(b, path, argv) < 0)
		return -1;
	kb_info("started kube-batchd (pid %d): %s --kubeconfig %s --listen-address %s "
		"--schedule-period %s%s%s%s%s -v %s%s%s; log %s",
		(int)b->daemon_pid, o->daemon, o->sched_kubeconfig, listen, period,
		o->daemon_qps > 0 ? " --kube-api-qps " : " (default client limits)",
		o->daemon_qps > 0 ? qps : "", o->daemon_qps > 0 ? " --kube-api-burst " : "",
		o->daemon_qps > 0 ? burst : "", v,
		o->daemon_conf ? " --scheduler-conf " : "", o->daemon_conf ? o->daemon_conf : "",
		b->daemon_log);
	return 0;
}

/* Forks and execs path with argv (NULL-terminated), its output to
 * b->daemon_log, and watches it (daemon_exit_cb). Returns 0 or -1 with the
 * run failed. */
static int sched_spawn(bench *b, const char *path, const char *const *argv)
{
	int fd = open(b->daemon_log,
		      O_WRONLY | O_CREAT | O_CLOEXEC | (b->daemon_lives ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0) {
		fail(b, "daemon log \"%s\": %s", b->daemon_log, strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	b->t_daemon_start = now_s();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd);
		fail(b, "fork for \"%s\": %s", path, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(path, (char *const *)argv);
		dprintf(STDERR_FILENO, "bench-e2e: exec \"%s\": %s\n", path, strerror(errno));
		_exit(127);
	}
	close(fd);
	b->daemon_pid = pid;
	b->daemon_lives++;
	b->daemon_exited = b->daemon_stopping = false;
	ev_child_init(&b->daemon_child, daemon_exit_cb, pid, 0);
	b->daemon_child.data = b;
	ev_child_start(b->loop, &b->daemon_child);
	if (b->o->peer) {
		char cmd[2048];
		size_t used = 0;
		for (int i = 0; argv[i] && used < sizeof(cmd); i++) {
			int w = snprintf(cmd + used, sizeof(cmd) - used, "%s%s", i ? " " : "", argv[i]);
			used += w > 0 ? (size_t)w : 0;
		}
		kb_info("started %s (pid %d): %s; log %s", b->o->peer_name, (int)pid, cmd,
			b->daemon_log);
	}
	return 0;
}

static bool daemon_gone(bench *b, void *ctx)
{
	return b->daemon_exited;
}

/* Stops the daemon: SIGTERM, then SIGKILL after DAEMON_STOP_S. Safe to call
 * when it was never started or has exited. Returns its exit status word. */
static int daemon_stop(bench *b)
{
	if (b->daemon_pid <= 0)
		return 0;
	b->daemon_stopping = true;
	if (!b->daemon_exited) {
		kill(b->daemon_pid, SIGTERM);
		if (!loop_until(b, daemon_gone, NULL, DAEMON_STOP_S, false)) {
			kb_warn("%s (pid %d) did not stop in %.0f s; killing it", sched_label(b),
				(int)b->daemon_pid, DAEMON_STOP_S);
			kill(b->daemon_pid, SIGKILL);
			if (!loop_until(b, daemon_gone, NULL, 5.0, false)) {
				ev_child_stop(b->loop, &b->daemon_child);
				waitpid(b->daemon_pid, &b->daemon_status, 0);
			}
		}
	}
	b->daemon_pid = 0;
	return b->daemon_status;
}

/* The client for the daemon's own HTTP port (/metrics, /healthz), made on
 * first use; daemon_stop_between frees it. Returns 0 or -1 with the run
 * failed. */
static int daemon_http_client(bench *b)
{
	if (b->metrics_client)
		return 0;
	char server[64];
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", b->port);
	kb_kube_config cfg = {.server = server};
	kb_err err = {0};
	b->metrics_client = kb_kube_client_new(b->loop, &cfg, NULL, &err);
	if (!b->metrics_client) {
		fail(b, "client for the daemon's %s: %s", server, err.msg);
		return -1;
	}
	return 0;
}

/* Reads the daemon's /metrics. Returns 0 or -1 with the run failed. */
static int daemon_metrics_read(bench *b, daemon_metrics *ret)
{
	if (daemon_http_client(b) < 0)
		return -1;
	reply r;
	char what[96];
	snprintf(what, sizeof(what), "kube-batchd's http://127.0.0.1:%d/metrics", b->port);
	if (must(b, b->metrics_client, "GET", "/metrics", NULL, 200, what, &r) < 0)
		return -1;
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
		{"kube_batchd_api_requests_total", offsetof(daemon_metrics, api_requests)},
		{"kube_batchd_api_retries_total", offsetof(daemon_metrics, api_retries)},
		{"kube_batchd_binds_total", offsetof(daemon_metrics, binds)},
		{"kube_batchd_bind_failures_total", offsetof(daemon_metrics, bind_failures)},
		{"kube_batchd_status_writes_total", offsetof(daemon_metrics, status_writes)},
		{"kube_batchd_events_total", offsetof(daemon_metrics, events)},
		{"kube_batchd_sessions_total", offsetof(daemon_metrics, sessions)},
		{"kube_batchd_session_duration_seconds_sum",
		 offsetof(daemon_metrics, session_seconds)},
		{"kube_batchd_api_requests_pending", offsetof(daemon_metrics, pending)},
	};
	daemon_metrics m;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		*(double *)((char *)&m + want[i].off) = NAN;
	char *save = NULL;
	for (char *line = strtok_r(r.body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];
		double v;
		if (line[0] == '#' || sscanf(line, "%127s %lf", name, &v) != 2)
			continue;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strcmp(name, want[i].name) == 0)
				*(double *)((char *)&m + want[i].off) = v;
	}
	free(r.body);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (isnan(*(double *)((char *)&m + want[i].off))) {
			fail(b, "%s has no %s", what, want[i].name);
			return -1;
		}
	*ret = m;
	return 0;
}

/* Whether the exit status word st of a scheduler told to stop (SIGTERM) is
 * a clean stop: kube-batchd exits 0; a peer is only required to exit by
 * itself, its status is logged (kube-scheduler without leader election
 * returns "finished without leader elect" and exits 1 whenever it stops). */
static bool stop_clean(const bench *b, int st)
{
	if (!b->o->peer)
		return WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (WIFEXITED(st))
		kb_info("%s exited with status %d on SIGTERM", b->o->peer_name, WEXITSTATUS(st));
	return WIFEXITED(st);
}

/* Stops the daemon between phases (before raw2, which must not be watched
 * by it): a stop that is not clean fails the run. Its /metrics client goes
 * with it (the next life listens on another port). Returns 0 or -1. */
static int daemon_stop_between(bench *b)
{
	int st = daemon_stop(b);
	kb_kube_client_free(b->metrics_client);
	b->metrics_client = NULL;
	if (!stop_clean(b, st)) {
		fail(b, "%s did not stop cleanly on SIGTERM (status word %d); its log: %s",
		     sched_label(b), st, b->daemon_log);
		return -1;
	}
	kb_info("stopped %s for the next phase", sched_label(b));
	return 0;
}

/* Waits until the daemon's /healthz answers 200 (its cache has synced).
 * Returns 0 or -1 with the run failed. */
static int daemon_wait_ready(bench *b)
{
	if (daemon_http_client(b) < 0)
		return -1;
	double t0 = now_s();
	while (!b->failed && now_s() - t0 < b->o->timeout_s) {
		reply r = {0};
		int st = call(b, b->metrics_client, "GET", "/healthz", NULL, NULL, &r);
		free(r.body);
		if (st == 200) {
			kb_info("kube-batchd ready (synced) %.0f ms after it started",
				(now_s() - b->t_daemon_start) * 1000.0);
			return 0;
		}
		pause_s(b, 0.05);
	}
	if (!b->failed)
		fail(b, "kube-batchd's http://127.0.0.1:%d/healthz did not answer 200 within %.0f s; "
		     "its log: %s", b->port, b->o->timeout_s, b->daemon_log);
	return -1;
}

/* Waits SETTLE_PERIODS periods, then until the daemon has nothing left to
 * send (kube_batchd_api_requests_pending 0: the Events a burst queues
 * behind its bindings are counted too), and reads its /metrics into *m.
 * Returns 0 or -1 with the run failed. */
static int daemon_settle(bench *b, const char *tag, daemon_metrics *m)
{
	pause_s(b, SETTLE_PERIODS * b->o->period_ms / 1000.0);
	double t0 = now_s();
	for (;;) {
		if (b->failed || daemon_metrics_read(b, m) < 0)
			return -1;
		if (m->pending == 0)
			break;
		if (now_s() - t0 > b->o->timeout_s) {
			fail(b, "%s: kube-batchd still had %.0f requests to send %.0f s after the last "
				"bind; its log: %s", tag, m->pending, now_s() - t0, b->daemon_log);
			return -1;
		}
		pause_s(b, 0.25);
	}
	kb_info("%s: the daemon's requests all answered %.1f s after the settle periods", tag,
		now_s() - t0);
	return 0;
}

/* ---- statistics and files ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, size_t n, double p)
{
	if (n == 0)
		return NAN;
	size_t r = (size_t)ceil(p / 100.0 * (double)n);
	return v[r ? r - 1 : 0];
}

static double loadavg1(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "re");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

/* Opens OUT/name for writing. Returns NULL with the run failed. */
static FILE *out_open(bench *b, const char *name, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", b->o->out, name);
	FILE *f = fopen(path, "we");
	if (!f)
		fail(b, "cannot write \"%s\": %s", path, strerror(errno));
	return f;
}

static int out_close(bench *b, FILE *f, const char *path)
{
	if (ferror(f) | fclose(f)) {
		fail(b, "writing \"%s\" failed", path);
		return -1;
	}
	return 0;
}

/* Counts of the times t[0..n) (sorted) in 1 s windows from t0; writes them
 * as "t_s binds" to OUT/name. *ret_counts (owned by the caller) and
 * *ret_nwin get the windows. Returns 0 or -1 with the run failed. */
static int windows_write(bench *b, const char *name, const double *t, size_t n, double t0,
			 double **ret_counts, size_t *ret_nwin)
{
	size_t nwin = n ? (size_t)floor(t[n - 1] - t0) + 1 : 0;
	double *c = calloc(nwin + 1, sizeof(double));
	if (!c) {
		fail(b, "%s: out of memory", name);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t w = t[i] > t0 ? (size_t)floor(t[i] - t0) : 0;
		c[w < nwin ? w : nwin - 1]++;
	}
	char path[4096];
	FILE *f = out_open(b, name, path, sizeof(path));
	if (!f) {
		free(c);
		return -1;
	}
	fprintf(f, "# t_s binds (1 s windows from the first %s)\n",
		strstr(name, "raw") ? "bind request" : "bind");
	for (size_t w = 0; w < nwin; w++)
		fprintf(f, "%zu %.0f\n", w, c[w]);
	if (out_close(b, f, path) < 0) {
		free(c);
		return -1;
	}
	*ret_counts = c;
	*ret_nwin = nwin;
	return 0;
}

/* Writes sorted samples (ms) as the CDF "ms fraction" to OUT/name. */
static int cdf_write(bench *b, const char *name, const double *v, size_t n)
{
	char path[4096];
	FILE *f = out_open(b, name, path, sizeof(path));
	if (!f)
		return -1;
	fprintf(f, "# ms fraction (%zu samples, sorted)\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.3f %.6f\n", v[i], (double)(i + 1) / (double)n);
	return out_close(b, f, path);
}

/* ---- setup -------------------------------------------------------------------------- */

static int make_namespaces(bench *b)
{
	for (int k = 0; k < NPHASES; k++) {
		char body[256], what[128];
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
			 b->ph[k].ns);
		snprintf(what, sizeof(what), "Namespace \"%s\"", b->ph[k].ns);
		if (must(b, b->admin, "POST", "/api/v1/namespaces", body, 201, what, NULL) < 0)
			return -1;
	}
	return 0;
}

static int make_nodes(bench *b)
{
	pump p = {.b = b, .c = b->admin, .what = "creating nodes", .total = (size_t)b->o->nodes,
		  .max_inflight = (size_t)b->o->create_inflight, .want1 = 201,
		  .build = build_node};
	double t0 = now_s();
	if (pump_run(&p) < 0)
		return -1;
	kb_info("setup: %d nodes created in %.2f s", b->o->nodes, now_s() - t0);
	return 0;
}

/* Creates the pods of phase k (PodGroups first when it has gangs) with the
 * admin's client. Returns 0 or -1 with the run failed. */
static int create_pods(bench *b, int k, double *ret_pods_per_sec)
{
	phase *ph = &b->ph[k];
	phase_pump pp = {.k = k};
	size_t ngroups = b->o->group_kind == GROUP_NONE ? 0 : ph->ngangs;
	pump pg = {.b = b, .c = b->admin, .what = "creating PodGroups", .total = ngroups,
		   .max_inflight = (size_t)b->o->create_inflight, .want1 = 201,
		   .build = build_podgroup_create, .ctx = &pp};
	pump pods = {.b = b, .c = b->admin, .what = "creating pods", .total = ph->npods,
		     .max_inflight = (size_t)b->o->create_inflight, .want1 = 201,
		     .build = build_pod_create, .ctx = &pp};
	if (pump_run(&pg) < 0 || pump_run(&pods) < 0)
		return -1;
	*ret_pods_per_sec = (double)ph->npods / (pods.t_last - pods.t_first);
	kb_info("%s: %zu pods%s created in namespace \"%s\" (%.0f pods/s)", PHASE_TAG[k],
		ph->npods, ngroups ? " and their PodGroups" : "", ph->ns, *ret_pods_per_sec);
	return 0;
}

/* ---- cold start: pods already bound, the LISTs paged by a plain client ------------------- */

/* Pod i of the bound set (--bound-pods): on node i mod nodes already, so it
 * holds its requests there; schedulerName kube-batchd, no group (a job of
 * one each), as pods left running by an earlier life of the scheduler. */
static int build_bound_pod(pump *p, size_t i, pump_req *r)
{
	bench *b = p->b;
	char node[64];
	node_name(b, i % (size_t)b->o->nodes, node, sizeof(node));
	r->method = "POST";
	r->has_body = true;
	snprintf(r->path, sizeof(r->path), "/api/v1/namespaces/%.63s/pods", b->bound_ns);
	snprintf(r->what, sizeof(r->what), "Pod \"%.63s/b%zu\"", b->bound_ns, i);
	int n = snprintf(r->body, sizeof(r->body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b%zu\","
			 "\"namespace\":\"%.63s\",\"labels\":{\"" LABEL_BOUND "\":\"%s\"}},\"spec\":{"
			 "\"schedulerName\":\"kube-batchd\",\"nodeName\":\"%s\","
			 "\"terminationGracePeriodSeconds\":0,"
			 "\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\","
			 "\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}}",
			 i, b->bound_ns, b->run, node);
	return FIT(n, sizeof(r->body));
}

/* Creates the --bound-pods pods. Returns 0 or -1 with the run failed. */
static int make_bound_pods(bench *b)
{
	const e2e_opts *o = b->o;
	if (o->bound_pods == 0)
		return 0;
	char body[256], what[128];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%.63s\"}}",
		 b->bound_ns);
	snprintf(what, sizeof(what), "Namespace \"%.63s\"", b->bound_ns);
	if (must(b, b->admin, "POST", "/api/v1/namespaces", body, 201, what, NULL) < 0)
		return -1;
	pump p = {.b = b, .c = b->admin, .what = "creating bound pods", .total = o->bound_pods,
		  .max_inflight = (size_t)o->create_inflight, .want1 = 201,
		  .build = build_bound_pod};
	double t0 = now_s();
	if (pump_run(&p) < 0)
		return -1;
	double s = now_s() - t0;
	res_int(b, "bound_pods", (long long)o->bound_pods);
	res_num(b, "bound_pods_create_s", s);
	kb_info("setup: %zu pods created already bound in %.1f s (%.0f pods/s)", o->bound_pods, s,
		(double)o->bound_pods / s);
	return 0;
}

/* The continue token near the start of a list body, copied into buf; false
 * when there is none (the last page). The list's metadata comes first in
 * kube-apiserver's JSON, so 4 KiB is plenty. */
static bool continue_of(const char *body, size_t len, char *buf, size_t cap)
{
	size_t n = len < 4096 ? len : 4096;
	const char *p = memmem(body, n, "\"continue\":\"", 12);
	if (!p)
		return false;
	p += 12;
	size_t i = 0;
	while (p < body + len && *p != '"' && i + 1 < cap)
		buf[i++] = *p++;
	buf[i] = '\0';
	return i > 0;
}

/* Pages path (limit 500, as the daemon's reflectors) with a plain client
 * (the scheduler's user, bodies received and not parsed). Returns 0 or -1;
 * *ret_s the wall time, *ret_pages and *ret_bytes what came. */
static int page_list(bench *b, const char *path, double *ret_s, long long *ret_pages,
		     long long *ret_bytes)
{
	char url[4096], cont[2048] = "", what[600];
	long long pages = 0, bytes = 0;
	double t0 = now_s();
	for (;;) {
		char *esc = cont[0] ? kb_url_escape(cont) : NULL;
		int n = snprintf(url, sizeof(url), "%s%slimit=500%s%s", path,
				 strchr(path, '?') ? "&" : "?", esc ? "&continue=" : "", esc ? esc : "");
		free(esc);
		if (n < 0 || (size_t)n >= sizeof(url)) {
			fail(b, "list: the URL of %s does not fit", path);
			return -1;
		}
		snprintf(what, sizeof(what), "LIST %.500s page %lld", path, pages + 1);
		reply r;
		if (must(b, b->binder, "GET", url, NULL, 200, what, &r) < 0)
			return -1;
		pages++;
		bytes += (long long)r.len;
		bool more = continue_of(r.body, r.len, cont, sizeof(cont));
		free(r.body);
		if (!more)
			break;
	}
	*ret_s = now_s() - t0;
	*ret_pages = pages;
	*ret_bytes = bytes;
	return 0;
}

/* The API server's own time for the LISTs the daemon makes at start (nodes,
 * pods with its field selector, PodGroups), paged by a plain client: the
 * limit for the daemon's "cache synced". Results list_*. */
static int list_timing(bench *b)
{
	static const struct {
		const char *key, *path;
	} lists[] = {
		{"nodes", "/api/v1/nodes"},
		{"pods", "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"},
		{"podgroups", PG_API "/podgroups"},
	};
	double total = 0;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		double s;
		long long pages, bytes;
		if (page_list(b, lists[i].path, &s, &pages, &bytes) < 0)
			return -1;
		char key[96];
		snprintf(key, sizeof(key), "list_%s_ms", lists[i].key);
		res_num(b, key, s * 1000.0);
		snprintf(key, sizeof(key), "list_%s_pages", lists[i].key);
		res_int(b, key, pages);
		snprintf(key, sizeof(key), "list_%s_mb", lists[i].key);
		res_num(b, key, (double)bytes / 1e6);
		total += s;
		kb_info("list: %s paged in %.0f ms (%lld pages, %.1f MB) by a plain client", lists[i].key,
			s * 1000.0, pages, (double)bytes / 1e6);
	}
	res_num(b, "list_total_ms", total * 1000.0);
	return 0;
}

/* The daemon's /healthz polled every HEALTH_POLL_S from its start; the first
 * 200 (its cache synced) is kept in b->t_synced. */
#define HEALTH_POLL_S 0.02

static void health_arm(bench *b);

static void health_done(void *ctx, int status, const char *body, size_t len)
{
	bench *b = ctx;
	b->health_inflight = false;
	if (status == 200 && b->t_synced == 0)
		b->t_synced = now_s();
	else if (b->t_synced == 0)
		health_arm(b);
}

static void health_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	bench *b = w->data;
	if (b->t_synced > 0 || b->health_inflight || b->daemon_pid <= 0 || b->daemon_exited)
		return;
	if (kb_kube_request(b->metrics_client, "GET", "/healthz", NULL, NULL, health_done, b) == 0)
		b->health_inflight = true;
	else
		health_arm(b);
}

static void health_arm(bench *b)
{
	ev_timer_stop(b->loop, &b->health);
	ev_timer_set(&b->health, HEALTH_POLL_S, 0.);
	ev_timer_start(b->loop, &b->health);
}

/* Starts polling the daemon's /healthz (after daemon_start). 0 or -1. */
static int health_watch(bench *b)
{
	if (daemon_http_client(b) < 0)
		return -1;
	b->t_synced = 0;
	b->health_inflight = false;
	ev_init(&b->health, health_cb);
	b->health.data = b;
	health_arm(b);
	return 0;
}

/* The daemon's peak resident set (VmHWM) in MB, or NAN. */
static double daemon_peak_rss_mb(const bench *b)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)b->daemon_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NAN;
	double mb = NAN;
	while (fgets(line, sizeof(line), f)) {
		long kb;
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			mb = (double)kb / 1024.0;
	}
	(void)fclose(f);
	return mb;
}

/* ---- phase 1: raw binding capacity ---------------------------------------------------- */

/* Keeps the answer time of each bind (in t_bound: the raw phase is not watched). */
static void raw_bind_ok(pump *p, size_t j, double t)
{
	phase_pump *pp = p->ctx;
	p->b->ph[pp->k].t_bound[pp->offset + j] = t;
}

static void raw_watch_line(void *ctx, const char *line, size_t len)
{
	((bench *)ctx)->raw_watch_events++;
}

static void raw_watch_done(void *ctx, int status, const char *body, size_t len)
{
	((bench *)ctx)->raw_watch = NULL; /* the count says what it saw */
}

/* While phase 1 binds, the driver watches its pods as it watches the
 * scheduler's in phases 2 and 3, so the server sends the same observer one
 * event per binding in both and the ratio compares like with like. From a
 * fresh resourceVersion: no ADDED flood for the pods already there. */
static int raw_watch_open(bench *b)
{
	char path[512];
	reply r;
	snprintf(path, sizeof(path), "/api/v1/pods?limit=1&labelSelector=" LABEL_RAW "%%3D%s", b->run);
	if (must(b, b->admin, "GET", path, NULL, 200, "raw pods (list, for a resourceVersion)", &r) < 0)
		return -1;
	json_t *j = json_loadb(r.body, r.len, 0, NULL);
	const char *rv = json_string_value(
		json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
	int n = rv ? snprintf(path, sizeof(path),
			      "/api/v1/pods?watch=1&labelSelector=" LABEL_RAW "%%3D%s&resourceVersion=%s",
			      b->run, rv)
		   : -1;
	json_decref(j);
	free(r.body);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    kb_kube_stream_start(b->watcher, path, raw_watch_line, raw_watch_done, b, &b->raw_watch) < 0) {
		fail(b, "raw: cannot watch the raw pods");
		return -1;
	}
	return 0;
}

/* Result key `prefix`_`name` into key. */
static const char *pkey(char *key, size_t cap, const char *prefix, const char *name)
{
	snprintf(key, cap, "%s_%s", prefix, name);
	return key;
}

/* Phase 1 (k = PH_RAW, keys raw_*) or the same again after the scheduler's
 * burst (k = PH_RAW2, keys raw_after_*; then raw_binds_per_sec becomes the
 * mean of the two, the first is kept as raw_before_binds_per_sec, and
 * sched_vs_raw is taken against the mean). */
static int phase_raw(bench *b, int k)
{
	const e2e_opts *o = b->o;
	phase *ph = &b->ph[k];
	const char *tag = PHASE_TAG[k], *prefix = k == PH_RAW ? "raw" : "raw_after";
	char key[96], csv[64];
	double create_rate;
	if (create_pods(b, k, &create_rate) < 0)
		return -1;
	if (k == PH_RAW)
		res_num(b, "pod_creates_per_sec", create_rate);
	b->raw_watch_events = 0;
	if (raw_watch_open(b) < 0)
		return -1;

	/* Bind, level by level. */
	json_t *levels = json_object();
	double best = 0, t_first = 0;
	int best_level = 0;
	size_t done = 0;
	for (int l = 0; l < o->nlevels; l++) {
		size_t n = ph->npods / (size_t)o->nlevels + (l < (int)(ph->npods % (size_t)o->nlevels));
		phase_pump pp = {.k = k, .offset = done};
		pump p = {.b = b, .c = b->binder, .what = "binding pods (raw)", .total = n,
			  .max_inflight = (size_t)o->raw_inflight[l], .want1 = 201,
			  .build = build_binding, .on_ok = raw_bind_ok, .ctx = &pp};
		if (pump_run(&p) < 0) {
			json_decref(levels);
			return -1;
		}
		if (l == 0)
			t_first = p.t_first;
		double rate = (double)n / (p.t_last - p.t_first);
		char level[16];
		snprintf(level, sizeof(level), "%d", o->raw_inflight[l]);
		json_object_set_new(levels, level, json_real(rate));
		kb_info("%s: %zu binds with %d in flight in %.2f s: %.0f binds/s (load %.2f)", tag, n,
			o->raw_inflight[l], p.t_last - p.t_first, rate, loadavg1());
		if (rate > best) {
			best = rate;
			best_level = o->raw_inflight[l];
		}
		done += n;
	}
	json_object_set_new(b->res, pkey(key, sizeof(key), prefix, "binds_per_sec_by_inflight"),
			    levels);
	if (b->raw_watch)
		kb_kube_stream_cancel(b->watcher, b->raw_watch);
	b->raw_watch = NULL;
	res_int(b, pkey(key, sizeof(key), prefix, "watch_events"), (long long)b->raw_watch_events);
	res_num(b, pkey(key, sizeof(key), prefix, "binds_per_sec"), best);
	res_int(b, pkey(key, sizeof(key), prefix, "inflight"), best_level);
	res_num(b, pkey(key, sizeof(key), prefix, "loadavg"), loadavg1());
	if (k == PH_RAW2) {
		/* The server slows as a run goes on (its watch cache keeps every
		 * recent version of the pods churned), so the burst is compared
		 * with the mean of the raw phases on either side of it. */
		double before = json_real_value(json_object_get(b->res, "raw_binds_per_sec"));
		double mean = before > 0 ? (before + best) / 2 : best;
		res_num(b, "raw_before_binds_per_sec", before > 0 ? before : NAN);
		res_num(b, "raw_binds_per_sec", mean);
		double sched = json_real_value(json_object_get(b->res, "sched_binds_per_sec"));
		if (sched > 0)
			res_num(b, "sched_vs_raw", sched / mean);
		kb_info("raw2: the raw capacity around the burst: %.0f before, %.0f after, mean %.0f%s",
			before, best, mean, sched > 0 ? "" : " (no scheduler phase)");
		if (sched > 0)
			kb_info("raw2: scheduler / raw = %.0f / %.0f = %.2f", sched, mean, sched / mean);
	}

	/* Per-second answers over the whole raw binding (every level). */
	double *t = malloc((ph->npods + 1) * sizeof(double)), *counts = NULL;
	size_t nwin;
	if (!t) {
		fail(b, "%s: out of memory", tag);
		return -1;
	}
	memcpy(t, ph->t_bound, ph->npods * sizeof(double));
	qsort(t, ph->npods, sizeof(double), cmp_double);
	snprintf(csv, sizeof(csv), "%s_per_sec.csv", prefix);
	int r = windows_write(b, csv, t, ph->npods, t_first, &counts, &nwin);
	free(t);
	free(counts);
	if (r < 0)
		return -1;

	phase_pump pp = {.k = k};
	pump del = {.b = b, .c = b->admin, .what = "deleting the raw phase's pods",
		    .total = ph->npods, .max_inflight = (size_t)o->create_inflight, .want1 = 200,
		    .want2 = 202, .build = build_pod_delete, .ctx = &pp};
	double t0 = now_s();
	if (pump_run(&del) < 0)
		return -1;
	kb_info("%s: %zu pods deleted in %.2f s", tag, ph->npods, now_s() - t0);
	return 0;
}

/* ---- phase 2: the scheduler's burst ----------------------------------------------------- */

/* Sorted bind times of phase k (bound pods only); *ret owned by the caller. */
static size_t bound_times(bench *b, int k, double **ret)
{
	phase *ph = &b->ph[k];
	double *t = malloc((ph->npods + 1) * sizeof(double));
	size_t n = 0;
	if (!t)
		return 0;
	for (size_t i = 0; i < ph->npods; i++)
		if (ph->t_bound[i] > 0)
			t[n++] = ph->t_bound[i];
	qsort(t, n, sizeof(double), cmp_double);
	*ret = t;
	return n;
}

/* The daemon's counters into the results, keys prefixed; per pod = per bind. */
static void metrics_put(bench *b, const char *prefix, const daemon_metrics *m)
{
	char key[96];
	struct {
		const char *name;
		double v;
	} f[] = {{"api_requests", m->api_requests}, {"api_retries", m->api_retries}, {"binds", m->binds},
		 {"bind_failures", m->bind_failures}, {"status_writes", m->status_writes},
		 {"events", m->events},                {"sessions", m->sessions}};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(key, sizeof(key), "%s%s_total", prefix, f[i].name);
		res_num(b, key, f[i].v);
	}
	snprintf(key, sizeof(key), "%sapi_requests_per_pod", prefix);
	res_num(b, key, m->binds > 0 ? m->api_requests / m->binds : NAN);
	snprintf(key, sizeof(key), "%sstatus_writes_per_pod", prefix);
	res_num(b, key, m->binds > 0 ? m->status_writes / m->binds : NAN);
	snprintf(key, sizeof(key), "%sevents_per_pod", prefix);
	res_num(b, key, m->binds > 0 ? m->events / m->binds : NAN);
	snprintf(key, sizeof(key), "%ssession_ms_mean", prefix);
	res_num(b, key, m->sessions > 0 ? m->session_seconds / m->sessions * 1000.0 : NAN);
}

/* How long each gang of phase k stayed partly bound: last member bound -
 * first member bound, ms; p50, p99 and max into the results as
 * <prefix>_gang_spread_{p50,p99,max}_ms. (A failed bind of one member is
 * retried by a later session while the others are already bound.) */
static void gang_spread_put(bench *b, int k, const char *prefix)
{
	phase *ph = &b->ph[k];
	double *v = malloc((ph->ngangs + 1) * sizeof(double));
	if (!v)
		return;
	for (size_t g = 0; g < ph->ngangs; g++) {
		double lo = INFINITY, hi = 0;
		for (size_t i = ph->gang_first[g]; i < ph->gang_first[g + 1]; i++) {
			lo = ph->t_bound[i] < lo ? ph->t_bound[i] : lo;
			hi = ph->t_bound[i] > hi ? ph->t_bound[i] : hi;
		}
		v[g] = (hi - lo) * 1000.0;
	}
	qsort(v, ph->ngangs, sizeof(double), cmp_double);
	char key[96];
	snprintf(key, sizeof(key), "%s_gang_spread_p50_ms", prefix);
	res_num(b, key, pct(v, ph->ngangs, 50));
	snprintf(key, sizeof(key), "%s_gang_spread_p99_ms", prefix);
	res_num(b, key, pct(v, ph->ngangs, 99));
	snprintf(key, sizeof(key), "%s_gang_spread_max_ms", prefix);
	res_num(b, key, ph->ngangs ? v[ph->ngangs - 1] : NAN);
	free(v);
}

static int phase_sched(bench *b)
{
	const e2e_opts *o = b->o;
	phase *ph = &b->ph[PH_SCHED];
	double create_rate;
	if (create_pods(b, PH_SCHED, &create_rate) < 0 ||
	    wait_pods(b, PH_SCHED, false, o->timeout_s) < 0)
		return -1;
	kb_info("sched: all %zu pods (%zu gangs of %d-%d, group kind %s) seen on the watch; "
		"starting %s", ph->npods, ph->ngangs, o->gang_min, o->gang_max,
		GROUP_KIND[o->group_kind], sched_label(b));
	if (o->bound_pods > 0 && list_timing(b) < 0)
		return -1;
	/* A peer has no kube-batchd /healthz to poll (and no /metrics below). */
	if (daemon_start(b) < 0 || (!o->peer && health_watch(b) < 0) ||
	    wait_pods(b, PH_SCHED, true, o->timeout_s) < 0)
		return -1;
	double rss = daemon_peak_rss_mb(b);
	if (!o->peer)
		ev_timer_stop(b->loop, &b->health);
	if (b->t_synced > 0)
		res_num(b, "sched_synced_ms", (b->t_synced - b->t_daemon_start) * 1000.0);
	res_num(b, "sched_daemon_peak_rss_mb", rss);
	if (o->peer)
		kb_info("sched: %s's peak RSS %.1f MB when the last pod was bound", o->peer_name, rss);
	else
		kb_info("sched: the daemon's cache synced %.0f ms after it started; its peak RSS %.1f MB "
			"when the last pod was bound",
			b->t_synced > 0 ? (b->t_synced - b->t_daemon_start) * 1000.0 : NAN, rss);

	double *t = NULL, *counts = NULL;
	size_t n = bound_times(b, PH_SCHED, &t), nwin = 0;
	if (!t) {
		fail(b, "sched: out of memory");
		return -1;
	}
	double span = t[n - 1] - t[0];
	int r = windows_write(b, "sched_per_sec.csv", t, n, t[0], &counts, &nwin);
	double first_bind_ms = (t[0] - b->t_daemon_start) * 1000.0;
	double all_bound_ms = (t[n - 1] - b->t_daemon_start) * 1000.0;
	free(t);
	if (r < 0)
		return -1;
	/* Full windows only, unless there is just the one. */
	size_t full = nwin > 1 ? nwin - 1 : nwin;
	if (nwin == 1 && span > 0)
		counts[0] = (double)n / span;
	qsort(counts, full, sizeof(double), cmp_double);
	double avg = span > 0 ? (double)n / span : (double)n;
	res_num(b, "sched_binds_per_sec", avg);
	res_num(b, "sched_binds_p50_per_sec", pct(counts, full, 50));
	res_num(b, "sched_binds_p99_per_sec", pct(counts, full, 99));
	res_num(b, "sched_binds_min_per_sec", full ? counts[0] : NAN);
	res_int(b, "sched_windows", (long long)full);
	res_num(b, "sched_span_ms", span * 1000.0);
	res_num(b, "sched_first_bind_ms", first_bind_ms);
	res_num(b, "sched_all_bound_ms", all_bound_ms);
	res_num(b, "sched_loadavg", loadavg1());
	kb_info("sched: %zu pods bound in %.2f s from the first bind (%.0f ms after %s "
		"started; all bound %.0f ms after): %.0f binds/s, windows p50 %.0f p99 %.0f (load %.2f)",
		n, span, first_bind_ms, sched_label(b), all_bound_ms, avg, pct(counts, full, 50),
		pct(counts, full, 99), loadavg1());
	free(counts);
	gang_spread_put(b, PH_SCHED, "sched");
	double raw = json_real_value(json_object_get(b->res, "raw_binds_per_sec"));
	res_num(b, "sched_vs_raw", raw > 0 ? avg / raw : NAN);
	if (o->peer)
		return 0;

	daemon_metrics m;
	if (daemon_settle(b, "sched", &m) < 0)
		return -1;
	metrics_put(b, "sched_", &m);
	b->earlier = m;
	b->earlier_life = b->daemon_lives;
	kb_info("sched: daemon metrics: %.0f API requests, %.0f binds, %.0f status writes, "
		"%.0f events, %.0f sessions",
		m.api_requests, m.binds, m.status_writes, m.events, m.sessions);
	return 0;
}

/* ---- phase 3: latency with the daemon running -------------------------------------------- */

typedef struct lat_state lat_state;

/* The context of one request of phase 3: gang or pod i. */
typedef struct lat_op {
	lat_state *ls;
	size_t i;
} lat_op;

struct lat_state {
	bench *b;
	size_t next_gang, pg_done, pods_sent;
	ev_timer pacer;
	lat_op *pg_ops;  /* one per gang (ctx of the PodGroup create) */
	lat_op *pod_ops; /* one per pod */
};

static void lat_pod_done(void *ctx, int status, const char *body, size_t len)
{
	lat_op *op = ctx;
	bench *b = op->ls->b;
	if (status != 201) {
		char msg[400];
		status_message(body, len, msg, sizeof(msg));
		fail(b, "lat: POST Pod \"%s/p%zu\": HTTP %d: %s", b->ph[PH_LAT].ns, op->i, status,
		     msg);
	}
}

static void lat_pg_done(void *ctx, int status, const char *body, size_t len)
{
	lat_op *op = ctx;
	lat_state *ls = op->ls;
	bench *b = ls->b;
	phase *ph = &b->ph[PH_LAT];
	size_t g = op->i;
	if (status != 201) {
		char msg[400];
		status_message(body, len, msg, sizeof(msg));
		fail(b, "lat: POST PodGroup \"%s/g%zu\": HTTP %d: %s", ph->ns, g, status, msg);
		return;
	}
	ls->pg_done++;
	for (size_t i = ph->gang_first[g]; i < ph->gang_first[g + 1]; i++) {
		char body_buf[2048], path[512];
		if (pod_body(b, PH_LAT, i, body_buf, sizeof(body_buf)) < 0) {
			fail(b, "lat: Pod \"%s/p%zu\" does not fit its buffer", ph->ns, i);
			return;
		}
		snprintf(path, sizeof(path), "/api/v1/namespaces/%.63s/pods", ph->ns);
		ls->pod_ops[i] = (lat_op){.ls = ls, .i = i};
		ph->t_create[i] = now_s();
		int e = kb_kube_request(b->admin, "POST", path, body_buf, NULL, lat_pod_done,
					&ls->pod_ops[i]);
		if (e < 0) {
			fail(b, "lat: POST Pod \"%s/p%zu\": %s", ph->ns, i, strerror(-e));
			return;
		}
		ls->pods_sent++;
	}
}

static void lat_pace(struct ev_loop *loop, ev_timer *w, int revents)
{
	lat_state *ls = w->data;
	bench *b = ls->b;
	phase *ph = &b->ph[PH_LAT];
	if (b->failed || ls->next_gang >= ph->ngangs) {
		ev_timer_stop(loop, w);
		return;
	}
	size_t g = ls->next_gang++;
	char body[1024], path[512];
	if (podgroup_body(b, PH_LAT, g, body, sizeof(body)) < 0) {
		fail(b, "lat: PodGroup g%zu does not fit its buffer", g);
		return;
	}
	podgroups_path(b, ph->ns, path, sizeof(path));
	ls->pg_ops[g] = (lat_op){.ls = ls, .i = g};
	ph->t_pg[g] = now_s();
	int e = kb_kube_request(b->admin, "POST", path, body, NULL, lat_pg_done, &ls->pg_ops[g]);
	if (e < 0)
		fail(b, "lat: POST PodGroup \"%s/g%zu\": %s", ph->ns, g, strerror(-e));
}

static bool lat_all_sent(bench *b, void *ctx)
{
	lat_state *ls = ctx;
	return ls->pods_sent == b->ph[PH_LAT].npods;
}

/* Latency samples: per pod create->bound and per gang complete, sorted, in
 * ms, written as CDFs; percentiles into the results. */
/* DIR/lat_gangs.csv: one row per gang of phase 3, in creation order, times
 * in ms from the first PodGroup create: "gang members pg_create
 * first_pod_create last_pod_create first_bound last_bound". For finding
 * what a slow gang waited on (compare with the daemon's log at -v 2). */
static int lat_gangs_write(bench *b)
{
	phase *ph = &b->ph[PH_LAT];
	char path[4096];
	snprintf(path, sizeof(path), "%s/lat_gangs.csv", b->o->out);
	FILE *f = fopen(path, "w");
	if (!f) {
		fail(b, "cannot write \"%s\": %s", path, strerror(errno));
		return -1;
	}
	double t0 = ph->ngangs ? ph->t_pg[0] : 0;
	fprintf(f, "# gang members pg_create first_pod_create last_pod_create first_bound last_bound (ms)\n");
	for (size_t g = 0; g < ph->ngangs; g++) {
		double c0 = INFINITY, c1 = 0, b0 = INFINITY, b1 = 0;
		for (size_t i = ph->gang_first[g]; i < ph->gang_first[g + 1]; i++) {
			c0 = fmin(c0, ph->t_create[i]);
			c1 = fmax(c1, ph->t_create[i]);
			b0 = fmin(b0, ph->t_bound[i]);
			b1 = fmax(b1, ph->t_bound[i]);
		}
		fprintf(f, "%zu %zu %.1f %.1f %.1f %.1f %.1f\n", g, ph->gang_first[g + 1] - ph->gang_first[g],
			(ph->t_pg[g] - t0) * 1e3, (c0 - t0) * 1e3, (c1 - t0) * 1e3, (b0 - t0) * 1e3,
			(b1 - t0) * 1e3);
	}
	if (fclose(f) != 0) {
		fail(b, "cannot write \"%s\"", path);
		return -1;
	}
	return 0;
}

static int lat_results(bench *b)
{
	phase *ph = &b->ph[PH_LAT];
	double *pod = malloc((ph->npods + 1) * sizeof(double));
	double *gang = malloc((ph->ngangs + 1) * sizeof(double));
	if (!pod || !gang) {
		free(pod);
		free(gang);
		fail(b, "lat: out of memory");
		return -1;
	}
	for (size_t i = 0; i < ph->npods; i++)
		pod[i] = (ph->t_bound[i] - ph->t_create[i]) * 1000.0;
	for (size_t g = 0; g < ph->ngangs; g++) {
		double last = 0;
		for (size_t i = ph->gang_first[g]; i < ph->gang_first[g + 1]; i++)
			last = ph->t_bound[i] > last ? ph->t_bound[i] : last;
		gang[g] = (last - ph->t_pg[g]) * 1000.0;
	}
	qsort(pod, ph->npods, sizeof(double), cmp_double);
	qsort(gang, ph->ngangs, sizeof(double), cmp_double);
	res_num(b, "create_to_bound_p50_ms", pct(pod, ph->npods, 50));
	res_num(b, "create_to_bound_p99_ms", pct(pod, ph->npods, 99));
	res_num(b, "create_to_bound_max_ms", pod[ph->npods - 1]);
	res_num(b, "gang_complete_p50_ms", pct(gang, ph->ngangs, 50));
	res_num(b, "gang_complete_p99_ms", pct(gang, ph->ngangs, 99));
	res_num(b, "gang_complete_max_ms", gang[ph->ngangs - 1]);
	kb_info("lat: create->bound p50 %.0f ms p99 %.0f ms; gang complete p50 %.0f ms p99 %.0f "
		"ms (%zu pods, %zu gangs; load %.2f)",
		pct(pod, ph->npods, 50), pct(pod, ph->npods, 99), pct(gang, ph->ngangs, 50),
		pct(gang, ph->ngangs, 99), ph->npods, ph->ngangs, loadavg1());
	int r = cdf_write(b, "create_to_bound.csv", pod, ph->npods);
	if (r == 0)
		r = cdf_write(b, "gang_complete.csv", gang, ph->ngangs);
	if (r == 0)
		r = lat_gangs_write(b);
	free(pod);
	free(gang);
	return r;
}

static int phase_lat(bench *b)
{
	const e2e_opts *o = b->o;
	phase *ph = &b->ph[PH_LAT];
	lat_state ls = {.b = b};
	ls.pg_ops = calloc(ph->ngangs + 1, sizeof(lat_op));
	ls.pod_ops = calloc(ph->npods + 1, sizeof(lat_op));
	int r = -1;
	if (!ls.pg_ops || !ls.pod_ops) {
		fail(b, "lat: out of memory");
		goto out;
	}
	double interval = o->gang_interval_ms / 1000.0, t0 = now_s();
	ev_now_update(b->loop);
	ev_timer_init(&ls.pacer, lat_pace, 0., interval);
	ls.pacer.data = &ls;
	ev_timer_start(b->loop, &ls.pacer);
	double budget = o->timeout_s + (double)ph->ngangs * interval;
	if (!run_until(b, lat_all_sent, &ls, budget)) {
		if (!b->failed)
			fail(b, "lat: only %zu of %zu pods created after %.0f s", ls.pods_sent,
			     ph->npods, budget);
		goto out;
	}
	kb_info("lat: %zu gangs, %zu pods created at one gang every %.0f ms in %.2f s",
		ph->ngangs, ph->npods, o->gang_interval_ms, now_s() - t0);
	if (wait_pods(b, PH_LAT, true, o->timeout_s) < 0 || lat_results(b) < 0)
		goto out;
	gang_spread_put(b, PH_LAT, "lat");
	res_num(b, "lat_loadavg", loadavg1());
	daemon_metrics m;
	if (daemon_settle(b, "lat", &m) < 0)
		goto out;
	if (b->earlier_life > 0 && b->earlier_life != b->daemon_lives) {
		/* Restarted after raw2: the daemon's figures over phases 2 and 3
		 * are both lives' together. */
		m.api_requests += b->earlier.api_requests;
		m.api_retries += b->earlier.api_retries;
		m.binds += b->earlier.binds;
		m.bind_failures += b->earlier.bind_failures;
		m.status_writes += b->earlier.status_writes;
		m.events += b->earlier.events;
		m.sessions += b->earlier.sessions;
		m.session_seconds += b->earlier.session_seconds;
	}
	metrics_put(b, "", &m);
	kb_info("end: daemon metrics: %.0f API requests, %.0f binds (%.2f requests per pod), "
		"%.0f status writes, %.0f events, %.0f sessions",
		m.api_requests, m.binds, m.binds > 0 ? m.api_requests / m.binds : NAN,
		m.status_writes, m.events, m.sessions);
	r = 0;
out:
	ev_timer_stop(b->loop, &ls.pacer);
	/* Requests of this phase still in flight must not call back into ls
	 * (its pods' creates may still be answering when they are bound). */
	for (size_t g = 0; ls.pg_ops && g < ph->ngangs; g++)
		kb_kube_cancel(b->admin, &ls.pg_ops[g]);
	for (size_t i = 0; ls.pod_ops && i < ph->npods; i++)
		kb_kube_cancel(b->admin, &ls.pod_ops[i]);
	free(ls.pg_ops);
	free(ls.pod_ops);
	return r;
}

/* ---- cleanup -------------------------------------------------------------------------- */

/* Deletes what the run made (best effort, logged): pods (grace 0) and
 * PodGroups of every phase, and the nodes. Namespaces stay (no namespace
 * controller would finish deleting them). */
/* ---- failover: two daemons with leader election, the leader killed mid-burst ------------ */

/* One of the two kube-batchd of the failover phase: its process, port and
 * log (OUT/daemon-<i>.log), and the client for its /livez and /metrics. */
typedef struct fo_daemon {
	bench *b;
	int idx;
	pid_t pid;
	int port;
	char log[4096];
	ev_child child;
	bool exited, killed, stopping;
	int status;
	kb_kube_client *http;
	double t_synced; /* first /metrics with kube_batchd_cache_synced 1; 0 = not yet */
} fo_daemon;

/* The failover phase's state: the kill (an ev_check after every loop
 * iteration, so the leader dies as soon as the watch shows the fraction
 * bound) and the takeover poll (the standby's /metrics every
 * FO_POLL_S; t_lo: the send time of its last "kube_batchd_leader 0"
 * answer, t_hi: the receipt of its first "1"). */
#define FO_POLL_S 0.02
typedef struct failover {
	bench *b;
	fo_daemon d[2];
	int leader; /* index of the first leader */
	size_t kill_at;
	ev_check kill_check;
	double t_kill;
	size_t bound_at_kill;
	ev_timer poll;
	bool poll_inflight, done; /* done: the phase is over, no poll re-armed */
	double t_sent, t_lo, t_hi;
} failover;

/* The value of the unlabelled sample `name` in a /metrics body, or NAN. */
static double metric_get(const char *body, size_t len, const char *name)
{
	size_t nl = strlen(name);
	const char *p = body, *end = body + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > nl + 1 && memcmp(p, name, nl) == 0 && p[nl] == ' ') {
			char num[64];
			size_t n = (size_t)(eol - p) - nl - 1;
			n = n < sizeof(num) - 1 ? n : sizeof(num) - 1;
			memcpy(num, p + nl + 1, n);
			num[n] = '\0';
			return strtod(num, NULL);
		}
		p = eol + 1;
	}
	return NAN;
}

static void fo_exit_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	fo_daemon *d = w->data;
	ev_child_stop(loop, w);
	d->exited = true;
	d->status = w->rstatus;
	if (!d->killed && !d->stopping)
		fail(d->b, "failover: kube-batchd #%d (pid %d) exited during the run (%s %d); its "
			   "log: %s", d->idx, (int)d->pid, WIFSIGNALED(w->rstatus) ? "signal" : "status",
		     WIFSIGNALED(w->rstatus) ? WTERMSIG(w->rstatus) : WEXITSTATUS(w->rstatus), d->log);
}

/* Starts daemon d with --leader-elect and the phase's lease flags. Returns
 * 0 or -1 with the run failed. */
static int fo_start(bench *b, fo_daemon *d)
{
	const e2e_opts *o = b->o;
	char listen[64], period[32], v[16], lease[32], renew[32], retry[32], server[64];
	d->port = free_port();
	if (d->port < 0) {
		fail(b, "no free TCP port on 127.0.0.1 for kube-batchd #%d: %s", d->idx,
		     strerror(errno));
		return -1;
	}
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", d->port);
	snprintf(period, sizeof(period), "%dms", o->period_ms);
	snprintf(v, sizeof(v), "%d", o->daemon_v);
	snprintf(lease, sizeof(lease), "%gs", o->lease_s);
	snprintf(renew, sizeof(renew), "%gs", o->renew_s);
	snprintf(retry, sizeof(retry), "%gs", o->retry_s);
	const char *argv[32] = {o->daemon, "--kubeconfig", o->sched_kubeconfig,
				"--listen-address", listen, "--schedule-period", period, "-v", v,
				"--leader-elect", "--leader-elect-lease-duration", lease,
				"--leader-elect-renew-deadline", renew, "--leader-elect-retry-period",
				retry, "--leader-elect-resource-namespace", o->lease_ns,
				"--leader-elect-resource-name", o->lease_name};
	int n = 20;
	if (o->daemon_conf) {
		argv[n++] = "--scheduler-conf";
		argv[n++] = o->daemon_conf;
	}
	argv[n] = NULL;
	snprintf(d->log, sizeof(d->log), "%s/daemon-%d.log", o->out, d->idx);
	int fd = open(d->log, O_WRONLY | O_CREAT | O_CLOEXEC | O_TRUNC, 0644);
	if (fd < 0) {
		fail(b, "daemon log \"%s\": %s", d->log, strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd);
		fail(b, "fork for \"%s\": %s", o->daemon, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(o->daemon, (char *const *)argv);
		dprintf(STDERR_FILENO, "bench-e2e: exec \"%s\": %s\n", o->daemon, strerror(errno));
		_exit(127);
	}
	close(fd);
	d->b = b;
	d->pid = pid;
	ev_child_init(&d->child, fo_exit_cb, pid, 0);
	d->child.data = d;
	ev_child_start(b->loop, &d->child);
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", d->port);
	kb_kube_config cfg = {.server = server};
	kb_err err = {0};
	d->http = kb_kube_client_new(b->loop, &cfg, NULL, &err);
	if (!d->http) {
		fail(b, "client for kube-batchd #%d's %s: %s", d->idx, server, err.msg);
		return -1;
	}
	kb_info("failover: started kube-batchd #%d (pid %d) --listen-address %s --leader-elect "
		"--leader-elect-lease-duration %s --leader-elect-renew-deadline %s "
		"--leader-elect-retry-period %s --leader-elect-resource-namespace %s "
		"--leader-elect-resource-name %s; log %s",
		d->idx, (int)pid, listen, lease, renew, retry, o->lease_ns, o->lease_name, d->log);
	return 0;
}

static bool fo_gone(bench *b, void *ctx)
{
	return ((fo_daemon *)ctx)->exited;
}

/* Stops daemon d if it runs (SIGTERM, SIGKILL after DAEMON_STOP_S) and frees
 * its client, cancelling a poll in flight (ctx: the failover state). Returns
 * its exit status word (0 if it was never started). */
static int fo_stop(bench *b, fo_daemon *d, void *poll_ctx)
{
	if (d->http) {
		kb_kube_cancel(d->http, poll_ctx);
		kb_kube_client_free(d->http);
		d->http = NULL;
	}
	if (d->pid <= 0)
		return 0;
	d->stopping = true;
	if (!d->exited) {
		kill(d->pid, SIGTERM);
		if (!loop_until(b, fo_gone, d, DAEMON_STOP_S, false)) {
			kb_warn("failover: kube-batchd #%d (pid %d) did not stop in %.0f s; killing it",
				d->idx, (int)d->pid, DAEMON_STOP_S);
			kill(d->pid, SIGKILL);
			if (!loop_until(b, fo_gone, d, 5.0, false)) {
				ev_child_stop(b->loop, &d->child);
				waitpid(d->pid, &d->status, 0);
			}
		}
	}
	d->pid = 0;
	return d->status;
}

/* Reads daemon d's /livez and /metrics: *synced, *leader, *binds,
 * *bind_failures (NAN when the sample is missing). Returns the /metrics
 * HTTP status (200), or another status / negative errno (not failing the
 * run: the caller decides). */
static int fo_read(bench *b, fo_daemon *d, double *synced, double *leader, double *binds,
		   double *bind_failures)
{
	reply r = {0};
	int st = call(b, d->http, "GET", "/livez", NULL, NULL, NULL);
	if (st != 200)
		return st;
	st = call(b, d->http, "GET", "/metrics", NULL, NULL, &r);
	if (st == 200) {
		*synced = metric_get(r.body, r.len, "kube_batchd_cache_synced");
		*leader = metric_get(r.body, r.len, "kube_batchd_leader");
		*binds = metric_get(r.body, r.len, "kube_batchd_binds_total");
		*bind_failures = metric_get(r.body, r.len, "kube_batchd_bind_failures_total");
	}
	free(r.body);
	return st;
}

static void fo_poll_arm(failover *f);

/* The kill: once the watch shows kill_at pods bound, SIGKILL to the leader;
 * the standby's /metrics polled from then on (while the pods are still
 * being created, too: with a 4 s lease the takeover comes before the last
 * of 20,000 pods is created). */
static void fo_kill_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	failover *f = w->data;
	bench *b = f->b;
	if (b->ph[PH_FAIL].nbound < f->kill_at)
		return;
	fo_daemon *d = &f->d[f->leader];
	d->killed = true;
	kill(d->pid, SIGKILL);
	f->t_kill = now_s();
	f->bound_at_kill = b->ph[PH_FAIL].nbound;
	ev_check_stop(loop, w);
	f->t_lo = f->t_kill;
	fo_poll_arm(f);
	kb_info("failover: kill -9 of the leader, kube-batchd #%d (pid %d), with %zu of %zu pods "
		"seen bound", d->idx, (int)d->pid, f->bound_at_kill, b->ph[PH_FAIL].npods);
}

static void fo_poll_done(void *ctx, int status, const char *body, size_t len)
{
	failover *f = ctx;
	f->poll_inflight = false;
	if (f->done)
		return;
	double leader = status == 200 ? metric_get(body, len, "kube_batchd_leader") : NAN;
	if (leader == 1) {
		f->t_hi = now_s();
		kb_info("failover: kube-batchd #%d leads %.0f ms after the kill (its /metrics)",
			1 - f->leader, (f->t_hi - f->t_kill) * 1000.0);
		return;
	}
	if (leader == 0)
		f->t_lo = f->t_sent;
	else
		kb_warn("failover: the standby's /metrics: HTTP %d, no kube_batchd_leader", status);
	fo_poll_arm(f);
}

static void fo_poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	failover *f = w->data;
	fo_daemon *s = &f->d[1 - f->leader];
	if (f->t_hi > 0 || f->poll_inflight || !s->http)
		return;
	f->t_sent = now_s();
	if (kb_kube_request(s->http, "GET", "/metrics", NULL, NULL, fo_poll_done, f) == 0)
		f->poll_inflight = true;
	else
		fo_poll_arm(f);
}

static void fo_poll_arm(failover *f)
{
	ev_timer_stop(f->b->loop, &f->poll);
	ev_timer_set(&f->poll, FO_POLL_S, 0.);
	ev_timer_start(f->b->loop, &f->poll);
}

static bool fo_killed(bench *b, void *ctx)
{
	return ((failover *)ctx)->t_kill > 0;
}

static bool fo_took_over(bench *b, void *ctx)
{
	return ((failover *)ctx)->t_hi > 0;
}

/* Waits (every 50 ms) until both daemons answer /livez, both report
 * kube_batchd_cache_synced 1 and exactly one kube_batchd_leader 1; sets
 * f->leader. Returns 0 or -1 with the run failed. */
static int fo_wait_elected(bench *b, failover *f, double t_start)
{
	double deadline = t_start + b->o->timeout_s;
	while (!b->failed && now_s() < deadline) {
		double synced[2] = {0, 0}, leader[2] = {0, 0}, binds, bf;
		int up = 0;
		for (int i = 0; i < 2; i++) {
			int st = fo_read(b, &f->d[i], &synced[i], &leader[i], &binds, &bf);
			if (st == 200 && synced[i] == 1) {
				up++;
				if (f->d[i].t_synced == 0)
					f->d[i].t_synced = now_s();
			}
		}
		if (up == 2 && leader[0] + leader[1] == 1) {
			f->leader = leader[0] == 1 ? 0 : 1;
			return 0;
		}
		if (up == 2 && leader[0] + leader[1] > 1) {
			fail(b, "failover: both daemons report kube_batchd_leader 1; logs %s, %s",
			     f->d[0].log, f->d[1].log);
			return -1;
		}
		pause_s(b, 0.05);
	}
	if (!b->failed)
		fail(b, "failover: within %.0f s, not both daemons synced with one leading "
			"(synced at %.0f / %.0f ms); logs %s, %s",
		     b->o->timeout_s, f->d[0].t_synced ? (f->d[0].t_synced - t_start) * 1e3 : -1,
		     f->d[1].t_synced ? (f->d[1].t_synced - t_start) * 1e3 : -1, f->d[0].log,
		     f->d[1].log);
	return -1;
}

/* Reads the Lease: leaseTransitions into the results, holder logged. */
static void fo_lease_put(bench *b)
{
	char path[512];
	reply r = {0};
	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
		 b->o->lease_ns, b->o->lease_name);
	if (must(b, b->admin, "GET", path, NULL, 200, "the Lease", &r) < 0)
		return;
	json_t *j = json_loadb(r.body, r.len, 0, NULL);
	json_t *spec = json_object_get(j, "spec");
	json_t *tr = json_object_get(spec, "leaseTransitions");
	res_int(b, "failover_lease_transitions", json_is_integer(tr) ? json_integer_value(tr) : -1);
	kb_info("failover: Lease %s/%s: holder \"%s\", leaseTransitions %lld", b->o->lease_ns,
		b->o->lease_name,
		json_string_value(json_object_get(spec, "holderIdentity")) ?: "(none)",
		json_is_integer(tr) ? (long long)json_integer_value(tr) : -1LL);
	json_decref(j);
	free(r.body);
}

/* Gangs of phase k with some but not all members bound at time t (t = 0:
 * now, by the watch's record). */
static size_t gangs_partial(const bench *b, int k, double t)
{
	const phase *ph = &b->ph[k];
	size_t n = 0;
	for (size_t g = 0; g < ph->ngangs; g++) {
		size_t in = 0, size = ph->gang_first[g + 1] - ph->gang_first[g];
		for (size_t i = ph->gang_first[g]; i < ph->gang_first[g + 1]; i++)
			in += ph->t_bound[i] > 0 && (t == 0 || ph->t_bound[i] <= t);
		n += in > 0 && in < size;
	}
	return n;
}

static int phase_failover_run(bench *b, failover *f)
{
	const e2e_opts *o = b->o;
	phase *ph = &b->ph[PH_FAIL];
	double t_start = now_s();
	for (int i = 0; i < 2; i++) {
		f->d[i].idx = i;
		if (fo_start(b, &f->d[i]) < 0)
			return -1;
	}
	if (fo_wait_elected(b, f, t_start) < 0)
		return -1;
	double t_elected = now_s();
	res_num(b, "failover_synced_ms_0", (f->d[0].t_synced - t_start) * 1000.0);
	res_num(b, "failover_synced_ms_1", (f->d[1].t_synced - t_start) * 1000.0);
	res_num(b, "failover_elected_ms", (t_elected - t_start) * 1000.0);
	kb_info("failover: both daemons synced (#0 %.0f ms, #1 %.0f ms after start; /livez 200, "
		"kube_batchd_cache_synced 1); #%d leads, #%d is the standby",
		(f->d[0].t_synced - t_start) * 1000.0, (f->d[1].t_synced - t_start) * 1000.0,
		f->leader, 1 - f->leader);

	/* The burst: the pods created while the leader binds; the kill as soon
	 * as the watch shows kill_at of them bound. */
	f->kill_at = (size_t)ceil(o->kill_at * (double)ph->npods);
	if (f->kill_at < 1)
		f->kill_at = 1;
	ev_init(&f->poll, fo_poll_cb);
	f->poll.data = f;
	ev_check_init(&f->kill_check, fo_kill_cb);
	f->kill_check.data = f;
	ev_check_start(b->loop, &f->kill_check);
	double create_rate;
	if (create_pods(b, PH_FAIL, &create_rate) < 0)
		return -1;
	double t_created = now_s();
	if (!run_until(b, fo_killed, f, o->timeout_s)) {
		if (!b->failed)
			fail(b, "failover: %zu of %zu pods bound after %.0f s, the kill needs %zu",
			     ph->nbound, ph->npods, o->timeout_s, f->kill_at);
		return -1;
	}
	double wait_s = o->lease_s + o->retry_s * 2 + 30;
	if (!run_until(b, fo_took_over, f, wait_s)) {
		if (!b->failed)
			fail(b, "failover: the standby, kube-batchd #%d, did not lead within %.0f s of "
				"the kill; its log %s", 1 - f->leader, wait_s, f->d[1 - f->leader].log);
		return -1;
	}
	ev_timer_stop(b->loop, &f->poll);
	/* Pods bound after the kill but before the lease changed hands: the dead
	 * leader's bindings already sent. */
	size_t late = 0, partial_takeover = gangs_partial(b, PH_FAIL, f->t_lo);
	for (size_t i = 0; i < ph->npods; i++)
		late += ph->t_bound[i] > f->t_kill && ph->t_bound[i] <= f->t_lo;
	size_t bound_before = ph->nbound;
	kb_info("failover: at the takeover %zu of %zu pods bound (%zu of them after the kill), "
		"%zu gangs partly bound", bound_before, ph->npods, late, partial_takeover);

	/* The rest: bound by the new leader. A gang stuck partial shows here as
	 * pods never bound: counted, not failed (bench/run judges). */
	count_wait w = {.k = PH_FAIL, .bound = true};
	bool all = loop_until(b, counts_reached, &w, o->timeout_s, true);
	if (b->failed)
		return -1;
	double first_new = 0, last = 0;
	size_t by_new = 0;
	for (size_t i = 0; i < ph->npods; i++) {
		double t = ph->t_bound[i];
		if (t > f->t_lo) {
			by_new++;
			if (first_new == 0 || t < first_new)
				first_new = t;
		}
		last = t > last ? t : last;
	}
	size_t partial_end = gangs_partial(b, PH_FAIL, 0);
	fo_daemon *nl = &f->d[1 - f->leader];
	double synced, leader, binds = NAN, bind_failures = NAN;
	pause_s(b, SETTLE_PERIODS * o->period_ms / 1000.0);
	if (fo_read(b, nl, &synced, &leader, &binds, &bind_failures) != 200) {
		fail(b, "failover: the new leader's /livez or /metrics did not answer 200");
		return -1;
	}
	fo_lease_put(b);
	res_int(b, "failover_pods", (long long)ph->npods);
	res_int(b, "failover_gangs", (long long)ph->ngangs);
	res_num(b, "failover_create_pods_per_sec", create_rate);
	res_num(b, "failover_kill_at", o->kill_at);
	res_int(b, "failover_bound_at_kill", (long long)f->bound_at_kill);
	res_num(b, "failover_kill_after_create_ms", (f->t_kill - t_created) * 1000.0);
	res_int(b, "failover_bound_after_kill_by_old_leader", (long long)late);
	res_num(b, "failover_takeover_ms", (f->t_hi - f->t_kill) * 1000.0);
	res_num(b, "failover_takeover_resolution_ms", (f->t_hi - f->t_lo) * 1000.0);
	res_num(b, "failover_first_bind_after_lease_ms",
		first_new > 0 ? (first_new - f->t_lo) * 1000.0 : NAN);
	res_num(b, "failover_all_bound_after_kill_ms", all ? (last - f->t_kill) * 1000.0 : NAN);
	res_int(b, "failover_bound_by_new_leader", (long long)by_new);
	res_num(b, "failover_new_leader_binds_total", binds);
	res_num(b, "failover_new_leader_bind_failures_total", bind_failures);
	res_int(b, "failover_node_changes", (long long)ph->nmoved);
	res_int(b, "failover_unbound_at_end", (long long)(ph->npods - ph->nbound));
	res_int(b, "failover_gangs_partial_at_takeover", (long long)partial_takeover);
	res_int(b, "failover_gangs_partial_at_end", (long long)partial_end);
	res_num(b, "failover_lease_duration_s", o->lease_s);
	res_num(b, "failover_renew_deadline_s", o->renew_s);
	res_num(b, "failover_retry_period_s", o->retry_s);
	res_num(b, "failover_loadavg", loadavg1());
	gang_spread_put(b, PH_FAIL, "failover");
	kb_info("failover: takeover %.0f ms after the kill (poll resolution %.0f ms); the new "
		"leader's first bind %.0f ms after it took the lease (at most); %s %.0f ms after the "
		"kill; bound by the new leader %zu (its binds_total %.0f, bind failures %.0f); "
		"nodeName changes %zu; unbound %zu; gangs partial at takeover %zu, at the end %zu",
		(f->t_hi - f->t_kill) * 1000.0, (f->t_hi - f->t_lo) * 1000.0,
		first_new > 0 ? (first_new - f->t_lo) * 1000.0 : NAN,
		all ? "all bound" : "NOT all bound, last bind", (last - f->t_kill) * 1000.0, by_new,
		binds, bind_failures, ph->nmoved, ph->npods - ph->nbound, partial_takeover,
		partial_end);
	return 0;
}

/* The failover phase (issue 18 item 3): two kube-batchd with
 * --leader-elect (OUT/daemon-0.log, daemon-1.log), both synced and one
 * leading before the pods are created; the leader killed (SIGKILL) once
 * --kill-at of them are seen bound; the standby's takeover and the rest of
 * the burst measured on the driver's pod watch. Both stopped on every path;
 * the new leader must stop cleanly. Returns 0 or -1 with the run failed. */
static int phase_failover(bench *b)
{
	failover f = {.b = b};
	int r = phase_failover_run(b, &f);
	f.done = true;
	ev_check_stop(b->loop, &f.kill_check);
	ev_timer_stop(b->loop, &f.poll);
	for (int i = 0; i < 2; i++) {
		bool was_killed = f.d[i].killed;
		int st = fo_stop(b, &f.d[i], &f);
		if (r == 0 && !was_killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fail(b, "failover: kube-batchd #%d did not stop cleanly on SIGTERM (status word "
				"%d); its log %s", i, st, f.d[i].log);
			r = -1;
		}
	}
	return r;
}

static void cleanup_cluster(bench *b)
{
	const e2e_opts *o = b->o;
	char path[512];
	for (int k = 0; k < NPHASES; k++) {
		if (!b->ph[k].ns[0])
			continue;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?gracePeriodSeconds=0",
			 b->ph[k].ns);
		int st = call(b, b->admin, "DELETE", path, NULL, NULL, NULL);
		if (st != 200)
			kb_warn("cleanup: DELETE pods in namespace \"%s\": HTTP %d", b->ph[k].ns, st);
		if (o->group_kind == GROUP_NONE)
			continue;
		podgroups_path(b, b->ph[k].ns, path, sizeof(path));
		st = call(b, b->admin, "DELETE", path, NULL, NULL, NULL);
		if (st != 200)
			kb_warn("cleanup: DELETE PodGroups in namespace \"%s\": HTTP %d", b->ph[k].ns,
				st);
	}
	snprintf(path, sizeof(path), "/api/v1/nodes?labelSelector=" LABEL_NODE "%%3D%s", b->run);
	int st = call(b, b->admin, "DELETE", path, NULL, NULL, NULL);
	if (st != 200)
		kb_warn("cleanup: DELETE nodes labelled %s=%s: HTTP %d", LABEL_NODE, b->run, st);
	kb_info("cleanup: deleted the run's pods, PodGroups and nodes");
}

/* ---- results ---------------------------------------------------------------------------- */

static int results_write(bench *b)
{
	const e2e_opts *o = b->o;
	res_int(b, "nodes", o->nodes);
	res_int(b, "pods", o->pods);
	res_int(b, "gangs", (long long)b->ph[PH_SCHED].ngangs);
	res_int(b, "latency_pods", o->latency_pods);
	res_int(b, "latency_gangs", (long long)b->ph[PH_LAT].ngangs);
	res_int(b, "gang_min", o->gang_min);
	res_int(b, "gang_max", o->gang_max);
	res_int(b, "schedule_period_ms", o->period_ms);
	res_num(b, "gang_interval_ms", o->gang_interval_ms);
	res_num(b, "daemon_qps", o->daemon_qps);
	res_int(b, "daemon_burst", o->daemon_burst);
	res_int(b, "raw_as_admin", o->raw_as_admin);
	res_int(b, "watch_restarts", b->watch_restarts);
	res_int(b, "peer", o->peer != NULL);
	res_int(b, "group_kind", o->group_kind);
	json_t *top = json_pack("{s:O}", "e2e", b->res);
	char path[4096];
	snprintf(path, sizeof(path), "%s/e2e.json", o->out);
	int r = json_dump_file(top, path, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
	json_decref(top);
	if (r < 0) {
		fail(b, "cannot write \"%s\"", path);
		return -1;
	}
	kb_info("results in %s", path);
	return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	fail(w->data, "interrupted by signal %d", w->signum);
}

static kb_kube_client *client_for(bench *b, const char *kubeconfig, kb_kube_config *cfg)
{
	kb_err err = {0};
	if (kb_kube_config_load(kubeconfig, NULL, cfg, &err) < 0) {
		fail(b, "kubeconfig \"%s\": %s", kubeconfig, err.msg);
		return NULL;
	}
	/* The driver sends as fast as the server answers: no client-side limit
	 * (its phases keep their own number of requests in flight). */
	kb_kube_client_options co = {
		.qps = 1e9, .burst = 1 << 30, .timeout_ms = 60000, .max_inflight = 1 << 20};
	kb_kube_client *c = kb_kube_client_new(b->loop, cfg, &co, &err);
	if (!c)
		fail(b, "API client for \"%s\": %s", kubeconfig, err.msg);
	return c;
}

static int run(bench *b)
{
	const e2e_opts *o = b->o;
	double t0 = now_s();
	kb_info("run %s: %d nodes; raw and scheduler phases %d pods; latency phase %d pods; "
		"gangs of %d-%d; schedule period %d ms",
		b->run, o->nodes, o->pods, o->latency_pods, o->gang_min, o->gang_max, o->period_ms);
	if (make_namespaces(b) < 0 || make_nodes(b) < 0 || make_bound_pods(b) < 0 ||
	    watch_open(b) < 0)
		return -1;
	if ((o->phases & 1u << PH_RAW) && phase_raw(b, PH_RAW) < 0)
		return -1;
	if ((o->phases & 1u << PH_SCHED) && phase_sched(b) < 0)
		return -1;
	if ((o->phases & 1u << PH_RAW2) && b->daemon_pid > 0 && daemon_stop_between(b) < 0)
		return -1;
	if ((o->phases & 1u << PH_RAW2) && phase_raw(b, PH_RAW2) < 0)
		return -1;
	if ((o->phases & 1u << PH_LAT) && b->daemon_pid <= 0 &&
	    (daemon_start(b) < 0 || daemon_wait_ready(b) < 0))
		return -1;
	if ((o->phases & 1u << PH_LAT) && phase_lat(b) < 0)
		return -1;
	if ((o->phases & 1u << PH_FAIL) && b->daemon_pid > 0 && daemon_stop_between(b) < 0)
		return -1;
	if ((o->phases & 1u << PH_FAIL) && phase_failover(b) < 0)
		return -1;
	res_num(b, "wall_s", now_s() - t0);
	return results_write(b);
}

/* "raw,sched,lat" (any subset) into o->phases. */
static int parse_phases(const char *s, e2e_opts *o)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", s);
	o->phases = 0;
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k = 0;
		while (k < NPHASES && strcmp(w, PHASE_TAG[k]) != 0)
			k++;
		if (k == NPHASES)
			return -1;
		o->phases |= 1u << k;
	}
	return o->phases ? 0 : -1;
}

static int parse_levels(const char *s, e2e_opts *o)
{
	char *end;
	o->nlevels = 0;
	while (*s) {
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > 100000 || o->nlevels == MAX_LEVELS)
			return -1;
		o->raw_inflight[o->nlevels++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return o->nlevels ? 0 : -1;
}

static void usage(FILE *f)
{
	fputs("usage: bench-e2e --admin ADMIN_KUBECONFIG --scheduler-kubeconfig SCHED_KUBECONFIG\n"
	      "                 --daemon KUBE_BATCHD --out DIR [--nodes N] [--pods N]\n"
	      "                 [--latency-pods N] [--gang-min N] [--gang-max N]\n"
	      "                 [--create-inflight N] [--raw-inflight N[,N...]]\n"
	      "                 [--raw-as scheduler|admin] [--gang-interval-ms MS]\n"
	      "                 [--schedule-period-ms MS] [--daemon-qps Q] [--daemon-burst B]\n"
	      "                 [--daemon-v N] [--scheduler-conf F] [--timeout S] [--seed N]\n"
	      "                 [--cleanup] [--phases raw,sched,raw2,lat,failover] [--bound-pods N]\n"
	      "                 [--peer BINARY [--peer-arg ARG]... [--peer-name NAME]]\n"
	      "                 [--scheduler-name NAME] [--group-kind none|kube-batch|k8s]\n"
	      "                 [--kill-at FRACTION] [--lease-duration-s S] [--renew-deadline-s S]\n"
	      "                 [--retry-period-s S] [--lease-namespace NS] [--lease-name NAME]\n",
	      f);
}

/* Parses the command line into *o. Returns 0, or 2 (usage printed). */
static int parse_args(int argc, char **argv, e2e_opts *o)
{
	*o = (e2e_opts){.nodes = 1000, .pods = 10000, .latency_pods = 3000, .gang_min = 2,
			.gang_max = 16, .create_inflight = 128, .raw_inflight = {128}, .nlevels = 1,
			.gang_interval_ms = 75, .period_ms = 1000, .daemon_qps = 0,
			.daemon_burst = 10000, .daemon_v = 1, .timeout_s = 300, .seed = 1,
			.phases = (1u << PH_FAIL) - 1, .peer_name = "peer",
			.scheduler_name = "kube-batchd", .group_kind = GROUP_KUBE_BATCH,
			.kill_at = 0.2, .lease_s = 4, .renew_s = 3, .retry_s = 1,
			.lease_ns = "kube-system", .lease_name = "kube-batchd"};
	enum { O_ADMIN = 256, O_SCHED, O_DAEMON, O_OUT, O_NODES, O_PODS, O_LPODS, O_GMIN, O_GMAX,
	       O_CIN, O_RIN, O_RAWAS, O_GINT, O_PERIOD, O_QPS, O_BURST, O_DV, O_CONF, O_TIMEOUT,
	       O_SEED, O_CLEANUP, O_PHASES, O_BOUND, O_PEER, O_PEER_ARG, O_PEER_NAME, O_SNAME,
	       O_GROUP, O_KILL_AT, O_LEASE_S, O_RENEW_S, O_RETRY_S, O_LEASE_NS, O_LEASE_NAME };
	static const struct option lo[] = {
		{"admin", required_argument, NULL, O_ADMIN},
		{"scheduler-kubeconfig", required_argument, NULL, O_SCHED},
		{"daemon", required_argument, NULL, O_DAEMON},
		{"out", required_argument, NULL, O_OUT},
		{"nodes", required_argument, NULL, O_NODES},
		{"pods", required_argument, NULL, O_PODS},
		{"latency-pods", required_argument, NULL, O_LPODS},
		{"gang-min", required_argument, NULL, O_GMIN},
		{"gang-max", required_argument, NULL, O_GMAX},
		{"create-inflight", required_argument, NULL, O_CIN},
		{"raw-inflight", required_argument, NULL, O_RIN},
		{"raw-as", required_argument, NULL, O_RAWAS},
		{"gang-interval-ms", required_argument, NULL, O_GINT},
		{"schedule-period-ms", required_argument, NULL, O_PERIOD},
		{"daemon-qps", required_argument, NULL, O_QPS},
		{"daemon-burst", required_argument, NULL, O_BURST},
		{"daemon-v", required_argument, NULL, O_DV},
		{"scheduler-conf", required_argument, NULL, O_CONF},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"seed", required_argument, NULL, O_SEED},
		{"cleanup", no_argument, NULL, O_CLEANUP},
		{"phases", required_argument, NULL, O_PHASES},
		{"bound-pods", required_argument, NULL, O_BOUND},
		{"peer", required_argument, NULL, O_PEER},
		{"peer-arg", required_argument, NULL, O_PEER_ARG},
		{"peer-name", required_argument, NULL, O_PEER_NAME},
		{"scheduler-name", required_argument, NULL, O_SNAME},
		{"group-kind", required_argument, NULL, O_GROUP},
		{"kill-at", required_argument, NULL, O_KILL_AT},
		{"lease-duration-s", required_argument, NULL, O_LEASE_S},
		{"renew-deadline-s", required_argument, NULL, O_RENEW_S},
		{"retry-period-s", required_argument, NULL, O_RETRY_S},
		{"lease-namespace", required_argument, NULL, O_LEASE_NS},
		{"lease-name", required_argument, NULL, O_LEASE_NAME},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	bool bad = false;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_ADMIN: o->admin_kubeconfig = optarg; break;
		case O_SCHED: o->sched_kubeconfig = optarg; break;
		case O_DAEMON: o->daemon = optarg; break;
		case O_OUT: o->out = optarg; break;
		case O_NODES: o->nodes = atoi(optarg); break;
		case O_PODS: o->pods = atoi(optarg); break;
		case O_LPODS: o->latency_pods = atoi(optarg); break;
		case O_GMIN: o->gang_min = atoi(optarg); break;
		case O_GMAX: o->gang_max = atoi(optarg); break;
		case O_CIN: o->create_inflight = atoi(optarg); break;
		case O_RIN: bad |= parse_levels(optarg, o) < 0; break;
		case O_RAWAS:
			bad |= strcmp(optarg, "admin") != 0 && strcmp(optarg, "scheduler") != 0;
			o->raw_as_admin = strcmp(optarg, "admin") == 0;
			break;
		case O_GINT: o->gang_interval_ms = atof(optarg); break;
		case O_PERIOD: o->period_ms = atoi(optarg); break;
		case O_QPS: o->daemon_qps = atof(optarg); break;
		case O_BURST: o->daemon_burst = atoi(optarg); break;
		case O_DV: o->daemon_v = atoi(optarg); break;
		case O_CONF: o->daemon_conf = optarg; break;
		case O_TIMEOUT: o->timeout_s = atof(optarg); break;
		case O_SEED: o->seed = strtoull(optarg, NULL, 10); break;
		case O_CLEANUP: o->cleanup = true; break;
		case O_PHASES: bad |= parse_phases(optarg, o) < 0; break;
		case O_BOUND: o->bound_pods = strtoull(optarg, NULL, 10); break;
		case O_PEER: o->peer = optarg; break;
		case O_PEER_ARG:
			if (o->npeer_args == MAX_PEER_ARGS) {
				fprintf(stderr, "bench-e2e: more than %d --peer-arg\n", MAX_PEER_ARGS);
				bad = true;
			} else {
				o->peer_args[o->npeer_args++] = optarg;
			}
			break;
		case O_PEER_NAME: o->peer_name = optarg; break;
		case O_SNAME: o->scheduler_name = optarg; break;
		case O_GROUP: {
			int g = 0;
			while (g < GROUP_K8S + 1 && strcmp(optarg, GROUP_KIND[g]) != 0)
				g++;
			if (g > GROUP_K8S) {
				fprintf(stderr, "bench-e2e: --group-kind must be none, kube-batch or k8s, "
						"got \"%s\"\n", optarg);
				bad = true;
			}
			o->group_kind = g;
			break;
		}
		case O_KILL_AT: o->kill_at = atof(optarg); break;
		case O_LEASE_S: o->lease_s = atof(optarg); break;
		case O_RENEW_S: o->renew_s = atof(optarg); break;
		case O_RETRY_S: o->retry_s = atof(optarg); break;
		case O_LEASE_NS: o->lease_ns = optarg; break;
		case O_LEASE_NAME: o->lease_name = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: bad = true;
		}
	}
	/* A peer runs phase 2 only (the latency phase and the cold start's
	 * figures read kube-batchd's /healthz and /metrics); the latency phase
	 * times gangs from their PodGroup's create. */
	if (o->peer && (o->phases & 1u << PH_LAT || o->bound_pods > 0)) {
		fprintf(stderr, "bench-e2e: --peer runs the phases raw, sched and raw2 only, without "
				"--bound-pods\n");
		bad = true;
	}
	if ((o->phases & 1u << PH_FAIL) &&
	    (o->peer || o->group_kind == GROUP_NONE || o->kill_at <= 0 || o->kill_at >= 1 ||
	     o->retry_s <= 0 || o->renew_s < o->retry_s || o->lease_s <= o->renew_s)) {
		fprintf(stderr, "bench-e2e: the failover phase runs kube-batchd (no --peer) with "
				"PodGroups, 0 < --kill-at < 1 and --retry-period-s <= "
				"--renew-deadline-s < --lease-duration-s\n");
		bad = true;
	}
	if (o->group_kind == GROUP_NONE && o->phases & 1u << PH_LAT) {
		fprintf(stderr, "bench-e2e: the lat phase needs PodGroups (--group-kind kube-batch or "
				"k8s)\n");
		bad = true;
	}
	if (bad || optind != argc || !o->admin_kubeconfig || !o->sched_kubeconfig ||
	    (!o->daemon && !o->peer) ||
	    !o->out || o->nodes < 1 || o->pods < 1 || o->latency_pods < 1 || o->gang_min < 1 ||
	    o->gang_max < o->gang_min || o->create_inflight < 1 || o->gang_interval_ms <= 0 ||
	    o->period_ms < 1 || o->daemon_qps < 0 || o->daemon_burst < 1 || o->timeout_s <= 0 ||
	    (size_t)o->pods / (size_t)o->nlevels < 1) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	e2e_opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	kb_log_setup(0, stderr);
	signal(SIGPIPE, SIG_IGN);
	if (mkdir(o.out, 0755) < 0 && errno != EEXIST) {
		kb_error("output directory \"%s\": %s", o.out, strerror(errno));
		return 1;
	}

	bench b = {.o = &o, .loop = ev_default_loop(EVFLAG_AUTO), .res = json_object()};
	kb_kube_config acfg = {0}, wcfg = {0}, scfg = {0};
	snprintf(b.run, sizeof(b.run), "%04x%02x", (unsigned)(getpid() & 0xffff),
		 (unsigned)(time(NULL) & 0xff));
	snprintf(b.bound_ns, sizeof(b.bound_ns), "e2e-bound-%s", b.run);
	snprintf(b.daemon_log, sizeof(b.daemon_log), "%s/%s", o.out,
		 o.peer ? "scheduler.log" : "daemon.log");
	ev_signal_init(&b.sigint, on_signal, SIGINT);
	ev_signal_init(&b.sigterm, on_signal, SIGTERM);
	b.sigint.data = b.sigterm.data = &b;
	ev_signal_start(b.loop, &b.sigint);
	ev_signal_start(b.loop, &b.sigterm);

	uint64_t rng = o.seed;
	if (phase_init(&b, PH_RAW, (size_t)o.pods, &rng) < 0 ||
	    phase_init(&b, PH_RAW2, (size_t)o.pods, &rng) < 0 ||
	    phase_init(&b, PH_SCHED, (size_t)o.pods, &rng) < 0 ||
	    phase_init(&b, PH_LAT, (size_t)o.latency_pods, &rng) < 0 ||
	    phase_init(&b, PH_FAIL, (o.phases & 1u << PH_FAIL) ? (size_t)o.pods : 0, &rng) < 0) {
		fail(&b, "out of memory sizing the phases");
	} else if ((b.admin = client_for(&b, o.admin_kubeconfig, &acfg)) != NULL &&
		   (b.watcher = client_for(&b, o.admin_kubeconfig, &wcfg)) != NULL) {
		if (o.raw_as_admin)
			b.binder = b.admin;
		else
			b.binder = client_for(&b, o.sched_kubeconfig, &scfg);
		if (b.binder)
			run(&b);
	}

	bool running = b.daemon_pid > 0;
	int st = daemon_stop(&b);
	if (running && !b.failed && !stop_clean(&b, st))
		fail(&b, "%s did not stop cleanly on SIGTERM (status word %d); its log: %s",
		     sched_label(&b), st, b.daemon_log);
	watch_close(&b);
	if (o.cleanup && b.admin)
		cleanup_cluster(&b);
	if (b.binder && b.binder != b.admin)
		kb_kube_client_free(b.binder);
	kb_kube_client_free(b.admin);
	kb_kube_client_free(b.watcher);
	kb_kube_client_free(b.metrics_client);
	kb_kube_config_release(&acfg);
	kb_kube_config_release(&wcfg);
	kb_kube_config_release(&scfg);
	for (int k = 0; k < NPHASES; k++)
		phase_release(&b.ph[k]);
	json_decref(b.res);
	ev_signal_stop(b.loop, &b.sigint);
	ev_signal_stop(b.loop, &b.sigterm);
	ev_loop_destroy(b.loop);
	if (b.failed) {
		fprintf(stderr, "bench-e2e: FAILED: %s\n", b.err);
		return 1;
	}
	return 0;
}

/* daemon.c - cluster mode's loop (see daemon.h).
 *
 * The loop's state and what drives sessions: the queue file, discovery and
 * the reflectors, the tick and the early session after a change, signals,
 * start-up and shutdown. Leader election (leader.h), the HTTP endpoint
 * (endpoint.h) and the metrics text (metrics.h) are modules of their own
 * that call back into the loop.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <ev.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "cache/cluster.h"
#include "daemon/endpoint.h"
#include "daemon/estimates.h"
#include "daemon/history_seed.h"
#include "daemon/leader.h"
#include "daemon/metrics.h"
#include "daemon/record.h"
#include "daemon/summary.h"
#include "kube/kube_client.h"
#include "kube/kube_source.h"
#include "kube/reflector.h"
#include "kube/writers.h"
#include "queue/queue_conf.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

/* One reflector per resource kb_watch_resources names, at most. */
#define MAX_REFLECTORS KB_WATCH_MAX
#define WRITE_INFLIGHT 128    /* the writers' client's requests in flight */
#define IO_COLLECT_S 0.002    /* ev_set_io_collect_interval: at most 2 ms added to an answer */
#define RESYNC_MS 10000       /* a session at least this often, for retries */
#define DISCOVERY_RETRY_S 2.0
/* Stopping (kube/writers.h, "Shutdown"): on SIGTERM the bindings queued go
 * on for up to DRAIN_FINISH_S, then the ones not sent are abandoned and the
 * answers of the rest (and the evictions of gangs taken back) are awaited
 * for up to DRAIN_SETTLE_S; after a lost lease only DRAIN_SETTLE_LOST_S,
 * well before a successor can take the lease (its duration is 15 s, and it
 * is lost 10 s after the last renewal). Together under the 30 s of a pod's
 * default terminationGracePeriodSeconds. */
#define DRAIN_FINISH_S 5.0
#define DRAIN_SETTLE_S 5.0
#define DRAIN_SETTLE_LOST_S 2.0
#define DRAIN_POLL_S 0.05

typedef struct daemon_state daemon_state;

struct daemon_state {
	const kb_daemon_options *opt;
	struct ev_loop *loop;
	kb_conf conf;
	bool conf_loaded;
	kb_kube_config kcfg;
	/* Two API clients, each with its own connections (at most 4, HTTP/2):
	 * the writers' (bindings, evictions, status writes, Events) and the
	 * control client (discovery, LIST and WATCH, leader election). On one
	 * connection pool a burst of thousands of bindings kept the watch
	 * streams from being read fast enough, and kube-apiserver closed them
	 * "due to unresponsiveness"; the lease renewals would queue behind the
	 * bindings too. */
	kb_kube_client *write_client;
	kb_kube_client *control_client;
	/* A third, for the reflectors' LIST pages only (kube/reflector.h). */
	kb_kube_client *list_client;
	kb_cluster cluster;
	kb_writers *writers;
	/* Estimated starts and the runtime history (estimates.h), run by
	 * estimate_timer a while after a session, off its latency path. */
	kb_estimates *estimates;
	ev_timer estimate_timer;
	kb_history_seed *history_seed; /* the history from finished pods, at start */

	/* The queue file in force, and what its stat said when it was read. */
	kb_queue_conf qconf;
	bool qconf_loaded;
	struct timespec q_mtime;
	off_t q_size;
	bool q_stat_ok;

	kb_reflector *refl[MAX_REFLECTORS];
	int nrefl;
	bool discovered;
	bool synced; /* discovery done and every reflector synced */

	ev_timer tick, discovery_retry;
	/* An early session: armed by a change to the cluster, once changes
	 * have settled (see poke()). */
	ev_timer soon;
	double burst_start_s; /* kb_mono_s() of the first change of the burst soon waits out */
	double burst_cap_s;   /* its session no later than burst_start_s + this (poke_within) */
	double period_s;      /* --schedule-period */
	/* What the last session learnt for the next (scheduler/framework.h). */
	kb_session_memo memo;
	ev_signal sigterm, sigint;
	/* Stopping: not at all, finishing the bindings queued, or waiting for
	 * the answers after the unsent ones were abandoned (writers.h). */
	enum { RUNNING, FINISHING, SETTLING } stopping;
	double drain_deadline; /* monotonic */
	ev_timer drain;
	kb_endpoint *endpoint; /* --listen-address, or NULL */
	kb_endpoint *health_endpoint; /* --healthz-address, or NULL */

	/* Leader election (--leader-elect): the elector, whether this instance
	 * leads (always true without it), and whether it lost the lease. */
	kb_leader *elector;
	bool leading;
	bool lost;

	uint64_t last_generation;
	int64_t last_session_ms;
	bool had_session;
	double last_session_end_s, last_session_dur_s; /* monotonic */

	kb_recorder *rec; /* --record, or NULL (daemon/record.h) */

	kb_session_counters counters; /* for /metrics */
	/* The last session's figures and the sums over every session
	 * (summary.h, metrics.h): /metrics and the Queue status writes. */
	kb_summary summary;
	kb_metrics_totals totals;
};

/* ---- the queue file -------------------------------------------------------------- */

static bool queue_file_changed(daemon_state *d, struct stat *ret)
{
	if (stat(d->opt->queue_conf, ret) < 0) {
		if (d->q_stat_ok)
			kb_warn("queue configuration \"%s\": %s; keeping the queues in force",
				d->opt->queue_conf, strerror(errno));
		d->q_stat_ok = false;
		return false;
	}
	bool changed = !d->q_stat_ok || ret->st_mtim.tv_sec != d->q_mtime.tv_sec ||
		       ret->st_mtim.tv_nsec != d->q_mtime.tv_nsec || ret->st_size != d->q_size;
	d->q_stat_ok = true;
	return changed;
}

/* Loads (first call) or reloads the queue file. At start-up a bad file is
 * an error; later it is logged and the queues in force stay. */
static int load_queue_file(daemon_state *d, bool startup, kb_err *err)
{
	struct stat st;
	if (startup && stat(d->opt->queue_conf, &st) < 0) {
		int e = errno;
		return kb_err_set(err, -e, "%s: %s", d->opt->queue_conf, strerror(e));
	}
	if (!queue_file_changed(d, &st))
		return 0;
	d->q_mtime = st.st_mtim;
	d->q_size = st.st_size;
	kb_queue_conf fresh;
	memset(&fresh, 0, sizeof(fresh));
	kb_err e = {0};
	int r = kb_recorder_load_queues(d->rec, d->opt->queue_conf, &d->cluster.resnames, &fresh,
					&e);
	if (r < 0) {
		if (startup) {
			*err = e;
			return r;
		}
		kb_error("reloading the queue configuration failed, keeping the queues in force: %s",
			 e.msg);
		return 0;
	}
	if (d->qconf_loaded)
		kb_queue_conf_release(&d->qconf);
	d->qconf = fresh;
	d->qconf_loaded = true;
	d->cluster.queue_conf = &d->qconf;
	kb_cluster_queue_conf_changed(&d->cluster);
	kb_info("queue configuration \"%s\" %s: %u queues, %u namespaces mapped", d->opt->queue_conf,
		startup ? "loaded" : "reloaded", d->qconf.nqueues, d->qconf.nns);
	return 0;
}

static void poke(daemon_state *d);

/* ---- the reflectors -------------------------------------------------------------- */

static void on_upsert(void *ctx, kb_object *obj)
{
	daemon_state *d = ctx;
	if (obj->kind == KB_KIND_POD && obj->u.pod.node_name)
		kb_writers_forget_pod(d->writers, obj->meta.key);
	kb_kind kind = obj->kind;
	if (kb_cluster_undecodable(&d->cluster, kind, obj->meta.key))
		kb_info("%s \"%s\" decodes again (resourceVersion %s): usable for placement again",
			kb_kind_name(kind), obj->meta.key, obj->meta.resource_version);
	/* The store says which changes may make work (cache/cluster.h); the
	 * rest (echoes of our bindings and status writes, kubelets' statuses,
	 * heartbeats) wait for the period. */
	uint64_t work = d->cluster.work_generation;
	int64_t t = kb_wall_ms();
	kb_recorder_upsert(d->rec, t);
	if (kb_cluster_apply(&d->cluster, obj, t) < 0)
		kb_error("out of memory storing a %s", kind == KB_KIND_POD ? "Pod" : "object");
	if (d->cluster.work_generation != work)
		poke(d);
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	daemon_state *d = ctx;
	if (kind == KB_KIND_POD) {
		kb_estimates_pod_gone(d->estimates, key, kb_wall_ms());
		kb_writers_forget_pod(d->writers, key);
	}
	else if (kind == KB_KIND_PODGROUP)
		kb_writers_forget_podgroup(d->writers, key);
	kb_recorder_remove(d->rec, kind, key);
	kb_cluster_delete(&d->cluster, kind, key);
	poke(d);
}

/* What placement does without an object whose latest version did not
 * decode (kb_cluster_mark_undecodable). */
static const char *undecodable_effect(kb_kind kind)
{
	switch (kind) {
	case KB_KIND_NODE:
		return "no pod is placed on it";
	case KB_KIND_POD:
		return "not placed (it keeps its node if it has one)";
	case KB_KIND_PODGROUP:
		return "its pods are not placed";
	default:
		return "its last good version stays in force";
	}
}

/* A pod of ours, on no node, of which no version decoded: no session
 * reports it, so its condition says why here, while leading (a standby
 * leaves it to the leader; the pod's next update says it again). */
static void tell_unreadable_pod(daemon_state *d, kb_kind kind, const char *key,
				const kb_yaml_node *obj, const char *msg)
{
	if (kind != KB_KIND_POD || !obj || !d->leading || d->stopping)
		return;
	const kb_yaml_node *spec = kb_yaml_get(obj, "spec");
	const char *sched = kb_yaml_str(kb_yaml_get(spec, "schedulerName"));
	if (!kb_cluster_name_is_ours(&d->cluster, sched && sched[0] ? sched : "default-scheduler"))
		return;
	char why[KB_ERR_MSG_MAX + 128];
	(void)snprintf(why, sizeof(why),
		       "kube-batchd could not decode this pod, so it is not scheduled: %s; fix the "
		       "field named",
		       msg);
	const char *uid = kb_yaml_str(kb_yaml_get(kb_yaml_get(obj, "metadata"), "uid"));
	int r = kb_writers_pod_unreadable(d->writers, key, uid, why);
	if (r < 0)
		kb_error("pod \"%s\": writing why it is not scheduled: %s", key, strerror(-r));
}

/* The API's latest version of an object did not decode: the cache's copy
 * is out of date, so the object is taken out of placement (a warning the
 * first time, at -v 2 while it stays so) until a version decodes. */
static void on_undecodable(void *ctx, kb_kind kind, const char *key, const kb_yaml_node *obj,
			   const kb_err *err)
{
	daemon_state *d = ctx;
	bool was = kb_cluster_undecodable(&d->cluster, kind, key);
	kb_recorder_undecodable(d->rec, kind, key);
	const char *node = NULL;
	int r = kb_cluster_undecodable_object(&d->cluster, kind, key, obj, &node);
	const char *msg = err && err->msg[0] ? err->msg : "does not decode";
	if (r == -ENOMEM) {
		kb_error("out of memory noting %s \"%s\", which did not decode", kb_kind_name(kind),
			 key);
		return;
	}
	if (r == 2) {
		kb_vlog(2, "still not decoded (its node \"%s\" stays out of placement): %s", node,
			msg);
		return;
	}
	if (r == 1) {
		kb_warn("%s (a Pod on node \"%s\" that kube-batchd never decoded): no pod is placed "
			"on that node until this one decodes or is deleted, since what it uses "
			"there is unknown; fix the field named",
			msg, node);
		poke(d);
		return;
	}
	if (r == -ENOENT) {
		kb_warn("%s (a new %s): skipped, unknown to kube-batchd until a version decodes; "
			"fix the field named", msg, kb_kind_name(kind));
		tell_unreadable_pod(d, kind, key, obj, msg);
		return;
	}
	if (was) {
		kb_vlog(2, "still out of date: %s", msg);
		return;
	}
	kb_warn("%s (the API's latest version of %s \"%s\"; the cache's copy is out of date): "
		"%s until a version decodes; fix the field named",
		msg, kb_kind_name(kind), key, undecodable_effect(kind));
	poke(d);
}

static void warm_done(void *ctx, int status, const char *body, size_t len)
{
	(void)ctx;
	int n = body ? (int)(len < 200 ? len : 200) : 0;
	if (status != 200)
		kb_vlog(1, "opening the writers' connection: GET /version answered %d: %.*s", status, n,
			body ? body : "");
}

/* The writers' client opens its connection now, by one GET /version (which
 * every account may read). A standby, or a daemon yet to bind, has none,
 * and the first session's bindings waited on the TLS handshake, which only
 * the loop drives, so none left before the session ended: a new leader's
 * first bind came 2.8 s after it took the lease, past the 2 s goal
 * (bench/run step failover). Called on gaining the lease and at the sync. */
static void warm_writes(daemon_state *d)
{
	if (!d->leading || d->stopping)
		return;
	if (kb_kube_request(d->write_client, "GET", "/version", NULL, NULL, warm_done, NULL) < 0)
		kb_error("opening the writers' connection: out of memory; the first bindings wait "
			 "for it");
}

static void check_synced(daemon_state *d)
{
	if (d->synced || !d->discovered)
		return;
	for (int i = 0; i < d->nrefl; i++)
		if (!kb_reflector_synced(d->refl[i]))
			return;
	d->synced = true;
	kb_info("cache synced: %u nodes, %u pods, %u podgroups, %u queues",
		(unsigned)d->cluster.nodes.by_key.n, (unsigned)d->cluster.pods.by_key.n,
		(unsigned)d->cluster.podgroups.by_key.n, (unsigned)d->cluster.queues.by_key.n);
	kb_history_seed_cache_synced(d->history_seed);
	warm_writes(d);
	/* The first session --schedule-delay after the sync, not at the next
	 * tick: a cold start binds up to a period sooner. */
	poke(d);
}

static void on_synced(void *ctx, const char *path)
{
	daemon_state *d = ctx;
	kb_vlog(1, "listed \"%s\"", path);
	check_synced(d);
}

static void on_refl_error(void *ctx, const char *path, const kb_err *err)
{
	kb_warn("watching \"%s\": %s", path, err && err->msg[0] ? err->msg : "error");
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.undecodable = on_undecodable,
	.error = on_refl_error,
};

/* --record: the same, and each object's JSON to the recorder. */
static void on_raw(void *ctx, const char *api_version, const char *kind, const kb_yaml_node *obj)
{
	const daemon_state *d = ctx;
	kb_recorder_seen(d->rec, api_version, kind, obj);
}

static const kb_reflector_handler recording_handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.undecodable = on_undecodable,
	.error = on_refl_error,
	.raw = on_raw,
};

/* Pods in a final phase hold nothing and are never placed: they are left
 * out on the server, as kube-scheduler does, and one that finishes leaves
 * the cache (its watch delivers it as DELETED). */
static int start_reflector(daemon_state *d, const char *path, const char *api_version,
			   const char *kind)
{
	if (d->nrefl >= MAX_REFLECTORS) {
		kb_error("watching \"%s\": more than %d resources to watch", path, MAX_REFLECTORS);
		return -ENOSPC;
	}
	kb_err err = {0};
	kb_reflector_options ropt = {
		.field_selector = strcmp(kind, "Pod") == 0 ? KB_POD_FIELD_SELECTOR : NULL,
		.list_client = d->list_client,
	};
	kb_reflector *r = kb_reflector_new(d->control_client, d->loop, path, api_version, kind,
					   &d->cluster.resnames, &ropt,
					   d->rec ? &recording_handler : &handler, d, &err);
	if (!r) {
		kb_error("watching \"%s\": %s", path, err.msg);
		return err.code ? err.code : -ENOMEM;
	}
	d->refl[d->nrefl++] = r;
	return 0;
}

static void start_discovery(daemon_state *d);

static void on_discovered(void *ctx, int status, const kb_served *served)
{
	daemon_state *d = ctx;
	if (status < 200 || status >= 300 || !served) {
		kb_warn("API discovery failed (status %d); retrying in %.0f s", status,
			DISCOVERY_RETRY_S);
		ev_timer_set(&d->discovery_retry, DISCOVERY_RETRY_S, 0.);
		ev_timer_start(d->loop, &d->discovery_retry);
		return;
	}
	kb_watch_resource res[KB_WATCH_MAX];
	uint32_t nres = kb_watch_resources(served, res);
	int r = 0;
	for (uint32_t i = 0; i < nres; i++)
		r |= start_reflector(d, res[i].path, res[i].api_version, res[i].kind);
	if (r) {
		kb_error("could not start every watch; stopping");
		ev_break(d->loop, EVBREAK_ALL);
		return;
	}
	kb_info("watching %d resources (PodGroups:%s%s%s%s%s%s)", d->nrefl,
		served->incubator ? " scheduling.incubator.k8s.io" : "",
		served->volcano ? " scheduling.volcano.sh" : "",
		served->cosched ? " scheduling.x-k8s.io" : "",
		served->cosched_old ? " scheduling.sigs.k8s.io" : "",
		served->k8s_podgroups ? " " : "",
		served->k8s_podgroups ? served->k8s_podgroups
				      : served->k8s_workloads_v1alpha1
						? " scheduling.k8s.io/v1alpha1 (Workloads)"
						: "");
	d->discovered = true;
	/* The runtime history from the finished pods (not part of the sync). */
	kb_err err = {0};
	d->history_seed = kb_history_seed_start(d->loop, d->control_client, d->list_client,
						d->estimates, &err);
	if (!d->history_seed)
		kb_warn("runtime history: listing the finished pods: %s; the history starts empty",
			err.msg[0] ? err.msg : "failed");
	check_synced(d);
}

static void start_discovery(daemon_state *d)
{
	if (kb_discover(d->control_client, on_discovered, d) < 0) {
		ev_timer_set(&d->discovery_retry, DISCOVERY_RETRY_S, 0.);
		ev_timer_start(d->loop, &d->discovery_retry);
	}
}

static void on_discovery_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	start_discovery(w->data);
}

/* ---- sessions -------------------------------------------------------------------- */

/* The end of a session's summary (summary.h): the sums for /metrics, and
 * each API Queue's status written when the cache's copy says otherwise
 * (kb_writers_queue_status). O(queues x KB_RES_MAX + GPU nodes). */
static void session_summarized(daemon_state *d, const kb_snapshot *snap, double seconds)
{
	kb_summary *s = &d->summary;
	if (kb_summary_end(s, snap, seconds) < 0)
		kb_warn("session summary: out of memory; /metrics shows part of the last session");
	kb_metrics_totals_add(&d->totals, s);
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_summary_queue *q = &s->queues[i];
		const kb_object *o = kb_writers_cached_queue(d->writers, q->name);
		if (!o)
			continue;
		kb_queue_report want;
		kb_queue_report_make(o->u.queue.flavor, q->podgroups, q->state, &q->allocated,
				     s->resnames.n, &o->u.queue.status, &want);
		if (kb_writers_queue_status(d->writers, q->name, &want) < 0)
			kb_warn("writing status of Queue \"%s\": out of memory; tried again next "
				"session", q->name);
	}
}

static void run_session(daemon_state *d)
{
	double t0 = kb_mono_s();
	int64_t now = kb_wall_ms();
	kb_snapshot *snap; /* lent by the cluster until the next session */
	kb_err err = {0};
	int r = kb_cluster_session_snapshot(&d->cluster, &snap, &err);
	if (r < 0) {
		kb_error("snapshot: %s", err.msg[0] ? err.msg : strerror(-r));
		d->counters.errors++;
		return;
	}
	kb_session ssn;
	/* Every effect goes to the writers through the summary's tee (and,
	 * with --record, the recorder's before it). */
	kb_summary_tee tee = {.next = &kb_writers_effects, .next_ctx = d->writers,
			      .sum = &d->summary};
	kb_recorder_tee rtee = {.next = &kb_summary_effects, .next_ctx = &tee, .rec = d->rec};
	kb_recorder_session_begin(d->rec, &d->cluster, now);
	r = kb_session_open(&ssn, snap, &d->conf, d->rec ? &kb_recorder_effects : &kb_summary_effects,
			    d->rec ? (void *)&rtee : (void *)&tee, now, &err);
	if (r < 0) {
		kb_error("opening a session: %s", err.msg[0] ? err.msg : strerror(-r));
		kb_recorder_session_end(d->rec, r);
		d->counters.errors++;
		return;
	}
	if (kb_summary_begin(&d->summary, snap) < 0)
		kb_warn("session summary: out of memory; /metrics shows no queues until a session "
			"summarizes");
	kb_session_use_memo(&ssn, &d->memo);
	r = kb_session_run_actions(&ssn, &err);
	if (r < 0)
		kb_error("session: %s", err.msg[0] ? err.msg : strerror(-r));
	kb_summary_session(&d->summary, &ssn);
	bool replayed = ssn.memo_replayed;
	uint32_t binds = ssn.binds, evictions = ssn.evictions, njobs = snap->njobs;
	int rc = kb_session_close(&ssn);
	kb_recorder_session_end(d->rec, r);
	if (rc < 0)
		kb_warn("session: %d side effects failed, the first: %s", ssn.effect_errors,
			ssn.first_effect_err.msg[0] ? ssn.first_effect_err.msg : strerror(-rc));
	if (r < 0 || rc < 0)
		d->counters.errors++;
	double dt = kb_mono_s() - t0;
	session_summarized(d, snap, dt);
	d->counters.sessions++;
	d->counters.seconds_sum += dt;
	d->last_generation = d->cluster.generation;
	d->last_session_ms = now;
	d->had_session = true;
	d->last_session_end_s = kb_mono_s();
	d->last_session_dur_s = dt;
	/* A quarter period on, once the session's writes are on their way
	 * (from now: the loop's clock still says when the session began, and
	 * after a session longer than that the estimates ran at once, holding
	 * the first bindings back; 0.8 s at 150,000 pods, bench/run failover). */
	if (!ev_is_active(&d->estimate_timer)) {
		ev_now_update(d->loop);
		ev_timer_set(&d->estimate_timer, d->period_s / 4, 0.);
		ev_timer_start(d->loop, &d->estimate_timer);
	}
	kb_vlog(1, "session %" PRIu64 ": %u jobs, %u binds, %u evictions, %.3f ms%s",
		d->counters.sessions, njobs, binds, evictions, dt * 1000.0,
		replayed ? " (nothing changed since a session that changed nothing: "
			   "preempt and reclaim skipped)" : "");
}

static void on_estimate(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	if (d->synced && d->leading && !d->stopping)
		kb_estimates_after_session(d->estimates, kb_wall_ms());
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	if (d->opt->queue_conf)
		load_queue_file(d, false, NULL);
	if (!d->synced || !d->leading || d->stopping)
		return;
	int64_t now = kb_wall_ms();
	kb_writers_tick(d->writers, now); /* pods whose backoff is over may be placed */
	/* A burst of changes still arriving: its session comes when it has
	 * settled (poke), within four delays of its start. */
	if (ev_is_active(&d->soon))
		return;
	if (d->had_session && d->cluster.generation == d->last_generation &&
	    now - d->last_session_ms < RESYNC_MS)
		return;
	run_session(d);
}

/* A change to the cluster that may make work. Its session comes once the
 * changes have stopped for --schedule-delay (a burst settled: the pods and
 * PodGroups of one `kubectl apply`, or of an operator creating a job, are
 * decided together, by policy rather than by arrival), but no later than
 * four delays (at most a period) after the burst's first change, so a
 * steady stream of new gangs is still placed within the latency goal
 * (gang complete p99 <= period + 200 ms). Early sessions keep to a fifth
 * of the time (no sooner than four times the last session's length after
 * its end), so a stream of changes on a big cluster cannot keep the loop
 * busy either. */
static void poke_within(daemon_state *d, double cap_s);

static void poke(daemon_state *d)
{
	poke_within(d, -1);
}

/* poke, the burst's session no later than cap_s after its first change
 * (< 0: four delays, at most a period). */
static void poke_within(daemon_state *d, double cap_s)
{
	if (d->opt->delay_ms <= 0 || !d->synced || !d->leading || d->stopping)
		return;
	double now = kb_mono_s(), quiet = (double)d->opt->delay_ms / 1000.0;
	if (!ev_is_active(&d->soon)) {
		d->burst_start_s = now;
		d->burst_cap_s = 4 * quiet < d->period_s ? 4 * quiet : d->period_s;
	}
	if (cap_s >= 0 && cap_s < d->burst_cap_s)
		d->burst_cap_s = cap_s;
	double at = now + quiet, latest = d->burst_start_s + d->burst_cap_s;
	if (at > latest)
		at = latest;
	double earliest = d->last_session_end_s + 4 * d->last_session_dur_s;
	if (at < earliest)
		at = earliest;
	ev_timer_stop(d->loop, &d->soon);
	ev_timer_set(&d->soon, at > now ? at - now : 0., 0.);
	ev_timer_start(d->loop, &d->soon);
}

static void on_soon(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	if (!d->synced || !d->leading || d->stopping)
		return;
	if (d->had_session && d->cluster.generation == d->last_generation)
		return;
	run_session(d);
}

/* ---- stopping (writers.h, "Shutdown") --------------------------------------------- */

/* The end of a stop: names the gangs still waiting for answers, then gives
 * the lease up (on_released ends the loop) or ends the loop. */
static void stop_now(daemon_state *d)
{
	ev_timer_stop(d->loop, &d->drain);
	kb_writers_log_unsettled(d->writers);
	if (!d->lost && d->elector && kb_leader_release(d->elector)) {
		d->leading = false;
		return;
	}
	ev_break(d->loop, EVBREAK_ALL);
}

/* Abandons the bindings not sent yet and waits up to window seconds for
 * the answers of the rest. */
static void start_settling(daemon_state *d, double window)
{
	uint32_t n = kb_writers_abandon_unsent(d->writers, "kube-batchd is stopping");
	if (n)
		kb_warn("stopping: %u bindings not sent yet abandoned (their pods stay pending; "
			"a gang they would leave below minMember is taken back whole)", n);
	d->stopping = SETTLING;
	double deadline = kb_mono_s() + window;
	if (d->drain_deadline == 0 || deadline < d->drain_deadline)
		d->drain_deadline = deadline;
}

static void on_drain(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	double now = kb_mono_s();
	if (d->stopping == FINISHING &&
	    (kb_writers_unsettled(d->writers) == 0 || now >= d->drain_deadline)) {
		d->drain_deadline = 0;
		start_settling(d, DRAIN_SETTLE_S);
	}
	if (d->stopping == SETTLING &&
	    (kb_writers_unsettled(d->writers) == 0 || now >= d->drain_deadline)) {
		uint32_t left = kb_writers_unsettled(d->writers);
		if (left)
			kb_warn("stopping: %u bindings and evictions still unanswered after the "
				"window; leaving them", left);
		else
			kb_info("stopping: every binding and eviction answered");
		stop_now(d);
	}
}

/* Stops sessions and starts draining the writers: finishing the bindings
 * queued (SIGTERM while leading) or abandoning them at once (lease lost). */
static void begin_stop(daemon_state *d, bool lost)
{
	ev_timer_stop(d->loop, &d->tick);
	ev_timer_stop(d->loop, &d->soon);
	ev_timer_stop(d->loop, &d->estimate_timer);
	kb_estimates_cancel(d->estimates);
	if (d->stopping == RUNNING) {
		d->stopping = FINISHING;
		d->drain_deadline = kb_mono_s() + DRAIN_FINISH_S;
		uint32_t n = kb_writers_unsettled(d->writers);
		if (n)
			kb_info("stopping: waiting up to %.0f s for %u bindings and evictions",
				DRAIN_FINISH_S + DRAIN_SETTLE_S, n);
		ev_timer_start(d->loop, &d->drain);
	}
	if (lost) /* abandon now; when already settling, only shortens the wait */
		start_settling(d, DRAIN_SETTLE_LOST_S);
	ev_invoke(d->loop, &d->drain, 0);
}

/* ---- leader election (leader.h) ----------------------------------------------- */

/* Sessions run only while leading; the watches run regardless, so a new
 * leader starts with a warm cache. */

static void on_gained(void *ctx)
{
	daemon_state *d = ctx;
	d->leading = true;
	warm_writes(d);
	/* The first session now, not at the next tick: a standby taking over
	 * from a leader that died mid-burst has its work waiting (bench/run
	 * step failover: up to a period saved). And after one --schedule-delay
	 * however many changes come meanwhile, not four: what waits arrived
	 * while no one led (a lease's duration at least), and the changes that
	 * keep coming in a burst (the dead leader's last bindings, new pods)
	 * held it 600 ms. The delay is kept: the writers' connection opens
	 * meanwhile (warm_writes). */
	poke_within(d, (double)d->opt->delay_ms / 1000.0);
}

/* Losing the lease stops the daemon with -ENOLCK (its Deployment restarts
 * it), after abandoning the bindings not sent and a short wait for the
 * answers of the rest (begin_stop). */
static void on_lost(void *ctx)
{
	daemon_state *d = ctx;
	d->leading = false;
	d->lost = true;
	begin_stop(d, true);
}

static void on_released(void *ctx)
{
	daemon_state *d = ctx;
	ev_break(d->loop, EVBREAK_ALL);
}

static const kb_leader_callbacks leader_callbacks = {
	.gained = on_gained,
	.lost = on_lost,
	.released = on_released,
};

/* ---- the endpoint (endpoint.h, metrics.h) -------------------------------------- */

static bool endpoint_ready(void *ctx)
{
	const daemon_state *d = ctx;
	return d->synced;
}

/* /readyz: the cache is synced and, with --leader-elect, this instance
 * leads; never while stopping. */
static bool endpoint_readyz(void *ctx, char *buf, size_t n)
{
	const daemon_state *d = ctx;
	const char *elect = d->opt->leader_elect ? (d->leading ? ", leading" : "") : " (no leader election)";
	bool ok = d->synced && d->leading && !d->stopping;
	if (d->stopping)
		(void)snprintf(buf, n, "stopping");
	else if (!d->synced)
		(void)snprintf(buf, n, "cache not synced%s",
			       d->opt->leader_elect ? (d->leading ? "; leading" : "; not leading") : "");
	else if (!d->leading)
		(void)snprintf(buf, n, "cache synced; not leading (a standby: leader election)");
	else
		(void)snprintf(buf, n, "ok: cache synced%s", elect);
	return ok;
}

static int endpoint_metrics(void *ctx, char **ret)
{
	const daemon_state *d = ctx;
	kb_metrics_view v = {.sessions = d->counters,
			     .synced = d->synced,
			     .leader = d->leading,
			     .totals = &d->totals,
			     .summary = &d->summary,
			     .profile = d->opt->scheduler_name,
			     .version = KB_BUILD_VERSION};
	int pr = kb_metrics_read_process(&v.process);
	if (pr < 0)
		kb_vlog(1, "/metrics: reading /proc/self: %s; process_* left out", strerror(-pr));
	if (d->writers)
		kb_writers_stats(d->writers, &v.writes);
	kb_metrics_add_client(&v, d->write_client);
	kb_metrics_add_client(&v, d->control_client);
	kb_metrics_add_client(&v, d->list_client);
	return kb_metrics_text(&v, ret);
}

static const kb_endpoint_handler endpoint_handler = {
	.ready = endpoint_ready,
	.readyz = endpoint_readyz,
	.metrics = endpoint_metrics,
};

/* ---- start, stop ----------------------------------------------------------------- */

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	daemon_state *d = w->data;
	const char *name = w->signum == SIGTERM ? "SIGTERM" : "SIGINT";
	if (d->stopping) {
		/* A second signal: stop at once. */
		kb_warn("received %s again, stopping at once", name);
		start_settling(d, 0);
		stop_now(d);
		return;
	}
	kb_info("received %s, stopping", name);
	/* The writers drain first (while the lease is held), then a leader
	 * gives the lease up; on_released ends the loop (stop_now). */
	begin_stop(d, false);
}

static int load_kube_config(const kb_daemon_options *o, kb_kube_config *ret, kb_err *err)
{
	return kb_kube_source_config(o->kubeconfig, o->master, ret, err);
}

/* The scheduler configuration, the queue file and where the API server is. */
static int load_configuration(daemon_state *d, kb_err *err)
{
	const kb_daemon_options *opt = d->opt;
	const char *names[KB_MAX_SCHEDULER_NAMES] = {opt->scheduler_name};
	for (uint32_t i = 0; i < opt->nmore_scheduler_names; i++)
		names[i + 1] = opt->more_scheduler_names[i];
	int r = kb_recorder_load_conf(d->rec, opt->scheduler_conf, opt->registry, names,
				      opt->nmore_scheduler_names + 1, opt->default_queue, &d->conf,
				      err);
	if (r < 0)
		return r;
	d->conf_loaded = true;
	if (opt->queue_conf && (r = load_queue_file(d, true, err)) < 0)
		return r;
	return load_kube_config(opt, &d->kcfg, err);
}

/* The loop, the two API clients and the writers. */
static int start_clients(daemon_state *d, kb_err *err)
{
	const kb_daemon_options *opt = d->opt;
	d->loop = ev_default_loop(EVFLAG_AUTO);
	if (!d->loop)
		return kb_err_set(err, -ENOMEM, "cannot create the event loop");
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		int e = errno;
		return kb_err_set(err, -e, "ignoring SIGPIPE: %s", strerror(e));
	}
	/* Gather the sockets that became ready for up to IO_COLLECT_S before
	 * handling them: in a burst of bindings the daemon then wakes for many
	 * answers and watch events at once instead of for each. Two bursts each
	 * way: 4,216-5,091 context switches instead of 6,921-7,538, and 170-190
	 * instead of 199-221 us of CPU per binding (bench/README.md §2). */
	ev_set_io_collect_interval(d->loop, IO_COLLECT_S);
	/* No client-side rate limit unless --kube-api-qps asks for one: API
	 * Priority and Fairness on the server is the limit (kube_client.h). */
	kb_kube_client_options copt = {
		.qps = opt->qps > 0 ? opt->qps : 0,
		.burst = opt->burst > 0 ? opt->burst : 400,
		.timeout_ms = 30000,
	};
	/* The writers keep as many requests in flight as bench-e2e's raw client
	 * (--raw-inflight 128) does when it measures the API server's binding
	 * capacity: etcd commits the writes that arrive together in one batch,
	 * and with 64 in flight it spent more CPU per binding in a burst than
	 * in the raw phases around it (bench/README.md §2). */
	kb_kube_client_options wopt = copt;
	wopt.max_inflight = WRITE_INFLIGHT;
	d->write_client = kb_kube_client_new(d->loop, &d->kcfg, &wopt, err);
	if (d->write_client)
		d->control_client = kb_kube_client_new(d->loop, &d->kcfg, &copt, err);
	if (d->control_client)
		d->list_client = kb_kube_client_new(d->loop, &d->kcfg, &copt, err);
	if (!d->list_client)
		return err && err->code ? err->code : -EINVAL;
	d->writers = kb_writers_new(d->write_client, &d->cluster, opt->scheduler_name, err);
	if (d->writers)
		d->estimates = kb_estimates_new(d->loop, &d->cluster, d->writers, &d->conf,
						 opt->period_ms);
	if (d->writers && !d->estimates)
		kb_err_set(err, -ENOMEM, "estimates: out of memory");
	return d->estimates ? 0 : -ENOMEM;
}

/* Signals, the tick, the discovery retry and the early session's timer. */
static void start_watchers(daemon_state *d, double period)
{
	ev_signal_init(&d->sigterm, on_signal, SIGTERM);
	ev_signal_init(&d->sigint, on_signal, SIGINT);
	d->sigterm.data = d->sigint.data = d;
	ev_signal_start(d->loop, &d->sigterm);
	ev_signal_start(d->loop, &d->sigint);
	ev_timer_init(&d->tick, on_tick, period, period);
	d->tick.data = d;
	ev_timer_start(d->loop, &d->tick);
	ev_timer_init(&d->discovery_retry, on_discovery_retry, DISCOVERY_RETRY_S, 0.);
	d->discovery_retry.data = d;
	ev_init(&d->soon, on_soon);
	d->soon.data = d;
	ev_timer_init(&d->drain, on_drain, DRAIN_POLL_S, DRAIN_POLL_S);
	d->drain.data = d;
	ev_init(&d->estimate_timer, on_estimate);
	d->estimate_timer.data = d;
}

static void stop_watchers(daemon_state *d)
{
	d->elector = kb_leader_free(d->elector);
	ev_timer_stop(d->loop, &d->tick);
	ev_timer_stop(d->loop, &d->soon);
	ev_timer_stop(d->loop, &d->discovery_retry);
	ev_timer_stop(d->loop, &d->drain);
	ev_timer_stop(d->loop, &d->estimate_timer);
	ev_signal_stop(d->loop, &d->sigterm);
	ev_signal_stop(d->loop, &d->sigint);
	d->endpoint = kb_endpoint_stop(d->endpoint);
	d->health_endpoint = kb_endpoint_stop(d->health_endpoint);
	for (int i = 0; i < d->nrefl; i++)
		d->refl[i] = kb_reflector_free(d->refl[i]);
	d->history_seed = kb_history_seed_free(d->history_seed);
}

/* Runs the loop until a signal or the loss of the lease. 0, -ENOLCK when
 * the lease was lost, or the elector's start-up error. */
static int run_loop(daemon_state *d, kb_err *err)
{
	const kb_daemon_options *opt = d->opt;
	double period = (double)(opt->period_ms > 0 ? opt->period_ms : 1000) / 1000.0;
	d->period_s = period;
	start_watchers(d, period);
	kb_info("kube-batchd starting: scheduler name \"%s\", API server %s, period %.3f s, "
		"sessions once changes settle for %.3f s",
		opt->scheduler_name, d->kcfg.server ? d->kcfg.server : "?", period,
		(double)opt->delay_ms / 1000.0);
	int r = 0;
	if (opt->leader_elect) {
		kb_leader_config lc = {
			.namespace_ = opt->lease_namespace,
			.name = opt->lease_name ? opt->lease_name : opt->scheduler_name,
			.lease_duration_ms = opt->lease_duration_ms,
			.renew_deadline_ms = opt->renew_deadline_ms,
			.retry_period_ms = opt->retry_period_ms,
		};
		r = kb_leader_start(d->loop, d->control_client, &lc, &leader_callbacks, d,
				    &d->elector, err);
	}
	if (r == 0) {
		start_discovery(d);
		ev_run(d->loop, 0);
		r = d->lost ? kb_err_set(err, -ENOLCK, "leader election lost") : 0;
	}
	stop_watchers(d);
	kb_info("stopped after %" PRIu64 " sessions", d->counters.sessions);
	return r;
}

/* Frees everything; what was never made is NULL or not loaded. */
static void release_all(daemon_state *d)
{
	/* The clients first: they cancel the writers' requests without calling back. */
	d->write_client = kb_kube_client_free(d->write_client);
	d->control_client = kb_kube_client_free(d->control_client);
	d->list_client = kb_kube_client_free(d->list_client);
	d->estimates = kb_estimates_free(d->estimates);
	d->writers = kb_writers_free(d->writers);
	d->rec = kb_recorder_close(d->rec);
	kb_kube_config_release(&d->kcfg);
	if (d->qconf_loaded)
		kb_queue_conf_release(&d->qconf);
	if (d->conf_loaded)
		kb_conf_release(&d->conf);
	kb_summary_release(&d->summary);
	kb_cluster_release(&d->cluster);
	if (d->loop)
		ev_loop_destroy(d->loop);
	free(d);
}

/* --healthz-address: the same paths on a second listener. 0, or -errno
 * with err naming the flag. */
static int start_health_endpoint(daemon_state *d, kb_err *err)
{
	int r = kb_endpoint_start(d->loop, d->opt->healthz_address, &endpoint_handler, d,
				  &d->health_endpoint, err);
	/* The endpoint's messages name --listen-address; this one is not it. */
	static const char listen_flag[] = "--listen-address";
	if (r < 0 && err && strncmp(err->msg, listen_flag, sizeof(listen_flag) - 1) == 0) {
		char rest[sizeof(err->msg)];
		(void)snprintf(rest, sizeof(rest), "%s", err->msg + sizeof(listen_flag) - 1);
		kb_err_set(err, r, "--healthz-address%s", rest);
	}
	return r;
}

int kb_daemon_run(const kb_daemon_options *opt, kb_err *err)
{
	daemon_state *d = calloc(1, sizeof(*d));
	if (!d)
		return kb_err_set(err, -ENOMEM, "out of memory");
	d->opt = opt;
	d->leading = !opt->leader_elect;
	kb_summary_init(&d->summary);
	kb_metrics_totals_init(&d->totals);
	kb_cluster_init(&d->cluster, opt->scheduler_name, opt->default_queue);
	int r = 0;
	for (uint32_t i = 0; i < opt->nmore_scheduler_names && r == 0; i++)
		if ((r = kb_cluster_add_scheduler_name(&d->cluster, opt->more_scheduler_names[i])) < 0)
			kb_err_set(err, r, "--scheduler-name: at most %d names", KB_MAX_SCHEDULER_NAMES);
	if (r == 0 && opt->record && !(d->rec = kb_recorder_open(opt->record, opt->record_max_bytes,
								  err)))
		r = err && err->code ? err->code : -ENOMEM;
	if (r == 0)
		r = load_configuration(d, err);
	if (r == 0)
		r = start_clients(d, err);
	if (r == 0 && opt->listen_address && opt->listen_address[0])
		r = kb_endpoint_start(d->loop, opt->listen_address, &endpoint_handler, d,
				      &d->endpoint, err);
	if (r == 0 && opt->healthz_address && opt->healthz_address[0])
		r = start_health_endpoint(d, err);
	if (r == 0)
		r = run_loop(d, err); /* stops the endpoints */
	else
		d->endpoint = kb_endpoint_stop(d->endpoint);
	release_all(d);
	return r;
}

/* daemon.c - cluster mode's loop (see daemon.h). */
#include "daemon/daemon.h"

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "cache/cluster.h"
#include "kube/kube_client.h"
#include "kube/reflector.h"
#include "kube/writers.h"
#include "queue/queue_conf.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

#define MAX_REFLECTORS 12
#define WRITE_INFLIGHT 128    /* the writers' client's requests in flight */
#define IO_COLLECT_S 0.002    /* ev_set_io_collect_interval: at most 2 ms added to an answer */
#define RESYNC_MS 10000       /* a session at least this often, for retries */
#define DISCOVERY_RETRY_S 2.0
#define HTTP_REQ_MAX 8192
#define HTTP_TIMEOUT_S 5.0
/* Leader election: client-go's defaults (kube-scheduler's). */
#define LEASE_DURATION_S 15
#define RENEW_DEADLINE_S 10
#define RETRY_PERIOD_S 2.0
#define LEASE_NAMESPACE "kube-system"

typedef struct daemon_state daemon_state;

typedef struct http_conn {
	ev_io io;
	ev_timer timer;
	daemon_state *d;
	struct http_conn *prev, *next;
	size_t len;
	char buf[HTTP_REQ_MAX];
} http_conn;

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
	kb_cluster cluster;
	kb_writers *writers;

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
	/* An early session: armed by a change to the cluster, --schedule-delay
	 * later (see poke()). */
	ev_timer soon;
	ev_signal sigterm, sigint;
	ev_io listen_io;
	int listen_fd;
	http_conn *conns;

	/* Leader election (--leader-elect). */
	struct {
		bool leader;
		bool in_flight;
		bool lost;
		char identity[300];
		char path[512];
		char *holder;      /* last holder seen */
		char *renew_time;  /* last renewTime seen */
		double observed_s; /* monotonic time the record last changed */
		double renewed_s;  /* monotonic time we last renewed */
		char *rv;          /* resourceVersion of our last write */
		bool releasing;
		ev_timer timer, release_timeout;
	} le;

	uint64_t last_generation;
	int64_t last_session_ms;
	bool had_session;
	double last_session_end_s, last_session_dur_s; /* monotonic */

	/* Metrics. */
	uint64_t sessions;
	double session_seconds_sum;
	uint64_t session_errors;
};

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	int r = kb_queue_conf_load_file(d->opt->queue_conf, &d->cluster.resnames, &fresh, &e);
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
	/* The store says which changes may make work (cache/cluster.h); the
	 * rest (echoes of our bindings and status writes, kubelets' statuses,
	 * heartbeats) wait for the period. */
	uint64_t work = d->cluster.work_generation;
	if (kb_cluster_apply(&d->cluster, obj, wall_ms()) < 0)
		kb_error("out of memory storing a %s", kind == KB_KIND_POD ? "Pod" : "object");
	if (d->cluster.work_generation != work)
		poke(d);
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	daemon_state *d = ctx;
	if (kind == KB_KIND_POD)
		kb_writers_forget_pod(d->writers, key);
	else if (kind == KB_KIND_PODGROUP)
		kb_writers_forget_podgroup(d->writers, key);
	kb_cluster_delete(&d->cluster, kind, key);
	poke(d);
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
	.error = on_refl_error,
};

static int start_reflector(daemon_state *d, const char *path, const char *api_version,
			   const char *kind)
{
	if (d->nrefl >= MAX_REFLECTORS)
		return -ENOSPC;
	kb_err err = {0};
	kb_reflector *r = kb_reflector_new(d->control_client, d->loop, path, api_version, kind,
					   &d->cluster.resnames, &handler, d, &err);
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
	int r = 0;
	r |= start_reflector(d, "/api/v1/nodes", "v1", "Node");
	r |= start_reflector(d, "/api/v1/pods", "v1", "Pod");
	r |= start_reflector(d, "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1",
			     "PriorityClass");
	if (d->qconf_loaded && d->qconf.nns > 0)
		r |= start_reflector(d, "/api/v1/namespaces", "v1", "Namespace");
	if (served->incubator) {
		r |= start_reflector(d, "/apis/scheduling.incubator.k8s.io/v1alpha1/podgroups",
				     "scheduling.incubator.k8s.io/v1alpha1", "PodGroup");
		r |= start_reflector(d, "/apis/scheduling.incubator.k8s.io/v1alpha1/queues",
				     "scheduling.incubator.k8s.io/v1alpha1", "Queue");
	}
	if (served->volcano) {
		r |= start_reflector(d, "/apis/scheduling.volcano.sh/v1beta1/podgroups",
				     "scheduling.volcano.sh/v1beta1", "PodGroup");
		r |= start_reflector(d, "/apis/scheduling.volcano.sh/v1beta1/queues",
				     "scheduling.volcano.sh/v1beta1", "Queue");
	}
	if (served->cosched)
		r |= start_reflector(d, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
				     "scheduling.x-k8s.io/v1alpha1", "PodGroup");
	if (served->cosched_old)
		r |= start_reflector(d, "/apis/scheduling.sigs.k8s.io/v1alpha1/podgroups",
				     "scheduling.sigs.k8s.io/v1alpha1", "PodGroup");
	if (r) {
		kb_error("could not start every watch; stopping");
		ev_break(d->loop, EVBREAK_ALL);
		return;
	}
	kb_info("watching %d resources (PodGroups:%s%s%s%s)", d->nrefl,
		served->incubator ? " scheduling.incubator.k8s.io" : "",
		served->volcano ? " scheduling.volcano.sh" : "",
		served->cosched ? " scheduling.x-k8s.io" : "",
		served->cosched_old ? " scheduling.sigs.k8s.io" : "");
	d->discovered = true;
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

static void run_session(daemon_state *d)
{
	double t0 = mono_s();
	int64_t now = wall_ms();
	kb_snapshot *snap; /* lent by the cluster until the next session */
	kb_err err = {0};
	int r = kb_cluster_session_snapshot(&d->cluster, &snap, &err);
	if (r < 0) {
		kb_error("snapshot: %s", err.msg[0] ? err.msg : strerror(-r));
		d->session_errors++;
		return;
	}
	kb_session ssn;
	r = kb_session_open(&ssn, snap, &d->conf, &kb_writers_effects, d->writers, now, &err);
	if (r < 0) {
		kb_error("opening a session: %s", err.msg[0] ? err.msg : strerror(-r));
		d->session_errors++;
		return;
	}
	r = kb_session_run_actions(&ssn, &err);
	if (r < 0)
		kb_error("session: %s", err.msg[0] ? err.msg : strerror(-r));
	uint32_t binds = ssn.binds, evictions = ssn.evictions, njobs = snap->njobs;
	int rc = kb_session_close(&ssn);
	if (rc < 0)
		kb_warn("session: %d side effects failed, the first: %s", ssn.effect_errors,
			ssn.first_effect_err.msg[0] ? ssn.first_effect_err.msg : strerror(-rc));
	if (r < 0 || rc < 0)
		d->session_errors++;
	double dt = mono_s() - t0;
	d->sessions++;
	d->session_seconds_sum += dt;
	d->last_generation = d->cluster.generation;
	d->last_session_ms = now;
	d->had_session = true;
	d->last_session_end_s = mono_s();
	d->last_session_dur_s = dt;
	kb_vlog(1, "session %" PRIu64 ": %u jobs, %u binds, %u evictions, %.3f ms", d->sessions, njobs,
		binds, evictions, dt * 1000.0);
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	if (d->opt->queue_conf)
		load_queue_file(d, false, NULL);
	if (!d->synced || (d->opt->leader_elect && !d->le.leader))
		return;
	ev_timer_stop(d->loop, &d->soon);
	int64_t now = wall_ms();
	if (d->had_session && d->cluster.generation == d->last_generation &&
	    now - d->last_session_ms < RESYNC_MS)
		return;
	run_session(d);
}

/* A change to the cluster: a session --schedule-delay from now instead of at
 * the next tick, so new pods do not wait out the period; changes that come
 * meanwhile ride along. Early sessions keep to a fifth of the time (no
 * sooner than four times the last session's length after its end), so a
 * stream of changes on a big cluster cannot keep the loop busy. */
static void poke(daemon_state *d)
{
	if (d->opt->delay_ms <= 0 || ev_is_active(&d->soon) || !d->synced ||
	    (d->opt->leader_elect && !d->le.leader))
		return;
	double now = mono_s(), delay = (double)d->opt->delay_ms / 1000.0;
	double earliest = d->last_session_end_s + 4 * d->last_session_dur_s;
	if (now + delay < earliest)
		delay = earliest - now;
	ev_timer_set(&d->soon, delay, 0.);
	ev_timer_start(d->loop, &d->soon);
}

static void on_soon(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	if (!d->synced || (d->opt->leader_elect && !d->le.leader))
		return;
	if (d->had_session && d->cluster.generation == d->last_generation)
		return;
	run_session(d);
}

/* ---- leader election ------------------------------------------------------------- */

/* A coordination.k8s.io/v1 Lease named after the scheduler in kube-system,
 * as client-go's leaderelection does it: try to acquire or renew every
 * RETRY_PERIOD_S; a lease whose record has not changed for its duration (by
 * our own clock, never comparing clocks) may be taken over; a leader that
 * could not renew for RENEW_DEADLINE_S stops (the Deployment restarts it).
 * Sessions run only while leading; the watches run regardless, so a new
 * leader starts with a warm cache. */

static void le_rfc3339_micro(char buf[40])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 40 - n, ".%06ldZ", ts.tv_nsec / 1000);
}

static void le_check_deadline(daemon_state *d)
{
	if (d->le.leader && mono_s() - d->le.renewed_s > RENEW_DEADLINE_S) {
		kb_error("leader election lost: lease \"%s\" not renewed for %d s", d->le.path,
			 RENEW_DEADLINE_S);
		d->le.leader = false;
		d->le.lost = true;
		ev_break(d->loop, EVBREAK_ALL);
	}
}

static void le_won(daemon_state *d)
{
	d->le.renewed_s = mono_s();
	if (!d->le.leader) {
		d->le.leader = true;
		kb_info("became leader: lease \"%s\" held by \"%s\"", d->le.path, d->le.identity);
	}
}

static void le_write_done(void *ctx, int status, const char *body, size_t len)
{
	daemon_state *d = ctx;
	d->le.in_flight = false;
	if (d->le.releasing) {
		ev_break(d->loop, EVBREAK_ALL);
		return;
	}
	if (status == 200 || status == 201) {
		json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
		const char *rv = json_string_value(
			json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
		free(d->le.rv);
		d->le.rv = rv ? strdup(rv) : NULL;
		json_decref(j);
		le_won(d);
		return;
	}
	if (status != 409)
		kb_warn("updating lease \"%s\": HTTP %d", d->le.path, status);
	le_check_deadline(d);
}

/* Writes the lease as ours. rv NULL: create. */
static void le_write(daemon_state *d, const char *rv, const char *acquire, int transitions)
{
	char now[40];
	le_rfc3339_micro(now);
	json_t *meta = json_pack("{s:s, s:s}", "name", d->opt->scheduler_name,
				 "namespace", LEASE_NAMESPACE);
	if (meta && rv)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	json_t *body = meta ? json_pack("{s:s, s:s, s:o, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
					"coordination.k8s.io/v1", "kind", "Lease", "metadata", meta,
					"spec", "holderIdentity", d->le.identity,
					"leaseDurationSeconds", LEASE_DURATION_S, "acquireTime",
					acquire ? acquire : now, "renewTime", now, "leaseTransitions",
					transitions)
			    : NULL;
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return;
	char create_path[256];
	snprintf(create_path, sizeof(create_path),
		 "/apis/coordination.k8s.io/v1/namespaces/%s/leases", LEASE_NAMESPACE);
	if (kb_kube_request(d->control_client, rv ? "PUT" : "POST", rv ? d->le.path : create_path, text,
			    NULL, le_write_done, d) == 0)
		d->le.in_flight = true;
	free(text);
}

static void le_get_done(void *ctx, int status, const char *body, size_t len)
{
	daemon_state *d = ctx;
	d->le.in_flight = false;
	if (status == 404) {
		le_write(d, NULL, NULL, 0);
		return;
	}
	json_t *j = status == 200 && body ? json_loadb(body, len, 0, NULL) : NULL;
	if (!j) {
		kb_warn("reading lease \"%s\": HTTP %d", d->le.path, status);
		le_check_deadline(d);
		return;
	}
	json_t *spec = json_object_get(j, "spec");
	const char *rv = json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	const char *renew = json_string_value(json_object_get(spec, "renewTime"));
	const char *acquire = json_string_value(json_object_get(spec, "acquireTime"));
	json_int_t dur = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
	if (dur <= 0)
		dur = LEASE_DURATION_S;
	double now = mono_s();
	bool same = holder && d->le.holder && strcmp(holder, d->le.holder) == 0 && renew &&
		    d->le.renew_time && strcmp(renew, d->le.renew_time) == 0;
	if (!same) {
		free(d->le.holder);
		free(d->le.renew_time);
		d->le.holder = holder ? strdup(holder) : NULL;
		d->le.renew_time = renew ? strdup(renew) : NULL;
		d->le.observed_s = now;
	}
	bool mine = holder && strcmp(holder, d->le.identity) == 0;
	bool free_ = !holder || !holder[0] || now - d->le.observed_s > (double)dur;
	if (rv && (mine || free_)) {
		if (!mine)
			kb_info("taking over lease \"%s\" from \"%s\"", d->le.path, holder ? holder : "");
		le_write(d, rv, mine ? acquire : NULL, (int)(mine ? transitions : transitions + 1));
	} else if (d->le.leader && !mine) {
		kb_error("leader election lost: lease \"%s\" is held by \"%s\"", d->le.path,
			 holder ? holder : "");
		d->le.leader = false;
		d->le.lost = true;
		ev_break(d->loop, EVBREAK_ALL);
	}
	json_decref(j);
}

static void on_le_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	daemon_state *d = w->data;
	le_check_deadline(d);
	if (d->le.in_flight || d->le.lost)
		return;
	if (kb_kube_request(d->control_client, "GET", d->le.path, NULL, NULL, le_get_done, d) == 0)
		d->le.in_flight = true;
}

static void le_start(daemon_state *d)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(d->le.identity, sizeof(d->le.identity), "%s_%08lx%04x", host[0] ? host : "kube-batchd",
		 (unsigned long)ts.tv_sec, (unsigned)(getpid() & 0xffff));
	snprintf(d->le.path, sizeof(d->le.path),
		 "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", LEASE_NAMESPACE,
		 d->opt->scheduler_name);
	ev_timer_init(&d->le.timer, on_le_timer, 0., RETRY_PERIOD_S);
	d->le.timer.data = d;
	ev_timer_start(d->loop, &d->le.timer);
	kb_info("leader election: lease \"%s\", identity \"%s\"", d->le.path, d->le.identity);
}

/* ---- /healthz and /metrics ------------------------------------------------------- */

static void conn_close(http_conn *c)
{
	daemon_state *d = c->d;
	ev_io_stop(d->loop, &c->io);
	ev_timer_stop(d->loop, &c->timer);
	close(c->io.fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* a client too slow for a few hundred bytes loses them */
		s += k;
		n -= (size_t)k;
	}
}

static void respond(http_conn *c, int code, const char *type, const char *body)
{
	char head[256];
	size_t n = strlen(body);
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  code, code == 200 ? "OK" : code == 404 ? "Not Found" : code == 405 ? "Method Not Allowed" : code == 503 ? "Service Unavailable" : "Bad Request",
			  type, n);
	write_all(c->io.fd, head, (size_t)hl);
	write_all(c->io.fd, body, n);
}

static char *metrics_text(daemon_state *d)
{
	kb_writer_stats ws = {0};
	if (d->writers)
		kb_writers_stats(d->writers, &ws);
	uint64_t reqs = 0, retries = 0, backlog = 0;
	kb_kube_client *clients[] = {d->write_client, d->control_client};
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++)
		if (clients[i]) {
			reqs += kb_kube_client_requests(clients[i]);
			retries += kb_kube_client_retries(clients[i]);
			backlog += kb_kube_client_backlog(clients[i]);
		}
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	if (!f)
		return NULL;
	fprintf(f,
		"# HELP kube_batchd_sessions_total Scheduling sessions run.\n"
		"# TYPE kube_batchd_sessions_total counter\n"
		"kube_batchd_sessions_total %" PRIu64 "\n"
		"# HELP kube_batchd_session_errors_total Sessions with an error or a failed side effect.\n"
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
		"# HELP kube_batchd_api_retries_total Requests the API server turned away (429) and that were sent again.\n"
		"# TYPE kube_batchd_api_retries_total counter\n"
		"kube_batchd_api_retries_total %" PRIu64 "\n"
		"# HELP kube_batchd_api_requests_pending Requests to the API server queued or in flight, watches aside.\n"
		"# TYPE kube_batchd_api_requests_pending gauge\n"
		"kube_batchd_api_requests_pending %" PRIu64 "\n"
		"# HELP kube_batchd_cache_synced 1 once every watch has listed.\n"
		"# TYPE kube_batchd_cache_synced gauge\n"
		"kube_batchd_cache_synced %d\n"
		"# HELP kube_batchd_leader 1 while this instance leads (always 1 without --leader-elect).\n"
		"# TYPE kube_batchd_leader gauge\n"
		"kube_batchd_leader %d\n",
		d->sessions, d->session_errors, d->session_seconds_sum, d->sessions, ws.binds,
		ws.bind_failures, ws.evictions, ws.eviction_failures, ws.status_writes, ws.events,
		reqs, retries, backlog, d->synced ? 1 : 0, !d->opt->leader_elect || d->le.leader ? 1 : 0);
	fclose(f);
	return s;
}

static void handle_request(http_conn *c)
{
	char method[8] = "", path[256] = "";
	if (sscanf(c->buf, "%7s %255s", method, path) != 2) {
		respond(c, 400, "text/plain", "bad request\n");
		return;
	}
	char *q = strchr(path, '?');
	if (q)
		*q = '\0';
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		respond(c, 405, "text/plain", "method not allowed\n");
	} else if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
		   strcmp(path, "/livez") == 0) {
		if (c->d->synced)
			respond(c, 200, "text/plain; charset=utf-8", "ok");
		else
			respond(c, 503, "text/plain; charset=utf-8", "cache not synced");
	} else if (strcmp(path, "/metrics") == 0) {
		char *m = metrics_text(c->d);
		respond(c, m ? 200 : 503, "text/plain; version=0.0.4; charset=utf-8",
			m ? m : "out of memory\n");
		free(m);
	} else {
		respond(c, 404, "text/plain", "not found\n");
	}
}

static void on_conn_read(struct ev_loop *loop, ev_io *w, int revents)
{
	http_conn *c = w->data;
	ssize_t k = read(w->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		conn_close(c);
		return;
	}
	c->len += (size_t)k;
	c->buf[c->len] = '\0';
	if (strstr(c->buf, "\r\n\r\n") || strstr(c->buf, "\n\n")) {
		handle_request(c);
		conn_close(c);
	} else if (c->len >= sizeof(c->buf) - 1) {
		respond(c, 400, "text/plain", "request too large\n");
		conn_close(c);
	}
}

static void on_conn_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	conn_close(w->data);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	daemon_state *d = w->data;
	int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	http_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	ev_io_init(&c->io, on_conn_read, fd, EV_READ);
	c->io.data = c;
	ev_timer_init(&c->timer, on_conn_timeout, HTTP_TIMEOUT_S, 0.);
	c->timer.data = c;
	c->next = d->conns;
	if (d->conns)
		d->conns->prev = c;
	d->conns = c;
	ev_io_start(loop, &c->io);
	ev_timer_start(loop, &c->timer);
}

/* "host:port", "[v6]:port" or ":port". */
static int http_listen(daemon_state *d, const char *addr, kb_err *err)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1])
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": expected HOST:PORT", addr);
	size_t hl = (size_t)(colon - addr);
	if (hl >= sizeof(host))
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": host too long", addr);
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (g != 0)
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": %s", addr, gai_strerror(g));
	int fd = -1, e = 0;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return kb_err_set(err, -(e ? e : EADDRNOTAVAIL), "--listen-address \"%s\": %s", addr,
				  strerror(e ? e : EADDRNOTAVAIL));
	d->listen_fd = fd;
	ev_io_init(&d->listen_io, on_accept, fd, EV_READ);
	d->listen_io.data = d;
	ev_io_start(d->loop, &d->listen_io);
	kb_info("serving /healthz and /metrics on %s", addr);
	return 0;
}

/* ---- start, stop ----------------------------------------------------------------- */

static void on_release_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

/* Gives the lease up (holder "", as client-go's ReleaseOnCancel) so that a
 * successor need not wait for it to expire; waits at most 1 s for the answer. */
static bool le_release(daemon_state *d)
{
	if (!d->opt->leader_elect || !d->le.leader || !d->le.rv || d->le.releasing)
		return false;
	char now[40];
	le_rfc3339_micro(now);
	json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:s, s:s}}", "apiVersion",
				 "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
				 d->opt->scheduler_name,
				 "namespace", LEASE_NAMESPACE, "resourceVersion", d->le.rv, "spec",
				 "holderIdentity", "", "leaseDurationSeconds", 1, "acquireTime", now,
				 "renewTime", now);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return false;
	int r = kb_kube_request(d->control_client, "PUT", d->le.path, text, NULL, le_write_done, d);
	free(text);
	if (r < 0)
		return false;
	d->le.releasing = true;
	d->le.leader = false;
	ev_timer_stop(d->loop, &d->le.timer);
	ev_timer_stop(d->loop, &d->tick);
	ev_timer_stop(d->loop, &d->soon);
	ev_timer_init(&d->le.release_timeout, on_release_timeout, 1., 0.);
	ev_timer_start(d->loop, &d->le.release_timeout);
	kb_info("releasing lease \"%s\"", d->le.path);
	return true;
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	daemon_state *d = w->data;
	kb_info("received %s, stopping", w->signum == SIGTERM ? "SIGTERM" : "SIGINT");
	if (!le_release(d))
		ev_break(loop, EVBREAK_ALL);
}

static int load_kube_config(const kb_daemon_options *o, kb_kube_config *ret, kb_err *err)
{
	const char *path = o->kubeconfig;
	if (!path || !path[0]) {
		kb_err e = {0};
		if (kb_kube_config_in_cluster(ret, &e) == 0) {
			if (o->master && o->master[0]) {
				char *m = strdup(o->master);
				if (!m)
					return kb_err_set(err, -ENOMEM, "out of memory");
				free(ret->server);
				ret->server = m;
			}
			return 0;
		}
		path = getenv("KUBECONFIG");
	}
	if (path && path[0])
		return kb_kube_config_load(path, o->master, ret, err);
	if (o->master && o->master[0]) {
		memset(ret, 0, sizeof(*ret));
		if (!(ret->server = strdup(o->master)))
			return kb_err_set(err, -ENOMEM, "out of memory");
		return 0;
	}
	return kb_err_set(err, -ENOENT,
			  "no API server: give --kubeconfig or --master, set KUBECONFIG, or run in a cluster");
}

int kb_daemon_run(const kb_daemon_options *opt, kb_err *err)
{
	daemon_state *d = calloc(1, sizeof(*d));
	if (!d)
		return kb_err_set(err, -ENOMEM, "out of memory");
	d->opt = opt;
	d->listen_fd = -1;
	const char *name = opt->scheduler_name;
	const char *queue = opt->default_queue;
	kb_cluster_init(&d->cluster, name, queue);
	int r;

	r = opt->scheduler_conf ? kb_conf_load_file(opt->scheduler_conf, opt->registry, &d->conf, err)
				: kb_conf_load_default(opt->registry, &d->conf, err);
	if (r < 0)
		goto out_cluster;
	d->conf_loaded = true;
	if (opt->queue_conf && (r = load_queue_file(d, true, err)) < 0)
		goto out_conf;
	if ((r = load_kube_config(opt, &d->kcfg, err)) < 0)
		goto out_qconf;

	d->loop = ev_default_loop(EVFLAG_AUTO);
	if (!d->loop) {
		r = kb_err_set(err, -ENOMEM, "cannot create the event loop");
		goto out_kcfg;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Gather the sockets that became ready for up to IO_COLLECT_S before
	 * handling them: in a burst of bindings the daemon then wakes for many
	 * answers and watch events at once instead of for each. Two bursts each
	 * way: 4,216-5,091 context switches instead of 6,921-7,538, and 170-190
	 * instead of 199-221 us of CPU per binding (bench/README.md §2). */
	ev_set_io_collect_interval(d->loop, IO_COLLECT_S);
	kb_kube_client_options copt = {
		.qps = opt->qps > 0 ? opt->qps : 200,
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
	d->control_client = d->write_client ? kb_kube_client_new(d->loop, &d->kcfg, &copt, err) : NULL;
	if (!d->control_client) {
		r = err && err->code ? err->code : -EINVAL;
		goto out_client;
	}
	if (!(d->writers = kb_writers_new(d->write_client, &d->cluster, name, err))) {
		r = -ENOMEM;
		goto out_client;
	}
	if (opt->listen_address && opt->listen_address[0] &&
	    (r = http_listen(d, opt->listen_address, err)) < 0)
		goto out_writers;

	ev_signal_init(&d->sigterm, on_signal, SIGTERM);
	ev_signal_init(&d->sigint, on_signal, SIGINT);
	d->sigterm.data = d->sigint.data = d;
	ev_signal_start(d->loop, &d->sigterm);
	ev_signal_start(d->loop, &d->sigint);
	double period = (double)(opt->period_ms > 0 ? opt->period_ms : 1000) / 1000.0;
	ev_timer_init(&d->tick, on_tick, period, period);
	d->tick.data = d;
	ev_timer_start(d->loop, &d->tick);
	ev_timer_init(&d->discovery_retry, on_discovery_retry, DISCOVERY_RETRY_S, 0.);
	d->discovery_retry.data = d;
	ev_init(&d->soon, on_soon);
	d->soon.data = d;

	kb_info("kube-batchd starting: scheduler name \"%s\", API server %s, period %.3f s, "
		"delay after a change %.3f s", name, d->kcfg.server ? d->kcfg.server : "?", period,
		(double)opt->delay_ms / 1000.0);
	start_discovery(d);
	if (opt->leader_elect)
		le_start(d);
	ev_run(d->loop, 0);
	r = d->le.lost ? kb_err_set(err, -ENOLCK, "leader election lost") : 0;
	if (opt->leader_elect) {
		ev_timer_stop(d->loop, &d->le.timer);
		ev_timer_stop(d->loop, &d->le.release_timeout);
	}
	free(d->le.rv);
	free(d->le.holder);
	free(d->le.renew_time);

	ev_timer_stop(d->loop, &d->tick);
	ev_timer_stop(d->loop, &d->soon);
	ev_timer_stop(d->loop, &d->discovery_retry);
	ev_signal_stop(d->loop, &d->sigterm);
	ev_signal_stop(d->loop, &d->sigint);
	while (d->conns)
		conn_close(d->conns);
	if (d->listen_fd >= 0) {
		ev_io_stop(d->loop, &d->listen_io);
		close(d->listen_fd);
	}
	for (int i = 0; i < d->nrefl; i++)
		d->refl[i] = kb_reflector_free(d->refl[i]);
	kb_info("stopped after %" PRIu64 " sessions", d->sessions);
out_writers:
	/* The client first: it cancels the writers' requests without calling back. */
	d->write_client = kb_kube_client_free(d->write_client);
	d->writers = kb_writers_free(d->writers);
out_client:
	d->write_client = kb_kube_client_free(d->write_client);
	d->control_client = kb_kube_client_free(d->control_client);
out_kcfg:
	kb_kube_config_release(&d->kcfg);
out_qconf:
	if (d->qconf_loaded)
		kb_queue_conf_release(&d->qconf);
out_conf:
	kb_conf_release(&d->conf);
out_cluster:
	kb_cluster_release(&d->cluster);
	if (d->loop)
		ev_loop_destroy(d->loop);
	free(d);
	return r;
}

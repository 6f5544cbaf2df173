/* leader.c - leader election on a Lease (see leader.h).
 *
 * One timer (the retry period) reads the lease; its answer decides whether
 * to write it (create when absent, renew when ours, take over when free) or
 * to notice that someone else leads. At most one request is in flight. The
 * deadline is checked on every tick and after every failed request.
 */
#include "daemon/leader.h"

#include <errno.h>
#include <ev.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"

#define RELEASE_TIMEOUT_S 1.0
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/%s/leases"

struct kb_leader {
	struct ev_loop *loop;
	kb_kube_client *client;
	kb_leader_callbacks cb;
	void *ctx;
	char *name;
	char *namespace_;
	int lease_s;         /* leaseDurationSeconds written: whole seconds, >= 1 */
	double lease_dur_s;  /* the lease duration, renew deadline and retry period */
	double renew_dl_s;
	double retry_s;
	bool leader;
	bool in_flight;
	bool lost;
	bool releasing, released;
	char identity[300];
	char path[512];       /* the lease */
	char collection[512]; /* the namespace's leases, to create it */
	char *holder;      /* last holder seen */
	char *renew_time;  /* last renewTime seen */
	double observed_s; /* monotonic time the record last changed */
	double renewed_s;  /* monotonic time we last renewed */
	char *rv;          /* resourceVersion of our last write */
	ev_timer timer, release_timeout;
};

/* Now as "2006-01-02T15:04:05.000000Z" (a MicroTime). 0, or -EOVERFLOW
 * when the clock reads a time that has no such form. */
static int rfc3339_micro(char buf[40])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	if (!gmtime_r(&ts.tv_sec, &tm))
		return -EOVERFLOW;
	size_t n = strftime(buf, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n == 0)
		return -EOVERFLOW;
	int k = snprintf(buf + n, 40 - n, ".%06ldZ", ts.tv_nsec / 1000);
	return k < 0 || (size_t)k >= 40 - n ? -EOVERFLOW : 0;
}

/* Leadership is over: no more attempts, and the owner is told. */
static void lose(kb_leader *l)
{
	l->leader = false;
	l->lost = true;
	ev_timer_stop(l->loop, &l->timer);
	l->cb.lost(l->ctx);
}

static void check_deadline(kb_leader *l)
{
	if (l->leader && kb_mono_s() - l->renewed_s > l->renew_dl_s) {
		kb_error("leader election lost: lease \"%s\" not renewed for %.3g s (the renew "
			 "deadline)",
			 l->path, l->renew_dl_s);
		lose(l);
	}
}

static void won(kb_leader *l)
{
	l->renewed_s = kb_mono_s();
	if (!l->leader) {
		l->leader = true;
		kb_info("became leader: lease \"%s\" held by \"%s\"", l->path, l->identity);
		if (l->cb.gained)
			l->cb.gained(l->ctx);
	}
}

static void release_over(kb_leader *l)
{
	if (l->released)
		return;
	l->released = true;
	ev_timer_stop(l->loop, &l->release_timeout);
	l->cb.released(l->ctx);
}

static void write_done(void *ctx, int status, const char *body, size_t len)
{
	kb_leader *l = ctx;
	l->in_flight = false;
	if (l->releasing) {
		release_over(l);
		return;
	}
	if (status == 200 || status == 201) {
		json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
		const char *rv = json_string_value(
			json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
		free(l->rv);
		l->rv = rv ? strdup(rv) : NULL;
		json_decref(j);
		won(l);
		return;
	}
	if (status != 409)
		kb_warn("updating lease \"%s\": HTTP %d", l->path, status);
	check_deadline(l);
}

/* Writes the lease as ours. rv NULL: create. 0, or -ENOMEM / -EOVERFLOW /
 * kb_kube_request's error. */
static int write_lease(kb_leader *l, const char *rv, const char *acquire, int transitions)
{
	char now[40];
	int r = rfc3339_micro(now);
	if (r < 0)
		return r;
	json_t *meta = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->namespace_);
	if (meta && rv)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	json_t *body = NULL;
	if (meta)
		body = json_pack("{s:s, s:s, s:o, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
				 "coordination.k8s.io/v1", "kind", "Lease", "metadata", meta,
				 "spec", "holderIdentity", l->identity, "leaseDurationSeconds",
				 l->lease_s, "acquireTime", acquire ? acquire : now,
				 "renewTime", now, "leaseTransitions", transitions);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return -ENOMEM;
	r = kb_kube_request(l->client, rv ? "PUT" : "POST", rv ? l->path : l->collection, text, NULL,
			    write_done, l);
	free(text);
	if (r < 0)
		return r;
	l->in_flight = true;
	return 0;
}

static void write_or_warn(kb_leader *l, const char *rv, const char *acquire, int transitions)
{
	int r = write_lease(l, rv, acquire, transitions);
	if (r < 0) {
		kb_warn("updating lease \"%s\": %s", l->path, strerror(-r));
		check_deadline(l);
	}
}

/* Remembers the record read (holder, renewTime) and when it last changed. */
static void observe(kb_leader *l, const char *holder, const char *renew, double now)
{
	bool same = holder && l->holder && strcmp(holder, l->holder) == 0 && renew &&
		    l->renew_time && strcmp(renew, l->renew_time) == 0;
	if (same)
		return;
	free(l->holder);
	free(l->renew_time);
	l->holder = holder ? strdup(holder) : NULL;
	l->renew_time = renew ? strdup(renew) : NULL;
	l->observed_s = now;
}

/* The lease as read: renew it, take it over, or notice it is lost. */
static void decide(kb_leader *l, json_t *j)
{
	json_t *spec = json_object_get(j, "spec");
	json_t *meta = json_object_get(j, "metadata");
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	const char *renew = json_string_value(json_object_get(spec, "renewTime"));
	const char *acquire = json_string_value(json_object_get(spec, "acquireTime"));
	json_int_t dur = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
	double dur_s = dur > 0 ? (double)dur : l->lease_dur_s;
	double now = kb_mono_s();
	observe(l, holder, renew, now);
	bool mine = holder && strcmp(holder, l->identity) == 0;
	bool vacant = !holder || !holder[0] || now - l->observed_s > dur_s;
	if (rv && (mine || vacant)) {
		if (!mine)
			kb_info("taking over lease \"%s\" from \"%s\"", l->path,
				holder ? holder : "");
		write_or_warn(l, rv, mine ? acquire : NULL,
			      (int)(mine ? transitions : transitions + 1));
	} else if (l->leader && !mine) {
		kb_error("leader election lost: lease \"%s\" is held by \"%s\"", l->path,
			 holder ? holder : "");
		lose(l);
	}
}

static void get_done(void *ctx, int status, const char *body, size_t len)
{
	kb_leader *l = ctx;
	l->in_flight = false;
	if (l->releasing || l->lost)
		return; /* a renewal now would undo the release */
	if (status == 404) {
		write_or_warn(l, NULL, NULL, 0);
		return;
	}
	json_t *j = status == 200 && body ? json_loadb(body, len, 0, NULL) : NULL;
	if (!j) {
		kb_warn("reading lease \"%s\": HTTP %d", l->path, status);
		check_deadline(l);
		return;
	}
	decide(l, j);
	json_decref(j);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_leader *l = w->data;
	check_deadline(l);
	if (l->in_flight || l->lost)
		return;
	if (kb_kube_request(l->client, "GET", l->path, NULL, NULL, get_done, l) == 0)
		l->in_flight = true;
}

static void on_release_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	release_over(w->data);
}

/* "<hostname>_<seconds><pid>" and the lease's path; -ENAMETOOLONG when the
 * name makes the path longer than l->path. */
static int name_self(kb_leader *l, kb_err *err)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0'; /* named after the program instead */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int n = snprintf(l->identity, sizeof(l->identity), "%s_%08lx%04x",
			 host[0] ? host : "kube-batchd", (unsigned long)ts.tv_sec,
			 (unsigned)(getpid() & 0xffff));
	if (n < 0 || (size_t)n >= sizeof(l->identity))
		return kb_err_set(err, -ENAMETOOLONG, "leader election: identity too long");
	n = snprintf(l->collection, sizeof(l->collection), LEASES_PATH, l->namespace_);
	if (n >= 0 && (size_t)n < sizeof(l->collection))
		n = snprintf(l->path, sizeof(l->path), "%s/%s", l->collection, l->name);
	if (n < 0 || (size_t)n >= sizeof(l->path) || (size_t)n >= sizeof(l->collection))
		return kb_err_set(err, -ENAMETOOLONG,
				  "leader election: lease \"%.64s/%.64s...\" too long", l->namespace_,
				  l->name);
	return 0;
}

/* The durations in force (a zero takes client-go's default), checked as
 * client-go checks them. 0, or -EINVAL with err. */
static int leader_timing(const kb_leader_config *cfg, kb_leader *l, kb_err *err)
{
	int64_t lease = cfg->lease_duration_ms ? cfg->lease_duration_ms : KB_LEADER_DEFAULT_LEASE_MS;
	int64_t renew = cfg->renew_deadline_ms ? cfg->renew_deadline_ms : KB_LEADER_DEFAULT_RENEW_MS;
	int64_t retry = cfg->retry_period_ms ? cfg->retry_period_ms : KB_LEADER_DEFAULT_RETRY_MS;
	if (lease <= 0 || renew <= 0 || retry <= 0 || lease <= renew || renew <= retry)
		return kb_err_set(err, -EINVAL,
				  "leader election: lease duration %lld ms, renew deadline %lld ms, "
				  "retry period %lld ms: each must be > 0, the lease duration > the "
				  "renew deadline > the retry period",
				  (long long)lease, (long long)renew, (long long)retry);
	l->lease_dur_s = (double)lease / 1000.0;
	l->renew_dl_s = (double)renew / 1000.0;
	l->retry_s = (double)retry / 1000.0;
	l->lease_s = lease >= 2000 ? (int)(lease / 1000 > 1000000 ? 1000000 : lease / 1000) : 1;
	return 0;
}

int kb_leader_start(struct ev_loop *loop, kb_kube_client *client, const kb_leader_config *cfg,
		    const kb_leader_callbacks *cb, void *ctx, kb_leader **ret, kb_err *err)
{
	*ret = NULL;
	if (!loop || !client || !cfg || !cfg->name || !cfg->name[0] || !cb || !cb->lost ||
	    !cb->released)
		return kb_err_set(err, -EINVAL, "leader election: no lease name or callbacks");
	const char *ns = cfg->namespace_ && cfg->namespace_[0] ? cfg->namespace_
							       : KB_LEADER_DEFAULT_NAMESPACE;
	kb_leader *l = calloc(1, sizeof(*l));
	if (!l)
		return kb_err_set(err, -ENOMEM, "out of memory");
	int r = leader_timing(cfg, l, err);
	if (r < 0) {
		free(l);
		return r;
	}
	if (!(l->name = strdup(cfg->name)) || !(l->namespace_ = strdup(ns))) {
		free(l->name);
		free(l);
		return kb_err_set(err, -ENOMEM, "out of memory");
	}
	l->loop = loop;
	l->client = client;
	l->cb = *cb;
	l->ctx = ctx;
	r = name_self(l, err);
	if (r < 0) {
		kb_leader_free(l);
		return r;
	}
	ev_timer_init(&l->timer, on_timer, 0., l->retry_s);
	l->timer.data = l;
	ev_init(&l->release_timeout, on_release_timeout);
	l->release_timeout.data = l;
	ev_timer_start(loop, &l->timer);
	kb_info("leader election: lease \"%s\", identity \"%s\", lease duration %.3g s, renew "
		"deadline %.3g s, retry period %.3g s",
		l->path, l->identity, l->lease_dur_s, l->renew_dl_s, l->retry_s);
	*ret = l;
	return 0;
}

bool kb_leader_release(kb_leader *l)
{
	if (!l || !l->leader || !l->rv || l->releasing)
		return false;
	char now[40];
	if (rfc3339_micro(now) < 0)
		return false;
	json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:s, s:s}}",
				 "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
				 "metadata", "name", l->name, "namespace", l->namespace_,
				 "resourceVersion", l->rv, "spec", "holderIdentity", "",
				 "leaseDurationSeconds", 1, "acquireTime", now, "renewTime", now);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return false;
	int r = kb_kube_request(l->client, "PUT", l->path, text, NULL, write_done, l);
	free(text);
	if (r < 0)
		return false;
	l->releasing = true;
	l->leader = false;
	ev_timer_stop(l->loop, &l->timer);
	ev_timer_set(&l->release_timeout, RELEASE_TIMEOUT_S, 0.);
	ev_timer_start(l->loop, &l->release_timeout);
	kb_info("releasing lease \"%s\"", l->path);
	return true;
}

kb_leader *kb_leader_free(kb_leader *l)
{
	if (!l)
		return NULL;
	ev_timer_stop(l->loop, &l->timer);
	ev_timer_stop(l->loop, &l->release_timeout);
	kb_kube_cancel(l->client, l);
	free(l->name);
	free(l->namespace_);
	free(l->rv);
	free(l->holder);
	free(l->renew_time);
	free(l);
	return NULL;
}

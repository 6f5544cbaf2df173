/*
 * test_client.c - the API client and the reflectors against a real
 * kube-apiserver (tests/cluster/up), run by tests/e2e/run-client-test.
 *
 *   test_client SCHEDULER_KUBECONFIG ADMIN_KUBECONFIG
 *
 * The scheduler's kubeconfig has exactly kube-batchd's production RBAC
 * (deploy/rbac.yaml): it lists and watches, binds and patches status. The
 * admin's creates and deletes the objects the reflectors must see. The two
 * clients run on two different ev loops, so the admin can change the
 * cluster while the reflectors are frozen (that is how a deletion is made
 * to be found by a relist instead of a watch event).
 *
 * Prints one "PASS: ..." or "FAIL: ..." line per check; exits 0 when all
 * pass, 1 otherwise.
 */
#include <errno.h>
#include <ev.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/finished_pods.h"
#include "kube/kube_client.h"
#include "kube/reflector.h"

static char NS[64]; /* "kbc-e2e-PID": runs on one cluster do not collide */
#define WAIT 30.0 /* seconds any single expectation may take */

static int failures;

__attribute__((format(printf, 2, 3))) static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ", ok ? "PASS" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	if (!ok)
		failures++;
	return ok;
}

/* A formatted string in one of 16 rotating buffers (enough for one check). */
__attribute__((format(printf, 1, 2))) static const char *F(const char *fmt, ...)
{
	static char bufs[16][2048];
	static int next;
	char *b = bufs[next++ % 16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(bufs[0]), fmt, ap);
	va_end(ap);
	return b;
}

/* "NS/name", kept for the whole run (freed by keys_free). */
static char *keys[64];
static size_t nkeys;

static const char *K(const char *name)
{
	char *k;
	if (nkeys == sizeof(keys) / sizeof(keys[0]) || asprintf(&k, "%s/%s", NS, name) < 0)
		abort();
	return keys[nkeys++] = k;
}

static void keys_free(void)
{
	while (nkeys > 0)
		free(keys[--nkeys]);
}

/* ---- running a loop until something happens ----------------------------- */

typedef bool (*pred_fn)(void *ctx);

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	*(bool *)w->data = true;
}

/* Runs loop until pred(ctx) holds or `seconds` pass. Returns pred's value. */
static bool run_until(struct ev_loop *loop, pred_fn pred, void *ctx, double seconds)
{
	bool expired = false;
	ev_timer t;
	ev_timer_init(&t, timeout_cb, seconds, 0.);
	t.data = &expired;
	ev_timer_start(loop, &t);
	while (!pred(ctx) && !expired)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &t);
	return pred(ctx);
}

static bool never(void *ctx)
{
	return false;
}

/* ---- synchronous requests ---------------------------------------------------- */

typedef struct reply {
	bool done;
	int status;
	char *body;
} reply;

static void reply_done(void *ctx, int status, const char *body, size_t len)
{
	reply *r = ctx;
	r->done = true;
	r->status = status;
	r->body = strndup(body ? body : "", len);
}

static bool reply_ready(void *ctx)
{
	return ((reply *)ctx)->done;
}

/* One request, waited for; returns the status (-ETIMEDOUT if none came). */
static int call(struct ev_loop *loop, kb_kube_client *c, const char *method, const char *path,
		const char *body, const char *content_type, char **ret_body)
{
	reply r = {0};
	int e = kb_kube_request(c, method, path, body, content_type, reply_done, &r);
	if (e < 0)
		return e;
	if (!run_until(loop, reply_ready, &r, WAIT)) {
		kb_kube_cancel(c, &r);
		return -ETIMEDOUT;
	}
	if (ret_body)
		*ret_body = r.body;
	else
		free(r.body);
	return r.status;
}

/* ---- what a reflector delivered ------------------------------------------------ */

#define MAX_SEEN 512

typedef struct seen_obj {
	char key[256];
	int upserts;
	bool present;
	char rv[64];
	char node[64];         /* pods: spec.nodeName */
	char label[64];        /* label "e2e" */
	size_t annotation_len; /* annotation "e2e/big" */
	int min_member;        /* podgroups */
} seen_obj;

typedef struct seen {
	const char *name;
	bool synced;
	int synced_calls;
	int upserts, removes, errors;
	char last_error[512];
	seen_obj objs[MAX_SEEN];
	size_t n;
} seen;

static seen_obj *seen_get(seen *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->objs[i].key, key) == 0)
			return &s->objs[i];
	if (s->n == MAX_SEEN)
		return NULL;
	seen_obj *o = &s->objs[s->n++];
	memset(o, 0, sizeof(*o));
	snprintf(o->key, sizeof(o->key), "%s", key);
	return o;
}

static void on_upsert(void *ctx, kb_object *obj)
{
	seen *s = ctx;
	s->upserts++;
	seen_obj *o = seen_get(s, obj->meta.key);
	if (o) {
		o->upserts++;
		o->present = true;
		snprintf(o->rv, sizeof(o->rv), "%s", obj->meta.resource_version);
		const char *l = kb_labels_get(&obj->meta.labels, "e2e");
		snprintf(o->label, sizeof(o->label), "%s", l ? l : "");
		const char *a = kb_labels_get(&obj->meta.annotations, "e2e/big");
		o->annotation_len = a ? strlen(a) : 0;
		if (obj->kind == KB_KIND_POD)
			snprintf(o->node, sizeof(o->node), "%s",
				 obj->u.pod.node_name ? obj->u.pod.node_name : "");
		if (obj->kind == KB_KIND_PODGROUP)
			o->min_member = obj->u.podgroup.min_member;
	}
	kb_object_free(obj);
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	seen *s = ctx;
	s->removes++;
	seen_obj *o = seen_get(s, key);
	if (o)
		o->present = false;
}

static void on_synced(void *ctx, const char *path)
{
	seen *s = ctx;
	s->synced = true;
	s->synced_calls++;
}

static void on_error(void *ctx, const char *path, const kb_err *err)
{
	seen *s = ctx;
	s->errors++;
	snprintf(s->last_error, sizeof(s->last_error), "%s", err->msg);
	fprintf(stderr, "  (%s reflector: %s)\n", s->name, err->msg);
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.error = on_error,
};

/* A reflector that frees itself in its first upsert. */
typedef struct selfish {
	kb_reflector *r;
	int calls;
} selfish;

static void selfish_upsert(void *ctx, kb_object *obj)
{
	selfish *s = ctx;
	s->calls++;
	kb_object_free(obj);
	s->r = kb_reflector_free(s->r);
}

static void selfish_remove(void *ctx, kb_kind kind, const char *key)
{
	((selfish *)ctx)->calls++;
}

static const kb_reflector_handler selfish_handler = {
	.upsert = selfish_upsert,
	.remove = selfish_remove,
};

/* Predicates over `seen`. */
typedef struct expect {
	seen *s;
	const char *key;
	bool present;
	const char *node, *label;
	size_t annotation_len;
	int min_upserts;
} expect;

static bool expect_holds(void *ctx)
{
	expect *x = ctx;
	seen_obj *o = NULL;
	for (size_t i = 0; i < x->s->n; i++)
		if (strcmp(x->s->objs[i].key, x->key) == 0)
			o = &x->s->objs[i];
	if (!o)
		return !x->present;
	if (o->present != x->present)
		return false;
	if (!x->present)
		return true;
	return (!x->node || strcmp(o->node, x->node) == 0) &&
	       (!x->label || strcmp(o->label, x->label) == 0) &&
	       (!x->annotation_len || o->annotation_len == x->annotation_len) &&
	       o->upserts >= x->min_upserts;
}

static bool both_synced(void *ctx)
{
	seen **s = ctx;
	return s[0]->synced && s[1]->synced && s[2]->synced;
}

typedef struct stats_wait {
	kb_reflector *r;
	uint64_t min_watches, min_relists, min_lists;
} stats_wait;

static bool stats_reached(void *ctx)
{
	stats_wait *w = ctx;
	kb_reflector_stats st;
	kb_reflector_get_stats(w->r, &st);
	return st.watches >= w->min_watches && st.relists_gone >= w->min_relists &&
	       st.lists >= w->min_lists;
}

/* ---- discovery ----------------------------------------------------------------- */

typedef struct disc {
	bool done;
	int status;
	kb_served served;
} disc;

static void disc_done(void *ctx, int status, const kb_served *served)
{
	disc *d = ctx;
	d->done = true;
	d->status = status;
	d->served = *served;
}

static bool disc_ready(void *ctx)
{
	return ((disc *)ctx)->done;
}

/* ---- rate limiter ------------------------------------------------------------------ */

typedef struct burst {
	int done, ok;
	int want; /* requests sent: the burst is over when all answered */
} burst;

static void burst_done(void *ctx, int status, const char *body, size_t len)
{
	burst *b = ctx;
	b->done++;
	b->ok += status == 200;
}

static bool burst_finished(void *ctx)
{
	const burst *b = ctx;
	return b->done == b->want;
}

static void created_done(void *ctx, int status, const char *body, size_t len)
{
	burst *b = ctx;
	b->done++;
	b->ok += status == 201;
}

static void never_called(void *ctx, int status, const char *body, size_t len)
{
	*(bool *)ctx = true;
}

/* ---- objects ------------------------------------------------------------------------ */

static const char *node_json(const char *name, const char *annotation)
{
	static char buf[300 * 1024];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"e2e\":\"yes\"}%s%s%s},"
		 "\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
		 "\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}",
		 name, annotation ? ",\"annotations\":{\"e2e/big\":\"" : "",
		 annotation ? annotation : "", annotation ? "\"}" : "");
	return buf;
}

static const char *pod_json(const char *name)
{
	static char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"%s\",\"labels\":{\"e2e\":\"one\"},"
		 "\"annotations\":{\"scheduling.k8s.io/group-name\":\"pg1\"}},"
		 "\"spec\":{\"schedulerName\":\"kube-batchd\",\"containers\":[{\"name\":\"c\","
		 "\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
		 name, NS);
	return buf;
}

/* ---- the finished pods' LIST (kube/finished_pods.h) ------------------------------ */

typedef struct fin_wait {
	bool listed;
	int errors;
} fin_wait;

static void fin_listed(void *ctx)
{
	((fin_wait *)ctx)->listed = true;
}

static void fin_error(void *ctx, const char *path, const kb_err *err)
{
	((fin_wait *)ctx)->errors++;
}

static bool fin_ready(void *ctx)
{
	return ((fin_wait *)ctx)->listed;
}

static const kb_finished_pods_handler fin_handler = {.listed = fin_listed, .error = fin_error};

/* Lists the finished pods with the scheduler's rights under cap; *kept and
 * *dropped say what it kept; returns how many of "fin-0".."fin-2" it kept. */
static int list_finished(struct ev_loop *loop, kb_kube_client *sc, uint32_t cap, size_t *kept,
			 uint32_t *dropped)
{
	fin_wait w = {0};
	kb_err err = {0};
	kb_finished_pods *f = kb_finished_pods_list(loop, sc, NULL, cap, &fin_handler, &w, &err);
	int ours = -1;
	*kept = 0;
	*dropped = 0;
	if (f && run_until(loop, fin_ready, &w, WAIT)) {
		kb_object *const *pods = kb_finished_pods_items(f, kept);
		ours = 0;
		for (size_t i = 0; i < *kept; i++)
			ours += strncmp(pods[i]->meta.key, K("fin-"), strlen(K("fin-"))) == 0;
		*dropped = kb_finished_pods_dropped(f);
	}
	kb_finished_pods_free(f);
	return ours;
}

/* Three pods finish (Succeeded, their container's finishedAt set) and one
 * fails: the list keeps the three, and under a cap of 2 keeps two and
 * counts the third. */
static void finished_pods_cap(struct ev_loop *loop, kb_kube_client *sc, struct ev_loop *aloop,
			      kb_kube_client *ac)
{
	int made = 0, done = 0;
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "fin-%d", i);
		made += call(aloop, ac, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json(name),
			     NULL, NULL) == 201;
		const char *status =
			i < 3 ? "{\"status\":{\"phase\":\"Succeeded\",\"startTime\":\"2026-01-01T00:00:00Z\","
				"\"containerStatuses\":[{\"name\":\"c\",\"image\":\"busybox\",\"imageID\":\"\","
				"\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":0,"
				"\"startedAt\":\"2026-01-01T00:00:00Z\",\"finishedAt\":\"2026-01-01T00:10:00Z\"}}}]}}"
			      : "{\"status\":{\"phase\":\"Failed\"}}";
		done += call(aloop, ac, "PATCH", F("/api/v1/namespaces/%s/pods/%s/status", NS, name),
			     status, "application/merge-patch+json", NULL) == 200;
	}
	check(made == 4 && done == 4, "admin makes fin-0..2 Succeeded and fin-3 Failed: %d %d",
	      made, done);
	size_t kept;
	uint32_t dropped;
	int ours = list_finished(loop, sc, 1000, &kept, &dropped);
	check(ours == 3 && dropped == 0,
	      "the finished pods' LIST keeps the 3 that finished well (of ours %d, kept %zu, dropped %u)",
	      ours, kept, dropped);
	size_t all = kept;
	ours = list_finished(loop, sc, (uint32_t)all - 1, &kept, &dropped);
	check(ours >= 0 && kept == all - 1 && dropped == 1,
	      "under a cap one short it keeps %zu and counts 1 dropped (kept %zu, dropped %u)",
	      all - 1, kept, dropped);
	/* Gone again: the cases after this one count the pods of NS. */
	for (int i = 0; i < 4; i++)
		(void)call(aloop, ac, "DELETE",
			   F("/api/v1/namespaces/%s/pods/fin-%d?gracePeriodSeconds=0", NS, i), NULL,
			   NULL, NULL);
}

/* ---- sync at any size (issue 18) ---------------------------------------------- */

/* Creates n pods "bulk-0".."bulk-(n-1)" in NS as the admin, 64 in flight.
 * Returns how many the server created (201). */
static int create_bulk_pods(struct ev_loop *aloop, kb_kube_client *ac, int n)
{
	burst b = {.want = n};
	int created = 0;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "bulk-%d", i);
		kb_kube_request(ac, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json(name), NULL,
				created_done, &b);
	}
	run_until(aloop, burst_finished, &b, 120);
	created = b.ok;
	return created;
}

typedef struct count_wait {
	seen *s;
	int present;
} count_wait;

static int count_present(const seen *s)
{
	int n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->objs[i].present;
	return n;
}

static bool count_reached(void *ctx)
{
	count_wait *w = ctx;
	return w->s->synced && count_present(w->s) == w->present;
}

/* The etcd revision now (POST /v3/kv/range through etcd's gRPC gateway), or -1. */
static long long etcd_revision(struct ev_loop *eloop, kb_kube_client *ec)
{
	char *body = NULL;
	/* key "\0" (base64 "AA==") with range_end "\0": every key, count only. */
	int st = call(eloop, ec, "POST", "/v3/kv/range",
		      "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"count_only\":true}", NULL, &body);
	long long rev = -1;
	const char *p = body ? strstr(body, "\"revision\":\"") : NULL;
	if (st == 200 && p)
		rev = strtoll(p + strlen("\"revision\":\""), NULL, 10);
	free(body);
	return rev;
}

static void sync_at_any_size(struct ev_loop *loop, kb_kube_client *sc, struct ev_loop *aloop,
			     kb_kube_client *ac, kb_resnames *rn, const char *etcd_url)
{
	kb_err err = {0};
	int st;
	char *body = NULL;
	/* The cap of this test: 128 KiB. A page of 50 of these pods fits in it;
	 * all of them do not. */
	const size_t cap = 128 * 1024;
	const int npods = 400, page = 50;
	int made = create_bulk_pods(aloop, ac, npods);
	check(made == npods, "admin creates %d pods in %s: %d created", npods, NS, made);

	/* What the reflector used to ask first: resourceVersion=0 with a limit.
	 * The watch cache answers it whole, ignoring limit. */
	st = call(loop, sc, "GET", F("/api/v1/namespaces/%s/pods?limit=%d&resourceVersion=0", NS, page),
		  NULL, NULL, &body);
	size_t old_len = body ? strlen(body) : 0;
	/* Whole: no continue token and past the limit. (Not "every pod": the
	 * watch cache may not have seen the last creations yet.) */
	bool whole = body && !strstr(body, "\"continue\":\"") &&
		     strstr(body, F("\"name\":\"bulk-%d\"", page));
	check(st == 200 && whole && old_len > cap,
	      "the old first LIST (limit=%d&resourceVersion=0) comes back whole from the watch "
	      "cache: %zu bytes, over the test's cap of %zu (status %d)",
	      page, old_len, cap, st);
	free(body);
	body = NULL;

	/* The reflector pages: consistent LIST, limit 50, the pod field selector. */
	static seen big = {.name = "paged pods"};
	kb_reflector_options opt = {.field_selector = KB_POD_FIELD_SELECTOR, .page_size = page,
				    .max_bytes = cap};
	kb_reflector *r = kb_reflector_new(sc, loop, F("/api/v1/namespaces/%s/pods", NS), "v1", "Pod",
					   rn, &opt, &handler, &big, &err);
	count_wait cw = {.s = &big, .present = npods};
	bool ok = r && run_until(loop, count_reached, &cw, WAIT);
	kb_reflector_stats st1 = {0};
	if (r)
		kb_reflector_get_stats(r, &st1);
	check(ok && st1.lists == 1 && st1.list_pages >= (uint64_t)(npods / page) &&
		      st1.too_big == 0 && big.errors == 0,
	      "a paged LIST under a %zu-byte cap syncs all %d pods (present %d) in one LIST of "
	      "%llu pages, nothing too big (%llu), %d errors",
	      cap, npods, count_present(&big), (unsigned long long)st1.list_pages,
	      (unsigned long long)st1.too_big, big.errors);

	/* Pods that finish leave the cache: the watch with the field selector
	 * delivers them as DELETED. */
	st = call(aloop, ac, "PATCH", F("/api/v1/namespaces/%s/pods/bulk-0/status", NS),
		  "{\"status\":{\"phase\":\"Succeeded\"}}", "application/merge-patch+json", NULL);
	int st2 = call(aloop, ac, "PATCH", F("/api/v1/namespaces/%s/pods/bulk-1/status", NS),
		       "{\"status\":{\"phase\":\"Failed\"}}", "application/merge-patch+json", NULL);
	check(st == 200 && st2 == 200, "admin sets bulk-0 Succeeded and bulk-1 Failed: %d %d", st,
	      st2);
	expect x0 = {.s = &big, .key = K("bulk-0"), .present = false};
	expect x1 = {.s = &big, .key = K("bulk-1"), .present = false};
	ok = r && run_until(loop, expect_holds, &x0, WAIT) && run_until(loop, expect_holds, &x1, WAIT);
	check(ok && count_present(&big) == npods - 2,
	      "the Succeeded and the Failed pod leave the cache (watch DELETED); %d present",
	      count_present(&big));
	/* A relist does not bring them back: the LIST is filtered too. */
	kb_reflector_test_expire(r);
	stats_wait sw = {.r = r, .min_lists = 2, .min_watches = st1.watches + 2};
	run_until(loop, stats_reached, &sw, WAIT);
	run_until(loop, never, NULL, 0.5);
	check(count_present(&big) == npods - 2 && expect_holds(&x0),
	      "after a relist the finished pods stay out (%d present)", count_present(&big));
	r = kb_reflector_free(r);

	/* An expired continue token: freeze the LIST after its first page,
	 * compact etcd past the list's revision, resume. */
	kb_kube_config ecfg = {.server = (char *)etcd_url};
	struct ev_loop *eloop = ev_loop_new(EVFLAG_AUTO);
	kb_kube_client *ec = etcd_url ? kb_kube_client_new(eloop, &ecfg, NULL, &err) : NULL;
	if (check(ec != NULL, "a client for etcd at %s", etcd_url ? etcd_url : "(none given)")) {
		static seen ex = {.name = "expiring list"};
		kb_reflector_options o2 = {.page_size = page};
		r = kb_reflector_new(sc, loop, F("/api/v1/namespaces/%s/pods", NS), "v1", "Pod", rn, &o2,
				     &handler, &ex, &err);
		/* list_pages counts requests sent: 2 once page 1 was applied. */
		bool frozen = false;
		double t0 = ev_time();
		while (ev_time() - t0 < WAIT) {
			kb_reflector_stats s;
			kb_reflector_get_stats(r, &s);
			if (s.list_pages >= 2) {
				frozen = true;
				break;
			}
			ev_run(loop, EVRUN_ONCE);
		}
		/* A write, so that the current revision passes the list's. */
		int stw = call(aloop, ac, "PATCH", F("/api/v1/namespaces/%s/pods/bulk-2", NS),
			       "{\"metadata\":{\"labels\":{\"e2e\":\"compact\"}}}",
			       "application/merge-patch+json", NULL);
		long long rev = etcd_revision(eloop, ec);
		st = rev > 0 ? call(eloop, ec, "POST", "/v3/kv/compaction",
				    F("{\"revision\":\"%lld\",\"physical\":true}", rev), NULL, NULL)
			     : -1;
		check(frozen && stw == 200 && st == 200,
		      "LIST frozen after its first page; a write (%d), then etcd compacted to "
		      "revision %lld: %d", stw, rev, st);
		double t1 = ev_time();
		/* No field selector here: the finished pods are listed too. */
		count_wait cw2 = {.s = &ex, .present = npods};
		bool synced = run_until(loop, count_reached, &cw2, WAIT);
		double took = ev_time() - t1;
		kb_reflector_stats s2;
		kb_reflector_get_stats(r, &s2);
		check(synced && s2.list_expired == 1 && s2.lists == 2 && s2.retries >= 1 && took >= 0.35,
		      "the expired continue token (410) restarts the LIST once, after a backoff: "
		      "expired %llu, lists %llu, retries %llu, synced %d pods after %.2f s",
		      (unsigned long long)s2.list_expired, (unsigned long long)s2.lists,
		      (unsigned long long)s2.retries, count_present(&ex), took);
		check(ex.synced_calls == 1, "synced once (%d)", ex.synced_calls);
		kb_reflector_free(r);
	}
	kb_kube_client_free(ec);
	ev_loop_destroy(eloop);

	/* A watch event larger than the cap: a node with a 200 KB annotation
	 * under a 100 KiB cap. The watch ends, relists follow with a backoff,
	 * each reported with the limit, until the node is gone. */
	{
		static seen nn = {.name = "capped nodes"};
		const size_t ncap = 100 * 1024;
		kb_reflector_options o3 = {.page_size = 4, .max_bytes = ncap};
		call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-huge", NULL, NULL, NULL);
		st = call(aloop, ac, "POST", "/api/v1/nodes", node_json("kbc-node-small", NULL), NULL,
			  NULL);
		r = kb_reflector_new(sc, loop, "/api/v1/nodes", "v1", "Node", rn, &o3, &handler, &nn,
				     &err);
		expect xs = {.s = &nn, .key = "kbc-node-small", .present = true};
		check(st == 201 && r && run_until(loop, expect_holds, &xs, WAIT),
		      "a node reflector with a %zu-byte cap syncs kbc-node-small", ncap);
		size_t bigsz = 200 * 1024;
		char *a = malloc(bigsz + 1);
		for (size_t i = 0; i < bigsz; i++)
			a[i] = (char)('a' + i % 26);
		a[bigsz] = '\0';
		int errs0 = nn.errors;
		st = call(aloop, ac, "POST", "/api/v1/nodes", node_json("kbc-node-huge", a), NULL, NULL);
		free(a);
		kb_reflector_stats b4, af;
		kb_reflector_get_stats(r, &b4);
		run_until(loop, never, NULL, 3.5);
		kb_reflector_get_stats(r, &af);
		uint64_t lists = af.lists - b4.lists;
		check(st == 201 && af.too_big >= 2 && lists >= 1 && lists <= 4 &&
			      nn.errors - errs0 >= 2 && strstr(nn.last_error, "limit 102400 bytes") &&
			      strstr(nn.last_error, "\"kbc-node-huge\""),
		      "a 200 KB event under the cap: %llu too big (the event, then pages), %llu "
		      "relists in 3.5 s (backoff), %d errors reported, the last: %s",
		      (unsigned long long)(af.too_big - b4.too_big), (unsigned long long)lists,
		      nn.errors - errs0, nn.last_error);
		expect xh = {.s = &nn, .key = "kbc-node-huge", .present = true};
		check(!expect_holds(&xh), "the node too large is not in the cache");
		st = call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-huge", NULL, NULL, NULL);
		int st4 = call(aloop, ac, "PATCH", "/api/v1/nodes/kbc-node-small",
			       "{\"metadata\":{\"labels\":{\"e2e\":\"after\"}}}",
			       "application/merge-patch+json", NULL);
		xs.label = "after";
		kb_reflector_get_stats(r, &b4);
		check(st == 200 && st4 == 200 && run_until(loop, expect_holds, &xs, WAIT),
		      "once it is deleted a relist goes through and the watch delivers again "
		      "(kbc-node-small e2e=after)");
		kb_reflector_free(r);
		call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-small", NULL, NULL, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s SCHEDULER_KUBECONFIG ADMIN_KUBECONFIG [ETCD_URL]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(NS, sizeof(NS), "kbc-e2e-%d", (int)getpid());
	kb_err err = {0};
	kb_kube_config scfg = {0}, acfg = {0};
	int e = kb_kube_config_load(argv[1], NULL, &scfg, &err);
	if (!check(e == 0, "load scheduler kubeconfig %s (%s)", argv[1], e ? err.msg : "ok"))
		return 1;
	e = kb_kube_config_load(argv[2], NULL, &acfg, &err);
	if (!check(e == 0, "load admin kubeconfig %s (%s)", argv[2], e ? err.msg : "ok"))
		return 1;
	check(scfg.ca_data && strstr(scfg.ca_data, "BEGIN CERTIFICATE") && scfg.token &&
		      strncmp(scfg.server, "https://127.0.0.1:", 18) == 0,
	      "kubeconfig gives server %s, the CA from certificate-authority-data, a token",
	      scfg.server);

	/* The scheduler's client and reflectors run on `loop`, the admin's
	 * client on `aloop`. */
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ev_loop *aloop = ev_loop_new(EVFLAG_AUTO);
	kb_kube_client *sc = kb_kube_client_new(loop, &scfg, NULL, &err);
	kb_kube_client *ac = kb_kube_client_new(aloop, &acfg, NULL, &err);
	if (!check(sc && ac, "create clients (%s)", sc && ac ? "ok" : err.msg))
		return 1;

	char *body = NULL;
	int st;

	/* Discovery. */
	disc d = {0};
	kb_discover(sc, disc_done, &d);
	run_until(loop, disc_ready, &d, WAIT);
	check(d.done && d.status == 200 && d.served.incubator && d.served.volcano &&
		      d.served.cosched && d.served.cosched_old,
	      "discovery of /apis as the scheduler: status %d, incubator %d volcano %d "
	      "x-k8s.io %d sigs.k8s.io %d",
	      d.status, d.served.incubator, d.served.volcano, d.served.cosched,
	      d.served.cosched_old);

	/* The scheduler's privileges are the restricted ones. */
	st = call(loop, sc, "GET", "/api/v1/nodes?limit=1", NULL, NULL, NULL);
	check(st == 200, "scheduler lists nodes: %d", st);
	st = call(loop, sc, "GET", "/api/v1/namespaces/kube-system/secrets", NULL, NULL, NULL);
	check(st == 403, "scheduler may not list secrets: %d", st);

	/* Set-up as the admin. */
	st = call(aloop, ac, "POST", "/api/v1/namespaces",
		  F("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", NS),
		  NULL, NULL);
	check(st == 201, "admin creates namespace %s: %d", NS, st);
	/* Nodes left by an earlier, failed run on the same cluster. */
	call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-1", NULL, NULL, NULL);
	call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-big", NULL, NULL, NULL);
	st = call(aloop, ac, "POST", "/api/v1/nodes", node_json("kbc-node-1", NULL), NULL, NULL);
	check(st == 201, "admin creates node kbc-node-1: %d", st);
	st = call(aloop, ac, "POST",
		  F("/apis/scheduling.incubator.k8s.io/v1alpha1/namespaces/%s/podgroups", NS),
		  F("{\"apiVersion\":\"scheduling.incubator.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"pg1\",\"namespace\":\"%s\"},\"spec\":{\"minMember\":3}}", NS),
		  NULL, NULL);
	check(st == 201, "admin creates PodGroup %s/pg1: %d", NS, st);

	/* A plain request cancelled by freeing its client: no callback. */
	{
		kb_kube_client *tmp = kb_kube_client_new(loop, &scfg, NULL, &err);
		bool called = false;
		kb_kube_request(tmp, "GET", "/api/v1/nodes", NULL, NULL, never_called, &called);
		run_until(loop, never, NULL, 0.05);
		kb_kube_client_free(tmp);
		run_until(loop, never, NULL, 0.3);
		check(!called, "freeing a client with a request in flight calls nothing");
	}

	/* Reflectors (as the scheduler), with 2 s watches so that the server ends
	 * them often. */
	static seen nodes = {.name = "nodes"}, pods = {.name = "pods"}, pgs = {.name = "podgroups"};
	kb_resnames rn;
	kb_resnames_init(&rn);
	kb_reflector *rnodes = kb_reflector_new(sc, loop, "/api/v1/nodes", "v1", "Node", &rn,
						NULL, &handler, &nodes, &err);
	kb_reflector *rpods = kb_reflector_new(sc, loop, "/api/v1/pods", "v1", "Pod", &rn, NULL, &handler,
					       &pods, &err);
	kb_reflector *rpgs = kb_reflector_new(
		sc, loop, "/apis/scheduling.incubator.k8s.io/v1alpha1/podgroups",
		"scheduling.incubator.k8s.io/v1alpha1", "PodGroup", &rn, NULL, &handler, &pgs, &err);
	if (!check(rnodes && rpods && rpgs, "start reflectors (%s)",
		   rnodes && rpods && rpgs ? "ok" : err.msg))
		return 1;
	kb_reflector_set_watch_timeout(rnodes, 2);
	kb_reflector_set_watch_timeout(rpods, 2);
	kb_reflector_set_watch_timeout(rpgs, 2);
	seen *all[3] = {&nodes, &pods, &pgs};
	run_until(loop, both_synced, all, WAIT);
	check(both_synced(all) && kb_reflector_synced(rnodes) && kb_reflector_synced(rpods),
	      "reflectors on nodes, pods and podgroups sync");
	expect x = {.s = &nodes, .key = "kbc-node-1", .present = true, .label = "yes"};
	check(expect_holds(&x), "the LIST delivered node kbc-node-1 (label e2e=yes)");
	expect xpg = {.s = &pgs, .key = K("pg1"), .present = true};
	check(expect_holds(&xpg) && seen_get(&pgs, xpg.key)->min_member == 3,
	      "the LIST delivered PodGroup %s with minMember 3 (items lack "
	      "apiVersion/kind: kb_object_decode_as)", xpg.key);

	/* ADDED */
	st = call(aloop, ac, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json("p1"), NULL, NULL);
	check(st == 201, "admin creates pod %s/p1: %d", NS, st);
	x = (expect){.s = &pods, .key = K("p1"), .present = true, .label = "one"};
	check(run_until(loop, expect_holds, &x, WAIT), "watch delivers ADDED %s", x.key);

	/* MODIFIED (merge patch as the admin) */
	st = call(aloop, ac, "PATCH", F("/api/v1/namespaces/%s/pods/p1", NS),
		  "{\"metadata\":{\"labels\":{\"e2e\":\"two\"}}}", "application/merge-patch+json",
		  NULL);
	check(st == 200, "admin merge-patches the label of %s/p1: %d", NS, st);
	x.label = "two";
	check(run_until(loop, expect_holds, &x, WAIT), "watch delivers MODIFIED %s (e2e=two)", x.key);

	/* The scheduler binds (its own POST) and patches status. */
	st = call(loop, sc, "POST", F("/api/v1/namespaces/%s/pods/p1/binding", NS),
		  F("{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"%s\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"kbc-node-1\"}}", NS),
		  NULL, NULL);
	check(st == 201, "scheduler binds %s/p1 to kbc-node-1: %d", NS, st);
	x.node = "kbc-node-1";
	check(run_until(loop, expect_holds, &x, WAIT), "watch delivers the binding (nodeName)");
	st = call(loop, sc, "PATCH", F("/api/v1/namespaces/%s/pods/p1/status", NS),
		  "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
		  "application/strategic-merge-patch+json", &body);
	check(st == 200, "scheduler strategic-merge-patches pods/status: %d", st);
	free(body);
	body = NULL;
	st = call(loop, sc, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json("nope"), NULL, NULL);
	check(st == 403, "scheduler may not create pods: %d", st);

	/* DELETED */
	st = call(aloop, ac, "DELETE", F("/api/v1/namespaces/%s/pods/p1?gracePeriodSeconds=0", NS),
		  NULL, NULL, NULL);
	check(st == 200, "admin deletes %s/p1 (grace 0): %d", NS, st);
	x = (expect){.s = &pods, .key = K("p1"), .present = false};
	check(run_until(loop, expect_holds, &x, WAIT), "watch delivers DELETED %s", x.key);

	/* A watch event larger than any single read: a node with a 200 KB
	 * annotation, split across many writes and joined into one line. */
	{
		size_t big = 200 * 1024;
		char *a = malloc(big + 1);
		for (size_t i = 0; i < big; i++)
			a[i] = (char)('a' + i % 26);
		a[big] = '\0';
		st = call(aloop, ac, "POST", "/api/v1/nodes", node_json("kbc-node-big", a), NULL,
			  NULL);
		free(a);
		check(st == 201, "admin creates node kbc-node-big (200 KB annotation): %d", st);
		expect xb = {.s = &nodes, .key = "kbc-node-big", .present = true, .annotation_len = big};
		check(run_until(loop, expect_holds, &xb, WAIT),
		      "watch delivers the 200 KB event as one line, decoded whole");
		st = call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-big", NULL, NULL, NULL);
		xb = (expect){.s = &nodes, .key = "kbc-node-big", .present = false};
		check(st == 200 && run_until(loop, expect_holds, &xb, WAIT),
		      "watch delivers DELETED kbc-node-big: %d", st);
	}

	/* Watches the server ends (timeoutSeconds=2) resume from the last
	 * resourceVersion without a LIST. */
	kb_reflector_stats before, after;
	kb_reflector_get_stats(rpods, &before);
	int pod_upserts = pods.upserts;
	stats_wait sw = {.r = rpods, .min_watches = before.watches + 3};
	run_until(loop, stats_reached, &sw, 20);
	kb_reflector_get_stats(rpods, &after);
	check(after.watches >= before.watches + 3 && after.lists == before.lists && after.lists == 1,
	      "server-closed watches resume: watches %llu -> %llu, lists stay %llu -> %llu",
	      (unsigned long long)before.watches, (unsigned long long)after.watches,
	      (unsigned long long)before.lists, (unsigned long long)after.lists);
	check(pods.upserts == pod_upserts,
	      "no object re-delivered by the restarts (upserts %d -> %d)", pod_upserts,
	      pods.upserts);
	st = call(aloop, ac, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json("p2"), NULL, NULL);
	x = (expect){.s = &pods, .key = K("p2"), .present = true};
	check(st == 201 && run_until(loop, expect_holds, &x, WAIT),
	      "after the restarts the watch still delivers ADDED %s", x.key);

	/* 410 Gone: restart the watch from resourceVersion 1, then, while the
	 * scheduler's loop is frozen, delete p2 and create p3. The relist must
	 * report p2 removed (it never sees a watch event for it) and p3 added. */
	kb_reflector_get_stats(rpods, &before);
	kb_reflector_test_expire(rpods);
	st = call(aloop, ac, "DELETE", F("/api/v1/namespaces/%s/pods/p2?gracePeriodSeconds=0", NS),
		  NULL, NULL, NULL);
	int st3 =
		call(aloop, ac, "POST", F("/api/v1/namespaces/%s/pods", NS), pod_json("p3"), NULL, NULL);
	check(st == 200 && st3 == 201, "admin deletes p2 and creates p3 while the reflector waits");
	sw = (stats_wait){.r = rpods, .min_relists = before.relists_gone + 1,
			  .min_lists = before.lists + 1, .min_watches = before.watches + 2};
	run_until(loop, stats_reached, &sw, WAIT);
	kb_reflector_get_stats(rpods, &after);
	check(after.relists_gone == before.relists_gone + 1 && after.lists == before.lists + 1,
	      "410 Gone from the server starts one relist (relists %llu, lists %llu)",
	      (unsigned long long)after.relists_gone, (unsigned long long)after.lists);
	x = (expect){.s = &pods, .key = K("p2"), .present = false};
	expect x3 = {.s = &pods, .key = K("p3"), .present = true};
	check(run_until(loop, expect_holds, &x, WAIT) && run_until(loop, expect_holds, &x3, WAIT),
	      "the relist reports p2 removed and p3 added");
	check(pods.synced_calls == 1, "synced was called once (%d)", pods.synced_calls);

	/* A handler may free its reflector, in the middle of a LIST page. */
	{
		selfish sf = {0};
		sf.r = kb_reflector_new(sc, loop, "/api/v1/pods", "v1", "Pod", &rn, NULL, &selfish_handler,
					&sf, &err);
		run_until(loop, never, NULL, 1.0);
		check(sf.r == NULL && sf.calls == 1,
		      "a handler that frees its reflector gets no more calls (%d)", sf.calls);
	}

	/* The client counts requests. */
	uint64_t nreq = kb_kube_client_requests(sc);
	check(nreq >= 15, "the scheduler's client counted %llu requests",
	      (unsigned long long)nreq);

	/* Rate limiter: qps 4, burst 1: 5 requests take at least 4 * 0.25 s. */
	{
		kb_kube_client_options o = {.qps = 4, .burst = 1, .timeout_ms = 10000};
		kb_kube_client *slow = kb_kube_client_new(aloop, &scfg, &o, &err);
		burst b = {.want = 5};
		double t0 = ev_time();
		for (int i = 0; i < b.want; i++)
			kb_kube_request(slow, "GET", "/api/v1/nodes?limit=1", NULL, NULL, burst_done, &b);
		run_until(aloop, burst_finished, &b, WAIT);
		double took = ev_time() - t0;
		check(b.ok == 5 && took >= 0.95 && took < 5,
		      "rate limiter qps=4 burst=1: 5 requests in %.2f s (ok %d)", took, b.ok);
		kb_kube_client_free(slow);
	}

	/* Throttled by API Priority and Fairness: a priority level of a few
	 * seats that rejects rather than queues. The client sends every request
	 * again after the server's Retry-After until it is served. */
	{
		const char *plc =
			"{\"apiVersion\":\"flowcontrol.apiserver.k8s.io/v1\",\"kind\":\"PriorityLevelConfiguration\","
			"\"metadata\":{\"name\":\"kbc-tiny\"},\"spec\":{\"type\":\"Limited\",\"limited\":"
			"{\"nominalConcurrencyShares\":1,\"lendablePercent\":0,\"borrowingLimitPercent\":0,"
			"\"limitResponse\":{\"type\":\"Reject\"}}}}";
		const char *fs =
			"{\"apiVersion\":\"flowcontrol.apiserver.k8s.io/v1\",\"kind\":\"FlowSchema\","
			"\"metadata\":{\"name\":\"kbc-tiny\"},\"spec\":{\"priorityLevelConfiguration\":"
			"{\"name\":\"kbc-tiny\"},\"matchingPrecedence\":500,\"distinguisherMethod\":{\"type\":\"ByUser\"},"
			"\"rules\":[{\"subjects\":[{\"kind\":\"User\",\"user\":{\"name\":\"kube-batchd-scheduler\"}}],"
			"\"resourceRules\":[{\"verbs\":[\"*\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"],"
			"\"clusterScope\":true,\"namespaces\":[\"*\"]}]}]}}";
		int s1 = call(aloop, ac, "POST", "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
			      plc, NULL, NULL);
		int s2 = call(aloop, ac, "POST", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", fs, NULL,
			      NULL);
		check(s1 == 201 && s2 == 201, "admin limits the scheduler's user to a few seats: %d %d", s1,
		      s2);
		run_until(aloop, never, NULL, 2.0); /* the server takes up the new configuration */
		kb_kube_client_options o = {.qps = 10000, .burst = 10000}; /* 64 in flight */
		kb_kube_client *busy = kb_kube_client_new(aloop, &scfg, &o, &err);
		burst b = {.want = 150};
		for (int i = 0; i < b.want; i++)
			kb_kube_request(busy, "GET", "/api/v1/pods", NULL, NULL, burst_done, &b);
		run_until(aloop, burst_finished, &b, 60);
		uint64_t retries = kb_kube_client_retries(busy);
		check(b.ok == b.want && retries > 0,
		      "throttled with 429: all %d of %d requests served after %llu retries", b.ok, b.want,
		      (unsigned long long)retries);
		kb_kube_client_free(busy);
		call(aloop, ac, "DELETE", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/kbc-tiny", NULL,
		     NULL, NULL);
		call(aloop, ac, "DELETE",
		     "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/kbc-tiny", NULL, NULL,
		     NULL);
	}

	/* Clean up. */
	kb_reflector_free(rnodes);
	kb_reflector_free(rpods);
	kb_reflector_free(rpgs);
	check(nodes.errors + pods.errors + pgs.errors <= 2,
	      "reflectors reported %d errors (the expected 410 relist only)",
	      nodes.errors + pods.errors + pgs.errors);

	/* Last: it compacts etcd, which would send the reflectors above 410s.
	 * It counts the pods of NS: p3 goes first. */
	call(aloop, ac, "DELETE", F("/api/v1/namespaces/%s/pods/p3?gracePeriodSeconds=0", NS), NULL,
	     NULL, NULL);
	finished_pods_cap(loop, sc, aloop, ac);
	sync_at_any_size(loop, sc, aloop, ac, &rn, argc == 4 ? argv[3] : NULL);

	call(aloop, ac, "DELETE", "/api/v1/nodes/kbc-node-1", NULL, NULL, NULL);
	st = call(aloop, ac, "DELETE", F("/api/v1/namespaces/%s", NS), NULL, NULL, NULL);
	check(st == 200 || st == 202, "admin deletes namespace %s: %d", NS, st);
	kb_kube_client_free(sc);
	kb_kube_client_free(ac);
	ev_loop_destroy(loop);
	ev_loop_destroy(aloop);
	kb_kube_config_release(&scfg);
	kb_kube_config_release(&acfg);
	keys_free();

	printf("%s: %d check(s) failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

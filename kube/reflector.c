/*
 * reflector.c - list + watch one resource path into the cache (see
 * reflector.h).
 *
 * States: LISTING (a page request in flight) -> WATCHING (a stream open)
 * -> back to WATCHING when the stream ends cleanly (from the last
 * resourceVersion seen, no relist), to LISTING on "410 Gone", or to
 * WAITING (the retry timer) on an error, which then retries what failed.
 *
 * Deletions during a relist: the reflector keeps the keys it has delivered
 * (its own copies), each stamped with the generation of the LIST that last
 * saw it; after the last page every key with an older stamp is reported
 * removed. The keys live in a dense array indexed by a hash map, so a
 * removal is O(1) and the sweep is O(keys).
 *
 * Watch lines and LIST pages are parsed as they arrive by the JSON loader
 * (base/json_doc.h), which builds the node tree the decoder takes, the
 * same one the YAML loader builds for manifests. Every callback of the
 * handler may free the reflector: `busy` counts the callbacks on the stack
 * and a free during one is finished when they unwind.
 */
#include "kube/reflector.h"

#include <errno.h>
#include <ev.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"
#include "base/vec.h"
#include "base/json_doc.h"
#include "base/yaml_doc.h"
#include "kube/list_pager.h"

/* The JSON loader's own cap (base/json_doc.h), and the client's on a line. */
#define MAX_BYTES_DEFAULT ((size_t)64 << 20)
#define BACKOFF_MIN 0.5
#define BACKOFF_MAX 30.0
#define JITTER 0.2
/* client-go: timeoutSeconds of a watch is random in [5 min, 10 min). */
#define WATCH_TIMEOUT_MIN 300
/* A watch that ends cleanly sooner than this with no event is retried with
 * backoff (client-go's "very short watch"). */
#define SHORT_WATCH_SECONDS 1.0
/* A watch ended by the client's low-speed limit (kube_client.c: no byte for
 * 180 s) after at least this long is treated as a normal end. */
#define QUIET_WATCH_SECONDS 60.0
#define RV_MAX 128

typedef enum rstate {
	ST_IDLE,
	ST_LISTING,
	ST_WATCHING,
	ST_WAITING,
} rstate;

typedef struct known_key {
	char *key;
	uint64_t gen; /* the LIST generation that last saw it (or a watch event) */
} known_key;

struct kb_reflector {
	kb_kube_client *c;
	kb_kube_client *lc; /* the LIST pages' client: c unless the options say */
	struct ev_loop *loop;
	char *path, *api_version, *kind;
	kb_kind kkind;
	kb_resnames *resnames;
	kb_reflector_handler h;
	void *ctx;

	rstate state;
	char rv[RV_MAX];    /* last resourceVersion seen; "" before the first list */
	kb_list_pager pager; /* the LIST's pages and the watch's URL */
	size_t max_bytes;   /* the largest page or watch event parsed */
	uint64_t gen;       /* current LIST generation */
	bool relist_next;   /* the retry timer relists (else it re-watches) */
	bool synced;
	kb_kube_stream *stream;
	ev_tstamp watch_started;
	uint64_t watch_events;
	int watch_timeout;  /* seconds; 0: random as client-go */

	ev_timer retry;
	double backoff;
	uint64_t rng;

	KB_VEC(known_key) keys;
	kb_strmap key_index; /* key -> index into keys */

	kb_reflector_stats stats;
	int busy;  /* callbacks on the stack */
	bool dead; /* freed during a callback */
};

static void start_list(kb_reflector *r);
static void start_watch(kb_reflector *r);

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_next(kb_reflector *r)
{
	/* xorshift64* */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 0x2545F4914F6CDD1DULL;
}

/* A uniform double in [0, 1). */
static double rng_unit(kb_reflector *r)
{
	return (double)(rng_next(r) >> 11) / (double)(1ULL << 53);
}

static void report(kb_reflector *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(kb_reflector *r, int code, const char *fmt, ...)
{
	if (!r->h.error || r->dead)
		return;
	kb_err e = {0};
	va_list ap;
	va_start(ap, fmt);
	char msg[KB_ERR_MSG_MAX];
	(void)vsnprintf(msg, sizeof(msg), fmt, ap); /* an error text: a long one is cut */
	va_end(ap);
	kb_err_set(&e, code < 0 ? code : -EIO, "%s", msg);
	r->h.error(r->ctx, r->path, &e);
}

/* Copies a scalar's text into buf (RV_MAX); false when absent or too long. */
static bool scalar_to(const kb_yaml_node *n, char *buf, size_t size)
{
	const char *s = kb_yaml_str(n);
	if (!s || !*s || strlen(s) >= size)
		return false;
	memcpy(buf, s, strlen(s) + 1);
	return true;
}

/* "ns/name" or "name" from an object's metadata; false when there is no name. */
static bool key_of(const kb_yaml_node *obj, char *buf, size_t size)
{
	const kb_yaml_node *meta = kb_yaml_get(obj, "metadata");
	const char *name = kb_yaml_str(kb_yaml_get(meta, "name"));
	const char *ns = kb_yaml_str(kb_yaml_get(meta, "namespace"));
	if (!name || !*name)
		return false;
	int n = ns && *ns ? snprintf(buf, size, "%s/%s", ns, name) : snprintf(buf, size, "%s", name);
	return n > 0 && (size_t)n < size;
}

/* ---- the set of delivered keys -------------------------------------------- */

static int keys_mark(kb_reflector *r, const char *key)
{
	int64_t i;
	if (kb_strmap_get(&r->key_index, key, &i)) {
		r->keys.v[i].gen = r->gen;
		return 0;
	}
	known_key k = {.key = strdup(key), .gen = r->gen};
	if (!k.key)
		return -ENOMEM;
	if (KB_VEC_PUSH(&r->keys, k) < 0) {
		free(k.key);
		return -ENOMEM;
	}
	if (kb_strmap_put(&r->key_index, r->keys.v[r->keys.n - 1].key, (int64_t)r->keys.n - 1) < 0) {
		free(k.key);
		r->keys.n--;
		return -ENOMEM;
	}
	return 0;
}

/* Stamps a key already delivered with the current generation. */
static void keys_touch(kb_reflector *r, const char *key)
{
	int64_t i;
	if (kb_strmap_get(&r->key_index, key, &i))
		r->keys.v[i].gen = r->gen;
}

/* Removes key i (swapping the last one into its place). */
static void keys_remove_at(kb_reflector *r, size_t i)
{
	kb_strmap_del(&r->key_index, r->keys.v[i].key);
	free(r->keys.v[i].key);
	size_t last = r->keys.n - 1;
	if (i != last) {
		r->keys.v[i] = r->keys.v[last];
		kb_strmap_put(&r->key_index, r->keys.v[i].key, (int64_t)i); /* no growth: replaces */
	}
	r->keys.n--;
}

static bool keys_remove(kb_reflector *r, const char *key)
{
	int64_t i;
	if (!kb_strmap_get(&r->key_index, key, &i))
		return false;
	keys_remove_at(r, (size_t)i);
	return true;
}

/* ---- lifecycle around callbacks ----------------------------------------- */

/* Cancels the reflector's requests on both its clients (no callback). */
static void cancel_requests(kb_reflector *r)
{
	kb_kube_cancel(r->c, r);
	if (r->lc != r->c)
		kb_kube_cancel(r->lc, r);
}

static void really_free(kb_reflector *r)
{
	cancel_requests(r);
	ev_timer_stop(r->loop, &r->retry);
	for (size_t i = 0; i < r->keys.n; i++)
		free(r->keys.v[i].key);
	KB_VEC_RELEASE(&r->keys);
	kb_strmap_release(&r->key_index);
	kb_list_pager_release(&r->pager);
	free(r->path);
	free(r->api_version);
	free(r->kind);
	free(r);
}

static void enter(kb_reflector *r)
{
	r->busy++;
}

/* Returns false when the reflector was freed meanwhile (and is gone now). */
static bool leave(kb_reflector *r)
{
	if (--r->busy > 0 || !r->dead)
		return !r->dead;
	really_free(r);
	return false;
}

/* ---- retries ---------------------------------------------------------------- */

static void retry_later(kb_reflector *r, bool relist)
{
	if (r->dead)
		return;
	r->state = ST_WAITING;
	r->relist_next = relist;
	double d = r->backoff * (1.0 - JITTER + 2.0 * JITTER * rng_unit(r));
	r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : r->backoff * 2;
	r->stats.retries++;
	ev_timer_stop(r->loop, &r->retry);
	ev_timer_set(&r->retry, d, 0.);
	ev_timer_start(r->loop, &r->retry);
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_reflector *r = w->data;
	enter(r);
	if (r->relist_next || !r->rv[0])
		start_list(r);
	else
		start_watch(r);
	leave(r);
}

/* ---- LIST ------------------------------------------------------------------ */

static void list_done(void *ctx, int status, const char *body, size_t len);

/* Sends the request for url (a page); on failure reports it and retries
 * the LIST after a backoff. Frees url. */
static void request_page(kb_reflector *r, char *url, int e)
{
	if (e < 0 || kb_kube_request(r->lc, "GET", url, NULL, NULL, list_done, r) < 0) {
		free(url);
		report(r, -ENOMEM, "LIST %s: out of memory", r->path);
		retry_later(r, true);
		return;
	}
	free(url);
	r->stats.list_pages++;
}

/* A new LIST, from its first page: a consistent read (list_pager.h). */
static void start_list(kb_reflector *r)
{
	r->state = ST_LISTING;
	r->gen++;
	r->stats.lists++;
	char *url = NULL;
	int e = kb_list_pager_first(&r->pager, &url);
	request_page(r, url, e);
}

/* obj (a LIST item or a watch event's object, `what` says which) did not
 * decode (e, err): the handler's undecodable when it has one and obj names
 * itself, else a report. May free the reflector (check r->dead). */
static void undecodable(kb_reflector *r, const kb_yaml_node *obj, const char *what, int e,
			const kb_err *err)
{
	char key[512];
	if (r->h.undecodable && key_of(obj, key, sizeof(key))) {
		/* Known from now on, so that its deletion or a relist that lacks
		 * it is passed on even if no version of it ever decodes. */
		if (keys_mark(r, key) < 0) {
			report(r, -ENOMEM, "%s %s: out of memory", what, r->path);
			return;
		}
		r->h.undecodable(r->ctx, r->kkind, key, obj, err);
		return;
	}
	report(r, e, "%s %s: object skipped: %s", what, r->path, err->msg);
}

/* Decodes obj (a LIST item or a watch event's object) as what the path
 * serves. An object that names another apiVersion or kind (no API server
 * sends one; a broken proxy or a hostile one might) is refused as one that
 * does not decode: stored, it would be filed under a kind whose watch never
 * removes it. 0 and *ret, or -errno with err. */
static int decode_item(kb_reflector *r, const kb_yaml_node *obj, kb_object **ret, kb_err *err)
{
	int e = kb_object_decode_as(obj, r->api_version, r->kind, NULL, r->resnames, ret, err);
	if (e < 0)
		return e;
	kb_object *o = *ret;
	if (o->kind == r->kkind && strcmp(o->api_version, r->api_version) == 0)
		return 0;
	kb_err_set(err, -EINVAL, "%s \"%s\": apiVersion %s, kind %s: %s serves only %s %s",
		   r->kind, o->meta.key, o->api_version, o->kind_name, r->path, r->api_version,
		   r->kind);
	*ret = kb_object_free(o);
	return -EINVAL;
}

/* Applies one decoded page. Returns false when the reflector was freed. */
static bool apply_items(kb_reflector *r, const kb_yaml_node *items)
{
	for (size_t i = 0; items && items->kind == KB_YAML_SEQ && i < items->n; i++) {
		const kb_yaml_node *it = items->items[i];
		kb_object *o = NULL;
		kb_err err = {0};
		char key[512];
		if (r->h.raw)
			r->h.raw(r->ctx, r->api_version, r->kind, it);
		int e = decode_item(r, it, &o, &err);
		if (e < 0) {
			/* Keep what the store has under this key: a bad update is not a
			 * deletion (undecodable marks the key when it is passed on). */
			if (key_of(it, key, sizeof(key)))
				keys_touch(r, key);
			undecodable(r, it, "LIST", e, &err);
			if (r->dead)
				return false;
			continue;
		}
		if (keys_mark(r, o->meta.key) < 0) {
			kb_object_free(o);
			report(r, -ENOMEM, "LIST %s: out of memory", r->path);
			if (r->dead)
				return false;
			continue;
		}
		r->h.upsert(r->ctx, o);
		if (r->dead)
			return false;
	}
	return true;
}

/* After the last page: report what the list lacked as removed. */
static bool sweep_removed(kb_reflector *r)
{
	for (size_t i = r->keys.n; i-- > 0;) {
		if (i >= r->keys.n || r->keys.v[i].gen == r->gen)
			continue;
		char *key = strdup(r->keys.v[i].key);
		keys_remove_at(r, i);
		if (!key)
			continue;
		r->h.remove(r->ctx, r->kkind, key);
		free(key);
		if (r->dead)
			return false;
	}
	return true;
}

static int status_code_of(const kb_yaml_node *status)
{
	int64_t code;
	if (kb_yaml_int(kb_yaml_get(status, "code"), &code) == 0)
		return (int)code;
	return 0;
}

/* The text of the string field `field` ("name", "namespace") of the first
 * object's metadata in a JSON text that is not parsed (too large), or ""
 * when it is not found within the first bytes: for a log line only. Looks
 * past "items":[ in a list and "object": in an event. O(64 KiB) at most. */
static void peek_meta(const char *body, size_t len, const char *field, char *buf, size_t size)
{
	buf[0] = '\0';
	size_t n = len < (64u << 10) ? len : (64u << 10);
	char key[32];
	(void)snprintf(key, sizeof(key), "\"%s\":\"", field);
	const char *end = body + n;
	const char *p = memmem(body, n, "\"items\":[", 9);
	if (!p)
		p = memmem(body, n, "\"object\":", 9);
	p = p ? memmem(p, (size_t)(end - p), "\"metadata\":{", 12) : NULL;
	p = p ? memmem(p, (size_t)(end - p), key, strlen(key)) : NULL;
	if (!p)
		return;
	p += strlen(key);
	size_t i = 0;
	while (p < end && *p != '"' && *p != '\\' && i + 1 < size)
		buf[i++] = *p++;
	buf[i] = '\0';
}

/* "ns/name" (or "name") of the first object in body, quoted, or "". */
static void peek_object(const char *body, size_t len, char *buf, size_t size)
{
	char name[256], ns[256];
	buf[0] = '\0';
	if (!body || !len)
		return;
	peek_meta(body, len, "name", name, sizeof(name));
	if (!name[0])
		return;
	peek_meta(body, len, "namespace", ns, sizeof(ns));
	(void)snprintf(buf, size, " (first object \"%s%s%s\")", ns, ns[0] ? "/" : "", name);
}

/* A page or an event the reflector cannot take whole (larger than
 * max_bytes, or refused by the loader for one of its limits): said with
 * what it was and the limit, then a LIST with pages half as large, after a
 * backoff. The cache is never silently left stale: until a LIST goes
 * through, this repeats (the backoff growing to 30 s) and is reported each
 * time. */
static void too_big(kb_reflector *r, const char *what, const char *body, size_t len,
		    const char *why)
{
	r->stats.too_big++;
	int old = r->pager.limit;
	int limit = kb_list_pager_shrink(&r->pager);
	char size[48] = "", obj[600];
	if (len > 0)
		(void)snprintf(size, sizeof(size), " of %zu bytes", len);
	peek_object(body, len, obj, sizeof(obj));
	report(r, -E2BIG,
	       "%s %s: %s%s%s %s (limit %zu bytes); relisting with pages of %d objects (were %d) "
	       "after a backoff",
	       r->state == ST_LISTING ? "LIST" : "WATCH", r->path, what, size, obj, why,
	       r->max_bytes, limit, old);
	retry_later(r, true);
}

/* After the last page: the list is complete at rv. Sweeps what it lacked,
 * says synced the first time, and watches from rv. */
static void list_complete(kb_reflector *r, const char *rv)
{
	memcpy(r->rv, rv, RV_MAX);
	r->backoff = BACKOFF_MIN;
	kb_list_pager_restore(&r->pager);
	if (!sweep_removed(r))
		return;
	if (!r->synced) {
		r->synced = true;
		if (r->h.synced)
			r->h.synced(r->ctx, r->path);
		if (r->dead)
			return;
	}
	start_watch(r);
}

static void list_done(void *ctx, int status, const char *body, size_t len)
{
	kb_reflector *r = ctx;
	enter(r);
	kb_yaml_file f = {0};
	bool loaded = false;
	char what[64];
	(void)snprintf(what, sizeof(what), "page %u", r->pager.page);
	if (status == 410) {
		/* The continue token expired (etcd compacted the list's
		 * resourceVersion): the LIST starts over, after a backoff. */
		r->stats.list_expired++;
		report(r, -ESTALE,
		       "LIST %s: %s: 410 Gone (continue token expired: %.200s), relisting after a "
		       "backoff",
		       r->path, what, body ? body : "");
		retry_later(r, true);
		goto out;
	}
	if (status == -E2BIG) {
		too_big(r, what, NULL, 0, body ? body : "is larger than the client's body limit");
		goto out;
	}
	if (status != 200) {
		report(r, status < 0 ? status : -EIO, "LIST %s: %s: %s%d: %.*s", r->path, what,
		       status < 0 ? "error " : "HTTP ", status, (int)(len > 300 ? 300 : len),
		       body ? body : "");
		retry_later(r, true);
		goto out;
	}
	if (len > r->max_bytes) {
		too_big(r, what, body, len, "is over the limit");
		goto out;
	}
	kb_err err = {0};
	int e = kb_json_load_buffer(body, len, r->path, &f, &err);
	if (e == -E2BIG) {
		too_big(r, what, body, len, err.msg);
		goto out;
	}
	if (e < 0 || f.ndocs != 1 || f.docs[0]->kind != KB_YAML_MAP) {
		report(r, e < 0 ? e : -EINVAL, "LIST %s: %s: bad response (%zu bytes): %s", r->path,
		       what, len, err.msg[0] ? err.msg : "not a JSON object");
		retry_later(r, true);
		goto out;
	}
	loaded = true;
	const kb_yaml_node *root = f.docs[0];
	const kb_yaml_node *meta = kb_yaml_get(root, "metadata");
	char rv[RV_MAX];
	if (!scalar_to(kb_yaml_get(meta, "resourceVersion"), rv, sizeof(rv))) {
		report(r, -EINVAL, "LIST %s: %s has no metadata.resourceVersion", r->path, what);
		retry_later(r, true);
		goto out;
	}
	if (!apply_items(r, kb_yaml_get(root, "items")))
		goto out;

	const char *cont = kb_yaml_str(kb_yaml_get(meta, "continue"));
	if (cont && *cont) {
		char *url = NULL;
		e = kb_list_pager_next(&r->pager, cont, &url);
		request_page(r, url, e);
		goto out;
	}

	kb_yaml_file_release(&f);
	loaded = false;
	list_complete(r, rv);
out:
	if (loaded)
		kb_yaml_file_release(&f);
	leave(r);
}

/* ---- WATCH ----------------------------------------------------------------- */

static void watch_line(void *ctx, const char *line, size_t len);
static void watch_done(void *ctx, int status, const char *body, size_t len);

static void start_watch(kb_reflector *r)
{
	int timeout = r->watch_timeout > 0 ?
			      r->watch_timeout :
			      WATCH_TIMEOUT_MIN + (int)(rng_unit(r) * WATCH_TIMEOUT_MIN);
	char *url;
	if (kb_list_pager_watch(&r->pager, r->rv, timeout, &url) < 0) {
		report(r, -ENOMEM, "WATCH %s: out of memory", r->path);
		retry_later(r, false);
		return;
	}
	int e = kb_kube_stream_start(r->c, url, watch_line, watch_done, r, &r->stream);
	free(url);
	if (e < 0) {
		r->stream = NULL;
		report(r, e, "WATCH %s: cannot start: %s", r->path, strerror(-e));
		retry_later(r, false);
		return;
	}
	r->state = ST_WATCHING;
	r->watch_started = ev_now(r->loop);
	r->watch_events = 0;
	r->stats.watches++;
}

/* Ends the current watch. */
static void stop_stream(kb_reflector *r)
{
	if (r->stream) {
		kb_kube_stream_cancel(r->c, r->stream);
		r->stream = NULL;
	}
}

/* Ends the current watch and relists (410 Gone) after the backoff (0.5 s
 * unless relists keep failing), so a server that keeps answering 410 is
 * never asked in a tight loop. */
static void relist_now(kb_reflector *r, const char *why)
{
	r->stats.relists_gone++;
	stop_stream(r);
	report(r, -ESTALE, "WATCH %s: %s, relisting", r->path, why);
	retry_later(r, true);
}

/* An ERROR event: 410 relists, anything else ends this watch and retries it
 * after a backoff, as client-go does. */
static void watch_error_event(kb_reflector *r, const kb_yaml_node *obj)
{
	int code = status_code_of(obj);
	const char *msg = kb_yaml_str(kb_yaml_get(obj, "message"));
	if (code == 410) {
		char why[300];
		/* Cannot truncate: 200 characters of the message and 16 around it. */
		(void)snprintf(why, sizeof(why), "410 Gone (%.200s)", msg ? msg : "expired");
		relist_now(r, why);
		return;
	}
	stop_stream(r);
	report(r, -EIO, "WATCH %s: ERROR event %d: %.200s", r->path, code, msg ? msg : "");
	retry_later(r, false);
}

/* A DELETED event; rv (or NULL) is the event's resourceVersion. */
static void watch_deleted(kb_reflector *r, const kb_yaml_node *obj, const char *rv)
{
	char key[512];
	if (!key_of(obj, key, sizeof(key))) {
		report(r, -EINVAL, "WATCH %s: DELETED event without metadata.name", r->path);
	} else {
		keys_remove(r, key);
		r->h.remove(r->ctx, r->kkind, key);
	}
	if (rv && !r->dead)
		memcpy(r->rv, rv, RV_MAX);
}

/* An ADDED or MODIFIED event (type) carrying obj. */
static void watch_upsert(kb_reflector *r, const char *type, const kb_yaml_node *obj)
{
	kb_err err = {0};
	kb_object *o = NULL;
	if (r->h.raw)
		r->h.raw(r->ctx, r->api_version, r->kind, obj);
	int e = decode_item(r, obj, &o, &err);
	if (e < 0) {
		undecodable(r, obj, type, e, &err);
		return;
	}
	if (keys_mark(r, o->meta.key) < 0) {
		kb_object_free(o);
		report(r, -ENOMEM, "WATCH %s: out of memory", r->path);
		return;
	}
	r->backoff = BACKOFF_MIN; /* the watch works */
	r->h.upsert(r->ctx, o);
}

/* One decoded watch event (ev: {type, object}), by its type. */
static void watch_event(kb_reflector *r, const kb_yaml_node *ev)
{
	const char *type = kb_yaml_str(kb_yaml_get(ev, "type"));
	const kb_yaml_node *obj = kb_yaml_get(ev, "object");
	if (!type || !obj || obj->kind != KB_YAML_MAP) {
		report(r, -EINVAL, "WATCH %s: event without type or object skipped", r->path);
		return;
	}
	char rv[RV_MAX];
	bool has_rv = scalar_to(kb_yaml_get(kb_yaml_get(obj, "metadata"), "resourceVersion"), rv,
				sizeof(rv));

	if (strcmp(type, "ERROR") == 0) {
		watch_error_event(r, obj);
	} else if (strcmp(type, "BOOKMARK") == 0) {
		if (has_rv)
			memcpy(r->rv, rv, sizeof(rv));
	} else if (strcmp(type, "DELETED") == 0) {
		watch_deleted(r, obj, has_rv ? rv : NULL);
	} else if (strcmp(type, "ADDED") != 0 && strcmp(type, "MODIFIED") != 0) {
		report(r, -EINVAL, "WATCH %s: unknown event type \"%.40s\" skipped", r->path, type);
	} else {
		if (has_rv)
			memcpy(r->rv, rv, sizeof(rv));
		watch_upsert(r, type, obj);
	}
}

static void watch_line(void *ctx, const char *line, size_t len)
{
	kb_reflector *r = ctx;
	int e;
	if (r->state != ST_WATCHING)
		return; /* cancelled meanwhile */
	enter(r);
	kb_yaml_file f = {0};
	kb_err err = {0};
	r->stats.events++;
	r->watch_events++;
	/* An event that cannot be read is a change the cache would miss: the
	 * watch ends and a LIST (after a backoff) makes the cache whole again. */
	if (len > r->max_bytes) {
		stop_stream(r);
		too_big(r, "an event", line, len, "is over the limit");
	} else if ((e = kb_json_load_buffer(line, len, r->path, &f, &err)) == -E2BIG) {
		stop_stream(r);
		too_big(r, "an event", line, len, err.msg);
	} else if (e < 0) {
		stop_stream(r);
		report(r, e, "WATCH %s: an event of %zu bytes cannot be read (%s); relisting after "
			     "a backoff", r->path, len, err.msg);
		retry_later(r, true);
	} else {
		watch_event(r, f.ndocs == 1 ? f.docs[0] : NULL);
		kb_yaml_file_release(&f);
	}
	leave(r);
}

static void watch_done(void *ctx, int status, const char *body, size_t len)
{
	kb_reflector *r = ctx;
	enter(r);
	r->stream = NULL; /* the handle dies with this call */
	if (status == 410) {
		relist_now(r, "410 Gone");
	} else if (status == -E2BIG) {
		/* The client's line limit (64 MiB) ended the stream: the event is lost. */
		too_big(r, "an event", NULL, 0, body ? body : "is longer than the client's line limit");
	} else if (status / 100 == 2 ||
		   (status == -ETIMEDOUT && ev_now(r->loop) - r->watch_started >= QUIET_WATCH_SECONDS)) {
		/* Ended by the server (timeoutSeconds), or by the client's low-speed
		 * limit (no byte for 180 s: bookmarks should have come). Either way
		 * the watch resumes where it was, from the last resourceVersion. */
		double lasted = ev_now(r->loop) - r->watch_started;
		if (r->watch_events > 0 || lasted >= SHORT_WATCH_SECONDS) {
			r->backoff = BACKOFF_MIN;
			start_watch(r); /* resume from r->rv, no relist */
		} else {
			report(r, -EAGAIN, "WATCH %s: very short watch (%.1fs, no events)", r->path,
			       lasted);
			retry_later(r, false);
		}
	} else {
		report(r, status < 0 ? status : -EIO, "WATCH %s: %s%d: %.*s", r->path,
		       status < 0 ? "error " : "HTTP ", status, (int)(len > 300 ? 300 : len),
		       body ? body : "");
		retry_later(r, false);
	}
	leave(r);
}

/* ---- public ----------------------------------------------------------------- */

kb_reflector *kb_reflector_new(kb_kube_client *c, struct ev_loop *loop, const char *path,
			       const char *api_version, const char *kind, kb_resnames *resnames,
			       const kb_reflector_options *opt, const kb_reflector_handler *h,
			       void *ctx, kb_err *err)
{
	if (!c || !loop || !path || path[0] != '/' || !api_version || !kind || !h || !h->upsert ||
	    !h->remove || (opt && (opt->page_size < 0 || (opt->max_bytes > 0 && opt->max_bytes < 2)))) {
		kb_err_set(err, -EINVAL, "reflector %s: bad arguments", path ? path : "(null)");
		return NULL;
	}
	kb_reflector *r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->c = c;
	r->lc = opt && opt->list_client ? opt->list_client : c;
	r->loop = loop;
	r->resnames = resnames;
	r->h = *h;
	r->ctx = ctx;
	r->kkind = kb_kind_of(api_version, kind);
	r->backoff = BACKOFF_MIN;
	r->rng = (uint64_t)(ev_time() * 1e6) ^ ((uint64_t)(uintptr_t)r << 17) ^ 0x9E3779B97F4A7C15ULL;
	if (!r->rng)
		r->rng = 1;
	kb_strmap_init(&r->key_index);
	ev_init(&r->retry, retry_cb);
	r->retry.data = r;
	r->max_bytes = opt && opt->max_bytes > 0 ? opt->max_bytes : MAX_BYTES_DEFAULT;
	if (!(r->path = strdup(path)) || !(r->api_version = strdup(api_version)) ||
	    !(r->kind = strdup(kind)) ||
	    kb_list_pager_init(&r->pager, path, opt ? opt->field_selector : NULL,
			       opt && opt->page_size > 0 ? opt->page_size : KB_LIST_PAGE_DEFAULT) < 0)
		goto nomem_free;
	/* No handler call inside this call: a failure to queue is our result. */
	r->h.error = NULL;
	start_list(r);
	r->h.error = h->error;
	if (r->state != ST_LISTING) /* could not queue the request */
		goto nomem_free;
	return r;

nomem_free:
	really_free(r);
nomem:
	kb_err_set(err, -ENOMEM, "reflector %s: out of memory", path);
	return NULL;
}

bool kb_reflector_synced(const kb_reflector *r)
{
	return r && r->synced;
}

kb_reflector *kb_reflector_free(kb_reflector *r)
{
	if (!r)
		return NULL;
	if (r->busy > 0) {
		if (!r->dead) {
			r->dead = true;
			r->state = ST_IDLE;
			cancel_requests(r);
			r->stream = NULL;
			ev_timer_stop(r->loop, &r->retry);
		}
		return NULL;
	}
	really_free(r);
	return NULL;
}

void kb_reflector_set_watch_timeout(kb_reflector *r, int seconds)
{
	if (r)
		r->watch_timeout = seconds > 0 ? seconds : 0;
}

void kb_reflector_get_stats(const kb_reflector *r, kb_reflector_stats *ret)
{
	*ret = r->stats;
}

void kb_reflector_test_expire(kb_reflector *r)
{
	if (!r || r->state != ST_WATCHING || r->busy > 0)
		return;
	if (r->stream) {
		kb_kube_stream_cancel(r->c, r->stream);
		r->stream = NULL;
	}
	memcpy(r->rv, "1", 2); /* RV_MAX holds it */
	enter(r);
	start_watch(r);
	leave(r);
}

void kb_reflector_test_watch_line(kb_reflector *r, const char *line, size_t len)
{
	if (!r || r->busy > 0 || r->dead)
		return;
	if (r->state != ST_WATCHING) {
		ev_timer_stop(r->loop, &r->retry);
		r->state = ST_WATCHING;
	}
	watch_line(r, line, len);
}

/* ---- discovery ---------------------------------------------------------------- */

/* Kubernetes' own gang API: the versions of scheduling.k8s.io kube-batchd
 * reads, newest first, and the resource each needs. */
static const struct {
	const char *gv, *resource;
} k8s_gang[] = {
	{"scheduling.k8s.io/v1beta1", "podgroups"},
	{"scheduling.k8s.io/v1alpha3", "podgroups"},
	{"scheduling.k8s.io/v1alpha2", "podgroups"},
	{"scheduling.k8s.io/v1alpha1", "workloads"},
};
#define NK8S_GANG (sizeof(k8s_gang) / sizeof(k8s_gang[0]))

typedef struct discover_ctx {
	void (*done)(void *ctx, int status, const kb_served *served);
	void *ctx;
	kb_kube_client *c;
	kb_served served;
	/* The k8s_gang versions /apis lists, tried in order: a version is
	 * taken only when its own document lists the resource (v1beta1 and
	 * v1alpha1 also held the PriorityClass of servers before v1.22, and
	 * a version may be served with the feature gate off). */
	bool listed[NK8S_GANG];
	size_t next; /* the next k8s_gang index to try */
	char path[64];
} discover_ctx;

static bool serves(const kb_yaml_node *groups, const char *group_version)
{
	for (size_t i = 0; groups && groups->kind == KB_YAML_SEQ && i < groups->n; i++) {
		const kb_yaml_node *versions = kb_yaml_get(groups->items[i], "versions");
		for (size_t j = 0; versions && versions->kind == KB_YAML_SEQ && j < versions->n; j++) {
			const char *gv = kb_yaml_str(kb_yaml_get(versions->items[j], "groupVersion"));
			if (gv && strcmp(gv, group_version) == 0)
				return true;
		}
	}
	return false;
}

static void discover_finish(discover_ctx *d, int status)
{
	void (*done)(void *, int, const kb_served *) = d->done;
	void *uctx = d->ctx;
	kb_served served = d->served;
	free(d);
	done(uctx, status, &served);
}

static void discover_k8s_next(discover_ctx *d);

/* The answer for /apis/<k8s_gang[d->next - 1].gv>: an APIResourceList. Not
 * 200 or not parseable: that version is not taken (its watch would fail
 * and hold every session back), the next is tried. */
static void discover_k8s_done(void *ctx, int status, const char *body, size_t len)
{
	discover_ctx *d = ctx;
	size_t i = d->next - 1;
	bool found = false;
	kb_yaml_file f;
	kb_err err;
	if (status == 200 && kb_json_load_buffer(body, len, d->path, &f, &err) == 0) {
		const kb_yaml_node *res = f.ndocs == 1 ? kb_yaml_get(f.docs[0], "resources") : NULL;
		for (size_t j = 0; res && res->kind == KB_YAML_SEQ && j < res->n && !found; j++) {
			const char *name = kb_yaml_str(kb_yaml_get(res->items[j], "name"));
			found = name && strcmp(name, k8s_gang[i].resource) == 0;
		}
		kb_yaml_file_release(&f);
	}
	if (found) {
		if (strcmp(k8s_gang[i].resource, "podgroups") == 0)
			d->served.k8s_podgroups = k8s_gang[i].gv;
		else
			d->served.k8s_workloads_v1alpha1 = true;
		discover_finish(d, 200);
		return;
	}
	discover_k8s_next(d);
}

/* Asks for the next listed k8s_gang version's document; done when none is
 * left (or the request cannot start: the gang API is then not watched). */
static void discover_k8s_next(discover_ctx *d)
{
	while (d->next < NK8S_GANG && !d->listed[d->next])
		d->next++;
	if (d->next >= NK8S_GANG) {
		discover_finish(d, 200);
		return;
	}
	(void)snprintf(d->path, sizeof(d->path), "/apis/%s", k8s_gang[d->next].gv);
	d->next++;
	if (kb_kube_request(d->c, "GET", d->path, NULL, NULL, discover_k8s_done, d) < 0)
		discover_finish(d, 200);
}

static void discover_done(void *ctx, int status, const char *body, size_t len)
{
	discover_ctx *d = ctx;
	if (status != 200) {
		discover_finish(d, status);
		return;
	}
	kb_yaml_file f;
	kb_err err;
	if (kb_json_load_buffer(body, len, "/apis", &f, &err) < 0) {
		discover_finish(d, -EINVAL); /* not an APIGroupList */
		return;
	}
	const kb_yaml_node *groups = f.ndocs == 1 ? kb_yaml_get(f.docs[0], "groups") : NULL;
	d->served.incubator = serves(groups, "scheduling.incubator.k8s.io/v1alpha1");
	d->served.volcano = serves(groups, "scheduling.volcano.sh/v1beta1");
	d->served.cosched = serves(groups, "scheduling.x-k8s.io/v1alpha1");
	d->served.cosched_old = serves(groups, "scheduling.sigs.k8s.io/v1alpha1");
	for (size_t i = 0; i < NK8S_GANG; i++)
		d->listed[i] = serves(groups, k8s_gang[i].gv);
	kb_yaml_file_release(&f);
	discover_k8s_next(d);
}

int kb_discover(kb_kube_client *c, void (*done)(void *ctx, int status, const kb_served *served),
		void *ctx)
{
	if (!c || !done)
		return -EINVAL;
	discover_ctx *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->done = done;
	d->ctx = ctx;
	d->c = c;
	int e = kb_kube_request(c, "GET", "/apis", NULL, NULL, discover_done, d);
	if (e < 0)
		free(d);
	return e;
}

/* writers.c - cluster mode's side effects (see writers.h). */
#include "kube/writers.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/strmap.h"
#include "api/jobstatus.h"
#include "plugins/gpushare.h"
#include "plugins/vgpu.h"

#define MSG_MAX 1000 /* core/v1 Event messages are limited to 1024 bytes */

/* A refused binding's backoff: kube-scheduler's podInitialBackoffSeconds
 * and podMaxBackoffSeconds. */
#define BACKOFF_INITIAL_MS 1000
#define BACKOFF_MAX_MS 10000
/* Event correlation: client-go's EventCorrelator keeps 4096 events in its
 * LRU; a repeat within the window is the same Event with its count raised. */
#define EVENT_CACHE_MAX 4096
#define EVENT_WINDOW_MS ((int64_t)10 * 60 * 1000)

/* What was last written for a PodGroup. */
typedef struct pg_status {
	char phase[16]; /* the phase word written; "" unknown */
	kb_pg_phase kb_phase;
	int32_t running, succeeded, failed;
	char *cond; /* Unschedulable message, or NULL */
} pg_status;

typedef struct pg_rec {
	struct pg_rec *lprev, *lnext; /* in w->pg_list, while in w->pgs */
	char *key;
	bool in_flight, forgotten, have_want;
	bool foreign_said; /* the log said once that the group is another scheduler's */
	pg_status sent; /* last sent (confirmed, or in flight) */
	pg_status prev; /* confirmed before the one in flight */
	pg_status want; /* newer wish that came while a write was in flight */
	/* Where and how to write (copied: objects may be replaced meanwhile). */
	char *path, *api_version, *ns, *name, *uid;
	kb_pg_flavor flavor;
	int32_t min_member;
} pg_rec;

/* What was last reported for a pending pod. */
typedef struct pod_rec {
	struct pod_rec *lprev, *lnext; /* in w->pod_list */
	char *key;
	char *msg;
} pod_rec;

/* A pod whose binding the API refused: held back from placement until
 * until_ms; the backoff doubles with each refusal, and a successful
 * binding or the pod's deletion forgets it. */
typedef struct backoff_rec {
	struct backoff_rec *lprev, *lnext; /* in w->backoff_list */
	char *key;
	uint32_t refusals;
	int64_t until_ms;
	bool held; /* kb_cluster_hold_pod is in force */
} backoff_rec;

/* One member of a gang being bound. */
enum member_state { M_IN_FLIGHT, M_BOUND, M_FAILED };
typedef struct gang_member {
	char *key, *ns, *name, *uid, *node;
	uint32_t gpu_mask;
	enum member_state state;
} gang_member;

/* A gang whose bindings are in flight: the members sent since its last
 * answer-less moment. Lives while any of them is unanswered, or while it is
 * being taken back. */
typedef struct gang_rec {
	struct gang_rec *lprev, *lnext; /* in w->gang_list */
	char *key;
	int32_t min_member;
	int32_t base; /* members the API showed on a node before these binds */
	uint32_t in_flight;
	uint32_t n, cap;
	gang_member *m;
	char *why; /* set once the gang is being taken back */
} gang_rec;

/* An Event already posted, for correlation (client-go's EventLogger). */
typedef struct event_rec {
	struct event_rec *lprev, *lnext; /* in w->event_list, most recent first */
	char *key;  /* involved object, type, reason and message */
	char *ns, *name; /* the Event object */
	char first_ts[32];
	int32_t count;
	int64_t last_ms;
} event_rec;

/* What was last sent for a Queue's status (kb_writers_queue_status). */
typedef struct queue_rec {
	struct queue_rec *lprev, *lnext; /* in w->queue_list */
	char *name;
	bool in_flight, sent_valid;
	kb_queue_report sent;
	char *sent_rv; /* the cache's resourceVersion when sent */
} queue_rec;

enum req_kind {
	REQ_BIND,
	REQ_EVICT,
	REQ_PG_STATUS,
	REQ_POD_STATUS,
	REQ_EVENT,
	REQ_QUEUE_STATUS,
	REQ_PV_CLAIM, /* a PersistentVolume's spec.claimRef (key: the volume) */
	REQ_PVC_NODE, /* a claim's selected-node annotation (key: "ns/name") */
	REQ_PG_ANNOTATION, /* an annotation of a PodGroup (kb_writers_podgroup_annotation) */
};

typedef struct wreq {
	struct wreq *prev, *next; /* in w->reqs, so freeing the writers frees these */
	kb_writers *w;
	enum req_kind kind;
	char *key, *node, *ns, *name, *uid;
	kb_task_status prev_status;
	int64_t started_ms;
	uint32_t gpu_mask;
	pg_rec *pg;
	queue_rec *queue; /* Queue status writes */
	gang_rec *gang;   /* binds of a gang */
	char *event_key;  /* events: the correlation key (a PATCH if count > 1) */
} wreq;

struct kb_writers {
	kb_kube_client *client;
	kb_cluster *cluster;
	char *scheduler_name;
	kb_strmap pgs;  /* key -> pg_rec * */
	kb_strmap pods; /* key -> pod_rec * */
	pg_rec *pg_list;   /* every pg_rec of pgs, to free them */
	pod_rec *pod_list; /* every pod_rec of pods */
	wreq *reqs;
	kb_writer_stats stats;
	uint64_t event_seq;
	kb_strmap backoffs; /* pod key -> backoff_rec * */
	backoff_rec *backoff_list;
	kb_strmap gangs; /* job key -> gang_rec * */
	gang_rec *gang_list;
	kb_strmap events; /* correlation key -> event_rec * */
	event_rec *event_list, *event_tail;
	uint32_t nevents;
	int64_t now_ms; /* the last session's clock (kb_writers_tick, bind) */
	uint32_t unsettled; /* bindings and evictions sent or queued, not answered */
	kb_strmap queues; /* Queue name -> queue_rec * */
	queue_rec *queue_list;
};

/* ---- small helpers --------------------------------------------------------------- */

#define LIST_ADD(head, e)                                                                          \
	do {                                                                                       \
		(e)->lprev = NULL;                                                                 \
		(e)->lnext = (head);                                                               \
		if (head)                                                                          \
			(head)->lprev = (e);                                                       \
		(head) = (e);                                                              \
	} while (0)
#define LIST_DEL(head, e)                                                                          \
	do {                                                                                       \
		if ((e)->lprev)                                                                    \
			(e)->lprev->lnext = (e)->lnext;                                            \
		else                                                                               \
			(head) = (e)->lnext;                                                       \
		if ((e)->lnext)                                                                    \
			(e)->lnext->lprev = (e)->lprev;                                            \
	} while (0)

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Now as "2006-01-02T15:04:05Z" in buf. 0, or -EOVERFLOW when the clock
 * reads a time that has no such form (gmtime_r fails, or a year past 9999
 * does not fit). */
static int rfc3339(char buf[32])
{
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -EOVERFLOW;
	return 0;
}

/* A message cut to what an Event takes, on a UTF-8 boundary. */
static char *clip(const char *s, char *buf, size_t n)
{
	size_t len = strlen(s);
	if (len < n)
		return strcpy(buf, s);
	len = n - 4;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	/* Cannot truncate: len + "..." + NUL is at most n. */
	(void)snprintf(buf, n, "%.*s...", (int)len, s);
	return buf;
}

/* The "message" of a Status body, else the body itself (transport errors),
 * for logs and Events: a longer one is cut to n. */
static void reason_of(int status, const char *body, size_t len, char *buf, size_t n)
{
	if (status < 0) {
		(void)snprintf(buf, n, "%.*s", (int)(len < 400 ? len : 400),
			       body ? body : strerror(-status));
		return;
	}
	json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
	if (m)
		(void)snprintf(buf, n, "%s", m);
	else
		(void)snprintf(buf, n, "HTTP %d", status);
	json_decref(j);
}

static wreq *wreq_new(kb_writers *w, enum req_kind kind)
{
	wreq *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->w = w;
	r->kind = kind;
	r->next = w->reqs;
	if (w->reqs)
		w->reqs->prev = r;
	w->reqs = r;
	return r;
}

static void wreq_free(wreq *r)
{
	kb_writers *w = r->w;
	if (r->prev)
		r->prev->next = r->next;
	else
		w->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r->key);
	free(r->node);
	free(r->ns);
	free(r->name);
	free(r->uid);
	free(r->event_key);
	free(r);
}

static void on_done(void *ctx, int status, const char *body, size_t len);
static void forget_pending(kb_writers *w, const char *key);

/* r's answer came, or it was cancelled before it was sent: undoes what
 * send_json counted for it. */
static void wreq_settled(kb_writers *w, const wreq *r)
{
	if (w->stats.in_flight)
		w->stats.in_flight--;
	if ((r->kind == REQ_BIND || r->kind == REQ_EVICT) && w->unsettled)
		w->unsettled--;
}

/* Sends body (a JSON object, consumed) with method to the path path_fmt
 * formats (allocated, so never cut); r is consumed. Events go in the
 * background: after every binding and status write queued. Returns 0,
 * -ENOMEM or kb_kube_request's error. */
__attribute__((format(printf, 6, 7))) static int send_json(kb_writers *w, wreq *r,
							    const char *method, json_t *body,
							    const char *content_type,
							    const char *path_fmt, ...)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	char *path = NULL;
	va_list ap;
	va_start(ap, path_fmt);
	if (vasprintf(&path, path_fmt, ap) < 0)
		path = NULL;
	va_end(ap);
	if (!text || !path) {
		free(text);
		free(path);
		wreq_free(r);
		return -ENOMEM;
	}
	int rc = r->kind == REQ_EVENT || r->kind == REQ_PG_ANNOTATION
			 ? kb_kube_request_background(w->client, method, path, text, content_type, on_done, r)
			 : kb_kube_request(w->client, method, path, text, content_type, on_done, r);
	free(text);
	free(path);
	if (rc < 0) {
		wreq_free(r);
		return rc;
	}
	w->stats.in_flight++;
	if (r->kind == REQ_BIND || r->kind == REQ_EVICT) {
		w->unsettled++;
		/* Out now, while the session goes on (kb_kube_client_send_now). */
		kb_kube_client_send_now(w->client);
	}
	return 0;
}

/* ---- events ---------------------------------------------------------------------- */

static void event_unlink(kb_writers *w, event_rec *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		w->event_list = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		w->event_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void event_push_front(kb_writers *w, event_rec *e)
{
	e->lprev = NULL;
	e->lnext = w->event_list;
	if (w->event_list)
		w->event_list->lprev = e;
	else
		w->event_tail = e;
	w->event_list = e;
}

static void event_drop(kb_writers *w, event_rec *e)
{
	kb_strmap_del(&w->events, e->key);
	event_unlink(w, e);
	w->nevents--;
	free(e->key);
	free(e->ns);
	free(e->name);
	free(e);
}

/* Forgets the correlation of key (its Event could not be written). */
static void event_forget(kb_writers *w, const char *key)
{
	int64_t v;
	if (key && kb_strmap_get(&w->events, key, &v))
		event_drop(w, (event_rec *)(intptr_t)v);
}

/* Remembers an Event just posted, the least recently used one dropped past
 * EVENT_CACHE_MAX. Out of memory: the next repeat is posted anew. */
static void event_remember(kb_writers *w, char *key, const char *ns, const char *name,
			   const char *ts, int64_t now_ms)
{
	event_rec *e = calloc(1, sizeof(*e));
	if (!e || !(e->ns = strdup(ns)) || !(e->name = strdup(name)) ||
	    kb_strmap_put(&w->events, key, (int64_t)(intptr_t)e) < 0) {
		if (e) {
			free(e->ns);
			free(e->name);
		}
		free(e);
		free(key);
		return;
	}
	e->key = key;
	(void)snprintf(e->first_ts, sizeof(e->first_ts), "%s", ts);
	e->count = 1;
	e->last_ms = now_ms;
	event_push_front(w, e);
	if (++w->nevents > EVENT_CACHE_MAX)
		event_drop(w, w->event_tail);
}

/* Posts a core/v1 Event about an object, correlated as client-go's
 * EventCorrelator does: the same event (object, type, reason, message)
 * again within EVENT_WINDOW_MS raises the count and lastTimestamp of the
 * Event already written (a merge-patch) instead of writing another. Best
 * effort: failures are logged when the answer comes, and forget the
 * correlation so that the next one is posted anew. */
static int post_event(kb_writers *w, const char *api_version, const char *kind, const char *ns,
		      const char *name, const char *uid, const char *type, const char *reason,
		      const char *message)
{
	char ts[32], ename[300], msg[MSG_MAX + 1];
	int64_t now_ns = kb_wall_ns();
	uint64_t nanos = (uint64_t)now_ns + w->event_seq++;
	/* Cannot truncate: 200 characters, a point and 16 hex digits. */
	(void)snprintf(ename, sizeof(ename), "%.200s.%" PRIx64, name, nanos);
	int rc = rfc3339(ts);
	if (rc < 0)
		return rc;
	int64_t now_ms = now_ns / 1000000;
	char *ckey = NULL;
	if (asprintf(&ckey, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", kind, ns, name, uid ? uid : "",
		     type, reason, clip(message, msg, sizeof(msg))) < 0)
		return -ENOMEM;
	int64_t v;
	if (kb_strmap_get(&w->events, ckey, &v)) {
		event_rec *e = (event_rec *)(intptr_t)v;
		if (now_ms - e->last_ms < EVENT_WINDOW_MS) {
			e->count++;
			e->last_ms = now_ms;
			event_unlink(w, e);
			event_push_front(w, e);
			json_t *patch = json_pack("{s:i, s:s}", "count", e->count, "lastTimestamp", ts);
			wreq *r = patch ? wreq_new(w, REQ_EVENT) : NULL;
			if (!r) {
				json_decref(patch);
				free(ckey);
				return -ENOMEM;
			}
			r->event_key = ckey;
			if (asprintf(&r->key, "%s/%s", ns, name) < 0)
				r->key = NULL; /* only for the log */
			return send_json(w, r, "PATCH", patch, "application/merge-patch+json",
					 "/api/v1/namespaces/%s/events/%s", e->ns, e->name);
		}
		event_drop(w, e);
	}
	json_t *inv = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", api_version, "kind", kind,
				"namespace", ns, "name", name);
	if (inv && uid && uid[0] && !strchr(uid, '/'))
		json_object_set_new(inv, "uid", json_string(uid));
	json_t *ev = inv ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i}",
				     "apiVersion", "v1", "kind", "Event", "metadata", "name", ename,
				     "namespace", ns, "involvedObject", inv, "reason", reason, "message",
				     clip(message, msg, sizeof(msg)), "type", type, "source",
				     "component", w->scheduler_name, "firstTimestamp", ts,
				     "lastTimestamp", ts, "count", 1)
			 : NULL;
	if (!ev) {
		json_decref(inv);
		free(ckey);
		return -ENOMEM;
	}
	wreq *r = wreq_new(w, REQ_EVENT);
	if (!r || !(r->event_key = strdup(ckey))) {
		if (r)
			wreq_free(r);
		json_decref(ev);
		free(ckey);
		return -ENOMEM;
	}
	if (asprintf(&r->key, "%s/%s", ns, name) < 0)
		r->key = NULL; /* only for the log */
	rc = send_json(w, r, "POST", ev, NULL, "/api/v1/namespaces/%s/events", ns);
	if (rc == 0)
		event_remember(w, ckey, ns, ename, ts, now_ms);
	else
		free(ckey);
	return rc;
}

static int pod_event(kb_writers *w, const char *ns, const char *name, const char *uid,
		     const char *type, const char *reason, const char *message)
{
	return post_event(w, "v1", "Pod", ns, name, uid, type, reason, message);
}

/* ---- gangs in flight, refused bindings ------------------------------------------ */

static void gang_member_release(gang_member *m)
{
	free(m->key);
	free(m->ns);
	free(m->name);
	free(m->uid);
	free(m->node);
}

static void gang_free(kb_writers *w, gang_rec *g)
{
	kb_strmap_del(&w->gangs, g->key);
	LIST_DEL(w->gang_list, g);
	for (uint32_t i = 0; i < g->n; i++)
		gang_member_release(&g->m[i]);
	free(g->m);
	free(g->why);
	free(g->key);
	free(g);
}

/* The gang record of job j for a bind of t, made when none is in flight.
 * NULL for a job of one (nothing to take back) or out of memory (the bind
 * goes without: a refusal then holds the pod back but takes nothing back). */
static gang_rec *gang_add(kb_writers *w, const kb_snapshot *snap, const kb_task *t, const char *node)
{
	if (t->job < 0)
		return NULL;
	const kb_job *j = &snap->jobs[t->job];
	if (j->min_member <= 1 || j->flavor == KB_PG_NONE)
		return NULL;
	int64_t v;
	gang_rec *g;
	if (kb_strmap_get(&w->gangs, j->key, &v)) {
		g = (gang_rec *)(intptr_t)v;
	} else {
		g = calloc(1, sizeof(*g));
		if (!g || !(g->key = strdup(j->key)) ||
		    kb_strmap_put(&w->gangs, g->key, (int64_t)(intptr_t)g) < 0) {
			if (g)
				free(g->key);
			free(g);
			return NULL;
		}
		LIST_ADD(w->gang_list, g);
		g->min_member = j->min_member;
		g->base = j->nstatus[KB_TASK_BOUND] + j->nstatus[KB_TASK_RUNNING] +
			  j->nstatus[KB_TASK_SUCCEEDED];
	}
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? 2 * g->cap : 8;
		gang_member *m = realloc(g->m, cap * sizeof(*m));
		if (!m)
			return NULL;
		g->m = m;
		g->cap = cap;
	}
	gang_member *m = &g->m[g->n];
	memset(m, 0, sizeof(*m));
	m->key = strdup(t->key);
	m->ns = strdup(t->ns);
	m->name = strdup(t->name);
	m->uid = dup_or_null(t->uid);
	m->node = strdup(node);
	m->gpu_mask = t->gpu_mask;
	if (!m->key || !m->ns || !m->name || !m->node) {
		gang_member_release(m);
		return NULL;
	}
	g->n++;
	g->in_flight++;
	return g;
}

static gang_member *gang_member_of(gang_rec *g, const char *key)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (strcmp(g->m[i].key, key) == 0)
			return &g->m[i];
	return NULL;
}

static int evict_pod(kb_writers *w, const char *key, const char *ns, const char *name,
		     const char *uid, const char *node, kb_task_status prev_status,
		     int64_t started_ms, uint32_t gpu_mask, int64_t now_ms);

/* Takes back one member whose binding the API accepted: evicted, with a
 * Warning event GangTakenBack that says why. */
static void take_back(kb_writers *w, gang_rec *g, const gang_member *m)
{
	kb_warn("gang \"%s\": taking back \"%s\" from \"%s\": %s", g->key, m->key, m->node, g->why);
	int rc = evict_pod(w, m->key, m->ns, m->name, m->uid, m->node, KB_TASK_BOUND, 0, m->gpu_mask,
			   w->now_ms);
	if (rc < 0) {
		kb_error("gang \"%s\": evicting \"%s\" to take the gang back failed: %s", g->key,
			 m->key, strerror(-rc));
		return;
	}
	char msg[MSG_MAX + 1];
	/* An Event's message: cut when long. */
	(void)snprintf(msg, sizeof(msg), "gang \"%s\" taken back whole from node \"%s\": %s", g->key,
		       m->node, g->why);
	pod_event(w, m->ns, m->name, m->uid, "Warning", "GangTakenBack", msg);
}

/* One answer for g came: frees it once none is awaited. */
static void gang_answered(kb_writers *w, gang_rec *g)
{
	if (g->in_flight)
		g->in_flight--;
	if (g->in_flight == 0)
		gang_free(w, g);
}

/* The API refused m's binding: takes the gang back whole if the members
 * still bound or in flight (and those the API already showed on a node)
 * are fewer than minMember. */
static void gang_refused(kb_writers *w, gang_rec *g, gang_member *m, const char *why)
{
	m->state = M_FAILED;
	if (g->why)
		return; /* already being taken back */
	int32_t alive = g->base;
	for (uint32_t i = 0; i < g->n; i++)
		alive += g->m[i].state != M_FAILED;
	if (alive >= g->min_member)
		return;
	if (asprintf(&g->why, "binding of member \"%s\" to node \"%s\" refused: %s; %d of minMember %d could stay",
		     m->key, m->node, why, alive, g->min_member) < 0) {
		g->why = NULL;
		kb_error("gang \"%s\": out of memory taking it back", g->key);
		return;
	}
	for (uint32_t i = 0; i < g->n; i++)
		if (g->m[i].state == M_BOUND)
			take_back(w, g, &g->m[i]);
}

static void backoff_free(kb_writers *w, backoff_rec *b)
{
	if (b->held)
		kb_cluster_hold_pod(w->cluster, b->key, false);
	kb_strmap_del(&w->backoffs, b->key);
	LIST_DEL(w->backoff_list, b);
	free(b->key);
	free(b);
}

static void backoff_forget(kb_writers *w, const char *key)
{
	int64_t v;
	if (kb_strmap_get(&w->backoffs, key, &v))
		backoff_free(w, (backoff_rec *)(intptr_t)v);
}

static int pod_condition(kb_writers *w, const char *key, const char *ns, const char *name,
			 const char *uid, const char *msg, bool event);

/* The API refused r's binding: the pod is held back from placement for its
 * backoff (1 s doubling to 10 s), and says why in its PodScheduled
 * condition. */
static void backoff_refused(kb_writers *w, wreq *r, const char *why)
{
	int64_t v;
	backoff_rec *b;
	if (kb_strmap_get(&w->backoffs, r->key, &v)) {
		b = (backoff_rec *)(intptr_t)v;
	} else {
		b = calloc(1, sizeof(*b));
		if (!b || !(b->key = strdup(r->key)) ||
		    kb_strmap_put(&w->backoffs, b->key, (int64_t)(intptr_t)b) < 0) {
			if (b)
				free(b->key);
			free(b);
			kb_error("binding \"%s\": out of memory recording its backoff; retried next session",
				 r->key);
			return;
		}
		LIST_ADD(w->backoff_list, b);
	}
	b->refusals++;
	int64_t delay = BACKOFF_INITIAL_MS;
	for (uint32_t i = 1; i < b->refusals && delay < BACKOFF_MAX_MS; i++)
		delay *= 2;
	if (delay > BACKOFF_MAX_MS)
		delay = BACKOFF_MAX_MS;
	b->until_ms = w->now_ms + delay;
	int rc = kb_cluster_hold_pod(w->cluster, r->key, true);
	b->held = rc == 0;
	kb_warn("binding \"%s\" to \"%s\" refused (%u times): %s; held back for %.1fs", r->key,
		r->node, b->refusals, why, (double)delay / 1000.0);
	char msg[MSG_MAX + 1];
	/* A condition's message: cut when long. */
	(void)snprintf(msg, sizeof(msg),
		       "binding to node \"%s\" refused by the API server %u times: %s; tried again in %.1fs",
		       r->node, b->refusals, why, (double)delay / 1000.0);
	rc = pod_condition(w, r->key, r->ns, r->name, r->uid, msg, false);
	if (rc < 0)
		kb_warn("setting condition PodScheduled of pod \"%s\": %s", r->key, strerror(-rc));
}

/* ---- bind ------------------------------------------------------------------------ */

/* Whether a failed binding is the API's refusal (it will say the same
 * again: 400, 403, 409 but for "already assigned", 422 and other 4xx) rather
 * than a failure that may pass (transport, 5xx, 429 after the client's
 * retries) or a pod that is gone (404). */
static bool bind_refused(int status, const char *body, size_t len)
{
	if (status < 400 || status >= 500 || status == 404 || status == 429 || status == 408)
		return false;
	/* The pod is bound already (an earlier attempt whose answer was lost):
	 * the watch shows where. */
	if (status == 409 && body && memmem(body, len, "is already assigned to node", 27))
		return false;
	return true;
}

/* For a pod of Alibaba's GPU sharing (it asks for KB_RES_GPUSHARE_MEM and
 * the gpu plugin chose its device): the annotations its device plugin reads,
 * as gpushare-scheduler-extender writes them (device index, the pod's and
 * one device's gpu-mem in the plugin's unit, "false" until the device
 * plugin's Allocate takes it, the time in Unix nanoseconds, by which that
 * Allocate takes the oldest first). They go in the Binding's metadata, which
 * the API server copies onto the pod as it binds it: the kubelet never sees
 * the pod bound without them. */
static void gpushare_annotations(const kb_snapshot *snap, const kb_task *t, const kb_node *n,
				 json_t *meta)
{
	int r = kb_resnames_find(&snap->resnames, KB_RES_GPUSHARE_MEM);
	int64_t per_device = kb_gpushare_device_mem(n, r);
	if (r < 0 || t->req.q[r] <= 0 || !t->gpu_mask || per_device <= 0)
		return;
	char idx[16], pod[32], dev[32], at[32];
	(void)snprintf(idx, sizeof(idx), "%d", __builtin_ctz(t->gpu_mask));
	(void)snprintf(pod, sizeof(pod), "%lld", (long long)(t->req.q[r] / 1000));
	(void)snprintf(dev, sizeof(dev), "%lld", (long long)(per_device / 1000));
	(void)snprintf(at, sizeof(at), "%" PRId64, kb_wall_ns());
	json_object_set_new(meta, "annotations",
			    json_pack("{s:s, s:s, s:s, s:s, s:s}", KB_ANN_GPUSHARE_IDX, idx,
				      KB_ANN_GPUSHARE_POD, pod, KB_ANN_GPUSHARE_DEV, dev,
				      KB_ANN_GPUSHARE_ASSIGNED, "false",
				      KB_ANN_GPUSHARE_ASSUME_TIME, at));
}

/* For a pod of volcano's vGPU (plugins/vgpu.h: the gpu plugin chose its
 * GPUs, bit i the node's i-th registered one): the annotations its device
 * plugin's Allocate reads, as volcano's scheduler writes them. The GPUs as
 * "UUID,NVIDIA,mem,cores:" each, highest index first (the order volcano
 * chooses them in), for the pod's one vGPU container; twice, since the
 * plugin consumes devices-to-allocate and ids-new stays as the record; the
 * node, and the time in Unix seconds, by which the plugin takes the oldest
 * pod first; bind-phase "allocating" until the plugin says success or
 * failed. In the Binding's metadata, so the kubelet never sees the pod
 * bound without them. */
static void vgpu_annotations(const kb_task *t, const kb_node *n, json_t *meta)
{
	if (!t->spec || t->spec->vgpu_number <= 0 || !t->gpu_mask || n->nvgpu == 0)
		return;
	char ids[KB_MAX_GPUS * 160] = "", at[32];
	size_t off = 0;
	for (int d = (int)n->nvgpu - 1; d >= 0 && off < sizeof(ids); d--)
		if (t->gpu_mask & (1u << d)) {
			int w = snprintf(ids + off, sizeof(ids) - off, "%s,NVIDIA,%d,%d:",
					 n->vgpu[d].uuid, kb_vgpu_mem_of(t->spec, &n->vgpu[d]),
					 t->spec->vgpu_cores);
			off += w > 0 ? (size_t)w : 0;
		}
	if (off >= sizeof(ids)) {
		kb_warn("pod \"%s\": its vGPU devices do not fit the annotation; bound without them",
			t->key);
		return;
	}
	(void)snprintf(at, sizeof(at), "%" PRId64, kb_wall_ns() / 1000000000);
	json_object_set_new(meta, "annotations",
			    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", KB_ANN_VGPU_NODE, n->name,
				      KB_ANN_VGPU_TIME, at, KB_ANN_VGPU_IDS, ids,
				      KB_ANN_VGPU_TO_ALLOCATE, ids, KB_ANN_VGPU_BIND_PHASE,
				      "allocating", KB_ANN_VGPU_BIND_TIME, at));
}

static int fx_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		   const kb_node *n)
{
	kb_writers *w = ctx;
	w->now_ms = now_ms;
	int gpu = snap->gpu_res;
	bool gpus = gpu >= 0 && t->req.q[gpu] > 0 && t->gpu_mask != 0;
	int rc = kb_cluster_set_pod(w->cluster, t->key, n->name, KB_TASK_BINDING, now_ms,
				    t->gpu_mask);
	if (rc < 0)
		return rc;
	forget_pending(w, t->key); /* no longer pending */

	json_t *meta = json_pack("{s:s, s:s}", "name", t->name, "namespace", t->ns);
	if (meta && t->uid && t->uid[0] && !strchr(t->uid, '/'))
		json_object_set_new(meta, "uid", json_string(t->uid));
	if (meta && gpus) {
		char devs[128] = "";
		size_t off = 0;
		for (int g = 0; g < 32; g++)
			if (t->gpu_mask & (1u << g))
				off += (size_t)snprintf(devs + off, sizeof(devs) - off, "%s%d",
							off ? "," : "", g);
		json_object_set_new(meta, "annotations",
				    json_pack("{s:s}", KB_ANN_GPU_DEVICES, devs));
	}
	if (meta && !gpus) {
		gpushare_annotations(snap, t, n, meta);
		vgpu_annotations(t, n, meta);
	}
	json_t *body = meta ? json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
					"kind", "Binding", "metadata", meta, "target", "apiVersion",
					"v1", "kind", "Node", "name", n->name)
			    : NULL;
	wreq *r = body ? wreq_new(w, REQ_BIND) : NULL;
	if (r) {
		r->key = strdup(t->key);
		r->node = strdup(n->name);
		r->ns = strdup(t->ns);
		r->name = strdup(t->name);
		r->uid = dup_or_null(t->uid);
	}
	if (!r || !r->key || !r->node || !r->ns || !r->name) {
		if (r)
			wreq_free(r);
		json_decref(body);
		kb_cluster_set_pod(w->cluster, t->key, NULL, KB_TASK_PENDING, 0, 0);
		return -ENOMEM;
	}
	gang_rec *g = gang_add(w, snap, t, n->name);
	r->gang = g;
	rc = send_json(w, r, "POST", body, NULL, "/api/v1/namespaces/%s/pods/%s/binding", t->ns,
		       t->name);
	if (rc < 0) {
		kb_cluster_set_pod(w->cluster, t->key, NULL, KB_TASK_PENDING, 0, 0);
		if (g) {
			gang_member *m = gang_member_of(g, t->key);
			if (m)
				m->state = M_FAILED;
			gang_answered(w, g);
		}
	}
	return rc;
}

/* r's binding did not happen (refused by the API, failed, or never sent):
 * its pod is Pending again in the store, unless the watch has already shown
 * what happened, and its gang member failed; refused counts against the
 * gang (taken back whole when it would be left below minMember, why says
 * why). */
static void bind_failed(kb_writers *w, wreq *r, bool refused, const char *why)
{
	kb_slot *sl = kb_cluster_pod(w->cluster, r->key);
	if (sl && sl->overridden && sl->status == KB_TASK_BINDING && str_eq(sl->node, r->node))
		kb_cluster_set_pod(w->cluster, r->key, NULL, KB_TASK_PENDING, 0, 0);
	gang_rec *g = r->gang;
	gang_member *m = g ? gang_member_of(g, r->key) : NULL;
	if (m) {
		if (refused)
			gang_refused(w, g, m, why);
		else
			m->state = M_FAILED;
	}
	if (g)
		gang_answered(w, g);
}

/* Counts a failed Binding by its HTTP status (kb_writer_stats). O(codes). */
static void count_bind_failure(kb_writer_stats *st, int status)
{
	int code = status < 0 ? 0 : status;
	for (uint32_t i = 0; i < st->nbind_failure_codes; i++)
		if (st->bind_failure_codes[i].code == code) {
			st->bind_failure_codes[i].n++;
			return;
		}
	kb_code_count *c = &st->bind_failure_codes[st->nbind_failure_codes];
	if (st->nbind_failure_codes < KB_WRITER_CODES)
		st->nbind_failure_codes++;
	else
		code = -1;
	c->code = code;
	c->n++;
}

static void bind_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	gang_rec *g = r->gang;
	gang_member *m = g ? gang_member_of(g, r->key) : NULL;
	if (status == 200 || status == 201) {
		w->stats.binds++;
		backoff_forget(w, r->key);
		kb_vlog(2, "bound \"%s\" to \"%s\"", r->key, r->node);
		char msg[600];
		/* An Event's message: cut when long (clip cuts it to MSG_MAX anyway). */
		(void)snprintf(msg, sizeof(msg), "Successfully assigned %s to %s", r->key, r->node);
		pod_event(w, r->ns, r->name, r->uid, "Normal", "Scheduled", msg);
		if (m) {
			m->state = M_BOUND;
			if (g->why) /* a member was refused meanwhile */
				take_back(w, g, m);
		}
		if (g)
			gang_answered(w, g);
		return;
	}
	w->stats.bind_failures++;
	count_bind_failure(&w->stats, status);
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	bool refused = bind_refused(status, body, len);
	if (!refused)
		kb_warn("binding \"%s\" to \"%s\" failed: %s; tried again next session", r->key, r->node,
			why);
	bind_failed(w, r, refused, why);
	if (status == 404)
		return; /* the pod is gone: nobody to tell */
	if (refused)
		backoff_refused(w, r, why);
	char msg[800];
	/* An Event's message: cut when long. */
	(void)snprintf(msg, sizeof(msg), "Binding rejected: pod \"%s\" to node \"%s\": %s", r->key,
		       r->node, why);
	pod_event(w, r->ns, r->name, r->uid, "Warning", "FailedScheduling", msg);
}

/* ---- evict ----------------------------------------------------------------------- */

/* Sends the Eviction of a pod and marks it Releasing in the store (prev_status,
 * started_ms and gpu_mask are what a failed eviction restores). Returns 0,
 * -ENOMEM, -ENOENT (not in the store) or kb_kube_request's error. */
static int evict_pod(kb_writers *w, const char *key, const char *ns, const char *name,
		     const char *uid, const char *node, kb_task_status prev_status,
		     int64_t started_ms, uint32_t gpu_mask, int64_t now_ms)
{
	wreq *r = wreq_new(w, REQ_EVICT);
	if (!r)
		return -ENOMEM;
	r->key = strdup(key);
	r->ns = strdup(ns);
	r->name = strdup(name);
	r->node = dup_or_null(node);
	r->uid = dup_or_null(uid);
	r->prev_status = prev_status;
	r->started_ms = started_ms;
	r->gpu_mask = gpu_mask;
	if (!r->key || !r->ns || !r->name) {
		wreq_free(r);
		return -ENOMEM;
	}
	json_t *del = json_object();
	if (del && uid && uid[0] && !strchr(uid, '/'))
		json_object_set_new(del, "preconditions", json_pack("{s:s}", "uid", uid));
	/* No gracePeriodSeconds: the pod's own terminationGracePeriodSeconds applies. */
	json_t *body = del ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "policy/v1",
				       "kind", "Eviction", "metadata", "name", name, "namespace", ns,
				       "deleteOptions", del)
			   : NULL;
	if (!body) {
		wreq_free(r);
		return -ENOMEM;
	}
	int rc = kb_cluster_set_pod(w->cluster, key, node, KB_TASK_RELEASING, started_ms, gpu_mask);
	if (rc == 0)
		rc = kb_cluster_note_eviction(w->cluster, key, now_ms);
	if (rc < 0) {
		json_decref(body);
		wreq_free(r);
		return rc;
	}
	return send_json(w, r, "POST", body, NULL, "/api/v1/namespaces/%s/pods/%s/eviction", ns,
			 name);
}

static int fx_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		    const char *reason)
{
	kb_writers *w = ctx;
	const char *node = t->node >= 0 ? snap->nodes[t->node].name : NULL;
	int rc = evict_pod(w, t->key, t->ns, t->name, t->uid, node, t->status, t->started_ms,
			   t->gpu_mask, now_ms);
	if (rc < 0)
		return rc;
	char msg[800];
	/* An Event's message: cut when long. */
	(void)snprintf(msg, sizeof(msg), "%s%s%s", reason ? reason : "Preempted by the scheduler",
		       node ? " on node " : "", node ? node : "");
	pod_event(w, t->ns, t->name, t->uid, "Normal", "Preempted", msg);
	return 0;
}

static void evict_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	if (status == 200 || status == 201 || status == 404) {
		w->stats.evictions++;
		kb_vlog(2, "evicted \"%s\" from \"%s\"", r->key, r->node ? r->node : "");
		return;
	}
	w->stats.eviction_failures++;
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	kb_warn("evicting \"%s\" failed: %s", r->key, why);
	kb_slot *sl = kb_cluster_pod(w->cluster, r->key);
	if (sl && sl->overridden && sl->status == KB_TASK_RELEASING)
		kb_cluster_set_pod(w->cluster, r->key, r->node, r->prev_status, r->started_ms,
				   r->gpu_mask);
}

/* ---- PodGroup status ------------------------------------------------------------- */

static void pg_status_clear(pg_status *s)
{
	free(s->cond);
	memset(s, 0, sizeof(*s));
}

static int pg_status_copy(pg_status *dst, const pg_status *src)
{
	char *c = NULL;
	if (src->cond && !(c = strdup(src->cond)))
		return -ENOMEM;
	free(dst->cond);
	*dst = *src;
	dst->cond = c;
	return 0;
}

static bool pg_status_eq(const pg_status *a, const pg_status *b)
{
	return str_eq(a->phase, b->phase) && a->running == b->running &&
	       a->succeeded == b->succeeded && a->failed == b->failed && str_eq(a->cond, b->cond);
}

static void pg_rec_free(pg_rec *p)
{
	pg_status_clear(&p->sent);
	pg_status_clear(&p->prev);
	pg_status_clear(&p->want);
	free(p->key);
	free(p->path);
	free(p->api_version);
	free(p->ns);
	free(p->name);
	free(p->uid);
	free(p);
}

/* Keeps phase word w in s; a missing or longer word is kept as unknown
 * (""), which differs from every word phase_word gives. */
static void pg_status_set_phase(pg_status *s, const char *w)
{
	s->phase[0] = '\0';
	if (w && strlen(w) < sizeof(s->phase))
		strcpy(s->phase, w);
}

/* The phase word each API accepts. A scheduling.k8s.io PodGroup has no
 * phase: its word names the state of its scheduling condition
 * ("Scheduled": True, "Unschedulable": False with the reason, "": none
 * written), which is all that is sent (pg_send_k8s). */
static const char *phase_word(kb_pg_flavor f, const kb_job *j, const kb_job_status *st)
{
	if (f == KB_PG_K8S) {
		if (st->phase == KB_PG_RUNNING || st->phase == KB_PG_COMPLETED)
			return "Scheduled";
		return st->unschedulable ? "Unschedulable" : "";
	}
	if (f == KB_PG_COSCHED) {
		switch (st->phase) {
		case KB_PG_RUNNING:
			return j->nstatus[KB_TASK_RUNNING] + st->succeeded >= j->min_member ? "Running"
											  : "Scheduled";
		case KB_PG_COMPLETED:
			return st->failed ? "Failed" : "Finished";
		case KB_PG_UNKNOWN:
			return "Unknown";
		default:
			return "Pending";
		}
	}
	/* kube-batch's v1alpha1 has no Completed phase. */
	if (st->phase == KB_PG_COMPLETED && f == KB_PG_KUBE_BATCH)
		return "Running";
	return kb_pg_phase_name(st->phase);
}

/* The status of a scheduling.k8s.io PodGroup (KEP-4671): its only field a
 * scheduler owns is the condition PodGroupScheduled (v1alpha2) or
 * PodGroupInitiallyScheduled (v1alpha3, v1beta1), True once the gang is
 * placed (upstream never turns it back), else False with reason
 * Unschedulable and the gang's reason. A strategic merge patch keyed by
 * condition type, so conditions others write (DisruptionTarget) stay;
 * lastTransitionTime only when the condition's status changes (a new
 * reason while it stays False keeps the time it turned False). */
static json_t *pg_body_k8s(const pg_rec *p, const char *ts)
{
	char msg[MSG_MAX + 1];
	bool placed = strcmp(p->sent.phase, "Scheduled") == 0;
	if (placed)
		(void)snprintf(msg, sizeof(msg), "the gang is placed: at least minCount %d pods "
						 "bound by kube-batchd", p->min_member);
	json_t *cond = json_pack("{s:s, s:s, s:s, s:s}", "type",
				 kb_k8s_podgroup_condition(p->api_version), "status",
				 placed ? "True" : "False", "reason",
				 placed ? "Scheduled" : "Unschedulable", "message",
				 placed ? msg : clip(p->sent.cond ? p->sent.cond : "", msg, sizeof(msg)));
	if (cond && strcmp(p->prev.phase, p->sent.phase) != 0 &&
	    json_object_set_new(cond, "lastTransitionTime", json_string(ts)) < 0) {
		json_decref(cond);
		return NULL;
	}
	return cond ? json_pack("{s:{s:[o]}}", "status", "conditions", cond) : NULL;
}

/* Sends body (consumed; NULL: out of memory) to p's status as a PATCH of
 * content_type; p is in flight until its answer. 0, -ENOMEM or
 * send_json's error. */
static int pg_patch(kb_writers *w, pg_rec *p, json_t *body, const char *content_type)
{
	wreq *r = body ? wreq_new(w, REQ_PG_STATUS) : NULL;
	if (!r || !(r->key = strdup(p->key))) {
		if (r)
			wreq_free(r);
		json_decref(body);
		return -ENOMEM;
	}
	r->pg = p;
	p->in_flight = true;
	int rc = send_json(w, r, "PATCH", body, content_type, "%s", p->path);
	if (rc < 0)
		p->in_flight = false;
	return rc;
}

static int pg_send(kb_writers *w, pg_rec *p)
{
	char ts[32];
	int rc = rfc3339(ts);
	if (rc < 0)
		return rc;
	if (p->flavor == KB_PG_K8S)
		return pg_patch(w, p, pg_body_k8s(p, ts), "application/strategic-merge-patch+json");
	json_t *status = json_pack("{s:s, s:i, s:i, s:i}", "phase", p->sent.phase, "running",
				   p->sent.running, "succeeded", p->sent.succeeded, "failed",
				   p->sent.failed);
	if (!status)
		return -ENOMEM;
	if (p->flavor != KB_PG_COSCHED) {
		json_t *conds = NULL;
		if (p->sent.cond) {
			char msg[MSG_MAX + 1];
			conds = json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type", "Unschedulable", "status",
					  "True", "reason", "NotEnoughResources", "message",
					  clip(p->sent.cond, msg, sizeof(msg)), "lastTransitionTime", ts);
		} else if (p->sent.kb_phase == KB_PG_RUNNING || p->sent.kb_phase == KB_PG_COMPLETED) {
			conds = json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type", "Scheduled", "status",
					  "True", "reason", "Scheduled", "message",
					  "tasks in gang are ready to be scheduled", "lastTransitionTime",
					  ts);
		}
		if (conds)
			json_object_set_new(status, "conditions", conds);
	}
	return pg_patch(w, p, json_pack("{s:o}", "status", status), "application/merge-patch+json");
}

/* Events for a change from `from` to `to` (what was last written). */
static void pg_events(kb_writers *w, const pg_rec *p, const pg_status *from, const pg_status *to)
{
	const char *kind = "PodGroup";
	if (to->kb_phase == KB_PG_RUNNING && from->kb_phase != KB_PG_RUNNING &&
	    from->kb_phase != KB_PG_COMPLETED) {
		char msg[256];
		/* Cannot truncate: two ints and 36 characters. (A
		 * scheduling.k8s.io PodGroup's counts are not kept.) */
		if (p->flavor == KB_PG_K8S)
			(void)snprintf(msg, sizeof(msg), "minCount %d tasks in gang are placed",
				       p->min_member);
		else
			(void)snprintf(msg, sizeof(msg), "%d of minMember %d tasks in gang are placed",
				       to->running, p->min_member);
		post_event(w, p->api_version, kind, p->ns, p->name, p->uid, "Normal", "Scheduled", msg);
	}
	if (to->cond && !str_eq(to->cond, from->cond))
		post_event(w, p->api_version, kind, p->ns, p->name, p->uid, "Warning",
			   "Unschedulable", to->cond);
}

/* Sends `st` if it differs from what was last sent. */
static int pg_write(kb_writers *w, pg_rec *p, const pg_status *st)
{
	if (p->in_flight) {
		p->have_want = true;
		return pg_status_copy(&p->want, st);
	}
	if (pg_status_eq(&p->sent, st))
		return 0;
	int rc = pg_status_copy(&p->prev, &p->sent);
	if (rc == 0)
		rc = pg_status_copy(&p->sent, st);
	if (rc < 0)
		return rc;
	pg_events(w, p, &p->prev, &p->sent);
	if ((rc = pg_send(w, p)) < 0) {
		pg_status_copy(&p->sent, &p->prev);
		return rc;
	}
	return 0;
}

/* p's write was answered or cancelled: no longer in flight. Returns false
 * when p was forgotten meanwhile (it is freed now). */
static bool pg_answered(pg_rec *p)
{
	p->in_flight = false;
	if (!p->forgotten)
		return true;
	pg_rec_free(p);
	return false;
}

static void pg_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	pg_rec *p = r->pg;
	if (!pg_answered(p))
		return;
	if (status == 200 || status == 201) {
		w->stats.status_writes++;
		kb_cluster_set_podgroup_phase(w->cluster, p->key, p->sent.kb_phase);
		kb_vlog(3, "PodGroup \"%s\": status %s, running %d", p->key, p->sent.phase,
			p->sent.running);
	} else {
		char why[512];
		reason_of(status, body, len, why, sizeof(why));
		if (status != 404)
			kb_warn("writing status of PodGroup \"%s\" failed: %s", p->key, why);
		/* Retried when a later session reports it again. */
		pg_status_copy(&p->sent, &p->prev);
	}
	if (p->have_want) {
		p->have_want = false;
		pg_status want = p->want;
		memset(&p->want, 0, sizeof(p->want));
		if (pg_write(w, p, &want) < 0)
			kb_warn("writing status of PodGroup \"%s\": out of memory", p->key);
		pg_status_clear(&want);
	}
}

/* The session counts placed members as running, and a binding may still
 * be refused: a group whose bindings the API refuses would read Running
 * from each try to its refusal, over and over (faults.sh bind-refused-all).
 * So a group becomes Running here once minMember members are bound (or
 * done): true while the session says Running and they are not, when its
 * status is left as it was (the session after the bindings are seen
 * writes it). O(1). */
static bool running_too_soon(const pg_rec *p, const kb_job *j, const kb_job_status *status)
{
	const int32_t *n = j->nstatus;
	return status->phase == KB_PG_RUNNING && p->sent.kb_phase != KB_PG_RUNNING &&
	       p->sent.kb_phase != KB_PG_COMPLETED && j->ntasks > 0 &&
	       n[KB_TASK_BOUND] + n[KB_TASK_RUNNING] + n[KB_TASK_SUCCEEDED] < j->min_member;
}

static int fx_job_status(void *ctx, const kb_snapshot *snap, const kb_job *j,
			 const kb_job_status *status)
{
	kb_writers *w = ctx;
	if (j->flavor == KB_PG_NONE)
		return 0;
	int64_t idx;
	if (!kb_strmap_get(&w->cluster->podgroups.by_key, j->key, &idx))
		return 0;
	const kb_object *o = w->cluster->podgroups.slots.v[idx].obj;
	if (!o)
		return 0;

	pg_rec *p;
	if (kb_strmap_get(&w->pgs, j->key, &idx)) {
		p = (pg_rec *)(intptr_t)idx;
	} else {
		bool volcano = j->flavor == KB_PG_VOLCANO;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->key = strdup(j->key);
		if (asprintf(&p->path, "/apis/%s/namespaces/%s/podgroups/%s%s", o->api_version,
			     o->meta.ns, o->meta.name, volcano ? "" : "/status") < 0)
			p->path = NULL;
		p->api_version = strdup(o->api_version);
		p->ns = strdup(o->meta.ns);
		p->name = strdup(o->meta.name);
		p->uid = dup_or_null(o->meta.uid);
		if (!p->key || !p->path || !p->api_version || !p->ns || !p->name ||
		    kb_strmap_put(&w->pgs, p->key, (int64_t)(intptr_t)p) < 0) {
			pg_rec_free(p);
			return -ENOMEM;
		}
		LIST_ADD(w->pg_list, p);
		/* What the object says now counts as written: a restarted daemon
		 * writes nothing for a group whose status is already right. (It
		 * wrote every group's once: a restart over 564 Running groups
		 * sent 1,530 status writes in the e2e benchmark against 1,062
		 * without one, the extra ones queued ahead of the bindings.) */
		const kb_podgroup_obj *pg = &o->u.podgroup;
		p->sent.kb_phase = pg->phase;
		pg_status_set_phase(&p->sent, pg->status_phase);
		p->sent.running = pg->running;
		p->sent.succeeded = pg->succeeded;
		p->sent.failed = pg->failed;
		if (pg->unschedulable && !(p->sent.cond = strdup(pg->unschedulable)))
			return -ENOMEM; /* p stays, with no condition: written next time */
	}
	p->flavor = j->flavor;
	p->min_member = j->min_member;
	if (j->foreign) { /* another scheduler's group: never written, said once */
		if (!p->foreign_said)
			kb_info("PodGroup \"%s\" left alone: %s", j->key, j->invalid);
		p->foreign_said = true;
		return 0;
	}
	p->foreign_said = false;
	/* Upstream's condition is terminal once True: nothing more to say. */
	if (j->flavor == KB_PG_K8S && strcmp(p->sent.phase, "Scheduled") == 0)
		return 0;
	if (running_too_soon(p, j, status))
		return 0;
	bool counts = j->flavor != KB_PG_K8S; /* that API has none */
	pg_status now = {
		.kb_phase = status->phase,
		.running = counts ? status->running : 0,
		.succeeded = counts ? status->succeeded : 0,
		.failed = counts ? status->failed : 0,
		.cond = (char *)status->unschedulable, /* copied by pg_write */
	};
	pg_status_set_phase(&now, phase_word(j->flavor, j, status));
	if (j->flavor == KB_PG_K8S && !now.phase[0])
		return 0; /* nothing to say on a scheduling.k8s.io PodGroup yet */
	return pg_write(w, p, &now);
}

/* ---- pending pods ---------------------------------------------------------------- */

/* Sets a pending pod's condition PodScheduled=False with msg, and with
 * event a Warning FailedScheduling, when msg differs from the last one. */
static int pod_condition(kb_writers *w, const char *key, const char *ns, const char *name,
			 const char *uid, const char *msg, bool event)
{
	int64_t v;
	pod_rec *p;
	if (kb_strmap_get(&w->pods, key, &v)) {
		p = (pod_rec *)(intptr_t)v;
		if (str_eq(p->msg, msg))
			return 0;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p || !(p->key = strdup(key)) ||
		    kb_strmap_put(&w->pods, p->key, (int64_t)(intptr_t)p) < 0) {
			if (p)
				free(p->key);
			free(p);
			return -ENOMEM;
		}
		LIST_ADD(w->pod_list, p);
	}
	char *copy = strdup(msg);
	if (!copy)
		return -ENOMEM;
	free(p->msg);
	p->msg = copy;

	char ts[32], clipped[MSG_MAX + 1];
	int rc = rfc3339(ts);
	if (rc < 0)
		return rc;
	json_t *body = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:n, s:s}]}}", "status", "conditions",
				 "type", "PodScheduled", "status", "False", "reason", "Unschedulable",
				 "message", clip(msg, clipped, sizeof(clipped)), "lastProbeTime",
				 "lastTransitionTime", ts);
	wreq *r = body ? wreq_new(w, REQ_POD_STATUS) : NULL;
	if (!r || !(r->key = strdup(key))) {
		if (r)
			wreq_free(r);
		json_decref(body);
		return -ENOMEM;
	}
	rc = send_json(w, r, "PATCH", body, "application/strategic-merge-patch+json",
		       "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	if (rc < 0 || !event)
		return rc;
	return pod_event(w, ns, name, uid, "Warning", "FailedScheduling", msg);
}

static int fx_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *t, const char *reason)
{
	return pod_condition(ctx, t->key, t->ns, t->name, t->uid, reason, true);
}

int kb_writers_pod_unreadable(kb_writers *w, const char *key, const char *uid, const char *msg)
{
	const char *slash = strchr(key, '/');
	if (!slash || slash == key || !slash[1])
		return -EINVAL;
	char ns[256];
	size_t nlen = (size_t)(slash - key);
	if (nlen >= sizeof(ns))
		return -EINVAL;
	memcpy(ns, key, nlen);
	ns[nlen] = '\0';
	return pod_condition(w, key, ns, slash + 1, uid, msg, true);
}

/* The condition last sent for pod key was not written: forgotten, so that
 * a later session sends it again. */
static void pod_msg_forget(kb_writers *w, const char *key)
{
	int64_t v;
	if (kb_strmap_get(&w->pods, key, &v)) {
		pod_rec *p = (pod_rec *)(intptr_t)v;
		free(p->msg);
		p->msg = NULL;
	}
}

static void pod_status_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	if (status == 200 || status == 201) {
		w->stats.status_writes++;
		return;
	}
	if (status == 404)
		return;
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	kb_warn("setting condition PodScheduled of pod \"%s\" failed: %s", r->key, why);
	pod_msg_forget(w, r->key);
}

/* ---- volume binding ----------------------------------------------------------------- */

/* What kube-scheduler's PreBind writes, as merge patches with the object's
 * resourceVersion as precondition (a volume or claim that changed since
 * the session looked is refused with 409, and looked at again): a volume
 * chosen for a claim gets its claimRef (and bound-by-controller, as
 * GetBindVolumeToClaim sets it); a claim to provision gets
 * volume.kubernetes.io/selected-node. The PV controller and the
 * provisioner do the rest; the store assumes the write at once, until the
 * watch shows it or the write fails. */
/* Sends one volume write: body (consumed) to path; key is the volume
 * (REQ_PV_CLAIM, other the claim) or the claim (REQ_PVC_NODE, other the
 * node), assumed in the store until the watch shows it or the write fails. */
static int volume_write(kb_writers *w, enum req_kind kind, const char *key, const char *other,
			json_t *body, const char *path)
{
	wreq *r = body ? wreq_new(w, kind) : NULL;
	if (!r || !(r->key = strdup(key)) || !(r->name = strdup(other))) {
		if (r)
			wreq_free(r);
		json_decref(body);
		return -ENOMEM;
	}
	int rc = kind == REQ_PV_CLAIM ? kb_cluster_assume_pv_claim(w->cluster, key, other)
				      : kb_cluster_assume_selected_node(w->cluster, key, other);
	if (rc < 0) {
		wreq_free(r);
		json_decref(body);
		return rc;
	}
	return send_json(w, r, "PATCH", body, "application/merge-patch+json", "%s", path);
}

static int bind_volume(kb_writers *w, const kb_claim_need *c, const kb_pv *pv)
{
	json_t *body = json_pack(
		"{s:{s:{s:s}, s:s}, s:{s:{s:s, s:s, s:s, s:s, s:s?, s:s?}}}", "metadata",
		"annotations", "pv.kubernetes.io/bound-by-controller", "yes", "resourceVersion",
		pv->resource_version, "spec", "claimRef", "kind", "PersistentVolumeClaim",
		"apiVersion", "v1", "namespace", c->ns, "name", c->name, "uid", c->uid,
		"resourceVersion", c->resource_version && *c->resource_version ? c->resource_version
									       : NULL);
	char path[512];
	(void)snprintf(path, sizeof(path), "/api/v1/persistentvolumes/%s", pv->name);
	return volume_write(w, REQ_PV_CLAIM, pv->name, c->key, body, path);
}

static int provision_on(kb_writers *w, const kb_claim_need *c, const char *node)
{
	json_t *body = json_pack("{s:{s:{s:s}, s:s}}", "metadata", "annotations",
				 "volume.kubernetes.io/selected-node", node, "resourceVersion",
				 c->resource_version);
	char path[512];
	(void)snprintf(path, sizeof(path), "/api/v1/namespaces/%s/persistentvolumeclaims/%s", c->ns,
		       c->name);
	return volume_write(w, REQ_PVC_NODE, c->key, node, body, path);
}

static int fx_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
			   const kb_node *n, const kb_task_volumes *vol, const int32_t *picks)
{
	(void)now_ms;
	kb_writers *w = ctx;
	int first = 0;
	for (uint32_t i = 0; i < vol->nto_bind; i++) {
		const kb_claim_need *c = &vol->to_bind[i];
		int r = picks[i] >= 0 ? bind_volume(w, c, &snap->pvs[picks[i]]) : provision_on(w, c, n->name);
		if (r < 0 && first == 0)
			first = r;
		else if (r == 0)
			kb_vlog(2, "pod \"%s\" on node \"%s\": %s \"%s\" %s \"%s\"", t->key, n->name,
				"claim", c->key, picks[i] >= 0 ? "bound to volume" : "to be provisioned on",
				picks[i] >= 0 ? snap->pvs[picks[i]].name : n->name);
	}
	return first;
}

static void volume_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	if (status == 200 || status == 201) {
		w->stats.status_writes++;
		return;
	}
	/* As the API last showed it again: the next session looks afresh. */
	kb_cluster_forget_volume_assumption(w->cluster, r->kind == REQ_PV_CLAIM ? KB_KIND_PV : KB_KIND_PVC,
					    r->key);
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	if (r->kind == REQ_PV_CLAIM)
		kb_warn("binding persistentvolume \"%s\" to claim \"%s\" failed: %s (the claim is "
			"matched again next session)",
			r->key, r->name, why);
	else
		kb_warn("asking for persistentvolumeclaim \"%s\" to be provisioned on node \"%s\" "
			"failed: %s (the claim is placed again next session)",
			r->key, r->name, why);
}

/* ---- the table, life cycle ------------------------------------------------------- */

/* ---- Queue status ------------------------------------------------------------------ */

static void queue_status_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	queue_rec *q = r->queue;
	q->in_flight = false;
	if (status == 200 || status == 201) {
		w->stats.queue_status_writes++;
		kb_vlog(3, "Queue \"%s\": status pending %d, inqueue %d, running %d", q->name,
			q->sent.pending, q->sent.inqueue, q->sent.running);
		return;
	}
	q->sent_valid = false; /* written again next session */
	if (status == 404)
		return;
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	kb_warn("writing status of Queue \"%s\" failed: %s; written again next session", q->name,
		why);
}

const kb_object *kb_writers_cached_queue(const kb_writers *w, const char *name)
{
	int64_t idx;
	if (!kb_strmap_get(&w->cluster->queues.by_key, name, &idx))
		return NULL;
	const kb_object *o = w->cluster->queues.slots.v[idx].obj;
	return o && o->kind == KB_KIND_QUEUE ? o : NULL;
}

int kb_writers_queue_status(kb_writers *w, const char *name, const kb_queue_report *want)
{
	const kb_object *o = kb_writers_cached_queue(w, name);
	if (!o)
		return 0;
	const kb_queue_obj *cq = &o->u.queue;
	const char *rv = o->meta.resource_version ? o->meta.resource_version : "";
	if (kb_queue_report_matches(cq->flavor, want, &cq->status))
		return 0;
	int64_t v;
	queue_rec *q;
	if (kb_strmap_get(&w->queues, name, &v)) {
		q = (queue_rec *)(intptr_t)v;
	} else {
		q = calloc(1, sizeof(*q));
		if (!q || !(q->name = strdup(name)) ||
		    kb_strmap_put(&w->queues, q->name, (int64_t)(intptr_t)q) < 0) {
			if (q)
				free(q->name);
			free(q);
			return -ENOMEM;
		}
		LIST_ADD(w->queue_list, q);
	}
	/* The same wish sent and its echo not back yet: nothing new to say. */
	if (q->in_flight ||
	    (q->sent_valid && kb_queue_report_eq(&q->sent, want) && q->sent_rv &&
	     strcmp(q->sent_rv, rv) == 0))
		return 0;
	char *rv_copy = strdup(rv);
	json_t *body = rv_copy ? kb_queue_report_body(cq->flavor, want, &w->cluster->resnames) : NULL;
	wreq *r = body ? wreq_new(w, REQ_QUEUE_STATUS) : NULL;
	if (!r || !(r->key = strdup(name))) {
		if (r)
			wreq_free(r);
		json_decref(body);
		free(rv_copy);
		return -ENOMEM;
	}
	r->queue = q;
	free(q->sent_rv);
	q->sent_rv = rv_copy;
	q->sent = *want;
	q->sent_valid = true;
	q->in_flight = true;
	int rc = send_json(w, r, "PATCH", body, "application/merge-patch+json",
			   "/apis/%s/queues/%s/status", o->api_version, name);
	if (rc < 0) {
		q->in_flight = false;
		q->sent_valid = false;
	}
	return rc;
}

static void annotation_done(kb_writers *w, wreq *r, int status, const char *body, size_t len)
{
	if (status == 200 || status == 201) {
		w->stats.annotation_writes++;
		return;
	}
	if (status == 404)
		return; /* the PodGroup is gone */
	char why[512];
	reason_of(status, body, len, why, sizeof(why));
	kb_warn("setting annotation %s of PodGroup \"%s\" failed: %s; tried again at its next "
		"refresh", r->name ? r->name : "", r->key, why);
}

int kb_writers_podgroup_annotation(kb_writers *w, const char *key, const char *name,
				   const char *value)
{
	const kb_slot *sl = kb_cluster_slot(w->cluster, KB_KIND_PODGROUP, key);
	if (!sl)
		return -ENOENT;
	const kb_object *o = sl->obj;
	json_t *ann = json_object();
	if (!ann || json_object_set_new(ann, name, value ? json_string(value) : json_null()) < 0) {
		json_decref(ann);
		return -ENOMEM;
	}
	json_t *body = json_pack("{s:{s:o}}", "metadata", "annotations", ann);
	wreq *r = body ? wreq_new(w, REQ_PG_ANNOTATION) : NULL;
	if (!r || !(r->key = strdup(key)) || !(r->name = strdup(name))) {
		if (r)
			wreq_free(r);
		json_decref(body);
		return -ENOMEM;
	}
	return send_json(w, r, "PATCH", body, "application/merge-patch+json",
			 "/apis/%s/namespaces/%s/podgroups/%s", o->api_version, o->meta.ns,
			 o->meta.name);
}

static void on_done(void *ctx, int status, const char *body, size_t len)
{
	wreq *r = ctx;
	kb_writers *w = r->w;
	wreq_settled(w, r);
	switch (r->kind) {
	case REQ_BIND:
		bind_done(w, r, status, body, len);
		break;
	case REQ_EVICT:
		evict_done(w, r, status, body, len);
		break;
	case REQ_PG_STATUS:
		pg_done(w, r, status, body, len);
		break;
	case REQ_POD_STATUS:
		pod_status_done(w, r, status, body, len);
		break;
	case REQ_PV_CLAIM:
	case REQ_PVC_NODE:
		volume_done(w, r, status, body, len);
		break;
	case REQ_QUEUE_STATUS:
		queue_status_done(w, r, status, body, len);
		break;
	case REQ_PG_ANNOTATION:
		annotation_done(w, r, status, body, len);
		break;
	case REQ_EVENT:
		if (status == 200 || status == 201) {
			w->stats.events++;
			break;
		}
		event_forget(w, r->event_key); /* the next one is posted anew */
		if (status != 404) {
			char why[512];
			reason_of(status, body, len, why, sizeof(why));
			kb_vlog(1, "recording an event about \"%s\" failed: %s", r->key ? r->key : "",
				why);
		}
		break;
	}
	wreq_free(r);
}

const kb_effects kb_writers_effects = {
	.bind = fx_bind,
	.bind_volumes = fx_bind_volumes,
	.evict = fx_evict,
	.job_status = fx_job_status,
	.task_pending = fx_task_pending,
};

kb_writers *kb_writers_new(kb_kube_client *client, kb_cluster *cluster, const char *scheduler_name,
			   kb_err *err)
{
	kb_writers *w = calloc(1, sizeof(*w));
	if (!w || !(w->scheduler_name = strdup(scheduler_name))) {
		free(w);
		kb_err_set(err, -ENOMEM, "writers: out of memory");
		return NULL;
	}
	w->client = client;
	w->cluster = cluster;
	kb_strmap_init(&w->pgs);
	kb_strmap_init(&w->pods);
	kb_strmap_init(&w->backoffs);
	kb_strmap_init(&w->gangs);
	kb_strmap_init(&w->events);
	kb_strmap_init(&w->queues);
	return w;
}

kb_writers *kb_writers_free(kb_writers *w)
{
	if (!w)
		return NULL;
	while (w->reqs) {
		wreq *r = w->reqs;
		if (r->pg && r->pg->forgotten)
			pg_rec_free(r->pg);
		wreq_free(r);
	}
	while (w->pg_list) {
		pg_rec *p = w->pg_list;
		w->pg_list = p->lnext;
		pg_rec_free(p);
	}
	while (w->pod_list) {
		pod_rec *p = w->pod_list;
		w->pod_list = p->lnext;
		free(p->msg);
		free(p->key);
		free(p);
	}
	while (w->gang_list)
		gang_free(w, w->gang_list);
	while (w->backoff_list) {
		backoff_rec *b = w->backoff_list;
		w->backoff_list = b->lnext;
		free(b->key);
		free(b);
	}
	while (w->event_list)
		event_drop(w, w->event_list);
	while (w->queue_list) {
		queue_rec *q = w->queue_list;
		w->queue_list = q->lnext;
		free(q->name);
		free(q->sent_rv);
		free(q);
	}
	kb_strmap_release(&w->queues);
	kb_strmap_release(&w->pgs);
	kb_strmap_release(&w->pods);
	kb_strmap_release(&w->backoffs);
	kb_strmap_release(&w->gangs);
	kb_strmap_release(&w->events);
	free(w->scheduler_name);
	free(w);
	return NULL;
}

void kb_writers_forget_pod(kb_writers *w, const char *key)
{
	backoff_forget(w, key);
	forget_pending(w, key);
}

void kb_writers_tick(kb_writers *w, int64_t now_ms)
{
	w->now_ms = now_ms;
	for (backoff_rec *b = w->backoff_list; b; b = b->lnext) {
		if (!b->held || b->until_ms > now_ms)
			continue;
		b->held = false;
		if (kb_cluster_hold_pod(w->cluster, b->key, false) == 0)
			kb_info("pod \"%s\": backoff after %u refused bindings over, placed again", b->key,
				b->refusals);
	}
}

static void forget_pending(kb_writers *w, const char *key)
{
	int64_t v;
	if (!kb_strmap_get(&w->pods, key, &v))
		return;
	pod_rec *p = (pod_rec *)(intptr_t)v;
	kb_strmap_del(&w->pods, p->key);
	LIST_DEL(w->pod_list, p);
	free(p->msg);
	free(p->key);
	free(p);
}

void kb_writers_forget_podgroup(kb_writers *w, const char *key)
{
	int64_t v;
	if (!kb_strmap_get(&w->pgs, key, &v))
		return;
	pg_rec *p = (pg_rec *)(intptr_t)v;
	kb_strmap_del(&w->pgs, p->key);
	LIST_DEL(w->pg_list, p);
	if (p->in_flight)
		p->forgotten = true; /* freed when its answer comes */
	else
		pg_rec_free(p);
}

uint32_t kb_writers_unsettled(const kb_writers *w)
{
	return w ? w->unsettled : 0;
}

/* r, a binding the client had not sent, was cancelled: the pod is Pending
 * again and its gang counts it as refused (taken back whole if it would be
 * left below minMember). The caller frees r. */
static void bind_abandoned(kb_writers *w, wreq *r, const char *why)
{
	char reason[600];
	(void)snprintf(reason, sizeof(reason), "not sent: %s", why);
	bind_failed(w, r, true, reason);
}

/* r, a status write or an Event the client had not sent, was cancelled:
 * what was remembered as written is forgotten, as for a failed write. The
 * caller frees r. */
static void write_abandoned(kb_writers *w, wreq *r)
{
	if (r->kind == REQ_PG_STATUS) {
		pg_rec *p = r->pg;
		if (pg_answered(p)) {
			pg_status_copy(&p->sent, &p->prev);
			if (p->have_want) {
				p->have_want = false;
				pg_status_clear(&p->want);
			}
		}
	} else if (r->kind == REQ_POD_STATUS) {
		pod_msg_forget(w, r->key);
	} else if (r->kind == REQ_EVENT) {
		event_forget(w, r->event_key);
	} else if (r->kind == REQ_QUEUE_STATUS) {
		r->queue->in_flight = false;
		r->queue->sent_valid = false;
	}
}

uint32_t kb_writers_abandon_unsent(kb_writers *w, const char *why)
{
	uint32_t n = 0;
	if (!w)
		return 0;
	/* Evictions that taking a gang back adds go to the head of the list,
	 * before r: the walk does not meet them, and they are not held up
	 * behind status writes and Events (cancelled too: nobody needs them
	 * to stop safely). */
	for (wreq *r = w->reqs, *next; r; r = next) {
		next = r->next;
		if (r->kind == REQ_EVICT || !kb_kube_cancel_queued(w->client, r))
			continue;
		/* Freeing r may free its gang or PodGroup record, never another
		 * request. */
		wreq_settled(w, r);
		if (r->kind == REQ_BIND) {
			bind_abandoned(w, r, why);
			n++;
		} else {
			write_abandoned(w, r);
		}
		wreq_free(r);
	}
	return n;
}

uint32_t kb_writers_log_unsettled(const kb_writers *w)
{
	uint32_t n = 0;
	for (const gang_rec *g = w ? w->gang_list : NULL; g; g = g->lnext) {
		if (g->in_flight == 0)
			continue;
		n++;
		kb_warn("gang \"%s\": %u bindings sent and not answered at exit; the next leader "
			"sees from the API how they ended and places or takes back the rest",
			g->key, g->in_flight);
	}
	return n;
}

void kb_writers_stats(const kb_writers *w, kb_writer_stats *ret)
{
	*ret = w->stats;
}

/* reflector.h - list + watch one kind of object into the cache.
 *
 * A reflector keeps the store (cache/cluster.h) in step with the API server
 * for one resource path, the way client-go's reflector and pager do:
 *  - a paginated, consistent LIST (limit, 500 by default, and continue;
 *    kube/list_pager.h) gives the full set and a resourceVersion; objects
 *    the store had that the list lacks are removed. No LIST asks
 *    resourceVersion=0: kube-apiserver's watch cache answers that whole,
 *    ignoring limit, and at 150,000 pods the one body passes any sane cap.
 *    Every LIST is a consistent read, so the store never goes back to an
 *    older state than it has seen. Memory: one page at a time (its body,
 *    then its tree, both bounded by the page size), never the whole list;
 *  - then a WATCH from that resourceVersion with allowWatchBookmarks=true
 *    (and the same field selector: an object that stops matching it comes
 *    as DELETED); events are decoded line by line as they stream in (never
 *    buffering the whole response); BOOKMARK events only advance the
 *    resourceVersion;
 *  - "410 Gone" (an expired resourceVersion, as an HTTP status or an ERROR
 *    event, or an expired continue token during a LIST) starts a new LIST
 *    from its first page after the backoff;
 *  - a page or an event larger than max_bytes, or one the JSON loader
 *    refuses, is reported with its size and the limit; the watch ends and a
 *    LIST with pages half as large (down to 1 object) follows after the
 *    backoff, until one goes through (then the page size is restored). An
 *    event that cannot be read is never skipped silently: it would leave
 *    the cache stale;
 *  - a dropped stream or a failed request is retried with exponential
 *    backoff (0.5 s doubling to 30 s) and +-20 % jitter; a success resets it.
 *    Every relist waits out the backoff: no failure loops without one.
 * Objects are decoded with kb_object_decode_as (cache/objects.h); one that
 * names another apiVersion or kind than the path serves counts as one that
 * does not decode. An object that does not decode never ends the watch: it goes to the handler's
 * `undecodable` (the store must stop trusting what it has under that key),
 * or, when the handler has none or the object has no name, is skipped and
 * reported through `error`. A LIST that meets it does not report the key
 * removed.
 *
 * Errors reach the handler's `error` (one call per failure, with the path,
 * what failed and what happens next); nothing is dropped without one.
 * The handler is called on the loop; ownership of each object passes to it.
 * Cost: O(objects in a page) per page; the key set is O(objects kept).
 */
#ifndef KB_CACHE_REFLECTOR_H
#define KB_CACHE_REFLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/resource.h"
#include "base/error.h"
#include "kube/kube_client.h"
#include "cache/objects.h"

struct ev_loop;

typedef struct kb_reflector_handler {
	/* An object was added or changed; the handler owns obj. */
	void (*upsert)(void *ctx, kb_object *obj);
	/* An object was deleted (key is "ns/name" or "name"). */
	void (*remove)(void *ctx, kb_kind kind, const char *key);
	/* The first LIST has been applied (called once per reflector). */
	void (*synced)(void *ctx, const char *path);
	/* The API's latest version of the object under key (a watch event's or
	 * a LIST item, obj: its tree, alive until the call returns) did not
	 * decode; err names the object and the field. The next version that
	 * decodes comes through upsert as usual; its deletion (a watch's
	 * DELETED, or a relist that lacks it) through remove, whether or not
	 * a version of it ever decoded. May be NULL (then error is called
	 * instead). */
	void (*undecodable)(void *ctx, kb_kind kind, const char *key, const kb_yaml_node *obj,
			    const kb_err *err);
	/* Something worth a log line: an object that did not decode, a relist,
	 * a retry (message says which and why). May be NULL. */
	void (*error)(void *ctx, const char *path, const kb_err *err);
	/* The API's JSON of an object (a LIST item or a watch event's
	 * object, api_version and kind the reflector's defaults for items
	 * that lack them) about to be decoded; upsert or undecodable follows
	 * (or neither, when it names no object). The tree lives until that
	 * call returns. May be NULL (--record's hook: daemon/record.h). */
	void (*raw)(void *ctx, const char *api_version, const char *kind, const kb_yaml_node *obj);
} kb_reflector_handler;

typedef struct kb_reflector kb_reflector;

typedef struct kb_reflector_options {
	/* e.g. "status.phase!=Succeeded,status.phase!=Failed" (kube-scheduler's
	 * filter on pods); NULL or "" for none. */
	const char *field_selector;
	int page_size;    /* objects a LIST page asks for; 0: 500 (client-go's) */
	size_t max_bytes; /* largest page or event parsed; 0: 64 MiB (the JSON
			   * loader's cap); tests set less */
	/* The client for the LIST pages; NULL: the one given for the watch.
	 * The daemon gives the pages a connection of their own: on the one
	 * connection that carries the watches, a 150,000-pod LIST stalled
	 * mid-page until curl's 30 s timeout, again and again (curl 7.88,
	 * HTTP/2; bench/README.md, "Cold start"). */
	kb_kube_client *list_client;
} kb_reflector_options;

#define KB_POD_FIELD_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"
/* The pods that finished well: their runs feed the runtime history. */
#define KB_FINISHED_POD_FIELD_SELECTOR "status.phase=Succeeded"

/* Starts listing and watching path, e.g. "/api/v1/pods",
 * "/apis/scheduling.incubator.k8s.io/v1alpha1/podgroups". api_version and
 * kind name what the path serves (list items do not carry them). Resource
 * names are interned into *resnames. opt may be NULL (the defaults).
 * Returns NULL with err on failure: -EINVAL (bad arguments: a path without
 * its "/", a missing handler, a negative page size, max_bytes 1), -ENOMEM. */
kb_reflector *kb_reflector_new(kb_kube_client *c, struct ev_loop *loop, const char *path,
			       const char *api_version, const char *kind, kb_resnames *resnames,
			       const kb_reflector_options *opt, const kb_reflector_handler *h,
			       void *ctx, kb_err *err);

bool kb_reflector_synced(const kb_reflector *r);

/* Stops the reflector (no more callbacks) and frees it. Accepts NULL. */
kb_reflector *kb_reflector_free(kb_reflector *r);

/* Additions to the original contract (for the daemon's metrics and for the
 * end-to-end test, tests/e2e/test_client.c): */

typedef struct kb_reflector_stats {
	uint64_t lists;        /* LISTs started (the first one and every relist) */
	uint64_t list_pages;   /* page requests */
	uint64_t watches;      /* watch streams started */
	uint64_t events;       /* watch lines received, bookmarks included */
	uint64_t relists_gone; /* relists caused by 410 Gone during a watch */
	uint64_t list_expired; /* LISTs restarted: 410 Gone for a continue token */
	uint64_t too_big;      /* pages or events over max_bytes or the loader's limits */
	uint64_t retries;      /* backoff waits after an error */
} kb_reflector_stats;

void kb_reflector_get_stats(const kb_reflector *r, kb_reflector_stats *ret);

/* The timeoutSeconds of the reflector's next watches; 0 (the default) is
 * client-go's: random in [5, 10) minutes. A short one makes the server end
 * watches often (each is resumed from the last resourceVersion, no LIST). */
void kb_reflector_set_watch_timeout(kb_reflector *r, int seconds);

/* For tests only: restarts the current watch from resourceVersion "1",
 * which the server has long forgotten, so the 410 Gone -> relist path runs
 * against a real server. Does nothing unless the reflector is watching. */
void kb_reflector_test_expire(kb_reflector *r);

/* For tests and fuzzing only (tests/fuzz/fuzz_watch.c): handles one framed
 * watch line (without its newline) exactly as a line of the reflector's
 * watch stream is handled: an event becomes upsert, remove, a new
 * resourceVersion (BOOKMARK), a relist (410 Gone) or a report. The
 * reflector is put in the watching state first (its retry timer stopped;
 * it starts no request); the handler's callbacks run inside this call and
 * may free the reflector. Does nothing when r is NULL or inside a callback.
 * Cost: that of the line's JSON parse and decode. */
void kb_reflector_test_watch_line(kb_reflector *r, const char *line, size_t len);

/* Discovery: calls done with the API groups/versions the server serves
 * among those kube-batchd can read (PodGroups and Queues of
 * scheduling.incubator.k8s.io/v1alpha1, scheduling.volcano.sh/v1beta1,
 * scheduling.x-k8s.io/v1alpha1, scheduling.sigs.k8s.io/v1alpha1; and
 * Kubernetes' own gang API, KEP-4671: the newest scheduling.k8s.io version
 * that serves PodGroups, else whether v1alpha1 Workloads are served). A
 * group that is not installed is simply absent, not an error. Cost: one
 * GET of /apis, plus one of /apis/scheduling.k8s.io/VERSION per candidate
 * version of the gang API that /apis lists, newest first, until one whose
 * document lists the resource (podgroups; workloads for v1alpha1): a
 * version listed without it (the gate off, or an old server's
 * PriorityClass) is not watched, since a failing watch would hold every
 * session back. Errors: -EINVAL (no client or callback), -ENOMEM, or what
 * kb_kube_request returns; done gets the HTTP status of /apis (200), or
 * -EINVAL when /apis is not an APIGroupList. */
typedef struct kb_served {
	bool incubator, volcano, cosched, cosched_old;
	/* "scheduling.k8s.io/v1beta1", ".../v1alpha3" or ".../v1alpha2"
	 * (a constant), or NULL when none is served. */
	const char *k8s_podgroups;
	bool k8s_workloads_v1alpha1; /* Kubernetes v1.35's Workload API */
} kb_served;
int kb_discover(kb_kube_client *c, void (*done)(void *ctx, int status, const kb_served *served),
		void *ctx);

#endif

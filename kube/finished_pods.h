/* finished_pods.h - one LIST of the pods that finished well (phase
 * Succeeded), kept for the runtime history (scheduler/runtimes.h).
 *
 * Both readers of the history's source use it: the daemon's seed at start
 * (daemon/history_seed.h) and `explain` / `simulate --from-cluster`
 * (kube/cluster_read.h). A reflector of its own lists
 * KB_FINISHED_POD_FIELD_SELECTOR with its own table of resource names, so
 * the finished pods take no slot of the store's. Only the LIST is read:
 * once it is in, `listed` is called and the watch is stopped (off the
 * reflector's callback); later events are not kept.
 *
 * Limits: at most `cap` pods are kept, those with a finish time
 * (kb_pod_obj.finished_ms > 0); the rest, and any the vector could not
 * grow for, are counted in `dropped`. Objects that do not decode are
 * counted in `undecodable`: a pod that tells no runtime is not an error.
 *
 * Errors: kb_finished_pods_list returns NULL with err (-ENOMEM, or the
 * reflector's). Errors of the LIST (HTTP status, retries) go to the
 * caller's `error` callback, as a reflector's do; the reflector retries
 * with its backoff.
 *
 * Cost: the LIST's pages, decoded once on the loop; memory for up to `cap`
 * decoded pods until freed.
 *
 * Ownership: borrows the loop and the clients, which must outlive it; owns
 * the pods until kb_finished_pods_free. Not thread-safe; no global state.
 */
#ifndef KB_KUBE_FINISHED_PODS_H
#define KB_KUBE_FINISHED_PODS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "cache/objects.h"
#include "kube/kube_client.h"

struct ev_loop;

typedef struct kb_finished_pods kb_finished_pods;

typedef struct kb_finished_pods_handler {
	/* The LIST is in; the pods can be read. Called once. */
	void (*listed)(void *ctx);
	/* As kb_reflector_handler.error: worth a log line or, for a caller
	 * that must not wait, the end. May be NULL. */
	void (*error)(void *ctx, const char *path, const kb_err *err);
} kb_finished_pods_handler;

/* Starts the LIST (list_client may be NULL: watch_client's connection).
 * cap: the most pods kept. */
kb_finished_pods *kb_finished_pods_list(struct ev_loop *loop, kb_kube_client *watch_client,
					kb_kube_client *list_client, uint32_t cap,
					const kb_finished_pods_handler *h, void *ctx,
					kb_err *err);

/* The pods kept (owned by f), *n their count. Complete once listed. */
kb_object *const *kb_finished_pods_items(const kb_finished_pods *f, size_t *n);

/* Pods not kept: over the cap or out of memory. */
uint32_t kb_finished_pods_dropped(const kb_finished_pods *f);

/* Pods that did not decode. */
uint32_t kb_finished_pods_undecodable(const kb_finished_pods *f);

/* Frees the pods kept (the counts stay), e.g. once recorded; safe inside
 * the listed callback. */
void kb_finished_pods_drop(kb_finished_pods *f);

/* Stops the LIST if it still runs and frees the pods. Accepts NULL;
 * returns NULL. */
kb_finished_pods *kb_finished_pods_free(kb_finished_pods *f);

#endif

/* history_seed.h - the daemon's runtime history seeded, once at start, from
 * the finished pods the API still holds.
 *
 * The history (scheduler/runtimes.h) is in the daemon's memory: without a
 * seed, a restarted daemon would estimate "unknown" for every gang behind
 * pods with no duration or deadline until some of them finished again.
 * A seed is one paginated LIST of the pods in phase Succeeded
 * (kube/finished_pods.h, which does not count towards the cache's sync);
 * once it and the cache are both listed (the PodGroups tell the pods'
 * queues), the runs of the pods of our scheduler names go into the history
 * (kb_estimates_seed: start to the containers' last finishedAt), and the
 * pods are freed. Pods that
 * finish later are recorded as the cache sees them go
 * (kb_estimates_pod_gone), as before; one that finished between the two
 * LISTs may count twice. What `explain` and `simulate --from-cluster` read
 * (kube/cluster_read.h) is the same set.
 *
 * Limits: at most KB_HISTORY_SEED_MAX finished pods are kept for the seed
 * (the rest are counted in the log line); the objects are freed once
 * recorded. A LIST that fails is retried by the reflector with its backoff
 * (and logged); the seed is then late, never wrong.
 *
 * Cost: the LIST's pages and the decoding of the finished pods, on the
 * loop, once; memory for up to KB_HISTORY_SEED_MAX decoded pods until the
 * seed is recorded.
 *
 * Ownership: borrows the loop, the clients and the estimates
 * (all must outlive it). Not thread-safe; no global state.
 */
#ifndef KB_DAEMON_HISTORY_SEED_H
#define KB_DAEMON_HISTORY_SEED_H

#include "base/error.h"
#include "cache/cluster.h"
#include "daemon/estimates.h"
#include "kube/kube_client.h"

#define KB_HISTORY_SEED_MAX 10000

typedef struct kb_history_seed kb_history_seed;

struct ev_loop;

/* Starts the LIST. NULL with err on failure (-ENOMEM, or the reflector's). */
kb_history_seed *kb_history_seed_start(struct ev_loop *loop, kb_kube_client *watch_client,
				       kb_kube_client *list_client, kb_estimates *estimates,
				       kb_err *err);

/* The cache has synced: the seed is recorded now if its LIST is in, else
 * when it is. */
void kb_history_seed_cache_synced(kb_history_seed *s);

/* Stops the LIST if it still runs. Accepts NULL; returns NULL. */
kb_history_seed *kb_history_seed_free(kb_history_seed *s);

#endif

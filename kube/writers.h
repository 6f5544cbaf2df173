/* writers.h - cluster mode's side effects: the binder, the evictor, the
 * PodGroup status updater, the pod condition updater and the event recorder.
 *
 * kb_writers_effects is the kb_effects table (api/effects.h) of
 * cluster mode; its ctx is a kb_writers. Every effect updates the store at
 * once (the next session sees the decision) and sends its API request
 * asynchronously on the client's loop, so all members of a gang are in flight
 * together and a session never waits on the network.
 *
 *  bind:        the pod becomes Binding on its node in the store; a Binding
 *               (POST .../pods/NAME/binding) carries the pod's UID as a
 *               precondition and, for pods that asked for nvidia.com/gpu, the
 *               annotation kube-batchd.io/gpu-devices ("0,1"): the API server
 *               copies a Binding's annotations onto the pod, so no pods patch
 *               is needed. A rejected bind puts the pod back to Pending in the
 *               store (its job is retried next session), records a Warning
 *               event FailedScheduling naming pod, node and reason, and logs
 *               once.
 *  evict:       POST .../pods/NAME/eviction (policy/v1) without a grace
 *               period of its own, so the pod's terminationGracePeriodSeconds
 *               applies; the pod is Releasing in the store until the watch
 *               shows it go; a Normal event Preempted names the preemptor.
 *  job_status:  the PodGroup status (phase, running/succeeded/failed,
 *               Unschedulable condition) is written only when it differs
 *               from the last one written for that group, or for a group
 *               first seen (a restart) from the status it shows (merge-patch of
 *               .../status; the whole object for volcano, whose published
 *               CRD has no status subresource). Events: Normal Scheduled when
 *               the group turns Running, Warning Unschedulable when its
 *               reason changes. Never for another scheduler's group
 *               (kb_job.foreign): its reason is logged once instead.
 *  task_pending: pod condition PodScheduled=False reason Unschedulable and a
 *               Warning FailedScheduling event, only when the message changed.
 *
 * Ownership: the writers borrow the client and the cluster (both must outlive
 * them) and copy every string they keep. Callbacks run on the client's loop.
 * Library rule notwithstanding, writers log (they are a daemon layer): one
 * line per failed write, at -v=2 one per successful bind/eviction.
 */
#ifndef KB_CACHE_WRITERS_H
#define KB_CACHE_WRITERS_H

#include <stdint.h>

#include "base/error.h"
#include "cache/cluster.h"
#include "kube/kube_client.h"
#include "api/effects.h"

typedef struct kb_writers kb_writers;

typedef struct kb_writer_stats {
	uint64_t binds;            /* Bindings the API accepted */
	uint64_t bind_failures;    /* Bindings the API refused, or that failed */
	uint64_t evictions;        /* Evictions the API accepted (or pod gone) */
	uint64_t eviction_failures;
	uint64_t status_writes;    /* PodGroup status and pod condition writes */
	uint64_t events;           /* Events posted */
	uint32_t in_flight;        /* requests not answered yet */
} kb_writer_stats;

/* The effects table of cluster mode; pass a kb_writers as its ctx. */
extern const kb_effects kb_writers_effects;

/* scheduler_name is copied (Events' source.component). Returns NULL on
 * -ENOMEM with err. */
kb_writers *kb_writers_new(kb_kube_client *client, kb_cluster *cluster, const char *scheduler_name,
			   kb_err *err);

/* Frees the writers. Requests in flight must have been cancelled first
 * (kb_kube_client_free), since their callbacks point at the writers.
 * Accepts NULL; returns NULL. */
kb_writers *kb_writers_free(kb_writers *w);

/* Forgets what was last written for a pod / a PodGroup (it was deleted, or
 * bound): the next report about it is written again. O(1). */
void kb_writers_forget_pod(kb_writers *w, const char *key);
void kb_writers_forget_podgroup(kb_writers *w, const char *key);

void kb_writers_stats(const kb_writers *w, kb_writer_stats *ret);

#endif

/* writers.h - cluster mode's side effects: the binder, the evictor, the
 * PodGroup status updater, the pod condition updater and the event recorder.
 *
 * kb_writers_effects is the kb_effects table (api/effects.h) of
 * cluster mode; its ctx is a kb_writers. Every effect updates the store at
 * once (the next session sees the decision) and sends its API request
 * asynchronously on the client's loop, so all members of a gang are in flight
 * together and a session never waits on the network. A binding or an
 * eviction is handed to curl at once (kb_kube_client_send_now), so the
 * first gangs of a long session are on the wire before it ends; answers
 * are read by the loop after it.
 *
 *  bind:        the pod becomes Binding on its node in the store; a Binding
 *               (POST .../pods/NAME/binding) carries the pod's UID as a
 *               precondition and, for pods that asked for nvidia.com/gpu, the
 *               annotation kube-batchd.io/gpu-devices ("0,1"): the API server
 *               copies a Binding's annotations onto the pod, so no pods patch
 *               is needed. A failed bind puts the pod back to Pending in the
 *               store, records a Warning event FailedScheduling naming pod,
 *               node and reason, and logs once. Then it depends on why:
 *               - a failure that may pass (transport error, timeout, 5xx,
 *                 429 after the client's own Retry-After rounds, 409 "already
 *                 assigned": an earlier answer was lost) is tried again next
 *                 session, at once, as kube-scheduler does;
 *               - a refusal (400, 403, 409 otherwise, 422 such as an
 *                 admission webhook's, other 4xx but 404) holds the pod back
 *                 from placement (kb_cluster_hold_pod) for a per-pod
 *                 exponential backoff, kube-scheduler's 1 s doubling to 10 s,
 *                 with its PodScheduled condition saying why and when; a
 *                 successful bind or the pod's deletion forgets the backoff.
 *                 And if the gang's members bound or in flight (with those the
 *                 API already showed on a node) fall below minMember, the
 *                 gang is TAKEN BACK WHOLE: every member whose binding the
 *                 API accepted, now or when its answer comes, is evicted
 *                 (Eviction API) with a Warning event GangTakenBack naming the
 *                 refused member, its node and the API's reason. A gang is
 *                 never left running below minMember waiting for a refusal
 *                 to change its mind; it is placed again whole (its members
 *                 recreated by their controller) once the backoff is over,
 *                 all-or-nothing as volcano and coscheduling promise. (The
 *                 other choice, keeping the bound members and retrying the
 *                 refused one, holds their GPUs for as long as a webhook or
 *                 RBAC keeps refusing: the deadlock gang scheduling exists to
 *                 prevent.)
 *               Events are correlated as client-go's EventCorrelator does:
 *               the same event (object, type, reason, message) again within
 *               10 minutes raises the count of the Event already written (a
 *               merge-patch of count and lastTimestamp), 4096 remembered,
 *               least recently used forgotten.
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
#include "kube/queue_status.h"

typedef struct kb_writers kb_writers;

/* Refused or failed Bindings by HTTP status (0: no answer, a transport
 * error or a timeout; -1: any code past the first KB_WRITER_CODES). */
#define KB_WRITER_CODES 12
typedef struct kb_code_count {
	int code;
	uint64_t n;
} kb_code_count;

typedef struct kb_writer_stats {
	uint64_t binds;            /* Bindings the API accepted */
	uint64_t bind_failures;    /* Bindings the API refused, or that failed */
	uint64_t evictions;        /* Evictions the API accepted (or pod gone) */
	uint64_t eviction_failures;
	uint64_t status_writes;    /* PodGroup status and pod condition writes */
	uint64_t events;           /* Events posted */
	uint32_t in_flight;        /* requests not answered yet */
	kb_code_count bind_failure_codes[KB_WRITER_CODES + 1]; /* the last: code -1 */
	uint32_t nbind_failure_codes;
	uint64_t queue_status_writes; /* Queue status writes (kb_writers_queue_status) */
	uint64_t annotation_writes;   /* PodGroup annotation writes (kb_writers_podgroup_annotation) */
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
 * bound): the next report about it is written again; a pod's backoff
 * after refused bindings is forgotten too (and its hold lifted). O(1). */
void kb_writers_forget_pod(kb_writers *w, const char *key);

/* A pod of ours of which no version decoded: it is not in the cache, so no
 * session reports it. Sets its condition PodScheduled=False (reason
 * Unschedulable) to msg, with a Warning FailedScheduling Event, when msg
 * differs from what was last written for it (as a session's report).
 * key: "ns/name"; uid may be NULL. Returns 0, -EINVAL (a key without a
 * namespace), -ENOMEM. O(1) plus the request. */
int kb_writers_pod_unreadable(kb_writers *w, const char *key, const char *uid, const char *msg);

/* Called before each session with its clock: lifts the hold of every pod
 * whose backoff is over, so the session may place it again. Cost:
 * O(pods in backoff). */
void kb_writers_tick(kb_writers *w, int64_t now_ms);
void kb_writers_forget_podgroup(kb_writers *w, const char *key);

void kb_writers_stats(const kb_writers *w, kb_writer_stats *ret);

/* Queue status (kube/queue_status.h): writes `want` to the status of the
 * Queue object `name` as the cache holds it (a merge-patch of
 * .../queues/NAME/status, either API group), only when the cache's copy (the
 * watch's latest) says otherwise, and not again while a write of the same
 * status is in flight or its echo has not come back (the cache's
 * resourceVersion is still the one it had when that write was sent). A
 * queue that is no API object (the queue file's only) is not written.
 * `want` is completed with the cached copy's resource names
 * (kb_queue_report_make's `cached`) by the caller. Counted in
 * queue_status_writes when the API accepts it; a failure is logged (not a
 * 404: the queue is gone) and the next call writes again. Returns 0 (written,
 * or nothing to write) or -ENOMEM. Cost: O(KB_RES_MAX) plus one request
 * when written. */
int kb_writers_queue_status(kb_writers *w, const char *name, const kb_queue_report *want);

/* Sets annotation `name` of the PodGroup `key` as the cache holds it to
 * value (NULL: removes it): a merge-patch of metadata.annotations of
 * .../podgroups/NAME (the object, not its status), sent in the background
 * (after the bindings and status writes queued). Sent as asked: the caller
 * decides when (daemon/estimates.h keeps it to once a minute per group).
 * Counted in annotation_writes when accepted; a failure is logged (not a
 * 404: the group is gone). Returns 0, -ENOENT (no such PodGroup in the
 * cache) or -ENOMEM. Cost: one request. */
int kb_writers_podgroup_annotation(kb_writers *w, const char *key, const char *name,
				   const char *value);

/* The Queue object `name` as the cache holds it, or NULL. O(1). */
const kb_object *kb_writers_cached_queue(const kb_writers *w, const char *name);

/* Shutdown (SIGTERM, or the loss of the lease: daemon/daemon.c), so that no
 * gang is left bound below its minMember:
 *  1. no more sessions; on SIGTERM the bindings queued keep going for a
 *     while, so gangs being bound can finish;
 *  2. kb_writers_abandon_unsent: every binding the client has not sent yet
 *     is cancelled (the API never sees it) and its pod is Pending again in
 *     the store; its gang counts it as refused, so when the members bound
 *     or still in flight fall below minMember, the gang is taken back whole
 *     as for a refused binding (every member the API bound, now or when
 *     its answer comes, evicted with a GangTakenBack event);
 *  3. the daemon waits, bounded, until kb_writers_unsettled is 0: the
 *     bindings already sent and the evictions answered;
 *  4. kb_writers_log_unsettled names each gang still waiting for answers
 *     at exit (the window was too short: the next leader finds out from
 *     the API). */

/* Bindings and evictions queued or sent and not answered yet. O(1). */
uint32_t kb_writers_unsettled(const kb_writers *w);

/* Step 2 above: returns how many bindings were abandoned; why is the
 * reason in the take-back's log line and events ("kube-batchd is
 * stopping"). Bindings already sent are left to their answers. Status
 * writes and Events not sent yet are cancelled too, so that the evictions
 * wait behind nothing (what they would have written is forgotten, as
 * after a failed write). Cost: O(requests) plus the evictions of the
 * gangs taken back. */
uint32_t kb_writers_abandon_unsent(kb_writers *w, const char *why);

/* Step 4 above: one warning per gang whose bindings are still unanswered;
 * returns how many gangs. O(gangs in flight). */
uint32_t kb_writers_log_unsettled(const kb_writers *w);

#endif

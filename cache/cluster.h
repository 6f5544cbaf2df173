/* cluster.h - the object store: what the scheduler knows of the cluster.
 *
 * The store holds the latest decoded object of every Node, Pod, PodGroup,
 * Queue and PriorityClass, fed by the simulator (manifests) or the
 * reflectors (API watch). It also holds what the scheduler itself decided
 * and the API has not confirmed yet (an assumed binding) or, in simulation,
 * what the simulated kubelet did (a pod running, finished, evicted).
 *
 * kb_cluster_snapshot() turns the store into the session's arrays
 * (api/snapshot.h): jobs from PodGroups and lone pods, tasks from our pods,
 * foreign pods as load on their nodes, priorities resolved through
 * PriorityClasses, queues resolved (PodGroup spec.queue, else the namespace
 * mapping, else the default queue).
 *
 * Ownership: the store owns every object given to kb_cluster_apply().
 * Snapshot strings point into those objects: a snapshot must not outlive the
 * next change to the store (sessions are synchronous in the daemon's loop).
 */
#ifndef KB_CACHE_CLUSTER_H
#define KB_CACHE_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "api/snapshot.h"
#include "base/error.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "cache/objects.h"
#include "queue/queue_conf.h"

typedef struct kb_slot {
	kb_object *obj; /* NULL: free slot */
	int64_t created_ms;
	/* Pods only: the scheduler's or the simulator's view overriding the object. */
	bool overridden;
	char *node; /* owned; NULL = not on a node */
	kb_task_status status;
	int64_t started_ms;
	int64_t evicted_ms; /* last eviction by the scheduler; kept across updates */
	uint32_t gpu_mask;
	/* PodGroups only: the phase the scheduler last wrote (until the API echoes it). */
	kb_pg_phase pg_phase;
	/* Pods only: the index of its node in the cached snapshot, a hint that
	 * is checked before use (-1 = none). */
	int32_t node_hint;
} kb_slot;

typedef struct kb_store {
	KB_VEC(kb_slot) slots;
	KB_VEC(uint32_t) free_slots;
	kb_strmap by_key; /* meta.key -> slot index */
} kb_store;

typedef struct kb_cluster {
	kb_resnames resnames;
	kb_store nodes, pods, podgroups, queues, priority_classes;
	const char *scheduler_name; /* pods with another schedulerName are foreign */
	const char *default_queue;
	const kb_queue_conf *queue_conf; /* the queue file (queues, namespace mapping), or NULL; borrowed */
	uint64_t generation; /* bumped by every change */
	/* The snapshot cache: while no object is added, replaced or removed
	 * (shape unchanged), a snapshot is a copy of the last full build with
	 * only the scheduler's own changes refreshed (placements, statuses,
	 * eviction times, PodGroup phases). */
	uint64_t shape;       /* bumped when an object is added, replaced or removed */
	uint64_t cache_shape; /* shape of the cached build */
	bool cache_valid;
	kb_snapshot cache;
} kb_cluster;

/* scheduler_name and default_queue are borrowed (must outlive the cluster). */
void kb_cluster_init(kb_cluster *c, const char *scheduler_name, const char *default_queue);
void kb_cluster_release(kb_cluster *c);

/* Adds or replaces an object (by kind and key); the cluster takes ownership
 * even on failure. A replaced pod keeps its override only while the new
 * object does not contradict it (the API confirmed a binding or the pod
 * finished). created_ms stamps objects without a creationTimestamp.
 * KB_KIND_OTHER and Namespace objects are freed and ignored.
 * Returns 0 or -ENOMEM. */
int kb_cluster_apply(kb_cluster *c, kb_object *obj, int64_t created_ms);

/* Removes the object of that kind and key. Returns true if it was there. */
bool kb_cluster_delete(kb_cluster *c, kb_kind kind, const char *key);

/* The slot of a pod by "ns/name", or NULL. */
kb_slot *kb_cluster_pod(kb_cluster *c, const char *key);

/* Overrides a pod's node and status (assumed bind, simulated run/finish/
 * evict). node may be NULL. Returns 0, -ENOENT or -ENOMEM. */
int kb_cluster_set_pod(kb_cluster *c, const char *key, const char *node, kb_task_status st,
		       int64_t started_ms, uint32_t gpu_mask);

/* Records that the scheduler evicted a pod at time now_ms (for the
 * preemption cool-down). Returns 0 or -ENOENT. */
int kb_cluster_note_eviction(kb_cluster *c, const char *key, int64_t now_ms);

/* Records the phase the scheduler wrote for a PodGroup (the status writer,
 * or the simulator). Returns 0 or -ENOENT. */
int kb_cluster_set_podgroup_phase(kb_cluster *c, const char *key, kb_pg_phase phase);

/* Tells the store that its queue file changed (queues, namespace mapping):
 * the next snapshot is a full build. */
void kb_cluster_queue_conf_changed(kb_cluster *c);

/* Builds a snapshot into *ret (which must be initialised with
 * kb_snapshot_init). Returns 0 or -ENOMEM. Cost: a full build is
 * O(objects log objects); while no object was added, replaced or removed
 * since the last full build, a copy of it refreshed in O(pods + jobs). */
int kb_cluster_snapshot(kb_cluster *c, kb_snapshot *ret, kb_err *err);

#endif

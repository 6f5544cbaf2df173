/* cluster.h - the object store: what the scheduler knows of the cluster.
 *
 * The store holds the latest decoded object of every Node, Pod, PodGroup,
 * Queue and PriorityClass, fed by the simulator (manifests) or the
 * reflectors (API watch). It also holds what the scheduler itself decided
 * and the API has not confirmed yet (an assumed binding) or, in simulation,
 * what the simulated kubelet did (a pod running, finished, evicted).
 *
 * kb_cluster_snapshot() turns the store into the session's arrays
 * (api/snapshot.h): jobs from PodGroups, from the podGroups of v1alpha1
 * Workloads that pods name (one job per workload, podGroup and replica key)
 * and from lone pods, tasks from our pods,
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

#include "api/defaults.h"
#include "api/snapshot.h"
#include "base/error.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "cache/objects.h"
#include "queue/queue_conf.h"

typedef struct kb_slot {
	kb_object *obj; /* NULL: free slot */
	int64_t created_ms;
	/* Pods only: the scheduler's or the simulator's view overriding the
	 * object (node, status, started_ms, gpu_mask). */
	char *node; /* owned; NULL = not on a node */
	int64_t started_ms;
	int64_t evicted_ms; /* last eviction by the scheduler; kept across updates */
	kb_task_status status;
	uint32_t gpu_mask;
	/* PodGroups only: the phase the scheduler last wrote (until the API echoes it). */
	kb_pg_phase pg_phase;
	/* Pods only: the index of its node in the cached snapshot, a hint that
	 * is checked before use (-1 = none). */
	int32_t node_hint;
	bool overridden; /* pods: the fields above; PodGroups: pg_phase */
} kb_slot; /* 64 bytes: one per object, so keep it packed */

typedef struct kb_store {
	KB_VEC(kb_slot) slots;
	KB_VEC(uint32_t) free_slots;
	kb_strmap by_key; /* meta.key -> slot index */
	bool borrowed; /* the objects are another store's (kb_cluster_share_copy): never freed */
} kb_store;

/* One task of the cached build: what the build worked out for it beyond
 * its object (its place in the order, its job, its resolved priority). */
typedef struct kb_cached_task {
	uint32_t slot;     /* the pod's slot in the pod store */
	int32_t job;       /* index into the build's jobs, or -1 */
	int32_t priority;  /* resolved through PriorityClasses */
	bool foreign;      /* another scheduler's pod */
	bool critical;
	bool preempt_never; /* resolved through PriorityClasses */
	int16_t role;      /* index into its job's roles, or -1 */
} kb_cached_task;

/* One job of the cached build: its fields as built, but the resource sums
 * (min_resources is read again from the PodGroup; the others are derived). */
typedef struct kb_cached_job {
	const char *uid, *ns, *name, *key;
	const char *invalid; /* in the cache's arena, or NULL */
	int64_t creation_ms;
	kb_pg_flavor flavor;
	int32_t queue;
	int32_t min_member;
	int32_t priority;
	kb_pg_phase phase;
	uint32_t cache_slot; /* the PodGroup's slot, or UINT32_MAX */
	uint32_t first_task;
	uint32_t ntasks;
	int32_t ngated;
	bool has_min_resources;
	bool foreign;
	/* Into the PodGroup's or a pod's object, which cannot be freed while
	 * the shape does not change (retired objects are kept until then). */
	const kb_topology_req *topology;
} kb_cached_job;

/* The last full build, kept compact: the order of the nodes and tasks (as
 * store slots), the jobs, queues and job task lists as built. Names, specs
 * and requests are read again from the objects, which cannot change while
 * the shape does not, and every derived field is derived again, so a
 * snapshot made from the cache is exactly the full build with the
 * scheduler's own changes refreshed. About 16 bytes per pod, 4 per node and
 * 90 per job. */
typedef struct kb_snapshot_cache {
	kb_arena arena;
	kb_resnames resnames;
	int32_t default_queue;
	int gpu_res;
	uint32_t *node_slots; /* the node store slot of each node, in snapshot order */
	uint32_t nnodes;
	kb_cached_task *tasks;
	uint32_t ntasks;
	kb_cached_job *jobs;
	uint32_t njobs;
	kb_queue *queues;
	uint32_t nqueues;
	uint32_t *job_tasks;
	uint32_t njob_tasks;
} kb_snapshot_cache;

/* A pod the API puts on a node and the store cannot hold: both owned. */
typedef struct kb_unreadable_pod {
	char *key;  /* "ns/name" */
	char *node; /* spec.nodeName */
} kb_unreadable_pod;

typedef struct kb_cluster {
	kb_resnames resnames;
	kb_store nodes, pods, podgroups, queues, priority_classes;
	kb_store workloads; /* scheduling.k8s.io/v1alpha1 Workloads (their podGroups are gangs) */
	kb_store namespaces; /* their labels: pod affinity's namespaceSelector reads them */
	/* PersistentVolumeClaims, PersistentVolumes, StorageClasses: read for
	 * each session (cache/volumes.h), never part of the cached build, so
	 * their changes bump the generations but not the shape. Their slots'
	 * overrides are the scheduler's own assumptions (kb_cluster_assume_*). */
	kb_store pvcs, pvs, storage_classes;
	/* CSINodes and VolumeAttachments: the nodes' CSI volume limits and what
	 * is attached against them, read for each session as the above. */
	kb_store csi_nodes, volume_attachments;
	/* CSIDrivers and CSIStorageCapacities: which drivers publish storage
	 * capacity, and where it is, for provisioning (cache/volumes.c). */
	kb_store csi_drivers, storage_capacities;
	uint32_t claim_pods;  /* pods in the store whose volumes use claims */
	kb_arena vol_arena;   /* the session snapshot's volume needs (cache/volumes.h) */
	/* The schedulerNames whose pods are ours; a pod naming another is
	 * foreign (counted on its node, never placed), and so is a PodGroup
	 * whose pods all name another. The first is the name kube-batchd
	 * reports as. Borrowed. */
	const char *scheduler_names[KB_MAX_SCHEDULER_NAMES];
	uint32_t nscheduler_names;
	const char *default_queue;
	const kb_queue_conf *queue_conf; /* the queue file (queues, namespace mapping), or NULL; borrowed */
	uint64_t generation; /* bumped by every change */
	/* Bumped by the changes that may give a session new work: a change of
	 * shape (below), or a pod refreshed in place that left its node, is
	 * being deleted or finished. Not by what only confirms the past (the
	 * echo of a binding, a pod turning Running, a PodGroup's phase, a
	 * node's heartbeat), even when too many such updates force a build,
	 * nor by the scheduler's own records. */
	uint64_t work_generation;
	/* The snapshot cache: while the shape is unchanged, a snapshot is the last full build made again from
	 * kb_snapshot_cache, with only the scheduler's own changes refreshed
	 * (placements, statuses, eviction times, PodGroup phases). */
	/* The shape: bumped when an object is added or removed, or replaced by
	 * one that builds differently (kb_pod_same_build and
	 * kb_podgroup_same_build say which do not: a pod's place and status,
	 * a PodGroup's phase are refreshed without a build). */
	uint64_t shape;
	uint64_t cache_shape; /* shape of the cached build */
	bool cache_valid;
	kb_snapshot_cache cache;
	/* The session snapshot (kb_cluster_session_snapshot): kept between
	 * sessions, lent to each, put back through its journal; valid while the
	 * shape stays live_shape. Pods whose slot the scheduler changed since
	 * (placements, statuses, evictions) wait in live_dirty; live_pg_dirty
	 * when a PodGroup phase changed. */
	kb_snapshot live;
	bool live_valid, live_pg_dirty;
	uint64_t live_shape;
	uint64_t live_builds; /* times it was built again (read by the tests) */
	uint32_t *live_task_of_slot; /* pod slot -> task index, UINT32_MAX for none */
	uint32_t live_nslots;
	KB_VEC(uint32_t) live_dirty;
	/* Objects replaced in place (kb_cluster_apply): the cached build and
	 * the session snapshot may still point into them; freed when the
	 * shape changes. */
	KB_VEC(kb_object *) retired;
	/* Pods on a node that the store does not hold because no version of
	 * them decoded (kb_cluster_note_unreadable_pod): what they use there
	 * is unknown, so their nodes are no candidates. */
	KB_VEC(kb_unreadable_pod) unreadable;
	kb_strmap unreadable_index; /* pod key -> position in unreadable */
} kb_cluster;

/* scheduler_name and default_queue are borrowed (must outlive the cluster). */
void kb_cluster_init(kb_cluster *c, const char *scheduler_name, const char *default_queue);
/* Answers to one more scheduler name too (borrowed), before the first
 * object is applied. A name already known is ignored. -E2BIG past
 * KB_MAX_SCHEDULER_NAMES. */
int kb_cluster_add_scheduler_name(kb_cluster *c, const char *name);
/* Whether a pod of schedulerName `name` is ours. O(scheduler names). */
bool kb_cluster_name_is_ours(const kb_cluster *c, const char *name);
void kb_cluster_release(kb_cluster *c);

/* A copy of src for a run that must not change src (scheduler/estimate.h):
 * a store of its own, with src's scheduler names, default queue, resource
 * names, queue file (borrowed) and every object of src with its slot's
 * overrides (assumed bindings, evictions, phases). The objects are src's,
 * borrowed, never freed by the copy: the copy is valid while src frees
 * none of them (no change to src until the copy is released), and must be
 * given no object of its own (kb_cluster_apply: no manifests). Returns 0,
 * or -ENOMEM (ret released). Cost: O(objects) map insertions, about 100
 * bytes per object; the copy's first snapshot is a full build. */
int kb_cluster_share_copy(kb_cluster *ret, const kb_cluster *src);

/* Adds or replaces an object (by kind and key); the cluster takes ownership
 * even on failure. An update that changes only what a snapshot refreshes
 * (a pod's node and status, a PodGroup's phase) keeps the shape: the next
 * snapshot is refreshed, not built; the replaced object is freed at the
 * next change of shape. A replaced pod keeps its override only while the new
 * object does not contradict it (the API confirmed a binding or the pod
 * finished). created_ms stamps objects without a creationTimestamp.
 * KB_KIND_OTHER objects are freed and ignored. A Namespace whose labels
 * did not change keeps the shape (only its labels are read).
 * Returns 0 or -ENOMEM. */
int kb_cluster_apply(kb_cluster *c, kb_object *obj, int64_t created_ms);

/* Removes the object of that kind and key. Returns true if it was there. */
bool kb_cluster_delete(kb_cluster *c, kb_kind kind, const char *key);

/* Holds a pod back from placement (held) or lets it be placed again: a held
 * pod of ours is no task, and its gang counts it as gated (its reason says
 * so), until released; the hold survives updates of the pod and ends with
 * the pod. The writers hold a pod whose binding the API refused, for its
 * backoff. Returns 0 or -ENOENT (no such pod). Cost: O(1), and the next
 * snapshot is a full build when the hold changed. */
int kb_cluster_hold_pod(kb_cluster *c, const char *key, bool held);

/* Marks the stored object of that kind and key unusable for placement:
 * the API's latest version of it did not decode, so what the store has is
 * out of date. A Node is then no candidate (not ready; a pod's reason says
 * its update did not decode), a Pod on no node is held back (not placed;
 * its gang counts it as gated, as a held pod), a PodGroup is invalid (its
 * pods are not placed; its status says why). A Queue or a PriorityClass
 * is only marked: its last good version stays in force. The mark ends
 * when a version decodes (kb_cluster_apply replaces the object) or the
 * object is deleted. Returns 0 (also when already marked) or -ENOENT (no
 * such object: one that never decoded is simply absent). Cost: O(1), and
 * the next snapshot is a full build when the mark is new. */
int kb_cluster_mark_undecodable(kb_cluster *c, kb_kind kind, const char *key);

/* A pod the store does not hold, because no version of it decoded, that
 * the API puts on node (spec.nodeName; another scheduler's pod, or one the
 * kubelet runs): what it uses there is unknown, so the node is no
 * candidate (not ready; a pod's reason says a pod on it could not be
 * decoded) until the pod decodes (kb_cluster_apply) or is deleted
 * (kb_cluster_delete). A later note for the same pod moves it. Returns 0,
 * 1 when it was already noted on that node, -ENOMEM. Cost: O(1), and the
 * next snapshot is a full build when the note is new. */
int kb_cluster_note_unreadable_pod(kb_cluster *c, const char *key, const char *node);

/* The API's latest version of an object did not decode; obj is its tree
 * (NULL when not at hand). What the daemon and the replay do with it:
 * kb_cluster_mark_undecodable when the store holds the object; else, for
 * a Pod that obj puts on a node (a non-empty spec.nodeName),
 * kb_cluster_note_unreadable_pod. Returns 0 (marked), 1 (noted on its
 * node: *ret_node, when not NULL, is the node's name, borrowed from obj),
 * 2 (already noted on that node), -ENOENT (neither: the object is simply
 * unknown), -ENOMEM. */
int kb_cluster_undecodable_object(kb_cluster *c, kb_kind kind, const char *key,
				  const kb_yaml_node *obj, const char **ret_node);

/* Whether the stored object of that kind and key is marked undecodable. */
bool kb_cluster_undecodable(kb_cluster *c, kb_kind kind, const char *key);

/* The slot of a pod by "ns/name", or NULL. */
kb_slot *kb_cluster_pod(kb_cluster *c, const char *key);

/* Overrides a pod's node and status (assumed bind, simulated run/finish/
 * evict). node may be NULL. Returns 0, -ENOENT or -ENOMEM. */
int kb_cluster_set_pod(kb_cluster *c, const char *key, const char *node, kb_task_status st,
		       int64_t started_ms, uint32_t gpu_mask);

/* Ends the scheduler's override of a pod (set by kb_cluster_set_pod): its
 * object is the truth again, as after an update that caught up with it.
 * For `kube-batchd replay` (cmd/replay.c), which sets the store's own state
 * to what a record says. Returns 0 (also when not overridden) or -ENOENT.
 * O(1). */
int kb_cluster_reset_pod(kb_cluster *c, const char *key);

/* Records that the scheduler evicted a pod at time now_ms (for the
 * preemption cool-down). Returns 0 or -ENOENT. */
int kb_cluster_note_eviction(kb_cluster *c, const char *key, int64_t now_ms);

/* Records the phase the scheduler wrote for a PodGroup (the status writer,
 * or the simulator). Returns 0 or -ENOENT. */
int kb_cluster_set_podgroup_phase(kb_cluster *c, const char *key, kb_pg_phase phase);

/* Volume assumptions, until the API shows the change (a new object of
 * that key replaces the assumption):
 *  kb_cluster_assume_selected_node: claim "ns/name" has annotation
 *    volume.kubernetes.io/selected-node = node (a write under way);
 *  kb_cluster_assume_pv_claim: PersistentVolume pv has spec.claimRef =
 *    claim "ns/name" (a write under way);
 *  kb_cluster_assume_claim_bound: claim "ns/name" is bound to PersistentVolume
 *    pv ("" for a volume provisioned for it that has no object: the
 *    simulator's PV controller);
 *  kb_cluster_forget_volume_assumption: a write failed: the object is as the
 *    API last showed it again.
 * Each returns 0, -ENOENT (no such object) or -ENOMEM. O(1); the
 * generation and the work generation are bumped (the next session
 * looks again). */
/* The slot of the object of that kind and key, or NULL. O(1). */
const kb_slot *kb_cluster_slot(const kb_cluster *c, kb_kind kind, const char *key);

/* The queue of pod o, as its job's is chosen: its PodGroup's spec.queue
 * (when the store has the PodGroup), else the pod's volcano queue
 * annotation, else its namespace's queue in the queue file, else the
 * default queue. Borrowed from the store, o or the queue file. O(1). */
const char *kb_cluster_pod_queue(const kb_cluster *c, const kb_object *o);

int kb_cluster_assume_selected_node(kb_cluster *c, const char *claim, const char *node);
int kb_cluster_assume_pv_claim(kb_cluster *c, const char *pv, const char *claim);
int kb_cluster_assume_claim_bound(kb_cluster *c, const char *claim, const char *pv);
int kb_cluster_forget_volume_assumption(kb_cluster *c, kb_kind kind, const char *key);

/* Tells the store that its queue file changed (queues, namespace mapping):
 * the next snapshot is a full build. */
void kb_cluster_queue_conf_changed(kb_cluster *c);

/* Builds a snapshot into *ret (which must be initialised with
 * kb_snapshot_init). Returns 0 or -ENOMEM. Cost: a full build is
 * O(objects log objects); while the shape is unchanged since the last
 * full build, it is made again from the cache in
 * O(nodes + pods + jobs), with no sorting and no lookups but the nodes of
 * moved pods. Memory: the snapshot's arrays (about 250 bytes per pod, 700
 * per node and 530 per job); a full build also holds about 40 bytes per
 * pod of scratch until it returns. */
int kb_cluster_snapshot(kb_cluster *c, kb_snapshot *ret, kb_err *err);

/* A snapshot for one session, lent (the cluster owns it): the one the last
 * session had, put back as it was through its journal and brought up to
 * date, or built again (kb_cluster_snapshot) when the shape changed since
 * (an object added or removed, or replaced by one that builds
 * differently). It records its journal from now until the next call, so
 * the session may change it freely. Valid until the next
 * call or the next change to the store; the caller must not release it.
 * Returns 0 and *ret, or -ENOMEM (with err).
 * Cost: with the shape unchanged since the last call,
 * O(what the last session touched + jobs + queues + pods the scheduler or
 * the API changed since), independent of the cluster's size otherwise; else as
 * kb_cluster_snapshot. */
int kb_cluster_session_snapshot(kb_cluster *c, kb_snapshot **ret, kb_err *err);

#endif

/* snapshot.h - the cluster as one session sees it.
 *
 * Arrays of infos (api/types.h) that refer to each other by index. The cache
 * builds a snapshot (cache/cluster.h: kb_cluster_snapshot); a session mutates
 * it tentatively through statements (scheduler/statement.h); nothing in it
 * points back into the cache except immutable names and pod specs.
 *
 * Ownership: every array lives in the snapshot's arena; kb_snapshot_release()
 * frees them all at once.
 *
 * Ordering: every array is sorted deterministically by the cache (nodes by
 * name, tasks by job then creation then name, jobs by key, queues by name),
 * so that no decision depends on hash order or pointer values.
 */
#ifndef KB_API_SNAPSHOT_H
#define KB_API_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "api/resource.h"
#include "api/types.h"
#include "base/arena.h"

/* How many of the last node changes a snapshot names (node_log). */
#define KB_NODE_LOG 8

typedef struct kb_snapshot {
	kb_arena arena;
	kb_resnames resnames;
	kb_node *nodes;
	uint32_t nnodes;
	kb_task *tasks;
	uint32_t ntasks;
	kb_job *jobs;
	uint32_t njobs;
	kb_queue *queues;
	uint32_t nqueues;
	/* The Namespace objects known, sorted by name (their labels, for pod
	 * affinity's namespaceSelector); NULL and 0 when none. */
	const kb_namespace *namespaces;
	uint32_t nnamespaces;
	/* Volumes (api/types.h, cache/volumes.h): task_vol[t] for each task,
	 * NULL for a task whose volumes ask nothing; task_vol itself NULL when
	 * no task has claims. pvs: the volumes claims may be matched with. */
	const kb_task_volumes *const *task_vol;
	const kb_pv *pvs;
	uint32_t npvs;
	/* The ReadWriteOncePod claims pending tasks use ("ns/name"), which
	 * task_vol[t]->rwop index: one pod at a time may use each. */
	const char *const *rwop_claims;
	uint32_t nrwop_claims;
	/* CSI volume limits (cache/volume_limits.h): node_csi[n] for each node,
	 * NULL when no pending task uses a volume of a driver a CSINode limits;
	 * csi_vol_driver[v]: the driver (an index into csi_drivers) of each
	 * volume kb_task_volumes.csi and kb_node_csi.vols name. */
	const kb_node_csi *node_csi;
	const uint32_t *csi_vol_driver;
	uint32_t ncsi_vols;
	const char *const *csi_drivers;
	uint32_t ncsi_drivers;
	/* Task indices grouped by job: job j owns job_tasks[j.first_task ..]. */
	uint32_t *job_tasks;
	/* Sum of every schedulable (ready, not cordoned) node's allocatable. */
	kb_res total_allocatable;
	/* Sum of every schedulable node's future idle (idle + releasing -
	 * pipelined), kept current as tasks move; saturated into int64 from: */
	kb_res total_future_idle;
	/* the same sum, exact (a node's part is at most 3 x 2^63, so 2^64
	 * nodes could not overflow it): added to and taken from as nodes
	 * change, it always equals a sum taken afresh, which a saturated
	 * int64 would not once it had saturated. */
	__int128 future_idle_exact[KB_RES_MAX];
	/* The generation of the cluster it shows (cache/cluster.h: bumped by
	 * every change, the scheduler's own records included); 0 when unknown
	 * (a snapshot built by hand), which never matches a session memo. */
	uint64_t generation;
	int32_t default_queue; /* index of the default queue */
	int gpu_res;           /* index of nvidia.com/gpu in resnames, or -1 */
	/* Tasks whose pods have pod (anti-)affinity terms or spread
	 * constraints (kb_pod_spec_has_topology), counted by
	 * kb_snapshot_derive; topo_counted is false in a snapshot never
	 * derived, whose count is then unknown. Lets a session whose pods ask
	 * none skip the pod topology index without a pass over the tasks. */
	uint32_t ntopo_tasks;
	bool topo_counted;
	/* The tasks that ask for nvidia.com/gpu (gpu_res), in index order,
	 * listed by kb_snapshot_derive into the arena; NULL in a snapshot
	 * never derived (or when that allocation failed), when a reader must
	 * look at every task. Lets the GPU plugin learn its workload from
	 * them alone each session. */
	uint32_t *gpu_tasks;
	uint32_t ngpu_tasks;
	/* The undo journal (below): NULL until the first begin, then kept with
	 * its buffers until kb_snapshot_release(); owned. */
	struct kb_snapshot_journal *journal;
	/* Every bump of a kb_node.gen, counted, and the nodes of the last
	 * KB_NODE_LOG ones (node_log[i % KB_NODE_LOG] for the i-th): which
	 * nodes changed since count c, while node_changes - c <= KB_NODE_LOG,
	 * without a look at each node (scheduler/actions/placement.c). Only
	 * differences matter; not restored by a rollback. */
	uint64_t node_changes;
	uint32_t node_log[KB_NODE_LOG];
} kb_snapshot;

/* Tasks of j that count toward minMember: Allocated, Binding, Bound,
 * Running, Succeeded (kube-batch's ReadyTaskNum). O(1). */
static inline int32_t kb_job_ready_count(const kb_job *j)
{
	return j->nstatus[KB_TASK_ALLOCATED] + j->nstatus[KB_TASK_BINDING] + j->nstatus[KB_TASK_BOUND] +
	       j->nstatus[KB_TASK_RUNNING] + j->nstatus[KB_TASK_SUCCEEDED];
}

/* The ready tasks plus the pipelined ones: every task placed so far. O(1). */
static inline int32_t kb_job_placed_count(const kb_job *j)
{
	return kb_job_ready_count(j) + j->nstatus[KB_TASK_PIPELINED];
}

/* Whether pods may be placed on n: Ready and not cordoned. O(1). */
static inline bool kb_node_schedulable(const kb_node *n)
{
	return n->ready && !n->unschedulable;
}

/* n's future idle: idle + releasing - pipelined, what it will have free once
 * the tasks being evicted are gone and the pipelined ones have moved in
 * (each quantity saturated, resource.h). O(KB_RES_MAX). */
static inline void kb_node_future_idle(const kb_node *n, kb_res *ret)
{
	*ret = n->idle;
	kb_res_add(ret, &n->releasing);
	kb_res_sub(ret, &n->pipelined);
}

/* Whether the spilled names task t asks for (kb_pod_spec.spill,
 * api/resource.h; kb_task.spills says whether there are any) fit node n: for each, n's allocatable of it (kb_node.extra)
 * less what the tasks on n ask of it. future: against the future idle (the
 * tasks in allocated statuses and pipelined hold it, as kb_node_fits
 * counts), else against idle now (allocated statuses and releasing, as
 * kb_fits_idle counts). Returns -1 when every one fits (or t asks none),
 * else the index in t->spec->spill of the first that does not.
 * O(spilled asks x tasks on n x their spilled asks), in
 * kb_node_spill_short_asked; inline and O(1) for a task that asks none. */
int kb_node_spill_short_asked(const kb_snapshot *s, const kb_task *t, const kb_node *n,
			      bool future);
static inline int kb_node_spill_short(const kb_snapshot *s, const kb_task *t, const kb_node *n,
				      bool future)
{
	if (!t->spills)
		return -1; /* the fit tests' hot path: no call, no look at the spec */
	return kb_node_spill_short_asked(s, t, n, future);
}

void kb_snapshot_init(kb_snapshot *s);
void kb_snapshot_release(kb_snapshot *s);

/* Index lookups by name; -1 when absent. O(log n) (arrays are sorted). */
int32_t kb_snapshot_find_node(const kb_snapshot *s, const char *name);
int32_t kb_snapshot_find_queue(const kb_snapshot *s, const char *name);
int32_t kb_snapshot_find_job(const kb_snapshot *s, const char *key);
/* The labels of namespace `name`, or NULL when the snapshot has no such
 * Namespace. O(log namespaces). */
const kb_labels *kb_snapshot_namespace_labels(const kb_snapshot *s, const char *name);

/* Links task t onto node n's task list and accounts its request (used/idle,
 * or pipelined for KB_TASK_PIPELINED, plus releasing for KB_TASK_RELEASING).
 * The task's status and node must already be set. O(1). */
void kb_snapshot_node_add_task(kb_snapshot *s, uint32_t n, uint32_t t);
/* The inverse of kb_snapshot_node_add_task with the task's current status. */
void kb_snapshot_node_remove_task(kb_snapshot *s, uint32_t n, uint32_t t);

/* Moves task t to status st, keeping the job's counters and resource sums
 * and the node accounting consistent. The task's node must be set before a
 * move into a status that holds a node. O(1). */
void kb_snapshot_set_task_status(kb_snapshot *s, uint32_t t, kb_task_status st);

/* Recomputes every derived field (node used/idle/releasing/pipelined and
 * task lists, job counters and sums, queue allocated/request, totals) from
 * the tasks' statuses and nodes. The cache calls it once after filling the
 * arrays. O(nodes + tasks + jobs + queues). */
void kb_snapshot_derive(kb_snapshot *s);

/* ---- undo journal ------------------------------------------------------------------
 *
 * Lets a session change a snapshot that outlives it (the cache's own, lent
 * for one session) and then put it back exactly as it was, at the cost of
 * what the session touched rather than of a copy of everything.
 * kb_snapshot_journal_begin() saves the jobs, queues and totals whole
 * (O(jobs + queues)); from then on every change made through this module
 * saves a task's or a node's first version before changing it, and
 * kb_snapshot_journal_rollback() restores them all and stops recording.
 * Code that writes a task field itself (kb_task.node, kb_task.gpu_mask)
 * calls kb_snapshot_touch_task() first. Nodes, jobs and queues are not
 * written elsewhere during a session, except job and queue fields, which the
 * whole copy covers. The journal's buffers are kept for the next begin and
 * freed by kb_snapshot_release(). */

/* Starts recording. Returns 0, -EBUSY when already recording, or -ENOMEM. */
int kb_snapshot_journal_begin(kb_snapshot *s);
/* Saves task t's current version if the journal has not yet. O(1). */
void kb_snapshot_touch_task(kb_snapshot *s, uint32_t t);
/* Restores everything saved since begin and stops recording (a no-op when
 * not recording). Returns 0, or -ENOMEM when a save had failed: then the
 * snapshot is not as it was and its owner must build it again.
 * O(touched tasks + touched nodes + jobs + queues). */
int kb_snapshot_journal_rollback(kb_snapshot *s);

/* The universal invariants, for assert() in debug and test builds: every
 * node's used equals the sum of its tasks' requests, idle = allocatable -
 * used, releasing/pipelined match, no job counter is negative, task lists
 * are consistent. Returns true when they hold; otherwise false and, if
 * why != NULL, a description in why[0..size). O(nodes + tasks + jobs). */
bool kb_snapshot_check(const kb_snapshot *s, char *why, size_t size);

#endif

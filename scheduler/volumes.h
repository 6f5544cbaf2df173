/* volumes.h - volume binding in a session (kube-scheduler's VolumeBinding).
 *
 * The cache says what each pending pod's claims ask (api/types.h
 * kb_task_volumes, cache/volumes.h). This module:
 *  - checks a node for a task (kb_volumes_fit, called by kb_predicate for
 *    every action, whatever plugins are configured): the pod's wait
 *    reason, the node its claims were pinned to, its bound volumes' node
 *    affinity, and for each claim still to bind an available volume that
 *    fits there (class, size, access and volume modes, selector, node
 *    affinity; the smallest, as kube-scheduler picks) not taken by another
 *    task of the session, else dynamic provisioning when the class has a
 *    provisioner and its allowedTopologies admit the node, and, when the
 *    provisioner is a CSI driver that publishes storage capacity, a
 *    CSIStorageCapacity of the class big enough for the claim selects the
 *    node ("node(s) did not have enough free storage"; the capacity is
 *    read as published: a session does not subtract what it placed, as
 *    kube-scheduler does not);
 *  - a ReadWriteOncePod claim goes to one pod at a time: a pod on a node
 *    using it (its holder) keeps every other pod off every node, unless
 *    the session evicted it, when the task fits the holder's node, to
 *    wait there for it to go as kube-scheduler's preemption nominates it
 *    (kb_volumes_blocks tells preemption which victim that is); within a
 *    session the first task placed keeps the others off it ("node has
 *    pod using PersistentVolumeClaim with the same name and
 *    ReadWriteOncePod access mode", kube-scheduler's VolumeRestrictions);
 *  - CSI volume limits (kube-scheduler's NodeVolumeLimits): a node whose
 *    CSINode limits a driver takes no more of its volumes than the limit,
 *    counting those in use as the session started (cache/volume_limits.h),
 *    those the session placed there, and the task's own, each distinct
 *    volume once ("node(s) exceed max volume count"); volumes of victims
 *    evicted in the session still count until their pods are gone;
 *  - takes the chosen volumes (and ReadWriteOncePod claims) when a task is
 *    placed and gives them back when the placement is undone
 *    (kb_volumes_update, from statements);
 *  - tells a statement's commit which placements may be bound
 *    (kb_volumes_ready) and what to write for the others first
 *    (kb_volumes_picks): a gang is bound only once every member's claims
 *    are bound, so that none holds a node while another waits for storage.
 *
 * Reasons are kube-scheduler's: "node(s) didn't find available persistent
 * volumes to bind", "node(s) didn't match PersistentVolume's node
 * affinity". State lives in the session arena; nothing when no task has
 * claims (the checks are then one pointer test). Cost of a fit check:
 * O(claims to bind x available volumes) for a task with claims to bind,
 * O(affinity terms) otherwise, plus for a task with CSI volumes on a node
 * with limits O(the node's tasks' CSI volumes x those seen so far + the
 * task's x limits).
 */
#ifndef KB_SCHEDULER_VOLUMES_H
#define KB_SCHEDULER_VOLUMES_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/framework.h"

/* The task's volume needs, or NULL when it has none. O(1). */
static inline const kb_task_volumes *kb_task_vol(const kb_snapshot *s, const kb_task *t)
{
	return s->task_vol ? s->task_vol[t - s->tasks] : NULL;
}

/* KB_FIT_OK or KB_FIT_FAIL with *ret_reason. Allocates nothing. */
int kb_volumes_fit(const kb_session *ssn, const kb_task *task, const kb_node *node,
		   const char **ret_reason);

/* delta +1: task was placed on its node: takes the volumes its claims to
 * bind are given there; -1: gives them back. Returns 0 or -ENOMEM (then
 * the session's first effect error says so and the task's claims are
 * treated as unmatched). */
int kb_volumes_update(kb_session *ssn, const kb_task *task, int delta);

/* Whether task cannot be placed anywhere while task index `victim` runs:
 * it holds a ReadWriteOncePod claim of task's. O(claims). */
bool kb_volumes_blocks(const kb_session *ssn, const kb_task *task, uint32_t victim);

/* Whether the task has a ReadWriteOncePod claim a pod on a node held as
 * the session started: where it fits now, it fits only because the session
 * evicted that pod, and must wait there for it to go (pipelined, never
 * bound at once). O(1). */
static inline bool kb_volumes_held(const kb_session *ssn, const kb_task *task)
{
	const kb_task_volumes *v = kb_task_vol(ssn->snap, task);
	return v && v->nholders > 0;
}

/* Whether the task's claims are all bound (true for a task without needs). */
bool kb_volumes_ready(const kb_session *ssn, const kb_task *task);

/* For a placed task with claims to bind: picks[i] for to_bind[i], the
 * volume taken (an index into snap->pvs), or -1 to provision on the
 * node. NULL when it has none (or they were not taken). */
const int32_t *kb_volumes_picks(const kb_session *ssn, const kb_task *task);

/* Whether two tasks read the same to volume binding (a node search for
 * one may serve the other): only when neither has claims to check. */
static inline bool kb_volumes_alike(const kb_session *ssn, const kb_task *a, const kb_task *b)
{
	return !kb_task_vol(ssn->snap, a) && !kb_task_vol(ssn->snap, b);
}

#endif

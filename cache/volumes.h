/* volumes.h - what pending pods' PersistentVolumeClaims ask of a session.
 *
 * For each session the cache works out, from the claims, volumes and
 * storage classes in the store (and the scheduler's own assumptions about
 * writes under way, cache/cluster.h), kube-scheduler's VolumeBinding view of
 * every pending task whose pod uses claims (api/types.h kb_task_volumes):
 *  - it waits wherever it goes (kube-scheduler's reasons): a claim that does
 *    not exist ("persistentvolumeclaim \"x\" not found", or for an ephemeral
 *    volume "waiting for ephemeral volume controller to create the
 *    persistentvolumeclaim \"x\""), is being deleted, is Lost, an ephemeral
 *    claim some other pod owns, a claim of an Immediate class (or of no
 *    class, or of a class that does not exist) not bound yet ("pod has
 *    unbound immediate PersistentVolumeClaims", naming the missing class),
 *    a claim bound to a volume that does not exist;
 *  - a ReadWriteOncePod claim a pod on a node uses: that pod is its
 *    holder (kube-scheduler's VolumeRestrictions; task_vol[t]->holders),
 *    which the pod cannot be placed beside unless the session evicts it,
 *    and when the holder is already being deleted the pod waits; the
 *    ReadWriteOncePod claims of pending tasks are numbered in
 *    s->rwop_claims, for the session's one-pod-at-a-time check;
 *  - bound volumes with node affinity (local volumes) restrict its nodes;
 *  - claims of a WaitForFirstConsumer class not bound yet: pinned to the
 *    node of their volume.kubernetes.io/selected-node (a provisioner at
 *    work), or to a volume pre-bound to them (the PV controller at work),
 *    or else to be bound by the scheduler at placement (to_bind).
 * A claim counts as bound once it names its volume and carries
 * pv.kubernetes.io/bind-completed, as kube-scheduler's isPVCFullyBound.
 * The volumes claims may be matched with (Available, not being deleted, no
 * claimRef, none assumed) go into s->pvs.
 *
 * Cost: O(1) when no pod in the store uses claims; else O(pending tasks
 * of jobs with pending tasks + their claims x log claims + volumes), the
 * volumes twice (the list above, and once an index of the pre-bound ones
 * when a claim not bound yet waits for its first consumer), the pods on
 * nodes once when a pending pod has a ReadWriteOncePod claim. Memory from
 * `arena`, which the caller owns and
 * which must outlive the snapshot's use of it.
 */
#ifndef KB_CACHE_VOLUMES_H
#define KB_CACHE_VOLUMES_H

#include "api/snapshot.h"
#include "base/arena.h"
#include "base/error.h"
#include "cache/cluster.h"

/* Sets s->task_vol, s->pvs, s->npvs, s->rwop_claims and s->nrwop_claims
 * (NULL and 0 when nothing uses claims). Returns 0 or -ENOMEM (with err; s then says nothing about
 * volumes). */
int kb_cluster_volumes(kb_cluster *c, kb_snapshot *s, kb_arena *arena, kb_err *err);

#endif

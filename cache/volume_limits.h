/* volume_limits.h - the nodes' CSI volume limits as a session sees them
 * (kube-scheduler's NodeVolumeLimits).
 *
 * A CSINode names, per CSI driver, how many of that driver's volumes its
 * node may attach (spec.drivers[].allocatable.count). A pod's volume counts
 * against the limit of its driver:
 *  - a claim bound to a PersistentVolume with spec.csi: that driver, the
 *    volume known by its volumeHandle (two pods using one volume count it
 *    once);
 *  - a claim not bound (or bound to a volume that does not exist): its
 *    StorageClass's provisioner, as a volume of its own (a claim of no
 *    class, or of a class that does not exist, counts nothing: it binds
 *    before placement or never);
 *  - volumes of other sources count nothing (in-tree volumes that CSI
 *    migration would translate are not translated: not counted).
 * Already in use on a node: the volumes of the pods on it (not finished;
 * a claim that does not exist counts nothing) and of the VolumeAttachments
 * that name it (attacher and the volume's handle), each distinct volume
 * once.
 *
 * Used by cache/volumes.c while it works out a session's volume needs:
 * kb_csi_pass_open, then kb_csi_pod_volumes for each pending pod with
 * claims, then kb_csi_pass_close, which fills the snapshot's node_csi,
 * csi_vol_driver and csi_drivers (api/snapshot.h). The check itself is
 * scheduler/volumes.c's.
 *
 * Cost: nothing when no CSINode limits a driver (one pass over the
 * CSINodes); else O(claims of pending pods) lookups, and when one of them
 * uses a limited driver O(nodes + claims of pods on limited nodes +
 * VolumeAttachments) more. Memory from the session's arena; the pass's own
 * maps are freed by kb_csi_pass_close.
 */
#ifndef KB_CACHE_VOLUME_LIMITS_H
#define KB_CACHE_VOLUME_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/snapshot.h"
#include "base/arena.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "cache/cluster.h"

typedef struct kb_csi_pass {
	const kb_cluster *c;
	kb_arena *a;
	kb_strmap drivers; /* limited driver name -> index */
	KB_VEC(const char *) driver_names;
	kb_strmap vols;    /* "driver/handle" of pending pods' volumes -> index */
	KB_VEC(uint32_t) vol_driver;
	bool nomem;
} kb_csi_pass;

/* Starts a pass: finds the drivers some CSINode limits. Returns whether
 * there is any (when not, the other calls do nothing). */
bool kb_csi_pass_open(kb_csi_pass *p, const kb_cluster *c, kb_arena *a);

/* The distinct limited-driver volumes of pending pod `pod`, as indices, in
 * *ret (arena memory) and their count; 0 when none. */
uint32_t kb_csi_pod_volumes(kb_csi_pass *p, const kb_object *pod, const uint32_t **ret);

/* Ends the pass: when some pending pod uses a limited driver, works out
 * each node's limits and what is in use there into s (whose CSI fields the
 * caller has cleared; left so otherwise). Frees the pass's
 * maps. Returns 0 or -ENOMEM (also for an allocation that failed during
 * the pass). */
int kb_csi_pass_close(kb_csi_pass *p, kb_snapshot *s);

#endif

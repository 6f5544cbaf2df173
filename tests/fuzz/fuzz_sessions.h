/* fuzz_sessions.h - one scheduling session over a store, with the universal
 * invariants checked after it (fuzz_pipeline.c, fuzz_action_args.c).
 *
 * fz_session takes the store's session snapshot (kb_cluster_session_snapshot,
 * as the daemon and the simulator do), runs every configured action with
 * an effects table that records the decisions, closes the session and
 * checks, abort()ing when one is broken:
 *  - no pod is bound twice in the session, nor bound while the store has it
 *    on a node (and the session did not evict it);
 *  - no node that received a pod is, for any resource one of its new pods
 *    asks for, over its allocatable: the requests of the store's pods on it
 *    (not finished, not evicted by the session) plus the new ones (the
 *    kubelet's admission rule);
 *  - a gang (a job from a PodGroup or Workload) that got a pod has at least
 *    minMember pods placed (on a node or finished) after the session;
 *  - every pending task of ours is reported pending once, with a reason.
 * With apply, the decisions then go into the store as the simulator applies
 * them (evicted pods pending again, bound pods running), so the next
 * session sees them; without, the store is left as it was (the next
 * session snapshot is put back through its journal).
 *
 * Returns 0, or the session's -errno (err says why: a bad argument, ...).
 * Ownership: nothing is kept. Cost: one session plus O(pods) checks.
 */
#ifndef KB_TESTS_FUZZ_SESSIONS_H
#define KB_TESTS_FUZZ_SESSIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "cache/cluster.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

int fz_session(kb_cluster *c, const kb_conf *conf, kb_session_memo *memo, int64_t now_ms,
	       bool apply, kb_err *err);

#endif

/* effects.h - the side effects of a session, as a table of operations.
 *
 * Cluster mode's writers (kube/writers.h), the simulator's in-memory applier
 * (scheduler/simulate.c) and the recorders of tests and benchmarks each fill
 * one. The framework calls them: bind and evict when a statement commits,
 * job_status and task_pending when a session closes. They see the snapshot
 * as the session leaves it (read-only) and the job status the framework
 * computed (api/jobstatus.h), never the session itself, so that nothing
 * below the framework needs to know what a session is.
 *
 * Each returns 0 or -errno. The session logs nothing itself: it passes the
 * first failure back to the caller of kb_session_close() and still attempts
 * every other effect. ctx is the table owner's. Any member may be NULL.
 */
#ifndef KB_API_EFFECTS_H
#define KB_API_EFFECTS_H

#include <stdint.h>

#include "api/jobstatus.h"
#include "api/snapshot.h"

typedef struct kb_effects {
	/* A task of a job that is ready: bind it to node. now_ms is the
	 * session's clock (wall time in cluster mode, virtual in simulation). */
	int (*bind)(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		    const kb_node *node);
	/* Before a placed task is bound, its claims still to bind must be
	 * (scheduler/volumes.h): for each vol->to_bind[i], bind it to
	 * snap->pvs[picks[i]], or when picks[i] < 0 have it provisioned on
	 * node. Returns 1 when the claims are bound at once (the simulator's
	 * PV controller: the task may be bound now), 0 when the writes are
	 * under way (it is bound in a later session, once the claims show
	 * bound), or -errno. */
	int (*bind_volumes)(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
			    const kb_node *node, const kb_task_volumes *vol, const int32_t *picks);
	/* Evict a running task (preempt/reclaim). reason names the preemptor. */
	int (*evict)(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		     const char *reason);
	/* At close, for every job: its status as this session leaves it. The
	 * writer compares with what it last wrote and writes only changes. */
	int (*job_status)(void *ctx, const kb_snapshot *snap, const kb_job *job,
			  const kb_job_status *status);
	/* At close, for every queue: its deserved share this session (all zero
	 * when no plugin computes shares). Allocated and requested resources
	 * are the queue's own fields. */
	int (*queue_status)(void *ctx, const kb_snapshot *snap, const kb_queue *queue,
			    const kb_res *deserved);
	/* At close, for every task still pending: why (never NULL). */
	int (*task_pending)(void *ctx, const kb_snapshot *snap, const kb_task *task,
			    const char *reason);
} kb_effects;

#endif

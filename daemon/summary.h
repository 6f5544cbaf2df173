/* summary.h - what one scheduling session concluded, kept for /metrics and
 * for the Queue status writes.
 *
 * The daemon owns one kb_summary (daemon_state, no global). Each session
 * fills it afresh, in three steps around the session's own calls:
 *
 *   kb_session_open(&ssn, snap, conf, &kb_summary_effects, &tee, ...)
 *        with tee = {the writers' table and ctx, the summary}: every effect
 *        goes on to the writers unchanged, and job_status, queue_status and
 *        task_pending are also counted here;
 *   kb_summary_begin(sum, snap)        after open, before the actions;
 *   kb_session_run_actions(...)
 *   kb_summary_session(sum, &ssn)      before close: overused, per-action
 *                                      times and evictions;
 *   kb_session_close(&ssn)             (the tee counts the reports)
 *   kb_summary_end(sum, snap, seconds) after close: allocated, request,
 *                                      capability, guarantee, share, GPUs.
 *
 * Nothing here reads the session after close: the snapshot stays lent by the
 * cluster until the next session (cache/cluster.h), the arena does not.
 *
 * Figures per queue are the session's: allocated and request as the queue's
 * tasks leave them (binds of this session included), deserved as the
 * proportion plugin computed it (zero without it), capability and guarantee
 * as configured (capability only for the resources the queue caps), share
 * as volcano's proportion plugin defines it (the largest allocated/deserved
 * over the resources; a resource deserved 0 counts 1 when allocated, else
 * 0), overused as the plugins said (kb_queue_overused). PodGroup counts by
 * phase are the phases the session computed for the groups it writes
 * (kb_job_status_of), i.e. what the PodGroups' status will say; lone pods,
 * Workload gangs (no status) and other schedulers' groups are not counted.
 *
 * Pending reasons are sorted into a few classes a dashboard can stack
 * (kb_reason_class). Attempts count each of our pending pods a session
 * considered: "scheduled" when it was bound, "unschedulable" when it still
 * waits, "error" per failed side effect.
 *
 * Memory: O(queues + nodes with nvidia.com/gpu) per summary, names copied
 * (one malloc per name); no label is made from pods or jobs, so /metrics
 * stays bounded by queues x resources (KB_RES_MAX) + GPU nodes. Cost of
 * each step: begin O(queues + nodes), the tee O(1) per report, session
 * O(queues x plugins), end O(queues x KB_RES_MAX + nodes).
 */
#ifndef KB_DAEMON_SUMMARY_H
#define KB_DAEMON_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "api/effects.h"
#include "api/resource.h"
#include "api/snapshot.h"

struct kb_session;

/* Classes of pending reasons ("reason" label of the pending metrics). */
typedef enum kb_reason_class {
	KB_REASON_RESOURCES = 0, /* "Insufficient cpu", "Too many pods" */
	KB_REASON_PLACEMENT,     /* node(s) refused for affinity, taints, readiness, topology */
	KB_REASON_QUEUE,         /* the queue's capability, share or enqueue refused */
	KB_REASON_GANG,          /* too few members to reach minMember */
	KB_REASON_PIPELINED,     /* waiting for resources being released */
	KB_REASON_INVALID,       /* the job cannot be scheduled at all (bad PodGroup, missing) */
	KB_REASON_OTHER,
	KB_REASON_COUNT
} kb_reason_class;

/* The label value of a class: "resources", "placement", "queue", "gang",
 * "pipelined", "invalid", "other". */
const char *kb_reason_class_name(kb_reason_class c);

/* The class of a pending reason (a session's words, see
 * scheduler/actions/allocate.c, plugins/gang.c, plugins/proportion.c).
 * NULL reads "other". O(length). */
kb_reason_class kb_reason_classify(const char *reason);

/* PodGroup phases counted per queue (kb_pg_phase order). */
#define KB_SUMMARY_NPHASES 5

typedef struct kb_summary_queue {
	char *name;
	int32_t weight;
	kb_queue_state state;
	bool overused;
	double share;
	uint32_t capability_mask; /* bit i: resource i is capped */
	kb_res allocated, request, deserved, capability, guarantee;
	int32_t podgroups[KB_SUMMARY_NPHASES]; /* by kb_pg_phase */
} kb_summary_queue;

typedef struct kb_summary_node {
	char *name;
	int64_t gpu_total_milli;     /* allocatable nvidia.com/gpu */
	int64_t gpu_allocated_milli; /* used (placed, bound, running, releasing) */
} kb_summary_node;

/* Times and evictions of one configured action in one session. */
typedef struct kb_summary_action {
	const char *name; /* the action's static name */
	double seconds;   /* 0 when the memo skipped it */
	uint32_t evictions;
	bool ran;
} kb_summary_action;

#define KB_SUMMARY_MAX_ACTIONS 16

typedef struct kb_summary {
	bool valid;             /* a session ran and was summarized */
	kb_resnames resnames;   /* the snapshot's names, for labels */
	kb_summary_queue *queues; /* malloc'd, nqueues */
	uint32_t nqueues;
	kb_summary_node *nodes; /* nodes with nvidia.com/gpu allocatable, malloc'd */
	uint32_t nnodes;
	kb_summary_action actions[KB_SUMMARY_MAX_ACTIONS];
	uint32_t nactions;
	uint32_t pending_pods[KB_REASON_COUNT];
	uint32_t pending_jobs[KB_REASON_COUNT];
	uint32_t scheduled;     /* pods bound this session */
	uint32_t unschedulable; /* pending pods reported */
	uint32_t errors;        /* side effects that failed */
	uint32_t victims;       /* evictions of preempt and reclaim this session */
	double seconds;         /* the session's length */
	bool oom;               /* a name could not be copied: the summary is partial */
} kb_summary;

/* What the tee table's ctx is: where each effect goes on to, and where it
 * is counted. */
typedef struct kb_summary_tee {
	const kb_effects *next;
	void *next_ctx;
	kb_summary *sum;
} kb_summary_tee;

/* The tee (above); its ctx is a kb_summary_tee. Each member calls the
 * next table's (when it has one) and returns its result. */
extern const kb_effects kb_summary_effects;

/* Zeroes s. */
void kb_summary_init(kb_summary *s);

/* Frees what s holds and zeroes it. */
void kb_summary_release(kb_summary *s);

/* Starts the summary of a session over snap: forgets the last one, copies
 * the queue names. 0 or -ENOMEM (s is then empty, not valid). */
int kb_summary_begin(kb_summary *s, const kb_snapshot *snap);

/* Reads what only the open session knows: each queue's overused verdict
 * and each action's time and evictions. Call between run_actions and
 * close. */
void kb_summary_session(kb_summary *s, const struct kb_session *ssn);

/* Ends the summary after close: the queues' figures and share, the GPU
 * nodes; s becomes valid. 0 or -ENOMEM (s is then partial: valid, oom). */
int kb_summary_end(kb_summary *s, const kb_snapshot *snap, double seconds);

#endif

/* framework.h - the session, the plugin callback table and tier dispatch.
 *
 * A session is one scheduling cycle over a snapshot of the cluster. It is
 * opened from a snapshot and a configuration, runs the configured actions in
 * order, and is closed, at which point the framework computes every job's
 * status (api/jobstatus.h) and hands it, the pending reasons and the queues'
 * deserved shares to the side-effect table (api/effects.h).
 *
 * The model and the output are kept apart. ssn->snap, the cluster as the
 * session sees it, is read-only to plugins; only the framework, statements
 * and actions change it, through ssn->snap_rw (tentative placements and
 * evictions, under the snapshot's undo journal). What a session concludes
 * about jobs and queues (a job's pending reason, how many of its tasks fit,
 * a queue's deserved share) is session output: arrays in the session's
 * arena, indexed like the snapshot's, written by actions and plugins.
 * Everything that lives for one session comes from ssn->arena and is freed
 * in one call at close.
 *
 * A plugin is a constant table of callbacks (kb_plugin_ops); NULL means "no
 * opinion here". At open, the framework builds, in tier order, one array per
 * hook of the callbacks of enabled plugins, so dispatch is a tight loop.
 *
 * Tier semantics (kube-batch's, exactly):
 *  - job/queue/task order: the first non-zero answer in tier order wins; then
 *    creation time (older first), then namespace/name (then UID), so that
 *    the cluster and the simulator break ties alike (volcano: UID).
 *  - job valid: the first plugin that rejects decides (with its reason).
 *  - job ready / job pipelined: AND over every enabled plugin.
 *  - job enqueueable: within a tier, any REJECT refuses; a tier with a PERMIT
 *    and no REJECT admits; a tier that only abstains passes to the next; the
 *    end of the tiers admits.
 *  - predicate: the node's own fit first (ready; the task's pods and every
 *    resource it asks within the node's future idle), and the domain its
 *    gang was given (scheduler/topology.h), checked by the framework for
 *    every action whatever the plugins; then every plugin must pass; the
 *    first failure is reported.
 *  - queue fit: the task's queue stays within its capability (unless the
 *    configuration turns that off, conf.h: queue_capability), then every
 *    plugin's allocatable vote must permit (AND).
 *  - job starving: the first tier with a starving callback decides, AND
 *    inside it; no callback anywhere: not starving (volcano's).
 *  - preemptive: AND (may the queue take more, to reclaim for a task).
 *  - node order: scores are summed (weights are applied inside plugins).
 *  - preemptable / reclaimable: inside a tier, the victim sets of the plugins
 *    that gave an opinion are intersected; the first tier where any plugin
 *    gave an opinion decides; no opinion anywhere means no victims.
 *  - overused: OR.
 *
 * Abstaining is an explicit value (KB_ABSTAIN), never inferred from an empty
 * result (kube-batch's nil-versus-empty trap).
 */
#ifndef KB_SCHEDULER_FRAMEWORK_H
#define KB_SCHEDULER_FRAMEWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "api/effects.h"
#include "api/snapshot.h"
#include "api/types.h"
#include "base/arena.h"
#include "base/error.h"
#include "scheduler/conf.h"

typedef enum kb_vote {
	KB_REJECT = -1,
	KB_ABSTAIN = 0,
	KB_PERMIT = 1,
} kb_vote;

typedef struct kb_session kb_session;

/* ---- plugins --------------------------------------------------------------------- */

/* Predicate results: 0 passes; KB_FIT_* fail. A failure also sets *ret_reason
 * to a short static or session-arena string in kube-scheduler's words, e.g.
 * "Insufficient cpu", "node(s) didn't match Pod's node affinity/selector". */
enum { KB_FIT_OK = 0, KB_FIT_FAIL = 1 };

typedef struct kb_plugin_ops {
	const char *name;
	/* Called at session open in tier order. May allocate private state from
	 * ssn->arena and return it in *ret_state. Returns 0 or -errno (with err). */
	int (*open)(kb_session *ssn, const kb_plugin_conf *conf, void **ret_state, kb_err *err);
	/* Called at session close in tier order. */
	void (*close)(kb_session *ssn, void *state);

	/* Orders: <0 when l goes first, >0 when r goes first, 0 for no opinion. */
	int (*job_order)(void *st, const kb_session *ssn, const kb_job *l, const kb_job *r);
	int (*queue_order)(void *st, const kb_session *ssn, const kb_queue *l, const kb_queue *r);
	int (*task_order)(void *st, const kb_session *ssn, const kb_task *l, const kb_task *r);

	/* REJECT with *ret_reason when the job must not be scheduled at all. */
	kb_vote (*job_valid)(void *st, const kb_session *ssn, const kb_job *job,
			     const char **ret_reason);
	/* REJECT when the job is not ready / not pipelined. */
	kb_vote (*job_ready)(void *st, const kb_session *ssn, const kb_job *job);
	/* PERMIT when the job may preempt or reclaim for its pending tasks
	 * (volcano's JobStarvingFn), REJECT when not. */
	kb_vote (*job_starving)(void *st, const kb_session *ssn, const kb_job *job);
	kb_vote (*job_pipelined)(void *st, const kb_session *ssn, const kb_job *job);
	kb_vote (*job_enqueueable)(void *st, const kb_session *ssn, const kb_job *job);

	/* KB_FIT_OK, or KB_FIT_FAIL with *ret_reason. Must not change anything.
	 * predicate and node_order may be remembered per node for tasks placed
	 * the same way until the node changes: a plugin whose answer depends on
	 * other state that changes in a session (and differs between nodes)
	 * calls kb_session_placement_changed() when that state changes. */
	int (*predicate)(void *st, const kb_session *ssn, const kb_task *task, const kb_node *node,
			 const char **ret_reason);
	/* A score for placing task on node; higher is better. */
	double (*node_order)(void *st, const kb_session *ssn, const kb_task *task,
			     const kb_node *node);

	/* Victim selection. cands[0..n) are task indices; the plugin sets
	 * allow[i] = false for each candidate it protects (allow[] arrives all
	 * true for this plugin). Returns KB_ABSTAIN for no opinion (allow[] is
	 * then ignored), KB_PERMIT otherwise. */
	kb_vote (*preemptable)(void *st, const kb_session *ssn, const kb_task *preemptor,
			       const uint32_t *cands, uint32_t n, bool *allow);
	/* The same for reclaim. Its verdict may depend on the reclaimer only
	 * through its job's queue and priority and its BestEffort class: the
	 * reclaim action reuses a verdict on whole victim jobs for reclaimers
	 * alike in those while nothing is committed. */
	kb_vote (*reclaimable)(void *st, const kb_session *ssn, const kb_task *reclaimer,
			       const uint32_t *cands, uint32_t n, bool *allow);
	/* Optional, beside preemptable: false only when that callback, for
	 * this preemptor, would not abstain and would protect every candidate
	 * of any list preempt can offer (tasks of other jobs of the same
	 * queue), for the rest of the session; true when a victim may exist.
	 * A cheap necessary condition (O(1) after open) asked before any node
	 * search: it keeps a session with thousands of starving jobs that
	 * cannot preempt in milliseconds. */
	bool (*preempt_possible)(void *st, const kb_session *ssn, const kb_task *preemptor);

	/* PERMIT when the queue has used its share. */
	kb_vote (*overused)(void *st, const kb_session *ssn, const kb_queue *queue);
	/* REJECT (with *ret_reason) when the queue may not take task now
	 * (volcano's AllocatableFn). */
	kb_vote (*allocatable)(void *st, const kb_session *ssn, const kb_queue *queue,
			       const kb_task *task, const char **ret_reason);
	/* REJECT when the queue may not grow by task to reclaim for it
	 * (volcano's PreemptiveFn: it would pass its deserved share). */
	kb_vote (*preemptive)(void *st, const kb_session *ssn, const kb_queue *queue,
			      const kb_task *task);

	/* Event handlers: called after a task is (tentatively) allocated or
	 * pipelined onto a node, and after such a placement is undone or the
	 * task is evicted. They keep plugin state (shares, devices) current. */
	void (*on_allocate)(void *st, kb_session *ssn, kb_task *task);
	void (*on_deallocate)(void *st, kb_session *ssn, kb_task *task);
} kb_plugin_ops;

/* ---- the session ----------------------------------------------------------------- */

enum kb_hook {
	KB_HOOK_JOB_ORDER,
	KB_HOOK_QUEUE_ORDER,
	KB_HOOK_TASK_ORDER,
	KB_HOOK_JOB_VALID,
	KB_HOOK_JOB_READY,
	KB_HOOK_JOB_PIPELINED,
	KB_HOOK_JOB_ENQUEUEABLE,
	KB_HOOK_PREDICATE,
	KB_HOOK_NODE_ORDER,
	KB_HOOK_PREEMPTABLE,
	KB_HOOK_RECLAIMABLE,
	KB_HOOK_OVERUSED,
	KB_HOOK_JOB_STARVING,
	KB_HOOK_ALLOCATABLE,
	KB_HOOK_PREEMPTIVE,
	KB_HOOK_EVENTS,
	KB_HOOK_COUNT
};

typedef struct kb_hook_entry {
	const kb_plugin_ops *ops;
	void *state;
	uint32_t tier;
} kb_hook_entry;

typedef struct kb_hook_list {
	kb_hook_entry *v;
	uint32_t n;
} kb_hook_list;

/* What one session concluded about one job (session output). */
typedef struct kb_job_outcome {
	/* Why the job is not running, written by actions and plugins; NULL if
	 * none. Static or from the session arena. */
	const char *pending_reason;
	/* Tasks that were placed when the job's last placement attempt failed
	 * (for the gang's pending reason); 0 until allocate tries. */
	int32_t fit_tasks;
} kb_job_outcome;

struct kb_session {
	kb_arena arena;     /* everything session-scoped */
	/* The model, owned by the session's caller (kept alive until close).
	 * snap is what plugins read; snap_rw is the same snapshot for the
	 * framework, statements and actions, which change it tentatively.
	 * Plugins never use snap_rw (scripts/check-layers refuses it). */
	const kb_snapshot *snap;
	kb_snapshot *snap_rw;
	/* Session output, from the arena: out[j] for snap->jobs[j], deserved[q]
	 * for snap->queues[q] (the proportion plugin's share; zero without it). */
	kb_job_outcome *out;
	kb_res *deserved;
	const kb_conf *conf;
	const kb_effects *effects;
	void *effects_ctx;
	int64_t now_ms;
	bool enqueue_configured; /* allocate only takes Inqueue jobs when true */
	uint32_t nplugins;
	kb_hook_entry *plugins;  /* every plugin instance, tier order */
	kb_hook_list hooks[KB_HOOK_COUNT];
	int effect_errors;       /* count of failed effects this session */
	kb_err first_effect_err;
	/* Counters for logs and benchmarks. */
	uint32_t binds, evictions;
	/* Per configured action (conf->actions order), from the arena, filled
	 * by kb_session_run_actions for the metrics (daemon/summary.h): the
	 * action's run time in nanoseconds (CLOCK_MONOTONIC; 0 when skipped)
	 * and the evictions it made. NULL before run_actions, or when the
	 * arena was out of memory (the actions still run). */
	int64_t *action_ns;
	uint32_t *action_evictions;
	/* Statements committed with at least one change (binds, evictions,
	 * allocations, pipelines): 0 means the session changed nothing. */
	uint64_t commits;
	/* The earliest time after now_ms at which a time-dependent check of
	 * this session would read otherwise (kb_session_until); INT64_MAX when
	 * none did. */
	int64_t until_ms;
	/* The caller's memo (kb_session_use_memo), or NULL; and whether this
	 * session skipped the memoizable actions because of it. */
	struct kb_session_memo *memo;
	bool memo_replayed;
	/* Node search (scheduler/actions/placement.c): how many feasible nodes
	 * to find before choosing (0 = not computed yet), and where the next
	 * search starts. */
	uint32_t feasible_to_find;
	uint32_t next_node;
	/* The last search's feasible nodes and scores, reused for the next task
	 * that is placed the same way (placement.c); NULL until the first. */
	struct kb_place_memo *place_memo;
	/* Bumped by kb_session_placement_changed(). */
	uint64_t placement_epoch;
	/* The pod topology index (scheduler/podtopo.h): built by the first
	 * plugin that opens it, kept current by statements; NULL until then. */
	struct kb_podtopo *podtopo;
	/* "Insufficient <name>" for each resource index, built at open. */
	const char *insufficient[KB_RES_MAX];
	/* The same for each known name (api/resource.h: spilled names are
	 * known ones), resnames.nknown of them; built at open. */
	const char **insufficient_known;
	/* Victim selection's scratch (framework.c): two arrays of
	 * victim_flags_cap flags, from the arena; NULL until first needed. */
	bool *victim_flags;
	uint32_t victim_flags_cap;
	/* Network domains (scheduler/topology.h): the index and each job's
	 * scope; NULL until a gang with a topology wish is met. */
	struct kb_topo *topo;
	/* Volume binding (scheduler/volumes.h): the volumes taken and each
	 * placed task's picks; NULL until a task with claims to bind is placed. */
	struct kb_vol *vol;
};

/* A plugin calls this when state that its predicate or node_order reads
 * changes, other than a node's own tasks and resources (those are tracked by
 * kb_node.gen) and other than state that reads the same for every node (the
 * chosen node is always checked again in full). Example: the gpu plugin when
 * a job's first member fixes the job's topology group. O(1). */
static inline void kb_session_placement_changed(kb_session *ssn)
{
	ssn->placement_epoch++;
}

/* Records the GPU devices chosen for task t (bit i = device i) on the
 * snapshot, under its undo journal, so that the bind effect writes them. The
 * one change of the model a plugin makes (the gpu plugin, from on_allocate
 * and on_deallocate); it goes through the framework like every other. O(1). */
void kb_session_set_task_devices(kb_session *ssn, uint32_t t, uint32_t gpu_mask);

/* A string formatted into the session's arena, for reasons that hooks
 * given a const session return (the arena is session output, not the
 * model, so handing it out here is the one const cast the framework makes
 * for plugins). NULL on -ENOMEM. O(length). */
const char *kb_session_printf(const kb_session *ssn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* n zeroed bytes from the session's arena, for scratch that hooks given a
 * const session need (same reasoning as kb_session_printf). NULL on
 * -ENOMEM. O(n). */
void *kb_session_calloc(const kb_session *ssn, size_t n, size_t size);

/* The session output of job j (a job of ssn->snap). O(1). */
static inline kb_job_outcome *kb_job_out(const kb_session *ssn, const kb_job *j)
{
	return &ssn->out[j - ssn->snap->jobs];
}

/* Opens a session over snap. The session does not own snap (the caller keeps
 * it alive until close) but mutates it. Opens every plugin in tier order.
 * Returns 0, or -errno with err naming the plugin that failed (the session is
 * then closed and must not be used). Cost: O(plugins) plus the plugins' own
 * open costs (proportion: O(queues + jobs)). */
int kb_session_open(kb_session *ssn, kb_snapshot *snap, const kb_conf *conf,
		    const kb_effects *effects, void *effects_ctx, int64_t now_ms, kb_err *err);

/* What the last session learnt that the next one may reuse: at snapshot
 * generation `generation`, with configuration `conf` and before `until_ms`,
 * the memoizable actions (preempt, reclaim) committed nothing, the actions
 * before them having committed `commits_before` statements; a session is
 * a function of its snapshot, configuration and time, so over the same
 * ones they would find nothing again. The caller owns it (one per cluster it
 * schedules: the daemon's, the simulator's, a benchmark's), zeroes it
 * before the first session and again if it changes the configuration in
 * place. kube-scheduler's unschedulable queue does the same: pods that found
 * no node wait for a cluster event, not for the next cycle. */
typedef struct kb_session_memo {
	bool valid;
	uint64_t generation;
	const kb_conf *conf;
	int64_t until_ms;
	uint64_t commits_before;
	uint64_t replays; /* sessions that skipped the memoizable actions */
} kb_session_memo;

/* Lets the session use and update memo (call between open and
 * run_actions). O(1). */
void kb_session_use_memo(kb_session *ssn, kb_session_memo *memo);

/* Called by an action or plugin whose decision depends on the time: at
 * t_ms (> now_ms) the check would read otherwise (a cool-down ends, a
 * timeout passes). A memo learnt by this session holds until the earliest
 * such time. A time-dependent check that does not call it makes memos
 * unsound. O(1). */
static inline void kb_session_until(kb_session *ssn, int64_t t_ms)
{
	if (t_ms > ssn->now_ms && t_ms < ssn->until_ms)
		ssn->until_ms = t_ms;
}

/* Runs the configured actions in order. With a memo (kb_session_use_memo)
 * that matches the snapshot's generation, the configuration and the time,
 * and when the actions before have committed as many statements as the
 * memo's session had, the memoizable actions are skipped
 * (ssn->memo_replayed); a session that ran them learns the memo afresh.
 * Returns 0 or the first -errno (the memo is then forgotten). */
int kb_session_run_actions(kb_session *ssn, kb_err *err);

/* Closes the plugins (in reverse tier order), then reports through the
 * effects every job's status (computed here, api/jobstatus.h), every pending
 * task's reason and every queue's deserved share, and frees the arena. Returns 0, or the first failing effect's
 * -errno (every effect is still attempted). */
int kb_session_close(kb_session *ssn);

/* ---- dispatch (tier semantics above) --------------------------------------------- */

/* Comparators for sorting: true when l goes before r. */
bool kb_job_less(const kb_session *ssn, const kb_job *l, const kb_job *r);
bool kb_queue_less(const kb_session *ssn, const kb_queue *l, const kb_queue *r);
bool kb_task_less(const kb_session *ssn, const kb_task *l, const kb_task *r);

/* NULL when valid; else the reason (static or arena). */
const char *kb_job_valid(const kb_session *ssn, const kb_job *job);
bool kb_job_ready(const kb_session *ssn, const kb_job *job);
bool kb_job_pipelined(const kb_session *ssn, const kb_job *job);
bool kb_job_enqueueable(const kb_session *ssn, const kb_job *job);
bool kb_queue_overused(const kb_session *ssn, const kb_queue *queue);
bool kb_job_starving(const kb_session *ssn, const kb_job *job);
bool kb_queue_preemptive(const kb_session *ssn, const kb_queue *queue, const kb_task *task);

/* Whether the task's queue may take it (queue fit above): what the queue
 * holds (allocated, and pipelined onto resources being released) plus the
 * task stays within its capability; victims evicted in an open statement
 * no longer count, so preemption inside a queue at its capability frees
 * room in the queue as well as on the node. A task of no job or of an
 * unknown queue passes. KB_FIT_OK, or KB_FIT_FAIL with a reason naming the
 * queue, its capability and the resource. O(resources + plugins). */
int kb_queue_fits(const kb_session *ssn, const kb_task *task, const char **ret_reason);

/* The node's own fit (predicate above, before the plugins), which every
 * action checks whatever plugins are configured: the node is Ready, not
 * cordoned (unless the pod tolerates node.kubernetes.io/unschedulable), has
 * a pod slot, and every resource the task asks for fits its future idle
 * (idle + releasing - pipelined; a BestEffort task needs only the slot),
 * its spilled names (api/resource.h) included.
 * KB_FIT_OK, or KB_FIT_FAIL with kube-scheduler's reason ("node(s) were not
 * ready", "node(s) were unschedulable", "Too many pods", "Insufficient
 * <resource>"). O(resources), and kb_node_spill_short's cost for a task
 * asking spilled names. */
int kb_node_fits(const kb_session *ssn, const kb_task *task, const kb_node *node,
		 const char **ret_reason);

/* KB_FIT_OK, or KB_FIT_FAIL with the first failing plugin's reason. */
int kb_predicate(const kb_session *ssn, const kb_task *task, const kb_node *node,
		 const char **ret_reason);
double kb_node_score(const kb_session *ssn, const kb_task *task, const kb_node *node);

/* Victims among cands[0..n): writes the chosen ones (a subset, in input
 * order) to ret_victims (n slots) and returns their count, or -ENOMEM
 * (nothing chosen: out of memory is never read as "no victims"). Scratch
 * comes from the session arena and is kept for the next call.
 * O(n x plugins in the deciding tier). */
int kb_preemptable(const kb_session *ssn, const kb_task *preemptor, const uint32_t *cands,
		   uint32_t n, uint32_t *ret_victims);
int kb_reclaimable(const kb_session *ssn, const kb_task *reclaimer, const uint32_t *cands,
		   uint32_t n, uint32_t *ret_victims);

/* Whether a victim may exist for the preemptor at all: false when a plugin
 * of the tier that decides preemptable says none can (its
 * preempt_possible), so no node needs searching. The first tier with a
 * preemptable callback is the one asked; its answer is "maybe" unless one
 * of its plugins says no. O(plugins of that tier). */
bool kb_preempt_possible(const kb_session *ssn, const kb_task *preemptor);

/* ---- plugin argument helpers ----------------------------------------------------- */

/* The value of an argument, or def when absent or not a number. */
double kb_plugin_arg_double(const kb_plugin_conf *pc, const char *key, double def);
/* The value of an argument as a string, or def. */
const char *kb_plugin_arg_str(const kb_plugin_conf *pc, const char *key, const char *def);

#endif

/* placement.h - choosing a node for one task, and explaining a failure.
 *
 * kb_best_node() runs the predicates over the nodes and returns the feasible
 * node with the highest node-order score (ties go to the node examined
 * first). Like kube-scheduler's percentageOfNodesToScore, it stops once it
 * has found enough feasible nodes: every node in clusters of fewer than 100,
 * else max(100, nodes x P / 100) with P the allocate action's argument
 * `percentage-of-nodes-to-score` (in `configurations:`), or adaptively
 * max(5, 50 - nodes / 125). Each search starts where the previous one
 * stopped, so the load spreads over the cluster; the order is deterministic.
 * When no node fits, every node has been examined, and
 * the report counts the reasons in kube-scheduler's words, and
 * kb_fit_report_format() renders them as
 *   "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) were unschedulable"
 * Cost: O(nodes x predicates).
 *
 * Members of a gang are usually identical, so the search is not repeated for
 * each: the feasible nodes found and their scores are remembered, and the
 * next task placed the same way (kb_task_placed_alike) chooses among them,
 * working out again only the nodes whose kb_node.gen moved (a task joined or
 * left them) and checking the chosen node in full. A new search runs when
 * the remembered nodes thin out to under half, when a plugin reports a
 * change (kb_session_placement_changed), or for a task placed differently.
 * Then a member costs the predicates of the nodes that changed plus, when
 * at most KB_NODE_LOG nodes changed since the last member (the snapshot's
 * node_log names them), O(log remembered nodes) to take the best from a
 * heap ordered as the search chooses, else O(remembered nodes) comparisons;
 * instead of O(nodes x predicates).
 */
#ifndef KB_SCHEDULER_ACTIONS_PLACEMENT_H
#define KB_SCHEDULER_ACTIONS_PLACEMENT_H

#include <stdint.h>

#include "scheduler/framework.h"

#define KB_FIT_REASONS_MAX 16

typedef struct kb_fit_report {
	/* Set when no node was tried because the task's queue cannot take it
	 * (kb_queue_fits): the whole reason. */
	const char *queue_full;
	uint32_t nnodes;
	uint32_t nreasons;
	struct {
		const char *reason;
		uint32_t count;
	} r[KB_FIT_REASONS_MAX];
} kb_fit_report;

/* The best node for task, or -1 (then *report says why; report may be NULL).
 * The task's queue must be able to take it first (kb_queue_fits: its
 * capability), else no node is tried. */
int32_t kb_best_node(kb_session *ssn, const kb_task *task, kb_fit_report *report);

/* allocate's percentage-of-nodes-to-score: true with *ret when value is a
 * number in (0, 100]. Checked when the configuration loads (allocate's
 * check_arg) and read by kb_best_node's node search. O(1). */
bool kb_percentage_of_nodes(const char *value, double *ret);

/* Whether every predicate and score reads a and b the same: same job,
 * priority, request and the placement fields of the pod spec. O(spec size). */
bool kb_task_placed_alike(const kb_task *a, const kb_task *b);

/* The report as one line in the session arena. */
const char *kb_fit_report_format(kb_session *ssn, const kb_fit_report *report);

/* Whether task's request fits node's idle resources now, spilled names
 * (api/resource.h) included (else only the future idle: the caller
 * pipelines). O(resources), and kb_node_spill_short's cost for a task
 * asking spilled names. */
bool kb_fits_idle(const kb_snapshot *s, const kb_task *task, const kb_node *node);

#endif

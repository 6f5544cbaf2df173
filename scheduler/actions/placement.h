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
 */
#ifndef KB_SCHEDULER_ACTIONS_PLACEMENT_H
#define KB_SCHEDULER_ACTIONS_PLACEMENT_H

#include <stdint.h>

#include "scheduler/framework.h"

#define KB_FIT_REASONS_MAX 16

typedef struct kb_fit_report {
	uint32_t nnodes;
	uint32_t nreasons;
	struct {
		const char *reason;
		uint32_t count;
	} r[KB_FIT_REASONS_MAX];
} kb_fit_report;

/* The best node for task, or -1 (then *report says why; report may be NULL). */
int32_t kb_best_node(kb_session *ssn, const kb_task *task, kb_fit_report *report);

/* The report as one line in the session arena. */
const char *kb_fit_report_format(kb_session *ssn, const kb_fit_report *report);

/* Whether task's request fits node's idle resources now (else only the
 * future idle: the caller pipelines). */
bool kb_fits_idle(const kb_task *task, const kb_node *node);

#endif

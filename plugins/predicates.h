/* predicates.h - may this pod run on this node? kube-scheduler's filters.
 *
 * The "predicates" plugin (kb_plugin_predicates in plugins/plugins.h) checks,
 * in this order, and reports the first failure in kube-scheduler's words:
 *
 *   1. node Ready                      "node(s) were not ready"
 *   2. node not cordoned               "node(s) were unschedulable"
 *      (unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule)
 *   3. pod count, then each requested  "Too many pods", "Insufficient <name>"
 *      resource, against the node's FUTURE idle = idle + releasing - pipelined
 *      (kube-batch's rule; the allocate action then picks Allocate when the
 *      task fits idle and Pipeline when it only fits future idle). A resource
 *      the task asks none of is never checked (kube-scheduler's rule), so an
 *      over-committed resource does not block pods that do not use it.
 *      BestEffort tasks (task->best_effort) only need a pod slot.
 *   4. nodeSelector and required       "node(s) didn't match Pod's node
 *      node affinity                    affinity/selector"
 *   5. NoSchedule/NoExecute taints     "node(s) had untolerated taint {k: v}"
 *   6. host ports                      "node(s) didn't have free ports for the
 *                                       requested pod ports"
 *
 * The plugin takes no arguments; unknown ones are ignored.
 *
 * The helpers below are pure (no allocation, no state) so that other code
 * (the preempt action, the gpu plugin, the node order) can reuse them. A
 * NULL pod spec is treated as an empty one: no selector, no affinity, no
 * tolerations, no host ports.
 */
#ifndef KB_PLUGINS_PREDICATES_H
#define KB_PLUGINS_PREDICATES_H

#include <stdbool.h>

#include "api/snapshot.h"
#include "api/types.h"

/* True when the node matches one node selector term: every requirement
 * holds (AND). Label requirements use the operators In, NotIn (also true
 * when the label is absent), Exists, DoesNotExist, Gt and Lt (exactly one
 * value; both sides base-10 int64, otherwise no match). Field requirements
 * (req->field) see one field, "metadata.name" = node->name; any other field
 * is absent. A term without requirements matches nothing (kube-scheduler).
 * Cost: O(requirements * (values + log labels)). */
bool kb_match_selector_term(const kb_selector_term *term, const kb_node *node);

/* True when the pod may run on the node as far as labels go: every
 * nodeSelector key=value is among the node's labels, and, when the pod has
 * required node affinity terms, at least one of them matches (terms ORed;
 * see kb_match_selector_term). Cost: O(selector * log labels) plus the terms'. */
bool kb_match_node_selector(const kb_pod_spec *spec, const kb_node *node);

/* True when one of the pod's tolerations tolerates taint (kube-scheduler's
 * ToleratesTaint: the effects match or the toleration's is KB_EFFECT_ALL;
 * the keys match or the toleration's is empty; operator Exists, or Equal
 * with equal values). The taint's effect is not looked at otherwise.
 * Cost: O(tolerations). */
bool kb_tolerates_taint(const kb_pod_spec *spec, const kb_taint *taint);

/* True when every NoSchedule and NoExecute taint of the node is tolerated
 * (PreferNoSchedule never blocks). Otherwise false and, when
 * ret_untolerated is not NULL, *ret_untolerated points at the node's first
 * untolerated taint (not written on success).
 * Cost: O(taints * tolerations). */
bool kb_tolerates_taints(const kb_pod_spec *spec, const kb_node *node,
			 const kb_taint **ret_untolerated);

/* True when none of the task's host ports is taken on the node. A port is
 * taken when another task on the node (node->task_head list, in a status
 * where kb_task_status_on_node() holds, foreign pods included) has a host
 * port with the same protocol and number and either address is empty or
 * "0.0.0.0", or the addresses are equal. The task itself is skipped if it is
 * on the list; port 0 means "no host port" and never conflicts.
 * Cost: O(1) when the task has no host ports, else
 * O(tasks on node * task ports * their ports). */
bool kb_host_ports_free(const kb_snapshot *snap, const kb_task *task, const kb_node *node);

#endif

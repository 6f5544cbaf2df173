/* predicates.h - may this pod run on this node? kube-scheduler's filters.
 *
 * The "predicates" plugin (kb_plugin_predicates in plugins/plugins.h) checks,
 * in this order, and reports the first failure in kube-scheduler's words:
 *
 *   1. nodeSelector and required       "node(s) didn't match Pod's node
 *      node affinity                    affinity/selector"
 *   2. NoSchedule/NoExecute taints     "node(s) had untolerated taint {k: v}"
 *   3. host ports                      "node(s) didn't have free ports for the
 *                                       requested pod ports"
 *   4. topology spread constraints     "node(s) didn't match pod topology spread
 *      (DoNotSchedule)                  constraints" (" (missing required label)"
 *                                       when the node lacks the key)
 *   5. required pod affinity,          "node(s) didn't match pod affinity rules",
 *      pod anti-affinity, existing     "node(s) didn't match pod anti-affinity
 *      pods' anti-affinity              rules", "node(s) didn't satisfy existing
 *                                       pods anti-affinity rules"
 *
 * 4 and 5 are kube-scheduler's PodTopologySpread and InterPodAffinity
 * filters, in that order, answered from the session's pod topology index
 * (scheduler/podtopo.h), which counts the pods placed earlier in the same
 * session (gang members) and forgets them when a statement is discarded.
 *
 * The plugin takes no arguments; unknown ones are ignored.
 *
 * Ready, cordon and resources are the framework's own node fit
 * (kb_node_fits in scheduler/framework.h), checked by every action before any
 * plugin, so a configuration without this plugin never places a pod on a
 * full node. Selector and taint matching live in api/labels.h.
 *
 * The helper below is pure (no allocation, no state). A NULL pod spec is
 * treated as an empty one: no host ports.
 */
#ifndef KB_PLUGINS_PREDICATES_H
#define KB_PLUGINS_PREDICATES_H

#include <stdbool.h>

#include "api/snapshot.h"
#include "api/types.h"

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

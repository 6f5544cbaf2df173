/* nodeorder.c - the "nodeorder" plugin: kube-scheduler's node priorities.
 *
 * Score of placing a task on a node (higher is better):
 *
 *     leastrequested.weight   * LeastRequested
 *   + mostrequested.weight    * MostRequested
 *   + balancedresource.weight * BalancedResourceAllocation
 *   + nodeaffinity.weight     * NodeAffinity
 *   + podaffinity.weight      * InterPodAffinity
 *   + podtopologyspread.weight * PodTopologySpread
 *
 * Argument names and defaults are kube-batch's / volcano's
 * (pkg/scheduler/plugins/nodeorder/nodeorder.go): leastrequested 1,
 * mostrequested 0 (volcano's addition), balancedresource 1, nodeaffinity 1
 * (kube-batch's; volcano later raised it to 2). Any number is accepted as a
 * weight; other arguments are ignored.
 *
 * Each priority scores 0..10 (kube-scheduler's MaxPriority of the kube-batch
 * era), in full double precision rather than kube-scheduler's integer
 * truncation, so that nearly equal nodes are still told apart. The resource
 * priorities look at cpu and memory only, on the node's state AFTER adding
 * the task: requested = used + pipelined + task request (used already holds
 * releasing tasks; kube-batch counted every pod on the node), against
 * allocatable. Requests are taken as recorded: kube-scheduler's "non-zero"
 * defaults for pods without requests (100m cpu, 200Mi) are not applied.
 *
 *   LeastRequested = mean over cpu, memory of 10 * (alloc - requested) / alloc
 *   MostRequested  = mean over cpu, memory of 10 * requested / alloc
 *       (a resource with zero allocatable, or requested above it, scores 0)
 *   Balanced       = 10 * (1 - |cpu fraction - memory fraction|), where a
 *       fraction is requested / alloc (1 when alloc is 0); 0 when either
 *       fraction reaches 1
 *   NodeAffinity   = 10 * (sum of the weights of the pod's preferred terms
 *       the node matches) / (sum of the weights of all its preferred terms),
 *       0 when it has none. kube-scheduler normalises by the best node's sum
 *       instead; both order the nodes for one task the same way, and ours
 *       needs no pass over every node.
 *
 *   InterPodAffinity and PodTopologySpread (kube-scheduler's scores of
 *       preferred pod affinity / anti-affinity, with the symmetric terms of
 *       placed pods, and of ScheduleAnyway spread constraints) come from the
 *       session's pod topology index, 0..10 (scheduler/podtopo.h says how
 *       they are normalised). Their weights are volcano's argument names:
 *       podaffinity.weight 1 (kube-batch's) and podtopologyspread.weight 2
 *       (volcano's).
 *
 * Cost per call: O(preferred terms * their requirements), O(1) otherwise,
 * plus the pod topology index's O(terms) (after its per-task preparation).
 */
#include <errno.h>
#include <math.h>

#include "plugins/plugins.h"
#include "api/labels.h"
#include "scheduler/framework.h"
#include "scheduler/podtopo.h"

#define KB_NODEORDER_MAX 10.0

typedef struct nodeorder_state {
	double least_requested;
	double most_requested;
	double balanced_resource;
	double node_affinity;
	double pod_affinity;
	double pod_topology_spread;
} nodeorder_state;

static int nodeorder_open(kb_session *ssn, const kb_plugin_conf *conf, void **ret_state,
			  kb_err *err)
{
	nodeorder_state *st = kb_arena_alloc(&ssn->arena, sizeof(*st));
	if (!st)
		return kb_err_set(err, -ENOMEM, "nodeorder: out of memory");
	st->least_requested = kb_plugin_arg_double(conf, "leastrequested.weight", 1);
	st->most_requested = kb_plugin_arg_double(conf, "mostrequested.weight", 0);
	st->balanced_resource = kb_plugin_arg_double(conf, "balancedresource.weight", 1);
	st->node_affinity = kb_plugin_arg_double(conf, "nodeaffinity.weight", 1);
	st->pod_affinity = kb_plugin_arg_double(conf, "podaffinity.weight", 1);
	st->pod_topology_spread = kb_plugin_arg_double(conf, "podtopologyspread.weight", 2);
	*ret_state = st;
	if (st->pod_affinity != 0 || st->pod_topology_spread != 0)
		return kb_podtopo_open(ssn, err);
	return 0;
}

static double least_requested(int64_t requested, int64_t alloc)
{
	if (alloc <= 0 || requested > alloc)
		return 0;
	return KB_NODEORDER_MAX * (double)(alloc - requested) / (double)alloc;
}

static double most_requested(int64_t requested, int64_t alloc)
{
	if (alloc <= 0 || requested > alloc)
		return 0;
	return KB_NODEORDER_MAX * (double)requested / (double)alloc;
}

static double fraction(int64_t requested, int64_t alloc)
{
	if (alloc <= 0)
		return 1;
	return (double)requested / (double)alloc;
}

static double affinity_score(const kb_pod_spec *spec, const kb_node *node)
{
	if (!spec || spec->npreferred == 0)
		return 0;
	int64_t total = 0, matched = 0;
	for (uint32_t i = 0; i < spec->npreferred; i++) {
		const kb_preferred_term *p = &spec->preferred[i];
		if (p->weight <= 0)
			continue;
		total += p->weight;
		if (kb_match_selector_term(&p->term, node))
			matched += p->weight;
	}
	if (total == 0)
		return 0;
	return KB_NODEORDER_MAX * (double)matched / (double)total;
}

static double nodeorder_score(void *state, const kb_session *ssn, const kb_task *task,
			      const kb_node *node)
{
	const nodeorder_state *st = state;
	int64_t req[2], alloc[2];
	static const int idx[2] = { KB_RES_CPU, KB_RES_MEMORY };

	for (int i = 0; i < 2; i++) {
		int r = idx[i];
		int64_t v = kb_sat_add64(kb_sat_add64(node->used.q[r], node->pipelined.q[r]),
					 task->req.q[r]);
		req[i] = v > 0 ? v : 0;
		alloc[i] = node->allocatable.q[r];
	}

	double score = 0;
	if (st->least_requested != 0) {
		double cpu = least_requested(req[0], alloc[0]);
		double mem = least_requested(req[1], alloc[1]);
		score += st->least_requested * (cpu + mem) / 2;
	}
	if (st->most_requested != 0) {
		double cpu = most_requested(req[0], alloc[0]);
		double mem = most_requested(req[1], alloc[1]);
		score += st->most_requested * (cpu + mem) / 2;
	}
	if (st->balanced_resource != 0) {
		double cpu = fraction(req[0], alloc[0]);
		double mem = fraction(req[1], alloc[1]);
		if (cpu < 1 && mem < 1)
			score += st->balanced_resource * KB_NODEORDER_MAX * (1 - fabs(cpu - mem));
	}
	if (st->node_affinity != 0)
		score += st->node_affinity * affinity_score(task->spec, node);
	if (st->pod_affinity != 0)
		score += st->pod_affinity * kb_podtopo_affinity_score(ssn, task, node);
	if (st->pod_topology_spread != 0)
		score += st->pod_topology_spread * kb_podtopo_spread_score(ssn, task, node);
	return score;
}

const kb_plugin_ops kb_plugin_nodeorder = {
	.name = "nodeorder",
	.open = nodeorder_open,
	.node_order = nodeorder_score,
};

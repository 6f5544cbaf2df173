/* conformance - never evict what keeps the cluster running: pods of the
 * system-cluster-critical and system-node-critical classes and pods in
 * kube-system (marked critical by the cache).
 */
#include "plugins/plugins.h"

static kb_vote conf_victims(void *st, const kb_session *ssn, const kb_task *by, const uint32_t *cands,
			    uint32_t n, bool *allow)
{
	for (uint32_t i = 0; i < n; i++)
		allow[i] = !ssn->snap->tasks[cands[i]].critical;
	return KB_PERMIT;
}

const kb_plugin_ops kb_plugin_conformance = {
	.name = "conformance",
	.preemptable = conf_victims,
	.reclaimable = conf_victims,
};

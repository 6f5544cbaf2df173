/* plugins.h - the built-in plugins, one constant callback table each.
 *
 * The registry (plugins/registry.c) maps configuration names to these.
 */
#ifndef KB_PLUGINS_PLUGINS_H
#define KB_PLUGINS_PLUGINS_H

#include "scheduler/framework.h"

extern const kb_plugin_ops kb_plugin_priority;    /* "priority" */
extern const kb_plugin_ops kb_plugin_gang;        /* "gang" */
extern const kb_plugin_ops kb_plugin_conformance; /* "conformance" */
extern const kb_plugin_ops kb_plugin_drf;         /* "drf" */
extern const kb_plugin_ops kb_plugin_predicates;  /* "predicates" (predicates.h) */
extern const kb_plugin_ops kb_plugin_proportion;  /* "proportion" */
extern const kb_plugin_ops kb_plugin_nodeorder;   /* "nodeorder" (nodeorder.c) */
extern const kb_plugin_ops kb_plugin_gpu;         /* "gpu" (gpu.c) */

/* Tasks of j that count toward its gang: Allocated, Binding, Bound, Running, Succeeded. */
int32_t kb_gang_ready_count(const kb_job *j);

/* Whether j has any pending task. O(1). */
static inline bool kb_job_has_pending_any(const kb_snapshot *s, const kb_job *j)
{
	(void)s;
	return j->nstatus[KB_TASK_PENDING] > 0;
}

#endif

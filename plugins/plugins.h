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

#endif

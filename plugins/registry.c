#include "plugins/registry.h"

#include "plugins/plugins.h"
#include "scheduler/actions/actions.h"

static const kb_plugin_ops *const builtin_plugins[] = {
	&kb_plugin_priority, &kb_plugin_gang,       &kb_plugin_conformance,
	&kb_plugin_drf,      &kb_plugin_predicates, &kb_plugin_proportion,
	&kb_plugin_nodeorder, &kb_plugin_gpu,
};

static const kb_action_ops *const builtin_actions[] = {
	&kb_action_enqueue, &kb_action_allocate, &kb_action_backfill,
	&kb_action_preempt, &kb_action_reclaim,
};

const kb_registry kb_builtin_registry = {
	.plugins = builtin_plugins,
	.nplugins = sizeof(builtin_plugins) / sizeof(builtin_plugins[0]),
	.actions = builtin_actions,
	.nactions = sizeof(builtin_actions) / sizeof(builtin_actions[0]),
};

#include <string.h>

#include "plugins/plugins.h"

const kb_plugin_ops *kb_plugin_lookup(const char *name)
{
	static const kb_plugin_ops *const all[] = {
		&kb_plugin_priority, &kb_plugin_gang,       &kb_plugin_conformance,
		&kb_plugin_drf,      &kb_plugin_predicates, &kb_plugin_proportion,
		&kb_plugin_nodeorder, &kb_plugin_gpu,
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

#include <string.h>

#include "scheduler/actions/actions.h"

const kb_action_ops *kb_action_lookup(const char *name)
{
	static const kb_action_ops *const all[] = {
		&kb_action_enqueue,
		&kb_action_allocate,
		&kb_action_backfill,
		&kb_action_preempt,
		&kb_action_reclaim,
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

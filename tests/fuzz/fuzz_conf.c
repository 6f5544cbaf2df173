/* Fuzz target: the scheduler configuration loader must refuse bad input with
 * an error, never crash or leak, and a loaded configuration must be whole. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scheduler/conf.h"
#include "scheduler/framework.h"
#include "plugins/registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kb_conf c;
	kb_err err = {0};
	int r = kb_conf_load_buffer((const char *)data, size, "fuzz.yaml", &kb_builtin_registry, &c, &err);
	if (r < 0) {
		assert(err.msg[0] != '\0');
		return 0;
	}
	for (uint32_t i = 0; i < c.nactions; i++)
		assert(c.actions[i] && c.actions[i]->execute);
	for (uint32_t t = 0; t < c.ntiers; t++)
		for (uint32_t p = 0; p < c.tiers[t].n; p++)
			assert(c.tiers[t].plugins[p].ops == kb_registry_plugin(&kb_builtin_registry, c.tiers[t].plugins[p].name));
	kb_conf_release(&c);
	return 0;
}

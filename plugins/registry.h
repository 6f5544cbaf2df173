/* registry.h - the built-in registry: every plugin of plugins/ and every
 * action of scheduler/actions/, by the names a configuration uses.
 *
 * cmd/ hands it to the configuration loader (scheduler/conf.h), the
 * simulator and the daemon; nothing below this layer looks it up.
 */
#ifndef KB_PLUGINS_REGISTRY_H
#define KB_PLUGINS_REGISTRY_H

#include "scheduler/conf.h"

extern const kb_registry kb_builtin_registry;

#endif

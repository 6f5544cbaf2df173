/* conf.h - the scheduler configuration, in kube-batch's format.
 *
 *   actions: "enqueue, allocate, backfill"
 *   tiers:
 *   - plugins:
 *     - name: priority
 *     - name: gang
 *       enableJobReady: true
 *     - name: nodeorder
 *       arguments:
 *         leastrequested.weight: 2
 *
 * Per-plugin switches are resolved to plain booleans when the file loads
 * (absent = enabled), never left tri-state. Recognised switches:
 * enableJobOrder, enableJobReady, enableJobPipelined, enableTaskOrder,
 * enablePreemptable, enableReclaimable, enableQueueOrder, enablePredicate,
 * enableNodeOrder (kube-batch); enableJobEnqueued, enabledOverused,
 * enabledAllocatable, enableJobStarving and enablePreemptive (volcano, with
 * volcano's meaning); enableJobValid (ours). enabledAllocatable: false on
 * proportion is the one way to stop enforcing queue capability. `arguments` is a map of scalars kept as
 * strings. An unknown action, plugin, switch or key is an error naming the
 * file, line and column.
 *
 * Ownership: everything lives in conf->arena; kb_conf_release() frees it.
 */
#ifndef KB_SCHEDULER_CONF_H
#define KB_SCHEDULER_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"

struct kb_plugin_ops;
struct kb_session;

typedef struct kb_action_ops {
	const char *name;
	/* Runs the action over the session. Returns 0 or -errno (with err). */
	int (*execute)(struct kb_session *ssn, kb_err *err);
	/* Optional: checks one argument of the action's `configurations:` entry
	 * when the configuration is loaded, so that a bad value is refused then,
	 * not at the first session. Returns 0 (also for a key the action does
	 * not know: volcano's configurations carry keys of its own), or -EINVAL
	 * with err saying what the value must be (the loader adds the file,
	 * line and action). */
	int (*check_arg)(const char *key, const char *value, kb_err *err);
	/* True for an action whose outcome a kb_session_memo may stand for: it
	 * reads only the session's state and the time through
	 * kb_session_until() (preempt, reclaim). Such an action is skipped when
	 * the memo says it found nothing to do in the same state. */
	bool memoizable;
} kb_action_ops;

typedef struct kb_plugin_arg {
	const char *key;
	const char *value;
} kb_plugin_arg;

typedef struct kb_plugin_conf {
	const char *name;
	const struct kb_plugin_ops *ops;
	bool job_order, job_ready, job_pipelined, task_order, preemptable, reclaimable,
		queue_order, predicate, node_order, job_enqueued, overused, job_valid,
		job_starving, allocatable, preemptive;
	const kb_plugin_arg *args;
	uint32_t nargs;
} kb_plugin_conf;

typedef struct kb_tier {
	kb_plugin_conf *plugins;
	uint32_t n;
} kb_tier;

/* Per-action arguments, volcano's `configurations:` block:
 *   configurations:
 *   - name: preempt
 *     arguments: {cooldown: 60s}
 */
typedef struct kb_action_conf {
	const char *name;
	const kb_plugin_arg *args;
	uint32_t nargs;
} kb_action_conf;

/* What a configuration may name: the plugins and actions there are. The
 * framework defines the shape; cmd/ hands the loader the built-in one
 * (plugins/registry.h: kb_builtin_registry), tests may hand their own. The
 * loader looks names up here and nowhere else. */
typedef struct kb_registry {
	const struct kb_plugin_ops *const *plugins;
	uint32_t nplugins;
	const kb_action_ops *const *actions;
	uint32_t nactions;
} kb_registry;

/* Lookups by name; NULL when the registry has no such entry. O(entries). */
const struct kb_plugin_ops *kb_registry_plugin(const kb_registry *reg, const char *name);
const kb_action_ops *kb_registry_action(const kb_registry *reg, const char *name);

typedef struct kb_conf {
	kb_arena arena;
	const char *source; /* file name, or "<built-in default>" */
	const kb_registry *registry; /* borrowed: what names resolve to */
	const kb_action_ops **actions;
	uint32_t nactions;
	kb_tier *tiers;
	uint32_t ntiers;
	kb_action_conf *action_confs;
	uint32_t naction_confs;
	/* Whether a queue's capability is enforced when tasks are placed:
	 * true unless the proportion plugin is listed with
	 * enabledAllocatable: false (volcano's switch of exactly that meaning). */
	bool queue_capability;
} kb_conf;

/* The built-in default, used when no file is given: kube-batch's
 *   actions: "allocate, backfill"
 *   tiers: [priority, gang], [drf, predicates, proportion, nodeorder]
 * plus kube-batchd's gpu plugin at the end of the second tier (it only acts
 * on pods that ask for nvidia.com/gpu: device choice and GPU placement). */
extern const char KB_CONF_DEFAULT[];
/* The full configuration docs/design.md describes and deploy/ ships: every
 * action, conformance in the first tier. The bench's "full" preset. */
extern const char KB_CONF_FULL[];

/* Loads a configuration file whose plugins and actions are looked up in
 * reg (which must outlive *ret). Returns 0, or -errno with err =
 * "file:line:col: what is wrong" (-ENOENT, -EINVAL, -ENOMEM). *ret is
 * released on failure. */
int kb_conf_load_file(const char *path, const kb_registry *reg, kb_conf *ret, kb_err *err);

/* Loads from a buffer (name is used in messages). */
int kb_conf_load_buffer(const char *buf, size_t len, const char *name, const kb_registry *reg,
			kb_conf *ret, kb_err *err);

/* Loads KB_CONF_DEFAULT. */
int kb_conf_load_default(const kb_registry *reg, kb_conf *ret, kb_err *err);

void kb_conf_release(kb_conf *c);

/* True when the named action is configured. */
bool kb_conf_has_action(const kb_conf *c, const char *name);

/* An action's argument from `configurations:`, or def. */
const char *kb_conf_action_arg(const kb_conf *c, const char *action, const char *key,
			       const char *def);

#endif

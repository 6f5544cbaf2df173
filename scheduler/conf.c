#include "scheduler/conf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml_doc.h"
#include "scheduler/framework.h"

/* The second tier both built-in configurations share. */
#define SECOND_TIER                                                                                \
	"- plugins:\n"                                                                              \
	"  - name: drf\n"                                                                           \
	"  - name: predicates\n"                                                                    \
	"  - name: proportion\n"                                                                    \
	"  - name: nodeorder\n"                                                                     \
	"  - name: gpu\n"

const char KB_CONF_DEFAULT[] = "actions: \"allocate, backfill\"\n"
			       "tiers:\n"
			       "- plugins:\n"
			       "  - name: priority\n"
			       "  - name: gang\n" SECOND_TIER;

const char KB_CONF_FULL[] = "actions: \"enqueue, allocate, backfill, preempt, reclaim\"\n"
			    "tiers:\n"
			    "- plugins:\n"
			    "  - name: priority\n"
			    "  - name: gang\n"
			    "  - name: conformance\n" SECOND_TIER;

void kb_conf_release(kb_conf *c)
{
	kb_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

bool kb_conf_has_action(const kb_conf *c, const char *name)
{
	for (uint32_t i = 0; i < c->nactions; i++)
		if (strcmp(c->actions[i]->name, name) == 0)
			return true;
	return false;
}

#define AT(n) src, (n)->line, (n)->col

/* The switches kube-batch and volcano accept, and where each lands. */
static bool *switch_field(kb_plugin_conf *pc, const char *key)
{
	static const struct {
		const char *name;
		size_t off;
	} table[] = {
		{"enableJobOrder", offsetof(kb_plugin_conf, job_order)},
		{"enableJobReady", offsetof(kb_plugin_conf, job_ready)},
		{"enableJobPipelined", offsetof(kb_plugin_conf, job_pipelined)},
		{"enableTaskOrder", offsetof(kb_plugin_conf, task_order)},
		{"enablePreemptable", offsetof(kb_plugin_conf, preemptable)},
		{"enableReclaimable", offsetof(kb_plugin_conf, reclaimable)},
		{"enableQueueOrder", offsetof(kb_plugin_conf, queue_order)},
		{"enablePredicate", offsetof(kb_plugin_conf, predicate)},
		{"enableNodeOrder", offsetof(kb_plugin_conf, node_order)},
		{"enableJobEnqueued", offsetof(kb_plugin_conf, job_enqueued)},
		{"enabledOverused", offsetof(kb_plugin_conf, overused)},
		{"enableOverused", offsetof(kb_plugin_conf, overused)},
		{"enableJobValid", offsetof(kb_plugin_conf, job_valid)},
		{"enableJobStarving", offsetof(kb_plugin_conf, job_starving)},
		{"enabledAllocatable", offsetof(kb_plugin_conf, allocatable)},
		{"enableAllocatable", offsetof(kb_plugin_conf, allocatable)},
		{"enablePreemptive", offsetof(kb_plugin_conf, preemptive)},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, key) == 0)
			return (bool *)((char *)pc + table[i].off);
	return NULL;
}

const struct kb_plugin_ops *kb_registry_plugin(const kb_registry *reg, const char *name)
{
	for (uint32_t i = 0; i < reg->nplugins; i++)
		if (strcmp(reg->plugins[i]->name, name) == 0)
			return reg->plugins[i];
	return NULL;
}

const kb_action_ops *kb_registry_action(const kb_registry *reg, const char *name)
{
	for (uint32_t i = 0; i < reg->nactions; i++)
		if (strcmp(reg->actions[i]->name, name) == 0)
			return reg->actions[i];
	return NULL;
}

/* "a, b, c": the names a registry knows, for error messages (arena). */
static const char *known_names(kb_conf *c, bool plugins)
{
	const kb_registry *reg = c->registry;
	uint32_t n = plugins ? reg->nplugins : reg->nactions;
	size_t len = 1;
	for (uint32_t i = 0; i < n; i++)
		len += strlen(plugins ? reg->plugins[i]->name : reg->actions[i]->name) + 2;
	char *buf = kb_arena_alloc(&c->arena, len);
	if (!buf)
		return "?";
	buf[0] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			strcat(buf, ", ");
		strcat(buf, plugins ? reg->plugins[i]->name : reg->actions[i]->name);
	}
	return buf;
}

static int parse_actions(kb_conf *c, const kb_yaml_node *n, const char *src, kb_err *err)
{
	const char *text = kb_yaml_str(n);
	if (!text)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: actions: expected a string such as "
						"\"enqueue, allocate, backfill\", got %s",
				  AT(n), kb_yaml_kind_name(n));
	size_t len = strlen(text);
	c->actions = kb_arena_calloc(&c->arena, len / 2 + 1, sizeof(*c->actions));
	if (!c->actions)
		return -ENOMEM;
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ',')
			p++;
		const char *end = p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		char *name = kb_arena_strndup(&c->arena, start, (size_t)(end - start));
		if (!name)
			return -ENOMEM;
		const kb_action_ops *a = kb_registry_action(c->registry, name);
		if (!a)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: unknown action \"%s\" (known: %s)",
					  AT(n), name, known_names(c, false));
		for (uint32_t i = 0; i < c->nactions; i++)
			if (c->actions[i] == a)
				return kb_err_set(err, -EINVAL, "%s:%d:%d: action \"%s\" listed twice",
						  AT(n), name);
		c->actions[c->nactions++] = a;
	}
	return 0;
}

/* Reads a mapping of scalars into args (strings borrowed from the YAML file
 * until adopt_strings copies them). */
static int parse_args(kb_conf *c, const kb_yaml_node *v, const char *src, const char *owner,
		      const kb_plugin_arg **ret_args, uint32_t *ret_n, kb_err *err)
{
	if (kb_yaml_is_null(v))
		return 0;
	if (v->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: %s: arguments must be a mapping", AT(v), owner);
	kb_plugin_arg *args = kb_arena_calloc(&c->arena, v->n ? v->n : 1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	for (size_t k = 0; k < v->n; k++) {
		const kb_yaml_node *av = v->pairs[k].value;
		if (av->kind != KB_YAML_SCALAR)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: %s: argument \"%s\" must be a scalar",
					  AT(av), owner, v->pairs[k].key->str);
		args[k].key = v->pairs[k].key->str;
		args[k].value = av->str;
	}
	*ret_args = args;
	*ret_n = (uint32_t)v->n;
	return 0;
}

/* The numeric plugin arguments kube-batchd reads (kb_plugin_arg_double):
 * every "*.weight" (nodeorder's, gpu's) a finite number >= 0, the gang
 * plugin's "enqueue.overcommit-factor" a finite number > 0. A malformed one
 * would otherwise fall back to its default at the first session without a
 * word. Other keys (volcano's own, switches) are left to whoever reads them. */
static int check_plugin_args(const kb_yaml_node *v, const char *src, const char *owner,
			     kb_err *err)
{
	for (size_t k = 0; v->kind == KB_YAML_MAP && k < v->n; k++) {
		const char *key = v->pairs[k].key->str, *val = v->pairs[k].value->str;
		size_t kl = strlen(key);
		bool weight = kl > 7 && strcmp(key + kl - 7, ".weight") == 0;
		bool factor = strcmp(key, "enqueue.overcommit-factor") == 0;
		if (!weight && !factor)
			continue;
		char *end = NULL;
		double d = val && *val ? strtod(val, &end) : NAN;
		if (end && *end == '\0' && isfinite(d) && (factor ? d > 0 : d >= 0))
			continue;
		return kb_err_set(err, -EINVAL,
				  "%s:%d:%d: plugin %s: argument \"%s\": \"%s\" is not a number %s",
				  AT(v->pairs[k].value), owner, key, val ? val : "",
				  factor ? "greater than 0" : "of 0 or more");
	}
	return 0;
}

/* Hands each argument of an action's configuration to the action's own
 * check, prefixing its complaint with where the value is. */
static int check_action_args(const kb_action_ops *ops, const kb_yaml_node *args, const char *src,
			     kb_err *err)
{
	for (size_t k = 0; ops->check_arg && args->kind == KB_YAML_MAP && k < args->n; k++) {
		const kb_yaml_node *v = args->pairs[k].value;
		kb_err why = {0};
		if (ops->check_arg(args->pairs[k].key->str, v->str, &why) < 0)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: configuration of %s: %s", AT(v),
					  ops->name, why.msg);
	}
	return 0;
}

static int parse_plugin(kb_conf *c, kb_plugin_conf *pc, const kb_yaml_node *n, const char *src,
			kb_err *err)
{
	if (n->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: a plugin must be a mapping with a name, got %s",
				  AT(n), kb_yaml_kind_name(n));
	const kb_yaml_node *name = kb_yaml_get(n, "name");
	if (!kb_yaml_str(name) || !*kb_yaml_str(name))
		return kb_err_set(err, -EINVAL, "%s:%d:%d: plugin without a name", AT(n));
	pc->name = kb_yaml_str(name);
	pc->ops = kb_registry_plugin(c->registry, pc->name);
	if (!pc->ops)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: unknown plugin \"%s\" (known: %s)",
				  AT(name), pc->name, known_names(c, true));
	/* Absent switches mean enabled; resolved here, never left tri-state. */
	pc->job_order = pc->job_ready = pc->job_pipelined = pc->task_order = pc->preemptable =
		pc->reclaimable = pc->queue_order = pc->predicate = pc->node_order =
			pc->job_enqueued = pc->overused = pc->job_valid = pc->job_starving =
				pc->allocatable = pc->preemptive = true;
	for (size_t i = 0; i < n->n; i++) {
		const char *key = n->pairs[i].key->str;
		const kb_yaml_node *v = n->pairs[i].value;
		if (strcmp(key, "name") == 0)
			continue;
		if (strcmp(key, "arguments") == 0) {
			int r = parse_args(c, v, src, pc->name, &pc->args, &pc->nargs, err);
			if (r == 0)
				r = check_plugin_args(v, src, pc->name, err);
			if (r < 0)
				return r;
			continue;
		}
		bool *sw = switch_field(pc, key);
		if (!sw)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: plugin %s: unknown key \"%s\"",
					  AT(n->pairs[i].key), pc->name, key);
		if (kb_yaml_bool(v, sw) < 0)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: plugin %s: %s must be true or false",
					  AT(v), pc->name, key);
	}
	return 0;
}

const char *kb_conf_action_arg(const kb_conf *c, const char *action, const char *key,
			       const char *def)
{
	for (uint32_t i = 0; i < c->naction_confs; i++) {
		if (strcmp(c->action_confs[i].name, action) != 0)
			continue;
		for (uint32_t k = 0; k < c->action_confs[i].nargs; k++)
			if (strcmp(c->action_confs[i].args[k].key, key) == 0)
				return c->action_confs[i].args[k].value;
	}
	return def;
}

static int parse_configurations(kb_conf *c, const kb_yaml_node *v, const char *src, kb_err *err)
{
	if (kb_yaml_is_null(v))
		return 0;
	if (v->kind != KB_YAML_SEQ)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: configurations must be a list", AT(v));
	c->action_confs = kb_arena_calloc(&c->arena, v->n ? v->n : 1, sizeof(kb_action_conf));
	if (!c->action_confs)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		const kb_yaml_node *item = v->items[i];
		const char *name = kb_yaml_str(kb_yaml_get(item, "name"));
		if (item->kind != KB_YAML_MAP || !name)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: a configuration needs the name of an action",
					  AT(item));
		if (!kb_registry_action(c->registry, name))
			return kb_err_set(err, -EINVAL, "%s:%d:%d: configuration for unknown action \"%s\"",
					  AT(kb_yaml_get(item, "name")), name);
		kb_action_conf *ac = &c->action_confs[c->naction_confs++];
		ac->name = name;
		for (size_t k = 0; k < item->n; k++) {
			const char *key = item->pairs[k].key->str;
			if (strcmp(key, "name") == 0)
				continue;
			if (strcmp(key, "arguments") != 0)
				return kb_err_set(err, -EINVAL, "%s:%d:%d: configuration of %s: unknown key \"%s\"",
						  AT(item->pairs[k].key), name, key);
			int r = parse_args(c, item->pairs[k].value, src, name, &ac->args, &ac->nargs, err);
			if (r < 0)
				return r;
			r = check_action_args(kb_registry_action(c->registry, name), item->pairs[k].value,
					      src, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_tiers(kb_conf *c, const kb_yaml_node *tiers, const char *src, kb_err *err);

static int parse_doc(kb_conf *c, const kb_yaml_node *root, const char *src, kb_err *err)
{
	if (root->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: expected a mapping with actions and tiers",
				  AT(root));
	const kb_yaml_node *actions = NULL, *tiers = NULL, *confs = NULL;
	for (size_t i = 0; i < root->n; i++) {
		const char *key = root->pairs[i].key->str;
		if (strcmp(key, "actions") == 0)
			actions = root->pairs[i].value;
		else if (strcmp(key, "tiers") == 0)
			tiers = root->pairs[i].value;
		else if (strcmp(key, "configurations") == 0)
			confs = root->pairs[i].value; /* volcano's per-action arguments */
		else
			return kb_err_set(err, -EINVAL, "%s:%d:%d: unknown key \"%s\" (expected actions, tiers)",
					  AT(root->pairs[i].key), key);
	}
	if (!actions)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: missing \"actions\"", AT(root));
	int r = parse_actions(c, actions, src, err);
	if (r == 0 && confs)
		r = parse_configurations(c, confs, src, err);
	if (r < 0)
		return r;
	if (!tiers || kb_yaml_is_null(tiers))
		return 0;
	return parse_tiers(c, tiers, src, err);
}

/* The tiers list: each tier a mapping with a list of plugins; a plugin may
 * appear once in the whole configuration. */
static int parse_tiers(kb_conf *c, const kb_yaml_node *tiers, const char *src, kb_err *err)
{
	int r;
	if (tiers->kind != KB_YAML_SEQ)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: tiers must be a list", AT(tiers));
	c->tiers = kb_arena_calloc(&c->arena, tiers->n ? tiers->n : 1, sizeof(kb_tier));
	if (!c->tiers)
		return -ENOMEM;
	for (size_t t = 0; t < tiers->n; t++) {
		const kb_yaml_node *tn = tiers->items[t];
		if (tn->kind != KB_YAML_MAP)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: a tier must be a mapping with plugins",
					  AT(tn));
		const kb_yaml_node *plugins = NULL;
		for (size_t i = 0; i < tn->n; i++) {
			if (strcmp(tn->pairs[i].key->str, "plugins") == 0)
				plugins = tn->pairs[i].value;
			else
				return kb_err_set(err, -EINVAL, "%s:%d:%d: unknown key \"%s\" in a tier",
						  AT(tn->pairs[i].key), tn->pairs[i].key->str);
		}
		if (!plugins || plugins->kind != KB_YAML_SEQ)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: a tier needs a list of plugins", AT(tn));
		kb_tier *tier = &c->tiers[c->ntiers++];
		tier->plugins = kb_arena_calloc(&c->arena, plugins->n ? plugins->n : 1, sizeof(kb_plugin_conf));
		if (!tier->plugins)
			return -ENOMEM;
		for (size_t p = 0; p < plugins->n; p++) {
			kb_plugin_conf *pc = &tier->plugins[tier->n];
			if ((r = parse_plugin(c, pc, plugins->items[p], src, err)) < 0)
				return r;
			for (uint32_t tt = 0; tt < c->ntiers; tt++)
				for (uint32_t pp = 0; pp < c->tiers[tt].n; pp++)
					if (c->tiers[tt].plugins[pp].ops == pc->ops)
						return kb_err_set(err, -EINVAL,
								  "%s:%d:%d: plugin \"%s\" listed twice",
								  AT(plugins->items[p]), pc->name);
			tier->n++;
		}
	}
	return 0;
}

static int adopt_args(kb_conf *c, const kb_plugin_arg *cargs, uint32_t n)
{
	kb_plugin_arg *args = (kb_plugin_arg *)cargs;
	for (uint32_t i = 0; i < n; i++) {
		args[i].key = kb_arena_strdup(&c->arena, args[i].key);
		args[i].value = kb_arena_strdup(&c->arena, args[i].value);
		if (!args[i].key || !args[i].value)
			return -ENOMEM;
	}
	return 0;
}

/* Copies what the conf keeps (strings the yaml file owns) into its arena. */
static int adopt_strings(kb_conf *c)
{
	for (uint32_t i = 0; i < c->naction_confs; i++) {
		kb_action_conf *ac = &c->action_confs[i];
		ac->name = kb_registry_action(c->registry, ac->name)->name;
		if (adopt_args(c, ac->args, ac->nargs) < 0)
			return -ENOMEM;
	}
	for (uint32_t t = 0; t < c->ntiers; t++) {
		for (uint32_t p = 0; p < c->tiers[t].n; p++) {
			kb_plugin_conf *pc = &c->tiers[t].plugins[p];
			pc->name = pc->ops->name;
			if (adopt_args(c, pc->args, pc->nargs) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static int load(kb_yaml_file *f, const char *name, const kb_registry *reg, kb_conf *ret,
		kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_arena_init(&ret->arena);
	ret->registry = reg;
	ret->source = kb_arena_strdup(&ret->arena, name);
	int r;
	if (f->ndocs != 1) {
		r = kb_err_set(err, -EINVAL, "%s: expected exactly one YAML document, found %zu", name,
			       f->ndocs);
		goto out;
	}
	r = parse_doc(ret, f->docs[0], name, err);
	if (r == 0)
		r = adopt_strings(ret);
	ret->queue_capability = true;
	for (uint32_t t = 0; t < ret->ntiers; t++)
		for (uint32_t p = 0; p < ret->tiers[t].n; p++)
			if (strcmp(ret->tiers[t].plugins[p].name, "proportion") == 0 &&
			    !ret->tiers[t].plugins[p].allocatable)
				ret->queue_capability = false;
	if (r == -ENOMEM)
		kb_err_set(err, r, "%s: out of memory", name);
out:
	kb_yaml_file_release(f);
	if (r < 0)
		kb_conf_release(ret);
	return r;
}

int kb_conf_load_buffer(const char *buf, size_t len, const char *name, const kb_registry *reg,
			kb_conf *ret, kb_err *err)
{
	kb_yaml_file f;
	int r = kb_yaml_load_buffer(buf, len, name, &f, err);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	return load(&f, name, reg, ret, err);
}

int kb_conf_load_file(const char *path, const kb_registry *reg, kb_conf *ret, kb_err *err)
{
	kb_yaml_file f;
	int r = kb_yaml_load_file(path, &f, err);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	return load(&f, path, reg, ret, err);
}

int kb_conf_load_default(const kb_registry *reg, kb_conf *ret, kb_err *err)
{
	return kb_conf_load_buffer(KB_CONF_DEFAULT, sizeof(KB_CONF_DEFAULT) - 1,
				   "<built-in default>", reg, ret, err);
}

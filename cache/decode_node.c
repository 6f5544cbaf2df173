/* decode_node.c - a Node's fields (see decode.h): allocatable, GPUs and
 * their topology, taints, unschedulable, readiness. */
#include "cache/decode.h"

#include <errno.h>
#include <string.h>

/* Pods a node takes when it does not say: the kubelet's --max-pods default. */
#define DEFAULT_NODE_PODS 110

/* One item of spec.taints into ((kb_taint *)ctx)[i]. */
static int dec_taint(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i, void *ctx)
{
	kb_taint *t = (kb_taint *)ctx + i;
	char sub[DEC_PATH_LEN];
	int r;
	dec_path(sub, "%s.key", path);
	if ((r = dec_str(d, kb_yaml_get(it, "key"), sub, &t->key)) < 0)
		return r;
	if (!t->key || !*t->key)
		return dec_fail(d, -EINVAL, it, sub, "required");
	dec_path(sub, "%s.value", path);
	if ((r = dec_str(d, kb_yaml_get(it, "value"), sub, &t->value)) < 0)
		return r;
	if (!t->value)
		t->value = "";
	dec_path(sub, "%s.effect", path);
	const kb_yaml_node *e = kb_yaml_get(it, "effect");
	if (kb_yaml_is_null(e) || dec_scalar_is(e, ""))
		return dec_fail(d, -EINVAL, e ? e : it, sub,
				"required (NoSchedule, PreferNoSchedule or NoExecute)");
	return dec_taint_effect(d, e, sub, &t->effect);
}

static int dec_taints(dec_ctx *d, const kb_yaml_node *spec, kb_node_obj *no)
{
	const kb_yaml_node *seq;
	int r = dec_seq(d, kb_yaml_get(spec, "taints"), "spec.taints", &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_taint *t = kb_arena_calloc(d->a, seq->n, sizeof(*t));
	if (!t)
		return dec_nomem(d);
	if ((r = dec_each_map(d, seq, "spec.taints", DEC_NULL_ITEM_FAILS, dec_taint, t)) < 0)
		return r;
	no->taints = t;
	no->ntaints = (uint32_t)seq->n;
	return 0;
}

/* The message for a topology annotation that does not parse. */
static int bad_topology(dec_ctx *d, const kb_yaml_node *at, const char *path, const char *s)
{
	return dec_fail(d, -EINVAL, at, path,
			"bad topology \"%.*s\" (want device indices like \"0,1,2,3;4,5,6,7\")",
			DEC_QUOTE_MAX, s);
}

/* KB_ANN_GPU_TOPOLOGY, "0,1,2,3;4,5,6,7": each device 0..ngpus-1 in
 * exactly one group; no->gpu_group[device] is its group. */
static int dec_gpu_topology(dec_ctx *d, kb_node_obj *no)
{
	const char *s = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPU_TOPOLOGY);
	if (!s)
		return 0;
	const kb_yaml_node *at = dec_annotation_node(d, KB_ANN_GPU_TOPOLOGY);
	const char *path = "metadata.annotations." KB_ANN_GPU_TOPOLOGY;
	if (no->ngpus == 0)
		return dec_fail(d, -EINVAL, at, path, "the node has no %s", KB_RES_GPU_NAME);
	uint8_t *g = kb_arena_alloc(d->a, (size_t)no->ngpus);
	if (!g)
		return dec_nomem(d);
	uint32_t seen = 0;
	int group = 0;
	const char *p = s;
	for (;;) {
		/* one group: devices separated by ',' */
		for (;;) {
			while (*p == ' ')
				p++;
			if (*p < '0' || *p > '9')
				return bad_topology(d, at, path, s);
			int dev = 0;
			while (*p >= '0' && *p <= '9') {
				dev = dev * 10 + (*p++ - '0');
				if (dev >= no->ngpus)
					break;
			}
			if (dev >= no->ngpus)
				return dec_fail(d, -EINVAL, at, path,
						"device %d out of range (the node has %d GPUs)",
						dev, no->ngpus);
			if (seen & (1u << dev))
				return dec_fail(d, -EINVAL, at, path, "device %d appears twice",
						dev);
			seen |= 1u << dev;
			g[dev] = (uint8_t)group;
			while (*p == ' ')
				p++;
			if (*p != ',')
				break;
			p++;
		}
		if (*p == '\0')
			break;
		if (*p != ';')
			return bad_topology(d, at, path, s);
		p++;
		group++;
	}
	for (int i = 0; i < no->ngpus; i++)
		if (!(seen & (1u << i)))
			return dec_fail(d, -EINVAL, at, path, "device %d is in no group", i);
	no->gpu_group = g;
	return 0;
}

/* status.allocatable, else status.capacity; pods DEFAULT_NODE_PODS when
 * absent; whole GPUs into no->ngpus; the names nothing asks for yet into
 * no->extra. */
static int dec_allocatable(dec_ctx *d, const kb_yaml_node *status, kb_node_obj *no)
{
	const kb_yaml_node *alloc = kb_yaml_get(status, "allocatable");
	const char *apath = "status.allocatable";
	if (kb_yaml_is_null(alloc)) {
		alloc = kb_yaml_get(status, "capacity");
		apath = "status.capacity";
	}
	uint32_t mask;
	int r = dec_reslist_advertised(d, alloc, apath, &no->allocatable, &mask, &no->extra,
				       &no->nextra);
	if (r < 0)
		return r;
	if (!(mask & (1u << KB_RES_PODS)))
		no->allocatable.q[KB_RES_PODS] = (int64_t)DEFAULT_NODE_PODS * 1000;

	int gi = kb_resnames_find(d->rn, KB_RES_GPU_NAME);
	if (gi < 0 || !(mask & (1u << gi)))
		return 0;
	int64_t q = no->allocatable.q[gi];
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.%s", apath, KB_RES_GPU_NAME);
	const kb_yaml_node *at = kb_yaml_get(alloc, KB_RES_GPU_NAME);
	if (q % 1000 != 0)
		return dec_fail(d, -EINVAL, at, sub, "must be a whole number of GPUs, got \"%.*s\"",
				DEC_QUOTE_MAX, at->str);
	if (q / 1000 > KB_MAX_GPUS)
		return dec_fail(d, -EINVAL, at, sub, "at most %d GPUs per node, got \"%.*s\"",
				KB_MAX_GPUS, DEC_QUOTE_MAX, at->str);
	no->ngpus = (int32_t)(q / 1000);
	return 0;
}

/* Ready unless the last Ready condition says otherwise. */
static int dec_ready(dec_ctx *d, const kb_yaml_node *status, kb_node_obj *no)
{
	const kb_yaml_node *conds;
	int r = dec_seq(d, kb_yaml_get(status, "conditions"), "status.conditions", &conds);
	if (r < 0)
		return r;
	no->ready = true;
	for (size_t i = 0; conds && i < conds->n; i++) {
		const kb_yaml_node *c = conds->items[i];
		if (!dec_scalar_is(kb_yaml_get(c, "type"), "Ready"))
			continue;
		no->ready = dec_scalar_is(kb_yaml_get(c, "status"), "True");
	}
	return 0;
}

int dec_node(dec_ctx *d)
{
	kb_node_obj *no = &d->o->u.node;
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;
	if ((r = dec_allocatable(d, status, no)) < 0)
		return r;
	if ((r = dec_bool(d, kb_yaml_get(spec, "unschedulable"), "spec.unschedulable",
			  &no->unschedulable)) < 0)
		return r;
	if ((r = dec_taints(d, spec, no)) < 0)
		return r;
	if ((r = dec_ready(d, status, no)) < 0)
		return r;
	const char *model = kb_labels_get(&d->o->meta.labels, KB_LABEL_GPU_PRODUCT);
	no->gpu_model = model && *model ? model : NULL;
	return dec_gpu_topology(d, no);
}

/* decode_node.c - a Node's fields (see decode.h): allocatable, GPUs and
 * their topology, taints, unschedulable, readiness. */
#include "cache/decode.h"

#include <errno.h>
#include <string.h>

#include "api/quantity.h"

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

/* The node of label `key`, for error positions; NULL when absent. */
static const kb_yaml_node *label_at(const dec_ctx *d, const char *key)
{
	return kb_yaml_get(kb_yaml_get(kb_yaml_get(d->root, "metadata"), "labels"), key);
}

/* Fails naming label `key` (path "metadata.labels.<key>"). */
#define label_fail(d, key, ...)                                                                     \
	dec_fail((d), -EINVAL, label_at((d), (key)), "metadata.labels." key, __VA_ARGS__)

/* A label that must be a whole number in min..max, into *ret; absent: 0
 * with *ret untouched. */
static int dec_int_label(dec_ctx *d, const char *key, int64_t min, int64_t max, int64_t *ret)
{
	const char *s = kb_labels_get(&d->o->meta.labels, key);
	if (!s)
		return 0;
	int64_t v = 0;
	bool ok = *s != '\0' && strlen(s) <= 18;
	for (const char *p = s; ok && *p; p++) {
		ok = *p >= '0' && *p <= '9';
		v = v * 10 + (*p - '0');
	}
	if (!ok || v < min || v > max)
	{
		char path[DEC_PATH_LEN];
		dec_path(path, "metadata.labels.%s", key);
		return dec_fail(d, -EINVAL, label_at(d, key), path,
				"want a whole number %lld..%lld, got \"%.*s\"", (long long)min,
				(long long)max, DEC_QUOTE_MAX, s);
	}
	*ret = v;
	return 0;
}

/* GPU Feature Discovery's sharing labels: with replicas R > 1 each physical
 * GPU is advertised as R nvidia.com/gpu, so the node has advertised / R
 * GPUs (R must divide what it advertises: the device plugin drops a GPU's
 * replicas together), and the product name loses GFD's "-SHARED". */
static int dec_gpu_sharing(dec_ctx *d, kb_node_obj *no, const char *apath, int64_t advertised)
{
	const char *strategy = kb_labels_get(&d->o->meta.labels, KB_LABEL_GPU_SHARING);
	no->gpu_sharing = KB_GPU_SHARING_NONE;
	if (strategy && strcmp(strategy, "time-slicing") == 0)
		no->gpu_sharing = KB_GPU_SHARING_TIME_SLICING;
	else if (strategy && strcmp(strategy, "mps") == 0)
		no->gpu_sharing = KB_GPU_SHARING_MPS;
	else if (strategy && *strategy && strcmp(strategy, "none") != 0)
		return label_fail(d, KB_LABEL_GPU_SHARING,
				  "want none, time-slicing or mps, got \"%.*s\"", DEC_QUOTE_MAX,
				  strategy);
	int64_t replicas = 1, count = -1;
	int r;
	if ((r = dec_int_label(d, KB_LABEL_GPU_REPLICAS, 1, 1000000, &replicas)) < 0 ||
	    (r = dec_int_label(d, KB_LABEL_GPU_COUNT, 0, 1000000, &count)) < 0)
		return r;
	no->gpu_replicas = (int32_t)replicas;
	if (advertised % replicas != 0)
		return label_fail(d, KB_LABEL_GPU_REPLICAS,
				  "%lld does not divide %s.%s %lld (each GPU is advertised as that "
				  "many %s)",
				  (long long)replicas, apath, KB_RES_GPU_NAME, (long long)advertised,
				  KB_RES_GPU_NAME);
	int64_t gpus = advertised / replicas;
	if (count >= 0 && gpus > count)
		return label_fail(d, KB_LABEL_GPU_COUNT,
				  "%lld GPUs, but %s.%s %lld is %lld GPUs of %lld replicas",
				  (long long)count, apath, KB_RES_GPU_NAME, (long long)advertised,
				  (long long)gpus, (long long)replicas);
	if (gpus > KB_MAX_GPUS) {
		char path[DEC_PATH_LEN];
		dec_path(path, "%s.%s", apath, KB_RES_GPU_NAME);
		const kb_yaml_node *list = kb_yaml_get(kb_yaml_get(d->root, "status"),
						       apath + strlen("status."));
		if (replicas > 1)
			return dec_fail(d, -EINVAL, kb_yaml_get(list, KB_RES_GPU_NAME), path,
					"at most %d GPUs per node, got %lld (%lld replicas of %lld)",
					KB_MAX_GPUS, (long long)gpus, (long long)advertised,
					(long long)replicas);
		return dec_fail(d, -EINVAL, kb_yaml_get(list, KB_RES_GPU_NAME), path,
				"at most %d GPUs per node, got \"%lld\"", KB_MAX_GPUS,
				(long long)advertised);
	}
	no->ngpus = (int32_t)gpus;
	return 0;
}

/* Alibaba's gpushare: KB_RES_GPUSHARE_COUNT from where the allocatable came
 * from, else status.capacity (its device plugin patches the capacity). */
static int dec_gpushare_count(dec_ctx *d, const kb_yaml_node *status, const kb_yaml_node *alloc,
			      const char *apath, kb_node_obj *no)
{
	const kb_yaml_node *q = kb_yaml_get(alloc, KB_RES_GPUSHARE_COUNT);
	if (kb_yaml_is_null(q)) {
		q = kb_yaml_get(kb_yaml_get(status, "capacity"), KB_RES_GPUSHARE_COUNT);
		apath = "status.capacity";
	}
	if (kb_yaml_is_null(q))
		return 0;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.%s", apath, KB_RES_GPUSHARE_COUNT);
	int64_t milli;
	if (!dec_is_scalar(q) || kb_quantity_parse(q->str, &milli) < 0 || milli < 0 ||
	    milli % 1000 != 0 || milli / 1000 > KB_MAX_GPUS)
		return dec_fail(d, -EINVAL, q, sub, "want a whole number of GPUs 0..%d, got \"%.*s\"",
				KB_MAX_GPUS, DEC_QUOTE_MAX, dec_is_scalar(q) ? q->str : "");
	no->gpushare_count = (int32_t)(milli / 1000);
	return 0;
}

/* status.allocatable, else status.capacity; pods DEFAULT_NODE_PODS when
 * absent; physical GPUs into no->ngpus (dec_gpu_sharing); the names nothing
 * asks for yet into no->extra. */
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
	no->gpu_replicas = 1;
	if ((r = dec_gpushare_count(d, status, alloc, apath, no)) < 0)
		return r;

	int gi = kb_resnames_find(d->rn, KB_RES_GPU_NAME);
	int64_t q = gi >= 0 && (mask & (1u << gi)) ? no->allocatable.q[gi] : 0;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.%s", apath, KB_RES_GPU_NAME);
	const kb_yaml_node *at = kb_yaml_get(alloc, KB_RES_GPU_NAME);
	if (q % 1000 != 0)
		return dec_fail(d, -EINVAL, at, sub, "must be a whole number of GPUs, got \"%.*s\"",
				DEC_QUOTE_MAX, at->str);
	return dec_gpu_sharing(d, no, apath, q / 1000);
}

/* The product label, without GFD's "-SHARED" on a node that shares its
 * GPUs (the same GPU model as on a node that does not). */
static int dec_gpu_model(dec_ctx *d, kb_node_obj *no)
{
	const char *model = kb_labels_get(&d->o->meta.labels, KB_LABEL_GPU_PRODUCT);
	no->gpu_model = model && *model ? model : NULL;
	size_t len = model ? strlen(model) : 0, slen = strlen(KB_GPU_SHARED_SUFFIX);
	if (no->gpu_replicas <= 1 || len <= slen ||
	    strcmp(model + len - slen, KB_GPU_SHARED_SUFFIX) != 0)
		return 0;
	char *m = kb_arena_strndup(d->a, model, len - slen);
	if (!m)
		return dec_nomem(d);
	no->gpu_model = m;
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
	if ((r = dec_gpu_model(d, no)) < 0 || (r = dec_node_vgpu(d, no)) < 0)
		return r;
	return dec_gpu_topology(d, no);
}

/* run_scenario - runs one scenario folder through the simulator and checks it.
 *
 *   run_scenario DIR
 *
 * See README.md beside this file for the folder layout and expect.yaml.
 * Exit 0 when every check passes; 1 with one line per failed check.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "cache/manifests.h"
#include "scheduler/simulate.h"
#include "api/defaults.h"
#include "plugins/registry.h"
#include "plugins/vgpu.h"

static int failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "FAIL: " __VA_ARGS__);                                             \
		fputc('\n', stderr);                                                               \
		failures++;                                                                        \
	} while (0)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_special(const char *name)
{
	return strcmp(name, "expect.yaml") == 0 || strcmp(name, "scheduler-conf.yaml") == 0 ||
	       strcmp(name, "queue-conf.yaml") == 0;
}

/* Runs the simulator; returns its status, output in *ret_out (malloc'd). */
static int simulate(const kb_sim_options *o, char **ret_out, kb_err *err)
{
	size_t len = 0;
	FILE *mem = open_memstream(ret_out, &len);
	if (!mem)
		return -ENOMEM;
	int r = kb_simulate(o, mem, err);
	fclose(mem);
	return r;
}

/* ---- facts from the manifests ------------------------------------------------------ */

typedef struct pod_fact {
	const char *key;
	kb_res req; /* what the kubelet counts against allocatable (cache/objects.h) */
	/* its asks in names past the slots (api/resource.h), owned by the
	 * cluster's object */
	const kb_res_extra *spill;
	uint32_t nspill;
	const kb_pod_spec *spec; /* owned by the cluster's object */
	int64_t duration_ms;
	const char *group; /* "ns/name" of its PodGroup, or NULL */
	int32_t gpu_milli; /* share of one GPU, or 0 for whole GPUs */
} pod_fact;

typedef struct facts {
	kb_cluster cluster;
	kb_object_vec later;
	pod_fact *pods;
	size_t npods;
} facts;

static const pod_fact *find_pod(const facts *f, const char *key)
{
	for (size_t i = 0; i < f->npods; i++)
		if (strcmp(f->pods[i].key, key) == 0)
			return &f->pods[i];
	return NULL;
}

static void add_pod(facts *f, const kb_object *o)
{
	pod_fact *p = &f->pods[f->npods++];
	p->key = o->meta.key;
	p->req = o->u.pod.req;
	p->spill = o->u.pod.spec.spill;
	p->nspill = o->u.pod.spec.nspill;
	p->spec = &o->u.pod.spec;
	p->duration_ms = o->u.pod.sim_duration_ms;
	p->gpu_milli = o->u.pod.spec.gpu_milli;
	if (o->u.pod.group_name) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%s/%s", o->meta.ns, o->u.pod.group_name);
		p->group = strdup(buf);
	}
}

/* ---- invariants ------------------------------------------------------------------ */

typedef struct event {
	double time;
	int kind; /* 0 completion/eviction (frees), 1 bind (takes) */
	const char *pod;
	const char *node;
	int bind_index; /* for completions: which bind */
} event;

static int cmp_event(const void *a, const void *b)
{
	const event *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->kind - y->kind;
}

/* The kubelet's admission rule: for every resource, the sum of the requests
 * of the pods bound to node ni (used) does not exceed its allocatable. One
 * failure per resource over, naming the node, the resource, the sum and the
 * allocatable. */
static void check_allocatable(const kb_snapshot *nodes, int32_t ni, const kb_res *used,
			      double time, const char *pod)
{
	const kb_node *n = &nodes->nodes[ni];
	for (int r = 0; r < nodes->resnames.n; r++) {
		if (used->q[r] <= n->allocatable.q[r])
			continue;
		char sum[KB_QUANTITY_BUFSZ], alloc[KB_QUANTITY_BUFSZ];
		FAIL("node %s over its allocatable at t=%.3f after binding %s: %s requested %s, "
		     "allocatable %s",
		     n->name, time, pod, nodes->resnames.name[r],
		     kb_res_format_one(used->q[r], &nodes->resnames, r, sum),
		     kb_res_format_one(n->allocatable.q[r], &nodes->resnames, r, alloc));
	}
}

/* The same rule for the names past the slots (api/resource.h): the pods
 * bound to node ni ask for at most its allocatable of each. used[k]: the
 * node's sum of known name k so far; sign: +1 on a bind, -1 when it ends. */
static void check_spilled(const kb_snapshot *nodes, int32_t ni, const pod_fact *pf, int sign,
			  int64_t *used, double time, const char *pod)
{
	const kb_node *n = &nodes->nodes[ni];
	for (uint32_t i = 0; i < pf->nspill; i++) {
		int32_t k = pf->spill[i].known;
		used[k] += sign * pf->spill[i].milli;
		int64_t alloc = kb_res_extra_get(n->extra, n->nextra, k);
		if (sign > 0 && used[k] > alloc)
			FAIL("node %s over its allocatable at t=%.3f after binding %s: %s requested "
			     "%lld milli, allocatable %lld milli",
			     n->name, time, pod, nodes->resnames.known[k], (long long)used[k],
			     (long long)alloc);
	}
}

/* volcano's vGPU, as volcano's scheduler and its device plugin count it
 * (plugins/vgpu.h): a pod is given vgpu-number distinct registered GPUs;
 * each GPU holds at most its split count of vGPUs, its memory and 100 %
 * of its cores. use[d]: what GPU d of node ni holds so far; sign +1 on a
 * bind, -1 when it ends. */
typedef struct vgpu_use {
	int64_t num, mem, cores;
} vgpu_use;

static void check_vgpu(const kb_snapshot *nodes, int32_t ni, json_t *gpus, const pod_fact *pf,
		       int sign, vgpu_use *use, double time, const char *pod)
{
	const kb_node *n = &nodes->nodes[ni];
	if (sign > 0 && json_array_size(gpus) != (size_t)pf->spec->vgpu_number)
		FAIL("%s asks for %d vGPUs but was given %zu GPUs of %s", pod,
		     pf->spec->vgpu_number, json_array_size(gpus), n->name);
	size_t gi;
	json_t *g;
	json_array_foreach(gpus, gi, g)
	{
		int64_t d = json_integer_value(g);
		if (d < 0 || d >= (int64_t)n->nvgpu || d >= 32) {
			FAIL("%s given vGPU device %lld, which node %s does not register", pod,
			     (long long)d, n->name);
			continue;
		}
		vgpu_use *u = &use[d];
		u->num += sign;
		u->mem += sign * kb_vgpu_mem_of(pf->spec, &n->vgpu[d]);
		u->cores += sign * pf->spec->vgpu_cores;
		if (sign > 0 && (u->num > n->vgpu[d].count || u->mem > n->vgpu[d].mem || u->cores > 100))
			FAIL("GPU %lld (%s) of node %s is over-filled at t=%.3f after binding %s: "
			     "%lld of %d vGPUs, %lld of %d MiB, %lld %% cores",
			     (long long)d, n->vgpu[d].uuid, n->name, time, pod, (long long)u->num,
			     n->vgpu[d].count, (long long)u->mem, n->vgpu[d].mem, (long long)u->cores);
	}
}

/* Alibaba's GPU sharing: a pod asking for aliyun.com/gpu-mem runs on the
 * one device d it was given; the device exists (d < aliyun.com/gpu-count)
 * and the pods on it never ask for more than one device's memory
 * (allocatable gpu-mem / gpu-count, whole units rounded down, as the
 * extender and the device plugin count it). */
static void check_share(const kb_snapshot *nodes, int32_t ni, int64_t d, int r, int64_t ask,
			int64_t *used, double time, const char *pod)
{
	const kb_node *n = &nodes->nodes[ni];
	if (d < 0 || d >= 32 || d >= n->gpushare_count) {
		FAIL("%s given GPU %lld, which node %s does not have (aliyun.com/gpu-count %d)", pod,
		     (long long)d, n->name, n->gpushare_count);
		return;
	}
	int64_t cap = n->allocatable.q[r] / 1000 / n->gpushare_count * 1000;
	used[d] += ask;
	if (used[d] > cap)
		FAIL("GPU %lld of node %s is over-filled (aliyun.com/gpu-mem %lld of %lld) at "
		     "t=%.3f after binding %s",
		     (long long)d, n->name, (long long)(used[d] / 1000), (long long)(cap / 1000), time,
		     pod);
}

static void check_invariants(facts *f, json_t *outj)
{
	json_t *binds = json_object_get(outj, "bindings");
	json_t *evicts = json_object_get(outj, "evictions");
	size_t nb = json_array_size(binds), ne = json_array_size(evicts);
	event *ev = calloc(2 * nb + ne + 1, sizeof(event));
	size_t n = 0;
	for (size_t i = 0; i < nb; i++) {
		json_t *b = json_array_get(binds, i);
		const char *pod = json_string_value(json_object_get(b, "pod"));
		const char *node = json_string_value(json_object_get(b, "node"));
		double t = json_number_value(json_object_get(b, "time"));
		const pod_fact *pf = find_pod(f, pod);
		if (!pf) {
			FAIL("binding of unknown pod %s", pod);
			continue;
		}
		ev[n++] = (event){t, 1, pod, node, (int)i};
		/* Its completion, unless it is evicted first (handled when replaying). */
		if (pf->duration_ms >= 0)
			ev[n++] = (event){t + (double)pf->duration_ms / 1000.0, 0, pod, node, (int)i};
	}
	for (size_t i = 0; i < ne; i++) {
		json_t *e = json_array_get(evicts, i);
		ev[n++] = (event){json_number_value(json_object_get(e, "time")), 0,
				  json_string_value(json_object_get(e, "pod")),
				  json_string_value(json_object_get(e, "node")), -1};
	}
	qsort(ev, n, sizeof(event), cmp_event);

	/* Replay: per node used; per pod which bind is live. */
	kb_snapshot nodes;
	kb_snapshot_init(&nodes);
	kb_err err;
	if (kb_cluster_snapshot(&f->cluster, &nodes, &err) < 0) {
		FAIL("snapshot for invariants: %s", err.msg);
		free(ev);
		return;
	}
	kb_res *used = calloc(nodes.nnodes + 1, sizeof(kb_res));
	int32_t(*dev)[32] = calloc(nodes.nnodes + 1, sizeof(*dev)); /* milli-GPU used per device */
	/* aliyun.com/gpu-mem used per device (milli-units) */
	int64_t(*share)[32] = calloc(nodes.nnodes + 1, sizeof(*share));
	int share_res = kb_resnames_find(&nodes.resnames, "aliyun.com/gpu-mem");
	/* per node, what the pods bound there ask of each known name */
	size_t nknown = (size_t)nodes.resnames.nknown + 1;
	int64_t *spilled = calloc((nodes.nnodes + 1) * nknown, sizeof(int64_t));
	vgpu_use(*vused)[32] = calloc(nodes.nnodes + 1, sizeof(*vused));
	int *live = calloc(nb + 1, sizeof(int)); /* 1 while bind i holds its node */
	const char **pod_of_bind = calloc(nb + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		event *e = &ev[i];
		int32_t ni = kb_snapshot_find_node(&nodes, e->node);
		const pod_fact *pf = find_pod(f, e->pod);
		if (ni < 0 || !pf)
			continue;
		json_t *gpus = json_object_get(json_array_get(binds, (size_t)(e->bind_index >= 0 ? e->bind_index : 0)), "gpus");
		if (e->kind == 1) {
			live[e->bind_index] = 1;
			pod_of_bind[e->bind_index] = e->pod;
			kb_res_add(&used[ni], &pf->req);
			if (share_res >= 0 && pf->req.q[share_res] > 0 && json_array_size(gpus) != 1)
				FAIL("%s asks for aliyun.com/gpu-mem but was bound to %s with %zu devices "
				     "(its device plugin needs exactly one)",
				     e->pod, e->node, json_array_size(gpus));
			size_t gi;
			json_t *g;
			if (pf->spec->vgpu_number > 0) {
				check_vgpu(&nodes, ni, gpus, pf, 1, vused[ni], e->time, e->pod);
				gpus = NULL; /* its devices are vGPU ones, not whole GPUs */
			}
			json_array_foreach(gpus, gi, g)
			{
				int64_t d = json_integer_value(g);
				if (share_res >= 0 && pf->req.q[share_res] > 0) {
					check_share(&nodes, ni, d, share_res, pf->req.q[share_res],
						    share[ni], e->time, e->pod);
					continue;
				}
				if (d < 0 || d >= 32 || d >= nodes.nodes[ni].ngpus) {
					FAIL("%s given GPU %lld, which node %s does not have", e->pod, (long long)d, e->node);
					continue;
				}
				dev[ni][d] += pf->gpu_milli ? pf->gpu_milli : 1000;
				if (dev[ni][d] > 1000)
					FAIL("GPU %lld of node %s is over-filled (%d milli-GPU) at t=%.3f after binding %s",
					     (long long)d, e->node, dev[ni][d], e->time, e->pod);
			}
			check_allocatable(&nodes, ni, &used[ni], e->time, e->pod);
			check_spilled(&nodes, ni, pf, 1, spilled + (size_t)ni * nknown, e->time,
				      e->pod);
		} else {
			int bi = e->bind_index;
			if (bi < 0) { /* eviction: the live bind of that pod */
				for (size_t k = 0; k < nb; k++)
					if (live[k] && pod_of_bind[k] && strcmp(pod_of_bind[k], e->pod) == 0)
						bi = (int)k;
			}
			if (bi >= 0 && live[bi]) {
				live[bi] = 0;
				kb_res_sub(&used[ni], &pf->req);
				check_spilled(&nodes, ni, pf, -1, spilled + (size_t)ni * nknown,
					      e->time, e->pod);
				size_t gi;
				json_t *g;
				json_t *held = json_object_get(json_array_get(binds, (size_t)bi), "gpus");
				if (pf->spec->vgpu_number > 0) {
					check_vgpu(&nodes, ni, held, pf, -1, vused[ni], e->time, e->pod);
					held = NULL;
				}
				json_array_foreach(held, gi, g)
				{
					int64_t d = json_integer_value(g);
					if (d >= 0 && d < 32 && share_res >= 0 &&
					    pf->req.q[share_res] > 0)
						share[ni][d] -= pf->req.q[share_res];
					else if (d >= 0 && d < 32)
						dev[ni][d] -= pf->gpu_milli ? pf->gpu_milli : 1000;
				}
			}
		}
	}

	/* Gangs: at each bind time, the members placed so far (bound and not
	 * evicted; finished ones count) are 0 or at least minMember. */
	for (size_t g = 0; g < nodes.njobs; g++) {
		const kb_job *j = &nodes.jobs[g];
		if (j->min_member <= 1 || j->flavor == KB_PG_NONE)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (i + 1 < n && ev[i + 1].time == ev[i].time)
				continue; /* look at the state after every event of this instant */
			double t = ev[i].time;
			int placed = 0;
			for (size_t k = 0; k < nb; k++) {
				json_t *b = json_array_get(binds, k);
				const char *pod = json_string_value(json_object_get(b, "pod"));
				const pod_fact *pf = find_pod(f, pod);
				if (!pf || !pf->group || strcmp(pf->group, j->key) != 0)
					continue;
				if (json_number_value(json_object_get(b, "time")) > t)
					continue;
				/* Evicted after this bind and at or before t? */
				bool gone = false;
				for (size_t e = 0; e < ne; e++) {
					json_t *ej = json_array_get(evicts, e);
					double et = json_number_value(json_object_get(ej, "time"));
					if (strcmp(json_string_value(json_object_get(ej, "pod")), pod) == 0 &&
					    et >= json_number_value(json_object_get(b, "time")) && et <= t)
						gone = true;
				}
				placed += !gone;
			}
			if (placed > 0 && placed < j->min_member) {
				FAIL("gang %s partly placed at t=%.3f: %d of minMember %d", j->key, t, placed,
				     j->min_member);
				break;
			}
		}
	}
	free(used);
	free(spilled);
	free(vused);
	free(dev);
	free(share);
	free(live);
	free(pod_of_bind);
	free(ev);
	kb_snapshot_release(&nodes);
}

/* ---- expectations ---------------------------------------------------------------- */

static json_t *find_by(json_t *arr, const char *field, const char *value)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(json_object_get(v, field));
		if (s && strcmp(s, value) == 0)
			return v;
	}
	return NULL;
}

static const char *bound_node(json_t *outj, const char *pod)
{
	/* The last binding of the pod. */
	const char *node = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(outj, "bindings"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "pod")), pod) == 0)
			node = json_string_value(json_object_get(v, "node"));
	}
	return node;
}

static double bound_time(json_t *outj, const char *pod)
{
	json_t *b = find_by(json_object_get(outj, "bindings"), "pod", pod);
	return b ? json_number_value(json_object_get(b, "time")) : -1;
}

static void expect_quantities(const char *what, const kb_yaml_node *want, json_t *got)
{
	for (size_t i = 0; i < want->n; i++) {
		const char *res = want->pairs[i].key->str;
		const char *wq = kb_yaml_str(want->pairs[i].value);
		const char *gq = json_string_value(json_object_get(got, res));
		int64_t w = 0, g = 0;
		if (!wq || kb_quantity_parse(wq, &w) < 0) {
			FAIL("%s: bad expected quantity for %s", what, res);
			continue;
		}
		if (gq && kb_quantity_parse(gq, &g) < 0)
			g = -1;
		if (w != g)
			FAIL("%s %s: expected %s, got %s", what, res, wq, gq ? gq : "0");
	}
}

static void check_pairs(json_t *outj, const kb_yaml_node *groups, bool same)
{
	for (size_t i = 0; groups && i < groups->n; i++) {
		const kb_yaml_node *grp = groups->items[i];
		for (size_t a = 0; a < grp->n; a++) {
			for (size_t b = a + 1; b < grp->n; b++) {
				const char *pa = kb_yaml_str(grp->items[a]), *pb = kb_yaml_str(grp->items[b]);
				const char *na = bound_node(outj, pa), *nb = bound_node(outj, pb);
				if (!na || !nb) {
					FAIL("%s and %s: expected both bound", pa, pb);
					continue;
				}
				if (same && strcmp(na, nb) != 0)
					FAIL("%s on %s and %s on %s: expected the same node", pa, na, pb, nb);
				if (!same && strcmp(na, nb) == 0)
					FAIL("%s and %s both on %s: expected different nodes", pa, pb, na);
			}
		}
	}
}

/* Every key of expect.yaml is one this runner checks, and every count is an
 * integer: a misspelt key or a bad number fails the scenario instead of
 * checking nothing. */
static void check_expect_keys(const kb_yaml_node *ex)
{
	static const char *const known[] = {
		"description", "schedule_period_ms", "max_time_ms", "error", "bound", "not_bound",
		"bound_count", "eviction_count", "max_eviction_count", "evicted", "not_evicted",
		"max_evictions_per_pod", "min_eviction_gap_ms", "pending", "pending_reason", "podgroups", "queues",
		"same_node", "different_nodes", "bound_before", "bound_at", "gpus", "volumes"};
	static const char *const counts[] = {"schedule_period_ms", "max_time_ms", "bound_count",
					     "eviction_count", "max_eviction_count",
					     "max_evictions_per_pod", "min_eviction_gap_ms"};
	if (!ex || ex->kind != KB_YAML_MAP) {
		FAIL("expect.yaml: expected a mapping");
		return;
	}
	for (size_t i = 0; i < ex->n; i++) {
		const char *key = ex->pairs[i].key->str;
		bool ok = false;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]) && !ok; k++)
			ok = strcmp(key, known[k]) == 0;
		if (!ok)
			FAIL("expect.yaml:%d: unknown key \"%s\"", ex->pairs[i].key->line, key);
	}
	int64_t v;
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		const kb_yaml_node *n = kb_yaml_get(ex, counts[k]);
		if (n && kb_yaml_int(n, &v) < 0)
			FAIL("expect.yaml:%d: %s: expected an integer", n->line, counts[k]);
	}
}

static void check_expect(const kb_yaml_node *ex, json_t *outj)
{
	const kb_yaml_node *n;
	json_t *binds = json_object_get(outj, "bindings");
	if ((n = kb_yaml_get(ex, "bound")))
		for (size_t i = 0; i < n->n; i++) {
			const char *pod = n->pairs[i].key->str, *want = kb_yaml_str(n->pairs[i].value);
			const char *got = bound_node(outj, pod);
			if (!got)
				FAIL("%s: expected bound, was never bound", pod);
			else if (strcmp(want, "*") != 0 && strcmp(want, got) != 0)
				FAIL("%s: expected on %s, got %s", pod, want, got);
		}
	if ((n = kb_yaml_get(ex, "not_bound")))
		for (size_t i = 0; i < n->n; i++)
			if (bound_node(outj, kb_yaml_str(n->items[i])))
				FAIL("%s: expected never bound, got bound to %s", kb_yaml_str(n->items[i]),
				     bound_node(outj, kb_yaml_str(n->items[i])));
	int64_t want;
	if ((n = kb_yaml_get(ex, "bound_count")) && kb_yaml_int(n, &want) == 0 &&
	    (int64_t)json_array_size(binds) != want)
		FAIL("bound_count: expected %lld, got %zu", (long long)want, json_array_size(binds));
	json_t *evicts = json_object_get(outj, "evictions");
	if ((n = kb_yaml_get(ex, "eviction_count")) && kb_yaml_int(n, &want) == 0 &&
	    (int64_t)json_array_size(evicts) != want)
		FAIL("eviction_count: expected %lld, got %zu", (long long)want, json_array_size(evicts));
	if ((n = kb_yaml_get(ex, "max_eviction_count")) && kb_yaml_int(n, &want) == 0 &&
	    (int64_t)json_array_size(evicts) > want)
		FAIL("max_eviction_count: expected at most %lld, got %zu", (long long)want,
		     json_array_size(evicts));
	if ((n = kb_yaml_get(ex, "evicted")))
		for (size_t i = 0; i < n->n; i++)
			if (!find_by(evicts, "pod", kb_yaml_str(n->items[i])))
				FAIL("%s: expected evicted, was not", kb_yaml_str(n->items[i]));
	if ((n = kb_yaml_get(ex, "not_evicted")))
		for (size_t i = 0; i < n->n; i++)
			if (find_by(evicts, "pod", kb_yaml_str(n->items[i])))
				FAIL("%s: expected never evicted, was evicted", kb_yaml_str(n->items[i]));
	if ((n = kb_yaml_get(ex, "max_evictions_per_pod")) && kb_yaml_int(n, &want) == 0) {
		size_t i, k;
		json_t *v, *w;
		json_array_foreach(evicts, i, v)
		{
			const char *pod = json_string_value(json_object_get(v, "pod"));
			int64_t count = 0;
			json_array_foreach(evicts, k, w)
			{
				count += strcmp(json_string_value(json_object_get(w, "pod")), pod) == 0;
			}
			if (count > want) {
				FAIL("%s evicted %lld times, at most %lld expected", pod, (long long)count,
				     (long long)want);
				break;
			}
		}
	}
	if ((n = kb_yaml_get(ex, "min_eviction_gap_ms")) && kb_yaml_int(n, &want) == 0) {
		size_t i, k;
		json_t *v, *w;
		json_array_foreach(evicts, i, v)
		{
			const char *pod = json_string_value(json_object_get(v, "pod"));
			double at = json_number_value(json_object_get(v, "time"));
			json_array_foreach(evicts, k, w)
			{
				double other = json_number_value(json_object_get(w, "time"));
				if (k > i && strcmp(json_string_value(json_object_get(w, "pod")), pod) == 0 &&
				    (other - at) * 1000.0 < (double)want)
					FAIL("%s evicted at %.1f s and again at %.1f s, less than %lld ms apart",
					     pod, at, other, (long long)want);
			}
		}
	}
	json_t *pending = json_object_get(outj, "pending");
	if ((n = kb_yaml_get(ex, "pending"))) {
		for (size_t i = 0; i < n->n; i++)
			if (!find_by(pending, "pod", kb_yaml_str(n->items[i])))
				FAIL("%s: expected pending at the end, was not", kb_yaml_str(n->items[i]));
		size_t i;
		json_t *v;
		json_array_foreach(pending, i, v)
		{
			const char *pod = json_string_value(json_object_get(v, "pod"));
			bool listed = false;
			for (size_t k = 0; k < n->n; k++)
				listed |= strcmp(kb_yaml_str(n->items[k]), pod) == 0;
			if (!listed)
				FAIL("%s: pending at the end, not expected (%s)", pod,
				     json_string_value(json_object_get(v, "reason")));
		}
	}
	if ((n = kb_yaml_get(ex, "pending_reason")))
		for (size_t i = 0; i < n->n; i++) {
			const char *pod = n->pairs[i].key->str, *sub = kb_yaml_str(n->pairs[i].value);
			json_t *p = find_by(pending, "pod", pod);
			const char *why = p ? json_string_value(json_object_get(p, "reason")) : NULL;
			if (!why || !strstr(why, sub))
				FAIL("%s: expected a pending reason containing \"%s\", got \"%s\"", pod, sub,
				     why ? why : "(not pending)");
		}
	if ((n = kb_yaml_get(ex, "podgroups")))
		for (size_t i = 0; i < n->n; i++) {
			const char *name = n->pairs[i].key->str;
			json_t *g = find_by(json_object_get(outj, "podgroups"), "name", name);
			if (!g) {
				FAIL("podgroup %s: missing from the output", name);
				continue;
			}
			const kb_yaml_node *ph = kb_yaml_get(n->pairs[i].value, "phase");
			const char *gph = json_string_value(json_object_get(g, "phase"));
			if (ph && strcmp(kb_yaml_str(ph), gph) != 0)
				FAIL("podgroup %s: expected phase %s, got %s", name, kb_yaml_str(ph), gph);
			const kb_yaml_node *sc = kb_yaml_get(n->pairs[i].value, "scheduled");
			if (sc && kb_yaml_int(sc, &want) == 0 &&
			    json_integer_value(json_object_get(g, "scheduled")) != want)
				FAIL("podgroup %s: expected scheduled %lld, got %lld", name, (long long)want,
				     (long long)json_integer_value(json_object_get(g, "scheduled")));
			const kb_yaml_node *gv = n->pairs[i].value;
			for (size_t k = 0; gv && gv->kind == KB_YAML_MAP && k < gv->n; k++) {
				const char *gk = gv->pairs[k].key->str;
				if (strcmp(gk, "phase") && strcmp(gk, "scheduled") && strcmp(gk, "reason") &&
				    strcmp(gk, "left_alone"))
					FAIL("podgroup %s: unknown key \"%s\"", name, gk);
			}
			const kb_yaml_node *rs = kb_yaml_get(gv, "reason");
			const char *grs = json_string_value(json_object_get(g, "reason"));
			if (rs && (!grs || !strstr(grs, kb_yaml_str(rs))))
				FAIL("podgroup %s: expected a reason containing \"%s\", got \"%s\"", name,
				     kb_yaml_str(rs), grs ? grs : "(none)");
			const kb_yaml_node *la = kb_yaml_get(gv, "left_alone");
			bool gla = json_is_true(json_object_get(g, "leftAlone"));
			if (la && (strcmp(kb_yaml_str(la), "true") == 0) != gla)
				FAIL("podgroup %s: expected left_alone %s, got %s", name, kb_yaml_str(la),
				     gla ? "true" : "false");
		}
	if ((n = kb_yaml_get(ex, "queues")))
		for (size_t i = 0; i < n->n; i++) {
			const char *name = n->pairs[i].key->str;
			json_t *q = find_by(json_object_get(outj, "queues"), "name", name);
			if (!q) {
				FAIL("queue %s: missing from the output", name);
				continue;
			}
			const kb_yaml_node *d = kb_yaml_get(n->pairs[i].value, "deserved");
			const kb_yaml_node *a = kb_yaml_get(n->pairs[i].value, "allocated");
			char what[300];
			snprintf(what, sizeof(what), "queue %s deserved", name);
			if (d)
				expect_quantities(what, d, json_object_get(q, "deserved"));
			snprintf(what, sizeof(what), "queue %s allocated", name);
			if (a)
				expect_quantities(what, a, json_object_get(q, "allocated"));
		}
	if ((n = kb_yaml_get(ex, "bound_at")))
		for (size_t i = 0; i < n->n; i++) {
			const char *pod = n->pairs[i].key->str;
			double w;
			if (kb_yaml_double(n->pairs[i].value, &w) < 0) {
				FAIL("bound_at %s: expected a number of seconds", pod);
				continue;
			}
			double t = bound_time(outj, pod);
			if (t < 0)
				FAIL("%s: expected bound at t=%.3f, was never bound", pod, w);
			else if (t < w - 1e-9 || t > w + 1e-9)
				FAIL("%s: expected bound at t=%.3f, got t=%.3f", pod, w, t);
		}
	if ((n = kb_yaml_get(ex, "gpus")))
		for (size_t i = 0; i < n->n; i++) {
			const char *pod = n->pairs[i].key->str;
			json_t *b = find_by(json_object_get(outj, "bindings"), "pod", pod);
			json_t *got = b ? json_object_get(b, "gpus") : NULL;
			char gs[128] = "", ws[128] = "";
			size_t gi, off = 0;
			json_t *g;
			json_array_foreach(got, gi, g)
			{
				off += (size_t)snprintf(gs + off, sizeof(gs) - off, "%s%lld", gi ? "," : "",
							(long long)json_integer_value(g));
			}
			const kb_yaml_node *w = n->pairs[i].value;
			off = 0;
			for (size_t k = 0; w && k < w->n; k++)
				off += (size_t)snprintf(ws + off, sizeof(ws) - off, "%s%s", k ? "," : "",
							kb_yaml_str(w->items[k]));
			if (!b || strcmp(gs, ws) != 0)
				FAIL("%s: expected GPUs [%s], got [%s]%s", pod, ws, gs, b ? "" : " (never bound)");
		}
	/* volumes: claim -> the volume it was bound to, or "provisioned" */
	if ((n = kb_yaml_get(ex, "volumes")))
		for (size_t i = 0; i < n->n; i++) {
			const char *claim = n->pairs[i].key->str;
			const char *vol = kb_yaml_str(n->pairs[i].value);
			json_t *b = find_by(json_object_get(outj, "volume_bindings"), "claim", claim);
			json_t *v = b ? json_object_get(b, "volume") : NULL;
			const char *got = !b ? "(never bound)" : json_is_string(v) ? json_string_value(v)
										 : "provisioned";
			if (!vol || strcmp(got, vol) != 0)
				FAIL("claim %s: expected volume %s, got %s", claim, vol ? vol : "?", got);
		}
	check_pairs(outj, kb_yaml_get(ex, "same_node"), true);
	check_pairs(outj, kb_yaml_get(ex, "different_nodes"), false);
	if ((n = kb_yaml_get(ex, "bound_before")))
		for (size_t i = 0; i < n->n; i++) {
			const char *a = kb_yaml_str(n->items[i]->items[0]);
			const char *b = kb_yaml_str(n->items[i]->items[1]);
			double ta = bound_time(outj, a), tb = bound_time(outj, b);
			if (ta < 0 || (tb >= 0 && ta > tb))
				FAIL("%s (t=%.3f) expected bound no later than %s (t=%.3f)", a, ta, b, tb);
		}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: run_scenario DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	char path[4096];
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "run_scenario: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	char *files[256];
	size_t nfiles = 0;
	struct dirent *de;
	bool has_sconf = false, has_qconf = false;
	while ((de = readdir(d)) && nfiles < 256) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		has_sconf |= strcmp(de->d_name, "scheduler-conf.yaml") == 0;
		has_qconf |= strcmp(de->d_name, "queue-conf.yaml") == 0;
		if (is_special(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		files[nfiles++] = strdup(path);
	}
	closedir(d);
	qsort(files, nfiles, sizeof(char *), cmp_str);

	kb_yaml_file exf;
	kb_err err = {0};
	snprintf(path, sizeof(path), "%s/expect.yaml", dir);
	if (kb_yaml_load_file(path, &exf, &err) < 0 || exf.ndocs != 1) {
		fprintf(stderr, "run_scenario: %s\n", err.msg[0] ? err.msg : "expect.yaml: one document expected");
		return 2;
	}
	const kb_yaml_node *ex = exf.docs[0];
	char sconf[4096], qconf[4096];
	snprintf(sconf, sizeof(sconf), "%s/scheduler-conf.yaml", dir);
	snprintf(qconf, sizeof(qconf), "%s/queue-conf.yaml", dir);
	kb_sim_options o = {
		.files = (const char *const *)files,
		.nfiles = (uint32_t)nfiles,
		.scheduler_conf = has_sconf ? sconf : NULL,
		.queue_conf = has_qconf ? qconf : NULL,
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
		.output = KB_SIM_JSON,
	};
	check_expect_keys(ex);
	int64_t v;
	if (kb_yaml_int(kb_yaml_get(ex, "schedule_period_ms"), &v) == 0)
		o.period_ms = v;
	if (kb_yaml_int(kb_yaml_get(ex, "max_time_ms"), &v) == 0)
		o.max_time_ms = v;

	char *out = NULL, *out2 = NULL;
	int r = simulate(&o, &out, &err);
	const char *want_err = kb_yaml_str(kb_yaml_get(ex, "error"));
	if (want_err) {
		if (r >= 0)
			FAIL("expected an error containing \"%s\", the run succeeded", want_err);
		else if (!strstr(err.msg, want_err))
			FAIL("expected an error containing \"%s\", got \"%s\"", want_err, err.msg);
		else
			printf("error as expected: %s\n", err.msg);
	} else if (r < 0) {
		FAIL("simulation failed: %s", err.msg);
	} else {
		json_error_t je;
		json_t *outj = json_loads(out, 0, &je);
		if (!outj) {
			FAIL("output is not JSON: %s (line %d)", je.text, je.line);
		} else {
			facts f = {0};
			kb_cluster_init(&f.cluster, KB_DEFAULT_SCHEDULER_NAME, KB_DEFAULT_QUEUE);
			size_t cap = 0;
			for (size_t i = 0; i < nfiles; i++)
				if (kb_manifests_load(&f.cluster, files[i], &f.later, &err) < 0)
					FAIL("loading facts: %s", err.msg);
			cap = f.cluster.pods.slots.n + f.later.n + 1;
			f.pods = calloc(cap, sizeof(pod_fact));
			for (size_t i = 0; i < f.cluster.pods.slots.n; i++)
				if (f.cluster.pods.slots.v[i].obj)
					add_pod(&f, f.cluster.pods.slots.v[i].obj);
			for (size_t i = 0; i < f.later.n; i++)
				add_pod(&f, f.later.v[i]);
			check_invariants(&f, outj);
			check_expect(ex, outj);
			for (size_t i = 0; i < f.npods; i++)
				free((char *)f.pods[i].group);
			free(f.pods);
			for (size_t i = 0; i < f.later.n; i++)
				kb_object_free(f.later.v[i]);
			KB_VEC_RELEASE(&f.later);
			kb_cluster_release(&f.cluster);
			json_decref(outj);
		}
		/* Determinism: a second run prints the same bytes. */
		if (simulate(&o, &out2, &err) < 0 || strcmp(out, out2) != 0)
			FAIL("a second run printed different output");
	}
	const char *desc = kb_yaml_str(kb_yaml_get(ex, "description"));
	printf("%s: %s%s%s\n", failures ? "FAILED" : "ok", dir, desc ? " - " : "", desc ? desc : "");
	if (failures && out)
		fprintf(stderr, "--- simulator output ---\n%s", out);
	free(out);
	free(out2);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	kb_yaml_file_release(&exf);
	return failures ? 1 : 0;
}

/* decode_pod_containers.c - what a Pod's containers ask for (see decode.h):
 * the effective request and the host ports.
 *
 * A container's request of a resource is its request, or its limit when it
 * names a limit and no request. The pod's effective request is, as k8s'
 * resource helpers compute it,
 *   max(sum of containers + sidecars,
 *       each init container + the sidecars started before it) + overhead
 * (sidecars are init containers with restartPolicy Always; without any this
 * is max(sum of containers, max of init containers)), with pods = 1.
 * Host ports are read from the containers only, not the init containers.
 * Names past the slots (api/resource.h) follow the same rule in a
 * kb_res_spill and end in po->spec.spill. volcano's vGPU asks are read per
 * container (vgpu_of): they are per vGPU, not a sum.
 */
#include "cache/decode.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* a += b; false on overflow (a is then unspecified). */
static bool res_add_checked(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (__builtin_add_overflow(a->q[i], b->q[i], &a->q[i]))
			return false;
	return true;
}

/* A request: the vector of names with a slot, and the spilled ones
 * (api/resource.h). */
typedef struct request {
	kb_res res;
	kb_res_spill spill;
} request;

/* a += b, both parts. An overflow or too many spilled names fails naming
 * `at` and `path`. */
static int req_add(dec_ctx *d, request *a, const request *b, const kb_yaml_node *at,
		   const char *path)
{
	if (!res_add_checked(&a->res, &b->res))
		return dec_fail(d, -EINVAL, at, path, "requests too large in total");
	int r = kb_res_spill_add(&a->spill, &b->spill);
	if (r == -ERANGE)
		return dec_fail(d, -EINVAL, at, path, "requests too large in total");
	if (r < 0)
		return dec_fail(d, -ENOSPC, at, path,
				"the pod asks for more than %d resource names without a slot",
				KB_RES_SPILL_MAX);
	return 0;
}

/* a = max(a, b), both parts. */
static int req_max(dec_ctx *d, request *a, const request *b, const kb_yaml_node *at,
		   const char *path)
{
	kb_res_max(&a->res, &b->res);
	if (kb_res_spill_max(&a->spill, &b->spill) < 0)
		return dec_fail(d, -ENOSPC, at, path,
				"the pod asks for more than %d resource names without a slot",
				KB_RES_SPILL_MAX);
	return 0;
}

/* A container's resources: requests, and limits for resources without a
 * request, into *ret_req. c is the container's mapping. */
static int dec_container_req(dec_ctx *d, const kb_yaml_node *c, const char *path, request *ret_req)
{
	const kb_yaml_node *res;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.resources", path);
	int r = dec_map(d, kb_yaml_get(c, "resources"), sub, &res);
	if (r < 0)
		return r;
	request req = {.spill.n = 0}, lim = {.spill.n = 0};
	uint32_t rmask, lmask;
	dec_path(sub, "%s.resources.requests", path);
	if ((r = dec_reslist(d, kb_yaml_get(res, "requests"), sub, &req.res, &rmask,
			     &req.spill)) < 0)
		return r;
	dec_path(sub, "%s.resources.limits", path);
	if ((r = dec_reslist(d, kb_yaml_get(res, "limits"), sub, &lim.res, &lmask, &lim.spill)) <
	    0)
		return r;
	for (int i = 0; i < KB_RES_MAX; i++)
		if ((lmask & (1u << i)) && !(rmask & (1u << i)))
			req.res.q[i] = lim.res.q[i];
	for (uint32_t i = 0; i < lim.spill.n; i++) {
		bool asked = false;
		for (uint32_t j = 0; j < req.spill.n && !asked; j++)
			asked = req.spill.e[j].known == lim.spill.e[i].known;
		if (!asked && kb_res_spill_set(&req.spill, lim.spill.e[i].known,
					       lim.spill.e[i].milli) < 0)
			return dec_fail(d, -ENOSPC, res, sub,
					"the container asks for more than %d resource names "
					"without a slot",
					KB_RES_SPILL_MAX);
	}
	*ret_req = req;
	return 0;
}

/* Host ports of all containers, appended to v[0..cap) as they come. */
typedef struct host_ports {
	kb_host_port *v;
	uint32_t n, cap;
} host_ports;

/* One item of a container's ports: a host port when hostPort is set and
 * not 0. */
static int dec_host_port(dec_ctx *d, const kb_yaml_node *p, const char *path, size_t i, void *ctx)
{
	host_ports *hp = ctx;
	char f[DEC_PATH_LEN];
	dec_path(f, "%s.hostPort", path);
	int64_t port = 0;
	int r = dec_int(d, kb_yaml_get(p, "hostPort"), f, 0, 65535, &port, NULL);
	if (r < 0 || port == 0)
		return r;
	if (hp->n >= hp->cap)
		return dec_fail(d, -EINVAL, p, f, "too many host ports (at most %d)",
				KB_OBJ_LIST_MAX);
	kb_host_port *h = &hp->v[hp->n++];
	h->port = (uint16_t)port;
	dec_path(f, "%s.protocol", path);
	const kb_yaml_node *pr = kb_yaml_get(p, "protocol");
	if (kb_yaml_is_null(pr) || dec_scalar_is(pr, "TCP"))
		h->proto = KB_PROTO_TCP;
	else if (dec_scalar_is(pr, "UDP"))
		h->proto = KB_PROTO_UDP;
	else if (dec_scalar_is(pr, "SCTP"))
		h->proto = KB_PROTO_SCTP;
	else if (dec_is_scalar(pr))
		return dec_fail(d, -EINVAL, pr, f,
				"unknown protocol \"%.*s\" (want TCP, UDP or SCTP)", DEC_QUOTE_MAX,
				pr->str);
	else
		return dec_fail(d, -EINVAL, pr, f, "expected a string, got %s",
				kb_yaml_kind_name(pr));
	dec_path(f, "%s.hostIP", path);
	if ((r = dec_str(d, kb_yaml_get(p, "hostIP"), f, &h->ip)) < 0)
		return r;
	if (!h->ip)
		h->ip = "";
	return 0;
}

/* What the containers add up to so far. */
typedef struct containers {
	request sum;
	host_ports ports;
	kb_pod_spec *spec; /* its vgpu_* fields (vgpu_of) */
} containers;

/* A container's quantity of slot name `name` in whole units, 0 without. */
static int32_t whole(const dec_ctx *d, const request *one, const char *name)
{
	int i = kb_resnames_find(d->rn, name);
	int64_t q = i >= 0 ? one->res.q[i] / 1000 : 0;
	return q > INT32_MAX ? INT32_MAX : (int32_t)q;
}

/* volcano's vGPU asks of one container (plugins/vgpu.h), as volcano's
 * scheduler reads them: a container asking vgpu-number or vgpu-memory
 * asks for vGPUs (1 when it names only memory); without vgpu-memory, each
 * takes vgpu-memory-percentage of its card, the whole card when neither is
 * given. The first such container's asks are kept; the rest are counted. */
static void vgpu_of(const dec_ctx *d, const request *one, kb_pod_spec *ps)
{
	int64_t extended = 0; /* most containers ask for cpu and memory only */
	for (int i = KB_RES_NFIXED; i < KB_RES_MAX; i++)
		extended |= one->res.q[i];
	if (extended == 0)
		return;
	int32_t number = whole(d, one, KB_RES_VGPU_NUMBER), mem = whole(d, one, KB_RES_VGPU_MEMORY);
	if (number == 0 && mem == 0)
		return;
	if (ps->vgpu_containers++ > 0)
		return;
	int32_t pct = whole(d, one, KB_RES_VGPU_MEMPCT);
	ps->vgpu_number = number > 0 ? number : 1;
	ps->vgpu_mem = mem;
	ps->vgpu_pct = mem > 0 ? 0 : pct > 0 ? pct : 100;
	ps->vgpu_cores = whole(d, one, KB_RES_VGPU_CORES);
}

/* One item of spec.containers: its request added to the sum, its host
 * ports appended. */
static int dec_container(dec_ctx *d, const kb_yaml_node *c, const char *path, size_t i, void *ctx)
{
	containers *cs = ctx;
	request one;
	int r = dec_container_req(d, c, path, &one);
	if (r < 0)
		return r;
	const kb_yaml_node *seq;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.ports", path);
	if ((r = dec_seq(d, kb_yaml_get(c, "ports"), sub, &seq)) < 0)
		return r;
	if ((r = dec_each_map(d, seq, sub, DEC_NULL_ITEM_SKIPPED, dec_host_port, &cs->ports)) < 0)
		return r;
	vgpu_of(d, &one, cs->spec);
	return req_add(d, &cs->sum, &one, c, path);
}

/* What the init containers need so far: the sidecars' sum, and the largest
 * need at any init container's start. */
typedef struct init_containers {
	request sidecars, peak;
} init_containers;

/* One item of spec.initContainers. */
static int dec_init_container(dec_ctx *d, const kb_yaml_node *c, const char *path, size_t i,
			      void *ctx)
{
	init_containers *ic = ctx;
	request one;
	int r = dec_container_req(d, c, path, &one);
	if (r < 0)
		return r;
	if (dec_scalar_is(kb_yaml_get(c, "restartPolicy"), "Always")) {
		if ((r = req_add(d, &ic->sidecars, &one, c, path)) < 0)
			return r;
		return req_max(d, &ic->peak, &ic->sidecars, c, path);
	}
	if ((r = req_add(d, &one, &ic->sidecars, c, path)) < 0)
		return r;
	return req_max(d, &ic->peak, &one, c, path);
}

/* Room for the host ports of every container: counted first so the array
 * is allocated once (at most KB_OBJ_LIST_MAX). */
static int alloc_host_ports(dec_ctx *d, const kb_yaml_node *cs, host_ports *ret)
{
	size_t max = 0;
	for (size_t i = 0; cs && i < cs->n; i++) {
		const kb_yaml_node *ps = kb_yaml_get(cs->items[i], "ports");
		if (ps && ps->kind == KB_YAML_SEQ)
			max += ps->n;
	}
	if (max > KB_OBJ_LIST_MAX)
		max = KB_OBJ_LIST_MAX;
	kb_host_port *v = NULL;
	if (max && !(v = kb_arena_calloc(d->a, max, sizeof(*v))))
		return dec_nomem(d);
	*ret = (host_ports){.v = v, .n = 0, .cap = (uint32_t)max};
	return 0;
}

int dec_pod_containers(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po)
{
	const kb_yaml_node *cs, *ics;
	int r;
	if ((r = dec_seq(d, kb_yaml_get(spec, "containers"), "spec.containers", &cs)) < 0 ||
	    (r = dec_seq(d, kb_yaml_get(spec, "initContainers"), "spec.initContainers", &ics)) <
		    0)
		return r;
	size_t nc = cs ? cs->n : 0, ni = ics ? ics->n : 0;
	if (nc + ni > KB_OBJ_LIST_MAX)
		return dec_fail(d, -EINVAL, cs, "spec.containers",
				"too many containers and init containers (%zu, at most %d)",
				nc + ni, KB_OBJ_LIST_MAX);

	containers c = {.sum = {.res = {{0}}, .spill.n = 0}, .spec = &po->spec};
	if ((r = alloc_host_ports(d, cs, &c.ports)) < 0)
		return r;
	r = dec_each_map(d, cs, "spec.containers", DEC_NULL_ITEM_FAILS, dec_container, &c);
	if (r < 0)
		return r;
	po->spec.host_ports = c.ports.n ? c.ports.v : NULL;
	po->spec.nhost_ports = c.ports.n;

	init_containers ic = {.sidecars = {.res = {{0}}, .spill.n = 0},
			      .peak = {.res = {{0}}, .spill.n = 0}};
	r = dec_each_map(d, ics, "spec.initContainers", DEC_NULL_ITEM_FAILS, dec_init_container,
			 &ic);
	if (r < 0)
		return r;
	request sum = c.sum;
	if ((r = req_add(d, &sum, &ic.sidecars, ics, "spec.initContainers")) < 0 ||
	    (r = req_max(d, &sum, &ic.peak, ics, "spec.initContainers")) < 0)
		return r;

	request overhead = {.spill.n = 0};
	uint32_t omask;
	const kb_yaml_node *on = kb_yaml_get(spec, "overhead");
	if ((r = dec_reslist(d, on, "spec.overhead", &overhead.res, &omask, &overhead.spill)) <
		    0 ||
	    (r = req_add(d, &sum, &overhead, on, "spec.overhead")) < 0)
		return r;
	sum.res.q[KB_RES_PODS] = 1000;
	po->req = sum.res;
	/* Spilled asks of 0 ask for nothing: left out, as a 0 in the vector. */
	uint32_t n = 0;
	for (uint32_t i = 0; i < sum.spill.n; i++)
		if (sum.spill.e[i].milli > 0)
			sum.spill.e[n++] = sum.spill.e[i];
	if (n > 0) {
		kb_res_extra *v = kb_arena_calloc(d->a, n, sizeof(*v));
		if (!v)
			return dec_nomem(d);
		memcpy(v, sum.spill.e, n * sizeof(*v));
		po->spec.spill = v;
	}
	po->spec.nspill = n;
	return 0;
}

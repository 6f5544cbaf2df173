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
 */
#include "cache/decode.h"

#include <errno.h>

/* a += b; false on overflow (a is then unspecified). */
static bool res_add_checked(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (__builtin_add_overflow(a->q[i], b->q[i], &a->q[i]))
			return false;
	return true;
}

/* A container's resources: requests, and limits for resources without a
 * request, into *ret_req. c is the container's mapping. */
static int dec_container_req(dec_ctx *d, const kb_yaml_node *c, const char *path, kb_res *ret_req)
{
	const kb_yaml_node *res;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.resources", path);
	int r = dec_map(d, kb_yaml_get(c, "resources"), sub, &res);
	if (r < 0)
		return r;
	kb_res req, lim;
	uint32_t rmask, lmask;
	dec_path(sub, "%s.resources.requests", path);
	if ((r = dec_reslist(d, kb_yaml_get(res, "requests"), sub, &req, &rmask)) < 0)
		return r;
	dec_path(sub, "%s.resources.limits", path);
	if ((r = dec_reslist(d, kb_yaml_get(res, "limits"), sub, &lim, &lmask)) < 0)
		return r;
	for (int i = 0; i < KB_RES_MAX; i++)
		if ((lmask & (1u << i)) && !(rmask & (1u << i)))
			req.q[i] = lim.q[i];
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
	kb_res sum;
	host_ports ports;
} containers;

/* One item of spec.containers: its request added to the sum, its host
 * ports appended. */
static int dec_container(dec_ctx *d, const kb_yaml_node *c, const char *path, size_t i, void *ctx)
{
	containers *cs = ctx;
	kb_res one;
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
	if (!res_add_checked(&cs->sum, &one))
		return dec_fail(d, -EINVAL, c, path, "requests too large in total");
	return 0;
}

/* What the init containers need so far: the sidecars' sum, and the largest
 * need at any init container's start. */
typedef struct init_containers {
	kb_res sidecars, peak;
} init_containers;

/* One item of spec.initContainers. */
static int dec_init_container(dec_ctx *d, const kb_yaml_node *c, const char *path, size_t i,
			      void *ctx)
{
	init_containers *ic = ctx;
	kb_res one;
	int r = dec_container_req(d, c, path, &one);
	if (r < 0)
		return r;
	if (dec_scalar_is(kb_yaml_get(c, "restartPolicy"), "Always")) {
		if (!res_add_checked(&ic->sidecars, &one))
			return dec_fail(d, -EINVAL, c, path, "requests too large in total");
		kb_res_max(&ic->peak, &ic->sidecars);
	} else {
		if (!res_add_checked(&one, &ic->sidecars))
			return dec_fail(d, -EINVAL, c, path, "requests too large in total");
		kb_res_max(&ic->peak, &one);
	}
	return 0;
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

	containers c = {.sum = {{0}}};
	if ((r = alloc_host_ports(d, cs, &c.ports)) < 0)
		return r;
	r = dec_each_map(d, cs, "spec.containers", DEC_NULL_ITEM_FAILS, dec_container, &c);
	if (r < 0)
		return r;
	po->spec.host_ports = c.ports.n ? c.ports.v : NULL;
	po->spec.nhost_ports = c.ports.n;

	init_containers ic = {.sidecars = {{0}}, .peak = {{0}}};
	r = dec_each_map(d, ics, "spec.initContainers", DEC_NULL_ITEM_FAILS, dec_init_container,
			 &ic);
	if (r < 0)
		return r;
	kb_res sum = c.sum;
	if (!res_add_checked(&sum, &ic.sidecars))
		return dec_fail(d, -EINVAL, ics, "spec.initContainers",
				"requests too large in total");
	kb_res_max(&sum, &ic.peak);

	kb_res overhead;
	uint32_t omask;
	const kb_yaml_node *on = kb_yaml_get(spec, "overhead");
	if ((r = dec_reslist(d, on, "spec.overhead", &overhead, &omask)) < 0)
		return r;
	if (!res_add_checked(&sum, &overhead))
		return dec_fail(d, -EINVAL, on, "spec.overhead", "requests too large in total");
	sum.q[KB_RES_PODS] = 1000;
	po->req = sum;
	return 0;
}

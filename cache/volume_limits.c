/* volume_limits.c - the nodes' CSI volume limits for a session (see
 * volume_limits.h). */
#include "cache/volume_limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for "driver/handle" (both API strings, each far shorter). */
#define VOL_NAME_MAX 1024

bool kb_csi_pass_open(kb_csi_pass *p, const kb_cluster *c, kb_arena *a)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->a = a;
	kb_strmap_init(&p->drivers);
	kb_strmap_init(&p->vols);
	for (size_t i = 0; i < c->csi_nodes.slots.n; i++) {
		const kb_object *o = c->csi_nodes.slots.v[i].obj;
		for (uint32_t k = 0; o && k < o->u.csi_node.ndrivers; k++) {
			const kb_csi_driver_limit *dl = &o->u.csi_node.drivers[k];
			int64_t id;
			if (dl->count < 0 || kb_strmap_get(&p->drivers, dl->name, &id))
				continue;
			/* Keyed by the name in the arena: the CSINode may go before the
			 * snapshot does. */
			const char *name = kb_arena_strdup(a, dl->name);
			if (!name || KB_VEC_PUSH(&p->driver_names, name) < 0 ||
			    kb_strmap_put(&p->drivers, name, (int64_t)p->driver_names.n - 1) < 0)
				p->nomem = true;
		}
	}
	return p->driver_names.n > 0;
}

/* The volume claim `claim` of a pod in namespace ns counts as: its driver's
 * index (or -1 when it counts nothing, or its driver is limited nowhere),
 * and its name "driver/handle" in buf. */
static int32_t claim_volume(const kb_csi_pass *p, const char *ns, const char *claim, char *buf,
			    size_t size)
{
	const kb_cluster *c = p->c;
	char key[512];
	int len = snprintf(key, sizeof(key), "%s/%s", ns, claim);
	const kb_slot *csl = len > 0 && (size_t)len < sizeof(key) ? kb_cluster_slot(c, KB_KIND_PVC, key)
								  : NULL;
	if (!csl)
		return -1;
	const kb_pvc_obj *pvc = &csl->obj->u.pvc;
	/* The volume the claim names (the simulator's PV controller binds by
	 * override; "" is a volume it provisioned, with no object). */
	const char *pvname = csl->overridden && csl->status == KB_TASK_BOUND ? csl->node
										 : pvc->volume_name;
	const kb_slot *vsl = pvname && *pvname ? kb_cluster_slot(c, KB_KIND_PV, pvname) : NULL;
	const char *driver, *handle, *sep = "/";
	if (vsl) {
		driver = vsl->obj->u.pv.csi_driver;
		handle = vsl->obj->u.pv.csi_handle;
		if (!driver)
			return -1; /* not a CSI volume */
	} else {
		/* Not bound, or its volume is gone: the class's provisioner, as a
		 * volume of its own (a prefix no handle has keeps it apart). */
		const kb_slot *scl = *pvc->class_name
					     ? kb_cluster_slot(c, KB_KIND_STORAGE_CLASS, pvc->class_name)
					     : NULL;
		if (!scl)
			return -1;
		driver = scl->obj->u.storage_class.provisioner;
		handle = key;
		sep = "/\x1f" "claim\x1f";
	}
	int64_t d;
	if (!kb_strmap_get(&p->drivers, driver, &d))
		return -1;
	len = snprintf(buf, size, "%s%s%s", driver, sep, handle);
	return len > 0 && (size_t)len < size ? (int32_t)d : -1;
}

uint32_t kb_csi_pod_volumes(kb_csi_pass *p, const kb_object *pod, const uint32_t **ret)
{
	const kb_pod_obj *po = &pod->u.pod;
	*ret = NULL;
	if (p->driver_names.n == 0 || po->nclaims == 0)
		return 0;
	uint32_t *ids = NULL, n = 0;
	for (uint32_t i = 0; i < po->nclaims; i++) {
		char name[VOL_NAME_MAX];
		int32_t d = claim_volume(p, pod->meta.ns, po->claims[i].name, name, sizeof(name));
		if (d < 0)
			continue;
		int64_t id;
		if (!kb_strmap_get(&p->vols, name, &id)) {
			const char *kept = kb_arena_strdup(p->a, name);
			id = (int64_t)p->vol_driver.n;
			if (!kept || KB_VEC_PUSH(&p->vol_driver, (uint32_t)d) < 0 ||
			    kb_strmap_put(&p->vols, kept, id) < 0) {
				p->nomem = true;
				return 0;
			}
		}
		if (!ids && !(ids = kb_arena_calloc(p->a, po->nclaims, sizeof(*ids)))) {
			p->nomem = true;
			return 0;
		}
		bool dup = false;
		for (uint32_t k = 0; k < n && !dup; k++)
			dup = ids[k] == (uint32_t)id;
		if (!dup)
			ids[n++] = (uint32_t)id;
	}
	*ret = ids;
	return n;
}

/* A volume in use on node ni: (ni, id) pairs of the volumes pending pods
 * use, to be sorted into each node's vols. */
typedef struct node_vol {
	uint32_t node, vol;
} node_vol;

static int cmp_node_vol(const void *a, const void *b)
{
	const node_vol *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->vol < y->vol ? -1 : x->vol > y->vol;
}

/* The node pass's state. */
typedef struct in_use {
	kb_csi_pass *p;
	kb_node_csi *nc;
	int64_t **attached;  /* writable views of nc[*].attached */
	kb_strmap seen;      /* "node\x1fdriver/handle" -> 1 */
	KB_VEC(node_vol) known;
} in_use;

/* Volume `name` of driver d is in use on node ni: counted once. */
static void count_in_use(in_use *u, uint32_t ni, int32_t d, const char *name)
{
	const kb_node_csi *nc = &u->nc[ni];
	uint32_t L = 0;
	while (L < nc->nlimits && nc->driver[L] != (uint32_t)d)
		L++;
	if (L == nc->nlimits)
		return;
	char *key = kb_arena_printf(u->p->a, "%u\x1f%s", ni, name);
	int64_t one;
	if (!key) {
		u->p->nomem = true;
		return;
	}
	if (kb_strmap_get(&u->seen, key, &one))
		return;
	if (kb_strmap_put(&u->seen, key, 1) < 0) {
		u->p->nomem = true;
		return;
	}
	u->attached[ni][L]++;
	int64_t id;
	if (kb_strmap_get(&u->p->vols, name, &id) &&
	    KB_VEC_PUSH(&u->known, ((node_vol){.node = ni, .vol = (uint32_t)id})) < 0)
		u->p->nomem = true;
}

/* Each node's limits, from its CSINode (nlimits 0 without one). */
static int node_limits(in_use *u, const kb_snapshot *s)
{
	kb_csi_pass *p = u->p;
	for (uint32_t ni = 0; ni < s->nnodes; ni++) {
		const kb_slot *sl = kb_cluster_slot(p->c, KB_KIND_CSI_NODE, s->nodes[ni].name);
		const kb_csi_node_obj *cn = sl ? &sl->obj->u.csi_node : NULL;
		uint32_t n = 0;
		for (uint32_t k = 0; cn && k < cn->ndrivers; k++)
			n += cn->drivers[k].count >= 0;
		if (n == 0)
			continue;
		uint32_t *drv = kb_arena_calloc(p->a, n, sizeof(*drv));
		int64_t *lim = kb_arena_calloc(p->a, n, sizeof(*lim));
		int64_t *att = kb_arena_calloc(p->a, n, sizeof(*att));
		if (!drv || !lim || !att)
			return -ENOMEM;
		n = 0;
		for (uint32_t k = 0; k < cn->ndrivers; k++) {
			int64_t d;
			if (cn->drivers[k].count < 0 ||
			    !kb_strmap_get(&p->drivers, cn->drivers[k].name, &d))
				continue;
			drv[n] = (uint32_t)d;
			lim[n++] = cn->drivers[k].count;
		}
		u->nc[ni] = (kb_node_csi){.nlimits = n, .driver = drv, .limit = lim, .attached = att};
		u->attached[ni] = att;
	}
	return 0;
}

/* What the pods on limited nodes and the VolumeAttachments use. */
static void count_nodes(in_use *u, const kb_snapshot *s)
{
	kb_csi_pass *p = u->p;
	const kb_cluster *c = p->c;
	char name[VOL_NAME_MAX];
	for (uint32_t ti = 0; ti < s->ntasks && !p->nomem; ti++) {
		const kb_task *t = &s->tasks[ti];
		if (t->node < 0 || !kb_task_status_on_node(t->status) || u->nc[t->node].nlimits == 0)
			continue;
		const kb_object *pod = c->pods.slots.v[t->cache_slot].obj;
		for (uint32_t k = 0; pod && k < pod->u.pod.nclaims; k++) {
			int32_t d = claim_volume(p, pod->meta.ns, pod->u.pod.claims[k].name, name,
						 sizeof(name));
			if (d >= 0)
				count_in_use(u, (uint32_t)t->node, d, name);
		}
	}
	if (c->volume_attachments.slots.n == 0)
		return;
	kb_strmap node_ix;
	kb_strmap_init(&node_ix);
	for (uint32_t ni = 0; ni < s->nnodes; ni++)
		if (u->nc[ni].nlimits > 0 && kb_strmap_put(&node_ix, s->nodes[ni].name, ni) < 0)
			p->nomem = true;
	for (size_t i = 0; i < c->volume_attachments.slots.n && !p->nomem; i++) {
		const kb_object *o = c->volume_attachments.slots.v[i].obj;
		const kb_volume_attachment_obj *va = o ? &o->u.volume_attachment : NULL;
		int64_t ni, d;
		if (!va || !va->attacher || !va->node_name || !va->pv_name ||
		    !kb_strmap_get(&node_ix, va->node_name, &ni) ||
		    !kb_strmap_get(&p->drivers, va->attacher, &d))
			continue;
		const kb_slot *vsl = kb_cluster_slot(c, KB_KIND_PV, va->pv_name);
		const char *handle = vsl ? vsl->obj->u.pv.csi_handle : NULL;
		int len = handle ? snprintf(name, sizeof(name), "%s/%s", va->attacher, handle) : -1;
		if (len > 0 && (size_t)len < sizeof(name))
			count_in_use(u, (uint32_t)ni, (int32_t)d, name);
	}
	kb_strmap_release(&node_ix);
}

/* The known (node, volume) pairs, sorted, into each node's vols. */
static int node_vols(in_use *u)
{
	size_t n = u->known.n;
	if (n == 0)
		return 0;
	uint32_t *all = kb_arena_calloc(u->p->a, n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	qsort(u->known.v, n, sizeof(node_vol), cmp_node_vol);
	for (size_t i = 0; i < n; i++)
		all[i] = u->known.v[i].vol;
	for (size_t i = 0; i < n;) {
		uint32_t ni = u->known.v[i].node;
		size_t k = i;
		while (k < n && u->known.v[k].node == ni)
			k++;
		u->nc[ni].vols = all + i;
		u->nc[ni].nvols = (uint32_t)(k - i);
		i = k;
	}
	return 0;
}

static int node_pass(kb_csi_pass *p, kb_snapshot *s)
{
	in_use u = {.p = p};
	u.nc = kb_arena_calloc(p->a, s->nnodes + 1, sizeof(*u.nc));
	u.attached = calloc(s->nnodes + 1, sizeof(*u.attached));
	kb_strmap_init(&u.seen);
	int r = !u.nc || !u.attached ? -ENOMEM : node_limits(&u, s);
	if (r == 0) {
		count_nodes(&u, s);
		r = p->nomem ? -ENOMEM : node_vols(&u);
	}
	uint32_t *vd = NULL;
	const char **dn = NULL;
	if (r == 0 && (!(vd = kb_arena_calloc(p->a, p->vol_driver.n, sizeof(*vd))) ||
		       !(dn = kb_arena_calloc(p->a, p->driver_names.n, sizeof(*dn)))))
		r = -ENOMEM;
	if (r == 0) {
		memcpy(vd, p->vol_driver.v, p->vol_driver.n * sizeof(*vd));
		memcpy(dn, p->driver_names.v, p->driver_names.n * sizeof(*dn));
		s->node_csi = u.nc;
		s->csi_vol_driver = vd;
		s->ncsi_vols = (uint32_t)p->vol_driver.n;
		s->csi_drivers = dn;
		s->ncsi_drivers = (uint32_t)p->driver_names.n;
	}
	free(u.attached);
	kb_strmap_release(&u.seen);
	KB_VEC_RELEASE(&u.known);
	return r;
}

int kb_csi_pass_close(kb_csi_pass *p, kb_snapshot *s)
{
	int r = p->nomem ? -ENOMEM : 0;
	if (r == 0 && p->vol_driver.n > 0)
		r = node_pass(p, s);
	kb_strmap_release(&p->drivers);
	kb_strmap_release(&p->vols);
	KB_VEC_RELEASE(&p->driver_names);
	KB_VEC_RELEASE(&p->vol_driver);
	return r;
}

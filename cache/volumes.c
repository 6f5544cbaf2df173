/* volumes.c - pending pods' claims as a session sees them (see volumes.h). */
#include "cache/volumes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/volume_limits.h"

#define NO_PROVISIONER "kubernetes.io/no-provisioner"

/* The claim a volume's spec.claimRef names, ours assumed first. */
static const char *pv_claim(const kb_slot *sl)
{
	return sl->overridden ? sl->node : sl->obj->u.pv.claim_key;
}

/* The volumes pre-bound to claims, by claim key: built once per pass,
 * when a claim first needs it. */
typedef struct prebound_index {
	kb_strmap by_claim;
	bool built, nomem;
} prebound_index;

/* The ReadWriteOncePod claims of a pass: those pods on nodes use (built on
 * the first such claim a pending pod has), and those pending pods use, each
 * with its index into the snapshot's rwop_claims. */
typedef struct rwop_index {
	const kb_snapshot *s;
	kb_strmap in_use;  /* claim key -> the task of the pod on a node using it */
	kb_strmap pending; /* claim key -> index */
	KB_VEC(const char *) keys;
	bool built, nomem;
} rwop_index;

/* One pod's needs, built up claim by claim. */
typedef struct needs {
	kb_arena *a;
	prebound_index *index;
	rwop_index *rwop;
	kb_task_volumes v;
	kb_volume_affinity *aff; /* room for one per claim */
	kb_claim_need *bind;     /* room for one per claim */
	uint32_t *rwop_ids;      /* room for one per claim */
	uint32_t *holders;       /* room for one per claim */
	bool nomem;
} needs;

__attribute__((format(printf, 2, 3))) static const char *say(needs *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *s = kb_arena_vprintf(n->a, fmt, ap);
	va_end(ap);
	return s ? s : "waiting for its volumes (out of memory for the reason)";
}

static void add_affinity(needs *n, const kb_object *pv)
{
	if (pv->u.pv.nterms == 0)
		return;
	n->aff[n->v.naffinities++] = (kb_volume_affinity){
		.pv = pv->meta.name, .terms = pv->u.pv.terms, .nterms = pv->u.pv.nterms};
}

/* The volume pre-bound to claim `key` (ours assumed or the API's), or NULL.
 * The index (claim key -> volume slot, for every volume with a claimRef
 * and not being deleted) is built on the first call of a pass. */
static const kb_object *prebound_pv(const kb_cluster *c, needs *n, const char *key)
{
	if (!n->index->built) {
		n->index->built = true;
		for (size_t i = 0; i < c->pvs.slots.n; i++) {
			const kb_slot *sl = &c->pvs.slots.v[i];
			const char *ck = sl->obj && !sl->obj->meta.deleting ? pv_claim(sl) : NULL;
			if (ck && kb_strmap_put(&n->index->by_claim, ck, (int64_t)i) < 0)
				n->index->nomem = true;
		}
	}
	int64_t i;
	if (!kb_strmap_get(&n->index->by_claim, key, &i))
		return NULL;
	return c->pvs.slots.v[i].obj;
}

/* When claim need's provisioner publishes storage capacity (its CSIDriver
 * says storageCapacity: true), the node selectors of the CSIStorageCapacity
 * objects of its class big enough for it (kube-scheduler's
 * hasEnoughCapacity). O(CSIStorageCapacities). */
static void capacity_for(const kb_cluster *c, needs *n, kb_claim_need *need,
			 const char *provisioner)
{
	const kb_slot *dsl = kb_cluster_slot(c, KB_KIND_CSI_DRIVER, provisioner);
	if (!dsl || !dsl->obj->u.csi_driver.storage_capacity)
		return;
	need->check_capacity = true;
	const kb_store *st = &c->storage_capacities;
	uint32_t k = 0;
	for (size_t i = 0; i < st->slots.n; i++) {
		const kb_object *o = st->slots.v[i].obj;
		k += o && o->u.storage_capacity.has_topology;
	}
	const kb_label_selector **sel = k ? kb_arena_calloc(n->a, k, sizeof(*sel)) : NULL;
	if (k && !sel) {
		n->nomem = true;
		return;
	}
	k = 0;
	for (size_t i = 0; i < st->slots.n; i++) {
		const kb_object *o = st->slots.v[i].obj;
		const kb_storage_capacity_obj *cap = o ? &o->u.storage_capacity : NULL;
		if (cap && cap->has_topology && cap->limit >= need->request &&
		    strcmp(cap->class_name, need->class_name) == 0)
			sel[k++] = &cap->topology;
	}
	need->capacity = sel;
	need->ncapacity = k;
}

/* An unbound claim of a WaitForFirstConsumer class. */
static void delayed_claim(const kb_cluster *c, needs *n, const kb_slot *csl,
			  const kb_storage_class_obj *sc)
{
	const kb_object *o = csl->obj;
	const kb_pvc_obj *pvc = &o->u.pvc;
	const char *selected = csl->overridden && csl->status == KB_TASK_PENDING ? csl->node
										 : pvc->selected_node;
	if (selected) {
		if (n->v.pinned_node && strcmp(n->v.pinned_node, selected) != 0) {
			n->v.wait = say(n,
					"its claims are being provisioned on different nodes "
					"(\"%s\" and \"%s\")",
					n->v.pinned_node, selected);
			return;
		}
		n->v.pinned_node = selected;
		n->v.under_way = say(n, "persistentvolumeclaim \"%s\" is being provisioned on node \"%s\"",
				     o->meta.key, selected);
		return;
	}
	const kb_object *pv = prebound_pv(c, n, o->meta.key);
	if (pv) {
		add_affinity(n, pv);
		n->v.under_way = say(n, "persistentvolumeclaim \"%s\" is being bound to "
					"persistentvolume \"%s\"",
				     o->meta.key, pv->meta.name);
		return;
	}
	kb_claim_need *need = &n->bind[n->v.nto_bind++];
	*need = (kb_claim_need){
		.key = o->meta.key,
		.ns = o->meta.ns,
		.name = o->meta.name,
		.uid = o->meta.uid,
		.resource_version = o->meta.resource_version,
		.class_name = pvc->class_name,
		.request = pvc->request,
		.access_modes = pvc->access_modes,
		.block = pvc->block,
		.selector = pvc->has_selector ? &pvc->selector : NULL,
		.dynamic = strcmp(sc->provisioner, NO_PROVISIONER) != 0,
		.allowed = sc->allowed,
		.nallowed = sc->nallowed,
	};
	if (need->dynamic && need->request > 0)
		capacity_for(c, n, need, sc->provisioner);
}

/* The task of the pod on a node that uses claim pvc_key (ReadWriteOncePod),
 * or -1: the index of such claims is built on the first call of a pass,
 * over the snapshot's tasks on nodes (not finished). */
static int64_t rwop_holder(const kb_cluster *c, rwop_index *x, const char *pvc_key)
{
	if (!x->built) {
		x->built = true;
		for (uint32_t ti = 0; ti < x->s->ntasks; ti++) {
			const kb_task *t = &x->s->tasks[ti];
			if (t->node < 0 || !kb_task_status_on_node(t->status))
				continue;
			const kb_object *o = c->pods.slots.v[t->cache_slot].obj;
			for (uint32_t k = 0; o && k < o->u.pod.nclaims; k++) {
				char key[512];
				int len = snprintf(key, sizeof(key), "%s/%s", o->meta.ns,
						   o->u.pod.claims[k].name);
				const kb_slot *csl = len > 0 && (size_t)len < sizeof(key)
							     ? kb_cluster_slot(c, KB_KIND_PVC, key)
							     : NULL;
				if (csl && (csl->obj->u.pvc.access_modes & KB_ACCESS_RWOP) &&
				    kb_strmap_put(&x->in_use, csl->obj->meta.key, ti) < 0)
					x->nomem = true;
			}
		}
	}
	int64_t ti;
	return kb_strmap_get(&x->in_use, pvc_key, &ti) ? ti : -1;
}

/* A ReadWriteOncePod claim of a pending pod, numbered for the session's
 * one-pod-at-a-time check (scheduler/volumes.c). A pod on a node using it
 * (kube-scheduler's VolumeRestrictions) is its holder: the pending pod
 * fits nowhere while it runs, so preemption may evict it; one already
 * being deleted keeps the pod waiting. */
static void rwop_claim(const kb_cluster *c, needs *n, const kb_object *pvc)
{
	rwop_index *x = n->rwop;
	int64_t holder = rwop_holder(c, x, pvc->meta.key);
	if (holder >= 0 && x->s->tasks[holder].status == KB_TASK_RELEASING) {
		n->v.wait = say(n,
				"node has pod using PersistentVolumeClaim with the same name and "
				"ReadWriteOncePod access mode (persistentvolumeclaim \"%s\", its pod "
				"being deleted)",
				pvc->meta.key);
		return;
	}
	if (holder >= 0)
		n->holders[n->v.nholders++] = (uint32_t)holder;
	int64_t id;
	if (!kb_strmap_get(&x->pending, pvc->meta.key, &id)) {
		id = (int64_t)x->keys.n;
		if (KB_VEC_PUSH(&x->keys, pvc->meta.key) < 0 ||
		    kb_strmap_put(&x->pending, pvc->meta.key, id) < 0) {
			x->nomem = true;
			return;
		}
	}
	n->rwop_ids[n->v.nrwop++] = (uint32_t)id;
}

static void one_claim(const kb_cluster *c, needs *n, const kb_object *pod, const kb_pod_claim *pc)
{
	char key[512];
	int len = snprintf(key, sizeof(key), "%s/%s", pod->meta.ns, pc->name);
	const kb_slot *csl = len > 0 && (size_t)len < sizeof(key) ? kb_cluster_slot(c, KB_KIND_PVC, key) : NULL;
	if (!csl) {
		n->v.wait = pc->ephemeral ? say(n,
						"waiting for ephemeral volume controller to create "
						"the persistentvolumeclaim \"%s\"",
						pc->name)
					  : say(n, "persistentvolumeclaim \"%s\" not found", pc->name);
		return;
	}
	const kb_object *o = csl->obj;
	const kb_pvc_obj *pvc = &o->u.pvc;
	if (pvc->phase == KB_CLAIM_LOST) {
		n->v.wait = say(n,
				"persistentvolumeclaim \"%s\" bound to non-existent persistentvolume "
				"\"%s\"",
				o->meta.name, pvc->volume_name ? pvc->volume_name : "");
		return;
	}
	if (o->meta.undecodable) {
		n->v.wait = say(n,
				"persistentvolumeclaim \"%s\": its latest update could not be decoded",
				o->meta.key);
		return;
	}
	if (o->meta.deleting) {
		n->v.wait = say(n, "persistentvolumeclaim \"%s\" is being deleted", o->meta.name);
		return;
	}
	if (pc->ephemeral && (!pvc->owner_uid || strcmp(pvc->owner_uid, pod->meta.uid) != 0)) {
		n->v.wait = say(n, "PVC %s was not created for pod %s (pod is not owner)", o->meta.key,
				pod->meta.key);
		return;
	}
	if (pvc->access_modes & KB_ACCESS_RWOP) {
		rwop_claim(c, n, o);
		if (n->v.wait)
			return;
	}
	bool sim_bound = csl->overridden && csl->status == KB_TASK_BOUND;
	if (sim_bound || (pvc->volume_name && pvc->bind_completed)) {
		const char *pvname = sim_bound ? csl->node : pvc->volume_name;
		if (!*pvname)
			return; /* provisioned by the simulator: no object, no affinity */
		const kb_slot *vsl = kb_cluster_slot(c, KB_KIND_PV, pvname);
		if (!vsl) {
			n->v.wait = say(n,
					"node(s) unavailable due to one or more pvc(s) bound to "
					"non-existent pv(s) (persistentvolumeclaim \"%s\": "
					"persistentvolume \"%s\")",
					o->meta.key, pvname);
			return;
		}
		add_affinity(n, vsl->obj);
		return;
	}
	const kb_slot *scl = *pvc->class_name ? kb_cluster_slot(c, KB_KIND_STORAGE_CLASS, pvc->class_name) : NULL;
	if (!scl || !scl->obj->u.storage_class.wait_for_first_consumer || pvc->volume_name) {
		/* Immediate binding (no class, an Immediate class, or one that does
		 * not exist, as kube-scheduler reads it), or pre-bound by the user:
		 * the PV controller binds it, or nobody will. */
		if (*pvc->class_name && !scl)
			n->v.wait = say(n,
					"pod has unbound immediate PersistentVolumeClaims "
					"(persistentvolumeclaim \"%s\" names storageclass \"%s\", "
					"which does not exist)",
					o->meta.key, pvc->class_name);
		else
			n->v.wait = say(n,
					"pod has unbound immediate PersistentVolumeClaims "
					"(persistentvolumeclaim \"%s\")",
					o->meta.key);
		return;
	}
	delayed_claim(c, n, csl, &scl->obj->u.storage_class);
}

static int cmp_need(const void *a, const void *b)
{
	const kb_claim_need *x = a, *y = b;
	if (x->request != y->request)
		return x->request < y->request ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The needs of one pending task, or NULL when it has none (every claim
 * bound, no affinity). *ret_nomem on allocation failure. */
static const kb_task_volumes *task_needs(const kb_cluster *c, kb_arena *a, prebound_index *index,
					 rwop_index *rwop, kb_csi_pass *csi, const kb_object *pod,
					 bool *ret_nomem)
{
	const kb_pod_obj *p = &pod->u.pod;
	needs n = {.a = a, .index = index, .rwop = rwop};
	if (p->nclaims > KB_MAX_POD_CLAIMS) {
		kb_task_volumes *v = kb_arena_calloc(a, 1, sizeof(*v));
		if (!v || !(v->wait = kb_arena_printf(a,
						      "its volumes use %u PersistentVolumeClaims, "
						      "more than kube-batchd binds for one pod (%d)",
						      p->nclaims, KB_MAX_POD_CLAIMS)))
			*ret_nomem = true;
		return v;
	}
	n.aff = kb_arena_calloc(a, p->nclaims, sizeof(*n.aff));
	n.bind = kb_arena_calloc(a, p->nclaims, sizeof(*n.bind));
	n.rwop_ids = kb_arena_calloc(a, p->nclaims, sizeof(*n.rwop_ids));
	n.holders = kb_arena_calloc(a, p->nclaims, sizeof(*n.holders));
	if (!n.aff || !n.bind || !n.rwop_ids || !n.holders) {
		*ret_nomem = true;
		return NULL;
	}
	for (uint32_t i = 0; i < p->nclaims && !n.v.wait; i++)
		one_claim(c, &n, pod, &p->claims[i]);
	if (!n.v.wait)
		n.v.ncsi = kb_csi_pod_volumes(csi, pod, &n.v.csi);
	if (n.nomem) {
		*ret_nomem = true;
		return NULL;
	}
	if (!n.v.wait && n.v.naffinities == 0 && n.v.nto_bind == 0 && !n.v.under_way &&
	    !n.v.pinned_node && n.v.nrwop == 0 && n.v.ncsi == 0)
		return NULL;
	qsort(n.bind, n.v.nto_bind, sizeof(*n.bind), cmp_need);
	n.v.affinities = n.aff;
	n.v.to_bind = n.bind;
	n.v.rwop = n.rwop_ids;
	n.v.holders = n.holders;
	n.v.ready = !n.v.wait && n.v.nto_bind == 0 && !n.v.under_way;
	kb_task_volumes *v = kb_arena_alloc(a, sizeof(*v));
	if (!v) {
		*ret_nomem = true;
		return NULL;
	}
	*v = n.v;
	return v;
}

/* The volumes claims may be matched with, into s->pvs. */
static int list_pvs(const kb_cluster *c, kb_snapshot *s, kb_arena *a)
{
	size_t n = 0;
	for (size_t i = 0; i < c->pvs.slots.n; i++)
		n += c->pvs.slots.v[i].obj != NULL;
	if (n == 0)
		return 0;
	kb_pv *v = kb_arena_calloc(a, n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < c->pvs.slots.n; i++) {
		const kb_slot *sl = &c->pvs.slots.v[i];
		const kb_object *o = sl->obj;
		if (!o || o->meta.deleting || pv_claim(sl) || o->u.pv.phase != KB_PV_AVAILABLE)
			continue;
		const kb_pv_obj *pv = &o->u.pv;
		v[n++] = (kb_pv){
			.name = o->meta.name,
			.resource_version = o->meta.resource_version,
			.class_name = pv->class_name,
			.capacity = pv->capacity,
			.access_modes = pv->access_modes,
			.block = pv->block,
			.terms = pv->terms,
			.nterms = pv->nterms,
			.labels = &o->meta.labels,
		};
	}
	s->pvs = v;
	s->npvs = (uint32_t)n;
	return 0;
}

int kb_cluster_volumes(kb_cluster *c, kb_snapshot *s, kb_arena *arena, kb_err *err)
{
	s->task_vol = NULL;
	s->pvs = NULL;
	s->npvs = 0;
	s->rwop_claims = NULL;
	s->nrwop_claims = 0;
	s->node_csi = NULL;
	s->csi_vol_driver = NULL;
	s->ncsi_vols = 0;
	s->csi_drivers = NULL;
	s->ncsi_drivers = 0;
	if (c->claim_pods == 0)
		return 0;
	const kb_task_volumes **tv = kb_arena_calloc(arena, s->ntasks + 1, sizeof(*tv));
	if (!tv || list_pvs(c, s, arena) < 0)
		return kb_err_set(err, -ENOMEM, "working out the pods' volumes: out of memory");
	bool any = false, nomem = false;
	prebound_index index = {0};
	kb_strmap_init(&index.by_claim);
	rwop_index rwop = {.s = s};
	kb_strmap_init(&rwop.in_use);
	kb_strmap_init(&rwop.pending);
	kb_csi_pass csi;
	kb_csi_pass_open(&csi, c, arena);
	for (uint32_t ji = 0; ji < s->njobs && !nomem; ji++) {
		const kb_job *j = &s->jobs[ji];
		if (j->nstatus[KB_TASK_PENDING] == 0)
			continue;
		for (uint32_t k = 0; k < j->ntasks && !nomem; k++) {
			uint32_t ti = s->job_tasks[j->first_task + k];
			const kb_task *t = &s->tasks[ti];
			if (t->foreign || t->status != KB_TASK_PENDING)
				continue;
			const kb_object *pod = c->pods.slots.v[t->cache_slot].obj;
			if (pod->u.pod.nclaims == 0)
				continue;
			tv[ti] = task_needs(c, arena, &index, &rwop, &csi, pod, &nomem);
			any |= tv[ti] != NULL;
		}
	}
	kb_strmap_release(&index.by_claim);
	kb_strmap_release(&rwop.in_use);
	kb_strmap_release(&rwop.pending);
	nomem |= kb_csi_pass_close(&csi, s) < 0;
	const char **keys = NULL;
	if (!nomem && rwop.keys.n > 0 &&
	    (keys = kb_arena_calloc(arena, rwop.keys.n, sizeof(*keys))) != NULL)
		memcpy(keys, rwop.keys.v, rwop.keys.n * sizeof(*keys));
	bool lost = rwop.keys.n > 0 && !keys;
	uint32_t nkeys = (uint32_t)rwop.keys.n;
	KB_VEC_RELEASE(&rwop.keys);
	if (nomem || index.nomem || rwop.nomem || lost)
		return kb_err_set(err, -ENOMEM, "working out the pods' volumes: out of memory");
	s->task_vol = any ? tv : NULL;
	s->rwop_claims = keys;
	s->nrwop_claims = nkeys;
	return 0;
}

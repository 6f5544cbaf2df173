/*
 * objects.c - a Kubernetes object's life: which kind a document is, its
 * decoding from start to finish, its packing into one block, its freeing
 * (see objects.h).
 *
 * kb_object_decode_as reads apiVersion and kind, then metadata, then hands
 * the document to the decoder of its kind (cache/decode.h lists them), all
 * in a scratch arena; only a document that decodes whole becomes an
 * object, copied into one exact-size block.
 */
#include "cache/objects.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/decode.h"

/* ---- which kind ------------------------------------------------------------------ */

kb_kind kb_kind_of(const char *api_version, const char *kind)
{
	bool core = strcmp(api_version, "v1") == 0;
	if (strcmp(kind, "Node") == 0)
		return core ? KB_KIND_NODE : KB_KIND_OTHER;
	if (strcmp(kind, "Pod") == 0)
		return core ? KB_KIND_POD : KB_KIND_OTHER;
	if (strcmp(kind, "Namespace") == 0)
		return core ? KB_KIND_NAMESPACE : KB_KIND_OTHER;
	if (strcmp(kind, "PersistentVolumeClaim") == 0)
		return core ? KB_KIND_PVC : KB_KIND_OTHER;
	if (strcmp(kind, "PersistentVolume") == 0)
		return core ? KB_KIND_PV : KB_KIND_OTHER;
	if (strcmp(kind, "StorageClass") == 0)
		return strcmp(api_version, "storage.k8s.io/v1") == 0 ||
				       strcmp(api_version, "storage.k8s.io/v1beta1") == 0
			       ? KB_KIND_STORAGE_CLASS
			       : KB_KIND_OTHER;
	if (strcmp(kind, "CSINode") == 0)
		return strcmp(api_version, "storage.k8s.io/v1") == 0 ? KB_KIND_CSI_NODE
								     : KB_KIND_OTHER;
	if (strcmp(kind, "VolumeAttachment") == 0)
		return strcmp(api_version, "storage.k8s.io/v1") == 0 ? KB_KIND_VOLUME_ATTACHMENT
								     : KB_KIND_OTHER;
	if (strcmp(kind, "CSIDriver") == 0)
		return strcmp(api_version, "storage.k8s.io/v1") == 0 ? KB_KIND_CSI_DRIVER
								     : KB_KIND_OTHER;
	if (strcmp(kind, "CSIStorageCapacity") == 0)
		return strcmp(api_version, "storage.k8s.io/v1") == 0 ? KB_KIND_STORAGE_CAPACITY
								     : KB_KIND_OTHER;
	if (strcmp(kind, "PriorityClass") == 0)
		return strcmp(api_version, "scheduling.k8s.io/v1") == 0 ||
				       strcmp(api_version, "scheduling.k8s.io/v1beta1") == 0 ||
				       strcmp(api_version, "scheduling.k8s.io/v1alpha1") == 0
			       ? KB_KIND_PRIORITY_CLASS
			       : KB_KIND_OTHER;
	if (strcmp(kind, "PodGroup") == 0)
		return KB_KIND_PODGROUP; /* an unknown API is an error, in dec_podgroup() */
	if (strcmp(kind, "Queue") == 0)
		return KB_KIND_QUEUE;
	if (strcmp(kind, "Workload") == 0) /* later versions are templates only */
		return strcmp(api_version, "scheduling.k8s.io/v1alpha1") == 0 ? KB_KIND_WORKLOAD
									   : KB_KIND_OTHER;
	return KB_KIND_OTHER;
}

const char *kb_kind_name(kb_kind kind)
{
	static const char *const names[] = {
		[KB_KIND_OTHER] = "object",
		[KB_KIND_NODE] = "Node",
		[KB_KIND_POD] = "Pod",
		[KB_KIND_PODGROUP] = "PodGroup",
		[KB_KIND_QUEUE] = "Queue",
		[KB_KIND_PRIORITY_CLASS] = "PriorityClass",
		[KB_KIND_NAMESPACE] = "Namespace",
		[KB_KIND_WORKLOAD] = "Workload",
		[KB_KIND_PVC] = "PersistentVolumeClaim",
		[KB_KIND_PV] = "PersistentVolume",
		[KB_KIND_STORAGE_CLASS] = "StorageClass",
		[KB_KIND_CSI_NODE] = "CSINode",
		[KB_KIND_VOLUME_ATTACHMENT] = "VolumeAttachment",
		[KB_KIND_CSI_DRIVER] = "CSIDriver",
		[KB_KIND_STORAGE_CAPACITY] = "CSIStorageCapacity",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "object";
}

/* ---- apiVersion and kind ---------------------------------------------------------- */

/* A string field of the document's root that must be there and not "". */
static int dec_required_str(dec_ctx *d, const char *field, const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(d->root, field);
	int r = dec_str(d, n, field, ret);
	if (r < 0)
		return r;
	if (!*ret || !**ret)
		return dec_fail(d, -EINVAL, n, field, "required");
	return 0;
}

/* A required string field, or `def` (copied into the object) when the
 * document lacks it and def is non-NULL. */
static int dec_str_or_default(dec_ctx *d, const char *field, const char *def, const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(d->root, field);
	if (def && (kb_yaml_is_null(n) || (dec_is_scalar(n) && n->len == 0))) {
		char *s = kb_arena_strdup(d->a, def);
		if (!s)
			return dec_nomem(d);
		*ret = s;
		return 0;
	}
	return dec_required_str(d, field, ret);
}

/* ---- packing: from the scratch arena into one block ------------------------------- */

/* Rebases one pointer from the scratch arena into the block. */
#define RELOC(pk, field) ((field) = kb_arena_relocate((pk)->scratch, (field), (pk)->dst))

typedef struct packer {
	const kb_arena *scratch;
	void *dst; /* where the scratch arena's contents were copied */
} packer;

static void reloc_labels(const packer *pk, kb_labels *l)
{
	RELOC(pk, l->v);
	kb_label *v = (kb_label *)l->v;
	for (uint32_t i = 0; i < l->n; i++) {
		RELOC(pk, v[i].key);
		RELOC(pk, v[i].value);
	}
}

static void reloc_term(const packer *pk, kb_selector_term *t)
{
	RELOC(pk, t->reqs);
	kb_selector_req *q = (kb_selector_req *)t->reqs;
	for (uint32_t i = 0; i < t->n; i++) {
		RELOC(pk, q[i].key);
		RELOC(pk, q[i].values);
		const char **v = (const char **)q[i].values;
		for (uint32_t j = 0; j < q[i].nvalues; j++)
			RELOC(pk, v[j]);
	}
}

/* An array of n node selector terms. */
static void reloc_terms(const packer *pk, const kb_selector_term **terms, uint32_t n)
{
	RELOC(pk, *terms);
	kb_selector_term *t = (kb_selector_term *)*terms;
	for (uint32_t i = 0; i < n; i++)
		reloc_term(pk, &t[i]);
}

static void reloc_topology(const packer *pk, kb_topology_req *t)
{
	RELOC(pk, t->required);
	RELOC(pk, t->preferred);
	RELOC(pk, t->levels);
}

static void reloc_selector(const packer *pk, kb_label_selector *sel)
{
	kb_selector_term t = {sel->reqs, sel->n};
	reloc_term(pk, &t);
	sel->reqs = t.reqs;
}

static void reloc_affinity_terms(const packer *pk, const kb_pod_affinity_term **terms, uint32_t n)
{
	RELOC(pk, *terms);
	kb_pod_affinity_term *t = (kb_pod_affinity_term *)*terms;
	for (uint32_t i = 0; i < n; i++) {
		reloc_selector(pk, &t[i].selector);
		reloc_selector(pk, &t[i].ns_selector);
		RELOC(pk, t[i].namespaces);
		const char **ns = (const char **)t[i].namespaces;
		for (uint32_t j = 0; j < t[i].nnamespaces; j++)
			RELOC(pk, ns[j]);
		RELOC(pk, t[i].topology_key);
	}
}

static void reloc_pod_topology(const packer *pk, kb_pod_spec *ps)
{
	reloc_affinity_terms(pk, &ps->affinity, ps->naffinity);
	reloc_affinity_terms(pk, &ps->anti_affinity, ps->nanti_affinity);
	reloc_affinity_terms(pk, &ps->pref_affinity, ps->npref_affinity);
	reloc_affinity_terms(pk, &ps->pref_anti_affinity, ps->npref_anti_affinity);
	RELOC(pk, ps->spread);
	kb_spread_constraint *c = (kb_spread_constraint *)ps->spread;
	for (uint32_t i = 0; i < ps->nspread; i++) {
		RELOC(pk, c[i].topology_key);
		reloc_selector(pk, &c[i].selector);
	}
}

static void reloc_pod_spec(const packer *pk, kb_pod_spec *ps)
{
	reloc_pod_topology(pk, ps);
	reloc_labels(pk, &ps->labels); /* the pod's labels: a second rebase changes nothing */
	reloc_labels(pk, &ps->node_selector);
	RELOC(pk, ps->required);
	kb_selector_term *req = (kb_selector_term *)ps->required;
	for (uint32_t i = 0; i < ps->nrequired; i++)
		reloc_term(pk, &req[i]);
	RELOC(pk, ps->preferred);
	kb_preferred_term *pref = (kb_preferred_term *)ps->preferred;
	for (uint32_t i = 0; i < ps->npreferred; i++)
		reloc_term(pk, &pref[i].term);
	RELOC(pk, ps->tolerations);
	kb_toleration *tol = (kb_toleration *)ps->tolerations;
	for (uint32_t i = 0; i < ps->ntolerations; i++) {
		RELOC(pk, tol[i].key);
		RELOC(pk, tol[i].value);
	}
	RELOC(pk, ps->host_ports);
	kb_host_port *hp = (kb_host_port *)ps->host_ports;
	for (uint32_t i = 0; i < ps->nhost_ports; i++)
		RELOC(pk, hp[i].ip);
	RELOC(pk, ps->gpu_models);
	RELOC(pk, ps->spill);
	RELOC(pk, ps->vgpu_used);
	kb_vgpu_use *vu = (kb_vgpu_use *)ps->vgpu_used;
	for (uint32_t i = 0; i < ps->nvgpu_used; i++)
		RELOC(pk, vu[i].uuid);
}

/* The pointers of a PersistentVolumeClaim, PersistentVolume, StorageClass,
 * CSINode, VolumeAttachment or CSIStorageCapacity (a CSIDriver has none). */
static void reloc_volume_kind(const packer *pk, kb_object *o)
{
	switch (o->kind) {
	case KB_KIND_PVC: {
		kb_pvc_obj *c = &o->u.pvc;
		RELOC(pk, c->class_name);
		RELOC(pk, c->volume_name);
		RELOC(pk, c->selected_node);
		RELOC(pk, c->owner_uid);
		reloc_selector(pk, &c->selector);
		break;
	}
	case KB_KIND_PV: {
		kb_pv_obj *v = &o->u.pv;
		RELOC(pk, v->class_name);
		RELOC(pk, v->claim_ns);
		RELOC(pk, v->claim_name);
		RELOC(pk, v->claim_uid);
		RELOC(pk, v->claim_key);
		reloc_terms(pk, &v->terms, v->nterms);
		RELOC(pk, v->csi_driver);
		RELOC(pk, v->csi_handle);
		break;
	}
	case KB_KIND_CSI_NODE: {
		kb_csi_node_obj *cn = &o->u.csi_node;
		RELOC(pk, cn->drivers);
		kb_csi_driver_limit *dl = (kb_csi_driver_limit *)cn->drivers;
		for (uint32_t i = 0; i < cn->ndrivers; i++)
			RELOC(pk, dl[i].name);
		break;
	}
	case KB_KIND_VOLUME_ATTACHMENT: {
		kb_volume_attachment_obj *va = &o->u.volume_attachment;
		RELOC(pk, va->attacher);
		RELOC(pk, va->node_name);
		RELOC(pk, va->pv_name);
		break;
	}
	case KB_KIND_STORAGE_CAPACITY: {
		kb_storage_capacity_obj *sc = &o->u.storage_capacity;
		RELOC(pk, sc->class_name);
		reloc_selector(pk, &sc->topology);
		break;
	}
	case KB_KIND_STORAGE_CLASS: {
		kb_storage_class_obj *sc = &o->u.storage_class;
		RELOC(pk, sc->provisioner);
		reloc_terms(pk, &sc->allowed, sc->nallowed);
		break;
	}
	default:
		break;
	}
}

/* Every pointer of the object, by kind. A pointer field added to an object
 * must be added here: anything left pointing into the scratch arena
 * dangles once it is freed (the ASan build's tests catch that). Pointers
 * shared between fields (a label value that is also the GPU model) are
 * rebased once per field, which is harmless. */
static void reloc_object(const packer *pk, kb_object *o)
{
	RELOC(pk, o->api_version);
	RELOC(pk, o->kind_name);
	kb_meta *m = &o->meta;
	RELOC(pk, m->name);
	RELOC(pk, m->ns);
	RELOC(pk, m->uid);
	RELOC(pk, m->key);
	RELOC(pk, m->resource_version);
	reloc_labels(pk, &m->labels);
	reloc_labels(pk, &m->annotations);
	switch (o->kind) {
	case KB_KIND_NODE: {
		kb_node_obj *no = &o->u.node;
		RELOC(pk, no->taints);
		kb_taint *t = (kb_taint *)no->taints;
		for (uint32_t i = 0; i < no->ntaints; i++) {
			RELOC(pk, t[i].key);
			RELOC(pk, t[i].value);
		}
		RELOC(pk, no->gpu_model);
		RELOC(pk, no->gpu_group);
		RELOC(pk, no->extra);
		RELOC(pk, no->vgpu);
		kb_vgpu_dev *vd = (kb_vgpu_dev *)no->vgpu;
		for (uint32_t i = 0; i < no->nvgpu; i++)
			RELOC(pk, vd[i].uuid);
		break;
	}
	case KB_KIND_POD: {
		kb_pod_obj *po = &o->u.pod;
		RELOC(pk, po->scheduler_name);
		RELOC(pk, po->node_name);
		RELOC(pk, po->priority_class_name);
		RELOC(pk, po->group_name);
		RELOC(pk, po->group_key);
		RELOC(pk, po->task_role);
		RELOC(pk, po->queue_name);
		RELOC(pk, po->workload_key);
		RELOC(pk, po->workload_pod_group);
		reloc_pod_spec(pk, &po->spec);
		RELOC(pk, po->gpu_devices);
		reloc_topology(pk, &po->topology);
		RELOC(pk, po->claims);
		kb_pod_claim *cl = (kb_pod_claim *)po->claims;
		for (uint32_t i = 0; i < po->nclaims; i++)
			RELOC(pk, cl[i].name);
		break;
	}
	case KB_KIND_PODGROUP: {
		kb_podgroup_obj *pg = &o->u.podgroup;
		RELOC(pk, pg->min_task_member);
		kb_role_min *rm = (kb_role_min *)pg->min_task_member;
		for (uint32_t i = 0; i < pg->nmin_task_member; i++)
			RELOC(pk, rm[i].role);
		RELOC(pk, o->u.podgroup.queue);
		RELOC(pk, o->u.podgroup.priority_class_name);
		RELOC(pk, o->u.podgroup.status_phase);
		RELOC(pk, o->u.podgroup.unschedulable);
		reloc_topology(pk, &o->u.podgroup.topology);
		break;
	}
	case KB_KIND_QUEUE:
		RELOC(pk, o->u.queue.parent);
		break;
	case KB_KIND_WORKLOAD: {
		kb_workload_obj *w = &o->u.workload;
		RELOC(pk, w->groups);
		kb_workload_group *g = (kb_workload_group *)w->groups;
		for (uint32_t i = 0; i < w->ngroups; i++)
			RELOC(pk, g[i].name);
		RELOC(pk, w->queue);
		break;
	}
	default: /* the volume kinds (and those without pointers of their own) */
		reloc_volume_kind(pk, o);
		break;
	}
}

/* The object decoded in *tmp with its strings and arrays in scratch, as one
 * exact-size heap block: the kb_object first, then the scratch arena's
 * contents, every pointer rebased. NULL when malloc fails. */
static kb_object *pack(const kb_object *tmp, const kb_arena *scratch)
{
	size_t head = (sizeof(kb_object) + 15u) & ~(size_t)15u;
	kb_object *o = malloc(head + kb_arena_copy_size(scratch));
	if (!o)
		return NULL;
	*o = *tmp;
	packer pk = {scratch, (unsigned char *)o + head};
	kb_arena_copy_out(scratch, pk.dst);
	reloc_object(&pk, o);
	return o;
}

#undef RELOC

/* ---- decoding ------------------------------------------------------------------- */

/* The fields of d->root the decoder of d->o->kind reads (metadata is read
 * already). Namespace and unknown kinds have none. */
static int dec_kind(dec_ctx *d)
{
	switch (d->o->kind) {
	case KB_KIND_NODE:
		return dec_node(d);
	case KB_KIND_POD:
		return dec_pod(d);
	case KB_KIND_PODGROUP:
		return dec_podgroup(d);
	case KB_KIND_QUEUE:
		return dec_queue(d);
	case KB_KIND_PRIORITY_CLASS:
		return dec_priority_class(d);
	case KB_KIND_WORKLOAD:
		return dec_workload(d);
	case KB_KIND_PVC:
		return dec_pvc(d);
	case KB_KIND_PV:
		return dec_pv(d);
	case KB_KIND_STORAGE_CLASS:
		return dec_storage_class(d);
	case KB_KIND_CSI_NODE:
		return dec_csi_node(d);
	case KB_KIND_VOLUME_ATTACHMENT:
		return dec_volume_attachment(d);
	case KB_KIND_CSI_DRIVER:
		return dec_csi_driver_obj(d);
	case KB_KIND_STORAGE_CAPACITY:
		return dec_storage_capacity(d);
	case KB_KIND_NAMESPACE:
	case KB_KIND_OTHER:
		break;
	}
	return 0;
}

/* The whole document into d->o: apiVersion, kind, metadata, then the
 * kind's fields. */
static int dec_document(dec_ctx *d, const char *default_api_version, const char *default_kind)
{
	kb_object *o = d->o;
	int r;
	if ((r = dec_str_or_default(d, "apiVersion", default_api_version, &o->api_version)) < 0 ||
	    (r = dec_str_or_default(d, "kind", default_kind, &o->kind_name)) < 0)
		return r;
	o->kind = kb_kind_of(o->api_version, o->kind_name);
	d->kind = o->kind_name;
	if ((r = dec_meta(d)) < 0)
		return r;
	return dec_kind(d);
}

int kb_object_decode_as(const kb_yaml_node *doc, const char *default_api_version,
			const char *default_kind, const char *source, kb_resnames *resnames,
			kb_object **ret_obj, kb_err *err)
{
	if (!doc)
		return kb_err_set(err, -EINVAL, "object: empty document");
	dec_ctx d = {.source = source, .rn = resnames, .err = err, .root = doc, .kind = "object"};
	if (doc->kind != KB_YAML_MAP)
		return dec_fail(&d, -EINVAL, doc, "document", "expected a mapping, got %s",
				kb_yaml_kind_name(doc));

	/* Decode into a scratch arena, then copy the result into one block of
	 * exactly its size: an object per pod adds up (150,000 in a large
	 * cluster), and an arena's chunk would be mostly unused. */
	kb_object tmp;
	memset(&tmp, 0, sizeof(tmp));
	kb_arena scratch;
	kb_arena_init(&scratch);
	d.o = &tmp;
	d.a = &scratch;
	int r = dec_document(&d, default_api_version, default_kind);
	if (r < 0)
		goto release_scratch;
	kb_object *packed = pack(&tmp, &scratch);
	if (!packed) {
		r = dec_nomem(&d);
		goto release_scratch;
	}
	*ret_obj = packed;
release_scratch:
	kb_arena_release(&scratch);
	return r;
}

int kb_object_decode(const kb_yaml_node *doc, const char *source, kb_resnames *resnames,
		     kb_object **ret_obj, kb_err *err)
{
	return kb_object_decode_as(doc, NULL, NULL, source, resnames, ret_obj, err);
}

kb_object *kb_object_free(kb_object *o)
{
	free(o);
	return NULL;
}

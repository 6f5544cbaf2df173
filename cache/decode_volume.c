/* decode_volume.c - PersistentVolumeClaims, PersistentVolumes and
 * StorageClasses (see decode.h), and the claims a pod's volumes use.
 *
 * Only what volume binding reads (kube-scheduler's VolumeBinding plugin,
 * k8s.io/component-helpers/storage/volume): classes, sizes, access and
 * volume modes, claim references, node affinity, the binding annotations.
 * Sizes are bytes: a quantity's milli-units rounded up.
 */
#include "cache/decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"

#define ANN_BETA_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define NO_PROVISIONER "kubernetes.io/no-provisioner"

/* A storage quantity at n (absent: 0) in bytes. */
static int dec_storage(dec_ctx *d, const kb_yaml_node *n, const char *path, int64_t *ret)
{
	*ret = 0;
	if (!n || kb_yaml_is_null(n))
		return 0;
	int64_t milli;
	if (!dec_is_scalar(n) || strlen(n->str) != n->len || kb_quantity_parse(n->str, &milli) < 0)
		return dec_fail(d, -EINVAL, n, path, "bad quantity \"%.*s\"", DEC_QUOTE_MAX,
				dec_is_scalar(n) ? n->str : kb_yaml_kind_name(n));
	if (milli < 0)
		return dec_fail(d, -EINVAL, n, path, "must not be negative, got \"%.*s\"",
				DEC_QUOTE_MAX, n->str);
	*ret = milli / 1000 + (milli % 1000 != 0);
	return 0;
}

/* spec.accessModes into KB_ACCESS_* bits. */
static int dec_access_modes(dec_ctx *d, const kb_yaml_node *spec, uint32_t *ret)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} modes[] = {
		{"ReadWriteOnce", KB_ACCESS_RWO},
		{"ReadOnlyMany", KB_ACCESS_ROX},
		{"ReadWriteMany", KB_ACCESS_RWX},
		{"ReadWriteOncePod", KB_ACCESS_RWOP},
	};
	const kb_yaml_node *seq;
	int r = dec_seq(d, kb_yaml_get(spec, "accessModes"), "spec.accessModes", &seq);
	*ret = 0;
	if (r < 0 || !seq || seq->n == 0)
		return r;
	const char **v;
	if ((r = dec_strings(d, seq, "spec.accessModes", &v)) < 0)
		return r;
	for (size_t i = 0; i < seq->n; i++) {
		size_t k = 0;
		while (k < sizeof(modes) / sizeof(modes[0]) && strcmp(v[i], modes[k].name) != 0)
			k++;
		if (k == sizeof(modes) / sizeof(modes[0])) {
			char sub[DEC_PATH_LEN];
			dec_path(sub, "spec.accessModes[%zu]", i);
			return dec_fail(d, -EINVAL, seq->items[i], sub,
					"unknown access mode \"%.*s\" (want ReadWriteOnce, "
					"ReadOnlyMany, ReadWriteMany or ReadWriteOncePod)",
					DEC_QUOTE_MAX, v[i]);
		}
		*ret |= modes[k].bit;
	}
	return 0;
}

/* spec.volumeMode: Block, or Filesystem (the default). */
static int dec_volume_mode(dec_ctx *d, const kb_yaml_node *spec, bool *ret)
{
	const kb_yaml_node *n = kb_yaml_get(spec, "volumeMode");
	const char *m = NULL;
	int r = dec_str(d, n, "spec.volumeMode", &m);
	if (r < 0)
		return r;
	*ret = m && strcmp(m, "Block") == 0;
	if (m && *m && !*ret && strcmp(m, "Filesystem") != 0)
		return dec_fail(d, -EINVAL, n, "spec.volumeMode",
				"unknown volume mode \"%.*s\" (want Filesystem or Block)",
				DEC_QUOTE_MAX, m);
	return 0;
}

/* The class of a claim or a volume: the beta annotation first, then
 * spec.storageClassName; "" for none. */
static int dec_class(dec_ctx *d, const kb_yaml_node *spec, const char **ret)
{
	const char *beta = kb_labels_get(&d->o->meta.annotations, ANN_BETA_CLASS);
	if (beta) {
		*ret = beta;
		return 0;
	}
	int r = dec_str(d, kb_yaml_get(spec, "storageClassName"), "spec.storageClassName", ret);
	if (r == 0 && !*ret)
		*ret = "";
	return r;
}

/* The uid of the controlling owner (metadata.ownerReferences). */
static int dec_owner_uid(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i,
			 void *ctx)
{
	(void)i;
	bool controller = false;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.controller", path);
	int r = dec_bool(d, kb_yaml_get(item, "controller"), sub, &controller);
	if (r < 0 || !controller)
		return r;
	dec_path(sub, "%s.uid", path);
	return dec_str(d, kb_yaml_get(item, "uid"), sub, (const char **)ctx);
}

int dec_pvc(dec_ctx *d)
{
	kb_pvc_obj *c = &d->o->u.pvc;
	const kb_yaml_node *spec, *status, *res;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "resources"), "spec.resources", &res)) < 0 ||
	    (r = dec_class(d, spec, &c->class_name)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(spec, "volumeName"), "spec.volumeName",
				  &c->volume_name)) < 0 ||
	    (r = dec_access_modes(d, spec, &c->access_modes)) < 0 ||
	    (r = dec_volume_mode(d, spec, &c->block)) < 0)
		return r;
	const kb_yaml_node *req;
	if ((r = dec_map(d, kb_yaml_get(res, "requests"), "spec.resources.requests", &req)) < 0 ||
	    (r = dec_storage(d, kb_yaml_get(req, "storage"), "spec.resources.requests.storage",
			     &c->request)) < 0)
		return r;
	const kb_yaml_node *sel = kb_yaml_get(spec, "selector");
	if (sel && !kb_yaml_is_null(sel)) {
		if ((r = dec_label_selector(d, sel, "spec.selector", 0, &c->selector)) < 0)
			return r;
		c->has_selector = true;
	}
	const char *phase = NULL;
	if ((r = dec_str(d, kb_yaml_get(status, "phase"), "status.phase", &phase)) < 0)
		return r;
	c->phase = phase && strcmp(phase, "Bound") == 0  ? KB_CLAIM_BOUND
		   : phase && strcmp(phase, "Lost") == 0 ? KB_CLAIM_LOST
							 : KB_CLAIM_PENDING;
	c->bind_completed = kb_labels_get(&d->o->meta.annotations, ANN_BIND_COMPLETED) != NULL;
	c->selected_node = dec_annotation_nonempty(d, ANN_SELECTED_NODE);
	const kb_yaml_node *meta = kb_yaml_get(d->root, "metadata"), *refs;
	if ((r = dec_seq(d, kb_yaml_get(meta, "ownerReferences"), "metadata.ownerReferences",
			 &refs)) < 0)
		return r;
	return dec_each_map(d, refs, "metadata.ownerReferences", DEC_NULL_ITEM_SKIPPED,
			    dec_owner_uid, &c->owner_uid);
}

int dec_pv(dec_ctx *d)
{
	kb_pv_obj *v = &d->o->u.pv;
	const kb_yaml_node *spec, *status, *cap, *ref, *na;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "capacity"), "spec.capacity", &cap)) < 0 ||
	    (r = dec_storage(d, kb_yaml_get(cap, "storage"), "spec.capacity.storage",
			     &v->capacity)) < 0 ||
	    (r = dec_class(d, spec, &v->class_name)) < 0 ||
	    (r = dec_access_modes(d, spec, &v->access_modes)) < 0 ||
	    (r = dec_volume_mode(d, spec, &v->block)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "claimRef"), "spec.claimRef", &ref)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "nodeAffinity"), "spec.nodeAffinity", &na)) < 0 ||
	    (r = dec_node_selector(d, kb_yaml_get(na, "required"), "spec.nodeAffinity.required",
				   &v->terms, &v->nterms)) < 0)
		return r;
	if (ref) {
		if ((r = dec_str_nonempty(d, kb_yaml_get(ref, "namespace"), "spec.claimRef.namespace",
					  &v->claim_ns)) < 0 ||
		    (r = dec_str_nonempty(d, kb_yaml_get(ref, "name"), "spec.claimRef.name",
					  &v->claim_name)) < 0 ||
		    (r = dec_str_nonempty(d, kb_yaml_get(ref, "uid"), "spec.claimRef.uid",
					  &v->claim_uid)) < 0)
			return r;
		if (v->claim_name) {
			const char *ns = v->claim_ns ? v->claim_ns : "default";
			size_t n = strlen(ns) + strlen(v->claim_name) + 2;
			char *key = kb_arena_alloc(d->a, n);
			if (!key)
				return dec_nomem(d);
			(void)snprintf(key, n, "%s/%s", ns, v->claim_name);
			v->claim_ns = ns;
			v->claim_key = key;
		}
	}
	const kb_yaml_node *csi;
	if ((r = dec_map(d, kb_yaml_get(spec, "csi"), "spec.csi", &csi)) < 0)
		return r;
	if (csi) {
		if ((r = dec_str_nonempty(d, kb_yaml_get(csi, "driver"), "spec.csi.driver",
					  &v->csi_driver)) < 0 ||
		    (r = dec_str_nonempty(d, kb_yaml_get(csi, "volumeHandle"), "spec.csi.volumeHandle",
					  &v->csi_handle)) < 0)
			return r;
		if (!v->csi_driver)
			return dec_fail(d, -EINVAL, csi, "spec.csi.driver", "required");
		if (!v->csi_handle)
			return dec_fail(d, -EINVAL, csi, "spec.csi.volumeHandle", "required");
	}
	const char *phase = NULL;
	if ((r = dec_str(d, kb_yaml_get(status, "phase"), "status.phase", &phase)) < 0)
		return r;
	v->phase = !phase			       ? KB_PV_PENDING
		   : strcmp(phase, "Available") == 0 ? KB_PV_AVAILABLE
		   : strcmp(phase, "Bound") == 0     ? KB_PV_BOUND
		   : strcmp(phase, "Released") == 0  ? KB_PV_RELEASED
		   : strcmp(phase, "Failed") == 0    ? KB_PV_FAILED
						     : KB_PV_PENDING;
	return 0;
}

/* One item of allowedTopologies into ((kb_selector_term *)ctx)[i]: each
 * matchLabelExpressions item {key, values} an In requirement. */
static int dec_allowed_term(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i,
			    void *ctx)
{
	kb_selector_term *t = (kb_selector_term *)ctx + i;
	char epath[DEC_PATH_LEN];
	dec_path(epath, "%s.matchLabelExpressions", path);
	const kb_yaml_node *exprs;
	int r = dec_seq(d, kb_yaml_get(item, "matchLabelExpressions"), epath, &exprs);
	if (r < 0 || !exprs || exprs->n == 0)
		return r;
	kb_selector_req *q = kb_arena_calloc(d->a, exprs->n, sizeof(*q));
	if (!q)
		return dec_nomem(d);
	for (size_t k = 0; k < exprs->n; k++) {
		const kb_yaml_node *e = exprs->items[k], *vals;
		char sub[DEC_PATH_LEN];
		dec_path(sub, "%s[%zu].key", epath, k);
		if ((r = dec_str_nonempty(d, kb_yaml_get(e, "key"), sub, &q[k].key)) < 0)
			return r;
		if (!q[k].key)
			return dec_fail(d, -EINVAL, e, sub, "required");
		dec_path(sub, "%s[%zu].values", epath, k);
		if ((r = dec_seq(d, kb_yaml_get(e, "values"), sub, &vals)) < 0)
			return r;
		if (!vals || vals->n == 0)
			return dec_fail(d, -EINVAL, e, sub, "required");
		const char **v;
		if ((r = dec_strings(d, vals, sub, &v)) < 0)
			return r;
		q[k].op = KB_SEL_IN;
		q[k].values = v;
		q[k].nvalues = (uint32_t)vals->n;
	}
	t->reqs = q;
	t->n = (uint32_t)exprs->n;
	return 0;
}

int dec_storage_class(dec_ctx *d)
{
	kb_storage_class_obj *sc = &d->o->u.storage_class;
	const kb_yaml_node *mode = kb_yaml_get(d->root, "volumeBindingMode"), *topo;
	const char *m = NULL;
	int r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(d->root, "provisioner"), "provisioner",
				  &sc->provisioner)) < 0 ||
	    (r = dec_str(d, mode, "volumeBindingMode", &m)) < 0)
		return r;
	if (!sc->provisioner)
		return dec_fail(d, -EINVAL, NULL, "provisioner", "required");
	sc->wait_for_first_consumer = m && strcmp(m, "WaitForFirstConsumer") == 0;
	if (m && *m && !sc->wait_for_first_consumer && strcmp(m, "Immediate") != 0)
		return dec_fail(d, -EINVAL, mode, "volumeBindingMode",
				"unknown mode \"%.*s\" (want Immediate or WaitForFirstConsumer)",
				DEC_QUOTE_MAX, m);
	if ((r = dec_seq(d, kb_yaml_get(d->root, "allowedTopologies"), "allowedTopologies",
			 &topo)) < 0 ||
	    !topo || topo->n == 0)
		return r;
	kb_selector_term *t = kb_arena_calloc(d->a, topo->n, sizeof(*t));
	if (!t)
		return dec_nomem(d);
	if ((r = dec_each_map(d, topo, "allowedTopologies", DEC_NULL_ITEM_SKIPPED, dec_allowed_term,
			      t)) < 0)
		return r;
	sc->allowed = t;
	sc->nallowed = (uint32_t)topo->n;
	return 0;
}

/* One item of a CSINode's spec.drivers into ((kb_csi_driver_limit *)ctx)[i]. */
static int dec_csi_driver(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i,
			  void *ctx)
{
	kb_csi_driver_limit *dl = (kb_csi_driver_limit *)ctx + i;
	char sub[DEC_PATH_LEN];
	const kb_yaml_node *alloc;
	int r;
	dec_path(sub, "%s.name", path);
	if ((r = dec_str_nonempty(d, kb_yaml_get(item, "name"), sub, &dl->name)) < 0)
		return r;
	if (!dl->name)
		return dec_fail(d, -EINVAL, item, sub, "required");
	dl->count = -1;
	dec_path(sub, "%s.allocatable", path);
	if ((r = dec_map(d, kb_yaml_get(item, "allocatable"), sub, &alloc)) < 0)
		return r;
	dec_path(sub, "%s.allocatable.count", path);
	return dec_int(d, kb_yaml_get(alloc, "count"), sub, 0, INT32_MAX, &dl->count, NULL);
}

int dec_csi_node(dec_ctx *d)
{
	kb_csi_node_obj *cn = &d->o->u.csi_node;
	const kb_yaml_node *spec, *drivers;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_seq(d, kb_yaml_get(spec, "drivers"), "spec.drivers", &drivers)) < 0 ||
	    !drivers || drivers->n == 0)
		return r;
	kb_csi_driver_limit *dl = kb_arena_calloc(d->a, drivers->n, sizeof(*dl));
	if (!dl)
		return dec_nomem(d);
	if ((r = dec_each_map(d, drivers, "spec.drivers", DEC_NULL_ITEM_FAILS, dec_csi_driver,
			      dl)) < 0)
		return r;
	cn->drivers = dl;
	cn->ndrivers = (uint32_t)drivers->n;
	return 0;
}

int dec_volume_attachment(dec_ctx *d)
{
	kb_volume_attachment_obj *va = &d->o->u.volume_attachment;
	const kb_yaml_node *spec, *src;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(spec, "attacher"), "spec.attacher",
				  &va->attacher)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(spec, "nodeName"), "spec.nodeName",
				  &va->node_name)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "source"), "spec.source", &src)) < 0)
		return r;
	return dec_str_nonempty(d, kb_yaml_get(src, "persistentVolumeName"),
				"spec.source.persistentVolumeName", &va->pv_name);
}

int dec_csi_driver_obj(dec_ctx *d)
{
	const kb_yaml_node *spec;
	int r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec);
	if (r < 0)
		return r;
	return dec_bool(d, kb_yaml_get(spec, "storageCapacity"), "spec.storageCapacity",
			&d->o->u.csi_driver.storage_capacity);
}

int dec_storage_capacity(dec_ctx *d)
{
	kb_storage_capacity_obj *sc = &d->o->u.storage_capacity;
	const kb_yaml_node *topo = kb_yaml_get(d->root, "nodeTopology");
	const kb_yaml_node *max = kb_yaml_get(d->root, "maximumVolumeSize");
	const kb_yaml_node *cap = kb_yaml_get(d->root, "capacity");
	int r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(d->root, "storageClassName"), "storageClassName",
				  &sc->class_name)) < 0)
		return r;
	if (!sc->class_name)
		return dec_fail(d, -EINVAL, NULL, "storageClassName", "required");
	if (topo && !kb_yaml_is_null(topo)) {
		if ((r = dec_label_selector(d, topo, "nodeTopology", 0, &sc->topology)) < 0)
			return r;
		sc->has_topology = true;
	}
	sc->limit = -1;
	if (max && !kb_yaml_is_null(max))
		return dec_storage(d, max, "maximumVolumeSize", &sc->limit);
	if (cap && !kb_yaml_is_null(cap))
		return dec_storage(d, cap, "capacity", &sc->limit);
	return 0;
}

/* One item of spec.volumes: its claim, if it uses one. */
static int dec_volume(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i, void *ctx)
{
	(void)i;
	kb_pod_obj *po = ctx;
	kb_pod_claim *c = (kb_pod_claim *)&po->claims[po->nclaims];
	char sub[DEC_PATH_LEN];
	const kb_yaml_node *pvc = kb_yaml_get(item, "persistentVolumeClaim");
	const kb_yaml_node *eph = kb_yaml_get(item, "ephemeral");
	int r;
	if (pvc && !kb_yaml_is_null(pvc)) {
		dec_path(sub, "%s.persistentVolumeClaim.claimName", path);
		if ((r = dec_str_nonempty(d, kb_yaml_get(pvc, "claimName"), sub, &c->name)) < 0)
			return r;
		if (!c->name)
			return dec_fail(d, -EINVAL, pvc, sub, "required");
		po->nclaims++;
		return 0;
	}
	if (!eph || kb_yaml_is_null(eph))
		return 0;
	/* The ephemeral volume controller names the claim "<pod>-<volume>". */
	const char *vname;
	dec_path(sub, "%s.name", path);
	if ((r = dec_str_nonempty(d, kb_yaml_get(item, "name"), sub, &vname)) < 0)
		return r;
	if (!vname)
		return dec_fail(d, -EINVAL, item, sub, "required");
	size_t n = strlen(d->o->meta.name) + strlen(vname) + 2;
	char *name = kb_arena_alloc(d->a, n);
	if (!name)
		return dec_nomem(d);
	(void)snprintf(name, n, "%s-%s", d->o->meta.name, vname);
	c->name = name;
	c->ephemeral = true;
	po->nclaims++;
	return 0;
}

int dec_pod_claims(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po)
{
	const kb_yaml_node *vols;
	int r = dec_seq(d, kb_yaml_get(spec, "volumes"), "spec.volumes", &vols);
	if (r < 0 || !vols || vols->n == 0)
		return r;
	po->claims = kb_arena_calloc(d->a, vols->n, sizeof(kb_pod_claim));
	if (!po->claims)
		return dec_nomem(d);
	po->nclaims = 0;
	r = dec_each_map(d, vols, "spec.volumes", DEC_NULL_ITEM_SKIPPED, dec_volume, po);
	if (r == 0 && po->nclaims == 0)
		po->claims = NULL;
	return r;
}

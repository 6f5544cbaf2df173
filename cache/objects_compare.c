/* objects_compare.c - whether two decoded objects of one pod differ in what
 * a snapshot build reads from it (see kb_pod_same_build in objects.h). */
#include "cache/objects.h"

#include <string.h>

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return a == b || strcmp(a, b) == 0;
}

static bool labels_eq(const kb_labels *a, const kb_labels *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (!str_eq(a->v[i].key, b->v[i].key) || !str_eq(a->v[i].value, b->v[i].value))
			return false;
	return true;
}

static bool term_eq(const kb_selector_term *a, const kb_selector_term *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const kb_selector_req *x = &a->reqs[i], *y = &b->reqs[i];
		if (x->op != y->op || x->field != y->field || x->nvalues != y->nvalues ||
		    !str_eq(x->key, y->key))
			return false;
		for (uint32_t k = 0; k < x->nvalues; k++)
			if (!str_eq(x->values[k], y->values[k]))
				return false;
	}
	return true;
}

static bool spec_eq(const kb_pod_spec *a, const kb_pod_spec *b)
{
	if (a->nrequired != b->nrequired || a->npreferred != b->npreferred ||
	    a->ntolerations != b->ntolerations || a->nhost_ports != b->nhost_ports ||
	    a->gpu_milli != b->gpu_milli || !str_eq(a->gpu_models, b->gpu_models) ||
	    !labels_eq(&a->labels, &b->labels) || !labels_eq(&a->node_selector, &b->node_selector))
		return false;
	for (uint32_t i = 0; i < a->nrequired; i++)
		if (!term_eq(&a->required[i], &b->required[i]))
			return false;
	for (uint32_t i = 0; i < a->npreferred; i++)
		if (a->preferred[i].weight != b->preferred[i].weight ||
		    !term_eq(&a->preferred[i].term, &b->preferred[i].term))
			return false;
	for (uint32_t i = 0; i < a->ntolerations; i++) {
		const kb_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (x->exists != y->exists || x->effect != y->effect || !str_eq(x->key, y->key) ||
		    !str_eq(x->value, y->value))
			return false;
	}
	for (uint32_t i = 0; i < a->nhost_ports; i++) {
		const kb_host_port *x = &a->host_ports[i], *y = &b->host_ports[i];
		if (x->port != y->port || x->proto != y->proto || !str_eq(x->ip, y->ip))
			return false;
	}
	return true;
}

bool kb_pod_same_build(const kb_object *a, const kb_object *b)
{
	if (a->kind != KB_KIND_POD || b->kind != KB_KIND_POD)
		return false;
	const kb_meta *ma = &a->meta, *mb = &b->meta;
	const kb_pod_obj *pa = &a->u.pod, *pb = &b->u.pod;
	return str_eq(ma->key, mb->key) && str_eq(ma->uid, mb->uid) && str_eq(ma->ns, mb->ns) &&
	       str_eq(ma->name, mb->name) && ma->creation_ms == mb->creation_ms &&
	       labels_eq(&ma->labels, &mb->labels) &&
	       str_eq(pa->scheduler_name, pb->scheduler_name) &&
	       pa->has_priority == pb->has_priority && pa->priority == pb->priority &&
	       str_eq(pa->priority_class_name, pb->priority_class_name) &&
	       str_eq(pa->group_name, pb->group_name) && str_eq(pa->group_key, pb->group_key) &&
	       memcmp(&pa->req, &pb->req, sizeof(pa->req)) == 0 &&
	       pa->best_effort == pb->best_effort && pa->sim_arrival_ms == pb->sim_arrival_ms &&
	       pa->sim_duration_ms == pb->sim_duration_ms && spec_eq(&pa->spec, &pb->spec);
}

bool kb_podgroup_same_build(const kb_object *a, const kb_object *b)
{
	if (a->kind != KB_KIND_PODGROUP || b->kind != KB_KIND_PODGROUP)
		return false;
	const kb_meta *ma = &a->meta, *mb = &b->meta;
	const kb_podgroup_obj *ga = &a->u.podgroup, *gb = &b->u.podgroup;
	return str_eq(ma->key, mb->key) && str_eq(ma->uid, mb->uid) && str_eq(ma->ns, mb->ns) &&
	       str_eq(ma->name, mb->name) && ma->creation_ms == mb->creation_ms &&
	       ga->flavor == gb->flavor && ga->min_member == gb->min_member &&
	       str_eq(ga->queue, gb->queue) &&
	       str_eq(ga->priority_class_name, gb->priority_class_name) &&
	       ga->has_min_resources == gb->has_min_resources &&
	       memcmp(&ga->min_resources, &gb->min_resources, sizeof(ga->min_resources)) == 0;
}

static bool taints_eq(const kb_node_obj *a, const kb_node_obj *b)
{
	if (a->ntaints != b->ntaints)
		return false;
	for (uint32_t i = 0; i < a->ntaints; i++) {
		const kb_taint *x = &a->taints[i], *y = &b->taints[i];
		if (x->effect != y->effect || !str_eq(x->key, y->key) || !str_eq(x->value, y->value))
			return false;
	}
	return true;
}

bool kb_node_same_build(const kb_object *a, const kb_object *b)
{
	if (a->kind != KB_KIND_NODE || b->kind != KB_KIND_NODE)
		return false;
	const kb_node_obj *na = &a->u.node, *nb = &b->u.node;
	if (!str_eq(a->meta.name, b->meta.name) || a->meta.deleting != b->meta.deleting ||
	    !labels_eq(&a->meta.labels, &b->meta.labels) || na->unschedulable != nb->unschedulable ||
	    na->ready != nb->ready || na->ngpus != nb->ngpus || !str_eq(na->gpu_model, nb->gpu_model) ||
	    memcmp(&na->allocatable, &nb->allocatable, sizeof(na->allocatable)) != 0 ||
	    !taints_eq(na, nb))
		return false;
	if (!na->gpu_group || !nb->gpu_group)
		return na->gpu_group == nb->gpu_group;
	return na->ngpus <= 0 || memcmp(na->gpu_group, nb->gpu_group, (size_t)na->ngpus) == 0;
}

/* objects_compare.c - whether two decoded versions of one pod, PodGroup or
 * node differ in what a snapshot build reads from it (see kb_pod_same_build
 * and its neighbours in objects.h). */
#include "cache/objects.h"

#include <string.h>

#include "api/pod_spec.h"

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return a == b || strcmp(a, b) == 0;
}

bool kb_topology_req_equal(const kb_topology_req *a, const kb_topology_req *b)
{
	if (!a->set || !b->set)
		return a->set == b->set;
	return str_eq(a->required, b->required) && str_eq(a->preferred, b->preferred) &&
	       str_eq(a->levels, b->levels) && a->volcano_tier == b->volcano_tier &&
	       a->volcano_hard == b->volcano_hard;
}

static bool claims_eq(const kb_pod_obj *a, const kb_pod_obj *b)
{
	if (a->nclaims != b->nclaims)
		return false;
	for (uint32_t i = 0; i < a->nclaims; i++)
		if (a->claims[i].ephemeral != b->claims[i].ephemeral ||
		    !str_eq(a->claims[i].name, b->claims[i].name))
			return false;
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
	       ma->undecodable == mb->undecodable && kb_labels_equal(&ma->labels, &mb->labels) &&
	       str_eq(pa->scheduler_name, pb->scheduler_name) &&
	       pa->has_priority == pb->has_priority && pa->priority == pb->priority &&
	       str_eq(pa->priority_class_name, pb->priority_class_name) &&
	       str_eq(pa->group_name, pb->group_name) && str_eq(pa->group_key, pb->group_key) &&
	       pa->group_via == pb->group_via && str_eq(pa->workload_key, pb->workload_key) &&
	       str_eq(pa->workload_pod_group, pb->workload_pod_group) &&
	       pa->preemption_policy == pb->preemption_policy &&
	       pa->preemptable == pb->preemptable && str_eq(pa->task_role, pb->task_role) &&
	       str_eq(pa->queue_name, pb->queue_name) && pa->gated == pb->gated && pa->held == pb->held &&
	       memcmp(&pa->req, &pb->req, sizeof(pa->req)) == 0 &&
	       pa->best_effort == pb->best_effort && pa->sim_arrival_ms == pb->sim_arrival_ms &&
	       pa->sim_duration_ms == pb->sim_duration_ms &&
	       kb_labels_equal(&pa->spec.labels, &pb->spec.labels) &&
	       kb_topology_req_equal(&pa->topology, &pb->topology) && claims_eq(pa, pb) &&
	       kb_pod_spec_same_placement(&pa->spec, &pb->spec);
}

static bool roles_eq(const kb_podgroup_obj *a, const kb_podgroup_obj *b)
{
	if (a->nmin_task_member != b->nmin_task_member)
		return false;
	for (uint32_t i = 0; i < a->nmin_task_member; i++)
		if (a->min_task_member[i].min != b->min_task_member[i].min ||
		    !str_eq(a->min_task_member[i].role, b->min_task_member[i].role))
			return false;
	return true;
}

bool kb_podgroup_same_build(const kb_object *a, const kb_object *b)
{
	if (a->kind != KB_KIND_PODGROUP || b->kind != KB_KIND_PODGROUP)
		return false;
	const kb_meta *ma = &a->meta, *mb = &b->meta;
	const kb_podgroup_obj *ga = &a->u.podgroup, *gb = &b->u.podgroup;
	return str_eq(ma->key, mb->key) && str_eq(ma->uid, mb->uid) && str_eq(ma->ns, mb->ns) &&
	       str_eq(ma->name, mb->name) && ma->creation_ms == mb->creation_ms &&
	       ma->undecodable == mb->undecodable && ga->flavor == gb->flavor && ga->min_member == gb->min_member &&
	       str_eq(ga->queue, gb->queue) &&
	       str_eq(ga->priority_class_name, gb->priority_class_name) &&
	       ga->has_min_resources == gb->has_min_resources &&
	       ga->volcano_job == gb->volcano_job &&
	       memcmp(&ga->min_resources, &gb->min_resources, sizeof(ga->min_resources)) == 0 &&
	       roles_eq(ga, gb) && kb_topology_req_equal(&ga->topology, &gb->topology);
}

static bool taints_eq(const kb_node_obj *a, const kb_node_obj *b)
{
	if (a->ntaints != b->ntaints)
		return false;
	for (uint32_t i = 0; i < a->ntaints; i++) {
		const kb_taint *x = &a->taints[i], *y = &b->taints[i];
		if (x->effect != y->effect || !str_eq(x->key, y->key) ||
		    !str_eq(x->value, y->value))
			return false;
	}
	return true;
}

/* The same vGPU devices offered (the handshake's time, which changes each
 * time the device plugin reports, is not read). */
static bool vgpu_eq(const kb_node_obj *a, const kb_node_obj *b)
{
	if (a->nvgpu != b->nvgpu || !str_eq(a->vgpu_off, b->vgpu_off))
		return false;
	for (uint32_t i = 0; i < a->nvgpu; i++)
		if (!str_eq(a->vgpu[i].uuid, b->vgpu[i].uuid) || a->vgpu[i].count != b->vgpu[i].count ||
		    a->vgpu[i].mem != b->vgpu[i].mem)
			return false;
	return true;
}

bool kb_node_same_build(const kb_object *a, const kb_object *b)
{
	if (a->kind != KB_KIND_NODE || b->kind != KB_KIND_NODE)
		return false;
	const kb_node_obj *na = &a->u.node, *nb = &b->u.node;
	if (!str_eq(a->meta.name, b->meta.name) || a->meta.deleting != b->meta.deleting ||
	    a->meta.undecodable != b->meta.undecodable ||
	    !kb_labels_equal(&a->meta.labels, &b->meta.labels) ||
	    na->unschedulable != nb->unschedulable || na->ready != nb->ready ||
	    na->ngpus != nb->ngpus || na->gpu_replicas != nb->gpu_replicas ||
	    na->gpu_sharing != nb->gpu_sharing || na->gpushare_count != nb->gpushare_count ||
	    !str_eq(na->gpu_model, nb->gpu_model) ||
	    memcmp(&na->allocatable, &nb->allocatable, sizeof(na->allocatable)) != 0 ||
	    na->nextra != nb->nextra ||
	    (na->nextra && memcmp(na->extra, nb->extra, na->nextra * sizeof(*na->extra)) != 0) ||
	    !taints_eq(na, nb) || !vgpu_eq(na, nb))
		return false;
	if (!na->gpu_group || !nb->gpu_group)
		return na->gpu_group == nb->gpu_group;
	return na->ngpus <= 0 || memcmp(na->gpu_group, nb->gpu_group, (size_t)na->ngpus) == 0;
}

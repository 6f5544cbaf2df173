/* pod_spec.c - see pod_spec.h. */
#include "api/pod_spec.h"

#include <string.h>

static bool str_equal(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool kb_labels_equal(const kb_labels *a, const kb_labels *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (!str_equal(a->v[i].key, b->v[i].key) || !str_equal(a->v[i].value, b->v[i].value))
			return false;
	return true;
}

static bool term_equal(const kb_selector_term *a, const kb_selector_term *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const kb_selector_req *x = &a->reqs[i], *y = &b->reqs[i];
		if (x->op != y->op || x->field != y->field || x->nvalues != y->nvalues ||
		    !str_equal(x->key, y->key))
			return false;
		for (uint32_t k = 0; k < x->nvalues; k++)
			if (!str_equal(x->values[k], y->values[k]))
				return false;
	}
	return true;
}

static bool selector_equal(const kb_label_selector *a, const kb_label_selector *b)
{
	kb_selector_term x = {a->reqs, a->n}, y = {b->reqs, b->n};
	return a->nothing == b->nothing && term_equal(&x, &y);
}

static bool affinity_terms_equal(const kb_pod_affinity_term *a, const kb_pod_affinity_term *b,
				 uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const kb_pod_affinity_term *x = &a[i], *y = &b[i];
		if (x->weight != y->weight || x->nnamespaces != y->nnamespaces ||
		    !str_equal(x->topology_key, y->topology_key) ||
		    !selector_equal(&x->selector, &y->selector) ||
		    !selector_equal(&x->ns_selector, &y->ns_selector))
			return false;
		for (uint32_t k = 0; k < x->nnamespaces; k++)
			if (!str_equal(x->namespaces[k], y->namespaces[k]))
				return false;
	}
	return true;
}

bool kb_pod_spec_same_topology(const kb_pod_spec *a, const kb_pod_spec *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	if (a->naffinity != b->naffinity || a->nanti_affinity != b->nanti_affinity ||
	    a->npref_affinity != b->npref_affinity ||
	    a->npref_anti_affinity != b->npref_anti_affinity || a->nspread != b->nspread ||
	    !affinity_terms_equal(a->affinity, b->affinity, a->naffinity) ||
	    !affinity_terms_equal(a->anti_affinity, b->anti_affinity, a->nanti_affinity) ||
	    !affinity_terms_equal(a->pref_affinity, b->pref_affinity, a->npref_affinity) ||
	    !affinity_terms_equal(a->pref_anti_affinity, b->pref_anti_affinity,
				  a->npref_anti_affinity))
		return false;
	for (uint32_t i = 0; i < a->nspread; i++) {
		const kb_spread_constraint *x = &a->spread[i], *y = &b->spread[i];
		if (x->max_skew != y->max_skew || x->min_domains != y->min_domains ||
		    x->schedule_anyway != y->schedule_anyway ||
		    x->honor_affinity != y->honor_affinity || x->honor_taints != y->honor_taints ||
		    !str_equal(x->topology_key, y->topology_key) ||
		    !selector_equal(&x->selector, &y->selector))
			return false;
	}
	return true;
}

bool kb_pod_spec_same_placement(const kb_pod_spec *a, const kb_pod_spec *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	if (a->nrequired != b->nrequired || a->npreferred != b->npreferred ||
	    a->ntolerations != b->ntolerations || a->nhost_ports != b->nhost_ports ||
	    a->gpu_milli != b->gpu_milli || !str_equal(a->gpu_models, b->gpu_models) ||
	    a->nspill != b->nspill || a->vgpu_number != b->vgpu_number ||
	    a->vgpu_mem != b->vgpu_mem || a->vgpu_pct != b->vgpu_pct ||
	    a->vgpu_cores != b->vgpu_cores || a->vgpu_containers != b->vgpu_containers ||
	    a->nvgpu_used != b->nvgpu_used ||
	    !kb_labels_equal(&a->node_selector, &b->node_selector) ||
	    !kb_pod_spec_same_topology(a, b))
		return false;
	for (uint32_t i = 0; i < a->nvgpu_used; i++)
		if (!str_equal(a->vgpu_used[i].uuid, b->vgpu_used[i].uuid) ||
		    a->vgpu_used[i].mem != b->vgpu_used[i].mem ||
		    a->vgpu_used[i].cores != b->vgpu_used[i].cores)
			return false;
	for (uint32_t i = 0; i < a->nspill; i++)
		if (a->spill[i].known != b->spill[i].known || a->spill[i].milli != b->spill[i].milli)
			return false;
	for (uint32_t i = 0; i < a->nrequired; i++)
		if (!term_equal(&a->required[i], &b->required[i]))
			return false;
	for (uint32_t i = 0; i < a->npreferred; i++)
		if (a->preferred[i].weight != b->preferred[i].weight ||
		    !term_equal(&a->preferred[i].term, &b->preferred[i].term))
			return false;
	for (uint32_t i = 0; i < a->ntolerations; i++) {
		const kb_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (x->exists != y->exists || x->effect != y->effect || !str_equal(x->key, y->key) ||
		    !str_equal(x->value, y->value))
			return false;
	}
	for (uint32_t i = 0; i < a->nhost_ports; i++) {
		const kb_host_port *x = &a->host_ports[i], *y = &b->host_ports[i];
		if (x->port != y->port || x->proto != y->proto || !str_equal(x->ip, y->ip))
			return false;
	}
	return true;
}

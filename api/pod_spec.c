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

bool kb_pod_spec_same_placement(const kb_pod_spec *a, const kb_pod_spec *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	if (a->nrequired != b->nrequired || a->npreferred != b->npreferred ||
	    a->ntolerations != b->ntolerations || a->nhost_ports != b->nhost_ports ||
	    a->gpu_milli != b->gpu_milli || !str_equal(a->gpu_models, b->gpu_models) ||
	    !kb_labels_equal(&a->node_selector, &b->node_selector))
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

/* fuzz_manifest.c - kb_object_decode must survive any document without
 * crashing or leaking: every failure has a code and a message, every
 * success a name, a key and sorted labels. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml_doc.h"
#include "cache/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_labels(const kb_labels *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		if (!l->v[i].key || !l->v[i].value)
			abort();
		if (i > 0 && strcmp(l->v[i - 1].key, l->v[i].key) >= 0)
			abort();
		if (kb_labels_get(l, l->v[i].key) != l->v[i].value)
			abort();
	}
}

static void check_object(const kb_object *o)
{
	if (!o->api_version || !o->kind_name || !o->meta.name || !o->meta.ns || !o->meta.key ||
	    !o->meta.uid || !o->meta.resource_version)
		abort();
	check_labels(&o->meta.labels);
	check_labels(&o->meta.annotations);
	if (o->kind == KB_KIND_POD) {
		const kb_pod_obj *p = &o->u.pod;
		if (!p->scheduler_name || p->req.q[KB_RES_PODS] != 1000 ||
		    kb_res_any_negative(&p->req) || p->sim_arrival_ms < 0 ||
		    p->sim_duration_ms < -1)
			abort();
		check_labels(&p->spec.node_selector);
	} else if (o->kind == KB_KIND_NODE) {
		const kb_node_obj *n = &o->u.node;
		if (n->ngpus < 0 || n->ngpus > KB_MAX_GPUS || kb_res_any_negative(&n->allocatable))
			abort();
		for (int32_t i = 0; n->gpu_group && i < n->ngpus; i++)
			if (n->gpu_group[i] >= n->ngpus)
				abort();
	} else if (o->kind == KB_KIND_QUEUE) {
		if (o->u.queue.weight < 1)
			abort();
	} else if (o->kind == KB_KIND_PODGROUP) {
		if (o->u.podgroup.min_member < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kb_yaml_file f;
	kb_err err = {0};
	if (kb_yaml_load_buffer((const char *)data, size, "fuzz.yaml", &f, &err) < 0) {
		kb_yaml_file_release(&f);
		return 0;
	}
	kb_resnames names;
	kb_resnames_init(&names);
	for (size_t i = 0; i < f.ndocs; i++) {
		kb_object *o = NULL;
		kb_err e = {0};
		/* Odd documents as API objects (no source), even ones as manifests. */
		int r = kb_object_decode(f.docs[i], i % 2 ? NULL : f.name, &names, &o, &e);
		if (r == 0) {
			if (!o)
				abort();
			check_object(o);
		} else if (o || e.code != r || e.msg[0] == '\0' ||
			   (r != -EINVAL && r != -ENOSPC && r != -ENOMEM)) {
			abort();
		}
		kb_object_free(o);
	}
	kb_yaml_file_release(&f);
	return 0;
}

/* decode_podgroup.c - a PodGroup's fields (see decode.h), kube-batch's,
 * volcano's or coscheduling's (under either of its two group names; see
 * dec_pg_flavor; Kubernetes' own is decode_workload.c's): minMember, minResources, queue and priorityClassName (not
 * in coscheduling's), volcano's minTaskMember, and the status a scheduler
 * last wrote. Another
 * apiVersion is an error. */
#include "cache/decode.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* status.phase as the scheduler reads it: Inqueue (volcano's Scheduling
 * too), Running, Unknown, Completed (coscheduling's Finished too), else
 * Pending (Pending, absent, Failed, anything else). */
static kb_pg_phase phase_of(const kb_yaml_node *ph)
{
	if (dec_scalar_is(ph, "Inqueue") || dec_scalar_is(ph, "Scheduling"))
		return KB_PG_INQUEUE;
	if (dec_scalar_is(ph, "Running"))
		return KB_PG_RUNNING;
	if (dec_scalar_is(ph, "Unknown"))
		return KB_PG_UNKNOWN;
	if (dec_scalar_is(ph, "Completed") || dec_scalar_is(ph, "Finished"))
		return KB_PG_COMPLETED;
	return KB_PG_PENDING;
}

/* What a scheduler last wrote into a PodGroup's status besides the phase
 * (kb_podgroup_obj): the counts and the Unschedulable condition's message.
 * Lenient: a malformed field is unknown, never an error. */
static int dec_written(dec_ctx *d, const kb_yaml_node *status, kb_podgroup_obj *pg)
{
	static const char *const names[] = {"running", "succeeded", "failed"};
	int32_t *counts[] = {&pg->running, &pg->succeeded, &pg->failed};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const kb_yaml_node *n = kb_yaml_get(status, names[i]);
		int64_t v;
		*counts[i] = kb_yaml_is_null(n)				       ? 0
			     : kb_yaml_int(n, &v) == 0 && v >= 0 && v <= INT32_MAX ? (int32_t)v
										    : -1;
	}
	const kb_yaml_node *conds = kb_yaml_get(status, "conditions");
	if (!conds || conds->kind != KB_YAML_SEQ)
		return 0;
	for (size_t i = 0; i < conds->n; i++) {
		const kb_yaml_node *c = conds->items[i];
		const kb_yaml_node *msg = kb_yaml_get(c, "message");
		if (!dec_scalar_is(kb_yaml_get(c, "type"), "Unschedulable") ||
		    !dec_scalar_is(kb_yaml_get(c, "status"), "True") || !dec_is_scalar(msg))
			continue;
		if (!(pg->unschedulable = kb_arena_strndup(d->a, msg->str, msg->len)))
			return dec_nomem(d);
		break;
	}
	return 0;
}

/* status: the phase, as read and as written, and what dec_written reads. */
static int dec_status(dec_ctx *d, const kb_yaml_node *status, kb_podgroup_obj *pg)
{
	const kb_yaml_node *ph = kb_yaml_get(status, "phase");
	if (ph && !dec_is_scalar(ph))
		return dec_fail(d, -EINVAL, ph, "status.phase", "expected a string, got %s",
				kb_yaml_kind_name(ph));
	int r;
	if ((r = dec_str_nonempty(d, ph, "status.phase", &pg->status_phase)) < 0 ||
	    (r = dec_written(d, status, pg)) < 0)
		return r;
	pg->phase = phase_of(ph);
	return 0;
}

static int cmp_role(const void *a, const void *b)
{
	return strcmp(((const kb_role_min *)a)->role, ((const kb_role_min *)b)->role);
}

/* volcano's spec.minTaskMember: a map of task role to a count >= 0. The
 * roles are sorted (so lookups bisect); a role the map names twice is
 * refused by the YAML reader already. */
static int dec_min_task_member(dec_ctx *d, const kb_yaml_node *spec, kb_podgroup_obj *pg)
{
	const kb_yaml_node *m;
	int r = dec_map(d, kb_yaml_get(spec, "minTaskMember"), "spec.minTaskMember", &m);
	if (r < 0 || !m || m->n == 0)
		return r;
	if (m->n > KB_MAX_ROLES)
		return dec_fail(d, -EINVAL, m, "spec.minTaskMember",
				"too many task roles (%zu, at most %d)", m->n, KB_MAX_ROLES);
	kb_role_min *v = kb_arena_calloc(d->a, m->n, sizeof(*v));
	if (!v)
		return dec_nomem(d);
	for (size_t i = 0; i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		char path[DEC_PATH_LEN];
		dec_path(path, "spec.minTaskMember.%s", p->key->str);
		int64_t n = 0;
		if ((r = dec_int(d, p->value, path, 0, INT32_MAX, &n, NULL)) < 0)
			return r;
		if (!(v[i].role = kb_arena_strndup(d->a, p->key->str, p->key->len)))
			return dec_nomem(d);
		v[i].min = (int32_t)n;
	}
	qsort(v, m->n, sizeof(*v), cmp_role);
	pg->min_task_member = v;
	pg->nmin_task_member = (uint32_t)m->n;
	return 0;
}

/* One item of metadata.ownerReferences: the controlling owner's apiVersion
 * sets pg->volcano_job. Items that are not the controller are not read. */
static int dec_owner(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i, void *ctx)
{
	(void)i;
	kb_podgroup_obj *pg = ctx;
	bool controller = false;
	const char *api = NULL;
	char sub[DEC_PATH_LEN];
	int r;
	dec_path(sub, "%s.controller", path);
	if ((r = dec_bool(d, kb_yaml_get(item, "controller"), sub, &controller)) < 0)
		return r;
	if (!controller)
		return 0;
	dec_path(sub, "%s.apiVersion", path);
	if ((r = dec_str(d, kb_yaml_get(item, "apiVersion"), sub, &api)) < 0)
		return r;
	pg->volcano_job = api && strncmp(api, "batch.volcano.sh/", 17) == 0;
	return 0;
}

/* metadata.ownerReferences: which controller made the group. */
static int dec_controller_owner(dec_ctx *d, kb_podgroup_obj *pg)
{
	const kb_yaml_node *meta = kb_yaml_get(d->root, "metadata"), *refs;
	int r;
	if ((r = dec_seq(d, kb_yaml_get(meta, "ownerReferences"), "metadata.ownerReferences",
			 &refs)) < 0)
		return r;
	return dec_each_map(d, refs, "metadata.ownerReferences", DEC_NULL_ITEM_SKIPPED, dec_owner,
			    pg);
}

int dec_podgroup(dec_ctx *d)
{
	kb_podgroup_obj *pg = &d->o->u.podgroup;
	const kb_yaml_node *av = kb_yaml_get(d->root, "apiVersion");
	pg->flavor = dec_pg_flavor(d->o->api_version);
	if (pg->flavor == KB_PG_NONE)
		return dec_fail(d, -EINVAL, av, "apiVersion",
				"unknown PodGroup API \"%.*s\" (want "
				"scheduling.incubator.k8s.io/v1alpha1, "
				"scheduling.volcano.sh/v1beta1, scheduling.x-k8s.io/v1alpha1 or "
				"scheduling.k8s.io/v1beta1, v1alpha3, v1alpha2)",
				DEC_QUOTE_MAX, d->o->api_version);
	if (pg->flavor == KB_PG_K8S)
		return dec_k8s_podgroup(d);
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	const kb_yaml_node *mm = kb_yaml_get(spec, "minMember");
	int64_t v = 0;
	if ((r = dec_int(d, mm, "spec.minMember", INT32_MIN, INT32_MAX, &v, NULL)) < 0)
		return r;
	if (v < 0)
		return dec_fail(d, -EINVAL, mm, "spec.minMember", "must be >= 0, got %lld",
				(long long)v);
	pg->min_member = (int32_t)v;

	uint32_t mask;
	/* Spilled names (api/resource.h) are left out of the minimum:
	 * enqueue weighs names with a slot, placement checks every name. */
	kb_res_spill spilled = {.n = 0};
	const kb_yaml_node *mr = kb_yaml_get(spec, "minResources");
	if ((r = dec_reslist(d, mr, "spec.minResources", &pg->min_resources, &mask, &spilled)) <
	    0)
		return r;
	pg->has_min_resources = !kb_yaml_is_null(mr);

	if (pg->flavor != KB_PG_COSCHED &&
	    (r = dec_str_nonempty(d, kb_yaml_get(spec, "queue"), "spec.queue", &pg->queue)) < 0)
		return r;
	if (!pg->queue)
		pg->queue = dec_annotation_nonempty(d, KB_ANN_VOLCANO_QUEUE);
	if (pg->flavor != KB_PG_COSCHED) {
		if ((r = dec_str_nonempty(d, kb_yaml_get(spec, "priorityClassName"),
					  "spec.priorityClassName", &pg->priority_class_name)) < 0 ||
		    (r = dec_min_task_member(d, spec, pg)) < 0)
			return r;
	}
	if ((r = dec_controller_owner(d, pg)) < 0 || (r = dec_topology(d, spec, &pg->topology)) < 0)
		return r;
	return dec_status(d, status, pg);
}

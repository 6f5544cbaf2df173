/* decode_workload.c - Kubernetes' own gang API (KEP-4671, group
 * scheduling.k8s.io) as kube-batchd reads it (see decode.h):
 *
 *  - v1.35, scheduling.k8s.io/v1alpha1: a Workload lists its gangs in
 *    spec.podGroups[] {name, policy: {gang: {minCount}} | {basic: {}}}; a
 *    pod names one with spec.workloadRef {name, podGroup,
 *    podGroupReplicaKey}. Each (workload, podGroup, replicaKey) is a gang
 *    of its own (cache/cluster.c makes the job); the Workload has no status.
 *  - v1.36 (v1alpha2), v1.37 (v1alpha3, v1beta1): a runtime PodGroup object
 *    per gang, spec.schedulingPolicy {gang: {minCount}} | {basic: {}}, made
 *    by a controller from a Workload's podGroupTemplates; a pod names it
 *    with spec.schedulingGroup.podGroupName. Its status holds only
 *    conditions: PodGroupScheduled (v1alpha2) or PodGroupInitiallyScheduled
 *    (v1alpha3, v1beta1), which the scheduler writes (kube/writers.c).
 *
 * Mapping: minCount is minMember; basic is minMember 1 (each pod is placed
 * as it fits, none waits for another). The queue is the annotation
 * KB_ANN_VOLCANO_QUEUE of the Workload or PodGroup (the API has no queue),
 * else the pod's, else the namespace mapping, else the default queue.
 * priorityClassName (v1alpha2 and later) is read as a PodGroup's.
 * Not read: v1alpha3's parentCompositePodGroupName (composite groups are
 * not honoured: each PodGroup is a gang by itself), topology constraints,
 * resource claims, disruption mode.
 *
 * Errors: -EINVAL naming the field (a policy with neither or both of gang
 * and basic, a negative or non-integer minCount, a podGroup without a
 * name or named twice, a workloadRef without name or podGroup),
 * -ENOMEM. Cost: O(size of the document).
 */
#include "cache/decode.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* At most this many podGroups in a Workload (upstream allows 8). */
#define MAX_WORKLOAD_GROUPS 64

/* A scheduling policy at path ({gang: {minCount}} or {basic: {}}, exactly
 * one): *ret_min the gang's minCount, or 1 for basic. */
static int dec_policy(dec_ctx *d, const kb_yaml_node *pol, const char *path, bool *ret_basic,
		      int32_t *ret_min)
{
	const kb_yaml_node *m, *gang, *basic;
	char sub[DEC_PATH_LEN];
	int r;
	if ((r = dec_map(d, pol, path, &m)) < 0)
		return r;
	if (!m)
		return dec_fail(d, -EINVAL, pol, path, "required (gang or basic)");
	dec_path(sub, "%s.gang", path);
	if ((r = dec_map(d, kb_yaml_get(m, "gang"), sub, &gang)) < 0)
		return r;
	basic = kb_yaml_get(m, "basic");
	bool has_basic = !kb_yaml_is_null(basic);
	if (has_basic && basic->kind != KB_YAML_MAP)
		return dec_fail(d, -EINVAL, basic, path, "basic: expected a mapping, got %s",
				kb_yaml_kind_name(basic));
	if (!gang == !has_basic)
		return dec_fail(d, -EINVAL, pol, path, "exactly one of gang and basic, got %s",
				gang ? "both" : "neither");
	*ret_basic = has_basic;
	if (has_basic) {
		*ret_min = 1;
		return 0;
	}
	const kb_yaml_node *mc = kb_yaml_get(gang, "minCount");
	dec_path(sub, "%s.gang.minCount", path);
	if (kb_yaml_is_null(mc))
		return dec_fail(d, -EINVAL, gang, sub, "required");
	int64_t v = 0;
	if ((r = dec_int(d, mc, sub, INT32_MIN, INT32_MAX, &v, NULL)) < 0)
		return r;
	if (v < 0)
		return dec_fail(d, -EINVAL, mc, sub, "must be >= 0, got %lld", (long long)v);
	*ret_min = (int32_t)v;
	return 0;
}

/* ---- v1alpha1 Workload ---------------------------------------------------------- */

static int dec_workload_group(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i,
			      void *ctx)
{
	kb_workload_obj *w = ctx;
	kb_workload_group *g = (kb_workload_group *)&w->groups[w->ngroups];
	char sub[DEC_PATH_LEN];
	int r;
	(void)i;
	dec_path(sub, "%s.name", path);
	const kb_yaml_node *name = kb_yaml_get(item, "name");
	if ((r = dec_str_nonempty(d, name, sub, &g->name)) < 0)
		return r;
	if (!g->name)
		return dec_fail(d, -EINVAL, item, sub, "required");
	for (uint32_t k = 0; k < w->ngroups; k++)
		if (strcmp(w->groups[k].name, g->name) == 0)
			return dec_fail(d, -EINVAL, name, sub, "podGroup \"%.*s\" named twice",
					DEC_QUOTE_MAX, g->name);
	dec_path(sub, "%s.policy", path);
	if ((r = dec_policy(d, kb_yaml_get(item, "policy"), sub, &g->basic, &g->min_count)) < 0)
		return r;
	w->ngroups++;
	return 0;
}

int dec_workload(dec_ctx *d)
{
	kb_workload_obj *w = &d->o->u.workload;
	const kb_yaml_node *spec, *groups;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_seq(d, kb_yaml_get(spec, "podGroups"), "spec.podGroups", &groups)) < 0)
		return r;
	size_t n = groups ? groups->n : 0;
	if (n > MAX_WORKLOAD_GROUPS)
		return dec_fail(d, -EINVAL, groups, "spec.podGroups",
				"too many podGroups (%zu, at most %d)", n, MAX_WORKLOAD_GROUPS);
	if (n > 0) {
		w->groups = kb_arena_calloc(d->a, n, sizeof(kb_workload_group));
		if (!w->groups)
			return dec_nomem(d);
		if ((r = dec_each_map(d, groups, "spec.podGroups", DEC_NULL_ITEM_SKIPPED,
				      dec_workload_group, w)) < 0)
			return r;
	}
	w->queue = dec_annotation_nonempty(d, KB_ANN_VOLCANO_QUEUE);
	return 0;
}

/* ---- v1alpha2, v1alpha3, v1beta1 PodGroup --------------------------------------- */

/* The condition the scheduler writes: its type in this apiVersion. */
const char *kb_k8s_podgroup_condition(const char *api_version)
{
	return strcmp(api_version, "scheduling.k8s.io/v1alpha2") == 0 ? "PodGroupScheduled"
								      : "PodGroupInitiallyScheduled";
}

/* status.conditions: the scheduling condition True is a placed gang
 * (phase Running; upstream never turns it back), False is what the
 * scheduler last said (its message kept, so a restarted daemon does not
 * write it again). Lenient: a malformed item is skipped. 0 or -ENOMEM. */
static int dec_k8s_status(dec_ctx *d, const kb_yaml_node *status, kb_podgroup_obj *pg)
{
	const char *type = kb_k8s_podgroup_condition(d->o->api_version);
	const kb_yaml_node *conds = kb_yaml_get(status, "conditions");
	pg->phase = KB_PG_INQUEUE; /* no admission step in this API */
	if (!conds || conds->kind != KB_YAML_SEQ)
		return 0;
	for (size_t i = 0; i < conds->n; i++) {
		const kb_yaml_node *c = conds->items[i];
		if (!dec_scalar_is(kb_yaml_get(c, "type"), type))
			continue;
		const kb_yaml_node *st = kb_yaml_get(c, "status"), *msg = kb_yaml_get(c, "message");
		if (dec_scalar_is(st, "True")) {
			pg->phase = KB_PG_RUNNING;
			pg->status_phase = "Scheduled";
		} else if (dec_scalar_is(st, "False")) {
			pg->status_phase = "Unschedulable";
			if (dec_is_scalar(msg) &&
			    !(pg->unschedulable = kb_arena_strndup(d->a, msg->str, msg->len)))
				return dec_nomem(d);
		}
		break;
	}
	if (pg->status_phase && !(pg->status_phase = kb_arena_strdup(d->a, pg->status_phase)))
		return dec_nomem(d);
	return 0;
}

int dec_k8s_podgroup(dec_ctx *d)
{
	kb_podgroup_obj *pg = &d->o->u.podgroup;
	const kb_yaml_node *spec, *status;
	bool basic = false;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;
	if (!spec)
		return dec_fail(d, -EINVAL, d->root, "spec", "required");
	if ((r = dec_policy(d, kb_yaml_get(spec, "schedulingPolicy"), "spec.schedulingPolicy",
			    &basic, &pg->min_member)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(spec, "priorityClassName"),
				  "spec.priorityClassName", &pg->priority_class_name)) < 0)
		return r;
	pg->queue = dec_annotation_nonempty(d, KB_ANN_VOLCANO_QUEUE);
	return dec_k8s_status(d, status, pg);
}

/* ---- the pod's side --------------------------------------------------------------- */

/* spec.workloadRef (v1.35): name and podGroup required, podGroupReplicaKey
 * optional. */
static int dec_workload_ref(dec_ctx *d, const kb_yaml_node *ref, kb_pod_obj *po)
{
	const char *wl = NULL, *grp = NULL, *rk = NULL;
	const char *ns = d->o->meta.ns;
	int r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(ref, "name"), "spec.workloadRef.name", &wl)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(ref, "podGroup"), "spec.workloadRef.podGroup",
				  &grp)) < 0 ||
	    (r = dec_str_nonempty(d, kb_yaml_get(ref, "podGroupReplicaKey"),
				  "spec.workloadRef.podGroupReplicaKey", &rk)) < 0)
		return r;
	if (!wl)
		return dec_fail(d, -EINVAL, ref, "spec.workloadRef.name", "required");
	if (!grp)
		return dec_fail(d, -EINVAL, ref, "spec.workloadRef.podGroup", "required");
	po->group_via = KB_GROUP_WORKLOAD_REF;
	po->workload_pod_group = grp;
	po->group_name = rk ? kb_arena_printf(d->a, "%s/%s/%s", wl, grp, rk)
			    : kb_arena_printf(d->a, "%s/%s", wl, grp);
	po->group_key = po->group_name ? kb_arena_printf(d->a, "%s/%s", ns, po->group_name) : NULL;
	po->workload_key = kb_arena_printf(d->a, "%s/%s", ns, wl);
	if (!po->group_name || !po->group_key || !po->workload_key)
		return dec_nomem(d);
	return 0;
}

int dec_pod_k8s_group(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po)
{
	const kb_yaml_node *sg, *ref;
	const char *name = NULL;
	int r;
	if ((r = dec_map(d, kb_yaml_get(spec, "schedulingGroup"), "spec.schedulingGroup", &sg)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(spec, "workloadRef"), "spec.workloadRef", &ref)) < 0)
		return r;
	if (sg && (r = dec_str_nonempty(d, kb_yaml_get(sg, "podGroupName"),
					"spec.schedulingGroup.podGroupName", &name)) < 0)
		return r;
	if (name) {
		po->group_via = KB_GROUP_SCHEDULING_GROUP;
		po->group_name = name;
		if (!(po->group_key = kb_arena_printf(d->a, "%s/%s", d->o->meta.ns, name)))
			return dec_nomem(d);
		return 0;
	}
	return ref ? dec_workload_ref(d, ref, po) : 0;
}

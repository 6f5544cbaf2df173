/* decode_queue.c - a Queue's fields (see decode.h), kube-batch's or
 * volcano's: weight and capability, and volcano's guarantee, reclaimable,
 * parent and status.state. */
#include "cache/decode.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

/* What only volcano's Queue has. */
static int dec_volcano(dec_ctx *d, const kb_yaml_node *spec, const kb_yaml_node *status,
		       kb_queue_obj *q)
{
	const kb_yaml_node *g;
	uint32_t gmask;
	int r;
	if ((r = dec_map(d, kb_yaml_get(spec, "guarantee"), "spec.guarantee", &g)) < 0 ||
	    (r = dec_reslist(d, kb_yaml_get(g, "resource"), "spec.guarantee.resource",
			     &q->guarantee, &gmask, NULL)) < 0)
		return r;
	if ((r = dec_bool(d, kb_yaml_get(spec, "reclaimable"), "spec.reclaimable",
			  &q->reclaimable)) < 0)
		return r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(spec, "parent"), "spec.parent", &q->parent)) < 0)
		return r;
	const kb_yaml_node *st = kb_yaml_get(status, "state");
	if (st && !kb_yaml_is_null(st) && !dec_is_scalar(st))
		return dec_fail(d, -EINVAL, st, "status.state", "expected a string, got %s",
				kb_yaml_kind_name(st));
	if (dec_scalar_is(st, "Closed"))
		q->state = KB_QUEUE_CLOSED;
	else if (dec_scalar_is(st, "Closing"))
		q->state = KB_QUEUE_CLOSING;
	/* Open, Unknown or absent: open */
	q->status.state_set = st && !kb_yaml_is_null(st);
	q->status.state = q->state;
	/* What volcano counted may name spilled names, which no queue
	 * accounts (api/resource.h): read and left out. */
	kb_res_spill spilled = {.n = 0};
	return dec_reslist(d, kb_yaml_get(status, "allocated"), "status.allocated",
			   &q->status.allocated, &q->status.allocated_mask, &spilled);
}

/* The PodGroup counts of status, both flavors' (what the scheduler wrote
 * last; kube/queue_status.h compares them before writing again). */
static int dec_status_counts(dec_ctx *d, const kb_yaml_node *status, kb_queue_status_obj *st)
{
	static const char *const names[] = {"unknown", "pending", "running", "inqueue", "completed"};
	int32_t *dst[] = {&st->unknown, &st->pending, &st->running, &st->inqueue, &st->completed};
	char field[32];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int64_t v = 0;
		(void)snprintf(field, sizeof(field), "status.%s", names[i]);
		int r = dec_int(d, kb_yaml_get(status, names[i]), field, 0, INT32_MAX, &v, NULL);
		if (r < 0)
			return r;
		*dst[i] = (int32_t)v;
	}
	return 0;
}

int dec_queue(dec_ctx *d)
{
	kb_queue_obj *q = &d->o->u.queue;
	const kb_yaml_node *av = kb_yaml_get(d->root, "apiVersion");
	q->flavor = dec_pg_flavor(d->o->api_version);
	if (q->flavor != KB_PG_KUBE_BATCH && q->flavor != KB_PG_VOLCANO)
		return dec_fail(d, -EINVAL, av, "apiVersion",
				"unknown Queue API \"%.*s\" (want "
				"scheduling.incubator.k8s.io/v1alpha1 or "
				"scheduling.volcano.sh/v1beta1)",
				DEC_QUOTE_MAX, d->o->api_version);
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	const kb_yaml_node *wn = kb_yaml_get(spec, "weight");
	int64_t w = 1;
	if ((r = dec_int(d, wn, "spec.weight", INT32_MIN, INT32_MAX, &w, NULL)) < 0)
		return r;
	if (w == 0 && q->flavor == KB_PG_VOLCANO)
		w = 1;
	if (w < 1)
		return dec_fail(d, -EINVAL, wn, "spec.weight", "must be >= 1, got %lld",
				(long long)w);
	q->weight = (int32_t)w;
	if ((r = dec_reslist(d, kb_yaml_get(spec, "capability"), "spec.capability",
			     &q->capability, &q->capability_mask, NULL)) < 0)
		return r;
	q->reclaimable = true;
	q->state = KB_QUEUE_OPEN;
	if ((r = dec_status_counts(d, status, &q->status)) < 0)
		return r;
	if (q->flavor != KB_PG_VOLCANO)
		return 0;
	return dec_volcano(d, spec, status, q);
}

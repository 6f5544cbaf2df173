/* queue_status.c - a Queue's status: wish, comparison, patch (see queue_status.h). */
#include "kube/queue_status.h"

#include <string.h>

#include "api/quantity.h"

const char *kb_queue_state_name(kb_queue_state s)
{
	switch (s) {
	case KB_QUEUE_CLOSED:
		return "Closed";
	case KB_QUEUE_CLOSING:
		return "Closing";
	default:
		return "Open";
	}
}

void kb_queue_report_make(kb_pg_flavor flavor, const int32_t counts[5], kb_queue_state state,
			  const kb_res *allocated, int nres, const kb_queue_status_obj *cached,
			  kb_queue_report *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->state = state;
	ret->pending = counts[KB_PG_PENDING];
	ret->inqueue = counts[KB_PG_INQUEUE];
	ret->running = counts[KB_PG_RUNNING];
	ret->unknown = counts[KB_PG_UNKNOWN];
	ret->completed = counts[KB_PG_COMPLETED];
	if (flavor != KB_PG_VOLCANO) {
		ret->pending += ret->inqueue;
		ret->inqueue = ret->completed = 0;
		return;
	}
	uint32_t mask = (1u << KB_RES_CPU) | (1u << KB_RES_MEMORY);
	for (int i = KB_RES_NFIXED; i < nres && i < KB_RES_MAX; i++)
		if (allocated->q[i] != 0)
			mask |= 1u << i;
	if (cached)
		mask |= cached->allocated_mask;
	mask &= ~(1u << KB_RES_PODS);
	ret->allocated_mask = mask;
	for (int i = 0; i < KB_RES_MAX; i++)
		if (mask & (1u << i))
			ret->allocated.q[i] = allocated->q[i];
}

bool kb_queue_report_matches(kb_pg_flavor flavor, const kb_queue_report *want,
			     const kb_queue_status_obj *c)
{
	if (want->unknown != c->unknown || want->pending != c->pending ||
	    want->running != c->running)
		return false;
	if (flavor != KB_PG_VOLCANO)
		return true;
	if (!c->state_set || c->state != want->state || want->inqueue != c->inqueue ||
	    want->completed != c->completed)
		return false;
	/* Every key written must be there with the same quantity. */
	if ((want->allocated_mask & c->allocated_mask) != want->allocated_mask)
		return false;
	for (int i = 0; i < KB_RES_MAX; i++)
		if ((want->allocated_mask & (1u << i)) && want->allocated.q[i] != c->allocated.q[i])
			return false;
	return true;
}

bool kb_queue_report_eq(const kb_queue_report *a, const kb_queue_report *b)
{
	if (a->state != b->state || a->unknown != b->unknown || a->pending != b->pending ||
	    a->running != b->running || a->inqueue != b->inqueue ||
	    a->completed != b->completed || a->allocated_mask != b->allocated_mask)
		return false;
	for (int i = 0; i < KB_RES_MAX; i++)
		if (a->allocated.q[i] != b->allocated.q[i])
			return false;
	return true;
}

json_t *kb_queue_report_body(kb_pg_flavor flavor, const kb_queue_report *want,
			     const kb_resnames *rn)
{
	json_t *st = json_pack("{s:i, s:i, s:i}", "unknown", want->unknown, "pending", want->pending,
			       "running", want->running);
	if (!st)
		return NULL;
	if (flavor == KB_PG_VOLCANO) {
		/* The _new setters take the value's reference even when they fail. */
		json_t *alloc = json_object();
		int r = json_object_set_new(st, "allocated", alloc);
		if (r == 0)
			r = json_object_set_new(st, "state", json_string(kb_queue_state_name(want->state)));
		if (r == 0)
			r = json_object_set_new(st, "inqueue", json_integer(want->inqueue));
		if (r == 0)
			r = json_object_set_new(st, "completed", json_integer(want->completed));
		for (int i = 0; i < KB_RES_MAX && i < rn->n && r == 0; i++) {
			if (!(want->allocated_mask & (1u << i)))
				continue;
			char buf[KB_QUANTITY_BUFSZ];
			r = json_object_set_new(
				alloc, rn->name[i],
				json_string(kb_res_format_one(want->allocated.q[i], rn, i, buf)));
		}
		if (r != 0) {
			json_decref(st);
			return NULL;
		}
	}
	return json_pack("{s:o}", "status", st);
}

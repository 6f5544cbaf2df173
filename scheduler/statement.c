#include "scheduler/statement.h"

#include "scheduler/topology.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scheduler/podtopo.h"
#include "scheduler/volumes.h"

void kb_stmt_init(kb_statement *st, kb_session *ssn)
{
	st->ssn = ssn;
	st->ops = NULL;
	st->n = st->cap = 0;
}

static void fire(kb_session *ssn, kb_task *t, bool allocate)
{
	kb_podtopo_update(ssn, t, allocate ? 1 : -1);
	if (kb_volumes_update(ssn, t, allocate ? 1 : -1) < 0 && ssn->effect_errors++ == 0)
		kb_err_set(&ssn->first_effect_err, -ENOMEM,
			   "taking the volumes of \"%s\": out of memory", t->key);
	const kb_hook_list *hl = &ssn->hooks[KB_HOOK_EVENTS];
	for (uint32_t i = 0; i < hl->n; i++) {
		const kb_hook_entry *e = &hl->v[i];
		if (allocate && e->ops->on_allocate)
			e->ops->on_allocate(e->state, ssn, t);
		else if (!allocate && e->ops->on_deallocate)
			e->ops->on_deallocate(e->state, ssn, t);
	}
}

static void check_invariants(const kb_session *ssn)
{
#ifndef NDEBUG
	const kb_snapshot *s = ssn->snap_rw;
	if (s->ntasks + s->nnodes > 20000)
		return;
	char why[256];
	if (!kb_snapshot_check(s, why, sizeof(why))) {
		fprintf(stderr, "kube-batchd: snapshot invariant broken: %s\n", why);
		assert(!"snapshot invariant broken");
	}
	if (!kb_topo_check(ssn, why, sizeof(why))) {
		fprintf(stderr, "kube-batchd: network-domain index invariant broken: %s\n", why);
		assert(!"network-domain index invariant broken");
	}
#else
	(void)ssn;
#endif
}

/* Appends op, growing the array in the session arena. 0 or -ENOMEM. */
static int record(kb_statement *st, const kb_stmt_op *op)
{
	if (st->n == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 16;
		kb_stmt_op *ops = kb_arena_alloc(&st->ssn->arena, (size_t)cap * sizeof(*ops));
		if (!ops)
			return -ENOMEM;
		if (st->n)
			memcpy(ops, st->ops, (size_t)st->n * sizeof(*ops));
		st->ops = ops;
		st->cap = cap;
	}
	st->ops[st->n++] = *op;
	return 0;
}

static int place(kb_statement *st, uint32_t ti, uint32_t ni, kb_stmt_op_kind kind)
{
	kb_snapshot *s = st->ssn->snap_rw;
	kb_task *t = &s->tasks[ti];
	kb_stmt_op op = {.kind = kind, .task = ti, .prev_node = t->node, .prev_status = t->status};
	if (record(st, &op) < 0)
		return -ENOMEM;
	kb_snapshot_touch_task(s, ti);
	kb_topo_node_changing(st->ssn, (int32_t)ni);
	t->node = (int32_t)ni;
	kb_snapshot_set_task_status(s, ti, kind == KB_OP_ALLOCATE ? KB_TASK_ALLOCATED : KB_TASK_PIPELINED);
	kb_topo_node_changed(st->ssn, (int32_t)ni);
	fire(st->ssn, t, true);
	return 0;
}

int kb_stmt_allocate(kb_statement *st, uint32_t task, uint32_t node)
{
	return place(st, task, node, KB_OP_ALLOCATE);
}

int kb_stmt_pipeline(kb_statement *st, uint32_t task, uint32_t node)
{
	return place(st, task, node, KB_OP_PIPELINE);
}

int kb_stmt_evict(kb_statement *st, uint32_t ti, const char *reason)
{
	kb_snapshot *s = st->ssn->snap_rw;
	kb_task *t = &s->tasks[ti];
	kb_stmt_op op = {.kind = KB_OP_EVICT,
			 .task = ti,
			 .prev_node = t->node,
			 .prev_status = t->status,
			 .reason = reason};
	if (record(st, &op) < 0)
		return -ENOMEM;
	kb_topo_node_changing(st->ssn, t->node);
	kb_snapshot_set_task_status(s, ti, KB_TASK_RELEASING);
	kb_topo_node_changed(st->ssn, t->node);
	fire(st->ssn, t, false);
	return 0;
}

/* Undoes one operation (the ones after it that touch the same task must
 * be undone already). */
static void undo(kb_statement *st, const kb_stmt_op *op)
{
	kb_snapshot *s = st->ssn->snap_rw;
	kb_task *t = &s->tasks[op->task];
	int32_t ni = t->node;
	kb_topo_node_changing(st->ssn, ni);
	if (op->kind == KB_OP_EVICT) {
		kb_snapshot_set_task_status(s, op->task, op->prev_status);
		fire(st->ssn, t, true);
	} else {
		fire(st->ssn, t, false);
		kb_snapshot_set_task_status(s, op->task, op->prev_status);
		kb_snapshot_touch_task(s, op->task);
		t->node = op->prev_node;
	}
	kb_topo_node_changed(st->ssn, ni);
}

void kb_stmt_discard_to(kb_statement *st, uint32_t mark)
{
	for (uint32_t i = st->n; i-- > mark;)
		undo(st, &st->ops[i]);
	st->n = mark < st->n ? mark : st->n;
	check_invariants(st->ssn);
}

void kb_stmt_discard(kb_statement *st)
{
	kb_stmt_discard_to(st, 0);
	st->n = 0;
}

/* Whether op is an allocation that commit would hand to bind. */
static bool binds(const kb_session *ssn, const kb_stmt_op *op)
{
	const kb_task *t = &ssn->snap->tasks[op->task];
	return op->kind == KB_OP_ALLOCATE && t->status == KB_TASK_ALLOCATED &&
	       kb_job_ready(ssn, &ssn->snap->jobs[t->job]);
}

/* Job ji's allocations in st whose claims are not bound yet: their claims
 * to bind go to the effects (bind_volumes). Returns true when every one is
 * then bound (the simulator binds at once), false when the job must wait
 * (its pending reason says for what). */
static bool volumes_done(kb_statement *st, int32_t ji)
{
	kb_session *ssn = st->ssn;
	const kb_snapshot *s = ssn->snap;
	const kb_effects *fx = ssn->effects;
	bool done = true;
	const char *why = NULL;
	int32_t placed = 0;
	for (uint32_t i = 0; i < st->n; i++) {
		const kb_stmt_op *op = &st->ops[i];
		const kb_task *t = &s->tasks[op->task];
		if (t->job != ji || !binds(ssn, op))
			continue;
		placed++;
		if (kb_volumes_ready(ssn, t))
			continue;
		const kb_task_volumes *v = kb_task_vol(s, t);
		const int32_t *picks = kb_volumes_picks(ssn, t);
		int r = 0;
		if (v->nto_bind > 0 && picks && fx && fx->bind_volumes)
			r = fx->bind_volumes(ssn->effects_ctx, s, ssn->now_ms, t, &s->nodes[t->node], v,
					     picks);
		if (r < 0 && ssn->effect_errors++ == 0)
			kb_err_set(&ssn->first_effect_err, r, "binding the volumes of \"%s\" failed (errno %d)",
				   t->key, -r);
		if (r == 1)
			continue;
		done = false;
		if (!why)
			why = v->under_way ? v->under_way
					   : kb_session_printf(ssn, "binding the claims of \"%s\" on node \"%s\"",
							       t->key, s->nodes[t->node].name);
	}
	if (!done) {
		kb_job_outcome *out = kb_job_out(ssn, &s->jobs[ji]);
		out->fit_tasks = placed;
		out->pending_reason = kb_session_printf(
			ssn, "waiting for its pods' volumes before binding any: %s",
			why ? why : "claims not bound yet");
		if (!out->pending_reason)
			out->pending_reason = "waiting for its pods' volumes before binding any";
	}
	return done;
}

/* Volume binding's gate: the allocations of a job some of whose placed
 * members still wait for their claims are taken back (their claims are
 * being bound; the job is placed again once they are), so that no member
 * is bound while another cannot start. */
static void hold_for_volumes(kb_statement *st)
{
	kb_session *ssn = st->ssn;
	const kb_snapshot *s = ssn->snap;
	bool *held = NULL; /* per op: its job is held */
	bool any = false;
	for (uint32_t i = 0; i < st->n; i++) {
		const kb_task *t = &s->tasks[st->ops[i].task];
		if (!binds(ssn, &st->ops[i]) || kb_volumes_ready(ssn, t))
			continue;
		bool first = true; /* the first of its job's waiting allocations */
		for (uint32_t k = 0; k < i && first; k++)
			first = !(s->tasks[st->ops[k].task].job == t->job && binds(ssn, &st->ops[k]) &&
				  !kb_volumes_ready(ssn, &s->tasks[st->ops[k].task]));
		if (!first || volumes_done(st, t->job))
			continue;
		if (!held && !(held = kb_session_calloc(ssn, st->n, sizeof(bool)))) {
			if (ssn->effect_errors++ == 0)
				kb_err_set(&ssn->first_effect_err, -ENOMEM,
					   "holding \"%s\" for its volumes: out of memory", t->key);
			return;
		}
		for (uint32_t k = 0; k < st->n; k++)
			held[k] |= st->ops[k].kind == KB_OP_ALLOCATE &&
				   s->tasks[st->ops[k].task].job == t->job;
		any = true;
	}
	if (!any)
		return;
	/* Take back the held jobs' allocations, last first; keep the rest in order. */
	for (uint32_t i = st->n; i-- > 0;)
		if (held[i]) {
			undo(st, &st->ops[i]);
			st->ops[i].kind = KB_OP_UNDONE;
		}
	uint32_t n = 0;
	for (uint32_t i = 0; i < st->n; i++)
		if (st->ops[i].kind != KB_OP_UNDONE)
			st->ops[n++] = st->ops[i];
	st->n = n;
}

void kb_stmt_commit(kb_statement *st)
{
	kb_session *ssn = st->ssn;
	kb_snapshot *s = ssn->snap_rw;
	const kb_effects *fx = ssn->effects;
	if (s->task_vol)
		hold_for_volumes(st);
	for (uint32_t i = 0; i < st->n; i++) {
		const kb_stmt_op *op = &st->ops[i];
		kb_task *t = &s->tasks[op->task];
		int r = 0;
		if (op->kind == KB_OP_EVICT) {
			if (fx && fx->evict)
				r = fx->evict(ssn->effects_ctx, s, ssn->now_ms, t, op->reason);
			ssn->evictions++;
		} else if (op->kind == KB_OP_ALLOCATE && t->status == KB_TASK_ALLOCATED &&
			   kb_job_ready(ssn, &s->jobs[t->job])) {
			if (fx && fx->bind)
				r = fx->bind(ssn->effects_ctx, s, ssn->now_ms, t, &s->nodes[t->node]);
			kb_snapshot_set_task_status(s, op->task, KB_TASK_BINDING);
			ssn->binds++;
		}
		if (r < 0 && ssn->effect_errors++ == 0)
			kb_err_set(&ssn->first_effect_err, r, "%s of \"%s\" failed (errno %d)",
				   op->kind == KB_OP_EVICT ? "eviction" : "binding", t->key, -r);
	}
	if (st->n > 0)
		ssn->commits++;
	st->n = 0;
	check_invariants(ssn);
}

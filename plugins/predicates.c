/* predicates.c - the "predicates" plugin and its pure helpers (see predicates.h).
 *
 * Design note: a predicate runs for every (pending task, node) pair of a
 * session, so failing must not allocate every time. The "Insufficient <name>"
 * reasons are built once at open, one per resource name of the snapshot; the
 * "untolerated taint" reasons are built the first time a taint blocks a pod
 * and then kept, one slot per taint of the snapshot (taint_base[n] is the
 * first slot of node n). Everything lives in the session arena.
 */
#include "plugins/predicates.h"

#include "api/labels.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins.h"
#include "scheduler/framework.h"

#define KB_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

static const char REASON_NOT_READY[] = "node(s) were not ready";
static const char REASON_UNSCHEDULABLE[] = "node(s) were unschedulable";
static const char REASON_TOO_MANY_PODS[] = "Too many pods";
static const char REASON_INSUFFICIENT[] = "Insufficient resources";
static const char REASON_SELECTOR[] = "node(s) didn't match Pod's node affinity/selector";
static const char REASON_TAINT[] = "node(s) had untolerated taint";
static const char REASON_PORTS[] = "node(s) didn't have free ports for the requested pod ports";

/* ---- labels and selectors -------------------------------------------------------- */


/* strconv.ParseInt(s, 10, 64): optional sign, digits, nothing else. */
static bool parse_int64(const char *s, int64_t *ret)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s)
		return false;
	*ret = v;
	return true;
}

static bool value_in(const kb_selector_req *req, const char *value)
{
	for (uint32_t i = 0; i < req->nvalues; i++)
		if (strcmp(req->values[i], value) == 0)
			return true;
	return false;
}

/* The value the requirement looks at on this node, or NULL when absent. */
static const char *req_subject(const kb_selector_req *req, const kb_node *node)
{
	if (req->field)
		return strcmp(req->key, "metadata.name") == 0 ? node->name : NULL;
	return kb_labels_get(&node->labels, req->key);
}

static bool match_req(const kb_selector_req *req, const kb_node *node)
{
	const char *v = req_subject(req, node);
	int64_t have, want;

	switch (req->op) {
	case KB_SEL_IN:
		return v && value_in(req, v);
	case KB_SEL_NOT_IN:
		return !v || !value_in(req, v);
	case KB_SEL_EXISTS:
		return v != NULL;
	case KB_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case KB_SEL_GT:
	case KB_SEL_LT:
		if (!v || req->nvalues != 1 || !parse_int64(v, &have) ||
		    !parse_int64(req->values[0], &want))
			return false;
		return req->op == KB_SEL_GT ? have > want : have < want;
	}
	return false;
}

bool kb_match_selector_term(const kb_selector_term *term, const kb_node *node)
{
	if (term->n == 0)
		return false;
	for (uint32_t i = 0; i < term->n; i++)
		if (!match_req(&term->reqs[i], node))
			return false;
	return true;
}

bool kb_match_node_selector(const kb_pod_spec *spec, const kb_node *node)
{
	if (!spec)
		return true;
	for (uint32_t i = 0; i < spec->node_selector.n; i++) {
		const kb_label *want = &spec->node_selector.v[i];
		const char *have = kb_labels_get(&node->labels, want->key);
		if (!have || strcmp(have, want->value) != 0)
			return false;
	}
	if (spec->nrequired == 0)
		return true;
	for (uint32_t i = 0; i < spec->nrequired; i++)
		if (kb_match_selector_term(&spec->required[i], node))
			return true;
	return false;
}

/* ---- taints ---------------------------------------------------------------------- */

static bool toleration_tolerates(const kb_toleration *tol, const kb_taint *taint)
{
	if (tol->effect != KB_EFFECT_ALL && tol->effect != taint->effect)
		return false;
	const char *key = tol->key ? tol->key : "";
	if (*key && strcmp(key, taint->key) != 0)
		return false;
	if (tol->exists)
		return true;
	return strcmp(tol->value ? tol->value : "", taint->value ? taint->value : "") == 0;
}

bool kb_tolerates_taint(const kb_pod_spec *spec, const kb_taint *taint)
{
	if (!spec)
		return false;
	for (uint32_t i = 0; i < spec->ntolerations; i++)
		if (toleration_tolerates(&spec->tolerations[i], taint))
			return true;
	return false;
}

bool kb_tolerates_taints(const kb_pod_spec *spec, const kb_node *node,
			 const kb_taint **ret_untolerated)
{
	for (uint32_t i = 0; i < node->ntaints; i++) {
		const kb_taint *t = &node->taints[i];
		if (t->effect != KB_EFFECT_NO_SCHEDULE && t->effect != KB_EFFECT_NO_EXECUTE)
			continue;
		if (!kb_tolerates_taint(spec, t)) {
			if (ret_untolerated)
				*ret_untolerated = t;
			return false;
		}
	}
	return true;
}

/* ---- host ports ------------------------------------------------------------------ */

static bool ip_wildcard(const char *ip)
{
	return !ip || !*ip || strcmp(ip, "0.0.0.0") == 0;
}

static bool ports_conflict(const kb_host_port *a, const kb_host_port *b)
{
	if (a->port == 0 || a->port != b->port || a->proto != b->proto)
		return false;
	return ip_wildcard(a->ip) || ip_wildcard(b->ip) || strcmp(a->ip, b->ip) == 0;
}

bool kb_host_ports_free(const kb_snapshot *snap, const kb_task *task, const kb_node *node)
{
	const kb_pod_spec *spec = task->spec;
	if (!spec || spec->nhost_ports == 0)
		return true;
	for (int32_t i = node->task_head; i >= 0; i = snap->tasks[i].node_next) {
		const kb_task *other = &snap->tasks[i];
		if (other == task || !kb_task_status_on_node(other->status) || !other->spec)
			continue;
		const kb_pod_spec *os = other->spec;
		for (uint32_t a = 0; a < spec->nhost_ports; a++)
			for (uint32_t b = 0; b < os->nhost_ports; b++)
				if (ports_conflict(&spec->host_ports[a], &os->host_ports[b]))
					return false;
	}
	return true;
}

/* ---- the plugin ------------------------------------------------------------------ */

typedef struct predicates_state {
	const char *insufficient[KB_RES_MAX]; /* "Insufficient <name>" by resource index */
	uint32_t nnodes;
	uint32_t *taint_base;       /* nnodes + 1 entries: first reason slot of each node */
	const char **taint_reason;  /* one per taint of the snapshot, built on first use */
} predicates_state;

static int predicates_open(kb_session *ssn, const kb_plugin_conf *conf, void **ret_state,
			   kb_err *err)
{
	const kb_snapshot *snap = ssn->snap;
	predicates_state *st = kb_arena_alloc(&ssn->arena, sizeof(*st));
	if (!st)
		goto nomem;

	for (int i = 0; i < KB_RES_MAX; i++) {
		if (i >= snap->resnames.n || !snap->resnames.name[i][0]) {
			st->insufficient[i] = REASON_INSUFFICIENT;
			continue;
		}
		st->insufficient[i] =
			kb_arena_printf(&ssn->arena, "Insufficient %s", snap->resnames.name[i]);
		if (!st->insufficient[i])
			goto nomem;
	}

	st->nnodes = snap->nnodes;
	st->taint_base = kb_arena_calloc(&ssn->arena, (size_t)snap->nnodes + 1, sizeof(uint32_t));
	if (!st->taint_base)
		goto nomem;
	uint32_t ntaints = 0;
	for (uint32_t n = 0; n < snap->nnodes; n++) {
		st->taint_base[n] = ntaints;
		ntaints += snap->nodes[n].ntaints;
	}
	st->taint_base[snap->nnodes] = ntaints;
	if (ntaints > 0) {
		st->taint_reason = kb_arena_calloc(&ssn->arena, ntaints, sizeof(char *));
		if (!st->taint_reason)
			goto nomem;
	}

	*ret_state = st;
	return 0;

nomem:
	return kb_err_set(err, -ENOMEM, "predicates: out of memory");
}

/* The reason for an untolerated taint, cached per taint of the snapshot when
 * the node is one of the snapshot's and its taint count is the one seen at
 * open; otherwise built anew. Falls back to a static text when out of memory. */
static const char *taint_reason(predicates_state *st, const kb_session *ssn,
				const kb_node *node, const kb_taint *taint)
{
	const kb_snapshot *snap = ssn->snap;
	const char **slot = NULL;

	/* Compared as integers: the node may be a copy outside the array. */
	uintptr_t off = (uintptr_t)node - (uintptr_t)snap->nodes;
	if (st && (uintptr_t)node >= (uintptr_t)snap->nodes &&
	    off / sizeof(kb_node) < st->nnodes && off % sizeof(kb_node) == 0) {
		uint32_t n = (uint32_t)(off / sizeof(kb_node));
		uint32_t t = (uint32_t)(taint - node->taints);
		if (t < st->taint_base[n + 1] - st->taint_base[n])
			slot = &st->taint_reason[st->taint_base[n] + t];
	}
	if (slot && *slot)
		return *slot;

	/* The session is const for plugins; its arena may be used for reasons. */
	const char *r = kb_session_printf(ssn, "%s {%s: %s}", REASON_TAINT,
					taint->key, taint->value ? taint->value : "");
	if (!r)
		return REASON_TAINT;
	if (slot)
		*slot = r;
	return r;
}

static int predicates_predicate(void *state, const kb_session *ssn, const kb_task *task,
				const kb_node *node, const char **ret_reason)
{
	predicates_state *st = state;
	const kb_pod_spec *spec = task->spec;

	if (!node->ready) {
		*ret_reason = REASON_NOT_READY;
		return KB_FIT_FAIL;
	}
	if (node->unschedulable) {
		static const kb_taint cordon = {
			.key = KB_TAINT_UNSCHEDULABLE,
			.value = "",
			.effect = KB_EFFECT_NO_SCHEDULE,
		};
		if (!kb_tolerates_taint(spec, &cordon)) {
			*ret_reason = REASON_UNSCHEDULABLE;
			return KB_FIT_FAIL;
		}
	}

	/* Future idle: what the node will have once releasing tasks are gone
	 * and pipelined ones have moved in. */
	kb_res future = node->idle;
	kb_res_add(&future, &node->releasing);
	kb_res_sub(&future, &node->pipelined);

	int64_t pods = task->req.q[KB_RES_PODS] > 0 ? task->req.q[KB_RES_PODS] : KB_ONE_POD;
	if (pods > future.q[KB_RES_PODS]) {
		*ret_reason = REASON_TOO_MANY_PODS;
		return KB_FIT_FAIL;
	}
	if (!task->best_effort) {
		for (int i = 0; i < KB_RES_MAX; i++) {
			int64_t want = task->req.q[i];
			if (i == KB_RES_PODS || want <= 0 || want <= future.q[i])
				continue;
			*ret_reason = st ? st->insufficient[i] : REASON_INSUFFICIENT;
			return KB_FIT_FAIL;
		}
	}

	if (!kb_match_node_selector(spec, node)) {
		*ret_reason = REASON_SELECTOR;
		return KB_FIT_FAIL;
	}

	const kb_taint *bad;
	if (!kb_tolerates_taints(spec, node, &bad)) {
		*ret_reason = taint_reason(st, ssn, node, bad);
		return KB_FIT_FAIL;
	}

	if (!kb_host_ports_free(ssn->snap, task, node)) {
		*ret_reason = REASON_PORTS;
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

const kb_plugin_ops kb_plugin_predicates = {
	.name = "predicates",
	.open = predicates_open,
	.predicate = predicates_predicate,
};

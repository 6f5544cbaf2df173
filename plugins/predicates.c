/* predicates.c - the "predicates" plugin and its pure helpers (see predicates.h).
 *
 * Pod affinity, anti-affinity and topology spread are the session's pod
 * topology index's (scheduler/podtopo.h), which this plugin opens.
 *
 * Design note: a predicate runs for every (pending task, node) pair of a
 * session, so failing must not allocate every time. The "untolerated taint"
 * reasons are built the first time a taint blocks a pod and then kept, one
 * slot per taint of the snapshot (taint_base[n] is the first slot of node
 * n). Everything lives in the session arena.
 */
#include "plugins/predicates.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "plugins/plugins.h"
#include "scheduler/framework.h"
#include "scheduler/podtopo.h"

static const char REASON_SELECTOR[] = "node(s) didn't match Pod's node affinity/selector";
static const char REASON_TAINT[] = "node(s) had untolerated taint";
static const char REASON_PORTS[] = "node(s) didn't have free ports for the requested pod ports";

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

	int r = kb_podtopo_open(ssn, err);
	if (r < 0)
		return r;
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
	return kb_podtopo_filter(ssn, task, node, ret_reason);
}

const kb_plugin_ops kb_plugin_predicates = {
	.name = "predicates",
	.open = predicates_open,
	.predicate = predicates_predicate,
};

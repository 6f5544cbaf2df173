#include "scheduler/actions/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/pod_spec.h"
#include "scheduler/topology.h"
#include "scheduler/podtopo.h"
#include "scheduler/volumes.h"

static void report_add(kb_fit_report *rep, const char *reason)
{
	for (uint32_t i = 0; i < rep->nreasons; i++)
		if (rep->r[i].reason == reason || strcmp(rep->r[i].reason, reason) == 0) {
			rep->r[i].count++;
			return;
		}
	if (rep->nreasons < KB_FIT_REASONS_MAX) {
		rep->r[rep->nreasons].reason = reason;
		rep->r[rep->nreasons].count = 1;
		rep->nreasons++;
	}
}

bool kb_percentage_of_nodes(const char *value, double *ret)
{
	char *end = NULL;
	double v = value && *value ? strtod(value, &end) : 0;
	if (!end || *end != '\0' || !(v > 0 && v <= 100))
		return false;
	*ret = v;
	return true;
}

static uint32_t feasible_to_find(kb_session *ssn)
{
	uint32_t n = ssn->snap->nnodes;
	if (ssn->feasible_to_find)
		return ssn->feasible_to_find;
	uint32_t want = n;
	if (n >= 100) {
		double pct = 50.0 - (double)n / 125.0;
		if (pct < 5)
			pct = 5;
		const char *arg = kb_conf_action_arg(ssn->conf, "allocate", "percentage-of-nodes-to-score", NULL);
		double v;
		if (arg && kb_percentage_of_nodes(arg, &v))
			pct = v;
		want = (uint32_t)((double)n * pct / 100.0);
		if (want < 100)
			want = 100;
	}
	ssn->feasible_to_find = want ? want : 1;
	return ssn->feasible_to_find;
}

/* ---- reuse between tasks placed the same way ----------------------------------- */

/* One feasible node of the last search: its score, and its generation when
 * predicate and score were last worked out; `ver` counts those workings
 * out (heap items name the one they carry), `redone` is the memo's call
 * that last did; `dead` once it no longer fit. */
typedef struct memo_entry {
	uint32_t node;
	uint32_t gen;
	uint32_t ver;
	uint32_t redone;
	bool dead;
	double score;
} memo_entry;

/* A heap item: entry `idx` with the score of its version `ver` (stale once
 * the entry moved on or died: skipped when it comes to the top). */
typedef struct memo_item {
	double score;
	uint32_t idx, ver;
} memo_item;

/* The feasible nodes of the last full search, in the order examined. Valid
 * for tasks placed like s->tasks[task] (same job, request and spec) while
 * ssn->placement_epoch stays `epoch`. Every live entry was worked out at
 * snapshot node change count `changes` (kb_snapshot.node_changes) or later.
 * `heap` orders the entries best first (higher score, then examined first),
 * when `ordered` (no score is NaN, which no order holds: then each choice is
 * a pass over the entries); built at the first reuse (`heaped`), since the
 * entries of a task placed like no other are never reused. pos[node] is the entry of node when
 * v[pos[node]].node == node. Lives in the session arena. */
struct kb_place_memo {
	bool valid, ordered, heaped;
	uint32_t task;
	uint64_t epoch, changes;
	uint32_t n, live, found, cap, call;
	memo_entry *v;
	memo_item *heap;
	uint32_t nheap, heap_cap;
	uint32_t *pos;
};

bool kb_task_placed_alike(const kb_task *a, const kb_task *b)
{
	return a->job == b->job && a->job >= 0 && a->priority == b->priority &&
	       a->best_effort == b->best_effort && a->critical == b->critical &&
	       memcmp(&a->req, &b->req, sizeof(a->req)) == 0 &&
	       kb_pod_spec_same_placement(a->spec, b->spec);
}

/* Whether item a goes before b: higher score, then examined first. */
static bool item_before(const memo_item *a, const memo_item *b)
{
	return a->score > b->score || (a->score == b->score && a->idx < b->idx);
}

static void heap_down(memo_item *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, top = i;
		if (l < n && item_before(&h[l], &h[top]))
			top = l;
		if (l + 1 < n && item_before(&h[l + 1], &h[top]))
			top = l + 1;
		if (top == i)
			return;
		memo_item t = h[i];
		h[i] = h[top];
		h[top] = t;
		i = top;
	}
}

/* The heap afresh from the live entries: O(entries). */
static void heap_build(struct kb_place_memo *m)
{
	m->heaped = true;
	m->nheap = 0;
	for (uint32_t i = 0; i < m->n; i++)
		if (!m->v[i].dead)
			m->heap[m->nheap++] = (memo_item){m->v[i].score, i, m->v[i].ver};
	for (uint32_t i = m->nheap / 2; i-- > 0;)
		heap_down(m->heap, m->nheap, i);
}

/* Entry i's new version into the heap (rebuilt when full). O(log entries). */
static void heap_push(struct kb_place_memo *m, uint32_t i)
{
	if (m->nheap == m->heap_cap) {
		heap_build(m);
		return;
	}
	uint32_t k = m->nheap++;
	m->heap[k] = (memo_item){m->v[i].score, i, m->v[i].ver};
	while (k > 0 && item_before(&m->heap[k], &m->heap[(k - 1) / 2])) {
		memo_item t = m->heap[k];
		m->heap[k] = m->heap[(k - 1) / 2];
		m->heap[(k - 1) / 2] = t;
		k = (k - 1) / 2;
	}
}

/* The best live entry (stale items dropped from the top), or -1. */
static int32_t heap_best(struct kb_place_memo *m)
{
	while (m->nheap > 0) {
		const memo_item *t = &m->heap[0];
		const memo_entry *e = &m->v[t->idx];
		if (!e->dead && e->ver == t->ver)
			return (int32_t)t->idx;
		m->heap[0] = m->heap[--m->nheap];
		heap_down(m->heap, m->nheap, 0);
	}
	return -1;
}

/* Works entry i out again for task: dropped when it no longer fits, else
 * its score and generation anew. */
static void memo_redo(kb_session *ssn, struct kb_place_memo *m, uint32_t i, const kb_task *task)
{
	memo_entry *e = &m->v[i];
	const kb_node *n = &ssn->snap->nodes[e->node];
	const char *why = NULL;
	e->ver++;
	e->redone = m->call;
	if (kb_predicate(ssn, task, n, &why) != KB_FIT_OK) {
		e->dead = true;
		m->live--;
		return;
	}
	e->gen = n->gen;
	e->score = kb_node_score(ssn, task, n);
	if (e->score != e->score)
		m->ordered = false; /* NaN */
	else if (m->ordered && m->heaped)
		heap_push(m, i);
}

/* The first live entry of the highest score (a pass), or -1. */
static int32_t memo_pass(const struct kb_place_memo *m)
{
	int32_t best = -1;
	double best_score = 0;
	for (uint32_t i = 0; i < m->n; i++) {
		const memo_entry *e = &m->v[i];
		if (!e->dead && (best < 0 || e->score > best_score)) {
			best = (int32_t)i;
			best_score = e->score;
		}
	}
	return best;
}

/* The best node among the memo's entries for task, working out again the
 * nodes that changed and dropping those that no longer fit; -1 when the memo
 * has thinned out to under half of what the search found (a new search then
 * looks further). Ties go to the node examined first, as in a search.
 * *ret_checked: whether that node was worked out in this call.
 * A node changed when its kb_node.gen moved. When at most KB_NODE_LOG nodes
 * changed since the entries were worked out, the snapshot's log names them
 * and the heap gives the best: O(KB_NODE_LOG log entries) for a gang's next
 * member rather than a pass over the entries, for the same choice. */
static int32_t memo_best(kb_session *ssn, struct kb_place_memo *m, const kb_task *task,
			 bool *ret_checked)
{
	const kb_snapshot *s = ssn->snap;
	m->call++;
	if (m->ordered && !m->heaped)
		heap_build(m);
	if (s->node_changes - m->changes <= KB_NODE_LOG && m->ordered) {
		/* The changed entries, each once, in the order examined. */
		uint32_t redo[KB_NODE_LOG], nredo = 0;
		for (uint64_t c = m->changes; c < s->node_changes; c++) {
			uint32_t node = s->node_log[c % KB_NODE_LOG], i = m->pos[node], k = nredo;
			if (i >= m->n || m->v[i].node != node || m->v[i].dead)
				continue;
			while (k > 0 && redo[k - 1] > i)
				k--;
			if (k > 0 && redo[k - 1] == i)
				continue;
			memmove(redo + k + 1, redo + k, (nredo - k) * sizeof(redo[0]));
			redo[k] = i;
			nredo++;
		}
		for (uint32_t k = 0; k < nredo; k++)
			memo_redo(ssn, m, redo[k], task);
	} else {
		for (uint32_t i = 0; i < m->n; i++)
			if (!m->v[i].dead && s->nodes[m->v[i].node].gen != m->v[i].gen)
				memo_redo(ssn, m, i, task);
		if (m->ordered)
			heap_build(m);
	}
	m->changes = s->node_changes;
	int32_t best = m->ordered ? heap_best(m) : memo_pass(m);
	if (best < 0 || m->live * 2 < m->found)
		return -1;
	*ret_checked = m->v[best].redone == m->call;
	return (int32_t)m->v[best].node;
}

static struct kb_place_memo *memo_get(kb_session *ssn, uint32_t cap)
{
	struct kb_place_memo *m = ssn->place_memo;
	if (m && m->cap >= cap)
		return m;
	uint32_t nnodes = ssn->snap->nnodes ? ssn->snap->nnodes : 1;
	m = kb_arena_alloc(&ssn->arena, sizeof(*m));
	memo_entry *v = m ? kb_arena_alloc(&ssn->arena, (size_t)cap * sizeof(*v)) : NULL;
	memo_item *heap = v ? kb_arena_alloc(&ssn->arena, (size_t)cap * 2 * sizeof(*heap)) : NULL;
	uint32_t *pos = heap ? kb_arena_calloc(&ssn->arena, nnodes, sizeof(*pos)) : NULL;
	if (!pos)
		return NULL; /* no memory: every search is a full one */
	memset(m, 0, sizeof(*m));
	m->v = v;
	m->cap = cap;
	m->heap = heap;
	m->heap_cap = cap * 2;
	m->pos = pos;
	ssn->place_memo = m;
	return m;
}

/* Scans nodes[0..n) for the best feasible node for task, into *best and
 * *best_score (kept when none beats them); the reasons go to report. */
static void scan(kb_session *ssn, const kb_task *task, const uint32_t *nodes, uint32_t n,
		 int32_t level, const kb_topo_scope *sc, int32_t *best, double *best_score,
		 kb_fit_report *report)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = nodes ? nodes[k] : k;
		/* Only the nodes of no domain of the order, after it. */
		if (level >= 0 && sc->tree && kb_topo_domain_of(sc->tree, level, i) >= 0)
			continue;
		const char *why = NULL;
		if (report)
			report->nnodes++;
		if (kb_predicate(ssn, task, &s->nodes[i], &why) != KB_FIT_OK) {
			if (report)
				report_add(report, why ? why : "predicate failed");
			continue;
		}
		double score = kb_node_score(ssn, task, &s->nodes[i]);
		if (*best < 0 || score > *best_score) {
			*best = (int32_t)i;
			*best_score = score;
		}
	}
}

/* The best node for a task of a job with a topology scope: the first
 * domain of its order that has a feasible node, else its hard domain's
 * (or the cluster's) nodes in no domain of the order. Every node examined
 * once; no memo (a domain is small). */
static int32_t scoped_best(kb_session *ssn, const kb_task *task, const kb_topo_scope *sc,
			   kb_fit_report *report)
{
	int32_t best = -1;
	double best_score = 0;
	if (report)
		memset(report, 0, sizeof(*report));
	const uint32_t *nodes;
	for (uint32_t o = 0; o < sc->norder; o++) {
		uint32_t n = kb_topo_domain_nodes(sc->tree, sc->order_level, sc->order[o], &nodes);
		scan(ssn, task, nodes, n, -1, sc, &best, &best_score, report);
		if (best >= 0)
			return best;
	}
	int32_t skip = sc->norder ? sc->order_level : -1;
	if (sc->hard_level >= 0) {
		uint32_t n = kb_topo_domain_nodes(sc->tree, sc->hard_level, sc->hard_domain, &nodes);
		scan(ssn, task, nodes, n, skip, sc, &best, &best_score, report);
	} else {
		scan(ssn, task, NULL, ssn->snap->nnodes, skip, sc, &best, &best_score, report);
	}
	return best;
}

int32_t kb_best_node(kb_session *ssn, const kb_task *task, kb_fit_report *report)
{
	const kb_snapshot *s = ssn->snap;
	const char *queue_full = NULL;
	if (kb_queue_fits(ssn, task, &queue_full) != KB_FIT_OK) {
		if (report) {
			memset(report, 0, sizeof(*report));
			report->queue_full = queue_full;
			report->nnodes = s->nnodes;
		}
		return -1;
	}
	const kb_topo_scope *sc = kb_topo_scope_of(ssn, task->job);
	if (sc)
		return scoped_best(ssn, task, sc, report);
	uint32_t want = feasible_to_find(ssn), found = 0;
	struct kb_place_memo *m = ssn->place_memo;
	if (m && m->valid && m->epoch == ssn->placement_epoch &&
	    kb_task_placed_alike(task, &s->tasks[m->task]) &&
	    kb_podtopo_alike(ssn, task, &s->tasks[m->task]) &&
	    kb_volumes_alike(ssn, task, &s->tasks[m->task])) {
		bool checked = false;
		int32_t ni = memo_best(ssn, m, task, &checked);
		const char *why = NULL;
		if (ni >= 0 && (checked || kb_predicate(ssn, task, &s->nodes[ni], &why) == KB_FIT_OK))
			return ni;
	}

	int32_t best = -1;
	double best_score = 0;
	if (report)
		memset(report, 0, sizeof(*report));
	m = task->job >= 0 ? memo_get(ssn, want) : NULL;
	if (m) {
		m->valid = false;
		m->ordered = true;
		m->n = 0;
	}
	uint32_t start = s->nnodes ? ssn->next_node % s->nnodes : 0;
	for (uint32_t k = 0; k < s->nnodes && found < want; k++) {
		uint32_t i = start + k < s->nnodes ? start + k : start + k - s->nnodes;
		ssn->next_node = i + 1;
		const kb_node *n = &s->nodes[i];
		const char *why = NULL;
		if (kb_predicate(ssn, task, n, &why) != KB_FIT_OK) {
			if (report)
				report_add(report, why ? why : "predicate failed");
			continue;
		}
		found++;
		double score = kb_node_score(ssn, task, n);
		if (m) {
			m->pos[i] = m->n;
			m->v[m->n++] = (memo_entry){.node = i, .gen = n->gen, .score = score};
			if (score != score)
				m->ordered = false; /* NaN */
		}
		if (best < 0 || score > best_score) {
			best = (int32_t)i;
			best_score = score;
		}
	}
	if (m && found > 0) {
		m->valid = true;
		m->task = (uint32_t)(task - s->tasks);
		m->epoch = ssn->placement_epoch;
		m->changes = s->node_changes;
		m->found = found;
		m->live = m->n;
		m->heaped = false;
	}
	if (report)
		report->nnodes = s->nnodes;
	return best;
}

static int cmp_reason(const void *a, const void *b)
{
	const struct {
		const char *reason;
		uint32_t count;
	} *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

const char *kb_fit_report_format(kb_session *ssn, const kb_fit_report *report)
{
	if (report->queue_full)
		return report->queue_full;
	char buf[1024];
	kb_fit_report sorted = *report;
	qsort(sorted.r, sorted.nreasons, sizeof(sorted.r[0]), cmp_reason);
	int off = snprintf(buf, sizeof(buf), "0/%u nodes are available", sorted.nnodes);
	for (uint32_t i = 0; i < sorted.nreasons && off > 0 && (size_t)off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off, "%s%u %s", i ? ", " : ": ",
				sorted.r[i].count, sorted.r[i].reason);
	return kb_arena_strdup(&ssn->arena, buf);
}

bool kb_fits_idle(const kb_snapshot *s, const kb_task *task, const kb_node *node)
{
	return kb_res_le(&task->req, &node->idle) && kb_node_spill_short(s, task, node, false) < 0;
}

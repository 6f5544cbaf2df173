/* podtopo.c - the session's pod topology index (see podtopo.h).
 *
 * Entries ("entities") are of four kinds:
 *   PT_MATCH   pods that match some clauses, counted per domain of a key:
 *              a pending task's required affinity (all its terms at once,
 *              one entity per term's key: kube-scheduler counts a pod that
 *              matches every term), anti-affinity and preferred terms (one
 *              term each);
 *   PT_SPREAD  pods of one namespace that match a spread constraint's
 *              selector (an empty selector counts none, as kube-scheduler's
 *              countPodsMatchSelector), terminating pods left out;
 *   PT_ANTI    placed pods that carry a required anti-affinity term, per
 *              domain of the term's key (existing pods' anti-affinity);
 *   PT_SCORE   placed pods' preferred terms (+weight, -weight for
 *              anti-affinity) and required affinity terms (+1), summed per
 *              domain (kube-scheduler's symmetric scoring).
 * When a task is placed, the PT_MATCH and PT_SPREAD entities it matches are
 * found through a label index (the first In requirement of an entity's
 * first clause; entities with none are checked always), and its own terms
 * name its PT_ANTI and PT_SCORE entities. An incoming task finds the
 * PT_ANTI and PT_SCORE entities that select it through a second index.
 */
#include "scheduler/podtopo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "api/pod_spec.h"
#include "base/strmap.h"

enum { PT_MATCH, PT_SPREAD, PT_ANTI, PT_SCORE };

#define PT_CLASSES_MAX 32

typedef struct pt_clause {
	const kb_label_selector *sel;
	const char *const *ns;
	uint32_t nns;
	const kb_label_selector *ns_sel; /* NULL: none */
	const char *only_ns;             /* PT_SPREAD: the one namespace counted */
} pt_clause;

typedef struct pt_entity {
	uint8_t kind;
	uint32_t key;
	const pt_clause *clauses;
	uint32_t nclauses;
	int64_t *cnt;  /* per domain of the key */
	int64_t total; /* sum of cnt */
	int32_t *ncnt; /* PT_SPREAD: per node, NULL until a task needs it */
	int32_t next;  /* next entity of its label bucket, or -1 */
} pt_entity;

typedef struct pt_key {
	const char *name;
	int32_t *dom; /* per node: its domain, -1 when the node lacks the label */
	uint32_t ndoms;
	bool per_node; /* no domain holds two nodes */
} pt_key;

/* A string -> int32 map in the session arena (open addressing, hashed
 * with base/strmap.h's kb_hash_str). Not kb_strmap: that one lives on the
 * heap and would need freeing at session close; this one goes with the
 * arena. */
typedef struct pt_map {
	const char **keys;
	int32_t *vals;
	uint32_t cap, n;
} pt_map;

/* Entities by label: "key\x1fvalue" -> first entity of the bucket. */
typedef struct pt_lindex {
	pt_map buckets;
	int32_t any; /* first entity no label finds (checked for every pod) */
} pt_lindex;

/* What a spread constraint's eligible nodes are, for one spec. */
typedef struct pt_celig {
	uint8_t *elig_dom;   /* per domain: holds an eligible node */
	uint32_t nelig;      /* domains that do */
	uint32_t *excl;      /* nodes with the key that are not eligible */
	uint32_t nexcl;
} pt_celig;

typedef struct pt_class {
	const kb_pod_spec *spec;
	pt_celig *c; /* per constraint of spec */
} pt_class;

typedef struct pt_spread_prep {
	uint32_t e;
	const int64_t *count; /* per domain: pods on eligible nodes */
	int64_t *buf;         /* owned buffer when count is not e's own */
	uint32_t bufcap;
	int64_t min, max;
	bool self;
	double weight; /* scoring: log(eligible domains + 2) */
} pt_spread_prep;

/* What one incoming task needs, worked out once per task and change. */
typedef struct pt_prep {
	int32_t task;
	uint64_t version;
	uint32_t *aff, *anti;
	uint32_t aff_cap, anti_cap;
	bool aff_exists, aff_self;
	/* Carried entities that select the task (depend on the task only). */
	int32_t carried_task;
	uint32_t *canti, *cscore;
	uint32_t ncanti, nscore, canti_cap, cscore_cap;
	/* Own preferred terms: entity and signed weight. */
	uint32_t *pref;
	int64_t *pref_w;
	uint32_t npref, pref_cap, pref_w_cap;
	double lo, hi;
	pt_spread_prep *sp;
	uint32_t sp_cap;
	const pt_class *cls;
	double s_lo, s_hi;
	bool has_sscore;
} pt_prep;

struct kb_podtopo {
	kb_session *ssn;
	const kb_snapshot *snap;
	bool active;
	uint64_t version;
	pt_key *keys;
	uint32_t nkeys, keys_cap;
	pt_map key_ids;
	pt_entity *ents;
	uint32_t nents, ents_cap;
	pt_map ent_ids;
	pt_lindex count_idx, carried_idx;
	uint32_t ncarried_anti; /* PT_ANTI entities: none means no pod's anti-affinity to check */
	const char **label_keys; /* every label key a selector reads */
	uint32_t nlabel_keys;
	pt_class classes[PT_CLASSES_MAX];
	uint32_t nclasses, next_class;
	pt_prep prep;
	bool changed; /* set by update: nodes other than the task's may read otherwise */
	/* Carried entity ids of the last task updated, reused for the next
	 * one with the same terms. */
	const kb_task *ids_task;
	uint32_t *ids;
	uint32_t ids_cap, nids;
	char *buf;
	size_t buf_cap, buf_len;
	pt_clause *aff_scratch;
	uint32_t aff_scratch_cap;
	bool nomem;
	bool built; /* ensure_built ran (active says whether anything is asked) */
	/* Tasks evicted in this session before the build (update, not built). */
	const kb_task **evicted;
	uint32_t nevicted, evicted_cap;
};

static const kb_labels no_labels = {NULL, 0};

/* ---- arena helpers ------------------------------------------------------------------ */

static void *pt_calloc(kb_podtopo *pt, size_t n, size_t size)
{
	void *p = kb_arena_calloc(&pt->ssn->arena, n ? n : 1, size);
	if (!p)
		pt->nomem = true;
	return p;
}

/* Makes *buf hold at least need elements (contents kept). */
static bool grow(kb_podtopo *pt, void **buf, uint32_t *cap, uint32_t need, size_t size)
{
	if (*cap >= need && *buf)
		return true;
	uint32_t nc = *cap ? *cap : 8;
	while (nc < need)
		nc *= 2;
	void *nb = pt_calloc(pt, nc, size);
	if (!nb)
		return false;
	if (*buf && *cap)
		memcpy(nb, *buf, (size_t)*cap * size);
	*buf = nb;
	*cap = nc;
	return true;
}

/* ---- string map ---------------------------------------------------------------------- */

static int32_t map_get(const pt_map *m, const char *key)
{
	if (!m->cap)
		return -1;
	for (uint32_t i = (uint32_t)kb_hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return -1;
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
	}
}

/* Puts key at its slot of m, which has room. */
static void map_insert(pt_map *m, const char *key, int32_t val)
{
	uint32_t i = (uint32_t)kb_hash_str(key) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

/* Sets key (kept, not copied) to val, doubling the table when half full. */
static bool map_put(kb_podtopo *pt, pt_map *m, const char *key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		pt_map nm = {0};
		nm.cap = m->cap ? m->cap * 2 : 64;
		nm.keys = pt_calloc(pt, nm.cap, sizeof(*nm.keys));
		nm.vals = pt_calloc(pt, nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals)
			return false;
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				map_insert(&nm, m->keys[i], m->vals[i]);
		*m = nm;
	}
	map_insert(m, key, val);
	return true;
}

/* ---- the text of an entity (its identity) ------------------------------------------ */

static void buf_add(kb_podtopo *pt, const char *s)
{
	size_t len = strlen(s);
	if (pt->buf_len + len + 2 > pt->buf_cap) {
		size_t nc = pt->buf_cap ? pt->buf_cap * 2 : 1024;
		while (nc < pt->buf_len + len + 2)
			nc *= 2;
		char *nb = pt_calloc(pt, nc, 1);
		if (!nb)
			return;
		if (pt->buf_len)
			memcpy(nb, pt->buf, pt->buf_len);
		pt->buf = nb;
		pt->buf_cap = nc;
	}
	memcpy(pt->buf + pt->buf_len, s, len);
	pt->buf_len += len;
	pt->buf[pt->buf_len] = '\0';
}

static void buf_selector(kb_podtopo *pt, const kb_label_selector *sel)
{
	if (!sel || sel->nothing) {
		buf_add(pt, "\x1dnil");
		return;
	}
	static const char *const ops[] = {"\x1dIn", "\x1dNotIn", "\x1d" "Ex", "\x1d" "DNE", "\x1dGt", "\x1dLt"};
	for (uint32_t i = 0; i < sel->n; i++) {
		buf_add(pt, "\x1e");
		buf_add(pt, sel->reqs[i].key);
		buf_add(pt, ops[sel->reqs[i].op]);
		for (uint32_t j = 0; j < sel->reqs[i].nvalues; j++) {
			buf_add(pt, "\x1f");
			buf_add(pt, sel->reqs[i].values[j]);
		}
	}
}

static void buf_entity(kb_podtopo *pt, int kind, const char *key, const pt_clause *c, uint32_t n)
{
	pt->buf_len = 0;
	char head[8] = {(char)('0' + kind), '\x1c', 0};
	buf_add(pt, head);
	buf_add(pt, key);
	for (uint32_t i = 0; i < n; i++) {
		buf_add(pt, "\x1c");
		if (c[i].only_ns) {
			buf_add(pt, "\x1donly\x1f");
			buf_add(pt, c[i].only_ns);
		}
		for (uint32_t j = 0; j < c[i].nns; j++) {
			buf_add(pt, "\x1dns\x1f");
			buf_add(pt, c[i].ns[j]);
		}
		if (c[i].ns_sel && !c[i].ns_sel->nothing) {
			buf_add(pt, "\x1dnssel");
			buf_selector(pt, c[i].ns_sel);
		}
		buf_add(pt, "\x1dsel");
		buf_selector(pt, c[i].sel);
	}
}

static pt_clause term_clause(const kb_pod_affinity_term *t)
{
	return (pt_clause){.sel = &t->selector,
			   .ns = t->namespaces,
			   .nns = t->nnamespaces,
			   .ns_sel = t->ns_selector.nothing ? NULL : &t->ns_selector};
}

/* ---- keys and entities ------------------------------------------------------------- */

static int32_t key_id(kb_podtopo *pt, const char *name, bool create)
{
	int32_t k = map_get(&pt->key_ids, name);
	if (k >= 0 || !create)
		return k;
	if (!grow(pt, (void **)&pt->keys, &pt->keys_cap, pt->nkeys + 1, sizeof(*pt->keys)))
		return -1;
	k = (int32_t)pt->nkeys++;
	pt->keys[k].name = name;
	if (!map_put(pt, &pt->key_ids, name, k))
		return -1;
	return k;
}

/* The entity of (kind, clauses, key): an existing one, or (create) a new
 * one whose clauses are copied. -1 when absent (or out of memory). */
static int32_t entity_id(kb_podtopo *pt, int kind, const pt_clause *c, uint32_t n,
			 const char *key, bool create)
{
	buf_entity(pt, kind, key, c, n);
	if (pt->nomem)
		return -1;
	int32_t e = map_get(&pt->ent_ids, pt->buf);
	if (e >= 0 || !create)
		return e;
	int32_t k = key_id(pt, key, true);
	char *text = kb_arena_strdup(&pt->ssn->arena, pt->buf);
	pt_clause *cc = pt_calloc(pt, n, sizeof(*cc));
	if (k < 0 || !text || !cc ||
	    !grow(pt, (void **)&pt->ents, &pt->ents_cap, pt->nents + 1, sizeof(*pt->ents))) {
		pt->nomem = true;
		return -1;
	}
	memcpy(cc, c, n * sizeof(*cc));
	e = (int32_t)pt->nents++;
	pt->ents[e] = (pt_entity){.kind = (uint8_t)kind, .key = (uint32_t)k, .clauses = cc,
				  .nclauses = n, .next = -1};
	if (kind == PT_ANTI)
		pt->ncarried_anti++;
	if (!map_put(pt, &pt->ent_ids, text, e))
		return -1;
	return e;
}

/* The clauses of all of spec's required affinity terms, in scratch that
 * the next call reuses (entity_id copies what it keeps). */
static const pt_clause *affinity_clauses(kb_podtopo *pt, const kb_pod_spec *spec)
{
	if (!grow(pt, (void **)&pt->aff_scratch, &pt->aff_scratch_cap, spec->naffinity,
		  sizeof(pt_clause)))
		return NULL;
	for (uint32_t i = 0; i < spec->naffinity; i++)
		pt->aff_scratch[i] = term_clause(&spec->affinity[i]);
	return pt->aff_scratch;
}

/* Whether s has pod affinity or anti-affinity terms (what a placed pod
 * carries for the pods that come near it). */
static bool carries_terms(const kb_pod_spec *s)
{
	return s && (s->naffinity || s->nanti_affinity || s->npref_affinity ||
		     s->npref_anti_affinity);
}

/* Whether s asks anything of the index: those terms or spread constraints. */
static bool has_terms(const kb_pod_spec *s)
{
	return kb_pod_spec_has_topology(s);
}

/* Registers what an incoming task asks (create) or finds its entities. */
static void collect_incoming(kb_podtopo *pt, const kb_task *t)
{
	const kb_pod_spec *s = t->spec;
	if (s->naffinity) {
		const pt_clause *all = affinity_clauses(pt, s);
		for (uint32_t i = 0; all && i < s->naffinity; i++)
			entity_id(pt, PT_MATCH, all, s->naffinity, s->affinity[i].topology_key, true);
	}
	for (uint32_t i = 0; i < s->nanti_affinity; i++) {
		pt_clause c = term_clause(&s->anti_affinity[i]);
		entity_id(pt, PT_MATCH, &c, 1, s->anti_affinity[i].topology_key, true);
	}
	for (uint32_t i = 0; i < s->npref_affinity; i++) {
		pt_clause c = term_clause(&s->pref_affinity[i]);
		entity_id(pt, PT_MATCH, &c, 1, s->pref_affinity[i].topology_key, true);
	}
	for (uint32_t i = 0; i < s->npref_anti_affinity; i++) {
		pt_clause c = term_clause(&s->pref_anti_affinity[i]);
		entity_id(pt, PT_MATCH, &c, 1, s->pref_anti_affinity[i].topology_key, true);
	}
	for (uint32_t i = 0; i < s->nspread; i++) {
		pt_clause c = {.sel = &s->spread[i].selector, .only_ns = t->ns};
		entity_id(pt, PT_SPREAD, &c, 1, s->spread[i].topology_key, true);
	}
}

/* The carried entities of t's terms, with their weights, into pt->ids
 * (pairs: entity, weight as uint32 of int32). Reuses the last answer for a
 * task of the same namespace and terms. */
static bool carried_ids(kb_podtopo *pt, const kb_task *t, bool create)
{
	const kb_pod_spec *s = t->spec;
	if (pt->ids_task && strcmp(pt->ids_task->ns, t->ns) == 0 &&
	    kb_pod_spec_same_topology(pt->ids_task->spec, s))
		return true;
	pt->ids_task = NULL;
	pt->nids = 0;
	uint32_t n = s->nanti_affinity + s->naffinity + s->npref_affinity + s->npref_anti_affinity;
	if (!grow(pt, (void **)&pt->ids, &pt->ids_cap, 2 * n, sizeof(uint32_t)))
		return false;
	struct {
		const kb_pod_affinity_term *v;
		uint32_t n;
		int kind;
		int sign;
	} lists[] = {
		{s->anti_affinity, s->nanti_affinity, PT_ANTI, 0},
		{s->affinity, s->naffinity, PT_SCORE, 1},
		{s->pref_affinity, s->npref_affinity, PT_SCORE, 1},
		{s->pref_anti_affinity, s->npref_anti_affinity, PT_SCORE, -1},
	};
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (uint32_t i = 0; i < lists[l].n; i++) {
			const kb_pod_affinity_term *term = &lists[l].v[i];
			pt_clause c = term_clause(term);
			int32_t e = entity_id(pt, lists[l].kind, &c, 1, term->topology_key, create);
			if (e < 0)
				continue;
			/* Required terms weigh 1 (anti-affinity: a count; affinity:
			 * kube-scheduler's default hardPodAffinityWeight). */
			int32_t w = lists[l].kind == PT_ANTI ? 1 : (term->weight ? term->weight : 1);
			pt->ids[pt->nids++] = (uint32_t)e;
			pt->ids[pt->nids++] = (uint32_t)(lists[l].sign < 0 ? -w : w);
		}
	pt->ids_task = t;
	return true;
}

/* ---- matching -------------------------------------------------------------------- */

static bool clause_match(const kb_podtopo *pt, const pt_clause *c, const kb_task *t)
{
	const kb_labels *labels = t->spec ? &t->spec->labels : &no_labels;
	if (c->only_ns) {
		if (strcmp(c->only_ns, t->ns) != 0)
			return false;
	} else {
		bool ns_ok = false;
		for (uint32_t i = 0; !ns_ok && i < c->nns; i++)
			ns_ok = strcmp(c->ns[i], t->ns) == 0;
		if (!ns_ok && c->ns_sel) {
			const kb_labels *nsl = kb_snapshot_namespace_labels(pt->snap, t->ns);
			ns_ok = kb_match_label_selector(c->ns_sel, nsl ? nsl : &no_labels);
		}
		if (!ns_ok)
			return false;
	}
	return kb_match_label_selector(c->sel, labels);
}

static bool entity_match(const kb_podtopo *pt, const pt_entity *e, const kb_task *t)
{
	if (e->kind == PT_SPREAD && e->clauses[0].sel->n == 0)
		return false; /* an empty selector counts no pod (countPodsMatchSelector) */
	for (uint32_t i = 0; i < e->nclauses; i++)
		if (!clause_match(pt, &e->clauses[i], t))
			return false;
	return true;
}

/* The bucket text of label key=value ("key\x1fvalue") in buf; false when
 * it does not fit. */
static bool bucket_text(char *buf, size_t size, const char *key, const char *value)
{
	int n = snprintf(buf, size, "%s\x1f%s", key, value);
	return n > 0 && (size_t)n < size;
}

static void lindex_add(kb_podtopo *pt, pt_lindex *ix, int32_t e)
{
	const pt_clause *c = &pt->ents[e].clauses[0];
	for (uint32_t i = 0; c->sel && !c->sel->nothing && i < c->sel->n; i++) {
		const kb_selector_req *q = &c->sel->reqs[i];
		char tmp[1024];
		if (q->op != KB_SEL_IN || q->nvalues != 1 ||
		    !bucket_text(tmp, sizeof(tmp), q->key, q->values[0]))
			continue;
		int32_t head = map_get(&ix->buckets, tmp);
		char *text = kb_arena_strdup(&pt->ssn->arena, tmp);
		if (!text) {
			pt->nomem = true;
			return;
		}
		pt->ents[e].next = head;
		map_put(pt, &ix->buckets, text, e);
		return;
	}
	pt->ents[e].next = ix->any;
	ix->any = e;
}

typedef void match_fn(kb_podtopo *pt, int32_t e, void *ctx);

/* Calls fn for every entity of ix that t matches. */
static void lindex_each(kb_podtopo *pt, const pt_lindex *ix, const kb_task *t, match_fn *fn,
			void *ctx)
{
	for (int32_t e = ix->any; e >= 0; e = pt->ents[e].next)
		if (entity_match(pt, &pt->ents[e], t))
			fn(pt, e, ctx);
	if (!t->spec || !ix->buckets.n)
		return;
	const kb_labels *l = &t->spec->labels;
	for (uint32_t i = 0; i < l->n; i++) {
		char tmp[1024];
		if (!bucket_text(tmp, sizeof(tmp), l->v[i].key, l->v[i].value))
			continue;
		for (int32_t e = map_get(&ix->buckets, tmp); e >= 0; e = pt->ents[e].next)
			if (entity_match(pt, &pt->ents[e], t))
				fn(pt, e, ctx);
	}
}

/* ---- counting -------------------------------------------------------------------- */

static void add(kb_podtopo *pt, int32_t ei, int32_t node, int64_t d)
{
	pt_entity *e = &pt->ents[ei];
	const pt_key *k = &pt->keys[e->key];
	int32_t dom = k->dom[node];
	if (dom < 0)
		return;
	bool was_zero = e->total == 0;
	e->cnt[dom] += d;
	e->total += d;
	if (e->ncnt)
		e->ncnt[node] += (int32_t)d;
	pt->version++;
	/* Other nodes read otherwise when the domain holds more than this
	 * node, when the first matching pod comes or the last goes (the first
	 * pod of a self-affine group), and for spread always (the minimum over
	 * the domains moves). */
	if (!k->per_node || was_zero != (e->total == 0) || e->kind == PT_SPREAD)
		pt->changed = true;
}

typedef struct count_ctx {
	const kb_task *t;
	int delta;
	bool building;
} count_ctx;

static void count_one(kb_podtopo *pt, int32_t e, void *ctx)
{
	const count_ctx *cc = ctx;
	if (pt->ents[e].kind == PT_SPREAD && cc->building && cc->t->status == KB_TASK_RELEASING)
		return; /* a terminating pod does not count for spread */
	add(pt, e, cc->t->node, cc->delta);
}

static void apply(kb_podtopo *pt, const kb_task *t, int delta, bool building)
{
	if (t->node < 0)
		return;
	count_ctx cc = {t, delta, building};
	lindex_each(pt, &pt->count_idx, t, count_one, &cc);
	if (!carries_terms(t->spec) || !carried_ids(pt, t, false))
		return;
	for (uint32_t i = 0; i < pt->nids; i += 2)
		add(pt, (int32_t)pt->ids[i], t->node, (int64_t)(int32_t)pt->ids[i + 1] * delta);
}

/* ---- building ---------------------------------------------------------------------- */

static bool build_keys(kb_podtopo *pt)
{
	const kb_snapshot *s = pt->snap;
	for (uint32_t k = 0; k < pt->nkeys; k++) {
		pt_key *key = &pt->keys[k];
		pt_map values = {0};
		uint32_t *nodes_in = NULL, cap = 0;
		key->dom = pt_calloc(pt, s->nnodes, sizeof(int32_t));
		if (!key->dom)
			return false;
		key->per_node = true;
		for (uint32_t n = 0; n < s->nnodes; n++) {
			const char *v = kb_labels_get(&s->nodes[n].labels, key->name);
			if (!v) {
				key->dom[n] = -1;
				continue;
			}
			int32_t d = map_get(&values, v);
			if (d < 0) {
				d = (int32_t)key->ndoms++;
				if (!map_put(pt, &values, v, d) ||
				    !grow(pt, (void **)&nodes_in, &cap, key->ndoms, sizeof(uint32_t)))
					return false;
			}
			if (++nodes_in[d] > 1)
				key->per_node = false;
			key->dom[n] = d;
		}
	}
	return true;
}

static void add_label_key(kb_podtopo *pt, pt_map *seen, const char *key, uint32_t *cap)
{
	if (map_get(seen, key) >= 0)
		return;
	map_put(pt, seen, key, 1);
	if (grow(pt, (void **)&pt->label_keys, cap, pt->nlabel_keys + 1, sizeof(char *)))
		pt->label_keys[pt->nlabel_keys++] = key;
}

int kb_podtopo_open(kb_session *ssn, kb_err *err)
{
	if (ssn->podtopo)
		return 0;
	kb_podtopo *pt = kb_arena_calloc(&ssn->arena, 1, sizeof(*pt));
	if (!pt)
		return kb_err_set(err, -ENOMEM, "pod topology index: out of memory");
	pt->ssn = ssn;
	pt->snap = ssn->snap;
	pt->count_idx.any = pt->carried_idx.any = -1;
	pt->prep.task = pt->prep.carried_task = -1;
	ssn->podtopo = pt;
	return 0;
}

/* Whether task t was evicted in this session before the index was built
 * (its RELEASING status is then the statement's, not a terminating pod's). */
static bool evicted_here(const kb_podtopo *pt, const kb_task *t)
{
	for (uint32_t i = 0; i < pt->nevicted; i++)
		if (pt->evicted[i] == t)
			return true;
	return false;
}

/* Builds the index from the snapshot as it is now (tentative placements
 * included), the first time a task asks. Returns whether it is active. */
static bool ensure_built(kb_podtopo *pt)
{
	if (pt->built)
		return pt->active;
	pt->built = true;
	const kb_snapshot *s = pt->snap;
	if (s->topo_counted && s->ntopo_tasks == 0)
		return false; /* counted when the snapshot was derived: none asks */
	bool terms = false;
	for (uint32_t t = 0; t < s->ntasks && !terms; t++)
		terms = has_terms(s->tasks[t].spec);
	if (!terms)
		return false;

	/* Every task that may ask (pending, or placed in this session and
	 * possibly put back) and every task's terms as a placed pod. */
	for (uint32_t t = 0; t < s->ntasks; t++) {
		const kb_task *task = &s->tasks[t];
		if (!has_terms(task->spec))
			continue;
		if (task->status == KB_TASK_PENDING || task->status == KB_TASK_ALLOCATED ||
		    task->status == KB_TASK_PIPELINED)
			collect_incoming(pt, task);
		if (carries_terms(task->spec))
			carried_ids(pt, task, true);
	}
	pt->ids_task = NULL;
	if (pt->nomem || !build_keys(pt))
		return false;
	pt_map seen = {0};
	uint32_t lk_cap = 0;
	for (uint32_t e = 0; e < pt->nents; e++) {
		pt_entity *en = &pt->ents[e];
		en->cnt = pt_calloc(pt, pt->keys[en->key].ndoms, sizeof(int64_t));
		if (en->kind == PT_MATCH || en->kind == PT_SPREAD)
			lindex_add(pt, &pt->count_idx, (int32_t)e);
		else
			lindex_add(pt, &pt->carried_idx, (int32_t)e);
		for (uint32_t c = 0; c < en->nclauses; c++) {
			const kb_label_selector *sel = en->clauses[c].sel;
			for (uint32_t q = 0; sel && !sel->nothing && q < sel->n; q++)
				add_label_key(pt, &seen, sel->reqs[q].key, &lk_cap);
		}
	}
	if (pt->nomem)
		return false;
	for (uint32_t t = 0; t < s->ntasks; t++) {
		const kb_task *task = &s->tasks[t];
		if (kb_task_status_on_node(task->status) &&
		    !(task->status == KB_TASK_RELEASING && evicted_here(pt, task)))
			apply(pt, task, 1, true);
	}
	if (pt->nomem)
		return false;
	pt->changed = false;
	pt->active = true;
	return true;
}

void kb_podtopo_update(kb_session *ssn, const kb_task *t, int delta)
{
	kb_podtopo *pt = ssn->podtopo;
	if (!pt)
		return;
	if (!pt->built) {
		/* Not built yet: the build will read the tasks' statuses, but
		 * must tell an eviction of this session from a terminating pod. */
		if (delta < 0 && t->status == KB_TASK_RELEASING) {
			if (grow(pt, (void **)&pt->evicted, &pt->evicted_cap, pt->nevicted + 1,
				 sizeof(*pt->evicted)))
				pt->evicted[pt->nevicted++] = t;
		} else if (delta > 0) {
			for (uint32_t i = 0; i < pt->nevicted; i++)
				if (pt->evicted[i] == t)
					pt->evicted[i] = pt->evicted[--pt->nevicted];
		}
		return;
	}
	if (!pt->active)
		return;
	pt->changed = false;
	apply(pt, t, delta, false);
	if (pt->changed)
		kb_session_placement_changed(ssn);
}

/* ---- per task ---------------------------------------------------------------------- */

/* The eligible domains of each of spec's spread constraints
 * (nodeAffinityPolicy, nodeTaintsPolicy, and every key of the constraints
 * of the same whenUnsatisfiable on the node), kept for specs alike. */
static const pt_class *spread_class(kb_podtopo *pt, const kb_pod_spec *spec)
{
	for (uint32_t i = 0; i < pt->nclasses; i++)
		if (kb_pod_spec_same_placement(pt->classes[i].spec, spec))
			return &pt->classes[i];
	const kb_snapshot *s = pt->snap;
	pt_class *cls;
	if (pt->nclasses < PT_CLASSES_MAX) {
		cls = &pt->classes[pt->nclasses++];
	} else {
		cls = &pt->classes[pt->next_class];
		pt->next_class = (pt->next_class + 1) % PT_CLASSES_MAX;
	}
	cls->spec = NULL;
	cls->c = pt_calloc(pt, spec->nspread, sizeof(*cls->c));
	/* The constraints' keys, looked up once (not per node). */
	const pt_key **keys = pt_calloc(pt, spec->nspread, sizeof(*keys));
	if (!cls->c || !keys)
		return NULL;
	for (uint32_t i = 0; i < spec->nspread; i++) {
		int32_t k = key_id(pt, spec->spread[i].topology_key, false);
		if (k < 0)
			return NULL;
		keys[i] = &pt->keys[k];
	}
	for (uint32_t i = 0; i < spec->nspread; i++) {
		const kb_spread_constraint *sc = &spec->spread[i];
		pt_celig *ce = &cls->c[i];
		ce->elig_dom = pt_calloc(pt, keys[i]->ndoms, 1);
		if (!ce->elig_dom)
			return NULL;
		uint32_t excl_cap = 0;
		for (uint32_t n = 0; n < s->nnodes; n++) {
			int32_t dom = keys[i]->dom[n];
			if (dom < 0)
				continue;
			bool ok = true;
			for (uint32_t j = 0; ok && j < spec->nspread; j++)
				if (spec->spread[j].schedule_anyway == sc->schedule_anyway)
					ok = keys[j]->dom[n] >= 0;
			ok = ok && (!sc->honor_affinity || kb_match_node_selector(spec, &s->nodes[n]));
			ok = ok && (!sc->honor_taints || kb_tolerates_taints(spec, &s->nodes[n], NULL));
			if (ok) {
				ce->nelig += !ce->elig_dom[dom];
				ce->elig_dom[dom] = 1;
			} else {
				if (!grow(pt, (void **)&ce->excl, &excl_cap, ce->nexcl + 1,
					  sizeof(uint32_t)))
					return NULL;
				ce->excl[ce->nexcl++] = n;
			}
		}
	}
	cls->spec = spec;
	return cls;
}

/* e's per-node counts, worked out the first time (pods on nodes, not
 * terminating or evicted: what e's counts hold). */
static bool ensure_ncnt(kb_podtopo *pt, pt_entity *e)
{
	if (e->ncnt)
		return true;
	const kb_snapshot *s = pt->snap;
	int32_t *v = pt_calloc(pt, s->nnodes, sizeof(int32_t));
	if (!v)
		return false;
	for (uint32_t t = 0; t < s->ntasks; t++) {
		const kb_task *task = &s->tasks[t];
		if (task->node >= 0 && kb_task_status_on_node(task->status) &&
		    task->status != KB_TASK_RELEASING && pt->keys[e->key].dom[task->node] >= 0 &&
		    entity_match(pt, e, task))
			v[task->node]++;
	}
	e->ncnt = v;
	return true;
}

static void collect_carried(kb_podtopo *pt, int32_t e, void *ctx)
{
	pt_prep *p = ctx;
	if (pt->ents[e].kind == PT_ANTI) {
		if (grow(pt, (void **)&p->canti, &p->canti_cap, p->ncanti + 1, sizeof(uint32_t)))
			p->canti[p->ncanti++] = (uint32_t)e;
	} else if (grow(pt, (void **)&p->cscore, &p->cscore_cap, p->nscore + 1, sizeof(uint32_t))) {
		p->cscore[p->nscore++] = (uint32_t)e;
	}
}

/* Range over domains of mult x e's counts, 0 included (a node without the
 * key, or a domain without pods, scores 0). */
static void range(const kb_podtopo *pt, const pt_entity *e, int64_t mult, double *lo, double *hi)
{
	int64_t mn = 0, mx = 0;
	for (uint32_t d = 0; d < pt->keys[e->key].ndoms; d++) {
		int64_t v = e->cnt[d] * mult;
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	*lo += (double)mn;
	*hi += (double)mx;
}

/* The counts, minimum and weights of task's spread constraints into p.
 * False when they cannot be worked out (out of memory, or a constraint the
 * build did not register): the constraints are then not checked, which the
 * filter must not take as met. */
static bool prepare_spread(kb_podtopo *pt, const kb_task *task, pt_prep *p)
{
	const kb_pod_spec *spec = task->spec;
	p->cls = spread_class(pt, spec);
	p->s_lo = p->s_hi = 0;
	p->has_sscore = false;
	if (!p->cls || !grow(pt, (void **)&p->sp, &p->sp_cap, spec->nspread, sizeof(*p->sp)))
		return false;
	for (uint32_t i = 0; i < spec->nspread; i++) {
		const kb_spread_constraint *sc = &spec->spread[i];
		pt_spread_prep *sp = &p->sp[i];
		pt_clause c = {.sel = &sc->selector, .only_ns = task->ns};
		int32_t e = entity_id(pt, PT_SPREAD, &c, 1, sc->topology_key, false);
		if (e < 0) {
			p->cls = NULL;
			return false;
		}
		pt_entity *en = &pt->ents[e];
		const pt_key *k = &pt->keys[en->key];
		const pt_celig *ce = &p->cls->c[i];
		sp->e = (uint32_t)e;
		sp->self = kb_match_label_selector(&sc->selector, &spec->labels);
		sp->count = en->cnt;
		if (ce->nexcl > 0 && ensure_ncnt(pt, en) &&
		    grow(pt, (void **)&sp->buf, &sp->bufcap, k->ndoms, sizeof(int64_t))) {
			memcpy(sp->buf, en->cnt, k->ndoms * sizeof(int64_t));
			for (uint32_t x = 0; x < ce->nexcl; x++)
				sp->buf[k->dom[ce->excl[x]]] -= en->ncnt[ce->excl[x]];
			sp->count = sp->buf;
		}
		int64_t mn = INT64_MAX, mx = 0;
		for (uint32_t d = 0; d < k->ndoms; d++)
			if (ce->elig_dom[d]) {
				mn = sp->count[d] < mn ? sp->count[d] : mn;
				mx = sp->count[d] > mx ? sp->count[d] : mx;
			}
		if (ce->nelig < (uint32_t)sc->min_domains)
			mn = 0;
		sp->min = mn == INT64_MAX ? 0 : mn;
		sp->max = mx;
		sp->weight = log((double)ce->nelig + 2);
		if (sc->schedule_anyway) {
			p->has_sscore = true;
			p->s_lo += (double)sp->min * sp->weight + (sc->max_skew - 1);
			p->s_hi += (double)sp->max * sp->weight + (sc->max_skew - 1);
		}
	}
	return true;
}

static const pt_prep *prepare(kb_podtopo *pt, const kb_task *task)
{
	pt_prep *p = &pt->prep;
	int32_t ti = (int32_t)(task - pt->snap->tasks);
	if (p->task == ti && p->version == pt->version)
		return p;
	p->task = -1;
	const kb_pod_spec *spec = task->spec;
	if (p->carried_task != ti) {
		p->ncanti = p->nscore = 0;
		lindex_each(pt, &pt->carried_idx, task, collect_carried, p);
		p->carried_task = ti;
	}
	p->aff_exists = false;
	p->aff_self = true;
	uint32_t naff = spec ? spec->naffinity : 0, nanti = spec ? spec->nanti_affinity : 0;
	if (!grow(pt, (void **)&p->aff, &p->aff_cap, naff, sizeof(uint32_t)) ||
	    !grow(pt, (void **)&p->anti, &p->anti_cap, nanti, sizeof(uint32_t)))
		return NULL;
	if (naff) {
		const pt_clause *all = affinity_clauses(pt, spec);
		if (!all)
			return NULL;
		for (uint32_t i = 0; i < naff; i++) {
			int32_t e = entity_id(pt, PT_MATCH, all, naff, spec->affinity[i].topology_key,
					      false);
			if (e < 0)
				return NULL;
			p->aff[i] = (uint32_t)e;
			p->aff_exists = p->aff_exists || pt->ents[e].total > 0;
			p->aff_self = p->aff_self && clause_match(pt, &all[i], task);
		}
	}
	for (uint32_t i = 0; i < nanti; i++) {
		pt_clause c = term_clause(&spec->anti_affinity[i]);
		int32_t e = entity_id(pt, PT_MATCH, &c, 1, spec->anti_affinity[i].topology_key, false);
		if (e < 0)
			return NULL;
		p->anti[i] = (uint32_t)e;
	}
	/* Preferred terms, the task's own and those of placed pods. */
	p->npref = 0;
	p->lo = p->hi = 0;
	uint32_t npref = spec ? spec->npref_affinity + spec->npref_anti_affinity : 0;
	if (!grow(pt, (void **)&p->pref, &p->pref_cap, npref, sizeof(uint32_t)) ||
	    !grow(pt, (void **)&p->pref_w, &p->pref_w_cap, npref, sizeof(int64_t)))
		return NULL;
	for (uint32_t l = 0; l < 2 && spec; l++) {
		const kb_pod_affinity_term *v = l ? spec->pref_anti_affinity : spec->pref_affinity;
		uint32_t n = l ? spec->npref_anti_affinity : spec->npref_affinity;
		for (uint32_t i = 0; i < n; i++) {
			pt_clause c = term_clause(&v[i]);
			int32_t e = entity_id(pt, PT_MATCH, &c, 1, v[i].topology_key, false);
			if (e < 0)
				return NULL;
			p->pref[p->npref] = (uint32_t)e;
			p->pref_w[p->npref] = l ? -v[i].weight : v[i].weight;
			range(pt, &pt->ents[e], p->pref_w[p->npref], &p->lo, &p->hi);
			p->npref++;
		}
	}
	for (uint32_t i = 0; i < p->nscore; i++)
		range(pt, &pt->ents[p->cscore[i]], 1, &p->lo, &p->hi);
	p->cls = NULL;
	if ((spec && spec->nspread && !prepare_spread(pt, task, p)) || pt->nomem)
		return NULL;
	p->task = ti;
	p->version = pt->version;
	return p;
}

/* ---- queries ----------------------------------------------------------------------- */

/* Whether node is one of the snapshot's (a copy outside the array, as
 * tests make, has no domains: the index has nothing to say about it). */
static bool in_snapshot(const kb_podtopo *pt, const kb_node *node)
{
	uintptr_t off = (uintptr_t)node - (uintptr_t)pt->snap->nodes;
	return (uintptr_t)node >= (uintptr_t)pt->snap->nodes &&
	       off / sizeof(kb_node) < pt->snap->nnodes && off % sizeof(kb_node) == 0;
}

static int32_t dom_of(const kb_podtopo *pt, uint32_t e, const kb_node *node)
{
	return pt->keys[pt->ents[e].key].dom[node - pt->snap->nodes];
}

int kb_podtopo_filter(const kb_session *ssn, const kb_task *task, const kb_node *node,
		      const char **ret_reason)
{
	kb_podtopo *pt = ssn->podtopo;
	if (!pt)
		return KB_FIT_OK;
	if (!ensure_built(pt)) {
		if (!pt->nomem)
			return KB_FIT_OK; /* no pod has a term */
		/* Unchecked constraints are never taken as met. */
		*ret_reason = KB_REASON_PODTOPO_UNCHECKED;
		return KB_FIT_FAIL;
	}
	if ((!has_terms(task->spec) && pt->ncarried_anti == 0) || !in_snapshot(pt, node))
		return KB_FIT_OK;
	const pt_prep *p = prepare(pt, task);
	if (!p) { /* out of memory: the index cannot say, so the pod waits */
		*ret_reason = KB_REASON_PODTOPO_UNCHECKED;
		return KB_FIT_FAIL;
	}
	const kb_pod_spec *spec = task->spec;

	for (uint32_t i = 0; p->cls && i < spec->nspread; i++) {
		const kb_spread_constraint *sc = &spec->spread[i];
		if (sc->schedule_anyway)
			continue;
		const pt_spread_prep *sp = &p->sp[i];
		int32_t dom = dom_of(pt, sp->e, node);
		if (dom < 0) {
			*ret_reason = KB_REASON_SPREAD_LABEL;
			return KB_FIT_FAIL;
		}
		if (sp->count[dom] + (sp->self ? 1 : 0) - sp->min > sc->max_skew) {
			*ret_reason = KB_REASON_SPREAD;
			return KB_FIT_FAIL;
		}
	}

	uint32_t naff = spec ? spec->naffinity : 0;
	bool pods_exist = true;
	for (uint32_t i = 0; i < naff; i++) {
		int32_t dom = dom_of(pt, p->aff[i], node);
		if (dom < 0) {
			*ret_reason = KB_REASON_POD_AFFINITY;
			return KB_FIT_FAIL;
		}
		if (pt->ents[p->aff[i]].cnt[dom] <= 0)
			pods_exist = false;
	}
	/* The first pod of a group whose affinity selects itself goes
	 * anywhere the keys exist, while no pod matches yet. */
	if (!pods_exist && (p->aff_exists || !p->aff_self)) {
		*ret_reason = KB_REASON_POD_AFFINITY;
		return KB_FIT_FAIL;
	}
	for (uint32_t i = 0; spec && i < spec->nanti_affinity; i++) {
		int32_t dom = dom_of(pt, p->anti[i], node);
		if (dom >= 0 && pt->ents[p->anti[i]].cnt[dom] > 0) {
			*ret_reason = KB_REASON_POD_ANTI_AFFINITY;
			return KB_FIT_FAIL;
		}
	}
	for (uint32_t i = 0; i < p->ncanti; i++) {
		int32_t dom = dom_of(pt, p->canti[i], node);
		if (dom >= 0 && pt->ents[p->canti[i]].cnt[dom] > 0) {
			*ret_reason = KB_REASON_EXISTING_ANTI_AFFINITY;
			return KB_FIT_FAIL;
		}
	}
	return KB_FIT_OK;
}

static const pt_prep *score_prep(const kb_session *ssn, const kb_task *task,
				 const kb_node *node)
{
	kb_podtopo *pt = ssn->podtopo;
	if (!pt || !ensure_built(pt) || !in_snapshot(pt, node))
		return NULL;
	return prepare(pt, task);
}

double kb_podtopo_affinity_score(const kb_session *ssn, const kb_task *task, const kb_node *node)
{
	const pt_prep *p = score_prep(ssn, task, node);
	if (!p || p->hi <= p->lo)
		return 0;
	const kb_podtopo *pt = ssn->podtopo;
	double s = 0;
	for (uint32_t i = 0; i < p->npref; i++) {
		int32_t dom = dom_of(pt, p->pref[i], node);
		if (dom >= 0)
			s += (double)(pt->ents[p->pref[i]].cnt[dom] * p->pref_w[i]);
	}
	for (uint32_t i = 0; i < p->nscore; i++) {
		int32_t dom = dom_of(pt, p->cscore[i], node);
		if (dom >= 0)
			s += (double)pt->ents[p->cscore[i]].cnt[dom];
	}
	return 10.0 * (s - p->lo) / (p->hi - p->lo);
}

double kb_podtopo_spread_score(const kb_session *ssn, const kb_task *task, const kb_node *node)
{
	const pt_prep *p = score_prep(ssn, task, node);
	if (!p || !p->cls || !p->has_sscore)
		return 0;
	const kb_podtopo *pt = ssn->podtopo;
	const kb_pod_spec *spec = task->spec;
	double s = 0;
	for (uint32_t i = 0; i < spec->nspread; i++) {
		const kb_spread_constraint *sc = &spec->spread[i];
		if (!sc->schedule_anyway)
			continue;
		const pt_spread_prep *sp = &p->sp[i];
		int32_t dom = dom_of(pt, sp->e, node);
		if (dom < 0)
			return 0; /* a node without every key scores 0 (kube-scheduler's ignored nodes) */
		/* On hostname, the node's own pods (kube-scheduler counts them
		 * without the inclusion policies). */
		int64_t cnt = strcmp(sc->topology_key, KB_LABEL_HOSTNAME) == 0 ? pt->ents[sp->e].cnt[dom]
									   : sp->count[dom];
		s += (double)cnt * sp->weight + (sc->max_skew - 1);
	}
	if (p->s_hi <= 0)
		return 10.0;
	double v = 10.0 * (p->s_hi + p->s_lo - s) / p->s_hi;
	return v < 0 ? 0 : v;
}

bool kb_podtopo_alike(const kb_session *ssn, const kb_task *a, const kb_task *b)
{
	kb_podtopo *pt = ssn->podtopo;
	if (!pt || !ensure_built(pt))
		return true;
	if (strcmp(a->ns, b->ns) != 0)
		return false;
	const kb_labels *la = a->spec ? &a->spec->labels : &no_labels;
	const kb_labels *lb = b->spec ? &b->spec->labels : &no_labels;
	for (uint32_t i = 0; i < pt->nlabel_keys; i++) {
		const char *x = kb_labels_get(la, pt->label_keys[i]);
		const char *y = kb_labels_get(lb, pt->label_keys[i]);
		if (x != y && (!x || !y || strcmp(x, y) != 0))
			return false;
	}
	return true;
}

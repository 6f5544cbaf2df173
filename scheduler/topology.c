/* topology.c - network domains for gangs (see topology.h). */
#include "scheduler/topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "api/quantity.h"
#include "scheduler/job.h"

#define MAX_HARD_CANDIDATES 8 /* domains tried for a required level */
#define FEW_HARD_CANDIDATES 4 /* ... when evicting, or with a preferred level too */
#define MAX_COUNTED 16        /* domains counted node by node per ranking */

/* One level of an index: its domains, their nodes and free aggregates. */
typedef struct topo_level {
	const char *key;
	uint32_t ndomains;
	int32_t *domain_of_node; /* per node, -1 when in none */
	uint32_t *first;         /* ndomains + 1: domain d's nodes are nodes[first[d] .. first[d+1]) */
	uint32_t *nodes;
	const char **value;   /* the label's value of each domain */
	int32_t *parent;      /* its domain at the level above, -1 at level 0 */
	uint32_t *cfirst, *cend; /* its children at the level below: [cfirst, cend) */
	kb_res *free;         /* future idle of its ready, uncordoned nodes */
	uint32_t *nsched;     /* how many such nodes */
} topo_level;

struct kb_topo_tree {
	kb_topo_tree *next;
	const char *levels; /* as given: the key of the index */
	uint32_t nlevels;
	topo_level lv[KB_TOPO_MAX_LEVELS];
};

/* A job's wish resolved against the levels (cached per job). */
typedef struct topo_plan {
	bool done;
	const char *error;
	kb_topo_tree *tree;
	int32_t req, pref; /* level indices, -1 when none */
	const char *what;  /* "one topology.kubernetes.io/rack (annotation ...)", for reasons */
} topo_plan;

typedef struct topo_state {
	struct kb_topo pub;
	topo_plan *plans; /* per job */
} topo_state;

/* ---- the index ------------------------------------------------------------------ */

typedef struct sort_ctx {
	const char **vals; /* nnodes x nlevels */
	uint32_t nlevels, depth;
} sort_ctx;

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const sort_ctx *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	for (uint32_t l = 0; l <= c->depth; l++) {
		int r = strcmp(c->vals[(size_t)x * c->nlevels + l], c->vals[(size_t)y * c->nlevels + l]);
		if (r)
			return r;
	}
	return x < y ? -1 : x > y;
}

/* Splits levels at ',' into keys[] (arena copies); their count, or -EINVAL
 * for an empty key or too many, or -ENOMEM. */
static int split_levels(kb_arena *a, const char *levels, const char **keys)
{
	int n = 0;
	for (const char *p = levels;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0 || n == KB_TOPO_MAX_LEVELS)
			return -EINVAL;
		char *k = kb_arena_alloc(a, len + 1);
		if (!k)
			return -ENOMEM;
		memcpy(k, p, len);
		k[len] = '\0';
		for (int i = 0; i < n; i++)
			if (strcmp(keys[i], k) == 0)
				return -EINVAL;
		keys[n++] = k;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

/* The index of `levels` (keys[0..n)), built from the snapshot as it is now.
 * NULL on -ENOMEM. O(n x nodes log nodes). */
static kb_topo_tree *build_tree(kb_session *ssn, const char *levels, const char **keys, int n)
{
	const kb_snapshot *s = ssn->snap;
	kb_arena *a = &ssn->arena;
	uint32_t nn = s->nnodes;
	kb_topo_tree *t = kb_arena_calloc(a, 1, sizeof(*t));
	const char **vals = kb_arena_calloc(a, (size_t)(nn ? nn : 1) * (size_t)n, sizeof(char *));
	uint32_t *idx = kb_arena_alloc(a, (nn ? nn : 1) * sizeof(uint32_t));
	kb_res *fut = kb_arena_alloc(a, (nn ? nn : 1) * sizeof(kb_res));
	if (!t || !vals || !idx || !fut)
		return NULL;
	t->levels = levels;
	t->nlevels = (uint32_t)n;
	for (uint32_t i = 0; i < nn; i++) {
		const kb_node *nd = &s->nodes[i];
		for (int l = 0; l < n; l++) {
			const char *v = kb_labels_get(&nd->labels, keys[l]);
			if (!v && strcmp(keys[l], KB_LABEL_HOSTNAME) == 0)
				v = nd->name;
			vals[(size_t)i * (size_t)n + (size_t)l] = v;
		}
		kb_node_future_idle(nd, &fut[i]);
	}
	for (int l = 0; l < n; l++) {
		topo_level *lv = &t->lv[l];
		lv->key = keys[l];
		uint32_t m = 0;
		for (uint32_t i = 0; i < nn; i++)
			if (l == 0 ? vals[(size_t)i * (size_t)n] != NULL
				   : t->lv[l - 1].domain_of_node[i] >= 0 &&
					     vals[(size_t)i * (size_t)n + (size_t)l] != NULL)
				idx[m++] = i;
		sort_ctx sc = {vals, (uint32_t)n, (uint32_t)l};
		qsort_r(idx, m, sizeof(uint32_t), cmp_nodes, &sc);
		lv->domain_of_node = kb_arena_alloc(a, (nn ? nn : 1) * sizeof(int32_t));
		lv->nodes = kb_arena_alloc(a, (m ? m : 1) * sizeof(uint32_t));
		lv->first = kb_arena_alloc(a, (m + 1) * sizeof(uint32_t));
		lv->value = kb_arena_alloc(a, (m ? m : 1) * sizeof(char *));
		lv->parent = kb_arena_alloc(a, (m ? m : 1) * sizeof(int32_t));
		lv->free = kb_arena_calloc(a, m ? m : 1, sizeof(kb_res));
		lv->nsched = kb_arena_calloc(a, m ? m : 1, sizeof(uint32_t));
		lv->cfirst = kb_arena_calloc(a, m ? m : 1, sizeof(uint32_t));
		lv->cend = kb_arena_calloc(a, m ? m : 1, sizeof(uint32_t));
		if (!lv->domain_of_node || !lv->nodes || !lv->first || !lv->value || !lv->parent ||
		    !lv->free || !lv->nsched || !lv->cfirst || !lv->cend)
			return NULL;
		memset(lv->domain_of_node, 0xff, (nn ? nn : 1) * sizeof(int32_t));
		uint32_t d = 0;
		for (uint32_t k = 0; k < m; k++) {
			uint32_t i = idx[k];
			/* A new domain where the values of levels 0..l change. */
			bool same = k > 0;
			for (int q = 0; same && q <= l; q++)
				same = strcmp(vals[(size_t)idx[k - 1] * (size_t)n + (size_t)q],
					      vals[(size_t)i * (size_t)n + (size_t)q]) == 0;
			if (!same) {
				lv->first[d] = k;
				lv->value[d] = vals[(size_t)i * (size_t)n + (size_t)l];
				lv->parent[d] = l ? t->lv[l - 1].domain_of_node[i] : -1;
				d++;
			}
			lv->nodes[k] = i;
			lv->domain_of_node[i] = (int32_t)(d - 1);
			if (kb_node_schedulable(&s->nodes[i])) {
				kb_res_add(&lv->free[d - 1], &fut[i]);
				lv->nsched[d - 1]++;
			}
		}
		lv->first[d] = m;
		lv->ndomains = d;
		if (l > 0) {
			topo_level *up = &t->lv[l - 1];
			for (uint32_t c = d; c-- > 0;) {
				uint32_t p = (uint32_t)lv->parent[c];
				if (up->cend[p] == 0)
					up->cend[p] = c + 1;
				up->cfirst[p] = c;
			}
		}
	}
	return t;
}

static topo_state *state(kb_session *ssn)
{
	if (ssn->topo)
		return (topo_state *)ssn->topo;
	uint32_t nj = ssn->snap->njobs ? ssn->snap->njobs : 1;
	topo_state *st = kb_arena_calloc(&ssn->arena, 1, sizeof(*st));
	if (!st)
		return NULL;
	st->pub.scope_of_job = kb_arena_calloc(&ssn->arena, nj, sizeof(kb_topo_scope *));
	st->plans = kb_arena_calloc(&ssn->arena, nj, sizeof(topo_plan));
	if (!st->pub.scope_of_job || !st->plans)
		return NULL;
	ssn->topo = &st->pub;
	return st;
}

/* The index of `levels`, built on first use in the session. NULL with
 * *ret_err -EINVAL (a malformed list) or -ENOMEM. */
static kb_topo_tree *tree_of(kb_session *ssn, topo_state *st, const char *levels, int *ret_err)
{
	for (kb_topo_tree *t = st->pub.trees; t; t = t->next)
		if (strcmp(t->levels, levels) == 0)
			return t;
	const char *keys[KB_TOPO_MAX_LEVELS];
	int n = split_levels(&ssn->arena, levels, keys);
	if (n < 0) {
		*ret_err = n;
		return NULL;
	}
	kb_topo_tree *t = build_tree(ssn, levels, keys, n);
	if (!t) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	t->next = st->pub.trees;
	st->pub.trees = t;
	return t;
}

static int32_t level_index(const kb_topo_tree *t, const char *key)
{
	for (uint32_t l = 0; key && l < t->nlevels; l++)
		if (strcmp(t->lv[l].key, key) == 0)
			return (int32_t)l;
	return -1;
}

/* ---- plans ---------------------------------------------------------------------- */

/* "gang \"ns/pg\": network topology (spec.networkTopology): ", for errors. */
static const char *plan_prefix(kb_session *ssn, const kb_job *j)
{
	const char *p = kb_arena_printf(&ssn->arena, "gang \"%s\": network topology (%s): ", j->key,
					j->topology->source ? j->topology->source : "");
	return p ? p : "";
}

/* What resolving the levels of a wish came to. */
enum { PLAN_OK = 0, PLAN_DONE = 1, PLAN_BAD_LEVELS = 2 };

/* volcano's tiers over the levels: tier 1 is the narrowest level above the
 * node. PLAN_OK, PLAN_DONE (p->error set, or -ENOMEM when it could not be),
 * PLAN_BAD_LEVELS (*err says whether for memory) or -ENOMEM. */
static int plan_volcano(kb_session *ssn, topo_state *st, const kb_job *j, topo_plan *p,
			const char *levels, const char *from, int *err)
{
	const kb_topology_req *w = j->topology;
	if (!levels) {
		p->error = kb_arena_printf(
			&ssn->arena,
			"%svolcano's tiers need node label levels: set the PodGroup's annotation "
			"kube-batchd.io/topology-levels (broadest first) or the allocate "
			"argument topology-levels",
			plan_prefix(ssn, j));
		return p->error ? PLAN_DONE : -ENOMEM;
	}
	if (!(p->tree = tree_of(ssn, st, levels, err)))
		return PLAN_BAD_LEVELS;
	int32_t m = (int32_t)p->tree->nlevels;
	if (m > 0 && strcmp(p->tree->lv[m - 1].key, KB_LABEL_HOSTNAME) == 0)
		m--;
	if (m == 0) {
		p->error = kb_arena_printf(&ssn->arena,
					   "%sthe levels \"%s\" (%s) have no tier above the node",
					   plan_prefix(ssn, j), levels, from);
		return p->error ? PLAN_DONE : -ENOMEM;
	}
	p->pref = m - 1;
	if (w->volcano_hard && w->volcano_tier <= m)
		p->req = m - w->volcano_tier;
	if (p->req == p->pref)
		p->pref = -1;
	return PLAN_OK;
}

/* Required and preferred label keys, over the levels when they list them,
 * else each key alone. PLAN_OK or PLAN_BAD_LEVELS (*err says whether for
 * memory). */
static int plan_keys(kb_session *ssn, topo_state *st, const kb_job *j, topo_plan *p,
		     const char *levels, int *err)
{
	const kb_topology_req *w = j->topology;
	if (levels && !(p->tree = tree_of(ssn, st, levels, err)))
		return PLAN_BAD_LEVELS;
	if (p->tree) {
		p->req = level_index(p->tree, w->required);
		p->pref = level_index(p->tree, w->preferred);
		/* A key the default levels do not list: that key alone. */
		if ((w->required && p->req < 0) || (w->preferred && p->pref < 0))
			p->tree = NULL;
	}
	if (!p->tree) {
		const char *single = w->required ? w->required : w->preferred;
		if (!(p->tree = tree_of(ssn, st, single, err)))
			return PLAN_BAD_LEVELS;
		p->req = w->required ? 0 : -1;
		p->pref = w->required ? -1 : 0;
	}
	if (p->req >= 0 && p->pref >= 0 && p->pref <= p->req)
		p->pref = -1; /* the levels put the preferred level above the required one */
	return PLAN_OK;
}

/* Resolves job j's wish (see topology.h for the rules). *ret_p is NULL on
 * -ENOMEM; a wish that cannot be honoured has p->error set. */
static int plan_of(kb_session *ssn, const kb_job *j, topo_plan **ret_p)
{
	topo_state *st = state(ssn);
	if (!st)
		return -ENOMEM;
	topo_plan *p = &st->plans[j - ssn->snap->jobs];
	*ret_p = p;
	if (p->done)
		return 0;
	p->done = true;
	p->req = p->pref = -1;
	const kb_topology_req *w = j->topology;
	const char *conf_levels = kb_conf_action_arg(ssn->conf, "allocate", "topology-levels", NULL);
	const char *levels = w->levels ? w->levels : conf_levels;
	const char *from = w->levels ? "annotation kube-batchd.io/topology-levels"
				     : "the allocate argument topology-levels";
	int err = 0;
	int r = w->volcano_tier > 0 ? plan_volcano(ssn, st, j, p, levels, from, &err)
				    : plan_keys(ssn, st, j, p, levels, &err);
	if (r < 0)
		return r;
	if (r == PLAN_DONE)
		return 0;
	if (r == PLAN_BAD_LEVELS) {
		if (err == -ENOMEM)
			return -ENOMEM;
		const char *what = levels ? levels : w->required ? w->required : w->preferred;
		p->error = kb_arena_printf(&ssn->arena,
					   "%sthe levels \"%s\" (%s) must be node label keys separated "
					   "by commas, each once, at most 16",
					   plan_prefix(ssn, j), what ? what : "", from);
		return p->error ? 0 : -ENOMEM;
	}
	int32_t lvl = p->req >= 0 ? p->req : p->pref;
	p->what = kb_arena_printf(&ssn->arena, "%s %s (%s)", p->req >= 0 ? "one" : "preferably one",
				  p->tree->lv[lvl].key, w->source ? w->source : "");
	if (!p->what)
		return -ENOMEM;
	if (p->req >= 0 && p->tree->lv[p->req].ndomains == 0) {
		if (p->req == 0)
			p->error = kb_arena_printf(&ssn->arena,
						   "gang \"%s\" needs %s: no node has the label \"%s\"",
						   j->key, p->what, p->tree->lv[0].key);
		else
			p->error = kb_arena_printf(&ssn->arena,
						   "gang \"%s\" needs %s: no node has all the labels of "
						   "the levels \"%s\" down to it",
						   j->key, p->what, p->tree->levels);
		return p->error ? 0 : -ENOMEM;
	}
	return 0;
}

/* ---- choosing domains ----------------------------------------------------------- */

/* What the ranking needs of a job. */
typedef struct job_need {
	kb_res need;   /* its remaining minimum */
	int32_t k;     /* tasks in it */
	kb_res minreq; /* the smallest request of a pending task, per resource */
	bool any_pending;
} job_need;

static int need_of(kb_session *ssn, const kb_job *j, job_need *n)
{
	memset(n, 0, sizeof(*n));
	if (kb_job_remaining_need(ssn, j, &n->need, &n->k) < 0)
		return -ENOMEM;
	if (n->k < 0)
		n->k = 0;
	const kb_snapshot *s = ssn->snap;
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->status != KB_TASK_PENDING || t->best_effort)
			continue;
		for (int r = 0; r < KB_RES_MAX; r++)
			if (!n->any_pending || t->req.q[r] < n->minreq.q[r])
				n->minreq.q[r] = t->req.q[r];
		n->any_pending = true;
	}
	if (n->minreq.q[KB_RES_PODS] <= 0)
		n->minreq.q[KB_RES_PODS] = KB_ONE_POD;
	return 0;
}

/* How many pods asking minreq the domain's nodes have room for, counted up
 * to cap. O(nodes of the domain x resources). */
static int32_t count_fit(const kb_session *ssn, const topo_level *lv, uint32_t d,
			 const kb_res *minreq, int32_t cap)
{
	const kb_snapshot *s = ssn->snap;
	int32_t total = 0;
	for (uint32_t k = lv->first[d]; k < lv->first[d + 1] && total < cap; k++) {
		const kb_node *nd = &s->nodes[lv->nodes[k]];
		if (!kb_node_schedulable(nd))
			continue;
		kb_res f;
		kb_node_future_idle(nd, &f);
		int64_t fit = INT64_MAX;
		for (int r = 0; r < KB_RES_MAX && fit > 0; r++)
			if (minreq->q[r] > 0) {
				int64_t c = f.q[r] > 0 ? f.q[r] / minreq->q[r] : 0;
				if (c < fit)
					fit = c;
			}
		total += fit > cap ? cap : (int32_t)fit;
	}
	return total < cap ? total : cap;
}

/* How many times the domain's free resources (plus extra) hold need: the
 * smallest ratio over the resources it asks; 1e18 when it asks none; < 1
 * when it does not fit. */
static double room(const kb_res *free_, const kb_res *extra, const kb_res *need)
{
	double best = 1e18;
	for (int r = 0; r < KB_RES_MAX; r++) {
		if (need->q[r] <= 0)
			continue;
		double f = (double)free_->q[r] + (extra ? (double)extra->q[r] : 0);
		double x = f / (double)need->q[r];
		if (x < best)
			best = x;
	}
	return best;
}

typedef struct ranked {
	uint32_t d;
	double room;
} ranked;

static int cmp_tight(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->room != y->room)
		return x->room < y->room ? -1 : 1;
	return x->d < y->d ? -1 : x->d > y->d;
}

static int cmp_roomy(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->room != y->room)
		return x->room > y->room ? -1 : 1;
	return x->d < y->d ? -1 : x->d > y->d;
}

/* The domains of level l inside domain pd of level pl (pl < l; pl -1: the
 * whole cluster): [*lo, *hi). Domains inside one domain are contiguous. */
static void inside(const kb_topo_tree *t, int32_t pl, uint32_t pd, int32_t l, uint32_t *lo,
		   uint32_t *hi)
{
	if (pl < 0) {
		*lo = 0;
		*hi = t->lv[l].ndomains;
		return;
	}
	uint32_t a = pd, b = pd + 1;
	for (int32_t q = pl; q < l; q++) {
		const topo_level *lv = &t->lv[q];
		uint32_t na = UINT32_MAX, nb = 0;
		for (uint32_t d = a; d < b; d++)
			if (lv->cend[d] > lv->cfirst[d]) {
				if (na == UINT32_MAX)
					na = lv->cfirst[d];
				nb = lv->cend[d];
			}
		if (na == UINT32_MAX) {
			*lo = *hi = 0;
			return;
		}
		a = na;
		b = nb;
	}
	*lo = a;
	*hi = b;
}

/* The domain of level l that node ni is in, or -1. */
static int32_t domain_of(const kb_topo_tree *t, int32_t l, int32_t ni)
{
	return ni >= 0 ? t->lv[l].domain_of_node[ni] : -1;
}

/* The first placed task's node of job j (task order), or -1. */
static int32_t placed_node(const kb_snapshot *s, const kb_job *j)
{
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->node >= 0 && (kb_task_status_allocated(t->status) || t->status == KB_TASK_PIPELINED))
			return t->node;
	}
	return -1;
}

/* Up to max domains of level l inside (pl, pd) that may hold the job,
 * into out, best first: tight (best fit) or roomy first; with evictable
 * (per domain of l) added to what is free, and then no node count. Their
 * count, or -ENOMEM. */
static int rank(kb_session *ssn, const kb_topo_tree *t, int32_t l, int32_t pl, uint32_t pd,
		const job_need *jn, const kb_res *evictable, bool tight, uint32_t *out, uint32_t max)
{
	const topo_level *lv = &t->lv[l];
	uint32_t lo, hi;
	inside(t, pl, pd, l, &lo, &hi);
	if (hi <= lo)
		return 0;
	ranked *v = kb_arena_alloc(&ssn->arena, (hi - lo) * sizeof(ranked));
	if (!v)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t d = lo; d < hi; d++) {
		if (lv->nsched[d] == 0)
			continue;
		double x = room(&lv->free[d], evictable ? &evictable[d] : NULL, &jn->need);
		if (x < 1)
			continue;
		/* Evicting: the freest first (the fewest victims), by what is free. */
		v[n++] = (ranked){d, evictable ? room(&lv->free[d], NULL, &jn->need) : x};
	}
	qsort(v, n, sizeof(ranked), tight ? cmp_tight : cmp_roomy);
	uint32_t m = 0, counted = 0;
	for (uint32_t i = 0; i < n && m < max; i++) {
		if (!evictable && jn->k > 0) {
			if (counted++ == MAX_COUNTED)
				break;
			if (count_fit(ssn, lv, v[i].d, &jn->minreq, jn->k) < jn->k)
				continue;
		}
		out[m++] = v[i].d;
	}
	return (int)m;
}

/* Domains of level ol inside (hl, hd), roomiest first: the order to fill. */
static int fill_order(kb_session *ssn, const kb_topo_tree *t, int32_t ol, int32_t hl, uint32_t hd,
		      const job_need *jn, kb_topo_scope *sc)
{
	const topo_level *lv = &t->lv[ol];
	uint32_t lo, hi;
	inside(t, hl, hd, ol, &lo, &hi);
	sc->order_level = ol;
	sc->norder = 0;
	if (hi <= lo)
		return 0;
	ranked *v = kb_arena_alloc(&ssn->arena, (hi - lo) * sizeof(ranked));
	uint32_t *o = kb_arena_alloc(&ssn->arena, (hi - lo) * sizeof(uint32_t));
	if (!v || !o)
		return -ENOMEM;
	/* The room for the job's smallest pod, so that a domain that holds
	 * more of the gang comes first. */
	uint32_t n = 0;
	for (uint32_t d = lo; d < hi; d++)
		if (lv->nsched[d] > 0)
			v[n++] = (ranked){d, room(&lv->free[d], NULL, &jn->minreq)};
	qsort(v, n, sizeof(ranked), cmp_roomy);
	for (uint32_t i = 0; i < n; i++)
		o[i] = v[i].d;
	sc->order = o;
	sc->norder = n;
	return 0;
}

/* "b1/r2": the values of domain d of level l and of the domains above it,
 * from the session arena; NULL on -ENOMEM. */
static const char *domain_name(kb_session *ssn, const kb_topo_tree *t, int32_t l, uint32_t d)
{
	const char *name = t->lv[l].value[d];
	for (int32_t q = l; q > 0 && name;) {
		d = (uint32_t)t->lv[q].parent[d];
		q--;
		name = kb_arena_printf(&ssn->arena, "%s/%s", t->lv[q].value[d], name);
	}
	return name;
}

static int add_attempt(kb_session *ssn, kb_topo_attempts *at, const kb_topo_tree *t, int32_t hl,
		       uint32_t hd, int32_t ol, const job_need *jn)
{
	if (at->n == KB_TOPO_MAX_ATTEMPTS)
		return 0;
	kb_topo_scope *sc = &at->v[at->n];
	memset(sc, 0, sizeof(*sc));
	sc->tree = t;
	sc->hard_level = hl;
	sc->hard_domain = hd;
	sc->order_level = -1;
	if (ol >= 0 && ol != hl && fill_order(ssn, t, ol, hl, hd, jn, sc) < 0)
		return -ENOMEM;
	if (hl >= 0) {
		const char *name = domain_name(ssn, t, hl, hd);
		sc->outside = name ? kb_arena_printf(&ssn->arena, "node(s) outside the gang's %s \"%s\"",
						     t->lv[hl].key, name)
				   : NULL;
		if (!sc->outside)
			return -ENOMEM;
	}
	at->n++;
	return 0;
}

/* Per domain of level l, what the nodes' evictable resources sum to. */
static kb_res *evictable_by_domain(kb_session *ssn, const kb_topo_tree *t, int32_t l,
				   const kb_res *per_node)
{
	const topo_level *lv = &t->lv[l];
	kb_res *v = kb_arena_calloc(&ssn->arena, lv->ndomains ? lv->ndomains : 1, sizeof(kb_res));
	if (!v)
		return NULL;
	for (uint32_t d = 0; d < lv->ndomains; d++)
		for (uint32_t k = lv->first[d]; k < lv->first[d + 1]; k++)
			if (kb_node_schedulable(&ssn->snap->nodes[lv->nodes[k]]))
				kb_res_add(&v[d], &per_node[lv->nodes[k]]);
	return v;
}

int kb_topo_attempts_for(kb_session *ssn, const kb_job *j, const kb_res *evictable,
			 kb_topo_attempts *ret)
{
	memset(ret, 0, sizeof(*ret));
	uint32_t ji = (uint32_t)(j - ssn->snap->jobs);
	const kb_topo_scope *have = kb_topo_scope_of(ssn, (int32_t)ji);
	if (have) {
		ret->v[0] = *have;
		ret->n = 1;
		return 0;
	}
	topo_plan *p;
	int r = plan_of(ssn, j, &p);
	if (r < 0)
		return r;
	if (p->error) {
		ret->error = p->error;
		return 0;
	}
	if (evictable && p->req < 0) {
		ret->unconstrained = true; /* preemption keeps no preference */
		return 0;
	}
	job_need jn;
	if (need_of(ssn, j, &jn) < 0)
		return -ENOMEM;
	const kb_topo_tree *t = p->tree;
	int32_t at_node = placed_node(ssn->snap, j);
	uint32_t hard[MAX_HARD_CANDIDATES];
	int nh = 1;
	if (p->req >= 0) {
		int32_t forced = domain_of(t, p->req, at_node);
		if (forced >= 0) {
			hard[0] = (uint32_t)forced;
		} else if (evictable) {
			kb_res *ev = evictable_by_domain(ssn, t, p->req, evictable);
			if (!ev)
				return -ENOMEM;
			nh = rank(ssn, t, p->req, -1, 0, &jn, ev, false, hard, FEW_HARD_CANDIDATES);
		} else {
			nh = rank(ssn, t, p->req, -1, 0, &jn, NULL, true, hard,
				  p->pref >= 0 ? FEW_HARD_CANDIDATES : MAX_HARD_CANDIDATES);
		}
		if (nh < 0)
			return nh;
	}
	for (int h = 0; h < nh; h++) {
		int32_t hl = p->req;
		uint32_t hd = p->req >= 0 ? hard[h] : 0;
		if (p->pref < 0 || evictable) {
			if ((r = add_attempt(ssn, ret, t, hl, hd, -1, &jn)) < 0)
				return r;
			continue;
		}
		/* One domain of the preferred level, else of each broader level
		 * up to the required one, packed; else all of it, packed. A job
		 * with members placed keeps to their domains. */
		for (int32_t l = p->pref; l > hl && l >= 0; l--) {
			uint32_t one;
			int32_t forced = domain_of(t, l, at_node);
			if (forced >= 0)
				one = (uint32_t)forced;
			else if ((r = rank(ssn, t, l, hl, hd, &jn, NULL, true, &one, 1)) <= 0) {
				if (r < 0)
					return r;
				continue;
			}
			if ((r = add_attempt(ssn, ret, t, l, one, p->pref, &jn)) < 0)
				return r;
			if (forced >= 0)
				break;
		}
		if ((r = add_attempt(ssn, ret, t, hl, hd, p->pref, &jn)) < 0)
			return r;
	}
	return 0;
}

int kb_topo_set_scope(kb_session *ssn, uint32_t ji, const kb_topo_scope *sc)
{
	topo_state *st = state(ssn);
	if (!st)
		return -ENOMEM;
	kb_topo_scope *copy = NULL;
	if (sc) {
		copy = kb_arena_alloc(&ssn->arena, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		*copy = *sc;
	}
	st->pub.scope_of_job[ji] = copy;
	kb_session_placement_changed(ssn);
	return 0;
}

bool kb_topo_allows(const kb_session *ssn, const kb_task *t, uint32_t ni, const char **ret_reason)
{
	const kb_topo_scope *sc = kb_topo_scope_of(ssn, t->job);
	if (!sc || sc->hard_level < 0 ||
	    sc->tree->lv[sc->hard_level].domain_of_node[ni] == (int32_t)sc->hard_domain)
		return true;
	if (ret_reason)
		*ret_reason = sc->outside;
	return false;
}

uint32_t kb_topo_domain_nodes(const kb_topo_tree *tree, int32_t l, uint32_t d,
			      const uint32_t **ret_nodes)
{
	const topo_level *lv = &tree->lv[l];
	*ret_nodes = lv->nodes + lv->first[d];
	return lv->first[d + 1] - lv->first[d];
}

int32_t kb_topo_domain_of(const kb_topo_tree *tree, int32_t l, uint32_t ni)
{
	return tree->lv[l].domain_of_node[ni];
}

/* ---- reasons -------------------------------------------------------------------- */

const char *kb_topo_reason(kb_session *ssn, const kb_job *j, const char *fail)
{
	topo_plan *p;
	if (plan_of(ssn, j, &p) < 0)
		return NULL;
	if (p->error)
		return p->error;
	if (p->req < 0)
		return fail; /* a preference never keeps a gang waiting by itself */
	job_need jn;
	if (need_of(ssn, j, &jn) < 0)
		return NULL;
	const kb_snapshot *s = ssn->snap;
	const kb_topo_tree *t = p->tree;
	const topo_level *lv = &t->lv[p->req];
	int32_t forced = domain_of(t, p->req, placed_node(s, j));
	int32_t best = -1, best_fit = -1;
	int best_short = KB_RES_MAX + 1;
	uint32_t nsched = 0;
	for (uint32_t d = 0; d < lv->ndomains; d++) {
		if (lv->nsched[d] == 0 || (forced >= 0 && d != (uint32_t)forced))
			continue;
		nsched++;
		int shorts = 0;
		for (int r = 0; r < KB_RES_MAX; r++)
			shorts += jn.need.q[r] > lv->free[d].q[r];
		int32_t fit = count_fit(ssn, lv, d, &jn.minreq, jn.k > 0 ? jn.k : 1);
		if (best < 0 || fit > best_fit || (fit == best_fit && shorts < best_short)) {
			best = (int32_t)d;
			best_fit = fit;
			best_short = shorts;
		}
	}
	char head[512];
	(void)snprintf(head, sizeof(head), "gang \"%s\" needs %s: ", j->key, p->what);
	if (best < 0)
		return kb_arena_printf(&ssn->arena, "%sno ready, uncordoned node has the label%s",
				       head, p->req ? "s of its levels" : "");
	const char *name = domain_name(ssn, t, p->req, (uint32_t)best);
	if (!name)
		return NULL;
	char scope_txt[256];
	if (forced >= 0)
		(void)snprintf(scope_txt, sizeof(scope_txt),
			       "its placed members' %s \"%s\" cannot hold its %d more pods",
			 lv->key, name, jn.k);
	else
		(void)snprintf(scope_txt, sizeof(scope_txt), "none of %u domains of %s holds its %d more pods",
			 nsched, lv->key, jn.k);
	int r = kb_res_first_short(&jn.need, &lv->free[best]);
	if (r >= 0) {
		char lack[KB_QUANTITY_BUFSZ], have[KB_QUANTITY_BUFSZ], want[KB_QUANTITY_BUFSZ];
		int64_t f = lv->free[best].q[r] > 0 ? lv->free[best].q[r] : 0;
		const char *rn = s->resnames.name[r];
		return kb_arena_printf(
			&ssn->arena, "%s%s; best \"%s\" lacks %s: %s (has %s of the %s needed)", head,
			scope_txt, name, rn, kb_res_format_one(jn.need.q[r] - f, &s->resnames, r, lack),
			kb_res_format_one(f, &s->resnames, r, have),
			kb_res_format_one(jn.need.q[r], &s->resnames, r, want));
	}
	if (best_fit < jn.k) {
		char each[256];
		kb_res_format(&jn.minreq, &s->resnames, each, sizeof(each));
		return kb_arena_printf(&ssn->arena,
				       "%s%s; best \"%s\" has room for %d of them on its nodes (each "
				       "needs at least %s)",
				       head, scope_txt, name, best_fit, each);
	}
	return kb_arena_printf(&ssn->arena, "%s%s; best \"%s\": %s", head, scope_txt, name,
			       fail ? fail : "its members did not all fit");
}

/* ---- keeping the aggregates exact ----------------------------------------------- */

static void node_delta(kb_session *ssn, int32_t ni, bool add)
{
	if (!ssn->topo || ni < 0 || !kb_node_schedulable(&ssn->snap->nodes[ni]))
		return;
	kb_res f;
	kb_node_future_idle(&ssn->snap->nodes[ni], &f);
	for (kb_topo_tree *t = ssn->topo->trees; t; t = t->next)
		for (uint32_t l = 0; l < t->nlevels; l++) {
			int32_t d = t->lv[l].domain_of_node[ni];
			if (d < 0)
				continue;
			if (add)
				kb_res_add(&t->lv[l].free[d], &f);
			else
				kb_res_sub(&t->lv[l].free[d], &f);
		}
}

void kb_topo_node_changing(kb_session *ssn, int32_t ni)
{
	node_delta(ssn, ni, false);
}

void kb_topo_node_changed(kb_session *ssn, int32_t ni)
{
	node_delta(ssn, ni, true);
}

/* Whether domain d of level lv of tree t has the aggregates its nodes give
 * (see kb_topo_check). */
static bool domain_exact(const kb_snapshot *s, const kb_topo_tree *t, const topo_level *lv,
			 uint32_t d, char *why, size_t size)
{
	kb_res sum = {0}, f;
	uint32_t n = 0;
	for (uint32_t k = lv->first[d]; k < lv->first[d + 1]; k++) {
		const kb_node *nd = &s->nodes[lv->nodes[k]];
		if (!kb_node_schedulable(nd))
			continue;
		kb_node_future_idle(nd, &f);
		kb_res_add(&sum, &f);
		n++;
	}
	int r = kb_res_first_short(&sum, &lv->free[d]);
	if (r < 0)
		r = kb_res_first_short(&lv->free[d], &sum);
	if (n == lv->nsched[d] && r < 0)
		return true;
	if (why && n != lv->nsched[d])
		(void)snprintf(why, size,
			       "levels \"%s\": %s \"%s\" counts %u schedulable nodes, its nodes are %u",
			       t->levels, lv->key, lv->value[d], lv->nsched[d], n);
	else if (why)
		(void)snprintf(why, size,
			       "levels \"%s\": %s \"%s\" has %lld of resource %d free, its nodes %lld",
			       t->levels, lv->key, lv->value[d], (long long)lv->free[d].q[r], r,
			       (long long)sum.q[r]);
	return false;
}

bool kb_topo_check(const kb_session *ssn, char *why, size_t size)
{
	if (!ssn->topo)
		return true;
	for (const kb_topo_tree *t = ssn->topo->trees; t; t = t->next)
		for (uint32_t l = 0; l < t->nlevels; l++)
			for (uint32_t d = 0; d < t->lv[l].ndomains; d++)
				if (!domain_exact(ssn->snap, t, &t->lv[l], d, why, size))
					return false;
	return true;
}

/* decode_pod_topology.c - where a Pod may go relative to other pods (see
 * decode.h): spec.affinity.podAffinity and podAntiAffinity (required and
 * preferred terms) and spec.topologySpreadConstraints.
 *
 * What the API server refuses is refused here too, naming the field: a
 * label selector that does not parse (unknown operator, values that do not
 * suit it, a key or value that is not a valid label), an empty topology
 * key, a weight outside 1..100, maxSkew < 1, minDomains < 1 or with
 * ScheduleAnyway, an unknown whenUnsatisfiable or inclusion policy, two
 * constraints with the same topologyKey and whenUnsatisfiable, label keys
 * in matchLabelKeys and mismatchLabelKeys both, or without a labelSelector.
 *
 * matchLabelKeys and mismatchLabelKeys of a pod affinity term are merged
 * into its selector as the API server does when it creates the pod
 * (pkg/registry/core/pod/strategy.go): key In (the pod's value) or NotIn,
 * for each key the pod has. An API object already carries the merged
 * requirements; merging again adds the same requirement twice, which
 * selects the same pods. A spread constraint's matchLabelKeys are merged
 * the same way, as kube-scheduler v1.33 does at PreFilter (a nil
 * labelSelector stays nil: it selects nothing).
 */
#include "cache/decode.h"

#include <errno.h>
#include <string.h>

#include "api/labels.h"

/* ---- label selectors -------------------------------------------------------------- */

static int bad_key(dec_ctx *d, const kb_yaml_node *at, const char *path, const char *key)
{
	return dec_fail(d, -EINVAL, at, path,
			"invalid label key \"%.*s\" (a qualified name: [prefix/]name, the name "
			"at most 63 characters of alphanumerics, '-', '_', '.')",
			DEC_QUOTE_MAX, key);
}

static int bad_value(dec_ctx *d, const kb_yaml_node *at, const char *path, const char *v)
{
	return dec_fail(d, -EINVAL, at, path,
			"invalid label value \"%.*s\" (at most 63 characters of alphanumerics, "
			"'-', '_', '.', beginning and ending with an alphanumeric)",
			DEC_QUOTE_MAX, v);
}

/* One item of matchExpressions into ((kb_selector_req *)ctx)[i]. */
static int dec_label_req(dec_ctx *d, const kb_yaml_node *e, const char *path, size_t i, void *ctx)
{
	kb_selector_req *q = (kb_selector_req *)ctx + i;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.key", path);
	int r = dec_str(d, kb_yaml_get(e, "key"), sub, &q->key);
	if (r < 0)
		return r;
	if (!q->key || !*q->key)
		return dec_fail(d, -EINVAL, e, sub, "required");
	if (!kb_label_key_valid(q->key, strlen(q->key)))
		return bad_key(d, kb_yaml_get(e, "key"), sub, q->key);
	dec_path(sub, "%s.operator", path);
	const kb_yaml_node *op = kb_yaml_get(e, "operator");
	if (dec_scalar_is(op, "In"))
		q->op = KB_SEL_IN;
	else if (dec_scalar_is(op, "NotIn"))
		q->op = KB_SEL_NOT_IN;
	else if (dec_scalar_is(op, "Exists"))
		q->op = KB_SEL_EXISTS;
	else if (dec_scalar_is(op, "DoesNotExist"))
		q->op = KB_SEL_DOES_NOT_EXIST;
	else if (kb_yaml_is_null(op))
		return dec_fail(d, -EINVAL, e, sub, "required");
	else if (dec_is_scalar(op))
		return dec_fail(d, -EINVAL, op, sub,
				"unknown operator \"%.*s\" (want In, NotIn, Exists or DoesNotExist)",
				DEC_QUOTE_MAX, op->str);
	else
		return dec_fail(d, -EINVAL, op, sub, "expected a string, got %s",
				kb_yaml_kind_name(op));
	dec_path(sub, "%s.values", path);
	const kb_yaml_node *vals, *vn = kb_yaml_get(e, "values");
	if ((r = dec_seq(d, vn, sub, &vals)) < 0)
		return r;
	size_t nv = vals ? vals->n : 0;
	bool want = q->op == KB_SEL_IN || q->op == KB_SEL_NOT_IN;
	if (want && nv == 0)
		return dec_fail(d, -EINVAL, vn ? vn : e, sub,
				"must be specified when the operator is In or NotIn");
	if (!want && nv != 0)
		return dec_fail(d, -EINVAL, vn, sub,
				"may not be specified when the operator is Exists or DoesNotExist");
	if (nv == 0)
		return 0;
	const char **v;
	if ((r = dec_strings(d, vals, sub, &v)) < 0)
		return r;
	for (size_t j = 0; j < nv; j++)
		if (!kb_label_value_valid(v[j], strlen(v[j]))) {
			char vpath[DEC_PATH_LEN];
			dec_path(vpath, "%s[%zu]", sub, j);
			return bad_value(d, vals->items[j], vpath, v[j]);
		}
	q->values = v;
	q->nvalues = (uint32_t)nv;
	return 0;
}

/* A metav1.LabelSelector at n (path) into *ret, with room for `extra` more
 * requirements after its own (the merged label keys; ret->n counts only its
 * own). Absent or null: nothing (a nil selector). */
int dec_label_selector(dec_ctx *d, const kb_yaml_node *n, const char *path, size_t extra,
		       kb_label_selector *ret)
{
	const kb_yaml_node *m;
	int r = dec_map(d, n, path, &m);
	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	if (!m) {
		ret->nothing = true;
		return 0;
	}
	char lpath[DEC_PATH_LEN], epath[DEC_PATH_LEN];
	dec_path(lpath, "%s.matchLabels", path);
	dec_path(epath, "%s.matchExpressions", path);
	kb_labels ml = {0};
	const kb_yaml_node *mln = kb_yaml_get(m, "matchLabels"), *exprs;
	if ((r = dec_labels(d, mln, lpath, &ml)) < 0 ||
	    (r = dec_seq(d, kb_yaml_get(m, "matchExpressions"), epath, &exprs)) < 0)
		return r;
	size_t ne = exprs ? exprs->n : 0, total = ml.n + ne + extra;
	if (total == 0)
		return 0;
	kb_selector_req *reqs = kb_arena_calloc(d->a, total, sizeof(*reqs));
	if (!reqs)
		return dec_nomem(d);
	for (uint32_t i = 0; i < ml.n; i++) {
		bool key_ok = kb_label_key_valid(ml.v[i].key, strlen(ml.v[i].key));
		if (!key_ok || !kb_label_value_valid(ml.v[i].value, strlen(ml.v[i].value))) {
			/* The path and the position only for the message. */
			char sub[DEC_PATH_LEN];
			dec_path(sub, "%s.%s", lpath, ml.v[i].key);
			const kb_yaml_node *at = kb_yaml_get(mln, ml.v[i].key);
			return key_ok ? bad_value(d, at, sub, ml.v[i].value)
				      : bad_key(d, at, sub, ml.v[i].key);
		}
		const char **v = kb_arena_alloc(d->a, sizeof(*v));
		if (!v)
			return dec_nomem(d);
		v[0] = ml.v[i].value;
		reqs[i] = (kb_selector_req){.key = ml.v[i].key, .op = KB_SEL_IN, .values = v,
					    .nvalues = 1};
	}
	if ((r = dec_each_map(d, exprs, epath, DEC_NULL_ITEM_FAILS, dec_label_req,
			      reqs + ml.n)) < 0)
		return r;
	ret->reqs = reqs;
	ret->n = (uint32_t)(ml.n + ne);
	return 0;
}

/* Appends key <op> (the pod's value) to sel for each of keys the pod has
 * (room was made by dec_label_selector). */
static int merge_label_keys(dec_ctx *d, const kb_labels *pod_labels, const char *const *keys,
			    size_t n, kb_selector_op op, kb_label_selector *sel)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = kb_labels_get(pod_labels, keys[i]);
		if (!v)
			continue;
		const char **vv = kb_arena_alloc(d->a, sizeof(*vv));
		if (!vv)
			return dec_nomem(d);
		vv[0] = v;
		((kb_selector_req *)sel->reqs)[sel->n++] =
			(kb_selector_req){.key = keys[i], .op = op, .values = vv, .nvalues = 1};
	}
	return 0;
}

/* A list of label keys at n (path): *ret_keys (NULL when none), *ret_n. */
static int dec_label_keys(dec_ctx *d, const kb_yaml_node *n, const char *path,
			  const char ***ret_keys, size_t *ret_n)
{
	const kb_yaml_node *seq;
	int r = dec_seq(d, n, path, &seq);
	if (r < 0)
		return r;
	*ret_keys = NULL;
	*ret_n = 0;
	if (!seq || seq->n == 0)
		return 0;
	const char **keys;
	if ((r = dec_strings(d, seq, path, &keys)) < 0)
		return r;
	for (size_t i = 0; i < seq->n; i++)
		if (!kb_label_key_valid(keys[i], strlen(keys[i]))) {
			char sub[DEC_PATH_LEN];
			dec_path(sub, "%s[%zu]", path, i);
			return bad_key(d, seq->items[i], sub, keys[i]);
		}
	*ret_keys = keys;
	*ret_n = seq->n;
	return 0;
}

/* A topologyKey at n (path): required, a valid label key. */
static int dec_topology_key(dec_ctx *d, const kb_yaml_node *parent, const char *path,
			    const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(parent, "topologyKey");
	int r = dec_str(d, n, path, ret);
	if (r < 0)
		return r;
	if (!*ret || !**ret)
		return dec_fail(d, -EINVAL, n ? n : parent, path, "required (a node label key)");
	if (!kb_label_key_valid(*ret, strlen(*ret)))
		return bad_key(d, n, path, *ret);
	return 0;
}

/* ---- pod (anti-)affinity ---------------------------------------------------------- */

/* One v1.PodAffinityTerm at t (path) into *ret. */
static int dec_affinity_term(dec_ctx *d, const kb_yaml_node *t, const char *path,
			     kb_pod_affinity_term *ret)
{
	const kb_pod_spec *ps = &d->o->u.pod.spec;
	char sub[DEC_PATH_LEN], mpath[DEC_PATH_LEN], xpath[DEC_PATH_LEN];
	const char **mk, **xk;
	size_t nmk, nxk;
	dec_path(mpath, "%s.matchLabelKeys", path);
	dec_path(xpath, "%s.mismatchLabelKeys", path);
	int r;
	if ((r = dec_label_keys(d, kb_yaml_get(t, "matchLabelKeys"), mpath, &mk, &nmk)) < 0 ||
	    (r = dec_label_keys(d, kb_yaml_get(t, "mismatchLabelKeys"), xpath, &xk, &nxk)) < 0)
		return r;
	for (size_t i = 0; i < nmk; i++)
		for (size_t j = 0; j < nxk; j++)
			if (strcmp(mk[i], xk[j]) == 0)
				return dec_fail(d, -EINVAL, kb_yaml_get(t, "mismatchLabelKeys"),
						xpath,
						"\"%.*s\" is also in matchLabelKeys (a key may be "
						"in only one of them)",
						DEC_QUOTE_MAX, mk[i]);
	dec_path(sub, "%s.labelSelector", path);
	if ((r = dec_label_selector(d, kb_yaml_get(t, "labelSelector"), sub, nmk + nxk,
				    &ret->selector)) < 0)
		return r;
	if (ret->selector.nothing && nmk + nxk > 0)
		return dec_fail(d, -EINVAL, t, nmk ? mpath : xpath,
				"may not be specified when labelSelector is not set");
	if ((r = merge_label_keys(d, &ps->labels, mk, nmk, KB_SEL_IN, &ret->selector)) < 0 ||
	    (r = merge_label_keys(d, &ps->labels, xk, nxk, KB_SEL_NOT_IN, &ret->selector)) < 0)
		return r;

	dec_path(sub, "%s.namespaceSelector", path);
	if ((r = dec_label_selector(d, kb_yaml_get(t, "namespaceSelector"), sub, 0,
				    &ret->ns_selector)) < 0)
		return r;
	dec_path(sub, "%s.namespaces", path);
	const kb_yaml_node *nss;
	if ((r = dec_seq(d, kb_yaml_get(t, "namespaces"), sub, &nss)) < 0)
		return r;
	if (nss && nss->n > 0) {
		const char **v;
		if ((r = dec_strings(d, nss, sub, &v)) < 0)
			return r;
		ret->namespaces = v;
		ret->nnamespaces = (uint32_t)nss->n;
	} else if (ret->ns_selector.nothing) {
		const char **v = kb_arena_alloc(d->a, sizeof(*v));
		if (!v)
			return dec_nomem(d);
		v[0] = d->o->meta.ns;
		ret->namespaces = v;
		ret->nnamespaces = 1;
	}
	dec_path(sub, "%s.topologyKey", path);
	return dec_topology_key(d, t, sub, &ret->topology_key);
}

static int dec_required_item(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			     void *ctx)
{
	return dec_affinity_term(d, it, path, (kb_pod_affinity_term *)ctx + i);
}

static int dec_preferred_item(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			      void *ctx)
{
	kb_pod_affinity_term *t = (kb_pod_affinity_term *)ctx + i;
	char sub[DEC_PATH_LEN];
	int32_t w;
	int r = dec_term_weight(d, it, path, &w);
	if (r < 0)
		return r;
	dec_path(sub, "%s.podAffinityTerm", path);
	const kb_yaml_node *pt;
	if ((r = dec_map(d, kb_yaml_get(it, "podAffinityTerm"), sub, &pt)) < 0)
		return r;
	if (!pt)
		return dec_fail(d, -EINVAL, it, sub, "required");
	if ((r = dec_affinity_term(d, pt, sub, t)) < 0)
		return r;
	t->weight = w;
	return 0;
}

/* The terms of list `field` of `parent` (at ppath): required terms or
 * weighted ones. */
static int dec_terms(dec_ctx *d, const kb_yaml_node *parent, const char *ppath, const char *field,
		     bool preferred, const kb_pod_affinity_term **ret, uint32_t *ret_n)
{
	char path[DEC_PATH_LEN];
	dec_path(path, "%s.%s", ppath, field);
	const kb_yaml_node *seq;
	int r = dec_seq(d, kb_yaml_get(parent, field), path, &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_pod_affinity_term *t = kb_arena_calloc(d->a, seq->n, sizeof(*t));
	if (!t)
		return dec_nomem(d);
	if ((r = dec_each_map(d, seq, path, DEC_NULL_ITEM_FAILS,
			      preferred ? dec_preferred_item : dec_required_item, t)) < 0)
		return r;
	*ret = t;
	*ret_n = (uint32_t)seq->n;
	return 0;
}

static const char REQ[] = "requiredDuringSchedulingIgnoredDuringExecution";
static const char PREF[] = "preferredDuringSchedulingIgnoredDuringExecution";

static int dec_pod_affinity(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	const kb_yaml_node *aff, *pa, *paa;
	int r;
	if ((r = dec_map(d, kb_yaml_get(spec, "affinity"), "spec.affinity", &aff)) < 0 || !aff)
		return r;
	if ((r = dec_map(d, kb_yaml_get(aff, "podAffinity"), "spec.affinity.podAffinity", &pa)) <
		    0 ||
	    (r = dec_map(d, kb_yaml_get(aff, "podAntiAffinity"), "spec.affinity.podAntiAffinity",
			 &paa)) < 0)
		return r;
	if (pa && ((r = dec_terms(d, pa, "spec.affinity.podAffinity", REQ, false, &ps->affinity,
				  &ps->naffinity)) < 0 ||
		   (r = dec_terms(d, pa, "spec.affinity.podAffinity", PREF, true,
				  &ps->pref_affinity, &ps->npref_affinity)) < 0))
		return r;
	if (paa && ((r = dec_terms(d, paa, "spec.affinity.podAntiAffinity", REQ, false,
				   &ps->anti_affinity, &ps->nanti_affinity)) < 0 ||
		    (r = dec_terms(d, paa, "spec.affinity.podAntiAffinity", PREF, true,
				   &ps->pref_anti_affinity, &ps->npref_anti_affinity)) < 0))
		return r;
	return 0;
}

/* ---- topology spread constraints ------------------------------------------------ */

/* Honor (true) or Ignore (false) at n; absent leaves *ret. */
static int dec_policy(dec_ctx *d, const kb_yaml_node *n, const char *path, bool *ret)
{
	if (kb_yaml_is_null(n))
		return 0;
	if (dec_scalar_is(n, "Honor"))
		*ret = true;
	else if (dec_scalar_is(n, "Ignore"))
		*ret = false;
	else if (dec_is_scalar(n))
		return dec_fail(d, -EINVAL, n, path, "unknown policy \"%.*s\" (want Honor or Ignore)",
				DEC_QUOTE_MAX, n->str);
	else
		return dec_fail(d, -EINVAL, n, path, "expected a string, got %s",
				kb_yaml_kind_name(n));
	return 0;
}

static int dec_spread_item(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			   void *ctx)
{
	kb_spread_constraint *c = (kb_spread_constraint *)ctx + i;
	char sub[DEC_PATH_LEN];
	int64_t v = 0;
	bool present;
	int r;

	dec_path(sub, "%s.maxSkew", path);
	const kb_yaml_node *ms = kb_yaml_get(it, "maxSkew");
	if ((r = dec_int(d, ms, sub, INT32_MIN, INT32_MAX, &v, &present)) < 0)
		return r;
	if (!present)
		return dec_fail(d, -EINVAL, it, sub, "required (an integer >= 1)");
	if (v < 1)
		return dec_fail(d, -EINVAL, ms, sub, "must be greater than zero, got %lld",
				(long long)v);
	c->max_skew = (int32_t)v;

	dec_path(sub, "%s.topologyKey", path);
	if ((r = dec_topology_key(d, it, sub, &c->topology_key)) < 0)
		return r;

	dec_path(sub, "%s.whenUnsatisfiable", path);
	const kb_yaml_node *wu = kb_yaml_get(it, "whenUnsatisfiable");
	if (dec_scalar_is(wu, "DoNotSchedule"))
		c->schedule_anyway = false;
	else if (dec_scalar_is(wu, "ScheduleAnyway"))
		c->schedule_anyway = true;
	else if (kb_yaml_is_null(wu))
		return dec_fail(d, -EINVAL, it, sub, "required (DoNotSchedule or ScheduleAnyway)");
	else if (dec_is_scalar(wu))
		return dec_fail(d, -EINVAL, wu, sub,
				"unknown action \"%.*s\" (want DoNotSchedule or ScheduleAnyway)",
				DEC_QUOTE_MAX, wu->str);
	else
		return dec_fail(d, -EINVAL, wu, sub, "expected a string, got %s",
				kb_yaml_kind_name(wu));

	dec_path(sub, "%s.minDomains", path);
	const kb_yaml_node *md = kb_yaml_get(it, "minDomains");
	v = 1;
	if ((r = dec_int(d, md, sub, INT32_MIN, INT32_MAX, &v, &present)) < 0)
		return r;
	if (present && v < 1)
		return dec_fail(d, -EINVAL, md, sub, "must be greater than zero, got %lld",
				(long long)v);
	if (present && c->schedule_anyway)
		return dec_fail(d, -EINVAL, md, sub,
				"may only be set when whenUnsatisfiable is DoNotSchedule");
	c->min_domains = (int32_t)v;

	c->honor_affinity = true;
	c->honor_taints = false;
	dec_path(sub, "%s.nodeAffinityPolicy", path);
	if ((r = dec_policy(d, kb_yaml_get(it, "nodeAffinityPolicy"), sub, &c->honor_affinity)) < 0)
		return r;
	dec_path(sub, "%s.nodeTaintsPolicy", path);
	if ((r = dec_policy(d, kb_yaml_get(it, "nodeTaintsPolicy"), sub, &c->honor_taints)) < 0)
		return r;

	char kpath[DEC_PATH_LEN];
	dec_path(kpath, "%s.matchLabelKeys", path);
	const char **mk;
	size_t nmk;
	if ((r = dec_label_keys(d, kb_yaml_get(it, "matchLabelKeys"), kpath, &mk, &nmk)) < 0)
		return r;
	dec_path(sub, "%s.labelSelector", path);
	if ((r = dec_label_selector(d, kb_yaml_get(it, "labelSelector"), sub, nmk,
				    &c->selector)) < 0)
		return r;
	for (size_t k = 0; k < nmk; k++)
		for (uint32_t q = 0; q < c->selector.n; q++)
			if (strcmp(mk[k], c->selector.reqs[q].key) == 0)
				return dec_fail(d, -EINVAL, kb_yaml_get(it, "matchLabelKeys"), kpath,
						"\"%.*s\" is also a key of labelSelector",
						DEC_QUOTE_MAX, mk[k]);
	if (!c->selector.nothing)
		return merge_label_keys(d, &d->o->u.pod.spec.labels, mk, nmk, KB_SEL_IN,
					&c->selector);
	return 0;
}

static int dec_spread(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	static const char path[] = "spec.topologySpreadConstraints";
	const kb_yaml_node *seq;
	int r = dec_seq(d, kb_yaml_get(spec, "topologySpreadConstraints"), path, &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_spread_constraint *c = kb_arena_calloc(d->a, seq->n, sizeof(*c));
	if (!c)
		return dec_nomem(d);
	if ((r = dec_each_map(d, seq, path, DEC_NULL_ITEM_FAILS, dec_spread_item, c)) < 0)
		return r;
	for (size_t i = 1; i < seq->n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(c[i].topology_key, c[j].topology_key) == 0 &&
			    c[i].schedule_anyway == c[j].schedule_anyway) {
				char sub[DEC_PATH_LEN];
				dec_path(sub, "%s[%zu]", path, i);
				return dec_fail(d, -EINVAL, seq->items[i], sub,
						"duplicate constraint: {%.*s, %s} is also %s[%zu]",
						DEC_QUOTE_MAX, c[i].topology_key,
						c[i].schedule_anyway ? "ScheduleAnyway"
								     : "DoNotSchedule",
						path, j);
			}
	ps->spread = c;
	ps->nspread = (uint32_t)seq->n;
	return 0;
}

int dec_pod_topology(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	int r = dec_pod_affinity(d, spec, ps);
	if (r < 0)
		return r;
	return dec_spread(d, spec, ps);
}

/* decode_pod_placement.c - where a Pod may go (see decode.h): its node
 * selector, node affinity (required and preferred node selector terms)
 * and tolerations. Pod affinity and spread: decode_pod_topology.c. */
#include "cache/decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The operator of a requirement at e (path: its .operator). A field
 * selector (matchFields) takes In and NotIn only. */
static int dec_selector_op(dec_ctx *d, const kb_yaml_node *e, const char *path, bool field,
			   kb_selector_op *ret)
{
	const kb_yaml_node *op = kb_yaml_get(e, "operator");
	if (dec_scalar_is(op, "In"))
		*ret = KB_SEL_IN;
	else if (dec_scalar_is(op, "NotIn"))
		*ret = KB_SEL_NOT_IN;
	else if (dec_scalar_is(op, "Exists") && !field)
		*ret = KB_SEL_EXISTS;
	else if (dec_scalar_is(op, "DoesNotExist") && !field)
		*ret = KB_SEL_DOES_NOT_EXIST;
	else if (dec_scalar_is(op, "Gt") && !field)
		*ret = KB_SEL_GT;
	else if (dec_scalar_is(op, "Lt") && !field)
		*ret = KB_SEL_LT;
	else if (kb_yaml_is_null(op))
		return dec_fail(d, -EINVAL, e, path, "required");
	else if (dec_is_scalar(op))
		return dec_fail(d, -EINVAL, op, path, "unknown operator \"%.*s\"", DEC_QUOTE_MAX,
				op->str);
	else
		return dec_fail(d, -EINVAL, op, path, "expected a string, got %s",
				kb_yaml_kind_name(op));
	return 0;
}

/* Whether nv values suit q's operator: In and NotIn want some (exactly one
 * in a field selector), Exists and DoesNotExist none, Gt and Lt one. vn is
 * the values node (NULL when absent), e the requirement. */
static int check_nvalues(dec_ctx *d, const kb_selector_req *q, const kb_yaml_node *e,
			 const kb_yaml_node *vn, const char *path, size_t nv)
{
	switch (q->op) {
	case KB_SEL_IN:
	case KB_SEL_NOT_IN:
		if (nv == 0)
			return dec_fail(d, -EINVAL, vn ? vn : e, path,
					"must be non-empty for operator In or NotIn");
		if (q->field && nv != 1)
			return dec_fail(d, -EINVAL, vn, path,
					"must have exactly one value for a field selector");
		break;
	case KB_SEL_EXISTS:
	case KB_SEL_DOES_NOT_EXIST:
		if (nv != 0)
			return dec_fail(d, -EINVAL, vn, path,
					"must be empty for operator Exists or DoesNotExist");
		break;
	case KB_SEL_GT:
	case KB_SEL_LT:
		if (nv != 1)
			return dec_fail(d, -EINVAL, vn ? vn : e, path,
					"must have exactly one value for operator Gt or Lt");
		break;
	}
	return 0;
}

/* The values of requirement e (at path) into q, q->op already decoded. */
static int dec_selector_values(dec_ctx *d, const kb_yaml_node *e, const char *path,
			       kb_selector_req *q)
{
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.values", path);
	const kb_yaml_node *vals, *vn = kb_yaml_get(e, "values");
	int r = dec_seq(d, vn, sub, &vals);
	if (r < 0)
		return r;
	size_t nv = vals ? vals->n : 0;
	if ((r = check_nvalues(d, q, e, vn, sub, nv)) < 0 || nv == 0)
		return r;
	const char **v;
	if ((r = dec_strings(d, vals, sub, &v)) < 0)
		return r;
	for (size_t j = 0; (q->op == KB_SEL_GT || q->op == KB_SEL_LT) && j < nv; j++) {
		char *end;
		errno = 0;
		(void)strtoll(v[j], &end, 10);
		if (!*v[j] || *end || errno) {
			char vpath[DEC_PATH_LEN];
			dec_path(vpath, "%s[%zu]", sub, j);
			return dec_fail(d, -EINVAL, vals->items[j], vpath,
					"expected an integer, got \"%.*s\"", DEC_QUOTE_MAX, v[j]);
		}
	}
	q->values = v;
	q->nvalues = (uint32_t)nv;
	return 0;
}

/* The requirements of one term, written in place: matchExpressions first,
 * then matchFields (field set). */
typedef struct term_reqs {
	kb_selector_req *v;
	bool field;
} term_reqs;

/* One item of matchExpressions or matchFields into ((term_reqs *)ctx)->v[i]. */
static int dec_selector_req(dec_ctx *d, const kb_yaml_node *e, const char *path, size_t i,
			    void *ctx)
{
	const term_reqs *t = ctx;
	kb_selector_req *q = &t->v[i];
	q->field = t->field;
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.key", path);
	int r = dec_str(d, kb_yaml_get(e, "key"), sub, &q->key);
	if (r < 0)
		return r;
	if (!q->key || !*q->key)
		return dec_fail(d, -EINVAL, e, sub, "required");
	if (q->field && strcmp(q->key, "metadata.name") != 0)
		return dec_fail(d, -EINVAL, kb_yaml_get(e, "key"), sub,
				"unsupported field \"%.*s\" (only metadata.name)", DEC_QUOTE_MAX,
				q->key);
	dec_path(sub, "%s.operator", path);
	if ((r = dec_selector_op(d, e, sub, q->field, &q->op)) < 0)
		return r;
	return dec_selector_values(d, e, path, q);
}

/* A node selector term at n (absent or null: no requirements) into *ret. */
static int dec_selector_term(dec_ctx *d, const kb_yaml_node *n, const char *path,
			     kb_selector_term *ret)
{
	const kb_yaml_node *t;
	int r = dec_map(d, n, path, &t);
	if (r < 0 || !t)
		return r;
	char epath[DEC_PATH_LEN], fpath[DEC_PATH_LEN];
	dec_path(epath, "%s.matchExpressions", path);
	dec_path(fpath, "%s.matchFields", path);
	const kb_yaml_node *exprs, *fields;
	if ((r = dec_seq(d, kb_yaml_get(t, "matchExpressions"), epath, &exprs)) < 0 ||
	    (r = dec_seq(d, kb_yaml_get(t, "matchFields"), fpath, &fields)) < 0)
		return r;
	size_t ne = exprs ? exprs->n : 0, nf = fields ? fields->n : 0;
	if (ne + nf == 0)
		return 0;
	kb_selector_req *reqs = kb_arena_calloc(d->a, ne + nf, sizeof(*reqs));
	if (!reqs)
		return dec_nomem(d);
	term_reqs er = {reqs, false}, fr = {reqs + ne, true};
	if ((r = dec_each_map(d, exprs, epath, DEC_NULL_ITEM_FAILS, dec_selector_req, &er)) < 0 ||
	    (r = dec_each_map(d, fields, fpath, DEC_NULL_ITEM_FAILS, dec_selector_req, &fr)) < 0)
		return r;
	ret->reqs = reqs;
	ret->n = (uint32_t)(ne + nf);
	return 0;
}

/* One item of nodeSelectorTerms into ((kb_selector_term *)ctx)[i]. */
static int dec_required_term(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			     void *ctx)
{
	return dec_selector_term(d, it, path, (kb_selector_term *)ctx + i);
}

/* One item of preferredDuringScheduling... into ((kb_preferred_term *)ctx)[i]. */
static int dec_preferred_term(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			      void *ctx)
{
	kb_preferred_term *p = (kb_preferred_term *)ctx + i;
	char sub[DEC_PATH_LEN];
	int r = dec_term_weight(d, it, path, &p->weight);
	if (r < 0)
		return r;
	dec_path(sub, "%s.preference", path);
	return dec_selector_term(d, kb_yaml_get(it, "preference"), sub, &p->term);
}

/* nodeAffinity's requiredDuringSchedulingIgnoredDuringExecution: its terms;
 * a null term has no requirements. */
int dec_node_selector(dec_ctx *d, const kb_yaml_node *n, const char *path,
		      const kb_selector_term **ret_terms, uint32_t *ret_n)
{
	const kb_yaml_node *sel, *terms;
	int r = dec_map(d, n, path, &sel);
	if (r < 0)
		return r;
	char tpath[DEC_PATH_LEN];
	dec_path(tpath, "%s.nodeSelectorTerms", path);
	if ((r = dec_seq(d, kb_yaml_get(sel, "nodeSelectorTerms"), tpath, &terms)) < 0 || !terms ||
	    terms->n == 0)
		return r;
	kb_selector_term *t = kb_arena_calloc(d->a, terms->n, sizeof(*t));
	if (!t)
		return dec_nomem(d);
	r = dec_each_map(d, terms, tpath, DEC_NULL_ITEM_SKIPPED, dec_required_term, t);
	if (r < 0)
		return r;
	*ret_terms = t;
	*ret_n = (uint32_t)terms->n;
	return 0;
}

static int dec_required(dec_ctx *d, const kb_yaml_node *na, kb_pod_spec *ps)
{
	return dec_node_selector(
		d, kb_yaml_get(na, "requiredDuringSchedulingIgnoredDuringExecution"),
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
		&ps->required, &ps->nrequired);
}

/* nodeAffinity's preferredDuringSchedulingIgnoredDuringExecution. */
static int dec_preferred(dec_ctx *d, const kb_yaml_node *na, kb_pod_spec *ps)
{
	static const char ppath[] =
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";
	const kb_yaml_node *pref;
	int r = dec_seq(d, kb_yaml_get(na, "preferredDuringSchedulingIgnoredDuringExecution"),
			ppath, &pref);
	if (r < 0 || !pref || pref->n == 0)
		return r;
	kb_preferred_term *p = kb_arena_calloc(d->a, pref->n, sizeof(*p));
	if (!p)
		return dec_nomem(d);
	r = dec_each_map(d, pref, ppath, DEC_NULL_ITEM_FAILS, dec_preferred_term, p);
	if (r < 0)
		return r;
	ps->preferred = p;
	ps->npreferred = (uint32_t)pref->n;
	return 0;
}

static int dec_node_affinity(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	const kb_yaml_node *aff, *na;
	int r;
	if ((r = dec_map(d, kb_yaml_get(spec, "affinity"), "spec.affinity", &aff)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(aff, "nodeAffinity"), "spec.affinity.nodeAffinity",
			 &na)) < 0 ||
	    !na)
		return r;
	if ((r = dec_required(d, na, ps)) < 0)
		return r;
	return dec_preferred(d, na, ps);
}

/* One item of spec.tolerations into ((kb_toleration *)ctx)[i]. */
static int dec_toleration(dec_ctx *d, const kb_yaml_node *it, const char *path, size_t i,
			  void *ctx)
{
	kb_toleration *t = (kb_toleration *)ctx + i;
	char sub[DEC_PATH_LEN];
	int r;
	dec_path(sub, "%s.key", path);
	if ((r = dec_str(d, kb_yaml_get(it, "key"), sub, &t->key)) < 0)
		return r;
	if (!t->key)
		t->key = "";
	dec_path(sub, "%s.value", path);
	if ((r = dec_str(d, kb_yaml_get(it, "value"), sub, &t->value)) < 0)
		return r;
	if (!t->value)
		t->value = "";
	dec_path(sub, "%s.operator", path);
	const kb_yaml_node *op = kb_yaml_get(it, "operator");
	if (kb_yaml_is_null(op) || dec_scalar_is(op, "") || dec_scalar_is(op, "Equal"))
		t->exists = false;
	else if (dec_scalar_is(op, "Exists"))
		t->exists = true;
	else if (dec_is_scalar(op))
		return dec_fail(d, -EINVAL, op, sub,
				"unknown operator \"%.*s\" (want Equal or Exists)", DEC_QUOTE_MAX,
				op->str);
	else
		return dec_fail(d, -EINVAL, op, sub, "expected a string, got %s",
				kb_yaml_kind_name(op));
	if (!t->exists && !*t->key)
		return dec_fail(d, -EINVAL, it, sub, "must be Exists when the key is empty");
	if (t->exists && *t->value) {
		dec_path(sub, "%s.value", path);
		return dec_fail(d, -EINVAL, kb_yaml_get(it, "value"), sub,
				"must be empty when the operator is Exists");
	}
	dec_path(sub, "%s.effect", path);
	return dec_taint_effect(d, kb_yaml_get(it, "effect"), sub, &t->effect);
}

static int dec_tolerations(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	const kb_yaml_node *seq;
	int r = dec_seq(d, kb_yaml_get(spec, "tolerations"), "spec.tolerations", &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_toleration *t = kb_arena_calloc(d->a, seq->n, sizeof(*t));
	if (!t)
		return dec_nomem(d);
	r = dec_each_map(d, seq, "spec.tolerations", DEC_NULL_ITEM_FAILS, dec_toleration, t);
	if (r < 0)
		return r;
	ps->tolerations = t;
	ps->ntolerations = (uint32_t)seq->n;
	return 0;
}

int dec_pod_placement(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	int r = dec_labels(d, kb_yaml_get(spec, "nodeSelector"), "spec.nodeSelector",
			   &ps->node_selector);
	if (r < 0)
		return r;
	if ((r = dec_node_affinity(d, spec, ps)) < 0)
		return r;
	return dec_tolerations(d, spec, ps);
}

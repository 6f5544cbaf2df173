#include "api/labels.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *kb_labels_get(const kb_labels *l, const char *key)
{
	if (!l || !key)
		return NULL;
	uint32_t lo = 0, hi = l->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->v[mid].key, key);
		if (c == 0)
			return l->v[mid].value;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

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

/* ---- label selectors over pods ------------------------------------------------- */

bool kb_match_label_selector(const kb_label_selector *sel, const kb_labels *labels)
{
	if (!sel || sel->nothing)
		return false;
	for (uint32_t i = 0; i < sel->n; i++) {
		const kb_selector_req *q = &sel->reqs[i];
		const char *v = kb_labels_get(labels, q->key);
		bool ok;
		switch (q->op) {
		case KB_SEL_IN:
			ok = v && value_in(q, v);
			break;
		case KB_SEL_NOT_IN:
			ok = !v || !value_in(q, v);
			break;
		case KB_SEL_EXISTS:
			ok = v != NULL;
			break;
		case KB_SEL_DOES_NOT_EXIST:
			ok = v == NULL;
			break;
		default:
			ok = false; /* Gt and Lt are not label selector operators */
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

static bool label_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A label key's name part or a non-empty value: 1..63 characters,
 * alphanumerics with '-', '_', '.' inside. */
static bool label_name_valid(const char *s, size_t n)
{
	if (n == 0 || n > 63 || !label_alnum(s[0]) || !label_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!label_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A DNS-1123 subdomain (a label key's prefix). */
static bool dns_subdomain_valid(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!an && c != '-' && c != '.')
			return false;
		if ((i == 0 || i == n - 1) && !an)
			return false;
	}
	return true;
}

bool kb_label_key_valid(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	if (!slash)
		return label_name_valid(s, n);
	size_t p = (size_t)(slash - s);
	return dns_subdomain_valid(s, p) && label_name_valid(slash + 1, n - p - 1);
}

bool kb_label_value_valid(const char *s, size_t n)
{
	return n == 0 || label_name_valid(s, n);
}

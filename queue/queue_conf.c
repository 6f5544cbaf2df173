#include "queue/queue_conf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/strmap.h"
#include "base/yaml_doc.h"

#define AT(n) src, (n)->line, (n)->col

void kb_queue_conf_release(kb_queue_conf *qc)
{
	kb_arena_release(&qc->arena);
	memset(qc, 0, sizeof(*qc));
}

/* Reads a map of quantities into *ret, setting bits in *ret_mask. */
static int parse_resources(const kb_yaml_node *n, const char *src, const char *queue,
			   const char *field, kb_resnames *names, kb_res *ret, uint32_t *ret_mask,
			   kb_err *err)
{
	if (kb_yaml_is_null(n))
		return 0;
	if (n->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\": %s must be a mapping of "
						"resource quantities, got %s",
				  AT(n), queue, field, kb_yaml_kind_name(n));
	for (size_t i = 0; i < n->n; i++) {
		const char *res = n->pairs[i].key->str;
		const kb_yaml_node *v = n->pairs[i].value;
		const char *text = kb_yaml_str(v);
		int64_t milli;
		if (!text || kb_quantity_parse(text, &milli) < 0)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\": %s.%s: bad quantity \"%s\"",
					  AT(v), queue, field, res, text ? text : kb_yaml_kind_name(v));
		if (milli < 0)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\": %s.%s: must not be negative",
					  AT(v), queue, field, res);
		int idx = kb_resnames_intern(names, res);
		if (idx == -ENOSPC) {
			char held[256];
			return kb_err_set(err, -ENOSPC, "%s:%d:%d: queue \"%s\": %s.%s: too many distinct "
							"resource names (at most %d, cpu, memory and pods "
							"included; held by: %s)",
					  AT(n->pairs[i].key), queue, field, res, KB_RES_MAX,
					  kb_resnames_format_asked(names, held, sizeof(held)));
		}
		if (idx < 0)
			return kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\": %s: resource name too long",
					  AT(n->pairs[i].key), queue, field);
		ret->q[idx] = milli;
		if (ret_mask)
			*ret_mask |= 1u << idx;
	}
	return 0;
}

static int cmp_ns(const void *a, const void *b)
{
	return strcmp(((const kb_ns_mapping *)a)->ns, ((const kb_ns_mapping *)b)->ns);
}

/* Reads a queue's namespaces (v) into qc->ns_map; by_ns maps each namespace
 * seen so far to its index there. A namespace may name one queue only. */
static int parse_namespaces(kb_queue_conf *qc, const kb_queue_def *q, const kb_yaml_node *v,
			    const char *src, kb_strmap *by_ns, kb_err *err)
{
	if (kb_yaml_is_null(v))
		return 0;
	if (v->kind != KB_YAML_SEQ)
		return kb_err_set(err, -EINVAL,
				  "%s:%d:%d: queue \"%s\": namespaces must be a list of names",
				  AT(v), q->name);
	for (size_t k = 0; k < v->n; k++) {
		const char *ns = kb_yaml_str(v->items[k]);
		if (!ns || !*ns)
			return kb_err_set(err, -EINVAL,
					  "%s:%d:%d: queue \"%s\": a namespace must be a name",
					  AT(v->items[k]), q->name);
		int64_t m;
		if (kb_strmap_get(by_ns, ns, &m))
			return kb_err_set(err, -EINVAL,
					  "%s:%d:%d: namespace \"%s\" is mapped to "
					  "queue \"%s\" and to queue \"%s\"",
					  AT(v->items[k]), ns, qc->ns_map[m].queue, q->name);
		kb_ns_mapping *e = &qc->ns_map[qc->nns];
		e->ns = kb_arena_strdup(&qc->arena, ns);
		e->queue = q->name;
		if (!e->ns || kb_strmap_put(by_ns, e->ns, qc->nns) < 0)
			return -ENOMEM;
		qc->nns++;
	}
	return 0;
}

/* A floor above the ceiling can never be honoured: reported at the
 * guarantee's quantity (n is the queue's node). */
static int check_guarantee(const kb_queue_def *q, const kb_yaml_node *n, const char *src,
			   const kb_resnames *names, kb_err *err)
{
	for (int r = 0; r < KB_RES_MAX; r++)
		if ((q->capability_mask & (1u << r)) && q->guarantee.q[r] > q->capability.q[r]) {
			char g[KB_QUANTITY_BUFSZ], c[KB_QUANTITY_BUFSZ];
			const kb_yaml_node *gn = kb_yaml_get(n, "guarantee");
			const kb_yaml_node *gv = gn ? kb_yaml_get(gn, names->name[r]) : NULL;
			if (gv)
				gn = gv; /* point at the quantity itself */
			return kb_err_set(err, -EINVAL,
					  "%s:%d:%d: queue \"%s\": guarantee of %s (%s) is above its capability (%s)",
					  AT(gn), q->name, names->name[r],
					  kb_res_format_one(q->guarantee.q[r], names, r, g),
					  kb_res_format_one(q->capability.q[r], names, r, c));
		}
	return 0;
}

/* Reads one queue into *q, appending its namespaces to qc->ns_map; by_ns maps
 * each namespace seen so far to its index in qc->ns_map. */
static int parse_queue(kb_queue_conf *qc, kb_queue_def *q, const kb_yaml_node *n, const char *src,
		       kb_resnames *names, kb_strmap *by_ns, kb_err *err)
{
	if (n->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: a queue must be a mapping, got %s", AT(n),
				  kb_yaml_kind_name(n));
	const kb_yaml_node *name = kb_yaml_get(n, "name");
	if (!kb_yaml_str(name) || !*kb_yaml_str(name))
		return kb_err_set(err, -EINVAL, "%s:%d:%d: a queue needs a name", AT(n));
	q->name = kb_arena_strdup(&qc->arena, kb_yaml_str(name));
	q->weight = 1;
	q->reclaimable = true;
	q->state = KB_QUEUE_OPEN;
	q->line = n->line;
	q->col = n->col;
	if (!q->name)
		return -ENOMEM;
	for (size_t i = 0; i < n->n; i++) {
		const char *key = n->pairs[i].key->str;
		const kb_yaml_node *v = n->pairs[i].value;
		int r = 0;
		if (strcmp(key, "name") == 0) {
			continue;
		} else if (strcmp(key, "weight") == 0) {
			int64_t w;
			if (kb_yaml_int(v, &w) < 0 || w < 1 || w > INT32_MAX)
				return kb_err_set(err, -EINVAL,
						  "%s:%d:%d: queue \"%s\": weight must be a whole number >= 1, got \"%s\"",
						  AT(v), q->name, kb_yaml_str(v) ? kb_yaml_str(v) : kb_yaml_kind_name(v));
			q->weight = (int32_t)w;
		} else if (strcmp(key, "capability") == 0) {
			r = parse_resources(v, src, q->name, "capability", names, &q->capability,
					    &q->capability_mask, err);
		} else if (strcmp(key, "guarantee") == 0) {
			r = parse_resources(v, src, q->name, "guarantee", names, &q->guarantee, NULL, err);
		} else if (strcmp(key, "reclaimable") == 0) {
			if (kb_yaml_bool(v, &q->reclaimable) < 0)
				return kb_err_set(err, -EINVAL,
						  "%s:%d:%d: queue \"%s\": reclaimable must be true or false",
						  AT(v), q->name);
		} else if (strcmp(key, "parent") == 0) {
			if (!kb_yaml_str(v) || !*kb_yaml_str(v))
				return kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\": parent must be a queue name",
						  AT(v), q->name);
			q->parent = kb_arena_strdup(&qc->arena, kb_yaml_str(v));
		} else if (strcmp(key, "state") == 0) {
			const char *st = kb_yaml_str(v);
			if (st && strcmp(st, "Open") == 0)
				q->state = KB_QUEUE_OPEN;
			else if (st && strcmp(st, "Closed") == 0)
				q->state = KB_QUEUE_CLOSED;
			else
				return kb_err_set(err, -EINVAL,
						  "%s:%d:%d: queue \"%s\": state must be Open or Closed, got \"%s\"",
						  AT(v), q->name, st ? st : kb_yaml_kind_name(v));
		} else if (strcmp(key, "namespaces") == 0) {
			r = parse_namespaces(qc, q, v, src, by_ns, err);
		} else {
			return kb_err_set(err, -EINVAL,
					  "%s:%d:%d: queue \"%s\": unknown key \"%s\" (expected name, weight, "
					  "capability, guarantee, reclaimable, namespaces, parent, state)",
					  AT(n->pairs[i].key), q->name, key);
		}
		if (r < 0)
			return r;
	}
	return check_guarantee(q, n, src, names, err);
}

/* Parents exist (reported at the parent: value), and following them never
 * comes back: a walk colours each queue 1 while it is on the path and 2 once
 * its ancestry is known to end at a root. O(queues). queues is the list the
 * queues were read from, in the same order; by_name maps a name to its index. */
static int check_parents(const kb_queue_conf *qc, const kb_yaml_node *queues, const char *src,
			 const kb_strmap *by_name, kb_err *err)
{
	uint8_t *mark = calloc(qc->nqueues ? qc->nqueues : 1, 1);
	int r = 0;
	if (!mark)
		return -ENOMEM;
	for (uint32_t i = 0; i < qc->nqueues; i++) {
		uint32_t p = i;
		while (mark[p] == 0) {
			mark[p] = 1;
			const kb_queue_def *q = &qc->queues[p];
			const kb_yaml_node *pn = kb_yaml_get(queues->items[p], "parent");
			int64_t next;
			if (!q->parent)
				break;
			if (!kb_strmap_get(by_name, q->parent, &next)) {
				r = kb_err_set(err, -EINVAL,
					       "%s:%d:%d: queue \"%s\": parent \"%s\" is not defined in this file",
					       AT(pn), q->name, q->parent);
				goto out;
			}
			if (mark[next] == 1) {
				const kb_queue_def *c = &qc->queues[next];
				const kb_yaml_node *cn = kb_yaml_get(queues->items[next], "parent");
				if (strcmp(c->parent, c->name) == 0)
					r = kb_err_set(err, -EINVAL, "%s:%d:%d: queue \"%s\" is its own parent",
						       AT(cn), c->name);
				else
					r = kb_err_set(err, -EINVAL,
						       "%s:%d:%d: queue \"%s\": its parents form a cycle "
						       "(\"%s\" -> \"%s\" -> ... -> \"%s\")",
						       AT(cn), c->name, c->name, c->parent, c->name);
				goto out;
			}
			p = (uint32_t)next;
		}
		/* Everything on this path leads to a root (or to a path already known to). */
		for (p = i; mark[p] == 1;) {
			mark[p] = 2;
			int64_t next;
			if (!qc->queues[p].parent || !kb_strmap_get(by_name, qc->queues[p].parent, &next))
				break;
			p = (uint32_t)next;
		}
	}
out:
	free(mark);
	return r;
}

static int parse_doc(kb_queue_conf *qc, const kb_yaml_node *root, const char *src,
		     kb_resnames *names, kb_err *err)
{
	if (root->kind != KB_YAML_MAP)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: expected a mapping with \"queues\"", AT(root));
	const kb_yaml_node *queues = NULL;
	for (size_t i = 0; i < root->n; i++) {
		if (strcmp(root->pairs[i].key->str, "queues") == 0)
			queues = root->pairs[i].value;
		else
			return kb_err_set(err, -EINVAL, "%s:%d:%d: unknown key \"%s\" (expected queues)",
					  AT(root->pairs[i].key), root->pairs[i].key->str);
	}
	if (!queues || kb_yaml_is_null(queues))
		return 0;
	if (queues->kind != KB_YAML_SEQ)
		return kb_err_set(err, -EINVAL, "%s:%d:%d: queues must be a list", AT(queues));
	size_t nns_max = 0;
	for (size_t i = 0; i < queues->n; i++) {
		const kb_yaml_node *ns = kb_yaml_get(queues->items[i], "namespaces");
		if (ns && ns->kind == KB_YAML_SEQ)
			nns_max += ns->n;
	}
	qc->queues = kb_arena_calloc(&qc->arena, queues->n ? queues->n : 1, sizeof(kb_queue_def));
	qc->ns_map = kb_arena_calloc(&qc->arena, nns_max ? nns_max : 1, sizeof(kb_ns_mapping));
	if (!qc->queues || !qc->ns_map)
		return -ENOMEM;
	kb_strmap by_name, by_ns;
	kb_strmap_init(&by_name);
	kb_strmap_init(&by_ns);
	int r = 0;
	for (size_t i = 0; i < queues->n; i++) {
		kb_queue_def *q = &qc->queues[qc->nqueues];
		if ((r = parse_queue(qc, q, queues->items[i], src, names, &by_ns, err)) < 0)
			goto out;
		if (kb_strmap_get(&by_name, q->name, NULL)) {
			r = kb_err_set(err, -EINVAL, "%s:%d:%d: duplicate queue name \"%s\"",
				       AT(queues->items[i]), q->name);
			goto out;
		}
		if ((r = kb_strmap_put(&by_name, q->name, qc->nqueues)) < 0)
			goto out;
		qc->nqueues++;
	}
	if ((r = check_parents(qc, queues, src, &by_name, err)) < 0)
		goto out;
	qsort(qc->ns_map, qc->nns, sizeof(kb_ns_mapping), cmp_ns);
out:
	kb_strmap_release(&by_name);
	kb_strmap_release(&by_ns);
	return r;
}

static int load(kb_yaml_file *f, const char *name, kb_resnames *names, kb_queue_conf *ret,
		kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_arena_init(&ret->arena);
	ret->source = kb_arena_strdup(&ret->arena, name);
	int r;
	if (f->ndocs > 1) {
		r = kb_err_set(err, -EINVAL, "%s: expected one YAML document, found %zu", name, f->ndocs);
	} else if (f->ndocs == 0) {
		r = 0; /* an empty file defines no queues */
	} else {
		r = parse_doc(ret, f->docs[0], name, names, err);
	}
	if (r == -ENOMEM)
		kb_err_set(err, r, "%s: out of memory", name);
	kb_yaml_file_release(f);
	if (r < 0)
		kb_queue_conf_release(ret);
	return r;
}

int kb_queue_conf_load_buffer(const char *buf, size_t len, const char *name, kb_resnames *names,
			      kb_queue_conf *ret, kb_err *err)
{
	kb_yaml_file f;
	int r = kb_yaml_load_buffer(buf, len, name, &f, err);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	return load(&f, name, names, ret, err);
}

int kb_queue_conf_load_file(const char *path, kb_resnames *names, kb_queue_conf *ret, kb_err *err)
{
	kb_yaml_file f;
	int r = kb_yaml_load_file(path, &f, err);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	return load(&f, path, names, ret, err);
}

int kb_queue_conf_check_cluster(const kb_queue_conf *qc, const kb_res *total,
				const kb_resnames *names, kb_err *err)
{
	kb_res sum = {{0}};
	for (uint32_t i = 0; i < qc->nqueues; i++)
		kb_res_add(&sum, &qc->queues[i].guarantee);
	for (int r = 0; r < KB_RES_MAX; r++) {
		if (sum.q[r] <= total->q[r])
			continue;
		/* Name the queue whose guarantee takes the running sum past the cluster. */
		int64_t run = 0;
		const kb_queue_def *q = NULL;
		for (uint32_t i = 0; i < qc->nqueues && !q; i++) {
			run = kb_sat_add64(run, qc->queues[i].guarantee.q[r]);
			if (run > total->q[r])
				q = &qc->queues[i];
		}
		char s[KB_QUANTITY_BUFSZ], t[KB_QUANTITY_BUFSZ], g[KB_QUANTITY_BUFSZ];
		const char *res = r < names->n ? names->name[r] : "?";
		return kb_err_set(err, -EINVAL,
				  "%s:%d:%d: queue \"%s\": the guarantees of %s sum to %s, above the "
				  "cluster's allocatable %s (the sum passes it with this queue's %s)",
				  qc->source, q ? q->line : 1, q ? q->col : 1, q ? q->name : "?", res,
				  kb_res_format_one(sum.q[r], names, r, s),
				  kb_res_format_one(total->q[r], names, r, t),
				  kb_res_format_one(q ? q->guarantee.q[r] : 0, names, r, g));
	}
	return 0;
}

const char *kb_queue_conf_ns_queue(const kb_queue_conf *qc, const char *ns)
{
	uint32_t lo = 0, hi = qc->nns;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(qc->ns_map[mid].ns, ns);
		if (c == 0)
			return qc->ns_map[mid].queue;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * objects.c - decoding Kubernetes objects from a node tree (see objects.h).
 *
 * One decoder walks one document top-down. Every helper takes the path of
 * the field it reads ("spec.containers[0].resources.requests") so that an
 * error can name it; every error goes through fail(), which formats
 *   <Kind> "<key>": <field path>: <what> (<source>:<line>:<col>)
 * with the position of the offending node (the document root when the
 * field is missing). Nothing is written to *ret_obj unless the whole
 * document decodes.
 *
 * Defaults, where Kubernetes or the CRD owners define them (see the unit
 * tests for each):
 *  - metadata.namespace "default" for Pod and PodGroup, "" for Node, Queue,
 *    PriorityClass and Namespace; for other kinds the namespace as written.
 *  - Node: status.allocatable, else status.capacity; pods 110 when absent
 *    (the kubelet's --max-pods default); Ready unless a Ready condition says
 *    otherwise.
 *  - Pod: schedulerName "default-scheduler"; phase Pending; a resource with
 *    a limit and no request requests its limit; effective request =
 *    max(sum of containers + sidecars, each init container + the sidecars
 *    started before it) + overhead, as k8s' resource helpers compute it
 *    (sidecars are init containers with restartPolicy Always; without any
 *    this is max(sum of containers, max of init containers)); pods = 1.
 *  - PodGroup: minMember 0 when absent in all three APIs (Go's zero value:
 *    no CRD defaults it); spec.queue NULL when absent, so the queue
 *    configuration's namespace mapping, then the default queue, applies (in
 *    a cluster, volcano's CRD writes "default" itself at admission);
 *    unknown status.phase strings are Pending.
 *  - Queue: weight 1 when absent (kube-batch's CRD default) or 0 (volcano's
 *    admission webhook); reclaimable true (volcano's webhook); state Open
 *    unless volcano's status.state says Closed or Closing.
 *  - Sharing pods (KB_ANN_GPU_MILLI = m): the pod asks for 1 nvidia.com/gpu
 *    or none, and is charged m milli-GPU of nvidia.com/gpu in req.
 */
#include "cache/objects.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

/* Lists the cluster controls: containers + initContainers, tolerations,
 * labels (and annotations, node selectors, taints, terms, values, ports). */
#define KB_OBJ_LIST_MAX 1024
#define PATH_LEN 256
/* Longest piece of user text quoted back in a message. */
#define QUOTE_MAX 64

#define DEFAULT_NODE_PODS 110
#define DEFAULT_SCHEDULER "default-scheduler"

typedef struct dec {
	kb_object *o;
	kb_arena *a;
	const char *source;
	kb_resnames *rn;
	kb_err *err;
	const kb_yaml_node *root;
	const char *kind; /* for messages; "object" until kind is known */
	const char *key;  /* for messages; NULL until metadata.name is known */
} dec;

/* ---- errors ------------------------------------------------------------- */

__attribute__((format(printf, 5, 6))) static int fail(dec *d, int code, const kb_yaml_node *at,
						       const char *path, const char *fmt, ...)
{
	char what[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	if (!at)
		at = d->root;
	char pos[KB_ERR_MSG_MAX / 2] = "";
	if (d->source)
		snprintf(pos, sizeof(pos), " (%s:%d:%d)", d->source, at->line, at->col);
	if (d->key)
		return kb_err_set(d->err, code, "%s \"%s\": %s: %s%s", d->kind, d->key, path, what,
				  pos);
	return kb_err_set(d->err, code, "%s: %s: %s%s", d->kind, path, what, pos);
}

/* Writes a field path into buf (PATH_LEN bytes), truncating long ones. */
__attribute__((format(printf, 2, 3))) static void pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, PATH_LEN, fmt, ap);
	va_end(ap);
}

static int fail_nomem(dec *d)
{
	return kb_err_set(d->err, -ENOMEM, "out of memory");
}

/* ---- scalar helpers ------------------------------------------------------ */

static bool is_scalar(const kb_yaml_node *n)
{
	return n && n->kind == KB_YAML_SCALAR;
}

/* The field's text copied into the object, or NULL when absent or null.
 * A mapping or a list is an error. */
static int get_str(dec *d, const kb_yaml_node *n, const char *path, const char **ret)
{
	if (kb_yaml_is_null(n)) {
		*ret = NULL;
		return 0;
	}
	if (!is_scalar(n))
		return fail(d, -EINVAL, n, path, "expected a string, got %s", kb_yaml_kind_name(n));
	char *s = kb_arena_strndup(d->a, n->str, n->len);
	if (!s)
		return fail_nomem(d);
	*ret = s;
	return 0;
}

/* Like get_str, but "" (or absent) gives NULL too. */
static int get_str_nonempty(dec *d, const kb_yaml_node *n, const char *path, const char **ret)
{
	int r = get_str(d, n, path, ret);
	if (r == 0 && *ret && !**ret)
		*ret = NULL;
	return r;
}

/* An integer in [min, max]; absent or null leaves *ret unchanged and sets
 * *ret_present false. */
static int get_int(dec *d, const kb_yaml_node *n, const char *path, int64_t min, int64_t max,
		   int64_t *ret, bool *ret_present)
{
	if (ret_present)
		*ret_present = false;
	if (kb_yaml_is_null(n))
		return 0;
	int64_t v;
	int r = kb_yaml_int(n, &v);
	if (r == -ERANGE || (r == 0 && (v < min || v > max)))
		return fail(d, -EINVAL, n, path, "out of range [%lld, %lld], got \"%.*s\"",
			    (long long)min, (long long)max, QUOTE_MAX, n->str);
	if (r < 0) {
		if (is_scalar(n))
			return fail(d, -EINVAL, n, path, "expected an integer, got \"%.*s\"",
				    QUOTE_MAX, n->str);
		return fail(d, -EINVAL, n, path, "expected an integer, got %s",
			    kb_yaml_kind_name(n));
	}
	*ret = v;
	if (ret_present)
		*ret_present = true;
	return 0;
}

static int get_bool(dec *d, const kb_yaml_node *n, const char *path, bool *ret)
{
	if (kb_yaml_is_null(n))
		return 0;
	bool v;
	if (kb_yaml_bool(n, &v) < 0) {
		if (is_scalar(n))
			return fail(d, -EINVAL, n, path, "expected true or false, got \"%.*s\"",
				    QUOTE_MAX, n->str);
		return fail(d, -EINVAL, n, path, "expected true or false, got %s",
			    kb_yaml_kind_name(n));
	}
	*ret = v;
	return 0;
}

/* A mapping or NULL (absent/null); anything else is an error. */
static int get_map(dec *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret)
{
	*ret = NULL;
	if (kb_yaml_is_null(n))
		return 0;
	if (n->kind != KB_YAML_MAP)
		return fail(d, -EINVAL, n, path, "expected a mapping, got %s", kb_yaml_kind_name(n));
	*ret = n;
	return 0;
}

/* A list or NULL (absent/null), at most KB_OBJ_LIST_MAX items. */
static int get_seq(dec *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret)
{
	*ret = NULL;
	if (kb_yaml_is_null(n))
		return 0;
	if (n->kind != KB_YAML_SEQ)
		return fail(d, -EINVAL, n, path, "expected a list, got %s", kb_yaml_kind_name(n));
	if (n->n > KB_OBJ_LIST_MAX)
		return fail(d, -EINVAL, n, path, "too many items (%zu, at most %d)", n->n,
			    KB_OBJ_LIST_MAX);
	*ret = n;
	return 0;
}

static bool str_eq(const kb_yaml_node *n, const char *s)
{
	return is_scalar(n) && n->len == strlen(s) && memcmp(n->str, s, n->len) == 0;
}

/* ---- time ---------------------------------------------------------------- */

static int digits(const char *s, int n, int *ret)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int dd)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const int64_t yoe = y - era * 400;
	const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + dd - 1;
	const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* RFC 3339: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM), to ms since the
 * epoch (fraction truncated to ms). Returns 0 or -EINVAL. */
static int parse_rfc3339(const char *s, int64_t *ret_ms)
{
	int y, mo, dd, h, mi, sec;
	if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
	    s[7] != '-' || digits(s + 8, 2, &dd) || s[10] != 'T' || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || dd < 1 || dd > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 ||
	    mi > 59 || sec > 59)
		return -EINVAL;
	const char *p = s + 19;
	int ms = 0;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (int i = 0; *p >= '0' && *p <= '9'; p++, i++)
			if (i < 3)
				ms = ms * 10 + (*p - '0');
			else if (i >= 9)
				return -EINVAL; /* nanoseconds at most */
		/* scale what was read to milliseconds */
		size_t nfrac = 0;
		for (const char *q = s + 20; q < p; q++)
			nfrac++;
		for (size_t i = nfrac; i < 3; i++)
			ms *= 10;
	}
	int off_min = 0;
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
		off_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	int64_t days = days_from_civil(y, mo, dd);
	int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - (int64_t)off_min * 60;
	*ret_ms = secs * 1000 + ms;
	return 0;
}

/* ---- labels -------------------------------------------------------------- */

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const kb_label *)a)->key, ((const kb_label *)b)->key);
}

/* A map of strings (labels, annotations, nodeSelector), sorted by key. */
static int get_labels(dec *d, const kb_yaml_node *n, const char *path, kb_labels *ret)
{
	const kb_yaml_node *m;
	int r = get_map(d, n, path, &m);
	if (r < 0 || !m)
		return r;
	if (m->n > KB_OBJ_LIST_MAX)
		return fail(d, -EINVAL, m, path, "too many entries (%zu, at most %d)", m->n,
			    KB_OBJ_LIST_MAX);
	if (m->n == 0)
		return 0;
	kb_label *v = kb_arena_calloc(d->a, m->n, sizeof(*v));
	if (!v)
		return fail_nomem(d);
	for (size_t i = 0; i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		char sub[PATH_LEN];
		pathf(sub, "%s.%s", path, p->key->str);
		v[i].key = kb_arena_strndup(d->a, p->key->str, p->key->len);
		if (!v[i].key)
			return fail_nomem(d);
		r = get_str(d, p->value, sub, &v[i].value);
		if (r < 0)
			return r;
		if (!v[i].value)
			v[i].value = "";
	}
	qsort(v, m->n, sizeof(*v), cmp_label);
	for (size_t i = 1; i < m->n; i++)
		if (strcmp(v[i - 1].key, v[i].key) == 0)
			return fail(d, -EINVAL, m, path, "duplicate key \"%.*s\"", QUOTE_MAX,
				    v[i].key);
	ret->v = v;
	ret->n = (uint32_t)m->n;
	return 0;
}


/* ---- resources ------------------------------------------------------------ */

/* Decodes a ResourceList into out (named entries overwritten) and sets bit
 * i of *mask for each resource named. Negative quantities are errors. */
static int get_reslist(dec *d, const kb_yaml_node *n, const char *path, kb_res *out,
		       uint32_t *mask)
{
	const kb_yaml_node *m;
	int r = get_map(d, n, path, &m);
	if (r < 0 || !m)
		return r;
	for (size_t i = 0; i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		const char *name = p->key->str;
		char sub[PATH_LEN];
		pathf(sub, "%s.%s", path, name);
		if (p->key->len == 0 || strlen(name) != p->key->len)
			return fail(d, -EINVAL, p->key, path, "bad resource name \"%.*s\"",
				    QUOTE_MAX, name);
		int idx = kb_resnames_intern(d->rn, name);
		if (idx == -ENOSPC)
			return fail(d, -ENOSPC, p->key, sub,
				    "too many distinct resource names in the cluster (at most %d)",
				    KB_RES_MAX);
		if (idx < 0)
			return fail(d, -EINVAL, p->key, sub, "resource name too long (at most %d)",
				    KB_RES_NAME_MAX - 1);
		const kb_yaml_node *v = p->value;
		if (!is_scalar(v) || kb_yaml_is_null(v))
			return fail(d, -EINVAL, v, sub, "expected a quantity, got %s",
				    kb_yaml_is_null(v) ? "null" : kb_yaml_kind_name(v));
		int64_t q;
		if (strlen(v->str) != v->len || kb_quantity_parse(v->str, &q) < 0)
			return fail(d, -EINVAL, v, sub, "bad quantity \"%.*s\"", QUOTE_MAX, v->str);
		if (q < 0)
			return fail(d, -EINVAL, v, sub, "must not be negative, got \"%.*s\"",
				    QUOTE_MAX, v->str);
		out->q[idx] = q;
		*mask |= 1u << idx;
	}
	return 0;
}

/* a += b; false on overflow (a is then unspecified). */
static bool res_add_checked(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (__builtin_add_overflow(a->q[i], b->q[i], &a->q[i]))
			return false;
	return true;
}

/* ---- metadata ------------------------------------------------------------- */

static bool namespaced(kb_kind k)
{
	return k == KB_KIND_POD || k == KB_KIND_PODGROUP;
}

static int dec_time(dec *d, const kb_yaml_node *n, const char *path, bool *ret_set,
		    int64_t *ret_ms)
{
	const char *s;
	int r = get_str(d, n, path, &s);
	if (r < 0)
		return r;
	*ret_set = s && *s;
	if (!*ret_set)
		return 0;
	if (parse_rfc3339(s, ret_ms) < 0)
		return fail(d, -EINVAL, n, path,
			    "bad timestamp \"%.*s\" (want RFC 3339, e.g. 2024-01-02T03:04:05Z)",
			    QUOTE_MAX, s);
	return 0;
}

static int dec_meta(dec *d)
{
	kb_meta *m = &d->o->meta;
	const kb_yaml_node *md;
	m->line = d->root->line;
	m->col = d->root->col;
	int r = get_map(d, kb_yaml_get(d->root, "metadata"), "metadata", &md);
	if (r < 0)
		return r;
	if (!md)
		return fail(d, -EINVAL, NULL, "metadata", "required");
	const kb_yaml_node *nn = kb_yaml_get(md, "name");
	if ((r = get_str(d, nn, "metadata.name", &m->name)) < 0)
		return r;
	if (!m->name || !*m->name)
		return fail(d, -EINVAL, nn ? nn : md, "metadata.name", "required");
	d->key = m->name; /* until the namespace is known */

	const char *ns;
	if ((r = get_str(d, kb_yaml_get(md, "namespace"), "metadata.namespace", &ns)) < 0)
		return r;
	if (namespaced(d->o->kind))
		m->ns = ns && *ns ? ns : "default";
	else if (d->o->kind == KB_KIND_OTHER)
		m->ns = ns ? ns : "";
	else
		m->ns = "";
	m->key = *m->ns ? kb_arena_printf(d->a, "%s/%s", m->ns, m->name) : m->name;
	if (!m->key)
		return fail_nomem(d);
	d->key = m->key;

	if ((r = get_str_nonempty(d, kb_yaml_get(md, "uid"), "metadata.uid", &m->uid)) < 0)
		return r;
	if (!m->uid &&
	    !(m->uid = kb_arena_printf(d->a, "%s/%s/%s", d->o->kind_name, m->ns, m->name)))
		return fail_nomem(d);
	if ((r = get_str(d, kb_yaml_get(md, "resourceVersion"), "metadata.resourceVersion",
			 &m->resource_version)) < 0)
		return r;
	if (!m->resource_version)
		m->resource_version = "";
	bool set;
	if ((r = dec_time(d, kb_yaml_get(md, "creationTimestamp"), "metadata.creationTimestamp",
			  &set, &m->creation_ms)) < 0)
		return r;
	int64_t del_ms;
	if ((r = dec_time(d, kb_yaml_get(md, "deletionTimestamp"), "metadata.deletionTimestamp",
			  &m->deleting, &del_ms)) < 0)
		return r;
	if ((r = get_labels(d, kb_yaml_get(md, "labels"), "metadata.labels", &m->labels)) < 0)
		return r;
	return get_labels(d, kb_yaml_get(md, "annotations"), "metadata.annotations",
			  &m->annotations);
}

/* The annotation's node, for error positions: the value under
 * metadata.annotations.<key>. */
static const kb_yaml_node *ann_node(dec *d, const char *key)
{
	return kb_yaml_get(kb_yaml_get(kb_yaml_get(d->root, "metadata"), "annotations"), key);
}

/* ---- Node ------------------------------------------------------------------ */

/* A taint effect; absent or "" is KB_EFFECT_ALL (callers that need one
 * check first). */
static int dec_effect(dec *d, const kb_yaml_node *n, const char *path, kb_taint_effect *ret)
{
	if (kb_yaml_is_null(n) || str_eq(n, "")) {
		*ret = KB_EFFECT_ALL;
		return 0;
	}
	if (str_eq(n, "NoSchedule"))
		*ret = KB_EFFECT_NO_SCHEDULE;
	else if (str_eq(n, "PreferNoSchedule"))
		*ret = KB_EFFECT_PREFER_NO_SCHEDULE;
	else if (str_eq(n, "NoExecute"))
		*ret = KB_EFFECT_NO_EXECUTE;
	else if (is_scalar(n))
		return fail(d, -EINVAL, n, path,
			    "unknown effect \"%.*s\" (want NoSchedule, PreferNoSchedule or "
			    "NoExecute)",
			    QUOTE_MAX, n->str);
	else
		return fail(d, -EINVAL, n, path, "expected a string, got %s", kb_yaml_kind_name(n));
	return 0;
}

static int dec_taints(dec *d, const kb_yaml_node *spec, kb_node_obj *no)
{
	const kb_yaml_node *seq;
	int r = get_seq(d, kb_yaml_get(spec, "taints"), "spec.taints", &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_taint *t = kb_arena_calloc(d->a, seq->n, sizeof(*t));
	if (!t)
		return fail_nomem(d);
	for (size_t i = 0; i < seq->n; i++) {
		char path[PATH_LEN], sub[PATH_LEN];
		pathf(path, "spec.taints[%zu]", i);
		const kb_yaml_node *it;
		if ((r = get_map(d, seq->items[i], path, &it)) < 0)
			return r;
		if (!it)
			return fail(d, -EINVAL, seq->items[i], path, "expected a mapping, got null");
		pathf(sub, "%s.key", path);
		if ((r = get_str(d, kb_yaml_get(it, "key"), sub, &t[i].key)) < 0)
			return r;
		if (!t[i].key || !*t[i].key)
			return fail(d, -EINVAL, it, sub, "required");
		pathf(sub, "%s.value", path);
		if ((r = get_str(d, kb_yaml_get(it, "value"), sub, &t[i].value)) < 0)
			return r;
		if (!t[i].value)
			t[i].value = "";
		pathf(sub, "%s.effect", path);
		const kb_yaml_node *e = kb_yaml_get(it, "effect");
		if (kb_yaml_is_null(e) || str_eq(e, ""))
			return fail(d, -EINVAL, e ? e : it, sub,
				    "required (NoSchedule, PreferNoSchedule or NoExecute)");
		if ((r = dec_effect(d, e, sub, &t[i].effect)) < 0)
			return r;
	}
	no->taints = t;
	no->ntaints = (uint32_t)seq->n;
	return 0;
}

/* "0,1,2,3;4,5,6,7": each device 0..ngpus-1 in exactly one group. */
static int dec_gpu_topology(dec *d, kb_node_obj *no)
{
	const char *s = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPU_TOPOLOGY);
	if (!s)
		return 0;
	const kb_yaml_node *at = ann_node(d, KB_ANN_GPU_TOPOLOGY);
	const char *path = "metadata.annotations." KB_ANN_GPU_TOPOLOGY;
	if (no->ngpus == 0)
		return fail(d, -EINVAL, at, path, "the node has no %s", KB_RES_GPU_NAME);
	uint8_t *g = kb_arena_alloc(d->a, (size_t)no->ngpus);
	if (!g)
		return fail_nomem(d);
	uint32_t seen = 0;
	int group = 0;
	const char *p = s;
	for (;;) {
		/* one group: devices separated by ',' */
		for (;;) {
			while (*p == ' ')
				p++;
			if (*p < '0' || *p > '9')
				return fail(d, -EINVAL, at, path,
					    "bad topology \"%.*s\" (want device indices like "
					    "\"0,1,2,3;4,5,6,7\")",
					    QUOTE_MAX, s);
			int dev = 0;
			while (*p >= '0' && *p <= '9') {
				dev = dev * 10 + (*p++ - '0');
				if (dev >= no->ngpus)
					break;
			}
			if (dev >= no->ngpus)
				return fail(d, -EINVAL, at, path,
					    "device %d out of range (the node has %d GPUs)", dev,
					    no->ngpus);
			if (seen & (1u << dev))
				return fail(d, -EINVAL, at, path, "device %d appears twice", dev);
			seen |= 1u << dev;
			g[dev] = (uint8_t)group;
			while (*p == ' ')
				p++;
			if (*p != ',')
				break;
			p++;
		}
		if (*p == '\0')
			break;
		if (*p != ';')
			return fail(d, -EINVAL, at, path,
				    "bad topology \"%.*s\" (want device indices like "
				    "\"0,1,2,3;4,5,6,7\")",
				    QUOTE_MAX, s);
		p++;
		group++;
	}
	for (int i = 0; i < no->ngpus; i++)
		if (!(seen & (1u << i)))
			return fail(d, -EINVAL, at, path, "device %d is in no group", i);
	no->gpu_group = g;
	return 0;
}

static int dec_node(dec *d)
{
	kb_node_obj *no = &d->o->u.node;
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = get_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = get_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	const kb_yaml_node *alloc = kb_yaml_get(status, "allocatable");
	const char *apath = "status.allocatable";
	if (kb_yaml_is_null(alloc)) {
		alloc = kb_yaml_get(status, "capacity");
		apath = "status.capacity";
	}
	uint32_t mask = 0;
	if ((r = get_reslist(d, alloc, apath, &no->allocatable, &mask)) < 0)
		return r;
	if (!(mask & (1u << KB_RES_PODS)))
		no->allocatable.q[KB_RES_PODS] = (int64_t)DEFAULT_NODE_PODS * 1000;

	int gi = kb_resnames_find(d->rn, KB_RES_GPU_NAME);
	if (gi >= 0 && (mask & (1u << gi))) {
		int64_t q = no->allocatable.q[gi];
		char sub[PATH_LEN];
		pathf(sub, "%s.%s", apath, KB_RES_GPU_NAME);
		const kb_yaml_node *at = kb_yaml_get(alloc, KB_RES_GPU_NAME);
		if (q % 1000 != 0)
			return fail(d, -EINVAL, at, sub, "must be a whole number of GPUs, got \"%.*s\"",
				    QUOTE_MAX, at->str);
		if (q / 1000 > KB_MAX_GPUS)
			return fail(d, -EINVAL, at, sub, "at most %d GPUs per node, got \"%.*s\"",
				    KB_MAX_GPUS, QUOTE_MAX, at->str);
		no->ngpus = (int32_t)(q / 1000);
	}

	if ((r = get_bool(d, kb_yaml_get(spec, "unschedulable"), "spec.unschedulable",
			  &no->unschedulable)) < 0)
		return r;
	if ((r = dec_taints(d, spec, no)) < 0)
		return r;

	no->ready = true;
	const kb_yaml_node *conds;
	if ((r = get_seq(d, kb_yaml_get(status, "conditions"), "status.conditions", &conds)) < 0)
		return r;
	for (size_t i = 0; conds && i < conds->n; i++) {
		const kb_yaml_node *c = conds->items[i];
		if (!str_eq(kb_yaml_get(c, "type"), "Ready"))
			continue;
		no->ready = str_eq(kb_yaml_get(c, "status"), "True");
	}

	const char *model = kb_labels_get(&d->o->meta.labels, KB_LABEL_GPU_PRODUCT);
	no->gpu_model = model && *model ? model : NULL;
	return dec_gpu_topology(d, no);
}

/* ---- Pod ------------------------------------------------------------------- */

static int dec_selector_term(dec *d, const kb_yaml_node *n, const char *path,
			     kb_selector_term *ret)
{
	const kb_yaml_node *t;
	int r = get_map(d, n, path, &t);
	if (r < 0 || !t)
		return r;
	char epath[PATH_LEN], fpath[PATH_LEN];
	pathf(epath, "%s.matchExpressions", path);
	pathf(fpath, "%s.matchFields", path);
	const kb_yaml_node *exprs, *fields;
	if ((r = get_seq(d, kb_yaml_get(t, "matchExpressions"), epath, &exprs)) < 0 ||
	    (r = get_seq(d, kb_yaml_get(t, "matchFields"), fpath, &fields)) < 0)
		return r;
	size_t ne = exprs ? exprs->n : 0, nf = fields ? fields->n : 0;
	if (ne + nf == 0)
		return 0;
	kb_selector_req *reqs = kb_arena_calloc(d->a, ne + nf, sizeof(*reqs));
	if (!reqs)
		return fail_nomem(d);
	for (size_t i = 0; i < ne + nf; i++) {
		bool field = i >= ne;
		const kb_yaml_node *item = field ? fields->items[i - ne] : exprs->items[i];
		char ipath[PATH_LEN], sub[PATH_LEN];
		pathf(ipath, "%s[%zu]", field ? fpath : epath,
			 field ? i - ne : i);
		kb_selector_req *q = &reqs[i];
		q->field = field;
		const kb_yaml_node *e;
		if ((r = get_map(d, item, ipath, &e)) < 0)
			return r;
		if (!e)
			return fail(d, -EINVAL, item, ipath, "expected a mapping, got null");
		pathf(sub, "%s.key", ipath);
		if ((r = get_str(d, kb_yaml_get(e, "key"), sub, &q->key)) < 0)
			return r;
		if (!q->key || !*q->key)
			return fail(d, -EINVAL, e, sub, "required");
		if (field && strcmp(q->key, "metadata.name") != 0)
			return fail(d, -EINVAL, kb_yaml_get(e, "key"), sub,
				    "unsupported field \"%.*s\" (only metadata.name)", QUOTE_MAX,
				    q->key);
		pathf(sub, "%s.operator", ipath);
		const kb_yaml_node *op = kb_yaml_get(e, "operator");
		if (str_eq(op, "In"))
			q->op = KB_SEL_IN;
		else if (str_eq(op, "NotIn"))
			q->op = KB_SEL_NOT_IN;
		else if (str_eq(op, "Exists") && !field)
			q->op = KB_SEL_EXISTS;
		else if (str_eq(op, "DoesNotExist") && !field)
			q->op = KB_SEL_DOES_NOT_EXIST;
		else if (str_eq(op, "Gt") && !field)
			q->op = KB_SEL_GT;
		else if (str_eq(op, "Lt") && !field)
			q->op = KB_SEL_LT;
		else if (kb_yaml_is_null(op))
			return fail(d, -EINVAL, e, sub, "required");
		else if (is_scalar(op))
			return fail(d, -EINVAL, op, sub, "unknown operator \"%.*s\"", QUOTE_MAX,
				    op->str);
		else
			return fail(d, -EINVAL, op, sub, "expected a string, got %s",
				    kb_yaml_kind_name(op));

		pathf(sub, "%s.values", ipath);
		const kb_yaml_node *vals, *vn = kb_yaml_get(e, "values");
		if ((r = get_seq(d, vn, sub, &vals)) < 0)
			return r;
		size_t nv = vals ? vals->n : 0;
		switch (q->op) {
		case KB_SEL_IN:
		case KB_SEL_NOT_IN:
			if (nv == 0)
				return fail(d, -EINVAL, vn ? vn : e, sub,
					    "must be non-empty for operator In or NotIn");
			if (field && nv != 1)
				return fail(d, -EINVAL, vn, sub,
					    "must have exactly one value for a field selector");
			break;
		case KB_SEL_EXISTS:
		case KB_SEL_DOES_NOT_EXIST:
			if (nv != 0)
				return fail(d, -EINVAL, vn, sub,
					    "must be empty for operator Exists or DoesNotExist");
			break;
		case KB_SEL_GT:
		case KB_SEL_LT:
			if (nv != 1)
				return fail(d, -EINVAL, vn ? vn : e, sub,
					    "must have exactly one value for operator Gt or Lt");
			break;
		}
		if (nv == 0)
			continue;
		const char **v = kb_arena_calloc(d->a, nv, sizeof(*v));
		if (!v)
			return fail_nomem(d);
		for (size_t j = 0; j < nv; j++) {
			char vpath[PATH_LEN];
			pathf(vpath, "%s[%zu]", sub, j);
			if ((r = get_str(d, vals->items[j], vpath, &v[j])) < 0)
				return r;
			if (!v[j])
				v[j] = "";
			if (q->op == KB_SEL_GT || q->op == KB_SEL_LT) {
				char *end;
				errno = 0;
				(void)strtoll(v[j], &end, 10);
				if (!*v[j] || *end || errno)
					return fail(d, -EINVAL, vals->items[j], vpath,
						    "expected an integer, got \"%.*s\"", QUOTE_MAX,
						    v[j]);
			}
		}
		q->values = v;
		q->nvalues = (uint32_t)nv;
	}
	ret->reqs = reqs;
	ret->n = (uint32_t)(ne + nf);
	return 0;
}

static int dec_node_affinity(dec *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	const kb_yaml_node *aff, *na;
	int r;
	if ((r = get_map(d, kb_yaml_get(spec, "affinity"), "spec.affinity", &aff)) < 0 ||
	    (r = get_map(d, kb_yaml_get(aff, "nodeAffinity"), "spec.affinity.nodeAffinity",
			 &na)) < 0 ||
	    !na)
		return r;

	static const char rpath[] =
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
	const kb_yaml_node *req, *terms;
	if ((r = get_map(d, kb_yaml_get(na, "requiredDuringSchedulingIgnoredDuringExecution"),
			 rpath, &req)) < 0)
		return r;
	char tpath[PATH_LEN];
	pathf(tpath, "%s.nodeSelectorTerms", rpath);
	if ((r = get_seq(d, kb_yaml_get(req, "nodeSelectorTerms"), tpath, &terms)) < 0)
		return r;
	if (terms && terms->n) {
		kb_selector_term *t = kb_arena_calloc(d->a, terms->n, sizeof(*t));
		if (!t)
			return fail_nomem(d);
		for (size_t i = 0; i < terms->n; i++) {
			char path[PATH_LEN];
			pathf(path, "%s[%zu]", tpath, i);
			if ((r = dec_selector_term(d, terms->items[i], path, &t[i])) < 0)
				return r;
		}
		ps->required = t;
		ps->nrequired = (uint32_t)terms->n;
	}

	static const char ppath[] =
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";
	const kb_yaml_node *pref;
	if ((r = get_seq(d, kb_yaml_get(na, "preferredDuringSchedulingIgnoredDuringExecution"),
			 ppath, &pref)) < 0)
		return r;
	if (!pref || pref->n == 0)
		return 0;
	kb_preferred_term *p = kb_arena_calloc(d->a, pref->n, sizeof(*p));
	if (!p)
		return fail_nomem(d);
	for (size_t i = 0; i < pref->n; i++) {
		char path[PATH_LEN], sub[PATH_LEN];
		pathf(path, "%s[%zu]", ppath, i);
		const kb_yaml_node *it;
		if ((r = get_map(d, pref->items[i], path, &it)) < 0)
			return r;
		if (!it)
			return fail(d, -EINVAL, pref->items[i], path, "expected a mapping, got null");
		pathf(sub, "%s.weight", path);
		int64_t w = 0;
		bool present;
		if ((r = get_int(d, kb_yaml_get(it, "weight"), sub, 1, 100, &w, &present)) < 0)
			return r;
		if (!present)
			return fail(d, -EINVAL, it, sub, "required (1..100)");
		p[i].weight = (int32_t)w;
		pathf(sub, "%s.preference", path);
		if ((r = dec_selector_term(d, kb_yaml_get(it, "preference"), sub, &p[i].term)) < 0)
			return r;
	}
	ps->preferred = p;
	ps->npreferred = (uint32_t)pref->n;
	return 0;
}

static int dec_tolerations(dec *d, const kb_yaml_node *spec, kb_pod_spec *ps)
{
	const kb_yaml_node *seq;
	int r = get_seq(d, kb_yaml_get(spec, "tolerations"), "spec.tolerations", &seq);
	if (r < 0 || !seq || seq->n == 0)
		return r;
	kb_toleration *t = kb_arena_calloc(d->a, seq->n, sizeof(*t));
	if (!t)
		return fail_nomem(d);
	for (size_t i = 0; i < seq->n; i++) {
		char path[PATH_LEN], sub[PATH_LEN];
		pathf(path, "spec.tolerations[%zu]", i);
		const kb_yaml_node *it;
		if ((r = get_map(d, seq->items[i], path, &it)) < 0)
			return r;
		if (!it)
			return fail(d, -EINVAL, seq->items[i], path, "expected a mapping, got null");
		pathf(sub, "%s.key", path);
		if ((r = get_str(d, kb_yaml_get(it, "key"), sub, &t[i].key)) < 0)
			return r;
		if (!t[i].key)
			t[i].key = "";
		pathf(sub, "%s.value", path);
		if ((r = get_str(d, kb_yaml_get(it, "value"), sub, &t[i].value)) < 0)
			return r;
		if (!t[i].value)
			t[i].value = "";
		pathf(sub, "%s.operator", path);
		const kb_yaml_node *op = kb_yaml_get(it, "operator");
		if (kb_yaml_is_null(op) || str_eq(op, "") || str_eq(op, "Equal"))
			t[i].exists = false;
		else if (str_eq(op, "Exists"))
			t[i].exists = true;
		else if (is_scalar(op))
			return fail(d, -EINVAL, op, sub,
				    "unknown operator \"%.*s\" (want Equal or Exists)", QUOTE_MAX,
				    op->str);
		else
			return fail(d, -EINVAL, op, sub, "expected a string, got %s",
				    kb_yaml_kind_name(op));
		if (!t[i].exists && !*t[i].key)
			return fail(d, -EINVAL, it, sub,
				    "must be Exists when the key is empty");
		if (t[i].exists && *t[i].value) {
			pathf(sub, "%s.value", path);
			return fail(d, -EINVAL, kb_yaml_get(it, "value"), sub,
				    "must be empty when the operator is Exists");
		}
		pathf(sub, "%s.effect", path);
		if ((r = dec_effect(d, kb_yaml_get(it, "effect"), sub, &t[i].effect)) < 0)
			return r;
	}
	ps->tolerations = t;
	ps->ntolerations = (uint32_t)seq->n;
	return 0;
}

/* Requests of one container: requests, and limits for resources without a
 * request. Appends host ports to ports[*nports..cap) (ports is NULL for init
 * containers, whose ports are not looked at). */
static int dec_container(dec *d, const kb_yaml_node *item, const char *path, kb_res *ret_req,
			 kb_host_port *ports, uint32_t cap, uint32_t *nports,
			 const kb_yaml_node **ret_c)
{
	const kb_yaml_node *c, *res;
	int r;
	if ((r = get_map(d, item, path, &c)) < 0)
		return r;
	if (!c)
		return fail(d, -EINVAL, item, path, "expected a mapping, got null");
	*ret_c = c;
	char sub[PATH_LEN];
	pathf(sub, "%s.resources", path);
	if ((r = get_map(d, kb_yaml_get(c, "resources"), sub, &res)) < 0)
		return r;
	kb_res lim = {{0}};
	uint32_t rmask = 0, lmask = 0;
	memset(ret_req, 0, sizeof(*ret_req));
	pathf(sub, "%s.resources.requests", path);
	if ((r = get_reslist(d, kb_yaml_get(res, "requests"), sub, ret_req, &rmask)) < 0)
		return r;
	pathf(sub, "%s.resources.limits", path);
	if ((r = get_reslist(d, kb_yaml_get(res, "limits"), sub, &lim, &lmask)) < 0)
		return r;
	for (int i = 0; i < KB_RES_MAX; i++)
		if ((lmask & (1u << i)) && !(rmask & (1u << i)))
			ret_req->q[i] = lim.q[i];

	if (!nports)
		return 0;
	const kb_yaml_node *seq;
	pathf(sub, "%s.ports", path);
	if ((r = get_seq(d, kb_yaml_get(c, "ports"), sub, &seq)) < 0)
		return r;
	for (size_t i = 0; seq && i < seq->n; i++) {
		char ppath[PATH_LEN], f[PATH_LEN];
		pathf(ppath, "%s.ports[%zu]", path, i);
		const kb_yaml_node *p;
		if ((r = get_map(d, seq->items[i], ppath, &p)) < 0)
			return r;
		if (!p)
			continue;
		pathf(f, "%s.hostPort", ppath);
		int64_t hp = 0;
		if ((r = get_int(d, kb_yaml_get(p, "hostPort"), f, 0, 65535, &hp, NULL)) < 0)
			return r;
		if (hp == 0)
			continue;
		if (*nports >= cap)
			return fail(d, -EINVAL, p, f, "too many host ports (at most %d)",
				    KB_OBJ_LIST_MAX);
		kb_host_port *h = &ports[(*nports)++];
		h->port = (uint16_t)hp;
		pathf(f, "%s.protocol", ppath);
		const kb_yaml_node *pr = kb_yaml_get(p, "protocol");
		if (kb_yaml_is_null(pr) || str_eq(pr, "TCP"))
			h->proto = KB_PROTO_TCP;
		else if (str_eq(pr, "UDP"))
			h->proto = KB_PROTO_UDP;
		else if (str_eq(pr, "SCTP"))
			h->proto = KB_PROTO_SCTP;
		else if (is_scalar(pr))
			return fail(d, -EINVAL, pr, f,
				    "unknown protocol \"%.*s\" (want TCP, UDP or SCTP)", QUOTE_MAX,
				    pr->str);
		else
			return fail(d, -EINVAL, pr, f, "expected a string, got %s",
				    kb_yaml_kind_name(pr));
		pathf(f, "%s.hostIP", ppath);
		if ((r = get_str(d, kb_yaml_get(p, "hostIP"), f, &h->ip)) < 0)
			return r;
		if (!h->ip)
			h->ip = "";
	}
	return 0;
}

/* Effective request (see the top of this file). */
static int dec_requests(dec *d, const kb_yaml_node *spec, kb_pod_obj *po)
{
	const kb_yaml_node *cs, *ics;
	int r;
	if ((r = get_seq(d, kb_yaml_get(spec, "containers"), "spec.containers", &cs)) < 0 ||
	    (r = get_seq(d, kb_yaml_get(spec, "initContainers"), "spec.initContainers", &ics)) <
		    0)
		return r;
	size_t nc = cs ? cs->n : 0, ni = ics ? ics->n : 0;
	if (nc + ni > KB_OBJ_LIST_MAX)
		return fail(d, -EINVAL, cs, "spec.containers",
			    "too many containers and init containers (%zu, at most %d)", nc + ni,
			    KB_OBJ_LIST_MAX);

	/* Host ports: counted first so the array is allocated once. */
	size_t maxports = 0;
	for (size_t i = 0; i < nc; i++) {
		const kb_yaml_node *ps = kb_yaml_get(cs->items[i], "ports");
		if (ps && ps->kind == KB_YAML_SEQ)
			maxports += ps->n;
	}
	if (maxports > KB_OBJ_LIST_MAX)
		maxports = KB_OBJ_LIST_MAX;
	kb_host_port *ports = NULL;
	uint32_t nports = 0;
	if (maxports && !(ports = kb_arena_calloc(d->a, maxports, sizeof(*ports))))
		return fail_nomem(d);

	kb_res sum = {{0}}, one;
	for (size_t i = 0; i < nc; i++) {
		char path[PATH_LEN];
		pathf(path, "spec.containers[%zu]", i);
		const kb_yaml_node *c;
		if ((r = dec_container(d, cs->items[i], path, &one, ports, (uint32_t)maxports,
				       &nports, &c)) < 0)
			return r;
		if (!res_add_checked(&sum, &one))
			return fail(d, -EINVAL, c, path, "requests too large in total");
	}
	po->spec.host_ports = nports ? ports : NULL;
	po->spec.nhost_ports = nports;

	kb_res sidecars = {{0}}, init = {{0}};
	for (size_t i = 0; i < ni; i++) {
		char path[PATH_LEN];
		pathf(path, "spec.initContainers[%zu]", i);
		const kb_yaml_node *c;
		if ((r = dec_container(d, ics->items[i], path, &one, NULL, 0, NULL, &c)) < 0)
			return r;
		if (str_eq(kb_yaml_get(c, "restartPolicy"), "Always")) {
			if (!res_add_checked(&sidecars, &one))
				return fail(d, -EINVAL, c, path, "requests too large in total");
			kb_res_max(&init, &sidecars);
		} else {
			if (!res_add_checked(&one, &sidecars))
				return fail(d, -EINVAL, c, path, "requests too large in total");
			kb_res_max(&init, &one);
		}
	}
	if (!res_add_checked(&sum, &sidecars))
		return fail(d, -EINVAL, ics, "spec.initContainers", "requests too large in total");
	kb_res_max(&sum, &init);

	kb_res overhead = {{0}};
	uint32_t omask = 0;
	const kb_yaml_node *on = kb_yaml_get(spec, "overhead");
	if ((r = get_reslist(d, on, "spec.overhead", &overhead, &omask)) < 0)
		return r;
	if (!res_add_checked(&sum, &overhead))
		return fail(d, -EINVAL, on, "spec.overhead", "requests too large in total");
	sum.q[KB_RES_PODS] = 1000;
	po->req = sum;
	return 0;
}

/* Seconds (possibly fractional) to ms, exactly. */
static int dec_sim_seconds(dec *d, const char *ann, int64_t *ret_ms)
{
	const char *s = kb_labels_get(&d->o->meta.annotations, ann);
	if (!s)
		return 0;
	int64_t ms;
	char path[PATH_LEN];
	pathf(path, "metadata.annotations.%s", ann);
	if (kb_quantity_parse(s, &ms) < 0 || ms < 0)
		return fail(d, -EINVAL, ann_node(d, ann), path,
			    "want a non-negative number of seconds (e.g. \"1.5\"), got \"%.*s\"",
			    QUOTE_MAX, s);
	*ret_ms = ms;
	return 0;
}

static int dec_gpu_wishes(dec *d, kb_pod_obj *po)
{
	const kb_labels *ann = &d->o->meta.annotations;
	const char *models = kb_labels_get(ann, KB_ANN_GPU_MODELS);
	if (models) {
		if (!*models)
			return fail(d, -EINVAL, ann_node(d, KB_ANN_GPU_MODELS),
				    "metadata.annotations." KB_ANN_GPU_MODELS,
				    "must not be empty (want models like \"V100|A100\")");
		po->spec.gpu_models = models;
	}

	const char *milli = kb_labels_get(ann, KB_ANN_GPU_MILLI);
	if (milli) {
		const kb_yaml_node *at = ann_node(d, KB_ANN_GPU_MILLI);
		const char *path = "metadata.annotations." KB_ANN_GPU_MILLI;
		int v = 0;
		size_t len = strlen(milli);
		bool ok = len > 0 && len <= 3;
		for (size_t i = 0; ok && i < len; i++) {
			ok = milli[i] >= '0' && milli[i] <= '9';
			v = v * 10 + (milli[i] - '0');
		}
		if (!ok || v < 1 || v > 999)
			return fail(d, -EINVAL, at, path,
				    "want an integer 1..999 (milli-GPU of one GPU), got \"%.*s\"",
				    QUOTE_MAX, milli);
		int gi = kb_resnames_intern(d->rn, KB_RES_GPU_NAME);
		if (gi == -ENOSPC)
			return fail(d, -ENOSPC, at, path,
				    "too many distinct resource names in the cluster (at most %d)",
				    KB_RES_MAX);
		if (gi < 0)
			return fail(d, -EINVAL, at, path, "cannot register %s", KB_RES_GPU_NAME);
		int64_t asked = po->req.q[gi];
		if (asked != 0 && asked != 1000)
			return fail(d, -EINVAL, at, path,
				    "a pod sharing a GPU must ask for 1 %s or none, it asks for "
				    "%lld milli-GPU",
				    KB_RES_GPU_NAME, (long long)asked);
		po->spec.gpu_milli = v;
		po->req.q[gi] = v; /* charged its share of one GPU */
	}

	const char *devs = kb_labels_get(ann, KB_ANN_GPU_DEVICES);
	if (devs && *devs) {
		const kb_yaml_node *at = ann_node(d, KB_ANN_GPU_DEVICES);
		const char *path = "metadata.annotations." KB_ANN_GPU_DEVICES;
		uint8_t *v = kb_arena_alloc(d->a, KB_MAX_GPUS);
		if (!v)
			return fail_nomem(d);
		uint32_t n = 0, seen = 0;
		const char *p = devs;
		for (;;) {
			while (*p == ' ')
				p++;
			int dev = 0;
			const char *start = p;
			while (*p >= '0' && *p <= '9' && dev < KB_MAX_GPUS)
				dev = dev * 10 + (*p++ - '0');
			if (p == start || dev >= KB_MAX_GPUS || (seen & (1u << dev)))
				return fail(d, -EINVAL, at, path,
					    "want distinct device indices 0..%d like \"0,1\", got "
					    "\"%.*s\"",
					    KB_MAX_GPUS - 1, QUOTE_MAX, devs);
			seen |= 1u << dev;
			v[n++] = (uint8_t)dev;
			while (*p == ' ')
				p++;
			if (*p == '\0')
				break;
			if (*p != ',')
				return fail(d, -EINVAL, at, path,
					    "want distinct device indices 0..%d like \"0,1\", got "
					    "\"%.*s\"",
					    KB_MAX_GPUS - 1, QUOTE_MAX, devs);
			p++;
		}
		po->gpu_devices = v;
		po->ngpu_devices = n;
	}
	return 0;
}

static int dec_pod(dec *d)
{
	kb_pod_obj *po = &d->o->u.pod;
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = get_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = get_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	if ((r = get_str_nonempty(d, kb_yaml_get(spec, "schedulerName"), "spec.schedulerName",
				  &po->scheduler_name)) < 0)
		return r;
	if (!po->scheduler_name)
		po->scheduler_name = DEFAULT_SCHEDULER;
	if ((r = get_str_nonempty(d, kb_yaml_get(spec, "nodeName"), "spec.nodeName",
				  &po->node_name)) < 0)
		return r;

	const kb_yaml_node *ph = kb_yaml_get(status, "phase");
	if (kb_yaml_is_null(ph) || str_eq(ph, "Pending") || str_eq(ph, ""))
		po->phase = KB_POD_PENDING;
	else if (str_eq(ph, "Running"))
		po->phase = KB_POD_RUNNING;
	else if (str_eq(ph, "Succeeded"))
		po->phase = KB_POD_SUCCEEDED;
	else if (str_eq(ph, "Failed"))
		po->phase = KB_POD_FAILED;
	else if (str_eq(ph, "Unknown"))
		po->phase = KB_POD_UNKNOWN;
	else if (is_scalar(ph))
		return fail(d, -EINVAL, ph, "status.phase",
			    "unknown phase \"%.*s\" (want Pending, Running, Succeeded, Failed or "
			    "Unknown)",
			    QUOTE_MAX, ph->str);
	else
		return fail(d, -EINVAL, ph, "status.phase", "expected a string, got %s",
			    kb_yaml_kind_name(ph));

	int64_t prio = 0;
	if ((r = get_int(d, kb_yaml_get(spec, "priority"), "spec.priority", INT32_MIN, INT32_MAX,
			 &prio, &po->has_priority)) < 0)
		return r;
	po->priority = (int32_t)prio;
	if ((r = get_str_nonempty(d, kb_yaml_get(spec, "priorityClassName"),
				  "spec.priorityClassName", &po->priority_class_name)) < 0)
		return r;

	const kb_meta *m = &d->o->meta;
	const char *g = kb_labels_get(&m->annotations, KB_ANN_GROUP_NAME);
	if (!g || !*g)
		g = kb_labels_get(&m->annotations, KB_ANN_VOLCANO_GROUP_NAME);
	if (!g || !*g)
		g = kb_labels_get(&m->labels, KB_LABEL_COSCHED_GROUP);
	if (!g || !*g)
		g = kb_labels_get(&m->labels, KB_LABEL_COSCHED_GROUP_OLD);
	po->group_name = g && *g ? g : NULL;
	if (po->group_name) {
		po->group_key = kb_arena_printf(d->a, "%s/%s", m->ns, po->group_name);
		if (!po->group_key)
			return -ENOMEM;
	}

	po->spec.labels = m->labels;
	if ((r = dec_requests(d, spec, po)) < 0)
		return r;
	if ((r = get_labels(d, kb_yaml_get(spec, "nodeSelector"), "spec.nodeSelector",
			    &po->spec.node_selector)) < 0)
		return r;
	if ((r = dec_node_affinity(d, spec, &po->spec)) < 0)
		return r;
	if ((r = dec_tolerations(d, spec, &po->spec)) < 0)
		return r;

	po->sim_duration_ms = -1;
	if ((r = dec_sim_seconds(d, KB_ANN_SIM_ARRIVAL, &po->sim_arrival_ms)) < 0 ||
	    (r = dec_sim_seconds(d, KB_ANN_SIM_DURATION, &po->sim_duration_ms)) < 0)
		return r;
	if ((r = dec_gpu_wishes(d, po)) < 0)
		return r;
	po->best_effort = kb_res_is_best_effort(&po->req);
	return 0;
}

/* ---- PodGroup, Queue, PriorityClass ---------------------------------------- */

static kb_pg_flavor flavor_of(const char *api_version)
{
	if (strcmp(api_version, "scheduling.incubator.k8s.io/v1alpha1") == 0)
		return KB_PG_KUBE_BATCH;
	if (strcmp(api_version, "scheduling.volcano.sh/v1beta1") == 0)
		return KB_PG_VOLCANO;
	if (strcmp(api_version, "scheduling.x-k8s.io/v1alpha1") == 0 ||
	    strcmp(api_version, "scheduling.sigs.k8s.io/v1alpha1") == 0)
		return KB_PG_COSCHED;
	return KB_PG_NONE;
}

/* What a scheduler last wrote into a PodGroup's status besides the phase
 * (kb_podgroup_obj): the counts and the Unschedulable condition's message.
 * Lenient: a malformed field is unknown, never an error. */
static int dec_podgroup_written(dec *d, const kb_yaml_node *status, kb_podgroup_obj *pg)
{
	static const char *const names[] = {"running", "succeeded", "failed"};
	int32_t *counts[] = {&pg->running, &pg->succeeded, &pg->failed};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const kb_yaml_node *n = kb_yaml_get(status, names[i]);
		int64_t v;
		*counts[i] = kb_yaml_is_null(n)				       ? 0
			     : kb_yaml_int(n, &v) == 0 && v >= 0 && v <= INT32_MAX ? (int32_t)v
										    : -1;
	}
	const kb_yaml_node *conds = kb_yaml_get(status, "conditions");
	if (!conds || conds->kind != KB_YAML_SEQ)
		return 0;
	for (size_t i = 0; i < conds->n; i++) {
		const kb_yaml_node *c = conds->items[i];
		const kb_yaml_node *msg = kb_yaml_get(c, "message");
		if (!str_eq(kb_yaml_get(c, "type"), "Unschedulable") ||
		    !str_eq(kb_yaml_get(c, "status"), "True") || !is_scalar(msg))
			continue;
		if (!(pg->unschedulable = kb_arena_strndup(d->a, msg->str, msg->len)))
			return fail_nomem(d);
		break;
	}
	return 0;
}

static int dec_podgroup(dec *d)
{
	kb_podgroup_obj *pg = &d->o->u.podgroup;
	const kb_yaml_node *av = kb_yaml_get(d->root, "apiVersion");
	pg->flavor = flavor_of(d->o->api_version);
	if (pg->flavor == KB_PG_NONE)
		return fail(d, -EINVAL, av, "apiVersion",
			    "unknown PodGroup API \"%.*s\" (want scheduling.incubator.k8s.io/v1alpha1, "
			    "scheduling.volcano.sh/v1beta1 or scheduling.x-k8s.io/v1alpha1)",
			    QUOTE_MAX, d->o->api_version);
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = get_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = get_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	const kb_yaml_node *mm = kb_yaml_get(spec, "minMember");
	int64_t v = 0;
	if ((r = get_int(d, mm, "spec.minMember", INT32_MIN, INT32_MAX, &v, NULL)) < 0)
		return r;
	if (v < 0)
		return fail(d, -EINVAL, mm, "spec.minMember", "must be >= 0, got %lld",
			    (long long)v);
	pg->min_member = (int32_t)v;

	uint32_t mask = 0;
	const kb_yaml_node *mr = kb_yaml_get(spec, "minResources");
	if ((r = get_reslist(d, mr, "spec.minResources", &pg->min_resources, &mask)) < 0)
		return r;
	pg->has_min_resources = !kb_yaml_is_null(mr);

	if (pg->flavor != KB_PG_COSCHED) {
		if ((r = get_str_nonempty(d, kb_yaml_get(spec, "queue"), "spec.queue",
					  &pg->queue)) < 0)
			return r;
		if ((r = get_str_nonempty(d, kb_yaml_get(spec, "priorityClassName"),
					  "spec.priorityClassName",
					  &pg->priority_class_name)) < 0)
			return r;
	}

	const kb_yaml_node *ph = kb_yaml_get(status, "phase");
	if (ph && !is_scalar(ph))
		return fail(d, -EINVAL, ph, "status.phase", "expected a string, got %s",
			    kb_yaml_kind_name(ph));
	if ((r = get_str_nonempty(d, ph, "status.phase", &pg->status_phase)) < 0 ||
	    (r = dec_podgroup_written(d, status, pg)) < 0)
		return r;
	if (str_eq(ph, "Inqueue") || str_eq(ph, "Scheduling"))
		pg->phase = KB_PG_INQUEUE;
	else if (str_eq(ph, "Running"))
		pg->phase = KB_PG_RUNNING;
	else if (str_eq(ph, "Unknown"))
		pg->phase = KB_PG_UNKNOWN;
	else if (str_eq(ph, "Completed") || str_eq(ph, "Finished"))
		pg->phase = KB_PG_COMPLETED;
	else
		pg->phase = KB_PG_PENDING; /* Pending, absent, Failed, anything else */
	return 0;
}

static int dec_queue(dec *d)
{
	kb_queue_obj *q = &d->o->u.queue;
	const kb_yaml_node *av = kb_yaml_get(d->root, "apiVersion");
	q->flavor = flavor_of(d->o->api_version);
	if (q->flavor != KB_PG_KUBE_BATCH && q->flavor != KB_PG_VOLCANO)
		return fail(d, -EINVAL, av, "apiVersion",
			    "unknown Queue API \"%.*s\" (want scheduling.incubator.k8s.io/v1alpha1 "
			    "or scheduling.volcano.sh/v1beta1)",
			    QUOTE_MAX, d->o->api_version);
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = get_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = get_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;

	const kb_yaml_node *wn = kb_yaml_get(spec, "weight");
	int64_t w = 1;
	if ((r = get_int(d, wn, "spec.weight", INT32_MIN, INT32_MAX, &w, NULL)) < 0)
		return r;
	if (w == 0 && q->flavor == KB_PG_VOLCANO)
		w = 1;
	if (w < 1)
		return fail(d, -EINVAL, wn, "spec.weight", "must be >= 1, got %lld", (long long)w);
	q->weight = (int32_t)w;
	if ((r = get_reslist(d, kb_yaml_get(spec, "capability"), "spec.capability",
			     &q->capability, &q->capability_mask)) < 0)
		return r;
	q->reclaimable = true;
	q->state = KB_QUEUE_OPEN;
	if (q->flavor != KB_PG_VOLCANO)
		return 0;

	const kb_yaml_node *g;
	uint32_t gmask = 0;
	if ((r = get_map(d, kb_yaml_get(spec, "guarantee"), "spec.guarantee", &g)) < 0 ||
	    (r = get_reslist(d, kb_yaml_get(g, "resource"), "spec.guarantee.resource",
			     &q->guarantee, &gmask)) < 0)
		return r;
	if ((r = get_bool(d, kb_yaml_get(spec, "reclaimable"), "spec.reclaimable",
			  &q->reclaimable)) < 0)
		return r;
	if ((r = get_str_nonempty(d, kb_yaml_get(spec, "parent"), "spec.parent", &q->parent)) < 0)
		return r;
	const kb_yaml_node *st = kb_yaml_get(status, "state");
	if (st && !kb_yaml_is_null(st) && !is_scalar(st))
		return fail(d, -EINVAL, st, "status.state", "expected a string, got %s",
			    kb_yaml_kind_name(st));
	if (str_eq(st, "Closed"))
		q->state = KB_QUEUE_CLOSED;
	else if (str_eq(st, "Closing"))
		q->state = KB_QUEUE_CLOSING;
	return 0; /* Open, Unknown or absent: open */
}

static int dec_priority_class(dec *d)
{
	kb_priority_class_obj *pc = &d->o->u.priority_class;
	const kb_yaml_node *vn = kb_yaml_get(d->root, "value");
	int64_t v = 0;
	bool present;
	int r = get_int(d, vn, "value", INT32_MIN, INT32_MAX, &v, &present);
	if (r < 0)
		return r;
	if (!present)
		return fail(d, -EINVAL, NULL, "value", "required");
	pc->value = (int32_t)v;
	return get_bool(d, kb_yaml_get(d->root, "globalDefault"), "globalDefault",
			&pc->global_default);
}

/* ---- entry points ------------------------------------------------------------ */

static kb_kind kind_of(const char *api_version, const char *kind)
{
	bool core = strcmp(api_version, "v1") == 0;
	if (strcmp(kind, "Node") == 0)
		return core ? KB_KIND_NODE : KB_KIND_OTHER;
	if (strcmp(kind, "Pod") == 0)
		return core ? KB_KIND_POD : KB_KIND_OTHER;
	if (strcmp(kind, "Namespace") == 0)
		return core ? KB_KIND_NAMESPACE : KB_KIND_OTHER;
	if (strcmp(kind, "PriorityClass") == 0)
		return strcmp(api_version, "scheduling.k8s.io/v1") == 0 ||
				       strcmp(api_version, "scheduling.k8s.io/v1beta1") == 0 ||
				       strcmp(api_version, "scheduling.k8s.io/v1alpha1") == 0
			       ? KB_KIND_PRIORITY_CLASS
			       : KB_KIND_OTHER;
	if (strcmp(kind, "PodGroup") == 0)
		return KB_KIND_PODGROUP; /* an unknown API is an error, in dec_podgroup */
	if (strcmp(kind, "Queue") == 0)
		return KB_KIND_QUEUE;
	return KB_KIND_OTHER;
}

static int dec_required_str(dec *d, const char *field, const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(d->root, field);
	int r = get_str(d, n, field, ret);
	if (r < 0)
		return r;
	if (!*ret || !**ret)
		return fail(d, -EINVAL, n, field, "required");
	return 0;
}

/* A required string field, or `def` (copied into the object) when the
 * document lacks it and def is non-NULL. */
static int dec_str_or_default(dec *d, const char *field, const char *def, const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(d->root, field);
	if (def && (kb_yaml_is_null(n) || (is_scalar(n) && n->len == 0))) {
		char *s = kb_arena_strdup(d->a, def);
		if (!s)
			return fail_nomem(d);
		*ret = s;
		return 0;
	}
	return dec_required_str(d, field, ret);
}

int kb_object_decode(const kb_yaml_node *doc, const char *source, kb_resnames *resnames,
		     kb_object **ret_obj, kb_err *err)
{
	return kb_object_decode_as(doc, NULL, NULL, source, resnames, ret_obj, err);
}

/* ---- packing: from the scratch arena into one block ------------------------------- */

/* Rebases one pointer from the scratch arena into the block. */
#define RELOC(pk, field) ((field) = kb_arena_relocate((pk)->scratch, (field), (pk)->dst))

typedef struct packer {
	const kb_arena *scratch;
	void *dst; /* where the scratch arena's contents were copied */
} packer;

static void reloc_labels(const packer *pk, kb_labels *l)
{
	RELOC(pk, l->v);
	kb_label *v = (kb_label *)l->v;
	for (uint32_t i = 0; i < l->n; i++) {
		RELOC(pk, v[i].key);
		RELOC(pk, v[i].value);
	}
}

static void reloc_term(const packer *pk, kb_selector_term *t)
{
	RELOC(pk, t->reqs);
	kb_selector_req *q = (kb_selector_req *)t->reqs;
	for (uint32_t i = 0; i < t->n; i++) {
		RELOC(pk, q[i].key);
		RELOC(pk, q[i].values);
		const char **v = (const char **)q[i].values;
		for (uint32_t j = 0; j < q[i].nvalues; j++)
			RELOC(pk, v[j]);
	}
}

static void reloc_pod_spec(const packer *pk, kb_pod_spec *ps)
{
	reloc_labels(pk, &ps->labels); /* the pod's labels: a second rebase changes nothing */
	reloc_labels(pk, &ps->node_selector);
	RELOC(pk, ps->required);
	kb_selector_term *req = (kb_selector_term *)ps->required;
	for (uint32_t i = 0; i < ps->nrequired; i++)
		reloc_term(pk, &req[i]);
	RELOC(pk, ps->preferred);
	kb_preferred_term *pref = (kb_preferred_term *)ps->preferred;
	for (uint32_t i = 0; i < ps->npreferred; i++)
		reloc_term(pk, &pref[i].term);
	RELOC(pk, ps->tolerations);
	kb_toleration *tol = (kb_toleration *)ps->tolerations;
	for (uint32_t i = 0; i < ps->ntolerations; i++) {
		RELOC(pk, tol[i].key);
		RELOC(pk, tol[i].value);
	}
	RELOC(pk, ps->host_ports);
	kb_host_port *hp = (kb_host_port *)ps->host_ports;
	for (uint32_t i = 0; i < ps->nhost_ports; i++)
		RELOC(pk, hp[i].ip);
	RELOC(pk, ps->gpu_models);
}

/* Every pointer of the object, by kind. A pointer field added to an object
 * must be added here: anything left pointing into the scratch arena
 * dangles once it is freed (the ASan build's tests catch that). Pointers
 * shared between fields (a label value that is also the GPU model) are
 * rebased once per field, which is harmless. */
static void reloc_object(const packer *pk, kb_object *o)
{
	RELOC(pk, o->api_version);
	RELOC(pk, o->kind_name);
	kb_meta *m = &o->meta;
	RELOC(pk, m->name);
	RELOC(pk, m->ns);
	RELOC(pk, m->uid);
	RELOC(pk, m->key);
	RELOC(pk, m->resource_version);
	reloc_labels(pk, &m->labels);
	reloc_labels(pk, &m->annotations);
	switch (o->kind) {
	case KB_KIND_NODE: {
		kb_node_obj *no = &o->u.node;
		RELOC(pk, no->taints);
		kb_taint *t = (kb_taint *)no->taints;
		for (uint32_t i = 0; i < no->ntaints; i++) {
			RELOC(pk, t[i].key);
			RELOC(pk, t[i].value);
		}
		RELOC(pk, no->gpu_model);
		RELOC(pk, no->gpu_group);
		break;
	}
	case KB_KIND_POD: {
		kb_pod_obj *po = &o->u.pod;
		RELOC(pk, po->scheduler_name);
		RELOC(pk, po->node_name);
		RELOC(pk, po->priority_class_name);
		RELOC(pk, po->group_name);
		RELOC(pk, po->group_key);
		reloc_pod_spec(pk, &po->spec);
		RELOC(pk, po->gpu_devices);
		break;
	}
	case KB_KIND_PODGROUP:
		RELOC(pk, o->u.podgroup.queue);
		RELOC(pk, o->u.podgroup.priority_class_name);
		RELOC(pk, o->u.podgroup.status_phase);
		RELOC(pk, o->u.podgroup.unschedulable);
		break;
	case KB_KIND_QUEUE:
		RELOC(pk, o->u.queue.parent);
		break;
	case KB_KIND_PRIORITY_CLASS:
	case KB_KIND_NAMESPACE:
	case KB_KIND_OTHER:
		break;
	}
}

/* The object decoded in *tmp with its strings and arrays in scratch, as one
 * exact-size heap block: the kb_object first, then the scratch arena's
 * contents, every pointer rebased. NULL when malloc fails. */
static kb_object *pack(const kb_object *tmp, const kb_arena *scratch)
{
	size_t head = (sizeof(kb_object) + 15u) & ~(size_t)15u;
	kb_object *o = malloc(head + kb_arena_copy_size(scratch));
	if (!o)
		return NULL;
	*o = *tmp;
	packer pk = {scratch, (unsigned char *)o + head};
	kb_arena_copy_out(scratch, pk.dst);
	reloc_object(&pk, o);
	return o;
}

#undef RELOC

int kb_object_decode_as(const kb_yaml_node *doc, const char *default_api_version,
			const char *default_kind, const char *source, kb_resnames *resnames,
			kb_object **ret_obj, kb_err *err)
{
	if (!doc)
		return kb_err_set(err, -EINVAL, "object: empty document");
	dec d = {.source = source, .rn = resnames, .err = err, .root = doc, .kind = "object"};
	if (doc->kind != KB_YAML_MAP)
		return fail(&d, -EINVAL, doc, "document", "expected a mapping, got %s",
			    kb_yaml_kind_name(doc));

	/* Decode into a scratch arena, then copy the result into one block of
	 * exactly its size: an object per pod adds up (150,000 in a large
	 * cluster), and an arena's chunk would be mostly unused. */
	kb_object tmp;
	memset(&tmp, 0, sizeof(tmp));
	kb_arena scratch;
	kb_arena_init(&scratch);
	d.o = &tmp;
	d.a = &scratch;
	kb_object *o = &tmp;

	int r;
	if ((r = dec_str_or_default(&d, "apiVersion", default_api_version, &o->api_version)) < 0 ||
	    (r = dec_str_or_default(&d, "kind", default_kind, &o->kind_name)) < 0)
		goto out;
	o->kind = kind_of(o->api_version, o->kind_name);
	d.kind = o->kind_name;
	if ((r = dec_meta(&d)) < 0)
		goto out;

	switch (o->kind) {
	case KB_KIND_NODE:
		r = dec_node(&d);
		break;
	case KB_KIND_POD:
		r = dec_pod(&d);
		break;
	case KB_KIND_PODGROUP:
		r = dec_podgroup(&d);
		break;
	case KB_KIND_QUEUE:
		r = dec_queue(&d);
		break;
	case KB_KIND_PRIORITY_CLASS:
		r = dec_priority_class(&d);
		break;
	case KB_KIND_NAMESPACE:
	case KB_KIND_OTHER:
		r = 0;
		break;
	}
	if (r < 0)
		goto out;
	kb_object *packed = pack(&tmp, &scratch);
	if (!packed) {
		r = fail_nomem(&d);
		goto out;
	}
	*ret_obj = packed;
out:
	kb_arena_release(&scratch);
	return r;
}

kb_object *kb_object_free(kb_object *o)
{
	free(o);
	return NULL;
}

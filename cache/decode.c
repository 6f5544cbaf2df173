/* decode.c - the readers every kind's decoder shares (see decode.h). */
#include "cache/decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

/* ---- errors -------------------------------------------------------------------- */

int dec_fail(dec_ctx *d, int code, const kb_yaml_node *at, const char *path, const char *fmt, ...)
{
	char what[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	/* An error message: one too long for the buffer is cut, never lost. */
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	if (!at)
		at = d->root;
	char pos[KB_ERR_MSG_MAX / 2] = "";
	if (d->source)
		(void)snprintf(pos, sizeof(pos), " (%s:%d:%d)", d->source, at->line, at->col);
	if (d->key)
		return kb_err_set(d->err, code, "%s \"%s\": %s: %s%s", d->kind, d->key, path, what,
				  pos);
	return kb_err_set(d->err, code, "%s: %s: %s%s", d->kind, path, what, pos);
}

int dec_nomem(dec_ctx *d)
{
	return kb_err_set(d->err, -ENOMEM, "out of memory");
}

void dec_path(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* A field path for messages only: a cut one still names the object. */
	(void)vsnprintf(buf, DEC_PATH_LEN, fmt, ap);
	va_end(ap);
}

/* ---- scalars ------------------------------------------------------------------- */

bool dec_is_scalar(const kb_yaml_node *n)
{
	return n && n->kind == KB_YAML_SCALAR;
}

bool dec_scalar_is(const kb_yaml_node *n, const char *s)
{
	return dec_is_scalar(n) && n->len == strlen(s) && memcmp(n->str, s, n->len) == 0;
}

int dec_str(dec_ctx *d, const kb_yaml_node *n, const char *path, const char **ret)
{
	if (kb_yaml_is_null(n)) {
		*ret = NULL;
		return 0;
	}
	if (!dec_is_scalar(n))
		return dec_fail(d, -EINVAL, n, path, "expected a string, got %s",
				kb_yaml_kind_name(n));
	char *s = kb_arena_strndup(d->a, n->str, n->len);
	if (!s)
		return dec_nomem(d);
	*ret = s;
	return 0;
}

int dec_str_nonempty(dec_ctx *d, const kb_yaml_node *n, const char *path, const char **ret)
{
	const char *s;
	int r = dec_str(d, n, path, &s);
	if (r < 0)
		return r;
	*ret = s && *s ? s : NULL;
	return 0;
}

int dec_int(dec_ctx *d, const kb_yaml_node *n, const char *path, int64_t min, int64_t max,
	    int64_t *ret, bool *ret_present)
{
	if (kb_yaml_is_null(n)) {
		if (ret_present)
			*ret_present = false;
		return 0;
	}
	int64_t v;
	int r = kb_yaml_int(n, &v);
	if (r == -ERANGE || (r == 0 && (v < min || v > max)))
		return dec_fail(d, -EINVAL, n, path, "out of range [%lld, %lld], got \"%.*s\"",
				(long long)min, (long long)max, DEC_QUOTE_MAX, n->str);
	if (r < 0) {
		if (dec_is_scalar(n))
			return dec_fail(d, -EINVAL, n, path, "expected an integer, got \"%.*s\"",
					DEC_QUOTE_MAX, n->str);
		return dec_fail(d, -EINVAL, n, path, "expected an integer, got %s",
				kb_yaml_kind_name(n));
	}
	*ret = v;
	if (ret_present)
		*ret_present = true;
	return 0;
}

int dec_term_weight(dec_ctx *d, const kb_yaml_node *it, const char *path, int32_t *ret)
{
	char sub[DEC_PATH_LEN];
	dec_path(sub, "%s.weight", path);
	int64_t w = 0;
	bool present;
	int r = dec_int(d, kb_yaml_get(it, "weight"), sub, 1, 100, &w, &present);
	if (r < 0)
		return r;
	if (!present)
		return dec_fail(d, -EINVAL, it, sub, "required (1..100)");
	*ret = (int32_t)w;
	return 0;
}

int dec_bool(dec_ctx *d, const kb_yaml_node *n, const char *path, bool *ret)
{
	if (kb_yaml_is_null(n))
		return 0;
	bool v;
	if (kb_yaml_bool(n, &v) < 0) {
		if (dec_is_scalar(n))
			return dec_fail(d, -EINVAL, n, path, "expected true or false, got \"%.*s\"",
					DEC_QUOTE_MAX, n->str);
		return dec_fail(d, -EINVAL, n, path, "expected true or false, got %s",
				kb_yaml_kind_name(n));
	}
	*ret = v;
	return 0;
}

int dec_preemption_policy(dec_ctx *d, const kb_yaml_node *n, const char *path,
			  kb_preemption_policy *ret)
{
	if (kb_yaml_is_null(n))
		*ret = KB_PREEMPTION_UNSET;
	else if (dec_scalar_is(n, "PreemptLowerPriority"))
		*ret = KB_PREEMPTION_LOWER_PRIORITY;
	else if (dec_scalar_is(n, "Never"))
		*ret = KB_PREEMPTION_NEVER;
	else if (dec_is_scalar(n))
		return dec_fail(d, -EINVAL, n, path,
				"want PreemptLowerPriority or Never, got \"%.*s\"", DEC_QUOTE_MAX,
				n->str);
	else
		return dec_fail(d, -EINVAL, n, path, "expected a string, got %s",
				kb_yaml_kind_name(n));
	return 0;
}

int dec_taint_effect(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_taint_effect *ret)
{
	if (kb_yaml_is_null(n) || dec_scalar_is(n, ""))
		*ret = KB_EFFECT_ALL;
	else if (dec_scalar_is(n, "NoSchedule"))
		*ret = KB_EFFECT_NO_SCHEDULE;
	else if (dec_scalar_is(n, "PreferNoSchedule"))
		*ret = KB_EFFECT_PREFER_NO_SCHEDULE;
	else if (dec_scalar_is(n, "NoExecute"))
		*ret = KB_EFFECT_NO_EXECUTE;
	else if (dec_is_scalar(n))
		return dec_fail(d, -EINVAL, n, path,
				"unknown effect \"%.*s\" (want NoSchedule, PreferNoSchedule or "
				"NoExecute)",
				DEC_QUOTE_MAX, n->str);
	else
		return dec_fail(d, -EINVAL, n, path, "expected a string, got %s",
				kb_yaml_kind_name(n));
	return 0;
}

kb_pg_flavor dec_pg_flavor(const char *api_version)
{
	if (strcmp(api_version, "scheduling.incubator.k8s.io/v1alpha1") == 0)
		return KB_PG_KUBE_BATCH;
	if (strcmp(api_version, "scheduling.volcano.sh/v1beta1") == 0)
		return KB_PG_VOLCANO;
	if (strcmp(api_version, "scheduling.x-k8s.io/v1alpha1") == 0 ||
	    strcmp(api_version, "scheduling.sigs.k8s.io/v1alpha1") == 0)
		return KB_PG_COSCHED;
	if (strcmp(api_version, "scheduling.k8s.io/v1alpha2") == 0 ||
	    strcmp(api_version, "scheduling.k8s.io/v1alpha3") == 0 ||
	    strcmp(api_version, "scheduling.k8s.io/v1beta1") == 0)
		return KB_PG_K8S;
	return KB_PG_NONE;
}

/* ---- mappings and lists --------------------------------------------------------- */

int dec_map(dec_ctx *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret)
{
	if (kb_yaml_is_null(n)) {
		*ret = NULL;
		return 0;
	}
	if (n->kind != KB_YAML_MAP)
		return dec_fail(d, -EINVAL, n, path, "expected a mapping, got %s",
				kb_yaml_kind_name(n));
	*ret = n;
	return 0;
}

int dec_seq(dec_ctx *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret)
{
	if (kb_yaml_is_null(n)) {
		*ret = NULL;
		return 0;
	}
	if (n->kind != KB_YAML_SEQ)
		return dec_fail(d, -EINVAL, n, path, "expected a list, got %s",
				kb_yaml_kind_name(n));
	if (n->n > KB_OBJ_LIST_MAX)
		return dec_fail(d, -EINVAL, n, path, "too many items (%zu, at most %d)", n->n,
				KB_OBJ_LIST_MAX);
	*ret = n;
	return 0;
}

int dec_each_map(dec_ctx *d, const kb_yaml_node *seq, const char *path, dec_null_item nulls,
		 dec_item_fn *fn, void *ctx)
{
	for (size_t i = 0; seq && i < seq->n; i++) {
		char ipath[DEC_PATH_LEN];
		dec_path(ipath, "%s[%zu]", path, i);
		const kb_yaml_node *item;
		int r = dec_map(d, seq->items[i], ipath, &item);
		if (r < 0)
			return r;
		if (!item && nulls == DEC_NULL_ITEM_SKIPPED)
			continue;
		if (!item)
			return dec_fail(d, -EINVAL, seq->items[i], ipath,
					"expected a mapping, got null");
		if ((r = fn(d, item, ipath, i, ctx)) < 0)
			return r;
	}
	return 0;
}

int dec_strings(dec_ctx *d, const kb_yaml_node *seq, const char *path, const char ***ret)
{
	const char **v = kb_arena_calloc(d->a, seq->n, sizeof(*v));
	if (!v)
		return dec_nomem(d);
	for (size_t i = 0; i < seq->n; i++) {
		char ipath[DEC_PATH_LEN];
		dec_path(ipath, "%s[%zu]", path, i);
		int r = dec_str(d, seq->items[i], ipath, &v[i]);
		if (r < 0)
			return r;
		if (!v[i])
			v[i] = "";
	}
	*ret = v;
	return 0;
}

/* ---- labels and resources ----------------------------------------------------- */

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const kb_label *)a)->key, ((const kb_label *)b)->key);
}

int dec_labels(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_labels *ret)
{
	const kb_yaml_node *m;
	int r = dec_map(d, n, path, &m);
	if (r < 0 || !m)
		return r;
	if (m->n > KB_OBJ_LIST_MAX)
		return dec_fail(d, -EINVAL, m, path, "too many entries (%zu, at most %d)", m->n,
				KB_OBJ_LIST_MAX);
	if (m->n == 0)
		return 0;
	kb_label *v = kb_arena_calloc(d->a, m->n, sizeof(*v));
	if (!v)
		return dec_nomem(d);
	for (size_t i = 0; i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		char sub[DEC_PATH_LEN];
		dec_path(sub, "%s.%s", path, p->key->str);
		v[i].key = kb_arena_strndup(d->a, p->key->str, p->key->len);
		if (!v[i].key)
			return dec_nomem(d);
		if ((r = dec_str(d, p->value, sub, &v[i].value)) < 0)
			return r;
		if (!v[i].value)
			v[i].value = "";
	}
	qsort(v, m->n, sizeof(*v), cmp_label);
	for (size_t i = 1; i < m->n; i++)
		if (strcmp(v[i - 1].key, v[i].key) == 0)
			return dec_fail(d, -EINVAL, m, path, "duplicate key \"%.*s\"",
					DEC_QUOTE_MAX, v[i].key);
	ret->v = v;
	ret->n = (uint32_t)m->n;
	return 0;
}

/* One entry of a ResourceList at path: its name checked, its quantity
 * parsed into *ret_milli; sub (DEC_PATH_LEN) gets the entry's path. */
static int dec_res_quantity(dec_ctx *d, const kb_yaml_pair *p, const char *path, char *sub,
			    int64_t *ret_milli)
{
	const char *name = p->key->str;
	dec_path(sub, "%s.%s", path, name);
	if (p->key->len == 0 || strlen(name) != p->key->len)
		return dec_fail(d, -EINVAL, p->key, path, "bad resource name \"%.*s\"",
				DEC_QUOTE_MAX, name);
	if (p->key->len >= KB_RES_NAME_MAX)
		return dec_fail(d, -EINVAL, p->key, sub, "resource name too long (at most %d)",
				KB_RES_NAME_MAX - 1);
	const kb_yaml_node *v = p->value;
	if (!dec_is_scalar(v) || kb_yaml_is_null(v))
		return dec_fail(d, -EINVAL, v, sub, "expected a quantity, got %s",
				kb_yaml_is_null(v) ? "null" : kb_yaml_kind_name(v));
	int64_t q;
	if (strlen(v->str) != v->len || kb_quantity_parse(v->str, &q) < 0)
		return dec_fail(d, -EINVAL, v, sub, "bad quantity \"%.*s\"", DEC_QUOTE_MAX, v->str);
	if (q < 0)
		return dec_fail(d, -EINVAL, v, sub, "must not be negative, got \"%.*s\"",
				DEC_QUOTE_MAX, v->str);
	*ret_milli = q;
	return 0;
}

int dec_names_full(dec_ctx *d, const kb_yaml_node *at, const char *path)
{
	char names[256];
	return dec_fail(d, -ENOSPC, at, path,
			"needs one of the %d resource slots (cpu, memory and pods included), "
			"and every one is held (by: %s)",
			KB_RES_MAX, kb_resnames_format_asked(d->rn, names, sizeof(names)));
}

int dec_known_full(dec_ctx *d, const kb_yaml_node *at, const char *path)
{
	return dec_fail(d, -ENOSPC, at, path,
			"too many distinct resource names in the cluster (at most %d with a "
			"slot and %d without)",
			KB_RES_MAX, KB_RES_KNOWN_MAX);
}

/* The error for a name refused by kb_resnames_intern (r < 0). */
static int slot_refused(dec_ctx *d, int r, const kb_yaml_node *at, const char *sub)
{
	if (r == -ENOSPC)
		return dec_names_full(d, at, sub);
	return dec_fail(d, -EINVAL, at, sub, "resource name too long (at most %d)",
			KB_RES_NAME_MAX - 1);
}

/* Whether name must have a slot to be asked for: the device names the GPU
 * plugins find by their slot (plugins/gpu.c, plugins/gpushare.h), whose
 * pods need device choices and annotations a spilled name would skip. */
static bool needs_slot(const char *name)
{
	static const char *const device[] = {KB_RES_GPU_NAME,	 KB_RES_GPUSHARE_MEM,
					     KB_RES_GPUSHARE_COUNT, KB_RES_VGPU_NUMBER,
					     KB_RES_VGPU_MEMORY, KB_RES_VGPU_MEMPCT,
					     KB_RES_VGPU_CORES};
	for (size_t i = 0; i < sizeof(device) / sizeof(device[0]); i++)
		if (strcmp(name, device[i]) == 0)
			return true;
	return false;
}

/* Name p (refused a slot: every one is taken) as a spilled name of *spill
 * (api/resource.h) with quantity q. The GPU device names are never
 * spilled (needs_slot). */
static int spill_name(dec_ctx *d, const kb_yaml_pair *p, const char *sub, int64_t q,
		      kb_res_spill *spill)
{
	const char *name = p->key->str;
	char names[256];
	if (!spill || needs_slot(name))
		return dec_names_full(d, p->key, sub);
	int k = kb_resnames_intern_known(d->rn, name);
	if (k == -ENOSPC)
		return dec_known_full(d, p->key, sub);
	if (k < 0) /* -EEXIST cannot be: it has no slot; -ENAMETOOLONG checked */
		return dec_fail(d, -EINVAL, p->key, sub, "cannot register \"%.*s\"",
				DEC_QUOTE_MAX, name);
	if (kb_res_spill_set(spill, k, q) < 0)
		return dec_fail(d, -ENOSPC, p->key, sub,
				"too many resource names without a slot in one list (at most %d; "
				"the %d slots are held by cpu, memory, pods and: %s)",
				KB_RES_SPILL_MAX, KB_RES_MAX,
				kb_resnames_format_asked(d->rn, names, sizeof(names)));
	return 0;
}

int dec_reslist(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_res *ret_res,
		uint32_t *ret_mask, kb_res_spill *ret_spill)
{
	const kb_yaml_node *m;
	int r = dec_map(d, n, path, &m);
	if (r < 0)
		return r;
	kb_res res = {{0}};
	uint32_t mask = 0;
	for (size_t i = 0; m && i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		char sub[DEC_PATH_LEN];
		int64_t q = 0;
		if ((r = dec_res_quantity(d, p, path, sub, &q)) < 0)
			return r;
		int idx = kb_resnames_intern(d->rn, p->key->str);
		if (idx == -ENOSPC) {
			if ((r = spill_name(d, p, sub, q, ret_spill)) < 0)
				return r;
			continue;
		}
		if (idx < 0)
			return slot_refused(d, idx, p->key, sub);
		res.q[idx] = q;
		mask |= 1u << idx;
	}
	*ret_res = res;
	*ret_mask = mask;
	return 0;
}

int dec_reslist_advertised(dec_ctx *d, const kb_yaml_node *n, const char *path,
			   kb_res *ret_res, uint32_t *ret_mask, const kb_res_extra **ret_extra,
			   uint32_t *ret_nextra)
{
	const kb_yaml_node *m;
	int r = dec_map(d, n, path, &m);
	if (r < 0)
		return r;
	kb_res res = {{0}};
	uint32_t mask = 0, nextra = 0;
	kb_res_extra *extra = NULL;
	if (m && m->n > 0 && !(extra = kb_arena_calloc(d->a, m->n, sizeof(*extra))))
		return dec_nomem(d);
	for (size_t i = 0; m && i < m->n; i++) {
		const kb_yaml_pair *p = &m->pairs[i];
		const char *name = p->key->str;
		char sub[DEC_PATH_LEN];
		int64_t q = 0;
		if ((r = dec_res_quantity(d, p, path, sub, &q)) < 0)
			return r;
		int idx = kb_resnames_find(d->rn, name);
		if (idx < 0 && strcmp(name, KB_RES_GPU_NAME) == 0 &&
		    (idx = kb_resnames_intern(d->rn, name)) < 0)
			return slot_refused(d, idx, p->key, sub);
		if (idx >= 0) {
			res.q[idx] = q;
			mask |= 1u << idx;
			continue;
		}
		int k = kb_resnames_intern_known(d->rn, name);
		if (k == -ENOSPC)
			return dec_known_full(d, p->key, sub);
		if (k < 0) /* -EEXIST cannot be: find failed; -ENAMETOOLONG checked */
			return dec_fail(d, -EINVAL, p->key, sub, "cannot register \"%.*s\"",
					DEC_QUOTE_MAX, name);
		extra[nextra++] = (kb_res_extra){.known = k, .milli = q};
	}
	*ret_res = res;
	*ret_mask = mask;
	*ret_extra = nextra ? extra : NULL;
	*ret_nextra = nextra;
	return 0;
}

/* ---- time ---------------------------------------------------------------------- */

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

/* ".frac" after the seconds, at *p: up to nanoseconds, truncated to ms in
 * *ret_ms; *p is moved past it. Nothing to read leaves both alone.
 * Returns 0 or -EINVAL. */
static int parse_fraction(const char **p, int *ret_ms)
{
	const char *s = *p;
	if (*s != '.')
		return 0;
	s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	int ms = 0, nfrac = 0;
	for (; *s >= '0' && *s <= '9'; s++, nfrac++)
		if (nfrac < 3)
			ms = ms * 10 + (*s - '0');
		else if (nfrac >= 9)
			return -EINVAL; /* nanoseconds at most */
	for (int i = nfrac; i < 3; i++) /* scale what was read to milliseconds */
		ms *= 10;
	*p = s;
	*ret_ms = ms;
	return 0;
}

/* "Z", "+HH:MM" or "-HH:MM" ending the string at p, in minutes east of UTC.
 * Returns 0 or -EINVAL. */
static int parse_offset(const char *p, int *ret_min)
{
	int oh, om;
	if (p[0] == 'Z' && p[1] == '\0') {
		*ret_min = 0;
		return 0;
	}
	if ((*p != '+' && *p != '-') || digits(p + 1, 2, &oh) || p[3] != ':' ||
	    digits(p + 4, 2, &om) || oh > 23 || om > 59 || p[6] != '\0')
		return -EINVAL;
	*ret_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
	return 0;
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
	int ms = 0, off_min;
	if (parse_fraction(&p, &ms) < 0 || parse_offset(p, &off_min) < 0)
		return -EINVAL;
	int64_t days = days_from_civil(y, mo, dd);
	int64_t secs = days * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + sec -
		       (int64_t)off_min * 60;
	*ret_ms = secs * 1000 + ms;
	return 0;
}

/* A timestamp field: *ret_set whether it is there (not absent, null or
 * ""), and then its time in *ret_ms. */
int dec_time(dec_ctx *d, const kb_yaml_node *n, const char *path, bool *ret_set,
	     int64_t *ret_ms)
{
	const char *s;
	int r = dec_str(d, n, path, &s);
	if (r < 0)
		return r;
	if (!s || !*s) {
		*ret_set = false;
		return 0;
	}
	if (parse_rfc3339(s, ret_ms) < 0)
		return dec_fail(d, -EINVAL, n, path,
				"bad timestamp \"%.*s\" (want RFC 3339, e.g. 2024-01-02T03:04:05Z)",
				DEC_QUOTE_MAX, s);
	*ret_set = true;
	return 0;
}

/* ---- metadata ------------------------------------------------------------------- */

static bool namespaced(kb_kind k)
{
	return k == KB_KIND_POD || k == KB_KIND_PODGROUP || k == KB_KIND_WORKLOAD ||
	       k == KB_KIND_PVC || k == KB_KIND_STORAGE_CAPACITY;
}

/* metadata.name and metadata.namespace, then the key they make. */
static int dec_name(dec_ctx *d, const kb_yaml_node *md, kb_meta *m)
{
	const kb_yaml_node *nn = kb_yaml_get(md, "name");
	int r = dec_str(d, nn, "metadata.name", &m->name);
	if (r < 0)
		return r;
	if (!m->name || !*m->name)
		return dec_fail(d, -EINVAL, nn ? nn : md, "metadata.name", "required");
	d->key = m->name; /* until the namespace is known */

	const char *ns;
	if ((r = dec_str(d, kb_yaml_get(md, "namespace"), "metadata.namespace", &ns)) < 0)
		return r;
	if (namespaced(d->o->kind))
		m->ns = ns && *ns ? ns : "default";
	else if (d->o->kind == KB_KIND_OTHER)
		m->ns = ns ? ns : "";
	else
		m->ns = "";
	m->key = *m->ns ? kb_arena_printf(d->a, "%s/%s", m->ns, m->name) : m->name;
	if (!m->key)
		return dec_nomem(d);
	d->key = m->key;
	return 0;
}

int dec_meta(dec_ctx *d)
{
	kb_meta *m = &d->o->meta;
	const kb_yaml_node *md;
	m->line = d->root->line;
	m->col = d->root->col;
	int r = dec_map(d, kb_yaml_get(d->root, "metadata"), "metadata", &md);
	if (r < 0)
		return r;
	if (!md)
		return dec_fail(d, -EINVAL, NULL, "metadata", "required");
	if ((r = dec_name(d, md, m)) < 0)
		return r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(md, "uid"), "metadata.uid", &m->uid)) < 0)
		return r;
	if (!m->uid &&
	    !(m->uid = kb_arena_printf(d->a, "%s/%s/%s", d->o->kind_name, m->ns, m->name)))
		return dec_nomem(d);
	if ((r = dec_str(d, kb_yaml_get(md, "resourceVersion"), "metadata.resourceVersion",
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
	if ((r = dec_labels(d, kb_yaml_get(md, "labels"), "metadata.labels", &m->labels)) < 0)
		return r;
	return dec_labels(d, kb_yaml_get(md, "annotations"), "metadata.annotations",
			  &m->annotations);
}

const kb_yaml_node *dec_annotation_node(const dec_ctx *d, const char *key)
{
	return kb_yaml_get(kb_yaml_get(kb_yaml_get(d->root, "metadata"), "annotations"), key);
}

const char *dec_annotation_nonempty(const dec_ctx *d, const char *key)
{
	const char *v = kb_labels_get(&d->o->meta.annotations, key);
	return v && *v ? v : NULL;
}

/* runtimes.c - the history of runtimes (see runtimes.h). */
#include "scheduler/runtimes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"

void kb_runtimes_init(kb_runtimes *rt, uint32_t max_keys, uint32_t per_key)
{
	memset(rt, 0, sizeof(*rt));
	kb_strmap_init(&rt->by_key);
	rt->max_keys = max_keys ? max_keys : KB_RUNTIMES_DEFAULT_KEYS;
	rt->per_key = per_key ? per_key : KB_RUNTIMES_DEFAULT_PER_KEY;
	if (rt->per_key > KB_RUNTIMES_MAX_PER_KEY)
		rt->per_key = KB_RUNTIMES_MAX_PER_KEY;
}

void kb_runtimes_release(kb_runtimes *rt)
{
	for (uint32_t i = 0; i < rt->nkeys; i++)
		free(rt->keys[i].key);
	free(rt->keys);
	kb_strmap_release(&rt->by_key);
	memset(rt, 0, sizeof(*rt));
}

/* The slot of the key recorded least recently. O(keys). */
static uint32_t oldest(const kb_runtimes *rt)
{
	uint32_t o = 0;
	for (uint32_t i = 1; i < rt->nkeys; i++)
		if (rt->keys[i].last_use < rt->keys[o].last_use)
			o = i;
	return o;
}

/* The entry of key, made (forgetting the oldest when full) if absent.
 * NULL on -ENOMEM. */
static kb_runtime_key *entry(kb_runtimes *rt, const char *key)
{
	int64_t idx;
	if (kb_strmap_get(&rt->by_key, key, &idx))
		return &rt->keys[idx];
	char *k = strdup(key);
	if (!k)
		return NULL;
	uint32_t at;
	if (rt->nkeys < rt->max_keys) {
		if (!rt->keys) {
			rt->keys = calloc(rt->max_keys, sizeof(*rt->keys));
			if (!rt->keys) {
				free(k);
				return NULL;
			}
		}
		at = rt->nkeys;
	} else {
		at = oldest(rt);
	}
	if (kb_strmap_put(&rt->by_key, k, at) < 0) {
		free(k);
		return NULL;
	}
	kb_runtime_key *e = &rt->keys[at];
	if (at < rt->nkeys) {
		kb_strmap_del(&rt->by_key, e->key);
		free(e->key);
	} else {
		rt->nkeys++;
	}
	memset(e, 0, sizeof(*e));
	e->key = k;
	return e;
}

static int record_one(kb_runtimes *rt, const char *prefix, const char *name, int64_t ms)
{
	char key[512];
	int w = snprintf(key, sizeof(key), "%s %s", prefix, name);
	if (w < 0 || (size_t)w >= sizeof(key))
		return 0; /* longer than any Kubernetes name: not kept */
	kb_runtime_key *e = entry(rt, key);
	if (!e)
		return -ENOMEM;
	e->ms[e->next] = ms;
	e->next = (e->next + 1) % rt->per_key;
	if (e->n < rt->per_key)
		e->n++;
	e->last_use = ++rt->clock;
	return 0;
}

int kb_runtimes_record(kb_runtimes *rt, const char *job, const char *queue, int64_t ms)
{
	if (ms < 0)
		return 0;
	int r = 0;
	if (job)
		r = record_one(rt, "job", job, ms);
	if (r == 0 && queue)
		r = record_one(rt, "queue", queue, ms);
	return r;
}

static int cmp_ms(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The median of key's runtimes (the lower of the middle two), or -1. */
static int64_t median(const kb_runtimes *rt, const char *prefix, const char *name)
{
	char key[512];
	int w = snprintf(key, sizeof(key), "%s %s", prefix, name);
	int64_t idx;
	if (w < 0 || (size_t)w >= sizeof(key) || !kb_strmap_get(&rt->by_key, key, &idx))
		return -1;
	const kb_runtime_key *e = &rt->keys[idx];
	if (!e->n)
		return -1;
	int64_t v[KB_RUNTIMES_MAX_PER_KEY];
	memcpy(v, e->ms, e->n * sizeof(v[0]));
	qsort(v, e->n, sizeof(v[0]), cmp_ms);
	return v[(e->n - 1) / 2];
}

int64_t kb_runtimes_expect(const kb_runtimes *rt, const char *job, const char *queue,
			   const char **ret_from)
{
	int64_t ms = job ? median(rt, "job", job) : -1;
	const char *from = "job";
	if (ms < 0 && queue) {
		ms = median(rt, "queue", queue);
		from = "queue";
	}
	if (ret_from)
		*ret_from = ms >= 0 ? from : NULL;
	return ms;
}

/* Whether s is a UUID (8-4-4-4-12 hexadecimal digits). */
static bool is_uuid(const char *s)
{
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = s[i];
		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return s[36] == '\0';
}

const char *kb_runtimes_job_name(const kb_object *o, char *buf, size_t n)
{
	static const char *const labels[] = {"training.kubeflow.org/job-name",
					     "batch.kubernetes.io/job-name", "job-name",
					     "volcano.sh/job-name"};
	if (o->kind != KB_KIND_POD)
		return NULL;
	const char *name = NULL;
	size_t len = 0;
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]) && !name; i++)
		name = kb_labels_get(&o->meta.labels, labels[i]);
	if (name && *name) {
		len = strlen(name);
	} else if (o->u.pod.group_name && (o->u.pod.group_via == KB_GROUP_ANNOTATION ||
					   o->u.pod.group_via == KB_GROUP_SCHEDULING_GROUP)) {
		name = o->u.pod.group_name;
		len = strlen(name);
		if (len > 37 && name[len - 37] == '-' && is_uuid(name + len - 36))
			len -= 37;
	} else {
		return NULL;
	}
	int w = snprintf(buf, n, "%s/%.*s", o->meta.ns, (int)len, name);
	return w >= 0 && (size_t)w < n ? buf : NULL;
}

int kb_runtimes_record_finished(kb_runtimes *rt, const kb_object *o, const char *queue)
{
	const kb_pod_obj *p = &o->u.pod;
	if (p->phase != KB_POD_SUCCEEDED || p->start_ms <= 0 || p->finished_ms < p->start_ms)
		return 0;
	char job[320];
	int r = kb_runtimes_record(rt, kb_runtimes_job_name(o, job, sizeof(job)), queue,
				   p->finished_ms - p->start_ms);
	return r < 0 ? r : 1;
}

static int cmp_finished(const void *a, const void *b)
{
	int64_t x = (*(kb_object *const *)a)->u.pod.finished_ms;
	int64_t y = (*(kb_object *const *)b)->u.pod.finished_ms;
	return (x > y) - (x < y);
}

int kb_runtimes_from_finished(kb_runtimes *rt, const kb_cluster *c, kb_object *const *pods,
			      size_t n, uint32_t *ret_recorded)
{
	uint32_t recorded = 0;
	if (ret_recorded)
		*ret_recorded = 0;
	if (!n)
		return 0;
	kb_object **order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	memcpy(order, pods, n * sizeof(*order));
	qsort(order, n, sizeof(*order), cmp_finished);
	int r = 0;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const kb_object *o = order[i];
		if (o->kind != KB_KIND_POD || !kb_cluster_name_is_ours(c, o->u.pod.scheduler_name))
			continue;
		r = kb_runtimes_record_finished(rt, o, kb_cluster_pod_queue(c, o));
		recorded += r > 0;
	}
	free(order);
	if (ret_recorded)
		*ret_recorded = recorded;
	return r < 0 ? r : 0;
}

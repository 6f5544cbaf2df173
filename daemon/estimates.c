/* estimates.c - the daemon's estimated starts (see estimates.h). */
#include "daemon/estimates.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/labels.h"
#include "base/log.h"
#include "base/strmap.h"
#include "base/vec.h"
#include "scheduler/estimate.h"

/* When each PodGroup's annotation was last written by this daemon. */
typedef struct written {
	kb_strmap at;          /* key -> wall ms of the last write; keys in `keys` */
	KB_VEC(char *) keys;   /* owned */
} written;

struct kb_estimates {
	kb_cluster *cluster;
	kb_writers *writers;
	const kb_conf *conf;
	int64_t period_ms;
	kb_runtimes history;
	written last;
	int64_t last_run_ms;
	int64_t last_cost_ms; /* the last run's wall time */
	uint64_t last_generation;
	bool ran;
};

static void written_init(written *w)
{
	memset(w, 0, sizeof(*w));
	kb_strmap_init(&w->at);
}

static void written_release(written *w)
{
	for (size_t i = 0; i < w->keys.n; i++)
		free(w->keys.v[i]);
	KB_VEC_RELEASE(&w->keys);
	kb_strmap_release(&w->at);
}

/* Sets key's time in w (a copy of key kept). 0 or -ENOMEM. */
static int written_put(written *w, const char *key, int64_t ms)
{
	if (kb_strmap_get(&w->at, key, NULL))
		return kb_strmap_put(&w->at, key, ms);
	char *k = strdup(key);
	if (!k || KB_VEC_PUSH(&w->keys, k) < 0) {
		free(k);
		return -ENOMEM;
	}
	return kb_strmap_put(&w->at, k, ms);
}

kb_estimates *kb_estimates_new(kb_cluster *cluster, kb_writers *writers, const kb_conf *conf,
			       int64_t period_ms)
{
	kb_estimates *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cluster = cluster;
	e->writers = writers;
	e->conf = conf;
	e->period_ms = period_ms;
	kb_runtimes_init(&e->history, 0, 0);
	written_init(&e->last);
	return e;
}

kb_estimates *kb_estimates_free(kb_estimates *e)
{
	if (!e)
		return NULL;
	kb_runtimes_release(&e->history);
	written_release(&e->last);
	free(e);
	return NULL;
}

const kb_runtimes *kb_estimates_history(const kb_estimates *e)
{
	return &e->history;
}

/* ---- history --------------------------------------------------------------------- */

/* The queue of pod o (estimates.h). */
static const char *queue_of(const kb_cluster *c, const kb_object *o)
{
	const kb_pod_obj *p = &o->u.pod;
	const kb_slot *pg = p->group_key ? kb_cluster_slot(c, KB_KIND_PODGROUP, p->group_key) : NULL;
	if (pg && pg->obj->u.podgroup.queue)
		return pg->obj->u.podgroup.queue;
	if (p->queue_name)
		return p->queue_name;
	const char *q = c->queue_conf ? kb_queue_conf_ns_queue(c->queue_conf, o->meta.ns) : NULL;
	return q ? q : c->default_queue;
}

void kb_estimates_pod_gone(kb_estimates *e, const char *key, int64_t now_ms)
{
	const kb_slot *sl = kb_cluster_slot(e->cluster, KB_KIND_POD, key);
	if (!sl || sl->evicted_ms > 0)
		return; /* unknown, or evicted by the scheduler: not a run that ended */
	const kb_object *o = sl->obj;
	const kb_pod_obj *p = &o->u.pod;
	bool on_node = sl->overridden ? sl->node != NULL : p->node_name != NULL;
	int64_t start = p->start_ms > 0 ? p->start_ms : sl->started_ms;
	if (!on_node || start <= 0 || start > now_ms ||
	    !kb_cluster_name_is_ours(e->cluster, p->scheduler_name))
		return;
	char job[320];
	const char *jn = kb_runtimes_job_name(o, job, sizeof(job));
	const char *queue = queue_of(e->cluster, o);
	if (kb_runtimes_record(&e->history, jn, queue, now_ms - start) < 0) {
		kb_warn("runtime history: out of memory recording pod \"%s\"; its run is not counted",
			key);
		return;
	}
	kb_vlog(2, "runtime history: pod \"%s\" ran %" PRId64 " ms (job %s, queue %s)", key,
		now_ms - start, jn ? jn : "-", queue);
}

/* ---- the annotation -------------------------------------------------------------- */

/* "2006-01-02T15:04:05Z" of ms into buf (32 bytes); false if it has none. */
static bool to_rfc3339(int64_t ms, char *buf)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	return gmtime_r(&t, &tm) && strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) != 0;
}

/* The time an annotation value says, or -1 ("unknown", or not ours). */
static int64_t from_rfc3339(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	return (int64_t)timegm(&tm) * 1000;
}

/* Whether the value `want` (a time in ms, or -1 for unknown) differs enough
 * from `have` (the object's annotation) to be written. */
static bool moved(const char *have, int64_t want, int64_t now_ms)
{
	int64_t was = from_rfc3339(have);
	if ((was < 0) != (want < 0))
		return true;
	if (want < 0)
		return strcmp(have, "unknown") != 0;
	int64_t tolerance = (was - now_ms) / 10;
	if (tolerance < KB_ESTIMATES_TOLERANCE_MS)
		tolerance = KB_ESTIMATES_TOLERANCE_MS;
	return llabs(want - was) > tolerance;
}

/* Writes the estimate of one pending group when it is due (estimates.h);
 * records the write in *next. */
static void write_one(kb_estimates *e, const kb_sim_result *res, const kb_sim_estimate *est,
		      int64_t now_ms, written *next)
{
	const kb_slot *sl = kb_cluster_slot(e->cluster, KB_KIND_PODGROUP, est->podgroup);
	if (!sl)
		return; /* a Workload's gang: no object of its own */
	int64_t last = -1;
	(void)kb_strmap_get(&e->last.at, est->podgroup, &last);
	const char *have = kb_labels_get(&sl->obj->meta.annotations, KB_ANN_ESTIMATED_START);
	int64_t want = est->known ? res->start_ms + est->time_ms : -1;
	char value[32] = "unknown";
	if (want >= 0 && !to_rfc3339(want, value))
		return;
	bool due = !have || (moved(have, want, now_ms) &&
			     (last < 0 || now_ms - last >= KB_ESTIMATES_REFRESH_MS));
	if (have && strcmp(have, value) == 0)
		due = false;
	int64_t at = last;
	if (due) {
		int r = kb_writers_podgroup_annotation(e->writers, est->podgroup,
						       KB_ANN_ESTIMATED_START, value);
		if (r < 0 && r != -ENOENT)
			kb_warn("PodGroup \"%s\": writing its estimated start: %s", est->podgroup,
				strerror(-r));
		at = now_ms;
		kb_vlog(2, "PodGroup \"%s\": estimated start %s%s%s", est->podgroup, value,
			est->known ? (est->after[0] ? " after " : "") : ": ",
			est->known ? est->after : est->unknown);
	}
	if (at >= 0 && written_put(next, est->podgroup, at) < 0)
		kb_warn("estimates: out of memory; PodGroup \"%s\" may be written again within a "
			"minute", est->podgroup);
}

/* Removes the annotation of every PodGroup that has one and is not pending
 * (res has no estimate for it). O(PodGroups x pending). */
static void remove_stale(kb_estimates *e, const kb_sim_result *res)
{
	const kb_store *s = &e->cluster->podgroups;
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_object *o = s->slots.v[i].obj;
		if (!o || !kb_labels_get(&o->meta.annotations, KB_ANN_ESTIMATED_START) ||
		    kb_estimate_find(res, o->meta.key))
			continue;
		int r = kb_writers_podgroup_annotation(e->writers, o->meta.key,
						       KB_ANN_ESTIMATED_START, NULL);
		if (r < 0)
			kb_warn("PodGroup \"%s\": removing its estimated start: %s", o->meta.key,
				strerror(-r));
		else
			kb_vlog(2, "PodGroup \"%s\": runs or is no more pending; estimated start "
				"removed", o->meta.key);
	}
}

void kb_estimates_after_session(kb_estimates *e, int64_t now_ms)
{
	int64_t since = now_ms - e->last_run_ms;
	bool changed = e->cluster->generation != e->last_generation;
	/* A run that cost C ms waits at least KB_ESTIMATES_SPACING x C before
	 * the next, so that estimates hold the loop a bounded share of the time
	 * however large the cluster. */
	int64_t spaced = e->last_cost_ms * KB_ESTIMATES_SPACING;
	int64_t every = spaced > KB_ESTIMATES_EVERY_MS ? spaced : KB_ESTIMATES_EVERY_MS;
	int64_t idle = spaced > KB_ESTIMATES_IDLE_MS ? spaced : KB_ESTIMATES_IDLE_MS;
	if (e->ran && !(since >= every && changed) && since < idle)
		return;
	e->ran = true;
	e->last_run_ms = now_ms;
	kb_estimate_options opt = {
		.conf = e->conf,
		.now_ms = now_ms,
		.period_ms = e->period_ms,
		.budget_ms = KB_ESTIMATES_BUDGET_MS,
		.history = &e->history,
	};
	kb_sim_result res;
	kb_err err = {0};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = kb_estimate_run(e->cluster, &opt, &res, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	e->last_cost_ms = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (r < 0) {
		kb_warn("estimating starts: %s; the annotations %s stay as they are",
			err.msg[0] ? err.msg : strerror(-r), KB_ANN_ESTIMATED_START);
		kb_sim_result_release(&res);
		return;
	}
	written next;
	written_init(&next);
	for (size_t i = 0; i < res.estimates.n; i++)
		write_one(e, &res, &res.estimates.v[i], now_ms, &next);
	remove_stale(e, &res);
	written_release(&e->last);
	e->last = next;
	/* After the writes: the generation they bumped is not a change to run for. */
	e->last_generation = e->cluster->generation;
	kb_vlog(1, "estimated starts of %zu pending PodGroups: %u sessions, %.1f ms", res.estimates.n,
		res.sessions,
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	kb_sim_result_release(&res);
}

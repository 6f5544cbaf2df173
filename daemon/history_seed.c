/* history_seed.c - the runtime history seeded from finished pods (see
 * history_seed.h). */
#include "daemon/history_seed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "base/log.h"
#include "base/vec.h"
#include "kube/reflector.h"

struct kb_history_seed {
	struct ev_loop *loop;
	kb_estimates *estimates;
	kb_reflector *refl;
	/* The finished pods' resource names: their own table, so that they
	 * take no slot of the store's (only their times and names are read). */
	kb_resnames resnames;
	KB_VEC(kb_object *) pods; /* owned, until recorded */
	uint32_t over_cap, undecodable;
	bool listed, cache_synced, done;
	ev_timer stop; /* frees the reflector off its own callback */
};

static void drop_pods(kb_history_seed *s)
{
	for (size_t i = 0; i < s->pods.n; i++)
		kb_object_free(s->pods.v[i]);
	KB_VEC_RELEASE(&s->pods);
}

/* Both LISTs are in: record, free, stop the reflector. */
static void maybe_record(kb_history_seed *s)
{
	if (s->done || !s->listed || !s->cache_synced)
		return;
	s->done = true;
	uint32_t recorded = 0;
	int r = kb_estimates_seed(s->estimates, s->pods.v, s->pods.n, &recorded);
	if (r < 0)
		kb_warn("runtime history: out of memory recording %zu finished pods; the history "
			"starts with part of them", s->pods.n);
	else
		kb_info("runtime history: %u runs read from the %zu finished (Succeeded) pods the "
			"API holds", recorded, s->pods.n);
	if (s->over_cap || s->undecodable)
		kb_info("runtime history: %u finished pods past the seed's cap of %d and %u that "
			"did not decode were not read", s->over_cap, KB_HISTORY_SEED_MAX,
			s->undecodable);
	drop_pods(s);
	ev_timer_set(&s->stop, 0., 0.);
	ev_timer_start(s->loop, &s->stop);
}

static void on_stop(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_history_seed *s = w->data;
	s->refl = kb_reflector_free(s->refl);
}

static void on_upsert(void *ctx, kb_object *obj)
{
	kb_history_seed *s = ctx;
	/* After the LIST: the watch's events; the cache records those pods. */
	if (s->listed || obj->kind != KB_KIND_POD || obj->u.pod.finished_ms <= 0) {
		kb_object_free(obj);
		return;
	}
	if (s->pods.n >= KB_HISTORY_SEED_MAX) {
		s->over_cap++;
		kb_object_free(obj);
		return;
	}
	if (KB_VEC_PUSH(&s->pods, obj) < 0) {
		s->over_cap++;
		kb_object_free(obj);
	}
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	(void)ctx;
	(void)kind;
	(void)key;
}

static void on_synced(void *ctx, const char *path)
{
	kb_history_seed *s = ctx;
	s->listed = true;
	maybe_record(s);
}

static void on_undecodable(void *ctx, kb_kind kind, const char *key, const kb_err *err)
{
	kb_history_seed *s = ctx;
	s->undecodable++;
	kb_vlog(2, "runtime history: finished pod \"%s\" not read: %s", key,
		err && err->msg[0] ? err->msg : "does not decode");
}

static void on_error(void *ctx, const char *path, const kb_err *err)
{
	const kb_history_seed *s = ctx;
	if (s->done)
		return;
	kb_warn("runtime history: listing the finished pods (\"%s\", %s): %s", path,
		KB_FINISHED_POD_FIELD_SELECTOR, err && err->msg[0] ? err->msg : "error");
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.undecodable = on_undecodable,
	.error = on_error,
};

kb_history_seed *kb_history_seed_start(struct ev_loop *loop, kb_kube_client *watch_client,
				       kb_kube_client *list_client, kb_estimates *estimates,
				       kb_err *err)
{
	kb_history_seed *s = calloc(1, sizeof(*s));
	if (!s) {
		kb_err_set(err, -ENOMEM, "runtime history: out of memory");
		return NULL;
	}
	s->loop = loop;
	s->estimates = estimates;
	ev_init(&s->stop, on_stop);
	s->stop.data = s;
	kb_resnames_init(&s->resnames);
	kb_reflector_options ropt = {
		.field_selector = KB_FINISHED_POD_FIELD_SELECTOR,
		.list_client = list_client,
	};
	s->refl = kb_reflector_new(watch_client, loop, "/api/v1/pods", "v1", "Pod",
				   &s->resnames, &ropt, &handler, s, err);
	if (!s->refl) {
		free(s);
		return NULL;
	}
	return s;
}

void kb_history_seed_cache_synced(kb_history_seed *s)
{
	if (!s)
		return;
	s->cache_synced = true;
	maybe_record(s);
}

kb_history_seed *kb_history_seed_free(kb_history_seed *s)
{
	if (!s)
		return NULL;
	ev_timer_stop(s->loop, &s->stop);
	s->refl = kb_reflector_free(s->refl);
	drop_pods(s);
	free(s);
	return NULL;
}

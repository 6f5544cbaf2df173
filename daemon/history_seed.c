/* history_seed.c - the runtime history seeded from finished pods (see
 * history_seed.h). */
#include "daemon/history_seed.h"

#include <errno.h>
#include <stdlib.h>

#include "base/log.h"
#include "kube/finished_pods.h"
#include "kube/reflector.h"

struct kb_history_seed {
	kb_estimates *estimates;
	kb_finished_pods *list;
	bool listed, cache_synced, done;
};

/* Both LISTs are in: record, then free the pods. */
static void maybe_record(kb_history_seed *s)
{
	if (s->done || !s->listed || !s->cache_synced)
		return;
	s->done = true;
	size_t n;
	kb_object *const *pods = kb_finished_pods_items(s->list, &n);
	uint32_t recorded = 0;
	int r = kb_estimates_seed(s->estimates, pods, n, &recorded);
	if (r < 0)
		kb_warn("runtime history: out of memory recording %zu finished pods; the history "
			"starts with part of them", n);
	else
		kb_info("runtime history: %u runs read from the %zu finished (Succeeded) pods the "
			"API holds", recorded, n);
	uint32_t dropped = kb_finished_pods_dropped(s->list);
	uint32_t undecodable = kb_finished_pods_undecodable(s->list);
	if (dropped || undecodable)
		kb_info("runtime history: %u finished pods past the seed's cap of %d and %u that "
			"did not decode were not read", dropped, KB_HISTORY_SEED_MAX, undecodable);
	kb_finished_pods_drop(s->list);
}

static void on_listed(void *ctx)
{
	kb_history_seed *s = ctx;
	s->listed = true;
	maybe_record(s);
}

static void on_error(void *ctx, const char *path, const kb_err *err)
{
	(void)ctx;
	kb_warn("runtime history: listing the finished pods (\"%s\", %s): %s", path,
		KB_FINISHED_POD_FIELD_SELECTOR, err && err->msg[0] ? err->msg : "error");
}

static const kb_finished_pods_handler handler = {
	.listed = on_listed,
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
	s->estimates = estimates;
	s->list = kb_finished_pods_list(loop, watch_client, list_client, KB_HISTORY_SEED_MAX,
					&handler, s, err);
	if (!s->list) {
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
	s->list = kb_finished_pods_free(s->list);
	free(s);
	return NULL;
}

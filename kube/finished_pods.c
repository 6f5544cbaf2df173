/* finished_pods.c - one LIST of the finished pods (see finished_pods.h). */
#include "kube/finished_pods.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <ev.h>

#include "base/log.h"
#include "base/vec.h"
#include "kube/reflector.h"

struct kb_finished_pods {
	struct ev_loop *loop;
	const kb_finished_pods_handler *h;
	void *ctx;
	kb_reflector *refl;
	kb_resnames resnames; /* theirs: they take no slot of the store's */
	KB_VEC(kb_object *) pods;
	uint32_t cap, dropped, undecodable;
	bool listed;
	ev_timer stop; /* frees the reflector off its own callback */
};

static void on_stop(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_finished_pods *f = w->data;
	f->refl = kb_reflector_free(f->refl);
}

static void on_upsert(void *ctx, kb_object *obj)
{
	kb_finished_pods *f = ctx;
	/* After the LIST: the watch's events, which are not read. */
	if (f->listed || obj->kind != KB_KIND_POD || obj->u.pod.finished_ms <= 0) {
		kb_object_free(obj);
		return;
	}
	if (f->pods.n >= f->cap || KB_VEC_PUSH(&f->pods, obj) < 0) {
		f->dropped++;
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
	kb_finished_pods *f = ctx;
	(void)path;
	f->listed = true;
	ev_timer_set(&f->stop, 0., 0.);
	ev_timer_start(f->loop, &f->stop);
	f->h->listed(f->ctx);
}

static void on_undecodable(void *ctx, kb_kind kind, const char *key, const kb_yaml_node *obj,
			   const kb_err *err)
{
	kb_finished_pods *f = ctx;
	(void)kind;
	if (f->listed)
		return;
	f->undecodable++;
	kb_vlog(2, "runtime history: finished pod \"%s\" not read: %s", key,
		err && err->msg[0] ? err->msg : "does not decode");
}

static void on_error(void *ctx, const char *path, const kb_err *err)
{
	kb_finished_pods *f = ctx;
	if (!f->listed && f->h->error)
		f->h->error(f->ctx, path, err);
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.undecodable = on_undecodable,
	.error = on_error,
};

kb_finished_pods *kb_finished_pods_list(struct ev_loop *loop, kb_kube_client *watch_client,
					kb_kube_client *list_client, uint32_t cap,
					const kb_finished_pods_handler *h, void *ctx,
					kb_err *err)
{
	if (!h || !h->listed) {
		kb_err_set(err, -EINVAL, "finished pods: no listed callback");
		return NULL;
	}
	kb_finished_pods *f = calloc(1, sizeof(*f));
	if (!f) {
		kb_err_set(err, -ENOMEM, "finished pods: out of memory");
		return NULL;
	}
	f->loop = loop;
	f->h = h;
	f->ctx = ctx;
	f->cap = cap;
	ev_init(&f->stop, on_stop);
	f->stop.data = f;
	kb_resnames_init(&f->resnames);
	kb_reflector_options ropt = {
		.field_selector = KB_FINISHED_POD_FIELD_SELECTOR,
		.list_client = list_client,
	};
	f->refl = kb_reflector_new(watch_client, loop, "/api/v1/pods", "v1", "Pod", &f->resnames,
				   &ropt, &handler, f, err);
	if (!f->refl) {
		free(f);
		return NULL;
	}
	return f;
}

kb_object *const *kb_finished_pods_items(const kb_finished_pods *f, size_t *n)
{
	*n = f->pods.n;
	return f->pods.v;
}

uint32_t kb_finished_pods_dropped(const kb_finished_pods *f)
{
	return f->dropped;
}

uint32_t kb_finished_pods_undecodable(const kb_finished_pods *f)
{
	return f->undecodable;
}

void kb_finished_pods_drop(kb_finished_pods *f)
{
	for (size_t i = 0; i < f->pods.n; i++)
		kb_object_free(f->pods.v[i]);
	KB_VEC_RELEASE(&f->pods);
}

kb_finished_pods *kb_finished_pods_free(kb_finished_pods *f)
{
	if (!f)
		return NULL;
	ev_timer_stop(f->loop, &f->stop);
	f->refl = kb_reflector_free(f->refl);
	kb_finished_pods_drop(f);
	free(f);
	return NULL;
}

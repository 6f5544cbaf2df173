/* cluster_read.c - the cluster read once into the store (see cluster_read.h).
 *
 * A private loop runs discovery, then one reflector per resource
 * (kube_source.h's list), and stops when every reflector has listed, on
 * the first failure, or at the deadline. */
#include "kube/cluster_read.h"

#include <errno.h>
#include <ev.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "kube/finished_pods.h"
#include "kube/kube_client.h"
#include "kube/kube_source.h"
#include "kube/reflector.h"
#include "scheduler/runtimes.h"

typedef struct read_state {
	kb_cluster *cluster;
	kb_kube_client *client;
	struct ev_loop *loop;
	kb_cluster_read_info *info;
	const char *kubeconfig;
	kb_reflector *refl[KB_WATCH_MAX];
	uint32_t nrefl;
	uint32_t nlists, nsynced; /* LISTs to wait for (nrefl + the finished pods'), in */
	kb_runtimes *history;        /* opt->history: finished pods are read */
	kb_finished_pods *finished;  /* their LIST, when history is set */
	bool done;
	int code; /* the first failure, 0 for none */
	kb_err err;
	ev_timer deadline;
} read_state;

/* The first failure ends the read. */
static void fail(read_state *st, int code, const kb_err *e)
{
	if (st->done)
		return;
	st->done = true;
	st->code = code < 0 ? code : -EIO;
	st->err = *e;
	ev_break(st->loop, EVBREAK_ALL);
}

/* What an HTTP status means for the read: 401 and 403 said plainly. */
static void fail_status(read_state *st, int status, const char *what, const char *detail)
{
	kb_err e = {0};
	const char *server = st->info->server;
	const char *cred = st->kubeconfig && st->kubeconfig[0] ? st->kubeconfig : "the configuration";
	if (status == 401)
		kb_err_set(&e, -EACCES,
			   "the API server at %s answered 401 Unauthorized to %s: the credentials of "
			   "%s were refused (expired or unknown token or certificate)",
			   server, what, cred);
	else if (status == 403)
		kb_err_set(&e, -EPERM,
			   "the API server at %s answered 403 Forbidden to %s: the user of %s may not "
			   "read it (kube-batchd reads nodes, pods, namespaces, priorityclasses, "
			   "persistentvolumeclaims, persistentvolumes, storageclasses, csinodes, "
			   "volumeattachments, csidrivers, csistoragecapacities, podgroups and "
			   "queues; see deploy/rbac.yaml)%s%s",
			   server, what, cred, detail ? ": " : "", detail ? detail : "");
	else if (status < 0)
		kb_err_set(&e, status, "cannot reach the API server at %s (%s): %s", server, what,
			   detail ? detail : strerror(-status));
	else
		kb_err_set(&e, -EIO, "the API server at %s answered %d to %s%s%s", server, status,
			   what, detail ? ": " : "", detail ? detail : "");
	fail(st, e.code, &e);
}

static void on_upsert(void *ctx, kb_object *obj)
{
	read_state *st = ctx;
	if (kb_cluster_apply(st->cluster, obj, kb_wall_ms()) < 0) {
		kb_err e = {0};
		kb_err_set(&e, -ENOMEM, "out of memory storing the cluster's objects");
		fail(st, -ENOMEM, &e);
	}
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	read_state *st = ctx;
	kb_cluster_delete(st->cluster, kind, key);
}

static void on_synced(void *ctx, const char *path)
{
	read_state *st = ctx;
	if (++st->nsynced == st->nlists && !st->done) {
		st->done = true;
		ev_break(st->loop, EVBREAK_ALL);
	}
}

static void on_undecodable(void *ctx, kb_kind kind, const char *key, const kb_yaml_node *obj,
			   const kb_err *err)
{
	read_state *st = ctx;
	if (kb_cluster_undecodable_object(st->cluster, kind, key, obj, NULL) == -ENOMEM) {
		kb_err e = {0};
		kb_err_set(&e, -ENOMEM, "out of memory storing the cluster's objects");
		fail(st, -ENOMEM, &e);
		return;
	}
	if (st->info->undecodable++ == 0)
		(void)snprintf(st->info->first_undecodable, sizeof(st->info->first_undecodable),
			       "%s \"%.100s\": %.380s", kb_kind_name(kind), key,
			       err && err->msg[0] ? err->msg : "does not decode");
}

/* A LIST that failed (the reflector would retry it for ever): the read
 * fails with what the server said. Messages look like
 * "LIST /api/v1/pods: first page: HTTP 403: {...}". */
static void on_error(void *ctx, const char *path, const kb_err *err)
{
	read_state *st = ctx;
	/* A reflector that has listed goes on to watch: what befalls its
	 * watch does not change what was read. */
	if (err && strncmp(err->msg, "WATCH ", 6) == 0)
		return;
	const char *msg = err && err->msg[0] ? err->msg : "failed";
	/* An object the list skipped (no name to mark it by): left out. */
	if (strstr(msg, ": object skipped: ")) {
		if (st->info->undecodable++ == 0)
			(void)snprintf(st->info->first_undecodable,
				       sizeof(st->info->first_undecodable), "%.500s", msg);
		return;
	}
	const char *http = strstr(msg, "HTTP ");
	int status = http ? atoi(http + 5) : 0;
	char what[160];
	(void)snprintf(what, sizeof(what), "LIST %s", path);
	if (status == 401 || status == 403) {
		fail_status(st, status, what, NULL);
		return;
	}
	kb_err e = {0};
	kb_err_set(&e, err && err->code ? err->code : -EIO, "reading the cluster from %s: %s",
		   st->info->server, msg);
	fail(st, e.code, &e);
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.synced = on_synced,
	.undecodable = on_undecodable,
	.error = on_error,
};

/* The finished pods' LIST is in: one more resource read. */
static void on_finished_listed(void *ctx)
{
	on_synced(ctx, "/api/v1/pods");
}

static const kb_finished_pods_handler finished_handler = {
	.listed = on_finished_listed,
	.error = on_error,
};

static void on_discovered(void *ctx, int status, const kb_served *served)
{
	read_state *st = ctx;
	if (status < 200 || status >= 300 || !served) {
		fail_status(st, status, "GET /apis (discovery)",
			    status == -EINVAL ? "the answer is not an APIGroupList" : NULL);
		return;
	}
	kb_watch_resource res[KB_WATCH_MAX];
	uint32_t n = kb_watch_resources(served, res);
	kb_reflector_options ropt = {0};
	for (uint32_t i = 0; i < n; i++) {
		kb_err e = {0};
		ropt.field_selector = strcmp(res[i].kind, "Pod") == 0 ? KB_POD_FIELD_SELECTOR : NULL;
		kb_reflector *r = kb_reflector_new(st->client, st->loop, res[i].path, res[i].api_version,
						   res[i].kind, &st->cluster->resnames, &ropt, &handler,
						   st, &e);
		if (!r) {
			fail(st, e.code ? e.code : -ENOMEM, &e);
			return;
		}
		st->refl[st->nrefl++] = r;
	}
	st->info->resources = st->nrefl;
	if (st->history) {
		kb_err e = {0};
		st->finished = kb_finished_pods_list(st->loop, st->client, NULL,
						     KB_CLUSTER_READ_FINISHED_MAX, &finished_handler,
						     st, &e);
		if (!st->finished) {
			fail(st, e.code ? e.code : -ENOMEM, &e);
			return;
		}
	}
	st->nlists = st->nrefl + (st->finished ? 1 : 0);
}

static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
	read_state *st = w->data;
	kb_err e = {0};
	if (st->nrefl == 0)
		kb_err_set(&e, -ETIMEDOUT, "cannot reach the API server at %s: no answer to "
			   "discovery (GET /apis) within the time allowed", st->info->server);
	else
		kb_err_set(&e, -ETIMEDOUT, "the API server at %s listed %u of %u resources within "
			   "the time allowed", st->info->server, st->nsynced, st->nlists);
	fail(st, -ETIMEDOUT, &e);
}

int kb_cluster_read(const kb_cluster_read_options *opt, kb_cluster *c, kb_cluster_read_info *ret,
		    kb_err *err)
{
	kb_cluster_read_info scratch;
	kb_cluster_read_info *info = ret ? ret : &scratch;
	memset(info, 0, sizeof(*info));
	kb_kube_config kcfg;
	int r = kb_kube_source_config(opt->kubeconfig, opt->master, &kcfg, err);
	if (r < 0)
		return r;
	(void)snprintf(info->server, sizeof(info->server), "%s", kcfg.server ? kcfg.server : "?");
	read_state st = {.cluster = c, .info = info, .kubeconfig = opt->kubeconfig,
			 .history = opt->history};
	st.loop = ev_loop_new(EVFLAG_AUTO);
	if (!st.loop) {
		r = kb_err_set(err, -ENOMEM, "cannot create an event loop");
		goto out_config;
	}
	kb_kube_client_options copt = {.timeout_ms = 30000};
	st.client = kb_kube_client_new(st.loop, &kcfg, &copt, err);
	if (!st.client) {
		r = err && err->code ? err->code : -EINVAL;
		goto out_loop;
	}
	if ((r = kb_discover(st.client, on_discovered, &st)) < 0) {
		kb_err_set(err, r, "discovery at %s: %s", info->server, strerror(-r));
		goto out_client;
	}
	double timeout = (double)(opt->timeout_ms > 0 ? opt->timeout_ms : 60000) / 1000.0;
	ev_timer_init(&st.deadline, on_deadline, timeout, 0.);
	st.deadline.data = &st;
	ev_timer_start(st.loop, &st.deadline);
	ev_run(st.loop, 0);
	ev_timer_stop(st.loop, &st.deadline);
	if (st.code < 0) {
		r = st.code;
		if (err)
			*err = st.err;
	} else if (st.nrefl == 0 || st.nsynced < st.nlists) {
		r = kb_err_set(err, -EIO, "reading the cluster from %s stopped early", info->server);
	} else {
		info->read_ms = kb_wall_ms();
		r = 0;
		if (st.finished) {
			size_t n;
			kb_object *const *pods = kb_finished_pods_items(st.finished, &n);
			r = kb_runtimes_from_finished(st.history, c, pods, n, NULL);
		}
		if (r < 0)
			kb_err_set(err, r, "out of memory recording the finished pods' runtimes");
	}
	st.finished = kb_finished_pods_free(st.finished);
	for (uint32_t i = 0; i < st.nrefl; i++)
		st.refl[i] = kb_reflector_free(st.refl[i]);
out_client:
	st.client = kb_kube_client_free(st.client);
out_loop:
	ev_loop_destroy(st.loop);
out_config:
	kb_kube_config_release(&kcfg);
	return r;
}

/* fuzz_watch.c - a watch stream from bytes to the store: the line framer
 * (kube/line_framer.h) cuts the input, fed in pieces whose sizes the first
 * bytes choose, into lines, and each line goes through the reflector's own
 * event handling (kb_reflector_test_watch_line: the code a line of a real
 * watch stream runs) into a real store (cache/cluster.h) with the daemon's
 * handling of upsert, remove and undecodable; then a snapshot is built.
 *
 * Input: byte 0 picks the resource among those the daemon watches
 * (kb_watch_resources, every API group served); byte 1 seeds the piece
 * sizes (1..256 bytes) and, in its top bit, a line limit of 4 KiB instead
 * of 1 MiB (to reach -E2BIG); the rest is the stream.
 *
 * Checks: the framer delivers exactly the non-empty lines of the bytes fed
 * (a trailing "\r" dropped), in order, compared with a plain split; an
 * -E2BIG comes only with a partial line over the limit; every object handed
 * to upsert is of the reflector's kind and has a key; every report has a
 * negative code and a message; the snapshot builds.
 *
 * The reflector needs a client and a loop: one of each is made at the
 * first input (a server nobody listens on; the loop never runs, so no
 * request leaves), and one reflector per input. */
#include <errno.h>
#include <ev.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/defaults.h"
#include "cache/cluster.h"
#include "kube/kube_client.h"
#include "kube/kube_source.h"
#include "kube/line_framer.h"
#include "kube/reflector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct watch_ctx {
	kb_cluster cluster;
	kb_kind kind;
	uint64_t upserts, removes, reports;
} watch_ctx;

static void on_upsert(void *ctx, kb_object *obj)
{
	watch_ctx *w = ctx;
	if (!obj || obj->kind != w->kind || !obj->meta.key || !obj->meta.key[0])
		abort();
	w->upserts++;
	if (kb_cluster_apply(&w->cluster, obj, 0) < 0)
		abort(); /* only -ENOMEM */
}

static void on_remove(void *ctx, kb_kind kind, const char *key)
{
	watch_ctx *w = ctx;
	if (kind != w->kind || !key || !key[0])
		abort();
	w->removes++;
	kb_cluster_delete(&w->cluster, kind, key);
}

static void on_undecodable(void *ctx, kb_kind kind, const char *key, const kb_yaml_node *obj,
			   const kb_err *err)
{
	watch_ctx *w = ctx;
	if (kind != w->kind || !key || !key[0] || !obj || !err || err->code >= 0 || !err->msg[0])
		abort();
	int r = kb_cluster_undecodable_object(&w->cluster, kind, key, obj, NULL);
	if (r < 0 && r != -ENOENT)
		abort();
}

static void on_error(void *ctx, const char *path, const kb_err *err)
{
	watch_ctx *w = ctx;
	if (!path || path[0] != '/' || !err || err->code >= 0 || !err->msg[0])
		abort();
	w->reports++;
}

static const kb_reflector_handler handler = {
	.upsert = on_upsert,
	.remove = on_remove,
	.undecodable = on_undecodable,
	.error = on_error,
};

/* One loop and one client for the process (nothing is ever sent). */
static kb_kube_client *shared_client(struct ev_loop **ret_loop)
{
	static struct ev_loop *loop;
	static kb_kube_client *client;
	if (!client) {
		loop = ev_loop_new(EVFLAG_AUTO);
		kb_kube_config cfg = {.server = (char *)"http://127.0.0.1:9"};
		kb_err err = {0};
		client = loop ? kb_kube_client_new(loop, &cfg, NULL, &err) : NULL;
		if (!client)
			abort();
	}
	*ret_loop = loop;
	return client;
}

/* The reference split: the next non-empty line of s[*pos, n) that ends with
 * a newline (its "\r" dropped), or, at the end (final), what is left. */
static bool ref_next(const char *s, size_t n, size_t *pos, bool final, const char **ret,
		     size_t *ret_len)
{
	while (*pos < n) {
		const char *nl = memchr(s + *pos, '\n', n - *pos);
		if (!nl && !final)
			return false;
		size_t end = nl ? (size_t)(nl - s) : n;
		size_t len = end - *pos;
		const char *line = s + *pos;
		*pos = nl ? end + 1 : n;
		if (nl && len > 0 && line[len - 1] == '\r')
			len--;
		if (len > 0) {
			*ret = line;
			*ret_len = len;
			return true;
		}
	}
	return false;
}

/* The reference for -E2BIG: whether a line that data[at, at + n) completes
 * or holds (a "\r" before its newline not counted), or the bytes after its
 * last newline, is longer than max_line; lines start after data's newlines
 * before at as well. */
static bool feed_over_limit(const uint8_t *data, size_t at, size_t n, size_t max_line)
{
	const uint8_t *prev = at ? memrchr(data, '\n', at) : NULL;
	size_t start = prev ? (size_t)(prev - data) + 1 : 0;
	for (size_t i = at; i < at + n; i++) {
		if (data[i] != '\n')
			continue;
		size_t len = i - start;
		if (len > 0 && data[i - 1] == '\r')
			len--;
		if (len > max_line)
			return true;
		start = i + 1;
	}
	return at + n - start > max_line;
}

/* Hands one line to the reflector after checking it against the reference. */
static void deliver(kb_reflector *r, const char *line, size_t len, const uint8_t *s, size_t n,
		    size_t *ref_pos, bool final)
{
	const char *want;
	size_t want_len;
	if (!ref_next((const char *)s, n, ref_pos, final, &want, &want_len) || want_len != len ||
	    memcmp(want, line, len) != 0 || line[len] != '\0')
		abort();
	kb_reflector_test_watch_line(r, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct ev_loop *loop;
	kb_kube_client *client = shared_client(&loop);
	kb_served served = {.incubator = true, .volcano = true, .cosched = true,
			    .cosched_old = true, .k8s_podgroups = "scheduling.k8s.io/v1beta1"};
	kb_watch_resource res[KB_WATCH_MAX];
	uint32_t nres = kb_watch_resources(&served, res);
	const kb_watch_resource *wr = &res[data[0] % nres];
	uint32_t seed = (uint32_t)data[1] * 2654435761u + 7;
	size_t max_line = data[1] & 0x80 ? 4096 : (size_t)1 << 20;
	data += 2;
	size -= 2;

	watch_ctx w;
	memset(&w, 0, sizeof(w));
	kb_cluster_init(&w.cluster, KB_DEFAULT_SCHEDULER_NAME, KB_DEFAULT_QUEUE);
	w.kind = kb_kind_of(wr->api_version, wr->kind);
	kb_err err = {0};
	kb_reflector *r = kb_reflector_new(client, loop, wr->path, wr->api_version, wr->kind,
					   &w.cluster.resnames, NULL, &handler, &w, &err);
	if (!r)
		abort();

	kb_line_framer f;
	kb_line_framer_init(&f, max_line);
	size_t off = 0, ref_pos = 0;
	bool broken = false;
	while (off < size && !broken) {
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 16) % 256;
		if (n > size - off)
			n = size - off;
		int e = kb_line_framer_feed(&f, (const char *)data + off, n);
		off += n;
		if (e == -E2BIG) {
			/* A line this feed completes or holds, or its bytes after
			 * the last newline, over the limit: the stream ends. */
			if (!feed_over_limit(data, off - n, n, max_line))
				abort();
			broken = true;
		} else if (e != 0) {
			abort();
		}
		char *line;
		size_t len;
		while (kb_line_framer_next(&f, &line, &len))
			deliver(r, line, len, data, off, &ref_pos, false);
	}
	if (!broken) {
		char *line;
		size_t len;
		if (kb_line_framer_rest(&f, &line, &len))
			deliver(r, line, len, data, size, &ref_pos, true);
		const char *extra;
		size_t extra_len;
		if (ref_next((const char *)data, size, &ref_pos, true, &extra, &extra_len))
			abort(); /* a line the framer never delivered */
	}
	kb_line_framer_release(&f);
	kb_reflector_free(r);

	kb_snapshot snap;
	kb_snapshot_init(&snap);
	if (kb_cluster_snapshot(&w.cluster, &snap, &err) < 0)
		abort();
	kb_snapshot_release(&snap);
	kb_cluster_release(&w.cluster);
	return 0;
}

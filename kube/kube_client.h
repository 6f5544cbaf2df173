/* kube_client.h - the Kubernetes API client: kubeconfig or in-cluster
 * configuration, and asynchronous HTTP requests over libcurl's multi
 * interface driven by a libev loop (no thread per request).
 *
 * curl is included by kube_client.c only; jansson by writers.c and
 * daemon/leader.c (the reflectors parse with base/json_doc.h). TLS itself
 * is libcurl's: the client never calls OpenSSL for it, and hands curl the
 * CA, certificate and key as PEM (files, or the kubeconfig's *-data decoded
 * in memory). OpenSSL is used directly for one thing: kubeconfig.c decodes
 * the base64 of those *-data fields with EVP_DecodeBlock. Requests are queued behind a
 * limit on requests in flight (max_inflight) and, only when qps > 0, a
 * client-side rate limiter (kube/token_bucket.h: qps, burst); watch streams
 * are cut into lines by kube/line_framer.h; TLS verification is on unless
 * the kubeconfig says insecure-skip-tls-verify; HTTP/2 is used where the
 * server offers it; every request has a connect timeout and a total timeout
 * (watches only a low-speed timeout, so a dead stream is noticed).
 *
 * Ownership: the client copies everything it is given. Callbacks run on the
 * loop, never inside the call that queued the request. Bodies passed to
 * callbacks are valid only during the call.
 */
#ifndef KB_CACHE_KUBE_CLIENT_H
#define KB_CACHE_KUBE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "kube/exec_cred.h"

struct ev_loop;

typedef struct kb_kube_config {
	char *server;      /* "https://127.0.0.1:6443" */
	char *ca_file;     /* PEM file, or NULL */
	char *ca_data;     /* PEM text (decoded certificate-authority-data), or NULL */
	char *cert_file;   /* client certificate, PEM */
	char *cert_data;
	char *key_file;    /* client key, PEM */
	char *key_data;
	char *token;       /* bearer token */
	char *token_file;  /* re-read when it changes (service-account rotation) */
	bool insecure;     /* insecure-skip-tls-verify */
	kb_exec_plugin *exec; /* the user's exec credential plugin (one
			       * reference; shared by the clients made from
			       * this configuration), or NULL */
} kb_kube_config;

/* Loads a kubeconfig: its current-context's cluster and user. master, if
 * non-NULL, overrides the server (--master). Returns 0 or -errno with err
 * naming the file, the cluster or user and the field: -EINVAL (a field is
 * missing or wrong, insecure-skip-tls-verify together with a CA, an exec
 * plugin configured wrongly), -ENOENT and other -errno (a tokenFile that
 * cannot be read, or, with provideClusterInfo, the CA file), -ENODATA (an
 * empty tokenFile), -ENOTSUP (an auth-provider, or an exec plugin that
 * wants a terminal). Reads the tokenFile once to check it; an exec plugin
 * is not run here (kb_kube_client_new runs it). */
int kb_kube_config_load(const char *path, const char *master, kb_kube_config *ret, kb_err *err);

/* The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT, the service
 * account's token file and CA. Returns 0, -ENOENT when not in a cluster,
 * or the error reading the token file (-ENODATA when it is empty). */
int kb_kube_config_in_cluster(kb_kube_config *ret, kb_err *err);

void kb_kube_config_release(kb_kube_config *c);

/* Reads a bearer token file: its content less trailing whitespace. 0 with
 * *ret (malloc'd: wipe and free it), -errno from open or read, -E2BIG (over
 * 64 KiB) or -ENODATA (empty). Cost: one open and read. */
int kb_kube_token_file_read(const char *path, char **ret);

typedef struct kb_kube_client kb_kube_client;

typedef struct kb_kube_client_options {
	/* A client-side rate limit (token bucket: qps a second, burst at once)
	 * when qps > 0. 0 or less, the default: none. The API server's priority
	 * and fairness is then the limit: a 429 is sent again after its
	 * Retry-After, and max_inflight bounds what is asked at once. */
	double qps;
	int burst;       /* with qps > 0; default 400 */
	long timeout_ms; /* whole request (not watches), default 30000 */
	int max_inflight; /* requests (not watches) in flight at once, default 64 */
} kb_kube_client_options;

/* Creates a client on loop. With a tokenFile it reads it now, with an exec
 * plugin it gets the plugin's credential now (running it unless another
 * client of the same configuration has: kube/exec_cred.h), so that either
 * failing is an error at start. Returns NULL on failure with err. */
kb_kube_client *kb_kube_client_new(struct ev_loop *loop, const kb_kube_config *cfg,
				   const kb_kube_client_options *opt, kb_err *err);

/* Cancels every request in flight (their callbacks are NOT called) and frees
 * the client. Accepts NULL; returns NULL. */
kb_kube_client *kb_kube_client_free(kb_kube_client *c);

/* A finished request: status is the HTTP status (200, 201, 404, 409, 410...)
 * or a negative errno for a transport failure (then body is an error text). */
typedef void (*kb_kube_done_fn)(void *ctx, int status, const char *body, size_t len);

/* Queues a request. method: "GET", "POST", "PUT", "PATCH", "DELETE"; path
 * starts with "/" and may carry a query; body may be NULL; content_type
 * defaults to "application/json" (use "application/merge-patch+json" or
 * "application/strategic-merge-patch+json" for PATCH). Returns 0 or -ENOMEM
 * (-EINVAL for a path without its leading "/", a NULL done, or a client
 * being freed).
 * A request the server turns away for now (429, or a 5xx with Retry-After)
 * is sent again after the delay it asks for, up to 10 times, before done
 * sees the status.
 * Cost: O(1); the rate limiter and the limit on requests in flight may
 * delay the start. */
int kb_kube_request(kb_kube_client *c, const char *method, const char *path, const char *body,
		    const char *content_type, kb_kube_done_fn done, void *ctx);

/* kb_kube_request for writes nobody waits on (Events): started only when no
 * other request is queued, so a burst of them never delays a binding. */
int kb_kube_request_background(kb_kube_client *c, const char *method, const char *path,
			       const char *body, const char *content_type, kb_kube_done_fn done,
			       void *ctx);

typedef struct kb_kube_stream kb_kube_stream;

/* One line of a streamed response (a watch event), without its newline.
 * Lines are delivered as they arrive; a line longer than 64 MiB ends the
 * stream with -E2BIG. */
typedef void (*kb_kube_line_fn)(void *ctx, const char *line, size_t len);

/* Starts a streaming GET (a watch). on_line is called per line; done once
 * when the stream ends (status as above). *ret_stream lets the caller cancel
 * it. Returns 0 or -ENOMEM. */
int kb_kube_stream_start(kb_kube_client *c, const char *path, kb_kube_line_fn on_line,
			 kb_kube_done_fn done, void *ctx, kb_kube_stream **ret_stream);

/* Stops a stream; its done callback is not called. Safe inside callbacks
 * (also the stream's own on_line). The handle is invalid once done has
 * returned: do not cancel a stream that has finished. */
void kb_kube_stream_cancel(kb_kube_client *c, kb_kube_stream *s);

/* Cancels every request and stream queued or in flight whose ctx is ctx;
 * their callbacks are not called. For owners of requests (a reflector) that
 * go away before their requests finish. Safe inside callbacks. Cost: O(requests).
 * (Added to the original contract: kb_kube_request gives no handle.) */
void kb_kube_cancel(kb_kube_client *c, void *ctx);

/* Cancels the requests of ctx that have never been sent (still queued
 * behind the rate limiter or the limit on requests in flight): their
 * callbacks are not called, and the server never saw them. A request sent
 * once (in flight, or waiting out a Retry-After) is left alone: its answer
 * will come. Returns whether one was cancelled. For a shutdown that
 * abandons what it has not started (kube/writers.h). Cost: O(queued). */
bool kb_kube_cancel_queued(kb_kube_client *c, void *ctx);

/* Starts at once, without waiting for the loop, the queued foreground
 * requests that may start now (a token free, fewer than max_inflight in
 * flight) and has curl send them, so that their bytes leave while the
 * caller goes on with long work: the writers call it after each binding
 * and eviction, so that the first gangs of a long session (a new leader's
 * first, a big burst's) reach the API server before the session ends.
 * Runs no callback and reads no answer (those wait for the loop, as
 * always), so the caller's state cannot change under it. Does nothing
 * inside a delivery of callbacks or with an exec plugin's credentials
 * (getting one may run the plugin); a request that cannot start at once
 * stays queued for the loop. Cost: O(requests started) and, when one
 * started, one pass of curl over its expired timers; O(1) otherwise. */
void kb_kube_client_send_now(kb_kube_client *c);

/* Requests started since the client was created (for the benchmark's
 * "API requests per pod bound"). */
uint64_t kb_kube_client_requests(const kb_kube_client *c);

/* Requests the server turned away (429, or 5xx with Retry-After) and the
 * client sent again after the delay it asked for. */
uint64_t kb_kube_client_retries(const kb_kube_client *c);

/* Requests not answered yet, watches aside: queued (background ones too),
 * waiting out a Retry-After, or in flight. O(queued); for /metrics. */
uint64_t kb_kube_client_backlog(const kb_kube_client *c);

#endif

/* endpoint.h - the daemon's HTTP endpoint: health and metrics.
 *
 * A tiny HTTP/1.1 server on the loop, one request per connection
 * ("Connection: close"):
 *   GET|HEAD /livez                      200 "ok": the process is alive (its
 *                                        loop answers), whatever the cache
 *                                        and the lease; for liveness probes,
 *                                        so a long first LIST never gets the
 *                                        pod killed;
 *   GET|HEAD /readyz                     200 when readyz() says so, else 503,
 *                                        the body its text either way ("ok:
 *                                        cache synced, leading", "cache not
 *                                        synced", "... not leading" ...);
 *   GET|HEAD /healthz                    as before /readyz existed: 200 "ok"
 *                                        when ready() says so, else 503
 *                                        "cache not synced";
 *   GET|HEAD /metrics                    200 with metrics()'s text (Prometheus
 *                                        text 0.0.4), 503 when it fails;
 *   another path 404, another method 405, a request that is not HTTP or is
 *   longer than 8 KiB 400. A query string is ignored.
 * A connection that has not sent its request within 5 s is closed; a client
 * too slow to take the answer (a few hundred bytes, or the metrics) loses
 * what the socket did not take.
 *
 * Ownership: the endpoint borrows the loop and the handler (both outlive
 * it). Cost: one accept and one read per request; the handler's calls are
 * made inside the read callback.
 */
#ifndef KB_DAEMON_ENDPOINT_H
#define KB_DAEMON_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct ev_loop;

typedef struct kb_endpoint kb_endpoint;

typedef struct kb_endpoint_handler {
	/* Whether /healthz answers 200 (the cache is synced). */
	bool (*ready)(void *ctx);
	/* Whether /readyz answers 200; writes the body (what it checked and
	 * found, one line) into buf of size n. */
	bool (*readyz)(void *ctx, char *buf, size_t n);
	/* The /metrics text in *ret (malloc'd; the endpoint frees it): 0, or a
	 * negative errno for a 503. */
	int (*metrics)(void *ctx, char **ret);
} kb_endpoint_handler;

/* Listens on addr ("host:port", "[v6]:port" or ":port" for every address)
 * and serves on loop; the endpoint in *ret. Returns 0, or -errno with err
 * naming --listen-address: -EINVAL (not HOST:PORT, an unknown host),
 * -ENOMEM, or the errno of socket/bind/listen (-EADDRINUSE ...). */
int kb_endpoint_start(struct ev_loop *loop, const char *addr, const kb_endpoint_handler *h,
		      void *ctx, kb_endpoint **ret, kb_err *err);

/* Closes the listening socket and every open connection and frees the
 * endpoint. Accepts NULL; returns NULL. */
kb_endpoint *kb_endpoint_stop(kb_endpoint *e);

#endif

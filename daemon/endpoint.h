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

/* For tests and fuzzing (tests/fuzz/fuzz_endpoint.c): the request parser
 * on its own. What the endpoint does with the bytes a connection has sent
 * so far: buf holds len bytes followed by a NUL (the connection's buffer
 * holds KB_ENDPOINT_REQUEST_MAX bytes, NUL included, so len is at most
 * KB_ENDPOINT_REQUEST_MAX - 1). Until a blank line ends the head (bytes
 * after a NUL are not looked at) the answer is INCOMPLETE, or TOO_LARGE
 * once the buffer is full; then the first line's method and path (its
 * query dropped) decide. Pure; O(len). */
#define KB_ENDPOINT_REQUEST_MAX 8192
typedef enum kb_endpoint_route {
	KB_ROUTE_INCOMPLETE, /* wait for more bytes */
	KB_ROUTE_TOO_LARGE,  /* 400 "request too large" */
	KB_ROUTE_BAD,        /* 400: no method and path */
	KB_ROUTE_METHOD,     /* 405: neither GET nor HEAD */
	KB_ROUTE_NOT_FOUND,  /* 404 */
	KB_ROUTE_LIVEZ,
	KB_ROUTE_HEALTHZ,
	KB_ROUTE_READYZ,
	KB_ROUTE_METRICS,
} kb_endpoint_route;
kb_endpoint_route kb_endpoint_route_request(const char *buf, size_t len);

/* Closes the listening socket and every open connection and frees the
 * endpoint. Accepts NULL; returns NULL. */
kb_endpoint *kb_endpoint_stop(kb_endpoint *e);

#endif

/* endpoint.c - /healthz, /readyz, /livez and /metrics (see endpoint.h). */
#include "daemon/endpoint.h"

#include <errno.h>
#include <ev.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"

#define HTTP_REQ_MAX KB_ENDPOINT_REQUEST_MAX
#define HTTP_TIMEOUT_S 5.0
#define LISTEN_BACKLOG 64

typedef struct http_conn {
	ev_io io;
	ev_timer timer;
	kb_endpoint *e;
	struct http_conn *prev, *next;
	size_t len;
	bool head; /* a HEAD request: the answer has headers only (RFC 9110 9.3.2) */
	char buf[HTTP_REQ_MAX];
} http_conn;

struct kb_endpoint {
	struct ev_loop *loop;
	const kb_endpoint_handler *h;
	void *ctx;
	ev_io listen_io;
	int listen_fd;
	http_conn *conns;
};

static void conn_close(http_conn *c)
{
	kb_endpoint *e = c->e;
	ev_io_stop(e->loop, &c->io);
	ev_timer_stop(e->loop, &c->timer);
	close(c->io.fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		e->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* a client too slow for a few hundred bytes loses them */
		s += k;
		n -= (size_t)k;
	}
}

static const char *reason_phrase(int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 503:
		return "Service Unavailable";
	default:
		return "Bad Request";
	}
}

static void respond(http_conn *c, int code, const char *type, const char *body)
{
	char head[256];
	size_t n = strlen(body);
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  code, reason_phrase(code), type, n);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return; /* cannot happen with the endpoint's own short types; no answer */
	write_all(c->io.fd, head, (size_t)hl);
	if (!c->head)
		write_all(c->io.fd, body, n);
}

kb_endpoint_route kb_endpoint_route_request(const char *buf, size_t len)
{
	if (!strstr(buf, "\r\n\r\n") && !strstr(buf, "\n\n"))
		return len >= HTTP_REQ_MAX - 1 ? KB_ROUTE_TOO_LARGE : KB_ROUTE_INCOMPLETE;
	char method[8] = "", path[256] = "";
	if (sscanf(buf, "%7s %255s", method, path) != 2)
		return KB_ROUTE_BAD;
	char *q = strchr(path, '?');
	if (q)
		*q = '\0';
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return KB_ROUTE_METHOD;
	if (strcmp(path, "/livez") == 0)
		return KB_ROUTE_LIVEZ;
	if (strcmp(path, "/healthz") == 0)
		return KB_ROUTE_HEALTHZ;
	if (strcmp(path, "/readyz") == 0)
		return KB_ROUTE_READYZ;
	if (strcmp(path, "/metrics") == 0)
		return KB_ROUTE_METRICS;
	return KB_ROUTE_NOT_FOUND;
}

static void handle_request(http_conn *c, kb_endpoint_route route)
{
	const kb_endpoint *e = c->e;
	switch (route) {
	case KB_ROUTE_INCOMPLETE:
	case KB_ROUTE_TOO_LARGE:
		respond(c, 400, "text/plain", "request too large\n");
		break;
	case KB_ROUTE_BAD:
		respond(c, 400, "text/plain", "bad request\n");
		break;
	case KB_ROUTE_METHOD:
		respond(c, 405, "text/plain", "method not allowed\n");
		break;
	case KB_ROUTE_LIVEZ:
		respond(c, 200, "text/plain; charset=utf-8", "ok"); /* the loop answered */
		break;
	case KB_ROUTE_HEALTHZ:
		if (e->h->ready(e->ctx))
			respond(c, 200, "text/plain; charset=utf-8", "ok");
		else
			respond(c, 503, "text/plain; charset=utf-8", "cache not synced");
		break;
	case KB_ROUTE_READYZ: {
		char why[256] = "";
		bool ok = e->h->readyz(e->ctx, why, sizeof(why));
		respond(c, ok ? 200 : 503, "text/plain; charset=utf-8", why);
		break;
	}
	case KB_ROUTE_METRICS: {
		char *m = NULL;
		int r = e->h->metrics(e->ctx, &m);
		respond(c, r == 0 ? 200 : 503, "text/plain; version=0.0.4; charset=utf-8",
			r == 0 ? m : "out of memory\n");
		free(m);
		break;
	}
	case KB_ROUTE_NOT_FOUND:
	default:
		respond(c, 404, "text/plain", "not found\n");
		break;
	}
}

static void on_conn_read(struct ev_loop *loop, ev_io *w, int revents)
{
	http_conn *c = w->data;
	ssize_t k = read(w->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		conn_close(c);
		return;
	}
	c->len += (size_t)k;
	c->buf[c->len] = '\0';
	kb_endpoint_route route = kb_endpoint_route_request(c->buf, c->len);
	if (route == KB_ROUTE_INCOMPLETE)
		return;
	c->head = strncmp(c->buf, "HEAD ", 5) == 0;
	handle_request(c, route);
	conn_close(c);
}

static void on_conn_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	conn_close(w->data);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	kb_endpoint *e = w->data;
	int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	http_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->e = e;
	ev_io_init(&c->io, on_conn_read, fd, EV_READ);
	c->io.data = c;
	ev_timer_init(&c->timer, on_conn_timeout, HTTP_TIMEOUT_S, 0.);
	c->timer.data = c;
	c->next = e->conns;
	if (e->conns)
		e->conns->prev = c;
	e->conns = c;
	ev_io_start(loop, &c->io);
	ev_timer_start(loop, &c->timer);
}

/* The first of res that binds and listens: its socket, or -errno. */
static int listen_first(const struct addrinfo *res)
{
	int e = EADDRNOTAVAIL;
	for (const struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		int one = 1;
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
		    bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, LISTEN_BACKLOG) == 0)
			return fd;
		e = errno;
		close(fd);
	}
	return -e;
}

/* "host:port", "[v6]:port" or ":port": a listening socket, or -errno with err. */
static int open_listener(const char *addr, kb_err *err)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1])
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": expected HOST:PORT",
				  addr);
	size_t hl = (size_t)(colon - addr);
	if (hl >= sizeof(host))
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": host too long", addr);
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (g != 0)
		return kb_err_set(err, -EINVAL, "--listen-address \"%s\": %s", addr,
				  gai_strerror(g));
	int fd = listen_first(res);
	freeaddrinfo(res);
	if (fd < 0)
		return kb_err_set(err, fd, "--listen-address \"%s\": %s", addr, strerror(-fd));
	return fd;
}

int kb_endpoint_start(struct ev_loop *loop, const char *addr, const kb_endpoint_handler *h,
		      void *ctx, kb_endpoint **ret, kb_err *err)
{
	*ret = NULL;
	int fd = open_listener(addr, err);
	if (fd < 0)
		return fd;
	kb_endpoint *e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return kb_err_set(err, -ENOMEM, "out of memory");
	}
	e->loop = loop;
	e->h = h;
	e->ctx = ctx;
	e->listen_fd = fd;
	ev_io_init(&e->listen_io, on_accept, fd, EV_READ);
	e->listen_io.data = e;
	ev_io_start(loop, &e->listen_io);
	kb_info("serving /livez, /readyz, /healthz and /metrics on %s", addr);
	*ret = e;
	return 0;
}

kb_endpoint *kb_endpoint_stop(kb_endpoint *e)
{
	if (!e)
		return NULL;
	while (e->conns)
		conn_close(e->conns);
	ev_io_stop(e->loop, &e->listen_io);
	close(e->listen_fd);
	free(e);
	return NULL;
}

/*
 * kube_client.c - asynchronous HTTP to the API server (see kube_client.h).
 *
 * Structure (curl's docs/examples/evhiperfifo.c): one curl multi handle per
 * client, driven by libev. curl tells us which sockets to watch
 * (CURLMOPT_SOCKETFUNCTION -> one ev_io per socket) and when to call it
 * back (CURLMOPT_TIMERFUNCTION -> one ev_timer, milliseconds / 1000.0);
 * libev events go back to curl through curl_multi_socket_action().
 *
 * A request's life: kb_kube_request/kb_kube_stream_start put it on the
 * `pending` queue (background requests on `pending_bg`, watches at the front
 * of `pending`) and arm the rate timer (delay 0 when a token is free), so
 * nothing ever starts, and no callback ever runs, inside the queueing call.
 * The rate timer takes tokens from the bucket and adds easy handles to the
 * multi handle (the request is then `active`), `pending` first, while fewer
 * than max_inflight requests (watches aside) are in flight; a finished one
 * arms it again. kb_kube_client_send_now does what the rate timer does for
 * the foreground queue, and has curl send at once, without a delivery
 * (the writers call it during a session). A request the server turned
 * away with 429 (or a 5xx with Retry-After), as API Priority and Fairness
 * does when the scheduler's priority level is full, waits on `waiting` for
 * the Retry-After delay (1 s when absent, at most 10; plus up to half as
 * much again at random) and goes back to the front of its queue, up to
 * MAX_RETRIES times; only then does its caller see the status. After every
 * curl_multi_socket_action() the client:
 *   1. delivers the complete lines streams have buffered (on_line), and
 *   2. reaps finished transfers (done).
 * User callbacks therefore never run inside a curl callback, so they may
 * queue requests, cancel streams, even free the client: cancelled requests
 * and a freed client are only marked while callbacks are being delivered
 * (`depth` > 0) and their memory is reclaimed when the delivery unwinds.
 *
 * Credentials: a bearer token, the tokenFile's (re-read when it changes:
 * current_token), a client certificate, or an exec plugin's token or
 * certificate (kube/exec_cred.h: got when a request starts, from the
 * plugin's cache or by running it). A request sent with a plugin's
 * credential that the server answers 401 drops that credential and is
 * sent once more with a new one (client-go drops it too, but hands the 401
 * to its caller; for us the caller would only ask again).
 *
 * Limits (the server controls these): a response body 256 MiB (-E2BIG), a
 * streamed line 64 MiB (-E2BIG), a token file 64 KiB.
 */
#include "kube/kube_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <ev.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/log.h"
#include "kube/line_framer.h"
#include "kube/token_bucket.h"

#define BODY_MAX ((size_t)256 << 20)
#define LINE_MAX_LEN ((size_t)64 << 20)
#define CONNECT_TIMEOUT_MS 10000L
/* Watches: on a quiet resource kube-apiserver 1.33 sends its first bookmark
 * about 120 s into a watch, then one a minute (measured), so a stream that
 * carried less than a byte a second for three minutes is dead. */
#define STREAM_LOW_SPEED_BYTES 1L
#define STREAM_LOW_SPEED_SECONDS 180L
#define USER_AGENT "kube-batchd/0.1"

/* No client-side rate limit unless one is asked for (kube_client.h). */
#define DEFAULT_BURST 400
#define DEFAULT_TIMEOUT_MS 30000L
#define DEFAULT_MAX_INFLIGHT 64
/* client-go retries a request the server throttled up to 10 times. */
#define MAX_RETRIES 10
#define RETRY_AFTER_MAX_S 10L
/* HTTP/2 carries every request; a second or third connection only while one
 * is being replaced (or the server's stream limit is lower than ours). */
#define MAX_HOST_CONNECTIONS 4L

/* ---- requests ------------------------------------------------------------- */

typedef struct kb_req kb_req;
typedef struct kb_list kb_list;
struct kb_req {
	kb_kube_client *c;
	kb_req *prev, *next; /* on *list */
	kb_list *list;       /* c->pending, pending_bg, active or waiting */
	bool is_active, cancelled, finished;
	bool stream;
	bool background; /* on pending_bg while queued */
	int retries;     /* times the server turned it away and it was sent again */
	ev_timer retry_timer; /* while on waiting */
	bool auth_retried; /* sent again after a 401 to the plugin's credential */
	uint64_t cred_gen; /* the exec plugin's credential it was sent with */
	bool e2big;  /* a limit ended the transfer */
	bool enomem; /* so did a failed allocation */
	char *method, *url, *body, *content_type;
	kb_kube_done_fn done;
	kb_kube_line_fn on_line;
	void *ctx;
	CURL *easy;
	struct curl_slist *headers;
	long http_status; /* streams: known once data arrives */
	kb_buf resp;      /* the body (a stream's, when it is not 2xx) */
	kb_line_framer lines; /* a 2xx stream's bytes not delivered yet */
	char errbuf[CURL_ERROR_SIZE];
};

struct kb_list {
	kb_req *head, *tail;
};

/* Every list a request can be on, for walks over all of them. */
#define NLISTS 4
#define CLIENT_LISTS(c) {&(c)->active, &(c)->pending, &(c)->pending_bg, &(c)->waiting}

static void list_push(kb_list *l, kb_req *r)
{
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	r->list = l;
}

static void list_push_front(kb_list *l, kb_req *r)
{
	r->prev = NULL;
	r->next = l->head;
	if (l->head)
		l->head->prev = r;
	else
		l->tail = r;
	l->head = r;
	r->list = l;
}

static void list_unlink(kb_list *l, kb_req *r)
{
	r->list = NULL;
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->prev = r->next = NULL;
}

typedef struct kb_sock kb_sock;
struct kb_sock {
	ev_io io;
	kb_kube_client *c;
	curl_socket_t fd;
	kb_sock *prev, *next; /* on c->socks */
};

struct kb_kube_client {
	struct ev_loop *loop;
	CURLM *multi;
	ev_timer curl_timer;
	ev_timer rate_timer;
	kb_kube_client_options opt;
	kb_token_bucket bucket;
	/* the configuration, copied */
	char *server;
	char *ca_file, *cert_file, *key_file;
	char *ca_data, *cert_data, *key_data;
	bool insecure;
	char *token;      /* from the configuration */
	char *token_file;
	char *file_token; /* last value read from token_file, or NULL */
	bool token_warned; /* the last re-read failed and was logged */
	kb_exec_plugin *exec; /* a reference, or NULL */
	const kb_exec_credential *cred; /* exec's, for the request being set up */
	struct timespec token_mtime;
	ino_t token_ino;
	off_t token_size;
	kb_list pending, pending_bg, active, waiting;
	int inflight; /* active requests that are not streams */
	kb_sock *socks; /* every socket curl asked us to watch */
	uint64_t started, retried;
	uint64_t jitter; /* PRNG state for retry delays */
	int depth;     /* > 0 while user callbacks are being delivered */
	/* A request off the active list was cancelled during a delivery: the
	 * sweep must walk every list, not only `active` (where finished
	 * requests are). Keeps the sweep O(requests in flight) under a backlog. */
	bool sweep_all;
	bool freeing;  /* kb_kube_client_free was called during a delivery */
};

static kb_req *req_free(kb_req *r)
{
	if (!r)
		return NULL;
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->method);
	free(r->url);
	free(r->body);
	free(r->content_type);
	kb_buf_release(&r->resp);
	kb_line_framer_release(&r->lines);
	free(r);
	return NULL;
}

/* Takes an active request off the multi handle. Safe outside curl's
 * callbacks only. */
static void req_detach(kb_kube_client *c, kb_req *r)
{
	if (r->easy) {
		curl_multi_remove_handle(c->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
}

static void kick(kb_kube_client *c);

/* Cancels r: no callback of it runs any more. Its memory goes now, or
 * when the current delivery unwinds. */
static void req_cancel(kb_kube_client *c, kb_req *r)
{
	if (r->cancelled)
		return;
	r->cancelled = true;
	if (r->is_active) {
		req_detach(c, r);
		if (!r->stream && !r->finished) {
			c->inflight--;
			if (!c->freeing)
				kick(c); /* a queued request may start in its place */
		}
	}
	if (r->list == &c->waiting)
		ev_timer_stop(c->loop, &r->retry_timer);
	if (c->depth > 0) {
		if (r->list != &c->active)
			c->sweep_all = true;
		return; /* swept by end_delivery() */
	}
	if (r->list)
		list_unlink(r->list, r);
	req_free(r);
}

/* ---- authentication -------------------------------------------------------- */

/* The bearer token for the next request: the token file's content when it
 * can be read (re-read whenever its mtime, size or inode changes), else the
 * last one read, else the configured token, else NULL. A failure to re-read
 * is logged once, when it starts; reading again ends it. Cost: one stat()
 * per request. */
static const char *current_token(kb_kube_client *c)
{
	if (!c->token_file)
		return c->token;
	const char *last = c->file_token ? c->file_token : c->token;
	struct stat st;
	int r = stat(c->token_file, &st) < 0 ? -errno : 0;
	if (r == 0 && c->file_token && st.st_mtim.tv_sec == c->token_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == c->token_mtime.tv_nsec && st.st_ino == c->token_ino &&
	    st.st_size == c->token_size)
		return c->file_token;
	char *tok = NULL;
	if (r == 0)
		r = kb_kube_token_file_read(c->token_file, &tok);
	if (r < 0) {
		if (!c->token_warned)
			kb_warn("tokenFile %s cannot be read again (%s): the last token read is "
				"kept until it can",
				c->token_file, r == -ENODATA ? "it is empty" : strerror(-r));
		c->token_warned = true;
		return last;
	}
	c->token_warned = false;
	if (c->file_token) {
		explicit_bzero(c->file_token, strlen(c->file_token));
		free(c->file_token);
	}
	c->file_token = tok;
	c->token_mtime = st.st_mtim;
	c->token_ino = st.st_ino;
	c->token_size = st.st_size;
	return tok;
}

/* ---- curl callbacks --------------------------------------------------------- */

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	kb_req *r = userdata;
	size_t n = size * nmemb;
	if (r->stream && r->http_status == 0) {
		long code = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		r->http_status = code ? code : 200;
	}
	bool lines = r->stream && r->http_status / 100 == 2;
	int e = lines ? kb_line_framer_feed(&r->lines, ptr, n) :
			kb_buf_append(&r->resp, ptr, n, BODY_MAX);
	if (e == -E2BIG)
		r->e2big = true;
	else if (e == -ENOMEM)
		r->enomem = true;
	return e ? 0 : n; /* 0 makes curl end the transfer with CURLE_WRITE_ERROR */
}

static void sock_event_cb(struct ev_loop *loop, ev_io *w, int revents);
static void after_action(kb_kube_client *c);

static void sock_free(kb_kube_client *c, kb_sock *s)
{
	ev_io_stop(c->loop, &s->io);
	if (s->prev)
		s->prev->next = s->next;
	else
		c->socks = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s);
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	kb_kube_client *c = userp;
	kb_sock *s = socketp;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			curl_multi_assign(c->multi, fd, NULL);
			sock_free(c, s);
		}
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1; /* curl fails the transfers on this socket */
		s->c = c;
		s->fd = fd;
		ev_init(&s->io, sock_event_cb);
		s->io.data = s;
		s->next = c->socks;
		if (c->socks)
			c->socks->prev = s;
		c->socks = s;
		curl_multi_assign(c->multi, fd, s);
	}
	int events = (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
	ev_io_stop(c->loop, &s->io);
	ev_io_set(&s->io, fd, events);
	ev_io_start(c->loop, &s->io);
	return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	kb_kube_client *c = userp;
	ev_timer_stop(c->loop, &c->curl_timer);
	if (timeout_ms >= 0) {
		ev_timer_set(&c->curl_timer, (double)timeout_ms / 1000.0, 0.);
		ev_timer_start(c->loop, &c->curl_timer);
	}
	return 0;
}

/* ---- libev callbacks --------------------------------------------------------- */

static void sock_event_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	kb_sock *s = w->data;
	kb_kube_client *c = s->c;
	int action = (revents & EV_READ ? CURL_CSELECT_IN : 0) |
		     (revents & EV_WRITE ? CURL_CSELECT_OUT : 0);
	int running;
	/* s may be freed inside (CURL_POLL_REMOVE); c stays. */
	curl_multi_socket_action(c->multi, s->fd, action, &running);
	after_action(c);
}

static void curl_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_kube_client *c = w->data;
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	after_action(c);
}

/* ---- delivery ----------------------------------------------------------------- */

static void really_free(kb_kube_client *c);

static void begin_delivery(kb_kube_client *c)
{
	c->depth++;
}

/* Frees what was cancelled or finished during the delivery, and the client
 * if it was freed meanwhile. Returns false when the client is gone. */
static bool end_delivery(kb_kube_client *c)
{
	if (--c->depth > 0)
		return !c->freeing;
	kb_list *lists[NLISTS] = CLIENT_LISTS(c);
	size_t nlists = c->sweep_all ? NLISTS : 1; /* lists[0] is `active` */
	c->sweep_all = false;
	for (size_t i = 0; i < nlists; i++) {
		for (kb_req *r = lists[i]->head, *next; r; r = next) {
			next = r->next;
			if (r->cancelled || r->finished) {
				list_unlink(lists[i], r);
				req_free(r);
			}
		}
	}
	if (c->freeing) {
		really_free(c);
		return false;
	}
	return true;
}

static int curl_errno(CURLcode code)
{
	switch (code) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
		return -EPROTO;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	default:
		return -EIO;
	}
}

/* Delivers the complete lines every live stream has buffered. */
static void deliver_lines(kb_kube_client *c)
{
	for (kb_req *r = c->active.head; r && !c->freeing; r = r->next) {
		if (!r->stream || r->cancelled || r->finished || r->http_status / 100 != 2)
			continue;
		char *line;
		size_t len;
		while (!r->cancelled && !c->freeing && kb_line_framer_next(&r->lines, &line, &len))
			r->on_line(r->ctx, line, len);
	}
}

/* Seconds the server asks us to wait (Retry-After: delta-seconds), or -1
 * when it does not say. */
static long retry_after(CURL *e)
{
	struct curl_header *h = NULL;
	if (!e || curl_easy_header(e, "Retry-After", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h)
		return -1;
	char *end;
	long v = strtol(h->value, &end, 10);
	return end != h->value && v >= 0 ? v : -1;
}

static void retry_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_req *r = w->data;
	kb_kube_client *c = r->c;
	list_unlink(&c->waiting, r);
	list_push_front(r->background ? &c->pending_bg : &c->pending, r);
	kick(c);
}

/* When the server turned r away for now (429, or 5xx with Retry-After),
 * puts r on `waiting` to be sent again after the delay and returns true. */
static bool retry_later(kb_kube_client *c, kb_req *r, long http)
{
	long after = retry_after(r->easy);
	if (http != 429 && !(http >= 500 && after >= 0))
		return false;
	if (after < 1)
		after = 1;
	if (after > RETRY_AFTER_MAX_S)
		after = RETRY_AFTER_MAX_S;
	/* Up to half as long again, so that requests turned away together do
	 * not all come back in the same instant (xorshift64; any seed will do). */
	c->jitter ^= c->jitter << 13;
	c->jitter ^= c->jitter >> 7;
	c->jitter ^= c->jitter << 17;
	double delay = (double)after * (1.0 + (double)(c->jitter >> 11) / (double)(1ull << 53) / 2);
	req_detach(c, r);
	curl_slist_free_all(r->headers); /* setup_easy makes them again */
	r->headers = NULL;
	r->resp.len = 0;
	r->retries++;
	r->is_active = false;
	c->retried++;
	list_unlink(&c->active, r);
	list_push(&c->waiting, r);
	ev_timer_init(&r->retry_timer, retry_timer_cb, delay, 0.);
	r->retry_timer.data = r;
	ev_timer_start(c->loop, &r->retry_timer);
	kick(c);
	return true;
}

/* r was answered 401 with the exec plugin's credential: that credential is
 * dropped (unless a newer one replaced it already) and r goes back to the
 * front of its queue, to be sent once more with the plugin's next one. */
static void retry_with_new_credential(kb_kube_client *c, kb_req *r)
{
	kb_exec_plugin_invalidate(c->exec, r->cred_gen);
	req_detach(c, r);
	curl_slist_free_all(r->headers); /* setup_easy makes them again */
	r->headers = NULL;
	r->resp.len = 0;
	r->http_status = 0;
	r->auth_retried = true;
	r->is_active = false;
	list_unlink(&c->active, r);
	list_push_front(r->background ? &c->pending_bg : &c->pending, r);
	kick(c);
}

/* Reports one finished transfer. */
static void finish(kb_kube_client *c, kb_req *r, CURLcode code)
{
	int status;
	const char *body = NULL;
	size_t len = 0;
	char msg[CURL_ERROR_SIZE + 160];

	long http = 0;
	if (r->easy)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &http);
	if (!r->stream)
		c->inflight--;
	if (!r->stream && code == CURLE_OK && !r->e2big && !r->enomem && r->retries < MAX_RETRIES &&
	    retry_later(c, r, http))
		return;
	if (code == CURLE_OK && http == 401 && c->exec && !r->auth_retried) {
		retry_with_new_credential(c, r);
		return;
	}
	req_detach(c, r);
	r->finished = true;
	kick(c); /* a place in flight is free */

	if (r->e2big || r->enomem || code != CURLE_OK) {
		/* An error text for done: a long URL cuts it, which is fine. */
		if (r->e2big) {
			status = -E2BIG;
			(void)snprintf(msg, sizeof(msg), "%s %s: %s", r->method, r->url,
				       r->stream && http / 100 == 2 ?
					       "a streamed line is longer than 64 MiB" :
					       "the response is larger than 256 MiB");
		} else if (r->enomem) {
			status = -ENOMEM;
			(void)snprintf(msg, sizeof(msg), "%s %s: out of memory", r->method, r->url);
		} else {
			status = curl_errno(code);
			(void)snprintf(msg, sizeof(msg), "%s %s: %s", r->method, r->url,
				       r->errbuf[0] ? r->errbuf : curl_easy_strerror(code));
		}
		body = msg;
		len = strlen(msg);
	} else {
		status = (int)http;
		body = "";
		if (r->stream && http / 100 == 2) {
			/* A last line the server did not end with a newline. */
			char *line;
			size_t n;
			if (kb_line_framer_rest(&r->lines, &line, &n)) {
				r->on_line(r->ctx, line, n);
				if (r->cancelled || c->freeing)
					return;
			}
		} else {
			body = r->resp.data ? r->resp.data : "";
			len = r->resp.len;
		}
	}
	if (!r->cancelled)
		r->done(r->ctx, status, body, len);
}

static void reap(kb_kube_client *c)
{
	CURLMsg *m;
	int left;
	while (!c->freeing && (m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		kb_req *r = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		CURLcode code = m->data.result;
		if (r && !r->cancelled && !r->finished)
			finish(c, r, code);
	}
}

static void after_action(kb_kube_client *c)
{
	begin_delivery(c);
	deliver_lines(c);
	if (!c->freeing)
		reap(c);
	end_delivery(c);
}

/* ---- starting requests ------------------------------------------------------- */

/* The request's headers: Accept, Content-Type when it has a body, and the
 * bearer token when there is one. 0 with *ret (the caller frees it), or
 * -ENOMEM. */
static int make_headers(kb_kube_client *c, const kb_req *r, struct curl_slist **ret)
{
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json"), *t;
	if (!h)
		return -ENOMEM;
	char *line = NULL;
	if (r->body) {
		if (asprintf(&line, "Content-Type: %s",
			     r->content_type ? r->content_type : "application/json") < 0)
			goto nomem;
		t = curl_slist_append(h, line);
		free(line);
		if (!t)
			goto nomem;
		h = t;
	}
	const char *tok = c->cred ? c->cred->token : current_token(c);
	if (tok) {
		if (asprintf(&line, "Authorization: Bearer %s", tok) < 0)
			goto nomem;
		t = curl_slist_append(h, line);
		explicit_bzero(line, strlen(line));
		free(line);
		if (!t)
			goto nomem;
		h = t;
	}
	*ret = h;
	return 0;
nomem:
	curl_slist_free_all(h);
	return -ENOMEM;
}

/* TLS: verification (unless insecure), the CA and the client certificate
 * and key, from memory (PEM) or files. */
static void set_tls(const kb_kube_client *c, CURL *e)
{
	if (c->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_data) {
		struct curl_blob b = {c->ca_data, strlen(c->ca_data), CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	} else if (c->ca_file) {
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	}
	if (c->cred && c->cred->cert_pem) {
		/* Copied: a refresh may free them while the connection lives. */
		struct curl_blob cb = {c->cred->cert_pem, strlen(c->cred->cert_pem), CURL_BLOB_COPY};
		struct curl_blob kb = {c->cred->key_pem, strlen(c->cred->key_pem), CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
		return;
	}
	if (c->cert_data) {
		struct curl_blob b = {c->cert_data, strlen(c->cert_data), CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (c->cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	}
	if (c->key_data) {
		struct curl_blob b = {c->key_data, strlen(c->key_data), CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (c->key_file) {
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	}
}

/* Everything but TLS: URL, callbacks, HTTP/2, timeouts (a watch has a
 * low-speed limit instead of a total timeout), method and body. */
static void set_transfer(const kb_kube_client *c, kb_req *r, CURL *e)
{
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	if (r->stream) {
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, STREAM_LOW_SPEED_BYTES);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, STREAM_LOW_SPEED_SECONDS);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	} else {
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->opt.timeout_ms);
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");
	}
	if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(r->body));
	}
}

/* r's easy handle, ready to add to the multi handle. 0, -ENOMEM, or the
 * exec plugin's error (kb_exec_plugin_get) with err. */
static int setup_easy(kb_kube_client *c, kb_req *r, kb_err *err)
{
	c->cred = NULL;
	if (c->exec) {
		int rc = kb_exec_plugin_get(c->exec, &c->cred, err);
		if (rc < 0)
			return rc;
		r->cred_gen = c->cred->generation;
	}
	CURL *e = curl_easy_init();
	int rc = e ? make_headers(c, r, &r->headers) : -ENOMEM;
	if (e && rc == 0) {
		set_transfer(c, r, e);
		set_tls(c, e);
	}
	r->easy = e;
	c->cred = NULL; /* valid only until the plugin's next run */
	if (rc == -ENOMEM)
		kb_err_set(err, rc, "%s: cannot start the request: out of memory", r->method);
	return rc;
}

/* Starts r now. On failure reports it through done (we are on the loop). */
static void start_req(kb_kube_client *c, kb_req *r)
{
	list_unlink(r->list, r);
	list_push(&c->active, r);
	r->is_active = true;
	c->started++;
	if (!r->stream)
		c->inflight++;
	kb_err err = {0};
	int e = setup_easy(c, r, &err);
	if (e == 0 && curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
		e = kb_err_set(&err, -ENOMEM, "%s: cannot start the request: out of memory",
			       r->method);
	if (e == 0)
		return;
	if (r->easy) {
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
	if (!r->stream)
		c->inflight--;
	r->finished = true;
	r->done(r->ctx, e, err.msg, strlen(err.msg));
}

/* The loop's time in milliseconds, for the token bucket. */
static int64_t loop_ms(struct ev_loop *loop)
{
	return (int64_t)(ev_now(loop) * 1000.0);
}

static void rate_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	kb_kube_client *c = w->data;
	begin_delivery(c);
	while (!c->freeing) {
		kb_req *r = c->pending.head ? c->pending.head : c->pending_bg.head;
		if (!r)
			break;
		if (r->cancelled) { /* only during a delivery; move on */
			list_unlink(r->list, r);
			list_push(&c->active, r);
			r->is_active = true;
			continue;
		}
		if (!r->stream && c->inflight >= c->opt.max_inflight)
			break; /* finish() kicks again */
		int64_t wait_ms = c->opt.qps > 0 ? kb_token_bucket_take(&c->bucket, loop_ms(loop)) : 0;
		if (wait_ms > 0) {
			ev_timer_set(&c->rate_timer, (double)wait_ms / 1000.0, 0.);
			ev_timer_start(loop, &c->rate_timer);
			break;
		}
		start_req(c, r);
	}
	end_delivery(c);
}

/* r's easy handle made and handed to curl, without a callback: false
 * (r left queued as it was) when it cannot be. */
static bool start_req_quiet(kb_kube_client *c, kb_req *r)
{
	kb_err err = {0};
	if (setup_easy(c, r, &err) != 0 || curl_multi_add_handle(c->multi, r->easy) != CURLM_OK) {
		if (r->easy)
			curl_easy_cleanup(r->easy);
		r->easy = NULL;
		curl_slist_free_all(r->headers);
		r->headers = NULL;
		return false;
	}
	list_unlink(r->list, r);
	list_push(&c->active, r);
	r->is_active = true;
	c->started++;
	c->inflight++;
	return true;
}

void kb_kube_client_send_now(kb_kube_client *c)
{
	if (!c || c->freeing || c->depth > 0 || c->exec)
		return;
	int started = 0;
	for (kb_req *r; (r = c->pending.head) && !r->cancelled && !r->stream;) {
		if (c->inflight >= c->opt.max_inflight)
			break;
		if (c->opt.qps > 0 && kb_token_bucket_take(&c->bucket, loop_ms(c->loop)) > 0)
			break;
		if (!start_req_quiet(c, r))
			break; /* the loop's start_req reports it */
		started++;
	}
	if (started) {
		int running;
		curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		/* What that pass finished is reaped by the loop's next turn. */
		ev_timer_stop(c->loop, &c->curl_timer);
		ev_timer_set(&c->curl_timer, 0., 0.);
		ev_timer_start(c->loop, &c->curl_timer);
	}
}

static void kick(kb_kube_client *c)
{
	if (!ev_is_active(&c->rate_timer)) {
		ev_timer_set(&c->rate_timer, 0., 0.);
		ev_timer_start(c->loop, &c->rate_timer);
	}
}

static int enqueue(kb_kube_client *c, const char *method, const char *path, const char *body,
		   const char *content_type, bool stream, bool background, kb_kube_line_fn on_line,
		   kb_kube_done_fn done, void *ctx, kb_req **ret)
{
	if (!c || c->freeing || !path || path[0] != '/' || !done || (stream && !on_line))
		return -EINVAL;
	kb_req *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->stream = stream;
	r->background = background;
	r->done = done;
	r->on_line = on_line;
	r->ctx = ctx;
	kb_line_framer_init(&r->lines, LINE_MAX_LEN);
	if (!(r->method = strdup(method)) || asprintf(&r->url, "%s%s", c->server, path) < 0) {
		r->url = NULL;
		goto nomem;
	}
	if (body && !(r->body = strdup(body)))
		goto nomem;
	if (content_type && !(r->content_type = strdup(content_type)))
		goto nomem;
	if (stream)
		list_push_front(&c->pending, r); /* watches are few and hold nothing up */
	else
		list_push(background ? &c->pending_bg : &c->pending, r);
	kick(c);
	if (ret)
		*ret = r;
	return 0;
nomem:
	req_free(r);
	return -ENOMEM;
}

/* ---- public ----------------------------------------------------------------- */

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

/* The credentials a client starts with: the tokenFile read, the exec
 * plugin's credential got (so that a failure of either is an error at
 * start, not at the first request). 0 or -errno with err. */
static int start_credentials(kb_kube_client *c, const kb_kube_config *cfg, kb_err *err)
{
	if (c->token_file) {
		int r = kb_kube_token_file_read(c->token_file, &c->file_token);
		if (r < 0)
			return kb_err_set(err, r, "API client: tokenFile %s: %s", c->token_file,
					  r == -ENODATA ? "the file is empty" : strerror(-r));
		struct stat st;
		if (stat(c->token_file, &st) == 0) {
			c->token_mtime = st.st_mtim;
			c->token_ino = st.st_ino;
			c->token_size = st.st_size;
		}
	}
	if (cfg->exec) {
		c->exec = kb_exec_plugin_ref(cfg->exec);
		const kb_exec_credential *cred;
		return kb_exec_plugin_get(c->exec, &cred, err);
	}
	return 0;
}

kb_kube_client *kb_kube_client_new(struct ev_loop *loop, const kb_kube_config *cfg,
				   const kb_kube_client_options *opt, kb_err *err)
{
	if (!loop || !cfg || !cfg->server) {
		kb_err_set(err, -EINVAL, "API client: no server configured");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		kb_err_set(err, -ENOMEM, "API client: curl_global_init failed");
		return NULL;
	}
	kb_kube_client *c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem_global;
	c->loop = loop;
	c->opt.qps = opt && opt->qps > 0 ? opt->qps : 0;
	c->opt.burst = opt && opt->burst > 0 ? opt->burst : DEFAULT_BURST;
	c->opt.timeout_ms = opt && opt->timeout_ms > 0 ? opt->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->opt.max_inflight = opt && opt->max_inflight > 0 ? opt->max_inflight : DEFAULT_MAX_INFLIGHT;
	c->jitter = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)c;
	if (c->opt.qps > 0)
		kb_token_bucket_init(&c->bucket, c->opt.qps, c->opt.burst, loop_ms(loop));
	c->insecure = cfg->insecure;
	if (dup_opt(cfg->server, &c->server) < 0 || dup_opt(cfg->ca_file, &c->ca_file) < 0 ||
	    dup_opt(cfg->ca_data, &c->ca_data) < 0 || dup_opt(cfg->cert_file, &c->cert_file) < 0 ||
	    dup_opt(cfg->cert_data, &c->cert_data) < 0 ||
	    dup_opt(cfg->key_file, &c->key_file) < 0 || dup_opt(cfg->key_data, &c->key_data) < 0 ||
	    dup_opt(cfg->token, &c->token) < 0 || dup_opt(cfg->token_file, &c->token_file) < 0)
		goto nomem;
	size_t n = strlen(c->server);
	while (n > 0 && c->server[n - 1] == '/')
		c->server[--n] = '\0';
	if (start_credentials(c, cfg, err) < 0) {
		really_free(c);
		return NULL;
	}

	if (!(c->multi = curl_multi_init()))
		goto nomem;
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, MAX_HOST_CONNECTIONS);
	ev_init(&c->curl_timer, curl_timer_cb);
	c->curl_timer.data = c;
	ev_init(&c->rate_timer, rate_timer_cb);
	c->rate_timer.data = c;
	return c;

nomem:
	really_free(c);
	kb_err_set(err, -ENOMEM, "API client: out of memory");
	return NULL;
nomem_global:
	curl_global_cleanup();
	kb_err_set(err, -ENOMEM, "API client: out of memory");
	return NULL;
}

static void really_free(kb_kube_client *c)
{
	kb_list *lists[NLISTS] = CLIENT_LISTS(c);
	for (size_t i = 0; i < NLISTS; i++) {
		while (lists[i]->head) {
			kb_req *r = lists[i]->head;
			list_unlink(lists[i], r);
			if (r->is_active)
				req_detach(c, r);
			if (lists[i] == &c->waiting)
				ev_timer_stop(c->loop, &r->retry_timer);
			req_free(r);
		}
	}
	ev_timer_stop(c->loop, &c->curl_timer);
	ev_timer_stop(c->loop, &c->rate_timer);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	while (c->socks) /* those curl did not say CURL_POLL_REMOVE for */
		sock_free(c, c->socks);
	char *secrets[] = {c->token, c->file_token, c->key_data};
	for (size_t i = 0; i < 3; i++)
		if (secrets[i])
			explicit_bzero(secrets[i], strlen(secrets[i]));
	free(c->server);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->ca_data);
	free(c->cert_data);
	free(c->key_data);
	free(c->token);
	free(c->token_file);
	free(c->file_token);
	kb_exec_plugin_unref(c->exec);
	free(c);
	curl_global_cleanup();
}

kb_kube_client *kb_kube_client_free(kb_kube_client *c)
{
	if (!c)
		return NULL;
	if (c->depth > 0) {
		/* Inside a callback: cancel everything now, free on the way out. */
		if (!c->freeing) {
			c->freeing = true;
			kb_list *lists[NLISTS] = CLIENT_LISTS(c);
			for (size_t i = 0; i < NLISTS; i++)
				for (kb_req *r = lists[i]->head; r; r = r->next)
					req_cancel(c, r);
			ev_timer_stop(c->loop, &c->rate_timer);
		}
		return NULL;
	}
	really_free(c);
	return NULL;
}

int kb_kube_request(kb_kube_client *c, const char *method, const char *path, const char *body,
		    const char *content_type, kb_kube_done_fn done, void *ctx)
{
	return enqueue(c, method, path, body, content_type, false, false, NULL, done, ctx, NULL);
}

int kb_kube_request_background(kb_kube_client *c, const char *method, const char *path,
			       const char *body, const char *content_type, kb_kube_done_fn done,
			       void *ctx)
{
	return enqueue(c, method, path, body, content_type, false, true, NULL, done, ctx, NULL);
}

int kb_kube_stream_start(kb_kube_client *c, const char *path, kb_kube_line_fn on_line,
			 kb_kube_done_fn done, void *ctx, kb_kube_stream **ret_stream)
{
	kb_req *r;
	int e = enqueue(c, "GET", path, NULL, NULL, true, false, on_line, done, ctx, &r);
	if (e == 0 && ret_stream)
		*ret_stream = (kb_kube_stream *)r;
	return e;
}

void kb_kube_stream_cancel(kb_kube_client *c, kb_kube_stream *s)
{
	if (c && s)
		req_cancel(c, (kb_req *)s);
}

void kb_kube_cancel(kb_kube_client *c, void *ctx)
{
	if (!c)
		return;
	kb_list *lists[NLISTS] = CLIENT_LISTS(c);
	for (size_t i = 0; i < NLISTS; i++)
		for (kb_req *r = lists[i]->head, *next; r; r = next) {
			next = r->next;
			if (r->ctx == ctx && !r->finished)
				req_cancel(c, r);
		}
}

bool kb_kube_cancel_queued(kb_kube_client *c, void *ctx)
{
	if (!c)
		return false;
	kb_list *lists[] = {&c->pending, &c->pending_bg};
	bool any = false;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		for (kb_req *r = lists[i]->head, *next; r; r = next) {
			next = r->next;
			if (r->ctx == ctx && !r->finished && !r->cancelled && !r->stream) {
				req_cancel(c, r);
				any = true;
			}
		}
	return any;
}

uint64_t kb_kube_client_requests(const kb_kube_client *c)
{
	return c ? c->started : 0;
}

uint64_t kb_kube_client_retries(const kb_kube_client *c)
{
	return c ? c->retried : 0;
}

uint64_t kb_kube_client_backlog(const kb_kube_client *c)
{
	if (!c)
		return 0;
	uint64_t n = c->inflight > 0 ? (uint64_t)c->inflight : 0;
	const kb_list *lists[] = {&c->pending, &c->pending_bg, &c->waiting};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		for (const kb_req *r = lists[i]->head; r; r = r->next)
			n += !r->stream && !r->cancelled;
	return n;
}

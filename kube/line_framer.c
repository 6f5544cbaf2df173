/* line_framer.c - lines out of a byte stream (see line_framer.h). */
#include "kube/line_framer.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_CAP 4096

void kb_line_framer_init(kb_line_framer *f, size_t max_line)
{
	memset(f, 0, sizeof(*f));
	f->max_line = max_line;
}

/* Room for n more bytes and a NUL: drops what was delivered, then grows
 * by doubling. 0 or -ENOMEM. */
static int make_room(kb_line_framer *f, size_t n)
{
	if (f->len + n + 1 <= f->cap)
		return 0;
	if (f->start > 0) {
		memmove(f->data, f->data + f->start, f->len - f->start);
		f->len -= f->start;
		f->scan -= f->start;
		f->line_start -= f->start;
		f->start = 0;
	}
	size_t cap = f->cap ? f->cap : INITIAL_CAP;
	while (cap < f->len + n + 1) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == f->cap)
		return 0;
	char *d = realloc(f->data, cap);
	if (!d)
		return -ENOMEM;
	f->data = d;
	f->cap = cap;
	return 0;
}

int kb_line_framer_feed(kb_line_framer *f, const char *p, size_t n)
{
	if (n == 0)
		return 0;
	/* Fail before copying when a line p completes or holds, or the bytes
	 * after its last newline, are longer than a line may be; so no line
	 * longer than max_line is ever delivered, and the buffer never holds
	 * much more than a line. */
	const char *nl = NULL;
	size_t run = f->len - f->line_start; /* the partial line p continues */
	for (const char *q = p, *end = p + n; q < end;) {
		const char *e = memchr(q, '\n', (size_t)(end - q));
		size_t len = run + (size_t)((e ? e : end) - q);
		/* A complete line may carry the "\r" of a "\r\n" beyond it (the
		 * byte before the newline: in p, or the last one buffered). */
		bool cr = e && (e > q ? e[-1] == '\r' : run > 0 && f->data[f->len - 1] == '\r');
		if (len > f->max_line + (cr ? 1 : 0))
			return -E2BIG;
		if (!e)
			break;
		nl = e;
		run = 0;
		q = e + 1;
	}
	int r = make_room(f, n);
	if (r < 0)
		return r;
	memcpy(f->data + f->len, p, n);
	if (nl)
		f->line_start = f->len + (size_t)(nl - p) + 1;
	f->len += n;
	f->data[f->len] = '\0';
	return 0;
}

bool kb_line_framer_next(kb_line_framer *f, char **ret_line, size_t *ret_len)
{
	for (;;) {
		if (f->scan < f->start)
			f->scan = f->start;
		char *nl = NULL;
		if (f->scan < f->len)
			nl = memchr(f->data + f->scan, '\n', f->len - f->scan);
		if (!nl) {
			f->scan = f->len;
			return false;
		}
		char *line = f->data + f->start;
		size_t n = (size_t)(nl - line);
		f->start = f->scan = (size_t)(nl - f->data) + 1;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0)
			continue; /* an empty line */
		line[n] = '\0';
		*ret_line = line;
		*ret_len = n;
		return true;
	}
}

bool kb_line_framer_rest(kb_line_framer *f, char **ret_line, size_t *ret_len)
{
	if (f->len == f->start)
		return false;
	*ret_line = f->data + f->start; /* data[len] is the NUL */
	*ret_len = f->len - f->start;
	f->start = f->scan = f->line_start = f->len;
	return true;
}

size_t kb_line_framer_pending(const kb_line_framer *f)
{
	return f->len - f->start;
}

void kb_line_framer_reset(kb_line_framer *f)
{
	f->len = f->start = f->scan = f->line_start = 0;
	if (f->data)
		f->data[0] = '\0';
}

void kb_line_framer_release(kb_line_framer *f)
{
	free(f->data);
	kb_line_framer_init(f, f->max_line);
}

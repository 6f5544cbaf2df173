/* buf.c - growable bounded byte buffer (see buf.h). */
#include "base/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"

#define INITIAL_CAP 4096

int kb_buf_append(kb_buf *b, const char *p, size_t n, size_t limit)
{
	if (n > limit || b->len > limit - n)
		return -E2BIG;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : INITIAL_CAP;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void kb_buf_release(kb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int kb_buf_read_fd(int fd, const char *name, size_t limit, kb_buf *ret, kb_err *err)
{
	char chunk[64 * 1024];
	int r = 0;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			r = kb_err_set(err, -e, "%s: %s", name, strerror(e));
			break;
		}
		if (n == 0) {
			/* An empty file still reads as "" (NUL-terminated). */
			if (!ret->data && kb_buf_append(ret, "", 0, limit) < 0)
				r = kb_err_set(err, -ENOMEM, "%s: out of memory", name);
			break;
		}
		r = kb_buf_append(ret, chunk, (size_t)n, limit);
		if (r == -E2BIG)
			r = kb_err_set(err, r, "%s: larger than %zu MiB", name, limit >> 20);
		else if (r < 0)
			r = kb_err_set(err, r, "%s: out of memory", name);
		if (r < 0)
			break;
	}
	if (r < 0)
		kb_buf_release(ret);
	return r;
}

int kb_buf_read_file(const char *path, size_t limit, kb_buf *ret, kb_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return kb_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	int r = kb_buf_read_fd(fd, path, limit, ret, err);
	close(fd);
	return r;
}

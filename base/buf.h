/* buf.h - a growable, bounded, NUL-terminated byte buffer (response bodies,
 * a child process's output).
 *
 *   kb_buf b = {0};
 *   int r = kb_buf_append(&b, p, n, limit);   // 0, -ENOMEM or -E2BIG
 *   ... b.data[0 .. b.len), b.data[b.len] == '\0' once anything was added ...
 *   kb_buf_release(&b);
 *
 * The buffer owns b.data. Growth doubles the capacity (from 4 KiB), so an
 * append is amortised O(n); the limit bounds what it may ever hold, so a
 * peer cannot make it grow without end. No global state. kb_buf_read_file
 * does I/O (one open and reads of 64 KiB).
 */
#ifndef KB_BASE_BUF_H
#define KB_BASE_BUF_H

#include <stddef.h>

typedef struct kb_buf {
	char *data;
	size_t len, cap;
} kb_buf;

/* Appends n bytes, keeping the buffer NUL-terminated. Returns 0, -ENOMEM,
 * or -E2BIG when it would then hold more than limit bytes (nothing is
 * appended). */
int kb_buf_append(kb_buf *b, const char *p, size_t n, size_t limit);

/* Reads fd to its end into *ret (empty on entry; on success NUL-terminated,
 * on failure released). name is for messages. Returns 0, or -errno with err
 * "name: reason" (-E2BIG: "name: larger than N MiB" past limit bytes). */
struct kb_err;
int kb_buf_read_fd(int fd, const char *name, size_t limit, kb_buf *ret, struct kb_err *err);

/* The same for the file at path (opened and closed here). */
int kb_buf_read_file(const char *path, size_t limit, kb_buf *ret, struct kb_err *err);

/* Frees the data and empties the buffer. Accepts an empty one. */
void kb_buf_release(kb_buf *b);

#endif

/* line_framer.h - splits a byte stream into lines (a watch's events).
 *
 * Bytes are fed as they arrive, in pieces of any size; complete lines come
 * out in order, each without its "\n" (or "\r\n") and NUL-terminated in
 * place. Empty lines (keep-alives) are skipped. A line may be at most
 * max_line bytes: a feed that completes or holds a longer line, or leaves a
 * longer partial one, fails with -E2BIG before taking any of its bytes (the
 * stream is broken, or hostile; the caller ends it).
 *
 * Ownership: the framer owns its buffer (kb_line_framer_release frees it);
 * a line returned by kb_line_framer_next is valid until the next feed,
 * reset or release. Pure: no I/O, no clock, no global state.
 * Cost: every byte is copied once, scanned twice for newlines and moved
 * at most once more when the buffer is compacted (amortized O(1) a byte);
 * the buffer holds the bytes not yet delivered, at most max_line plus one
 * feed when lines are taken after every feed.
 */
#ifndef KB_KUBE_LINE_FRAMER_H
#define KB_KUBE_LINE_FRAMER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kb_line_framer {
	char *data;
	size_t len, cap;
	size_t start;      /* first byte not yet delivered */
	size_t scan;       /* bytes in [start, scan) hold no newline */
	size_t line_start; /* the byte after the last newline fed */
	size_t max_line;
} kb_line_framer;

/* An empty framer for lines of at most max_line bytes. Allocates nothing. */
void kb_line_framer_init(kb_line_framer *f, size_t max_line);

/* Appends n bytes. Returns 0, -ENOMEM, or -E2BIG when a line they complete
 * or hold, or the bytes after their last newline, would be more than
 * max_line (then none of the n bytes is taken). */
int kb_line_framer_feed(kb_line_framer *f, const char *p, size_t n);

/* The next complete, non-empty line in *ret_line and its length in
 * *ret_len (a "\r" before the newline dropped), or false when only a
 * partial line is left. */
bool kb_line_framer_next(kb_line_framer *f, char **ret_line, size_t *ret_len);

/* Once next() has returned false: the partial line left (a last line the
 * stream did not end with a newline), NUL-terminated, taken out of the
 * framer; false when nothing is left. */
bool kb_line_framer_rest(kb_line_framer *f, char **ret_line, size_t *ret_len);

/* Bytes fed and not delivered yet. */
size_t kb_line_framer_pending(const kb_line_framer *f);

/* Drops everything buffered, keeping the memory. */
void kb_line_framer_reset(kb_line_framer *f);

/* Frees the buffer; the framer is empty (and can be fed) again. */
void kb_line_framer_release(kb_line_framer *f);

#endif

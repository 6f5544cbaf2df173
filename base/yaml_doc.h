/* yaml_doc.h - YAML files as trees of nodes that remember where they came from.
 *
 * Every reader of YAML in kube-batchd (Kubernetes manifests, the scheduler
 * configuration, the queue configuration) loads a file into this tree first,
 * then walks it. Each node keeps its 1-based line and column so that errors
 * can say "file:line:column: what is wrong".
 *
 * Two ways in: kb_yaml_load_file() / kb_yaml_load_buffer() give every
 * document of a file at once (configuration files; the API's JSON goes
 * through base/json_doc.h, which builds the same tree);
 * kb_yaml_stream gives one document at a time and frees each tree before
 * building the next, so a large manifest file never has more than one
 * document's tree (and a small read buffer) in memory.
 *
 * Ownership: all nodes and strings live in the kb_yaml_file's arena and are
 * freed by kb_yaml_file_release(); a stream's document lives in the
 * stream until the next kb_yaml_stream_next() or kb_yaml_stream_free().
 * Nodes are read-only after loading.
 *
 * Semantics:
 *  - Multi-document streams ("---") give one root per document; empty
 *    documents are skipped.
 *  - Scalars keep their text exactly; `tag_plain` says whether the scalar was
 *    unquoted (plain), which decides whether `123` is a number or a string
 *    and whether `null`/`~`/empty is null.
 *  - Aliases (*a) resolve to the node their anchor (&a) named; an alias to an
 *    unknown anchor is an error. Merge keys (<<) are not supported (error).
 *  - A mapping with the same key twice is an error, as in Kubernetes' strict
 *    decoding.
 *  - Limits (a cluster or a user controls these files): nesting depth 64,
 *    file size 64 MiB, 10 million nodes. Exceeding one is an error. A
 *    stream counts the nodes and bytes of the whole file, as a load does.
 */
#ifndef KB_BASE_YAML_DOC_H
#define KB_BASE_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"

typedef enum kb_yaml_kind {
	KB_YAML_SCALAR,
	KB_YAML_MAP,
	KB_YAML_SEQ,
} kb_yaml_kind;

typedef struct kb_yaml_node kb_yaml_node;

typedef struct kb_yaml_pair {
	const kb_yaml_node *key; /* always a scalar */
	const kb_yaml_node *value;
} kb_yaml_pair;

struct kb_yaml_node {
	kb_yaml_kind kind;
	int line, col; /* 1-based position of the node's start */
	/* KB_YAML_SCALAR */
	const char *str; /* NUL-terminated text (may contain NULs only if len says so) */
	size_t len;
	bool plain; /* unquoted, not a block literal */
	/* KB_YAML_MAP: pairs in file order; KB_YAML_SEQ: items in order */
	size_t n;
	const kb_yaml_pair *pairs;
	const kb_yaml_node *const *items;
};

typedef struct kb_yaml_file {
	kb_arena arena;
	const char *name; /* as given to the loader, for messages */
	size_t ndocs;
	const kb_yaml_node *const *docs; /* one root per non-empty document */
} kb_yaml_file;

/* Reads and parses a file. On failure returns -errno (-ENOENT, -EINVAL for
 * syntax, -E2BIG for a limit, -ENOMEM) with err->msg "path:line:col: reason"
 * (or "path: reason" for I/O), and leaves *ret released (safe to release again). */
int kb_yaml_load_file(const char *path, kb_yaml_file *ret, kb_err *err);

/* Parses a buffer; `name` is used in messages. Same results as above. */
int kb_yaml_load_buffer(const char *buf, size_t len, const char *name, kb_yaml_file *ret,
			kb_err *err);

/* Frees everything the file owns. */
void kb_yaml_file_release(kb_yaml_file *f);

/* ---- one document at a time ---- */

typedef struct kb_yaml_stream kb_yaml_stream;

/* Opens a file for reading document by document. Reads nothing yet but
 * checks that the file opens and is not larger than the limit. Returns 0
 * and a new stream in *ret (free with kb_yaml_stream_free), or -errno
 * (-ENOENT, -EISDIR, -E2BIG, -ENOMEM) with err->msg "path: reason";
 * *ret is NULL then. Holds the file open and libyaml's read buffers
 * (tens of KiB) until freed; a file that is not a regular file (a pipe)
 * is read whole at open instead. */
int kb_yaml_stream_open_file(const char *path, kb_yaml_stream **ret, kb_err *err);

/* Like kb_yaml_stream_open_file, over a buffer that the caller keeps alive
 * until the stream is freed; `name` is used in messages. */
int kb_yaml_stream_open_buffer(const char *buf, size_t len, const char *name,
			       kb_yaml_stream **ret, kb_err *err);

/* Parses the next non-empty document. Returns 1 and its root in *ret_doc
 * (valid until the next call or kb_yaml_stream_free), 0 at the end of the
 * stream, or a negative errno with err->msg exactly as kb_yaml_load_file
 * would report it (-EINVAL syntax, -E2BIG a limit, -ENOMEM, or a read
 * error). After an error or the end, further calls return the same
 * result without reading. Cost: O(size of the document). */
int kb_yaml_stream_next(kb_yaml_stream *s, const kb_yaml_node **ret_doc, kb_err *err);

/* The name given at open (the path for a file), for messages. */
const char *kb_yaml_stream_name(const kb_yaml_stream *s);

/* Closes the file and frees everything. Accepts NULL; returns NULL. */
kb_yaml_stream *kb_yaml_stream_free(kb_yaml_stream *s);

/* ---- reading nodes ---- */

/* The value of `key` in a mapping; NULL if n is NULL, not a mapping, or lacks it. */
const kb_yaml_node *kb_yaml_get(const kb_yaml_node *n, const char *key);

/* True for a plain scalar "", "~", "null", "Null", "NULL", or a NULL pointer. */
bool kb_yaml_is_null(const kb_yaml_node *n);

/* The text of a scalar; NULL if n is NULL or not a scalar. */
const char *kb_yaml_str(const kb_yaml_node *n);

/* A scalar as an integer (decimal, optional sign; 0x.. hex allowed when
 * plain). Returns 0, -EINVAL (not a scalar / not an integer / quoted), or
 * -ERANGE. *ret is written only on success. */
int kb_yaml_int(const kb_yaml_node *n, int64_t *ret);

/* A scalar as a boolean: true/false/True/False/TRUE/FALSE (plain or quoted).
 * Returns 0 or -EINVAL. */
int kb_yaml_bool(const kb_yaml_node *n, bool *ret);

/* A scalar as a double (for plugin arguments such as weights). 0 or -EINVAL. */
int kb_yaml_double(const kb_yaml_node *n, double *ret);

/* A short name of the node's kind for messages: "a string", "a mapping", "a list". */
const char *kb_yaml_kind_name(const kb_yaml_node *n);

#endif

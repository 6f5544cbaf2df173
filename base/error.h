/* error.h - an error code with a message a person can act on.
 *
 * Functions that can fail in ways worth explaining (parsers, decoders,
 * configuration loaders) take a `kb_err *` as their last argument, fill it on
 * failure, and return a negative errno. The message names the file, line and
 * column, or the object and field, e.g.
 *   "conf.yaml:3:5: unknown action \"allocat\""
 *   "Pod \"ns/p\": spec.containers[0].resources.requests.cpu: bad quantity \"1x\""
 * The pointer may be NULL when the caller does not want the text.
 */
#ifndef KB_BASE_ERROR_H
#define KB_BASE_ERROR_H

#define KB_ERR_MSG_MAX 512

typedef struct kb_err {
	int code; /* negative errno, 0 when unset */
	char msg[KB_ERR_MSG_MAX];
} kb_err;

/* Fills *e (if non-NULL) and returns code, so callers can write
 *   return kb_err_set(err, -EINVAL, "%s:%d:%d: ...", ...);
 * code must be negative. */
int kb_err_set(kb_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes an existing message with "prefix: " (keeping the code). Returns e->code. */
int kb_err_prefix(kb_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

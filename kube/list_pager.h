/* list_pager.h - the requests of a paginated, consistent LIST and of the
 * WATCH that follows it (client-go's pager, as the reflectors use it).
 *
 * Contract:
 *  - every LIST is a consistent read: no resourceVersion is sent, so the
 *    API server answers page by page and honours `limit`. resourceVersion=0
 *    is never sent: kube-apiserver's watch cache answers it whole and
 *    ignores `limit`, and at 150,000 pods that one body is hundreds of MB;
 *  - each page after the first carries the `continue` token the page before
 *    it gave (the server keeps the list's resourceVersion inside the token,
 *    so all pages are one snapshot);
 *  - a field selector (e.g. "status.phase!=Succeeded,status.phase!=Failed",
 *    kube-scheduler's filter on pods) goes on every page and on the watch, so
 *    an object that stops matching comes out of the watch as DELETED;
 *  - the page size can be halved (down to 1) when a page was too large to
 *    parse, and restored once a LIST has gone through.
 *
 * Errors: -EINVAL for a path that does not start with "/" or a limit < 1;
 * -ENOMEM. Nothing is written to a ret_ parameter on failure.
 * Ownership: the pager copies path, selector and continue tokens; every URL
 * returned is the caller's to free().
 * Cost: each URL is O(length of the path, selector and token). Pure: no
 * I/O, no clock, no global state.
 */
#ifndef KB_KUBE_LIST_PAGER_H
#define KB_KUBE_LIST_PAGER_H

#include <stddef.h>
#include <stdint.h>

#define KB_LIST_PAGE_DEFAULT 500 /* client-go's pager.PageSize */

typedef struct kb_list_pager {
	char *path;     /* "/api/v1/pods"; may carry a query of its own */
	char *selector; /* the field selector, percent-encoded, or NULL */
	char *cont;     /* the continue token of the LIST in progress, or NULL */
	int limit;      /* the page size asked for now */
	int limit_max;  /* the page size configured */
	uint32_t page;  /* pages requested in the LIST in progress */
} kb_list_pager;

/* A pager for path with pages of `limit` objects and field_selector (NULL
 * or "" for none). 0, -EINVAL or -ENOMEM (then *p is empty; release is
 * safe). */
int kb_list_pager_init(kb_list_pager *p, const char *path, const char *field_selector, int limit);

void kb_list_pager_release(kb_list_pager *p);

/* Starts a new LIST: forgets any continue token; *ret_url is its first
 * page, "PATH?limit=N[&fieldSelector=S]". */
int kb_list_pager_first(kb_list_pager *p, char **ret_url);

/* The next page of the LIST in progress, after a page that gave the
 * continue token cont (non-empty): "PATH?limit=N&continue=T[&fieldSelector=S]". */
int kb_list_pager_next(kb_list_pager *p, const char *cont, char **ret_url);

/* The watch from resourceVersion rv (non-empty), with bookmarks and
 * timeoutSeconds, and the field selector. */
int kb_list_pager_watch(const kb_list_pager *p, const char *rv, int timeout_seconds,
			char **ret_url);

/* Halves the page size (not below 1). Returns the new size. */
int kb_list_pager_shrink(kb_list_pager *p);

/* Back to the page size configured (after a LIST that went through). */
void kb_list_pager_restore(kb_list_pager *p);

/* Percent-encodes s (every byte but A-Z a-z 0-9 - _ . ~) into a new
 * string; NULL when out of memory. */
char *kb_url_escape(const char *s);

#endif

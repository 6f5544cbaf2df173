/* list_pager.c - URLs of a paginated, consistent LIST (see list_pager.h). */
#include "kube/list_pager.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kb_url_escape(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1);
	if (!out)
		return NULL;
	static const char hex[] = "0123456789ABCDEF";
	char *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			*o++ = (char)ch;
		} else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	*o = '\0';
	return out;
}

int kb_list_pager_init(kb_list_pager *p, const char *path, const char *field_selector, int limit)
{
	memset(p, 0, sizeof(*p));
	if (!path || path[0] != '/' || limit < 1)
		return -EINVAL;
	p->limit = p->limit_max = limit;
	if (!(p->path = strdup(path)))
		return -ENOMEM;
	if (field_selector && field_selector[0] && !(p->selector = kb_url_escape(field_selector))) {
		kb_list_pager_release(p);
		return -ENOMEM;
	}
	return 0;
}

void kb_list_pager_release(kb_list_pager *p)
{
	free(p->path);
	free(p->selector);
	free(p->cont);
	memset(p, 0, sizeof(*p));
}

/* "PATH?limit=N[&continue=T][&fieldSelector=S]" with the token escaped. */
static int page_url(const kb_list_pager *p, char **ret_url)
{
	char *esc = NULL;
	if (p->cont && !(esc = kb_url_escape(p->cont)))
		return -ENOMEM;
	char *url;
	int n = asprintf(&url, "%s%climit=%d%s%s%s%s", p->path, strchr(p->path, '?') ? '&' : '?',
			 p->limit, esc ? "&continue=" : "", esc ? esc : "",
			 p->selector ? "&fieldSelector=" : "", p->selector ? p->selector : "");
	free(esc);
	if (n < 0)
		return -ENOMEM;
	*ret_url = url;
	return 0;
}

int kb_list_pager_first(kb_list_pager *p, char **ret_url)
{
	free(p->cont);
	p->cont = NULL;
	int e = page_url(p, ret_url);
	p->page = e == 0 ? 1 : 0;
	return e;
}

int kb_list_pager_next(kb_list_pager *p, const char *cont, char **ret_url)
{
	if (!cont || !cont[0])
		return -EINVAL;
	char *c = strdup(cont);
	if (!c)
		return -ENOMEM;
	char *old = p->cont;
	p->cont = c;
	int e = page_url(p, ret_url);
	if (e < 0) {
		p->cont = old;
		free(c);
		return e;
	}
	free(old);
	p->page++;
	return 0;
}

int kb_list_pager_watch(const kb_list_pager *p, const char *rv, int timeout_seconds,
			char **ret_url)
{
	if (!rv || !rv[0])
		return -EINVAL;
	char *esc = kb_url_escape(rv);
	if (!esc)
		return -ENOMEM;
	char *url;
	int n = asprintf(&url,
			 "%s%cwatch=true&allowWatchBookmarks=true&resourceVersion=%s"
			 "&timeoutSeconds=%d%s%s",
			 p->path, strchr(p->path, '?') ? '&' : '?', esc, timeout_seconds,
			 p->selector ? "&fieldSelector=" : "", p->selector ? p->selector : "");
	free(esc);
	if (n < 0)
		return -ENOMEM;
	*ret_url = url;
	return 0;
}

int kb_list_pager_shrink(kb_list_pager *p)
{
	p->limit = p->limit > 1 ? p->limit / 2 : 1;
	return p->limit;
}

void kb_list_pager_restore(kb_list_pager *p)
{
	p->limit = p->limit_max;
}

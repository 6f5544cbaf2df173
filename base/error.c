#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kb_err_set(kb_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		(void)vsnprintf(e->msg, sizeof(e->msg), fmt, ap); /* a long message is cut */
		va_end(ap);
		e->code = code;
	}
	return code;
}

int kb_err_prefix(kb_err *e, const char *fmt, ...)
{
	if (!e)
		return 0;
	char prefix[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(prefix, sizeof(prefix), fmt, ap); /* a long prefix is cut */
	va_end(ap);
	/* Build "prefix: old" in place: move the old text right, then copy the prefix. */
	size_t plen = strnlen(prefix, sizeof(prefix));
	size_t olen = strnlen(e->msg, sizeof(e->msg));
	if (plen + 2 >= sizeof(e->msg))
		plen = sizeof(e->msg) - 3;
	if (plen + 2 + olen >= sizeof(e->msg))
		olen = sizeof(e->msg) - 1 - plen - 2;
	memmove(e->msg + plen + 2, e->msg, olen);
	memcpy(e->msg, prefix, plen);
	e->msg[plen] = ':';
	e->msg[plen + 1] = ' ';
	e->msg[plen + 2 + olen] = '\0';
	return e->code;
}

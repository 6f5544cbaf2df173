#include "base/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_verbosity;
static enum kb_log_format log_format;
static FILE *log_stream;
static FILE *log_also;

void kb_log_configure(int verbosity, enum kb_log_format format, FILE *stream, FILE *also)
{
	log_verbosity = verbosity;
	log_format = format;
	log_stream = stream;
	log_also = also;
}

void kb_log_setup(int verbosity, FILE *stream)
{
	kb_log_configure(verbosity, KB_LOG_TEXT, stream, NULL);
}

int kb_log_verbosity(void)
{
	return log_verbosity;
}

/* The length of the well-formed UTF-8 sequence at s (at most n bytes), or 0
 * when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned min;
	unsigned cp;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, cp = s[0] & 0x1fu;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, cp = s[0] & 0x0fu;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Appends s as the body of a JSON string to out (size n, used *k); stops
 * (cutting the message) when out is full. */
static void json_escape(char *out, size_t n, size_t *k, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	while (left > 0 && *k + 8 < n) {
		size_t len = utf8_len(p, left);
		if (len == 0) {
			*k += (size_t)snprintf(out + *k, n - *k, "\\ufffd");
			len = 1;
		} else if (*p == '"' || *p == '\\') {
			out[(*k)++] = '\\';
			out[(*k)++] = (char)*p;
		} else if (*p < 0x20) {
			*k += (size_t)snprintf(out + *k, n - *k, "\\u%04x", *p);
		} else if (*k + len < n) {
			memcpy(out + *k, p, len);
			*k += len;
		} else {
			break;
		}
		p += len;
		left -= len;
	}
}

static void emit(FILE *out, const char *line)
{
	fprintf(out, "%s\n", line);
	(void)fflush(out);
}

void kb_logv_(int v, enum kb_log_severity sev, const char *file, int line, const char *fmt, ...)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap); /* a long message is cut */
	va_end(ap);
	char buf[4096];
	if (log_format == KB_LOG_JSON) {
		long long ms = (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
		int n = snprintf(buf, sizeof(buf), "{\"ts\":%lld.%03ld,\"caller\":\"%s:%d\",\"msg\":\"",
				 ms, (long)(tv.tv_usec % 1000), base, line);
		size_t k = n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0;
		json_escape(buf, sizeof(buf) - 16, &k, msg);
		if (sev == KB_LOG_ERROR)
			(void)snprintf(buf + k, sizeof(buf) - k, "\"}");
		else
			(void)snprintf(buf + k, sizeof(buf) - k, "\",\"v\":%d}", v);
	} else {
		struct tm tm;
		gmtime_r(&tv.tv_sec, &tm);
		static const char sevc[] = {'I', 'W', 'E'};
		(void)snprintf(buf, sizeof(buf), "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] %s",
			       sevc[sev], tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			       tm.tm_sec, (long)tv.tv_usec, (int)getpid(), base, line, msg);
	}
	/* One write per line so concurrent writers do not interleave. */
	emit(log_stream ? log_stream : stderr, buf);
	if (log_also)
		emit(log_also, buf);
}

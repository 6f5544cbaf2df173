#include "base/log.h"

#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_verbosity;
static FILE *log_stream;

void kb_log_setup(int verbosity, FILE *stream)
{
	log_verbosity = verbosity;
	log_stream = stream;
}

int kb_log_verbosity(void)
{
	return log_verbosity;
}

void kb_log_(enum kb_log_severity sev, const char *file, int line, const char *fmt, ...)
{
	FILE *out = log_stream ? log_stream : stderr;
	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	static const char sevc[] = {'I', 'W', 'E'};
	char buf[2048];
	int n = snprintf(buf, sizeof(buf), "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] ", sevc[sev],
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
			 (int)getpid(), base, line);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap); /* a long line is cut */
	va_end(ap);
	/* One write per line so concurrent writers do not interleave. A log
	 * line that cannot be written has nowhere to be reported. */
	fprintf(out, "%s\n", buf);
	(void)fflush(out);
}

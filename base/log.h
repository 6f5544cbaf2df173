/* log.h - one line per event, in klog's layout:
 *
 *   I1122 12:20:04.123456   12345 allocate.c:88] bound "ns/pod" to "node-1"
 *
 * Only the daemon layers (scheduler/ daemon and simulator drivers, cache/
 * reflectors and writers) log; library code returns errors instead.
 * The verbosity threshold is set once at start-up from -v; it is the one
 * piece of process-wide state, written before any other thread or loop runs.
 */
#ifndef KB_BASE_LOG_H
#define KB_BASE_LOG_H

#include <stdio.h>

enum kb_log_severity { KB_LOG_INFO, KB_LOG_WARNING, KB_LOG_ERROR };

/* Sets the -v threshold (default 0) and the stream (default stderr). */
void kb_log_setup(int verbosity, FILE *stream);
int kb_log_verbosity(void);

void kb_log_(enum kb_log_severity sev, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define kb_info(...) kb_log_(KB_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define kb_warn(...) kb_log_(KB_LOG_WARNING, __FILE__, __LINE__, __VA_ARGS__)
#define kb_error(...) kb_log_(KB_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
/* Logged only at -v=level or above. */
#define kb_vlog(level, ...)                                                                        \
	do {                                                                                       \
		if (kb_log_verbosity() >= (level))                                                 \
			kb_log_(KB_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__);                     \
	} while (0)

#endif

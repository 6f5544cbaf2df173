/* log.h - one line per event, in klog's layout (the default):
 *
 *   I1122 12:20:04.123456   12345 allocate.c:88] bound "ns/pod" to "node-1"
 *
 * or, with KB_LOG_JSON (--logging-format=json), one JSON object per line in
 * the layout of Kubernetes' component-base JSON format:
 *
 *   {"ts":1763814004123.456,"caller":"allocate.c:88","msg":"bound \"ns/pod\" to \"node-1\"","v":0}
 *
 * "ts" is milliseconds since the Unix epoch; "v" is the verbosity of an
 * informational line (0, or the level of a kb_vlog line); warnings are
 * informational lines of "v":0 and errors have no "v", as klog writes them
 * through its JSON logger. The message is escaped as JSON (bytes that are
 * not UTF-8 become U+FFFD), so a line is always valid JSON.
 *
 * Only the daemon layers (scheduler/ daemon and simulator drivers, cache/
 * reflectors and writers) log; library code returns errors instead.
 * The configuration (threshold, format, streams) is set once at start-up;
 * it is the one piece of process-wide state, written before any other
 * thread or loop runs. A line that cannot be written has nowhere to be
 * reported and is dropped. Cost: one formatted write and flush per line
 * and stream.
 */
#ifndef KB_BASE_LOG_H
#define KB_BASE_LOG_H

#include <stdio.h>

enum kb_log_severity { KB_LOG_INFO, KB_LOG_WARNING, KB_LOG_ERROR };

enum kb_log_format { KB_LOG_TEXT, KB_LOG_JSON };

/* Sets the -v threshold (default 0), the format (default KB_LOG_TEXT), the
 * stream (NULL: stderr) and a second stream each line also goes to (NULL:
 * none; --alsologtostderr with --log-file). The streams are borrowed: the
 * caller keeps them open while anything may log. */
void kb_log_configure(int verbosity, enum kb_log_format format, FILE *stream, FILE *also);
/* kb_log_configure(verbosity, KB_LOG_TEXT, stream, NULL). */
void kb_log_setup(int verbosity, FILE *stream);
int kb_log_verbosity(void);

/* One line of severity sev; v is its verbosity (0 but for kb_vlog). */
void kb_logv_(int v, enum kb_log_severity sev, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define kb_info(...) kb_logv_(0, KB_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define kb_warn(...) kb_logv_(0, KB_LOG_WARNING, __FILE__, __LINE__, __VA_ARGS__)
#define kb_error(...) kb_logv_(0, KB_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
/* Logged only at -v=level or above. */
#define kb_vlog(level, ...)                                                                        \
	do {                                                                                       \
		if (kb_log_verbosity() >= (level))                                                 \
			kb_logv_((level), KB_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__);           \
	} while (0)

#endif

/* test_log.c - log lines: klog's text layout and component-base's JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>

#include "base/json_doc.h"
#include "base/log.h"
#include "base/yaml_doc.h"

/* What the logger wrote to a memory stream, as one string (the caller frees). */
typedef struct capture {
	char *buf;
	size_t len;
	FILE *f;
} capture;

static void capture_start(capture *c, int verbosity, enum kb_log_format fmt)
{
	*c = (capture){0};
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	kb_log_configure(verbosity, fmt, c->f, NULL);
}

static char *capture_end(capture *c)
{
	kb_log_configure(0, KB_LOG_TEXT, stderr, NULL);
	fclose(c->f);
	return c->buf;
}

/* Parses one JSON line strictly; fails the test when it is not JSON. */
static void parse_line(const char *line, size_t len, kb_yaml_file *f)
{
	kb_err err = {0};
	int r = kb_json_load_buffer(line, len, "line", f, &err);
	if (r < 0)
		fail_msg("not JSON: %s: %.*s", err.msg, (int)len, line);
	assert_int_equal(f->ndocs, 1);
}

static void text_line_has_klog_header(void **state)
{
	capture c;
	capture_start(&c, 0, KB_LOG_TEXT);
	kb_warn("bound \"%s\"", "ns/pod");
	char *out = capture_end(&c);
	/* W1122 12:20:04.123456   12345 test_log.c:NN] bound "ns/pod" */
	assert_int_equal(out[0], 'W');
	assert_non_null(strstr(out, " test_log.c:"));
	assert_non_null(strstr(out, "] bound \"ns/pod\"\n"));
	free(out);
}

static void json_lines_have_ts_caller_msg_v(void **state)
{
	struct timeval before, after;
	capture c;
	capture_start(&c, 3, KB_LOG_JSON);
	gettimeofday(&before, NULL);
	kb_info("bound \"%s\" to %s", "ns/pod", "node-1");
	kb_vlog(3, "detail %d", 7);
	kb_vlog(4, "not logged at -v=3");
	kb_warn("a warning");
	kb_error("an error");
	gettimeofday(&after, NULL);
	char *out = capture_end(&c);

	const char *p = out;
	const char *want_msg[] = {"bound \"ns/pod\" to node-1", "detail 7", "a warning", "an error"};
	const char *want_v[] = {"0", "3", "0", NULL};
	for (int i = 0; i < 4; i++) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		kb_yaml_file f;
		parse_line(p, (size_t)(nl - p), &f);
		const kb_yaml_node *root = f.docs[0];
		const kb_yaml_node *msg = kb_yaml_get(root, "msg");
		assert_non_null(msg);
		assert_string_equal(msg->str, want_msg[i]);
		const kb_yaml_node *ts = kb_yaml_get(root, "ts");
		assert_non_null(ts);
		assert_true(ts->plain); /* a number, milliseconds since the epoch */
		double ms = strtod(ts->str, NULL);
		assert_true(ms >= (double)before.tv_sec * 1000.0 + before.tv_usec / 1000 - 1);
		assert_true(ms <= (double)after.tv_sec * 1000.0 + after.tv_usec / 1000.0 + 1);
		const kb_yaml_node *caller = kb_yaml_get(root, "caller");
		assert_non_null(caller);
		assert_non_null(strstr(caller->str, "test_log.c:"));
		const kb_yaml_node *v = kb_yaml_get(root, "v");
		if (want_v[i]) {
			assert_non_null(v);
			assert_string_equal(v->str, want_v[i]);
		} else {
			assert_null(v); /* errors carry no verbosity, as klog's JSON */
		}
		kb_yaml_file_release(&f);
		p = nl + 1;
	}
	assert_string_equal(p, ""); /* the -v=4 line was not written */
	free(out);
}

static void json_escapes_quotes_controls_and_bad_utf8(void **state)
{
	capture c;
	capture_start(&c, 0, KB_LOG_JSON);
	kb_error("q\"b\\s\ttab\nnl \xff end \xc3\xa9");
	char *out = capture_end(&c);
	size_t len = strlen(out);
	assert_true(len > 0 && out[len - 1] == '\n');
	assert_null(memchr(out, '\n', len - 1)); /* one line */
	kb_yaml_file f;
	parse_line(out, len - 1, &f);
	const kb_yaml_node *msg = kb_yaml_get(f.docs[0], "msg");
	assert_string_equal(msg->str, "q\"b\\s\ttab\nnl \xef\xbf\xbd end \xc3\xa9");
	kb_yaml_file_release(&f);
	free(out);
}

static void also_stream_gets_the_same_line(void **state)
{
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	FILE *fa = open_memstream(&a, &na), *fb = open_memstream(&b, &nb);
	kb_log_configure(0, KB_LOG_TEXT, fa, fb);
	kb_info("twice");
	kb_log_configure(0, KB_LOG_TEXT, stderr, NULL);
	fclose(fa);
	fclose(fb);
	assert_non_null(strstr(a, "] twice\n"));
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void long_message_is_cut_but_stays_json(void **state)
{
	char big[5000];
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture c;
	capture_start(&c, 0, KB_LOG_JSON);
	kb_info("%s", big);
	char *out = capture_end(&c);
	kb_yaml_file f;
	parse_line(out, strlen(out) - 1, &f);
	kb_yaml_file_release(&f);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_line_has_klog_header),
		cmocka_unit_test(json_lines_have_ts_caller_msg_v),
		cmocka_unit_test(json_escapes_quotes_controls_and_bad_utf8),
		cmocka_unit_test(also_stream_gets_the_same_line),
		cmocka_unit_test(long_message_is_cut_but_stays_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

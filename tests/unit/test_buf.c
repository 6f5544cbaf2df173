/* test_buf.c - base/buf: a bounded growable buffer, and whole-file reads
 * with their limit (the YAML loader's and the recorder's). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"

static void append_keeps_a_nul_and_refuses_past_the_limit(void **state)
{
	kb_buf b = {0};
	assert_int_equal(kb_buf_append(&b, "abc", 3, 6), 0);
	assert_int_equal(kb_buf_append(&b, "def", 3, 6), 0);
	assert_string_equal(b.data, "abcdef");
	assert_int_equal(b.len, 6);
	assert_int_equal(kb_buf_append(&b, "g", 1, 6), -E2BIG);
	assert_string_equal(b.data, "abcdef"); /* nothing appended */
	/* Growth past the first 4 KiB keeps what was there. */
	char big[10000];
	memset(big, 'x', sizeof(big));
	assert_int_equal(kb_buf_append(&b, big, sizeof(big), 1 << 20), 0);
	assert_int_equal(b.len, 6 + sizeof(big));
	assert_memory_equal(b.data, "abcdefxx", 8);
	assert_int_equal(b.data[b.len], '\0');
	kb_buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void read_file_whole_empty_missing_and_too_large(void **state)
{
	char path[] = "/tmp/kb-test-buf.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	kb_buf b = {0};
	kb_err err = {0};
	assert_int_equal(kb_buf_read_file(path, 100, &b, &err), 0);
	assert_non_null(b.data); /* an empty file reads as "" */
	assert_string_equal(b.data, "");
	kb_buf_release(&b);
	char text[200];
	memset(text, 'y', sizeof(text));
	assert_int_equal(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	close(fd);
	assert_int_equal(kb_buf_read_file(path, 200, &b, &err), 0);
	assert_int_equal(b.len, 200);
	kb_buf_release(&b);
	assert_int_equal(kb_buf_read_file(path, 199, &b, &err), -E2BIG);
	assert_null(b.data); /* released on failure */
	assert_non_null(strstr(err.msg, "larger than"));
	unlink(path);
	assert_int_equal(kb_buf_read_file(path, 200, &b, &err), -ENOENT);
	assert_non_null(strstr(err.msg, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(append_keeps_a_nul_and_refuses_past_the_limit),
		cmocka_unit_test(read_file_whole_empty_missing_and_too_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

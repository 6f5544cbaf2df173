/* test_line_framer.c - kube/line_framer: lines split across feeds, empty
 * lines and CRLF, the line-length bound, compaction, the last line without
 * a newline. Links no libcurl or libev (kb_kube_pure_dep). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kube/line_framer.h"

/* Feeds s (as a C string) and expects r. */
static void feed(kb_line_framer *f, const char *s, int r)
{
	assert_int_equal(kb_line_framer_feed(f, s, strlen(s)), r);
}

/* Expects the next line to be want. */
static void next_is(kb_line_framer *f, const char *want)
{
	char *line = NULL;
	size_t n = 0;
	assert_true(kb_line_framer_next(f, &line, &n));
	assert_int_equal(n, strlen(want));
	assert_string_equal(line, want);
}

static void no_next(kb_line_framer *f)
{
	char *line;
	size_t n;
	assert_false(kb_line_framer_next(f, &line, &n));
}

static void lines_split_across_feeds(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 1 << 20);
	no_next(&f); /* nothing fed */
	feed(&f, "{\"a\"", 0);
	no_next(&f);
	feed(&f, ":1}\n{\"b", 0);
	next_is(&f, "{\"a\":1}");
	no_next(&f);
	feed(&f, "\":2}", 0);
	no_next(&f);
	feed(&f, "\n", 0);
	next_is(&f, "{\"b\":2}");
	no_next(&f);
	assert_int_equal(kb_line_framer_pending(&f), 0);
	kb_line_framer_release(&f);
}

static void several_lines_in_one_feed(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 64);
	feed(&f, "one\ntwo\nthree\nfo", 0);
	next_is(&f, "one");
	next_is(&f, "two");
	next_is(&f, "three");
	no_next(&f);
	assert_int_equal(kb_line_framer_pending(&f), 2); /* "fo" waits for its newline */
	kb_line_framer_release(&f);
}

static void empty_lines_are_skipped_and_crlf_dropped(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 64);
	feed(&f, "\n\r\n\nx\r\n", 0);
	next_is(&f, "x");
	no_next(&f);
	/* A "\r" split from its "\n" by the feeds is dropped too. */
	feed(&f, "y\r", 0);
	no_next(&f);
	feed(&f, "\n", 0);
	next_is(&f, "y");
	/* A "\r" inside a line stays. */
	feed(&f, "a\rb\n", 0);
	next_is(&f, "a\rb");
	kb_line_framer_release(&f);
}

static void a_line_longer_than_the_bound_fails(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 8);
	feed(&f, "12345678", 0); /* exactly the bound */
	feed(&f, "\n", 0);
	next_is(&f, "12345678");
	feed(&f, "12345", 0);
	feed(&f, "6789", -E2BIG); /* a partial line of 9 */
	assert_int_equal(kb_line_framer_pending(&f), 5); /* the failed feed kept nothing */

	/* Complete lines before the newline do not count, only the tail after it. */
	kb_line_framer_reset(&f);
	feed(&f, "abc\n123456789", -E2BIG);
	kb_line_framer_reset(&f);
	feed(&f, "abc\n12345678", 0);
	next_is(&f, "abc");

	/* A complete line longer than the bound fails too, whether one feed
	 * holds all of it or completes one begun before (it was delivered). */
	kb_line_framer_reset(&f);
	feed(&f, "123456789\nabc\n", -E2BIG);
	assert_int_equal(kb_line_framer_pending(&f), 0);
	feed(&f, "12345", 0);
	feed(&f, "6789\n", -E2BIG);
	kb_line_framer_reset(&f);
	feed(&f, "abc\n123456789\n", -E2BIG);
	/* ... but the "\r" of a "\r\n" is not the line's. */
	kb_line_framer_reset(&f);
	feed(&f, "12345678\r\n", 0);
	next_is(&f, "12345678");
	kb_line_framer_release(&f);
}

static void growing_compacts_what_was_delivered(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 1 << 20);
	feed(&f, "first\nx", 0);
	next_is(&f, "first");
	char big[10000];
	memset(big, 'y', sizeof(big));
	assert_int_equal(kb_line_framer_feed(&f, big, sizeof(big)), 0);
	feed(&f, "\n", 0);
	char *line;
	size_t n;
	assert_true(kb_line_framer_next(&f, &line, &n));
	assert_int_equal(n, sizeof(big) + 1);
	assert_int_equal(line[0], 'x');
	assert_int_equal(line[n - 1], 'y');
	assert_int_equal(line[n], '\0');
	kb_line_framer_release(&f);
}

static void the_rest_is_a_last_line_without_newline(void **state)
{
	kb_line_framer f;
	kb_line_framer_init(&f, 64);
	char *line;
	size_t n;
	assert_false(kb_line_framer_rest(&f, &line, &n));
	feed(&f, "a\nlast", 0);
	next_is(&f, "a");
	no_next(&f);
	assert_true(kb_line_framer_rest(&f, &line, &n));
	assert_int_equal(n, 4);
	assert_string_equal(line, "last");
	assert_false(kb_line_framer_rest(&f, &line, &n)); /* taken */
	assert_int_equal(kb_line_framer_pending(&f), 0);
	/* Fed again after the rest was taken. */
	feed(&f, "more\n", 0);
	next_is(&f, "more");
	kb_line_framer_release(&f);
	kb_line_framer_release(&f); /* twice is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_split_across_feeds),
		cmocka_unit_test(several_lines_in_one_feed),
		cmocka_unit_test(empty_lines_are_skipped_and_crlf_dropped),
		cmocka_unit_test(a_line_longer_than_the_bound_fails),
		cmocka_unit_test(growing_compacts_what_was_delivered),
		cmocka_unit_test(the_rest_is_a_last_line_without_newline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_yaml_doc.c - YAML files load into trees that remember positions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/yaml_doc.h"

static int load(const char *text, kb_yaml_file *f, kb_err *err)
{
	memset(err, 0, sizeof(*err));
	return kb_yaml_load_buffer(text, strlen(text), "t.yaml", f, err);
}

static void load_ok(const char *text, kb_yaml_file *f)
{
	kb_err err;
	int r = load(text, f, &err);
	if (r != 0)
		fail_msg("load failed: %d %s", r, err.msg);
}

/* Loads text, expects code, and checks the message contains want. */
static void load_fails(const char *text, int code, const char *want)
{
	kb_yaml_file f;
	kb_err err;
	int r = load(text, &f, &err);
	if (r != code)
		fail_msg("expected %d, got %d (%s)", code, r, err.msg);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
	assert_int_equal(f.ndocs, 0);
	assert_null(f.docs);
	kb_yaml_file_release(&f); /* safe again */
}

static char *repeat(const char *s, int n, const char *tail)
{
	size_t len = strlen(s) * (size_t)n + strlen(tail) + 1;
	char *out = malloc(len);
	assert_non_null(out);
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		strcat(out, s);
	strcat(out, tail);
	return out;
}

static void yaml_loads_each_document_of_a_stream(void **state)
{
	kb_yaml_file f;
	load_ok("kind: Pod\n---\nkind: Node\n---\n- a\n- b\n", &f);
	assert_string_equal(f.name, "t.yaml");
	assert_int_equal(f.ndocs, 3);
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[0], "kind")), "Pod");
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[1], "kind")), "Node");
	assert_int_equal(f.docs[2]->kind, KB_YAML_SEQ);
	assert_int_equal(f.docs[2]->n, 2);
	assert_string_equal(kb_yaml_str(f.docs[2]->items[1]), "b");
	kb_yaml_file_release(&f);
}

static void yaml_skips_empty_documents(void **state)
{
	kb_yaml_file f;
	load_ok("---\n---\n# only a comment\n---\na: 1\n---\n...\n", &f);
	assert_int_equal(f.ndocs, 1);
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[0], "a")), "1");
	kb_yaml_file_release(&f);

	load_ok("", &f);
	assert_int_equal(f.ndocs, 0);
	kb_yaml_file_release(&f);

	/* An explicit null or an empty quoted string is content. */
	load_ok("--- ~\n--- ''\n", &f);
	assert_int_equal(f.ndocs, 2);
	kb_yaml_file_release(&f);
}

static void yaml_records_line_and_column_of_nodes(void **state)
{
	kb_yaml_file f;
	load_ok("apiVersion: v1\n"
		"spec:\n"
		"  containers:\n"
		"    - name: c\n"
		"      image: \"x\"\n",
		&f);
	const kb_yaml_node *root = f.docs[0];
	assert_int_equal(root->line, 1);
	assert_int_equal(root->col, 1);
	const kb_yaml_node *spec = kb_yaml_get(root, "spec");
	assert_int_equal(spec->kind, KB_YAML_MAP);
	assert_int_equal(spec->line, 3);
	assert_int_equal(spec->col, 3);
	assert_int_equal(spec->pairs[0].key->line, 3);
	assert_int_equal(spec->pairs[0].key->col, 3);
	const kb_yaml_node *list = kb_yaml_get(spec, "containers");
	assert_int_equal(list->kind, KB_YAML_SEQ);
	assert_int_equal(list->line, 4);
	assert_int_equal(list->col, 5);
	const kb_yaml_node *image = kb_yaml_get(list->items[0], "image");
	assert_int_equal(image->line, 5);
	assert_int_equal(image->col, 14); /* the opening quote */
	assert_int_equal(root->pairs[0].value->line, 1);
	assert_int_equal(root->pairs[0].value->col, 13);
	kb_yaml_file_release(&f);
}

static void yaml_keeps_pairs_in_file_order(void **state)
{
	kb_yaml_file f;
	load_ok("z: 1\na: 2\nm: 3\n", &f);
	const kb_yaml_node *root = f.docs[0];
	assert_int_equal(root->n, 3);
	assert_string_equal(root->pairs[0].key->str, "z");
	assert_string_equal(root->pairs[1].key->str, "a");
	assert_string_equal(root->pairs[2].key->str, "m");
	assert_null(kb_yaml_get(root, "missing"));
	assert_null(kb_yaml_get(NULL, "a"));
	assert_null(kb_yaml_get(root->pairs[0].value, "a"));
	kb_yaml_file_release(&f);
}

static void yaml_rejects_duplicate_keys_with_position(void **state)
{
	load_fails("a: 1\nb: 2\na: 3\n", -EINVAL, "t.yaml:3:1: duplicate key \"a\"");
	load_fails("a: 1\nb: 2\na: 3\n", -EINVAL, "first at line 1, column 1");
	/* Quoting does not make a different key. */
	load_fails("spec:\n  x: 1\n  \"x\": 2\n", -EINVAL, "t.yaml:3:3: duplicate key \"x\"");
	/* The earliest repeat in the file is the one reported. */
	load_fails("b: 1\na: 1\na: 2\nb: 2\n", -EINVAL, "t.yaml:3:1: duplicate key \"a\"");
	load_fails("{k: 1, j: 2, k: 3}\n", -EINVAL, "t.yaml:1:14: duplicate key \"k\"");
}

static void yaml_allows_equal_keys_in_different_mappings(void **state)
{
	kb_yaml_file f;
	load_ok("a: {x: 1}\nb: {x: 2}\n---\na: 3\n", &f);
	assert_int_equal(f.ndocs, 2);
	kb_yaml_file_release(&f);
}

static void yaml_resolves_aliases_to_the_anchored_node(void **state)
{
	kb_yaml_file f;
	load_ok("base: &labels\n  app: web\n  tier: front\n"
		"copy: *labels\n"
		"name: &n hello\n"
		"again: *n\n",
		&f);
	const kb_yaml_node *root = f.docs[0];
	const kb_yaml_node *base = kb_yaml_get(root, "base");
	assert_ptr_equal(kb_yaml_get(root, "copy"), base);
	assert_string_equal(kb_yaml_str(kb_yaml_get(kb_yaml_get(root, "copy"), "tier")), "front");
	assert_string_equal(kb_yaml_str(kb_yaml_get(root, "again")), "hello");
	kb_yaml_file_release(&f);

	/* A later anchor with the same name replaces the earlier one. */
	load_ok("a: &x 1\nb: &x 2\nc: *x\n", &f);
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[0], "c")), "2");
	kb_yaml_file_release(&f);
}

static void yaml_rejects_unknown_alias(void **state)
{
	load_fails("a: 1\nb: *nope\n", -EINVAL, "t.yaml:2:4: unknown alias *nope");
	/* Anchors do not cross documents. */
	load_fails("a: &x 1\n---\nb: *x\n", -EINVAL, "t.yaml:3:4: unknown alias *x");
}

static void yaml_forgets_anchors_at_each_document(void **state)
{
	/* Many anchors in one document, a few in the next: only the new ones exist. */
	size_t cap = 300 * 24 + 64;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t n = 0;
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(text + n, cap - n, "k%d: &a%d v%d\n", i, i, i);
	snprintf(text + n, cap - n, "---\nx: &a7 new\ny: *a7\n");
	kb_yaml_file f;
	load_ok(text, &f);
	assert_int_equal(f.ndocs, 2);
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[1], "y")), "new");
	kb_yaml_file_release(&f);

	snprintf(text + n, cap - n, "---\nx: &a7 new\ny: *a8\n");
	load_fails(text, -EINVAL, "unknown alias *a8");
	free(text);
}

static void yaml_rejects_recursive_alias(void **state)
{
	load_fails("a: &x [1, *x]\n", -EINVAL, "recursive");
	load_fails("a: &x\n  b: *x\n", -EINVAL, "t.yaml:2:6:");
	/* Even when an earlier node had the same anchor name. */
	load_fails("a: &x 1\nb: &x [*x]\n", -EINVAL, "t.yaml:2:8: alias *x is inside the node it names");
}

static void yaml_rejects_merge_keys_and_non_string_keys(void **state)
{
	load_fails("base: &b {x: 1}\nd:\n  <<: *b\n", -EINVAL, "t.yaml:3:3: merge keys (<<) are not supported");
	load_fails("? [a, b]\n: 1\n", -EINVAL, "t.yaml:1:3: a mapping key must be a string, not a list");
	load_fails("m: &m {a: 1}\n? *m\n: 2\n", -EINVAL, "a mapping key must be a string");

	/* A quoted "<<" is an ordinary key. */
	kb_yaml_file f;
	load_ok("\"<<\": 1\n", &f);
	assert_string_equal(kb_yaml_str(kb_yaml_get(f.docs[0], "<<")), "1");
	kb_yaml_file_release(&f);
}

static void yaml_limits_nesting_depth(void **state)
{
	kb_yaml_file f;
	kb_err err;
	char *ok = repeat("[", 64, "");
	char *ok2 = repeat("]", 64, "\n");
	char *text = malloc(strlen(ok) + strlen(ok2) + 1);
	assert_non_null(text);
	strcpy(text, ok);
	strcat(text, ok2);
	assert_int_equal(load(text, &f, &err), 0);
	assert_int_equal(f.ndocs, 1);
	kb_yaml_file_release(&f);
	free(text);
	free(ok);
	free(ok2);

	char *deep = repeat("[", 65, "1");
	assert_int_equal(load(deep, &f, &err), -E2BIG);
	assert_non_null(strstr(err.msg, "t.yaml:1:65: nested deeper than 64 levels"));
	free(deep);

	char *block = repeat("- ", 65, "x\n");
	assert_int_equal(load(block, &f, &err), -E2BIG);
	free(block);
}

static void yaml_limits_depth_through_aliases(void **state)
{
	/* 40 levels under the anchor, used 40 levels down: 80 in all. */
	char *a = repeat("[", 40, "1");
	char *b = repeat("]", 40, "");
	char *c = repeat("[", 40, "*d");
	char *d = repeat("]", 40, "\n");
	size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + 32;
	char *text = malloc(n);
	assert_non_null(text);
	snprintf(text, n, "- &d %s%s\n- %s%s", a, b, c, d);
	load_fails(text, -E2BIG, "nested deeper than 64 levels");
	free(text);
	free(a);
	free(b);
	free(c);
	free(d);
}

static void yaml_limits_alias_expansion(void **state)
{
	/* "Billion laughs": each level names the previous one ten times. */
	load_fails("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		   "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		   "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		   "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
		   "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
		   -E2BIG, "more than 10000000 nodes");
}

static void yaml_limits_input_size(void **state)
{
	size_t len = ((size_t)64 << 20) + 1;
	char *big = malloc(len);
	assert_non_null(big);
	memset(big, ' ', len);
	kb_yaml_file f;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_load_buffer(big, len, "big.yaml", &f, &err), -E2BIG);
	assert_non_null(strstr(err.msg, "big.yaml: "));
	kb_yaml_file_release(&f);
	free(big);
}

static void yaml_marks_plain_and_quoted_scalars(void **state)
{
	kb_yaml_file f;
	load_ok("plain: 123\n"
		"single: '123'\n"
		"double: \"123\"\n"
		"literal: |\n  123\n"
		"folded: >\n  123\n"
		"tagged: !!str 123\n"
		"nul: \"a\\0b\"\n",
		&f);
	const kb_yaml_node *root = f.docs[0];
	assert_true(kb_yaml_get(root, "plain")->plain);
	assert_false(kb_yaml_get(root, "single")->plain);
	assert_false(kb_yaml_get(root, "double")->plain);
	assert_false(kb_yaml_get(root, "literal")->plain);
	assert_string_equal(kb_yaml_str(kb_yaml_get(root, "literal")), "123\n");
	assert_false(kb_yaml_get(root, "folded")->plain);
	assert_false(kb_yaml_get(root, "tagged")->plain);
	assert_string_equal(kb_yaml_get(root, "single")->str, "123");
	const kb_yaml_node *nul = kb_yaml_get(root, "nul");
	assert_int_equal(nul->len, 3);
	assert_memory_equal(nul->str, "a\0b", 4);
	kb_yaml_file_release(&f);
}

static void yaml_int_reads_plain_integers_only(void **state)
{
	kb_yaml_file f;
	load_ok("a: 42\nb: -7\nc: +3\nd: 0x1F\ne: '42'\nf: 1.5\ng: 9223372036854775807\n"
		"h: 9223372036854775808\ni: -9223372036854775808\nj: -9223372036854775809\n"
		"k: [1]\nl: 12abc\nm:\nn: 0x\no: 010\n",
		&f);
	const kb_yaml_node *root = f.docs[0];
	int64_t v = 0;
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "a"), &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "b"), &v), 0);
	assert_int_equal(v, -7);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "c"), &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "d"), &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "g"), &v), 0);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "i"), &v), 0);
	assert_int_equal(v, INT64_MIN);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "o"), &v), 0);
	assert_int_equal(v, 10); /* decimal, not YAML 1.1 octal */

	v = 99;
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "e"), &v), -EINVAL); /* quoted */
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "f"), &v), -EINVAL);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "h"), &v), -ERANGE);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "j"), &v), -ERANGE);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "k"), &v), -EINVAL);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "l"), &v), -EINVAL);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "m"), &v), -EINVAL);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "n"), &v), -EINVAL);
	assert_int_equal(kb_yaml_int(NULL, &v), -EINVAL);
	assert_int_equal(v, 99); /* untouched on failure */
	kb_yaml_file_release(&f);
}

static void yaml_bool_reads_the_six_spellings(void **state)
{
	kb_yaml_file f;
	load_ok("[true, True, TRUE, 'true', false, False, FALSE, \"false\", yes, on, tRUE, 1, [x]]\n",
		&f);
	const kb_yaml_node *s = f.docs[0];
	for (size_t i = 0; i < 8; i++) {
		bool b = i >= 4;
		assert_int_equal(kb_yaml_bool(s->items[i], &b), 0);
		assert_int_equal(b, i < 4);
	}
	for (size_t i = 8; i < s->n; i++) {
		bool b = true;
		assert_int_equal(kb_yaml_bool(s->items[i], &b), -EINVAL);
		assert_true(b);
	}
	bool b;
	assert_int_equal(kb_yaml_bool(NULL, &b), -EINVAL);
	kb_yaml_file_release(&f);
}

static void yaml_double_reads_plain_numbers(void **state)
{
	kb_yaml_file f;
	load_ok("[1.5, -2, .25, 1e3, '1.5', abc, .inf, nan, ' 1', 1e999, '', 0x10, 1.5x]\n", &f);
	const kb_yaml_node *s = f.docs[0];
	double d = 0;
	assert_int_equal(kb_yaml_double(s->items[0], &d), 0);
	assert_true(d == 1.5);
	assert_int_equal(kb_yaml_double(s->items[1], &d), 0);
	assert_true(d == -2.0);
	assert_int_equal(kb_yaml_double(s->items[2], &d), 0);
	assert_true(d == 0.25);
	assert_int_equal(kb_yaml_double(s->items[3], &d), 0);
	assert_true(d == 1000.0);
	for (size_t i = 4; i < s->n; i++) {
		d = 7.0;
		if (kb_yaml_double(s->items[i], &d) != -EINVAL)
			fail_msg("item %zu \"%s\" parsed", i, s->items[i]->str);
		assert_true(d == 7.0);
	}
	kb_yaml_file_release(&f);
}

static void yaml_is_null_only_for_plain_null_spellings(void **state)
{
	kb_yaml_file f;
	load_ok("a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: 'null'\ng: \"\"\nh: nULL\ni: 0\nj: {}\nk: []\n",
		&f);
	const kb_yaml_node *root = f.docs[0];
	const char *nulls[] = { "a", "b", "c", "d", "e" };
	for (size_t i = 0; i < 5; i++)
		assert_true(kb_yaml_is_null(kb_yaml_get(root, nulls[i])));
	const char *not_nulls[] = { "f", "g", "h", "i", "j", "k" };
	for (size_t i = 0; i < 6; i++)
		assert_false(kb_yaml_is_null(kb_yaml_get(root, not_nulls[i])));
	assert_true(kb_yaml_is_null(NULL));
	assert_true(kb_yaml_is_null(kb_yaml_get(root, "missing")));
	kb_yaml_file_release(&f);
}

static void yaml_names_kinds_for_messages(void **state)
{
	kb_yaml_file f;
	load_ok("[a, {b: c}, [d]]\n", &f);
	const kb_yaml_node *s = f.docs[0];
	assert_string_equal(kb_yaml_kind_name(s->items[0]), "a string");
	assert_string_equal(kb_yaml_kind_name(s->items[1]), "a mapping");
	assert_string_equal(kb_yaml_kind_name(s->items[2]), "a list");
	assert_string_equal(kb_yaml_kind_name(s), "a list");
	assert_null(kb_yaml_str(s));
	assert_null(kb_yaml_str(NULL));
	kb_yaml_file_release(&f);
}

static void yaml_reports_syntax_errors_with_name_line_col(void **state)
{
	load_fails("a: 1\nb: [1, 2\n", -EINVAL, "t.yaml:3:1: ");
	load_fails("a: 1\n  b: 2\n", -EINVAL, "t.yaml:2:4: mapping values are not allowed");
	load_fails("a: \"unterminated\n", -EINVAL, "t.yaml:2:1: ");
	load_fails("a: *\n", -EINVAL, "t.yaml:1:5: did not find expected");
	load_fails("- a\nb: c\n", -EINVAL, "t.yaml:2:1: ");
	load_fails("a: 1\nb: \x01\n", -EINVAL, "t.yaml:2:4: control characters are not allowed");
	load_fails("a: \xff\n", -EINVAL, "t.yaml:1:4: invalid leading UTF-8 octet");
}

static void yaml_load_file_reads_and_names_the_file(void **state)
{
	char path[] = "/tmp/kb_yaml_test_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "kind: Pod\nmetadata:\n  name: p\n  name: q\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);

	kb_yaml_file f;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_load_file(path, &f, &err), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:4:3: duplicate key \"name\"", path);
	assert_non_null(strstr(err.msg, want));

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	text = "kind: Pod\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(kb_yaml_load_file(path, &f, &err), 0);
	assert_string_equal(f.name, path);
	assert_int_equal(f.ndocs, 1);
	kb_yaml_file_release(&f);
	kb_yaml_file_release(&f);
	unlink(path);

	assert_int_equal(kb_yaml_load_file("/nonexistent/x.yaml", &f, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/x.yaml: No such file or directory");
	kb_yaml_file_release(&f);

	assert_int_equal(kb_yaml_load_file("/tmp", &f, &err), -EISDIR);
	kb_yaml_file_release(&f);
}

static void yaml_accepts_a_null_error_pointer(void **state)
{
	kb_yaml_file f;
	assert_int_equal(kb_yaml_load_buffer("a: [", 4, NULL, &f, NULL), -EINVAL);
	assert_int_equal(kb_yaml_load_buffer(NULL, 0, NULL, &f, NULL), 0);
	assert_int_equal(f.ndocs, 0);
	kb_yaml_file_release(&f);
}

/* ---- streams ---- */

static char *temp_file(const char *text, size_t len)
{
	char *path = strdup("/tmp/kb_yaml_stream_XXXXXX");
	assert_non_null(path);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		assert_true(n > 0);
		off += (size_t)n;
	}
	close(fd);
	return path;
}

/* Streams the file (or the buffer) to the end; checks that it gives the
 * documents kb_yaml_load_file gives, at the same positions, and fails with
 * exactly the same code and message when the load fails. */
static void stream_matches_load(const char *text, size_t len, bool from_file)
{
	char *path = temp_file(text, len);
	kb_yaml_file f;
	kb_err lerr = { 0 };
	int lr = kb_yaml_load_file(path, &f, &lerr);

	kb_yaml_stream *ys;
	kb_err serr = { 0 };
	if (from_file)
		assert_int_equal(kb_yaml_stream_open_file(path, &ys, &serr), 0);
	else
		assert_int_equal(kb_yaml_stream_open_buffer(text, len, path, &ys, &serr), 0);
	assert_string_equal(kb_yaml_stream_name(ys), path);
	size_t ndocs = 0;
	const kb_yaml_node *doc;
	int sr;
	while ((sr = kb_yaml_stream_next(ys, &doc, &serr)) > 0) {
		if (lr == 0) {
			assert_true(ndocs < f.ndocs);
			assert_int_equal(doc->kind, f.docs[ndocs]->kind);
			assert_int_equal(doc->line, f.docs[ndocs]->line);
			assert_int_equal(doc->col, f.docs[ndocs]->col);
			assert_int_equal(doc->n, f.docs[ndocs]->n);
		}
		ndocs++;
	}
	if (lr != sr || (lr < 0 && strcmp(lerr.msg, serr.msg) != 0))
		fail_msg("load: %d \"%s\"; stream: %d \"%s\"", lr, lerr.msg, sr, serr.msg);
	if (lr == 0)
		assert_int_equal(ndocs, f.ndocs);
	/* The end, or the failure, is repeated. */
	kb_err again = { 0 };
	assert_int_equal(kb_yaml_stream_next(ys, &doc, &again), sr);
	if (sr < 0)
		assert_string_equal(again.msg, serr.msg);
	assert_null(kb_yaml_stream_free(ys));
	kb_yaml_file_release(&f);
	unlink(path);
	free(path);
}

static void yaml_stream_gives_what_load_gives(void **state)
{
	static const char *const texts[] = {
		"a: 1\n---\nb: [1, 2]\n---\n# only a comment\n---\n- x\n- y\n",
		"---\n---\n",
		"",
		"a: &x 1\nb: *x\n---\nc: *x\n", /* anchors are per document */
		"a: 1\n---\nb: [1, 2\n",
		"a: 1\n---\na: 1\na: 2\n",
		"a: 1\n---\nb: \x01\n",
		"a: 1\n---\nb: \xff\n",
		"a: {b: {c: {d: [1, *nope]}}}\n",
		"k: v\n---\n<<: {a: 1}\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		stream_matches_load(texts[i], strlen(texts[i]), true);
		stream_matches_load(texts[i], strlen(texts[i]), false);
	}
}

/* Errors far into a file: libyaml reads it in pieces, and a reader error
 * (a byte offset) is placed by reading the file again. */
static void yaml_stream_places_errors_deep_in_a_file(void **state)
{
	const char *doc = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n";
	static const char *const tails[] = {
		"a: \xc3\x28\n",      /* invalid UTF-8 */
		"a: b\x01\n",         /* a control character */
		"a: [1, 2\n",         /* syntax */
		"a: 1\na: 2\n",       /* a duplicate key */
		"a: \xc3\xa9t\xc3\xa9\n", /* fine */
	};
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		char *text = repeat(doc, 2000, tails[t]);
		stream_matches_load(text, strlen(text), true);
		stream_matches_load(text, strlen(text), false);
		free(text);
	}
}

/* The node limit counts the whole stream, as a load does. */
static void yaml_stream_counts_nodes_over_the_file(void **state)
{
	const char *doc = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			  "f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n---\n";
	char *text = repeat(doc, 12, "");
	stream_matches_load(text, strlen(text), true);
	kb_yaml_file f;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_load_buffer(text, strlen(text), "t.yaml", &f, &err), -E2BIG);
	free(text);
}

static void yaml_stream_open_reports_the_file(void **state)
{
	kb_yaml_stream *ys = (kb_yaml_stream *)1;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_stream_open_file("/nonexistent/x.yaml", &ys, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/x.yaml: No such file or directory");
	assert_null(ys);
	assert_int_equal(kb_yaml_stream_open_file("/tmp", &ys, &err), -EISDIR);
	assert_string_equal(err.msg, "/tmp: Is a directory");
	assert_null(ys);

	/* Too large: refused before reading (a sparse file costs nothing). */
	char path[] = "/tmp/kb_yaml_big_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, ((off_t)64 << 20) + 1), 0);
	close(fd);
	assert_int_equal(kb_yaml_stream_open_file(path, &ys, &err), -E2BIG);
	char want[128];
	snprintf(want, sizeof(want), "%s: larger than 64 MiB", path);
	assert_string_equal(err.msg, want);
	assert_null(ys);
	unlink(path);

	assert_int_equal(kb_yaml_stream_open_buffer("a: 1", ((size_t)64 << 20) + 1, NULL, &ys, &err),
			 -E2BIG);
	assert_string_equal(err.msg, "<buffer>: larger than 64 MiB");
	assert_null(kb_yaml_stream_free(NULL));
}

static void yaml_stream_reuses_its_memory_for_each_document(void **state)
{
	/* Each document is built in the space the one before used (from the
	 * second on, once the arena's kept chunk is as large as a document
	 * needs): a long stream takes no more memory than its largest
	 * document. */
	char *text = repeat("metadata: {name: p, labels: {a: b, c: d}}\nspec: [1, 2, 3]\n---\n", 5000,
			    "");
	kb_yaml_stream *ys;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_stream_open_buffer(text, strlen(text), "t.yaml", &ys, &err), 0);
	const kb_yaml_node *doc;
	const kb_yaml_node *first = NULL;
	size_t n = 0;
	while (kb_yaml_stream_next(ys, &doc, &err) > 0) {
		if (n == 1)
			first = doc;
		if (n >= 1)
			assert_ptr_equal(doc, first); /* the root lands where the last one was */
		assert_int_equal(doc->line, (int)(n * 3 + 1));
		assert_string_equal(kb_yaml_str(kb_yaml_get(kb_yaml_get(doc, "metadata"), "name")), "p");
		n++;
	}
	assert_int_equal(n, 5000);
	kb_yaml_stream_free(ys);
	free(text);
}

/* A pipe cannot be read again: it is read whole, and a reader error is
 * still placed exactly. */
static kb_yaml_stream *open_pipe(const char *text, char *path, size_t size)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
	close(fds[1]);
	snprintf(path, size, "/proc/self/fd/%d", fds[0]);
	kb_yaml_stream *ys;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_stream_open_file(path, &ys, &err), 0);
	close(fds[0]);
	return ys;
}

static void yaml_stream_reads_a_pipe(void **state)
{
	char path[64];
	kb_yaml_stream *ys = open_pipe("a: 1\n---\nb: 2\n", path, sizeof(path));
	const kb_yaml_node *doc;
	kb_err err = { 0 };
	assert_int_equal(kb_yaml_stream_next(ys, &doc, &err), 1);
	assert_string_equal(kb_yaml_str(kb_yaml_get(doc, "a")), "1");
	assert_int_equal(kb_yaml_stream_next(ys, &doc, &err), 1);
	assert_int_equal(doc->line, 3);
	assert_int_equal(kb_yaml_stream_next(ys, &doc, &err), 0);
	kb_yaml_stream_free(ys);

	ys = open_pipe("a: 1\n---\nb: 2\n---\nc: \xff\n", path, sizeof(path));
	assert_int_equal(kb_yaml_stream_next(ys, &doc, &err), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:5:4: invalid leading UTF-8 octet (#xFF)", path);
	assert_string_equal(err.msg, want);
	kb_yaml_stream_free(ys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(yaml_loads_each_document_of_a_stream),
		cmocka_unit_test(yaml_skips_empty_documents),
		cmocka_unit_test(yaml_records_line_and_column_of_nodes),
		cmocka_unit_test(yaml_keeps_pairs_in_file_order),
		cmocka_unit_test(yaml_rejects_duplicate_keys_with_position),
		cmocka_unit_test(yaml_allows_equal_keys_in_different_mappings),
		cmocka_unit_test(yaml_resolves_aliases_to_the_anchored_node),
		cmocka_unit_test(yaml_rejects_unknown_alias),
		cmocka_unit_test(yaml_forgets_anchors_at_each_document),
		cmocka_unit_test(yaml_rejects_recursive_alias),
		cmocka_unit_test(yaml_rejects_merge_keys_and_non_string_keys),
		cmocka_unit_test(yaml_limits_nesting_depth),
		cmocka_unit_test(yaml_limits_depth_through_aliases),
		cmocka_unit_test(yaml_limits_alias_expansion),
		cmocka_unit_test(yaml_limits_input_size),
		cmocka_unit_test(yaml_marks_plain_and_quoted_scalars),
		cmocka_unit_test(yaml_int_reads_plain_integers_only),
		cmocka_unit_test(yaml_bool_reads_the_six_spellings),
		cmocka_unit_test(yaml_double_reads_plain_numbers),
		cmocka_unit_test(yaml_is_null_only_for_plain_null_spellings),
		cmocka_unit_test(yaml_names_kinds_for_messages),
		cmocka_unit_test(yaml_reports_syntax_errors_with_name_line_col),
		cmocka_unit_test(yaml_load_file_reads_and_names_the_file),
		cmocka_unit_test(yaml_accepts_a_null_error_pointer),
		cmocka_unit_test(yaml_stream_gives_what_load_gives),
		cmocka_unit_test(yaml_stream_places_errors_deep_in_a_file),
		cmocka_unit_test(yaml_stream_counts_nodes_over_the_file),
		cmocka_unit_test(yaml_stream_open_reports_the_file),
		cmocka_unit_test(yaml_stream_reuses_its_memory_for_each_document),
		cmocka_unit_test(yaml_stream_reads_a_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* fuzz_json_doc.c - kb_json_load_buffer must survive any input without leaks,
 * build only sane trees, and build the tree kb_yaml_load_buffer builds
 * whenever both accept the input. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_doc.h"
#include "base/yaml_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True when text is a JSON number, true, false or null: what the JSON
 * loader may put in a plain scalar. */
static bool json_plain(const char *s, size_t len)
{
	if ((len == 4 && (memcmp(s, "true", 4) == 0 || memcmp(s, "null", 4) == 0)) ||
	    (len == 5 && memcmp(s, "false", 5) == 0))
		return true;
	size_t i = 0;
	if (i < len && s[i] == '-')
		i++;
	if (i < len && s[i] == '0') {
		i++;
	} else if (i < len && s[i] >= '1' && s[i] <= '9') {
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		return false;
	}
	if (i < len && s[i] == '.') {
		if (++i == len || s[i] < '0' || s[i] > '9')
			return false;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == len || s[i] < '0' || s[i] > '9')
			return false;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == len;
}

/* Checks a tree the JSON loader built and calls every accessor on each
 * node; counts the nodes. */
static void walk(const kb_yaml_node *n, int depth, size_t *nodes)
{
	/* 64 collections deep at most, and a scalar (or key) inside the last */
	if (!n || depth > (n->kind == KB_YAML_SCALAR ? 65 : 64) || n->line < 1 || n->col < 1)
		abort();
	(*nodes)++;
	int64_t i;
	bool b;
	double d;
	(void)kb_yaml_int(n, &i);
	(void)kb_yaml_bool(n, &b);
	(void)kb_yaml_double(n, &d);
	(void)kb_yaml_is_null(n);
	(void)kb_yaml_kind_name(n);
	switch (n->kind) {
	case KB_YAML_SCALAR:
		if (!n->str || n->str[n->len] != '\0' || n->n != 0)
			abort();
		if (n->plain && !json_plain(n->str, n->len))
			abort();
		break;
	case KB_YAML_MAP:
		if (!n->pairs || n->items)
			abort();
		for (size_t k = 0; k < n->n; k++) {
			const kb_yaml_node *key = n->pairs[k].key;
			if (!key || key->kind != KB_YAML_SCALAR || key->plain)
				abort();
			walk(key, depth + 1, nodes);
			/* Keys are unique: a key without a NUL inside finds its value. */
			if (strlen(key->str) == key->len &&
			    kb_yaml_get(n, key->str) != n->pairs[k].value)
				abort();
			walk(n->pairs[k].value, depth + 1, nodes);
		}
		break;
	case KB_YAML_SEQ:
		if (!n->items || n->pairs)
			abort();
		for (size_t k = 0; k < n->n; k++)
			walk(n->items[k], depth + 1, nodes);
		break;
	default:
		abort();
	}
}

/* Whether the trees agree, node by node; positions only when asked. */
static bool same_tree(const kb_yaml_node *a, const kb_yaml_node *b, bool positions)
{
	if (a->kind != b->kind || a->n != b->n)
		return false;
	if (positions && (a->line != b->line || a->col != b->col))
		return false;
	switch (a->kind) {
	case KB_YAML_SCALAR:
		return a->len == b->len && a->plain == b->plain &&
		       memcmp(a->str, b->str, a->len + 1) == 0;
	case KB_YAML_MAP:
		for (size_t i = 0; i < a->n; i++)
			if (!same_tree(a->pairs[i].key, b->pairs[i].key, positions) ||
			    !same_tree(a->pairs[i].value, b->pairs[i].value, positions))
				return false;
		return true;
	case KB_YAML_SEQ:
		for (size_t i = 0; i < a->n; i++)
			if (!same_tree(a->items[i], b->items[i], positions))
				return false;
		return true;
	}
	return false;
}

/* libyaml takes U+0085, U+2028 and U+2029 for line breaks, even inside a
 * quoted string, where JSON takes them for text (see json_doc.h). */
static bool has_unicode_break(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i + 1 < size; i++) {
		if (data[i] == 0xc2 && data[i + 1] == 0x85)
			return true;
		if (i + 2 < size && data[i] == 0xe2 && data[i + 1] == 0x80 &&
		    (data[i + 2] == 0xa8 || data[i + 2] == 0xa9))
			return true;
	}
	return false;
}

static bool only_space(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (!strchr(" \t\r\n", data[i]) || data[i] == '\0')
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kb_yaml_file f;
	kb_err err = { 0 };
	int r = kb_json_load_buffer((const char *)data, size, "fuzz.json", &f, &err);
	if (r == 0) {
		if (err.code != 0 || !f.docs || !f.name || strcmp(f.name, "fuzz.json") != 0)
			abort();
		if (f.ndocs > 1 || (f.ndocs == 0) != only_space(data, size))
			abort();
		size_t nodes = 0;
		if (f.ndocs)
			walk(f.docs[0], 1, &nodes);

		/* Valid JSON: where libyaml reads it too, the trees agree. */
		kb_yaml_file y;
		if (kb_yaml_load_buffer((const char *)data, size, "fuzz.json", &y, NULL) == 0) {
			bool unicode_break = has_unicode_break(data, size);
			if (unicode_break ? y.ndocs > 1 : y.ndocs != f.ndocs)
				abort();
			if (!unicode_break && f.ndocs && !same_tree(f.docs[0], y.docs[0], true))
				abort();
			kb_yaml_file_release(&y);
		}
	} else if (err.code != r || strncmp(err.msg, "fuzz.json:", 10) != 0 ||
		   (r != -EINVAL && r != -E2BIG && r != -ENOMEM) || f.ndocs != 0 || f.docs ||
		   f.name) {
		abort();
	}
	kb_yaml_file_release(&f);
	return 0;
}

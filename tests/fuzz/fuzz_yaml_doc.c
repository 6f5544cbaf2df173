/* fuzz_yaml_doc.c - kb_yaml_load_buffer must survive any input without leaks,
 * and the accessors must survive any tree it builds. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Visits at most *budget nodes (aliases can make the tree much larger than
 * the file), calling every accessor on each. */
static void walk(const kb_yaml_node *n, int depth, size_t *budget)
{
	if (!n || *budget == 0)
		return;
	(*budget)--;
	if (depth > 65 || n->line < 1 || n->col < 1)
		abort();
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
		if (!n->str || n->str[n->len] != '\0')
			abort();
		break;
	case KB_YAML_MAP:
		for (size_t k = 0; k < n->n; k++) {
			if (n->pairs[k].key->kind != KB_YAML_SCALAR)
				abort();
			/* A key with a NUL inside ("a\0b") cannot be looked up by text. */
			const kb_yaml_node *key = n->pairs[k].key;
			if (strlen(key->str) == key->len && kb_yaml_get(n, key->str) == NULL)
				abort();
			walk(n->pairs[k].value, depth + 1, budget);
		}
		break;
	case KB_YAML_SEQ:
		for (size_t k = 0; k < n->n; k++)
			walk(n->items[k], depth + 1, budget);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kb_yaml_file f;
	kb_err err = { 0 };
	int r = kb_yaml_load_buffer((const char *)data, size, "fuzz.yaml", &f, &err);
	if (r == 0) {
		size_t budget = 100000;
		for (size_t i = 0; i < f.ndocs; i++)
			walk(f.docs[i], 1, &budget);
	} else if (err.code != r || err.msg[0] == '\0' ||
		   (r != -EINVAL && r != -E2BIG && r != -ENOMEM)) {
		abort();
	}
	kb_yaml_file_release(&f);
	return 0;
}

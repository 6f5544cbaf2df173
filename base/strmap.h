/* strmap.h - a hash map from NUL-terminated strings to integers.
 *
 * Open addressing with linear probing and tombstones. The map does NOT copy
 * keys: each key must stay valid and unchanged while it is in the map (the
 * cache keys its objects by strings the objects themselves own).
 *
 * Iteration order is the table's order and must never decide anything a user
 * sees: callers that need an order sort (see docs/style.md, "Determinism").
 */
#ifndef KB_BASE_STRMAP_H
#define KB_BASE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_strmap_slot {
	const char *key; /* NULL: empty; KB_STRMAP_TOMBSTONE: deleted */
	uint64_t hash;
	int64_t value;
} kb_strmap_slot;

typedef struct kb_strmap {
	kb_strmap_slot *slots;
	size_t cap;  /* power of two, or 0 */
	size_t n;    /* live keys */
	size_t used; /* live keys + tombstones */
} kb_strmap;

void kb_strmap_init(kb_strmap *m);
void kb_strmap_release(kb_strmap *m);

/* Sets key to value, replacing any earlier value. Returns 0 or -ENOMEM.
 * Cost: amortised O(1). */
int kb_strmap_put(kb_strmap *m, const char *key, int64_t value);

/* Finds key. Returns true and writes *ret_value if present. */
bool kb_strmap_get(const kb_strmap *m, const char *key, int64_t *ret_value);

/* Removes key. Returns true if it was present. */
bool kb_strmap_del(kb_strmap *m, const char *key);

/* 64-bit FNV-1a hash of a string. */
uint64_t kb_hash_str(const char *s);

#endif

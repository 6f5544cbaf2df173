/* arena.h - memory that lives for one session (or one parse) and is freed in one call.
 *
 * An arena hands out memory by bumping a pointer inside chunks; nothing is
 * freed piece by piece. The first chunk is small (1 KiB) and each new one
 * doubles, up to chunk_size, so an arena per decoded object stays small. kb_arena_release() frees every chunk at once.
 * The session, the scheduler configuration and decoded manifests each own one.
 *
 * Allocation failure: these functions return NULL only when malloc fails.
 */
#ifndef KB_BASE_ARENA_H
#define KB_BASE_ARENA_H

#include <stddef.h>

typedef struct kb_arena_chunk kb_arena_chunk;

typedef struct kb_arena {
	kb_arena_chunk *head; /* newest chunk first */
	size_t chunk_size;    /* largest size of a new chunk */
	size_t next_chunk;    /* size of the next chunk: starts small, doubles up to chunk_size */
	size_t allocated;     /* bytes handed out, for metrics */
} kb_arena;

/* Prepares caller storage. No memory is taken until the first allocation. */
void kb_arena_init(kb_arena *a);

/* Frees every chunk. The arena can be used again afterwards. */
void kb_arena_release(kb_arena *a);

/* Returns n bytes aligned to 16, zeroed. Cost: O(1), or one malloc. */
void *kb_arena_alloc(kb_arena *a, size_t n);

/* Returns an array of count elements of size sz, zeroed; NULL on overflow. */
void *kb_arena_calloc(kb_arena *a, size_t count, size_t sz);

/* Copies a NUL-terminated string (NULL gives NULL). */
char *kb_arena_strdup(kb_arena *a, const char *s);

/* Copies n bytes of s and terminates them. */
char *kb_arena_strndup(kb_arena *a, const char *s, size_t n);

/* printf into the arena. */
char *kb_arena_printf(kb_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

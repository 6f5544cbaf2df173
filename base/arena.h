/* arena.h - memory that lives for one session (or one parse) and is freed in one call.
 *
 * An arena hands out memory by bumping a pointer inside chunks; nothing is
 * freed piece by piece. The first chunk is small (1 KiB) and each new one
 * doubles, up to chunk_size; a block larger than a quarter of the chunk
 * size gets a chunk of its own. kb_arena_release() frees every chunk at
 * once; kb_arena_reset() keeps one chunk for the next round (a parser that
 * fills and empties an arena per document).
 * The session, the scheduler configuration and the YAML trees each own one.
 *
 * Alignment: kb_arena_alloc() and kb_arena_calloc() return memory aligned
 * to 16; strings (kb_arena_strdup and friends) are packed with no padding.
 *
 * Large blocks (a session's task, node and job arrays): when an arena
 * releases one of 1 MiB or more, it is kept aside (a few, per thread) for
 * the next arena that asks for a block of about the same size, and one of
 * 4 MiB or more asks for huge pages: a session makes the same arrays every
 * period, and memory fresh from the kernel costs a page fault per page
 * (see arena.c).
 *
 * Copying out: a decoder can build a structure in a scratch arena, then
 * move everything it allocated into one exact-size block with
 * kb_arena_copy_out() and rebase its pointers with kb_arena_relocate()
 * (cache/objects.c does this for every decoded object).
 *
 * Allocation failure: these functions return NULL only when malloc fails.
 */
#ifndef KB_BASE_ARENA_H
#define KB_BASE_ARENA_H

#include <stdarg.h>
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

/* Forgets every allocation but keeps the current chunk (the largest one
 * made so far, unless a large block came last) for the next allocations;
 * frees the others. Pointers handed out before are invalid afterwards.
 * Cost: one free per other chunk. */
void kb_arena_reset(kb_arena *a);

/* Returns n bytes aligned to 16, zeroed. Cost: O(1), or one malloc. */
void *kb_arena_alloc(kb_arena *a, size_t n);

/* Returns an array of count elements of size sz, zeroed; NULL on overflow. */
void *kb_arena_calloc(kb_arena *a, size_t count, size_t sz);

/* Copies a NUL-terminated string (NULL gives NULL). Not aligned. */
char *kb_arena_strdup(kb_arena *a, const char *s);

/* Copies n bytes of s and terminates them. Not aligned. */
char *kb_arena_strndup(kb_arena *a, const char *s, size_t n);

/* printf into the arena. Not aligned. NULL on -ENOMEM. */
char *kb_arena_printf(kb_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *kb_arena_vprintf(kb_arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* The size of the block kb_arena_copy_out() fills: every chunk's used
 * bytes, each rounded up to 16. O(chunks). */
size_t kb_arena_copy_size(const kb_arena *a);

/* Copies every chunk's used bytes into dst (kb_arena_copy_size(a) bytes,
 * aligned to 16 like the arena's own memory), oldest chunk first. The
 * arena is unchanged. O(bytes). */
void kb_arena_copy_out(const kb_arena *a, void *dst);

/* Where p, a pointer into memory handed out by a, lives in the copy at dst
 * made by kb_arena_copy_out(); a pointer not into a (NULL, a string
 * literal, memory that already lives in dst) comes back unchanged, so
 * rebasing a pointer twice is harmless. O(chunks). */
void *kb_arena_relocate(const kb_arena *a, const void *p, void *dst);

#endif

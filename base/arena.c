#include "base/arena.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct kb_arena_chunk {
	kb_arena_chunk *next;
	size_t size;
	size_t used;
	bool large; /* a large block's own chunk (see big_chunk) */
	_Alignas(16) unsigned char data[];
};

#define KB_ARENA_DEFAULT_CHUNK ((size_t)64 * 1024)
#define KB_ARENA_FIRST_CHUNK 1024u
#define ALIGN16(n) (((n) + 15u) & ~(size_t)15u)

void kb_arena_init(kb_arena *a)
{
	a->head = NULL;
	a->chunk_size = KB_ARENA_DEFAULT_CHUNK;
	a->next_chunk = KB_ARENA_FIRST_CHUNK;
	a->allocated = 0;
}

static void drop_chunk(kb_arena_chunk *c);

void kb_arena_release(kb_arena *a)
{
	kb_arena_chunk *c = a->head;
	while (c) {
		kb_arena_chunk *next = c->next;
		drop_chunk(c);
		c = next;
	}
	a->head = NULL;
	a->allocated = 0;
	a->next_chunk = KB_ARENA_FIRST_CHUNK;
}

void kb_arena_reset(kb_arena *a)
{
	kb_arena_chunk *keep = a->head;
	if (!keep)
		return;
	kb_arena_chunk *c = keep->next;
	while (c) {
		kb_arena_chunk *next = c->next;
		drop_chunk(c);
		c = next;
	}
	keep->next = NULL;
	keep->used = 0;
	a->allocated = 0;
}

/* ---- large blocks ----
 *
 * A session makes the same large arrays every period (a task array is tens
 * of MB at 150,000 pods) and frees them when it ends. Memory fresh from
 * the kernel costs a page fault per page on first touch, which costs more
 * than filling it (on virtual machines, many times more). So:
 *  - a block of 4 MiB or more asks for huge pages where the kernel offers
 *    them on request (THP "madvise"), one fault per 2 MiB;
 *  - a released block of 1 MiB or more is parked, per thread, and the next
 *    one that it fits (at most a quarter bigger than asked) reuses it,
 *    cleared. A large block that nothing parked fits frees everything
 *    parked before taking fresh memory, so parked memory stays only while
 *    the same sizes keep coming back, and never stands beside a fresh
 *    block that could have reused it.
 * Parked memory is at most KB_ARENA_PARK chunks; it shows in the RSS
 * between sessions, as the old chunks would in malloc's free lists. */
#define KB_ARENA_PARK_BLOCK ((size_t)1 << 20)
#define KB_ARENA_HUGE_BLOCK ((size_t)4 << 20)
#define KB_HUGE_PAGE ((uintptr_t)2 << 20)
#define KB_ARENA_PARK 16

static _Thread_local struct {
	kb_arena_chunk *c[KB_ARENA_PARK];
	size_t n;
} park;

static void unpark_all(void)
{
	for (size_t i = 0; i < park.n; i++)
		free(park.c[i]);
	park.n = 0;
}

/* Frees a chunk, or parks it when it is a large block's chunk of 1 MiB or
 * more and there is room. */
static void drop_chunk(kb_arena_chunk *c)
{
	if (c->large && c->size >= KB_ARENA_PARK_BLOCK && park.n < KB_ARENA_PARK) {
		park.c[park.n++] = c;
		return;
	}
	free(c);
}

/* A parked chunk for need bytes: the smallest that holds them with at most
 * a quarter to spare, taken out of the park; NULL (after emptying the
 * park) when none fits. */
static kb_arena_chunk *unpark(size_t need)
{
	size_t best = park.n;
	for (size_t i = 0; i < park.n; i++) {
		size_t sz = park.c[i]->size;
		if (sz >= need && sz - need <= need / 4 &&
		    (best == park.n || sz < park.c[best]->size))
			best = i;
	}
	if (best == park.n) {
		unpark_all();
		return NULL;
	}
	kb_arena_chunk *c = park.c[best];
	park.c[best] = park.c[--park.n];
	return c;
}

/* A chunk of its own for a large block of need bytes, zeroed (its size is
 * what it holds: a reused chunk may hold more). */
static kb_arena_chunk *big_chunk(size_t need)
{
	if (need > SIZE_MAX - sizeof(kb_arena_chunk))
		return NULL;
	if (need >= KB_ARENA_PARK_BLOCK) {
		kb_arena_chunk *c = unpark(need);
		if (c) {
			memset(c->data, 0, need);
			return c;
		}
	}
	/* calloc: fresh pages from the kernel are not cleared twice. */
	kb_arena_chunk *big = calloc(1, sizeof(*big) + need);
	if (!big)
		return NULL;
	big->size = need;
	big->large = true;
#ifdef MADV_HUGEPAGE
	if (need >= KB_ARENA_HUGE_BLOCK) {
		uintptr_t lo = ((uintptr_t)big->data + KB_HUGE_PAGE - 1) & ~(KB_HUGE_PAGE - 1);
		uintptr_t hi = ((uintptr_t)big->data + need) & ~(KB_HUGE_PAGE - 1);
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure is fine */
	}
#endif
	return big;
}

/* n bytes at the given alignment (1 or 16). A block that does not fit the
 * head chunk starts a new one, or gets a chunk of its own when it is large;
 * *ret_zeroed says whether the bytes are known to be zero (a large block). */
static void *take(kb_arena *a, size_t n, size_t align, bool *ret_zeroed)
{
	*ret_zeroed = false;
	kb_arena_chunk *c = a->head;
	if (c) {
		size_t at = align > 1 ? ALIGN16(c->used) : c->used;
		if (at <= c->size && c->size - at >= n) {
			c->used = at + n;
			a->allocated += n;
			return c->data + at;
		}
	}
	size_t need = ALIGN16(n);
	if (need < n)
		return NULL;
	size_t size = a->next_chunk < a->chunk_size ? a->next_chunk : a->chunk_size;
	while (size < a->chunk_size && need > size / 4)
		size *= 2;
	if (need > size / 4) {
		/* Large block: a chunk of its own, kept behind the current head
		 * so the head's free space stays usable. */
		kb_arena_chunk *big = big_chunk(need);
		if (!big)
			return NULL;
		big->used = n;
		if (c) {
			big->next = c->next;
			c->next = big;
		} else {
			big->next = NULL;
			a->head = big;
		}
		a->allocated += n;
		*ret_zeroed = true;
		return big->data;
	}
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	if (size * 2 <= a->chunk_size)
		a->next_chunk = size * 2;
	else
		a->next_chunk = a->chunk_size;
	c->size = size;
	c->large = false;
	c->used = n;
	c->next = a->head;
	a->head = c;
	a->allocated += n;
	return c->data;
}

void *kb_arena_alloc(kb_arena *a, size_t n)
{
	bool zeroed;
	void *p = take(a, n, 16, &zeroed);
	if (p && !zeroed)
		memset(p, 0, n);
	return p;
}

void *kb_arena_calloc(kb_arena *a, size_t count, size_t sz)
{
	if (sz && count > SIZE_MAX / sz)
		return NULL;
	return kb_arena_alloc(a, count * sz);
}

char *kb_arena_strndup(kb_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	bool zeroed;
	char *d = take(a, n + 1, 1, &zeroed);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *kb_arena_strdup(kb_arena *a, const char *s)
{
	return s ? kb_arena_strndup(a, s, strlen(s)) : NULL;
}

char *kb_arena_vprintf(kb_arena *a, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *d = NULL;
	bool zeroed;
	if (n >= 0 && (d = take(a, (size_t)n + 1, 1, &zeroed)))
		(void)vsnprintf(d, (size_t)n + 1, fmt, again); /* sized above: cannot truncate */
	va_end(again);
	return d;
}

char *kb_arena_printf(kb_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = kb_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return d;
}

size_t kb_arena_copy_size(const kb_arena *a)
{
	size_t n = 0;
	for (const kb_arena_chunk *c = a->head; c; c = c->next)
		n += ALIGN16(c->used);
	return n;
}

void kb_arena_copy_out(const kb_arena *a, void *dst)
{
	unsigned char *d = dst;
	for (const kb_arena_chunk *c = a->head; c; c = c->next) {
		memcpy(d, c->data, c->used);
		d += ALIGN16(c->used);
	}
}

void *kb_arena_relocate(const kb_arena *a, const void *p, void *dst)
{
	size_t off = 0;
	uintptr_t u = (uintptr_t)p;
	for (const kb_arena_chunk *c = a->head; c; c = c->next) {
		uintptr_t start = (uintptr_t)c->data;
		/* The end is included: a zero-size block may sit there. */
		if (u >= start && u <= start + c->used)
			return (unsigned char *)dst + off + (u - start);
		off += ALIGN16(c->used);
	}
	return (void *)p;
}

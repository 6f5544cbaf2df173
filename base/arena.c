#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_arena_chunk {
	kb_arena_chunk *next;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

#define KB_ARENA_DEFAULT_CHUNK (64u * 1024u)
#define KB_ARENA_FIRST_CHUNK 1024u

void kb_arena_init(kb_arena *a)
{
	a->head = NULL;
	a->chunk_size = KB_ARENA_DEFAULT_CHUNK;
	a->next_chunk = KB_ARENA_FIRST_CHUNK;
	a->allocated = 0;
}

void kb_arena_release(kb_arena *a)
{
	kb_arena_chunk *c = a->head;
	while (c) {
		kb_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->allocated = 0;
	a->next_chunk = KB_ARENA_FIRST_CHUNK;
}

void *kb_arena_alloc(kb_arena *a, size_t n)
{
	size_t need = (n + 15u) & ~(size_t)15u;
	if (need < n)
		return NULL;
	kb_arena_chunk *c = a->head;
	if (!c || c->size - c->used < need) {
		size_t size = a->next_chunk < a->chunk_size ? a->next_chunk : a->chunk_size;
		while (size < a->chunk_size && need > size / 4)
			size *= 2;
		if (need > size / 4) {
			/* Large block: a chunk of its own, kept behind the current head
			 * so the head's free space stays usable. */
			kb_arena_chunk *big = malloc(sizeof(*big) + need);
			if (!big)
				return NULL;
			big->size = need;
			big->used = need;
			if (c) {
				big->next = c->next;
				c->next = big;
			} else {
				big->next = NULL;
				a->head = big;
			}
			a->allocated += need;
			memset(big->data, 0, need);
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
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += need;
	a->allocated += need;
	memset(p, 0, need);
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
	char *d = kb_arena_alloc(a, n + 1);
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

char *kb_arena_printf(kb_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *d = kb_arena_alloc(a, (size_t)n + 1);
	if (!d)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return d;
}

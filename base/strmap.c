#include "base/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char kb_tombstone_[1];
#define KB_STRMAP_TOMBSTONE (kb_tombstone_)

uint64_t kb_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void kb_strmap_init(kb_strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void kb_strmap_release(kb_strmap *m)
{
	free(m->slots);
	kb_strmap_init(m);
}

static kb_strmap_slot *find_slot(const kb_strmap *m, const char *key, uint64_t h)
{
	size_t mask = m->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		kb_strmap_slot *s = &m->slots[i];
		if (!s->key)
			return NULL;
		if (s->key != KB_STRMAP_TOMBSTONE && s->hash == h && strcmp(s->key, key) == 0)
			return s;
	}
}

static int rehash(kb_strmap *m, size_t ncap)
{
	kb_strmap_slot *slots = calloc(ncap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		kb_strmap_slot *s = &m->slots[i];
		if (!s->key || s->key == KB_STRMAP_TOMBSTONE)
			continue;
		size_t j = s->hash & (ncap - 1);
		while (slots[j].key)
			j = (j + 1) & (ncap - 1);
		slots[j] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = ncap;
	m->used = m->n;
	return 0;
}

int kb_strmap_put(kb_strmap *m, const char *key, int64_t value)
{
	uint64_t h = kb_hash_str(key);
	if (m->cap) {
		kb_strmap_slot *s = find_slot(m, key, h);
		if (s) {
			s->value = value;
			return 0;
		}
	}
	if ((m->used + 1) * 4 > m->cap * 3) {
		size_t ncap = m->cap ? m->cap : 16;
		while ((m->n + 1) * 2 > ncap)
			ncap *= 2;
		int r = rehash(m, ncap);
		if (r < 0)
			return r;
	}
	size_t mask = m->cap - 1;
	size_t i = h & mask;
	while (m->slots[i].key && m->slots[i].key != KB_STRMAP_TOMBSTONE)
		i = (i + 1) & mask;
	if (!m->slots[i].key)
		m->used++;
	m->slots[i].key = key;
	m->slots[i].hash = h;
	m->slots[i].value = value;
	m->n++;
	return 0;
}

bool kb_strmap_get(const kb_strmap *m, const char *key, int64_t *ret_value)
{
	if (!m->cap)
		return false;
	kb_strmap_slot *s = find_slot(m, key, kb_hash_str(key));
	if (!s)
		return false;
	if (ret_value)
		*ret_value = s->value;
	return true;
}

bool kb_strmap_del(kb_strmap *m, const char *key)
{
	if (!m->cap)
		return false;
	kb_strmap_slot *s = find_slot(m, key, kb_hash_str(key));
	if (!s)
		return false;
	s->key = KB_STRMAP_TOMBSTONE;
	m->n--;
	return true;
}

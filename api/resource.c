#include "api/resource.h"

#include "base/json_out.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"

void kb_resnames_init(kb_resnames *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->name[KB_RES_CPU], "cpu");
	strcpy(t->name[KB_RES_MEMORY], "memory");
	strcpy(t->name[KB_RES_PODS], "pods");
	t->n = KB_RES_NFIXED;
}

int kb_resnames_find(const kb_resnames *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0)
			return i;
	return -1;
}

/* The known index of name, or -1. */
static int find_known(const kb_resnames *t, const char *name)
{
	for (int k = 0; k < t->nknown; k++)
		if (strcmp(t->known[k], name) == 0)
			return k;
	return -1;
}

int kb_resnames_intern(kb_resnames *t, const char *name)
{
	int i = kb_resnames_find(t, name);
	if (i >= 0)
		return i;
	if (strlen(name) >= KB_RES_NAME_MAX)
		return -ENAMETOOLONG;
	if (t->n >= KB_RES_MAX)
		return -ENOSPC;
	strcpy(t->name[t->n], name);
	int k = find_known(t, name);
	if (k >= 0)
		t->known_slot[k] = (int8_t)t->n;
	return t->n++;
}

char *kb_resnames_format_asked(const kb_resnames *t, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	buf[0] = '\0';
	size_t at = 0;
	for (int i = KB_RES_NFIXED; i < t->n && i < KB_RES_MAX; i++) {
		const char *sep = i > KB_RES_NFIXED ? ", " : "";
		size_t need = strlen(sep) + strlen(t->name[i]);
		if (at + need + 4 > size) { /* room for "..." and the NUL */
			if (at + 4 <= size)
				memcpy(buf + at, "...", 4);
			return buf;
		}
		at += (size_t)snprintf(buf + at, size - at, "%s%s", sep, t->name[i]);
	}
	return buf;
}

int kb_resnames_intern_known(kb_resnames *t, const char *name)
{
	if (kb_resnames_find(t, name) >= 0)
		return -EEXIST;
	int k = find_known(t, name);
	if (k >= 0)
		return k;
	if (strlen(name) >= KB_RES_NAME_MAX)
		return -ENAMETOOLONG;
	if (t->nknown >= KB_RES_KNOWN_MAX)
		return -ENOSPC;
	strcpy(t->known[t->nknown], name);
	t->known_slot[t->nknown] = -1;
	return t->nknown++;
}

int64_t kb_res_extra_get(const kb_res_extra *v, uint32_t n, int32_t known)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].known == known)
			return v[i].milli;
	return 0;
}

/* The entry of known in s, added (at 0) when absent; NULL when s is full. */
static kb_res_extra *spill_entry(kb_res_spill *s, int32_t known)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->e[i].known == known)
			return &s->e[i];
	if (s->n >= KB_RES_SPILL_MAX)
		return NULL;
	s->e[s->n] = (kb_res_extra){.known = known, .milli = 0};
	return &s->e[s->n++];
}

int kb_res_spill_set(kb_res_spill *s, int32_t known, int64_t milli)
{
	kb_res_extra *e = spill_entry(s, known);
	if (!e)
		return -ENOSPC;
	e->milli = milli;
	return 0;
}

int kb_res_spill_add(kb_res_spill *a, const kb_res_spill *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		kb_res_extra *e = spill_entry(a, b->e[i].known);
		if (!e)
			return -ENOSPC;
		if (__builtin_add_overflow(e->milli, b->e[i].milli, &e->milli))
			return -ERANGE;
	}
	return 0;
}

int kb_res_spill_max(kb_res_spill *a, const kb_res_spill *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		kb_res_extra *e = spill_entry(a, b->e[i].known);
		if (!e)
			return -ENOSPC;
		if (b->e[i].milli > e->milli)
			e->milli = b->e[i].milli;
	}
	return 0;
}

bool kb_res_is_best_effort(const kb_res *a)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (i != KB_RES_PODS && a->q[i] != 0)
			return false;
	return true;
}

bool kb_res_any_negative(const kb_res *a)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (a->q[i] < 0)
			return true;
	return false;
}

void kb_res_max(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (b->q[i] > a->q[i])
			a->q[i] = b->q[i];
}

char *kb_res_format_one(int64_t milli, const kb_resnames *t, int idx, char *buf)
{
	return kb_quantity_format(milli, kb_quantity_format_for(t->name[idx]), buf);
}

char *kb_res_format(const kb_res *a, const kb_resnames *t, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < t->n && off < size; i++) {
		if (a->q[i] == 0)
			continue;
		char q[KB_QUANTITY_BUFSZ];
		int w = snprintf(buf + off, size - off, "%s%s: %s", off ? ", " : "", t->name[i],
				 kb_res_format_one(a->q[i], t, i, q));
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}

void kb_res_put_json(FILE *out, const kb_res *r, const kb_resnames *names)
{
	fputc('{', out);
	bool first = true;
	for (int i = 0; i < names->n; i++) {
		if (i == KB_RES_PODS || r->q[i] == 0)
			continue;
		char q[KB_QUANTITY_BUFSZ];
		fputs(first ? "" : ", ", out);
		kb_json_put_str(out, names->name[i]);
		fputs(": ", out);
		kb_json_put_str(out, kb_res_format_one(r->q[i], names, i, q));
		first = false;
	}
	fputc('}', out);
}

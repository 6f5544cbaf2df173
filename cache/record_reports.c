/* record_reports.c - a session's reports by name (see record_reports.h). */
#include "cache/record_reports.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"

void kb_report_text_job(const kb_job_status *s, char *buf, size_t n)
{
	(void)snprintf(buf, n,
		       "phase %s, running %d, succeeded %d, failed %d, pending %d, scheduled %d%s%s",
		       kb_pg_phase_name(s->phase), s->running, s->succeeded, s->failed, s->pending,
		       s->scheduled, s->unschedulable ? ", unschedulable: " : "",
		       s->unschedulable ? s->unschedulable : "");
}

void kb_report_text_queue(const kb_res *deserved, const kb_resnames *names, char *buf,
			  size_t n)
{
	int w = snprintf(buf, n, "deserved ");
	if (w < 0 || (size_t)w >= n)
		return;
	if (!deserved) {
		(void)snprintf(buf + w, n - (size_t)w, "(none)");
		return;
	}
	kb_res_format(deserved, names, buf + w, n - (size_t)w);
	if (buf[w] == '\0')
		(void)snprintf(buf + w, n - (size_t)w, "nothing");
}

void kb_report_text_pending(const char *reason, char *buf, size_t n)
{
	(void)snprintf(buf, n, "%s", reason ? reason : "(no reason)");
}

int kb_report_kind_parse(const char *field, kb_report_kind *ret)
{
	for (int k = 0; field && k < KB_REPORT_KINDS; k++)
		if (strcmp(field, kb_report_kind_field((kb_report_kind)k)) == 0) {
			*ret = (kb_report_kind)k;
			return 0;
		}
	return -EINVAL;
}

void kb_record_put_report(FILE *out, uint64_t n, kb_report_kind kind, const char *key,
			  const char *text)
{
	fprintf(out, "{\"r\":\"report\",\"n\":%" PRIu64 ",\"kind\":\"%s\",\"key\":", n,
		kb_report_kind_field(kind));
	kb_json_put_str(out, key);
	if (text) {
		fputs(",\"text\":", out);
		kb_json_put_str(out, text);
	} else {
		fputs(",\"gone\":true", out);
	}
	fputs("}\n", out);
}

void kb_report_book_init(kb_report_book *b)
{
	memset(b, 0, sizeof(*b));
	kb_strmap_init(&b->index);
}

static void free_entry(kb_report_entry *e)
{
	free(e->id);
	free(e->text);
	free(e->got);
}

void kb_report_book_release(kb_report_book *b)
{
	for (size_t i = 0; i < b->n; i++)
		free_entry(&b->entries[i]);
	free(b->entries);
	kb_strmap_release(&b->index);
	memset(b, 0, sizeof(*b));
}

kb_report_entry *kb_report_book_at(kb_report_book *b, kb_report_kind kind, const char *key,
				   bool add, bool *oom)
{
	const char *field = kb_report_kind_field(kind);
	size_t flen = strlen(field), klen = strlen(key);
	char stack[256], *id = stack;
	if (flen + 1 + klen + 1 > sizeof(stack) && !(id = malloc(flen + 1 + klen + 1))) {
		*oom = true;
		return NULL;
	}
	memcpy(id, field, flen);
	id[flen] = ' ';
	memcpy(id + flen + 1, key, klen + 1);
	int64_t at;
	bool found = kb_strmap_get(&b->index, id, &at);
	if (found || !add) {
		if (id != stack)
			free(id);
		return found ? &b->entries[at] : NULL;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		kb_report_entry *n = realloc(b->entries, cap * sizeof(*n));
		if (!n)
			goto oom;
		b->entries = n;
		b->cap = cap;
	}
	if (id == stack && !(id = strdup(stack)))
		goto oom;
	if (kb_strmap_put(&b->index, id, (int64_t)b->n) < 0)
		goto oom;
	kb_report_entry *e = &b->entries[b->n++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->key = id + flen + 1;
	e->kind = kind;
	return e;
oom:
	if (id != stack)
		free(id);
	*oom = true;
	return NULL;
}

int kb_report_set(char **slot, const char *text)
{
	char *t = strdup(text);
	if (!t)
		return -ENOMEM;
	free(*slot);
	*slot = t;
	return 0;
}

void kb_report_book_remove(kb_report_book *b, size_t i)
{
	kb_report_entry *e = &b->entries[i];
	(void)kb_strmap_del(&b->index, e->id);
	free_entry(e);
	if (i != b->n - 1) {
		*e = b->entries[b->n - 1];
		/* Cannot fail: the key is present, its slot is overwritten. */
		(void)kb_strmap_put(&b->index, e->id, (int64_t)i);
	}
	b->n--;
}

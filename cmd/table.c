/* table.c - aligned text tables and ages (see table.h). */
#include "cmd/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kb_table_init(kb_table *t, uint32_t ncols, const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	if (ncols == 0)
		return -EINVAL;
	t->ncols = ncols;
	int r = kb_table_add(t, headers);
	if (r < 0)
		kb_table_release(t);
	return r;
}

int kb_table_add(kb_table *t, const char *const *cells)
{
	if (t->ncols == 0)
		return -EINVAL;
	size_t n0 = t->cells.n;
	if (KB_VEC_RESERVE(&t->cells, n0 + t->ncols) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->ncols; i++) {
		const char *c = cells[i] && cells[i][0] ? cells[i] : "-";
		char *d = strdup(c);
		if (!d) {
			while (t->cells.n > n0)
				free(t->cells.v[--t->cells.n]);
			return -ENOMEM;
		}
		t->cells.v[t->cells.n++] = d;
	}
	return 0;
}

size_t kb_table_rows(const kb_table *t)
{
	return t->ncols ? t->cells.n / t->ncols - 1 : 0;
}

void kb_table_print(const kb_table *t, FILE *out)
{
	if (t->ncols == 0)
		return;
	size_t rows = t->cells.n / t->ncols;
	size_t *w = calloc(t->ncols, sizeof(*w));
	if (!w)
		return;
	for (size_t r = 0; r < rows; r++)
		for (uint32_t c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cells.v[r * t->ncols + c]);
			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < rows; r++) {
		for (uint32_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells.v[r * t->ncols + c];
			if (c + 1 == t->ncols)
				fputs(s, out);
			else
				fprintf(out, "%-*s   ", (int)w[c], s);
		}
		fputc('\n', out);
	}
	free(w);
}

void kb_table_release(kb_table *t)
{
	for (size_t i = 0; i < t->cells.n; i++)
		free(t->cells.v[i]);
	KB_VEC_RELEASE(&t->cells);
	t->ncols = 0;
}

const char *kb_format_age(int64_t ms, char *buf, size_t n)
{
	int64_t s = ms / 1000;
	if (ms < 0) {
		(void)snprintf(buf, n, "%s", s < -1 ? "<invalid>" : "0s");
		return buf;
	}
	int64_t m = s / 60, h = s / 3600, d = h / 24;
	if (s < 120)
		(void)snprintf(buf, n, "%llds", (long long)s);
	else if (m < 10 && s % 60)
		(void)snprintf(buf, n, "%lldm%llds", (long long)m, (long long)(s % 60));
	else if (m < 180)
		(void)snprintf(buf, n, "%lldm", (long long)m);
	else if (h < 8 && m % 60)
		(void)snprintf(buf, n, "%lldh%lldm", (long long)h, (long long)(m % 60));
	else if (h < 48)
		(void)snprintf(buf, n, "%lldh", (long long)h);
	else if (h < 24LL * 8 && h % 24)
		(void)snprintf(buf, n, "%lldd%lldh", (long long)d, (long long)(h % 24));
	else if (h < 24LL * 365 * 2)
		(void)snprintf(buf, n, "%lldd", (long long)d);
	else if (h < 24LL * 365 * 8 && d % 365)
		(void)snprintf(buf, n, "%lldy%lldd", (long long)(d / 365), (long long)(d % 365));
	else
		(void)snprintf(buf, n, "%lldy", (long long)(d / 365));
	return buf;
}

const char *kb_format_percent(int64_t part, int64_t total, char *buf, size_t n)
{
	double p = total > 0 ? 100.0 * (double)part / (double)total : 0.0;
	(void)snprintf(buf, n, "%.1f%%", p);
	return buf;
}

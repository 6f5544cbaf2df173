/*
 * openb_csv.c - openb trace CSV loader (see openb_csv.h).
 */
#include "bench/openb_csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_BYTES (256L << 20) /* refuse files above 256 MiB */
#define CSV_MAX_COLS 16

/* A field: a slice of the file buffer. */
struct field {
	const char *s;
	size_t len;
};

/* Known columns of each file kind: index 0.. are "roles". */
enum { NODE_SN, NODE_CPU, NODE_MEM, NODE_GPU, NODE_MODEL, NODE_NCOLS };
static const char *const node_cols[NODE_NCOLS] = {
	"sn", "cpu_milli", "memory_mib", "gpu", "model",
};
static const bool node_required[NODE_NCOLS] = { false, true, true, true, true };

enum {
	POD_NAME, POD_CPU, POD_MEM, POD_NUM_GPU, POD_GPU_MILLI, POD_GPU_SPEC,
	POD_QOS, POD_PHASE, POD_CREATION, POD_DELETION, POD_SCHEDULED,
	POD_NCOLS
};
static const char *const pod_cols[POD_NCOLS] = {
	"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
	"qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time",
};
static const bool pod_required[POD_NCOLS] = {
	false, true, true, true, true, false,
	false, false, false, false, false,
};

__attribute__((format(printf, 3, 4))) static void
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Read the whole file; returns 0 with a NUL-terminated malloc'ed buffer. */
static int read_file(const char *path, char *err, size_t errlen,
		     char **ret_buf, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r;

	if (!f) {
		r = -errno;
		set_err(err, errlen, "%s: cannot open: %s", path, strerror(-r));
		return r;
	}
	for (;;) {
		size_t n;

		if (len + 65536 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 1 << 20;
			char *nb;

			if ((long)ncap > CSV_MAX_BYTES + 65536 * 2) {
				set_err(err, errlen, "%s: file too large",
					path);
				r = -EFBIG;
				goto fail;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				set_err(err, errlen, "%s: out of memory", path);
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		n = fread(buf + len, 1, 65536, f);
		len += n;
		if (n < 65536) {
			if (ferror(f)) {
				r = -EIO;
				set_err(err, errlen, "%s: read error", path);
				goto fail;
			}
			break;
		}
	}
	fclose(f);
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
fail:
	free(buf);
	fclose(f);
	return r;
}

/* Split one line [s, e) at commas. Returns the field count, or -1 when there
 * are more than max fields. Quotes are not part of this format. */
static int split_line(const char *s, const char *e, struct field *out, int max)
{
	int n = 0;
	const char *start = s;

	if (e > s && e[-1] == '\r')
		e--;
	for (const char *p = s;; p++) {
		if (p == e || *p == ',') {
			if (n == max)
				return -1;
			out[n].s = start;
			out[n].len = (size_t)(p - start);
			n++;
			start = p + 1;
			if (p == e)
				break;
		}
	}
	return n;
}

static bool field_eq(const struct field *f, const char *str)
{
	return strlen(str) == f->len && memcmp(f->s, str, f->len) == 0;
}

/* Strict non-negative decimal integer, at most 15 digits. */
static bool parse_i64(const struct field *f, int64_t *ret)
{
	int64_t v = 0;

	if (f->len == 0 || f->len > 15)
		return false;
	for (size_t i = 0; i < f->len; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		v = v * 10 + (f->s[i] - '0');
	}
	*ret = v;
	return true;
}

/* Generic loader state. */
struct table {
	const char *path;
	char *buf;
	size_t len;
	int ncols;               /* columns in the header */
	int col_of[CSV_MAX_COLS]; /* role -> column index, -1 if absent */
};

/* Read the file and map header columns to roles. */
static int table_open(struct table *t, const char *path,
		      const char *const *names, const bool *required,
		      int nroles, char *err, size_t errlen)
{
	struct field hdr[CSV_MAX_COLS];
	const char *eol;
	int r;

	t->path = path;
	r = read_file(path, err, errlen, &t->buf, &t->len);
	if (r < 0)
		return r;
	if (t->len == 0) {
		set_err(err, errlen, "%s:1: empty file, no header", path);
		goto fail;
	}
	eol = memchr(t->buf, '\n', t->len);
	if (!eol)
		eol = t->buf + t->len;
	t->ncols = split_line(t->buf, eol, hdr, CSV_MAX_COLS);
	if (t->ncols < 0) {
		set_err(err, errlen, "%s:1: too many columns in header", path);
		goto fail;
	}
	for (int k = 0; k < nroles; k++)
		t->col_of[k] = -1;
	for (int c = 0; c < t->ncols; c++) {
		int role = -1;

		for (int k = 0; k < nroles; k++)
			if (field_eq(&hdr[c], names[k]))
				role = k;
		if (role < 0) {
			set_err(err, errlen, "%s:1: unknown column \"%.*s\"",
				path, (int)hdr[c].len, hdr[c].s);
			goto fail;
		}
		if (t->col_of[role] >= 0) {
			set_err(err, errlen, "%s:1: duplicate column \"%s\"",
				path, names[role]);
			goto fail;
		}
		t->col_of[role] = c;
	}
	for (int k = 0; k < nroles; k++) {
		if (required[k] && t->col_of[k] < 0) {
			set_err(err, errlen, "%s:1: missing column \"%s\"",
				path, names[k]);
			goto fail;
		}
	}
	return 0;
fail:
	free(t->buf);
	t->buf = NULL;
	return -EINVAL;
}

/* Iterate data lines: *pos is the offset of the next line (start after the
 * header), *lineno its 1-based number. Returns false at the end. Skips
 * empty lines. */
static bool table_next(struct table *t, size_t *pos, int *lineno,
		       const char **ret_s, const char **ret_e)
{
	while (*pos < t->len) {
		const char *s = t->buf + *pos;
		const char *e = memchr(s, '\n', t->len - *pos);

		if (!e)
			e = t->buf + t->len;
		*pos = (size_t)(e - t->buf) + 1;
		(*lineno)++;
		if (e == s || (e == s + 1 && *s == '\r'))
			continue;
		*ret_s = s;
		*ret_e = e;
		return true;
	}
	return false;
}

static size_t header_end(const struct table *t)
{
	const char *eol = memchr(t->buf, '\n', t->len);

	return eol ? (size_t)(eol - t->buf) + 1 : t->len;
}

/* Fetch an integer field of a role; reports an error on failure. */
static bool get_int(const struct table *t, const struct field *row, int role,
		    const char *name, int lineno, int64_t max, char *err,
		    size_t errlen, int64_t *ret)
{
	const struct field *f = &row[t->col_of[role]];

	if (!parse_i64(f, ret) || *ret > max) {
		set_err(err, errlen,
			"%s:%d: column \"%s\": not an integer in 0..%" PRId64
			": \"%.*s\"",
			t->path, lineno, name, max, (int)f->len, f->s);
		return false;
	}
	return true;
}

/* Grow an array of elem-sized items to hold n + 1. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *na;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	na = realloc(*arr, ncap * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = ncap;
	return 0;
}

int openb_load_nodes(const char *path, struct kb_gpu_models *models,
		     char *err, size_t errlen, struct kb_gpu_node **ret_nodes,
		     size_t *ret_count)
{
	struct table t;
	struct kb_gpu_node *nodes = NULL;
	size_t n = 0, cap = 0, pos;
	int lineno = 1, r;
	const char *s, *e;

	r = table_open(&t, path, node_cols, node_required, NODE_NCOLS, err,
		       errlen);
	if (r < 0)
		return r;
	pos = header_end(&t);
	while (table_next(&t, &pos, &lineno, &s, &e)) {
		struct field row[CSV_MAX_COLS];
		int64_t cpu, mem, gpu;
		const struct field *model;
		int model_id = -1;

		int nf = split_line(s, e, row, CSV_MAX_COLS);

		if (nf != t.ncols) {
			set_err(err, errlen, "%s:%d: expected %d fields, got %s%d",
				path, lineno, t.ncols, nf < 0 ? "more than " : "",
				nf < 0 ? CSV_MAX_COLS : nf);
			goto fail_inval;
		}
		if (!get_int(&t, row, NODE_CPU, "cpu_milli", lineno,
			     INT64_C(1) << 40, err, errlen, &cpu) ||
		    !get_int(&t, row, NODE_MEM, "memory_mib", lineno,
			     INT64_C(1) << 40, err, errlen, &mem) ||
		    !get_int(&t, row, NODE_GPU, "gpu", lineno,
			     KB_GPU_NODE_MAX_GPUS, err, errlen, &gpu))
			goto fail_inval;
		model = &row[t.col_of[NODE_MODEL]];
		if (model->len > 0 &&
		    kb_gpu_models_intern(models, model->s, model->len,
					 &model_id) < 0) {
			set_err(err, errlen,
				"%s:%d: bad GPU model \"%.*s\" (empty, too "
				"long, or more than %d models)",
				path, lineno, (int)model->len, model->s,
				KB_GPU_MODEL_MAX);
			goto fail_inval;
		}
		if (grow((void **)&nodes, &cap, n, sizeof(*nodes)) < 0) {
			set_err(err, errlen, "%s: out of memory", path);
			r = -ENOMEM;
			goto fail;
		}
		kb_gpu_node_init(&nodes[n++], cpu, mem, (int)gpu, model_id);
	}
	if (n == 0) {
		set_err(err, errlen, "%s: no nodes", path);
		goto fail_inval;
	}
	free(t.buf);
	*ret_nodes = nodes;
	*ret_count = n;
	return 0;
fail_inval:
	r = -EINVAL;
fail:
	free(nodes);
	free(t.buf);
	return r;
}

int openb_load_pods(const char *path, struct kb_gpu_models *models,
		    char *err, size_t errlen, struct kb_gpu_task **ret_tasks,
		    size_t *ret_count)
{
	struct table t;
	struct kb_gpu_task *tasks = NULL;
	size_t n = 0, cap = 0, pos;
	int lineno = 1, r;
	const char *s, *e;

	r = table_open(&t, path, pod_cols, pod_required, POD_NCOLS, err,
		       errlen);
	if (r < 0)
		return r;
	pos = header_end(&t);
	while (table_next(&t, &pos, &lineno, &s, &e)) {
		struct field row[CSV_MAX_COLS];
		int64_t cpu, mem, num_gpu, gpu_milli;
		uint64_t mask = 0;

		int nf = split_line(s, e, row, CSV_MAX_COLS);

		if (nf != t.ncols) {
			set_err(err, errlen, "%s:%d: expected %d fields, got %s%d",
				path, lineno, t.ncols, nf < 0 ? "more than " : "",
				nf < 0 ? CSV_MAX_COLS : nf);
			goto fail_inval;
		}
		if (!get_int(&t, row, POD_CPU, "cpu_milli", lineno,
			     INT64_C(1) << 40, err, errlen, &cpu) ||
		    !get_int(&t, row, POD_MEM, "memory_mib", lineno,
			     INT64_C(1) << 40, err, errlen, &mem) ||
		    !get_int(&t, row, POD_NUM_GPU, "num_gpu", lineno,
			     KB_GPU_NODE_MAX_GPUS, err, errlen, &num_gpu) ||
		    !get_int(&t, row, POD_GPU_MILLI, "gpu_milli", lineno,
			     KB_GPU_MILLI, err, errlen, &gpu_milli))
			goto fail_inval;
		if (t.col_of[POD_GPU_SPEC] >= 0) {
			const struct field *spec = &row[t.col_of[POD_GPU_SPEC]];

			if (kb_gpu_models_parse_spec(models, spec->s,
						     spec->len, &mask) < 0) {
				set_err(err, errlen,
					"%s:%d: bad gpu_spec \"%.*s\"", path,
					lineno, (int)spec->len, spec->s);
				goto fail_inval;
			}
		}
		if (grow((void **)&tasks, &cap, n, sizeof(*tasks)) < 0) {
			set_err(err, errlen, "%s: out of memory", path);
			r = -ENOMEM;
			goto fail;
		}
		if (kb_gpu_task_init(&tasks[n], cpu, mem, (int)num_gpu,
				     (int)gpu_milli, mask) < 0) {
			set_err(err, errlen,
				"%s:%d: num_gpu 1 needs gpu_milli in 1..%d",
				path, lineno, KB_GPU_MILLI);
			goto fail_inval;
		}
		n++;
	}
	if (n == 0) {
		set_err(err, errlen, "%s: no pods", path);
		goto fail_inval;
	}
	free(t.buf);
	*ret_tasks = tasks;
	*ret_count = n;
	return 0;
fail_inval:
	r = -EINVAL;
fail:
	free(tasks);
	free(t.buf);
	return r;
}

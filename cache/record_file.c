/* record_file.c - the record file's format and reader (see record_file.h). */
#include "cache/record_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json_doc.h"
#include "base/json_out.h"

/* ---- writing ------------------------------------------------------------------ */

void kb_record_put_header(FILE *out, const char *version)
{
	fprintf(out, "{\"magic\":\"%s\",\"format\":%d,\"kube_batchd\":", KB_RECORD_MAGIC,
		KB_RECORD_FORMAT);
	kb_json_put_str(out, version);
	fputs("}\n", out);
}

/* A plain scalar of the JSON loader is a number, true, false or null; any
 * other text (a tree from YAML) is written as a string. */
static bool json_literal(const char *s)
{
	return strcmp(s, "true") == 0 || strcmp(s, "false") == 0 || strcmp(s, "null") == 0 ||
	       (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'));
}

/* Recursion bounded by the tree's depth: at most 64, the JSON loader's
 * limit, for every tree the reflector hands over. */
void kb_record_put_node(FILE *out, const kb_yaml_node *n) // NOLINT(misc-no-recursion)
{
	if (!n) {
		fputs("null", out);
		return;
	}
	switch (n->kind) {
	case KB_YAML_SCALAR:
		if (n->plain && json_literal(n->str))
			fputs(n->str, out);
		else
			kb_json_put_str(out, n->str);
		return;
	case KB_YAML_MAP:
		fputc('{', out);
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				fputc(',', out);
			kb_json_put_str(out, n->pairs[i].key->str);
			fputc(':', out);
			kb_record_put_node(out, n->pairs[i].value); // NOLINT(misc-no-recursion)
		}
		fputc('}', out);
		return;
	case KB_YAML_SEQ:
		fputc('[', out);
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				fputc(',', out);
			kb_record_put_node(out, n->items[i]); // NOLINT(misc-no-recursion)
		}
		fputc(']', out);
		return;
	}
}

static const char *const decision_names[] = {"bind", "bind_volumes", "evict"};

const char *kb_record_decision_name(kb_record_decision_kind k)
{
	return (unsigned)k < sizeof(decision_names) / sizeof(decision_names[0]) ? decision_names[k]
										  : "?";
}

static void put_field(FILE *out, const char *name, const char *value)
{
	fprintf(out, ",\"%s\":", name);
	kb_json_put_str(out, value);
}

void kb_record_put_decision(FILE *out, const kb_record_decision *d)
{
	fprintf(out, "{\"r\":\"%s\",\"n\":%" PRIu64, kb_record_decision_name(d->kind), d->session);
	put_field(out, "pod", d->pod);
	if (d->kind == KB_DECISION_EVICT) {
		put_field(out, "reason", d->reason);
	} else {
		put_field(out, "node", d->node);
		if (d->kind == KB_DECISION_BIND)
			fprintf(out, ",\"gpus\":%" PRIu32, d->gpus);
		else
			put_field(out, "claims", d->claims);
	}
	fprintf(out, ",\"rc\":%d}\n", d->rc);
}

static bool str_same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

bool kb_record_decision_same(const kb_record_decision *a, const kb_record_decision *b)
{
	return a->kind == b->kind && a->session == b->session && str_same(a->pod, b->pod) &&
	       str_same(a->node, b->node) && a->gpus == b->gpus && str_same(a->reason, b->reason) &&
	       str_same(a->claims, b->claims);
}

void kb_record_claims(const kb_snapshot *snap, const kb_task_volumes *vol, const int32_t *picks,
		      char *buf, size_t n)
{
	size_t at = 0;
	if (n)
		buf[0] = '\0';
	for (uint32_t i = 0; vol && i < vol->nto_bind && at < n; i++) {
		const char *pv = picks && picks[i] >= 0 && (uint32_t)picks[i] < snap->npvs
					 ? snap->pvs[picks[i]].name
					 : "";
		int w = snprintf(buf + at, n - at, "%s%s=%s", i ? "," : "", vol->to_bind[i].key, pv);
		if (w < 0)
			return;
		at += (size_t)w;
	}
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* A string and its end (so "ab","c" and "a","bc" differ). */
static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "\xff", 1);
}

static uint64_t fnv_i64(uint64_t h, int64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)v >> (8 * i));
	return fnv(h, b, sizeof(b));
}

uint64_t kb_record_digest_job(uint64_t h, const kb_job *j, const kb_job_status *s)
{
	h = fnv_str(fnv(h, "J", 1), j->key);
	h = fnv_i64(h, s->phase);
	h = fnv_i64(h, s->running);
	h = fnv_i64(h, s->succeeded);
	h = fnv_i64(h, s->failed);
	h = fnv_i64(h, s->pending);
	h = fnv_i64(h, s->scheduled);
	return fnv_str(h, s->unschedulable);
}

uint64_t kb_record_digest_queue(uint64_t h, const kb_queue *q, const kb_res *deserved)
{
	h = fnv_str(fnv(h, "Q", 1), q->name);
	for (int i = 0; i < KB_RES_MAX; i++)
		h = fnv_i64(h, deserved ? deserved->q[i] : 0);
	return h;
}

uint64_t kb_record_digest_pending(uint64_t h, const kb_task *t, const char *reason)
{
	return fnv_str(fnv_str(fnv(h, "P", 1), t->key), reason);
}

void kb_report_digest_init(kb_report_digest *d)
{
	memset(d, 0, sizeof(*d));
	d->h = KB_RECORD_DIGEST_INIT;
	for (int k = 0; k < KB_REPORT_KINDS; k++)
		d->kh[k] = KB_RECORD_DIGEST_INIT;
}

void kb_report_digest_job(kb_report_digest *d, const kb_job *j, const kb_job_status *s)
{
	d->h = kb_record_digest_job(d->h, j, s);
	d->kh[KB_REPORT_JOB] = kb_record_digest_job(d->kh[KB_REPORT_JOB], j, s);
	d->n++;
	d->kn[KB_REPORT_JOB]++;
}

void kb_report_digest_queue(kb_report_digest *d, const kb_queue *q, const kb_res *deserved)
{
	d->h = kb_record_digest_queue(d->h, q, deserved);
	d->kh[KB_REPORT_QUEUE] = kb_record_digest_queue(d->kh[KB_REPORT_QUEUE], q, deserved);
	d->n++;
	d->kn[KB_REPORT_QUEUE]++;
}

void kb_report_digest_pending(kb_report_digest *d, const kb_task *t, const char *reason)
{
	d->h = kb_record_digest_pending(d->h, t, reason);
	d->kh[KB_REPORT_PENDING] = kb_record_digest_pending(d->kh[KB_REPORT_PENDING], t, reason);
	d->n++;
	d->kn[KB_REPORT_PENDING]++;
}

const char *kb_report_kind_field(kb_report_kind k)
{
	static const char *const f[] = {"job", "queue", "pending"};
	return (unsigned)k < KB_REPORT_KINDS ? f[k] : "report";
}

const char *kb_report_kind_what(kb_report_kind k)
{
	static const char *const w[] = {"PodGroup statuses", "queue shares", "pending reasons"};
	return (unsigned)k < KB_REPORT_KINDS ? w[k] : "reports";
}

void kb_report_digest_put(FILE *out, const kb_report_digest *d)
{
	fprintf(out, ",\"reports\":%" PRIu64 ",\"digest\":\"%016" PRIx64 "\"", d->n, d->h);
	for (int k = 0; k < KB_REPORT_KINDS; k++)
		fprintf(out, ",\"%s_reports\":%" PRIu64 ",\"%s_digest\":\"%016" PRIx64 "\"",
			kb_report_kind_field((kb_report_kind)k), d->kn[k],
			kb_report_kind_field((kb_report_kind)k), d->kh[k]);
}

/* ---- reading ------------------------------------------------------------------ */

int kb_record_fail(const kb_record_reader *r, kb_err *err, int code, const char *fmt, ...)
{
	char msg[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kb_err_set(err, code, "%s: offset %" PRIu64 " (line %" PRIu64 "): %s", r->path,
			  r->offset, r->line, msg);
}

const char *kb_record_type(const kb_yaml_node *rec)
{
	const char *t = kb_yaml_str(kb_yaml_get(rec, "r"));
	return t ? t : "";
}

/* Reads the next line into r->buf and parses it into r->doc. 1, 0 at the
 * end, or -errno. */
static int read_line(kb_record_reader *r, kb_err *err)
{
	if (r->have_doc) {
		kb_yaml_file_release(&r->doc);
		r->have_doc = false;
	}
	r->offset = r->next;
	r->line++;
	errno = 0;
	ssize_t n = getline(&r->buf, &r->cap, r->f);
	if (n < 0) {
		if (ferror(r->f))
			return kb_record_fail(r, err, errno ? -errno : -EIO, "reading: %s",
					      strerror(errno ? errno : EIO));
		return 0;
	}
	r->next += (uint64_t)n;
	if (r->buf[n - 1] != '\n')
		return kb_record_fail(r, err, -EINVAL,
				      "truncated: the last record has no end of line (%zd bytes of "
				      "it; the file was cut, e.g. the daemon stopped mid-write)",
				      n);
	kb_err e = {0};
	char name[48];
	(void)snprintf(name, sizeof(name), "line %" PRIu64, r->line);
	int rc = kb_json_load_buffer(r->buf, (size_t)n, name, &r->doc, &e);
	if (rc < 0)
		return kb_record_fail(r, err, rc, "malformed record: %s", e.msg);
	r->have_doc = true;
	if (r->doc.ndocs != 1 || r->doc.docs[0]->kind != KB_YAML_MAP)
		return kb_record_fail(r, err, -EINVAL, "malformed record: not a JSON object");
	return 1;
}

static int check_header(kb_record_reader *r, kb_err *err)
{
	int rc = read_line(r, err);
	if (rc == 0)
		return kb_record_fail(r, err, -EINVAL, "empty: no header line");
	if (rc < 0)
		return rc;
	const kb_yaml_node *h = r->doc.docs[0];
	const char *magic = kb_yaml_str(kb_yaml_get(h, "magic"));
	if (!magic || strcmp(magic, KB_RECORD_MAGIC) != 0)
		return kb_record_fail(r, err, -EINVAL,
				      "not a kube-batchd record file: the header's \"magic\" is "
				      "not \"%s\"",
				      KB_RECORD_MAGIC);
	int64_t format = 0;
	if (kb_yaml_int(kb_yaml_get(h, "format"), &format) < 0)
		return kb_record_fail(r, err, -EINVAL, "header: field \"format\": not an integer");
	const char *version = kb_yaml_str(kb_yaml_get(h, "kube_batchd"));
	if (format != KB_RECORD_FORMAT)
		return kb_record_fail(r, err, -EINVAL,
				      "header: record format %" PRId64
				      " (written by kube-batchd %s); this kube-batchd reads format %d",
				      format, version ? version : "?", KB_RECORD_FORMAT);
	(void)snprintf(r->version, sizeof(r->version), "%s", version ? version : "?");
	return 0;
}

int kb_record_reader_open(kb_record_reader *r, const char *path, uint64_t max_bytes, kb_err *err)
{
	memset(r, 0, sizeof(*r));
	if (!max_bytes)
		max_bytes = KB_RECORD_MAX_BYTES_DEFAULT;
	r->path = strdup(path);
	if (!r->path)
		return kb_err_set(err, -ENOMEM, "%s: out of memory", path);
	r->f = fopen(path, "re");
	if (!r->f) {
		int e = errno;
		kb_record_reader_release(r);
		return kb_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	struct stat st;
	int rc = 0;
	if (fstat(fileno(r->f), &st) < 0)
		rc = kb_err_set(err, -errno, "%s: %s", path, strerror(errno));
	else if ((uint64_t)st.st_size > max_bytes)
		rc = kb_err_set(err, -EFBIG,
				"%s: offset %" PRIu64 ": over the size cap of %" PRIu64
				" bytes (the file has %lld)",
				path, max_bytes, max_bytes, (long long)st.st_size);
	else
		r->size = (uint64_t)st.st_size;
	if (rc == 0)
		rc = check_header(r, err);
	if (rc < 0)
		kb_record_reader_release(r);
	return rc;
}

int kb_record_reader_next(kb_record_reader *r, const kb_yaml_node **ret, kb_err *err)
{
	int rc = read_line(r, err);
	if (rc <= 0)
		return rc;
	const kb_yaml_node *rec = r->doc.docs[0];
	if (!kb_yaml_str(kb_yaml_get(rec, "r")))
		return kb_record_fail(r, err, -EINVAL, "malformed record: no string field \"r\"");
	*ret = rec;
	return 1;
}

void kb_record_reader_release(kb_record_reader *r)
{
	if (r->have_doc)
		kb_yaml_file_release(&r->doc);
	if (r->f)
		(void)fclose(r->f); /* read only: nothing to lose */
	free(r->buf);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

static int field_error(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		       const char *what, kb_err *err)
{
	return kb_record_fail(r, err, -EINVAL, "record \"%s\": field \"%s\": %s",
			      kb_record_type(rec), field, what);
}

int kb_record_str(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		  bool nullable, const char **ret, kb_err *err)
{
	const kb_yaml_node *v = kb_yaml_get(rec, field);
	if (!v)
		return field_error(r, rec, field, "missing", err);
	if (nullable && v->kind == KB_YAML_SCALAR && v->plain && strcmp(v->str, "null") == 0) {
		*ret = NULL;
		return 0;
	}
	if (v->kind != KB_YAML_SCALAR || v->plain)
		return field_error(r, rec, field, nullable ? "must be a string or null"
							   : "must be a string",
				   err);
	*ret = v->str;
	return 0;
}

int kb_record_int(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		  int64_t *ret, kb_err *err)
{
	const kb_yaml_node *v = kb_yaml_get(rec, field);
	if (!v)
		return field_error(r, rec, field, "missing", err);
	if (!v->plain || kb_yaml_int(v, ret) < 0)
		return field_error(r, rec, field, "must be an integer", err);
	return 0;
}

int kb_record_bool(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		   bool *ret, kb_err *err)
{
	const kb_yaml_node *v = kb_yaml_get(rec, field);
	if (!v)
		return field_error(r, rec, field, "missing", err);
	if (!v->plain || kb_yaml_bool(v, ret) < 0)
		return field_error(r, rec, field, "must be true or false", err);
	return 0;
}

int kb_record_decision_read(const kb_record_reader *r, const kb_yaml_node *rec,
			    kb_record_decision *ret, kb_err *err)
{
	kb_record_decision d = {0};
	const char *type = kb_record_type(rec);
	if (strcmp(type, "bind") == 0)
		d.kind = KB_DECISION_BIND;
	else if (strcmp(type, "bind_volumes") == 0)
		d.kind = KB_DECISION_BIND_VOLUMES;
	else if (strcmp(type, "evict") == 0)
		d.kind = KB_DECISION_EVICT;
	else
		return field_error(r, rec, "r", "not a decision (bind, bind_volumes, evict)", err);
	int64_t n = 0, rc = 0, gpus = 0;
	int e = kb_record_int(r, rec, "n", &n, err);
	if (e == 0)
		e = kb_record_str(r, rec, "pod", false, &d.pod, err);
	if (e == 0)
		e = kb_record_int(r, rec, "rc", &rc, err);
	if (e == 0 && d.kind == KB_DECISION_EVICT)
		e = kb_record_str(r, rec, "reason", false, &d.reason, err);
	if (e == 0 && d.kind != KB_DECISION_EVICT)
		e = kb_record_str(r, rec, "node", false, &d.node, err);
	if (e == 0 && d.kind == KB_DECISION_BIND)
		e = kb_record_int(r, rec, "gpus", &gpus, err);
	if (e == 0 && d.kind == KB_DECISION_BIND_VOLUMES)
		e = kb_record_str(r, rec, "claims", false, &d.claims, err);
	if (e < 0)
		return e;
	if (n < 1 || gpus < 0 || gpus > UINT32_MAX || rc < -4095 || rc > 1)
		return field_error(r, rec, n < 1 ? "n" : gpus < 0 || gpus > UINT32_MAX ? "gpus" : "rc",
				   "out of range", err);
	d.session = (uint64_t)n;
	d.gpus = (uint32_t)gpus;
	d.rc = (int)rc;
	*ret = d;
	return 0;
}

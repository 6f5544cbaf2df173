/* record.c - the daemon's recorder (see record.h; the format:
 * cache/record_file.h). */
#include "daemon/record.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/json_out.h"
#include "base/log.h"
#include "cache/record_file.h"
#include "cache/record_reports.h"

/* Room kept under the cap for the stop line. */
#define STOP_ROOM 256
/* The largest configuration or queue file read (the YAML loader's limit). */
#define CONF_MAX_BYTES ((size_t)64 << 20)
/* bind_volumes' claims text (kb_record_claims cuts what does not fit; the
 * replay cuts the same way). */
#define CLAIMS_MAX 4096

struct kb_recorder {
	FILE *file;
	char *path;
	uint64_t max_bytes;
	uint64_t written; /* bytes in the file */
	/* The records since the last write to the file. */
	FILE *mem;
	char *buf;
	size_t buflen;
	bool stopped; /* the cap was reached or a write failed: nothing more */
	bool in_session; /* between session_begin and session_end */
	uint64_t session; /* the current session's n (0 before the first) */
	kb_report_digest reports;
	/* Each report of the session before, by name, with its text: a report
	 * line is written only when one is new, changed or gone. */
	kb_report_book book;
	/* The object the reflector is decoding (kb_recorder_seen). */
	const char *seen_api, *seen_kind;
	const kb_yaml_node *seen;
};

static int open_mem(kb_recorder *rec)
{
	rec->buf = NULL;
	rec->buflen = 0;
	rec->mem = open_memstream(&rec->buf, &rec->buflen);
	return rec->mem ? 0 : -ENOMEM;
}

static void drop_mem(kb_recorder *rec)
{
	if (rec->mem)
		(void)fclose(rec->mem); /* dropped: what it held is not wanted */
	rec->mem = NULL;
	free(rec->buf);
	rec->buf = NULL;
	rec->buflen = 0;
}

/* Stops recording: what is gathered is dropped, the stop line written. */
static void stop(kb_recorder *rec, const char *why)
{
	if (rec->stopped)
		return;
	rec->stopped = true;
	drop_mem(rec);
	kb_warn("--record \"%s\": recording stopped after session %" PRIu64 ": %s; the file "
		"records the sessions before",
		rec->path, rec->session ? rec->session - 1 : 0, why);
	fputs("{\"r\":\"stop\",\"reason\":", rec->file);
	kb_json_put_str(rec->file, why);
	fputs("}\n", rec->file);
	if (fflush(rec->file) != 0)
		kb_error("--record \"%s\": writing: %s", rec->path, strerror(errno));
}

/* Whether what is gathered still fits under the cap; stops when not. */
static bool fits(kb_recorder *rec)
{
	if (rec->stopped)
		return false;
	off_t pending = ftello(rec->mem);
	if (pending >= 0 && rec->written + (uint64_t)pending + STOP_ROOM <= rec->max_bytes)
		return true;
	char why[160];
	(void)snprintf(why, sizeof(why), "the size cap of %" PRIu64 " bytes (--record-max-bytes) "
					 "was reached",
		       rec->max_bytes);
	stop(rec, why);
	return false;
}

/* Writes what is gathered to the file and flushes it. */
static void flush_gathered(kb_recorder *rec)
{
	if (rec->stopped || !fits(rec))
		return;
	if (fflush(rec->mem) != 0) {
		stop(rec, "out of memory");
		return;
	}
	if (rec->buflen && (fwrite(rec->buf, 1, rec->buflen, rec->file) != rec->buflen ||
			    fflush(rec->file) != 0)) {
		char why[160];
		(void)snprintf(why, sizeof(why), "writing the file: %s", strerror(errno));
		stop(rec, why);
		return;
	}
	rec->written += rec->buflen;
	drop_mem(rec);
	if (open_mem(rec) < 0)
		stop(rec, "out of memory");
}

kb_recorder *kb_recorder_open(const char *path, uint64_t max_bytes, kb_err *err)
{
	if (!max_bytes)
		max_bytes = KB_RECORD_MAX_BYTES_DEFAULT;
	if (max_bytes < KB_RECORD_MIN_BYTES) {
		kb_err_set(err, -EINVAL, "--record-max-bytes: %" PRIu64 " is below the least, %d",
			   max_bytes, KB_RECORD_MIN_BYTES);
		return NULL;
	}
	kb_recorder *rec = calloc(1, sizeof(*rec));
	if (rec)
		kb_report_book_init(&rec->book);
	if (!rec || !(rec->path = strdup(path)) || open_mem(rec) < 0) {
		kb_err_set(err, -ENOMEM, "--record \"%s\": out of memory", path);
		goto fail;
	}
	rec->max_bytes = max_bytes;
	/* A restart must not lose the record of what came before it (the run
	 * that crashed is the one a bug report wants): the last file is kept
	 * as PATH.1, replacing an older one. */
	if (access(path, F_OK) == 0) {
		char prev[PATH_MAX];
		int n = snprintf(prev, sizeof(prev), "%s.1", path);
		if (n < 0 || (size_t)n >= sizeof(prev) || rename(path, prev) < 0) {
			int e = n < 0 || (size_t)n >= sizeof(prev) ? ENAMETOOLONG : errno;
			kb_err_set(err, -e, "--record \"%s\": keeping the previous record as %s.1: %s",
				   path, path, strerror(e));
			goto fail;
		}
		kb_info("--record \"%s\": the previous record kept as \"%s\"", path, prev);
	}
	rec->file = fopen(path, "we");
	if (!rec->file) {
		int e = errno;
		kb_err_set(err, -e, "--record \"%s\": %s", path, strerror(e));
		goto fail;
	}
	kb_record_put_header(rec->file, KB_BUILD_VERSION);
	long at = ftell(rec->file);
	if (fflush(rec->file) != 0 || at < 0) {
		int e = errno ? errno : EIO;
		kb_err_set(err, -e, "--record \"%s\": writing: %s", path, strerror(e));
		goto fail;
	}
	rec->written = (uint64_t)at;
	return rec;
fail:
	if (rec) {
		drop_mem(rec);
		if (rec->file)
			(void)fclose(rec->file); /* failing anyway */
		kb_report_book_release(&rec->book);
		free(rec->path);
		free(rec);
	}
	return NULL;
}

kb_recorder *kb_recorder_close(kb_recorder *rec)
{
	if (!rec)
		return NULL;
	flush_gathered(rec);
	drop_mem(rec);
	if (fclose(rec->file) != 0 && !rec->stopped)
		kb_error("--record \"%s\": closing: %s", rec->path, strerror(errno));
	kb_report_book_release(&rec->book);
	free(rec->path);
	free(rec);
	return NULL;
}

/* ---- configuration ------------------------------------------------------------ */

int kb_recorder_load_conf(kb_recorder *rec, const char *conf_path, const kb_registry *reg,
			  const char *const *names, uint32_t nnames, const char *default_queue,
			  kb_conf *ret, kb_err *err)
{
	if (!rec)
		return conf_path ? kb_conf_load_file(conf_path, reg, ret, err)
				 : kb_conf_load_default(reg, ret, err);
	kb_buf file = {0};
	int r = conf_path ? kb_buf_read_file(conf_path, CONF_MAX_BYTES, &file, err) : 0;
	if (r < 0)
		return r;
	const char *text = file.data;
	r = conf_path ? kb_conf_load_buffer(text, file.len, conf_path, reg, ret, err)
		      : kb_conf_load_default(reg, ret, err);
	if (r == 0 && fits(rec)) {
		fputs("{\"r\":\"conf\",\"scheduler_conf\":", rec->mem);
		if (text)
			kb_json_put_str(rec->mem, text);
		else
			fputs("null", rec->mem);
		fputs(",\"scheduler_conf_name\":", rec->mem);
		kb_json_put_str(rec->mem, conf_path ? conf_path : "<built-in default>");
		fputs(",\"scheduler_names\":[", rec->mem);
		for (uint32_t i = 0; i < nnames; i++) {
			if (i)
				fputc(',', rec->mem);
			kb_json_put_str(rec->mem, names[i]);
		}
		fputs("],\"default_queue\":", rec->mem);
		kb_json_put_str(rec->mem, default_queue);
		fputs("}\n", rec->mem);
		flush_gathered(rec);
	}
	kb_buf_release(&file);
	return r;
}

int kb_recorder_load_queues(kb_recorder *rec, const char *path, kb_resnames *names,
			    kb_queue_conf *ret, kb_err *err)
{
	if (!rec)
		return kb_queue_conf_load_file(path, names, ret, err);
	kb_buf file = {0};
	int r = kb_buf_read_file(path, CONF_MAX_BYTES, &file, err);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		return r;
	}
	const char *text = file.data;
	r = kb_queue_conf_load_buffer(text, file.len, path, names, ret, err);
	if (fits(rec)) {
		fputs("{\"r\":\"queues\",\"name\":", rec->mem);
		kb_json_put_str(rec->mem, path);
		fputs(",\"content\":", rec->mem);
		kb_json_put_str(rec->mem, text);
		fprintf(rec->mem, ",\"ok\":%s}\n", r == 0 ? "true" : "false");
		fits(rec);
	}
	kb_buf_release(&file);
	return r;
}

/* ---- objects -------------------------------------------------------------------- */

void kb_recorder_seen(kb_recorder *rec, const char *api_version, const char *kind,
		      const kb_yaml_node *obj)
{
	if (!rec)
		return;
	rec->seen_api = api_version;
	rec->seen_kind = kind;
	rec->seen = obj;
}

/* The object last seen, as the fields "api", "kind" and "object". */
static void put_seen(kb_recorder *rec)
{
	fputs(",\"api\":", rec->mem);
	kb_json_put_str(rec->mem, rec->seen_api);
	fputs(",\"kind\":", rec->mem);
	kb_json_put_str(rec->mem, rec->seen_kind);
	fputs(",\"object\":", rec->mem);
	kb_record_put_node(rec->mem, rec->seen);
	fputs("}\n", rec->mem);
	rec->seen = NULL;
}

/* Between sessions, writes what is gathered once it passes
 * KB_RECORD_SPILL_BYTES: a standby runs no sessions, and a large cluster's
 * first LIST comes before the first one. */
static void spill(kb_recorder *rec)
{
	if (rec->in_session || rec->stopped)
		return;
	off_t pending = ftello(rec->mem);
	if (pending >= 0 && (uint64_t)pending >= KB_RECORD_SPILL_BYTES)
		flush_gathered(rec);
}

void kb_recorder_upsert(kb_recorder *rec, int64_t t_ms)
{
	if (!rec || !rec->seen || !fits(rec))
		return;
	fprintf(rec->mem, "{\"r\":\"object\",\"t\":%" PRId64, t_ms);
	put_seen(rec);
	if (fits(rec))
		spill(rec);
}

void kb_recorder_undecodable(kb_recorder *rec, kb_kind kind, const char *key)
{
	if (!rec || !rec->seen || !fits(rec))
		return;
	fputs("{\"r\":\"undecodable\",\"key\":", rec->mem);
	kb_json_put_str(rec->mem, key);
	fputs(",\"store_kind\":", rec->mem);
	kb_json_put_str(rec->mem, kb_kind_name(kind));
	put_seen(rec);
	if (fits(rec))
		spill(rec);
}

void kb_recorder_remove(kb_recorder *rec, kb_kind kind, const char *key)
{
	if (!rec || !fits(rec))
		return;
	fputs("{\"r\":\"delete\",\"kind\":", rec->mem);
	kb_json_put_str(rec->mem, kb_kind_name(kind));
	fputs(",\"key\":", rec->mem);
	kb_json_put_str(rec->mem, key);
	fputs("}\n", rec->mem);
	if (fits(rec))
		spill(rec);
}

/* ---- sessions ------------------------------------------------------------------- */

/* The pods carrying the scheduler's own state: an override (assumed
 * binding, eviction, failed binding), an eviction time, a hold. */
static void put_pods(FILE *out, const kb_store *s)
{
	bool first = true;
	fputs(",\"pods\":[", out);
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_slot *sl = &s->slots.v[i];
		if (!sl->obj || !(sl->overridden || sl->evicted_ms || sl->obj->u.pod.held))
			continue;
		fputs(first ? "{\"key\":" : ",{\"key\":", out);
		first = false;
		kb_json_put_str(out, sl->obj->meta.key);
		fprintf(out, ",\"over\":%s,\"node\":", sl->overridden ? "true" : "false");
		if (sl->overridden && sl->node)
			kb_json_put_str(out, sl->node);
		else
			fputs("null", out);
		fprintf(out,
			",\"status\":%d,\"started\":%" PRId64 ",\"gpus\":%" PRIu32
			",\"evicted\":%" PRId64 ",\"held\":%s}",
			sl->overridden ? (int)sl->status : 0, sl->overridden ? sl->started_ms : 0,
			sl->overridden ? sl->gpu_mask : 0, sl->evicted_ms,
			sl->obj->u.pod.held ? "true" : "false");
	}
	fputc(']', out);
}

static void put_podgroups(FILE *out, const kb_store *s)
{
	bool first = true;
	fputs(",\"podgroups\":[", out);
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_slot *sl = &s->slots.v[i];
		if (!sl->obj || !sl->overridden)
			continue;
		fputs(first ? "{\"key\":" : ",{\"key\":", out);
		first = false;
		kb_json_put_str(out, sl->obj->meta.key);
		fprintf(out, ",\"phase\":%d}", (int)sl->pg_phase);
	}
	fputc(']', out);
}

static void put_volumes(FILE *out, const kb_store *s, kb_kind kind, bool *first)
{
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_slot *sl = &s->slots.v[i];
		if (!sl->obj || !sl->overridden)
			continue;
		fprintf(out, "%s{\"kind\":\"%s\",\"key\":", *first ? "" : ",", kb_kind_name(kind));
		*first = false;
		kb_json_put_str(out, sl->obj->meta.key);
		fputs(",\"text\":", out);
		kb_json_put_str(out, sl->node);
		fprintf(out, ",\"status\":%d}", (int)sl->status);
	}
}

void kb_recorder_session_begin(kb_recorder *rec, const kb_cluster *c, int64_t now_ms)
{
	if (!rec || !fits(rec))
		return;
	rec->session++;
	rec->in_session = true;
	kb_report_digest_init(&rec->reports);
	fprintf(rec->mem, "{\"r\":\"session\",\"n\":%" PRIu64 ",\"now\":%" PRId64, rec->session,
		now_ms);
	put_pods(rec->mem, &c->pods);
	put_podgroups(rec->mem, &c->podgroups);
	bool first = true;
	fputs(",\"volumes\":[", rec->mem);
	put_volumes(rec->mem, &c->pvcs, KB_KIND_PVC, &first);
	put_volumes(rec->mem, &c->pvs, KB_KIND_PV, &first);
	fputs("]}\n", rec->mem);
	fits(rec);
}

void kb_recorder_session_end(kb_recorder *rec, int rc)
{
	if (!rec || !fits(rec))
		return;
	/* The reports of the session before that this one did not make, last
	 * added first (removing swaps the last entry into the hole). */
	for (size_t i = rec->book.n; i-- > 0;) {
		const kb_report_entry *e = &rec->book.entries[i];
		if (e->session == rec->session)
			continue;
		kb_record_put_report(rec->mem, rec->session, e->kind, e->key, NULL);
		kb_report_book_remove(&rec->book, i);
	}
	if (!fits(rec))
		return;
	fprintf(rec->mem, "{\"r\":\"end\",\"n\":%" PRIu64, rec->session);
	kb_report_digest_put(rec->mem, &rec->reports);
	fprintf(rec->mem, ",\"rc\":%d}\n", rc);
	flush_gathered(rec);
	rec->in_session = false;
}

/* ---- the tee -------------------------------------------------------------------- */

static void put_decision(kb_recorder *rec, kb_record_decision *d)
{
	if (!rec || !fits(rec))
		return;
	d->session = rec->session;
	kb_record_put_decision(rec->mem, d);
	fits(rec);
}

static int tee_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		    const kb_node *node)
{
	kb_recorder_tee *t = ctx;
	int rc = t->next->bind ? t->next->bind(t->next_ctx, snap, now_ms, task, node) : 0;
	kb_record_decision d = {.kind = KB_DECISION_BIND, .pod = task->key, .node = node->name,
				.gpus = task->gpu_mask, .rc = rc};
	put_decision(t->rec, &d);
	return rc;
}

static int tee_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms,
			    const kb_task *task, const kb_node *node, const kb_task_volumes *vol,
			    const int32_t *picks)
{
	kb_recorder_tee *t = ctx;
	int rc = t->next->bind_volumes ? t->next->bind_volumes(t->next_ctx, snap, now_ms, task,
								node, vol, picks)
				       : 0;
	char claims[CLAIMS_MAX];
	kb_record_claims(snap, vol, picks, claims, sizeof(claims));
	kb_record_decision d = {.kind = KB_DECISION_BIND_VOLUMES, .pod = task->key,
				.node = node->name, .claims = claims, .rc = rc};
	put_decision(t->rec, &d);
	return rc;
}

static int tee_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		     const char *reason)
{
	kb_recorder_tee *t = ctx;
	int rc = t->next->evict ? t->next->evict(t->next_ctx, snap, now_ms, task, reason) : 0;
	kb_record_decision d = {.kind = KB_DECISION_EVICT, .pod = task->key, .reason = reason,
				.rc = rc};
	put_decision(t->rec, &d);
	return rc;
}

/* A report of the session, by name: a "report" line when it is new or its
 * text changed since the session before. */
static void put_report(kb_recorder *rec, kb_report_kind kind, const char *key, const char *text)
{
	if (!rec || !fits(rec))
		return;
	bool oom = false;
	kb_report_entry *e = kb_report_book_at(&rec->book, kind, key, true, &oom);
	if (!e) {
		stop(rec, "out of memory");
		return;
	}
	e->session = rec->session;
	if (e->text && strcmp(e->text, text) == 0)
		return;
	if (kb_report_set(&e->text, text) < 0) {
		stop(rec, "out of memory");
		return;
	}
	kb_record_put_report(rec->mem, rec->session, kind, key, text);
	fits(rec);
}

static int tee_job_status(void *ctx, const kb_snapshot *snap, const kb_job *job,
			  const kb_job_status *status)
{
	kb_recorder_tee *t = ctx;
	if (t->rec) {
		kb_report_digest_job(&t->rec->reports, job, status);
		char text[KB_REPORT_TEXT_MAX];
		kb_report_text_job(status, text, sizeof(text));
		put_report(t->rec, KB_REPORT_JOB, job->key, text);
	}
	return t->next->job_status ? t->next->job_status(t->next_ctx, snap, job, status) : 0;
}

static int tee_queue_status(void *ctx, const kb_snapshot *snap, const kb_queue *queue,
			    const kb_res *deserved)
{
	kb_recorder_tee *t = ctx;
	if (t->rec) {
		kb_report_digest_queue(&t->rec->reports, queue, deserved);
		char text[KB_REPORT_TEXT_MAX];
		kb_report_text_queue(deserved, &snap->resnames, text, sizeof(text));
		put_report(t->rec, KB_REPORT_QUEUE, queue->name, text);
	}
	return t->next->queue_status ? t->next->queue_status(t->next_ctx, snap, queue, deserved)
				     : 0;
}

static int tee_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *task,
			    const char *reason)
{
	kb_recorder_tee *t = ctx;
	if (t->rec) {
		kb_report_digest_pending(&t->rec->reports, task, reason);
		char text[KB_REPORT_TEXT_MAX];
		kb_report_text_pending(reason, text, sizeof(text));
		put_report(t->rec, KB_REPORT_PENDING, task->key, text);
	}
	return t->next->task_pending ? t->next->task_pending(t->next_ctx, snap, task, reason) : 0;
}

const kb_effects kb_recorder_effects = {
	.bind = tee_bind,
	.bind_volumes = tee_bind_volumes,
	.evict = tee_evict,
	.job_status = tee_job_status,
	.queue_status = tee_queue_status,
	.task_pending = tee_task_pending,
};

/* record_file.h - the record file of `kube-batchd --record FILE`: its
 * format, its reader, and the pieces the writer (daemon/record.h) and the
 * replay (cmd/replay.c) must agree on.
 *
 * The file is JSON lines (one JSON object per line, each ending in "\n",
 * each readable alone, so a bug report can be read and grepped). The first
 * line is the header:
 *   {"magic":"kube-batchd-record","format":2,"kube_batchd":"0.1.0"}
 * then one record per line, its type in "r":
 *   conf        the configuration in force: scheduler_conf (the file's text,
 *               or null for the built-in default) and its name,
 *               scheduler_names, default_queue
 *   queues      a load of the queue file: name, content (its text), ok
 *   object      an object a reflector delivered that decoded: t (the wall
 *               clock in ms when the store took it: created_ms of
 *               kb_cluster_apply), api and kind (the reflector's defaults
 *               for a LIST item that lacks them), object (the API's JSON
 *               as received)
 *   undecodable the same for an object that did not decode (key named)
 *   delete      kind (kb_kind_name) and key of an object removed (a watch's
 *               DELETED, or a relist that lacked it)
 *   session     a session starts: n (1, 2, ...), now (its clock, ms), and
 *               the scheduler's own state in the store, what the writers
 *               told it (kube/writers.h): pods (key, over: whether the
 *               scheduler's view overrides the object's, node, status,
 *               started, gpus, evicted, held), podgroups (key, phase),
 *               volumes (kind, key, text, status); only the objects that
 *               carry such state
 *   bind, bind_volumes, evict
 *               a decision of session n, in the order the session made
 *               them (kb_record_decision), with rc, what the writers
 *               answered the session
 *   report      a report of session n by name (cache/record_reports.h),
 *               written only when it changed: kind ("job", "queue",
 *               "pending"), key (the PodGroup's "ns/name", the queue's
 *               name, the pod's "ns/name") and text, the report as a
 *               person reads it; or "gone": true when a report the
 *               session before made was not made again. A report with no
 *               line in a session is the same as in the one before
 *   end         the session n ended: reports (how many job_status,
 *               queue_status and task_pending reports it made) and digest
 *               (a 64-bit FNV-1a over them, in hex: kb_record_digest_*),
 *               rc (kb_session_run_actions' result)
 *   stop        the writer stopped recording: reason (the size cap)
 *
 * Reading refuses, with the file name and the byte offset of the line (and
 * the field when one is wrong): an empty file or a first line that is not
 * the header; a header of another format; a line that is not one JSON
 * object with a string "r"; a last line without its "\n" (the file was
 * cut); a file over the reader's size cap.
 *
 * Cost: reading is O(line) per record, one line and its tree in memory at
 * a time (the largest line is at most the file, itself at most the cap).
 * Writing an object is O(size of its tree). The digests are O(length of
 * the strings hashed).
 */
#ifndef KB_CACHE_RECORD_FILE_H
#define KB_CACHE_RECORD_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/jobstatus.h"
#include "api/resource.h"
#include "api/snapshot.h"
#include "base/error.h"
#include "base/yaml_doc.h"

#define KB_RECORD_MAGIC "kube-batchd-record"
/* 2: the "report" records (format 1 had only the end record's digests). */
#define KB_RECORD_FORMAT 2
/* The default cap of a record file, for the writer and the reader (1 GiB:
 * hours of a busy cluster; --record-max-bytes sets the writer's). */
#define KB_RECORD_MAX_BYTES_DEFAULT ((uint64_t)1 << 30)
/* The smallest cap a writer accepts: room for the header, the
 * configuration and the stop line. */
#define KB_RECORD_MIN_BYTES 4096

/* ---- writing ---- */

/* The header line (with its "\n"). version: kube-batchd's. */
void kb_record_put_header(FILE *out, const char *version);

/* n as JSON: mappings as objects, sequences as arrays, quoted scalars as
 * strings, plain scalars (the JSON loader's numbers, true, false, null) as
 * they were written. A string holding a NUL is cut there (the decoders
 * read C strings, so the object decodes the same). O(size of the tree). */
void kb_record_put_node(FILE *out, const kb_yaml_node *n);

/* A decision of a session: an effect call of the framework (api/effects.h)
 * that changes the cluster. Strings are borrowed. */
typedef enum kb_record_decision_kind {
	KB_DECISION_BIND = 0,
	KB_DECISION_BIND_VOLUMES,
	KB_DECISION_EVICT,
} kb_record_decision_kind;

typedef struct kb_record_decision {
	kb_record_decision_kind kind;
	uint64_t session; /* n */
	const char *pod;  /* the task's "ns/name" */
	const char *node; /* bind, bind_volumes */
	uint32_t gpus;    /* bind: the task's gpu_mask */
	const char *reason; /* evict */
	/* bind_volumes: "CLAIM=PV" for each claim to bind, "CLAIM=" when it
	 * is provisioned on the node, comma-separated (kb_record_claims). */
	const char *claims;
	int rc; /* what the effect returned to the session */
} kb_record_decision;

/* "bind", "bind_volumes", "evict". */
const char *kb_record_decision_name(kb_record_decision_kind k);

/* One line for d (with its "\n"). */
void kb_record_put_decision(FILE *out, const kb_record_decision *d);

/* Whether a and b are the same decision (kind, session, pod, node, gpus,
 * reason, claims; rc is not compared: it is the writers' answer). */
bool kb_record_decision_same(const kb_record_decision *a, const kb_record_decision *b);

/* The claims text of a bind_volumes call into buf (n bytes; cut, never
 * overrun, when too small): each vol->to_bind[i].key "=" the name of
 * snap->pvs[picks[i]], or nothing after "=" when picks[i] < 0. */
void kb_record_claims(const kb_snapshot *snap, const kb_task_volumes *vol, const int32_t *picks,
		      char *buf, size_t n);

/* The reports of a session folded into a digest (FNV-1a, 64 bits; start
 * from KB_RECORD_DIGEST_INIT): a job's status, a queue's deserved share,
 * a pending task's reason. */
#define KB_RECORD_DIGEST_INIT 0xcbf29ce484222325ull
uint64_t kb_record_digest_job(uint64_t h, const kb_job *j, const kb_job_status *s);
uint64_t kb_record_digest_queue(uint64_t h, const kb_queue *q, const kb_res *deserved);
uint64_t kb_record_digest_pending(uint64_t h, const kb_task *t, const char *reason);

/* A session's reports as the recorder and replay count them: all of them
 * (n, h: the end record's "reports" and "digest"), and each kind on its own
 * (the end record's "<field>_reports" and "<field>_digest"), so that a
 * replay can say which kind differs. */
typedef enum kb_report_kind {
	KB_REPORT_JOB,     /* PodGroup statuses ("job") */
	KB_REPORT_QUEUE,   /* queue shares ("queue") */
	KB_REPORT_PENDING, /* pending tasks' reasons ("pending") */
	KB_REPORT_KINDS
} kb_report_kind;

typedef struct kb_report_digest {
	uint64_t n, h;
	uint64_t kn[KB_REPORT_KINDS], kh[KB_REPORT_KINDS];
} kb_report_digest;

void kb_report_digest_init(kb_report_digest *d);
void kb_report_digest_job(kb_report_digest *d, const kb_job *j, const kb_job_status *s);
void kb_report_digest_queue(kb_report_digest *d, const kb_queue *q, const kb_res *deserved);
void kb_report_digest_pending(kb_report_digest *d, const kb_task *t, const char *reason);

/* The end record's field prefix of kind k ("job", "queue", "pending"), and
 * what its reports are, for messages ("PodGroup statuses", ...). */
const char *kb_report_kind_field(kb_report_kind k);
const char *kb_report_kind_what(kb_report_kind k);

/* The end record's fields of d, each ',"name":value' (after "n"). */
void kb_report_digest_put(FILE *out, const kb_report_digest *d);

/* ---- reading ---- */

typedef struct kb_record_reader {
	FILE *f;
	char *path;         /* copied, for messages */
	uint64_t size;      /* the file's size when opened */
	uint64_t offset;    /* byte offset of the current record's line */
	uint64_t next;      /* byte offset of the next line */
	uint64_t line;      /* 1-based line number of the current record */
	char *buf;          /* the current line (getline's) */
	size_t cap;
	kb_yaml_file doc;   /* the current line's tree */
	bool have_doc;
	char version[64];   /* the kube-batchd version the header names */
} kb_record_reader;

/* Opens path and reads its header. max_bytes: the largest file accepted
 * (0: KB_RECORD_MAX_BYTES_DEFAULT). Returns 0, or -errno with err naming
 * the file and the offset: -ENOENT and the like (opening), -EFBIG (over
 * the cap), -EINVAL (no header, not a record file, another format). On
 * failure *r is released. */
int kb_record_reader_open(kb_record_reader *r, const char *path, uint64_t max_bytes, kb_err *err);

/* The next record into *ret (valid until the next call or release): 1,
 * 0 at the end of the file, or -EINVAL (a truncated or malformed line;
 * err names the file and the offset), -ENOMEM, -EIO. */
int kb_record_reader_next(kb_record_reader *r, const kb_yaml_node **ret, kb_err *err);

void kb_record_reader_release(kb_record_reader *r);

/* Fills err with "FILE: offset N (line L): " and the message; returns
 * code. For the replay's own complaints about a record. */
int kb_record_fail(const kb_record_reader *r, kb_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A record's field: a string (null allowed when nullable: *ret NULL), an
 * integer, a boolean. Missing or of another type: -EINVAL with err naming
 * the file, the offset, the record's type and the field. */
int kb_record_str(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		  bool nullable, const char **ret, kb_err *err);
int kb_record_int(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		  int64_t *ret, kb_err *err);
int kb_record_bool(const kb_record_reader *r, const kb_yaml_node *rec, const char *field,
		   bool *ret, kb_err *err);

/* The record's type ("r"); never NULL for a record kb_record_reader_next
 * returned. */
const char *kb_record_type(const kb_yaml_node *rec);

/* A decision record (bind, bind_volumes, evict) into *ret (strings point
 * into the record). 0 or -EINVAL naming the field. */
int kb_record_decision_read(const kb_record_reader *r, const kb_yaml_node *rec,
			    kb_record_decision *ret, kb_err *err);

#endif

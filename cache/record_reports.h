/* record_reports.h - a session's reports by name, for the record file:
 * what `kube-batchd --record` writes of each report (a PodGroup's status, a
 * queue's deserved share, a pending pod's reason) and what `replay` checks
 * them against, so that a replay names the report that differs ("the
 * PodGroup status of ns/pg"), not only its kind.
 *
 * Each report has an id, its kind and its object's key ("job ns/pg",
 * "queue q1", "pending ns/pod"), and a text (kb_report_text_*): one line a
 * person reads, holding everything the session's digest hashes of it.
 * The record holds them as deltas: a "report" line when a report is new
 * or its text changed since the session before, and a "gone" one when a
 * report of the session before was not made again (cache/record_file.h).
 * An idle cluster's sessions add no report lines.
 *
 * The book (kb_report_book) is the state those deltas build: one entry per
 * report, the text last recorded and the session that made it. The writer
 * keeps one to know what changed; the replay keeps one of what the record
 * says and sets beside each entry what its own session reported.
 *
 * Entries live in an array in the order they were added (a removal moves
 * the last entry into the hole), so walking them does not depend on the
 * hash table's layout: the same operations give the same order.
 *
 * Errors: -ENOMEM only. Cost: a lookup or an update is amortised O(1) plus
 * the id's and the text's lengths; a walk is O(entries). Memory: the ids
 * and texts, each at most KB_REPORT_TEXT_MAX bytes.
 */
#ifndef KB_CACHE_RECORD_REPORTS_H
#define KB_CACHE_RECORD_REPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api/jobstatus.h"
#include "api/resource.h"
#include "base/strmap.h"
#include "cache/record_file.h"

/* A report's text is cut to this many bytes (with its NUL), the same way
 * by the writer and the replay. */
#define KB_REPORT_TEXT_MAX 1024

/* The texts. Each writes buf (n bytes, always terminated). */
void kb_report_text_job(const kb_job_status *s, char *buf, size_t n);
void kb_report_text_queue(const kb_res *deserved, const kb_resnames *names, char *buf,
			  size_t n);
void kb_report_text_pending(const char *reason, char *buf, size_t n);

/* The kind named by a "report" line's field "kind" (kb_report_kind_field's
 * names): 0 and *ret, or -EINVAL. */
int kb_report_kind_parse(const char *field, kb_report_kind *ret);

/* One "report" line of session n (with its "\n"): the text, or, when text
 * is NULL, {"gone":true}: the report was not made again. */
void kb_record_put_report(FILE *out, uint64_t n, kb_report_kind kind, const char *key,
			  const char *text);

typedef struct kb_report_entry {
	char *id;  /* kb_report_kind_field, a space, the key: owned, the map's key */
	const char *key; /* inside id */
	kb_report_kind kind;
	char *text;       /* the last text recorded: owned */
	uint64_t session; /* the session that last made it (the writer's) */
	/* The replay's: where text was read, and what its own session made. */
	uint64_t offset, line;
	char *got;            /* owned; NULL when not made */
	uint64_t got_session; /* the replayed session that made it */
	uint64_t got_seq;     /* its place among that session's reports */
} kb_report_entry;

typedef struct kb_report_book {
	kb_strmap index; /* id -> position in entries */
	kb_report_entry *entries;
	size_t n, cap;
} kb_report_book;

void kb_report_book_init(kb_report_book *b);
void kb_report_book_release(kb_report_book *b);

/* The entry of (kind, key): found, or added (empty text, session 0) when
 * add is set. NULL when absent and not added, or on -ENOMEM (*oom set).
 * The pointer is valid until the next add or remove. */
kb_report_entry *kb_report_book_at(kb_report_book *b, kb_report_kind kind, const char *key,
				   bool add, bool *oom);

/* Sets *slot (an entry's text or got) to a copy of text. -ENOMEM leaves
 * it as it was. */
int kb_report_set(char **slot, const char *text);

/* Removes entry i; the last entry takes its place. */
void kb_report_book_remove(kb_report_book *b, size_t i);

#endif

/* record.h - `kube-batchd --record FILE`: the daemon's input and decisions
 * written to a file, so that `kube-batchd replay FILE` (cmd/replay.c) can
 * run the same sessions again and say where a decision differs. A bug
 * report becomes a file.
 *
 * What is written (the format: cache/record_file.h), all through the code
 * paths the daemon itself uses, so that replay feeds the same functions:
 *  - at start: the header, and the configuration in force (the scheduler
 *    configuration's text as loaded, the scheduler names, the default
 *    queue): kb_recorder_load_conf loads it from the text it records;
 *  - each load of the queue file, with the text loaded
 *    (kb_recorder_load_queues loads it from that text, so the record and
 *    the daemon cannot disagree about what was in the file);
 *  - each object a reflector delivers, as the API's JSON (the reflector's
 *    `raw` hook, kube/reflector.h), when the store takes it (with the
 *    clock) or marks it undecodable; each removal (key and kind), relists'
 *    included;
 *  - each session: its clock and what the scheduler's own state in the
 *    store is at its start (assumed bindings, evictions, holds after a
 *    refused binding, PodGroup phases written, volume assumptions), that
 *    is, what the writers told the store, synchronously or when an answer
 *    came; then its decisions in order (bind, bind_volumes, evict, with
 *    what the writers returned), through kb_recorder_effects, a tee in
 *    front of the daemon's effects; then its reports (PodGroup statuses,
 *    queue shares, pending reasons) by name, those that are new, changed
 *    or gone since the session before (cache/record_reports.h), and a
 *    digest of them all.
 *
 * Records are gathered in memory and written at the end of each session
 * (and after the configuration), and between sessions whenever what is
 * gathered passes KB_RECORD_SPILL_BYTES (a standby runs no sessions; a
 * large cluster's first LIST comes before the first one), then flushed
 * (fflush, no fsync): a crash of the daemon loses at most what came since
 * the last write, and the file never ends inside a session. The file is created at
 * start; one already there (a run before a restart: the one that crashed)
 * is kept as PATH.1, replacing an older PATH.1.
 *
 * The size cap (max_bytes, --record-max-bytes, default 1 GiB): when what
 * is gathered would take the file past it, the gathered records are
 * dropped, a last line {"r":"stop",...} says why, one warning is logged
 * and nothing more is recorded; the file stays a valid record of the
 * sessions before. A write error does the same (logged with errno).
 *
 * Cost: off (no --record), nothing: the daemon holds a NULL recorder, each
 * hook is one NULL check and the reflectors get no raw hook. On: writing
 * an object is O(its JSON); a session start is O(pods + PodGroups +
 * volumes) to find the objects with the scheduler's state (writing
 * O(those)); a decision or report O(1) plus its strings; a session's end
 * O(reports of the session before). Memory: the records since the last
 * write (between sessions about KB_RECORD_SPILL_BYTES at most; a session's
 * own records), never more than the cap, and each report's last text (one
 * per PodGroup, queue and pending pod).
 *
 * Ownership: the recorder copies nothing it is handed beyond the call,
 * except in kb_recorder_seen (the tree must live until the reflector's
 * upsert or undecodable call that follows, as it does). Errors: only
 * kb_recorder_open fails; later failures stop the recording with a log
 * line and the daemon goes on.
 */
#ifndef KB_DAEMON_RECORD_H
#define KB_DAEMON_RECORD_H

#include <stdint.h>

#include "api/effects.h"
#include "base/error.h"
#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "cache/objects.h"
#include "queue/queue_conf.h"
#include "scheduler/conf.h"

typedef struct kb_recorder kb_recorder;

/* Between sessions, what is gathered is written once it passes this. */
#define KB_RECORD_SPILL_BYTES ((uint64_t)1 << 20)

/* Creates path (an existing one renamed to path.1 first) and writes the
 * header. max_bytes: the cap (0:
 * KB_RECORD_MAX_BYTES_DEFAULT; less than KB_RECORD_MIN_BYTES is -EINVAL).
 * Returns the recorder, or NULL with err (-errno naming --record and the
 * path). */
kb_recorder *kb_recorder_open(const char *path, uint64_t max_bytes, kb_err *err);

/* Writes what is gathered, closes the file, frees. Accepts NULL; returns
 * NULL. */
kb_recorder *kb_recorder_close(kb_recorder *rec);

/* Loads the scheduler configuration (conf_path's file, or the built-in
 * default when NULL) and records it with the scheduler names and the
 * default queue (all borrowed). With rec NULL, exactly kb_conf_load_file
 * or kb_conf_load_default. Returns what they return. */
int kb_recorder_load_conf(kb_recorder *rec, const char *conf_path, const kb_registry *reg,
			  const char *const *names, uint32_t nnames, const char *default_queue,
			  kb_conf *ret, kb_err *err);

/* Loads the queue file path as kb_queue_conf_load_file does, from a text
 * read once and recorded with whether it loaded. With rec NULL, exactly
 * kb_queue_conf_load_file. */
int kb_recorder_load_queues(kb_recorder *rec, const char *path, kb_resnames *names,
			    kb_queue_conf *ret, kb_err *err);

/* The reflector's raw hook: obj (api_version and kind its defaults) is
 * about to be decoded. Remembered (not copied) for the call that follows. */
void kb_recorder_seen(kb_recorder *rec, const char *api_version, const char *kind,
		      const kb_yaml_node *obj);

/* The object last seen went to the store at wall time t_ms (the
 * created_ms given to kb_cluster_apply). */
void kb_recorder_upsert(kb_recorder *rec, int64_t t_ms);

/* The object last seen did not decode; the store marks kind/key. */
void kb_recorder_undecodable(kb_recorder *rec, kb_kind kind, const char *key);

/* kind/key was removed from the store. */
void kb_recorder_remove(kb_recorder *rec, kb_kind kind, const char *key);

/* A session starts at now_ms over c (read only): records the clock and the
 * scheduler's own state in the store. */
void kb_recorder_session_begin(kb_recorder *rec, const kb_cluster *c, int64_t now_ms);

/* The session ended (rc: kb_session_run_actions' result, or open's when
 * it did not open): its digest is recorded and everything gathered is
 * written and flushed. */
void kb_recorder_session_end(kb_recorder *rec, int rc);

/* The tee (api/effects.h): every effect goes on to next unchanged and its
 * result comes back; decisions and reports are recorded. ctx is a
 * kb_recorder_tee. */
typedef struct kb_recorder_tee {
	const kb_effects *next;
	void *next_ctx;
	kb_recorder *rec;
} kb_recorder_tee;

extern const kb_effects kb_recorder_effects;

#endif

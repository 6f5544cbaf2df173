/* replay.c - `kube-batchd replay FILE`: the sessions of a --record file
 * (daemon/record.h; the format: cache/record_file.h) run again on the
 * input recorded, through the daemon's own code: the objects decoded by
 * the same decoders from the API's JSON and applied to a fresh store
 * (cache/cluster.h) in the order the daemon applied them, the queue file
 * loaded from the text the daemon loaded, and at each session point the
 * store's own state set to what the writers had told the daemon's store,
 * then a session (kb_cluster_session_snapshot, kb_session_open with the
 * recorded clock, the memo, kb_session_run_actions, kb_session_close) as
 * daemon.c runs it. Its effects go to a table here that compares each
 * decision with the one recorded (and answers the session what the
 * writers answered it) and compares each report (a PodGroup's status, a
 * queue's share, a pending pod's reason) with the one recorded under its
 * name (cache/record_reports.h), then the reports' digests.
 *
 * Output: "N sessions, M decisions, all identical" and exit 0; or the
 * first difference: the session, the byte offset and line of the record,
 * what was expected and what this build decided, and exit 1. A file that
 * is truncated, of another format, malformed or over the cap is refused
 * with the offset (exit 1); a usage error exits 2.
 *
 * Not replayed: the API's answers themselves (only what they did to the
 * store), leader election, the writers' events and status writes (their
 * inputs, the reports, are compared by name and through the digests).
 *
 * Cost: as the daemon's sessions over the same cluster, plus, at each
 * session, O(pods + PodGroups + volumes) to set the store's own state and
 * the session's recorded decisions held in memory (its lines' strings);
 * the reports by name: O(reports) per session, each report's text held
 * (the texts that differ twice).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"
#include "cache/cluster.h"
#include "cache/record_file.h"
#include "cache/record_reports.h"
#include "cmd/cli_cmds.h"
#include "plugins/registry.h"
#include "queue/queue_conf.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

#define CLAIMS_MAX 4096 /* as daemon/record.c's */

/* A decision recorded for the current session, with its line. */
typedef struct expected {
	kb_record_decision d; /* strings owned (dup_decision) */
	uint64_t offset, line;
} expected;

typedef struct replay {
	kb_record_reader rd;
	kb_cluster cluster;
	bool have_conf;
	kb_conf conf;
	kb_queue_conf qconf;
	bool qconf_loaded;
	char *names[KB_MAX_SCHEDULER_NAMES]; /* the cluster borrows them */
	char *default_queue;
	kb_session_memo memo;
	uint64_t sessions, decisions;
	bool stopped; /* the record ends with the writer's stop line */

	/* The session being replayed. */
	uint64_t n;
	uint64_t session_offset, session_line;
	expected *exp;
	uint32_t nexp, capexp, next;
	int64_t end_rc;
	uint64_t end_offset, end_line;
	/* The end record's counts and digests: all, then per kind when the
	 * record has them (end_kinds; records before they were written lack
	 * them). */
	uint64_t end_reports, end_kn[KB_REPORT_KINDS];
	char end_digest[24], end_kh[KB_REPORT_KINDS][24];
	bool end_kinds;
	kb_report_digest got;
	/* The reports by name: what the record says (text) and what this
	 * session made (got_session, and got when it differs). */
	kb_report_book book;
	uint64_t got_seq;
	bool oom; /* a report could not be kept */
	/* The first difference, and nothing after it is compared. */
	bool differs;
	char diff[2 * KB_ERR_MSG_MAX + 256];
} replay;

/* ---- the records before and between sessions ---------------------------------- */

/* The end record's per-kind counts and digests, when it has them. */
static int read_kinds(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	char f[32];
	(void)snprintf(f, sizeof(f), "%s_digest", kb_report_kind_field(KB_REPORT_JOB));
	rp->end_kinds = kb_yaml_get(rec, f) != NULL;
	for (int k = 0; rp->end_kinds && k < KB_REPORT_KINDS; k++) {
		const char *field = kb_report_kind_field((kb_report_kind)k), *digest;
		int64_t n;
		int r;
		(void)snprintf(f, sizeof(f), "%s_reports", field);
		if ((r = kb_record_int(&rp->rd, rec, f, &n, err)) < 0)
			return r;
		(void)snprintf(f, sizeof(f), "%s_digest", field);
		if ((r = kb_record_str(&rp->rd, rec, f, false, &digest, err)) < 0)
			return r;
		rp->end_kn[k] = (uint64_t)n;
		(void)snprintf(rp->end_kh[k], sizeof(rp->end_kh[k]), "%s", digest);
	}
	return 0;
}

static int load_conf(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const kb_record_reader *rd = &rp->rd;
	if (rp->have_conf)
		return kb_record_fail(rd, err, -EINVAL, "a second \"conf\" record");
	const char *text, *name, *dq;
	int r = kb_record_str(rd, rec, "scheduler_conf", true, &text, err);
	if (r == 0)
		r = kb_record_str(rd, rec, "scheduler_conf_name", false, &name, err);
	if (r == 0)
		r = kb_record_str(rd, rec, "default_queue", false, &dq, err);
	if (r < 0)
		return r;
	const kb_yaml_node *names = kb_yaml_get(rec, "scheduler_names");
	if (!names || names->kind != KB_YAML_SEQ || names->n < 1 ||
	    names->n > KB_MAX_SCHEDULER_NAMES)
		return kb_record_fail(rd, err, -EINVAL,
				      "record \"conf\": field \"scheduler_names\": must be a list of "
				      "1 to %d names",
				      KB_MAX_SCHEDULER_NAMES);
	if (!(rp->default_queue = strdup(dq)))
		return -ENOMEM;
	for (size_t i = 0; i < names->n; i++) {
		const char *s = kb_yaml_str(names->items[i]);
		if (!s || !(rp->names[i] = strdup(s)))
			return kb_record_fail(rd, err, s ? -ENOMEM : -EINVAL,
					      "record \"conf\": field \"scheduler_names\": item %zu", i);
	}
	kb_err e = {0};
	r = text ? kb_conf_load_buffer(text, strlen(text), name, &kb_builtin_registry, &rp->conf, &e)
		 : kb_conf_load_default(&kb_builtin_registry, &rp->conf, &e);
	if (r < 0)
		return kb_record_fail(rd, err, r, "record \"conf\": the scheduler configuration "
						  "does not load here: %s",
				      e.msg);
	/* From here on release() releases the configuration and the store. */
	rp->have_conf = true;
	kb_cluster_init(&rp->cluster, rp->names[0], rp->default_queue);
	for (size_t i = 1; i < names->n; i++)
		if (kb_cluster_add_scheduler_name(&rp->cluster, rp->names[i]) < 0)
			return kb_record_fail(rd, err, -EINVAL, "too many scheduler names");
	return 0;
}

/* A load of the queue file: loaded from the text recorded, kept when it
 * loads (as the daemon does); whether it loads must agree with the record. */
static int load_queues(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const char *name, *content;
	bool ok;
	int r = kb_record_str(&rp->rd, rec, "name", false, &name, err);
	if (r == 0)
		r = kb_record_str(&rp->rd, rec, "content", false, &content, err);
	if (r == 0)
		r = kb_record_bool(&rp->rd, rec, "ok", &ok, err);
	if (r < 0)
		return r;
	kb_queue_conf fresh;
	memset(&fresh, 0, sizeof(fresh));
	kb_err e = {0};
	r = kb_queue_conf_load_buffer(content, strlen(content), name, &rp->cluster.resnames, &fresh,
				      &e);
	if ((r == 0) != ok) {
		if (r == 0)
			kb_queue_conf_release(&fresh);
		return kb_record_fail(&rp->rd, err, -EINVAL,
				      "the queue file \"%s\" %s here, the daemon's %s", name,
				      r == 0 ? "loads" : "does not load", ok ? "did" : "did not");
	}
	if (r < 0)
		return 0;
	if (rp->qconf_loaded)
		kb_queue_conf_release(&rp->qconf);
	rp->qconf = fresh;
	rp->qconf_loaded = true;
	rp->cluster.queue_conf = &rp->qconf;
	kb_cluster_queue_conf_changed(&rp->cluster);
	return 0;
}

/* kb_kind_name backwards. */
static int kind_of_name(const char *name, kb_kind *ret)
{
	for (int k = KB_KIND_NODE; name && k <= KB_KIND_LAST; k++) {
		if (strcmp(kb_kind_name((kb_kind)k), name) == 0) {
			*ret = (kb_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

static int kind_field(const kb_record_reader *rd, const kb_yaml_node *rec, const char *field,
		      kb_kind *ret, kb_err *err)
{
	const char *name;
	int r = kb_record_str(rd, rec, field, false, &name, err);
	if (r == 0 && kind_of_name(name, ret) < 0)
		return kb_record_fail(rd, err, -EINVAL, "record \"%s\": field \"%s\": unknown kind \"%s\"",
				      kb_record_type(rec), field, name);
	return r;
}

/* An object the reflector delivered: decoded by the daemon's decoder and
 * applied (object), or decoded, refused, and marked (undecodable). */
static int apply_object(replay *rp, const kb_yaml_node *rec, bool good, kb_err *err)
{
	const kb_record_reader *rd = &rp->rd;
	const char *api, *kind, *key = NULL;
	int64_t t = 0;
	kb_kind store_kind = KB_KIND_OTHER;
	int r = kb_record_str(rd, rec, "api", false, &api, err);
	if (r == 0)
		r = kb_record_str(rd, rec, "kind", false, &kind, err);
	if (r == 0 && good)
		r = kb_record_int(rd, rec, "t", &t, err);
	if (r == 0 && !good)
		r = kb_record_str(rd, rec, "key", false, &key, err);
	if (r == 0 && !good)
		r = kind_field(rd, rec, "store_kind", &store_kind, err);
	const kb_yaml_node *obj = kb_yaml_get(rec, "object");
	if (r == 0 && (!obj || obj->kind != KB_YAML_MAP))
		r = kb_record_fail(rd, err, -EINVAL, "record \"%s\": field \"object\": must be an "
						     "object", kb_record_type(rec));
	if (r < 0)
		return r;
	kb_object *o = NULL;
	kb_err e = {0};
	r = kb_object_decode_as(obj, api, kind, NULL, &rp->cluster.resnames, &o, &e);
	/* The reflector also refuses an object of another kind or version than
	 * its resource serves (kube/reflector.c decode_item). */
	if (r == 0 && (strcmp(o->api_version, api) != 0 || strcmp(o->kind_name, kind) != 0)) {
		o = kb_object_free(o);
		r = kb_err_set(&e, -EINVAL, "apiVersion %s, kind %s: not the resource's", api, kind);
	}
	if (good && r < 0)
		return kb_record_fail(rd, err, r, "the object decoded in the daemon, not here: %s",
				      e.msg);
	if (!good && r == 0) {
		kb_object_free(o);
		return kb_record_fail(rd, err, -EINVAL,
				      "%s \"%s\" did not decode in the daemon, and decodes here",
				      kind, key);
	}
	if (!good) {
		r = kb_cluster_undecodable_object(&rp->cluster, store_kind, key, obj, NULL);
		return r == -ENOMEM ? r : 0;
	}
	return kb_cluster_apply(&rp->cluster, o, t);
}

static int apply_delete(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	kb_kind kind;
	const char *key;
	int r = kind_field(&rp->rd, rec, "kind", &kind, err);
	if (r == 0)
		r = kb_record_str(&rp->rd, rec, "key", false, &key, err);
	if (r == 0)
		kb_cluster_delete(&rp->cluster, kind, key);
	return r;
}

/* ---- the store's own state at a session's start --------------------------------- */

static const kb_yaml_node *list_field(const kb_record_reader *rd, const kb_yaml_node *rec,
				      const char *field, kb_err *err)
{
	const kb_yaml_node *l = kb_yaml_get(rec, field);
	if (!l || l->kind != KB_YAML_SEQ) {
		kb_record_fail(rd, err, -EINVAL, "record \"session\": field \"%s\": must be a list",
			       field);
		return NULL;
	}
	return l;
}

typedef struct pod_state {
	const char *key, *node;
	bool over, held;
	int64_t status, started, gpus, evicted;
} pod_state;

static int read_pod_state(const kb_record_reader *rd, const kb_yaml_node *it, pod_state *p,
			  kb_err *err)
{
	int r = kb_record_str(rd, it, "key", false, &p->key, err);
	if (r == 0)
		r = kb_record_str(rd, it, "node", true, &p->node, err);
	if (r == 0)
		r = kb_record_bool(rd, it, "over", &p->over, err);
	if (r == 0)
		r = kb_record_bool(rd, it, "held", &p->held, err);
	if (r == 0)
		r = kb_record_int(rd, it, "status", &p->status, err);
	if (r == 0)
		r = kb_record_int(rd, it, "started", &p->started, err);
	if (r == 0)
		r = kb_record_int(rd, it, "gpus", &p->gpus, err);
	if (r == 0)
		r = kb_record_int(rd, it, "evicted", &p->evicted, err);
	if (r == 0 && (p->status < 0 || p->status >= KB_TASK_NSTATUS || p->gpus < 0 ||
		       p->gpus > UINT32_MAX))
		r = kb_record_fail(rd, err, -EINVAL, "record \"session\": pod \"%s\": status or "
						     "gpus out of range", p->key);
	return r;
}

static bool same_node(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* One pod made as the record says. */
static int set_pod_state(replay *rp, const pod_state *p, kb_err *err)
{
	kb_cluster *c = &rp->cluster;
	const kb_slot *sl = kb_cluster_pod(c, p->key);
	if (!sl)
		return kb_record_fail(&rp->rd, err, -EINVAL,
				      "record \"session\": pod \"%s\" is not in the replayed store",
				      p->key);
	int r = 0;
	if (p->over && (!sl->overridden || !same_node(sl->node, p->node) ||
			sl->status != (kb_task_status)p->status || sl->started_ms != p->started ||
			sl->gpu_mask != (uint32_t)p->gpus))
		r = kb_cluster_set_pod(c, p->key, p->node, (kb_task_status)p->status, p->started,
				       (uint32_t)p->gpus);
	else if (!p->over && sl->overridden)
		r = kb_cluster_reset_pod(c, p->key);
	if (r == 0 && sl->evicted_ms != p->evicted)
		r = kb_cluster_note_eviction(c, p->key, p->evicted);
	if (r == 0 && sl->obj->u.pod.held != p->held)
		r = kb_cluster_hold_pod(c, p->key, p->held);
	return r;
}

/* The pods: each the record names as it says; every other pod without
 * any state of the scheduler's. */
static int set_pods(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const kb_yaml_node *l = list_field(&rp->rd, rec, "pods", err);
	if (!l)
		return -EINVAL;
	kb_strmap named;
	kb_strmap_init(&named);
	int r = 0;
	for (size_t i = 0; i < l->n && r == 0; i++) {
		pod_state p = {0};
		r = read_pod_state(&rp->rd, l->items[i], &p, err);
		if (r == 0)
			r = kb_strmap_put(&named, p.key, (int64_t)i);
		if (r == 0)
			r = set_pod_state(rp, &p, err);
	}
	const kb_store *s = &rp->cluster.pods;
	for (size_t i = 0; i < s->slots.n && r == 0; i++) {
		const kb_slot *sl = &s->slots.v[i];
		if (!sl->obj || kb_strmap_get(&named, sl->obj->meta.key, NULL))
			continue;
		pod_state none = {.key = sl->obj->meta.key};
		if (sl->overridden || sl->evicted_ms || sl->obj->u.pod.held)
			r = set_pod_state(rp, &none, err);
	}
	kb_strmap_release(&named);
	return r;
}

static int set_podgroups(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const kb_yaml_node *l = list_field(&rp->rd, rec, "podgroups", err);
	if (!l)
		return -EINVAL;
	for (size_t i = 0; i < l->n; i++) {
		const char *key;
		int64_t phase;
		int r = kb_record_str(&rp->rd, l->items[i], "key", false, &key, err);
		if (r == 0)
			r = kb_record_int(&rp->rd, l->items[i], "phase", &phase, err);
		if (r == 0 && kb_cluster_set_podgroup_phase(&rp->cluster, key, (kb_pg_phase)phase) < 0)
			r = kb_record_fail(&rp->rd, err, -EINVAL,
					   "record \"session\": PodGroup \"%s\" is not in the "
					   "replayed store",
					   key);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One volume assumption as recorded (kb_cluster_assume_*). */
static int set_volume(replay *rp, const kb_yaml_node *it, kb_err *err)
{
	kb_kind kind;
	const char *key, *text;
	int64_t status;
	int r = kind_field(&rp->rd, it, "kind", &kind, err);
	if (r == 0)
		r = kb_record_str(&rp->rd, it, "key", false, &key, err);
	if (r == 0)
		r = kb_record_str(&rp->rd, it, "text", false, &text, err);
	if (r == 0)
		r = kb_record_int(&rp->rd, it, "status", &status, err);
	if (r < 0)
		return r;
	const kb_slot *sl = kb_cluster_slot(&rp->cluster, kind, key);
	if (sl && sl->overridden && sl->node && strcmp(sl->node, text) == 0 &&
	    sl->status == (kb_task_status)status)
		return 0;
	if (kind == KB_KIND_PV)
		r = kb_cluster_assume_pv_claim(&rp->cluster, key, text);
	else if (status == KB_TASK_BOUND)
		r = kb_cluster_assume_claim_bound(&rp->cluster, key, text);
	else
		r = kb_cluster_assume_selected_node(&rp->cluster, key, text);
	if (r < 0)
		return kb_record_fail(&rp->rd, err, r, "record \"session\": %s \"%s\": %s",
				      kb_kind_name(kind), key,
				      r == -ENOENT ? "not in the replayed store" : strerror(-r));
	return 0;
}

/* Whether the list l (checked by set_volume) names kind/key. */
static bool names_volume(const kb_yaml_node *l, kb_kind kind, const char *key)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *k = kb_yaml_str(kb_yaml_get(l->items[i], "key"));
		const char *kn = kb_yaml_str(kb_yaml_get(l->items[i], "kind"));
		if (k && kn && strcmp(k, key) == 0 && strcmp(kn, kb_kind_name(kind)) == 0)
			return true;
	}
	return false;
}

/* Volume assumptions the record does not name are forgotten. O(assumed
 * x named): both are the volumes being bound, a few. */
static void forget_volumes(kb_cluster *c, const kb_yaml_node *l, kb_kind kind)
{
	const kb_store *s = kind == KB_KIND_PV ? &c->pvs : &c->pvcs;
	for (size_t i = 0; i < s->slots.n; i++) {
		const kb_slot *sl = &s->slots.v[i];
		if (sl->obj && sl->overridden && !names_volume(l, kind, sl->obj->meta.key))
			(void)kb_cluster_forget_volume_assumption(c, kind, sl->obj->meta.key);
	}
}

static int set_volumes(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const kb_yaml_node *l = list_field(&rp->rd, rec, "volumes", err);
	if (!l)
		return -EINVAL;
	for (size_t i = 0; i < l->n; i++) {
		int r = set_volume(rp, l->items[i], err);
		if (r < 0)
			return r;
	}
	forget_volumes(&rp->cluster, l, KB_KIND_PVC);
	forget_volumes(&rp->cluster, l, KB_KIND_PV);
	return 0;
}

/* ---- a session ------------------------------------------------------------------ */

static void free_expected(replay *rp)
{
	for (uint32_t i = 0; i < rp->nexp; i++) {
		free((char *)rp->exp[i].d.pod);
		free((char *)rp->exp[i].d.node);
		free((char *)rp->exp[i].d.reason);
		free((char *)rp->exp[i].d.claims);
	}
	rp->nexp = rp->next = 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = true;
	return c;
}

static int push_expected(replay *rp, const kb_record_decision *d)
{
	if (rp->nexp == rp->capexp) {
		uint32_t cap = rp->capexp ? rp->capexp * 2 : 64;
		expected *n = realloc(rp->exp, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		rp->exp = n;
		rp->capexp = cap;
	}
	bool oom = false;
	expected *e = &rp->exp[rp->nexp++];
	e->d = *d;
	e->d.pod = dup_or_null(d->pod, &oom);
	e->d.node = dup_or_null(d->node, &oom);
	e->d.reason = dup_or_null(d->reason, &oom);
	e->d.claims = dup_or_null(d->claims, &oom);
	e->offset = rp->rd.offset;
	e->line = rp->rd.line;
	return oom ? -ENOMEM : 0;
}

/* A "report" line: the report's text from this session on, or its end
 * ("gone"). */
static int read_report(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const kb_record_reader *rd = &rp->rd;
	const char *field, *key, *text = NULL;
	kb_report_kind kind;
	int r = kb_record_str(rd, rec, "kind", false, &field, err);
	if (r == 0)
		r = kb_record_str(rd, rec, "key", false, &key, err);
	if (r < 0)
		return r;
	if (kb_report_kind_parse(field, &kind) < 0)
		return kb_record_fail(rd, err, -EINVAL,
				      "record \"report\": field \"kind\": unknown kind \"%s\"", field);
	bool gone = kb_yaml_get(rec, "gone") != NULL;
	if (gone) {
		if ((r = kb_record_bool(rd, rec, "gone", &gone, err)) < 0)
			return r;
		if (!gone)
			return kb_record_fail(rd, err, -EINVAL,
					      "record \"report\": field \"gone\": only true is written");
	} else if ((r = kb_record_str(rd, rec, "text", false, &text, err)) < 0) {
		return r;
	}
	bool oom = false;
	kb_report_entry *e = kb_report_book_at(&rp->book, kind, key, !gone, &oom);
	if (oom)
		return -ENOMEM;
	if (gone) {
		if (!e)
			return kb_record_fail(rd, err, -EINVAL,
					      "record \"report\": the %s report of \"%s\" is gone but "
					      "was never recorded",
					      field, key);
		kb_report_book_remove(&rp->book, (size_t)(e - rp->book.entries));
		return 0;
	}
	if (kb_report_set(&e->text, text) < 0)
		return -ENOMEM;
	e->offset = rd->offset;
	e->line = rd->line;
	return 0;
}

/* Reads the session's decisions and its end record into rp. */
static int read_session_records(replay *rp, kb_err *err)
{
	for (;;) {
		const kb_yaml_node *rec;
		int r = kb_record_reader_next(&rp->rd, &rec, err);
		if (r < 0)
			return r;
		if (r == 0)
			return kb_record_fail(&rp->rd, err, -EINVAL,
					      "session %" PRIu64 " has no \"end\" record", rp->n);
		const char *type = kb_record_type(rec);
		int64_t n = 0;
		if ((r = kb_record_int(&rp->rd, rec, "n", &n, err)) < 0)
			return r;
		if ((uint64_t)n != rp->n)
			return kb_record_fail(&rp->rd, err, -EINVAL,
					      "record \"%s\" of session %" PRId64 " inside session "
					      "%" PRIu64, type, n, rp->n);
		if (strcmp(type, "end") == 0) {
			const char *digest;
			int64_t reports = 0;
			r = kb_record_int(&rp->rd, rec, "reports", &reports, err);
			if (r == 0)
				r = kb_record_int(&rp->rd, rec, "rc", &rp->end_rc, err);
			if (r == 0)
				r = kb_record_str(&rp->rd, rec, "digest", false, &digest, err);
			if (r < 0)
				return r;
			rp->end_reports = (uint64_t)reports;
			(void)snprintf(rp->end_digest, sizeof(rp->end_digest), "%s", digest);
			if ((r = read_kinds(rp, rec, err)) < 0)
				return r;
			rp->end_offset = rp->rd.offset;
			rp->end_line = rp->rd.line;
			return 0;
		}
		if (strcmp(type, "report") == 0) {
			if ((r = read_report(rp, rec, err)) < 0)
				return r;
			continue;
		}
		kb_record_decision d;
		if ((r = kb_record_decision_read(&rp->rd, rec, &d, err)) < 0)
			return r;
		if ((r = push_expected(rp, &d)) < 0)
			return r;
	}
}

/* Writes d as its record line into buf (without the "\n"). */
static void decision_text(const kb_record_decision *d, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	if (!f) {
		(void)snprintf(buf, n, "?");
		return;
	}
	kb_record_put_decision(f, d);
	(void)fclose(f);
	buf[n - 1] = '\0';
	size_t len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
}

/* The first difference: at the expected decision's line (or the end's). */
static void differ(replay *rp, uint64_t offset, uint64_t line, const char *what,
		   const char *expected_text, const char *got_text)
{
	if (rp->differs)
		return;
	rp->differs = true;
	(void)snprintf(rp->diff, sizeof(rp->diff),
		       "%s: session %" PRIu64 " (offset %" PRIu64 ", line %" PRIu64 "): %s\n"
		       "  expected: %s\n  got:      %s",
		       rp->rd.path, rp->n, offset, line, what, expected_text, got_text);
}

/* A decision of the replayed session: compared with the next recorded
 * one; the session is answered what the writers answered the daemon. */
static int decide(replay *rp, kb_record_decision *got)
{
	got->session = rp->n;
	rp->decisions++;
	char g[KB_ERR_MSG_MAX], e[KB_ERR_MSG_MAX];
	if (rp->next >= rp->nexp) {
		decision_text(got, g, sizeof(g));
		differ(rp, rp->end_offset, rp->end_line, "a decision the daemon did not make",
		       "(no more decisions: the session ended)", g);
		return 0;
	}
	const expected *x = &rp->exp[rp->next++];
	if (!kb_record_decision_same(&x->d, got)) {
		decision_text(got, g, sizeof(g));
		decision_text(&x->d, e, sizeof(e));
		differ(rp, x->offset, x->line, "the decision differs", e, g);
		return 0;
	}
	return x->d.rc;
}

static int r_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		  const kb_node *node)
{
	kb_record_decision d = {.kind = KB_DECISION_BIND, .pod = task->key, .node = node->name,
				.gpus = task->gpu_mask};
	return decide(ctx, &d);
}

static int r_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
			  const kb_node *node, const kb_task_volumes *vol, const int32_t *picks)
{
	char claims[CLAIMS_MAX];
	kb_record_claims(snap, vol, picks, claims, sizeof(claims));
	kb_record_decision d = {.kind = KB_DECISION_BIND_VOLUMES, .pod = task->key,
				.node = node->name, .claims = claims};
	return decide(ctx, &d);
}

static int r_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *task,
		   const char *reason)
{
	kb_record_decision d = {.kind = KB_DECISION_EVICT, .pod = task->key, .reason = reason};
	return decide(ctx, &d);
}

/* A report of the replayed session, set beside the one recorded under its
 * name; only a text that differs is kept. */
static void got_report(replay *rp, kb_report_kind kind, const char *key, const char *text)
{
	bool oom = false;
	kb_report_entry *e = kb_report_book_at(&rp->book, kind, key, true, &oom);
	if (!e) {
		rp->oom = true;
		return;
	}
	e->got_session = rp->n;
	e->got_seq = ++rp->got_seq;
	if (e->text && strcmp(e->text, text) == 0) {
		free(e->got);
		e->got = NULL;
	} else if (kb_report_set(&e->got, text) < 0) {
		rp->oom = true;
	}
}

static int r_job_status(void *ctx, const kb_snapshot *snap, const kb_job *job,
			const kb_job_status *status)
{
	replay *rp = ctx;
	kb_report_digest_job(&rp->got, job, status);
	char text[KB_REPORT_TEXT_MAX];
	kb_report_text_job(status, text, sizeof(text));
	got_report(rp, KB_REPORT_JOB, job->key, text);
	return 0;
}

static int r_queue_status(void *ctx, const kb_snapshot *snap, const kb_queue *queue,
			  const kb_res *deserved)
{
	replay *rp = ctx;
	kb_report_digest_queue(&rp->got, queue, deserved);
	char text[KB_REPORT_TEXT_MAX];
	kb_report_text_queue(deserved, &snap->resnames, text, sizeof(text));
	got_report(rp, KB_REPORT_QUEUE, queue->name, text);
	return 0;
}

static int r_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *task,
			  const char *reason)
{
	replay *rp = ctx;
	kb_report_digest_pending(&rp->got, task, reason);
	char text[KB_REPORT_TEXT_MAX];
	kb_report_text_pending(reason, text, sizeof(text));
	got_report(rp, KB_REPORT_PENDING, task->key, text);
	return 0;
}

static const kb_effects replay_effects = {
	.bind = r_bind,
	.bind_volumes = r_bind_volumes,
	.evict = r_evict,
	.job_status = r_job_status,
	.queue_status = r_queue_status,
	.task_pending = r_task_pending,
};

/* What a report of kind k is about, for messages: "the PodGroup status
 * of". */
static const char *report_about(kb_report_kind k)
{
	static const char *const a[KB_REPORT_KINDS] = {
		[KB_REPORT_JOB] = "the PodGroup status of",
		[KB_REPORT_QUEUE] = "the deserved share of queue",
		[KB_REPORT_PENDING] = "the pending reason of pod",
	};
	return (unsigned)k < KB_REPORT_KINDS ? a[k] : "the report of";
}

/* The reports by name: the first one this session made otherwise than the
 * record says (in the order the session made them), else the first one
 * recorded and not made (in the record's order). O(reports). */
static void compare_named(replay *rp)
{
	const kb_report_entry *made = NULL, *missing = NULL;
	for (size_t i = 0; i < rp->book.n; i++) {
		const kb_report_entry *e = &rp->book.entries[i];
		if (e->got_session == rp->n) {
			if (e->got && (!made || e->got_seq < made->got_seq))
				made = e;
		} else if (e->text && (!missing || e->offset < missing->offset)) {
			missing = e;
		}
	}
	char what[KB_ERR_MSG_MAX];
	if (made && made->text) {
		(void)snprintf(what, sizeof(what), "%s \"%s\" differs", report_about(made->kind),
			       made->key);
		differ(rp, made->offset, made->line, what, made->text, made->got);
	} else if (made) {
		(void)snprintf(what, sizeof(what), "%s \"%s\": a report the daemon did not make",
			       report_about(made->kind), made->key);
		differ(rp, rp->end_offset, rp->end_line, what, "(not reported)", made->got);
	} else if (missing) {
		(void)snprintf(what, sizeof(what), "%s \"%s\": a report the replay did not make",
			       report_about(missing->kind), missing->key);
		differ(rp, missing->offset, missing->line, what, missing->text, "(not reported)");
	}
}

/* After the session: decisions recorded and not made, the reports, the
 * session's result. */
static void compare_end(replay *rp, int rc)
{
	char e[KB_ERR_MSG_MAX], g[64];
	if (rp->next < rp->nexp) {
		const expected *x = &rp->exp[rp->next];
		decision_text(&x->d, e, sizeof(e));
		differ(rp, x->offset, x->line, "a decision the replay did not make", e,
		       "(no more decisions: the session ended)");
	}
	compare_named(rp);
	char digest[24];
	for (int k = 0; rp->end_kinds && k < KB_REPORT_KINDS; k++) {
		(void)snprintf(digest, sizeof(digest), "%016" PRIx64, rp->got.kh[k]);
		if (rp->got.kn[k] == rp->end_kn[k] && strcmp(digest, rp->end_kh[k]) == 0)
			continue;
		char what[64];
		(void)snprintf(what, sizeof(what), "the %s differ",
			       kb_report_kind_what((kb_report_kind)k));
		(void)snprintf(e, sizeof(e), "%" PRIu64 " reports, digest %s", rp->end_kn[k],
			       rp->end_kh[k]);
		(void)snprintf(g, sizeof(g), "%" PRIu64 " reports, digest %s", rp->got.kn[k], digest);
		differ(rp, rp->end_offset, rp->end_line, what, e, g);
	}
	(void)snprintf(digest, sizeof(digest), "%016" PRIx64, rp->got.h);
	if (rp->got.n != rp->end_reports || strcmp(digest, rp->end_digest) != 0) {
		(void)snprintf(e, sizeof(e), "%" PRIu64 " reports, digest %s", rp->end_reports,
			       rp->end_digest);
		(void)snprintf(g, sizeof(g), "%" PRIu64 " reports, digest %s", rp->got.n, digest);
		differ(rp, rp->end_offset, rp->end_line,
		       "the reports differ (PodGroup statuses, queue shares or pending reasons)", e,
		       g);
	}
	if (rc != rp->end_rc) {
		(void)snprintf(e, sizeof(e), "result %" PRId64, rp->end_rc);
		(void)snprintf(g, sizeof(g), "result %d", rc);
		differ(rp, rp->end_offset, rp->end_line, "the session's result differs", e, g);
	}
}

/* Opens, runs and closes one session as daemon.c's run_session does. */
static int run_session(replay *rp, int64_t now, kb_err *err)
{
	kb_snapshot *snap;
	kb_err e = {0};
	int r = kb_cluster_session_snapshot(&rp->cluster, &snap, &e);
	if (r < 0)
		return kb_err_set(err, r, "session %" PRIu64 ": snapshot: %s", rp->n, e.msg);
	kb_report_digest_init(&rp->got);
	kb_session ssn;
	r = kb_session_open(&ssn, snap, &rp->conf, &replay_effects, rp, now, &e);
	if (r < 0) {
		compare_end(rp, r);
		return 0;
	}
	kb_session_use_memo(&ssn, &rp->memo);
	r = kb_session_run_actions(&ssn, &e);
	(void)kb_session_close(&ssn);
	if (rp->oom)
		return kb_err_set(err, -ENOMEM, "session %" PRIu64 ": out of memory", rp->n);
	compare_end(rp, r);
	return 0;
}

static int session(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	int64_t n, now;
	int r = kb_record_int(&rp->rd, rec, "n", &n, err);
	if (r == 0)
		r = kb_record_int(&rp->rd, rec, "now", &now, err);
	if (r < 0)
		return r;
	if ((uint64_t)n != rp->n + 1)
		return kb_record_fail(&rp->rd, err, -EINVAL,
				      "record \"session\": field \"n\": %" PRId64 " after session "
				      "%" PRIu64, n, rp->n);
	rp->n = (uint64_t)n;
	rp->session_offset = rp->rd.offset;
	rp->session_line = rp->rd.line;
	r = set_pods(rp, rec, err);
	if (r == 0)
		r = set_podgroups(rp, rec, err);
	if (r == 0)
		r = set_volumes(rp, rec, err);
	if (r < 0)
		return r;
	free_expected(rp);
	if ((r = read_session_records(rp, err)) < 0)
		return r;
	rp->sessions++;
	return run_session(rp, now, err);
}

/* ---- the file ------------------------------------------------------------------- */

static int one_record(replay *rp, const kb_yaml_node *rec, kb_err *err)
{
	const char *type = kb_record_type(rec);
	if (strcmp(type, "conf") == 0)
		return load_conf(rp, rec, err);
	if (!rp->have_conf)
		return kb_record_fail(&rp->rd, err, -EINVAL,
				      "record \"%s\" before the \"conf\" record", type);
	if (strcmp(type, "queues") == 0)
		return load_queues(rp, rec, err);
	if (strcmp(type, "object") == 0 || strcmp(type, "undecodable") == 0)
		return apply_object(rp, rec, type[0] == 'o', err);
	if (strcmp(type, "delete") == 0)
		return apply_delete(rp, rec, err);
	if (strcmp(type, "session") == 0)
		return session(rp, rec, err);
	if (strcmp(type, "stop") == 0) {
		rp->stopped = true;
		return 0;
	}
	return kb_record_fail(&rp->rd, err, -EINVAL,
			      "field \"r\": unknown record type \"%s\" (or one outside its "
			      "session)",
			      type);
}

static int replay_file(replay *rp, const char *path, uint64_t max_bytes, kb_err *err)
{
	int r = kb_record_reader_open(&rp->rd, path, max_bytes, err);
	if (r < 0)
		return r;
	for (;;) {
		const kb_yaml_node *rec;
		r = kb_record_reader_next(&rp->rd, &rec, err);
		if (r <= 0)
			return r;
		if ((r = one_record(rp, rec, err)) < 0)
			return r;
		if (rp->differs)
			return 0;
	}
}

static void release(replay *rp)
{
	free_expected(rp);
	kb_report_book_release(&rp->book);
	free(rp->exp);
	if (rp->have_conf) {
		kb_conf_release(&rp->conf);
		kb_cluster_release(&rp->cluster);
	}
	if (rp->qconf_loaded)
		kb_queue_conf_release(&rp->qconf);
	for (int i = 0; i < KB_MAX_SCHEDULER_NAMES; i++)
		free(rp->names[i]);
	free(rp->default_queue);
	kb_record_reader_release(&rp->rd);
}

static void usage(FILE *out)
{
	fputs("usage: kube-batchd replay FILE [--max-bytes N]\n"
	      "\n"
	      "Runs the sessions of a `kube-batchd --record FILE` recording again, on the input it\n"
	      "recorded, and compares each decision (bind, bind_volumes, evict) and each session's\n"
	      "reports with the recorded ones. Exit 0: \"N sessions, M decisions, all identical\";\n"
	      "1: the first difference (session, offset, expected, got), or a file refused (the\n"
	      "offset says where); 2: a usage error. --max-bytes: the largest file read (1 GiB).\n",
	      out);
}

int kb_cmd_replay(int argc, char **argv)
{
	const char *path = NULL;
	uint64_t max_bytes = 0;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
			errno = 0;
			unsigned long long v = strtoull(argv[++i], &end, 10);
			if (errno || !end || *end || v == 0) {
				fprintf(stderr, "kube-batchd replay: --max-bytes: expected a positive "
						"integer, got \"%s\"\n",
					argv[i]);
				return 2;
			}
			max_bytes = v;
		} else if (argv[i][0] == '-' || path) {
			fprintf(stderr, "kube-batchd replay: unexpected argument \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	replay *rp = calloc(1, sizeof(*rp));
	if (!rp) {
		fputs("kube-batchd replay: out of memory\n", stderr);
		return 1;
	}
	kb_err err = {0};
	int r = replay_file(rp, path, max_bytes, &err);
	int status = 0;
	if (r < 0) {
		fprintf(stderr, "kube-batchd replay: error: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	} else if (rp->differs) {
		printf("%s\n", rp->diff);
		status = 1;
	} else {
		printf("%" PRIu64 " sessions, %" PRIu64 " decisions, all identical%s\n", rp->sessions,
		       rp->decisions, rp->stopped ? " (the recording stopped at its size cap)" : "");
	}
	release(rp);
	free(rp);
	return status;
}

#include "cmd/check_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/snapshot.h"
#include "base/arena.h"
#include "cache/cluster.h"
#include "cache/manifests.h"
#include "queue/deserved.h"
#include "queue/queue_conf.h"
#include "scheduler/conf.h"
#include "scheduler/simulate.h"

/* Room for every resource of a vector, formatted ("name: quantity, ..."). */
#define RES_TEXT_MAX (KB_RES_MAX * (KB_RES_NAME_MAX + KB_QUANTITY_BUFSZ + 4))

enum { COL_QUEUE, COL_SOURCE, COL_WEIGHT, COL_RECLAIM, COL_STATE, COL_CAP, COL_GUAR, COL_DESERVED,
       COL_NS, NCOLS };

static const char *const col_title[NCOLS] = {"QUEUE",     "SOURCE",    "WEIGHT",   "RECLAIMABLE", "STATE",
					     "CAPABILITY", "GUARANTEE", "DESERVED", "NAMESPACES"};

/* One queue of the depth-first walk in add_tree: its children are scanned
 * from order[k] on. */
typedef struct frame {
	uint32_t qi;
	int depth;
	uint32_t k;
} frame;

typedef struct report {
	kb_arena arena; /* every string of the report */
	const kb_snapshot *snap;
	const kb_queue_conf *qc; /* NULL without a queue file */
	const kb_cluster *cluster;
	const kb_res *deserved; /* per snapshot queue, or NULL without a cluster */
	uint32_t *order;        /* snapshot indices in display order */
	bool *printed;
	frame *stack;       /* add_tree's, one frame per queue */
	const char ***rows; /* rows[i][col] */
	uint32_t nrows;
} report;

/* "cpu: 4, memory: 8Gi", pods left out; "-" when nothing is set. */
static const char *fmt_res(report *rp, const kb_res *r)
{
	kb_res v = *r;
	v.q[KB_RES_PODS] = 0;
	char buf[RES_TEXT_MAX];
	kb_res_format(&v, &rp->snap->resnames, buf, sizeof(buf));
	return kb_arena_strdup(&rp->arena, buf[0] ? buf : "-");
}

/* The capped resources only, zero included (a capability of 0 is a real ceiling). */
static const char *fmt_capability(report *rp, const kb_queue *q)
{
	char buf[RES_TEXT_MAX];
	size_t off = 0;
	buf[0] = '\0';
	for (int r = 0; r < rp->snap->resnames.n && off < sizeof(buf); r++) {
		if (!(q->capability_mask & (1u << r)))
			continue;
		char v[KB_QUANTITY_BUFSZ];
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s: %s", off ? ", " : "",
					rp->snap->resnames.name[r],
					kb_res_format_one(q->capability.q[r], &rp->snap->resnames, r, v));
	}
	return kb_arena_strdup(&rp->arena, buf[0] ? buf : "-");
}

/* The namespaces the file maps to queue `name`, in name order, or "-". */
static const char *fmt_namespaces(report *rp, const char *name)
{
	size_t len = 0;
	for (uint32_t i = 0; rp->qc && i < rp->qc->nns; i++)
		if (strcmp(rp->qc->ns_map[i].queue, name) == 0)
			len += strlen(rp->qc->ns_map[i].ns) + 2;
	if (len == 0)
		return "-";
	char *s = kb_arena_calloc(&rp->arena, len + 1, 1);
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < rp->qc->nns; i++) {
		if (strcmp(rp->qc->ns_map[i].queue, name) != 0)
			continue;
		if (*s)
			strcat(s, ", ");
		strcat(s, rp->qc->ns_map[i].ns);
	}
	return s;
}

static bool in_file(const report *rp, const char *name)
{
	for (uint32_t i = 0; rp->qc && i < rp->qc->nqueues; i++)
		if (strcmp(rp->qc->queues[i].name, name) == 0)
			return true;
	return false;
}

static bool is_object(const report *rp, const char *name)
{
	const kb_store *st = &rp->cluster->queues;
	for (size_t i = 0; i < st->slots.n; i++)
		if (st->slots.v[i].obj && strcmp(st->slots.v[i].obj->meta.name, name) == 0)
			return true;
	return false;
}

static const char *state_name(kb_queue_state s)
{
	return s == KB_QUEUE_OPEN ? "Open" : s == KB_QUEUE_CLOSED ? "Closed" : "Closing";
}

/* Adds the row of queue qi at depth (and marks it printed). */
static int add_row(report *rp, uint32_t qi, int depth, const char *note)
{
	const kb_queue *q = &rp->snap->queues[qi];
	rp->printed[qi] = true;
	const char **row = kb_arena_calloc(&rp->arena, NCOLS, sizeof(char *));
	if (!row)
		return -ENOMEM;
	const char *source = in_file(rp, q->name)     ? "file" :
			     is_object(rp, q->name) ? "Queue object" :
						      "implicit";
	row[COL_QUEUE] = kb_arena_printf(&rp->arena, "%*s%s", depth * 2, "", q->name);
	row[COL_SOURCE] = note ? kb_arena_printf(&rp->arena, "%s (%s)", source, note) : source;
	row[COL_WEIGHT] = kb_arena_printf(&rp->arena, "%d", q->weight);
	row[COL_RECLAIM] = q->reclaimable ? "yes" : "no";
	row[COL_STATE] = state_name(q->state);
	row[COL_CAP] = fmt_capability(rp, q);
	row[COL_GUAR] = fmt_res(rp, &q->guarantee);
	row[COL_DESERVED] = rp->deserved ? fmt_res(rp, &rp->deserved[qi]) : "";
	row[COL_NS] = fmt_namespaces(rp, q->name);
	for (int c = 0; c < NCOLS; c++)
		if (!row[c])
			return -ENOMEM;
	rp->rows[rp->nrows++] = row;
	return 0;
}

/* The next child of qi not printed yet, in display order, scanning from
 * *k on (and moving *k past it); -1 when there is none. */
static int64_t next_child(const report *rp, uint32_t qi, uint32_t *k)
{
	const kb_snapshot *s = rp->snap;
	for (; *k < s->nqueues; (*k)++) {
		uint32_t ci = rp->order[*k];
		if (!rp->printed[ci] && s->queues[ci].parent == (int32_t)qi)
			return ci;
	}
	return -1;
}

/* Adds the row of queue qi at depth 0, then its descendants depth first,
 * children in display order. Iterative: a chain of Queue objects may be as
 * deep as there are queues, and the stack (rp->stack, one frame per queue)
 * holds each queue at most once since a printed queue is never pushed. */
static int add_tree(report *rp, uint32_t qi, const char *note)
{
	int r = add_row(rp, qi, 0, note);
	if (r < 0)
		return r;
	uint32_t top = 0;
	rp->stack[top++] = (frame){.qi = qi, .depth = 0, .k = 0};
	while (top > 0) {
		frame *f = &rp->stack[top - 1];
		int64_t ci = next_child(rp, f->qi, &f->k);
		if (ci < 0) {
			top--;
			continue;
		}
		int depth = f->depth + 1;
		if ((r = add_row(rp, (uint32_t)ci, depth, NULL)) < 0)
			return r;
		rp->stack[top++] = (frame){.qi = (uint32_t)ci, .depth = depth, .k = 0};
	}
	return 0;
}

/* Display order: file queues in file order, then the other queues (Queue
 * objects) by name, then the implicit default queue. */
static void display_order(report *rp, const char *default_queue)
{
	const kb_snapshot *s = rp->snap;
	uint32_t n = 0;
	bool *taken = rp->printed; /* borrowed, cleared again below */
	for (uint32_t i = 0; rp->qc && i < rp->qc->nqueues; i++) {
		int32_t qi = kb_snapshot_find_queue(s, rp->qc->queues[i].name);
		if (qi >= 0 && !taken[qi]) {
			taken[qi] = true;
			rp->order[n++] = (uint32_t)qi;
		}
	}
	int32_t implicit = -1;
	for (uint32_t qi = 0; qi < s->nqueues; qi++) {
		if (taken[qi])
			continue;
		if (strcmp(s->queues[qi].name, default_queue) == 0 && !is_object(rp, default_queue)) {
			implicit = (int32_t)qi;
			continue;
		}
		taken[qi] = true;
		rp->order[n++] = qi;
	}
	if (implicit >= 0)
		rp->order[n++] = (uint32_t)implicit;
	memset(taken, 0, s->nqueues * sizeof(bool));
}

static int build_rows(report *rp, const char *default_queue)
{
	const kb_snapshot *s = rp->snap;
	uint32_t n = s->nqueues ? s->nqueues : 1;
	rp->order = kb_arena_calloc(&rp->arena, n, sizeof(uint32_t));
	rp->printed = kb_arena_calloc(&rp->arena, n, sizeof(bool));
	rp->rows = kb_arena_calloc(&rp->arena, n, sizeof(char **));
	rp->stack = kb_arena_calloc(&rp->arena, n, sizeof(frame));
	if (!rp->order || !rp->printed || !rp->rows || !rp->stack)
		return -ENOMEM;
	display_order(rp, default_queue);
	int r = 0;
	for (uint32_t k = 0; k < s->nqueues && r == 0; k++) {
		uint32_t qi = rp->order[k];
		if (!rp->printed[qi] && s->queues[qi].parent < 0)
			r = add_tree(rp, qi, NULL);
	}
	/* Whatever is left hangs off a loop of parents (only Queue objects can
	 * form one: the file's parents are checked when it loads). */
	for (uint32_t k = 0; k < s->nqueues && r == 0; k++) {
		uint32_t qi = rp->order[k];
		if (!rp->printed[qi])
			r = add_tree(rp, qi, "parent cycle");
	}
	return r;
}

/* One cell, padded to its column; the last column ends the line. */
static void print_cell(FILE *out, const char *text, int col, size_t width)
{
	if (col == NCOLS - 1)
		fprintf(out, "%s\n", text);
	else
		fprintf(out, "%-*s  ", (int)width, text);
}

static void print_table(const report *rp, FILE *out)
{
	size_t width[NCOLS];
	bool show[NCOLS];
	for (int c = 0; c < NCOLS; c++) {
		show[c] = c != COL_DESERVED || rp->deserved;
		width[c] = strlen(col_title[c]);
		for (uint32_t i = 0; i < rp->nrows; i++)
			if (strlen(rp->rows[i][c]) > width[c])
				width[c] = strlen(rp->rows[i][c]);
	}
	for (int c = 0; c < NCOLS; c++)
		if (show[c])
			print_cell(out, col_title[c], c, width[c]);
	for (uint32_t i = 0; i < rp->nrows; i++)
		for (int c = 0; c < NCOLS; c++)
			if (show[c])
				print_cell(out, rp->rows[i][c], c, width[c]);
}

static void print_conf(const kb_conf *conf, FILE *out)
{
	fprintf(out, "scheduler configuration: %s: valid; actions: ", conf->source);
	for (uint32_t i = 0; i < conf->nactions; i++)
		fprintf(out, "%s%s", i ? ", " : "", conf->actions[i]->name);
	fputs("; plugins: ", out);
	for (uint32_t t = 0; t < conf->ntiers; t++) {
		fputs(t ? " | " : "", out);
		for (uint32_t p = 0; p < conf->tiers[t].n; p++)
			fprintf(out, "%s%s", p ? ", " : "", conf->tiers[t].plugins[p].name);
	}
	fputc('\n', out);
}

static bool has_plugin(const kb_conf *conf, const char *name)
{
	for (uint32_t t = 0; t < conf->ntiers; t++)
		for (uint32_t p = 0; p < conf->tiers[t].n; p++)
			if (strcmp(conf->tiers[t].plugins[p].name, name) == 0)
				return true;
	return false;
}

/* Every queue asks for the cluster's whole allocatable: the shares the
 * proportion plugin would give when all are hungry. */
static int hungry_shares(report *rp, const kb_snapshot *s)
{
	uint32_t n = s->nqueues ? s->nqueues : 1;
	kb_share_input *in = kb_arena_calloc(&rp->arena, n, sizeof(*in));
	kb_res *out = kb_arena_calloc(&rp->arena, n, sizeof(*out));
	if (!in || !out)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nqueues; i++) {
		kb_share_input_of(&s->queues[i], &in[i]);
		in[i].request = s->total_allocatable; /* every queue hungry */
	}
	kb_deserved_compute(&s->total_allocatable, in, s->nqueues, out);
	rp->deserved = out;
	return 0;
}

/* Everything one check holds; released by check_release. */
typedef struct check {
	const kb_check_config_options *o;
	kb_conf conf;
	kb_queue_conf qc;
	kb_cluster cluster;
	kb_snapshot snap;
	kb_object_vec later; /* objects the manifests hold for later (none here) */
	report rp;
} check;

static void check_init(check *ck, const kb_check_config_options *o)
{
	memset(ck, 0, sizeof(*ck));
	ck->o = o;
	kb_arena_init(&ck->rp.arena);
	kb_cluster_init(&ck->cluster, o->scheduler_name, o->default_queue);
	kb_snapshot_init(&ck->snap);
}

static void check_release(check *ck)
{
	for (size_t i = 0; i < ck->later.n; i++)
		kb_object_free(ck->later.v[i]);
	KB_VEC_RELEASE(&ck->later);
	kb_snapshot_release(&ck->snap);
	kb_cluster_release(&ck->cluster);
	kb_queue_conf_release(&ck->qc);
	kb_conf_release(&ck->conf);
	kb_arena_release(&ck->rp.arena);
}

/* Loads and validates the files, in the order check_config.h gives, and
 * builds the snapshot. Returns 0 or the first error with err. */
static int load_inputs(check *ck, kb_err *err)
{
	const kb_check_config_options *o = ck->o;
	int r = o->scheduler_conf ?
			kb_conf_load_file(o->scheduler_conf, o->registry, &ck->conf, err) :
			kb_conf_load_default(o->registry, &ck->conf, err);
	if (r < 0)
		return r;
	if (o->queue_conf) {
		r = kb_queue_conf_load_file(o->queue_conf, &ck->cluster.resnames, &ck->qc, err);
		if (r < 0)
			return r;
		ck->cluster.queue_conf = &ck->qc;
	}
	for (uint32_t i = 0; i < o->nfiles; i++)
		if ((r = kb_manifests_load(&ck->cluster, o->files[i], &ck->later, err)) < 0)
			return r;
	if ((r = kb_cluster_snapshot(&ck->cluster, &ck->snap, err)) < 0)
		return r;
	if (o->queue_conf && o->nfiles)
		return kb_queue_conf_check_cluster(&ck->qc, &ck->snap.total_allocatable,
						   &ck->snap.resnames, err);
	return 0;
}

/* The report's rows (and deserved shares with a cluster). 0 or -ENOMEM. */
static int prepare_report(check *ck)
{
	report *rp = &ck->rp;
	rp->snap = &ck->snap;
	rp->qc = ck->o->queue_conf ? &ck->qc : NULL;
	rp->cluster = &ck->cluster;
	int r = 0;
	if (ck->o->nfiles && (r = hungry_shares(rp, &ck->snap)) < 0)
		return r;
	return build_rows(rp, ck->o->default_queue);
}

/* One line per checked input with what it holds. */
static void print_inputs(check *ck, FILE *out)
{
	const kb_check_config_options *o = ck->o;
	const kb_snapshot *snap = &ck->snap;
	if (o->scheduler_conf)
		print_conf(&ck->conf, out);
	else
		fputs("scheduler configuration: none given (the built-in default applies)\n", out);
	if (o->queue_conf)
		fprintf(out, "queue configuration: %s: valid; %u queue%s, %u namespace%s mapped\n",
			ck->qc.source, ck->qc.nqueues, ck->qc.nqueues == 1 ? "" : "s", ck->qc.nns,
			ck->qc.nns == 1 ? "" : "s");
	else
		fputs("queue configuration: none given\n", out);
	if (!o->nfiles)
		return;
	uint32_t schedulable = 0;
	for (uint32_t i = 0; i < snap->nnodes; i++)
		schedulable += kb_node_schedulable(&snap->nodes[i]);
	fputs("cluster:", out);
	for (uint32_t i = 0; i < o->nfiles; i++)
		fprintf(out, " %s", o->files[i]);
	fprintf(out, ": valid; %u node%s (%u schedulable), allocatable %s\n", snap->nnodes,
		snap->nnodes == 1 ? "" : "s", schedulable,
		fmt_res(&ck->rp, &snap->total_allocatable));
	if (o->queue_conf) {
		kb_res g = {{0}};
		for (uint32_t i = 0; i < ck->qc.nqueues; i++)
			kb_res_add(&g, &ck->qc.queues[i].guarantee);
		fprintf(out, "guarantees: %s in all, within the cluster's allocatable\n",
			fmt_res(&ck->rp, &g));
	}
}

/* One warning line, under a "warnings:" heading before the first. */
static void print_warning(FILE *out, bool *first, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void print_warning(FILE *out, bool *first, const char *fmt, ...)
{
	fputs(*first ? "\nwarnings:\n  " : "  ", out);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	*first = false;
}

/* Warnings: worth knowing, not wrong. */
static void print_warnings(check *ck, FILE *out)
{
	bool first = true;
	if (!has_plugin(&ck->conf, "proportion"))
		print_warning(out, &first,
			      "the scheduler configuration has no proportion plugin: weights, "
			      "capabilities and guarantees are not enforced");
	for (uint32_t i = 0; i < ck->snap.njobs; i++)
		if (ck->snap.jobs[i].queue < 0 && ck->snap.jobs[i].invalid)
			print_warning(out, &first, "PodGroup \"%s\": %s", ck->snap.jobs[i].key,
				      ck->snap.jobs[i].invalid);
}

int kb_check_config(const kb_check_config_options *o, FILE *out, kb_err *err)
{
	check ck;
	check_init(&ck, o);
	int r = load_inputs(&ck, err);
	if (r < 0)
		goto out;
	if ((r = prepare_report(&ck)) < 0) {
		r = kb_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}

	/* Everything is valid: the report. */
	print_inputs(&ck, out);
	fputc('\n', out);
	if (o->nfiles)
		fputs("Queues (DESERVED: the share of each queue when every queue asks for the "
		      "whole cluster):\n",
		      out);
	else
		fputs("Queues (no deserved shares: they need a cluster, give one with -f "
		      "CLUSTER.yaml):\n",
		      out);
	print_table(&ck.rp, out);
	print_warnings(&ck, out);
	fputs("\nvalid\n", out);
out:
	check_release(&ck);
	return r;
}

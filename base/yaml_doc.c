/* yaml_doc.c - YAML files as trees of nodes, built from libyaml's events.
 *
 * One loader serves both ways in: kb_yaml_load_buffer() keeps every
 * document's tree in the file's arena; a kb_yaml_stream resets its arena
 * before each document, reading the file through a libyaml read handler,
 * so only one tree and libyaml's buffers are in memory at a time.
 *
 * The loader keeps a stack of open collections (at most KB_YAML_MAX_DEPTH),
 * each collecting its children in a heap array that is copied into the
 * file's arena when the collection ends. Anchors live in a small hash table
 * that is emptied at every document start (anchors are per document).
 *
 * Aliases share the anchored node, so the tree is a DAG. A walker that
 * follows aliases can still be made to do exponential work (the "billion
 * laughs" file), so the limits count what a walker would see:
 *  - nodes: every node counts once, every alias counts the full size of
 *    what it names; the total for the file is at most KB_YAML_MAX_NODES;
 *  - depth: a node used through an alias counts its own height at the
 *    place of use, so no path through the tree is longer than 64.
 * Recursive aliases (an alias inside the node its anchor names) are an
 * error, so the graph has no cycles.
 */
#include "base/yaml_doc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "base/buf.h"

#define KB_YAML_MAX_DEPTH 64
#define KB_YAML_MAX_BYTES ((size_t)64 << 20)
#define KB_YAML_MAX_NODES 10000000u

/* A child of an open collection, with where it was used (for messages). */
typedef struct yd_child {
	const kb_yaml_node *node;
	int line, col;
} yd_child;

typedef struct yd_frame {
	kb_yaml_node *node;
	const char *anchor; /* arena string, or NULL */
	uint64_t weight;    /* nodes a walker sees, the collection included */
	int height;	    /* 1 + the largest child height */
	yd_child *kids;	    /* heap; for a mapping: key, value, key, value... */
	size_t n, cap;
} yd_frame;

typedef struct yd_anchor {
	const char *name;
	const kb_yaml_node *node;
	uint64_t weight;
	int height;
} yd_anchor;

typedef struct yd_loader {
	kb_arena *arena; /* where nodes and strings go */
	kb_err *err;
	const char *name;
	/* Where the text comes from, for the position of a reader error (which
	 * libyaml gives as a byte offset): the buffer, or a file descriptor to
	 * read the file again with. */
	const char *buf;
	size_t len;
	int fd;
	/* Set by the file reader when it fails: the errno, or the size limit. */
	int read_errno;
	bool too_big;

	yd_frame stack[KB_YAML_MAX_DEPTH];
	int depth;

	yd_anchor *anchors; /* heap */
	size_t nanchors, anchors_cap;
	size_t *index; /* heap hash table of anchor positions + 1; 0 is empty */
	size_t index_cap;

	uint64_t nodes; /* walker-visible nodes in the file so far */

	const kb_yaml_node *root; /* of the current document */
} yd_loader;

static int oom(yd_loader *L)
{
	return kb_err_set(L->err, -ENOMEM, "%s: out of memory", L->name);
}

/* Grows a heap array to hold at least want elements. 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t elem, size_t want)
{
	if (want <= *cap)
		return 0;
	size_t n = *cap ? *cap : 8;
	while (n < want) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	void *p = realloc(*v, n * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* ---- anchors ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* Forgets every anchor (a new document starts). Clears only the slots in
 * use, so the cost is O(anchors defined), not O(table size). */
static void anchors_reset(yd_loader *L)
{
	size_t mask = L->index_cap - 1;
	for (size_t at = 1; at <= L->nanchors; at++) {
		size_t i = hash_str(L->anchors[at - 1].name) & mask;
		while (L->index[i] != at)
			i = (i + 1) & mask;
		L->index[i] = 0;
	}
	L->nanchors = 0;
}

/* The anchor called name, or NULL. Cost: O(1) expected. */
static const yd_anchor *anchor_find(const yd_loader *L, const char *name)
{
	if (!L->index_cap)
		return NULL;
	size_t mask = L->index_cap - 1;
	for (size_t i = hash_str(name) & mask;; i = (i + 1) & mask) {
		size_t at = L->index[i];
		if (!at)
			return NULL;
		if (strcmp(L->anchors[at - 1].name, name) == 0)
			return &L->anchors[at - 1];
	}
}

static void index_insert(yd_loader *L, size_t at)
{
	size_t mask = L->index_cap - 1;
	size_t i = hash_str(L->anchors[at - 1].name) & mask;
	while (L->index[i])
		i = (i + 1) & mask;
	L->index[i] = at;
}

/* Defines (or redefines: the latest definition wins, as in libyaml) an
 * anchor. 0 or -ENOMEM. */
static int anchor_put(yd_loader *L, const char *name, const kb_yaml_node *node, uint64_t weight,
		      int height)
{
	yd_anchor *old = (yd_anchor *)anchor_find(L, name);
	if (old) {
		*old = (yd_anchor){ name, node, weight, height };
		return 0;
	}
	if (grow((void **)&L->anchors, &L->anchors_cap, sizeof(*L->anchors), L->nanchors + 1) < 0)
		return -ENOMEM;
	if ((L->nanchors + 1) * 2 > L->index_cap) {
		size_t cap = L->index_cap ? L->index_cap * 2 : 64;
		size_t *index = calloc(cap, sizeof(*index));
		if (!index)
			return -ENOMEM;
		free(L->index);
		L->index = index;
		L->index_cap = cap;
		for (size_t at = 1; at <= L->nanchors; at++)
			index_insert(L, at);
	}
	L->anchors[L->nanchors++] = (yd_anchor){ name, node, weight, height };
	index_insert(L, L->nanchors);
	return 0;
}

/* ---- building ---- */

static int count_nodes(yd_loader *L, uint64_t n, const yaml_mark_t *m)
{
	if (n > KB_YAML_MAX_NODES - L->nodes)
		return kb_err_set(L->err, -E2BIG, "%s:%zu:%zu: more than %u nodes (aliases count every node they name)",
				  L->name, m->line + 1, m->column + 1, KB_YAML_MAX_NODES);
	L->nodes += n;
	return 0;
}

static kb_yaml_node *new_node(yd_loader *L, kb_yaml_kind kind, const yaml_mark_t *m)
{
	kb_yaml_node *n = kb_arena_alloc(L->arena, sizeof(*n));
	if (!n)
		return NULL;
	n->kind = kind;
	n->line = m->line >= INT_MAX ? INT_MAX : (int)m->line + 1;
	n->col = m->column >= INT_MAX ? INT_MAX : (int)m->column + 1;
	return n;
}

static bool is_merge_key(const kb_yaml_node *k)
{
	return k->kind == KB_YAML_SCALAR && k->plain && k->len == 2 && memcmp(k->str, "<<", 2) == 0;
}

/* Places a finished node (or an alias to one) where the parser is: as the
 * document root or as the next child of the open collection. weight and
 * height describe the node as a walker sees it. */
static int attach(yd_loader *L, const kb_yaml_node *node, uint64_t weight, int height,
		  const yaml_mark_t *m)
{
	if (L->depth + height > KB_YAML_MAX_DEPTH)
		return kb_err_set(L->err, -E2BIG, "%s:%zu:%zu: nested deeper than %d levels",
				  L->name, m->line + 1, m->column + 1, KB_YAML_MAX_DEPTH);
	if (L->depth == 0) {
		L->root = node;
		return 0;
	}
	yd_frame *top = &L->stack[L->depth - 1];
	if (top->node->kind == KB_YAML_MAP && top->n % 2 == 0) {
		if (node->kind != KB_YAML_SCALAR)
			return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: a mapping key must be a string, not %s",
					  L->name, m->line + 1, m->column + 1, kb_yaml_kind_name(node));
		if (is_merge_key(node))
			return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: merge keys (<<) are not supported",
					  L->name, m->line + 1, m->column + 1);
	}
	if (grow((void **)&top->kids, &top->cap, sizeof(*top->kids), top->n + 1) < 0)
		return oom(L);
	top->kids[top->n++] = (yd_child){
		node,
		m->line >= INT_MAX ? INT_MAX : (int)m->line + 1,
		m->column >= INT_MAX ? INT_MAX : (int)m->column + 1,
	};
	top->weight += weight;
	if (height + 1 > top->height)
		top->height = height + 1;
	return 0;
}

static int on_scalar(yd_loader *L, const yaml_event_t *ev)
{
	int r = count_nodes(L, 1, &ev->start_mark);
	if (r < 0)
		return r;
	kb_yaml_node *n = new_node(L, KB_YAML_SCALAR, &ev->start_mark);
	if (!n)
		return oom(L);
	const char *value = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	n->len = ev->data.scalar.length;
	n->str = kb_arena_strndup(L->arena, value ? value : "", value ? n->len : 0);
	if (!n->str)
		return oom(L);
	/* "!!str 12" and "! 12" are strings even when unquoted. */
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		   !(tag && (strcmp(tag, YAML_STR_TAG) == 0 || strcmp(tag, "!") == 0));
	if (ev->data.scalar.anchor) {
		const char *name = kb_arena_strdup(L->arena, (const char *)ev->data.scalar.anchor);
		if (!name || anchor_put(L, name, n, 1, 0) < 0)
			return oom(L);
	}
	return attach(L, n, 1, 0, &ev->start_mark);
}

static int on_alias(yd_loader *L, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const yaml_mark_t *m = &ev->start_mark;
	/* An open collection with this anchor is the most recent definition, and
	 * the alias is inside it. Cost: O(depth). */
	for (int i = 0; i < L->depth; i++)
		if (L->stack[i].anchor && strcmp(L->stack[i].anchor, name) == 0)
			return kb_err_set(L->err, -EINVAL,
					  "%s:%zu:%zu: alias *%.100s is inside the node it names (recursive aliases are not supported)",
					  L->name, m->line + 1, m->column + 1, name);
	const yd_anchor *a = anchor_find(L, name);
	if (!a)
		return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: unknown alias *%.100s", L->name,
				  m->line + 1, m->column + 1, name);
	int r = count_nodes(L, a->weight, m);
	if (r < 0)
		return r;
	return attach(L, a->node, a->weight, a->height, m);
}

static int on_collection_start(yd_loader *L, const yaml_event_t *ev, kb_yaml_kind kind)
{
	const yaml_mark_t *m = &ev->start_mark;
	if (L->depth >= KB_YAML_MAX_DEPTH)
		return kb_err_set(L->err, -E2BIG, "%s:%zu:%zu: nested deeper than %d levels", L->name,
				  m->line + 1, m->column + 1, KB_YAML_MAX_DEPTH);
	int r = count_nodes(L, 1, m);
	if (r < 0)
		return r;
	const yaml_char_t *anchor = kind == KB_YAML_MAP ? ev->data.mapping_start.anchor
							: ev->data.sequence_start.anchor;
	yd_frame *fr = &L->stack[L->depth];
	*fr = (yd_frame){ .weight = 1, .height = 1 };
	fr->node = new_node(L, kind, m);
	if (!fr->node)
		return oom(L);
	if (anchor) {
		fr->anchor = kb_arena_strdup(L->arena, (const char *)anchor);
		if (!fr->anchor)
			return oom(L);
	}
	L->depth++;
	return 0;
}

static int child_cmp(const void *pa, const void *pb)
{
	const yd_child *a = pa, *b = pb;
	size_t n = a->node->len < b->node->len ? a->node->len : b->node->len;
	int c = memcmp(a->node->str, b->node->str, n);
	if (c)
		return c;
	if (a->node->len != b->node->len)
		return a->node->len < b->node->len ? -1 : 1;
	/* Same text: file order. */
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

/* Fails on the first key (in file order) that repeats an earlier one.
 * Cost: O(n log n) for n keys. */
static int check_duplicate_keys(yd_loader *L, const yd_frame *fr)
{
	size_t nkeys = fr->n / 2;
	if (nkeys < 2)
		return 0;
	yd_child *keys = malloc(nkeys * sizeof(*keys));
	if (!keys)
		return oom(L);
	for (size_t i = 0; i < nkeys; i++)
		keys[i] = fr->kids[2 * i];
	qsort(keys, nkeys, sizeof(*keys), child_cmp);
	/* Equal keys are now adjacent in runs, each in file order: a run's first
	 * element is the definition, its second the first repeat. */
	const yd_child *first = NULL, *dup = NULL;
	for (size_t s = 0, e; s < nkeys; s = e) {
		const kb_yaml_node *k = keys[s].node;
		for (e = s + 1; e < nkeys && keys[e].node->len == k->len &&
				memcmp(keys[e].node->str, k->str, k->len) == 0;
		     e++)
			;
		if (e - s < 2)
			continue;
		const yd_child *rep = &keys[s + 1];
		if (!dup || rep->line < dup->line || (rep->line == dup->line && rep->col < dup->col)) {
			dup = rep;
			first = &keys[s];
		}
	}
	int r = 0;
	if (dup)
		r = kb_err_set(L->err, -EINVAL,
			       "%s:%d:%d: duplicate key \"%.100s\" (first at line %d, column %d)",
			       L->name, dup->line, dup->col, dup->node->str, first->line, first->col);
	free(keys);
	return r;
}

/* Finishes the innermost collection and attaches it to its parent. On
 * failure the frame stays on the stack for loader_release(). */
static int on_collection_end(yd_loader *L)
{
	yd_frame *fr = &L->stack[L->depth - 1];
	kb_yaml_node *node = fr->node;
	if (node->kind == KB_YAML_MAP) {
		int r = check_duplicate_keys(L, fr);
		if (r < 0)
			return r;
		size_t npairs = fr->n / 2;
		kb_yaml_pair *pairs = kb_arena_calloc(L->arena, npairs ? npairs : 1, sizeof(*pairs));
		if (!pairs)
			return oom(L);
		for (size_t i = 0; i < npairs; i++)
			pairs[i] = (kb_yaml_pair){ fr->kids[2 * i].node, fr->kids[2 * i + 1].node };
		node->pairs = pairs;
		node->n = npairs;
	} else {
		const kb_yaml_node **items =
			kb_arena_calloc(L->arena, fr->n ? fr->n : 1, sizeof(*items));
		if (!items)
			return oom(L);
		for (size_t i = 0; i < fr->n; i++)
			items[i] = fr->kids[i].node;
		node->items = items;
		node->n = fr->n;
	}
	if (fr->anchor && anchor_put(L, fr->anchor, node, fr->weight, fr->height) < 0)
		return oom(L);
	/* Pop, then attach to the parent (the height already counts this level). */
	uint64_t weight = fr->weight;
	int height = fr->height;
	free(fr->kids);
	*fr = (yd_frame){ 0 };
	L->depth--;
	yaml_mark_t m = { .line = (size_t)node->line - 1, .column = (size_t)node->col - 1 };
	return attach(L, node, weight, height, &m);
}

/* A position for a byte offset: 1-based line and column (in bytes) of
 * text[0..end). */
static void count_position(const char *text, size_t end, size_t *line, size_t *col)
{
	for (size_t i = 0; i < end; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* The line and column of byte `offset` of the input: counted in the buffer,
 * or in the file read again from the start (only on this error path). */
static void offset_position(const yd_loader *L, size_t offset, size_t *ret_line, size_t *ret_col)
{
	size_t line = 1, col = 1;
	if (L->buf) {
		count_position(L->buf, offset < L->len ? offset : L->len, &line, &col);
	} else if (L->fd >= 0) {
		char chunk[16384];
		off_t at = 0;
		while ((size_t)at < offset) {
			size_t want = offset - (size_t)at < sizeof(chunk) ? offset - (size_t)at : sizeof(chunk);
			ssize_t n = pread(L->fd, chunk, want, at);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			count_position(chunk, (size_t)n, &line, &col);
			at += n;
		}
	}
	*ret_line = line;
	*ret_col = col;
}

/* A message for libyaml's failure. */
static int parser_error(yd_loader *L, const yaml_parser_t *p)
{
	if (L->read_errno)
		return kb_err_set(L->err, -L->read_errno, "%s: %s", L->name, strerror(L->read_errno));
	if (L->too_big)
		return kb_err_set(L->err, -E2BIG, "%s: larger than %zu MiB", L->name,
				  KB_YAML_MAX_BYTES >> 20);
	if (p->error == YAML_MEMORY_ERROR)
		return oom(L);
	const char *problem = p->problem ? p->problem : "syntax error";
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors carry a byte offset, not a mark. */
		size_t line, col;
		offset_position(L, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: %s (#x%X)", L->name, line, col,
					  problem, (unsigned)p->problem_value);
		return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: %s", L->name, line, col, problem);
	}
	if (p->context)
		return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: %s (%s at line %zu, column %zu)",
				  L->name, p->problem_mark.line + 1, p->problem_mark.column + 1, problem,
				  p->context, p->context_mark.line + 1, p->context_mark.column + 1);
	return kb_err_set(L->err, -EINVAL, "%s:%zu:%zu: %s", L->name, p->problem_mark.line + 1,
			  p->problem_mark.column + 1, problem);
}

/* Feeds libyaml's events to the loader until a non-empty document ends
 * (returns 1 with its root in *ret_root), the stream ends (0) or something
 * fails (a negative errno, with L->err set). Empty documents are skipped.
 * Cost: O(size of the text consumed). */
static int next_document(yd_loader *L, yaml_parser_t *parser, const kb_yaml_node **ret_root)
{
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(parser, &ev))
			return parser_error(L, parser);
		int r = 0;
		const kb_yaml_node *root = NULL;
		bool end = false;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			end = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			anchors_reset(L);
			L->root = NULL;
			break;
		case YAML_DOCUMENT_END_EVENT:
			root = L->root;
			L->root = NULL;
			if (root && root->kind == KB_YAML_SCALAR && root->plain && root->len == 0)
				root = NULL; /* an empty document */
			break;
		case YAML_SCALAR_EVENT:
			r = on_scalar(L, &ev);
			break;
		case YAML_ALIAS_EVENT:
			r = on_alias(L, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			r = on_collection_start(L, &ev, KB_YAML_SEQ);
			break;
		case YAML_MAPPING_START_EVENT:
			r = on_collection_start(L, &ev, KB_YAML_MAP);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			r = on_collection_end(L);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (r < 0)
			return r;
		if (end)
			return 0;
		if (root) {
			*ret_root = root;
			return 1;
		}
	}
}

/* Frees the loader's heap memory (not the arena). */
static void loader_release(yd_loader *L)
{
	for (int i = 0; i < L->depth; i++)
		free(L->stack[i].kids);
	L->depth = 0;
	free(L->anchors);
	free(L->index);
	L->anchors = NULL;
	L->index = NULL;
	L->nanchors = L->anchors_cap = L->index_cap = 0;
}

/* Closes every open collection (after a failure in the middle of a
 * document, before the arena that holds their nodes is reset). */
static void loader_drop_open(yd_loader *L)
{
	for (int i = 0; i < L->depth; i++) {
		free(L->stack[i].kids);
		L->stack[i] = (yd_frame){ 0 };
	}
	L->depth = 0;
	L->root = NULL;
}

static void file_reset(kb_yaml_file *f)
{
	kb_arena_init(&f->arena);
	f->name = NULL;
	f->ndocs = 0;
	f->docs = NULL;
}

int kb_yaml_load_buffer(const char *buf, size_t len, const char *name, kb_yaml_file *ret,
			kb_err *err)
{
	file_reset(ret);
	if (!name)
		name = "<buffer>";
	if (len > KB_YAML_MAX_BYTES)
		return kb_err_set(err, -E2BIG, "%s: larger than %zu MiB", name, KB_YAML_MAX_BYTES >> 20);
	if (!buf)
		buf = "";

	yd_loader L = { .arena = &ret->arena, .err = err, .name = name, .buf = buf, .len = len,
			.fd = -1 };
	const kb_yaml_node **docs = NULL; /* heap until the end */
	size_t ndocs = 0, docs_cap = 0;
	yaml_parser_t parser;
	bool parser_ready = false;
	int r = 0;
	ret->name = kb_arena_strdup(&ret->arena, name);
	if (!ret->name) {
		r = oom(&L);
		goto fail;
	}
	if (!yaml_parser_initialize(&parser)) {
		r = oom(&L);
		goto fail;
	}
	parser_ready = true;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	const kb_yaml_node *root;
	while ((r = next_document(&L, &parser, &root)) > 0) {
		if (grow((void **)&docs, &docs_cap, sizeof(*docs), ndocs + 1) < 0) {
			r = oom(&L);
			goto fail;
		}
		docs[ndocs++] = root;
	}
	if (r < 0)
		goto fail;
	const kb_yaml_node **out = kb_arena_calloc(&ret->arena, ndocs ? ndocs : 1, sizeof(*out));
	if (!out) {
		r = oom(&L);
		goto fail;
	}
	if (ndocs)
		memcpy(out, docs, ndocs * sizeof(*out));
	ret->docs = out;
	ret->ndocs = ndocs;
	free(docs);
	yaml_parser_delete(&parser);
	loader_release(&L);
	return 0;

fail:
	free(docs);
	if (parser_ready)
		yaml_parser_delete(&parser);
	loader_release(&L);
	kb_yaml_file_release(ret);
	return r;
}

int kb_yaml_load_file(const char *path, kb_yaml_file *ret, kb_err *err)
{
	file_reset(ret);
	kb_buf text = {0};
	int r = kb_buf_read_file(path, KB_YAML_MAX_BYTES, &text, err);
	if (r == 0)
		r = kb_yaml_load_buffer(text.data, text.len, path, ret, err);
	kb_buf_release(&text);
	return r;
}

void kb_yaml_file_release(kb_yaml_file *f)
{
	if (!f)
		return;
	kb_arena_release(&f->arena);
	file_reset(f);
}

/* ---- one document at a time ---- */

struct kb_yaml_stream {
	yaml_parser_t parser;
	yd_loader L;
	kb_arena arena; /* the current document's nodes; reset for the next one */
	char *name;	/* owned */
	int fd;		/* -1 for a buffer */
	char *owned;	/* the whole input, for a file that cannot be read again */
	size_t bytes;	/* read from the file so far */
	int state;	/* 1 while documents may follow, 0 at the end, < 0 after a failure */
	kb_err failure; /* the failure, repeated to later calls */
};

/* libyaml's read handler: reads the file straight into libyaml's buffer,
 * at most KB_YAML_MAX_BYTES in total. Returns 1 (with *size_read 0 at the
 * end) or 0 after recording why it failed. */
static int stream_read(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
	kb_yaml_stream *s = data;
	for (;;) {
		ssize_t n = read(s->fd, buffer, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s->L.read_errno = errno;
			return 0;
		}
		s->bytes += (size_t)n;
		if (s->bytes > KB_YAML_MAX_BYTES) {
			s->L.too_big = true;
			return 0;
		}
		*size_read = (size_t)n;
		return 1;
	}
}

/* The parts of both opens. Takes ownership of fd (closed on failure). */
static int stream_new(const char *name, int fd, const char *buf, size_t len, kb_yaml_stream **ret,
		      kb_err *err)
{
	*ret = NULL;
	kb_yaml_stream *s = calloc(1, sizeof(*s));
	char *copy = strdup(name);
	if (!s || !copy) {
		free(s);
		free(copy);
		if (fd >= 0)
			close(fd);
		return kb_err_set(err, -ENOMEM, "%s: out of memory", name);
	}
	if (!yaml_parser_initialize(&s->parser)) {
		free(s);
		free(copy);
		if (fd >= 0)
			close(fd);
		return kb_err_set(err, -ENOMEM, "%s: out of memory", name);
	}
	kb_arena_init(&s->arena);
	s->name = copy;
	s->fd = fd;
	s->state = 1;
	s->L = (yd_loader){ .arena = &s->arena, .err = &s->failure, .name = s->name, .fd = fd };
	if (fd >= 0) {
		yaml_parser_set_input(&s->parser, stream_read, s);
	} else {
		s->L.buf = buf ? buf : "";
		s->L.len = buf ? len : 0;
		yaml_parser_set_input_string(&s->parser, (const unsigned char *)s->L.buf, s->L.len);
	}
	*ret = s;
	return 0;
}

int kb_yaml_stream_open_file(const char *path, kb_yaml_stream **ret, kb_err *err)
{
	*ret = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return kb_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	struct stat st;
	int e = fstat(fd, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (e) {
		close(fd);
		return kb_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		/* A pipe or a device: read it whole, so that a reader error can
		 * still be placed (the file cannot be read again). */
		kb_buf text = {0};
		int r = kb_buf_read_fd(fd, path, KB_YAML_MAX_BYTES, &text, err);
		close(fd);
		if (r < 0)
			return r;
		r = stream_new(path, -1, text.data, text.len, ret, err);
		if (r < 0)
			kb_buf_release(&text);
		else
			(*ret)->owned = text.data;
		return r;
	}
	if ((uint64_t)st.st_size > KB_YAML_MAX_BYTES) {
		close(fd);
		return kb_err_set(err, -E2BIG, "%s: larger than %zu MiB", path,
				  KB_YAML_MAX_BYTES >> 20);
	}
	return stream_new(path, fd, NULL, 0, ret, err);
}

int kb_yaml_stream_open_buffer(const char *buf, size_t len, const char *name,
			       kb_yaml_stream **ret, kb_err *err)
{
	*ret = NULL;
	if (!name)
		name = "<buffer>";
	if (len > KB_YAML_MAX_BYTES)
		return kb_err_set(err, -E2BIG, "%s: larger than %zu MiB", name, KB_YAML_MAX_BYTES >> 20);
	return stream_new(name, -1, buf, len, ret, err);
}

int kb_yaml_stream_next(kb_yaml_stream *s, const kb_yaml_node **ret_doc, kb_err *err)
{
	if (s->state == 1) {
		/* The previous document is done with: forget its anchors (they
		 * name nodes in the arena), then its nodes. */
		anchors_reset(&s->L);
		kb_arena_reset(&s->arena);
		const kb_yaml_node *root;
		int r = next_document(&s->L, &s->parser, &root);
		if (r > 0) {
			*ret_doc = root;
			return 1;
		}
		s->state = r;
		loader_drop_open(&s->L);
		anchors_reset(&s->L);
		kb_arena_release(&s->arena);
	}
	if (s->state < 0 && err)
		*err = s->failure;
	return s->state;
}

const char *kb_yaml_stream_name(const kb_yaml_stream *s)
{
	return s->name;
}

kb_yaml_stream *kb_yaml_stream_free(kb_yaml_stream *s)
{
	if (!s)
		return NULL;
	yaml_parser_delete(&s->parser);
	loader_release(&s->L);
	kb_arena_release(&s->arena);
	if (s->fd >= 0)
		close(s->fd);
	free(s->owned);
	free(s->name);
	free(s);
	return NULL;
}

/* ---- reading ---- */

static bool scalar_is(const kb_yaml_node *n, const char *s)
{
	size_t len = strlen(s);
	return n->len == len && memcmp(n->str, s, len) == 0;
}

const kb_yaml_node *kb_yaml_get(const kb_yaml_node *n, const char *key)
{
	if (!n || n->kind != KB_YAML_MAP || !key)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		if (scalar_is(n->pairs[i].key, key))
			return n->pairs[i].value;
	return NULL;
}

bool kb_yaml_is_null(const kb_yaml_node *n)
{
	if (!n)
		return true;
	if (n->kind != KB_YAML_SCALAR || !n->plain)
		return false;
	return n->len == 0 || scalar_is(n, "~") || scalar_is(n, "null") || scalar_is(n, "Null") ||
	       scalar_is(n, "NULL");
}

const char *kb_yaml_str(const kb_yaml_node *n)
{
	return n && n->kind == KB_YAML_SCALAR ? n->str : NULL;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int kb_yaml_int(const kb_yaml_node *n, int64_t *ret)
{
	if (!n || n->kind != KB_YAML_SCALAR || !n->plain || n->len == 0 ||
	    strlen(n->str) != n->len)
		return -EINVAL;
	const char *p = n->str;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	unsigned base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return -EINVAL;
	const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t mag = 0;
	bool range = false;
	for (; *p; p++) {
		int d = hex_value(*p);
		if (d < 0 || (unsigned)d >= base)
			return -EINVAL;
		if (mag > (limit - (unsigned)d) / base)
			range = true; /* keep scanning: syntax errors win */
		else
			mag = mag * base + (unsigned)d;
	}
	if (range)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

int kb_yaml_bool(const kb_yaml_node *n, bool *ret)
{
	if (!n || n->kind != KB_YAML_SCALAR)
		return -EINVAL;
	if (scalar_is(n, "true") || scalar_is(n, "True") || scalar_is(n, "TRUE")) {
		*ret = true;
		return 0;
	}
	if (scalar_is(n, "false") || scalar_is(n, "False") || scalar_is(n, "FALSE")) {
		*ret = false;
		return 0;
	}
	return -EINVAL;
}

int kb_yaml_double(const kb_yaml_node *n, double *ret)
{
	if (!n || n->kind != KB_YAML_SCALAR || !n->plain || n->len == 0 ||
	    strlen(n->str) != n->len)
		return -EINVAL;
	/* strtod would skip leading space and read "inf", "nan" and hex; a
	 * number here is [sign] digits [. digits] [e [sign] digits]. */
	for (const char *p = n->str; *p; p++)
		if (!strchr("0123456789+-.eE", *p))
			return -EINVAL;
	char *end;
	double v = strtod(n->str, &end);
	if (end != n->str + n->len || !isfinite(v))
		return -EINVAL;
	*ret = v;
	return 0;
}

const char *kb_yaml_kind_name(const kb_yaml_node *n)
{
	if (!n)
		return "nothing";
	switch (n->kind) {
	case KB_YAML_SCALAR:
		return "a string";
	case KB_YAML_MAP:
		return "a mapping";
	case KB_YAML_SEQ:
		return "a list";
	}
	return "a node";
}

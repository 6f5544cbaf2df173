/* json_doc.c - a strict JSON parser that builds yaml_doc.h's trees.
 *
 * One pass over the text, no recursion. Open collections (at most
 * KB_JSON_MAX_DEPTH) are frames on a fixed stack; their children gather on
 * one growable array of node pointers (for an object: key, value, key,
 * value...), which starts on the C stack and moves to the heap only for
 * wide or deep texts. When a collection closes, its children are copied
 * into the arena in one block and popped.
 *
 * Memory: the parser takes blocks from the arena (512 bytes, doubling up to
 * 8 KiB) and cuts nodes, texts and child arrays from them itself, so a node
 * costs a compare and an add. A scalar's text follows its node. A string
 * is scanned once to find its end (eight bytes at a time); without escapes
 * its text is then one memcpy, with escapes it is decoded in place of that
 * copy (escapes never make text longer).
 *
 * Positions: the parser tracks the line, where it starts, and how many
 * UTF-8 continuation bytes came before the current byte on it (they can
 * only be inside strings), so a node's column counts characters as
 * libyaml's does without looking at the line again. An error's position is
 * counted from the start of the text (only on that path).
 */
#include "base/json_doc.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_JSON_MAX_DEPTH 64
#define KB_JSON_MAX_BYTES ((size_t)64 << 20)
#define KB_JSON_MAX_NODES 10000000u
#define KB_JSON_INLINE_KIDS 256
#define KB_JSON_FIRST_BLOCK 512u
#define KB_JSON_MAX_BLOCK 8192u
#define KB_JSON_SMALL_MAP 16 /* keys compared pairwise up to this many; sorted above */

/* A mapping's children are copied to its pairs as they are. */
_Static_assert(sizeof(kb_yaml_pair) == 2 * sizeof(const kb_yaml_node *),
	       "a pair is two node pointers");

typedef struct jd_frame {
	kb_yaml_node *node;
	size_t base; /* its first child in kids */
} jd_frame;

typedef struct jd_parser {
	const char *buf, *end;
	const char *line_start; /* first byte of the current line */
	size_t cont;		/* UTF-8 continuation bytes in [line_start, here) */
	int line;
	kb_arena *arena;
	kb_err *err;
	const char *name;
	char *bump;   /* the free part of the block nodes come from */
	size_t avail; /* its size */
	size_t block; /* the size of the next block */
	size_t nodes;
	int failure; /* the error code when a helper returned NULL */
	int depth;
	jd_frame stack[KB_JSON_MAX_DEPTH];
	const kb_yaml_node **kids; /* inline_kids, or heap */
	size_t nkids, kids_cap;
	const kb_yaml_node **scratch; /* heap, for the keys of wide objects */
	size_t scratch_cap;
	const kb_yaml_node *inline_kids[KB_JSON_INLINE_KIDS];
} jd_parser;

/* Bytes that stop the scan of a string: '"', '\\', controls, and bytes of
 * 0x80 and above (counted for columns). */
static const unsigned char string_stop[256] = {
	[0 ... 0x1f] = 1,
	['"'] = 1,
	['\\'] = 1,
	[0x80 ... 0xff] = 1,
};

/* Bytes that continue a number or a word, for messages and for the end of
 * a number or literal. */
static const unsigned char word_byte[256] = {
	['0' ... '9'] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1,
	['+'] = 1,	   ['-'] = 1,	      ['.'] = 1,
	['_'] = 1,
};

/* ---- errors ---- */

/* The 1-based line and column (in characters, as libyaml counts) of at. */
static void position(const jd_parser *P, const char *at, int *ret_line, int *ret_col)
{
	int line = 1;
	size_t col = 1;
	for (const char *s = P->buf; s < at; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n' || (c == '\r' && !(s + 1 < P->end && s[1] == '\n'))) {
			line++;
			col = 1;
		} else if (c == '\r') {
			/* the '\n' that follows ends the line */
		} else if ((c & 0xc0) != 0x80) {
			col++;
		}
	}
	*ret_line = line;
	*ret_col = col > INT_MAX ? INT_MAX : (int)col;
}

static int fail(jd_parser *P, int code, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Sets the error "name:line:col: reason" for the byte at `at`; returns code. */
static int fail(jd_parser *P, int code, const char *at, const char *fmt, ...)
{
	char reason[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap); /* a long reason is cut */
	va_end(ap);
	int line, col;
	position(P, at, &line, &col);
	return kb_err_set(P->err, code, "%s:%d:%d: %s", P->name, line, col, reason);
}

static int oom(jd_parser *P)
{
	return kb_err_set(P->err, -ENOMEM, "%s: out of memory", P->name);
}

/* The byte at `at` for a message: 'x', or #xNN when it is not printable. */
static const char *show_byte(char buf[8], const char *at)
{
	unsigned char c = (unsigned char)*at;
	if (c > ' ' && c < 0x7f) /* 3 or 4 bytes and a NUL: cannot truncate */
		(void)snprintf(buf, 8, "'%c'", c);
	else
		(void)snprintf(buf, 8, "#x%02X", c);
	return buf;
}

/* What was found at `at` instead of what the grammar expected there. At
 * the end of the text, names the innermost collection left open. */
static int unexpected(jd_parser *P, const char *at, const char *expected)
{
	if (at == P->end) {
		if (P->depth > 0) {
			const kb_yaml_node *open = P->stack[P->depth - 1].node;
			const char *what = open->kind == KB_YAML_MAP ? "object" : "array";
			return fail(P, -EINVAL, at,
				    "unexpected end of input (the %s at line %d, column %d is not closed)",
				    what, open->line, open->col);
		}
		return fail(P, -EINVAL, at, "unexpected end of input, expected %s", expected);
	}
	char b[8];
	return fail(P, -EINVAL, at, "unexpected character %s, expected %s", show_byte(b, at),
		    expected);
}

/* A token that is not a number or literal: the run of word bytes from at. */
static int bad_word(jd_parser *P, const char *at, const char *what)
{
	const char *w = at;
	while (w < P->end && word_byte[(unsigned char)*w])
		w++;
	if (w == at)
		return unexpected(P, at, "a value");
	int n = w - at > 40 ? 40 : (int)(w - at);
	return fail(P, -EINVAL, at, "invalid %s \"%.*s%s\"", what, n, at, w - at > 40 ? "..." : "");
}

/* ---- building ---- */

static inline const char *skip_space(jd_parser *P, const char *p)
{
	const char *end = P->end;
	while (p < end) {
		char c = *p;
		if (c == ' ' || c == '\t') {
			p++;
		} else if (c == '\n' || c == '\r') {
			p++;
			if (c == '\r' && p < end && *p == '\n')
				p++;
			P->line++;
			P->line_start = p;
			P->cont = 0;
		} else {
			break;
		}
	}
	return p;
}

/* The slow part of take(): a new block (twice as large as the last, up to
 * KB_JSON_MAX_BLOCK), or a block of its own for a large request. */
static void *take_block(jd_parser *P, size_t need)
{
	if (need > P->block / 4)
		return kb_arena_alloc(P->arena, need);
	char *b = kb_arena_alloc(P->arena, P->block);
	if (!b)
		return NULL;
	P->bump = b + need;
	P->avail = P->block - need;
	if (P->block < KB_JSON_MAX_BLOCK)
		P->block *= 2;
	return b;
}

/* n zeroed bytes aligned to 16, from the arena. The parser takes blocks
 * from the arena and cuts them up itself: a node costs a compare and an
 * add, not a call. NULL when malloc fails. */
static inline void *take(jd_parser *P, size_t n)
{
	size_t need = (n + 15) & ~(size_t)15;
	if (need < n)
		return NULL;
	if (P->avail >= need) {
		void *p = P->bump;
		P->bump += need;
		P->avail -= need;
		return p;
	}
	return take_block(P, need);
}

/* A new node starting at `at` with `extra` bytes after it (a scalar's
 * text), counted against the node limit. NULL with the error in
 * P->failure. */
static inline kb_yaml_node *new_node(jd_parser *P, kb_yaml_kind kind, const char *at, size_t extra)
{
	if (P->nodes >= KB_JSON_MAX_NODES) {
		P->failure = fail(P, -E2BIG, at, "more than %u nodes", KB_JSON_MAX_NODES);
		return NULL;
	}
	P->nodes++;
	kb_yaml_node *n = take(P, sizeof(*n) + extra);
	if (!n) {
		P->failure = oom(P);
		return NULL;
	}
	n->kind = kind;
	n->line = P->line;
	size_t col = (size_t)(at - P->line_start) - P->cont + 1;
	n->col = col > INT_MAX ? INT_MAX : (int)col;
	return n;
}

static int grow_kids(jd_parser *P)
{
	size_t cap = P->kids_cap * 2;
	const kb_yaml_node **kids;
	if (P->kids == P->inline_kids) {
		kids = malloc(cap * sizeof(*kids));
		if (kids)
			memcpy(kids, P->inline_kids, P->nkids * sizeof(*kids));
	} else {
		kids = realloc(P->kids, cap * sizeof(*kids));
	}
	if (!kids)
		return oom(P);
	P->kids = kids;
	P->kids_cap = cap;
	return 0;
}

static inline int push_kid(jd_parser *P, const kb_yaml_node *n)
{
	if (P->nkids == P->kids_cap) {
		int r = grow_kids(P);
		if (r < 0)
			return r;
	}
	P->kids[P->nkids++] = n;
	return 0;
}

static inline bool same_key(const kb_yaml_node *a, const kb_yaml_node *b)
{
	return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
}

static int key_cmp(const void *pa, const void *pb)
{
	const kb_yaml_node *a = *(const kb_yaml_node *const *)pa;
	const kb_yaml_node *b = *(const kb_yaml_node *const *)pb;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	int c = memcmp(a->str, b->str, a->len);
	if (c)
		return c;
	/* Same text: text order. */
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

static int duplicate(jd_parser *P, const kb_yaml_node *dup, const kb_yaml_node *first)
{
	return kb_err_set(P->err, -EINVAL,
			  "%s:%d:%d: duplicate key \"%.100s\" (first at line %d, column %d)",
			  P->name, dup->line, dup->col, dup->str, first->line, first->col);
}

/* Fails on the first key (in text order) that repeats an earlier one, as
 * the YAML loader does. kids holds key, value, key, value... Cost: O(n^2)
 * compares of lengths for up to KB_JSON_SMALL_MAP keys, O(n log n) above
 * (sorting a scratch array kept for the whole load). */
static int check_duplicate_keys(jd_parser *P, const kb_yaml_node *const *kids, size_t nkeys)
{
	if (nkeys <= KB_JSON_SMALL_MAP) {
		for (size_t j = 1; j < nkeys; j++)
			for (size_t i = 0; i < j; i++)
				if (same_key(kids[2 * i], kids[2 * j]))
					return duplicate(P, kids[2 * j], kids[2 * i]);
		return 0;
	}
	if (nkeys > P->scratch_cap) {
		size_t cap = P->scratch_cap ? P->scratch_cap : 64;
		while (cap < nkeys)
			cap *= 2;
		const kb_yaml_node **s = realloc(P->scratch, cap * sizeof(*s));
		if (!s)
			return oom(P);
		P->scratch = s;
		P->scratch_cap = cap;
	}
	const kb_yaml_node **keys = P->scratch;
	for (size_t i = 0; i < nkeys; i++)
		keys[i] = kids[2 * i];
	qsort(keys, nkeys, sizeof(*keys), key_cmp);
	/* Equal keys are adjacent, each run in text order: its first element
	 * is the definition, its second the first repeat. */
	const kb_yaml_node *first = NULL, *dup = NULL;
	for (size_t s = 0, e; s < nkeys; s = e) {
		for (e = s + 1; e < nkeys && same_key(keys[e], keys[s]); e++)
			;
		if (e - s < 2)
			continue;
		const kb_yaml_node *rep = keys[s + 1];
		if (!dup || rep->line < dup->line ||
		    (rep->line == dup->line && rep->col < dup->col)) {
			dup = rep;
			first = keys[s];
		}
	}
	return dup ? duplicate(P, dup, first) : 0;
}

/* Opens a collection at `at` ('{' or '['). */
static inline int open_collection(jd_parser *P, const char *at, kb_yaml_kind kind)
{
	if (P->depth >= KB_JSON_MAX_DEPTH)
		return fail(P, -E2BIG, at, "nested deeper than %d levels", KB_JSON_MAX_DEPTH);
	kb_yaml_node *n = new_node(P, kind, at, 0);
	if (!n)
		return P->failure;
	P->stack[P->depth++] = (jd_frame){ n, P->nkids };
	return 0;
}

/* Closes the innermost collection: its children move into the arena.
 * Returns it in *ret. */
static inline int close_collection(jd_parser *P, const kb_yaml_node **ret)
{
	jd_frame *fr = &P->stack[P->depth - 1];
	kb_yaml_node *node = fr->node;
	const kb_yaml_node *const *kids = P->kids + fr->base;
	size_t n = P->nkids - fr->base;
	/* An empty collection still gets an (empty) array, as in yaml_doc.c. */
	void *block = take(P, (n ? n : 2) * sizeof(*kids));
	if (!block)
		return oom(P);
	memcpy(block, kids, n * sizeof(*kids));
	if (node->kind == KB_YAML_MAP) {
		int r = check_duplicate_keys(P, kids, n / 2);
		if (r < 0)
			return r;
		node->pairs = block;
		node->n = n / 2;
	} else {
		node->items = block;
		node->n = n;
	}
	P->nkids = fr->base;
	P->depth--;
	*ret = node;
	return 0;
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number at *pp: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as
 * its text in a plain scalar. */
static int parse_number(jd_parser *P, const char **pp, const kb_yaml_node **ret)
{
	const char *p = *pp, *q = p, *end = P->end;
	if (q < end && *q == '-')
		q++;
	if (q < end && *q == '0')
		q++;
	else if (q < end && *q >= '1' && *q <= '9')
		while (++q < end && is_digit(*q))
			;
	else
		return bad_word(P, p, "number");
	if (q < end && *q == '.') {
		if (++q == end || !is_digit(*q))
			return bad_word(P, p, "number");
		while (++q < end && is_digit(*q))
			;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (q == end || !is_digit(*q))
			return bad_word(P, p, "number");
		while (++q < end && is_digit(*q))
			;
	}
	if (q < end && word_byte[(unsigned char)*q])
		return bad_word(P, p, "number");
	size_t len = (size_t)(q - p);
	kb_yaml_node *n = new_node(P, KB_YAML_SCALAR, p, len + 1);
	if (!n)
		return P->failure;
	char *s = (char *)(n + 1);
	memcpy(s, p, len);
	n->str = s;
	n->len = len;
	n->plain = true;
	*ret = n;
	*pp = q;
	return 0;
}

/* true, false or null at *pp, as a plain scalar. */
static int parse_literal(jd_parser *P, const char **pp, const kb_yaml_node **ret)
{
	const char *p = *pp, *end = P->end;
	size_t len = *p == 'f' ? 5 : 4;
	const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
	if ((size_t)(end - p) < len || memcmp(p, word, len) != 0 ||
	    (p + len < end && word_byte[(unsigned char)p[len]]))
		return bad_word(P, p, "literal");
	kb_yaml_node *n = new_node(P, KB_YAML_SCALAR, p, len + 1);
	if (!n)
		return P->failure;
	char *s = (char *)(n + 1);
	memcpy(s, word, len);
	n->str = s;
	n->len = len;
	n->plain = true;
	*ret = n;
	*pp = p + len;
	return 0;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static char *put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* Decodes the string body [s, e) (the scan has checked that every '\\'
 * has a byte after it before e) into out. Returns 0 with *ret_len. */
static int decode_string(jd_parser *P, const char *s, const char *e, char *out, size_t *ret_len)
{
	char *o = out;
	while (s < e) {
		const char *bs = memchr(s, '\\', (size_t)(e - s));
		if (!bs)
			bs = e;
		memcpy(o, s, (size_t)(bs - s));
		o += bs - s;
		s = bs;
		if (s == e)
			break;
		char c = s[1];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = c;
			s += 2;
			continue;
		case 'b':
			*o++ = '\b';
			s += 2;
			continue;
		case 'f':
			*o++ = '\f';
			s += 2;
			continue;
		case 'n':
			*o++ = '\n';
			s += 2;
			continue;
		case 'r':
			*o++ = '\r';
			s += 2;
			continue;
		case 't':
			*o++ = '\t';
			s += 2;
			continue;
		case 'u':
			break;
		default: {
			char b[8];
			return fail(P, -EINVAL, s, "invalid escape '\\' followed by %s in a string",
				    show_byte(b, s + 1));
		}
		}
		int hi = e - s >= 6 ? hex4(s + 2) : -1;
		if (hi < 0)
			return fail(P, -EINVAL, s,
				    "invalid \\u escape (four hex digits must follow)");
		uint32_t cp = (uint32_t)hi;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return fail(P, -EINVAL, s, "lone low surrogate \\u%.4s", s + 2);
		if (cp >= 0xd800 && cp <= 0xdbff) {
			int lo = e - s >= 12 && s[6] == '\\' && s[7] == 'u' ? hex4(s + 8) : -1;
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail(P, -EINVAL, s,
					    "lone high surrogate \\u%.4s (no \\uDC00-\\uDFFF follows)",
					    s + 2);
			cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
			s += 6;
		}
		s += 6;
		o = put_utf8(o, cp);
	}
	*ret_len = (size_t)(o - out);
	return 0;
}

/* The first byte in [s, end) that string_stop marks, or end. Eight bytes
 * at a time where words can be read little-endian: a byte's top bit is set
 * in m when it is 0x80 or above, below 0x20, '"' or '\\' (subtracting
 * borrows only from a lower byte that is itself marked, so the lowest
 * marked byte is always a real one). */
static inline const unsigned char *string_scan(const unsigned char *s, const unsigned char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	while (end - s >= 8) {
		uint64_t v;
		memcpy(&v, s, 8);
		uint64_t m = (v | (v - ones * 0x20) | ((v ^ (ones * '"')) - ones) |
			      ((v ^ (ones * '\\')) - ones)) &
			     high;
		if (m)
			return s + (__builtin_ctzll(m) >> 3);
		s += 8;
	}
#endif
	while (s < end && !string_stop[*s])
		s++;
	return s;
}

/* A string at *pp (the opening quote), as a quoted scalar. */
static int parse_string(jd_parser *P, const char **pp, const kb_yaml_node **ret)
{
	const char *p = *pp;
	const unsigned char *s = (const unsigned char *)p + 1;
	const unsigned char *end = (const unsigned char *)P->end;
	size_t cont = 0;
	bool escapes = false;
	for (;;) {
		s = string_scan(s, end);
		if (s == end)
			return fail(P, -EINVAL, p, "unterminated string");
		unsigned char c = *s;
		if (c == '"')
			break;
		if (c == '\\') {
			if (end - s < 2)
				return fail(P, -EINVAL, p, "unterminated string");
			escapes = true;
			s += 2;
		} else if (c < 0x20) {
			return fail(P, -EINVAL, (const char *)s,
				    "control character #x%02X in a string", c);
		} else {
			cont += c < 0xc0; /* a UTF-8 continuation byte */
			s++;
		}
	}
	const char *body = p + 1, *close = (const char *)s;
	size_t span = (size_t)(close - body);
	kb_yaml_node *n = new_node(P, KB_YAML_SCALAR, p, span + 1);
	if (!n)
		return P->failure;
	char *str = (char *)(n + 1);
	size_t len = span;
	if (!escapes) {
		memcpy(str, body, span);
	} else {
		int r = decode_string(P, body, close, str, &len);
		if (r < 0)
			return r;
		str[len] = '\0';
	}
	n->str = str;
	n->len = len;
	P->cont += cont;
	*ret = n;
	*pp = close + 1;
	return 0;
}

/* Parses the whole text; *ret_root is NULL for a text of only whitespace.
 * One state machine (value, attach, key) over the explicit stack, so nesting
 * costs no C stack; its states share p, done and r, hence one function. */
/* NOLINTNEXTLINE(readability-function-size): the states above, kept together */
static int parse(jd_parser *P, const kb_yaml_node **ret_root)
{
	const char *end = P->end;
	const char *p = skip_space(P, P->buf);
	const kb_yaml_node *done = NULL;
	int r;
	*ret_root = NULL;
	if (p == end)
		return 0;

value:
	/* p is at a value (spaces skipped). */
	if (p == end)
		return unexpected(P, p, "a value");
	switch (*p) {
	case '"':
		r = parse_string(P, &p, &done);
		break;
	case '{':
		if ((r = open_collection(P, p, KB_YAML_MAP)) < 0)
			return r;
		p = skip_space(P, p + 1);
		if (p < end && *p == '}') {
			p++;
			r = close_collection(P, &done);
			break;
		}
		goto key;
	case '[':
		if ((r = open_collection(P, p, KB_YAML_SEQ)) < 0)
			return r;
		p = skip_space(P, p + 1);
		if (p < end && *p == ']') {
			p++;
			r = close_collection(P, &done);
			break;
		}
		goto value;
	case '-':
	case '+':
	case '.':
	case '0' ... '9':
		r = parse_number(P, &p, &done);
		break;
	case 't':
	case 'f':
	case 'n':
		r = parse_literal(P, &p, &done);
		break;
	default:
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			return bad_word(P, p, "literal");
		return unexpected(P, p, "a value");
	}
	if (r < 0)
		return r;

attach:
	/* done is a finished value that ended just before p. */
	if (P->depth == 0) {
		*ret_root = done;
		p = skip_space(P, p);
		if (p != end) {
			char b[8];
			return fail(P, -EINVAL, p, "trailing data after the root value (found %s)",
				    show_byte(b, p));
		}
		return 0;
	}
	if ((r = push_kid(P, done)) < 0)
		return r;
	p = skip_space(P, p);
	if (P->stack[P->depth - 1].node->kind == KB_YAML_MAP) {
		if (p < end && *p == ',') {
			const char *comma = p;
			p = skip_space(P, p + 1);
			if (p < end && *p == '}')
				return fail(P, -EINVAL, comma, "trailing comma before '}'");
			goto key;
		}
		if (p < end && *p == '}') {
			p++;
			if ((r = close_collection(P, &done)) < 0)
				return r;
			goto attach;
		}
		if (p == end)
			return unexpected(P, p, "',' or '}'");
		char b[8];
		return fail(P, -EINVAL, p, "missing ',' or '}' after a value (found %s)",
			    show_byte(b, p));
	}
	if (p < end && *p == ',') {
		const char *comma = p;
		p = skip_space(P, p + 1);
		if (p < end && *p == ']')
			return fail(P, -EINVAL, comma, "trailing comma before ']'");
		goto value;
	}
	if (p < end && *p == ']') {
		p++;
		if ((r = close_collection(P, &done)) < 0)
			return r;
		goto attach;
	}
	if (p == end)
		return unexpected(P, p, "',' or ']'");
	char b[8];
	return fail(P, -EINVAL, p, "missing ',' or ']' after a value (found %s)", show_byte(b, p));

key:
	/* p is at a key of the innermost object (spaces skipped). */
	if (p == end || *p != '"')
		return unexpected(P, p, "a key (a string in double quotes)");
	const kb_yaml_node *k;
	if ((r = parse_string(P, &p, &k)) < 0 || (r = push_kid(P, k)) < 0)
		return r;
	p = skip_space(P, p);
	if (p < end && *p == ':') {
		p = skip_space(P, p + 1);
		goto value;
	}
	if (p == end)
		return unexpected(P, p, "':'");
	return fail(P, -EINVAL, p, "missing ':' after the key (found %s)", show_byte(b, p));
}

int kb_json_load_buffer(const char *buf, size_t len, const char *name, kb_yaml_file *ret,
			kb_err *err)
{
	kb_arena_init(&ret->arena);
	ret->name = NULL;
	ret->ndocs = 0;
	ret->docs = NULL;
	if (!name)
		name = "<buffer>";
	if (len > KB_JSON_MAX_BYTES)
		return kb_err_set(err, -E2BIG, "%s: larger than %zu MiB", name,
				  KB_JSON_MAX_BYTES >> 20);
	if (!buf) {
		buf = "";
		len = 0;
	}

	/* Not zeroed as a whole: the stacks are written before they are read. */
	jd_parser P;
	P.buf = buf;
	P.end = buf + len;
	P.line_start = buf;
	P.cont = 0;
	P.line = 1;
	P.arena = &ret->arena;
	P.err = err;
	P.name = name;
	P.bump = NULL;
	P.avail = 0;
	P.block = KB_JSON_FIRST_BLOCK;
	P.nodes = 0;
	P.failure = 0;
	P.depth = 0;
	P.kids = P.inline_kids;
	P.nkids = 0;
	P.kids_cap = KB_JSON_INLINE_KIDS;
	P.scratch = NULL;
	P.scratch_cap = 0;

	const kb_yaml_node *root = NULL;
	const kb_yaml_node **docs = NULL;
	int r;
	ret->name = kb_arena_strdup(&ret->arena, name);
	if (!ret->name)
		r = oom(&P);
	else
		r = parse(&P, &root);
	if (r == 0) {
		docs = kb_arena_alloc(&ret->arena, sizeof(*docs));
		if (!docs)
			r = oom(&P);
	}
	if (P.kids != P.inline_kids)
		free(P.kids);
	free(P.scratch);
	if (r < 0) {
		kb_yaml_file_release(ret);
		return r;
	}
	docs[0] = root;
	ret->docs = docs;
	ret->ndocs = root ? 1 : 0;
	return 0;
}

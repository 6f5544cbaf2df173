/* flags.c - the flag tables' parser and help (see flags.h).
 *
 * getopt_long does the scanning: its option array is built from the table
 * (the val of row i is FLAG_VAL0 + i), so the table is the only list. Three
 * things pflag does differently are fixed around it: '_' in a long name,
 * abbreviations (refused: the name given must be the row's), and "-v=3"
 * (the '=' is dropped).
 */
#include "cmd/flags.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

#define FLAG_VAL0 256
#define HELP_VAL (-2)

int kb_flags_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* "--log_file=x" -> "--log-file=x", in place. */
static void normalise(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || a[1] != '-')
			continue;
		for (char *p = a + 2; *p && *p != '='; p++)
			if (*p == '_')
				*p = '-';
	}
}

/* The value of row f from its argument text (NULL: none given). 0, or
 * -EINVAL with err naming the flag and the value. */
static int parse_value(const kb_flag *f, const char *text, kb_flag_value *v, kb_err *err)
{
	char *end = NULL;
	*v = (kb_flag_value){.text = text};
	switch (f->kind) {
	case KB_FLAG_STRING:
		return 0;
	case KB_FLAG_BOOL:
		if (!text) {
			v->b = true;
			return 0;
		}
		if (kb_flags_parse_bool(text, &v->b) == 0)
			return 0;
		return kb_err_set(err, -EINVAL, "--%s: expected true or false, got \"%s\"", f->name,
				  text);
	case KB_FLAG_DURATION:
		if (kb_duration_parse_ms(text, &v->ms) == 0)
			return 0;
		return kb_err_set(err, -EINVAL,
				  "--%s: bad duration \"%s\" (Go's form: \"1m30s\", \"250ms\", "
				  "\"1.5h\", or seconds: \"1.5\")",
				  f->name, text);
	case KB_FLAG_INT:
		errno = 0;
		v->i = strtoll(text, &end, 10);
		if (text[0] && end && !*end && errno == 0)
			return 0;
		return kb_err_set(err, -EINVAL, "--%s: expected an integer, got \"%s\"", f->name,
				  text);
	case KB_FLAG_NUMBER:
		v->d = strtod(text, &end);
		if (text[0] && end && !*end && isfinite(v->d))
			return 0;
		return kb_err_set(err, -EINVAL, "--%s: expected a number, got \"%s\"", f->name,
				  text);
	}
	return kb_err_set(err, -EINVAL, "--%s: unknown kind of flag", f->name);
}

/* The getopt_long arrays for set: *ret_opts (malloc'd, the caller frees)
 * and the short-option string in shorts. 0, or -ENOMEM. */
static int build_options(const kb_flag_set *set, struct option **ret_opts, char *shorts,
			 size_t nshorts)
{
	struct option *o = calloc(set->nflags + 2, sizeof(*o));
	if (!o)
		return -ENOMEM;
	size_t k = 0;
	shorts[k++] = ':'; /* ':' for a missing argument, '?' for an unknown flag */
	shorts[k++] = 'h';
	for (size_t i = 0; i < set->nflags; i++) {
		const kb_flag *f = &set->flags[i];
		o[i].name = f->name;
		o[i].has_arg = f->kind == KB_FLAG_BOOL ? optional_argument : required_argument;
		o[i].val = FLAG_VAL0 + (int)i;
		if (f->shorthand && k + 3 < nshorts) {
			shorts[k++] = f->shorthand;
			if (f->kind != KB_FLAG_BOOL)
				shorts[k++] = ':';
		}
	}
	o[set->nflags] = (struct option){"help", no_argument, NULL, HELP_VAL};
	shorts[k] = '\0';
	*ret_opts = o;
	return 0;
}

/* The row of a shorthand letter, or NULL. */
static const kb_flag *by_shorthand(const kb_flag_set *set, int c)
{
	for (size_t i = 0; i < set->nflags; i++)
		if (set->flags[i].shorthand && set->flags[i].shorthand == c)
			return &set->flags[i];
	return NULL;
}

/* Whether the argv element that getopt_long just matched to the long flag
 * name spells it whole (getopt_long also takes a unique prefix). */
static bool spelled_whole(char **argv, const char *name, const char *arg)
{
	const char *e = argv[optind - 1];
	if (arg && arg == e && optind >= 2)
		e = argv[optind - 2]; /* the value was the next element */
	size_t n = strlen(name);
	return e[0] == '-' && e[1] == '-' && strncmp(e + 2, name, n) == 0 &&
	       (e[2 + n] == '\0' || e[2 + n] == '=');
}

/* One flag found: check and apply it. 0, or -EINVAL with err. */
static int one_flag(const kb_flag_set *set, const kb_flag *f, const char *arg, void *opts,
		    FILE *msgs, kb_err *err)
{
	kb_flag_value v;
	if (f->refused && f->why)
		return kb_err_set(err, -EINVAL, "--%s is not supported: %s", f->name, f->why);
	int r = parse_value(f, arg, &v, err);
	if (r < 0)
		return r;
	if (!f->set) {
		fprintf(msgs, "%s: warning: --%s is ignored: %s\n", "kube-batchd", f->name,
			f->why ? f->why : "it has no meaning here");
		return 0;
	}
	return f->set(opts, &v, err);
}

int kb_flags_parse(const kb_flag_set *set, int argc, char **argv, void *opts, FILE *msgs,
		   int *ret_first_arg)
{
	struct option *longopts = NULL;
	char shorts[64];
	if (build_options(set, &longopts, shorts, sizeof(shorts)) < 0) {
		fputs("kube-batchd: out of memory\n", msgs);
		return -ENOMEM;
	}
	normalise(argc, argv);
	kb_err err = {0};
	bool unknown = false; /* the error is an unknown flag: point at --help */
	int c, r = 0, saved_opterr = opterr;
	opterr = 0;
	optind = 0; /* glibc: start over, permutation state included */
	while (r == 0 && (c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		if (c == HELP_VAL || c == 'h') {
			r = KB_FLAGS_HELP;
		} else if (c >= FLAG_VAL0 && c < FLAG_VAL0 + (int)set->nflags) {
			const kb_flag *f = &set->flags[c - FLAG_VAL0];
			if (!spelled_whole(argv, f->name, optarg))
				unknown = true, r = kb_err_set(&err, -EINVAL,
					       "unknown flag \"%s\" (flags are spelled whole: "
					       "--%s?)",
					       argv[optind - 1], f->name);
			else
				r = one_flag(set, f, optarg, opts, msgs, &err);
		} else if (c == ':') {
			r = kb_err_set(&err, -EINVAL, "%s needs a value", argv[optind - 1]);
		} else if (c == '?') {
			unknown = true;
			if (optopt && optopt < FLAG_VAL0 && optopt != HELP_VAL)
				r = kb_err_set(&err, -EINVAL, "unknown flag \"-%c\"", optopt);
			else
				r = kb_err_set(&err, -EINVAL, "unknown flag \"%s\"",
					       argv[optind - 1]);
		} else {
			const kb_flag *f = by_shorthand(set, c);
			const char *a = optarg && optarg[0] == '=' ? optarg + 1 : optarg;
			unknown = !f;
			r = f ? one_flag(set, f, a, opts, msgs, &err)
			      : kb_err_set(&err, -EINVAL, "unknown flag \"-%c\"", c);
		}
	}
	opterr = saved_opterr;
	free(longopts);
	if (r < 0) {
		if (unknown)
			fprintf(msgs, "kube-batchd: %s (%s --help lists the flags)\n", err.msg,
				set->command);
		else
			fprintf(msgs, "kube-batchd: %s\n", err.msg);
		return r;
	}
	*ret_first_arg = optind;
	return r;
}

/* "  -v, --v LEVEL" into buf: the left column of a help line. */
static void flag_column(const kb_flag *f, char *buf, size_t n)
{
	char sh[8] = "    ";
	if (f->shorthand)
		(void)snprintf(sh, sizeof(sh), "-%c, ", f->shorthand);
	(void)snprintf(buf, n, "  %s--%s%s%s", sh, f->name, f->metavar ? " " : "",
		       f->metavar ? f->metavar : "");
}

/* The width of the left column: the longest, within reason. */
static int column_width(const kb_flag_set *set)
{
	char col[96];
	size_t w = 14; /* "  -h, --help" */
	for (size_t i = 0; i < set->nflags; i++) {
		flag_column(&set->flags[i], col, sizeof(col));
		size_t n = strlen(col);
		if (n > w && n <= 48)
			w = n;
	}
	return (int)w + 2;
}

void kb_flags_help(const kb_flag_set *set, FILE *out)
{
	char col[96];
	int w = column_width(set);
	fprintf(out, "usage: %s %s\n", set->command, set->synopsis);
	if (set->about)
		fprintf(out, "\n%s\n", set->about);
	fputs("\nFlags:\n", out);
	for (size_t i = 0; i < set->nflags; i++) {
		const kb_flag *f = &set->flags[i];
		if (f->why)
			continue;
		flag_column(f, col, sizeof(col));
		fprintf(out, "%-*s %s", w, col, f->help);
		if (f->def)
			fprintf(out, " (default %s)", f->def);
		fputc('\n', out);
	}
	fprintf(out, "%-*s %s\n", w, "  -h, --help", "print this help and exit");
	bool header = false;
	for (size_t i = 0; i < set->nflags; i++) {
		const kb_flag *f = &set->flags[i];
		if (!f->why)
			continue;
		if (!header) {
			fputs("\nOther schedulers' flags (accepted and ignored with a warning, "
			      "or refused):\n",
			      out);
			header = true;
		}
		flag_column(f, col, sizeof(col));
		fprintf(out, "%-*s %s: %s\n", w, col, f->refused ? "refused" : "ignored", f->why);
	}
}

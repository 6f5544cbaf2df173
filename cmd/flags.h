/* flags.h - a command's flags as one table, from which the parser, --help
 * and the man page's flag list all come (so they cannot drift).
 *
 * Each row names a long flag (and maybe a one-letter shorthand), the kind of
 * value it takes, the default --help shows, one line of help, and what to do
 * with it:
 *   supported   set() applies the parsed value to the command's options;
 *   ignored     a flag of kube-batch, volcano, kube-scheduler or klog that
 *               means nothing here: its value is still checked, then one
 *               line on the messages stream says it is ignored and why;
 *   refused     a peer's flag whose silent absence would change what gets
 *               scheduled where: a usage error saying why.
 * Any other flag is a usage error naming it.
 *
 * Flag syntax is pflag's (what kube-batch, volcano and kube-scheduler
 * parse): --name VALUE, --name=VALUE; a bool is --name (true) or
 * --name=BOOL (true/false/1/0/t/f, as Go's strconv.ParseBool); a shorthand
 * is -x VALUE, -xVALUE or -x=VALUE; "_" in a long name is read as "-" (as
 * component-base's flag normalisation: --log_file is --log-file); no
 * abbreviations. Flags and positional arguments may be mixed.
 */
#ifndef KB_CMD_FLAGS_H
#define KB_CMD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

typedef enum kb_flag_kind {
	KB_FLAG_STRING,   /* any text */
	KB_FLAG_BOOL,     /* --name or --name=BOOL */
	KB_FLAG_DURATION, /* Go's duration or a number of seconds (kb_duration_parse_ms) */
	KB_FLAG_INT,      /* a decimal integer */
	KB_FLAG_NUMBER,   /* a decimal number */
} kb_flag_kind;

/* A flag's value as parsed: text is the argument as given (NULL for a bare
 * bool); the field of its kind holds the value. */
typedef struct kb_flag_value {
	const char *text;
	bool b;
	int64_t ms;
	long long i;
	double d;
} kb_flag_value;

/* Applies a supported flag to opts. 0, or -EINVAL with err saying, with
 * the flag's name and the value, what is wrong with it. */
typedef int (*kb_flag_set_fn)(void *opts, const kb_flag_value *v, kb_err *err);

typedef struct kb_flag {
	const char *name;    /* the long name, without "--" */
	char shorthand;      /* 'v', 'f' ... or 0 */
	kb_flag_kind kind;
	const char *metavar; /* in --help: FILE, DURATION ...; NULL for a bool */
	const char *def;     /* the default as --help shows it; NULL: none */
	const char *help;    /* one line */
	kb_flag_set_fn set;  /* supported: required; NULL when ignored or refused */
	const char *why;     /* ignored or refused: why, one short sentence */
	bool refused;        /* with why: a usage error rather than a warning */
} kb_flag;

typedef struct kb_flag_set {
	const char *command; /* "kube-batchd", "kube-batchd simulate" ... */
	const char *synopsis; /* the usage line after the command, e.g. "[FLAGS]" */
	const char *about;    /* a paragraph --help prints before the flags, or NULL */
	const kb_flag *flags;
	size_t nflags;
} kb_flag_set;

/* kb_flags_parse's result besides 0 and -EINVAL. */
#define KB_FLAGS_HELP 1

/* Parses argv[1..argc) against set, calling set() of each supported flag
 * in order with opts. Ignored flags print one line each to msgs
 * ("kube-batchd: warning: --vmodule is ignored: ...").
 * Returns 0 with *ret_first_arg the index of the first positional argument
 * (argv is permuted so that they come last, as getopt_long does);
 * KB_FLAGS_HELP when --help or -h was given (nothing more is parsed); or
 * -EINVAL after printing to msgs one line naming the flag and value (an
 * unknown flag, a refused one, a missing or malformed value, or what set()
 * said). The long names in argv are rewritten in place ('_' to '-').
 * -ENOMEM when the option array cannot be built. Cost: O(argc * nflags). */
int kb_flags_parse(const kb_flag_set *set, int argc, char **argv, void *opts, FILE *msgs,
		   int *ret_first_arg);

/* Prints --help: the usage line, the about paragraph, then one line per
 * flag: "  -x, --name METAVAR   help (default D)"; the ignored and refused
 * flags in a section of their own, each with why. */
void kb_flags_help(const kb_flag_set *set, FILE *out);

/* Parses Go's strconv.ParseBool forms. 0, or -EINVAL. */
int kb_flags_parse_bool(const char *s, bool *ret);

#endif

/* cli.h - the flags of each command (the daemon, simulate, check-config) as
 * tables (cmd/flags.h), and what they fill in.
 *
 * The daemon's table holds kube-batchd's flags and those of kube-batch,
 * volcano, kube-scheduler (component-base) and klog that a Deployment of
 * theirs passes, so that its args work unchanged: the ones with a meaning
 * here work, the others are ignored with a warning or refused with a
 * reason. docs/kube-batchd.8 lists every row (tests/unit/test_cli.c checks
 * it).
 */
#ifndef KB_CMD_CLI_H
#define KB_CMD_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/log.h"
#include "base/vec.h"
#include "cmd/check_config.h"
#include "cmd/flags.h"
#include "daemon/daemon.h"
#include "scheduler/simulate.h"

extern const kb_flag_set kb_cli_daemon_flags;
extern const kb_flag_set kb_cli_simulate_flags;
extern const kb_flag_set kb_cli_check_config_flags;

typedef KB_VEC(const char *) kb_cli_files;

/* Cluster mode's command line. Strings point into argv. */
typedef struct kb_cli_daemon {
	kb_daemon_options opt;
	int verbosity;               /* -v */
	enum kb_log_format log_format; /* --logging-format */
	const char *log_file;        /* --log-file, or NULL: stderr */
	bool also_stderr;            /* --alsologtostderr (with --log-file) */
	bool version;                /* --version: print it and exit */
	/* Parsing state, resolved by kb_cli_daemon_parse. */
	bool names_given, logtostderr, enable_healthz, enable_metrics, healthz_given;
	const char *lock_object_namespace, *resource_namespace;
} kb_cli_daemon;

/* Parses the daemon's argv into *c (defaults first). Returns 0, KB_FLAGS_HELP
 * (nothing printed: the caller prints kb_flags_help), or -EINVAL after one
 * line on msgs naming the flag or argument. Warnings (ignored flags, a
 * shell redirection "2>&1" passed as an argument, --enable-metrics=false)
 * go to msgs too. */
int kb_cli_daemon_parse(int argc, char **argv, kb_cli_daemon *c, FILE *msgs);

/* simulate's command line; release with kb_cli_simulate_release. */
typedef struct kb_cli_simulate {
	kb_sim_options opt;
	kb_cli_files files;
} kb_cli_simulate;

/* As kb_cli_daemon_parse; also -EINVAL without -f, -ENOMEM. opt.files is
 * set from files on success. */
int kb_cli_simulate_parse(int argc, char **argv, kb_cli_simulate *c, FILE *msgs);
void kb_cli_simulate_release(kb_cli_simulate *c);

typedef struct kb_cli_check_config {
	kb_check_config_options opt;
	kb_cli_files files;
} kb_cli_check_config;

/* As kb_cli_simulate_parse; -EINVAL when there is nothing to check. */
int kb_cli_check_config_parse(int argc, char **argv, kb_cli_check_config *c, FILE *msgs);
void kb_cli_check_config_release(kb_cli_check_config *c);

#endif

/* kube-batchd - the command line.
 *
 *   kube-batchd simulate -f FILE... [FLAGS]       (simulation mode)
 *   kube-batchd check-config [FLAGS]              (validate configuration)
 *   kube-batchd replay FILE                       (a --record file run again)
 *   kube-batchd [FLAGS]                           (cluster mode: the daemon)
 *   kube-batchd --version
 *
 * Each command's flags are one table in cmd/cli.c (the parser, --help and
 * the man page's list come from it); `kube-batchd COMMAND --help` prints
 * them. Exit status: 0 on success, 1 when the input is wrong (the message
 * names the file and line, or the object and field), 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd/check_config.h"
#include "cmd/cli.h"
#include "cmd/flags.h"
#include "cmd/cli_cmds.h"
#include "daemon/daemon.h"
#include "scheduler/simulate.h"

#define KB_VERSION "0.1.0"

/* The exit status for a parse result that is not 0: 0 after --help (printed
 * to stdout), 2 on a usage error (already said on stderr). */
static int parse_exit(int r, const kb_flag_set *set)
{
	if (r == KB_FLAGS_HELP) {
		kb_flags_help(set, stdout);
		return 0;
	}
	return 2;
}

static int cmd_simulate(int argc, char **argv)
{
	kb_cli_simulate c;
	int r = kb_cli_simulate_parse(argc, argv, &c, stderr);
	int status;
	if (r != 0) {
		status = parse_exit(r, &kb_cli_simulate_flags);
		goto out;
	}
	kb_err err = {0};
	r = kb_simulate(&c.opt, stdout, &err);
	if (r < 0) {
		fprintf(stderr, "kube-batchd: error: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	} else {
		status = 0;
	}
out:
	kb_cli_simulate_release(&c);
	return status;
}

/* check-config: exit 0 when the files are valid, 1 when not, 2 on a usage error. */
static int cmd_check_config(int argc, char **argv)
{
	kb_cli_check_config c;
	int r = kb_cli_check_config_parse(argc, argv, &c, stderr);
	int status;
	if (r != 0) {
		status = parse_exit(r, &kb_cli_check_config_flags);
		goto out;
	}
	kb_err err = {0};
	r = kb_check_config(&c.opt, stdout, &err);
	if (r < 0) {
		fprintf(stderr, "kube-batchd: invalid: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	} else {
		status = 0;
	}
out:
	kb_cli_check_config_release(&c);
	return status;
}

/* Cluster mode: kube-batch's, volcano's and kube-scheduler's flag names.
 * Exit 0 after SIGTERM/SIGINT, 1 when start-up fails, 2 on a usage error. */
static int cmd_daemon(int argc, char **argv)
{
	kb_cli_daemon c;
	int r = kb_cli_daemon_parse(argc, argv, &c, stderr);
	if (r != 0)
		return parse_exit(r, &kb_cli_daemon_flags);
	if (c.version) {
		printf("kube-batchd %s\n", KB_VERSION);
		return 0;
	}
	FILE *log = NULL;
	if (c.log_file && !(log = fopen(c.log_file, "ae"))) {
		fprintf(stderr, "kube-batchd: error: --log-file \"%s\": %s\n", c.log_file,
			strerror(errno));
		return 1;
	}
	kb_log_configure(c.verbosity, c.log_format, log ? log : stderr,
			 log && c.also_stderr ? stderr : NULL);
	kb_err err = {0};
	r = kb_daemon_run(&c.opt, &err);
	int status = 0;
	if (r < 0) {
		/* To the log, where the person on call looks, and to stderr. */
		if (log)
			kb_error("%s", err.msg[0] ? err.msg : strerror(-r));
		fprintf(stderr, "kube-batchd: error: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	}
	kb_log_configure(c.verbosity, c.log_format, stderr, NULL);
	if (log && fclose(log) != 0 && status == 0) {
		fprintf(stderr, "kube-batchd: error: --log-file \"%s\": %s\n", c.log_file,
			strerror(errno));
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "simulate") == 0 &&
	    kb_cmd_wants_from_cluster(argc - 1, argv + 1))
		return kb_cmd_simulate_from_cluster(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "simulate") == 0)
		return cmd_simulate(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "top") == 0)
		return kb_cmd_top(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "explain") == 0)
		return kb_cmd_explain(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "check-config") == 0)
		return cmd_check_config(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "replay") == 0)
		return kb_cmd_replay(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
		printf("kube-batchd %s\n", KB_VERSION);
		return 0;
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		kb_flags_help(&kb_cli_daemon_flags, stdout);
		return 0;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		fprintf(stderr, "kube-batchd: unknown command \"%s\" (commands: simulate, "
				"check-config, replay, top, explain; kube-batchd --help lists the daemon's "
				"flags)\n",
			argv[1]);
		return 2;
	}
	return cmd_daemon(argc, argv);
}

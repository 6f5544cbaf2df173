/* kube-batchd - the command line.
 *
 *   kube-batchd simulate -f FILE... [--scheduler-conf F] [--queue-conf F]
 *                        [--output json|table] [--schedule-period 1s]
 *                        [--scheduler-name N] [--default-queue Q] [--max-time D]
 *   kube-batchd check-config [--queue-conf F] [--scheduler-conf F] [-f CLUSTER.yaml]...
 *   kube-batchd [--kubeconfig F] [--master URL] [--scheduler-name N] [--scheduler-conf F]
 *               [--queue-conf F] [--schedule-period D] [--schedule-delay D]
 *               [--default-queue Q] [-v N]
 *               [--kube-api-qps Q] [--kube-api-burst B] [--listen-address HOST:PORT]
 *               [--leader-elect[=true|false]]
 *                                      (cluster mode: the daemon)
 *   kube-batchd --version
 *
 * Exit status: 0 on success, 1 when the input is wrong (the message names the
 * file and line, or the object and field), 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/defaults.h"
#include "api/quantity.h"
#include "base/vec.h"
#include "base/log.h"
#include "cmd/check_config.h"
#include "cmd/cli_cmds.h"
#include "daemon/daemon.h"
#include "plugins/registry.h"
#include "scheduler/simulate.h"

#define KB_VERSION "0.1.0"

static void usage(FILE *out)
{
	fputs("usage: kube-batchd simulate -f FILE... [--scheduler-conf F] [--queue-conf F]\n"
	      "                            [--output json|table] [--schedule-period DURATION]\n"
	      "                            [--scheduler-name NAME] [--default-queue QUEUE]\n"
	      "                            [--max-time DURATION]\n"
	      "       kube-batchd check-config [--queue-conf F] [--scheduler-conf F] [-f CLUSTER.yaml]...\n"
	      "       kube-batchd simulate --from-cluster [--kubeconfig F] [-f NEW.yaml]... (simulate from the cluster's state)\n"
	      "       kube-batchd top nodes|queues|jobs [--kubeconfig F] [-o table|json]\n"
	      "       kube-batchd explain NAMESPACE/PODGROUP [--kubeconfig F] [-o table|json]\n"
	      "       kube-batchd [--kubeconfig F] [--master URL] [--scheduler-name NAME]\n"
	      "                   [--scheduler-conf F] [--queue-conf F] [--schedule-period DURATION]\n"
	      "                   [--schedule-delay DURATION] [--default-queue QUEUE] [-v N]\n"
	      "                   [--kube-api-qps QPS]\n"
	      "                   [--kube-api-burst N] [--listen-address HOST:PORT]\n"
	      "                   [--leader-elect[=true|false]]\n"
	      "       kube-batchd --version\n"
	      "\n"
	      "DURATION is Go's form (\"1m30s\", \"250ms\", \"100us\", \"1.5h\") or a number of seconds (\"1.5\").\n"
	      "--scheduler-name may be given up to 8 times: the daemon schedules the pods that\n"
	      "name any of them, and reports as the first.\n"
	      "The daemon runs a session every --schedule-period (1s), and once changes to the\n"
	      "cluster have stopped for --schedule-delay (150ms; a burst settled, but no later than four\n"
	      "delays, at most a period, after its first change); --schedule-delay 0 keeps to the period.\n",
	      out);
}

/* The -f FILE arguments, in order. */
typedef KB_VEC(const char *) file_vec;

enum { SIM_SCHED_CONF = 256, SIM_QUEUE_CONF, SIM_OUTPUT, SIM_PERIOD, SIM_NAME, SIM_QUEUE, SIM_MAX };

/* Applies one simulate option (getopt_long's c and optarg) to o. Returns -1
 * to go on, else the exit status (0 after --help, 2 on a usage error). */
static int simulate_flag(int c, kb_sim_options *o, file_vec *files)
{
	switch (c) {
	case 'f':
		if (KB_VEC_PUSH(files, optarg) < 0) {
			fputs("kube-batchd: out of memory\n", stderr);
			return 2;
		}
		return -1;
	case SIM_SCHED_CONF:
		o->scheduler_conf = optarg;
		return -1;
	case SIM_QUEUE_CONF:
		o->queue_conf = optarg;
		return -1;
	case 'o':
	case SIM_OUTPUT:
		if (strcmp(optarg, "json") == 0) {
			o->output = KB_SIM_JSON;
		} else if (strcmp(optarg, "table") == 0) {
			o->output = KB_SIM_TABLE;
		} else {
			fprintf(stderr,
				"kube-batchd: --output: expected json or table, got \"%s\"\n",
				optarg);
			return 2;
		}
		return -1;
	case SIM_PERIOD:
	case SIM_MAX: {
		int64_t ms;
		if (kb_duration_parse_ms(optarg, &ms) < 0 || (c == SIM_PERIOD && ms <= 0)) {
			fprintf(stderr, "kube-batchd: --%s: bad duration \"%s\"\n",
				c == SIM_PERIOD ? "schedule-period" : "max-time", optarg);
			return 2;
		}
		if (c == SIM_PERIOD)
			o->period_ms = ms;
		else
			o->max_time_ms = ms;
		return -1;
	}
	case SIM_NAME:
		o->scheduler_name = optarg;
		return -1;
	case SIM_QUEUE:
		o->default_queue = optarg;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

static int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"file", required_argument, NULL, 'f'},
		{"scheduler-conf", required_argument, NULL, SIM_SCHED_CONF},
		{"queue-conf", required_argument, NULL, SIM_QUEUE_CONF},
		{"output", required_argument, NULL, SIM_OUTPUT},
		{"schedule-period", required_argument, NULL, SIM_PERIOD},
		{"scheduler-name", required_argument, NULL, SIM_NAME},
		{"default-queue", required_argument, NULL, SIM_QUEUE},
		{"max-time", required_argument, NULL, SIM_MAX},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	file_vec files = {0};
	kb_sim_options o = {
		.output = KB_SIM_JSON,
		.period_ms = KB_DEFAULT_PERIOD_MS,
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
	};
	int c, status = -1;
	optind = 1;
	while (status < 0 && (c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1)
		status = simulate_flag(c, &o, &files);
	if (status >= 0)
		goto out;
	status = 2;
	if (optind < argc) {
		fprintf(stderr, "kube-batchd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		goto out;
	}
	if (files.n == 0) {
		fputs("kube-batchd: simulate needs at least one -f FILE\n", stderr);
		usage(stderr);
		goto out;
	}
	o.files = files.v;
	o.nfiles = (uint32_t)files.n;
	kb_err err = {0};
	int r = kb_simulate(&o, stdout, &err);
	if (r < 0) {
		fprintf(stderr, "kube-batchd: error: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	} else {
		status = 0;
	}
out:
	KB_VEC_RELEASE(&files);
	return status;
}

static void usage_check_config(FILE *out)
{
	fputs("usage: kube-batchd check-config [--queue-conf F] [--scheduler-conf F] [-f CLUSTER.yaml]...\n"
	      "                                [--scheduler-name NAME] [--default-queue QUEUE]\n"
	      "\n"
	      "Validates the queue configuration, the scheduler configuration and the cluster\n"
	      "manifests, and prints the queue tree with the share each queue would deserve on\n"
	      "that cluster when every queue is hungry. Exit status: 0 valid, 1 invalid, 2 usage.\n",
	      out);
}

/* check-config: exit 0 when the files are valid, 1 when not, 2 on a usage error. */
static int cmd_check_config(int argc, char **argv)
{
	enum { OPT_SCHED_CONF = 256, OPT_QUEUE_CONF, OPT_NAME, OPT_QUEUE };
	static const struct option opts[] = {
		{"file", required_argument, NULL, 'f'},
		{"scheduler-conf", required_argument, NULL, OPT_SCHED_CONF},
		{"queue-conf", required_argument, NULL, OPT_QUEUE_CONF},
		{"scheduler-name", required_argument, NULL, OPT_NAME},
		{"default-queue", required_argument, NULL, OPT_QUEUE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	KB_VEC(const char *) files = {0};
	kb_check_config_options o = {
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
	};
	int c, status = 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (KB_VEC_PUSH(&files, optarg) < 0) {
				fputs("kube-batchd: out of memory\n", stderr);
				goto out;
			}
			break;
		case OPT_SCHED_CONF:
			o.scheduler_conf = optarg;
			break;
		case OPT_QUEUE_CONF:
			o.queue_conf = optarg;
			break;
		case OPT_NAME:
			o.scheduler_name = optarg;
			break;
		case OPT_QUEUE:
			o.default_queue = optarg;
			break;
		case 'h':
			usage_check_config(stdout);
			status = 0;
			goto out;
		default:
			usage_check_config(stderr);
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kube-batchd: unexpected argument \"%s\"\n", argv[optind]);
		usage_check_config(stderr);
		goto out;
	}
	if (!o.queue_conf && !o.scheduler_conf && files.n == 0) {
		fputs("kube-batchd: check-config needs something to check: --queue-conf, "
		      "--scheduler-conf or -f\n",
		      stderr);
		usage_check_config(stderr);
		goto out;
	}
	o.files = files.v;
	o.nfiles = (uint32_t)files.n;
	kb_err err = {0};
	int r = kb_check_config(&o, stdout, &err);
	if (r < 0) {
		fprintf(stderr, "kube-batchd: invalid: %s\n", err.msg[0] ? err.msg : strerror(-r));
		status = 1;
	} else {
		status = 0;
	}
out:
	KB_VEC_RELEASE(&files);
	return status;
}

enum {
	DMN_KUBECONFIG = 256, DMN_MASTER, DMN_NAME, DMN_SCHED_CONF, DMN_QUEUE_CONF, DMN_PERIOD,
	DMN_QUEUE, DMN_QPS, DMN_BURST, DMN_LISTEN, DMN_V, DMN_LEADER, DMN_DELAY,
};

/* --leader-elect[=true|false]. 0, or 2 on a usage error. */
static int leader_flag(const char *arg, kb_daemon_options *o)
{
	if (!arg || strcmp(arg, "true") == 0) {
		o->leader_elect = true;
	} else if (strcmp(arg, "false") == 0) {
		o->leader_elect = false;
	} else {
		fprintf(stderr, "kube-batchd: --leader-elect: expected true or false, got \"%s\"\n",
			arg);
		return 2;
	}
	return 0;
}

/* The daemon's flags that take a number or a duration. 0, or 2 on a usage
 * error (said on stderr). */
static int daemon_number_flag(int c, const char *arg, kb_daemon_options *o, int *verbosity)
{
	char *end = NULL;
	switch (c) {
	case DMN_PERIOD:
		if (kb_duration_parse_ms(arg, &o->period_ms) < 0 || o->period_ms <= 0) {
			fprintf(stderr, "kube-batchd: --schedule-period: bad duration \"%s\"\n",
				arg);
			return 2;
		}
		return 0;
	case DMN_DELAY:
		if (kb_duration_parse_ms(arg, &o->delay_ms) < 0 || o->delay_ms < 0) {
			fprintf(stderr, "kube-batchd: --schedule-delay: bad duration \"%s\"\n",
				arg);
			return 2;
		}
		return 0;
	case DMN_QPS:
		o->qps = strtod(arg, &end);
		if (!end || end == arg || *end || !(o->qps >= 0) || o->qps > 1e9) {
			fprintf(stderr,
				"kube-batchd: --kube-api-qps: expected a number >= 0 (0: no "
				"client-side limit), got \"%s\"\n",
				arg);
			return 2;
		}
		return 0;
	case DMN_BURST: {
		long b = strtol(arg, &end, 10);
		if (!end || *end || b < 1 || b > 1000000) {
			fprintf(stderr,
				"kube-batchd: --kube-api-burst: expected an integer >= 1, "
				"got \"%s\"\n",
				arg);
			return 2;
		}
		o->burst = (int)b;
		return 0;
	}
	default: { /* -v N, --v N, -v=N */
		const char *a = arg[0] == '=' ? arg + 1 : arg;
		long v = strtol(a, &end, 10);
		if (!a[0] || !end || *end || v < 0 || v > 10) {
			fprintf(stderr, "kube-batchd: -v: expected a level 0..10, got \"%s\"\n",
				arg);
			return 2;
		}
		*verbosity = (int)v;
		return 0;
	}
	}
}

/* Applies one cluster-mode option (getopt_long's c and optarg) to o. Returns
 * -1 to go on, else the exit status (0 after --help, 2 on a usage error). */
static int daemon_flag(int c, kb_daemon_options *o, int *verbosity, bool *names_given)
{
	switch (c) {
	case DMN_KUBECONFIG:
		o->kubeconfig = optarg;
		return -1;
	case DMN_MASTER:
		o->master = optarg;
		return -1;
	case DMN_NAME: /* the first replaces the default; each other adds a name */
		if (!*optarg) {
			fprintf(stderr, "kube-batchd: --scheduler-name: must not be empty\n");
			return 2;
		}
		if (!*names_given) {
			o->scheduler_name = optarg;
			*names_given = true;
			return -1;
		}
		if (o->nmore_scheduler_names == KB_MAX_SCHEDULER_NAMES - 1) {
			fprintf(stderr, "kube-batchd: --scheduler-name: at most %d names\n",
				KB_MAX_SCHEDULER_NAMES);
			return 2;
		}
		o->more_scheduler_names[o->nmore_scheduler_names++] = optarg;
		return -1;
	case DMN_SCHED_CONF:
		o->scheduler_conf = optarg;
		return -1;
	case DMN_QUEUE_CONF:
		o->queue_conf = optarg;
		return -1;
	case DMN_QUEUE:
		o->default_queue = optarg;
		return -1;
	case DMN_LISTEN:
		o->listen_address = optarg;
		return -1;
	case DMN_LEADER:
		return leader_flag(optarg, o) ? 2 : -1;
	case DMN_PERIOD:
	case DMN_DELAY:
	case DMN_QPS:
	case DMN_BURST:
	case DMN_V:
	case 'v':
		return daemon_number_flag(c, optarg, o, verbosity) ? 2 : -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

/* Cluster mode: kube-batch's and kube-scheduler's flag names. Exit 0 after
 * SIGTERM/SIGINT, 1 when start-up fails, 2 on a usage error. */
static int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {
		{"kubeconfig", required_argument, NULL, DMN_KUBECONFIG},
		{"master", required_argument, NULL, DMN_MASTER},
		{"scheduler-name", required_argument, NULL, DMN_NAME},
		{"scheduler-conf", required_argument, NULL, DMN_SCHED_CONF},
		{"queue-conf", required_argument, NULL, DMN_QUEUE_CONF},
		{"schedule-period", required_argument, NULL, DMN_PERIOD},
		{"default-queue", required_argument, NULL, DMN_QUEUE},
		{"schedule-delay", required_argument, NULL, DMN_DELAY},
		{"kube-api-qps", required_argument, NULL, DMN_QPS},
		{"kube-api-burst", required_argument, NULL, DMN_BURST},
		{"listen-address", required_argument, NULL, DMN_LISTEN},
		{"v", required_argument, NULL, DMN_V},
		{"leader-elect", optional_argument, NULL, DMN_LEADER},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	kb_daemon_options o = {
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
		.listen_address = "127.0.0.1:10251",
		.period_ms = KB_DEFAULT_PERIOD_MS,
		.delay_ms = 150,
		.qps = 0, /* no client-side limit: API Priority and Fairness is */
		.burst = 400,
	};
	int verbosity = 0, c;
	bool names_given = false;
	optind = 1;
	while ((c = getopt_long(argc, argv, "v:h", opts, NULL)) != -1) {
		int status = daemon_flag(c, &o, &verbosity, &names_given);
		if (status >= 0)
			return status;
	}
	if (optind < argc) {
		fprintf(stderr, "kube-batchd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	kb_log_setup(verbosity, stderr);
	kb_err err = {0};
	int r = kb_daemon_run(&o, &err);
	if (r < 0) {
		fprintf(stderr, "kube-batchd: error: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return 1;
	}
	return 0;
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
	if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
		printf("kube-batchd %s\n", KB_VERSION);
		return 0;
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		fprintf(stderr, "kube-batchd: unknown command \"%s\"\n", argv[1]);
		usage(stderr);
		return 2;
	}
	return cmd_daemon(argc, argv);
}

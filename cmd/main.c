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
	      "       kube-batchd [--kubeconfig F] [--master URL] [--scheduler-name NAME]\n"
	      "                   [--scheduler-conf F] [--queue-conf F] [--schedule-period DURATION]\n"
	      "                   [--schedule-delay DURATION] [--default-queue QUEUE] [-v N]\n"
	      "                   [--kube-api-qps QPS]\n"
	      "                   [--kube-api-burst N] [--listen-address HOST:PORT]\n"
	      "                   [--leader-elect[=true|false]]\n"
	      "       kube-batchd --version\n"
	      "\n"
	      "DURATION is a number of seconds (\"1.5\") or has a unit: \"500ms\", \"2s\", \"10m\", \"1h\".\n"
	      "The daemon runs a session every --schedule-period (1s), and --schedule-delay (50ms)\n"
	      "after the cluster changes; --schedule-delay 0 keeps to the period alone.\n",
	      out);
}

static int cmd_simulate(int argc, char **argv)
{
	enum { OPT_SCHED_CONF = 256, OPT_QUEUE_CONF, OPT_OUTPUT, OPT_PERIOD, OPT_NAME, OPT_QUEUE, OPT_MAX };
	static const struct option opts[] = {
		{"file", required_argument, NULL, 'f'},
		{"scheduler-conf", required_argument, NULL, OPT_SCHED_CONF},
		{"queue-conf", required_argument, NULL, OPT_QUEUE_CONF},
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"schedule-period", required_argument, NULL, OPT_PERIOD},
		{"scheduler-name", required_argument, NULL, OPT_NAME},
		{"default-queue", required_argument, NULL, OPT_QUEUE},
		{"max-time", required_argument, NULL, OPT_MAX},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	KB_VEC(const char *) files = {0};
	kb_sim_options o = {
		.output = KB_SIM_JSON,
		.period_ms = KB_DEFAULT_PERIOD_MS,
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
	};
	int c, status = 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
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
		case 'o':
		case OPT_OUTPUT:
			if (strcmp(optarg, "json") == 0) {
				o.output = KB_SIM_JSON;
			} else if (strcmp(optarg, "table") == 0) {
				o.output = KB_SIM_TABLE;
			} else {
				fprintf(stderr, "kube-batchd: --output: expected json or table, got \"%s\"\n", optarg);
				goto out;
			}
			break;
		case OPT_PERIOD:
		case OPT_MAX: {
			int64_t ms;
			if (kb_duration_parse_ms(optarg, &ms) < 0 || (c == OPT_PERIOD && ms <= 0)) {
				fprintf(stderr, "kube-batchd: --%s: bad duration \"%s\"\n",
					c == OPT_PERIOD ? "schedule-period" : "max-time", optarg);
				goto out;
			}
			if (c == OPT_PERIOD)
				o.period_ms = ms;
			else
				o.max_time_ms = ms;
			break;
		}
		case OPT_NAME:
			o.scheduler_name = optarg;
			break;
		case OPT_QUEUE:
			o.default_queue = optarg;
			break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
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

/* Cluster mode: kube-batch's and kube-scheduler's flag names. Exit 0 after
 * SIGTERM/SIGINT, 1 when start-up fails, 2 on a usage error. */
static int cmd_daemon(int argc, char **argv)
{
	enum {
		OPT_KUBECONFIG = 256, OPT_MASTER, OPT_NAME, OPT_SCHED_CONF, OPT_QUEUE_CONF, OPT_PERIOD,
		OPT_QUEUE, OPT_QPS, OPT_BURST, OPT_LISTEN, OPT_V, OPT_LEADER, OPT_DELAY,
	};
	static const struct option opts[] = {
		{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
		{"master", required_argument, NULL, OPT_MASTER},
		{"scheduler-name", required_argument, NULL, OPT_NAME},
		{"scheduler-conf", required_argument, NULL, OPT_SCHED_CONF},
		{"queue-conf", required_argument, NULL, OPT_QUEUE_CONF},
		{"schedule-period", required_argument, NULL, OPT_PERIOD},
		{"default-queue", required_argument, NULL, OPT_QUEUE},
		{"schedule-delay", required_argument, NULL, OPT_DELAY},
		{"kube-api-qps", required_argument, NULL, OPT_QPS},
		{"kube-api-burst", required_argument, NULL, OPT_BURST},
		{"listen-address", required_argument, NULL, OPT_LISTEN},
		{"v", required_argument, NULL, OPT_V},
		{"leader-elect", optional_argument, NULL, OPT_LEADER},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	kb_daemon_options o = {
		.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
		.default_queue = KB_DEFAULT_QUEUE,
		.registry = &kb_builtin_registry,
		.listen_address = "127.0.0.1:10251",
		.period_ms = KB_DEFAULT_PERIOD_MS,
		.delay_ms = 50,
		.qps = 200,
		.burst = 400,
	};
	int verbosity = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "v:h", opts, NULL)) != -1) {
		char *end = NULL;
		switch (c) {
		case OPT_KUBECONFIG:
			o.kubeconfig = optarg;
			break;
		case OPT_MASTER:
			o.master = optarg;
			break;
		case OPT_NAME:
			o.scheduler_name = optarg;
			break;
		case OPT_SCHED_CONF:
			o.scheduler_conf = optarg;
			break;
		case OPT_QUEUE_CONF:
			o.queue_conf = optarg;
			break;
		case OPT_QUEUE:
			o.default_queue = optarg;
			break;
		case OPT_LISTEN:
			o.listen_address = optarg;
			break;
		case OPT_LEADER:
			if (!optarg || strcmp(optarg, "true") == 0) {
				o.leader_elect = true;
			} else if (strcmp(optarg, "false") == 0) {
				o.leader_elect = false;
			} else {
				fprintf(stderr, "kube-batchd: --leader-elect: expected true or false, got \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case OPT_PERIOD:
			if (kb_duration_parse_ms(optarg, &o.period_ms) < 0 || o.period_ms <= 0) {
				fprintf(stderr, "kube-batchd: --schedule-period: bad duration \"%s\"\n", optarg);
				return 2;
			}
			break;
		case OPT_DELAY:
			if (kb_duration_parse_ms(optarg, &o.delay_ms) < 0 || o.delay_ms < 0) {
				fprintf(stderr, "kube-batchd: --schedule-delay: bad duration \"%s\"\n", optarg);
				return 2;
			}
			break;
		case OPT_QPS:
			o.qps = strtod(optarg, &end);
			if (!end || *end || !(o.qps > 0)) {
				fprintf(stderr, "kube-batchd: --kube-api-qps: expected a number > 0, got \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case OPT_BURST: {
			long b = strtol(optarg, &end, 10);
			if (!end || *end || b < 1 || b > 1000000) {
				fprintf(stderr, "kube-batchd: --kube-api-burst: expected an integer >= 1, got \"%s\"\n",
					optarg);
				return 2;
			}
			o.burst = (int)b;
			break;
		}
		case 'v':
		case OPT_V: {
			const char *a = optarg[0] == '=' ? optarg + 1 : optarg; /* -v=3 */
			long v = strtol(a, &end, 10);
			if (!a[0] || !end || *end || v < 0 || v > 10) {
				fprintf(stderr, "kube-batchd: -v: expected a level 0..10, got \"%s\"\n", optarg);
				return 2;
			}
			verbosity = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
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
	if (argc >= 2 && strcmp(argv[1], "simulate") == 0)
		return cmd_simulate(argc - 1, argv + 1);
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

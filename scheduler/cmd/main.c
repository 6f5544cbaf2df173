/* kube-batchd - the command line.
 *
 *   kube-batchd simulate -f FILE... [--scheduler-conf F] [--queue-conf F]
 *                        [--output json|table] [--schedule-period 1s]
 *                        [--scheduler-name N] [--default-queue Q] [--max-time D]
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

#include "api/quantity.h"
#include "base/vec.h"
#include "scheduler/simulate.h"

#define KB_VERSION "0.1.0"

static void usage(FILE *out)
{
	fputs("usage: kube-batchd simulate -f FILE... [--scheduler-conf F] [--queue-conf F]\n"
	      "                            [--output json|table] [--schedule-period DURATION]\n"
	      "                            [--scheduler-name NAME] [--default-queue QUEUE]\n"
	      "                            [--max-time DURATION]\n"
	      "       kube-batchd --version\n"
	      "\n"
	      "DURATION is a number of seconds (\"1.5\") or has a unit: \"500ms\", \"2s\", \"10m\", \"1h\".\n",
	      out);
}

/* Parses "1.5", "500ms", "2s", "10m", "1h" into milliseconds. 0 or -EINVAL. */
static int parse_duration_ms(const char *s, int64_t *ret)
{
	size_t len = strlen(s);
	int64_t unit_ms = 1000;
	char num[64];
	if (len >= 2 && strcmp(s + len - 2, "ms") == 0) {
		unit_ms = 1;
		len -= 2;
	} else if (len >= 1 && strchr("smh", s[len - 1])) {
		unit_ms = s[len - 1] == 's' ? 1000 : s[len - 1] == 'm' ? 60000 : 3600000;
		len -= 1;
	}
	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = '\0';
	int64_t milli;
	/* A quantity's milli-units of a count of units: exact, no floating point. */
	if (kb_quantity_parse(num, &milli) < 0 || milli < 0)
		return -EINVAL;
	__int128 v = (__int128)milli * unit_ms / 1000;
	if (v > INT64_MAX / 2)
		return -EINVAL;
	*ret = (int64_t)v;
	return 0;
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
	kb_sim_options o = {.output = KB_SIM_JSON, .period_ms = 1000};
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
			if (parse_duration_ms(optarg, &ms) < 0 || (c == OPT_PERIOD && ms <= 0)) {
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

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "simulate") == 0)
		return cmd_simulate(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)) {
		printf("kube-batchd %s\n", KB_VERSION);
		return 0;
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	fputs("kube-batchd: cluster mode is not available in this build; use \"kube-batchd simulate\"\n",
	      stderr);
	usage(stderr);
	return 2;
}

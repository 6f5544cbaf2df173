/* live.c - the read-only commands' flags and cluster (see live.h). */
#include "cmd/live.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "plugins/registry.h"
#include "scheduler/simulate.h"

enum {
	OPT_KUBECONFIG = 256, OPT_MASTER, OPT_SCHED_CONF, OPT_QUEUE_CONF, OPT_NAME, OPT_QUEUE,
	OPT_OUTPUT, OPT_TIMEOUT, OPT_PERIOD, OPT_MAX, OPT_FROM_CLUSTER,
};

static int usage_error(void (*usage)(FILE *), const char *msg)
{
	fprintf(stderr, "kube-batchd: %s\n", msg);
	usage(stderr);
	return 2;
}

static int duration_flag(const char *flag, const char *arg, bool positive, int64_t *ret)
{
	int64_t ms;
	if (kb_duration_parse_ms(arg, &ms) < 0 || ms < 0 || (positive && ms == 0)) {
		fprintf(stderr, "kube-batchd: --%s: bad duration \"%s\"\n", flag, arg);
		return 2;
	}
	*ret = ms;
	return -1;
}

static int one_flag(int c, unsigned accept, void (*usage)(FILE *), kb_live_options *o)
{
	int64_t ms;
	int st;
	switch (c) {
	case OPT_KUBECONFIG:
		o->kubeconfig = optarg;
		return -1;
	case OPT_MASTER:
		o->master = optarg;
		return -1;
	case OPT_SCHED_CONF:
		o->scheduler_conf = optarg;
		return -1;
	case OPT_QUEUE_CONF:
		o->queue_conf = optarg;
		return -1;
	case OPT_NAME:
		if (!optarg[0])
			return usage_error(usage, "--scheduler-name: must not be empty");
		if (o->nscheduler_names == KB_MAX_SCHEDULER_NAMES) {
			fprintf(stderr, "kube-batchd: --scheduler-name: at most %d names\n",
				KB_MAX_SCHEDULER_NAMES);
			return 2;
		}
		o->scheduler_names[o->nscheduler_names++] = optarg;
		return -1;
	case OPT_QUEUE:
		o->default_queue = optarg;
		return -1;
	case 'o':
	case OPT_OUTPUT:
		if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
			fprintf(stderr, "kube-batchd: --output: expected json or table, got \"%s\"\n",
				optarg);
			usage(stderr);
			return 2;
		}
		o->json = strcmp(optarg, "json") == 0;
		o->output_given = true;
		return -1;
	case OPT_TIMEOUT:
		if ((st = duration_flag("timeout", optarg, true, &ms)) >= 0)
			return st;
		o->timeout_ms = (long)ms;
		return -1;
	case OPT_PERIOD:
	case OPT_MAX:
		if (!(accept & KB_LIVE_SIM))
			break;
		return duration_flag(c == OPT_PERIOD ? "schedule-period" : "max-time", optarg, true,
				     c == OPT_PERIOD ? &o->period_ms : &o->max_time_ms);
	case OPT_FROM_CLUSTER:
		if (!(accept & KB_LIVE_SIM))
			break;
		return -1;
	case 'f':
		if (!(accept & KB_LIVE_FILES))
			break;
		if (KB_VEC_PUSH(&o->files, optarg) < 0) {
			fputs("kube-batchd: out of memory\n", stderr);
			return 2;
		}
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		break;
	}
	usage(stderr);
	return 2;
}

int kb_live_parse(int argc, char **argv, unsigned accept, void (*usage)(FILE *out),
		  kb_live_options *o)
{
	static const struct option opts[] = {
		{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
		{"master", required_argument, NULL, OPT_MASTER},
		{"scheduler-conf", required_argument, NULL, OPT_SCHED_CONF},
		{"queue-conf", required_argument, NULL, OPT_QUEUE_CONF},
		{"scheduler-name", required_argument, NULL, OPT_NAME},
		{"default-queue", required_argument, NULL, OPT_QUEUE},
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"schedule-period", required_argument, NULL, OPT_PERIOD},
		{"max-time", required_argument, NULL, OPT_MAX},
		{"from-cluster", no_argument, NULL, OPT_FROM_CLUSTER},
		{"file", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof(*o));
	o->default_queue = KB_DEFAULT_QUEUE;
	o->period_ms = KB_DEFAULT_PERIOD_MS;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		int st = one_flag(c, accept, usage, o);
		if (st >= 0)
			return st;
	}
	for (int i = optind; i < argc; i++)
		if (KB_VEC_PUSH(&o->args, argv[i]) < 0) {
			fputs("kube-batchd: out of memory\n", stderr);
			return 2;
		}
	if (o->nscheduler_names == 0)
		o->scheduler_names[o->nscheduler_names++] = KB_DEFAULT_SCHEDULER_NAME;
	return -1;
}

void kb_live_options_release(kb_live_options *o)
{
	KB_VEC_RELEASE(&o->files);
	KB_VEC_RELEASE(&o->args);
}

/* Without --queue-conf, a PodGroup naming a queue that is no Queue object
 * reads "queue not found", though the daemon may have it from its queue
 * file: says so once on stderr, naming the first such group. O(PodGroups). */
static void note_unknown_queues(const kb_cluster *c, const char *default_queue)
{
	const kb_object *first = NULL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->podgroups.slots.n; i++) {
		const kb_object *o = c->podgroups.slots.v[i].obj;
		const char *q = o ? o->u.podgroup.queue : NULL;
		if (!q || (default_queue && strcmp(q, default_queue) == 0) ||
		    kb_cluster_slot(c, KB_KIND_QUEUE, q))
			continue;
		if (!first)
			first = o;
		n++;
	}
	if (first)
		fprintf(stderr,
			"kube-batchd: note: PodGroup \"%s\" names queue \"%s\", which is no Queue "
			"object (%u PodGroup%s name such queues); if the daemon has it from its queue "
			"file, pass that file with --queue-conf, else those jobs read \"queue not "
			"found\"\n",
			first->meta.key, first->u.podgroup.queue, n, n == 1 ? "" : "s");
}

int kb_live_load(const kb_live_options *o, kb_live *l, kb_err *err)
{
	memset(l, 0, sizeof(*l));
	kb_cluster_init(&l->cluster, o->scheduler_names[0], o->default_queue);
	kb_runtimes_init(&l->history, 0, 0);
	int r = 0;
	for (uint32_t i = 1; i < o->nscheduler_names && r == 0; i++)
		if ((r = kb_cluster_add_scheduler_name(&l->cluster, o->scheduler_names[i])) < 0)
			kb_err_set(err, r, "--scheduler-name: at most %d names", KB_MAX_SCHEDULER_NAMES);
	if (r == 0 && o->queue_conf) {
		r = kb_queue_conf_load_file(o->queue_conf, &l->cluster.resnames, &l->qconf, err);
		if (r == 0) {
			l->qconf_loaded = true;
			l->cluster.queue_conf = &l->qconf;
		}
	}
	/* A server that closes the connection must not kill the command. */
	if (r == 0 && signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		r = kb_err_set(err, -errno, "ignoring SIGPIPE: %s", strerror(errno));
	if (r == 0) {
		kb_cluster_read_options ro = {
			.kubeconfig = o->kubeconfig,
			.master = o->master,
			.timeout_ms = o->timeout_ms,
			.history = o->read_history ? &l->history : NULL,
		};
		r = kb_cluster_read(&ro, &l->cluster, &l->info, err);
		if (r == 0 && !o->queue_conf)
			note_unknown_queues(&l->cluster, o->default_queue);
	}
	if (r < 0)
		kb_live_release(l);
	return r;
}

void kb_live_release(kb_live *l)
{
	kb_cluster_release(&l->cluster);
	kb_runtimes_release(&l->history);
	if (l->qconf_loaded)
		kb_queue_conf_release(&l->qconf);
	l->qconf_loaded = false;
}

int kb_live_fail(int r, const kb_err *err)
{
	fprintf(stderr, "kube-batchd: error: %s\n", err && err->msg[0] ? err->msg : strerror(-r));
	return 1;
}

int kb_live_simulate(kb_live *l, const kb_live_options *o, uint32_t max_sessions,
		     kb_sim_result *ret, kb_err *err)
{
	kb_sim_options so = {
		.registry = &kb_builtin_registry,
		.scheduler_conf = o->scheduler_conf,
		.scheduler_name = o->scheduler_names[0],
		.default_queue = o->default_queue,
		.period_ms = o->period_ms,
		.cluster = &l->cluster,
		.start_ms = l->info.read_ms,
		.max_sessions = max_sessions,
	};
	return kb_simulate_run(&so, ret, err);
}

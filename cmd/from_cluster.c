/* from_cluster.c - `kube-batchd simulate --from-cluster`: the cluster's
 * state read through the API (read-only), the manifests given added, and
 * the scheduler simulated from now (scheduler/simulate.h), the pods bound
 * ending when their duration annotation or activeDeadlineSeconds says, else
 * after the median runtime of their job or queue among the finished pods
 * the API holds (scheduler/estimate.h, kube/cluster_read.h), and an
 * estimated start for each PodGroup of the cluster pending now and each
 * the manifests add ("estimates"). */
#include <stdlib.h>
#include <string.h>

#include "cmd/cli_cmds.h"
#include "cmd/live.h"
#include "plugins/registry.h"
#include "scheduler/estimate.h"
#include "scheduler/simulate.h"

static void usage(FILE *out)
{
	fputs("usage: kube-batchd simulate --from-cluster [--kubeconfig F] [--master URL] [-f NEW.yaml]...\n"
	      "                            [--scheduler-conf F] [--queue-conf F] [-o|--output json|table]\n"
	      "                            [--schedule-period D] [--max-time D] [--scheduler-name N]\n"
	      "                            [--default-queue Q] [--timeout D]\n"
	      "\n"
	      "Reads the cluster through the API (nothing is written), adds the manifests, and\n"
	      "simulates the scheduler from now: which pods would bind and where, what they would\n"
	      "preempt, and why the others wait. Pods already bound end when their annotation\n"
	      "sim.kube-batchd.io/duration or spec.activeDeadlineSeconds says (from status.startTime),\n"
	      "else after the median runtime of their job name, else of their queue, among the\n"
	      "finished (Succeeded) pods the API still holds, else stay bound; pending pods are\n"
	      "pending work. Each PodGroup pending now, and each the manifests add, gets an\n"
	      "estimated start (\"estimates\"), or \"unknown\" and why. Times are seconds from now.\n",
	      out);
}

bool kb_cmd_wants_from_cluster(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--from-cluster") == 0)
			return true;
	}
	return false;
}

/* The run over the live store with the bound pods' ends, its estimates,
 * printed. 0 or -errno with err (nothing printed then). */
static int simulate_with_estimates(kb_live *live, kb_sim_options *so, kb_err *err)
{
	kb_estimate_options eo = {
		.now_ms = live->info.read_ms, .history = &live->history, .list_groups = true};
	kb_estimate_input in;
	int r = kb_estimate_input_read(&live->cluster, &eo, &in, err);
	if (r < 0)
		return r;
	so->ends = in.ends.v;
	so->nends = (uint32_t)in.ends.n;
	kb_sim_result res;
	r = kb_simulate_run(so, &res, err);
	int64_t horizon = so->max_time_ms > 0 ? so->max_time_ms : 30LL * 24 * 3600 * 1000;
	/* The manifests' gangs are in the store once the run has loaded them. */
	if (r == 0)
		r = kb_estimate_input_add_new(&live->cluster, &in, err);
	if (r == 0 && (r = kb_estimate_fill(&live->cluster, &in, horizon, &res)) < 0)
		kb_err_set(err, r, "out of memory");
	if (r == 0)
		kb_sim_result_print(&res, so->output, stdout);
	kb_sim_result_release(&res);
	kb_estimate_input_release(&in);
	return r;
}

int kb_cmd_simulate_from_cluster(int argc, char **argv)
{
	kb_live_options o;
	int st = kb_live_parse(argc, argv, KB_LIVE_FILES | KB_LIVE_SIM, usage, &o);
	if (st >= 0)
		goto out_opts;
	st = 2;
	if (o.args.n) {
		fprintf(stderr, "kube-batchd: unexpected argument \"%s\"\n", o.args.v[0]);
		usage(stderr);
		goto out_opts;
	}
	kb_err err = {0};
	kb_live live;
	o.read_history = true;
	int r = kb_live_load(&o, &live, &err);
	if (r < 0) {
		st = kb_live_fail(r, &err);
		goto out_opts;
	}
	kb_sim_options so = {
		.files = o.files.v,
		.nfiles = (uint32_t)o.files.n,
		.registry = &kb_builtin_registry,
		.scheduler_conf = o.scheduler_conf,
		.scheduler_name = o.scheduler_names[0],
		.default_queue = o.default_queue,
		.period_ms = o.period_ms,
		.max_time_ms = o.max_time_ms,
		/* simulate's default: JSON */
		.output = !o.output_given || o.json ? KB_SIM_JSON : KB_SIM_TABLE,
		.cluster = &live.cluster,
		.start_ms = live.info.read_ms,
	};
	if (live.info.undecodable)
		fprintf(stderr, "kube-batchd: warning: %u objects did not decode and are left out, "
			"the first: %s\n", live.info.undecodable, live.info.first_undecodable);
	r = simulate_with_estimates(&live, &so, &err);
	st = r < 0 ? kb_live_fail(r, &err) : 0;
	kb_live_release(&live);
out_opts:
	kb_live_options_release(&o);
	return st;
}

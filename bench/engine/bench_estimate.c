/* bench_estimate.c - the cost of estimated starts (scheduler/estimate.h) at
 * a large size.
 *
 *   bench-estimate [--nodes N] [--pods-per-node K] [--gangs G] [--seed S]
 *                  [--budget MS] [--runs R]
 *
 * Makes a cluster from the seed: N nodes of 64 cpu / 256Gi, each full with
 * K running pods of our scheduler (64/K cpu each, in gangs of 8, started
 * up to an hour ago, each with a sim.kube-batchd.io/duration of 10 min to
 * 2 h), and G pending gangs of 2-16 pods of 4-16 cpu behind them. Then
 * runs kb_estimate_run R times (default 3) with the CPU budget given
 * (default: the estimator's, KB_ESTIMATE_BUDGET_MS; -1: none) and prints,
 * per run, its wall-clock and CPU time (the thread's), the sessions simulated, why the run
 * stopped, and how many gangs got an estimate; then the median time.
 * First the parts: the store's copy, and the input read over it.
 * Every figure is measured here (CLOCK_MONOTONIC).
 *
 * Exit status: 0; 1 on an engine error; 2 on bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "plugins/registry.h"
#include "scheduler/estimate.h"
#include "bench/engine/clock.h"

#define NOW_MS 1700000000000LL

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Appends one object's YAML to the cluster (decoded and applied). 0 or -1. */
static int add(kb_cluster *c, const char *text)
{
	kb_yaml_file yf;
	kb_err err = {0};
	if (kb_yaml_load_buffer(text, strlen(text), "bench", &yf, &err) < 0) {
		fprintf(stderr, "bench-estimate: %s\n", err.msg);
		return -1;
	}
	int r = 0;
	for (size_t i = 0; i < yf.ndocs && r == 0; i++) {
		kb_object *o;
		r = kb_object_decode(yf.docs[i], "bench", &c->resnames, &o, &err);
		if (r == 0)
			r = kb_cluster_apply(c, o, NOW_MS - 7200000);
		if (r < 0)
			fprintf(stderr, "bench-estimate: %s\n", err.msg);
	}
	kb_yaml_file_release(&yf);
	return r < 0 ? -1 : 0;
}

static int build(kb_cluster *c, uint32_t nodes, uint32_t per_node, uint32_t gangs, uint64_t seed)
{
	char buf[1024];
	uint64_t s = seed ? seed : 1;
	uint32_t cpu = 64 / (per_node ? per_node : 1);
	for (uint32_t n = 0; n < nodes; n++) {
		(void)snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Node\nmetadata: {name: n%05u}\n"
			       "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n", n);
		if (add(c, buf) < 0)
			return -1;
	}
	uint32_t pod = 0;
	for (uint32_t n = 0; n < nodes; n++)
		for (uint32_t k = 0; k < per_node; k++, pod++) {
			uint32_t g = pod / 8;
			if (pod % 8 == 0) {
				(void)snprintf(buf, sizeof(buf), "apiVersion: scheduling.incubator.k8s.io/v1alpha1\n"
					       "kind: PodGroup\nmetadata: {name: run%06u}\nspec: {minMember: 1}\n"
					       "status: {phase: Running}\n", g);
				if (add(c, buf) < 0)
					return -1;
			}
			int64_t started = NOW_MS - (int64_t)(rng_next(&s) % 3600) * 1000;
			time_t t = (time_t)(started / 1000);
			struct tm tm;
			char ts[32];
			gmtime_r(&t, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			(void)snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Pod\nmetadata: {name: r%07u, "
				       "annotations: {scheduling.k8s.io/group-name: run%06u, "
				       "sim.kube-batchd.io/duration: '%u'}}\n"
				       "spec: {schedulerName: kube-batchd, nodeName: n%05u, containers: [{name: c, "
				       "resources: {requests: {cpu: '%u', memory: 1Gi}}}]}\n"
				       "status: {phase: Running, startTime: '%s'}\n",
				       pod, g, 600 + (unsigned)(rng_next(&s) % 6600), n, cpu, ts);
			if (add(c, buf) < 0)
				return -1;
		}
	for (uint32_t g = 0; g < gangs; g++) {
		uint32_t size = 2 + (uint32_t)(rng_next(&s) % 15), req = 4 + (uint32_t)(rng_next(&s) % 13);
		(void)snprintf(buf, sizeof(buf), "apiVersion: scheduling.incubator.k8s.io/v1alpha1\n"
			       "kind: PodGroup\nmetadata: {name: wait%05u}\nspec: {minMember: %u}\n", g, size);
		if (add(c, buf) < 0)
			return -1;
		for (uint32_t i = 0; i < size; i++) {
			(void)snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Pod\nmetadata: {name: w%05u-%02u, "
				       "annotations: {scheduling.k8s.io/group-name: wait%05u, "
				       "sim.kube-batchd.io/duration: '1800'}}\n"
				       "spec: {schedulerName: kube-batchd, containers: [{name: c, "
				       "resources: {requests: {cpu: '%u', memory: 1Gi}}}]}\n", g, i, g, req);
			if (add(c, buf) < 0)
				return -1;
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint32_t nodes = 1000, per_node = 8, gangs = 200, runs = 3;
	uint64_t seed = 42;
	int64_t budget = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			goto usage;
		if (strcmp(argv[i], "--nodes") == 0)
			nodes = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(argv[i], "--pods-per-node") == 0)
			per_node = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(argv[i], "--gangs") == 0)
			gangs = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(v, NULL, 10);
		else if (strcmp(argv[i], "--budget") == 0)
			budget = strtoll(v, NULL, 10);
		else if (strcmp(argv[i], "--runs") == 0)
			runs = (uint32_t)strtoul(v, NULL, 10);
		else
			goto usage;
		i++;
	}
	if (!runs || !per_node || per_node > 64)
		goto usage;
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	double t0 = bench_mono_ms();
	if (build(&c, nodes, per_node, gangs, seed) < 0)
		return 1;
	printf("cluster: %u nodes, %u running pods, %u pending gangs (built in %.0f ms)\n", nodes,
	       nodes * per_node, gangs, bench_mono_ms() - t0);
	kb_conf conf;
	kb_err err = {0};
	if (kb_conf_load_default(&kb_builtin_registry, &conf, &err) < 0) {
		fprintf(stderr, "bench-estimate: %s\n", err.msg);
		return 1;
	}
	/* Its parts: the copy, and the input read over it (a full snapshot build). */
	{
		double a = bench_mono_ms(), ca = bench_cpu_ms();
		kb_cluster copy;
		if (kb_cluster_share_copy(&copy, &c) < 0)
			return 1;
		double b = bench_mono_ms(), cb = bench_cpu_ms();
		kb_estimate_options opt = {.conf = &conf, .now_ms = NOW_MS};
		kb_estimate_input in;
		if (kb_estimate_input_read(&copy, &opt, &in, &err) < 0)
			return 1;
		printf("parts: share copy %.1f ms (CPU %.1f), input read %.1f ms (CPU %.1f; %zu ends, "
		       "%zu pending gangs)\n", b - a, cb - ca, bench_mono_ms() - b, bench_cpu_ms() - cb, in.ends.n,
		       in.pending.n);
		kb_estimate_input_release(&in);
		kb_cluster_release(&copy);
	}
	double *ms = calloc(runs, sizeof(*ms));
	if (!ms)
		return 1;
	for (uint32_t r = 0; r < runs; r++) {
		kb_estimate_options opt = {.conf = &conf, .now_ms = NOW_MS, .budget_ms = budget};
		kb_sim_result res;
		double a = bench_mono_ms(), ca = bench_cpu_ms();
		int rc = kb_estimate_run(&c, &opt, &res, &err);
		ms[r] = bench_mono_ms() - a;
		double cpu = bench_cpu_ms() - ca;
		if (rc < 0) {
			fprintf(stderr, "bench-estimate: %s\n", err.msg);
			return 1;
		}
		uint32_t known = 0;
		for (size_t i = 0; i < res.estimates.n; i++)
			known += res.estimates.v[i].known;
		static const char *const stops[] = {"quiet", "horizon", "sessions", "cpu budget"};
		printf("run %u: %.1f ms (CPU %.1f ms), %u sessions, %.0f s of virtual time, stopped: %s, %u of %zu "
		       "gangs estimated\n", r + 1, ms[r], cpu, res.sessions, (double)res.end_ms / 1000.0,
		       stops[res.stop], known, res.estimates.n);
		kb_sim_result_release(&res);
	}
	qsort(ms, runs, sizeof(*ms), cmp_double);
	printf("median: %.1f ms (budget %s)\n", ms[runs / 2],
	       budget < 0 ? "none" : budget == 0 ? "default" : "given");
	free(ms);
	kb_conf_release(&conf);
	kb_cluster_release(&c);
	return 0;
usage:
	fputs("usage: bench-estimate [--nodes N] [--pods-per-node K] [--gangs G] [--seed S] "
	      "[--budget MS] [--runs R]\n", stderr);
	return 2;
}

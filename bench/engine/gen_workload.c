/* gen_workload.c - writes the workloads of docs/benchmarks.md section 1 as
 * multi-document Kubernetes manifests (what `kubectl apply -f` and
 * `kube-batchd simulate -f` take).
 *
 *   gen-workload WORKLOAD [--scale F] [--seed N] [--out FILE] [--split-mb M]
 *                         [--nodes N] [--pods N] [--gpu-gang-frac F]
 *                         [--members same|mixed] [--racks N] [--affinity]
 *
 * WORKLOAD is one of
 *   basic-5k   5,000 nodes (4,000 x 64 cpu / 256Gi, 1,000 x 96 cpu / 768Gi /
 *              8 nvidia.com/gpu), 50,000 lone pods of 1-4 cpu;
 *   gang-5k    the same nodes, 50,000 pods in gangs of 2-64 members (one
 *              kube-batch PodGroup per gang, minMember = size), a quarter of
 *              the gangs asking 1-8 GPUs per member, four Queues (weights
 *              1:2:3:4), each PodGroup naming one of them;
 *   scale-15k  15,000 nodes (same 4:1 mix), 150,000 pods, the gang-5k mix;
 *   scale-50k  50,000 nodes (same 4:1 mix), 500,000 pods, the gang-5k mix
 *              (issue 18: clusters of 65,000 nodes and more run in
 *              production);
 *   gang-1k    1,000 nodes (same 4:1 mix), 10,000 pods, the gang-5k mix:
 *              with gang-5k, scale-15k and scale-50k, the points of bench/run's
 *              plot of session time against cluster size.
 * --scale F multiplies the node and pod counts (at least 1 node, 2 pods);
 * --nodes / --pods set the counts outright (before --scale).
 *
 * Every pod: schedulerName kube-batchd, 1-4 cpu, memory = cpu x 1-3 Gi (the
 * nodes have 4 and 8 Gi per cpu, so cpu is the binding constraint), GPUs in
 * requests and limits. Nodes allow 110 pods. --affinity (issue 23) labels
 * the nodes with kubernetes.io/hostname and one of 10 zones
 * (topology.kubernetes.io/zone), labels each gang's pods group=<gang>, gives
 * every member a required pod anti-affinity to its gang's other members on
 * the hostname (no two on one node) and every third gang a zone spread
 * constraint (maxSkew 1, DoNotSchedule) over its members as well. The
 * members of a gang share one
 * shape (--members same, the default: the worker template of a TFJob,
 * PyTorchJob or MPIJob), or each member draws its own (--members mixed).
 *
 * --racks N (gang workloads): the nodes, in order, fall into N racks of
 * about equal size (label topology.kubernetes.io/rack: rack-NNN; scaled
 * with the node count by --scale), and every PodGroup requires one rack
 * (annotation kube-batchd.io/topology-required): bench/run's rack-5k.
 *
 * --out FILE writes FILE instead of standard output, and prints the path
 * of every file written, one per line. The manifest loader refuses a file
 * over 64 MiB (base/yaml_doc.h), so past M MiB (--split-mb, default 48;
 * 0: never) the output goes on in FILE.2.yaml, FILE.3.yaml, ... (FILE's
 * ".yaml" is put after the number), each cut between two nodes or two gangs
 * (a PodGroup stays in the file of its pods). Loaded in order (`-f` each,
 * as printed), the parts are the same cluster as one file would be.
 * Every other preset fits in one file (idle-5k150k, 42.5 MB, is the largest);
 * scale-50k, about 147 MB, takes three.
 *
 * Deterministic: the output depends only on the arguments (own PRNG,
 * splitmix64; no time, no locale). Same seed, same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int64_t rng_range(rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;
	return lo + (int64_t)(rng_next(r) % span);
}

/* Uniform double in [0, 1). */
static double rng_unit(rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct workload {
	const char *name;
	int64_t nodes, pods;
	bool gangs;
} workload;

static const workload workloads[] = {
	{"basic-5k", 5000, 50000, false},
	{"gang-5k", 5000, 50000, true},
	{"scale-15k", 15000, 150000, true},
	{"scale-50k", 50000, 500000, true},
	{"gang-1k", 1000, 10000, true},
};

#define NQUEUES 4
#define NAMESPACE "bench"

static void usage(FILE *f)
{
	fputs("usage: gen-workload basic-5k|gang-5k|scale-15k|scale-50k|gang-1k\n"
	      "                    [--scale F] [--seed N] [--out FILE]\n"
	      "                    [--nodes N] [--pods N] [--gpu-gang-frac F] [--members same|mixed]\n"
	      "                    [--racks N] [--affinity]\n",
	      f);
}

/* " topology.kubernetes.io/rack: rack-NNN" for node i of n in racks racks
 * (contiguous runs), or "" without racks. */
static const char *rack_label(int64_t i, int64_t n, int64_t racks)
{
	static char buf[64];
	if (racks <= 0)
		return "";
	snprintf(buf, sizeof(buf), ", topology.kubernetes.io/rack: rack-%03" PRId64,
		 i * racks / (n ? n : 1));
	return buf;
}

#define NZONES 10

static bool affinity; /* --affinity */

/* Where the manifests go: standard output, or --out's file and its parts. */
typedef struct sink {
	FILE *f;
	const char *path; /* NULL: standard output, never split */
	long limit;	  /* bytes before the next part; 0: never */
	int part;	  /* 1 for FILE itself */
	char name[4096];  /* the current part's path */
	char buf[1 << 20];
} sink;

/* The path of part `part` of `path` into s->name: the path itself for part
 * 1, else "STEM.N.yaml" for "STEM.yaml" and "PATH.N" otherwise. */
static int part_name(sink *s, int part)
{
	const char *p = s->path;
	size_t len = strlen(p), ext = strlen(".yaml");
	int n;
	if (part == 1)
		n = snprintf(s->name, sizeof(s->name), "%s", p);
	else if (len > ext && strcmp(p + len - ext, ".yaml") == 0)
		n = snprintf(s->name, sizeof(s->name), "%.*s.%d.yaml", (int)(len - ext), p, part);
	else
		n = snprintf(s->name, sizeof(s->name), "%s.%d", p, part);
	if (n < 0 || (size_t)n >= sizeof(s->name)) {
		fprintf(stderr, "gen-workload: --out: path too long\n");
		return -1;
	}
	return 0;
}

/* Flushes and closes the current file; 0, or -1 with a message. */
static int sink_close(sink *s)
{
	const char *name = s->path ? s->name : "stdout";
	if (fflush(s->f) != 0 || ferror(s->f) || (s->path && fclose(s->f) != 0)) {
		fprintf(stderr, "gen-workload: %s: write failed: %s\n", name, strerror(errno));
		return -1;
	}
	if (s->path)
		printf("%s\n", s->name);
	s->f = NULL;
	return 0;
}

/* Opens part `part` (standard output when there is no path); 0, or -1 with
 * a message. */
static int sink_open(sink *s, int part)
{
	s->part = part;
	if (!s->path)
		s->f = stdout;
	else if (part_name(s, part) < 0)
		return -1;
	else if (!(s->f = fopen(s->name, "w"))) {
		fprintf(stderr, "gen-workload: %s: %s\n", s->name, strerror(errno));
		return -1;
	}
	setvbuf(s->f, s->buf, _IOFBF, sizeof(s->buf));
	return 0;
}

/* At a document boundary: past the limit, closes this part and opens the
 * next. 0, or -1 with a message. */
static int sink_boundary(sink *s)
{
	if (!s->path || s->limit <= 0 || ftell(s->f) < s->limit)
		return 0;
	if (sink_close(s) < 0 || sink_open(s, s->part + 1) < 0)
		return -1;
	fprintf(s->f, "# part %d of %s\n", s->part, s->path);
	return 0;
}

/* The labels of node `name` (number i): its pool, with --affinity its
 * hostname and zone, then `more` (", key: value" pairs, or ""). */
static void node_labels(FILE *out, const char *pool, const char *prefix, int64_t i,
			const char *more)
{
	fprintf(out, "{kube-batchd.io/pool: %s", pool);
	if (affinity)
		fprintf(out,
			", kubernetes.io/hostname: %s-%06" PRId64
			", topology.kubernetes.io/zone: zone-%" PRId64,
			prefix, i, i % NZONES);
	fprintf(out, "%s}", more);
}

static int write_nodes(sink *s, int64_t n, int64_t racks)
{
	/* 4 of 5 nodes are 64-cpu, 1 of 5 the 96-cpu GPU nodes (at least one of
	 * each kind when there are two or more nodes). */
	int64_t ngpu = n / 5;
	if (ngpu == 0 && n >= 2)
		ngpu = 1;
	int64_t ncpu = n - ngpu;
	for (int64_t i = 0; i < ncpu; i++) {
		if (sink_boundary(s) < 0)
			return -1;
		FILE *out = s->f;
		fprintf(out, "---\napiVersion: v1\nkind: Node\nmetadata: {name: cpu-%06" PRId64
			     ", labels: ",
			i);
		node_labels(out, "cpu", "cpu", i, rack_label(i, n, racks));
		fputs("}\nstatus: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\"}}\n", out);
	}
	for (int64_t i = 0; i < ngpu; i++) {
		if (sink_boundary(s) < 0)
			return -1;
		FILE *out = s->f;
		fprintf(out, "---\napiVersion: v1\nkind: Node\nmetadata: {name: gpu-%06" PRId64
			     ", labels: ",
			i);
		node_labels(out, "gpu", "gpu", i, rack_label(ncpu + i, n, racks));
		fputs("}\nstatus: {allocatable: {cpu: \"96\", memory: 768Gi, nvidia.com/gpu: \"8\", "
		      "pods: \"110\"}}\n",
		      out);
	}
	return 0;
}

typedef struct pod_shape {
	int cpu, mem_gi, gpus;
} pod_shape;

static pod_shape draw_shape(rng *r, int gpus)
{
	pod_shape p = {.gpus = gpus};
	p.cpu = (int)rng_range(r, 1, 4);
	p.mem_gi = p.cpu * (int)rng_range(r, 1, 3);
	return p;
}

static void write_pod(FILE *out, const char *name, const char *group, pod_shape shape,
		      bool spread)
{
	int cpu = shape.cpu, mem = shape.mem_gi, gpus = shape.gpus;
	fprintf(out, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: " NAMESPACE,
		name);
	if (group)
		fprintf(out, ", annotations: {scheduling.k8s.io/group-name: %s}", group);
	if (group && affinity)
		fprintf(out, ", labels: {group: %s}", group);
	fputs("}\nspec: {schedulerName: kube-batchd, ", out);
	if (group && affinity)
		fprintf(out,
			"affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
			"[{labelSelector: {matchLabels: {group: %s}}, "
			"topologyKey: kubernetes.io/hostname}]}}, ",
			group);
	if (group && affinity && spread)
		fprintf(out,
			"topologySpreadConstraints: [{maxSkew: 1, "
			"topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, "
			"labelSelector: {matchLabels: {group: %s}}}], ",
			group);
	fprintf(out,
		"containers: [{name: main, image: busybox, "
		"resources: {requests: {cpu: \"%d\", memory: %dGi",
		cpu, mem);
	if (gpus > 0)
		fprintf(out, ", nvidia.com/gpu: \"%d\"}, limits: {nvidia.com/gpu: \"%d\"}}}]}\n", gpus,
			gpus);
	else
		fputs("}}}]}\n", out);
}

int main(int argc, char **argv)
{
	const workload *w = NULL;
	double scale = 1.0, gpu_frac = 0.25;
	uint64_t seed = 1;
	const char *outpath = NULL;
	int64_t nodes = -1, pods = -1, racks = 0, split_mb = 48;
	bool mixed = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (a[0] != '-') {
			for (size_t k = 0; k < sizeof(workloads) / sizeof(workloads[0]); k++)
				if (strcmp(a, workloads[k].name) == 0)
					w = &workloads[k];
			if (!w) {
				fprintf(stderr, "gen-workload: unknown workload \"%s\"\n", a);
				usage(stderr);
				return 2;
			}
			continue;
		} else if (strcmp(a, "--affinity") == 0) {
			affinity = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "gen-workload: %s needs a value\n", a);
			return 2;
		}
		i++;
		errno = 0;
		if (strcmp(a, "--scale") == 0)
			scale = strtod(v, &end);
		else if (strcmp(a, "--gpu-gang-frac") == 0)
			gpu_frac = strtod(v, &end);
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, &end, 10);
		else if (strcmp(a, "--nodes") == 0)
			nodes = strtoll(v, &end, 10);
		else if (strcmp(a, "--pods") == 0)
			pods = strtoll(v, &end, 10);
		else if (strcmp(a, "--racks") == 0)
			racks = strtoll(v, &end, 10);
		else if (strcmp(a, "--split-mb") == 0)
			split_mb = strtoll(v, &end, 10);
		else if (strcmp(a, "--members") == 0) {
			if (strcmp(v, "same") != 0 && strcmp(v, "mixed") != 0) {
				fprintf(stderr, "gen-workload: --members: expected same or mixed, got \"%s\"\n", v);
				return 2;
			}
			mixed = strcmp(v, "mixed") == 0;
			continue;
		} else if (strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) {
			outpath = v;
			continue;
		} else {
			fprintf(stderr, "gen-workload: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		if (errno || !end || *end || end == v) {
			fprintf(stderr, "gen-workload: %s: bad number \"%s\"\n", a, v);
			return 2;
		}
	}
	if (!w) {
		usage(stderr);
		return 2;
	}
	if (scale <= 0 || gpu_frac < 0 || gpu_frac > 1 || split_mb < 0 || split_mb > 1024) {
		fprintf(stderr, "gen-workload: --scale must be > 0, --gpu-gang-frac in [0, 1], "
				"--split-mb in [0, 1024]\n");
		return 2;
	}
	if (nodes < 0)
		nodes = w->nodes;
	if (pods < 0)
		pods = w->pods;
	nodes = (int64_t)(nodes * scale + 0.5);
	pods = (int64_t)(pods * scale + 0.5);
	if (nodes < 1)
		nodes = 1;
	if (pods < 2)
		pods = 2;
	if (racks > 0) {
		racks = (int64_t)(racks * scale + 0.5);
		if (racks < 1)
			racks = 1;
	}

	static sink snk;
	snk.path = outpath;
	snk.limit = (long)split_mb << 20;
	if (sink_open(&snk, 1) < 0)
		return 1;

	rng r = {seed ^ 0x6b7562652d626174ULL};
	fprintf(snk.f,
		"# kube-batchd benchmark workload %s: %" PRId64 " nodes, %" PRId64
		" pods, seed %" PRIu64 ", scale %g\n",
		w->name, nodes, pods, seed, scale);
	if (write_nodes(&snk, nodes, racks) < 0)
		return 1;

	char name[64], group[32];
	if (!w->gangs) {
		for (int64_t i = 0; i < pods; i++) {
			if (sink_boundary(&snk) < 0)
				return 1;
			snprintf(name, sizeof(name), "pod-%07" PRId64, i);
			write_pod(snk.f, name, NULL, draw_shape(&r, 0), false);
		}
	} else {
		for (int q = 1; q <= NQUEUES; q++)
			fprintf(snk.f,
				"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
				"metadata: {name: q%d}\nspec: {weight: %d}\n",
				q, q);
		int64_t left = pods;
		for (int64_t g = 0; left > 0; g++) {
			int64_t size = rng_range(&r, 2, 64);
			if (size > left)
				size = left;
			if (left - size == 1)
				size = size > 2 ? size - 1 : size + 1; /* no gang of one at the end */
			bool gpu = rng_unit(&r) < gpu_frac;
			int gpus = gpu ? (int)rng_range(&r, 1, 8) : 0;
			int queue = (int)rng_range(&r, 1, NQUEUES);
			snprintf(group, sizeof(group), "pg-%06" PRId64, g);
			if (sink_boundary(&snk) < 0)
				return 1;
			FILE *out = snk.f;
			fprintf(out,
				"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
				"metadata: {name: %s, namespace: " NAMESPACE "%s}\n"
				"spec: {minMember: %" PRId64 ", queue: q%d}\n",
				group,
				racks > 0 ? ", annotations: {kube-batchd.io/topology-required: "
					    "topology.kubernetes.io/rack}"
					  : "",
				size, queue);
			pod_shape shape = draw_shape(&r, gpus);
			for (int64_t m = 0; m < size; m++) {
				snprintf(name, sizeof(name), "%s-%" PRId64, group, m);
				if (mixed && m > 0)
					shape = draw_shape(&r, gpus);
				write_pod(out, name, group, shape, g % 3 == 0);
			}
			left -= size;
		}
	}
	return sink_close(&snk) < 0 ? 1 : 0;
}

/*
 * openb_replay.c - replay the openb GPU trace (shared/data/openb) under
 * placement policies and report unallocated GPU %, following the method of
 * docs/benchmarks.md section 3 exactly:
 *
 *   - cluster: the nodes file as given; capacity = sum of its GPUs;
 *   - per seed: shuffle the pods (seeded), then append pods drawn uniformly
 *     with replacement from the trace until the total GPU request reaches
 *     1.3 x capacity;
 *   - pods arrive one at a time, never leave; a pod that fits nowhere is
 *     dropped; CPU-only pods are placed too (they ask 0 GPU);
 *   - after each pod, arrived += its GPU request; x = round(100 * arrived /
 *     capacity); the figure at x is 100 - the mean allocation % over the pods
 *     of bucket x; reported at x = 100 and x = 130, mean +- sd over seeds.
 *
 * Usage: openb_replay --nodes NODES.csv --pods PODS.csv [--seeds N]
 *          [--json] [--plot FILE.png] [--policies kube-batchd,random,bestfit]
 * Policies: kube-batchd, random, bestfit, and fgd (FGD as published).
 * Exit: 0 ok, 2 bad usage or input, 1 internal failure.
 *
 * Deterministic: the same arguments print the same stdout (timings go to
 * stderr). Seed i (0-based) uses the number 42 + i, as the paper's scripts.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/openb_csv.h"
#include "plugins/gpu_frag.h"

#define TUNE_RATIO 1.3
#define NBUCKETS 256
#define MAX_POLICIES 8
#define MAX_SEEDS 1000

/* ---- PRNG: splitmix64, caller-owned state ------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias for
 * n < 2^20 is below 2^-44). */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	r->s = seed * UINT64_C(0xd1342543de82ef95) + stream;
	rng_next(r);
}

/* ---- the trace -------------------------------------------------------- */

struct trace {
	struct kb_gpu_models models;
	struct kb_gpu_node *nodes;
	size_t nnodes;
	struct kb_gpu_task *pods;
	size_t npods;
	/* distinct pod shapes ("classes") and each pod's class */
	struct kb_gpu_task *classes;
	size_t nclasses;
	uint32_t *pod_class;
	int64_t capacity; /* milli-GPU */
	int64_t trace_gpu; /* total GPU request of the trace */
	struct kb_gpu_workload workload_fgd;
	struct kb_gpu_workload workload_kbd;
};

_Static_assert(sizeof(struct kb_gpu_task) ==
		       2 * sizeof(int64_t) + 2 * sizeof(int) + sizeof(uint64_t),
	       "struct kb_gpu_task has padding; task_cmp needs a field compare");

static int task_cmp(const struct kb_gpu_task *a, const struct kb_gpu_task *b)
{
	return memcmp(a, b, sizeof(*a));
}

/* Index pods by distinct shape. struct kb_gpu_task has no padding (two
 * int64, two int, one uint64) and kb_gpu_task_init sets every field, so
 * memcmp is a valid equality. O(pods * classes), classes in the hundreds. */
static int trace_classify(struct trace *t)
{
	t->classes = calloc(t->npods, sizeof(*t->classes));
	t->pod_class = calloc(t->npods, sizeof(*t->pod_class));
	if (!t->classes || !t->pod_class)
		return -ENOMEM;
	for (size_t i = 0; i < t->npods; i++) {
		size_t c;

		for (c = 0; c < t->nclasses; c++)
			if (task_cmp(&t->classes[c], &t->pods[i]) == 0)
				break;
		if (c == t->nclasses)
			t->classes[t->nclasses++] = t->pods[i];
		t->pod_class[i] = (uint32_t)c;
	}
	return 0;
}

static void trace_release(struct trace *t)
{
	kb_gpu_workload_release(&t->workload_fgd);
	kb_gpu_workload_release(&t->workload_kbd);
	free(t->nodes);
	free(t->pods);
	free(t->classes);
	free(t->pod_class);
}

/* ---- one replay ---------------------------------------------------------- */

struct cache_entry {
	uint32_t version; /* node version this entry is valid for; 0 = none */
	uint32_t devices;
	double score;     /* -INFINITY: does not fit */
};

struct run_stats {
	double sum[NBUCKETS]; /* sum of allocation % over the bucket's pods */
	uint32_t cnt[NBUCKETS];
};

/* Figure at bucket x: 100 - mean allocation %, or NAN if empty. */
static double stats_unalloc(const struct run_stats *st, int x)
{
	if (x < 0 || x >= NBUCKETS || st->cnt[x] == 0)
		return NAN;
	return 100.0 - st->sum[x] / st->cnt[x];
}

/* The arrival order of seed `seed`: shuffled trace, then draws with
 * replacement up to TUNE_RATIO x capacity. Same for every policy. */
static uint32_t *make_order(const struct trace *t, uint64_t seed,
			    size_t *ret_n)
{
	struct rng r;
	size_t cap = t->npods * 2 + 16, n = t->npods;
	uint32_t *order = malloc(cap * sizeof(*order));
	double target = TUNE_RATIO * (double)t->capacity;
	int64_t total = t->trace_gpu;

	if (!order)
		return NULL;
	rng_seed(&r, seed, 1);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rng_below(&r, i + 1);
		uint32_t tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
	while ((double)total < target) {
		uint32_t p = (uint32_t)rng_below(&r, t->npods);

		if (n == cap) {
			uint32_t *no = realloc(order, 2 * cap * sizeof(*order));

			if (!no) {
				free(order);
				return NULL;
			}
			order = no;
			cap *= 2;
		}
		order[n++] = p;
		total += kb_gpu_task_gpu_total(&t->pods[p]);
	}
	*ret_n = n;
	return order;
}

/* Replay one policy on one arrival order into *st. Ties between nodes go
 * to the first in a seeded random order of the nodes, fixed for the replay
 * (docs/benchmarks.md for Best-fit; the same rule for the fragmentation policies
 * reproduces the published FGD figures). Work: O(pods * nodes) cache probes
 * plus one kb_gpu_score per (shape, node) after each change of that node.
 * Returns 0 or a negative errno. */
static int replay(const struct trace *t, enum kb_gpu_policy policy,
		  uint64_t seed, const uint32_t *order, size_t norder,
		  struct run_stats *st)
{
	size_t nn = t->nnodes;
	struct kb_gpu_node *nodes = malloc(nn * sizeof(*nodes));
	uint32_t *version = malloc(nn * sizeof(*version));
	uint32_t *perm = malloc(nn * sizeof(*perm));
	uint32_t *feasible = malloc(nn * sizeof(*feasible));
	struct cache_entry *cache = NULL;
	const struct kb_gpu_workload *wl =
		policy == KB_GPU_POLICY_FGD ? &t->workload_fgd :
					      &t->workload_kbd;
	int64_t arrived = 0, allocated = 0;
	struct rng r;
	int ret = -ENOMEM;

	if (policy != KB_GPU_POLICY_RANDOM)
		cache = calloc(t->nclasses * nn, sizeof(*cache));
	if (!nodes || !version || !perm || !feasible ||
	    (policy != KB_GPU_POLICY_RANDOM && !cache))
		goto out;
	memcpy(nodes, t->nodes, nn * sizeof(*nodes));
	rng_seed(&r, seed, 2);
	for (size_t i = 0; i < nn; i++) {
		version[i] = 1;
		perm[i] = (uint32_t)i;
	}
	for (size_t i = nn - 1; i > 0; i--) {
		size_t j = (size_t)rng_below(&r, i + 1);
		uint32_t tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	memset(st, 0, sizeof(*st));

	for (size_t k = 0; k < norder; k++) {
		uint32_t c = t->pod_class[order[k]];
		const struct kb_gpu_task *task = &t->classes[c];
		long chosen = -1;
		uint32_t devices = 0;
		int x;

		if (policy == KB_GPU_POLICY_RANDOM) {
			size_t nf = 0;

			for (size_t i = 0; i < nn; i++)
				if (kb_gpu_fits(&nodes[i], task))
					feasible[nf++] = (uint32_t)i;
			if (nf > 0) {
				chosen = feasible[rng_below(&r, nf)];
				ret = kb_gpu_devices_choose(
					&nodes[chosen], task,
					KB_GPU_DEVSEL_RANDOM, rng_next(&r),
					&devices);
				if (ret < 0)
					goto out;
			}
		} else {
			struct cache_entry *row = cache + (size_t)c * nn;
			double best = -INFINITY;

			for (size_t i = 0; i < nn; i++) {
				uint32_t n = perm[i];
				struct cache_entry *e = &row[n];

				if (e->version != version[n]) {
					double s;
					uint32_t dev;
					int rr = kb_gpu_score(policy, &nodes[n],
							      task, wl, &s,
							      &dev);
					if (rr == -ENOSPC) {
						s = -INFINITY;
						dev = 0;
					} else if (rr < 0) {
						ret = rr;
						goto out;
					}
					e->version = version[n];
					e->score = s;
					e->devices = dev;
				}
				if (e->score > best) {
					best = e->score;
					chosen = n;
					devices = e->devices;
				}
			}
		}
		if (chosen >= 0) {
			ret = kb_gpu_node_take(&nodes[chosen], task, devices);
			if (ret < 0)
				goto out;
			version[chosen]++;
			allocated += kb_gpu_task_gpu_total(task);
		}
		arrived += kb_gpu_task_gpu_total(task);
		x = (int)floor(100.0 * (double)arrived / (double)t->capacity +
			       0.5);
		if (x >= 0 && x < NBUCKETS) {
			st->sum[x] += 100.0 * (double)allocated /
				      (double)t->capacity;
			st->cnt[x]++;
		}
	}
	ret = 0;
out:
	free(cache);
	free(feasible);
	free(perm);
	free(version);
	free(nodes);
	return ret;
}

/* ---- command line and output ------------------------------------------ */

struct options {
	const char *nodes;
	const char *pods;
	long seeds;
	bool json;
	const char *plot;
	enum kb_gpu_policy policies[MAX_POLICIES];
	int npolicies;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: openb_replay --nodes NODES.csv --pods PODS.csv "
		"[--seeds N] [--json]\n"
		"                    [--plot FILE.png] "
		"[--policies kube-batchd,random,bestfit[,fgd]]\n");
}

static int parse_policies(const char *arg, struct options *o)
{
	char buf[256];
	char *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	o->npolicies = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum kb_gpu_policy pol;

		if (kb_gpu_policy_from_name(tok, &pol) < 0) {
			fprintf(stderr, "openb_replay: unknown policy \"%s\"\n",
				tok);
			return -EINVAL;
		}
		for (int i = 0; i < o->npolicies; i++)
			if (o->policies[i] == pol)
				return -EINVAL;
		if (o->npolicies == MAX_POLICIES)
			return -EINVAL;
		o->policies[o->npolicies++] = pol;
	}
	return o->npolicies > 0 ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->seeds = 10;
	o->policies[0] = KB_GPU_POLICY_KUBE_BATCHD;
	o->policies[1] = KB_GPU_POLICY_RANDOM;
	o->policies[2] = KB_GPU_POLICY_BESTFIT;
	o->npolicies = 3;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;

		if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--nodes") == 0 && has_val) {
			o->nodes = argv[++i];
		} else if (strcmp(a, "--pods") == 0 && has_val) {
			o->pods = argv[++i];
		} else if (strcmp(a, "--plot") == 0 && has_val) {
			o->plot = argv[++i];
		} else if (strcmp(a, "--seeds") == 0 && has_val) {
			char *end;

			errno = 0;
			o->seeds = strtol(argv[++i], &end, 10);
			if (errno || *end || o->seeds < 1 ||
			    o->seeds > MAX_SEEDS) {
				fprintf(stderr,
					"openb_replay: --seeds wants 1..%d\n",
					MAX_SEEDS);
				return -EINVAL;
			}
		} else if (strcmp(a, "--policies") == 0 && has_val) {
			if (parse_policies(argv[++i], o) < 0) {
				fprintf(stderr,
					"openb_replay: bad --policies \"%s\"\n",
					argv[i]);
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "openb_replay: bad argument \"%s\"\n",
				a);
			return -EINVAL;
		}
	}
	if (!o->nodes || !o->pods) {
		fprintf(stderr, "openb_replay: --nodes and --pods are required\n");
		return -EINVAL;
	}
	return 0;
}

static void mean_sd(const double *v, long n, double *ret_mean, double *ret_sd)
{
	double m = 0.0, ss = 0.0;
	long k = 0;

	for (long i = 0; i < n; i++)
		if (!isnan(v[i])) {
			m += v[i];
			k++;
		}
	if (k == 0) {
		*ret_mean = NAN;
		*ret_sd = NAN;
		return;
	}
	m /= (double)k;
	for (long i = 0; i < n; i++)
		if (!isnan(v[i]))
			ss += (v[i] - m) * (v[i] - m);
	*ret_mean = m;
	*ret_sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void json_num(double v)
{
	if (isnan(v))
		fputs("null", stdout);
	else
		printf("%.4f", v);
}

/* Write the plot through a gnuplot process. Returns 0 or -EIO. */
static int write_plot(const struct options *o, const struct trace *t,
		      double curve[][NBUCKETS])
{
	FILE *g;
	int status;

	if (strchr(o->plot, '\'') || strchr(o->plot, '\n')) {
		fprintf(stderr, "openb_replay: unusable plot file name\n");
		return -EINVAL;
	}
	g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "openb_replay: cannot run gnuplot: %s\n",
			strerror(errno));
		return -EIO;
	}
	fprintf(g, "set terminal pngcairo size 900,600\n");
	fprintf(g, "set output '%s'\n", o->plot);
	fprintf(g, "set title 'openb %s: unallocated GPU vs arrived workload "
		   "(mean of %ld seeds)' noenhanced\n",
		base_name(o->pods), o->seeds);
	fprintf(g, "set xlabel 'arrived GPU workload (%% of %" PRId64
		   " GPUs)'\n",
		t->capacity / KB_GPU_MILLI);
	fprintf(g, "set ylabel 'unallocated GPU (%%)'\n");
	fprintf(g, "set xrange [0:130]\nset grid\nset key top right\n");
	for (int p = 0; p < o->npolicies; p++) {
		fprintf(g, "$d%d << EOD\n", p);
		for (int x = 0; x <= 130; x++)
			if (!isnan(curve[p][x]))
				fprintf(g, "%d %.4f\n", x, curve[p][x]);
		fprintf(g, "EOD\n");
	}
	fprintf(g, "plot ");
	for (int p = 0; p < o->npolicies; p++)
		fprintf(g, "%s$d%d with lines lw 2 title '%s'",
			p ? ", " : "", p, kb_gpu_policy_name(o->policies[p]));
	fprintf(g, "\n");
	status = pclose(g);
	if (status != 0) {
		fprintf(stderr, "openb_replay: gnuplot failed (status %d)\n",
			status);
		return -EIO;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct options o;
	struct trace t;
	char err[512];
	double (*at100)[MAX_SEEDS], (*at130)[MAX_SEEDS];
	double (*curve)[NBUCKETS];
	uint32_t (*curve_n)[NBUCKETS];
	double t0 = now_s();
	int64_t gpus = 0;
	int r, rc = 1;

	if (parse_args(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	memset(&t, 0, sizeof(t));
	kb_gpu_models_init(&t.models);
	r = openb_load_nodes(o.nodes, &t.models, err, sizeof(err), &t.nodes,
			     &t.nnodes);
	if (r == 0)
		r = openb_load_pods(o.pods, &t.models, err, sizeof(err),
				    &t.pods, &t.npods);
	if (r < 0) {
		fprintf(stderr, "openb_replay: %s\n", err);
		trace_release(&t);
		return 2;
	}
	for (size_t i = 0; i < t.nnodes; i++)
		gpus += t.nodes[i].gpu_count;
	t.capacity = gpus * KB_GPU_MILLI;
	for (size_t i = 0; i < t.npods; i++)
		t.trace_gpu += kb_gpu_task_gpu_total(&t.pods[i]);
	if (t.capacity == 0) {
		fprintf(stderr, "openb_replay: %s: no GPUs in the cluster\n",
			o.nodes);
		trace_release(&t);
		return 2;
	}
	if (t.trace_gpu == 0) {
		fprintf(stderr, "openb_replay: %s: no pod asks for a GPU\n",
			o.pods);
		trace_release(&t);
		return 2;
	}
	if (trace_classify(&t) < 0 ||
	    kb_gpu_workload_init_policy(KB_GPU_POLICY_FGD, t.pods, t.npods,
					&t.workload_fgd) < 0 ||
	    kb_gpu_workload_init_policy(KB_GPU_POLICY_KUBE_BATCHD, t.pods,
					t.npods, &t.workload_kbd) < 0 ||
	    kb_gpu_workload_set_capacity(&t.workload_kbd, t.nodes, t.nnodes) <
		    0) {
		fprintf(stderr, "openb_replay: out of memory\n");
		trace_release(&t);
		return 1;
	}

	at100 = calloc(MAX_POLICIES, sizeof(*at100));
	at130 = calloc(MAX_POLICIES, sizeof(*at130));
	curve = calloc(MAX_POLICIES, sizeof(*curve));
	curve_n = calloc(MAX_POLICIES, sizeof(*curve_n));
	if (!at100 || !at130 || !curve || !curve_n) {
		fprintf(stderr, "openb_replay: out of memory\n");
		goto out;
	}
	for (long s = 0; s < o.seeds; s++) {
		uint64_t seed = 42 + (uint64_t)s;
		size_t norder;
		uint32_t *order = make_order(&t, seed, &norder);

		if (!order) {
			fprintf(stderr, "openb_replay: out of memory\n");
			goto out;
		}
		for (int p = 0; p < o.npolicies; p++) {
			struct run_stats st;
			double ts = now_s();

			r = replay(&t, o.policies[p], seed, order, norder, &st);
			if (r < 0) {
				fprintf(stderr,
					"openb_replay: replay failed: %s\n",
					strerror(-r));
				free(order);
				goto out;
			}
			at100[p][s] = stats_unalloc(&st, 100);
			at130[p][s] = stats_unalloc(&st, 130);
			for (int x = 0; x < NBUCKETS; x++) {
				double v = stats_unalloc(&st, x);

				if (!isnan(v)) {
					curve[p][x] += v;
					curve_n[p][x]++;
				}
			}
			fprintf(stderr,
				"  %-11s seed %3" PRIu64 ": %6.2f %% @100, "
				"%6.2f %% @130  (%zu pods, %.2f s)\n",
				kb_gpu_policy_name(o.policies[p]), seed,
				at100[p][s], at130[p][s], norder,
				now_s() - ts);
		}
		free(order);
	}
	for (int p = 0; p < o.npolicies; p++)
		for (int x = 0; x < NBUCKETS; x++)
			curve[p][x] = curve_n[p][x] ?
					      curve[p][x] / curve_n[p][x] :
					      NAN;

	if (o.json) {
		printf("{");
		for (int p = 0; p < o.npolicies; p++) {
			double m1, s1, m3, s3;

			mean_sd(at100[p], o.seeds, &m1, &s1);
			mean_sd(at130[p], o.seeds, &m3, &s3);
			printf("%s\"%s\": {\"arrived100\": {\"mean\": ",
			       p ? ", " : "", kb_gpu_policy_name(o.policies[p]));
			json_num(m1);
			printf(", \"sd\": ");
			json_num(s1);
			printf("}, \"arrived130\": {\"mean\": ");
			json_num(m3);
			printf(", \"sd\": ");
			json_num(s3);
			printf("}}");
		}
		printf("}\n");
	} else {
		printf("openb replay: nodes %s (%zu nodes, %" PRId64
		       " GPUs), pods %s (%zu pods, %zu shapes),\n"
		       "  %ld seeds (42..%ld), tuned to %.0f %% of GPU "
		       "capacity\n",
		       base_name(o.nodes), t.nnodes, gpus, base_name(o.pods),
		       t.npods, t.nclasses, o.seeds, 41 + o.seeds,
		       TUNE_RATIO * 100);
		printf("%-12s  %-22s  %s\n", "policy",
		       "unalloc GPU % @ 100 %", "unalloc GPU % @ 130 %");
		for (int p = 0; p < o.npolicies; p++) {
			double m1, s1, m3, s3;

			mean_sd(at100[p], o.seeds, &m1, &s1);
			mean_sd(at130[p], o.seeds, &m3, &s3);
			printf("%-12s  %6.2f +- %-12.2f  %6.2f +- %.2f\n",
			       kb_gpu_policy_name(o.policies[p]), m1, s1, m3,
			       s3);
		}
	}
	fflush(stdout);
	if (o.plot && write_plot(&o, &t, curve) < 0) {
		rc = 1;
		goto out;
	}
	fprintf(stderr, "openb_replay: %s: %.1f s\n", base_name(o.pods),
		now_s() - t0);
	rc = 0;
out:
	free(at100);
	free(at130);
	free(curve);
	free(curve_n);
	trace_release(&t);
	return rc;
}

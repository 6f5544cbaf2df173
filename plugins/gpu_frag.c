/*
 * gpu_frag.c - GPU placement math (see gpu_frag.h for the contracts).
 */
#include "plugins/gpu_frag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- models ------------------------------------------------------------ */

void kb_gpu_models_init(struct kb_gpu_models *models)
{
	memset(models, 0, sizeof(*models));
}

int kb_gpu_models_intern(struct kb_gpu_models *models, const char *name,
			 size_t len, int *ret_id)
{
	if (len == 0 || len >= KB_GPU_MODEL_NAME_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < models->count; i++) {
		if (strlen(models->name[i]) == len &&
		    memcmp(models->name[i], name, len) == 0) {
			*ret_id = (int)i;
			return 0;
		}
	}
	if (models->count >= KB_GPU_MODEL_MAX)
		return -ENOSPC;
	memcpy(models->name[models->count], name, len);
	models->name[models->count][len] = '\0';
	*ret_id = (int)models->count++;
	return 0;
}

int kb_gpu_models_parse_spec(struct kb_gpu_models *models, const char *spec,
			     size_t len, uint64_t *ret_mask)
{
	uint64_t mask = 0;
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && spec[i] != '|')
			continue;
		if (i > start) {
			int id;
			int r = kb_gpu_models_intern(models, spec + start,
						     i - start, &id);
			if (r < 0)
				return r;
			mask |= UINT64_C(1) << id;
		}
		start = i + 1;
	}
	*ret_mask = mask;
	return 0;
}

/* ---- nodes and tasks ------------------------------------------------------ */

int kb_gpu_node_init(struct kb_gpu_node *node, int64_t cpu_milli,
		     int64_t memory_mib, int gpu_count, int model)
{
	if (cpu_milli < 0 || memory_mib < 0 || gpu_count < 0 ||
	    gpu_count > KB_GPU_NODE_MAX_GPUS || model < -1 ||
	    model >= KB_GPU_MODEL_MAX)
		return -EINVAL;
	memset(node, 0, sizeof(*node));
	node->cpu_milli_free = cpu_milli;
	node->memory_mib_free = memory_mib;
	node->gpu_count = gpu_count;
	node->model = model;
	for (int i = 0; i < gpu_count; i++)
		node->gpu_milli_free[i] = KB_GPU_MILLI;
	return 0;
}

int kb_gpu_task_init(struct kb_gpu_task *task, int64_t cpu_milli,
		     int64_t memory_mib, int num_gpu, int gpu_milli,
		     uint64_t models)
{
	if (cpu_milli < 0 || memory_mib < 0 || num_gpu < 0 ||
	    num_gpu > KB_GPU_NODE_MAX_GPUS)
		return -EINVAL;
	if (num_gpu == 1 && (gpu_milli < 1 || gpu_milli > KB_GPU_MILLI))
		return -EINVAL;
	task->cpu_milli = cpu_milli;
	task->memory_mib = memory_mib;
	task->num_gpu = num_gpu;
	task->gpu_milli = num_gpu == 0 ? 0 :
			  num_gpu == 1 ? gpu_milli : KB_GPU_MILLI;
	task->models = num_gpu == 0 ? 0 : models;
	return 0;
}

int64_t kb_gpu_task_gpu_total(const struct kb_gpu_task *task)
{
	return (int64_t)task->num_gpu * task->gpu_milli;
}

bool kb_gpu_task_is_sharing(const struct kb_gpu_task *task)
{
	return task->num_gpu == 1 && task->gpu_milli < KB_GPU_MILLI;
}

int64_t kb_gpu_node_gpu_free(const struct kb_gpu_node *node)
{
	int64_t sum = 0;

	for (int i = 0; i < node->gpu_count; i++)
		sum += node->gpu_milli_free[i];
	return sum;
}

bool kb_gpu_model_ok(const struct kb_gpu_node *node,
		     const struct kb_gpu_task *task)
{
	if (task->num_gpu == 0 || task->models == 0)
		return true;
	if (node->model < 0)
		return false;
	return (task->models >> node->model) & 1u;
}

/* Number of GPUs of the node with at least milli free. */
static int gpus_with_free(const struct kb_gpu_node *node, int milli)
{
	int n = 0;

	for (int i = 0; i < node->gpu_count; i++)
		n += node->gpu_milli_free[i] >= milli;
	return n;
}

bool kb_gpu_fits(const struct kb_gpu_node *node, const struct kb_gpu_task *task)
{
	if (node->cpu_milli_free < task->cpu_milli ||
	    node->memory_mib_free < task->memory_mib)
		return false;
	if (task->num_gpu == 0)
		return true;
	if (!kb_gpu_model_ok(node, task))
		return false;
	return gpus_with_free(node, task->gpu_milli) >= task->num_gpu;
}

static int popcount32(uint32_t x)
{
	return __builtin_popcount(x);
}

int kb_gpu_devices_choose(const struct kb_gpu_node *node,
			  const struct kb_gpu_task *task,
			  enum kb_gpu_devsel sel, uint64_t rnd,
			  uint32_t *ret_devices)
{
	int fit[KB_GPU_NODE_MAX_GPUS];
	int nfit = 0;
	uint32_t devices = 0;

	if (sel != KB_GPU_DEVSEL_FIRST && sel != KB_GPU_DEVSEL_TIGHTEST &&
	    sel != KB_GPU_DEVSEL_RANDOM)
		return -EINVAL;
	if (!kb_gpu_fits(node, task))
		return -ENOSPC;
	if (task->num_gpu == 0) {
		*ret_devices = 0;
		return 0;
	}
	for (int i = 0; i < node->gpu_count; i++)
		if (node->gpu_milli_free[i] >= task->gpu_milli)
			fit[nfit++] = i;

	if (sel == KB_GPU_DEVSEL_RANDOM) {
		/* Partial Fisher-Yates; each draw takes the high half of the
		 * word times the range, then remixes the word (splitmix64). */
		for (int k = 0; k < task->num_gpu; k++) {
			uint64_t range = (uint64_t)(nfit - k);
			int j = k + (int)(((rnd >> 32) * range) >> 32);
			int t = fit[k];

			rnd += UINT64_C(0x9e3779b97f4a7c15);
			rnd = (rnd ^ (rnd >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
			rnd = (rnd ^ (rnd >> 27)) * UINT64_C(0x94d049bb133111eb);
			rnd ^= rnd >> 31;
			fit[k] = fit[j];
			fit[j] = t;
			devices |= UINT32_C(1) << fit[k];
		}
	} else if (sel == KB_GPU_DEVSEL_TIGHTEST && task->num_gpu == 1) {
		int best = fit[0];

		for (int k = 1; k < nfit; k++)
			if (node->gpu_milli_free[fit[k]] <
			    node->gpu_milli_free[best])
				best = fit[k];
		devices = UINT32_C(1) << best;
	} else {
		/* FIRST, or TIGHTEST for whole GPUs: every fitting GPU is
		 * entirely free, so the lowest indices are as tight as any. */
		for (int k = 0; k < task->num_gpu; k++)
			devices |= UINT32_C(1) << fit[k];
	}
	*ret_devices = devices;
	return 0;
}

bool kb_gpu_devices_valid(const struct kb_gpu_node *node,
			  const struct kb_gpu_task *task, uint32_t devices)
{
	if (!kb_gpu_fits(node, task))
		return false;
	if (popcount32(devices) != task->num_gpu)
		return false;
	if (node->gpu_count < 32 && (devices >> node->gpu_count) != 0)
		return false;
	for (int i = 0; i < node->gpu_count; i++)
		if (((devices >> i) & 1u) &&
		    node->gpu_milli_free[i] < task->gpu_milli)
			return false;
	return true;
}

int kb_gpu_node_take(struct kb_gpu_node *node, const struct kb_gpu_task *task,
		     uint32_t devices)
{
	if (!kb_gpu_devices_valid(node, task, devices))
		return -EINVAL;
	node->cpu_milli_free -= task->cpu_milli;
	node->memory_mib_free -= task->memory_mib;
	for (int i = 0; i < node->gpu_count; i++)
		if ((devices >> i) & 1u)
			node->gpu_milli_free[i] -= task->gpu_milli;
	return 0;
}

/* ---- workload distribution --------------------------------------------- */

struct shape_count {
	struct kb_gpu_task task;
	size_t count;
};

static int task_key_cmp(const struct kb_gpu_task *a,
			const struct kb_gpu_task *b)
{
	if (a->cpu_milli != b->cpu_milli)
		return a->cpu_milli < b->cpu_milli ? -1 : 1;
	if (a->memory_mib != b->memory_mib)
		return a->memory_mib < b->memory_mib ? -1 : 1;
	if (a->num_gpu != b->num_gpu)
		return a->num_gpu < b->num_gpu ? -1 : 1;
	if (a->gpu_milli != b->gpu_milli)
		return a->gpu_milli < b->gpu_milli ? -1 : 1;
	if (a->models != b->models)
		return a->models < b->models ? -1 : 1;
	return 0;
}

static int count_desc_qsort(const void *pa, const void *pb)
{
	const struct shape_count *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return task_key_cmp(&a->task, &b->task);
}

/* A hash of the fields task_key_cmp compares (splitmix64's finaliser over
 * their mix). */
static uint64_t task_key_hash(const struct kb_gpu_task *t)
{
	uint64_t h = (uint64_t)t->cpu_milli * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)t->memory_mib + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= ((uint64_t)(uint32_t)t->num_gpu << 32 | (uint32_t)t->gpu_milli) + (h << 6) + (h >> 2);
	h ^= t->models + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

int kb_gpu_workload_init(const struct kb_gpu_task *tasks, size_t n,
			 double coverage, unsigned flags,
			 struct kb_gpu_workload *ret)
{
	uint32_t *table = NULL;
	struct shape_count *groups = NULL;
	struct kb_gpu_shape *shapes = NULL;
	size_t ngroups = 0, kept = 0, covered = 0, cap = 16;
	int r = -ENOMEM;

	if (n == 0 || n > UINT32_MAX / 2 || !(coverage > 0.0 && coverage <= 1.0))
		return -EINVAL;
	/* Equal shapes counted through an open-addressing table of group
	 * indices (at most half full): O(n), where sorting every task was
	 * O(n log n) in every session that scores a GPU pod. The groups are
	 * then ordered by count_desc_qsort, a total order, so the result does
	 * not depend on the order they were met in. */
	while (cap < 2 * n)
		cap *= 2;
	table = malloc(cap * sizeof(*table));
	groups = malloc(n * sizeof(*groups));
	if (!table || !groups)
		goto out_free_tmp;
	memset(table, 0xff, cap * sizeof(*table));
	for (size_t i = 0; i < n; i++) {
		struct kb_gpu_task key = tasks[i];
		if (!(flags & KB_GPU_WORKLOAD_MEMORY))
			key.memory_mib = 0;
		size_t h = (size_t)task_key_hash(&key) & (cap - 1);
		while (table[h] != UINT32_MAX &&
		       task_key_cmp(&groups[table[h]].task, &key) != 0)
			h = (h + 1) & (cap - 1);
		if (table[h] != UINT32_MAX) {
			groups[table[h]].count++;
			continue;
		}
		table[h] = (uint32_t)ngroups;
		groups[ngroups].task = key;
		groups[ngroups].count = 1;
		ngroups++;
	}
	qsort(groups, ngroups, sizeof(*groups), count_desc_qsort);
	/* FGD: keep the most common shapes while the covered share is below
	 * the threshold (so the shape that crosses it is kept). */
	while (kept < ngroups && (double)covered < coverage * (double)n)
		covered += groups[kept++].count;

	shapes = calloc(kept, sizeof(*shapes));
	if (!shapes)
		goto out_free_tmp;
	for (size_t i = 0; i < kept; i++) {
		shapes[i].task = groups[i].task;
		shapes[i].weight = (double)groups[i].count / (double)covered;
	}
	ret->strand_weight = flags & KB_GPU_WORKLOAD_STRAND ? 1.0 : 0.0;
	memset(ret->pressure, 0, sizeof(ret->pressure));
	ret->models_present = 0;
	ret->shapes = shapes;
	ret->count = kept;
	ret->flags = flags;
	r = 0;
out_free_tmp:
	free(groups);
	free(table);
	return r;
}

int kb_gpu_workload_init_policy(enum kb_gpu_policy policy,
				const struct kb_gpu_task *tasks, size_t n,
				struct kb_gpu_workload *ret)
{
	switch (policy) {
	case KB_GPU_POLICY_KUBE_BATCHD:
		return kb_gpu_workload_init(tasks, n, 1.0,
					    KB_GPU_WORKLOAD_MEMORY |
						    KB_GPU_WORKLOAD_STRAND,
					    ret);
	case KB_GPU_POLICY_FGD:
		return kb_gpu_workload_init(tasks, n, 0.95, 0, ret);
	case KB_GPU_POLICY_BESTFIT:
	case KB_GPU_POLICY_RANDOM:
		break;
	}
	return -EINVAL;
}

int kb_gpu_workload_set_capacity(struct kb_gpu_workload *workload,
				 const struct kb_gpu_node *nodes, size_t n)
{
	double cap[KB_GPU_MODEL_MAX] = { 0 }, need[KB_GPU_MODEL_MAX] = { 0 };
	double total_cap = 0.0, total_gpu = 0.0;
	uint64_t present = 0;

	for (size_t i = 0; i < n; i++) {
		if (nodes[i].model < -1 || nodes[i].model >= KB_GPU_MODEL_MAX)
			return -EINVAL;
		if (nodes[i].model < 0 || nodes[i].gpu_count <= 0)
			continue;
		cap[nodes[i].model] += (double)nodes[i].gpu_count * KB_GPU_MILLI;
		total_cap += (double)nodes[i].gpu_count * KB_GPU_MILLI;
		present |= UINT64_C(1) << nodes[i].model;
	}
	for (size_t s = 0; s < workload->count; s++)
		total_gpu += workload->shapes[s].weight *
			     (double)kb_gpu_task_gpu_total(&workload->shapes[s].task);
	for (size_t s = 0; s < workload->count && total_gpu > 0; s++) {
		const struct kb_gpu_task *t = &workload->shapes[s].task;
		uint64_t named = t->models & present;
		double named_cap = 0.0, demand;

		if (t->num_gpu == 0 || named == 0)
			continue;
		for (int m = 0; m < KB_GPU_MODEL_MAX; m++)
			if ((named >> m) & 1u)
				named_cap += cap[m];
		demand = total_cap * workload->shapes[s].weight *
			 (double)kb_gpu_task_gpu_total(t) / total_gpu;
		for (int m = 0; m < KB_GPU_MODEL_MAX; m++)
			if ((named >> m) & 1u)
				need[m] += demand * cap[m] / named_cap;
	}
	for (int m = 0; m < KB_GPU_MODEL_MAX; m++)
		workload->pressure[m] =
			cap[m] > 0 ? fmin(1.0, need[m] / cap[m]) : 0.0;
	workload->models_present = present;
	return 0;
}

/* Model pressure cost per milli-GPU of placing the task on the node (design
 * note, 4): the node model's pressure minus the least pressure among the
 * models present that the task accepts. 0 for a task with no choice. */
static double pressure_cost(const struct kb_gpu_node *node,
			    const struct kb_gpu_task *task,
			    const struct kb_gpu_workload *workload)
{
	uint64_t ok = task->models ? task->models & workload->models_present :
				     workload->models_present;
	double least = INFINITY;

	if (task->num_gpu == 0 || node->model < 0 || ok == 0)
		return 0.0;
	for (int m = 0; m < KB_GPU_MODEL_MAX; m++)
		if (((ok >> m) & 1u) && workload->pressure[m] < least)
			least = workload->pressure[m];
	return workload->pressure[node->model] - least;
}

void kb_gpu_workload_release(struct kb_gpu_workload *workload)
{
	free(workload->shapes);
	workload->shapes = NULL;
	workload->count = 0;
}

/* ---- fragmentation ------------------------------------------------------- */

/* Idle GPU that the node's free CPU (and with KB_GPU_WORKLOAD_MEMORY, free
 * memory) cannot feed, averaged over the GPU shapes that accept the node's
 * model (design note, 1): a shape asking c milli-CPU for g milli-GPU can
 * feed free CPU * g / c of the idle GPU. Asking per shape rather than at
 * the mean CPU per GPU counts the CPU that CPU-heavy shapes will need: at
 * the mean, the few spare cores of a G2 node (12 per GPU) look free, and
 * CPU-only tasks take them instead of the ample CPU of T4 nodes (52 per
 * GPU). O(shapes). */
static double stranded_gpu(const struct kb_gpu_node *node, int64_t idle,
			   const struct kb_gpu_workload *workload)
{
	bool memory = workload->flags & KB_GPU_WORKLOAD_MEMORY;
	double sum = 0.0, weight = 0.0;

	for (size_t s = 0; s < workload->count; s++) {
		const struct kb_gpu_task *t = &workload->shapes[s].task;
		double g = (double)kb_gpu_task_gpu_total(t);
		double fed = INFINITY;

		if (g <= 0 || !kb_gpu_model_ok(node, t))
			continue;
		weight += workload->shapes[s].weight;
		if (t->cpu_milli > 0)
			fed = (double)node->cpu_milli_free * g /
			      (double)t->cpu_milli;
		if (memory && t->memory_mib > 0)
			fed = fmin(fed, (double)node->memory_mib_free * g /
						(double)t->memory_mib);
		if (fed < (double)idle)
			sum += workload->shapes[s].weight * ((double)idle - fed);
	}
	return weight > 0 ? sum / weight : 0.0;
}

double kb_gpu_node_frag(const struct kb_gpu_node *node,
			const struct kb_gpu_workload *workload)
{
	int64_t total = kb_gpu_node_gpu_free(node);
	bool memory = workload->flags & KB_GPU_WORKLOAD_MEMORY;
	double frag = 0.0;

	if (total == 0)
		return 0.0;
	if (workload->strand_weight > 0)
		frag += workload->strand_weight *
			stranded_gpu(node, total, workload);
	for (size_t s = 0; s < workload->count; s++) {
		const struct kb_gpu_task *t = &workload->shapes[s].task;
		double w = workload->shapes[s].weight;
		int64_t below = 0;
		int usable = 0;

		if (t->num_gpu == 0 || node->cpu_milli_free < t->cpu_milli ||
		    (memory && node->memory_mib_free < t->memory_mib) ||
		    !kb_gpu_model_ok(node, t)) {
			frag += w * (double)total;
			continue;
		}
		for (int i = 0; i < node->gpu_count; i++) {
			if (node->gpu_milli_free[i] >= t->gpu_milli)
				usable++;
			else
				below += node->gpu_milli_free[i];
		}
		frag += w * (double)(usable >= t->num_gpu ? below : total);
	}
	return frag;
}

int kb_gpu_frag_delta(const struct kb_gpu_node *node,
		      const struct kb_gpu_task *task, uint32_t devices,
		      const struct kb_gpu_workload *workload,
		      double *ret_delta)
{
	struct kb_gpu_node after = *node;

	if (kb_gpu_node_take(&after, task, devices) < 0)
		return -EINVAL;
	*ret_delta = kb_gpu_node_frag(&after, workload) -
		     kb_gpu_node_frag(node, workload);
	return 0;
}

/* ---- scores ------------------------------------------------------------ */

static double sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/* FGD's score scale: int(100 * sigmoid(-delta / 1000)), delta in milli-GPU.
 * The integer buckets matter: placements whose fragmentation deltas differ
 * by less than a bucket (about 40 milli-GPU near 0) tie, and the caller's
 * seeded node order then decides; this is what reproduces the published
 * FGD figures (exact deltas with the same tie order do clearly worse). */
static double frag_score(double delta)
{
	return floor(sigmoid(-delta / 1000.0) * 100.0);
}

/* Best-fit score of the paper: 128 cores and 8 GPUs are its normalisers. */
static double bestfit_score(const struct kb_gpu_node *node,
			    const struct kb_gpu_task *task)
{
	double cpu_left = (double)(node->cpu_milli_free - task->cpu_milli);
	double gpu_left = (double)(kb_gpu_node_gpu_free(node) -
				   kb_gpu_task_gpu_total(task));

	return 1.0 - 0.5 * (cpu_left / 128000.0 + gpu_left / 8000.0);
}

/* Fragmentation-gradient score (FGD and kube-batchd; the measure is the
 * workload's). A sharing task tries each GPU that fits, once per distinct
 * free amount (equal free amounts give equal scores), and keeps the lowest
 * index with the best score, as FGD does; a whole-GPU task takes the lowest
 * entirely free GPUs (all equivalent). The task must fit. */
static int score_frag(const struct kb_gpu_node *node,
		      const struct kb_gpu_task *task,
		      const struct kb_gpu_workload *workload, double *ret_score,
		      uint32_t *ret_devices)
{
	/* delta = after - before + g * pressure cost: folded into before */
	double before = kb_gpu_node_frag(node, workload) -
			(double)kb_gpu_task_gpu_total(task) *
				pressure_cost(node, task, workload);
	double best = 0.0;
	uint32_t best_dev = 0;
	bool found = false;

	if (kb_gpu_task_is_sharing(task)) {
		int32_t tried[KB_GPU_NODE_MAX_GPUS];
		int ntried = 0;

		for (int i = 0; i < node->gpu_count; i++) {
			int32_t f = node->gpu_milli_free[i];
			struct kb_gpu_node after = *node;
			bool seen = false;
			double s;

			if (f < task->gpu_milli)
				continue;
			for (int k = 0; k < ntried; k++)
				seen |= tried[k] == f;
			if (seen)
				continue;
			tried[ntried++] = f;
			after.cpu_milli_free -= task->cpu_milli;
			after.memory_mib_free -= task->memory_mib;
			after.gpu_milli_free[i] -= task->gpu_milli;
			s = frag_score(kb_gpu_node_frag(&after, workload) -
				       before);
			if (!found || s > best) {
				best = s;
				best_dev = UINT32_C(1) << i;
				found = true;
			}
		}
	} else {
		struct kb_gpu_node after = *node;
		int r = kb_gpu_devices_choose(node, task, KB_GPU_DEVSEL_FIRST,
					      0, &best_dev);
		if (r < 0)
			return r;
		kb_gpu_node_take(&after, task, best_dev);
		best = frag_score(kb_gpu_node_frag(&after, workload) - before);
		found = true;
	}
	if (!found)
		return -ENOSPC;
	*ret_score = best;
	*ret_devices = best_dev;
	return 0;
}

int kb_gpu_score(enum kb_gpu_policy policy, const struct kb_gpu_node *node,
		 const struct kb_gpu_task *task,
		 const struct kb_gpu_workload *workload, double *ret_score,
		 uint32_t *ret_devices)
{
	uint32_t devices;
	int r;

	switch (policy) {
	case KB_GPU_POLICY_KUBE_BATCHD:
	case KB_GPU_POLICY_FGD:
		if (!workload)
			return -EINVAL;
		if (!kb_gpu_fits(node, task))
			return -ENOSPC;
		return score_frag(node, task, workload, ret_score,
				  ret_devices);
	case KB_GPU_POLICY_BESTFIT:
		r = kb_gpu_devices_choose(node, task, KB_GPU_DEVSEL_TIGHTEST,
					  0, &devices);
		if (r < 0)
			return r;
		*ret_score = bestfit_score(node, task);
		*ret_devices = devices;
		return 0;
	case KB_GPU_POLICY_RANDOM:
		r = kb_gpu_devices_choose(node, task, KB_GPU_DEVSEL_FIRST, 0,
					  &devices);
		if (r < 0)
			return r;
		*ret_score = 0.0;
		*ret_devices = devices;
		return 0;
	}
	return -EINVAL;
}

static const char *const policy_names[] = {
	[KB_GPU_POLICY_KUBE_BATCHD] = "kube-batchd",
	[KB_GPU_POLICY_FGD] = "fgd",
	[KB_GPU_POLICY_BESTFIT] = "bestfit",
	[KB_GPU_POLICY_RANDOM] = "random",
};

const char *kb_gpu_policy_name(enum kb_gpu_policy policy)
{
	if ((unsigned)policy >= sizeof(policy_names) / sizeof(policy_names[0]))
		return NULL;
	return policy_names[policy];
}

int kb_gpu_policy_from_name(const char *name, enum kb_gpu_policy *ret_policy)
{
	for (unsigned i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]);
	     i++) {
		if (strcmp(policy_names[i], name) == 0) {
			*ret_policy = (enum kb_gpu_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

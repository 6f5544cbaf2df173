/* gpu - GPU devices, models, sharing, topology, and placement against
 * fragmentation.
 *
 * Devices: every node with nvidia.com/gpu has that many devices; each task
 * that asks for GPUs holds a set of them (kb_task.gpu_mask: bit i = GPU i),
 * whole GPUs, or a share of one GPU for a pod with the annotation
 * kube-batchd.io/gpu-milli (1..999 milli-GPU, never split across devices,
 * never overfilling a device). At session open the plugin rebuilds every
 * node's per-device use from the tasks on it (a task bound without a device
 * set is given the lowest free devices, in the plugin's own books). When a
 * task is placed (on_allocate) the plugin chooses its devices and hands
 * them to the framework (kb_session_set_task_devices), which records them
 * in the task's gpu_mask; the simulator reports them as "gpus", cluster
 * mode writes them to the pod's kube-batchd.io/gpu-devices annotation. The
 * plugin never writes the snapshot itself.
 *
 * Topology inside a node: the node annotation kube-batchd.io/gpu-topology
 * ("0,1,2,3;4,5,6,7") groups devices (NVLink islands, PCIe switches or NUMA
 * nodes); a task's whole GPUs come from one group when one group can hold
 * them (the fullest such group, to keep whole groups free).
 *
 * Nodes whose device plugin shares GPUs (GPU Feature Discovery's labels
 * nvidia.com/gpu.replicas R > 1 and nvidia.com/gpu.sharing-strategy
 * time-slicing or mps; kb_node.gpu_replicas): each of the node's ngpus
 * physical GPUs is advertised as R nvidia.com/gpu, and a pod's
 * nvidia.com/gpu: k is k replicas, which the device plugin spreads over the
 * GPUs itself (its GetPreferredAllocation; the kubelet asks it, not us). So
 * on such a node the plugin keeps no device books and chooses no devices:
 * the framework's allocatable check (free replicas) is the whole fit, the
 * node order packs replicas by the physical GPUs left free
 * (free replicas / R), MPS refuses more than one replica per pod (the
 * device plugin fails such requests), and a kube-batchd.io/gpu-milli share
 * that asks no nvidia.com/gpu is refused: nothing on that node would give
 * it a GPU.
 *
 * Devices shown (the simulator's "gpus", cluster mode's annotation
 * kube-batchd.io/gpu-devices) are kube-batchd's own books. With NVIDIA's
 * device plugin the kubelet picks a pod's devices, not the scheduler; the
 * books keep per-device shares and topology groups consistent for node
 * choice, nothing on the node reads them.
 *
 * Pods that ask for aliyun.com/gpu-mem (Alibaba's GPU sharing, which Arena's
 * --gpumemory uses) are handed to plugins/gpushare.h: per-device memory
 * books, fit, the extender's device choice; the node order packs them onto
 * the fullest device that holds them.
 *
 * Pods that ask for volcano's vGPU (HAMi: volcano.sh/vgpu-number, -memory,
 * -cores) are handed to plugins/vgpu.h: per-GPU books from the node's
 * registration, volcano's fit and GPU choice; the writer puts the choice
 * where its device plugin reads it.
 *
 * Models: a node's model is its nvidia.com/gpu.product label; a pod accepts
 * the models in its annotation kube-batchd.io/gpu-models ("A100|H100", exact
 * match of one name) - nodeSelector and node affinity on the label work
 * through the predicates plugin as well.
 *
 * Node order for GPU tasks, `gpu.policy` argument:
 *   "fragmentation" (default): kube-batchd's fragmentation-gradient score
 *       (plugins/gpu_frag.h), with the workload's shape distribution learned
 *       from the GPU pods the session sees (pending and running) and its
 *       model pressure from the cluster's GPUs per model;
 *   "binpack": the tightest node (the paper's best-fit);
 *   "spread": the emptiest node.
 * Plus, for members of one job: a bonus per member already on the node
 * (`gpu.gang-pack.weight`, default 5: a gang lands on as few nodes as
 * possible, e.g. 8-GPU members on whole 8-GPU nodes) and a bonus for nodes
 * whose topology label (`gpu.topology-key`, default
 * topology.kubernetes.io/zone) matches the nodes the job already uses
 * (`gpu.topology.weight`, default 3). The policy score is scaled by
 * `gpu.weight` (default 10). And for a task of several whole GPUs, a bonus
 * for a node with a topology group (kube-batchd.io/gpu-topology) that can
 * hold them all (`gpu.island.weight`, default 10, one GPU's worth of the
 * policy score): NVIDIA's device plugin prefers devices of one NVLink
 * island (its GetPreferredAllocation), but can only use an island the
 * node has free, so the choice that matters is the node's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "cache/objects.h"
#include "plugins/gpu_frag.h"
#include "plugins/gpushare.h"
#include "plugins/vgpu.h"
#include "plugins/plugins.h"

/* Memory quantities are in milli-bytes; the placement math takes MiB. */
#define MILLI_PER_MIB ((int64_t)1000 * 1024 * 1024)

enum gpu_policy { POLICY_FRAGMENTATION, POLICY_BINPACK, POLICY_SPREAD };

/* What a task asks of GPUs (ASK_UNKNOWN until first needed in a session). */
enum gpu_ask { ASK_UNKNOWN = 0, ASK_NONE, ASK_GPUS, ASK_TOO_MANY };

typedef struct gpu_state {
	int gpu_res;
	enum gpu_policy policy;
	double weight, pack_weight, topo_weight, island_weight;
	const char *topo_key;
	kb_gpushare *share; /* Alibaba's GPU sharing (gpushare.h), or NULL */
	kb_vgpu *vgpu;      /* volcano's vGPU (vgpu.h), or NULL */
	struct kb_gpu_models models;
	/* The expected workload, learned from the session's GPU pods the first
	 * time a score needs it (workload_known). */
	struct kb_gpu_workload workload;
	bool have_workload, workload_known;
	struct kb_gpu_node *nodes; /* per snapshot node, once devices_known */
	uint32_t *held;            /* per task: the devices accounted to it, once devices_known */
	bool devices_known;
	/* Per job: the topology label value of its first placed member, worked
	 * out the first time it is needed (job_topo_known). */
	const char **job_topo;
	bool *job_topo_known;
	/* Per task (index into the snapshot's tasks): its GPU request. */
	const kb_task *tasks;
	struct kb_gpu_task *req;
	uint8_t *ask; /* enum gpu_ask */
} gpu_state;


/* The task's GPU request in gpu_frag's terms, worked out from the pod. */
/* The models task t accepts as a mask of st->models ids: 0 for any. When
 * the cluster and the pods name more than KB_GPU_MODEL_MAX models in all,
 * every bit: each model then passes (the model is not checked). */
static uint64_t task_models(gpu_state *st, const kb_task *t)
{
	uint64_t models = 0;
	if (t->spec && t->spec->gpu_models &&
	    kb_gpu_models_parse_spec(&st->models, t->spec->gpu_models, strlen(t->spec->gpu_models),
				     &models) < 0)
		models = ~0ull; /* too many model names to tell apart */
	return models;
}

/* Node n's model id in st->models: its product label's, else "unknown"'s;
 * -1 when even that has no room. */
static int node_model(gpu_state *st, const kb_node *n)
{
	int model = -1;
	if (!n->gpu_model || kb_gpu_models_intern(&st->models, n->gpu_model, strlen(n->gpu_model), &model) < 0)
		kb_gpu_models_intern(&st->models, "unknown", 7, &model);
	return model;
}

static enum gpu_ask ask_of(gpu_state *st, const kb_task *t, struct kb_gpu_task *ret)
{
	if (st->gpu_res < 0 || t->req.q[st->gpu_res] <= 0)
		return ASK_NONE;
	int64_t milli = t->req.q[st->gpu_res];
	int num, share;
	if (t->spec && t->spec->gpu_milli > 0) {
		num = 1;
		share = t->spec->gpu_milli;
	} else {
		num = (int)((milli + KB_GPU_MILLI - 1) / KB_GPU_MILLI);
		share = KB_GPU_MILLI;
	}
	uint64_t models = task_models(st, t);
	int64_t mem = t->req.q[KB_RES_MEMORY] / MILLI_PER_MIB;
	if (num > KB_GPU_NODE_MAX_GPUS || kb_gpu_task_init(ret, t->req.q[KB_RES_CPU], mem, num, share, models) < 0)
		return ASK_TOO_MANY; /* more devices than any node's model holds */
	return ASK_GPUS;
}

/* The task's GPU request, computed once per session (tasks do not change
 * their requests within one). ASK_NONE for a pod that asks no GPU. With
 * with_cpu_mem false, cpu and memory are left out (the device checks alone). */
static enum gpu_ask gpu_task_of(gpu_state *st, const kb_task *t, bool with_cpu_mem,
				struct kb_gpu_task *ret)
{
	if (st->gpu_res < 0 || t->req.q[st->gpu_res] <= 0)
		return ASK_NONE;
	size_t i = (size_t)(t - st->tasks);
	if (st->ask[i] == ASK_UNKNOWN)
		st->ask[i] = (uint8_t)ask_of(st, t, &st->req[i]);
	if (st->ask[i] == ASK_GPUS) {
		*ret = st->req[i];
		if (!with_cpu_mem)
			ret->cpu_milli = ret->memory_mib = 0;
	}
	return (enum gpu_ask)st->ask[i];
}

/* A task's use of each device in mask. */
static void take_devices(struct kb_gpu_node *gn, const kb_task *t, uint32_t mask, int sign)
{
	int share = (t->spec && t->spec->gpu_milli > 0) ? t->spec->gpu_milli : KB_GPU_MILLI;
	for (int g = 0; g < gn->gpu_count; g++)
		if (mask & (1u << g))
			gn->gpu_milli_free[g] -= sign * share;
}

/* Whether the node's device plugin shares its GPUs (a nvidia.com/gpu is a
 * replica, see the top). */
static bool replicated(const kb_node *n)
{
	return n->gpu_replicas > 1 && n->ngpus > 0;
}

static void node_view(gpu_state *st, const kb_node *n, struct kb_gpu_node *gn)
{
	int model = n->ngpus > 0 ? node_model(st, n) : -1;
	int count = n->ngpus < KB_GPU_NODE_MAX_GPUS ? n->ngpus : KB_GPU_NODE_MAX_GPUS;
	if (replicated(n))
		count = 0; /* the device plugin's books, not ours */
	kb_res future;
	kb_node_future_idle(n, &future);
	int64_t cpu = future.q[KB_RES_CPU] > 0 ? future.q[KB_RES_CPU] : 0;
	int64_t mem = future.q[KB_RES_MEMORY] > 0 ? future.q[KB_RES_MEMORY] / MILLI_PER_MIB : 0;
	kb_gpu_node_init(gn, cpu, mem, count, model);
}

/* The expected workload (the shapes of the GPU pods this session sees), or
 * NULL when there is none. Learned on first use: O(tasks) once per session,
 * and never in a session that scores no GPU pod. */
static void devices_of(gpu_state *st, const kb_snapshot *s);

static const struct kb_gpu_workload *workload_of(gpu_state *st, const kb_snapshot *s)
{
	if (st->workload_known)
		return st->have_workload ? &st->workload : NULL;
	st->workload_known = true;
	struct kb_gpu_task *sample = malloc((s->ntasks ? s->ntasks : 1) * sizeof(*sample));
	if (!sample)
		return NULL; /* no memory: score without it, as with no GPU pods */
	/* The tasks that ask for GPUs, as the snapshot lists them, else all
	 * (gpu_task_of tells). */
	uint32_t n = 0, nt = s->gpu_tasks ? s->ngpu_tasks : s->ntasks;
	for (uint32_t k = 0; k < nt; k++) {
		uint32_t ti = s->gpu_tasks ? s->gpu_tasks[k] : k;
		if (!s->tasks[ti].foreign && gpu_task_of(st, &s->tasks[ti], true, &sample[n]) == ASK_GPUS)
			n++;
	}
	if (n > 0 && kb_gpu_workload_init_policy(KB_GPU_POLICY_KUBE_BATCHD, sample, n, &st->workload) == 0) {
		st->have_workload = true;
		/* Model pressure from the cluster's GPUs per model (node views:
		 * devices_of). On failure the workload keeps no pressure. */
		devices_of(st, s);
		(void)kb_gpu_workload_set_capacity(&st->workload, st->nodes, s->nnodes);
	}
	free(sample);
	return st->have_workload ? &st->workload : NULL;
}

/* Job j's topology domain: the label of the node of its first member (by
 * creation, then name) that held a node when the session opened, or of its first
 * member placed in this session; NULL when none. O(tasks of j) once. */
static const char *job_topo_of(gpu_state *st, const kb_snapshot *s, int32_t j)
{
	if (!st->job_topo_known[j]) {
		st->job_topo_known[j] = true;
		const kb_job *job = &s->jobs[j];
		for (uint32_t k = 0; k < job->ntasks && !st->job_topo[j]; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[job->first_task + k]];
			/* Allocated and Pipelined tasks were placed by this session. */
			if (t->node >= 0 && kb_task_status_on_node(t->status) &&
			    t->status != KB_TASK_ALLOCATED && t->status != KB_TASK_PIPELINED)
				st->job_topo[j] = kb_labels_get(&s->nodes[t->node].labels, st->topo_key);
		}
	}
	return st->job_topo[j];
}

/* Every node's devices as the session found them, worked out the first
 * time a pod that asks for GPUs is considered (never, in a session without
 * one). Tasks this session placed (Allocated, Pipelined) are left out: their
 * on_allocate accounts for them. A task placed without (valid) devices is
 * given the lowest free ones, as kube-batchd would have chosen (in st->held;
 * the snapshot keeps what the pod says).
 * O(nodes + tasks on GPU nodes), once. */
static void devices_of(gpu_state *st, const kb_snapshot *s)
{
	if (st->devices_known)
		return;
	st->devices_known = true;
	for (uint32_t ni = 0; ni < s->nnodes; ni++) {
		const kb_node *n = &s->nodes[ni];
		struct kb_gpu_node *gn = &st->nodes[ni];
		node_view(st, n, gn);
		if (gn->gpu_count == 0)
			continue; /* no devices to account for */
		for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next) {
			const kb_task *t = &s->tasks[ti];
			struct kb_gpu_task gt;
			if (t->status == KB_TASK_ALLOCATED || t->status == KB_TASK_PIPELINED ||
			    gpu_task_of(st, t, false, &gt) != ASK_GPUS)
				continue;
			uint32_t valid_mask = gn->gpu_count >= 32 ? ~0u : ((1u << gn->gpu_count) - 1);
			uint32_t mask = t->gpu_mask;
			if (mask == 0 || (mask & ~valid_mask) || !kb_gpu_devices_valid(gn, &gt, mask)) {
				/* Placed without (valid) devices: give it the lowest free ones. */
				mask = 0;
				if (kb_gpu_devices_choose(gn, &gt, KB_GPU_DEVSEL_FIRST, 0, &mask) < 0)
					continue; /* over-committed by someone else: nothing to track */
			}
			st->held[ti] = mask;
			take_devices(gn, t, mask, +1);
		}
	}
}

/* The fullest topology group of node n that still has num whole GPUs free
 * in gn (to keep whole groups free), or -1: none, or a node without groups.
 * O(devices^2), devices <= 32. */
static int island_for(const kb_node *n, const struct kb_gpu_node *gn, int num)
{
	int best_group = -1, best_free = 0;
	for (int grp = 0; n->gpu_group && grp < gn->gpu_count; grp++) {
		int free = 0;
		for (int g = 0; g < gn->gpu_count; g++)
			free += n->gpu_group[g] == grp && gn->gpu_milli_free[g] == KB_GPU_MILLI;
		if (free >= num && (best_group < 0 || free < best_free)) {
			best_group = grp;
			best_free = free;
		}
	}
	return best_group;
}

/* Devices for t on node ni: whole GPUs from one topology group when
 * possible, else the policy's choice. 0 and *ret, or -ENOSPC. */
static int choose(gpu_state *st, const kb_snapshot *s, uint32_t ni, const struct kb_gpu_task *gt,
		  uint32_t *ret)
{
	const kb_node *n = &s->nodes[ni];
	const struct kb_gpu_node *gn = &st->nodes[ni];
	if (!kb_gpu_task_is_sharing(gt) && n->gpu_group && gt->num_gpu > 1) {
		int best_group = island_for(n, gn, gt->num_gpu);
		if (best_group >= 0) {
			uint32_t mask = 0;
			int k = 0;
			for (int g = 0; g < gn->gpu_count && k < gt->num_gpu; g++)
				if (n->gpu_group[g] == best_group && gn->gpu_milli_free[g] == KB_GPU_MILLI) {
					mask |= 1u << g;
					k++;
				}
			*ret = mask;
			return 0;
		}
	}
	if (st->policy == POLICY_FRAGMENTATION && workload_of(st, s)) {
		double score;
		return kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, gn, gt, &st->workload, &score, ret);
	}
	return kb_gpu_devices_choose(gn, gt, KB_GPU_DEVSEL_TIGHTEST, 0, ret);
}

static int gpu_open(kb_session *ssn, const kb_plugin_conf *pc, void **ret, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	gpu_state *st = kb_arena_alloc(&ssn->arena, sizeof(*st));
	if (!st)
		return kb_err_set(err, -ENOMEM, "out of memory");
	st->gpu_res = s->gpu_res;
	st->weight = kb_plugin_arg_double(pc, "gpu.weight", 10);
	st->pack_weight = kb_plugin_arg_double(pc, "gpu.gang-pack.weight", 5);
	st->topo_weight = kb_plugin_arg_double(pc, "gpu.topology.weight", 3);
	st->island_weight = kb_plugin_arg_double(pc, "gpu.island.weight", 10);
	st->topo_key = kb_plugin_arg_str(pc, "gpu.topology-key", "topology.kubernetes.io/zone");
	const char *policy = kb_plugin_arg_str(pc, "gpu.policy", "fragmentation");
	if (strcmp(policy, "fragmentation") == 0)
		st->policy = POLICY_FRAGMENTATION;
	else if (strcmp(policy, "binpack") == 0)
		st->policy = POLICY_BINPACK;
	else if (strcmp(policy, "spread") == 0)
		st->policy = POLICY_SPREAD;
	else
		return kb_err_set(err, -EINVAL,
				  "argument gpu.policy: expected fragmentation, binpack or spread, got \"%s\"",
				  policy);
	kb_gpu_models_init(&st->models);
	st->nodes = kb_arena_calloc(&ssn->arena, s->nnodes ? s->nnodes : 1, sizeof(*st->nodes));
	st->job_topo = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(char *));
	st->job_topo_known = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(bool));
	st->tasks = s->tasks;
	st->req = kb_arena_calloc(&ssn->arena, s->ntasks ? s->ntasks : 1, sizeof(*st->req));
	st->ask = kb_arena_calloc(&ssn->arena, s->ntasks ? s->ntasks : 1, sizeof(*st->ask));
	st->held = kb_arena_calloc(&ssn->arena, s->ntasks ? s->ntasks : 1, sizeof(*st->held));
	if (!st->nodes || !st->job_topo || !st->job_topo_known || !st->req || !st->ask || !st->held)
		return kb_err_set(err, -ENOMEM, "out of memory");
	*ret = st;
	int r = kb_gpushare_open(ssn, &st->share, err);
	return r < 0 ? r : kb_vgpu_open(ssn, &st->vgpu, err);
}

static void gpu_close(kb_session *ssn, void *state)
{
	gpu_state *st = state;
	if (st && st->have_workload)
		kb_gpu_workload_release(&st->workload);
}

/* The predicate on a node that shares its GPUs (replicated()). */
static int replica_predicate(gpu_state *st, const kb_task *t, const kb_node *n, const char **ret)
{
	int64_t asked = t->req.q[st->gpu_res];
	if (t->spec && t->spec->gpu_milli > 0 && asked < KB_GPU_MILLI) {
		*ret = "node(s) share GPUs through their device plugin (a nvidia.com/gpu is a "
		       "replica): a " KB_ANN_GPU_MILLI " share that asks for no nvidia.com/gpu "
		       "gets no GPU there";
		return KB_FIT_FAIL;
	}
	if (n->gpu_sharing == KB_GPU_SHARING_MPS && asked > KB_GPU_MILLI) {
		*ret = "node(s) share GPUs through MPS, which gives a pod at most one nvidia.com/gpu";
		return KB_FIT_FAIL;
	}
	uint64_t models = task_models(st, t);
	int model = models ? node_model(st, n) : -1;
	if (models && (model < 0 || !(models & (1ull << model)))) {
		*ret = "node(s) had a GPU model the pod does not accept";
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK; /* replicas: the framework's allocatable check */
}

static int gpu_predicate(void *state, const kb_session *ssn, const kb_task *t, const kb_node *n,
			 const char **ret)
{
	gpu_state *st = state;
	struct kb_gpu_task gt;
	if (kb_vgpu_asks(st->vgpu, t))
		return kb_vgpu_predicate(st->vgpu, ssn, t, n, ret);
	if (kb_gpushare_asks(st->share, t))
		return kb_gpushare_predicate(st->share, ssn, t, n, ret);
	enum gpu_ask ask = gpu_task_of(st, t, false, &gt);
	if (ask == ASK_NONE)
		return KB_FIT_OK;
	if (replicated(n))
		return replica_predicate(st, t, n, ret);
	if (ask == ASK_TOO_MANY) {
		*ret = "pod asks for more GPU devices than a node can hold";
		return KB_FIT_FAIL;
	}
	/* Working out the devices is this plugin's own state, not a change a
	 * predicate may not make. */
	devices_of(st, ssn->snap);
	const struct kb_gpu_node *gn = &st->nodes[n - ssn->snap->nodes];
	if (gn->gpu_count == 0) {
		*ret = "node(s) had no GPU devices";
		return KB_FIT_FAIL;
	}
	if (!kb_gpu_model_ok(gn, &gt)) {
		*ret = "node(s) had a GPU model the pod does not accept";
		return KB_FIT_FAIL;
	}
	if (!kb_gpu_fits(gn, &gt)) {
		*ret = kb_gpu_task_is_sharing(&gt) ? "node(s) had no GPU with enough free share"
						    : "node(s) didn't have enough free GPU devices";
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

/* The policy's score on a node that shares its GPUs: the share of its
 * physical GPUs in use once t's replicas are placed (free replicas / R),
 * on the fragmentation score's scale (0..0.1 before gpu.weight), so that
 * binpack and fragmentation pack replicas onto GPUs already shared and
 * spread does the opposite. Any free replica serves any request there, so
 * there is no device-level fragment to weigh. O(1). */
static double replica_score(const gpu_state *st, const kb_task *t, const kb_node *n)
{
	kb_res future;
	kb_node_future_idle(n, &future);
	double free_gpus = (double)(future.q[st->gpu_res] - t->req.q[st->gpu_res]) /
			   KB_GPU_MILLI / n->gpu_replicas;
	double used = 1.0 - free_gpus / n->ngpus;
	double score = 100.0 * used / KB_GPU_MILLI;
	return (st->policy == POLICY_SPREAD ? -score : score) * st->weight;
}

static double gpu_node_order(void *state, const kb_session *ssn, const kb_task *t, const kb_node *n)
{
	gpu_state *st = state;
	struct kb_gpu_task gt;
	const kb_snapshot *s = ssn->snap;
	double score = 0;
	if (kb_gpushare_asks(st->share, t)) {
		/* The extender's device rule, tightest first, across nodes too. */
		score = 100.0 * kb_gpushare_fill(st->share, ssn, t, n) / KB_GPU_MILLI;
		score = (st->policy == POLICY_SPREAD ? -score : score) * st->weight;
		goto members;
	}
	if (replicated(n)) {
		if (gpu_task_of(st, t, true, &gt) == ASK_NONE)
			return 0;
		score = replica_score(st, t, n);
		goto members;
	}
	if (gpu_task_of(st, t, true, &gt) != ASK_GPUS)
		return 0;
	devices_of(st, ssn->snap); /* as in gpu_predicate */
	uint32_t ni = (uint32_t)(n - s->nodes);
	const struct kb_gpu_node *gn = &st->nodes[ni];
	uint32_t devices;
	switch (st->policy) {
	case POLICY_FRAGMENTATION:
		if (workload_of(st, s) &&
		    kb_gpu_score(KB_GPU_POLICY_KUBE_BATCHD, gn, &gt, &st->workload, &score, &devices) == 0)
			score /= KB_GPU_MILLI; /* milli-GPU of fragmentation to GPUs */
		break;
	case POLICY_BINPACK:
	case POLICY_SPREAD:
		if (kb_gpu_score(KB_GPU_POLICY_BESTFIT, gn, &gt, NULL, &score, &devices) == 0 &&
		    st->policy == POLICY_SPREAD)
			score = -score;
		break;
	}
	score *= st->weight;
	if (!kb_gpu_task_is_sharing(&gt) && gt.num_gpu > 1 && island_for(n, gn, gt.num_gpu) >= 0)
		score += st->island_weight;
members:
	/* Members of one job close together. */
	if (t->job >= 0) {
		int same = 0;
		for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next)
			same += s->tasks[ti].job == t->job;
		score += st->pack_weight * same;
		const char *want = job_topo_of(st, s, t->job);
		const char *have = kb_labels_get(&n->labels, st->topo_key);
		if (want && have && strcmp(want, have) == 0)
			score += st->topo_weight;
	}
	return score;
}

static void gpu_on_allocate(void *state, kb_session *ssn, kb_task *t)
{
	gpu_state *st = state;
	struct kb_gpu_task gt;
	if (kb_vgpu_asks(st->vgpu, t)) {
		kb_vgpu_on_allocate(st->vgpu, ssn, t);
		return;
	}
	if (kb_gpushare_asks(st->share, t)) {
		kb_gpushare_on_allocate(st->share, ssn, t);
		return;
	}
	if (t->node < 0 || gpu_task_of(st, t, false, &gt) != ASK_GPUS)
		return;
	const kb_snapshot *s = ssn->snap;
	uint32_t ti = (uint32_t)(t - s->tasks), mask = 0;
	devices_of(st, s);
	if (!replicated(&s->nodes[t->node])) {
		if (choose(st, s, (uint32_t)t->node, &gt, &mask) < 0)
			return; /* the predicate passed, so this does not happen */
		st->held[ti] = mask;
		kb_session_set_task_devices(ssn, ti, mask);
		take_devices(&st->nodes[t->node], t, mask, +1);
	}
	if (t->job >= 0 && !job_topo_of(st, s, t->job)) {
		st->job_topo[t->job] = kb_labels_get(&s->nodes[t->node].labels, st->topo_key);
		if (st->job_topo[t->job])
			kb_session_placement_changed(ssn);
	}
}

static void gpu_on_deallocate(void *state, kb_session *ssn, kb_task *t)
{
	gpu_state *st = state;
	struct kb_gpu_task gt;
	if (kb_vgpu_asks(st->vgpu, t)) {
		kb_vgpu_on_deallocate(st->vgpu, ssn, t);
		return;
	}
	if (kb_gpushare_asks(st->share, t)) {
		kb_gpushare_on_deallocate(st->share, ssn, t);
		return;
	}
	if (t->node < 0 || gpu_task_of(st, t, false, &gt) != ASK_GPUS)
		return;
	uint32_t ti = (uint32_t)(t - ssn->snap->tasks);
	devices_of(st, ssn->snap);
	if (!st->held[ti])
		return;
	take_devices(&st->nodes[t->node], t, st->held[ti], -1);
	st->held[ti] = 0;
	kb_session_set_task_devices(ssn, ti, 0);
}

const kb_plugin_ops kb_plugin_gpu = {
	.name = "gpu",
	.open = gpu_open,
	.close = gpu_close,
	.predicate = gpu_predicate,
	.node_order = gpu_node_order,
	.on_allocate = gpu_on_allocate,
	.on_deallocate = gpu_on_deallocate,
};

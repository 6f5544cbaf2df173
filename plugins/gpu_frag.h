/*
 * gpu_frag.h - GPU placement math: feasibility, device choice, FGD
 * fragmentation and the placement scores (kube-batchd, FGD, Best-fit).
 *
 * A small pure library: libc + libm, no global mutable state, no I/O, no
 * logging. Everything a function touches is passed in; the only heap memory
 * is the shape array of a kb_gpu_workload, owned by that workload.
 *
 * Units: CPU in milli-cores, memory in MiB, GPU in milli-GPU (one GPU is
 * KB_GPU_MILLI). A node has up to KB_GPU_NODE_MAX_GPUS GPUs, all of one
 * model. A set of GPU devices of one node is a bit mask (bit i = GPU i).
 *
 * Hard constraints (docs/benchmarks.md section 3):
 *   - the node's free CPU and free memory cover the task's request;
 *   - if the task asks for GPUs and names acceptable models, the node's
 *     model is one of them (an empty set accepts any model);
 *   - a sharing task (num_gpu == 1, gpu_milli < 1000) takes gpu_milli from
 *     exactly one GPU that has that much free; it is never split;
 *   - a whole-GPU task (gpu_milli == 1000) takes num_gpu GPUs that are
 *     entirely free.
 *
 * Design note (the policy). FGD (Weng et al., ATC '23) measures a node's
 * fragmentation as the expected idle GPU capacity that a task drawn from the
 * workload's shape distribution could not use, and places each task where
 * that measure grows least (score int(100 * sigmoid(-delta / 1000)), ties
 * to a fixed seeded node order). kube-batchd keeps FGD's gradient and score
 * scale and changes the measure:
 *   1. stranded GPU: idle GPU that the node's free CPU (or memory) cannot
 *      feed counts as fragment too, averaged over the shapes able to use
 *      this node's model, each at its own CPU (memory) per GPU. FGD only
 *      asks whether one task of each shape fits now, so it lets CPU-only
 *      and CPU-heavy tasks eat the CPU that the node's idle GPUs will need
 *      (at the mean CPU per GPU instead of per shape, the few spare cores
 *      of a G2 node look free and a trace with many CPU-only tasks,
 *      cpu250, strands G2 GPUs);
 *   2. memory is a hard constraint, so a shape that does not fit the node's
 *      free memory cannot use its GPUs (FGD ignores memory);
 *   3. the distribution keeps every shape of the trace instead of the
 *      commonest 95 %: the rare shapes are mostly the ones that name GPU
 *      models, and without them the measure cannot see that a T4-only task
 *      needs the T4 GPUs that an any-model task is about to take;
 *   4. model pressure (once kb_gpu_workload_set_capacity() has seen the
 *      cluster): when the tasks that name models will need a share p of a
 *      model's GPUs, a task that could run elsewhere and takes g milli-GPU
 *      of that model pushes out about p * g of them, which will find no
 *      room and stay unallocated. The score adds g * (p of the node's model
 *      - the least p among the models the task accepts) to the delta: a
 *      task that has no choice pays nothing, and on a trace without model
 *      constraints every p is 0. FGD's measure sees the constrained shapes
 *      one node at a time and cannot tell that T4-only tasks alone will
 *      fill the T4 GPUs (gpuspec33), so it spends T4 GPUs on tasks that G2
 *      nodes could have held.
 * The trace's shapes (not their order) and the cluster's GPUs per model are
 * the only knowledge of the future. Figures: bench/README-openb.md.
 */
#ifndef KB_PLUGINS_GPU_FRAG_H
#define KB_PLUGINS_GPU_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KB_GPU_MILLI 1000
#define KB_GPU_NODE_MAX_GPUS 16
#define KB_GPU_MODEL_MAX 64
#define KB_GPU_MODEL_NAME_MAX 32

/* GPU model names interned to small ids (0..KB_GPU_MODEL_MAX-1) so that a
 * set of acceptable models is a uint64_t bit mask. Caller-owned storage. */
struct kb_gpu_models {
	unsigned count;
	char name[KB_GPU_MODEL_MAX][KB_GPU_MODEL_NAME_MAX];
};

/* One node's free resources. gpu_milli_free[i] in 0..KB_GPU_MILLI for
 * i < gpu_count; entries past gpu_count are 0. model is -1 when the node
 * has no GPU. */
struct kb_gpu_node {
	int64_t cpu_milli_free;
	int64_t memory_mib_free;
	int gpu_count;
	int model;
	int32_t gpu_milli_free[KB_GPU_NODE_MAX_GPUS];
};

/* One task's request. gpu_milli is per GPU: the share of one GPU when
 * num_gpu == 1 (1..1000), 1000 when num_gpu > 1, 0 when num_gpu == 0.
 * models: acceptable GPU models as a mask of kb_gpu_models ids, 0 = any. */
struct kb_gpu_task {
	int64_t cpu_milli;
	int64_t memory_mib;
	int num_gpu;
	int gpu_milli;
	uint64_t models;
};

/* One typical task shape with its share of the workload (weights of a
 * workload sum to 1). */
struct kb_gpu_shape {
	struct kb_gpu_task task;
	double weight;
};

/* Flags of a workload distribution. */
enum {
	/* Shapes are told apart by memory too, and a shape that does not fit
	 * the node's free memory cannot use its GPUs (FGD ignores memory). */
	KB_GPU_WORKLOAD_MEMORY = 1u << 0,
	/* Add the stranded-GPU term to the fragmentation (design note, 1). */
	KB_GPU_WORKLOAD_STRAND = 1u << 1,
};

/* The expected workload: the most common shapes covering a given share of
 * the tasks, most common first. Owns shapes (heap). */
struct kb_gpu_workload {
	struct kb_gpu_shape *shapes;
	size_t count;
	unsigned flags;
	double strand_weight; /* 1 with KB_GPU_WORKLOAD_STRAND, else 0 */
	/* Model pressure (kb_gpu_workload_set_capacity; all 0 until then):
	 * the share of each model's GPUs that the shapes naming models will
	 * need when the workload fills the cluster, capped at 1 (index: model
	 * id). models_present: the models that have GPUs in the cluster. */
	double pressure[KB_GPU_MODEL_MAX];
	uint64_t models_present;
};

/* Placement policies. */
enum kb_gpu_policy {
	KB_GPU_POLICY_KUBE_BATCHD = 0, /* ours: FGD gradient, richer measure */
	KB_GPU_POLICY_FGD,             /* FGD as published (int sigmoid score) */
	KB_GPU_POLICY_BESTFIT,         /* the paper's Best-fit baseline */
	KB_GPU_POLICY_RANDOM,          /* constant score; device chosen at random */
};

/* How to choose the devices of a node for a task (see kb_gpu_devices_choose). */
enum kb_gpu_devsel {
	KB_GPU_DEVSEL_FIRST = 0, /* lowest indices that fit */
	KB_GPU_DEVSEL_TIGHTEST,  /* sharing: fitting GPU with least free */
	KB_GPU_DEVSEL_RANDOM,    /* uniformly random among fitting GPUs */
};

/* ---- models ------------------------------------------------------------ */

/* Empty the table. O(1). */
void kb_gpu_models_init(struct kb_gpu_models *models);

/* Id of model name[0..len), adding it if new. Names are compared exactly
 * (case-sensitive). Returns 0 and *ret_id, -EINVAL for an empty name or one
 * of KB_GPU_MODEL_NAME_MAX bytes or more, -ENOSPC when the table is full.
 * O(count * len). */
int kb_gpu_models_intern(struct kb_gpu_models *models, const char *name,
			 size_t len, int *ret_id);

/* Parse a gpu_spec: model names separated by '|' (exact match of one name;
 * empty pieces are ignored; an empty spec means any model, mask 0). Unknown
 * names are interned, so a spec naming only absent models matches no node.
 * Returns 0 and *ret_mask, or the errors of kb_gpu_models_intern. */
int kb_gpu_models_parse_spec(struct kb_gpu_models *models, const char *spec,
			     size_t len, uint64_t *ret_mask);

/* ---- nodes and tasks ------------------------------------------------------ */

/* Fill *node as an empty node: all GPUs fully free. Returns 0, or -EINVAL if
 * a value is negative, gpu_count > KB_GPU_NODE_MAX_GPUS, or the model id is
 * outside -1..KB_GPU_MODEL_MAX-1 (node untouched then). O(gpus). */
int kb_gpu_node_init(struct kb_gpu_node *node, int64_t cpu_milli,
		     int64_t memory_mib, int gpu_count, int model);

/* Fill *task, normalising gpu_milli as described at struct kb_gpu_task
 * (num_gpu > 1 forces 1000; num_gpu == 0 forces 0). Returns 0, or -EINVAL
 * for negative values, num_gpu > KB_GPU_NODE_MAX_GPUS, or num_gpu == 1 with
 * gpu_milli outside 1..1000 (task untouched then). O(1). */
int kb_gpu_task_init(struct kb_gpu_task *task, int64_t cpu_milli,
		     int64_t memory_mib, int num_gpu, int gpu_milli,
		     uint64_t models);

/* Total GPU request in milli-GPU (gpu_milli for a sharing task,
 * 1000 * num_gpu otherwise). O(1). */
int64_t kb_gpu_task_gpu_total(const struct kb_gpu_task *task);

/* True when the task shares one GPU (num_gpu == 1 and gpu_milli < 1000). */
bool kb_gpu_task_is_sharing(const struct kb_gpu_task *task);

/* Sum of the node's free milli-GPU. O(gpus). */
int64_t kb_gpu_node_gpu_free(const struct kb_gpu_node *node);

/* True when the task passes the model constraint on this node (a task with
 * no GPU, or an empty model set, passes everywhere). O(1). */
bool kb_gpu_model_ok(const struct kb_gpu_node *node,
		     const struct kb_gpu_task *task);

/* True when all hard constraints hold (header comment). O(gpus). */
bool kb_gpu_fits(const struct kb_gpu_node *node, const struct kb_gpu_task *task);

/* Choose the devices for a task that fits the node. rnd is only used by
 * KB_GPU_DEVSEL_RANDOM (any 64-bit random word). Returns 0 and *ret_devices
 * (one bit for a sharing task, num_gpu bits for a whole-GPU task, 0 for a
 * CPU-only task), -ENOSPC when the task does not fit, -EINVAL for an unknown
 * sel. O(gpus). */
int kb_gpu_devices_choose(const struct kb_gpu_node *node,
			  const struct kb_gpu_task *task,
			  enum kb_gpu_devsel sel, uint64_t rnd,
			  uint32_t *ret_devices);

/* True when devices is a valid device set for the task on the node: the
 * task fits, the set has exactly the right number of GPUs, each one exists
 * and has enough free (whole GPUs entirely free). O(gpus). */
bool kb_gpu_devices_valid(const struct kb_gpu_node *node,
			  const struct kb_gpu_task *task, uint32_t devices);

/* Take the task's resources from the node on the given devices. Returns 0,
 * or -EINVAL when kb_gpu_devices_valid() fails (node untouched). O(gpus). */
int kb_gpu_node_take(struct kb_gpu_node *node, const struct kb_gpu_task *task,
		     uint32_t devices);

/* ---- workload distribution and fragmentation --------------------------- */

/* Build the shape distribution from n sample tasks: tasks are grouped by
 * shape (cpu, num_gpu, gpu_milli, models, and memory if flags has
 * KB_GPU_WORKLOAD_MEMORY), sorted by count (ties: by the shape's fields, so
 * the result does not depend on the order of tasks), and the most common
 * ones are kept until they cover `coverage` (0 < coverage <= 1) of the
 * tasks; weights are renormalised to sum to 1 (as FGD does). Returns 0,
 * -EINVAL (n == 0, bad coverage), -ENOMEM. On success *ret owns the
 * shapes; release with kb_gpu_workload_release(). O(n log n). */
int kb_gpu_workload_init(const struct kb_gpu_task *tasks, size_t n,
			 double coverage, unsigned flags,
			 struct kb_gpu_workload *ret);

/* The distribution a policy scores with, from the trace's tasks: FGD: the
 * commonest shapes covering 95 % of tasks, keyed (cpu, num_gpu, gpu_milli,
 * models), no flags; KUBE_BATCHD: all shapes, keyed with memory too,
 * MEMORY | STRAND. Returns as kb_gpu_workload_init, and -EINVAL for a
 * policy that needs no distribution (BESTFIT, RANDOM). */
int kb_gpu_workload_init_policy(enum kb_gpu_policy policy,
				const struct kb_gpu_task *tasks, size_t n,
				struct kb_gpu_workload *ret);

/* Learn the model pressure of the workload on a cluster (design note, 4):
 * with C_m the GPUs of model m in the n nodes and C their sum, each shape
 * that names models brings C * (its share of the workload's GPU request),
 * spread over the models it names in proportion to C_m (models absent from
 * the cluster get none); pressure[m] = min(1, what model m got / C_m).
 * Shapes that name no model add nothing. Replaces an earlier pressure.
 * Returns 0, or -EINVAL when a node's model id is out of range (workload
 * untouched then). O(nodes + shapes * KB_GPU_MODEL_MAX). */
int kb_gpu_workload_set_capacity(struct kb_gpu_workload *workload,
				 const struct kb_gpu_node *nodes, size_t n);

/* Free the shapes and empty the workload. Accepts an empty workload. */
void kb_gpu_workload_release(struct kb_gpu_workload *workload);

/* FGD's fragmentation of a node, in milli-GPU: sum over shapes of
 * weight * (idle GPU the shape could not use). A shape could not use all of
 * the node's idle GPU when it asks no GPU, when the model does not match,
 * when CPU (and with KB_GPU_WORKLOAD_MEMORY, memory) is short, or when fewer
 * than num_gpu GPUs have gpu_milli free; otherwise it could not use the
 * GPUs with less than gpu_milli free. With KB_GPU_WORKLOAD_STRAND, plus
 * the idle GPU that the node's free CPU (and with MEMORY, free memory)
 * cannot feed, averaged over the GPU shapes that accept the node's model:
 * a shape asking c milli-CPU (m MiB) for g milli-GPU feeds at most
 * free CPU * g / c (free memory * g / m) of it.
 * O(shapes * gpus). */
double kb_gpu_node_frag(const struct kb_gpu_node *node,
			const struct kb_gpu_workload *workload);

/* Fragmentation increase (after - before, milli-GPU; negative = decrease)
 * of placing the task on the node on the given devices. Returns 0 and
 * *ret_delta, or -EINVAL when the devices are not valid. O(shapes * gpus). */
int kb_gpu_frag_delta(const struct kb_gpu_node *node,
		      const struct kb_gpu_task *task, uint32_t devices,
		      const struct kb_gpu_workload *workload,
		      double *ret_delta);

/* ---- scores ------------------------------------------------------------ */

/* Score placing the task on the node under a policy (higher is better) and
 * the devices that score belongs to. workload is used by KUBE_BATCHD and FGD
 * only (may be NULL otherwise) and should come from
 * kb_gpu_workload_init_policy() for that policy. Scores of different nodes
 * for one task are comparable; callers break ties themselves, with a seeded
 * random order of the nodes that stays fixed for the whole replay (the first
 * node in that order among the best wins).
 *   KUBE_BATCHD and FGD: int(100 * sigmoid(-delta / 1000)), delta the
 *     increase of kb_gpu_node_frag() under the workload plus the model
 *     pressure cost (design note, 4; 0 unless the workload has a pressure);
 *     the GPU of a sharing task is the lowest-index one with the best such
 *     score;
 *   BESTFIT: 1 - 0.5 * ((cpu free - cpu asked) / 128 cores + (GPU free -
 *     GPU asked) / 8 GPUs), tightest-fitting GPU;
 *   RANDOM: 0, first fitting devices (pick devices with
 *     kb_gpu_devices_choose(KB_GPU_DEVSEL_RANDOM) instead).
 * Returns 0 with *ret_score and *ret_devices, -ENOSPC when the task does not
 * fit, -EINVAL for an unknown policy or a missing workload.
 * O(gpus * shapes * gpus) for KUBE_BATCHD and FGD, O(gpus) otherwise. */
int kb_gpu_score(enum kb_gpu_policy policy, const struct kb_gpu_node *node,
		 const struct kb_gpu_task *task,
		 const struct kb_gpu_workload *workload, double *ret_score,
		 uint32_t *ret_devices);

/* Name of a policy ("kube-batchd", "fgd", "bestfit", "random"), or NULL. */
const char *kb_gpu_policy_name(enum kb_gpu_policy policy);

/* Policy by name; returns 0 and *ret_policy or -EINVAL. */
int kb_gpu_policy_from_name(const char *name, enum kb_gpu_policy *ret_policy);

#endif /* KB_PLUGINS_GPU_FRAG_H */

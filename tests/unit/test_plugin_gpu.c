/* test_plugin_gpu.c - the "gpu" plugin through the real framework.
 *
 * Pins, with gpu alone in the configuration: its predicate (pods asking no
 * GPU pass; no devices, a model the pod refuses, more devices than a node
 * holds, no whole free device, no device with the share free: refused, with
 * kube-scheduler-style reasons), its device choice when a task is placed
 * (free devices only, one topology group when one can hold them) and the
 * release when the placement is undone, and its node order (binpack and
 * spread, the gang-pack and topology bonuses).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scheduler/statement.h"
#include "tests/unit/session_fixture.h"

static const char CONF[] = "actions: \"allocate\"\n"
			   "tiers:\n"
			   "- plugins:\n"
			   "  - name: gpu\n";

/* A node with metadata fields after its name (", labels: {...}"). */
#define GNODE(name, meta, alloc)                                                                \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name meta "}\n"                     \
	"status: {allocatable: " alloc "}\n"
#define GPUS(n) "{cpu: '32', memory: 128Gi, nvidia.com/gpu: '" #n "'}"

/* A pod with annotations (a flow map's inside) and requests. */
#define GPOD(name, ann, req)                                                                    \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", annotations: {" ann "}}\n"   \
	"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: " req   \
	"}}]}\n"
#define GRUNNING(name, ann, node, req)                                                          \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", annotations: {" ann "}}\n"   \
	"spec: {schedulerName: kube-batchd, nodeName: " node ", containers: [{name: c, "         \
	"resources: {requests: " req "}}]}\nstatus: {phase: Running}\n"
#define G(n) "{cpu: '1', memory: 1Gi, nvidia.com/gpu: '" #n "'}"
/* What a pod sharing a GPU in kube-batchd's own share model asks: no
 * nvidia.com/gpu (one that asks for 1 holds one whole at the kubelet). */
#define G_SHARE "{cpu: '1', memory: 1Gi}"
#define SHARE(m) "kube-batchd.io/gpu-milli: '" #m "'"
#define DEVICES(d) "kube-batchd.io/gpu-devices: '" d "'"

static int setup(void **state)
{
	*state = fx_new();
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* The gpu plugin's own predicate, called as the framework calls it (the
 * framework checks the node's resources first, which would answer before
 * the plugin for a node without GPUs). KB_FIT_OK, or the reason. */
static const char *gpu_predicate(fx *f, const char *task, const char *node)
{
	const kb_hook_list *hl = &f->ssn.hooks[KB_HOOK_PREDICATE];
	for (uint32_t i = 0; i < hl->n; i++) {
		if (strcmp(hl->v[i].ops->name, "gpu") != 0)
			continue;
		const char *why = NULL;
		int r = hl->v[i].ops->predicate(hl->v[i].state, &f->ssn, fx_task(f, task),
					       fx_node(f, node), &why);
		if (r == KB_FIT_OK)
			return NULL;
		assert_non_null(why);
		return why;
	}
	fail_msg("no gpu predicate");
	return NULL;
}

/* The framework's whole predicate: NULL when the task fits. */
static const char *predicate(fx *f, const char *task, const char *node)
{
	const char *why = NULL;
	return kb_predicate(&f->ssn, fx_task(f, task), fx_node(f, node), &why) == KB_FIT_OK ? NULL
											      : why;
}

static uint32_t mask_of(const fx *f, const char *task)
{
	return fx_task(f, task)->gpu_mask;
}

/* ---- predicate ------------------------------------------------------------------- */

static void predicate_passes_pods_that_ask_no_gpu(void **state)
{
	fx *f = *state;
	fx_loadf(f, NODE("cpu", "{cpu: '4', memory: 8Gi}") LONE_POD("plain", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	assert_null(gpu_predicate(f, "default/plain", "cpu"));
}

static void predicate_refuses_a_node_without_devices(void **state)
{
	fx *f = *state;
	fx_loadf(f, NODE("cpu", "{cpu: '4', memory: 8Gi}") GPOD("p", "", G(1)));
	fx_open(f, CONF);
	assert_string_equal(gpu_predicate(f, "default/p", "cpu"), "node(s) had no GPU devices");
}

static void predicate_refuses_a_model_the_pod_does_not_accept(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("a100", ", labels: {nvidia.com/gpu.product: A100}", GPUS(2))
		 GNODE("h100", ", labels: {nvidia.com/gpu.product: H100}", GPUS(2))
		 GPOD("p", "kube-batchd.io/gpu-models: 'V100|H100'", G(1)));
	fx_open(f, CONF);
	assert_string_equal(predicate(f, "default/p", "a100"),
			    "node(s) had a GPU model the pod does not accept");
	assert_null(predicate(f, "default/p", "h100"));
}

static void predicate_refuses_more_devices_than_a_node_can_hold(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("g", "", GPUS(8)) GPOD("p", "", G(64)));
	fx_open(f, CONF);
	assert_string_equal(gpu_predicate(f, "default/p", "g"),
			    "pod asks for more GPU devices than a node can hold");
}

static void predicate_needs_a_whole_free_device_for_a_whole_gpu(void **state)
{
	fx *f = *state;
	/* 1.4 GPUs are free in all, but no device is whole. */
	fx_loadf(f, GNODE("g", "", GPUS(2))
		 GRUNNING("s0", SHARE(300) ", " DEVICES("0"), "g", G_SHARE)
		 GRUNNING("s1", SHARE(300) ", " DEVICES("1"), "g", G_SHARE) GPOD("p", "", G(1)));
	fx_open(f, CONF);
	assert_string_equal(predicate(f, "default/p", "g"),
			    "node(s) didn't have enough free GPU devices");
}

static void predicate_never_splits_a_share_across_devices(void **state)
{
	fx *f = *state;
	/* 400 free on each device: 500 fits neither, 400 fits. */
	fx_loadf(f, GNODE("g", "", GPUS(2))
		 GRUNNING("s0", SHARE(600) ", " DEVICES("0"), "g", G_SHARE)
		 GRUNNING("s1", SHARE(600) ", " DEVICES("1"), "g", G_SHARE)
		 GPOD("p500", SHARE(500), G_SHARE) GPOD("p400", SHARE(400), G_SHARE));
	fx_open(f, CONF);
	assert_string_equal(predicate(f, "default/p500", "g"),
			    "node(s) had no GPU with enough free share");
	assert_null(predicate(f, "default/p400", "g"));
}

static void predicate_counts_a_share_that_asks_a_gpu_whole(void **state)
{
	fx *f = *state;
	/* Two pods asking nvidia.com/gpu: 1 share device 0 (600 milli-GPU in
	 * all); the node advertises 2: a third asking 1 is over allocatable at
	 * the kubelet, though device 0 has room for its share and device 1 is
	 * idle. One sharing without asking nvidia.com/gpu is charged its share
	 * (kube-batchd's own model, which the kubelet does not count): it does
	 * not fit either. */
	fx_loadf(f, GNODE("g", "", GPUS(2)) GRUNNING("s0", SHARE(300) ", " DEVICES("0"), "g", G(1))
		 GRUNNING("s1", SHARE(300) ", " DEVICES("0"), "g", G(1))
		 GPOD("asks", SHARE(300), G(1)) GPOD("shares", SHARE(300), G_SHARE));
	fx_open(f, CONF);
	assert_string_equal(predicate(f, "default/asks", "g"), "Insufficient nvidia.com/gpu");
	assert_string_equal(predicate(f, "default/shares", "g"), "Insufficient nvidia.com/gpu");
	assert_int_equal(fx_task(f, "default/s0")->req.q[f->ssn.snap->gpu_res], 1000);
	assert_int_equal(fx_task(f, "default/shares")->req.q[f->ssn.snap->gpu_res], 300);
}

/* ---- devices chosen on placement ------------------------------------------------- */

static void placement_takes_free_devices_only(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("g", "", GPUS(4)) GRUNNING("r", DEVICES("0,2"), "g", G(2))
		 GPOD("p", "", G(2)));
	fx_open(f, CONF);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p"), 0), 0);
	assert_int_equal(mask_of(f, "default/p"), 0x2 | 0x8);
	kb_stmt_discard(&st);
}

static void placement_keeps_whole_gpus_in_one_topology_group(void **state)
{
	fx *f = *state;
	/* Groups {0,1} and {2,3}; device 1 is taken. Devices 0 and 2 are free
	 * but in two groups: the pod gets the whole free group. */
	fx_loadf(f, GNODE("g", ", annotations: {kube-batchd.io/gpu-topology: '0,1;2,3'}", GPUS(4))
		 GRUNNING("r", DEVICES("1"), "g", G(1)) GPOD("p", "", G(2)));
	fx_open(f, CONF);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p"), 0), 0);
	assert_int_equal(mask_of(f, "default/p"), 0xC);
	kb_stmt_discard(&st);
}

static void undoing_a_placement_frees_its_devices(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("g", "", GPUS(1)) GPOD("a", "", G(1)) GPOD("b", "", G(1)));
	fx_open(f, CONF);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/a"), 0), 0);
	assert_int_equal(mask_of(f, "default/a"), 0x1);
	assert_string_equal(gpu_predicate(f, "default/b", "g"),
			    "node(s) didn't have enough free GPU devices");
	kb_stmt_discard(&st);
	assert_int_equal(mask_of(f, "default/a"), 0);
	assert_null(gpu_predicate(f, "default/b", "g"));
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/b"), 0), 0);
	assert_int_equal(mask_of(f, "default/b"), 0x1);
	kb_stmt_discard(&st);
}

static void shares_fill_one_device_before_the_next(void **state)
{
	fx *f = *state;
	/* Device 0 is whole, device 1 has 400 free: a 300 share goes to device
	 * 1 (the tightest), keeping device 0 whole. */
	fx_loadf(f, GNODE("g", "", GPUS(2))
		 GRUNNING("s0", SHARE(600) ", " DEVICES("1"), "g", G_SHARE)
		 GPOD("p", SHARE(300), G_SHARE));
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
		   "    arguments: {gpu.policy: binpack}\n");
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p"), 0), 0);
	assert_int_equal(mask_of(f, "default/p"), 0x2);
	kb_stmt_discard(&st);
}

/* ---- nodes whose device plugin shares GPUs ------------------------------------- */

#define TS_LABELS                                                                               \
	", labels: {nvidia.com/gpu.replicas: '4', nvidia.com/gpu.sharing-strategy: time-slicing, " \
	"nvidia.com/gpu.product: T4-SHARED}"
#define MPS_LABELS ", labels: {nvidia.com/gpu.replicas: '4', nvidia.com/gpu.sharing-strategy: mps}"

static void replicas_are_the_device_plugins_to_pick(void **state)
{
	fx *f = *state;
	/* 2 GPUs x 4 replicas: a pod may ask for more replicas than the node
	 * has GPUs (the device plugin spreads them), gets no device ids, and the
	 * model matches without GFD's "-SHARED". */
	fx_loadf(f, GNODE("ts", TS_LABELS, GPUS(8))
		 GPOD("p", "kube-batchd.io/gpu-models: T4", G(3)) GPOD("own", SHARE(250), G_SHARE));
	fx_open(f, CONF);
	assert_int_equal(fx_node(f, "ts")->ngpus, 2);
	assert_null(predicate(f, "default/p", "ts"));
	assert_string_equal(gpu_predicate(f, "default/own", "ts"),
			    "node(s) share GPUs through their device plugin (a nvidia.com/gpu is a "
			    "replica): a kube-batchd.io/gpu-milli share that asks for no "
			    "nvidia.com/gpu gets no GPU there");
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p"), 0), 0);
	assert_int_equal(mask_of(f, "default/p"), 0);
	kb_stmt_discard(&st);
}

static void mps_gives_a_pod_one_replica(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("mps", MPS_LABELS, GPUS(8)) GPOD("one", "", G(1)) GPOD("two", "", G(2)));
	fx_open(f, CONF);
	assert_null(predicate(f, "default/one", "mps"));
	assert_string_equal(gpu_predicate(f, "default/two", "mps"),
			    "node(s) share GPUs through MPS, which gives a pod at most one "
			    "nvidia.com/gpu");
}

static void replicas_pack_onto_shared_gpus(void **state)
{
	fx *f = *state;
	/* Binpack prefers the node with fewer physical GPUs left free. */
	fx_loadf(f, GNODE("busy", TS_LABELS, GPUS(8)) GNODE("idle", TS_LABELS, GPUS(8))
		 GRUNNING("r", "", "busy", G(5)) GPOD("p", "", G(1)));
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
		   "    arguments: {gpu.policy: binpack}\n");
	assert_true(kb_node_score(&f->ssn, fx_task(f, "default/p"), fx_node(f, "busy")) >
		    kb_node_score(&f->ssn, fx_task(f, "default/p"), fx_node(f, "idle")));
}

/* ---- Alibaba's gpushare ---------------------------------------------------------- */

#define GS_NODE(name, mem, count)                                                               \
	GNODE(name, "", "{cpu: '32', memory: 128Gi, aliyun.com/gpu-mem: '" #mem                    \
			"', aliyun.com/gpu-count: '" #count "'}")
#define GS(m) "{cpu: '1', aliyun.com/gpu-mem: '" #m "'}"
#define IDX(d) "ALIYUN_COM_GPU_MEM_IDX: '" #d "'"

static void gpushare_takes_the_tightest_device_around_bound_pods(void **state)
{
	fx *f = *state;
	/* 3 GPUs of 16: GPU 1 holds 8 (its annotation says so); a pod bound
	 * without an index holds 4, charged where this module would have put
	 * it (GPU 1 or GPU 0, by the order it is met: either way p4 and p12
	 * land as below). 17 fits no GPU. */
	fx_loadf(f, GS_NODE("gs", 48, 3) GRUNNING("r1", IDX(1), "gs", GS(8))
		 GRUNNING("r2", "", "gs", GS(4)) GPOD("p4", "", GS(4)) GPOD("p12", "", GS(12))
		 GPOD("p17", "", GS(17)) GPOD("both", "", "{aliyun.com/gpu-mem: '1', nvidia.com/gpu: '1'}"));
	fx_open(f, CONF);
	assert_string_equal(gpu_predicate(f, "default/p17", "gs"),
			    "node(s) had no single GPU with enough free aliyun.com/gpu-mem");
	assert_string_equal(gpu_predicate(f, "default/both", "gs"),
			    "pod asks for both aliyun.com/gpu-mem and nvidia.com/gpu");
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p4"), 0), 0);
	assert_int_equal(mask_of(f, "default/p4"), 0x2); /* GPU 1: 4 free, the tightest */
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p12"), 0), 0);
	assert_int_equal(mask_of(f, "default/p12"), 0x1); /* GPU 0, the lowest of two whole */
	kb_stmt_discard(&st);
	assert_int_equal(mask_of(f, "default/p4"), 0);
	assert_int_equal(mask_of(f, "default/p12"), 0);
	/* Undone: GPU 1 has its 4 back. */
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/p4"), 0), 0);
	assert_int_equal(mask_of(f, "default/p4"), 0x2);
	kb_stmt_discard(&st);
}

static void gpushare_needs_the_gpu_count(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("nocount", "", "{cpu: '32', memory: 128Gi, aliyun.com/gpu-mem: '32'}")
		 GPOD("p", "", GS(4)));
	fx_open(f, CONF);
	assert_string_equal(gpu_predicate(f, "default/p", "nocount"),
			    "node(s) had no aliyun.com/gpu-count (GPU sharing by memory)");
}

/* ---- node order ------------------------------------------------------------------ */

/* g1 has 3 of 4 GPUs taken, g2 none. */
static void busy_and_idle_nodes(fx *f)
{
	fx_loadf(f, GNODE("g1", "", GPUS(4)) GNODE("g2", "", GPUS(4))
		 GRUNNING("r", DEVICES("0,1,2"), "g1", G(3)) GPOD("p", "", G(1)));
}

static double score(fx *f, const char *task, const char *node)
{
	return kb_node_score(&f->ssn, fx_task(f, task), fx_node(f, node));
}

static void node_order_binpack_prefers_the_fuller_node(void **state)
{
	fx *f = *state;
	busy_and_idle_nodes(f);
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
		   "    arguments: {gpu.policy: binpack}\n");
	assert_true(score(f, "default/p", "g1") > score(f, "default/p", "g2"));
}

static void node_order_spread_prefers_the_emptier_node(void **state)
{
	fx *f = *state;
	busy_and_idle_nodes(f);
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
		   "    arguments: {gpu.policy: spread}\n");
	assert_true(score(f, "default/p", "g2") > score(f, "default/p", "g1"));
}

static void node_order_gives_no_score_to_pods_without_gpus(void **state)
{
	fx *f = *state;
	busy_and_idle_nodes(f);
	fx_loadf(f, LONE_POD("plain", "{cpu: '1'}", ""));
	fx_open(f, CONF);
	assert_true(score(f, "default/plain", "g1") == 0);
	assert_true(score(f, "default/plain", "g2") == 0);
}

/* The policy's score weighs nothing (gpu.weight 0): only the bonuses count. */
static void node_order_packs_a_gang_and_keeps_it_in_its_zone(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("g1", ", labels: {topology.kubernetes.io/zone: z1}", GPUS(4))
		 GNODE("g2", ", labels: {topology.kubernetes.io/zone: z2}", GPUS(4))
		 GNODE("g3", ", labels: {topology.kubernetes.io/zone: z1}", GPUS(4))
		 PODGROUP("job", 1, "")
		 GRUNNING("m0", "scheduling.k8s.io/group-name: job, " DEVICES("0"), "g1", G(1))
		 GPOD("m1", "scheduling.k8s.io/group-name: job", G(1)));
	fx_open(f, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
		   "    arguments: {gpu.weight: 0, gpu.gang-pack.weight: 5, "
		   "gpu.topology.weight: 3}\n");
	/* g1: one member there (5) in the job's zone (3); g3: the zone only; g2: nothing. */
	assert_true(score(f, "default/m1", "g1") == 8);
	assert_true(score(f, "default/m1", "g3") == 3);
	assert_true(score(f, "default/m1", "g2") == 0);
}

static void open_refuses_an_unknown_policy(void **state)
{
	fx *f = *state;
	fx_loadf(f, GNODE("g", "", GPUS(1)));
	kb_err err = {0};
	assert_int_equal(kb_cluster_snapshot(&f->cluster, &f->snap, &err), 0);
	const char conf[] = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gpu\n"
			    "    arguments: {gpu.policy: random}\n";
	assert_int_equal(kb_conf_load_buffer(conf, strlen(conf), "conf", &kb_builtin_registry,
					     &f->conf, &err),
			 0);
	assert_int_equal(kb_session_open(&f->ssn, &f->snap, &f->conf, NULL, NULL, 0, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "gpu.policy"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(predicate_passes_pods_that_ask_no_gpu),
		T(predicate_refuses_a_node_without_devices),
		T(predicate_refuses_a_model_the_pod_does_not_accept),
		T(predicate_refuses_more_devices_than_a_node_can_hold),
		T(predicate_needs_a_whole_free_device_for_a_whole_gpu),
		T(predicate_never_splits_a_share_across_devices),
		T(predicate_counts_a_share_that_asks_a_gpu_whole),
		T(placement_takes_free_devices_only),
		T(placement_keeps_whole_gpus_in_one_topology_group),
		T(undoing_a_placement_frees_its_devices),
		T(shares_fill_one_device_before_the_next),
		T(replicas_are_the_device_plugins_to_pick),
		T(mps_gives_a_pod_one_replica),
		T(replicas_pack_onto_shared_gpus),
		T(gpushare_takes_the_tightest_device_around_bound_pods),
		T(gpushare_needs_the_gpu_count),
		T(node_order_binpack_prefers_the_fuller_node),
		T(node_order_spread_prefers_the_emptier_node),
		T(node_order_gives_no_score_to_pods_without_gpus),
		T(node_order_packs_a_gang_and_keeps_it_in_its_zone),
		T(open_refuses_an_unknown_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_cmd_views.c - cmd/table and cmd/views: the aligned tables and
 * ages of `top` and `explain`, the GPUs a node shows (Arena's count and
 * kube-batchd's books), a queue's share, and the room a waiting gang
 * lacks by requests alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/table.h"
#include "cmd/views.h"
#include "load_cluster.h"

/* ---- table --------------------------------------------------------------------- */

static char *print_to_string(const kb_table *t)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	kb_table_print(t, f);
	fclose(f);
	return buf;
}

static void table_columns_align_to_the_widest_cell(void **state)
{
	static const char *const head[] = {"NAME", "GPU", "WHY"};
	kb_table t;
	assert_int_equal(kb_table_init(&t, 3, head), 0);
	const char *r1[] = {"a-long-node", "4/4", "fine"};
	const char *r2[] = {"b", "", NULL};
	assert_int_equal(kb_table_add(&t, r1), 0);
	assert_int_equal(kb_table_add(&t, r2), 0);
	assert_int_equal(kb_table_rows(&t), 2);
	char *s = print_to_string(&t);
	assert_string_equal(s, "NAME          GPU   WHY\n"
			       "a-long-node   4/4   fine\n"
			       "b             -     -\n");
	free(s);
	kb_table_release(&t);
}

static void table_needs_columns(void **state)
{
	kb_table t;
	assert_int_equal(kb_table_init(&t, 0, NULL), -EINVAL);
}

/* apimachinery's duration.HumanDuration, case by case. */
static void ages_print_as_kubectl_does(void **state)
{
	char b[32];
	static const struct {
		int64_t s;
		const char *want;
	} cases[] = {
		{0, "0s"},        {45, "45s"},     {119, "119s"},   {120, "2m"},
		{200, "3m20s"},   {600, "10m"},    {179 * 60, "179m"}, {3 * 3600, "3h"},
		{5 * 3600 + 600, "5h10m"}, {30 * 3600, "30h"}, {50 * 3600, "2d2h"},
		{8 * 86400, "8d"}, {40 * 86400, "40d"}, {800 * 86400, "2y70d"},
		{9 * 365 * 86400LL, "9y"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(kb_format_age(cases[i].s * 1000, b, sizeof(b)), cases[i].want);
	assert_string_equal(kb_format_age(-500, b, sizeof(b)), "0s");
	assert_string_equal(kb_format_age(-5000, b, sizeof(b)), "<invalid>");
}

static void percent_has_one_decimal(void **state)
{
	char b[16];
	assert_string_equal(kb_format_percent(6, 8, b, sizeof(b)), "75.0%");
	assert_string_equal(kb_format_percent(17, 22, b, sizeof(b)), "77.3%");
	assert_string_equal(kb_format_percent(0, 0, b, sizeof(b)), "0.0%");
}

/* ---- views of a snapshot ------------------------------------------------------- */

static const char *gpu_cluster =
	"apiVersion: v1\nkind: Node\nmetadata: {name: ex, labels: {pool: x}}\n"
	"status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110', nvidia.com/gpu: '4'}}\n"
	"---\napiVersion: v1\nkind: Node\n"
	"metadata: {name: ts, labels: {nvidia.com/gpu.count: '2', nvidia.com/gpu.replicas: '4', "
	"nvidia.com/gpu.sharing-strategy: time-slicing}}\n"
	"status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110', nvidia.com/gpu: '8'}}\n"
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: gs, labels: {gpushare: 'true'}}\n"
	"status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110', aliyun.com/gpu-mem: '64', "
	"aliyun.com/gpu-count: '4'}}\n"
	/* ex: one whole GPU and shares of 0.3 and 0.8 asking no nvidia.com/gpu */
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: whole, namespace: d}\n"
	"spec: {schedulerName: kube-batchd, nodeName: ex, containers: [{name: c, resources: "
	"{limits: {nvidia.com/gpu: '1'}}}]}\nstatus: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: share, namespace: d, "
	"annotations: {kube-batchd.io/gpu-milli: '300'}}\n"
	"spec: {schedulerName: kube-batchd, nodeName: ex, containers: [{name: c, resources: "
	"{requests: {cpu: '1'}}}]}\nstatus: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: share2, namespace: d, "
	"annotations: {kube-batchd.io/gpu-milli: '800'}}\n"
	"spec: {schedulerName: kube-batchd, nodeName: ex, containers: [{name: c, resources: "
	"{requests: {cpu: '1'}}}]}\nstatus: {phase: Running}\n"
	/* ts: three replicas */
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: rep, namespace: d}\n"
	"spec: {schedulerName: kube-batchd, nodeName: ts, containers: [{name: c, resources: "
	"{limits: {nvidia.com/gpu: '3'}}}]}\nstatus: {phase: Running}\n"
	/* gs: two pods on device 2, one on device 0 */
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: g1, namespace: d, annotations: "
	"{ALIYUN_COM_GPU_MEM_IDX: '2'}}\nspec: {schedulerName: kube-batchd, nodeName: gs, "
	"containers: [{name: c, resources: {limits: {aliyun.com/gpu-mem: '8'}}}]}\n"
	"status: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: g2, namespace: d, annotations: "
	"{ALIYUN_COM_GPU_MEM_IDX: '2'}}\nspec: {schedulerName: kube-batchd, nodeName: gs, "
	"containers: [{name: c, resources: {limits: {aliyun.com/gpu-mem: '4'}}}]}\n"
	"status: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: g3, namespace: d, annotations: "
	"{ALIYUN_COM_GPU_MEM_IDX: '0'}}\nspec: {schedulerName: kube-batchd, nodeName: gs, "
	"containers: [{name: c, resources: {limits: {aliyun.com/gpu-mem: '6'}}}]}\n"
	"status: {phase: Running}\n"
	/* a gang of 2 x 4 GPUs that waits: ex has 1.9 GPUs left, ts 5 replicas */
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
	"metadata: {name: big, namespace: d}\nspec: {minMember: 2}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: big-0, namespace: d, annotations: "
	"{scheduling.k8s.io/group-name: big}}\nspec: {schedulerName: kube-batchd, containers: "
	"[{name: c, resources: {limits: {nvidia.com/gpu: '4'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: big-1, namespace: d, annotations: "
	"{scheduling.k8s.io/group-name: big}}\nspec: {schedulerName: kube-batchd, containers: "
	"[{name: c, resources: {limits: {nvidia.com/gpu: '4'}}}]}\n";

typedef struct fixture {
	kb_cluster c;
	kb_snapshot s;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	kb_cluster_init(&f->c, "kube-batchd", "default");
	load_cluster(&f->c, gpu_cluster);
	kb_snapshot_init(&f->s);
	kb_err err = {0};
	assert_int_equal(kb_cluster_snapshot(&f->c, &f->s, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	kb_snapshot_release(&f->s);
	kb_cluster_release(&f->c);
	free(f);
	return 0;
}

static kb_node_view view(const fixture *f, const char *name)
{
	int32_t n = kb_snapshot_find_node(&f->s, name);
	assert_true(n >= 0);
	kb_node_view v;
	kb_node_view_of(&f->s, (uint32_t)n, &v);
	return v;
}

static void arena_counts_whole_gpus_and_kube_batchd_the_share_too(void **state)
{
	kb_node_view v = view(*state, "ex");
	assert_int_equal(v.arena_mode, KB_ARENA_EXCLUSIVE);
	assert_int_equal(v.arena_total, 4);
	assert_int_equal(v.arena_allocated, 1); /* the shares: no kubelet counts them */
	assert_string_equal(v.sharing, "whole");
	assert_int_equal(v.gpu_alloc, 4000);
	assert_int_equal(v.gpu_used, 2100);
	assert_int_equal(v.pods, 3);
}

static void time_sliced_node_counts_replicas_and_its_gpus(void **state)
{
	kb_node_view v = view(*state, "ts");
	assert_int_equal(v.arena_mode, KB_ARENA_EXCLUSIVE);
	assert_int_equal(v.arena_total, 8);
	assert_int_equal(v.arena_allocated, 3);
	assert_string_equal(v.sharing, "time-slicing");
	assert_int_equal(v.gpus, 2);
	assert_int_equal(v.replicas, 4);
}

static void gpushare_node_counts_devices_holding_a_pod(void **state)
{
	kb_node_view v = view(*state, "gs");
	assert_int_equal(v.arena_mode, KB_ARENA_SHARE);
	assert_int_equal(v.arena_total, 4);
	assert_int_equal(v.arena_allocated, 2); /* devices 0 and 2 */
	assert_string_equal(v.sharing, "gpushare");
	assert_int_equal(v.gpu_mem_total, 64000);
	assert_int_equal(v.gpu_mem_used, 18000);
}

static void share_is_the_largest_ratio_as_volcano_computes_it(void **state)
{
	kb_res a = {{0}}, d = {{0}};
	assert_true(kb_queue_share(&a, &d) == 0.0);
	a.q[KB_RES_CPU] = 2000;
	d.q[KB_RES_CPU] = 4000;
	a.q[3] = 3000;
	d.q[3] = 2000;
	assert_true(kb_queue_share(&a, &d) == 1.5);
	d.q[3] = 0; /* allocated with nothing deserved: 1 */
	assert_true(kb_queue_share(&a, &d) == 1.0);
	a.q[KB_RES_PODS] = 9000; /* pods never count */
	assert_true(kb_queue_share(&a, &d) == 1.0);
}

static void waiting_gang_lacks_gpus_by_requests_alone(void **state)
{
	fixture *f = *state;
	int32_t j = kb_snapshot_find_job(&f->s, "d/big");
	assert_true(j >= 0);
	assert_true(kb_job_waiting(&f->s.jobs[j]));
	kb_shortfall sf;
	assert_int_equal(kb_job_shortfall(&f->s, (uint32_t)j, &sf), 0);
	int gpu = f->s.gpu_res;
	assert_int_equal(sf.needed, 2);
	assert_int_equal(sf.pending, 2);
	assert_int_equal(sf.fit, 1);             /* one 4-replica pod fits on ts (5 left) */
	assert_int_equal(sf.nodes_with_room, 1); /* ts only */
	assert_int_equal(sf.need.q[gpu], 4000);  /* the other pod */
	/* left: ex 1.9, ts 1: 1.1 short */
	assert_int_equal(sf.missing.q[gpu], 1100);
	assert_int_equal(sf.short_res, gpu);
}

static void running_jobs_do_not_wait(void **state)
{
	fixture *f = *state;
	int32_t j = kb_snapshot_find_job(&f->s, "d/whole");
	assert_true(j >= 0);
	assert_false(kb_job_waiting(&f->s.jobs[j]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_columns_align_to_the_widest_cell),
		cmocka_unit_test(table_needs_columns),
		cmocka_unit_test(ages_print_as_kubectl_does),
		cmocka_unit_test(percent_has_one_decimal),
		cmocka_unit_test_setup_teardown(arena_counts_whole_gpus_and_kube_batchd_the_share_too,
						setup, teardown),
		cmocka_unit_test_setup_teardown(time_sliced_node_counts_replicas_and_its_gpus, setup,
						teardown),
		cmocka_unit_test_setup_teardown(gpushare_node_counts_devices_holding_a_pod, setup,
						teardown),
		cmocka_unit_test(share_is_the_largest_ratio_as_volcano_computes_it),
		cmocka_unit_test_setup_teardown(waiting_gang_lacks_gpus_by_requests_alone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(running_jobs_do_not_wait, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_manifest.c - decoding Kubernetes objects (cache/objects.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <malloc.h>
#include <unistd.h>

#include "cache/cluster.h"
#include "cache/manifests.h"
#include "cache/objects.h"
#include "plugins/vgpu.h"
#include "scheduler/simulate.h"

static kb_resnames names;

/* Loads yaml (one document) as "t.yaml" and decodes it with `source`. The
 * file is released before returning, so the object must own its strings. */
static int decode_src(const char *yaml, const char *source, kb_object **ret, kb_err *err)
{
	kb_yaml_file f;
	kb_err lerr = {0};
	int r = kb_yaml_load_buffer(yaml, strlen(yaml), "t.yaml", &f, &lerr);
	if (r < 0)
		fail_msg("yaml: %s", lerr.msg);
	assert_int_equal(f.ndocs, 1);
	memset(err, 0, sizeof(*err));
	*ret = NULL;
	r = kb_object_decode(f.docs[0], source, &names, ret, err);
	kb_yaml_file_release(&f);
	if (r < 0) {
		assert_null(*ret);
		assert_int_equal(err->code, r);
	} else {
		assert_non_null(*ret);
	}
	return r;
}

static kb_object *decode_ok(const char *yaml)
{
	kb_object *o;
	kb_err err;
	int r = decode_src(yaml, "t.yaml", &o, &err);
	if (r < 0)
		fail_msg("unexpected error: %s", err.msg);
	return o;
}

/* Decoding must fail with -EINVAL and exactly this message. */
static void expect_error(const char *yaml, const char *msg)
{
	kb_object *o;
	kb_err err;
	int r = decode_src(yaml, "t.yaml", &o, &err);
	if (r == 0)
		fail_msg("decoded, wanted error: %s", msg);
	assert_int_equal(r, -EINVAL);
	assert_string_equal(err.msg, msg);
}

static int setup(void **state)
{
	kb_resnames_init(&names);
	return 0;
}

static int64_t res(const kb_res *r, const char *name)
{
	int i = kb_resnames_find(&names, name);
	return i < 0 ? 0 : r->q[i];
}

#define GI ((int64_t)1 << 30)

/* ---- metadata -------------------------------------------------------------- */

static void namespace_is_cluster_scoped_meta_only(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\n"
				 "kind: Namespace\n"
				 "metadata:\n"
				 "  name: team-a\n"
				 "  namespace: ignored\n"
				 "  labels: {b: \"2\", a: \"1\", c: \"\"}\n"
				 "  annotations: {x: y}\n"
				 "  uid: 1234-abcd\n"
				 "  resourceVersion: \"77\"\n"
				 "  creationTimestamp: 2024-01-02T03:04:05Z\n");
	assert_int_equal(o->kind, KB_KIND_NAMESPACE);
	assert_string_equal(o->kind_name, "Namespace");
	assert_string_equal(o->api_version, "v1");
	assert_string_equal(o->meta.name, "team-a");
	assert_string_equal(o->meta.ns, "");
	assert_string_equal(o->meta.key, "team-a");
	assert_string_equal(o->meta.uid, "1234-abcd");
	assert_string_equal(o->meta.resource_version, "77");
	assert_int_equal(o->meta.creation_ms, 1704164645000LL);
	assert_false(o->meta.deleting);
	assert_int_equal(o->meta.line, 1);
	assert_int_equal(o->meta.col, 1);
	assert_int_equal(o->meta.labels.n, 3);
	assert_string_equal(o->meta.labels.v[0].key, "a");
	assert_string_equal(o->meta.labels.v[1].key, "b");
	assert_string_equal(o->meta.labels.v[2].key, "c");
	assert_string_equal(kb_labels_get(&o->meta.labels, "b"), "2");
	assert_string_equal(kb_labels_get(&o->meta.labels, "c"), "");
	assert_null(kb_labels_get(&o->meta.labels, "d"));
	assert_null(kb_labels_get(&o->meta.labels, "0"));
	assert_string_equal(kb_labels_get(&o->meta.annotations, "x"), "y");
	kb_object_free(o);
}

static void meta_defaults_namespace_uid_and_timestamps(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\n"
				 "kind: Pod\n"
				 "metadata:\n"
				 "  name: p\n"
				 "  creationTimestamp: \"2024-02-29T23:59:59.1234Z\"\n"
				 "  deletionTimestamp: 2024-03-01T00:00:00+01:00\n"
				 "spec: {containers: [{name: c}]}\n");
	assert_string_equal(o->meta.ns, "default");
	assert_string_equal(o->meta.key, "default/p");
	assert_string_equal(o->meta.uid, "Pod/default/p");
	assert_string_equal(o->meta.resource_version, "");
	/* 2024-02-29T23:59:59Z = 1709251199 */
	assert_int_equal(o->meta.creation_ms, 1709251199123LL);
	assert_true(o->meta.deleting);
	assert_int_equal(o->meta.labels.n, 0);
	kb_object_free(o);

	o = decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n1, namespace: x}\n");
	assert_string_equal(o->meta.uid, "Node//n1");
	assert_string_equal(o->meta.key, "n1");
	assert_int_equal(o->meta.creation_ms, 0);
	kb_object_free(o);
}

static void unknown_kind_is_other_with_meta(void **state)
{
	kb_object *o = decode_ok("apiVersion: apps/v1\n"
				 "kind: Deployment\n"
				 "metadata: {name: d, namespace: ns1}\n"
				 "spec: {replicas: 3}\n");
	assert_int_equal(o->kind, KB_KIND_OTHER);
	assert_string_equal(o->kind_name, "Deployment");
	assert_string_equal(o->meta.key, "ns1/d");
	kb_object_free(o);
	/* A Pod of another API group is not a Pod. */
	o = decode_ok("apiVersion: example.com/v1\nkind: Pod\nmetadata: {name: x}\n");
	assert_int_equal(o->kind, KB_KIND_OTHER);
	kb_object_free(o);
}

static void meta_errors_name_field_and_position(void **state)
{
	expect_error("- a\n- b\n", "object: document: expected a mapping, got a list (t.yaml:1:1)");
	expect_error("kind: Pod\nmetadata: {name: p}\n", "object: apiVersion: required (t.yaml:1:1)");
	expect_error("apiVersion: v1\nmetadata: {name: p}\n", "object: kind: required (t.yaml:1:1)");
	expect_error("apiVersion: v1\nkind: Pod\n", "Pod: metadata: required (t.yaml:1:1)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n",
		     "Pod: metadata.name: required (t.yaml:3:11)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		     "  creationTimestamp: 2024-13-01T00:00:00Z\n",
		     "Pod \"default/p\": metadata.creationTimestamp: bad timestamp "
		     "\"2024-13-01T00:00:00Z\" (want RFC 3339, e.g. 2024-01-02T03:04:05Z) "
		     "(t.yaml:5:22)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    a: [1]\n",
		     "Pod \"default/p\": metadata.labels.a: expected a string, got a list "
		     "(t.yaml:6:8)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: [x]}\n",
		     "Pod \"default/p\": metadata.annotations: expected a mapping, got a list "
		     "(t.yaml:3:34)");

	/* Without a source, no position. */
	kb_object *o;
	kb_err err;
	assert_int_equal(decode_src("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
				    "status: {allocatable: {cpu: 4x}}\n",
				    NULL, &o, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "Node \"n1\": status.allocatable.cpu: bad quantity \"4x\"");
}

static void bad_timestamps_are_refused(void **state)
{
	static const char *bad[] = {
		"2024-01-02", "2024-01-02T03:04:05", "2024-01-02 03:04:05Z",
		"2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-02T24:00:00Z",
		"2024-01-02T03:04:05.Z", "2024-01-02T03:04:05Zx", "2024-01-02T03:04:05+0100",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
			 "apiVersion: v1\nkind: Namespace\nmetadata: {name: n, "
			 "creationTimestamp: \"%s\"}\n",
			 bad[i]);
		kb_object *o;
		kb_err err;
		assert_int_equal(decode_src(buf, "t.yaml", &o, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "metadata.creationTimestamp: bad timestamp"));
	}
}

/* ---- Node ------------------------------------------------------------------ */

static void node_decodes_allocatable_taints_gpus(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\n"
				 "kind: Node\n"
				 "metadata:\n"
				 "  name: gpu-1\n"
				 "  labels: {nvidia.com/gpu.product: A100}\n"
				 "  annotations: {kube-batchd.io/gpu-topology: \"0,1,2,3;4,5,6,7\"}\n"
				 "spec:\n"
				 "  unschedulable: true\n"
				 "  taints:\n"
				 "  - {key: gpu, value: \"yes\", effect: NoSchedule}\n"
				 "  - {key: spot, effect: PreferNoSchedule}\n"
				 "  - {key: bad, effect: NoExecute}\n"
				 "status:\n"
				 "  capacity: {cpu: 64}\n"
				 "  allocatable: {cpu: 63500m, memory: 256Gi, nvidia.com/gpu: 8}\n"
				 "  conditions:\n"
				 "  - {type: MemoryPressure, status: \"False\"}\n"
				 "  - {type: Ready, status: \"True\"}\n");
	kb_node_obj *n = &o->u.node;
	assert_int_equal(o->kind, KB_KIND_NODE);
	assert_int_equal(n->allocatable.q[KB_RES_CPU], 63500);
	assert_int_equal(n->allocatable.q[KB_RES_MEMORY], 256 * GI * 1000);
	assert_int_equal(n->allocatable.q[KB_RES_PODS], 110000);
	assert_int_equal(res(&n->allocatable, "nvidia.com/gpu"), 8000);
	assert_int_equal(n->ngpus, 8);
	assert_string_equal(n->gpu_model, "A100");
	assert_non_null(n->gpu_group);
	for (int i = 0; i < 8; i++)
		assert_int_equal(n->gpu_group[i], i / 4);
	assert_true(n->unschedulable);
	assert_true(n->ready);
	assert_int_equal(n->ntaints, 3);
	assert_string_equal(n->taints[0].key, "gpu");
	assert_string_equal(n->taints[0].value, "yes");
	assert_int_equal(n->taints[0].effect, KB_EFFECT_NO_SCHEDULE);
	assert_string_equal(n->taints[1].value, "");
	assert_int_equal(n->taints[1].effect, KB_EFFECT_PREFER_NO_SCHEDULE);
	assert_int_equal(n->taints[2].effect, KB_EFFECT_NO_EXECUTE);
	kb_object_free(o);
}

/* GPU Feature Discovery's sharing labels and Alibaba's gpushare count. */
static void node_gpu_sharing_modes(void **state)
{
	(void)state;
	kb_object *o = decode_ok("apiVersion: v1\nkind: Node\nmetadata:\n  name: ts\n  labels:\n"
				 "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-SHARED\n"
				 "    nvidia.com/gpu.count: \"8\"\n"
				 "    nvidia.com/gpu.replicas: \"10\"\n"
				 "    nvidia.com/gpu.sharing-strategy: time-slicing\n"
				 "status: {allocatable: {nvidia.com/gpu: 80}}\n");
	assert_int_equal(o->u.node.ngpus, 8);
	assert_int_equal(o->u.node.gpu_replicas, 10);
	assert_int_equal(o->u.node.gpu_sharing, KB_GPU_SHARING_TIME_SLICING);
	assert_string_equal(o->u.node.gpu_model, "NVIDIA-A100-SXM4-80GB");
	kb_object_free(o);
	/* A dedicated node keeps a product name that ends like GFD's suffix. */
	o = decode_ok("apiVersion: v1\nkind: Node\nmetadata:\n  name: d\n  labels:\n"
		      "    nvidia.com/gpu.product: X-SHARED\n    nvidia.com/gpu.sharing-strategy: mps\n"
		      "status: {allocatable: {nvidia.com/gpu: 2}}\n");
	assert_int_equal(o->u.node.ngpus, 2);
	assert_int_equal(o->u.node.gpu_replicas, 1);
	assert_int_equal(o->u.node.gpu_sharing, KB_GPU_SHARING_MPS);
	assert_string_equal(o->u.node.gpu_model, "X-SHARED");
	kb_object_free(o);
	/* gpushare: the count from the allocatable, else the capacity. */
	o = decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: g}\n"
		      "status: {capacity: {aliyun.com/gpu-count: 4}, allocatable: {aliyun.com/gpu-mem: 64}}\n");
	assert_int_equal(o->u.node.gpushare_count, 4);
	assert_int_equal(o->u.node.ngpus, 0);
	kb_object_free(o);
	expect_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n"
		     "    nvidia.com/gpu.replicas: \"3\"\n"
		     "status: {allocatable: {nvidia.com/gpu: 8}}\n",
		     "Node \"n1\": metadata.labels.nvidia.com/gpu.replicas: 3 does not divide "
		     "status.allocatable.nvidia.com/gpu 8 (each GPU is advertised as that many "
		     "nvidia.com/gpu) (t.yaml:6:30)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n"
		     "    nvidia.com/gpu.replicas: \"0\"\n",
		     "Node \"n1\": metadata.labels.nvidia.com/gpu.replicas: want a whole number "
		     "1..1000000, got \"0\" (t.yaml:6:30)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n"
		     "    nvidia.com/gpu.sharing-strategy: slices\n",
		     "Node \"n1\": metadata.labels.nvidia.com/gpu.sharing-strategy: want none, "
		     "time-slicing or mps, got \"slices\" (t.yaml:6:38)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n"
		     "    nvidia.com/gpu.count: \"1\"\n    nvidia.com/gpu.replicas: \"4\"\n"
		     "status: {allocatable: {nvidia.com/gpu: 8}}\n",
		     "Node \"n1\": metadata.labels.nvidia.com/gpu.count: 1 GPUs, but "
		     "status.allocatable.nvidia.com/gpu 8 is 2 GPUs of 4 replicas (t.yaml:6:27)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "status: {allocatable: {aliyun.com/gpu-count: 1500m}}\n",
		     "Node \"n1\": status.allocatable.aliyun.com/gpu-count: want a whole number of "
		     "GPUs 0..32, got \"1500m\" (t.yaml:4:46)");
}

static void node_capacity_fallback_pods_and_readiness(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
				 "status: {capacity: {cpu: 4, pods: 32}}\n");
	assert_int_equal(o->u.node.allocatable.q[KB_RES_CPU], 4000);
	assert_int_equal(o->u.node.allocatable.q[KB_RES_PODS], 32000);
	assert_true(o->u.node.ready); /* no conditions */
	assert_int_equal(o->u.node.ngpus, 0);
	assert_null(o->u.node.gpu_model);
	assert_null(o->u.node.gpu_group);
	assert_false(o->u.node.unschedulable);
	kb_object_free(o);

	o = decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
		      "status: {conditions: [{type: Ready, status: \"False\"}]}\n");
	assert_false(o->u.node.ready);
	assert_int_equal(o->u.node.allocatable.q[KB_RES_PODS], 110000);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
		      "status: {conditions: [{type: Ready, status: Unknown}]}\n");
	assert_false(o->u.node.ready);
	kb_object_free(o);
}

static void node_errors(void **state)
{
	expect_error("apiVersion: v1\n"
		     "kind: Node\n"
		     "metadata: {name: n1}\n"
		     "status:\n"
		     "  allocatable:\n"
		     "    cpu: 4x\n",
		     "Node \"n1\": status.allocatable.cpu: bad quantity \"4x\" (t.yaml:6:10)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "status: {capacity: {memory: -1Gi}}\n",
		     "Node \"n1\": status.capacity.memory: must not be negative, got \"-1Gi\" "
		     "(t.yaml:4:29)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "spec: {taints: [{key: k, effect: NoWay}]}\n",
		     "Node \"n1\": spec.taints[0].effect: unknown effect \"NoWay\" (want "
		     "NoSchedule, PreferNoSchedule or NoExecute) (t.yaml:4:34)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "spec: {taints: [{key: k}]}\n",
		     "Node \"n1\": spec.taints[0].effect: required (NoSchedule, "
		     "PreferNoSchedule or NoExecute) (t.yaml:4:17)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "status: {allocatable: {nvidia.com/gpu: 1500m}}\n",
		     "Node \"n1\": status.allocatable.nvidia.com/gpu: must be a whole number of "
		     "GPUs, got \"1500m\" (t.yaml:4:40)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "status: {allocatable: {nvidia.com/gpu: 33}}\n",
		     "Node \"n1\": status.allocatable.nvidia.com/gpu: at most 32 GPUs per node, "
		     "got \"33\" (t.yaml:4:40)");
	expect_error("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		     "spec: {unschedulable: maybe}\n",
		     "Node \"n1\": spec.unschedulable: expected true or false, got \"maybe\" "
		     "(t.yaml:4:23)");
}

static void node_gpu_topology_must_cover_every_device_once(void **state)
{
	static const struct {
		const char *topo;
		const char *what;
	} bad[] = {
		{"0,1;2", "device 3 is in no group"},
		{"0,1;1,2,3", "device 1 appears twice"},
		{"0,1,2,3,4", "device 4 out of range (the node has 4 GPUs)"},
		{"0,1;;2,3", "bad topology \"0,1;;2,3\""},
		{"0,1;2,3;", "bad topology \"0,1;2,3;\""},
		{"0-3", "bad topology \"0-3\""},
		{"", "bad topology \"\""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf),
			 "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n"
			 "    kube-batchd.io/gpu-topology: \"%s\"\n"
			 "status: {allocatable: {nvidia.com/gpu: 4}}\n",
			 bad[i].topo);
		kb_object *o;
		kb_err err;
		assert_int_equal(decode_src(buf, "t.yaml", &o, &err), -EINVAL);
		char want[256];
		snprintf(want, sizeof(want),
			 "Node \"n1\": metadata.annotations.kube-batchd.io/gpu-topology: %s",
			 bad[i].what);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("topology \"%s\": got %s", bad[i].topo, err.msg);
		assert_non_null(strstr(err.msg, "(t.yaml:6:34)"));
	}
	/* No GPUs at all. */
	expect_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n"
		     "    kube-batchd.io/gpu-topology: \"0\"\n",
		     "Node \"n1\": metadata.annotations.kube-batchd.io/gpu-topology: the node has "
		     "no nvidia.com/gpu (t.yaml:6:34)");
	/* Groups in any order, spaces allowed. */
	kb_object *o = decode_ok("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
				 "  annotations: {kube-batchd.io/gpu-topology: \"3, 0; 2,1\"}\n"
				 "status: {allocatable: {nvidia.com/gpu: 4}}\n");
	assert_int_equal(o->u.node.gpu_group[0], 0);
	assert_int_equal(o->u.node.gpu_group[3], 0);
	assert_int_equal(o->u.node.gpu_group[1], 1);
	assert_int_equal(o->u.node.gpu_group[2], 1);
	kb_object_free(o);
}

/* ---- Pod ------------------------------------------------------------------- */

static void pod_defaults(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
				 "spec:\n  containers:\n  - name: c\n");
	kb_pod_obj *p = &o->u.pod;
	assert_int_equal(o->kind, KB_KIND_POD);
	assert_string_equal(o->meta.key, "ns/p");
	assert_string_equal(p->scheduler_name, "default-scheduler");
	assert_null(p->node_name);
	assert_int_equal(p->phase, KB_POD_PENDING);
	assert_false(p->has_priority);
	assert_null(p->priority_class_name);
	assert_null(p->group_name);
	assert_true(p->best_effort);
	assert_int_equal(p->req.q[KB_RES_PODS], 1000);
	assert_int_equal(p->req.q[KB_RES_CPU], 0);
	assert_int_equal(p->sim_arrival_ms, 0);
	assert_int_equal(p->sim_duration_ms, -1);
	assert_null(p->gpu_devices);
	assert_int_equal(p->spec.nrequired + p->spec.npreferred + p->spec.ntolerations +
				 p->spec.nhost_ports + p->spec.node_selector.n,
			 0);
	assert_null(p->spec.gpu_models);
	assert_int_equal(p->spec.gpu_milli, 0);
	kb_object_free(o);
}

static void pod_fields(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\n"
				 "metadata: {name: p, labels: {app: x}}\n"
				 "spec:\n"
				 "  schedulerName: kube-batchd\n"
				 "  nodeName: n1\n"
				 "  priority: -5\n"
				 "  priorityClassName: high\n"
				 "  containers: [{name: c}]\n"
				 "status: {phase: Running}\n");
	kb_pod_obj *p = &o->u.pod;
	assert_string_equal(p->scheduler_name, "kube-batchd");
	assert_string_equal(p->node_name, "n1");
	assert_true(p->has_priority);
	assert_int_equal(p->priority, -5);
	assert_string_equal(p->priority_class_name, "high");
	assert_int_equal(p->phase, KB_POD_RUNNING);
	assert_string_equal(kb_labels_get(&p->spec.labels, "app"), "x");
	kb_object_free(o);

	static const struct {
		const char *s;
		kb_pod_phase ph;
	} phases[] = {{"Pending", KB_POD_PENDING},
		      {"Succeeded", KB_POD_SUCCEEDED},
		      {"Failed", KB_POD_FAILED},
		      {"Unknown", KB_POD_UNKNOWN}};
	for (size_t i = 0; i < 4; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
			 "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: %s}\n",
			 phases[i].s);
		o = decode_ok(buf);
		assert_int_equal(o->u.pod.phase, phases[i].ph);
		kb_object_free(o);
	}
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Lost}\n",
		     "Pod \"default/p\": status.phase: unknown phase \"Lost\" (want Pending, "
		     "Running, Succeeded, Failed or Unknown) (t.yaml:4:17)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: 2147483648}\n",
		     "Pod \"default/p\": spec.priority: out of range [-2147483648, 2147483647], "
		     "got \"2147483648\" (t.yaml:4:18)");
}

static void pod_requests_limits_init_overhead(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				 "spec:\n"
				 "  overhead: {cpu: 100m, memory: 10Mi}\n"
				 "  initContainers:\n"
				 "  - name: i1\n"
				 "    resources: {requests: {cpu: \"3\", memory: 1Gi}}\n"
				 "  - name: i2\n"
				 "    resources: {limits: {memory: 8Gi, example.com/fpga: 1}}\n"
				 "  containers:\n"
				 "  - name: a\n"
				 "    resources:\n"
				 "      requests: {cpu: 500m}\n"
				 "      limits: {cpu: \"1\", memory: 2Gi}\n"
				 "  - name: b\n"
				 "    resources: {requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 2}}\n");
	kb_pod_obj *p = &o->u.pod;
	/* containers: cpu 0.5 + 1 = 1.5 (a's limit does not replace its request),
	 * memory 2Gi (limit) + 1Gi = 3Gi; init: cpu max 3, memory max 8Gi,
	 * fpga 1; then + overhead. */
	assert_int_equal(p->req.q[KB_RES_CPU], 3100);
	assert_int_equal(p->req.q[KB_RES_MEMORY], (8 * GI + 10 * (GI >> 10)) * 1000);
	assert_int_equal(res(&p->req, "example.com/fpga"), 1000);
	assert_int_equal(res(&p->req, "nvidia.com/gpu"), 2000);
	assert_int_equal(p->req.q[KB_RES_PODS], 1000);
	assert_false(p->best_effort);
	kb_object_free(o);

	/* Containers dominate when larger than any init container. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec:\n"
		      "  initContainers: [{name: i, resources: {requests: {cpu: 1}}}]\n"
		      "  containers:\n"
		      "  - {name: a, resources: {requests: {cpu: 1}}}\n"
		      "  - {name: b, resources: {requests: {cpu: 1}}}\n");
	assert_int_equal(o->u.pod.req.q[KB_RES_CPU], 2000);
	kb_object_free(o);
}

static void pod_sidecars_add_to_the_containers(void **state)
{
	/* k8s: sidecar s (restartPolicy Always) runs beside later init
	 * containers and the main ones: max(1 + 2, 1 + 4) = 5 cpu. */
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				 "spec:\n"
				 "  initContainers:\n"
				 "  - {name: s, restartPolicy: Always, resources: {requests: {cpu: 1}}}\n"
				 "  - {name: i, resources: {requests: {cpu: 4}}}\n"
				 "  containers:\n"
				 "  - {name: a, resources: {requests: {cpu: 2}}}\n");
	assert_int_equal(o->u.pod.req.q[KB_RES_CPU], 5000);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec:\n"
		      "  initContainers:\n"
		      "  - {name: s, restartPolicy: Always, resources: {requests: {cpu: 1}}}\n"
		      "  containers:\n"
		      "  - {name: a, resources: {requests: {cpu: 2}}}\n");
	assert_int_equal(o->u.pod.req.q[KB_RES_CPU], 3000);
	kb_object_free(o);
}

static void pod_best_effort_means_nothing_but_pods(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				 "spec: {containers: [{name: a, resources: {requests: {cpu: 0}}}]}\n");
	assert_true(o->u.pod.best_effort);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: a, resources: {limits: {memory: 1Mi}}}]}\n");
	assert_false(o->u.pod.best_effort);
	assert_int_equal(o->u.pod.req.q[KB_RES_MEMORY], (1 << 20) * 1000LL);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {overhead: {cpu: 10m}, containers: [{name: a}]}\n");
	assert_false(o->u.pod.best_effort);
	kb_object_free(o);
}

static void pod_request_errors(void **state)
{
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
		     "spec:\n"
		     "  containers:\n"
		     "  - name: a\n"
		     "  - name: b\n"
		     "    resources:\n"
		     "      requests:\n"
		     "        cpu: 1x\n",
		     "Pod \"ns/p\": spec.containers[1].resources.requests.cpu: bad quantity \"1x\" "
		     "(t.yaml:10:14)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {initContainers: [{name: i, resources: {limits: {cpu: -1}}}]}\n",
		     "Pod \"default/p\": spec.initContainers[0].resources.limits.cpu: must not be "
		     "negative, got \"-1\" (t.yaml:4:61)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {overhead: {cpu: [1]}}\n",
		     "Pod \"default/p\": spec.overhead.cpu: expected a quantity, got a list "
		     "(t.yaml:4:24)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {containers: {name: a}}\n",
		     "Pod \"default/p\": spec.containers: expected a list, got a mapping "
		     "(t.yaml:4:20)");
	/* Sums that do not fit in 64 bits. */
	kb_object *o;
	kb_err err;
	assert_int_equal(decode_src("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
				    "  containers:\n"
				    "  - {name: a, resources: {requests: {memory: 5Pi}}}\n"
				    "  - {name: b, resources: {requests: {memory: 5Pi}}}\n",
				    "t.yaml", &o, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "spec.containers[1]: requests too large in total"));
}

static void pod_group_link_precedence(void **state)
{
	static const struct {
		const char *meta;
		const char *want;
	} cases[] = {
		{"annotations: {scheduling.k8s.io/group-name: a, "
		 "scheduling.volcano.sh/group-name: b}, "
		 "labels: {scheduling.x-k8s.io/pod-group: c, pod-group.scheduling.sigs.k8s.io: d}",
		 "a"},
		{"annotations: {scheduling.volcano.sh/group-name: b}, "
		 "labels: {scheduling.x-k8s.io/pod-group: c, pod-group.scheduling.sigs.k8s.io: d}",
		 "b"},
		{"labels: {scheduling.x-k8s.io/pod-group: c, pod-group.scheduling.sigs.k8s.io: d}",
		 "c"},
		{"labels: {pod-group.scheduling.sigs.k8s.io: d}", "d"},
		{"annotations: {scheduling.k8s.io/group-name: \"\"}, "
		 "labels: {pod-group.scheduling.sigs.k8s.io: d}",
		 "d"},
		{"labels: {app: x}", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "apiVersion: v1\nkind: Pod\nmetadata: {name: p, %s}\n",
			 cases[i].meta);
		kb_object *o = decode_ok(buf);
		if (cases[i].want)
			assert_string_equal(o->u.pod.group_name, cases[i].want);
		else
			assert_null(o->u.pod.group_name);
		kb_object_free(o);
	}
}

/* Issue 15's inputs: preemptionPolicy (pod and PriorityClass), volcano's
 * preemptable key (label or annotation, false wins) and task role, and a
 * PodGroup's minTaskMember (sorted by role). */
static void pod_preemption_controls(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
	assert_int_equal(o->u.pod.preemption_policy, KB_PREEMPTION_UNSET);
	assert_true(o->u.pod.preemptable);
	assert_null(o->u.pod.task_role);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\n"
		      "metadata: {name: p, labels: {volcano.sh/preemptable: \"true\"},\n"
		      "  annotations: {volcano.sh/preemptable: \"false\", volcano.sh/task-spec: ps}}\n"
		      "spec: {preemptionPolicy: Never}\n");
	assert_int_equal(o->u.pod.preemption_policy, KB_PREEMPTION_NEVER);
	assert_false(o->u.pod.preemptable);
	assert_string_equal(o->u.pod.task_role, "ps");
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {preemptionPolicy: PreemptLowerPriority}\n");
	assert_int_equal(o->u.pod.preemption_policy, KB_PREEMPTION_LOWER_PRIORITY);
	kb_object_free(o);
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {preemptionPolicy: Sometimes}\n",
		     "Pod \"default/p\": spec.preemptionPolicy: want PreemptLowerPriority or Never, "
		     "got \"Sometimes\" (t.yaml:4:26)");
	expect_error("apiVersion: v1\nkind: Pod\n"
		     "metadata: {name: p, annotations: {volcano.sh/preemptable: maybe}}\n",
		     "Pod \"default/p\": metadata.annotations.volcano.sh/preemptable: want \"true\" "
		     "or \"false\", got \"maybe\" (t.yaml:3:59)");
	o = decode_ok("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		      "metadata: {name: hi}\nvalue: 10\npreemptionPolicy: Never\n");
	assert_int_equal(o->u.priority_class.preemption_policy, KB_PREEMPTION_NEVER);
	kb_object_free(o);
}

static void podgroup_min_task_member(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
				 "metadata: {name: g}\n"
				 "spec: {minMember: 3, minTaskMember: {worker: 2, ps: 1}}\n");
	const kb_podgroup_obj *pg = &o->u.podgroup;
	assert_int_equal(pg->nmin_task_member, 2);
	assert_string_equal(pg->min_task_member[0].role, "ps");
	assert_int_equal(pg->min_task_member[0].min, 1);
	assert_string_equal(pg->min_task_member[1].role, "worker");
	assert_int_equal(pg->min_task_member[1].min, 2);
	kb_object_free(o);
	expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		     "metadata: {name: g}\nspec: {minTaskMember: {worker: -1}}\n",
		     "PodGroup \"default/g\": spec.minTaskMember.worker: out of range "
		     "[0, 2147483647], got \"-1\" (t.yaml:4:32)");
}

static void pod_sim_annotations_are_exact_seconds(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
				 "  annotations:\n"
				 "    sim.kube-batchd.io/arrival: \"1.5\"\n"
				 "    sim.kube-batchd.io/duration: \"3600\"\n");
	assert_int_equal(o->u.pod.sim_arrival_ms, 1500);
	assert_int_equal(o->u.pod.sim_duration_ms, 3600000);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		      "  annotations: {sim.kube-batchd.io/duration: \"0.001\"}\n");
	assert_int_equal(o->u.pod.sim_arrival_ms, 0);
	assert_int_equal(o->u.pod.sim_duration_ms, 1);
	kb_object_free(o);

	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		     "  annotations:\n"
		     "    sim.kube-batchd.io/arrival: \"-1\"\n",
		     "Pod \"default/p\": metadata.annotations.sim.kube-batchd.io/arrival: want a "
		     "non-negative number of seconds (e.g. \"1.5\"), got \"-1\" (t.yaml:6:33)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		     "  annotations:\n"
		     "    sim.kube-batchd.io/duration: 10s\n",
		     "Pod \"default/p\": metadata.annotations.sim.kube-batchd.io/duration: want a "
		     "non-negative number of seconds (e.g. \"1.5\"), got \"10s\" (t.yaml:6:34)");
}

static void pod_gpu_annotations(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
				 "  annotations:\n"
				 "    kube-batchd.io/gpu-models: V100|A100\n"
				 "    kube-batchd.io/gpu-milli: \"500\"\n"
				 "    kube-batchd.io/gpu-devices: \"3\"\n"
				 "spec:\n  containers:\n"
				 "  - {name: a, resources: {limits: {nvidia.com/gpu: 1}}}\n");
	kb_pod_obj *p = &o->u.pod;
	assert_string_equal(p->spec.gpu_models, "V100|A100");
	assert_int_equal(p->spec.gpu_milli, 500);
	/* What the kubelet counts: the whole GPU asked for, whatever the share. */
	assert_int_equal(res(&p->req, "nvidia.com/gpu"), 1000);
	assert_int_equal(p->ngpu_devices, 1);
	assert_int_equal(p->gpu_devices[0], 3);
	assert_false(p->best_effort);
	kb_object_free(o);

	/* A share without asking for the GPU resource at all. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		      "  annotations: {kube-batchd.io/gpu-milli: \"250\", "
		      "kube-batchd.io/gpu-devices: \"0, 7\"}\n");
	assert_int_equal(o->u.pod.spec.gpu_milli, 250);
	assert_int_equal(res(&o->u.pod.req, "nvidia.com/gpu"), 0); /* the kubelet counts none */
	assert_false(o->u.pod.best_effort);                         /* a share is a request */
	assert_int_equal(o->u.pod.ngpu_devices, 2);
	assert_int_equal(o->u.pod.gpu_devices[1], 7);
	kb_object_free(o);

	static const char *bad_milli[] = {"0", "1000", "abc", "", "-5", "50.5"};
	for (size_t i = 0; i < sizeof(bad_milli) / sizeof(bad_milli[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
			 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
			 "    kube-batchd.io/gpu-milli: \"%s\"\n",
			 bad_milli[i]);
		char want[256];
		snprintf(want, sizeof(want),
			 "Pod \"default/p\": metadata.annotations.kube-batchd.io/gpu-milli: want "
			 "an integer 1..999 (milli-GPU of one GPU), got \"%s\" (t.yaml:6:31)",
			 bad_milli[i]);
		expect_error(buf, want);
	}
	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
		     "    kube-batchd.io/gpu-milli: \"500\"\n"
		     "spec: {containers: [{name: a, resources: {requests: {nvidia.com/gpu: 2}}}]}\n",
		     "Pod \"default/p\": metadata.annotations.kube-batchd.io/gpu-milli: a pod "
		     "sharing a GPU must ask for 1 nvidia.com/gpu or none, it asks for 2000 "
		     "milli-GPU (t.yaml:6:31)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
		     "    kube-batchd.io/gpu-models: \"\"\n",
		     "Pod \"default/p\": metadata.annotations.kube-batchd.io/gpu-models: must not "
		     "be empty (want models like \"V100|A100\") (t.yaml:6:32)");
	static const char *bad_devs[] = {"0,0", "32", "a", "0,", "1;2"};
	for (size_t i = 0; i < sizeof(bad_devs) / sizeof(bad_devs[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
			 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
			 "    kube-batchd.io/gpu-devices: \"%s\"\n",
			 bad_devs[i]);
		kb_object *x;
		kb_err err;
		assert_int_equal(decode_src(buf, "t.yaml", &x, &err), -EINVAL);
		assert_non_null(
			strstr(err.msg, "metadata.annotations.kube-batchd.io/gpu-devices: want "
					"distinct device indices"));
	}
}

static void pod_node_selector_and_affinity(void **state)
{
	kb_object *o = decode_ok(
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		"spec:\n"
		"  nodeSelector: {zone: b, disk: ssd}\n"
		"  affinity:\n"
		"    podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: []}\n"
		"    nodeAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"        nodeSelectorTerms:\n"
		"        - matchExpressions:\n"
		"          - {key: a, operator: In, values: [x, y]}\n"
		"          - {key: b, operator: NotIn, values: [z]}\n"
		"          - {key: c, operator: Exists}\n"
		"          - {key: d, operator: DoesNotExist}\n"
		"          - {key: e, operator: Gt, values: [\"3\"]}\n"
		"          - {key: f, operator: Lt, values: [\"10\"]}\n"
		"          matchFields:\n"
		"          - {key: metadata.name, operator: In, values: [n1]}\n"
		"        - matchFields:\n"
		"          - {key: metadata.name, operator: NotIn, values: [n2]}\n"
		"      preferredDuringSchedulingIgnoredDuringExecution:\n"
		"      - weight: 100\n"
		"        preference:\n"
		"          matchExpressions: [{key: g, operator: In, values: [v]}]\n"
		"      - weight: 1\n"
		"        preference: {}\n");
	kb_pod_spec *s = &o->u.pod.spec;
	assert_int_equal(s->node_selector.n, 2);
	assert_string_equal(s->node_selector.v[0].key, "disk");
	assert_string_equal(kb_labels_get(&s->node_selector, "zone"), "b");
	assert_int_equal(s->nrequired, 2);
	const kb_selector_term *t = &s->required[0];
	assert_int_equal(t->n, 7);
	assert_string_equal(t->reqs[0].key, "a");
	assert_int_equal(t->reqs[0].op, KB_SEL_IN);
	assert_int_equal(t->reqs[0].nvalues, 2);
	assert_string_equal(t->reqs[0].values[1], "y");
	assert_false(t->reqs[0].field);
	assert_int_equal(t->reqs[1].op, KB_SEL_NOT_IN);
	assert_int_equal(t->reqs[2].op, KB_SEL_EXISTS);
	assert_int_equal(t->reqs[2].nvalues, 0);
	assert_int_equal(t->reqs[3].op, KB_SEL_DOES_NOT_EXIST);
	assert_int_equal(t->reqs[4].op, KB_SEL_GT);
	assert_string_equal(t->reqs[4].values[0], "3");
	assert_int_equal(t->reqs[5].op, KB_SEL_LT);
	assert_true(t->reqs[6].field);
	assert_string_equal(t->reqs[6].key, "metadata.name");
	assert_string_equal(t->reqs[6].values[0], "n1");
	assert_int_equal(s->required[1].n, 1);
	assert_int_equal(s->required[1].reqs[0].op, KB_SEL_NOT_IN);
	assert_int_equal(s->npreferred, 2);
	assert_int_equal(s->preferred[0].weight, 100);
	assert_int_equal(s->preferred[0].term.n, 1);
	assert_string_equal(s->preferred[0].term.reqs[0].key, "g");
	assert_int_equal(s->preferred[1].weight, 1);
	assert_int_equal(s->preferred[1].term.n, 0);
	kb_object_free(o);
}

static void pod_affinity_errors(void **state)
{
	const char *head = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
			   "  affinity:\n    nodeAffinity:\n";
	static const struct {
		const char *body;
		const char *msg;
	} cases[] = {
		{"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		 "        nodeSelectorTerms:\n"
		 "        - matchExpressions: [{key: a, operator: Near, values: [x]}]\n",
		 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		 "nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator \"Near\" "
		 "(t.yaml:9:49)"},
		{"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		 "        nodeSelectorTerms:\n"
		 "        - matchExpressions: [{key: a, operator: In}]\n",
		 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		 "nodeSelectorTerms[0].matchExpressions[0].values: must be non-empty for operator "
		 "In or NotIn (t.yaml:9:30)"},
		{"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		 "        nodeSelectorTerms:\n"
		 "        - matchExpressions: [{key: a, operator: Gt, values: [x]}]\n",
		 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		 "nodeSelectorTerms[0].matchExpressions[0].values[0]: expected an integer, got "
		 "\"x\" (t.yaml:9:62)"},
		{"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		 "        nodeSelectorTerms:\n"
		 "        - matchFields: [{key: metadata.labels, operator: In, values: [x]}]\n",
		 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		 "nodeSelectorTerms[0].matchFields[0].key: unsupported field \"metadata.labels\" "
		 "(only metadata.name) (t.yaml:9:31)"},
		{"      preferredDuringSchedulingIgnoredDuringExecution:\n"
		 "      - {weight: 0, preference: {}}\n",
		 "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
		 "weight: out of range [1, 100], got \"0\" (t.yaml:8:18)"},
		{"      preferredDuringSchedulingIgnoredDuringExecution:\n"
		 "      - {weight: 101, preference: {}}\n",
		 "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
		 "weight: out of range [1, 100], got \"101\" (t.yaml:8:18)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[1024], want[1024];
		snprintf(buf, sizeof(buf), "%s%s", head, cases[i].body);
		snprintf(want, sizeof(want), "Pod \"default/p\": %s", cases[i].msg);
		expect_error(buf, want);
	}
}

static void pod_tolerations(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				 "spec:\n  tolerations:\n"
				 "  - {key: gpu, value: \"yes\", effect: NoSchedule}\n"
				 "  - {key: spot, operator: Exists}\n"
				 "  - {operator: Exists}\n"
				 "  - {key: x, operator: Equal, value: v, effect: NoExecute, "
				 "tolerationSeconds: 30}\n");
	kb_pod_spec *s = &o->u.pod.spec;
	assert_int_equal(s->ntolerations, 4);
	assert_string_equal(s->tolerations[0].key, "gpu");
	assert_string_equal(s->tolerations[0].value, "yes");
	assert_false(s->tolerations[0].exists);
	assert_int_equal(s->tolerations[0].effect, KB_EFFECT_NO_SCHEDULE);
	assert_true(s->tolerations[1].exists);
	assert_int_equal(s->tolerations[1].effect, KB_EFFECT_ALL);
	assert_string_equal(s->tolerations[2].key, "");
	assert_true(s->tolerations[2].exists);
	assert_int_equal(s->tolerations[3].effect, KB_EFFECT_NO_EXECUTE);
	kb_object_free(o);

	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {tolerations: [{key: a, operator: Like}]}\n",
		     "Pod \"default/p\": spec.tolerations[0].operator: unknown operator \"Like\" "
		     "(want Equal or Exists) (t.yaml:4:41)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {tolerations: [{key: a, effect: Sometimes}]}\n",
		     "Pod \"default/p\": spec.tolerations[0].effect: unknown effect \"Sometimes\" "
		     "(want NoSchedule, PreferNoSchedule or NoExecute) (t.yaml:4:39)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {tolerations: [{key: a, operator: Exists, value: v}]}\n",
		     "Pod \"default/p\": spec.tolerations[0].value: must be empty when the "
		     "operator is Exists (t.yaml:4:56)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {tolerations: [{value: v}]}\n",
		     "Pod \"default/p\": spec.tolerations[0].operator: must be Exists when the key "
		     "is empty (t.yaml:4:22)");
}

static void pod_host_ports(void **state)
{
	kb_object *o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				 "spec:\n"
				 "  initContainers: [{name: i, ports: [{hostPort: 9}]}]\n"
				 "  containers:\n"
				 "  - name: a\n"
				 "    ports:\n"
				 "    - {containerPort: 80}\n"
				 "    - {containerPort: 80, hostPort: 8080}\n"
				 "    - {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: "
				 "10.0.0.1}\n"
				 "  - name: b\n"
				 "    ports: [{hostPort: 9000, protocol: SCTP}]\n");
	kb_pod_spec *s = &o->u.pod.spec;
	assert_int_equal(s->nhost_ports, 3);
	assert_int_equal(s->host_ports[0].port, 8080);
	assert_int_equal(s->host_ports[0].proto, KB_PROTO_TCP);
	assert_string_equal(s->host_ports[0].ip, "");
	assert_int_equal(s->host_ports[1].port, 53);
	assert_int_equal(s->host_ports[1].proto, KB_PROTO_UDP);
	assert_string_equal(s->host_ports[1].ip, "10.0.0.1");
	assert_int_equal(s->host_ports[2].proto, KB_PROTO_SCTP);
	kb_object_free(o);

	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {containers: [{name: a, ports: [{hostPort: 70000}]}]}\n",
		     "Pod \"default/p\": spec.containers[0].ports[0].hostPort: out of range [0, "
		     "65535], got \"70000\" (t.yaml:4:50)");
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		     "spec: {containers: [{name: a, ports: [{hostPort: 1, protocol: QUIC}]}]}\n",
		     "Pod \"default/p\": spec.containers[0].ports[0].protocol: unknown protocol "
		     "\"QUIC\" (want TCP, UDP or SCTP) (t.yaml:4:63)");
}

/* ---- limits ---------------------------------------------------------------- */

/* head followed by n lines "<pre><i><post>". */
static char *pod_with_many(const char *head, const char *pre, const char *post, size_t n)
{
	size_t cap = strlen(head) + n * (strlen(pre) + strlen(post) + 24) + 1;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t off = (size_t)snprintf(buf, cap, "%s", head);
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%zu%s", pre, i, post);
	return buf;
}

static void size_limits_are_enforced(void **state)
{
	const char *head = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n";
	char *y = pod_with_many("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
				"  initContainers: [{name: i}]\n  containers:\n",
				"  - {name: c", "}\n", 1024);
	kb_object *o;
	kb_err err;
	assert_int_equal(decode_src(y, "t.yaml", &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "spec.containers: too many containers and init "
					"containers (1025, at most 1024)"));
	free(y);
	y = pod_with_many("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
			  "  containers:\n",
			  "  - {name: c", "}\n", 1024);
	o = decode_ok(y);
	kb_object_free(o);
	free(y);

	char h2[256];
	snprintf(h2, sizeof(h2), "%s  tolerations:\n", head);
	y = pod_with_many(h2, "  - {key: k", ", operator: Exists}\n", 1025);
	assert_int_equal(decode_src(y, "t.yaml", &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "spec.tolerations: too many items (1025, at most 1024)"));
	free(y);

	y = pod_with_many("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n",
			  "    l", ": v\n", 1025);
	assert_int_equal(decode_src(y, "t.yaml", &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "metadata.labels: too many entries (1025, at most 1024)"));
	free(y);
}

/* A node advertising n names example.com/<prefix><i>: 1, as YAML into y. */
static void node_with_names(char *y, size_t size, const char *prefix, int n)
{
	size_t off = (size_t)snprintf(y, size,
				      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
				      "status:\n  allocatable:\n");
	for (int i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(y + off, size - off, "    example.com/%s%d: 1\n", prefix, i);
}

static void resource_names_advertised_take_no_slot(void **state)
{
	kb_resnames saved = names;
	static char y[16384];
	/* More names than slots: a node of mixed MIG profiles and devices. */
	node_with_names(y, sizeof(y), "adv", 2 * KB_RES_MAX);
	kb_object *o = decode_ok(y);
	assert_int_equal(o->u.node.nextra, 2 * KB_RES_MAX);
	assert_int_equal(names.n, saved.n); /* no slot taken */
	int k = o->u.node.extra[KB_RES_MAX].known;
	assert_string_equal(names.known[k], "example.com/adv16");
	assert_int_equal(o->u.node.extra[KB_RES_MAX].milli, 1000);
	assert_int_equal(kb_resnames_known_slot(&names, k), -1);
	/* Asked for: given a slot, which the known name now maps to. */
	int slot = kb_resnames_intern(&names, "example.com/adv16");
	assert_true(slot >= KB_RES_NFIXED);
	assert_int_equal(kb_resnames_known_slot(&names, k), slot);
	kb_object_free(o);
	names = saved;
}

/* A pod whose one container asks 1 of example.com/<prefix><i> for i in
 * [from, to), as YAML into y. */
static void pod_asking(char *y, size_t size, const char *prefix, int from, int to)
{
	size_t off = (size_t)snprintf(y, size,
				      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
				      "spec: {containers: [{name: c, resources: {requests: {");
	for (int i = from; i < to && off < size; i++)
		off += (size_t)snprintf(y + off, size - off, "%sexample.com/%s%d: 1",
					i > from ? ", " : "", prefix, i);
	snprintf(y + off, size - off, "}}}]}\n");
}

static void resource_names_run_out_with_enospc(void **state)
{
	kb_resnames saved = names;
	static char y[16384];
	kb_object *o;
	kb_err err;
	node_with_names(y, sizeof(y), "r", KB_RES_KNOWN_MAX + 1);
	assert_int_equal(decode_src(y, "t.yaml", &o, &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "Node \"n1\": status.allocatable.example.com/r256: too "
					"many distinct resource names in the cluster (at most 16 "
					"with a slot and 256 without)"));
	names = saved;

	/* Slots taken by the first 13 names a pod asks for; then a pod asking
	 * KB_RES_SPILL_MAX + 1 names past them is refused, naming the limit
	 * and the names that hold the slots. */
	pod_asking(y, sizeof(y), "r", 0, KB_RES_MAX - KB_RES_NFIXED);
	kb_object_free(decode_ok(y));
	assert_int_equal(names.n, KB_RES_MAX);
	pod_asking(y, sizeof(y), "s", 0, KB_RES_SPILL_MAX + 1);
	assert_int_equal(decode_src(y, "t.yaml", &o, &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "Pod \"default/p\": spec.containers[0].resources.requests"
					".example.com/s16: too many resource names without a slot "
					"in one list (at most 16; the 16 slots are held by cpu, "
					"memory, pods and: example.com/r0, example.com/r1, "));
	assert_non_null(strstr(err.msg, "example.com/r12)"));

	/* The device names the GPU plugins find by slot need one. */
	static const char *const devices[] = {
		"nvidia.com/gpu",	  "aliyun.com/gpu-mem",	"aliyun.com/gpu-count",
		"volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-memory-percentage",
		"volcano.sh/vgpu-cores"};
	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		char pod[256], want[256];
		snprintf(pod, sizeof(pod),
			 "apiVersion: v1\nkind: Pod\nmetadata: {name: g}\n"
			 "spec: {containers: [{name: c, resources: {limits: {%s: 1}}}]}\n",
			 devices[i]);
		snprintf(want, sizeof(want),
			 "limits.%s: needs one of the 16 resource slots (cpu, memory and pods "
			 "included), and every one is held (by: example.com/r0, ",
			 devices[i]);
		assert_int_equal(decode_src(pod, "t.yaml", &o, &err), -ENOSPC);
		assert_non_null(strstr(err.msg, want));
	}

	/* So does a queue's capability: a queue's share counts slots only. */
	assert_int_equal(decode_src("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
				    "metadata: {name: q}\n"
				    "spec: {weight: 1, capability: {example.com/s0: 2}}\n",
				    "t.yaml", &o, &err),
			 -ENOSPC);
	assert_non_null(strstr(err.msg, "Queue \"q\": spec.capability.example.com/s0: needs one "
					"of the 16 resource slots"));
	names = saved;
}

/* Past the slots a name a pod asks for is spilled (api/resource.h): the
 * pod's asks in it follow the request rules (limits without a request,
 * sum of containers, max with init containers, overhead) in
 * spec.spill, and take no slot. */
static void resource_names_past_the_slots_spill(void **state)
{
	kb_resnames saved = names;
	static char y[16384];
	pod_asking(y, sizeof(y), "r", 0, KB_RES_MAX - KB_RES_NFIXED);
	kb_object_free(decode_ok(y));
	assert_int_equal(names.n, KB_RES_MAX);

	kb_object *o = decode_ok(
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		"spec:\n"
		"  overhead: {example.com/mig-c: 1}\n"
		"  initContainers:\n"
		"  - {name: i, resources: {requests: {example.com/mig-a: 5}}}\n"
		"  - {name: side, restartPolicy: Always,\n"
		"     resources: {requests: {example.com/mig-b: 1}}}\n"
		"  containers:\n"
		"  - {name: c1, resources: {requests: {cpu: 1, example.com/mig-a: 2},\n"
		"                           limits: {example.com/mig-b: 3}}}\n"
		"  - {name: c2, resources: {requests: {example.com/mig-a: 1,\n"
		"                                      example.com/zero: 0}}}\n");
	const kb_pod_spec *ps = &o->u.pod.spec;
	assert_int_equal(names.n, KB_RES_MAX); /* no slot taken */
	assert_int_equal(o->u.pod.req.q[KB_RES_CPU], 1000);
	assert_false(o->u.pod.best_effort);
	int a = -1, b = -1, c = -1;
	for (int k = 0; k < names.nknown; k++) {
		a = strcmp(names.known[k], "example.com/mig-a") == 0 ? k : a;
		b = strcmp(names.known[k], "example.com/mig-b") == 0 ? k : b;
		c = strcmp(names.known[k], "example.com/mig-c") == 0 ? k : c;
	}
	assert_true(a >= 0 && b >= 0 && c >= 0);
	assert_int_equal(ps->nspill, 3); /* example.com/zero: 0 asks nothing */
	/* mig-a: max(2 + 1, 5 + the sidecar's 0) = 5; mig-b: c1's limit 3 +
	 * the sidecar's 1 = 4; mig-c: the overhead. */
	assert_int_equal(kb_res_extra_get(ps->spill, ps->nspill, a), 5000);
	assert_int_equal(kb_res_extra_get(ps->spill, ps->nspill, b), 4000);
	assert_int_equal(kb_res_extra_get(ps->spill, ps->nspill, c), 1000);
	kb_object_free(o);

	/* A pod asking only spilled names is not BestEffort. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: c, resources: {limits: {example.com/mig-a: 1}}}]}\n");
	assert_int_equal(o->u.pod.spec.nspill, 1);
	assert_false(o->u.pod.best_effort);
	kb_object_free(o);

	/* A PodGroup's minResources leaves spilled names out. */
	o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		      "metadata: {name: pg, namespace: ns}\n"
		      "spec: {minMember: 1, minResources: {cpu: 2, example.com/mig-a: 3}}\n");
	assert_int_equal(o->u.podgroup.min_resources.q[KB_RES_CPU], 2000);
	kb_object_free(o);
	names = saved;
}

/* A Node registering volcano vGPU devices (annotation values as YAML). */
static kb_object *vgpu_node(const char *reg, const char *hs)
{
	static char y[4096];
	snprintf(y, sizeof(y),
		 "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations:\n"
		 "    volcano.sh/node-vgpu-register: \"%s\"\n%s%s%s"
		 "status: {allocatable: {cpu: 8, volcano.sh/vgpu-number: 8}}\n",
		 reg, hs ? "    volcano.sh/node-vgpu-handshake: \"" : "", hs ? hs : "",
		 hs ? "\"\n" : "");
	return decode_ok(y);
}

/* volcano's vGPU registration, read as volcano's scheduler reads it
 * (cache/decode_vgpu.c): devices in order, non-NVIDIA ones left out; a
 * node that has not reported, stopped reporting, or registers what
 * kube-batchd does not place offers none, saying why, and is kept. */
static void node_vgpu_registration(void **state)
{
	const char *two = "GPU-a,4,15360,NVIDIA-Tesla T4,true,hami-core:"
			  "GPU-x,2,8000,AMD-MI100,true,hami-core:"
			  "GPU-b,10,81920,NVIDIA-A100,false,hami-core:";
	kb_object *o = vgpu_node(two, "Reported 2026-12-07 10:00:00 +0000 UTC");
	const kb_node_obj *no = &o->u.node;
	assert_int_equal(no->nvgpu, 2);
	assert_null(no->vgpu_off);
	assert_string_equal(no->vgpu[0].uuid, "GPU-a");
	assert_int_equal(no->vgpu[0].count, 4);
	assert_int_equal(no->vgpu[0].mem, 15360);
	assert_string_equal(no->vgpu[1].uuid, "GPU-b");
	assert_int_equal(no->vgpu[1].mem, 81920);
	kb_object_free(o);

	static const struct {
		const char *reg, *hs, *why;
	} off[] = {
		{"GPU-a,4,15360,NVIDIA-T4,true,hami-core:", NULL, "has not reported"},
		{"GPU-a,4,15360,NVIDIA-T4,true,hami-core:", "Deleted_2026.12.07 10:00:00",
		 "stopped reporting"},
		{"GPU-a,4,lots,NVIDIA-T4,true,hami-core:", "Reported", "could not read"},
		{"GPU-a,4,15360,NVIDIA-T4:", "Reported", "could not read"},
		{"GPU-a,7,40960,NVIDIA-A100,true,mig:", "Reported", "mig mode"},
	};
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		o = vgpu_node(off[i].reg, off[i].hs);
		assert_int_equal(o->u.node.nvgpu, 0);
		assert_non_null(o->u.node.vgpu_off);
		assert_non_null(strstr(o->u.node.vgpu_off, off[i].why));
		assert_int_equal(o->u.node.allocatable.q[KB_RES_CPU], 8000); /* kept */
		kb_object_free(o);
	}
	static char many[64 * 48];
	size_t at = 0;
	for (int i = 0; i < KB_MAX_GPUS + 1; i++)
		at += (size_t)snprintf(many + at, sizeof(many) - at,
				       "GPU-%d,4,15360,NVIDIA-T4,true,hami-core:", i);
	o = vgpu_node(many, "Reported");
	assert_int_equal(o->u.node.nvgpu, 0);
	assert_non_null(strstr(o->u.node.vgpu_off, "more volcano vGPU devices"));
	kb_object_free(o);
}

/* A pod's vGPU asks, per vGPU, from its one vGPU container, as volcano's
 * scheduler reads them; the devices it was given, from its annotation. */
static void pod_vgpu_asks(void **state)
{
	kb_object *o = decode_ok(
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
		"    volcano.sh/vgpu-ids-new: \"GPU-a,NVIDIA,4000,30:GPU-x,NVIDIA,lots,0:;GPU-b,NVIDIA,2048,0:\"\n"
		"spec:\n  containers:\n"
		"  - {name: side, resources: {requests: {cpu: 1}}}\n"
		"  - {name: main, resources: {limits: {volcano.sh/vgpu-number: 2,\n"
		"     volcano.sh/vgpu-memory: 4000, volcano.sh/vgpu-cores: 30}}}\n");
	const kb_pod_spec *ps = &o->u.pod.spec;
	assert_int_equal(ps->vgpu_number, 2);
	assert_int_equal(ps->vgpu_mem, 4000);
	assert_int_equal(ps->vgpu_pct, 0);
	assert_int_equal(ps->vgpu_cores, 30);
	assert_int_equal(ps->vgpu_containers, 1);
	/* Its GPUs, decoded once; an entry that does not read is left out. */
	assert_int_equal(ps->nvgpu_used, 2);
	assert_string_equal(ps->vgpu_used[0].uuid, "GPU-a");
	assert_int_equal(ps->vgpu_used[0].mem, 4000);
	assert_int_equal(ps->vgpu_used[0].cores, 30);
	assert_string_equal(ps->vgpu_used[1].uuid, "GPU-b");
	assert_int_equal(ps->vgpu_used[1].mem, 2048);
	kb_object_free(o);
	/* Only memory: one vGPU. Only a number: the whole card each. A
	 * percentage: that share of the card. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: m, resources: {limits: {volcano.sh/vgpu-memory: 3000}}}]}\n");
	assert_int_equal(o->u.pod.spec.vgpu_number, 1);
	assert_int_equal(o->u.pod.spec.vgpu_mem, 3000);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: m, resources: {limits: {volcano.sh/vgpu-number: 1}}}]}\n");
	assert_int_equal(o->u.pod.spec.vgpu_pct, 100);
	const kb_vgpu_dev t4 = {.uuid = "GPU-a", .count = 4, .mem = 15360};
	assert_int_equal(kb_vgpu_mem_of(&o->u.pod.spec, &t4), 15360);
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: m, resources: {limits: {volcano.sh/vgpu-number: 1,\n"
		      "  volcano.sh/vgpu-memory-percentage: 50}}}]}\n");
	assert_int_equal(kb_vgpu_mem_of(&o->u.pod.spec, &t4), 7680);
	kb_object_free(o);
	/* Two vGPU containers: counted, so the gpu plugin can refuse. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: a, resources: {limits: {volcano.sh/vgpu-number: 1}}},\n"
		      "  {name: b, resources: {limits: {volcano.sh/vgpu-number: 1}}}]}\n");
	assert_int_equal(o->u.pod.spec.vgpu_containers, 2);
	kb_object_free(o);
}

/* ---- PodGroup -------------------------------------------------------------- */

static void podgroup_kube_batch(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\n"
				 "kind: PodGroup\n"
				 "metadata: {name: pg, namespace: ns}\n"
				 "spec:\n"
				 "  minMember: 6\n"
				 "  queue: q1\n"
				 "  priorityClassName: high\n"
				 "  minResources: {cpu: 6, nvidia.com/gpu: 4}\n"
				 "status: {phase: Inqueue}\n");
	kb_podgroup_obj *pg = &o->u.podgroup;
	assert_int_equal(o->kind, KB_KIND_PODGROUP);
	assert_string_equal(o->meta.key, "ns/pg");
	assert_int_equal(pg->flavor, KB_PG_KUBE_BATCH);
	assert_int_equal(pg->min_member, 6);
	assert_string_equal(pg->queue, "q1");
	assert_string_equal(pg->priority_class_name, "high");
	assert_true(pg->has_min_resources);
	assert_int_equal(pg->min_resources.q[KB_RES_CPU], 6000);
	assert_int_equal(res(&pg->min_resources, "nvidia.com/gpu"), 4000);
	assert_int_equal(pg->phase, KB_PG_INQUEUE);
	kb_object_free(o);

	/* Defaults: minMember 0 (no CRD defaults it), no queue, Pending. */
	o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
		      "metadata: {name: pg}\n");
	pg = &o->u.podgroup;
	assert_string_equal(o->meta.ns, "default");
	assert_int_equal(pg->min_member, 0);
	assert_null(pg->queue);
	assert_null(pg->priority_class_name);
	assert_false(pg->has_min_resources);
	assert_int_equal(pg->phase, KB_PG_PENDING);
	kb_object_free(o);
}

static void podgroup_volcano(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
				 "metadata: {name: pg}\n"
				 "spec: {minMember: 2, minTaskMember: {ps: 1}, "
				 "priorityClassName: low}\n"
				 "status: {phase: Running, running: 2}\n");
	kb_podgroup_obj *pg = &o->u.podgroup;
	assert_int_equal(pg->flavor, KB_PG_VOLCANO);
	assert_int_equal(pg->min_member, 2);
	assert_null(pg->queue); /* absent: the namespace mapping, then the default queue, decide */
	assert_string_equal(pg->priority_class_name, "low");
	assert_int_equal(pg->phase, KB_PG_RUNNING);
	assert_false(pg->volcano_job);
	kb_object_free(o);

	/* Made by a volcano Job: its controlling owner, not any owner. */
	o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		      "metadata:\n  name: pg\n  ownerReferences:\n"
		      "  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, uid: u}\n"
		      "  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, uid: v,"
		      " controller: true}\n");
	assert_true(o->u.podgroup.volcano_job);
	kb_object_free(o);
	o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		      "metadata:\n  name: pg\n  ownerReferences:\n"
		      "  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, uid: u}\n"
		      "  - {apiVersion: kubeflow.org/v1, kind: TFJob, name: j, uid: v,"
		      " controller: true}\n");
	assert_false(o->u.podgroup.volcano_job);
	kb_object_free(o);

	static const struct {
		const char *s;
		kb_pg_phase ph;
	} phases[] = {{"Pending", KB_PG_PENDING},     {"Unknown", KB_PG_UNKNOWN},
		      {"Completed", KB_PG_COMPLETED}, {"Whatever", KB_PG_PENDING},
		      {"Inqueue", KB_PG_INQUEUE}};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
			 "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
			 "metadata: {name: pg}\nstatus: {phase: %s}\n",
			 phases[i].s);
		o = decode_ok(buf);
		assert_int_equal(o->u.podgroup.phase, phases[i].ph);
		kb_object_free(o);
	}
}

static void podgroup_coscheduling_both_groups(void **state)
{
	static const char *apis[] = {"scheduling.x-k8s.io/v1alpha1",
				     "scheduling.sigs.k8s.io/v1alpha1"};
	for (size_t i = 0; i < 2; i++) {
		char buf[512];
		snprintf(buf, sizeof(buf),
			 "apiVersion: %s\nkind: PodGroup\nmetadata: {name: nginx}\n"
			 "spec: {minMember: 3, scheduleTimeoutSeconds: 10, minResources: {cpu: 3},"
			 " queue: ignored, priorityClassName: ignored}\n"
			 "status: {phase: Scheduling}\n",
			 apis[i]);
		kb_object *o = decode_ok(buf);
		kb_podgroup_obj *pg = &o->u.podgroup;
		assert_int_equal(pg->flavor, KB_PG_COSCHED);
		assert_int_equal(pg->min_member, 3);
		assert_null(pg->queue);
		assert_null(pg->priority_class_name);
		assert_true(pg->has_min_resources);
		assert_int_equal(pg->min_resources.q[KB_RES_CPU], 3000);
		assert_int_equal(pg->phase, KB_PG_INQUEUE);
		kb_object_free(o);
	}
	kb_object *o = decode_ok("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
				 "metadata: {name: pg}\nstatus: {phase: Finished}\n");
	assert_int_equal(o->u.podgroup.phase, KB_PG_COMPLETED);
	kb_object_free(o);
}

/* The status a scheduler wrote, kept for a restarted daemon to compare
 * with; a malformed count is unknown (-1), never an error. */
static void podgroup_written_status(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
				 "metadata: {name: pg}\nspec: {minMember: 3}\n"
				 "status: {phase: Inqueue, running: 1, succeeded: 2, failed: many,"
				 " conditions: [{type: Scheduled, status: 'True', message: no},"
				 " {type: Unschedulable, status: 'False', message: old},"
				 " {type: Unschedulable, status: 'True', message: '3/3 tasks in gang unschedulable'}]}\n");
	const kb_podgroup_obj *pg = &o->u.podgroup;
	assert_int_equal(pg->phase, KB_PG_INQUEUE);
	assert_string_equal(pg->status_phase, "Inqueue");
	assert_int_equal(pg->running, 1);
	assert_int_equal(pg->succeeded, 2);
	assert_int_equal(pg->failed, -1);
	assert_string_equal(pg->unschedulable, "3/3 tasks in gang unschedulable");
	kb_object_free(o);

	o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
		      "metadata: {name: pg}\nspec: {minMember: 3}\n"
		      "status: {running: -4, conditions: notalist}\n");
	pg = &o->u.podgroup;
	assert_null(pg->status_phase);
	assert_int_equal(pg->running, -1);
	assert_int_equal(pg->succeeded, 0);
	assert_null(pg->unschedulable);
	kb_object_free(o);
}

static void podgroup_errors(void **state)
{
	expect_error("apiVersion: scheduling.volcano.sh/v1beta1\n"
		     "kind: PodGroup\n"
		     "metadata: {name: pg, namespace: ns}\n"
		     "spec:\n"
		     "  minMember: -1\n",
		     "PodGroup \"ns/pg\": spec.minMember: must be >= 0, got -1 (t.yaml:5:14)");
	expect_error("apiVersion: example.com/v1\nkind: PodGroup\nmetadata: {name: pg}\n",
		     "PodGroup \"default/pg\": apiVersion: unknown PodGroup API \"example.com/v1\" "
		     "(want scheduling.incubator.k8s.io/v1alpha1, scheduling.volcano.sh/v1beta1, "
		     "scheduling.x-k8s.io/v1alpha1 or scheduling.k8s.io/v1beta1, v1alpha3, v1alpha2) "
		     "(t.yaml:1:13)");
	expect_error("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
		     "metadata: {name: pg}\nspec: {minMember: three}\n",
		     "PodGroup \"default/pg\": spec.minMember: expected an integer, got \"three\" "
		     "(t.yaml:4:19)");
	expect_error("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
		     "metadata: {name: pg}\nspec: {minResources: {cpu: lots}}\n",
		     "PodGroup \"default/pg\": spec.minResources.cpu: bad quantity \"lots\" "
		     "(t.yaml:4:28)");
	expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		     "metadata:\n  name: pg\n  ownerReferences:\n"
		     "  - {apiVersion: batch.volcano.sh/v1alpha1, controller: yes please}\n",
		     "PodGroup \"default/pg\": metadata.ownerReferences[0].controller: "
		     "expected true or false, got \"yes please\" (t.yaml:6:57)");
}

/* ---- Queue ----------------------------------------------------------------- */

static void queue_kube_batch(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
				 "metadata: {name: q1, namespace: ignored}\n"
				 "spec: {weight: 3, capability: {cpu: 10, nvidia.com/gpu: 4}}\n");
	kb_queue_obj *q = &o->u.queue;
	assert_int_equal(o->kind, KB_KIND_QUEUE);
	assert_string_equal(o->meta.key, "q1");
	assert_string_equal(o->meta.ns, "");
	assert_int_equal(q->flavor, KB_PG_KUBE_BATCH);
	assert_int_equal(q->weight, 3);
	assert_int_equal(q->capability.q[KB_RES_CPU], 10000);
	int gi = kb_resnames_find(&names, "nvidia.com/gpu");
	assert_int_equal(q->capability_mask, (1u << KB_RES_CPU) | (1u << gi));
	assert_int_equal(q->capability.q[gi], 4000);
	assert_true(q->reclaimable);
	assert_int_equal(q->state, KB_QUEUE_OPEN);
	assert_null(q->parent);
	assert_true(kb_res_is_zero(&q->guarantee));
	kb_object_free(o);

	o = decode_ok("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
		      "metadata: {name: q1}\n");
	assert_int_equal(o->u.queue.weight, 1);
	assert_int_equal(o->u.queue.capability_mask, 0);
	kb_object_free(o);

	expect_error("apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
		     "metadata: {name: q1}\nspec: {weight: 0}\n",
		     "Queue \"q1\": spec.weight: must be >= 1, got 0 (t.yaml:4:16)");
}

static void queue_volcano(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
				 "metadata: {name: q2}\n"
				 "spec:\n"
				 "  weight: 0\n"
				 "  reclaimable: false\n"
				 "  parent: root\n"
				 "  capability: {memory: 64Gi}\n"
				 "  guarantee:\n"
				 "    resource: {cpu: 2}\n"
				 "status: {state: Closed}\n");
	kb_queue_obj *q = &o->u.queue;
	assert_int_equal(q->flavor, KB_PG_VOLCANO);
	assert_int_equal(q->weight, 1); /* volcano's webhook: 0 means 1 */
	assert_false(q->reclaimable);
	assert_string_equal(q->parent, "root");
	assert_int_equal(q->capability_mask, 1u << KB_RES_MEMORY);
	assert_int_equal(q->guarantee.q[KB_RES_CPU], 2000);
	assert_int_equal(q->state, KB_QUEUE_CLOSED);
	kb_object_free(o);

	o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		      "metadata: {name: q2}\nspec: {weight: 4}\nstatus: {state: Closing}\n");
	assert_int_equal(o->u.queue.weight, 4);
	assert_true(o->u.queue.reclaimable);
	assert_int_equal(o->u.queue.state, KB_QUEUE_CLOSING);
	kb_object_free(o);
	o = decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		      "metadata: {name: q2}\nstatus: {state: Open}\n");
	assert_int_equal(o->u.queue.state, KB_QUEUE_OPEN);
	kb_object_free(o);

	expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		     "metadata: {name: q2}\nspec: {weight: -2}\n",
		     "Queue \"q2\": spec.weight: must be >= 1, got -2 (t.yaml:4:16)");
	expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		     "metadata: {name: q2}\nspec: {guarantee: {resource: {cpu: x}}}\n",
		     "Queue \"q2\": spec.guarantee.resource.cpu: bad quantity \"x\" (t.yaml:4:36)");
	expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: Queue\n"
		     "metadata: {name: q3}\n",
		     "Queue \"q3\": apiVersion: unknown Queue API \"scheduling.x-k8s.io/v1alpha1\" "
		     "(want scheduling.incubator.k8s.io/v1alpha1 or scheduling.volcano.sh/v1beta1) "
		     "(t.yaml:1:13)");
}

/* ---- PriorityClass --------------------------------------------------------- */

static void priority_class(void **state)
{
	kb_object *o = decode_ok("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
				 "metadata: {name: high}\nvalue: 1000000\nglobalDefault: true\n");
	assert_int_equal(o->kind, KB_KIND_PRIORITY_CLASS);
	assert_string_equal(o->meta.key, "high");
	assert_int_equal(o->u.priority_class.value, 1000000);
	assert_true(o->u.priority_class.global_default);
	kb_object_free(o);
	o = decode_ok("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		      "metadata: {name: low}\nvalue: -10\n");
	assert_int_equal(o->u.priority_class.value, -10);
	assert_false(o->u.priority_class.global_default);
	kb_object_free(o);

	expect_error("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		     "metadata: {name: huge}\nvalue: 3000000000\n",
		     "PriorityClass \"huge\": value: out of range [-2147483648, 2147483647], got "
		     "\"3000000000\" (t.yaml:4:8)");
	expect_error("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		     "metadata: {name: none}\n",
		     "PriorityClass \"none\": value: required (t.yaml:1:1)");
	expect_error("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		     "metadata: {name: q}\nvalue: \"10\"\n",
		     "PriorityClass \"q\": value: expected an integer, got \"10\" (t.yaml:4:8)");
}

/* ---- misc ------------------------------------------------------------------ */

static void multi_document_positions(void **state)
{
	const char *y = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
			"---\n"
			"# comment\n"
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
	kb_yaml_file f;
	kb_err err = {0};
	assert_int_equal(kb_yaml_load_buffer(y, strlen(y), "m.yaml", &f, &err), 0);
	assert_int_equal(f.ndocs, 2);
	kb_object *o;
	assert_int_equal(kb_object_decode(f.docs[1], f.name, &names, &o, &err), 0);
	assert_int_equal(o->meta.line, 6);
	assert_int_equal(o->meta.col, 1);
	kb_object_free(o);
	kb_yaml_file_release(&f);
}

static void free_accepts_null_and_labels_get_empty(void **state)
{
	assert_null(kb_object_free(NULL));
	kb_labels empty = {0};
	assert_null(kb_labels_get(&empty, "a"));
	assert_null(kb_labels_get(NULL, "a"));
}

/* ---- storage ---------------------------------------------------------------- */

/* A pointer of object o: NULL, inside o's own block, or one of the
 * decoder's constants. */
static void assert_owned(const kb_object *o, const void *p)
{
	if (!p)
		return;
	const char *lo = (const char *)o, *hi = lo + malloc_usable_size((void *)o);
	if ((const char *)p >= lo && (const char *)p < hi)
		return;
	const char *s = p;
	if (strcmp(s, "") == 0 || strcmp(s, "default") == 0 || strcmp(s, "default-scheduler") == 0)
		return;
	fail_msg("%s \"%s\": a pointer (\"%.40s\") outside the object's block", o->kind_name,
		 o->meta.key, s);
}

static void assert_labels_owned(const kb_object *o, const kb_labels *l)
{
	assert_owned(o, l->v);
	for (uint32_t i = 0; i < l->n; i++) {
		assert_owned(o, l->v[i].key);
		assert_owned(o, l->v[i].value);
	}
}

static void assert_term_owned(const kb_object *o, const kb_selector_term *t)
{
	assert_owned(o, t->reqs);
	for (uint32_t i = 0; i < t->n; i++) {
		assert_owned(o, t->reqs[i].key);
		assert_owned(o, t->reqs[i].values);
		for (uint32_t j = 0; j < t->reqs[i].nvalues; j++)
			assert_owned(o, t->reqs[i].values[j]);
	}
}

/* Every pointer an object holds (a field added to kb_object belongs here
 * too, as in reloc_object in cache/objects.c). */
static void assert_one_block(const kb_object *o)
{
	const kb_meta *m = &o->meta;
	const void *ptrs[] = {o->api_version, o->kind_name, m->name, m->ns, m->uid, m->key,
			      m->resource_version};
	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		assert_owned(o, ptrs[i]);
	assert_labels_owned(o, &m->labels);
	assert_labels_owned(o, &m->annotations);
	if (o->kind == KB_KIND_NODE) {
		const kb_node_obj *n = &o->u.node;
		assert_owned(o, n->taints);
		for (uint32_t i = 0; i < n->ntaints; i++) {
			assert_owned(o, n->taints[i].key);
			assert_owned(o, n->taints[i].value);
		}
		assert_owned(o, n->gpu_model);
		assert_owned(o, n->gpu_group);
	} else if (o->kind == KB_KIND_POD) {
		const kb_pod_obj *p = &o->u.pod;
		const void *pp[] = {p->scheduler_name, p->node_name, p->priority_class_name,
				    p->group_name, p->group_key, p->gpu_devices, p->spec.gpu_models,
				    p->spec.required, p->spec.preferred, p->spec.tolerations,
				    p->spec.host_ports};
		for (size_t i = 0; i < sizeof(pp) / sizeof(pp[0]); i++)
			assert_owned(o, pp[i]);
		assert_labels_owned(o, &p->spec.labels);
		assert_labels_owned(o, &p->spec.node_selector);
		for (uint32_t i = 0; i < p->spec.nrequired; i++)
			assert_term_owned(o, &p->spec.required[i]);
		for (uint32_t i = 0; i < p->spec.npreferred; i++)
			assert_term_owned(o, &p->spec.preferred[i].term);
		for (uint32_t i = 0; i < p->spec.ntolerations; i++) {
			assert_owned(o, p->spec.tolerations[i].key);
			assert_owned(o, p->spec.tolerations[i].value);
		}
		for (uint32_t i = 0; i < p->spec.nhost_ports; i++)
			assert_owned(o, p->spec.host_ports[i].ip);
	} else if (o->kind == KB_KIND_PODGROUP) {
		assert_owned(o, o->u.podgroup.queue);
		assert_owned(o, o->u.podgroup.priority_class_name);
		assert_owned(o, o->u.podgroup.status_phase);
		assert_owned(o, o->u.podgroup.unschedulable);
	} else if (o->kind == KB_KIND_QUEUE) {
		assert_owned(o, o->u.queue.parent);
	}
}

/* An object is one exact-size block: every string and array it points to
 * is inside it, whatever the kind and however many fields are set. */
static void objects_are_one_block_with_every_field_inside(void **state)
{
	static const char *const docs[] = {
		"apiVersion: v1\nkind: Node\n"
		"metadata:\n"
		"  name: gpu-1\n"
		"  uid: u-1\n"
		"  resourceVersion: '42'\n"
		"  labels: {nvidia.com/gpu.product: A100, zone: z1, rack: r7}\n"
		"  annotations: {kube-batchd.io/gpu-topology: '0,1;2,3', note: hello}\n"
		"spec:\n"
		"  unschedulable: false\n"
		"  taints: [{key: gpu, value: 'yes', effect: NoSchedule},"
		" {key: spot, effect: PreferNoSchedule}]\n"
		"status: {allocatable: {cpu: '64', memory: 256Gi, nvidia.com/gpu: '4'}}\n",

		"apiVersion: v1\nkind: Pod\n"
		"metadata:\n"
		"  name: train-0\n"
		"  namespace: ml\n"
		"  labels: {app: train, tier: gpu}\n"
		"  annotations:\n"
		"    scheduling.k8s.io/group-name: train\n"
		"    kube-batchd.io/gpu-models: 'A100|H100'\n"
		"    kube-batchd.io/gpu-devices: '0,1'\n"
		"    sim.kube-batchd.io/arrival: '1.5'\n"
		"spec:\n"
		"  schedulerName: kube-batchd\n"
		"  nodeName: gpu-1\n"
		"  priorityClassName: high\n"
		"  nodeSelector: {zone: z1}\n"
		"  affinity:\n"
		"    nodeAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"        nodeSelectorTerms:\n"
		"        - matchExpressions: [{key: rack, operator: In, values: [r1, r7]}]\n"
		"          matchFields: [{key: metadata.name, operator: In, values: [gpu-1]}]\n"
		"        - matchExpressions: [{key: cores, operator: Gt, values: ['8']}]\n"
		"      preferredDuringSchedulingIgnoredDuringExecution:\n"
		"      - weight: 10\n"
		"        preference: {matchExpressions: [{key: zone, operator: NotIn, values: [z9]}]}\n"
		"  tolerations: [{key: gpu, operator: Equal, value: 'yes', effect: NoSchedule},"
		" {operator: Exists}]\n"
		"  containers:\n"
		"  - name: main\n"
		"    ports: [{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}, {hostPort: 53,"
		" protocol: UDP}]\n"
		"    resources: {requests: {cpu: '4', memory: 16Gi, nvidia.com/gpu: '2'}}\n",

		"apiVersion: v1\nkind: Pod\nmetadata: {name: lone}\n"
		"spec: {containers: [{name: c}]}\n",

		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {name: train, namespace: ml, labels: {team: a}}\n"
		"spec: {minMember: 2, queue: research, priorityClassName: high,"
		" minResources: {cpu: '8'}}\n"
		"status: {phase: Running, running: 2, conditions: [{type: Unschedulable,"
		" status: 'True', message: 'a message the object must own'}]}\n",

		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		"metadata: {name: research}\n"
		"spec: {weight: 3, parent: root, capability: {cpu: '100'},"
		" guarantee: {resource: {cpu: '10'}}}\n",

		"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		"metadata: {name: high}\nvalue: 1000\n",

		"apiVersion: apps/v1\nkind: Deployment\n"
		"metadata: {name: web, namespace: prod, annotations: {a: b}}\n",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		kb_object *o = decode_ok(docs[i]); /* the document is gone already */
		assert_one_block(o);
		kb_object_free(o);
	}

	/* And the values survived the move. */
	kb_object *o = decode_ok(docs[1]);
	const kb_pod_obj *p = &o->u.pod;
	assert_string_equal(o->meta.key, "ml/train-0");
	assert_string_equal(o->meta.uid, "Pod/ml/train-0");
	assert_string_equal(p->group_key, "ml/train");
	assert_string_equal(p->group_name, "train");
	assert_string_equal(p->spec.gpu_models, "A100|H100");
	assert_int_equal(p->ngpu_devices, 2);
	assert_int_equal(p->gpu_devices[1], 1);
	assert_int_equal(p->spec.nrequired, 2);
	assert_int_equal(p->spec.required[0].n, 2);
	assert_string_equal(p->spec.required[0].reqs[0].values[1], "r7");
	assert_true(p->spec.required[0].reqs[1].field);
	assert_string_equal(p->spec.required[0].reqs[1].values[0], "gpu-1");
	assert_string_equal(p->spec.preferred[0].term.reqs[0].values[0], "z9");
	assert_string_equal(p->spec.tolerations[0].value, "yes");
	assert_string_equal(p->spec.tolerations[1].key, "");
	assert_int_equal(p->spec.nhost_ports, 2);
	assert_string_equal(p->spec.host_ports[0].ip, "10.0.0.1");
	assert_string_equal(kb_labels_get(&p->spec.node_selector, "zone"), "z1");
	assert_string_equal(kb_labels_get(&p->spec.labels, "tier"), "gpu");
	assert_int_equal(p->sim_arrival_ms, 1500);
	kb_object_free(o);

	o = decode_ok(docs[0]);
	assert_string_equal(o->u.node.gpu_model, "A100");
	assert_ptr_equal(o->u.node.gpu_model, kb_labels_get(&o->meta.labels, KB_LABEL_GPU_PRODUCT));
	assert_int_equal(o->u.node.gpu_group[2], 1);
	assert_string_equal(o->u.node.taints[1].key, "spot");
	assert_string_equal(o->meta.resource_version, "42");
	kb_object_free(o);
}

/* ---- loading manifest files ------------------------------------------------------ */

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/kb_manifest_XXXXXX");
	assert_non_null(path);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static int load_manifests(const char *text, kb_cluster *c, kb_object_vec *later, kb_err *err,
			  char **ret_path)
{
	char *path = write_temp(text);
	kb_cluster_init(c, "kube-batchd", "default");
	memset(later, 0, sizeof(*later));
	memset(err, 0, sizeof(*err));
	int r = kb_manifests_load(c, path, later, err);
	unlink(path);
	*ret_path = path;
	return r;
}

static void release_load(kb_cluster *c, kb_object_vec *later, char *path)
{
	for (size_t i = 0; i < later->n; i++)
		kb_object_free(later->v[i]);
	KB_VEC_RELEASE(later);
	kb_cluster_release(c);
	free(path);
}

static void manifests_load_reads_every_document(void **state)
{
	const char *text = "# a cluster\n"
			   "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
			   "status: {allocatable: {cpu: '4'}}\n"
			   "---\n---\n" /* an empty document */
			   "apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
			   "metadata: {name: g}\nspec: {minMember: 1}\n"
			   "---\n"
			   "apiVersion: v1\nkind: Pod\n"
			   "metadata: {name: now, annotations: {scheduling.k8s.io/group-name: g}}\n"
			   "spec: {schedulerName: kube-batchd}\n"
			   "---\n"
			   "apiVersion: v1\nkind: Pod\n"
			   "metadata: {name: soon, annotations: {sim.kube-batchd.io/arrival: '2'}}\n"
			   "---\n"
			   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ignored}\n";
	kb_cluster c;
	kb_object_vec later;
	kb_err err;
	char *path;
	assert_int_equal(load_manifests(text, &c, &later, &err, &path), 0);
	assert_non_null(kb_cluster_pod(&c, "default/now"));
	assert_null(kb_cluster_pod(&c, "default/soon"));
	assert_int_equal(later.n, 1);
	assert_string_equal(later.v[0]->meta.key, "default/soon");
	kb_snapshot s;
	kb_snapshot_init(&s);
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	assert_int_equal(s.nnodes, 1);
	assert_int_equal(s.ntasks, 1);
	assert_int_equal(s.njobs, 1);
	assert_string_equal(s.jobs[0].key, "default/g");
	assert_null(s.jobs[0].invalid);
	kb_snapshot_release(&s);
	release_load(&c, &later, path);
}

/* Errors name the file, line and column as before streaming; the first
 * error in file order is the one reported. */
static void manifests_load_reports_the_first_error_in_file_order(void **state)
{
	static const struct {
		const char *text;
		const char *before, *after; /* the message: before, the path, after */
	} cases[] = {
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
		 "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		 "spec: {containers: [{name: c, resources: {requests: {cpu: 1x}}}]}\n"
		 "---\na: [1, 2\n",
		 "Pod \"default/p\": spec.containers[0].resources.requests.cpu: bad quantity "
		 "\"1x\" (", ":8:59)"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\na: [1, 2\n---\n"
		 "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: x}\n",
		 "", ":6:1: did not find expected ',' or ']' (while parsing a flow sequence at "
		 "line 5, column 4)"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\nkind: Pod\nkind: Pod\n",
		 "", ":6:1: duplicate key \"kind\" (first at line 5, column 1)"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: \xff}\n",
		 "", ":3:18: invalid leading UTF-8 octet (#xFF)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kb_cluster c;
		kb_object_vec later;
		kb_err err;
		char *path;
		assert_int_equal(load_manifests(cases[i].text, &c, &later, &err, &path), -EINVAL);
		char want[512];
		snprintf(want, sizeof(want), "%s%s%s", cases[i].before, path, cases[i].after);
		assert_string_equal(err.msg, want);
		release_load(&c, &later, path);
	}

	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	kb_object_vec later = {0};
	kb_err err;
	assert_int_equal(kb_manifests_load(&c, "/nonexistent/m.yaml", &later, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/m.yaml: No such file or directory");
	kb_cluster_release(&c);
}

/* Kubernetes' own gang API (cache/decode_workload.c). */
static void k8s_podgroup_policy_status_and_queue(void **state)
{
	(void)state;
	kb_object *o = decode_ok("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
				 "metadata:\n  name: g\n  annotations: {scheduling.volcano.sh/queue-name: ml}\n"
				 "spec:\n  workloadRef: {workloadName: w, templateName: t}\n"
				 "  schedulingPolicy: {gang: {minCount: 4}}\n  priorityClassName: high\n"
				 "status:\n  conditions:\n  - {type: PodGroupInitiallyScheduled, "
				 "status: \"False\", reason: Unschedulable, message: no room}\n");
	assert_int_equal(o->kind, KB_KIND_PODGROUP);
	const kb_podgroup_obj *pg = &o->u.podgroup;
	assert_int_equal(pg->flavor, KB_PG_K8S);
	assert_int_equal(pg->min_member, 4);
	assert_string_equal(pg->queue, "ml");
	assert_string_equal(pg->priority_class_name, "high");
	assert_int_equal(pg->phase, KB_PG_INQUEUE); /* admitted: no admission step upstream */
	assert_string_equal(pg->status_phase, "Unschedulable");
	assert_string_equal(pg->unschedulable, "no room");
	kb_object_free(o);

	/* v1alpha2 writes PodGroupScheduled; True is a placed gang; basic is minMember 1. */
	o = decode_ok("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\n"
		      "spec: {schedulingPolicy: {basic: {}}}\n"
		      "status: {conditions: [{type: PodGroupScheduled, status: \"True\"}]}\n");
	pg = &o->u.podgroup;
	assert_int_equal(pg->min_member, 1);
	assert_int_equal(pg->phase, KB_PG_RUNNING);
	assert_string_equal(pg->status_phase, "Scheduled");
	assert_null(pg->unschedulable);
	assert_null(pg->queue);
	assert_string_equal(kb_k8s_podgroup_condition(o->api_version), "PodGroupScheduled");
	kb_object_free(o);
	/* ...and v1alpha3's condition type is not v1alpha2's. */
	o = decode_ok("apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: g}\n"
		      "spec: {schedulingPolicy: {gang: {minCount: 2}}}\n"
		      "status: {conditions: [{type: PodGroupScheduled, status: \"True\"}]}\n");
	assert_int_equal(o->u.podgroup.phase, KB_PG_INQUEUE);
	assert_string_equal(kb_k8s_podgroup_condition(o->api_version), "PodGroupInitiallyScheduled");
	kb_object_free(o);
}

static void k8s_podgroup_errors(void **state)
{
	(void)state;
	const char *head = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n";
	char buf[512];
	snprintf(buf, sizeof(buf), "%sspec: {schedulingPolicy: {}}\n", head);
	expect_error(buf, "PodGroup \"default/g\": spec.schedulingPolicy: exactly one of gang and "
			  "basic, got neither (t.yaml:4:26)");
	snprintf(buf, sizeof(buf), "%sspec: {schedulingPolicy: {gang: {minCount: 2}, basic: {}}}\n", head);
	expect_error(buf, "PodGroup \"default/g\": spec.schedulingPolicy: exactly one of gang and "
			  "basic, got both (t.yaml:4:26)");
	snprintf(buf, sizeof(buf), "%sspec: {schedulingPolicy: {gang: {minCount: -1}}}\n", head);
	expect_error(buf, "PodGroup \"default/g\": spec.schedulingPolicy.gang.minCount: must be "
			  ">= 0, got -1 (t.yaml:4:44)");
	snprintf(buf, sizeof(buf), "%sspec: {schedulingPolicy: {gang: {}}}\n", head);
	expect_error(buf, "PodGroup \"default/g\": spec.schedulingPolicy.gang.minCount: required "
			  "(t.yaml:4:33)");
	snprintf(buf, sizeof(buf), "%sspec: {}\n", head);
	expect_error(buf, "PodGroup \"default/g\": spec.schedulingPolicy: required (gang or basic) "
			  "(t.yaml:1:1)");
}

static void workload_v1alpha1_and_pod_references(void **state)
{
	(void)state;
	kb_object *o = decode_ok("apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\n"
				 "metadata: {name: job, namespace: ns}\n"
				 "spec:\n  podGroups:\n  - {name: workers, policy: {gang: {minCount: 3}}}\n"
				 "  - {name: extras, policy: {basic: {}}}\n");
	assert_int_equal(o->kind, KB_KIND_WORKLOAD);
	assert_string_equal(o->meta.key, "ns/job");
	const kb_workload_obj *w = &o->u.workload;
	assert_int_equal(w->ngroups, 2);
	assert_string_equal(w->groups[0].name, "workers");
	assert_int_equal(w->groups[0].min_count, 3);
	assert_false(w->groups[0].basic);
	assert_string_equal(w->groups[1].name, "extras");
	assert_true(w->groups[1].basic);
	assert_int_equal(w->groups[1].min_count, 1);
	kb_object_free(o);
	/* A newer Workload is only a template: not read. */
	o = decode_ok("apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: job}\n"
		      "spec: {podGroupTemplates: [{name: t, schedulingPolicy: {gang: {minCount: 2}}}]}\n");
	assert_int_equal(o->kind, KB_KIND_OTHER);
	kb_object_free(o);
	expect_error("apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: job}\n"
		     "spec:\n  podGroups:\n  - {name: a, policy: {basic: {}}}\n"
		     "  - {name: a, policy: {basic: {}}}\n",
		     "Workload \"default/job\": spec.podGroups[1].name: podGroup \"a\" named twice "
		     "(t.yaml:7:12)");

	/* The pod's side: schedulingGroup, then workloadRef, then the annotations. */
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n"
		      "  annotations: {scheduling.k8s.io/group-name: old}\n"
		      "spec:\n  schedulingGroup: {podGroupName: g1}\n"
		      "  workloadRef: {name: job, podGroup: workers}\n");
	assert_int_equal(o->u.pod.group_via, KB_GROUP_SCHEDULING_GROUP);
	assert_string_equal(o->u.pod.group_key, "ns/g1");
	kb_object_free(o);
	o = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
		      "spec:\n  workloadRef: {name: job, podGroup: workers, podGroupReplicaKey: r1}\n");
	assert_int_equal(o->u.pod.group_via, KB_GROUP_WORKLOAD_REF);
	assert_string_equal(o->u.pod.group_name, "job/workers/r1");
	assert_string_equal(o->u.pod.group_key, "ns/job/workers/r1");
	assert_string_equal(o->u.pod.workload_key, "ns/job");
	assert_string_equal(o->u.pod.workload_pod_group, "workers");
	kb_object_free(o);
	expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  workloadRef: {name: job}\n",
		     "Pod \"default/p\": spec.workloadRef.podGroup: required (t.yaml:5:16)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(namespace_is_cluster_scoped_meta_only, setup),
		cmocka_unit_test_setup(meta_defaults_namespace_uid_and_timestamps, setup),
		cmocka_unit_test_setup(unknown_kind_is_other_with_meta, setup),
		cmocka_unit_test_setup(meta_errors_name_field_and_position, setup),
		cmocka_unit_test_setup(bad_timestamps_are_refused, setup),
		cmocka_unit_test_setup(node_decodes_allocatable_taints_gpus, setup),
		cmocka_unit_test_setup(node_capacity_fallback_pods_and_readiness, setup),
		cmocka_unit_test_setup(node_gpu_sharing_modes, setup),
		cmocka_unit_test_setup(node_errors, setup),
		cmocka_unit_test_setup(node_gpu_topology_must_cover_every_device_once, setup),
		cmocka_unit_test_setup(pod_defaults, setup),
		cmocka_unit_test_setup(pod_fields, setup),
		cmocka_unit_test_setup(pod_requests_limits_init_overhead, setup),
		cmocka_unit_test_setup(pod_sidecars_add_to_the_containers, setup),
		cmocka_unit_test_setup(pod_best_effort_means_nothing_but_pods, setup),
		cmocka_unit_test_setup(pod_request_errors, setup),
		cmocka_unit_test_setup(pod_group_link_precedence, setup),
		cmocka_unit_test_setup(pod_preemption_controls, setup),
		cmocka_unit_test_setup(podgroup_min_task_member, setup),
		cmocka_unit_test_setup(pod_sim_annotations_are_exact_seconds, setup),
		cmocka_unit_test_setup(pod_gpu_annotations, setup),
		cmocka_unit_test_setup(pod_node_selector_and_affinity, setup),
		cmocka_unit_test_setup(pod_affinity_errors, setup),
		cmocka_unit_test_setup(pod_tolerations, setup),
		cmocka_unit_test_setup(pod_host_ports, setup),
		cmocka_unit_test_setup(size_limits_are_enforced, setup),
		cmocka_unit_test_setup(resource_names_advertised_take_no_slot, setup),
		cmocka_unit_test_setup(resource_names_run_out_with_enospc, setup),
		cmocka_unit_test_setup(resource_names_past_the_slots_spill, setup),
		cmocka_unit_test_setup(node_vgpu_registration, setup),
		cmocka_unit_test_setup(pod_vgpu_asks, setup),
		cmocka_unit_test_setup(podgroup_kube_batch, setup),
		cmocka_unit_test_setup(podgroup_written_status, setup),
		cmocka_unit_test_setup(podgroup_volcano, setup),
		cmocka_unit_test_setup(podgroup_coscheduling_both_groups, setup),
		cmocka_unit_test_setup(podgroup_errors, setup),
		cmocka_unit_test_setup(queue_kube_batch, setup),
		cmocka_unit_test_setup(queue_volcano, setup),
		cmocka_unit_test_setup(priority_class, setup),
		cmocka_unit_test_setup(k8s_podgroup_policy_status_and_queue, setup),
		cmocka_unit_test_setup(k8s_podgroup_errors, setup),
		cmocka_unit_test_setup(workload_v1alpha1_and_pod_references, setup),
		cmocka_unit_test_setup(multi_document_positions, setup),
		cmocka_unit_test_setup(free_accepts_null_and_labels_get_empty, setup),
		cmocka_unit_test_setup(objects_are_one_block_with_every_field_inside, setup),
		cmocka_unit_test_setup(manifests_load_reads_every_document, setup),
		cmocka_unit_test_setup(manifests_load_reports_the_first_error_in_file_order, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The object store: a snapshot from the cache equals a full build. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "tests/unit/load_cluster.h"

static const char CLUSTER[] =
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
	"status: {allocatable: {cpu: '4', memory: 4Gi, nvidia.com/gpu: '2'}}\n"
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
	"status: {allocatable: {cpu: '4', memory: 4Gi}}\n"
	"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: g}\nspec: {minMember: 2, minResources: {cpu: '2'}}\n"
	"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\n"
	"spec: {schedulerName: kube-batchd, priorityClassName: high, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {scheduling.k8s.io/group-name: g}}\n"
	"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, annotations: {scheduling.k8s.io/group-name: g}}\n"
	"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: orphan, annotations: {scheduling.k8s.io/group-name: missing}}\n"
	"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: theirs}\n"
	"spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\nstatus: {phase: Running}\n";

/* Field by field equality; the strings a build allocates compare by text. */
static void assert_same(const kb_snapshot *x, const kb_snapshot *y)
{
	assert_int_equal(x->nnodes, y->nnodes);
	assert_int_equal(x->ntasks, y->ntasks);
	assert_int_equal(x->njobs, y->njobs);
	assert_int_equal(x->nqueues, y->nqueues);
	for (uint32_t i = 0; i < x->nnodes; i++) {
		kb_node a = x->nodes[i], b = y->nodes[i];
		a.gen = b.gen = 0; /* a change counter: how the two got there differs */
		assert_memory_equal(&a, &b, sizeof(kb_node));
	}
	assert_memory_equal(x->tasks, y->tasks, x->ntasks * sizeof(kb_task));
	assert_memory_equal(x->queues, y->queues, x->nqueues * sizeof(kb_queue));
	for (uint32_t i = 0; i < x->njobs; i++) {
		kb_job a = x->jobs[i], b = y->jobs[i];
		if (a.invalid || b.invalid) {
			assert_non_null(a.invalid);
			assert_non_null(b.invalid);
			assert_string_equal(a.invalid, b.invalid);
		}
		a.invalid = b.invalid = NULL;
		assert_memory_equal(&a, &b, sizeof(kb_job));
		assert_memory_equal(&x->job_tasks[a.first_task], &y->job_tasks[b.first_task],
				    a.ntasks * sizeof(uint32_t));
	}
	assert_memory_equal(&x->total_allocatable, &y->total_allocatable, sizeof(kb_res));
	assert_memory_equal(&x->total_future_idle, &y->total_future_idle, sizeof(kb_res));
	assert_true(kb_snapshot_check(x, NULL, 0));
}

static void cached_snapshot_equals_full_build_after_scheduler_changes(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot first, cached, full;
	kb_snapshot_init(&first);
	assert_int_equal(kb_cluster_snapshot(&c, &first, &err), 0); /* full build, cached */
	kb_snapshot_release(&first);

	/* What the scheduler and the simulated kubelet change: no new object. */
	assert_int_equal(kb_cluster_set_pod(&c, "default/a", "n1", KB_TASK_RUNNING, 5000, 1u << 1), 0);
	assert_int_equal(kb_cluster_set_pod(&c, "default/b", "n2", KB_TASK_BINDING, 5000, 0), 0);
	assert_int_equal(kb_cluster_note_eviction(&c, "default/b", 4000), 0);
	assert_int_equal(kb_cluster_set_podgroup_phase(&c, "default/g", KB_PG_RUNNING), 0);
	assert_int_equal(kb_cluster_set_pod(&c, "default/orphan", "nowhere", KB_TASK_BOUND, 1, 0), 0);

	uint64_t shape = c.shape;
	kb_snapshot_init(&cached);
	assert_int_equal(kb_cluster_snapshot(&c, &cached, &err), 0);
	assert_true(c.cache_valid && c.cache_shape == shape); /* it came from the cache */

	kb_cluster_queue_conf_changed(&c); /* forces a full build */
	kb_snapshot_init(&full);
	assert_int_equal(kb_cluster_snapshot(&c, &full, &err), 0);
	assert_same(&cached, &full);

	/* And the refreshed fields are the new ones. */
	int32_t n1 = kb_snapshot_find_node(&cached, "n1");
	assert_int_equal(cached.nodes[n1].used.q[KB_RES_CPU], 1000);
	int32_t g = kb_snapshot_find_job(&cached, "default/g");
	assert_int_equal(cached.jobs[g].phase, KB_PG_RUNNING);
	assert_int_equal(cached.jobs[g].min_resources.q[KB_RES_CPU], 2000);
	int32_t solo = kb_snapshot_find_job(&cached, "default/solo");
	assert_int_equal(cached.jobs[solo].priority, 100);
	assert_int_equal(cached.jobs[solo].ntasks, 1);
	kb_snapshot_release(&cached);
	kb_snapshot_release(&full);
	kb_cluster_release(&c);
}

static void new_object_makes_a_full_build(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot s;
	kb_snapshot_init(&s);
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	kb_snapshot_release(&s);
	load_cluster(&c, "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
		 "status: {allocatable: {cpu: '8', memory: 4Gi}}\n");
	kb_snapshot_init(&s);
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	assert_int_equal(s.nnodes, 3);
	assert_string_equal(s.nodes[0].name, "n0");
	/* The task on n2 follows its node to its new index. */
	for (uint32_t i = 0; i < s.ntasks; i++)
		if (strcmp(s.tasks[i].name, "theirs") == 0)
			assert_string_equal(s.nodes[s.tasks[i].node].name, "n2");
	assert_true(kb_snapshot_check(&s, NULL, 0));
	kb_snapshot_release(&s);
	kb_cluster_release(&c);
}

/* Pods naming PodGroups that do not exist each get a job that says so,
 * however many there are (the build grows its job array for them), and the
 * cache makes them again exactly. */
static void missing_podgroups_each_get_a_job(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		 "status: {allocatable: {cpu: '4'}}\n");
	for (int i = 0; i < 6; i++) {
		char doc[512];
		snprintf(doc, sizeof(doc),
			 "apiVersion: v1\nkind: Pod\n"
			 "metadata: {name: p%d, annotations: {scheduling.k8s.io/group-name: m%d}}\n"
			 "spec: {schedulerName: kube-batchd}\n",
			 i, i % 5);
		load_cluster(&c, doc);
	}
	kb_snapshot full, cached, again;
	kb_snapshot_init(&full);
	assert_int_equal(kb_cluster_snapshot(&c, &full, &err), 0);
	assert_int_equal(full.ntasks, 6);
	assert_int_equal(full.njobs, 5);
	for (uint32_t i = 0; i < full.njobs; i++) {
		char want[64];
		snprintf(want, sizeof(want), "PodGroup \"default/m%u\" not found", i);
		assert_string_equal(full.jobs[i].invalid, want);
	}
	assert_int_equal(full.jobs[0].ntasks, 2); /* p0 and p5 */
	kb_snapshot_init(&cached);
	assert_int_equal(kb_cluster_snapshot(&c, &cached, &err), 0);
	assert_true(c.cache_valid);
	assert_same(&cached, &full);
	assert_ptr_not_equal(cached.jobs[0].invalid, full.jobs[0].invalid); /* its own copy */
	kb_snapshot_release(&full); /* the cached one stands alone */
	kb_cluster_queue_conf_changed(&c);
	kb_snapshot_init(&again);
	assert_int_equal(kb_cluster_snapshot(&c, &again, &err), 0);
	assert_same(&cached, &again);
	kb_snapshot_release(&cached);
	kb_snapshot_release(&again);
	kb_cluster_release(&c);
}

/* Equal but for the order of each node's task list (a refreshed task goes to
 * the front) and the change counters. */
static void assert_same_but_lists(const kb_snapshot *x, const kb_snapshot *y)
{
	assert_int_equal(x->nnodes, y->nnodes);
	assert_int_equal(x->ntasks, y->ntasks);
	assert_int_equal(x->njobs, y->njobs);
	for (uint32_t i = 0; i < x->nnodes; i++) {
		kb_node a = x->nodes[i], b = y->nodes[i];
		a.gen = b.gen = 0;
		a.task_head = b.task_head = 0;
		assert_memory_equal(&a, &b, sizeof(kb_node));
	}
	for (uint32_t i = 0; i < x->ntasks; i++) {
		kb_task a = x->tasks[i], b = y->tasks[i];
		a.node_prev = a.node_next = b.node_prev = b.node_next = 0;
		assert_memory_equal(&a, &b, sizeof(kb_task));
	}
	for (uint32_t i = 0; i < x->njobs; i++) {
		kb_job a = x->jobs[i], b = y->jobs[i];
		a.invalid = b.invalid = NULL;
		assert_memory_equal(&a, &b, sizeof(kb_job));
	}
	assert_memory_equal(x->queues, y->queues, x->nqueues * sizeof(kb_queue));
	assert_memory_equal(&x->total_future_idle, &y->total_future_idle, sizeof(kb_res));
	char why[256];
	assert_true(kb_snapshot_check(x, why, sizeof(why)));
}

/* The lent session snapshot: a session's own changes are put back, and what
 * the scheduler changed in the store since is brought in, without a build. */
static void session_snapshot_is_put_back_and_refreshed(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot *s;
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	/* A session places a and b (not committed to the store). */
	int32_t a = -1, b = -1;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		if (strcmp(s->tasks[i].key, "default/a") == 0)
			a = (int32_t)i;
		if (strcmp(s->tasks[i].key, "default/b") == 0)
			b = (int32_t)i;
	}
	assert_true(a >= 0 && b >= 0);
	kb_snapshot_touch_task(s, (uint32_t)a);
	s->tasks[a].node = kb_snapshot_find_node(s, "n2");
	kb_snapshot_set_task_status(s, (uint32_t)a, KB_TASK_ALLOCATED);
	kb_snapshot_touch_task(s, (uint32_t)b);
	s->tasks[b].node = kb_snapshot_find_node(s, "n1");
	kb_snapshot_set_task_status(s, (uint32_t)b, KB_TASK_BINDING);
	s->jobs[0].phase = KB_PG_INQUEUE; /* a session admitted it */

	/* Then the store learns what happened: a elsewhere, b bound and evicted. */
	assert_int_equal(kb_cluster_set_pod(&c, "default/a", "n1", KB_TASK_RUNNING, 5000, 1u << 1), 0);
	assert_int_equal(kb_cluster_set_pod(&c, "default/b", "n1", KB_TASK_BOUND, 5000, 0), 0);
	assert_int_equal(kb_cluster_note_eviction(&c, "default/b", 4000), 0);
	assert_int_equal(kb_cluster_set_podgroup_phase(&c, "default/g", KB_PG_RUNNING), 0);
	uint64_t shape = c.shape, builds = c.live_builds;

	kb_snapshot *again;
	assert_int_equal(kb_cluster_session_snapshot(&c, &again, &err), 0);
	assert_ptr_equal(again, s);
	assert_true(c.live_valid && c.live_shape == shape); /* no build */
	assert_true(c.live_builds == builds);
	kb_snapshot ref;
	kb_snapshot_init(&ref);
	assert_int_equal(kb_cluster_snapshot(&c, &ref, &err), 0);
	assert_same_but_lists(again, &ref);
	kb_snapshot_release(&ref);

	/* A new object: built again. */
	load_cluster(&c, "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"
		 "status: {allocatable: {cpu: '4', memory: 4Gi}}\n");
	assert_int_equal(kb_cluster_session_snapshot(&c, &again, &err), 0);
	assert_int_equal(again->nnodes, 3);
	assert_true(c.live_shape == c.shape);
	assert_true(c.live_builds == builds + 1);
	kb_cluster_release(&c);
}

/* Equal by value: strings by text (they may come from different objects),
 * the rest but each node's task list order and the change counters. */
static void assert_same_values(const kb_snapshot *x, const kb_snapshot *y)
{
	assert_int_equal(x->nnodes, y->nnodes);
	assert_int_equal(x->ntasks, y->ntasks);
	assert_int_equal(x->njobs, y->njobs);
	for (uint32_t i = 0; i < x->nnodes; i++) {
		assert_string_equal(x->nodes[i].name, y->nodes[i].name);
		assert_memory_equal(&x->nodes[i].used, &y->nodes[i].used, sizeof(kb_res));
		assert_memory_equal(&x->nodes[i].idle, &y->nodes[i].idle, sizeof(kb_res));
	}
	for (uint32_t i = 0; i < x->ntasks; i++) {
		kb_task a = x->tasks[i], b = y->tasks[i];
		assert_string_equal(a.uid, b.uid);
		assert_string_equal(a.key, b.key);
		assert_string_equal(a.name, b.name);
		assert_string_equal(a.ns, b.ns);
		assert_int_equal(a.spec->labels.n, b.spec->labels.n);
		a.uid = a.ns = a.name = a.key = b.uid = b.ns = b.name = b.key = NULL;
		a.spec = b.spec = NULL;
		a.node_prev = a.node_next = b.node_prev = b.node_next = 0;
		assert_memory_equal(&a, &b, sizeof(kb_task));
	}
	for (uint32_t i = 0; i < x->njobs; i++) {
		kb_job a = x->jobs[i], b = y->jobs[i];
		assert_string_equal(a.uid, b.uid);
		assert_string_equal(a.key, b.key);
		assert_string_equal(a.name, b.name);
		assert_string_equal(a.ns, b.ns);
		a.uid = a.ns = a.name = a.key = b.uid = b.ns = b.name = b.key = NULL;
		a.invalid = b.invalid = NULL;
		assert_memory_equal(&a, &b, sizeof(kb_job));
	}
	assert_memory_equal(x->queues, y->queues, x->nqueues * sizeof(kb_queue));
	assert_memory_equal(&x->total_future_idle, &y->total_future_idle, sizeof(kb_res));
	char why[256];
	assert_true(kb_snapshot_check(x, why, sizeof(why)));
}

/* What the API sends back after a bind and as pods start: the same pods
 * on nodes, Running, with an annotation nobody reads; the PodGroup's new
 * phase. */
static const char UPDATES[] =
	"apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {scheduling.k8s.io/group-name: g, x: y}}\n"
	"spec: {schedulerName: kube-batchd, nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}]}\n"
	"status: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\n"
	"spec: {schedulerName: kube-batchd, priorityClassName: high, nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"status: {phase: Pending}\n"
	"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: g}\nspec: {minMember: 2, minResources: {cpu: '2'}}\nstatus: {phase: Running}\n";

/* The same objects again, a step later in their lives. */
static const char UPDATES2[] =
	"apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {scheduling.k8s.io/group-name: g}}\n"
	"spec: {schedulerName: kube-batchd, nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}]}\n"
	"status: {phase: Succeeded}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\n"
	"spec: {schedulerName: kube-batchd, priorityClassName: high, nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"status: {phase: Running}\n"
	"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: g}\nspec: {minMember: 2, minResources: {cpu: '2'}}\nstatus: {phase: Inqueue}\n";

/* s equals a full build of CLUSTER with UPDATES applied. */
static void assert_equals_updated_build(const kb_snapshot *s)
{
	kb_cluster ref;
	kb_err err;
	kb_cluster_init(&ref, "kube-batchd", "default");
	load_cluster(&ref, CLUSTER);
	load_cluster(&ref, UPDATES);
	kb_snapshot full;
	kb_snapshot_init(&full);
	assert_int_equal(kb_cluster_snapshot(&ref, &full, &err), 0);
	assert_same_values(s, &full);
	kb_snapshot_release(&full);
	kb_cluster_release(&ref);
}

/* Updates that change only what a snapshot refreshes keep the shape: the
 * session snapshot is refreshed, and equals a full build of the same
 * objects. Others change it. */
static void updates_that_build_the_same_are_refreshed_in_place(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot *s;
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	uint64_t shape = c.shape, work = c.work_generation, builds = c.live_builds;
	load_cluster(&c, UPDATES);
	assert_true(c.shape == shape);
	assert_int_equal(c.retired.n, 3);
	assert_true(c.work_generation == work); /* pods onto nodes, a phase: no new work */
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_true(c.live_valid && c.live_shape == shape); /* refreshed, not built */
	assert_true(c.live_builds == builds);

	assert_equals_updated_build(s);
	int32_t g = kb_snapshot_find_job(s, "default/g");
	assert_int_equal(s->jobs[g].phase, KB_PG_RUNNING);
	int32_t n2 = kb_snapshot_find_node(s, "n2");
	assert_int_equal(s->nodes[n2].used.q[KB_RES_CPU], 3000); /* theirs and solo */
	/* The cache is still the build's too. */
	kb_snapshot cached;
	kb_snapshot_init(&cached);
	assert_int_equal(kb_cluster_snapshot(&c, &cached, &err), 0);
	assert_true(c.cache_shape == shape);
	assert_equals_updated_build(&cached);
	kb_snapshot_release(&cached);

	/* New labels: a different build. The retired objects go with it. */
	load_cluster(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: b, labels: {k: v}, "
		 "annotations: {scheduling.k8s.io/group-name: g}}\n"
		 "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n");
	assert_true(c.shape != shape);
	assert_int_equal(c.retired.n, 0);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);

	/* Another scheduler's pod: not in the build while pending, so binding it
	 * changes the build. */
	load_cluster(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: other}\n"
		 "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n");
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	shape = c.shape;
	load_cluster(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: other}\n"
		 "spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n");
	assert_true(c.shape != shape);

	/* A node's heartbeat builds the same and makes no work; a taint does. */
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0); /* up to date */
	shape = c.shape;
	work = c.work_generation;
	load_cluster(&c, "apiVersion: v1\nkind: Node\nmetadata: {name: n2, annotations: {beat: '2'}}\n"
		 "status: {allocatable: {cpu: '4', memory: 4Gi}, conditions: [{type: Ready, status: 'True', "
		 "lastHeartbeatTime: '2026-11-22T16:00:00Z'}]}\n");
	assert_true(c.shape == shape);
	assert_true(c.work_generation == work);
	builds = c.live_builds;
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_true(c.live_shape == shape);
	assert_true(c.live_builds == builds);
	n2 = kb_snapshot_find_node(s, "n2");
	assert_int_equal(s->nodes[n2].used.q[KB_RES_CPU], 3000);
	load_cluster(&c, "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
		 "spec: {taints: [{key: k, effect: NoSchedule}]}\n"
		 "status: {allocatable: {cpu: '4', memory: 4Gi}}\n");
	assert_true(c.shape != shape);
	assert_true(c.work_generation != work);

	/* A pod that finishes is refreshed in place, and frees its node. */
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	shape = c.shape;
	work = c.work_generation;
	load_cluster(&c, UPDATES2); /* a Succeeded, solo Running, g Inqueue */
	assert_true(c.shape == shape);
	assert_true(c.work_generation != work);

	/* A PodGroup's spec: a different build. */
	shape = c.shape;
	load_cluster(&c, "apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
		 "metadata: {name: g}\nspec: {minMember: 3, minResources: {cpu: '2'}}\n");
	assert_true(c.shape != shape);
	kb_cluster_release(&c);
}

/* Replaced objects are kept for the snapshots that point into them, but
 * not without bound: past the limit the shape changes and frees them. */
static void retired_objects_are_bounded(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot *s;
	uint64_t shape = c.shape;
	size_t most = 0;
	for (int i = 0; i < 200; i++) {
		assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
		load_cluster(&c, i % 2 ? UPDATES : UPDATES2);
		most = c.retired.n > most ? c.retired.n : most;
	}
	assert_int_equal(most, c.pods.slots.n / 16 + 64); /* reached, never passed */
	assert_true(c.shape != shape);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_equals_updated_build(s);
	kb_cluster_release(&c);
}

/* UPDATES again with only an annotation changed: what a kubelet's or a
 * controller's write looks like to the scheduler. */
static const char ECHOES[] =
	"apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {scheduling.k8s.io/group-name: g, x: z}}\n"
	"spec: {schedulerName: kube-batchd, nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}]}\n"
	"status: {phase: Running}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo, annotations: {x: z}}\n"
	"spec: {schedulerName: kube-batchd, priorityClassName: high, nodeName: n2, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"status: {phase: Pending}\n";

/* A burst of updates that only confirm the past (a gang's binding echoes)
 * forces a build once the retired objects reach their limit, but gives a
 * session no work, so the daemon does not run early for it. Past the limit
 * a pod that finishes is still work. */
static void echoes_past_the_retired_limit_make_no_work(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	kb_snapshot *s;
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	size_t limit = c.pods.slots.n / 16 + 64;
	uint64_t shape = c.shape, work = c.work_generation;
	for (size_t i = 0; i < limit; i++)
		load_cluster(&c, i % 2 ? UPDATES : ECHOES);
	assert_true(c.shape != shape); /* the limit was reached: a build */
	assert_true(c.work_generation == work);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_equals_updated_build(s);

	while (c.retired.n < limit)
		load_cluster(&c, c.retired.n % 2 ? UPDATES : ECHOES);
	shape = c.shape;
	load_cluster(&c, UPDATES2); /* a Succeeded */
	assert_true(c.shape != shape);
	assert_true(c.work_generation != work);
	kb_cluster_release(&c);
}

/* An eviction the API has not shown yet is not undone by an update from
 * before it (the pod still Running on its node): only the deletion, or the
 * pod's end, confirms it. Else the next session would evict another pod. */
static void eviction_waits_for_the_deletion(void **state)
{
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, CLUSTER);
	load_cluster(&c, UPDATES); /* a Running on n1 */
	assert_int_equal(kb_cluster_set_pod(&c, "default/a", "n1", KB_TASK_RELEASING, 5000, 0), 0);
	load_cluster(&c, UPDATES); /* a late update: Running on n1, no deletion */
	kb_snapshot *s;
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	int32_t a = -1;
	for (uint32_t i = 0; i < s->ntasks; i++)
		if (strcmp(s->tasks[i].key, "default/a") == 0)
			a = (int32_t)i;
	assert_true(a >= 0);
	assert_int_equal(s->tasks[a].status, KB_TASK_RELEASING);
	/* The deletion arrives: the object is the truth again, still Releasing. */
	load_cluster(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: a, deletionTimestamp: '2026-11-22T18:00:00Z', "
		 "annotations: {scheduling.k8s.io/group-name: g}}\n"
		 "spec: {schedulerName: kube-batchd, nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}}}]}\n"
		 "status: {phase: Running}\n");
	assert_false(kb_cluster_pod(&c, "default/a")->overridden);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_int_equal(s->tasks[a].status, KB_TASK_RELEASING);
	kb_cluster_release(&c);
}

/* A group of pods naming "volcano" is another scheduler's (foreign: left
 * alone) until the daemon answers to that name too; at most
 * KB_MAX_SCHEDULER_NAMES names. */
static const char VOLCANO_GROUP[] =
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
	"status: {allocatable: {cpu: '4', memory: 4Gi}}\n"
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
	"metadata: {name: vg}\nspec: {minMember: 2}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: v0, annotations: {scheduling.k8s.io/group-name: vg}}\n"
	"spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: v1, annotations: {scheduling.k8s.io/group-name: vg}}\n"
	"spec: {schedulerName: volcano, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n";

static void another_schedulers_group_is_ours_once_named(void **state)
{
	kb_err err;
	for (int named = 0; named < 2; named++) {
		kb_cluster c;
		kb_cluster_init(&c, "kube-batchd", "default");
		if (named)
			assert_int_equal(kb_cluster_add_scheduler_name(&c, "volcano"), 0);
		load_cluster(&c, VOLCANO_GROUP);
		kb_snapshot s;
		kb_snapshot_init(&s);
		assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
		const kb_job *j = &s.jobs[kb_snapshot_find_job(&s, "default/vg")];
		assert_int_equal(j->foreign, !named);
		assert_int_equal(j->ntasks, named ? 2 : 0);
		if (named)
			assert_null(j->invalid);
		else
			assert_non_null(strstr(j->invalid, "name schedulerName \"volcano\""));
		kb_snapshot_release(&s);
		kb_cluster_release(&c);
	}
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g"};
	for (int i = 0; i < 7; i++)
		assert_int_equal(kb_cluster_add_scheduler_name(&c, names[i]), 0);
	assert_int_equal(kb_cluster_add_scheduler_name(&c, "a"), 0); /* known: ignored */
	assert_int_equal(kb_cluster_add_scheduler_name(&c, "h"), -E2BIG);
	kb_cluster_release(&c);
}

/* A gated pod is no task; removing its gates is a change of shape, so the
 * next snapshot has it, and a snapshot from the cache keeps the counts. */
static void ungating_a_pod_makes_it_a_task(void **state)
{
	static const char GATED[] =
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		"status: {allocatable: {cpu: '4', memory: 4Gi}}\n"
		"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {name: g}\nspec: {minMember: 2}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p0, annotations: {scheduling.k8s.io/group-name: g}}\n"
		"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, annotations: {scheduling.k8s.io/group-name: g}}\n"
		"spec: {schedulerName: kube-batchd, schedulingGates: [{name: data}], "
		"containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n";
	kb_cluster c;
	kb_err err;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, GATED);
	kb_snapshot s, cached, full;
	kb_snapshot_init(&s);
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	const kb_job *j = &s.jobs[kb_snapshot_find_job(&s, "default/g")];
	assert_int_equal(j->ntasks, 1);
	assert_int_equal(j->ngated, 1);
	kb_snapshot_release(&s);
	kb_snapshot_init(&cached);
	assert_int_equal(kb_cluster_snapshot(&c, &cached, &err), 0); /* from the cache */
	kb_cluster_queue_conf_changed(&c);
	kb_snapshot_init(&full);
	assert_int_equal(kb_cluster_snapshot(&c, &full, &err), 0);
	assert_same(&cached, &full);
	kb_snapshot_release(&cached);
	kb_snapshot_release(&full);

	uint64_t shape = c.shape;
	load_cluster(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, annotations: "
			 "{scheduling.k8s.io/group-name: g}}\nspec: {schedulerName: kube-batchd, "
			 "containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n");
	assert_true(c.shape != shape);
	kb_snapshot_init(&s);
	assert_int_equal(kb_cluster_snapshot(&c, &s, &err), 0);
	j = &s.jobs[kb_snapshot_find_job(&s, "default/g")];
	assert_int_equal(j->ntasks, 2);
	assert_int_equal(j->ngated, 0);
	kb_snapshot_release(&s);
	kb_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cached_snapshot_equals_full_build_after_scheduler_changes),
		cmocka_unit_test(new_object_makes_a_full_build),
		cmocka_unit_test(missing_podgroups_each_get_a_job),
		cmocka_unit_test(session_snapshot_is_put_back_and_refreshed),
		cmocka_unit_test(updates_that_build_the_same_are_refreshed_in_place),
		cmocka_unit_test(retired_objects_are_bounded),
		cmocka_unit_test(echoes_past_the_retired_limit_make_no_work),
		cmocka_unit_test(eviction_waits_for_the_deletion),
		cmocka_unit_test(another_schedulers_group_is_ours_once_named),
		cmocka_unit_test(ungating_a_pod_makes_it_a_task),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

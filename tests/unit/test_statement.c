#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "scheduler/statement.h"
#include "tests/unit/load_cluster.h"
#include "plugins/registry.h"

static const char CLUSTER[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
			      "status: {allocatable: {cpu: '4', memory: 4Gi}}\n"
			      "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
			      "status: {allocatable: {cpu: '4', memory: 4Gi}}\n"
			      "---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
			      "metadata: {name: g}\nspec: {minMember: 2}\n"
			      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {scheduling.k8s.io/group-name: g}}\n"
			      "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
			      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, annotations: {scheduling.k8s.io/group-name: g}}\n"
			      "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
			      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: running}\n"
			      "spec: {schedulerName: kube-batchd, nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\n"
			      "status: {phase: Running}\n";

typedef struct fixture {
	kb_cluster cluster;
	kb_snapshot snap;
	kb_conf conf;
	kb_session ssn;
	int binds, evicts;
} fixture;

static int rec_bind(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		    const kb_node *n)
{
	((fixture *)ctx)->binds++;
	return 0;
}

static int rec_evict(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		     const char *why)
{
	((fixture *)ctx)->evicts++;
	return 0;
}

static const kb_effects recorder = {.bind = rec_bind, .evict = rec_evict};

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	kb_cluster_init(&f->cluster, "kube-batchd", "default");
	kb_err err;
	load_cluster(&f->cluster, CLUSTER);
	kb_snapshot_init(&f->snap);
	assert_int_equal(kb_cluster_snapshot(&f->cluster, &f->snap, &err), 0);
	assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &f->conf, &err), 0);
	assert_int_equal(kb_session_open(&f->ssn, &f->snap, &f->conf, &recorder, f, 0, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	kb_session_close(&f->ssn);
	kb_conf_release(&f->conf);
	kb_snapshot_release(&f->snap);
	kb_cluster_release(&f->cluster);
	free(f);
	return 0;
}

static uint32_t task_index(const kb_snapshot *s, const char *key)
{
	for (uint32_t i = 0; i < s->ntasks; i++)
		if (strcmp(s->tasks[i].key, key) == 0)
			return i;
	fail_msg("no task %s", key);
	return 0;
}

/* A copy of every array the session may touch. */
typedef struct copy {
	kb_node *nodes;
	kb_task *tasks;
	kb_job *jobs;
	kb_queue *queues;
} copy;

static copy take(const kb_snapshot *s)
{
	copy c = {malloc(s->nnodes * sizeof(kb_node)), malloc(s->ntasks * sizeof(kb_task)),
		  malloc(s->njobs * sizeof(kb_job)), malloc(s->nqueues * sizeof(kb_queue))};
	memcpy(c.nodes, s->nodes, s->nnodes * sizeof(kb_node));
	memcpy(c.tasks, s->tasks, s->ntasks * sizeof(kb_task));
	memcpy(c.jobs, s->jobs, s->njobs * sizeof(kb_job));
	memcpy(c.queues, s->queues, s->nqueues * sizeof(kb_queue));
	return c;
}

static void assert_same(const kb_snapshot *s, copy c)
{
	/* kb_node.gen counts changes, so it moves on and back; the rest must not. */
	for (uint32_t i = 0; i < s->nnodes; i++) {
		kb_node a = c.nodes[i], b = s->nodes[i];
		a.gen = b.gen = 0;
		assert_memory_equal(&a, &b, sizeof(kb_node));
	}
	assert_memory_equal(c.tasks, s->tasks, s->ntasks * sizeof(kb_task));
	assert_memory_equal(c.jobs, s->jobs, s->njobs * sizeof(kb_job));
	assert_memory_equal(c.queues, s->queues, s->nqueues * sizeof(kb_queue));
	free(c.nodes);
	free(c.tasks);
	free(c.jobs);
	free(c.queues);
}

static void discard_restores_snapshot_exactly(void **state)
{
	fixture *f = *state;
	kb_snapshot *s = &f->snap;
	copy before = take(s);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	uint32_t a = task_index(s, "default/a"), r = task_index(s, "default/running");
	assert_int_equal(kb_stmt_allocate(&st, a, 1), 0);
	assert_int_equal(s->nodes[1].idle.q[KB_RES_CPU], 3000);
	assert_int_equal(kb_stmt_evict(&st, r, "test"), 0);
	assert_int_equal(s->nodes[0].releasing.q[KB_RES_CPU], 2000);
	assert_int_equal(kb_stmt_pipeline(&st, task_index(s, "default/b"), 0), 0);
	assert_true(kb_snapshot_check(s, NULL, 0));
	kb_stmt_discard(&st);
	assert_true(kb_snapshot_check(s, NULL, 0));
	assert_same(s, before);
	assert_int_equal(f->binds + f->evicts, 0);
}

/* A session lent a snapshot that outlives it puts it back through the
 * journal: committed binds and evictions too, node generations included. */
static void journal_rollback_restores_snapshot_exactly(void **state)
{
	fixture *f = *state;
	kb_snapshot *s = &f->snap;
	copy before = take(s);
	kb_node *nodes = malloc(s->nnodes * sizeof(kb_node));
	memcpy(nodes, s->nodes, s->nnodes * sizeof(kb_node));
	assert_int_equal(kb_snapshot_journal_begin(s), 0);
	assert_int_equal(kb_snapshot_journal_begin(s), -EBUSY);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, task_index(s, "default/a"), 1), 0);
	assert_int_equal(kb_stmt_allocate(&st, task_index(s, "default/b"), 1), 0);
	assert_int_equal(kb_stmt_evict(&st, task_index(s, "default/running"), "test"), 0);
	kb_stmt_commit(&st);
	assert_int_equal(f->binds, 2);
	assert_int_equal(s->tasks[task_index(s, "default/b")].status, KB_TASK_BINDING);
	s->jobs[0].phase = KB_PG_INQUEUE; /* an action admitted it */
	s->queues[0].allocated.q[KB_RES_CPU] += 1;
	assert_int_equal(kb_snapshot_journal_rollback(s), 0);
	assert_true(kb_snapshot_check(s, NULL, 0));
	assert_memory_equal(nodes, s->nodes, s->nnodes * sizeof(kb_node));
	assert_same(s, before);
	/* Not recording any more: changes stay, and a new journal can begin. */
	assert_int_equal(kb_snapshot_journal_rollback(s), 0);
	assert_int_equal(kb_snapshot_journal_begin(s), 0);
	assert_int_equal(kb_snapshot_journal_rollback(s), 0);
	free(nodes);
}

static void commit_binds_only_a_ready_gang(void **state)
{
	fixture *f = *state;
	kb_snapshot *s = &f->snap;
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, task_index(s, "default/a"), 1), 0);
	kb_stmt_commit(&st); /* minMember 2: not ready, so nothing is bound */
	assert_int_equal(f->binds, 0);
	assert_int_equal(s->tasks[task_index(s, "default/a")].status, KB_TASK_ALLOCATED);
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, task_index(s, "default/b"), 1), 0);
	kb_stmt_commit(&st); /* now ready: the new placement is bound */
	assert_int_equal(f->binds, 1);
	assert_int_equal(s->tasks[task_index(s, "default/b")].status, KB_TASK_BINDING);
	assert_true(kb_snapshot_check(s, NULL, 0));
}

static void commit_hands_evictions_to_effects(void **state)
{
	fixture *f = *state;
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_evict(&st, task_index(&f->snap, "default/running"), "test"), 0);
	kb_stmt_commit(&st);
	assert_int_equal(f->evicts, 1);
	assert_int_equal(f->snap.tasks[task_index(&f->snap, "default/running")].status, KB_TASK_RELEASING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(discard_restores_snapshot_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(journal_rollback_restores_snapshot_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(commit_binds_only_a_ready_gang, setup, teardown),
		cmocka_unit_test_setup_teardown(commit_hands_evictions_to_effects, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

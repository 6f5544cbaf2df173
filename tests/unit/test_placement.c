/* Node search (scheduler/actions/placement.c): the feasible nodes remembered
 * between members placed alike must never lead to a node that no longer
 * fits, and must not be used for a member placed differently. */
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
#include "scheduler/actions/placement.h"
#include "scheduler/statement.h"
#include "tests/unit/load_cluster.h"
#include "plugins/registry.h"

/* n1 holds 3 one-cpu members, n2 holds 2; queue q is capped at 4 cpu. The
 * gang g has 6 identical members; h is capped by q. */
static const char CLUSTER[] =
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '3', memory: 8Gi}}\n"
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '2', memory: 8Gi}}\n"
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
	"spec: {weight: 1, capability: {cpu: '4'}}\n"
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 6}\n"
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: h}\n"
	"spec: {minMember: 5, queue: q}\n";

static const char *pod(char *buf, size_t size, const char *name, const char *group, const char *cpu,
		       const char *extra)
{
	snprintf(buf, size,
		 "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {index: %s}, "
		 "annotations: {scheduling.k8s.io/group-name: %s}}\n"
		 "spec: {schedulerName: kube-batchd, %scontainers: [{name: c, resources: {requests: {cpu: '%s'}}}]}\n",
		 name, name, group, extra, cpu);
	return buf;
}

typedef struct fixture {
	kb_cluster cluster;
	kb_snapshot snap;
	kb_conf conf;
	kb_session ssn;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	kb_cluster_init(&f->cluster, "kube-batchd", "default");
	load_cluster(&f->cluster, CLUSTER);
	char buf[512], name[16];
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		load_cluster(&f->cluster, pod(buf, sizeof(buf), name, "g", "1", ""));
	}
	load_cluster(&f->cluster, pod(buf, sizeof(buf), "g-big", "g", "2", ""));
	load_cluster(&f->cluster, pod(buf, sizeof(buf), "g-tol", "g", "1",
		     "tolerations: [{key: k, operator: Exists, effect: NoSchedule}], "));
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "h%d", i);
		load_cluster(&f->cluster, pod(buf, sizeof(buf), name, "h", "1", ""));
	}
	kb_err err;
	kb_snapshot_init(&f->snap);
	assert_int_equal(kb_cluster_snapshot(&f->cluster, &f->snap, &err), 0);
	assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &f->conf, &err), 0);
	assert_int_equal(kb_session_open(&f->ssn, &f->snap, &f->conf, NULL, NULL, 0, &err), 0);
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

static uint32_t task_index(const kb_snapshot *s, const char *name)
{
	for (uint32_t i = 0; i < s->ntasks; i++)
		if (strcmp(s->tasks[i].name, name) == 0)
			return i;
	fail_msg("no task %s", name);
	return 0;
}

static void alike_compares_what_placement_reads(void **state)
{
	fixture *f = *state;
	const kb_snapshot *s = &f->snap;
	const kb_task *g0 = &s->tasks[task_index(s, "g0")];
	/* Different pod labels and names: still alike. */
	assert_true(kb_task_placed_alike(g0, &s->tasks[task_index(s, "g5")]));
	assert_false(kb_task_placed_alike(g0, &s->tasks[task_index(s, "g-big")]));
	assert_false(kb_task_placed_alike(g0, &s->tasks[task_index(s, "g-tol")]));
	/* Same request and spec, another job. */
	assert_false(kb_task_placed_alike(g0, &s->tasks[task_index(s, "h0")]));
}

/* Places members PREFIX0 .. PREFIX(n-1) one after another through the node
 * search, as allocate does, and records where each went in chosen[]. */
static void place_members(fixture *f, kb_statement *st, const char *prefix, int n, int32_t *chosen)
{
	kb_snapshot *s = &f->snap;
	char name[16];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		uint32_t ti = task_index(s, name);
		int32_t ni = chosen[i] = kb_best_node(&f->ssn, &s->tasks[ti], NULL);
		assert_true(ni >= 0);
		assert_true(kb_fits_idle(s, &s->tasks[ti], &s->nodes[ni]));
		assert_int_equal(kb_stmt_allocate(st, ti, (uint32_t)ni), 0);
	}
}

/* Five members fill both nodes exactly; each choice must still fit, although
 * the first search's nodes are reused. The sixth finds no room. */
static void reused_nodes_are_worked_out_again(void **state)
{
	fixture *f = *state;
	kb_session *ssn = &f->ssn;
	kb_snapshot *s = &f->snap;
	kb_statement st;
	kb_stmt_init(&st, ssn);
	int32_t chosen[5];
	place_members(f, &st, "g", 5, chosen);
	/* Least requested first: n1 (3 free), then n2 (2 of 2 free beats 2 of 3),
	 * which only a fresh score of n1 shows. */
	assert_int_equal(chosen[0], kb_snapshot_find_node(s, "n1"));
	assert_int_equal(chosen[1], kb_snapshot_find_node(s, "n2"));
	assert_int_equal(s->nodes[kb_snapshot_find_node(s, "n1")].ntasks, 3);
	assert_int_equal(s->nodes[kb_snapshot_find_node(s, "n2")].ntasks, 2);
	kb_fit_report rep;
	assert_int_equal(kb_best_node(ssn, &s->tasks[task_index(s, "g5")], &rep), -1);
	assert_string_equal(kb_fit_report_format(ssn, &rep), "0/2 nodes are available: 2 Insufficient cpu");
	kb_stmt_discard(&st);
}

/* The queue's capability is the same for every node: after four members the
 * remembered nodes still have room, but the chosen one is checked in full. */
static void chosen_node_is_checked_in_full(void **state)
{
	fixture *f = *state;
	kb_session *ssn = &f->ssn;
	kb_snapshot *s = &f->snap;
	kb_statement st;
	kb_stmt_init(&st, ssn);
	int32_t chosen[4];
	place_members(f, &st, "h", 4, chosen);
	kb_fit_report rep;
	assert_int_equal(kb_best_node(ssn, &s->tasks[task_index(s, "h4")], &rep), -1);
	assert_non_null(strstr(kb_fit_report_format(ssn, &rep), "would exceed its capability"));
	kb_stmt_discard(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(alike_compares_what_placement_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(reused_nodes_are_worked_out_again, setup, teardown),
		cmocka_unit_test_setup_teardown(chosen_node_is_checked_in_full, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

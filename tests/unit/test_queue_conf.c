/* The queue configuration file (queue/queue_conf.h): what a valid file gives,
 * and every refusal with the file:line:column of the node that is wrong. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "queue/queue_conf.h"

static kb_resnames names;

static int setup(void **state)
{
	kb_resnames_init(&names);
	return 0;
}

static int load(const char *text, kb_queue_conf *qc, kb_err *err)
{
	memset(err, 0, sizeof(*err));
	return kb_queue_conf_load_buffer(text, strlen(text), "q.yaml", &names, qc, err);
}

/* Loading must fail with -EINVAL and a message holding `where` and `what`. */
static void assert_refused(const char *text, const char *where, const char *what)
{
	kb_queue_conf qc;
	kb_err err;
	int r = load(text, &qc, &err);
	if (r != -EINVAL || !strstr(err.msg, where) || !strstr(err.msg, what))
		fail_msg("expected -EINVAL with \"%s\" and \"%s\", got %d: %s", where, what, r, err.msg);
	/* A refused file leaves nothing behind. */
	assert_null(qc.queues);
	assert_int_equal(qc.nqueues, 0);
}

static const kb_queue_def *def(const kb_queue_conf *qc, const char *name)
{
	for (uint32_t i = 0; i < qc->nqueues; i++)
		if (strcmp(qc->queues[i].name, name) == 0)
			return &qc->queues[i];
	return NULL;
}

static const char VALID[] = "queues:\n"
			    "- name: research\n"
			    "  weight: 3\n"
			    "  capability: {cpu: \"64\", memory: 256Gi, nvidia.com/gpu: 16}\n"
			    "  guarantee: {cpu: 8, nvidia.com/gpu: \"2\"}\n"
			    "  reclaimable: false\n"
			    "  namespaces: [team-b, team-a]\n"
			    "- name: prod\n"
			    "  parent: research\n"
			    "  state: Closed\n"
			    "  namespaces:\n"
			    "  - web\n"
			    "- name: scratch\n";

static void valid_file_is_read_in_file_order(void **state)
{
	kb_queue_conf qc;
	kb_err err;
	assert_int_equal(load(VALID, &qc, &err), 0);
	assert_string_equal(qc.source, "q.yaml");
	assert_int_equal(qc.nqueues, 3);
	assert_string_equal(qc.queues[0].name, "research");
	assert_string_equal(qc.queues[1].name, "prod");
	assert_string_equal(qc.queues[2].name, "scratch");

	int gpu = kb_resnames_find(&names, "nvidia.com/gpu");
	assert_true(gpu >= KB_RES_NFIXED);
	const kb_queue_def *r = def(&qc, "research");
	assert_int_equal(r->weight, 3);
	assert_int_equal(r->capability_mask, (1u << KB_RES_CPU) | (1u << KB_RES_MEMORY) | (1u << gpu));
	assert_int_equal(r->capability.q[KB_RES_CPU], 64000);
	assert_int_equal(r->capability.q[KB_RES_MEMORY], 256LL * 1024 * 1024 * 1024 * 1000);
	assert_int_equal(r->capability.q[gpu], 16000);
	assert_int_equal(r->guarantee.q[KB_RES_CPU], 8000);
	assert_int_equal(r->guarantee.q[gpu], 2000);
	assert_false(r->reclaimable);
	assert_int_equal(r->state, KB_QUEUE_OPEN);
	assert_null(r->parent);
	assert_int_equal(r->line, 2);
	assert_int_equal(r->col, 3);

	const kb_queue_def *p = def(&qc, "prod");
	assert_int_equal(p->weight, 1); /* defaults */
	assert_true(p->reclaimable);
	assert_int_equal(p->capability_mask, 0);
	assert_string_equal(p->parent, "research");
	assert_int_equal(p->state, KB_QUEUE_CLOSED);

	/* Namespaces, sorted for lookup. */
	assert_int_equal(qc.nns, 3);
	assert_string_equal(qc.ns_map[0].ns, "team-a");
	assert_string_equal(qc.ns_map[1].ns, "team-b");
	assert_string_equal(qc.ns_map[2].ns, "web");
	kb_queue_conf_release(&qc);
}

static void namespaces_map_to_their_queue(void **state)
{
	kb_queue_conf qc;
	kb_err err;
	assert_int_equal(load(VALID, &qc, &err), 0);
	assert_string_equal(kb_queue_conf_ns_queue(&qc, "team-a"), "research");
	assert_string_equal(kb_queue_conf_ns_queue(&qc, "team-b"), "research");
	assert_string_equal(kb_queue_conf_ns_queue(&qc, "web"), "prod");
	assert_null(kb_queue_conf_ns_queue(&qc, "default"));
	assert_null(kb_queue_conf_ns_queue(&qc, "team"));
	assert_null(kb_queue_conf_ns_queue(&qc, "zzz"));
	assert_null(kb_queue_conf_ns_queue(&qc, ""));
	kb_queue_conf_release(&qc);
}

static void empty_files_define_no_queues(void **state)
{
	const char *texts[] = {"", "# nothing\n", "queues:\n", "queues: []\n"};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		kb_queue_conf qc;
		kb_err err;
		assert_int_equal(load(texts[i], &qc, &err), 0);
		assert_int_equal(qc.nqueues, 0);
		assert_null(kb_queue_conf_ns_queue(&qc, "a"));
		kb_queue_conf_release(&qc);
	}
}

static void unknown_key_is_refused_at_the_key(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  wieght: 2\n",
		       "q.yaml:3:3:", "unknown key \"wieght\"");
	assert_refused("queue:\n"
		       "- name: a\n",
		       "q.yaml:1:1:", "unknown key \"queue\"");
}

static void bad_quantity_is_refused_at_the_value(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  capability:\n"
		       "    cpu: 4\n"
		       "    memory: 12XB\n",
		       "q.yaml:5:13:", "capability.memory: bad quantity \"12XB\"");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  guarantee: {cpu: \"-1\"}\n",
		       "q.yaml:3:20:", "must not be negative");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  guarantee: [cpu]\n",
		       "q.yaml:3:14:", "guarantee must be a mapping");
}

static void duplicate_name_is_refused_at_the_second_queue(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "- name: b\n"
		       "- name: a\n"
		       "  weight: 2\n",
		       "q.yaml:4:3:", "duplicate queue name \"a\"");
}

static void guarantee_above_capability_is_refused_at_the_guarantee(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  capability: {cpu: 4, memory: 1Gi}\n"
		       "  guarantee:\n"
		       "    cpu: 2\n"
		       "    memory: 2Gi\n",
		       "q.yaml:6:13:", "queue \"a\": guarantee of memory (2Gi) is above its capability (1Gi)");
	/* Capability 0 is a real ceiling. */
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  capability: {nvidia.com/gpu: 0}\n"
		       "  guarantee: {nvidia.com/gpu: 1}\n",
		       "q.yaml:4:31:", "guarantee of nvidia.com/gpu (1) is above its capability (0)");
}

static void namespace_mapped_twice_is_refused_at_the_second_mention(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  namespaces: [x, y]\n"
		       "- name: b\n"
		       "  namespaces:\n"
		       "  - z\n"
		       "  - y\n",
		       "q.yaml:7:5:", "namespace \"y\" is mapped to queue \"a\" and to queue \"b\"");
}

static void weight_below_one_is_refused_at_the_value(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  weight: 0\n",
		       "q.yaml:3:11:", "weight must be a whole number >= 1, got \"0\"");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  weight: 1.5\n",
		       "q.yaml:3:11:", "weight must be a whole number");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  weight: -3\n",
		       "q.yaml:3:11:", "weight must be a whole number");
}

static void unknown_parent_is_refused_at_the_parent(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "- name: b\n"
		       "  weight: 2\n"
		       "  parent: c\n",
		       "q.yaml:5:11:", "queue \"b\": parent \"c\" is not defined in this file");
}

static void parent_cycle_is_refused(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  parent: c\n"
		       "- name: b\n"
		       "  parent: a\n"
		       "- name: c\n"
		       "  parent: b\n",
		       "q.yaml:3:11:", "its parents form a cycle");
	assert_refused("queues:\n"
		       "- name: root\n"
		       "- name: a\n"
		       "  parent: a\n",
		       "q.yaml:4:11:", "queue \"a\" is its own parent");
	/* A deep chain that ends at a root is fine. */
	kb_queue_conf qc;
	kb_err err;
	assert_int_equal(load("queues:\n"
			      "- {name: d, parent: c}\n"
			      "- {name: c, parent: b}\n"
			      "- {name: b, parent: a}\n"
			      "- {name: a}\n"
			      "- {name: e, parent: c}\n",
			      &qc, &err),
			 0);
	assert_int_equal(qc.nqueues, 5);
	kb_queue_conf_release(&qc);
}

static void bad_state_is_refused_at_the_value(void **state)
{
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  state: open\n",
		       "q.yaml:3:10:", "state must be Open or Closed, got \"open\"");
}

static void other_mistakes_are_refused_where_they_are(void **state)
{
	assert_refused("queues:\n"
		       "- weight: 2\n",
		       "q.yaml:2:3:", "a queue needs a name");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  reclaimable: maybe\n",
		       "q.yaml:3:16:", "reclaimable must be true or false");
	assert_refused("queues: {name: a}\n", "q.yaml:1:9:", "queues must be a list");
	assert_refused("- name: a\n", "q.yaml:1:1:", "expected a mapping");
	assert_refused("queues:\n"
		       "- just-a-name\n",
		       "q.yaml:2:3:", "a queue must be a mapping");
	assert_refused("queues:\n"
		       "- name: a\n"
		       "  namespaces: team-a\n",
		       "q.yaml:3:15:", "namespaces must be a list");
	assert_refused("queues: []\n---\nqueues: []\n", "q.yaml", "expected one YAML document");
}

static void guarantees_above_the_cluster_are_refused(void **state)
{
	kb_queue_conf qc;
	kb_err err;
	assert_int_equal(load("queues:\n"
			      "- name: a\n"
			      "  guarantee: {cpu: 4}\n"
			      "- name: b\n"
			      "  guarantee: {cpu: 3, memory: 1Gi}\n"
			      "- name: c\n"
			      "  guarantee: {cpu: 2}\n",
			      &qc, &err),
			 0);
	kb_res total = {{0}};
	total.q[KB_RES_CPU] = 9000;
	total.q[KB_RES_MEMORY] = 4LL * 1024 * 1024 * 1024 * 1000;
	assert_int_equal(kb_queue_conf_check_cluster(&qc, &total, &names, &err), 0);

	total.q[KB_RES_CPU] = 8000;
	memset(&err, 0, sizeof(err));
	assert_int_equal(kb_queue_conf_check_cluster(&qc, &total, &names, &err), -EINVAL);
	/* Named at the queue whose guarantee takes the sum past the cluster. */
	assert_non_null(strstr(err.msg, "q.yaml:6:3: queue \"c\": the guarantees of cpu sum to 9, "
					"above the cluster's allocatable 8"));

	total.q[KB_RES_CPU] = 100000;
	total.q[KB_RES_MEMORY] = 0;
	assert_int_equal(kb_queue_conf_check_cluster(&qc, &total, &names, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "q.yaml:4:3: queue \"b\": the guarantees of memory sum to 1Gi"));
	kb_queue_conf_release(&qc);
}

/* A capability naming a resource past the slots (api/resource.h): -ENOSPC,
 * at the name, naming the names that hold the slots. */
static void resource_names_past_the_slots_are_refused(void **state)
{
	char text[2048];
	size_t off = (size_t)snprintf(text, sizeof(text), "queues:\n- name: a\n  capability:\n");
	for (int i = 0; i < KB_RES_MAX - KB_RES_NFIXED + 1; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "    example.com/r%d: 1\n", i);
	kb_queue_conf qc;
	kb_err err;
	assert_int_equal(load(text, &qc, &err), -ENOSPC);
	if (!strstr(err.msg, "q.yaml:17:5: queue \"a\": capability.example.com/r13: too many distinct "
			     "resource names (at most 16, cpu, memory and pods included; held by: "
			     "example.com/r0, example.com/r1,") ||
	    !strstr(err.msg, "example.com/r12)"))
		fail_msg("got: %s", err.msg);
	assert_null(qc.queues);
}

static void missing_file_is_enoent(void **state)
{
	kb_queue_conf qc;
	kb_err err = {0};
	assert_int_equal(kb_queue_conf_load_file("/nonexistent/queues.yaml", &names, &qc, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/queues.yaml"));
	assert_int_equal(qc.nqueues, 0);
	kb_queue_conf_release(&qc); /* safe on a refused file */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(valid_file_is_read_in_file_order, setup),
		cmocka_unit_test_setup(namespaces_map_to_their_queue, setup),
		cmocka_unit_test_setup(empty_files_define_no_queues, setup),
		cmocka_unit_test_setup(unknown_key_is_refused_at_the_key, setup),
		cmocka_unit_test_setup(bad_quantity_is_refused_at_the_value, setup),
		cmocka_unit_test_setup(duplicate_name_is_refused_at_the_second_queue, setup),
		cmocka_unit_test_setup(guarantee_above_capability_is_refused_at_the_guarantee, setup),
		cmocka_unit_test_setup(namespace_mapped_twice_is_refused_at_the_second_mention, setup),
		cmocka_unit_test_setup(weight_below_one_is_refused_at_the_value, setup),
		cmocka_unit_test_setup(unknown_parent_is_refused_at_the_parent, setup),
		cmocka_unit_test_setup(parent_cycle_is_refused, setup),
		cmocka_unit_test_setup(bad_state_is_refused_at_the_value, setup),
		cmocka_unit_test_setup(other_mistakes_are_refused_where_they_are, setup),
		cmocka_unit_test_setup(guarantees_above_the_cluster_are_refused, setup),
		cmocka_unit_test_setup(resource_names_past_the_slots_are_refused, setup),
		cmocka_unit_test_setup(missing_file_is_enoent, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

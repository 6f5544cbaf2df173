/* test_topology.c - gangs inside network domains (scheduler/topology.h) and
 * the decoding of their wish (cache/decode_topology.c).
 *
 * Pins: each spelling decodes to one wish (kube-batchd's, Kueue's, volcano's)
 * and bad or contradicting ones are refused naming the field; domains are
 * combinations of the levels' values (a rack name reused in two blocks is
 * two racks); the free aggregates stay exact through allocate, evict and
 * discard; the tightest domain that holds the gang is tried first; a gang
 * with placed members stays in their domain; a gang that fits no domain
 * binds nothing and its reason names the best domain and what it lacks;
 * pods of one gang that disagree make it invalid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "scheduler/statement.h"
#include "scheduler/topology.h"
#include "tests/unit/session_fixture.h"

#define RACK "topology.kubernetes.io/rack"
#define BLOCK "topology.kubernetes.io/block"

static const char ALLOCATE_ONLY[] = "actions: \"allocate\"\n"
				    "tiers:\n"
				    "- plugins:\n"
				    "  - name: priority\n"
				    "  - name: gang\n"
				    "- plugins:\n"
				    "  - name: predicates\n"
				    "  - name: proportion\n"
				    "  - name: nodeorder\n";

#define T_NODE(name, cpu, labels)                                                                  \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {" labels "}}\n"      \
	"status: {allocatable: {cpu: \"" cpu "\", memory: 64Gi, pods: \"110\"}}\n"
#define T_PG(name, min, anns)                                                                      \
	"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                          \
	"metadata: {name: " name ", namespace: default, annotations: {" anns "}}\n"                 \
	"spec: {minMember: " min "}\n"
#define T_POD(name, group, cpu, anns)                                                              \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, "          \
	"annotations: {scheduling.k8s.io/group-name: " group anns "}}\n"                            \
	"spec:\n  schedulerName: kube-batchd\n"                                                     \
	"  containers: [{name: c, resources: {requests: {cpu: \"" cpu "\"}}}]\n"
#define T_RUNNING(name, group, cpu, node)                                                          \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, "          \
	"annotations: {scheduling.k8s.io/group-name: " group "}}\n"                                 \
	"spec:\n  schedulerName: kube-batchd\n  nodeName: " node "\n"                               \
	"  containers: [{name: c, resources: {requests: {cpu: \"" cpu "\"}}}]\n"                     \
	"status: {phase: Running}\n"

/* ---- decoding ------------------------------------------------------------------- */

static int decode_one(const char *yaml, kb_object **ret, kb_err *err)
{
	kb_yaml_file file;
	kb_resnames names;
	kb_resnames_init(&names);
	if (kb_yaml_load_buffer(yaml, strlen(yaml), "t.yaml", &file, err) < 0)
		fail_msg("yaml: %s", err->msg);
	*ret = NULL;
	int r = kb_object_decode(file.docs[0], "t.yaml", &names, ret, err);
	kb_yaml_file_release(&file);
	return r;
}

#define PG_WITH(anns, spec)                                                                        \
	"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                               \
	"metadata: {name: g, namespace: default, annotations: {" anns "}}\n"                        \
	"spec: {minMember: 2" spec "}\n"

static void podgroup_annotations_decode(void **state)
{
	kb_object *o;
	kb_err err = {0};
	assert_int_equal(decode_one(PG_WITH("kube-batchd.io/topology-required: " BLOCK ", "
					    "kube-batchd.io/topology-preferred: " RACK ", "
					    "kube-batchd.io/topology-levels: ' " BLOCK " , " RACK
					    ",kubernetes.io/hostname'",
					    ""),
				    &o, &err),
			 0);
	const kb_topology_req *t = &o->u.podgroup.topology;
	assert_true(t->set);
	assert_string_equal(t->required, BLOCK);
	assert_string_equal(t->preferred, RACK);
	assert_string_equal(t->levels, BLOCK "," RACK ",kubernetes.io/hostname");
	assert_string_equal(t->source, "annotation kube-batchd.io/topology-required");
	kb_object_free(o);
}

static void kueue_and_volcano_decode(void **state)
{
	kb_object *o;
	kb_err err = {0};
	assert_int_equal(decode_one("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: "
				    "{kueue.x-k8s.io/podset-preferred-topology: " RACK "}}\n"
				    "spec: {containers: [{name: c}]}\n",
				    &o, &err),
			 0);
	assert_true(o->u.pod.topology.set);
	assert_null(o->u.pod.topology.required);
	assert_string_equal(o->u.pod.topology.preferred, RACK);
	kb_object_free(o);

	assert_int_equal(
		decode_one(PG_WITH("", ", networkTopology: {mode: soft, highestTierAllowed: 2}"), &o,
			   &err),
		0);
	assert_true(o->u.podgroup.topology.set);
	assert_false(o->u.podgroup.topology.volcano_hard);
	assert_int_equal(o->u.podgroup.topology.volcano_tier, 2);
	kb_object_free(o);

	assert_int_equal(decode_one(PG_WITH("", ", networkTopology: {}"), &o, &err), 0);
	assert_true(o->u.podgroup.topology.volcano_hard); /* the CRD's defaults: hard, tier 1 */
	assert_int_equal(o->u.podgroup.topology.volcano_tier, 1);
	kb_object_free(o);

	/* Unconstrained is no wish at all. */
	assert_int_equal(decode_one(PG_WITH("kueue.x-k8s.io/podset-unconstrained-topology: 'true'", ""),
				    &o, &err),
			 0);
	assert_false(o->u.podgroup.topology.set);
	kb_object_free(o);
}

static void bad_wishes_are_refused_naming_the_field(void **state)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{PG_WITH("kube-batchd.io/topology-required: ''", ""),
		 "metadata.annotations.kube-batchd.io/topology-required: must be a node label key"},
		{PG_WITH("kube-batchd.io/topology-required: 'a b'", ""), "got \"a b\""},
		{PG_WITH("kueue.x-k8s.io/podset-required-topology: " RACK ", "
			 "kueue.x-k8s.io/podset-preferred-topology: " RACK,
			 ""),
		 "must not contain more than one topology annotation"},
		{PG_WITH("kueue.x-k8s.io/podset-slice-required-topology: " RACK, ""),
		 "not supported by kube-batchd"},
		{PG_WITH("kube-batchd.io/topology-required: " RACK ", "
			 "kueue.x-k8s.io/podset-required-topology: " BLOCK,
			 ""),
		 "contradicts annotation kube-batchd.io/topology-required"},
		{PG_WITH("kube-batchd.io/topology-required: " RACK ", "
			 "kube-batchd.io/topology-preferred: " BLOCK,
			 ""),
		 "conflicts with the required"},
		{PG_WITH("kube-batchd.io/topology-required: " RACK ", "
			 "kube-batchd.io/topology-levels: '" BLOCK "'",
			 ""),
		 "is not one of the levels"},
		{PG_WITH("kube-batchd.io/topology-levels: 'kubernetes.io/hostname," RACK "'", ""),
		 "can only be the last"},
		{PG_WITH("kube-batchd.io/topology-levels: '" RACK "," RACK "'", ""), "listed twice"},
		{PG_WITH("kube-batchd.io/topology-levels: '" RACK ",'", ""), "is not a label key"},
		{PG_WITH("kube-batchd.io/topology-required: " RACK, ", networkTopology: {mode: hard}"),
		 "spec.networkTopology: conflicts with annotation kube-batchd.io/topology-required"},
		{PG_WITH("", ", networkTopology: {mode: strict}"), "must be hard or soft"},
		{PG_WITH("", ", networkTopology: {highestTierAllowed: 0}"),
		 "spec.networkTopology.highestTierAllowed"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kb_object *o;
		kb_err err = {0};
		assert_int_equal(decode_one(cases[i].yaml, &o, &err), -EINVAL);
		assert_null(o);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].want);
		assert_non_null(strstr(err.msg, "PodGroup \"default/g\""));
	}
}

/* ---- the index and the aggregates ----------------------------------------------- */

#define TWO_BLOCKS                                                                                 \
	T_NODE("b1-r1", "4", BLOCK ": b1, " RACK ": r1")                                           \
	T_NODE("b2-r1", "8", BLOCK ": b2, " RACK ": r1")                                           \
	T_NODE("b2-r2", "2", BLOCK ": b2, " RACK ": r2")

static void rack_names_are_counted_inside_their_block(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, "%s",
		 TWO_BLOCKS T_PG("g", "2",
				 "kube-batchd.io/topology-required: " RACK ", "
				 "kube-batchd.io/topology-levels: '" BLOCK "," RACK "'")
			 T_POD("g-0", "g", "3", "") T_POD("g-1", "g", "3", ""));
	fx_open(f, ALLOCATE_ONLY);
	const kb_job *j = &f->snap.jobs[kb_snapshot_find_job(&f->snap, "default/g")];
	kb_topo_attempts at;
	assert_int_equal(kb_topo_attempts_for(&f->ssn, j, NULL, &at), 0);
	assert_null(at.error);
	/* Three racks (b1/r1, b2/r1, b2/r2); only b2/r1 holds 6 cpu. */
	assert_int_equal(at.n, 1);
	const uint32_t *nodes;
	assert_int_equal(kb_topo_domain_nodes(at.v[0].tree, 1, at.v[0].hard_domain, &nodes), 1);
	assert_string_equal(f->snap.nodes[nodes[0]].name, "b2-r1");
	assert_string_equal(at.v[0].outside, "node(s) outside the gang's " RACK " \"b2/r1\"");
	fx_run(f);
	assert_int_equal(f->nbound, 2);
	assert_string_equal(f->bound_node[0], "b2-r1");
	assert_string_equal(f->bound_node[1], "b2-r1");
	fx_free(f);
}

/* Fails the test unless every domain's aggregates match its nodes. */
static void index_is_exact(fx *f)
{
	char why[256];
	if (!kb_topo_check(&f->ssn, why, sizeof(why)))
		fail_msg("%s", why);
}

static void free_aggregates_stay_exact(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, "%s",
		 T_NODE("a", "4", RACK ": r1") T_NODE("b", "4", RACK ": r1") T_NODE("c", "8", RACK ": r2")
			 T_PG("g", "2", "kube-batchd.io/topology-required: " RACK)
				 T_POD("g-0", "g", "3", "") T_POD("g-1", "g", "3", "")
					 T_RUNNING("old", "o", "1", "a"));
	fx_open(f, ALLOCATE_ONLY);
	const kb_job *j = &f->snap.jobs[kb_snapshot_find_job(&f->snap, "default/g")];
	kb_topo_attempts at;
	assert_int_equal(kb_topo_attempts_for(&f->ssn, j, NULL, &at), 0);
	/* r1: 7 cpu free on two nodes, one pod each; r2: 8 on one node, two
	 * pods: both hold the gang, r1 is the tighter. */
	assert_int_equal(at.n, 2);
	const uint32_t *nodes;
	assert_int_equal(kb_topo_domain_nodes(at.v[0].tree, 0, at.v[0].hard_domain, &nodes), 2);
	assert_int_equal(kb_topo_domain_nodes(at.v[1].tree, 0, at.v[1].hard_domain, &nodes), 1);

	/* Tentative changes move the aggregates, each exactly (checked against
	 * the nodes after every one); a discard puts them back. */
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	uint32_t c = (uint32_t)kb_snapshot_find_node(&f->snap, "c");
	index_is_exact(f);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/g-0"), c), 0);
	index_is_exact(f);
	assert_int_equal(kb_stmt_allocate(&st, fx_task_index(f, "default/g-1"), c), 0);
	index_is_exact(f);
	assert_int_equal(kb_stmt_evict(&st, fx_task_index(f, "default/old"), "test"), 0);
	index_is_exact(f);
	assert_int_equal(kb_topo_attempts_for(&f->ssn, j, NULL, &at), 0);
	assert_int_equal(at.n, 1); /* its members are on c now: it keeps to r2 */
	kb_stmt_discard(&st);
	index_is_exact(f);
	assert_int_equal(kb_topo_attempts_for(&f->ssn, j, NULL, &at), 0);
	assert_int_equal(at.n, 2);
	fx_free(f);
}

/* ---- placing and waiting -------------------------------------------------------- */

static void placed_members_keep_their_domain(void **state)
{
	/* minMember 1 with one member running in r2: the next goes to r2 too,
	 * though r1 is emptier and would come first (with the gang's minimum
	 * reached, every rack holds what it still needs; ties go in domain
	 * order). */
	fx *f = fx_session(ALLOCATE_ONLY,
			   T_NODE("a", "4", RACK ": r2") T_NODE("c", "16", RACK ": r1")
				   T_PG("g", "1", "kube-batchd.io/topology-required: " RACK)
					   T_RUNNING("g-0", "g", "2", "a") T_POD("g-1", "g", "2", ""));
	assert_int_equal(f->nbound, 1);
	assert_string_equal(f->bound[0], "default/g-1");
	assert_string_equal(f->bound_node[0], "a");
	fx_free(f);
}

static void no_domain_fits_binds_nothing_and_names_the_best(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
			   T_NODE("a", "4", RACK ": r1") T_NODE("b", "4", RACK ": r1")
				   T_NODE("c", "6", RACK ": r2")
					   T_PG("g", "3", "kube-batchd.io/topology-required: " RACK)
						   T_POD("g-0", "g", "3", "") T_POD("g-1", "g", "3", "")
							   T_POD("g-2", "g", "3", ""));
	assert_int_equal(f->nbound, 0);
	const char *why = fx_pending_reason(f, "default/g-0");
	assert_non_null(why);
	/* r1 has the most cpu (8) but room for 2 pods; r2 (6) for 2 too and
	 * lacks less: the best is the one that holds the most pods, then the
	 * fewest resources short. */
	if (!strstr(why, "gang \"default/g\" needs one " RACK
			 " (annotation kube-batchd.io/topology-required): none of 2 domains of " RACK
			 " holds its 3 more pods; best \"r1\" lacks cpu: 1 (has 8 of the 9 needed)"))
		fail_msg("reason: %s", why);
	assert_non_null(strstr(fx_group_reason(f, "default/g"), "best \"r1\" lacks cpu: 1"));
	fx_free(f);
}

static void members_that_disagree_make_the_gang_invalid(void **state)
{
	fx *f = fx_session(ALLOCATE_ONLY,
			   T_NODE("a", "8", RACK ": r1")
				   T_PG("g", "2", "")
					   T_POD("g-0", "g", "1",
						 ", kueue.x-k8s.io/podset-required-topology: " RACK)
						   T_POD("g-1", "g", "1",
							 ", kueue.x-k8s.io/podset-required-topology: " BLOCK));
	assert_int_equal(f->nbound, 0);
	const char *why = fx_pending_reason(f, "default/g-1");
	assert_non_null(why);
	if (!strstr(why, "pod \"default/g-1\" asks for a network topology") ||
	    !strstr(why, "other than pod \"default/g-0\""))
		fail_msg("reason: %s", why);
	fx_free(f);
}

static void preferred_packs_into_the_fewest_domains(void **state)
{
	/* 5 pods of 2 cpu; no rack holds them all; r2 (6 cpu) is the roomiest,
	 * then r1 (4) and r3 (4 on two nodes), r1 first by name. */
	fx *f = fx_session(ALLOCATE_ONLY,
			   T_NODE("a", "4", RACK ": r1") T_NODE("c", "6", RACK ": r2")
				   T_NODE("d", "2", RACK ": r3") T_NODE("e", "2", RACK ": r3")
					   T_PG("g", "5", "kube-batchd.io/topology-preferred: " RACK)
						   T_POD("g-0", "g", "2", "") T_POD("g-1", "g", "2", "")
							   T_POD("g-2", "g", "2", "") T_POD("g-3", "g", "2", "")
								   T_POD("g-4", "g", "2", ""));
	assert_int_equal(f->nbound, 5);
	int on_a = 0, on_c = 0;
	for (int i = 0; i < f->nbound; i++) {
		on_a += strcmp(f->bound_node[i], "a") == 0;
		on_c += strcmp(f->bound_node[i], "c") == 0;
	}
	assert_int_equal(on_c, 3); /* r2 first */
	assert_int_equal(on_a, 2); /* then r1; none in r3 */
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(podgroup_annotations_decode),
		cmocka_unit_test(kueue_and_volcano_decode),
		cmocka_unit_test(bad_wishes_are_refused_naming_the_field),
		cmocka_unit_test(rack_names_are_counted_inside_their_block),
		cmocka_unit_test(free_aggregates_stay_exact),
		cmocka_unit_test(placed_members_keep_their_domain),
		cmocka_unit_test(no_domain_fits_binds_nothing_and_names_the_best),
		cmocka_unit_test(members_that_disagree_make_the_gang_invalid),
		cmocka_unit_test(preferred_packs_into_the_fewest_domains),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

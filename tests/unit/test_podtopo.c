/* test_podtopo.c - the session's pod topology index (scheduler/podtopo.h):
 * kube-scheduler's InterPodAffinity and PodTopologySpread answers from
 * counts kept current by statements, over a real session
 * (session_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/podtopo.h"
#include "scheduler/statement.h"
#include "tests/unit/session_fixture.h"

#define TNODE(name, labels)                                                             \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: " labels "}\n" \
	"status: {allocatable: {cpu: '8', memory: 32Gi}}\n"

#define TPOD(name, labels, extra)                                                        \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: " labels "}\n" \
	"spec: {schedulerName: kube-batchd, " extra                                       \
	" containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"

#define ANTI(sel, key)                                                                   \
	"affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "  \
	"[{labelSelector: {matchLabels: " sel "}, topologyKey: " key "}]}},"
#define AFF(sel, key)                                                                    \
	"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "      \
	"[{labelSelector: {matchLabels: " sel "}, topologyKey: " key "}]}},"

static const kb_node *node(const fx *f, const char *name)
{
	int32_t n = kb_snapshot_find_node(&f->snap, name);
	assert_true(n >= 0);
	return &f->snap.nodes[n];
}

static uint32_t task_index(const fx *f, const char *key)
{
	return (uint32_t)(fx_task(f, key) - f->snap.tasks);
}

/* The filter's answer: NULL when the node passes, else the reason. */
static const char *filter(fx *f, const char *task, const char *nodename)
{
	const char *why = NULL;
	int r = kb_podtopo_filter(&f->ssn, fx_task(f, task), node(f, nodename), &why);
	return r == KB_FIT_OK ? NULL : why;
}

static void gang_member_placed_counts_and_discard_forgets_it(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("n1", "{kubernetes.io/hostname: n1}")
			    TNODE("n2", "{kubernetes.io/hostname: n2}")
				    TPOD("a", "{role: ps}", ANTI("{role: ps}", "kubernetes.io/hostname"))
					    TPOD("b", "{role: ps}",
						ANTI("{role: ps}", "kubernetes.io/hostname")));
	fx_open(f, NULL);
	assert_null(filter(f, "default/b", "n1"));
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, task_index(f, "default/a"),
					  (uint32_t)kb_snapshot_find_node(&f->snap, "n1")),
			 0);
	assert_string_equal(filter(f, "default/b", "n1"), KB_REASON_POD_ANTI_AFFINITY);
	assert_null(filter(f, "default/b", "n2"));
	kb_stmt_discard(&st);
	assert_null(filter(f, "default/b", "n1"));
	fx_free(f);
}

static void existing_pods_anti_affinity_is_symmetric(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("n1", "{kubernetes.io/hostname: n1}")
			    TNODE("n2", "{kubernetes.io/hostname: n2}")
				    TPOD("quiet", "{app: quiet}",
					"nodeName: n1, " ANTI("{app: noisy}", "kubernetes.io/hostname"))
					    TPOD("noisy", "{app: noisy}", "") TPOD("other", "{app: other}", ""));
	fx_open(f, NULL);
	assert_string_equal(filter(f, "default/noisy", "n1"), KB_REASON_EXISTING_ANTI_AFFINITY);
	assert_null(filter(f, "default/noisy", "n2"));
	assert_null(filter(f, "default/other", "n1"));
	fx_free(f);
}

static void first_pod_of_a_self_affine_group_goes_anywhere_with_the_key(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("r1a", "{rack: r1}") TNODE("r2a", "{rack: r2}") TNODE("bare", "{}")
			    TPOD("m0", "{job: ar}", AFF("{job: ar}", "rack"))
				    TPOD("m1", "{job: ar}", AFF("{job: ar}", "rack"))
					    TPOD("stranger", "{job: other}", AFF("{job: ar}", "rack")));
	fx_open(f, NULL);
	assert_null(filter(f, "default/m0", "r1a"));
	assert_null(filter(f, "default/m0", "r2a"));
	assert_string_equal(filter(f, "default/m0", "bare"), KB_REASON_POD_AFFINITY);
	/* Its terms do not select itself: no exception. */
	assert_string_equal(filter(f, "default/stranger", "r1a"), KB_REASON_POD_AFFINITY);
	kb_statement st;
	kb_stmt_init(&st, &f->ssn);
	assert_int_equal(kb_stmt_allocate(&st, task_index(f, "default/m0"),
					  (uint32_t)kb_snapshot_find_node(&f->snap, "r2a")),
			 0);
	assert_string_equal(filter(f, "default/m1", "r1a"), KB_REASON_POD_AFFINITY);
	assert_null(filter(f, "default/m1", "r2a"));
	assert_null(filter(f, "default/stranger", "r2a"));
	kb_stmt_discard(&st);
	assert_null(filter(f, "default/m1", "r1a"));
	fx_free(f);
}

#define SPREAD(extra)                                                                    \
	"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "                    \
	"whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}" extra \
	"}],"

static void spread_skew_counts_eligible_domains_and_min_domains(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("a1", "{zone: a, pool: x}") TNODE("b1", "{zone: b, pool: y}")
			    TNODE("nozone", "{pool: x}")
				    TPOD("run", "{app: web}", "nodeName: a1,")
					    TPOD("w", "{app: web}", SPREAD(""))
						    TPOD("wx", "{app: web}", "nodeSelector: {pool: x}, " SPREAD(""))
							    TPOD("wmin", "{app: web}", SPREAD(", minDomains: 3")));
	fx_open(f, NULL);
	/* a holds 1, b 0: a's skew would be 2. */
	assert_string_equal(filter(f, "default/w", "a1"), KB_REASON_SPREAD);
	assert_null(filter(f, "default/w", "b1"));
	assert_string_equal(filter(f, "default/w", "nozone"), KB_REASON_SPREAD_LABEL);
	/* Only zone a is eligible for a pod that must run in pool x (nodeAffinityPolicy
	 * Honor): the minimum is a's own count, so a passes. */
	assert_null(filter(f, "default/wx", "a1"));
	/* minDomains 3 with two zones: the minimum is 0. */
	assert_string_equal(filter(f, "default/wmin", "a1"), KB_REASON_SPREAD);
	assert_null(filter(f, "default/wmin", "b1"));
	fx_free(f);
}

static void terminating_pods_count_for_affinity_not_for_spread(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("a1", "{zone: a, kubernetes.io/hostname: a1}")
			    TNODE("b1", "{zone: b, kubernetes.io/hostname: b1}")
		 "---\napiVersion: v1\nkind: Pod\n"
		 "metadata: {name: old, labels: {app: web}, deletionTimestamp: '2024-01-01T00:00:00Z'}\n"
		 "spec: {schedulerName: kube-batchd, nodeName: a1, containers: [{name: c}]}\n"
		 "status: {phase: Running}\n"
			 TPOD("w", "{app: web}", SPREAD(""))
				 TPOD("shy", "{app: shy}", ANTI("{app: web}", "kubernetes.io/hostname")));
	fx_open(f, NULL);
	assert_null(filter(f, "default/w", "a1"));
	assert_string_equal(filter(f, "default/shy", "a1"), KB_REASON_POD_ANTI_AFFINITY);
	fx_free(f);
}

static void namespace_selector_reads_namespace_labels(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ml, labels: {team: ml}}\n"
		 TNODE("n1", "{kubernetes.io/hostname: n1}") TNODE("n2", "{kubernetes.io/hostname: n2}")
		 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: tb, namespace: ml, labels: {app: tb}}\n"
		 "spec: {nodeName: n1, containers: [{name: c}]}\n"
			 TPOD("v", "{app: v}",
			     "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
			     "[{labelSelector: {matchLabels: {app: tb}}, namespaceSelector: "
			     "{matchLabels: {team: ml}}, topologyKey: kubernetes.io/hostname}]}},")
				 TPOD("same-ns-only", "{app: v}", AFF("{app: tb}", "kubernetes.io/hostname")));
	fx_open(f, NULL);
	assert_null(filter(f, "default/v", "n1"));
	assert_string_equal(filter(f, "default/v", "n2"), KB_REASON_POD_AFFINITY);
	/* Without namespaces or namespaceSelector a term selects its own
	 * namespace: tb (in ml) is not seen. */
	assert_string_equal(filter(f, "default/same-ns-only", "n1"), KB_REASON_POD_AFFINITY);
	fx_free(f);
}

static void preferred_terms_score_the_matching_domain(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("n1", "{kubernetes.io/hostname: n1}") TNODE("n2", "{kubernetes.io/hostname: n2}")
			 TPOD("cache", "{app: cache}", "nodeName: n1,")
			 TPOD("near", "{app: near}",
			     "affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
			     "[{weight: 50, podAffinityTerm: {labelSelector: {matchLabels: {app: cache}}, "
			     "topologyKey: kubernetes.io/hostname}}]}},")
			 TPOD("far", "{app: far}",
			     "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
			     "[{weight: 50, podAffinityTerm: {labelSelector: {matchLabels: {app: cache}}, "
			     "topologyKey: kubernetes.io/hostname}}]}},"));
	fx_open(f, NULL);
	const kb_task *near = fx_task(f, "default/near"), *far = fx_task(f, "default/far");
	assert_true(kb_podtopo_affinity_score(&f->ssn, near, node(f, "n1")) == 10.0);
	assert_true(kb_podtopo_affinity_score(&f->ssn, near, node(f, "n2")) == 0.0);
	assert_true(kb_podtopo_affinity_score(&f->ssn, far, node(f, "n1")) == 0.0);
	assert_true(kb_podtopo_affinity_score(&f->ssn, far, node(f, "n2")) == 10.0);
	fx_free(f);
}

static void alike_compares_the_labels_selectors_read(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("n1", "{kubernetes.io/hostname: n1}")
			    TPOD("a", "{role: ps, index: '0'}", ANTI("{role: ps}", "kubernetes.io/hostname"))
				    TPOD("b", "{role: ps, index: '1'}",
					ANTI("{role: ps}", "kubernetes.io/hostname"))
					    TPOD("c", "{role: worker, index: '2'}",
						ANTI("{role: ps}", "kubernetes.io/hostname")));
	fx_open(f, NULL);
	/* index is read by no selector; role is. */
	assert_true(kb_podtopo_alike(&f->ssn, fx_task(f, "default/a"), fx_task(f, "default/b")));
	assert_false(kb_podtopo_alike(&f->ssn, fx_task(f, "default/a"), fx_task(f, "default/c")));
	fx_free(f);
}

static void nothing_asked_leaves_the_index_inactive(void **state)
{
	fx *f = fx_new();
	fx_loadf(f, TNODE("n1", "{}") TPOD("a", "{x: y}", "") TPOD("b", "{x: z}", "")
			 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: other}\n"
			 "spec: {schedulerName: kube-batchd, containers: [{name: c}]}\n");
	fx_open(f, NULL);
	assert_null(filter(f, "default/a", "n1"));
	assert_true(kb_podtopo_alike(&f->ssn, fx_task(f, "default/a"), fx_task(f, "default/b")));
	/* Only an inactive index has no use for the namespace (an active one
	 * tells pods of two namespaces apart). */
	assert_true(kb_podtopo_alike(&f->ssn, fx_task(f, "default/a"), fx_task(f, "other/c")));
	assert_true(kb_podtopo_spread_score(&f->ssn, fx_task(f, "default/a"), node(f, "n1")) == 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gang_member_placed_counts_and_discard_forgets_it),
		cmocka_unit_test(existing_pods_anti_affinity_is_symmetric),
		cmocka_unit_test(first_pod_of_a_self_affine_group_goes_anywhere_with_the_key),
		cmocka_unit_test(spread_skew_counts_eligible_domains_and_min_domains),
		cmocka_unit_test(terminating_pods_count_for_affinity_not_for_spread),
		cmocka_unit_test(namespace_selector_reads_namespace_labels),
		cmocka_unit_test(preferred_terms_score_the_matching_domain),
		cmocka_unit_test(alike_compares_the_labels_selectors_read),
		cmocka_unit_test(nothing_asked_leaves_the_index_inactive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

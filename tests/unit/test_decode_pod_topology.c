/* test_decode_pod_topology.c - a Pod's pod affinity, anti-affinity and
 * topology spread constraints as cache/decode_pod_topology.c reads them:
 * defaults, matchLabelKeys merged, and what is refused, naming the field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/labels.h"
#include "cache/objects.h"

static kb_resnames names;
static kb_yaml_file file;
static kb_err err;

static int setup(void **state)
{
	kb_resnames_init(&names);
	memset(&err, 0, sizeof(err));
	memset(&file, 0, sizeof(file));
	return 0;
}

static int teardown(void **state)
{
	kb_yaml_file_release(&file);
	return 0;
}

#define POD_HEAD                                                                          \
	"apiVersion: v1\nkind: Pod\n"                                                     \
	"metadata: {name: p, namespace: ml, labels: {job: j1, role: ps, rev: r7}}\n"

static int decode(const char *yaml, kb_object **ret)
{
	kb_err lerr;
	if (kb_yaml_load_buffer(yaml, strlen(yaml), "t.yaml", &file, &lerr) < 0)
		fail_msg("yaml: %s", lerr.msg);
	*ret = NULL;
	return kb_object_decode(file.docs[0], "t.yaml", &names, ret, &err);
}

static const kb_pod_spec *ok(const char *yaml, kb_object **o)
{
	if (decode(yaml, o) < 0)
		fail_msg("%s", err.msg);
	return &(*o)->u.pod.spec;
}

static void refused(const char *yaml, const char *want)
{
	kb_object *o;
	assert_int_equal(decode(yaml, &o), -EINVAL);
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
	assert_null(o);
}

static void affinity_terms_default_to_the_pods_namespace(void **state)
{
	kb_object *o;
	const kb_pod_spec *s = ok(POD_HEAD "spec:\n  affinity:\n"
					   "    podAntiAffinity:\n"
					   "      requiredDuringSchedulingIgnoredDuringExecution:\n"
					   "      - labelSelector: {matchLabels: {role: ps}}\n"
					   "        topologyKey: kubernetes.io/hostname\n"
					   "      - labelSelector: {matchLabels: {role: ps}}\n"
					   "        namespaceSelector: {}\n"
					   "        topologyKey: zone\n"
					   "    podAffinity:\n"
					   "      preferredDuringSchedulingIgnoredDuringExecution:\n"
					   "      - weight: 30\n"
					   "        podAffinityTerm: {namespaces: [a, b], topologyKey: rack}\n",
				  &o);
	assert_int_equal(s->nanti_affinity, 2);
	const kb_pod_affinity_term *t = &s->anti_affinity[0];
	assert_int_equal(t->nnamespaces, 1);
	assert_string_equal(t->namespaces[0], "ml");
	assert_true(t->ns_selector.nothing);
	assert_string_equal(t->topology_key, "kubernetes.io/hostname");
	assert_int_equal(t->weight, 0);
	/* namespaceSelector {} (every namespace) and no namespaces listed. */
	t = &s->anti_affinity[1];
	assert_int_equal(t->nnamespaces, 0);
	assert_false(t->ns_selector.nothing);
	assert_int_equal(t->ns_selector.n, 0);
	/* A preferred term without labelSelector selects no pod. */
	assert_int_equal(s->npref_affinity, 1);
	t = &s->pref_affinity[0];
	assert_int_equal(t->weight, 30);
	assert_true(t->selector.nothing);
	assert_int_equal(t->nnamespaces, 2);
	kb_object_free(o);
}

static void match_label_keys_are_merged_as_the_api_server_does(void **state)
{
	kb_object *o;
	const kb_pod_spec *s =
		ok(POD_HEAD "spec:\n  affinity:\n    podAffinity:\n"
			    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
			    "      - labelSelector: {matchLabels: {role: ps}}\n"
			    "        matchLabelKeys: [job, absent]\n"
			    "        mismatchLabelKeys: [rev]\n"
			    "        topologyKey: zone\n",
		   &o);
	const kb_label_selector *sel = &s->affinity[0].selector;
	assert_int_equal(sel->n, 3); /* role In ps, job In j1, rev NotIn r7 */
	assert_string_equal(sel->reqs[1].key, "job");
	assert_int_equal(sel->reqs[1].op, KB_SEL_IN);
	assert_string_equal(sel->reqs[1].values[0], "j1");
	assert_int_equal(sel->reqs[2].op, KB_SEL_NOT_IN);
	assert_false(kb_match_label_selector(sel, &o->meta.labels)); /* its own rev is excluded */
	kb_object_free(o);
}

static void spread_defaults_and_merged_keys(void **state)
{
	kb_object *o;
	const kb_pod_spec *s = ok(POD_HEAD "spec:\n  topologySpreadConstraints:\n"
					   "  - maxSkew: 2\n    topologyKey: zone\n"
					   "    whenUnsatisfiable: DoNotSchedule\n"
					   "    labelSelector: {matchLabels: {role: ps}}\n"
					   "    matchLabelKeys: [job]\n"
					   "  - maxSkew: 1\n    topologyKey: zone\n"
					   "    whenUnsatisfiable: ScheduleAnyway\n"
					   "    nodeAffinityPolicy: Ignore\n    nodeTaintsPolicy: Honor\n"
					   "    matchLabelKeys: [job]\n",
				  &o);
	assert_int_equal(s->nspread, 2);
	const kb_spread_constraint *c = &s->spread[0];
	assert_int_equal(c->max_skew, 2);
	assert_int_equal(c->min_domains, 1);
	assert_false(c->schedule_anyway);
	assert_true(c->honor_affinity);
	assert_false(c->honor_taints);
	assert_int_equal(c->selector.n, 2);
	assert_string_equal(c->selector.reqs[1].key, "job");
	c = &s->spread[1];
	assert_true(c->schedule_anyway);
	assert_false(c->honor_affinity);
	assert_true(c->honor_taints);
	/* A nil labelSelector stays nil: matchLabelKeys do not apply. */
	assert_true(c->selector.nothing);
	assert_int_equal(c->selector.n, 0);
	kb_object_free(o);
}

static void bad_input_is_refused_naming_the_field(void **state)
{
	static const char anti[] = POD_HEAD "spec:\n  affinity:\n    podAntiAffinity:\n"
					    "      requiredDuringSchedulingIgnoredDuringExecution:\n";
	static const char spread[] = POD_HEAD "spec:\n  topologySpreadConstraints:\n";
	static const struct {
		const char *head, *body, *want;
	} cases[] = {
		{anti, "      - {labelSelector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}, topologyKey: z}\n",
		 "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: unknown operator \"Gt\""},
		{anti, "      - {labelSelector: {matchExpressions: [{key: a, operator: In}]}, topologyKey: z}\n",
		 "matchExpressions[0].values: must be specified when the operator is In or NotIn"},
		{anti, "      - {labelSelector: {matchLabels: {a: 'b c'}}, topologyKey: z}\n",
		 "labelSelector.matchLabels.a: invalid label value \"b c\""},
		{anti, "      - {labelSelector: {matchLabels: {'-a': b}}, topologyKey: z}\n",
		 "invalid label key \"-a\""},
		{anti, "      - {labelSelector: {}}\n",
		 "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: required"},
		{anti, "      - {matchLabelKeys: [job], topologyKey: z}\n",
		 "[0].matchLabelKeys: may not be specified when labelSelector is not set"},
		{anti, "      - {labelSelector: {}, matchLabelKeys: [job], mismatchLabelKeys: [job], topologyKey: z}\n",
		 "mismatchLabelKeys: \"job\" is also in matchLabelKeys"},
		{POD_HEAD "spec:\n  affinity:\n    podAffinity:\n"
			  "      preferredDuringSchedulingIgnoredDuringExecution:\n",
		 "      - {weight: 101, podAffinityTerm: {topologyKey: z}}\n",
		 "preferredDuringSchedulingIgnoredDuringExecution[0].weight: out of range [1, 100]"},
		{spread, "  - {maxSkew: 0, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n",
		 "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0"},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: Never}\n",
		 "whenUnsatisfiable: unknown action \"Never\""},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n",
		 "minDomains: may only be set when whenUnsatisfiable is DoNotSchedule"},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, minDomains: 0}\n",
		 "minDomains: must be greater than zero, got 0"},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Maybe}\n",
		 "nodeTaintsPolicy: unknown policy \"Maybe\""},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n"
			 "  - {maxSkew: 2, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n",
		 "spec.topologySpreadConstraints[1]: duplicate constraint: {z, DoNotSchedule}"},
		{spread, "  - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {job: x}}, matchLabelKeys: [job]}\n",
		 "matchLabelKeys: \"job\" is also a key of labelSelector"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[2048];
		snprintf(yaml, sizeof(yaml), "%s%s", cases[i].head, cases[i].body);
		refused(yaml, cases[i].want);
		assert_non_null(strstr(err.msg, "Pod \"ml/p\": "));
		kb_yaml_file_release(&file);
		memset(&file, 0, sizeof(file));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(affinity_terms_default_to_the_pods_namespace, setup,
						teardown),
		cmocka_unit_test_setup_teardown(match_label_keys_are_merged_as_the_api_server_does,
						setup, teardown),
		cmocka_unit_test_setup_teardown(spread_defaults_and_merged_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_input_is_refused_naming_the_field, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

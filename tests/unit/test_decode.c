/* test_decode.c - the readers every kind's decoder shares (cache/decode.h),
 * and the lists that use dec_each_map, seen through kb_object_decode. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache/decode.h"
#include "cache/objects.h"

static kb_resnames names;
static kb_yaml_file file;
static kb_arena scratch;
static kb_object obj;
static kb_err err;

static int setup(void **state)
{
	kb_resnames_init(&names);
	kb_arena_init(&scratch);
	memset(&obj, 0, sizeof(obj));
	memset(&err, 0, sizeof(err));
	return 0;
}

static int teardown(void **state)
{
	kb_yaml_file_release(&file);
	kb_arena_release(&scratch);
	return 0;
}

/* A decoding of yaml (one document, "t.yaml") as far as metadata, as
 * objects.c starts one for a Pod named ns/p. */
static dec_ctx start(const char *yaml)
{
	kb_err lerr;
	if (kb_yaml_load_buffer(yaml, strlen(yaml), "t.yaml", &file, &lerr) < 0)
		fail_msg("yaml: %s", lerr.msg);
	assert_int_equal(file.ndocs, 1);
	obj.kind = KB_KIND_POD;
	obj.kind_name = "Pod";
	dec_ctx d = {.o = &obj,
		     .a = &scratch,
		     .source = "t.yaml",
		     .rn = &names,
		     .err = &err,
		     .root = file.docs[0],
		     .kind = "Pod",
		     .key = "ns/p"};
	return d;
}

/* What a dec_each_map callback saw, and when it fails. */
typedef struct seen {
	char paths[8][DEC_PATH_LEN];
	size_t index[8];
	size_t n;
	size_t fail_at; /* the call that returns -EINVAL; SIZE_MAX: none */
} seen;

static int record(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i, void *ctx)
{
	seen *s = ctx;
	assert_non_null(item);
	assert_int_equal(item->kind, KB_YAML_MAP);
	snprintf(s->paths[s->n], DEC_PATH_LEN, "%s", path);
	s->index[s->n] = i;
	if (s->n++ == s->fail_at)
		return dec_fail(d, -EINVAL, item, path, "no");
	return 0;
}

static void each_map_calls_in_order_with_item_paths(void **state)
{
	dec_ctx d = start("x: [{a: 1}, {b: 2}, {c: 3}]\n");
	seen s = {.fail_at = SIZE_MAX};
	const kb_yaml_node *seq = kb_yaml_get(d.root, "x");
	assert_int_equal(dec_each_map(&d, seq, "spec.x", DEC_NULL_ITEM_FAILS, record, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.paths[0], "spec.x[0]");
	assert_string_equal(s.paths[2], "spec.x[2]");
	assert_int_equal(s.index[1], 1);

	/* No list: no call. */
	s.n = 0;
	assert_int_equal(dec_each_map(&d, NULL, "spec.x", DEC_NULL_ITEM_FAILS, record, &s), 0);
	assert_int_equal(s.n, 0);
}

static void each_map_stops_at_the_first_error(void **state)
{
	dec_ctx d = start("x: [{a: 1}, {b: 2}, {c: 3}]\n");
	seen s = {.fail_at = 1};
	const kb_yaml_node *seq = kb_yaml_get(d.root, "x");
	assert_int_equal(dec_each_map(&d, seq, "spec.x", DEC_NULL_ITEM_FAILS, record, &s),
			 -EINVAL);
	assert_int_equal(s.n, 2);
	assert_string_equal(err.msg, "Pod \"ns/p\": spec.x[1]: no (t.yaml:1:13)");
}

static void each_map_null_items_fail_or_are_skipped(void **state)
{
	dec_ctx d = start("x: [{a: 1}, ~, {c: 3}]\n");
	const kb_yaml_node *seq = kb_yaml_get(d.root, "x");
	seen s = {.fail_at = SIZE_MAX};
	assert_int_equal(dec_each_map(&d, seq, "spec.x", DEC_NULL_ITEM_FAILS, record, &s),
			 -EINVAL);
	assert_int_equal(s.n, 1);
	assert_string_equal(err.msg,
			    "Pod \"ns/p\": spec.x[1]: expected a mapping, got null (t.yaml:1:13)");

	memset(&s, 0, sizeof(s));
	s.fail_at = SIZE_MAX;
	assert_int_equal(dec_each_map(&d, seq, "spec.x", DEC_NULL_ITEM_SKIPPED, record, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.paths[1], "spec.x[2]");
	assert_int_equal(s.index[1], 2);
}

static void each_map_refuses_items_that_are_not_mappings(void **state)
{
	static const dec_null_item policies[] = {DEC_NULL_ITEM_FAILS, DEC_NULL_ITEM_SKIPPED};
	for (size_t i = 0; i < 2; i++) {
		dec_ctx d = start("x: [{a: 1}, b, {c: 3}]\n");
		seen s = {.fail_at = SIZE_MAX};
		const kb_yaml_node *seq = kb_yaml_get(d.root, "x");
		assert_int_equal(dec_each_map(&d, seq, "spec.x", policies[i], record, &s), -EINVAL);
		assert_int_equal(s.n, 1);
		assert_string_equal(err.msg, "Pod \"ns/p\": spec.x[1]: expected a mapping, got a "
					     "string (t.yaml:1:13)");
		teardown(state);
		setup(state);
	}
}

static void strings_give_empty_for_null_and_refuse_lists(void **state)
{
	dec_ctx d = start("x: [a, ~, \"\"]\ny: [a, [b]]\n");
	const char **v;
	assert_int_equal(dec_strings(&d, kb_yaml_get(d.root, "x"), "spec.x", &v), 0);
	assert_string_equal(v[0], "a");
	assert_string_equal(v[1], "");
	assert_string_equal(v[2], "");

	v = NULL;
	assert_int_equal(dec_strings(&d, kb_yaml_get(d.root, "y"), "spec.y", &v), -EINVAL);
	assert_null(v);
	assert_string_equal(err.msg,
			    "Pod \"ns/p\": spec.y[1]: expected a string, got a list (t.yaml:2:8)");
}

static void reslist_writes_nothing_on_failure(void **state)
{
	dec_ctx d = start("ok: {cpu: 500m, memory: 1Ki}\nbad: {cpu: \"2\", memory: 1x}\n");
	kb_res res;
	uint32_t mask;
	assert_int_equal(dec_reslist(&d, kb_yaml_get(d.root, "ok"), "ok", &res, &mask, NULL), 0);
	assert_int_equal(res.q[KB_RES_CPU], 500);
	assert_int_equal(res.q[KB_RES_MEMORY], 1024 * 1000);
	assert_int_equal(mask, (1u << KB_RES_CPU) | (1u << KB_RES_MEMORY));

	assert_int_equal(dec_reslist(&d, kb_yaml_get(d.root, "bad"), "bad", &res, &mask, NULL), -EINVAL);
	assert_int_equal(res.q[KB_RES_CPU], 500);
	assert_int_equal(mask, (1u << KB_RES_CPU) | (1u << KB_RES_MEMORY));
	assert_string_equal(err.msg, "Pod \"ns/p\": bad.memory: bad quantity \"1x\" (t.yaml:2:25)");

	/* Absent: an empty list. */
	assert_int_equal(dec_reslist(&d, NULL, "none", &res, &mask, NULL), 0);
	assert_int_equal(res.q[KB_RES_CPU], 0);
	assert_int_equal(mask, 0);
}

/* ---- the lists of each kind, through kb_object_decode ------------------------------ */

static int decode(const char *yaml, kb_object **ret)
{
	kb_err lerr;
	if (kb_yaml_load_buffer(yaml, strlen(yaml), "t.yaml", &file, &lerr) < 0)
		fail_msg("yaml: %s", lerr.msg);
	*ret = NULL;
	return kb_object_decode(file.docs[0], "t.yaml", &names, ret, &err);
}

static void null_ports_and_node_selector_terms_are_nothing(void **state)
{
	kb_object *o;
	int r = decode("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		       "spec:\n"
		       "  containers: [{name: a, ports: [~, {hostPort: 80}]}]\n"
		       "  affinity:\n    nodeAffinity:\n"
		       "      requiredDuringSchedulingIgnoredDuringExecution:\n"
		       "        nodeSelectorTerms:\n"
		       "        - ~\n"
		       "        - matchExpressions: [{key: a, operator: Exists}]\n",
		       &o);
	if (r < 0)
		fail_msg("%s", err.msg);
	const kb_pod_spec *s = &o->u.pod.spec;
	assert_int_equal(s->nhost_ports, 1);
	assert_int_equal(s->host_ports[0].port, 80);
	assert_int_equal(s->nrequired, 2);
	assert_int_equal(s->required[0].n, 0);
	assert_int_equal(s->required[1].n, 1);
	kb_object_free(o);
}

/* kb_object_decode refuses yaml (-EINVAL, no object) with message msg. */
static void refused(const char *yaml, const char *msg)
{
	kb_object *o;
	assert_int_equal(decode(yaml, &o), -EINVAL);
	assert_null(o);
	assert_string_equal(err.msg, msg);
	kb_yaml_file_release(&file);
}

static void other_null_list_items_are_errors(void **state)
{
	static const struct {
		const char *yaml;
		const char *msg;
	} cases[] = {
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [~]}\n",
		 "Pod \"default/p\": spec.containers[0]: expected a mapping, got null "
		 "(t.yaml:4:21)"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		 "spec: {containers: [{name: a}], initContainers: [{name: i}, ~]}\n",
		 "Pod \"default/p\": spec.initContainers[1]: expected a mapping, got null "
		 "(t.yaml:4:61)"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		 "spec: {tolerations: [{operator: Exists}, ~]}\n",
		 "Pod \"default/p\": spec.tolerations[1]: expected a mapping, got null "
		 "(t.yaml:4:42)"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: [~]}\n",
		 "Node \"n1\": spec.taints[0]: expected a mapping, got null (t.yaml:4:17)"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		 "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
		 "[~]}}}\n",
		 "Pod \"default/p\": spec.affinity.nodeAffinity."
		 "preferredDuringSchedulingIgnoredDuringExecution[0]: expected a mapping, got null "
		 "(t.yaml:4:84)"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		 "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
		 "{nodeSelectorTerms: [{matchFields: [~]}]}}}}\n",
		 "Pod \"default/p\": spec.affinity.nodeAffinity."
		 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]"
		 ": expected a mapping, got null (t.yaml:4:118)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused(cases[i].yaml, cases[i].msg);
}

/* kb_object_decode of yaml, which must decode; free it with dropped(). */
static kb_object *decoded(const char *yaml)
{
	kb_object *o;
	if (decode(yaml, &o) < 0)
		fail_msg("%s", err.msg);
	return o;
}

static void dropped(kb_object *o)
{
	kb_object_free(o);
	kb_yaml_file_release(&file);
}

static void csi_nodes_and_volume_attachments_decode(void **state)
{
	kb_object *o = decoded("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
			       "spec:\n  drivers:\n"
			       "  - {name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25}}\n"
			       "  - {name: efs.csi.aws.com, nodeID: i-1}\n");
	assert_int_equal(o->kind, KB_KIND_CSI_NODE);
	assert_int_equal(o->u.csi_node.ndrivers, 2);
	assert_string_equal(o->u.csi_node.drivers[0].name, "ebs.csi.aws.com");
	assert_int_equal(o->u.csi_node.drivers[0].count, 25);
	assert_int_equal(o->u.csi_node.drivers[1].count, -1); /* no limit */
	dropped(o);
	o = decoded("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: a}\n"
		    "spec: {attacher: ebs.csi.aws.com, nodeName: n1, "
		    "source: {persistentVolumeName: pv-1}}\n");
	assert_int_equal(o->kind, KB_KIND_VOLUME_ATTACHMENT);
	assert_string_equal(o->u.volume_attachment.attacher, "ebs.csi.aws.com");
	assert_string_equal(o->u.volume_attachment.node_name, "n1");
	assert_string_equal(o->u.volume_attachment.pv_name, "pv-1");
	dropped(o);
	o = decoded("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\n"
		    "spec: {capacity: {storage: 1Gi}, csi: {driver: d, volumeHandle: h}}\n");
	assert_string_equal(o->u.pv.csi_driver, "d");
	assert_string_equal(o->u.pv.csi_handle, "h");
	dropped(o);
	o = decoded("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
		    "metadata: {name: c, namespace: kube-system}\nstorageClassName: s\n"
		    "nodeTopology: {matchLabels: {zone: a}}\ncapacity: 2Gi\nmaximumVolumeSize: 1Gi\n");
	assert_int_equal(o->kind, KB_KIND_STORAGE_CAPACITY);
	assert_string_equal(o->meta.key, "kube-system/c"); /* namespaced */
	assert_string_equal(o->u.storage_capacity.class_name, "s");
	assert_true(o->u.storage_capacity.has_topology);
	assert_int_equal(o->u.storage_capacity.limit, 1LL << 30); /* maximumVolumeSize first */
	dropped(o);
	o = decoded("apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n"
		    "spec: {storageCapacity: true}\n");
	assert_int_equal(o->kind, KB_KIND_CSI_DRIVER);
	assert_true(o->u.csi_driver.storage_capacity);
	kb_object_free(o);
}

static void bad_csi_fields_are_named(void **state)
{
	static const struct {
		const char *yaml;
		const char *msg;
	} cases[] = {
		{"apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
		 "spec: {drivers: [{nodeID: x}]}\n",
		 "CSINode \"n1\": spec.drivers[0].name: required (t.yaml:4:18)"},
		{"apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
		 "spec: {drivers: [{name: d, allocatable: {count: -1}}]}\n",
		 "CSINode \"n1\": spec.drivers[0].allocatable.count: out of range "
		 "[0, 2147483647], got \"-1\" (t.yaml:4:49)"},
		{"apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\n"
		 "spec: {capacity: {storage: 1Gi}, csi: {volumeHandle: h}}\n",
		 "PersistentVolume \"pv-1\": spec.csi.driver: required (t.yaml:4:39)"},
		{"apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
		 "metadata: {name: c, namespace: kube-system}\ncapacity: 1Gi\n",
		 "CSIStorageCapacity \"kube-system/c\": storageClassName: required (t.yaml:1:1)"},
		{"apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
		 "metadata: {name: c, namespace: kube-system}\nstorageClassName: s\ncapacity: lots\n",
		 "CSIStorageCapacity \"kube-system/c\": capacity: bad quantity \"lots\" (t.yaml:5:11)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused(cases[i].yaml, cases[i].msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(each_map_calls_in_order_with_item_paths, setup,
						teardown),
		cmocka_unit_test_setup_teardown(each_map_stops_at_the_first_error, setup, teardown),
		cmocka_unit_test_setup_teardown(each_map_null_items_fail_or_are_skipped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(each_map_refuses_items_that_are_not_mappings, setup,
						teardown),
		cmocka_unit_test_setup_teardown(strings_give_empty_for_null_and_refuse_lists, setup,
						teardown),
		cmocka_unit_test_setup_teardown(reslist_writes_nothing_on_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(null_ports_and_node_selector_terms_are_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(other_null_list_items_are_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(csi_nodes_and_volume_attachments_decode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(bad_csi_fields_are_named, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

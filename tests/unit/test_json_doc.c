/* test_json_doc.c - JSON texts load into the trees the YAML loader builds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/json_doc.h"
#include "base/yaml_doc.h"

/* A watch event as the API server sends it: one line, about 4 KB. */
static const char pod_event[] =
	"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	"\"metadata\":{\"name\":\"train-7f9c4-worker-3\",\"generateName\":\"train-7f9c4-worker-\","
	"\"namespace\":\"team-ml\",\"uid\":\"6f1c2a9e-3b7d-4e21-9a55-0c8d2f4b1e77\","
	"\"resourceVersion\":\"48213377\",\"creationTimestamp\":\"2024-05-02T09:14:03Z\","
	"\"labels\":{\"app\":\"train\",\"job-name\":\"train-7f9c4\",\"role\":\"worker\","
	"\"volcano.sh/job-name\":\"train-7f9c4\",\"volcano.sh/queue-name\":\"ml\","
	"\"pod-template-hash\":\"5d8b7c9f6\"},"
	"\"annotations\":{\"scheduling.k8s.io/group-name\":\"train-7f9c4\","
	"\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"apiVersion\\\":\\\"v1\\\","
	"\\\"kind\\\":\\\"Pod\\\"}\\n\",\"prometheus.io/scrape\":\"true\","
	"\"prometheus.io/port\":\"9090\"},"
	"\"ownerReferences\":[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
	"\"name\":\"train-7f9c4\",\"uid\":\"0b7e4c1d-5a2f-4f3e-8d9c-1e2f3a4b5c6d\","
	"\"controller\":true,\"blockOwnerDeletion\":true}],"
	"\"managedFields\":[{\"manager\":\"vc-controller-manager\",\"operation\":\"Update\","
	"\"apiVersion\":\"v1\",\"time\":\"2024-05-02T09:14:03Z\",\"fieldsType\":\"FieldsV1\","
	"\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{},\"f:role\":{}}},"
	"\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"worker\\\"}\":{\".\":{},"
	"\"f:image\":{},\"f:resources\":{\".\":{},\"f:limits\":{},\"f:requests\":{}}}}}}}]},"
	"\"spec\":{\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
	"\"train-data\",\"readOnly\":true}},{\"name\":\"kube-api-access-x2v9q\",\"projected\":{"
	"\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}}],"
	"\"defaultMode\":420}}],"
	"\"containers\":[{\"name\":\"worker\",\"image\":\"registry.example.com/ml/train:2.4.1\","
	"\"command\":[\"python\",\"-m\",\"train\"],\"args\":[\"--epochs=90\",\"--lr=0.1\"],"
	"\"ports\":[{\"name\":\"metrics\",\"containerPort\":9090,\"protocol\":\"TCP\"}],"
	"\"env\":[{\"name\":\"RANK\",\"value\":\"3\"},{\"name\":\"WORLD_SIZE\",\"value\":\"8\"},"
	"{\"name\":\"POD_IP\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\","
	"\"fieldPath\":\"status.podIP\"}}}],"
	"\"resources\":{\"limits\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"2\"},"
	"\"requests\":{\"cpu\":\"7500m\",\"memory\":\"60Gi\",\"nvidia.com/gpu\":\"2\"}},"
	"\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/data\"},{\"name\":"
	"\"kube-api-access-x2v9q\",\"readOnly\":true,\"mountPath\":"
	"\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
	"\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
	"\"imagePullPolicy\":\"IfNotPresent\"}],"
	"\"restartPolicy\":\"Never\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":"
	"\"ClusterFirst\",\"serviceAccountName\":\"default\",\"nodeName\":\"gpu-node-17\","
	"\"securityContext\":{},\"schedulerName\":\"kube-batchd\","
	"\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	"\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu-type\",\"operator\":\"In\","
	"\"values\":[\"a100\",\"h100\"]}]}]}},\"podAntiAffinity\":{"
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":100,"
	"\"podAffinityTerm\":{\"labelSelector\":{\"matchLabels\":{\"job-name\":\"train-7f9c4\"}},"
	"\"topologyKey\":\"kubernetes.io/hostname\"}}]}},"
	"\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":"
	"\"NoSchedule\"},{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
	"\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],"
	"\"priorityClassName\":\"batch-high\",\"priority\":100000,\"enableServiceLinks\":true,"
	"\"preemptionPolicy\":\"PreemptLowerPriority\"},"
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":"
	"\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2024-05-02T09:14:05Z\"},"
	"{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":"
	"\"2024-05-02T09:14:41Z\"},{\"type\":\"ContainersReady\",\"status\":\"True\","
	"\"lastProbeTime\":null,\"lastTransitionTime\":\"2024-05-02T09:14:41Z\"},"
	"{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastProbeTime\":null,"
	"\"lastTransitionTime\":\"2024-05-02T09:14:03Z\"}],"
	"\"hostIP\":\"10.0.3.17\",\"podIP\":\"10.244.17.42\",\"podIPs\":[{\"ip\":\"10.244.17.42\"}],"
	"\"startTime\":\"2024-05-02T09:14:05Z\",\"containerStatuses\":[{\"name\":\"worker\","
	"\"state\":{\"running\":{\"startedAt\":\"2024-05-02T09:14:40Z\"}},\"lastState\":{},"
	"\"ready\":true,\"restartCount\":0,\"image\":\"registry.example.com/ml/train:2.4.1\","
	"\"imageID\":\"registry.example.com/ml/train@sha256:"
	"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\","
	"\"containerID\":\"containerd://4e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7\","
	"\"started\":true}],\"qosClass\":\"Burstable\"}}}\n";

static const char node_json[] =
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gpu-node-17\","
	"\"uid\":\"3c1d\",\"resourceVersion\":\"48213001\",\"labels\":{"
	"\"kubernetes.io/hostname\":\"gpu-node-17\",\"gpu-type\":\"a100\","
	"\"topology.kubernetes.io/zone\":\"eu-west-1b\"},\"annotations\":{"
	"\"node.alpha.kubernetes.io/ttl\":\"0\"}},"
	"\"spec\":{\"podCIDR\":\"10.244.17.0/24\",\"podCIDRs\":[\"10.244.17.0/24\"],"
	"\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}],"
	"\"unschedulable\":false},"
	"\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"1056454732Ki\",\"nvidia.com/gpu\":\"8\","
	"\"pods\":\"110\",\"ephemeral-storage\":\"1935481408Ki\"},\"allocatable\":{\"cpu\":\"95500m\","
	"\"memory\":\"1046054732Ki\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"},"
	"\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\",\"reason\":"
	"\"KubeletHasSufficientMemory\"},{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
	"\"KubeletReady\",\"message\":\"kubelet is posting ready status\"}],"
	"\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.3.17\"},{\"type\":\"Hostname\","
	"\"address\":\"gpu-node-17\"}],\"nodeInfo\":{\"kubeletVersion\":\"v1.29.4\","
	"\"architecture\":\"amd64\"},\"images\":[{\"names\":[\"registry.example.com/ml/train:2.4.1\"],"
	"\"sizeBytes\":7431920311}]}}";

static const char pod_list[] =
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"48213400\","
	"\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgyMTM0MDAsInN0YXJ0IjoicDJcdTAwMDAifQ\","
	"\"remainingItemCount\":1498},\"items\":[{\"metadata\":{\"name\":\"p1\",\"namespace\":"
	"\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]},"
	"\"status\":{\"phase\":\"Pending\"}},{\"metadata\":{\"name\":\"p2\",\"namespace\":\"default\","
	"\"deletionTimestamp\":\"2024-05-02T09:20:00Z\"},\"spec\":{\"containers\":[]},"
	"\"status\":{}}]}";

/* What kubectl -o json prints: indented, one member per line. */
static const char pretty[] = "{\n"
			     "    \"apiVersion\": \"v1\",\n"
			     "    \"kind\": \"ConfigMap\",\n"
			     "    \"metadata\": {\n"
			     "        \"name\": \"conf\",\n"
			     "        \"labels\": {}\n"
			     "    },\n"
			     "    \"data\": {\n"
			     "        \"weights\": [\n"
			     "            1,\n"
			     "            2.5,\n"
			     "            -3e2\n"
			     "        ],\n"
			     "        \"empty\": [],\n"
			     "        \"flag\": false\n"
			     "    }\n"
			     "}\n";

/* JSON texts both loaders accept, for the equivalence check. */
static const char *const same_texts[] = {
	"{\"a\":1,\"b\":[true,false,null],\"c\":{}}",
	/* every escape libyaml also knows (not surrogate pairs) */
	"{\"s\":\"q\\\" b\\\\ s\\/ b\\b f\\f n\\n r\\r t\\t u\\u0041\\u00e9\\u20ac\\u0000z\"}",
	"[\"\\u0000\", \"a\\u0000\", \"\\\"\", \"\\\\\", \"\", \" \"]",
	/* numbers of every form */
	"[0, -0, 1, -1, 12345678901234567890123, 0.5, -0.5, 1.25e10, 1E10, 1e+5, 1E-5, -2.5E+07,"
	" 0e0, 9007199254740993]",
	"[{}, [], [[]], [{}], {\"a\": {}}, {\"a\": []}, [[], [[], []]]]",
	"[[1, [2, [3, [4, []]]]], [[\"x\"]], [{\"k\": [[null]]}]]",
	"\"a root string\"",
	"42",
	"-1.5e3",
	"true",
	"null",
	"  \n  {\t\"spaced\" :\t[ 1 ,2 , 3 ] , \"x\":\"y\" }  \n\n",
	/* line breaks as libyaml counts them: \n, \r\n, and a lone \r */
	"{\"a\": 1,\r\n \"b\": [2,\r 3],\r\r\n\"c\": 4}\r\n",
	/* characters, not bytes, before a node on its line */
	"{\"\xc3\xa9t\xc3\xa9\": \"\xe2\x82\xac\xf0\x9f\x98\x80\", \"n\": 1, \"\xe4\xb8\xad\": [\"\xc3\xa9\", 2]}",
	"{\"key with spaces\": \"value: with # and - and [brackets] {braces}\", \"\": \"empty key\"}",
	"{\"<<\": 1, \"~\": null, \"yes\": \"no\"}",
	pod_event,
	node_json,
	pod_list,
	pretty,
};

static int json(const char *text, kb_yaml_file *f, kb_err *err)
{
	memset(err, 0, sizeof(*err));
	return kb_json_load_buffer(text, strlen(text), "t.json", f, err);
}

static void json_ok(const char *text, kb_yaml_file *f)
{
	kb_err err;
	int r = json(text, f, &err);
	if (r != 0)
		fail_msg("load of %.60s failed: %d %s", text, r, err.msg);
	assert_int_equal(err.code, 0);
}

/* Loads text, expects code, and checks the message contains want. */
static void json_fails(const char *text, size_t len, int code, const char *want)
{
	kb_yaml_file f;
	kb_err err;
	memset(&err, 0, sizeof(err));
	int r = kb_json_load_buffer(text, len, "t.json", &f, &err);
	if (r != code)
		fail_msg("%.60s: expected %d, got %d (%s)", text, code, r, err.msg);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
	assert_int_equal(f.ndocs, 0);
	assert_null(f.docs);
	assert_null(f.name);
	kb_yaml_file_release(&f); /* safe again */
}

#define FAILS(text, code, want) json_fails(text, sizeof(text) - 1, code, want)

static char *repeat(const char *s, int n, const char *tail)
{
	size_t len = strlen(s) * (size_t)n + strlen(tail) + 1;
	char *out = malloc(len);
	assert_non_null(out);
	char *o = out;
	for (int i = 0; i < n; i++)
		o = stpcpy(o, s);
	strcpy(o, tail);
	return out;
}

/* Compares two trees node by node: kind, text bytes, len, plain, n, line
 * and col. Returns false after printing the first difference. */
static bool same_tree(const kb_yaml_node *a, const kb_yaml_node *b, const char *path)
{
	char sub[256];
	if (a->kind != b->kind || a->line != b->line || a->col != b->col || a->n != b->n) {
		print_message("%s: kind %d/%d at %d:%d/%d:%d n %zu/%zu\n", path, a->kind, b->kind,
			      a->line, a->col, b->line, b->col, a->n, b->n);
		return false;
	}
	switch (a->kind) {
	case KB_YAML_SCALAR:
		if (a->len != b->len || a->plain != b->plain ||
		    memcmp(a->str, b->str, a->len + 1) != 0) {
			print_message("%s: \"%s\" (len %zu, plain %d) vs \"%s\" (len %zu, plain %d)\n",
				      path, a->str, a->len, a->plain, b->str, b->len, b->plain);
			return false;
		}
		return true;
	case KB_YAML_MAP:
		for (size_t i = 0; i < a->n; i++) {
			snprintf(sub, sizeof(sub), "%s.%.40s", path, a->pairs[i].key->str);
			if (!same_tree(a->pairs[i].key, b->pairs[i].key, sub) ||
			    !same_tree(a->pairs[i].value, b->pairs[i].value, sub))
				return false;
		}
		return true;
	case KB_YAML_SEQ:
		for (size_t i = 0; i < a->n; i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (!same_tree(a->items[i], b->items[i], sub))
				return false;
		}
		return true;
	}
	return false;
}

/* Loads yaml_text with the YAML loader and json_text with the JSON loader
 * and compares the files. */
static bool same_files(const char *yaml_text, const char *json_text)
{
	kb_yaml_file y, j;
	kb_err yerr = { 0 }, jerr = { 0 };
	int yr = kb_yaml_load_buffer(yaml_text, strlen(yaml_text), "t.json", &y, &yerr);
	int jr = kb_json_load_buffer(json_text, strlen(json_text), "t.json", &j, &jerr);
	if (yr != 0 || jr != 0)
		fail_msg("%.60s: yaml %d (%s), json %d (%s)", json_text, yr, yerr.msg, jr, jerr.msg);
	assert_string_equal(j.name, y.name);
	bool same = j.ndocs == y.ndocs;
	for (size_t i = 0; same && i < j.ndocs; i++)
		same = same_tree(y.docs[i], j.docs[i], "$");
	kb_yaml_file_release(&y);
	kb_yaml_file_release(&j);
	return same;
}

static void json_builds_the_yaml_loaders_tree(void **state)
{
	for (size_t i = 0; i < sizeof(same_texts) / sizeof(same_texts[0]); i++)
		if (!same_files(same_texts[i], same_texts[i]))
			fail_msg("trees differ for text %zu: %.80s", i, same_texts[i]);
}

/* The comparison above would notice a string marked plain, a number
 * marked quoted, a column off by one, or a different text. */
static void json_equivalence_check_sees_differences(void **state)
{
	assert_true(same_files("[\"1\"]", "[\"1\"]"));
	assert_false(same_files("[1]", "[\"1\"]"));
	assert_false(same_files("[\"1\"]", "[1]"));
	assert_false(same_files("[ 1]", "[1]"));
	assert_false(same_files("[\"a\\u0000b\"]", "[\"a\\u0000c\"]"));
	assert_false(same_files("{\"a\": [1]}", "{\"a\": [1, 2]}"));
	assert_false(same_files("[1]\n", "\n[1]"));
}

static void json_decodes_escapes_and_surrogate_pairs(void **state)
{
	kb_yaml_file f;
	json_ok("[\"\\ud83d\\ude00\", \"x\\uD834\\uDD1Ey\", \"\\u0000\", \"a\\u0000b\\u0000\","
		"\"\\u00e9\\u0800\\uffff\", \"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\uDBFF\\uDFFF\"]",
		&f);
	const kb_yaml_node *s = f.docs[0];
	assert_int_equal(s->n, 7);
	for (size_t i = 0; i < s->n; i++) {
		assert_int_equal(s->items[i]->kind, KB_YAML_SCALAR);
		assert_false(s->items[i]->plain);
		assert_int_equal(s->items[i]->str[s->items[i]->len], '\0');
	}
	assert_int_equal(s->items[0]->len, 4);
	assert_memory_equal(s->items[0]->str, "\xf0\x9f\x98\x80", 4);
	assert_int_equal(s->items[1]->len, 6);
	assert_memory_equal(s->items[1]->str, "x\xf0\x9d\x84\x9ey", 6);
	assert_int_equal(s->items[2]->len, 1);
	assert_int_equal(s->items[2]->str[0], '\0');
	assert_int_equal(s->items[3]->len, 4);
	assert_memory_equal(s->items[3]->str, "a\0b\0", 5);
	assert_int_equal(s->items[4]->len, 8);
	assert_memory_equal(s->items[4]->str, "\xc3\xa9\xe0\xa0\x80\xef\xbf\xbf", 8);
	assert_string_equal(s->items[5]->str, "\"\\/\b\f\n\r\t");
	assert_int_equal(s->items[6]->len, 4);
	assert_memory_equal(s->items[6]->str, "\xf4\x8f\xbf\xbf", 4);
	kb_yaml_file_release(&f);

	/* Bytes above 0x7f are passed through, valid UTF-8 or not. */
	json_ok("\"\xff\xfe \xc3\"", &f);
	assert_int_equal(f.docs[0]->len, 4);
	assert_memory_equal(f.docs[0]->str, "\xff\xfe \xc3", 5);
	kb_yaml_file_release(&f);
}

static void json_reads_numbers_and_literals_as_the_yaml_loader(void **state)
{
	kb_yaml_file f;
	json_ok("{\"i\": -42, \"big\": 9223372036854775808, \"d\": 2.5e-1, \"t\": true, \"f\": false,"
		" \"z\": null, \"qi\": \"42\", \"qt\": \"true\", \"qz\": \"null\"}",
		&f);
	const kb_yaml_node *root = f.docs[0];
	int64_t v = 0;
	bool b = false;
	double d = 0;
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "i"), &v), 0);
	assert_int_equal(v, -42);
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "big"), &v), -ERANGE);
	assert_int_equal(kb_yaml_double(kb_yaml_get(root, "d"), &d), 0);
	assert_true(d == 0.25);
	assert_int_equal(kb_yaml_bool(kb_yaml_get(root, "t"), &b), 0);
	assert_true(b);
	assert_int_equal(kb_yaml_bool(kb_yaml_get(root, "f"), &b), 0);
	assert_false(b);
	assert_true(kb_yaml_is_null(kb_yaml_get(root, "z")));
	assert_true(kb_yaml_get(root, "z")->plain);
	assert_string_equal(kb_yaml_get(root, "z")->str, "null");
	/* Quoted, they are strings. */
	assert_int_equal(kb_yaml_int(kb_yaml_get(root, "qi"), &v), -EINVAL);
	assert_false(kb_yaml_is_null(kb_yaml_get(root, "qz")));
	assert_int_equal(kb_yaml_bool(kb_yaml_get(root, "qt"), &b), 0); /* as for YAML */
	kb_yaml_file_release(&f);
}

static void json_reads_a_watch_event(void **state)
{
	kb_yaml_file f;
	json_ok(pod_event, &f);
	assert_int_equal(f.ndocs, 1);
	assert_string_equal(f.name, "t.json");
	const kb_yaml_node *ev = f.docs[0];
	assert_string_equal(kb_yaml_str(kb_yaml_get(ev, "type")), "MODIFIED");
	const kb_yaml_node *pod = kb_yaml_get(ev, "object");
	const kb_yaml_node *meta = kb_yaml_get(pod, "metadata");
	assert_string_equal(kb_yaml_str(kb_yaml_get(meta, "name")), "train-7f9c4-worker-3");
	assert_string_equal(kb_yaml_str(kb_yaml_get(kb_yaml_get(meta, "annotations"),
						     "kubectl.kubernetes.io/last-applied-configuration")),
			    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n");
	const kb_yaml_node *c = kb_yaml_get(kb_yaml_get(pod, "spec"), "containers")->items[0];
	const kb_yaml_node *req = kb_yaml_get(kb_yaml_get(c, "resources"), "requests");
	assert_string_equal(kb_yaml_str(kb_yaml_get(req, "cpu")), "7500m");
	assert_int_equal(kb_yaml_get(req, "cpu")->col, (int)(strstr(pod_event, "\"7500m\"") - pod_event) + 1);
	kb_yaml_file_release(&f);

	json_ok(pod_list, &f);
	assert_string_equal(kb_yaml_str(kb_yaml_get(kb_yaml_get(f.docs[0], "metadata"), "continue")),
			    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgyMTM0MDAsInN0YXJ0IjoicDJcdTAwMDAifQ");
	assert_int_equal(kb_yaml_get(f.docs[0], "items")->n, 2);
	kb_yaml_file_release(&f);
}

static void json_whitespace_only_is_no_document(void **state)
{
	kb_yaml_file f;
	kb_err err;
	const char *blanks[] = { "", " ", "\n\r\n\t  \r" };
	for (size_t i = 0; i < 3; i++) {
		json_ok(blanks[i], &f);
		assert_int_equal(f.ndocs, 0);
		assert_non_null(f.docs);
		assert_string_equal(f.name, "t.json");
		kb_yaml_file_release(&f);
	}
	assert_int_equal(kb_json_load_buffer(NULL, 0, NULL, &f, NULL), 0);
	assert_int_equal(f.ndocs, 0);
	assert_string_equal(f.name, "<buffer>");
	kb_yaml_file_release(&f);
	kb_yaml_file_release(&f);

	/* Only len bytes are read: the text need not be NUL-terminated. */
	assert_int_equal(kb_json_load_buffer("[1, 2]garbage", 6, "t.json", &f, &err), 0);
	assert_int_equal(f.docs[0]->n, 2);
	kb_yaml_file_release(&f);
	assert_int_equal(kb_json_load_buffer("12345", 2, "t.json", &f, &err), 0);
	assert_string_equal(f.docs[0]->str, "12");
	kb_yaml_file_release(&f);

	/* A NULL error pointer is fine on failure too. */
	assert_int_equal(kb_json_load_buffer("[", 1, NULL, &f, NULL), -EINVAL);
}

static void json_reports_syntax_errors_with_line_col(void **state)
{
	/* unexpected characters */
	FAILS("{\"a\": 1}\n{", -EINVAL, "t.json:2:1: trailing data after the root value (found '{')");
	FAILS("[1] x", -EINVAL, "t.json:1:5: trailing data after the root value (found 'x')");
	FAILS("{\"a\": 1}}", -EINVAL, "t.json:1:9: trailing data");
	FAILS("{a: 1}", -EINVAL, "t.json:1:2: unexpected character 'a', expected a key");
	FAILS("{'a': 1}", -EINVAL, "t.json:1:2: unexpected character '''");
	FAILS("[1, ?]", -EINVAL, "t.json:1:5: unexpected character '?', expected a value");
	FAILS("[,1]", -EINVAL, "t.json:1:2: unexpected character ',', expected a value");
	FAILS("{\"a\": }", -EINVAL, "t.json:1:7: unexpected character '}', expected a value");
	FAILS("\xef\xbb\xbf{}", -EINVAL, "t.json:1:1: unexpected character #xEF");
	FAILS("\t\x01", -EINVAL, "t.json:1:2: unexpected character #x01");
	FAILS("[1]\0", -EINVAL, "t.json:1:4: trailing data after the root value (found #x00)");
	FAILS("// comment\n{}", -EINVAL, "t.json:1:1: unexpected character '/'");
	FAILS("[True]", -EINVAL, "t.json:1:2: invalid literal \"True\"");
	FAILS("[nul]", -EINVAL, "t.json:1:2: invalid literal \"nul\"");
	FAILS("[truex]", -EINVAL, "t.json:1:2: invalid literal \"truex\"");
	FAILS("{\"a\": yes}", -EINVAL, "t.json:1:7: invalid literal \"yes\"");
	FAILS("NaN", -EINVAL, "t.json:1:1: invalid literal \"NaN\"");
	/* unterminated strings, control characters */
	FAILS("{\"a\": \"abc", -EINVAL, "t.json:1:7: unterminated string");
	FAILS("[\"abc\\", -EINVAL, "t.json:1:2: unterminated string");
	FAILS("[\"abc\\\"]", -EINVAL, "t.json:1:2: unterminated string");
	FAILS("[\n  \"ab\ncd\"]", -EINVAL, "t.json:2:6: control character #x0A in a string");
	FAILS("[\"a\tb\"]", -EINVAL, "t.json:1:4: control character #x09 in a string");
	FAILS("[\"\xc3\xa9\x1f\"]", -EINVAL, "t.json:1:4: control character #x1F in a string");
	FAILS("[\"a\0\"]", -EINVAL, "t.json:1:4: control character #x00 in a string");
	/* escapes */
	FAILS("[\"a\\x41\"]", -EINVAL, "t.json:1:4: invalid escape '\\' followed by 'x'");
	FAILS("[\"\\'\"]", -EINVAL, "t.json:1:3: invalid escape");
	FAILS("[\"\\U00000041\"]", -EINVAL, "t.json:1:3: invalid escape '\\' followed by 'U'");
	FAILS("[\"\\u12\"]", -EINVAL, "t.json:1:3: invalid \\u escape");
	FAILS("[\"\\u12G4\"]", -EINVAL, "t.json:1:3: invalid \\u escape");
	FAILS("[\"\xe2\x82\xac\\ud800\"]", -EINVAL, "t.json:1:4: lone high surrogate \\ud800");
	FAILS("[\"\\ud800x\"]", -EINVAL, "t.json:1:3: lone high surrogate \\ud800");
	FAILS("[\"\\ud800\\u0041\"]", -EINVAL, "t.json:1:3: lone high surrogate \\ud800");
	FAILS("[\"\\ud800\\ud800\"]", -EINVAL, "t.json:1:3: lone high surrogate \\ud800");
	FAILS("[\"\\ud800\\n\"]", -EINVAL, "t.json:1:3: lone high surrogate");
	FAILS("[\"\\uDC00\"]", -EINVAL, "t.json:1:3: lone low surrogate \\uDC00");
	/* numbers */
	FAILS("[01]", -EINVAL, "t.json:1:2: invalid number \"01\"");
	FAILS("[-01]", -EINVAL, "t.json:1:2: invalid number \"-01\"");
	FAILS("[1.]", -EINVAL, "t.json:1:2: invalid number \"1.\"");
	FAILS("[.5]", -EINVAL, "t.json:1:2: invalid number \".5\"");
	FAILS("[-]", -EINVAL, "t.json:1:2: invalid number \"-\"");
	FAILS("[+1]", -EINVAL, "t.json:1:2: invalid number \"+1\"");
	FAILS("[1e]", -EINVAL, "t.json:1:2: invalid number \"1e\"");
	FAILS("[1e+]", -EINVAL, "t.json:1:2: invalid number \"1e+\"");
	FAILS("[1.5.2]", -EINVAL, "t.json:1:2: invalid number \"1.5.2\"");
	FAILS("[0x1F]", -EINVAL, "t.json:1:2: invalid number \"0x1F\"");
	FAILS("[-Infinity]", -EINVAL, "t.json:1:2: invalid number \"-Infinity\"");
	FAILS("1e", -EINVAL, "t.json:1:1: invalid number \"1e\"");
	/* separators */
	FAILS("{\"a\" 1}", -EINVAL, "t.json:1:6: missing ':' after the key (found '1')");
	FAILS("{\"a\": 1 \"b\": 2}", -EINVAL, "t.json:1:9: missing ',' or '}' after a value (found '\"')");
	FAILS("{\"a\": 1]", -EINVAL, "t.json:1:8: missing ',' or '}' after a value (found ']')");
	FAILS("[1 2]", -EINVAL, "t.json:1:4: missing ',' or ']' after a value (found '2')");
	FAILS("[1}", -EINVAL, "t.json:1:3: missing ',' or ']' after a value (found '}')");
	FAILS("{\"a\": 1,}", -EINVAL, "t.json:1:8: trailing comma before '}'");
	FAILS("[1,\n2,\n]", -EINVAL, "t.json:2:2: trailing comma before ']'");
	FAILS("[1,,2]", -EINVAL, "t.json:1:4: unexpected character ','");
	FAILS("{,}", -EINVAL, "t.json:1:2: unexpected character ','");
	/* the end comes too early */
	FAILS("[", -EINVAL, "t.json:1:2: unexpected end of input (the array at line 1, column 1 is not closed)");
	FAILS("{\"a\": [1,\n  {\"b\":", -EINVAL,
	      "t.json:2:8: unexpected end of input (the object at line 2, column 3 is not closed)");
	FAILS("{\"a\"", -EINVAL, "t.json:1:5: unexpected end of input (the object at line 1, column 1");
	FAILS("[1, 2", -EINVAL, "t.json:1:6: unexpected end of input (the array");
	FAILS("{\"a\": 1", -EINVAL, "t.json:1:8: unexpected end of input (the object");
	/* positions count characters and every kind of line break */
	FAILS("{\"\xc3\xa9\xc3\xa9\": x}", -EINVAL, "t.json:1:8: invalid literal \"x\"");
	FAILS("[1,\r\n2,\r3,\r\r\n x]", -EINVAL, "t.json:5:2: invalid literal \"x\"");
}

static void json_rejects_duplicate_keys_with_position(void **state)
{
	FAILS("{\"a\": 1, \"b\": 2, \"a\": 3}", -EINVAL,
	      "t.json:1:18: duplicate key \"a\" (first at line 1, column 2)");
	/* The earliest repeat in the text is the one reported. */
	FAILS("{\"b\": 1,\n \"a\": 1,\n \"a\": 2,\n \"b\": 2}", -EINVAL,
	      "t.json:3:2: duplicate key \"a\" (first at line 2, column 2)");
	/* Escapes are decoded before comparing. */
	FAILS("{\"k\": 1, \"\\u006b\": 2}", -EINVAL, "t.json:1:10: duplicate key \"k\"");
	FAILS("{\"x\": {\"\": 1, \"\": 2}}", -EINVAL, "t.json:1:15: duplicate key \"\" (first at line 1, column 8)");
	/* Keys with a NUL inside differ by what follows it. */
	kb_yaml_file f;
	json_ok("{\"a\\u0000b\": 1, \"a\\u0000c\": 2, \"a\": 3}", &f);
	kb_yaml_file_release(&f);
	/* Equal keys in different objects are fine. */
	json_ok("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}, \"c\": [{\"x\": 3}, {\"x\": 4}]}", &f);
	kb_yaml_file_release(&f);

	/* Wide objects (sorted, not compared pairwise), and the same answer
	 * as the YAML loader gives. */
	char text[4096];
	for (int width = 10; width <= 200; width += 19) {
		for (int dup = 0; dup < 3; dup++) {
			size_t n = 0;
			n += (size_t)snprintf(text + n, sizeof(text) - n, "{");
			for (int i = 0; i < width; i++)
				n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"k%d\": %d",
						      i ? ", " : "", (i * 17) % width, i);
			if (dup == 1)
				n += (size_t)snprintf(text + n, sizeof(text) - n, ", \"k%d\": 0, \"k1\": 0",
						      width - 1);
			if (dup == 2)
				n += (size_t)snprintf(text + n, sizeof(text) - n, ", \"k\": 0, \"k\": 1");
			snprintf(text + n, sizeof(text) - n, "}");
			kb_err jerr = { 0 }, yerr = { 0 };
			kb_yaml_file y;
			int jr = json(text, &f, &jerr);
			int yr = kb_yaml_load_buffer(text, strlen(text), "t.json", &y, &yerr);
			assert_int_equal(jr, dup ? -EINVAL : 0);
			assert_int_equal(jr, yr);
			if (jr < 0)
				assert_string_equal(jerr.msg, yerr.msg);
			else
				assert_int_equal(f.docs[0]->n, width);
			kb_yaml_file_release(&f);
			kb_yaml_file_release(&y);
		}
	}
}

static void json_limits_nesting_depth(void **state)
{
	kb_yaml_file f;
	char *open = repeat("[", 64, "");
	char *close = repeat("]", 64, "\n");
	char *text = malloc(strlen(open) + strlen(close) + 1);
	assert_non_null(text);
	strcpy(text, open);
	strcat(text, close);
	json_ok(text, &f);
	assert_int_equal(f.ndocs, 1);
	const kb_yaml_node *n = f.docs[0];
	for (int i = 1; i < 64; i++) {
		assert_int_equal(n->n, 1);
		n = n->items[0];
		assert_int_equal(n->col, i + 1);
	}
	assert_int_equal(n->n, 0);
	kb_yaml_file_release(&f);
	free(text);
	free(open);
	free(close);

	char *deep = repeat("[", 65, "1");
	json_fails(deep, strlen(deep), -E2BIG, "t.json:1:65: nested deeper than 64 levels");
	free(deep);
	deep = repeat("[", 65, "");
	json_fails(deep, strlen(deep), -E2BIG, "t.json:1:65: nested deeper than 64 levels");
	free(deep);
	/* Objects count as arrays do. */
	deep = repeat("{\"a\":", 64, "{}");
	json_fails(deep, strlen(deep), -E2BIG, "t.json:1:321: nested deeper than 64 levels");
	free(deep);
	deep = repeat("{\"a\":", 63, "{}");
	char *tail = repeat("}", 63, "");
	text = malloc(strlen(deep) + strlen(tail) + 1);
	assert_non_null(text);
	strcpy(text, deep);
	strcat(text, tail);
	json_ok(text, &f);
	kb_yaml_file_release(&f);
	free(text);
	free(tail);
	free(deep);
}

static void json_limits_input_size(void **state)
{
	size_t len = ((size_t)64 << 20) + 1;
	char *big = malloc(len);
	assert_non_null(big);
	memset(big, ' ', len);
	kb_yaml_file f;
	kb_err err = { 0 };
	assert_int_equal(kb_json_load_buffer(big, len, "big.json", &f, &err), -E2BIG);
	assert_int_equal(err.code, -E2BIG);
	assert_string_equal(err.msg, "big.json: larger than 64 MiB");
	kb_yaml_file_release(&f);
	/* 64 MiB exactly is allowed. */
	assert_int_equal(kb_json_load_buffer(big, len - 1, "big.json", &f, &err), 0);
	assert_int_equal(f.ndocs, 0);
	kb_yaml_file_release(&f);
	free(big);
}

/* Collections wider and deeper than the stack of children kept on the C
 * stack (256) move it to the heap without losing anything. */
static void json_keeps_wide_and_deep_collections_whole(void **state)
{
	size_t cap = 64 * 1024;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t n = 0;
	/* 40 levels, each with 100 members before the next level. */
	for (int d = 0; d < 40; d++) {
		n += (size_t)snprintf(text + n, cap - n, "{");
		for (int i = 0; i < 100; i++)
			n += (size_t)snprintf(text + n, cap - n, "\"m%d\":%d,", i, d * 1000 + i);
		n += (size_t)snprintf(text + n, cap - n, "\"next\":");
	}
	n += (size_t)snprintf(text + n, cap - n, "[");
	for (int i = 0; i < 1000; i++)
		n += (size_t)snprintf(text + n, cap - n, "%s\"s%d\"", i ? "," : "", i);
	n += (size_t)snprintf(text + n, cap - n, "]");
	for (int d = 0; d < 40; d++)
		n += (size_t)snprintf(text + n, cap - n, "}");
	assert_true(n < cap);

	kb_yaml_file f;
	json_ok(text, &f);
	const kb_yaml_node *node = f.docs[0];
	for (int d = 0; d < 40; d++) {
		assert_int_equal(node->kind, KB_YAML_MAP);
		assert_int_equal(node->n, 101);
		for (int i = 0; i < 100; i++) {
			char key[16];
			snprintf(key, sizeof(key), "m%d", i);
			assert_string_equal(node->pairs[i].key->str, key);
			int64_t v;
			assert_int_equal(kb_yaml_int(node->pairs[i].value, &v), 0);
			assert_int_equal(v, d * 1000 + i);
		}
		node = kb_yaml_get(node, "next");
	}
	assert_int_equal(node->kind, KB_YAML_SEQ);
	assert_int_equal(node->n, 1000);
	assert_string_equal(node->items[999]->str, "s999");
	kb_yaml_file_release(&f);
	assert_true(same_files(text, text));
	free(text);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Not an assertion: how much faster the JSON loader reads a watch event. */
static void json_is_faster_than_the_yaml_loader(void **state)
{
	const int rounds = 2000;
	size_t len = strlen(pod_event);
	kb_yaml_file f;
	double t[2];
	for (int which = 0; which < 2; which++) {
		double start = now();
		for (int i = 0; i < rounds; i++) {
			int r = which ? kb_json_load_buffer(pod_event, len, "ev", &f, NULL)
				      : kb_yaml_load_buffer(pod_event, len, "ev", &f, NULL);
			assert_int_equal(r, 0);
			kb_yaml_file_release(&f);
		}
		t[which] = (now() - start) / rounds;
	}
	print_message("pod event (%zu bytes): yaml %.1f us, json %.1f us, %.1fx faster\n", len,
		      t[0] * 1e6, t[1] * 1e6, t[0] / t[1]);
	/* The reason the loader exists; measured 16-18x, so a factor of 2 holds
	 * on a busy machine and under the sanitizers. */
	assert_true(t[1] * 2 < t[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_builds_the_yaml_loaders_tree),
		cmocka_unit_test(json_equivalence_check_sees_differences),
		cmocka_unit_test(json_decodes_escapes_and_surrogate_pairs),
		cmocka_unit_test(json_reads_numbers_and_literals_as_the_yaml_loader),
		cmocka_unit_test(json_reads_a_watch_event),
		cmocka_unit_test(json_whitespace_only_is_no_document),
		cmocka_unit_test(json_reports_syntax_errors_with_line_col),
		cmocka_unit_test(json_rejects_duplicate_keys_with_position),
		cmocka_unit_test(json_limits_nesting_depth),
		cmocka_unit_test(json_limits_input_size),
		cmocka_unit_test(json_keeps_wide_and_deep_collections_whole),
		cmocka_unit_test(json_is_faster_than_the_yaml_loader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

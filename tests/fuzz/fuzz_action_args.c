/* fuzz_action_args.c - the arguments of actions and plugins where they are
 * read: fuzz_conf covers the loader (and the actions' check_arg at load
 * time), but most arguments are read when a session opens or an action
 * runs: allocate's percentage-of-nodes-to-score and topology-levels,
 * preempt's and reclaim's cooldown, victim-cooldown and
 * cooldown-priority-gap, gang's enqueue.overcommit-factor, nodeorder's
 * *.weight, gpu's gpu.* (plugins/, scheduler/actions/). So the input
 * is a scheduler configuration; when it loads, one session runs with it
 * over a fixed cluster big enough for every one of them to matter (104
 * nodes, zones and racks, GPU nodes, two queues, running low-priority pods
 * to preempt or reclaim, a pending gang with a topology wish, lone pods),
 * and the universal invariants are checked after it (fuzz_sessions.h). A
 * session may refuse a configuration only with a message.
 *
 * The cluster is built once; every session starts from it unchanged (the
 * decisions are not applied: the store puts the session snapshot back
 * through its journal). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/defaults.h"
#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "plugins/registry.h"
#include "scheduler/conf.h"
#include "tests/fuzz/fuzz_sessions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODES 104

static const char FIXED[] =
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
	"value: 1000\n---\n"
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\n"
	"value: 10\n---\n"
	"apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
	"metadata: {name: research}\nspec: {weight: 1}\n---\n"
	"apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: Queue\n"
	"metadata: {name: production}\nspec: {weight: 3}\n---\n"
	"apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata:\n  name: train\n  namespace: prod\n  annotations:\n"
	"    kube-batchd.io/topology-preferred: topology.kubernetes.io/zone\n"
	"spec: {minMember: 4, queue: production, priorityClassName: high}\n---\n"
	"apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: old, namespace: res}\n"
	"spec: {minMember: 2, queue: research, priorityClassName: low}\n";

/* Appends printf output to the text being built. */
__attribute__((format(printf, 3, 4))) static void add(char **s, size_t *len, const char *fmt, ...)
{
	char piece[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(piece, sizeof(piece), fmt, ap);
	va_end(ap);
	char *p = realloc(*s, *len + (size_t)n + 1);
	if (n < 0 || (size_t)n >= sizeof(piece) || !p)
		abort();
	memcpy(p + *len, piece, (size_t)n + 1);
	*s = p;
	*len += (size_t)n;
}

static char *cluster_text(void)
{
	char *s = NULL;
	size_t len = 0;
	add(&s, &len, "%s", FIXED);
	for (int i = 0; i < NODES; i++)
		add(&s, &len,
		    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n  labels:\n"
		    "    topology.kubernetes.io/zone: z%d\n    example.com/rack: r%d\n"
		    "status:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"20\"%s}\n",
		    i, i % 3, i % 8, i < 4 ? ", nvidia.com/gpu: \"4\"" : "");
	/* Low-priority running gang members and lone pods filling some nodes. */
	for (int i = 0; i < 8; i++)
		add(&s, &len,
		    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: old-%d\n  namespace: res\n"
		    "  annotations: {scheduling.k8s.io/group-name: old}\n"
		    "spec:\n  schedulerName: kube-batchd\n  nodeName: n%d\n"
		    "  priorityClassName: low\n  containers:\n  - name: c\n    resources:\n"
		    "      requests: {cpu: \"6\", memory: 8Gi%s}\nstatus: {phase: Running}\n",
		    i, i, i < 4 ? ", nvidia.com/gpu: \"3\"" : "");
	for (int i = 0; i < 4; i++)
		add(&s, &len,
		    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: train-%d\n  namespace: prod\n"
		    "  annotations: {scheduling.k8s.io/group-name: train}\n"
		    "spec:\n  schedulerName: kube-batchd\n  priorityClassName: high\n"
		    "  containers:\n  - name: c\n    resources:\n"
		    "      requests: {cpu: \"4\", memory: 4Gi, nvidia.com/gpu: \"2\"}\n",
		    i);
	for (int i = 0; i < 6; i++)
		add(&s, &len,
		    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: lone-%d\n  namespace: res\n"
		    "spec:\n  schedulerName: kube-batchd\n  containers:\n  - name: c\n"
		    "    resources:\n      requests: {cpu: \"%d\", memory: 1Gi}\n",
		    i, 1 + i);
	return s;
}

/* The fixed cluster, built at the first input and kept (never changed). */
static kb_cluster *fixed_cluster(void)
{
	static kb_cluster c;
	static int built;
	if (built)
		return &c;
	char *text = cluster_text();
	kb_yaml_file f;
	kb_err err = {0};
	kb_cluster_init(&c, KB_DEFAULT_SCHEDULER_NAME, KB_DEFAULT_QUEUE);
	if (kb_yaml_load_buffer(text, strlen(text), "cluster.yaml", &f, &err) < 0)
		abort();
	for (size_t i = 0; i < f.ndocs; i++) {
		kb_object *o = NULL;
		if (kb_object_decode(f.docs[i], f.name, &c.resnames, &o, &err) < 0 ||
		    kb_cluster_apply(&c, o, (int64_t)i) < 0)
			abort();
	}
	kb_yaml_file_release(&f);
	free(text);
	built = 1;
	return &c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	kb_cluster *c = fixed_cluster();
	kb_conf conf;
	kb_err err = {0};
	if (kb_conf_load_buffer((const char *)data, size, "fuzz.yaml", &kb_builtin_registry, &conf,
				&err) < 0)
		return 0;
	kb_session_memo memo;
	memset(&memo, 0, sizeof(memo));
	/* Sessions at t=0 and, past every cool-down, at t=1 day. */
	for (int s = 0; s < 2; s++) {
		kb_err e = {0};
		if (fz_session(c, &conf, &memo, s * 86400000LL, false, &e) < 0)
			break;
	}
	kb_conf_release(&conf);
	return 0;
}

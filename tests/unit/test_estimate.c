/* Estimated starts (scheduler/estimate.h) and the runtime history
 * (scheduler/runtimes.h): each expected end's source, the unknown cases
 * and every limit, and the caller's store left as it was. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cache/cluster.h"
#include "plugins/registry.h"
#include "scheduler/estimate.h"
#include "scheduler/runtimes.h"
#include "tests/unit/load_cluster.h"

/* 2021-01-01T00:00:00Z, the start of the running gang "busy". */
#define T0 1609459200000LL
#define NOW (T0 + 5000)

/* Two 4-cpu nodes filled by gang busy (one pod each, started at T0,
 * whose end is `bound`'s annotation or field), and gang next (two 4-cpu
 * pods, minMember 2) pending behind it. */
static char *cluster_text(const char *ann, const char *spec_extra)
{
	char *s = NULL;
	int n = asprintf(&s,
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"
		"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: busy}\nspec: {minMember: 2}\nstatus: {phase: Running}\n"
		"---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: next}\nspec: {minMember: 2}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: busy-0, labels: {job-name: busy}, annotations: {scheduling.k8s.io/group-name: busy%s}}\n"
		"spec: {schedulerName: kube-batchd, nodeName: n1%s, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
		"status: {phase: Running, startTime: '2021-01-01T00:00:00Z'}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: busy-1, labels: {job-name: busy}, annotations: {scheduling.k8s.io/group-name: busy%s}}\n"
		"spec: {schedulerName: kube-batchd, nodeName: n2%s, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
		"status: {phase: Running, startTime: '2021-01-01T00:00:00Z'}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: next-0, annotations: {scheduling.k8s.io/group-name: next}}\n"
		"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: next-1, annotations: {scheduling.k8s.io/group-name: next}}\n"
		"spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n",
		ann, spec_extra, ann, spec_extra);
	assert_true(n > 0);
	return s;
}

typedef struct fixture {
	kb_cluster c;
	kb_conf conf;
	kb_sim_result res;
} fixture;

static void setup(fixture *f, const char *ann, const char *spec_extra)
{
	kb_err err = {0};
	kb_cluster_init(&f->c, "kube-batchd", "default");
	char *text = cluster_text(ann, spec_extra);
	load_cluster(&f->c, text);
	free(text);
	assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &f->conf, &err), 0);
	memset(&f->res, 0, sizeof(f->res));
}

static void teardown(fixture *f)
{
	kb_sim_result_release(&f->res);
	kb_conf_release(&f->conf);
	kb_cluster_release(&f->c);
}

/* The estimate of default/next with opt (conf and now filled in). */
static const kb_sim_estimate *estimate(fixture *f, kb_estimate_options opt)
{
	kb_err err = {0};
	opt.conf = &f->conf;
	opt.now_ms = NOW;
	uint64_t gen = f->c.generation;
	assert_int_equal(kb_estimate_run(&f->c, &opt, &f->res, &err), 0);
	/* The caller's store is as it was: nothing placed, nothing finished. */
	assert_int_equal(f->c.generation, gen);
	for (size_t i = 0; i < f->c.pods.slots.n; i++)
		assert_false(f->c.pods.slots.v[i].overridden);
	assert_int_equal(f->res.estimates.n, 1); /* busy runs: only next is pending */
	const kb_sim_estimate *e = kb_estimate_find(&f->res, "default/next");
	assert_non_null(e);
	return e;
}

static void start_after_duration_annotation(void **state)
{
	fixture f;
	setup(&f, ", sim.kube-batchd.io/duration: '20'", "");
	const kb_sim_estimate *e = estimate(&f, (kb_estimate_options){0});
	assert_true(e->known);
	assert_int_equal(e->time_ms, 15000); /* busy ends at T0 + 20 s, 15 s from now */
	assert_string_equal(e->after, "default/busy");
	/* Run twice: the store was not changed, the answer is the same. */
	kb_sim_result_release(&f.res);
	e = estimate(&f, (kb_estimate_options){0});
	assert_int_equal(e->time_ms, 15000);
	teardown(&f);
}

static void start_after_active_deadline(void **state)
{
	fixture f;
	setup(&f, "", ", activeDeadlineSeconds: 60");
	const kb_sim_estimate *e = estimate(&f, (kb_estimate_options){0});
	assert_true(e->known);
	assert_int_equal(e->time_ms, 55000);
	teardown(&f);
}

static void duration_annotation_wins_over_deadline(void **state)
{
	fixture f;
	setup(&f, ", sim.kube-batchd.io/duration: '30'", ", activeDeadlineSeconds: 60");
	assert_int_equal(estimate(&f, (kb_estimate_options){0})->time_ms, 25000);
	teardown(&f);
}

static void unknown_when_running_pods_have_no_end(void **state)
{
	fixture f;
	setup(&f, "", "");
	const kb_sim_estimate *e = estimate(&f, (kb_estimate_options){0});
	assert_false(e->known);
	assert_non_null(strstr(e->unknown, "no known end"));
	assert_non_null(strstr(e->unknown, "default/busy"));
	teardown(&f);
}

static void history_of_job_name_then_queue(void **state)
{
	fixture f;
	setup(&f, "", "");
	kb_runtimes rt;
	kb_runtimes_init(&rt, 0, 0);
	assert_int_equal(kb_runtimes_record(&rt, NULL, "default", 100000), 0);
	kb_estimate_options opt = {.history = &rt};
	/* The queue's median: started at T0, 100 s. */
	assert_int_equal(estimate(&f, opt)->time_ms, 95000);
	kb_sim_result_release(&f.res);
	/* The job name's (label job-name) wins over the queue's. */
	assert_int_equal(kb_runtimes_record(&rt, "default/busy", NULL, 30000), 0);
	assert_int_equal(kb_runtimes_record(&rt, "default/busy", NULL, 40000), 0);
	assert_int_equal(kb_runtimes_record(&rt, "default/busy", NULL, 10000), 0);
	assert_int_equal(estimate(&f, opt)->time_ms, 25000); /* median 30 s */
	kb_runtimes_release(&rt);
	teardown(&f);
}

static void unknown_past_the_horizon(void **state)
{
	fixture f;
	setup(&f, ", sim.kube-batchd.io/duration: '700000'", ""); /* 8.1 days */
	const kb_sim_estimate *e = estimate(&f, (kb_estimate_options){0});
	assert_false(e->known);
	assert_string_equal(e->unknown, "not within the horizon of 168h");
	kb_sim_result_release(&f.res);
	/* A longer horizon finds it. */
	e = estimate(&f, (kb_estimate_options){.horizon_ms = 10LL * 24 * 3600 * 1000});
	assert_true(e->known);
	assert_int_equal(e->time_ms, 700000000 - 5000);
	teardown(&f);
}

static void unknown_past_the_session_limit(void **state)
{
	fixture f;
	setup(&f, ", sim.kube-batchd.io/duration: '20'", "");
	const kb_sim_estimate *e = estimate(&f, (kb_estimate_options){.max_sessions = 1});
	assert_false(e->known);
	assert_non_null(strstr(e->unknown, "limit of 1 sessions"));
	teardown(&f);
}

/* A queue of 400 one-pod gangs on a 1-cpu node, each running 1 s: one
 * session per second of virtual time. */
static void unknown_past_the_cpu_budget(void **state)
{
	kb_err err = {0};
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	char *text = strdup("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
			    "status: {allocatable: {cpu: '1', memory: 8Gi}}\n");
	for (int i = 0; i < 400; i++) {
		char *more = NULL;
		assert_true(asprintf(&more, "%s---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\n"
				     "kind: PodGroup\nmetadata: {name: g%03d}\nspec: {minMember: 1}\n"
				     "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%03d, annotations: "
				     "{scheduling.k8s.io/group-name: g%03d, sim.kube-batchd.io/duration: '1'}}\n"
				     "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: "
				     "{requests: {cpu: '1'}}}]}\n", text, i, i, i) > 0);
		free(text);
		text = more;
	}
	load_cluster(&c, text);
	free(text);
	kb_conf conf;
	assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &conf, &err), 0);
	kb_sim_result res;
	/* Without a bound every gang gets its second. */
	kb_estimate_options opt = {.conf = &conf, .now_ms = NOW, .budget_ms = -1};
	assert_int_equal(kb_estimate_run(&c, &opt, &res, &err), 0);
	assert_int_equal(res.estimates.n, 400);
	assert_int_equal(res.stop, KB_SIM_STOP_QUIET);
	const kb_sim_estimate *last = kb_estimate_find(&res, "default/g399");
	assert_true(last->known);
	assert_int_equal(last->time_ms, 399000);
	kb_sim_result_release(&res);
	/* With 1 ms of CPU the run stops early, and says so. */
	opt.budget_ms = 1;
	assert_int_equal(kb_estimate_run(&c, &opt, &res, &err), 0);
	assert_int_equal(res.stop, KB_SIM_STOP_BUDGET);
	last = kb_estimate_find(&res, "default/g399");
	assert_false(last->known);
	assert_non_null(strstr(last->unknown, "CPU budget"));
	kb_sim_result_release(&res);
	kb_conf_release(&conf);
	kb_cluster_release(&c);
}

/* ---- the history ----------------------------------------------------------------- */

static void history_median_and_ring(void **state)
{
	kb_runtimes rt;
	kb_runtimes_init(&rt, 0, 4);
	const char *from = "x";
	assert_int_equal(kb_runtimes_expect(&rt, "ns/j", "q", &from), -1);
	assert_null(from);
	int64_t v[] = {50, 10, 40, 20, 30};
	for (int i = 0; i < 5; i++)
		assert_int_equal(kb_runtimes_record(&rt, "ns/j", "q", v[i]), 0);
	/* The last 4 (10, 40, 20, 30): the lower middle one. */
	assert_int_equal(kb_runtimes_expect(&rt, "ns/j", NULL, &from), 20);
	assert_string_equal(from, "job");
	assert_int_equal(kb_runtimes_expect(&rt, "ns/other", "q", &from), 20);
	assert_string_equal(from, "queue");
	assert_int_equal(kb_runtimes_record(&rt, "ns/j", NULL, -5), 0); /* ignored */
	assert_int_equal(kb_runtimes_expect(&rt, "ns/j", NULL, NULL), 20);
	kb_runtimes_release(&rt);
}

static void history_forgets_the_least_recent_key(void **state)
{
	kb_runtimes rt;
	kb_runtimes_init(&rt, 3, 0);
	assert_int_equal(kb_runtimes_record(&rt, "ns/a", NULL, 1), 0);
	assert_int_equal(kb_runtimes_record(&rt, "ns/b", NULL, 2), 0);
	assert_int_equal(kb_runtimes_record(&rt, "ns/c", NULL, 3), 0);
	assert_int_equal(kb_runtimes_record(&rt, "ns/a", NULL, 1), 0); /* a is recent again */
	assert_int_equal(kb_runtimes_record(&rt, "ns/d", NULL, 4), 0); /* b goes */
	assert_int_equal(rt.nkeys, 3);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/b", NULL, NULL), -1);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/a", NULL, NULL), 1);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/c", NULL, NULL), 3);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/d", NULL, NULL), 4);
	/* Many more keys: still 3. */
	for (int i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof(k), "ns/k%d", i);
		assert_int_equal(kb_runtimes_record(&rt, k, NULL, i), 0);
	}
	assert_int_equal(rt.nkeys, 3);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/k99", NULL, NULL), 99);
	assert_int_equal(kb_runtimes_expect(&rt, "ns/k96", NULL, NULL), -1);
	kb_runtimes_release(&rt);
}

static void job_names(void **state)
{
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ns, labels: "
		"{training.kubeflow.org/job-name: mnist, job-name: other}}\nspec: {containers: [{name: c}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: ns, annotations: "
		"{scheduling.k8s.io/group-name: train-6f1c2b3a-1d2e-4f50-8a9b-0c1d2e3f4a5b}}\n"
		"spec: {containers: [{name: c}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: ns, annotations: "
		"{scheduling.k8s.io/group-name: plain-group}}\nspec: {containers: [{name: c}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: d, namespace: ns}\nspec: {containers: [{name: c}]}\n");
	char buf[128];
	assert_string_equal(kb_runtimes_job_name(kb_cluster_pod(&c, "ns/a")->obj, buf, sizeof(buf)),
			    "ns/mnist");
	assert_string_equal(kb_runtimes_job_name(kb_cluster_pod(&c, "ns/b")->obj, buf, sizeof(buf)),
			    "ns/train");
	assert_string_equal(kb_runtimes_job_name(kb_cluster_pod(&c, "ns/c")->obj, buf, sizeof(buf)),
			    "ns/plain-group");
	assert_null(kb_runtimes_job_name(kb_cluster_pod(&c, "ns/d")->obj, buf, sizeof(buf)));
	assert_null(kb_runtimes_job_name(kb_cluster_pod(&c, "ns/a")->obj, buf, 4)); /* too small */
	kb_cluster_release(&c);
}

static void bad_start_time_names_the_field(void **state)
{
	kb_yaml_file yf;
	kb_err err = {0};
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	const char *text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
			   "status: {startTime: yesterday}\n";
	assert_int_equal(kb_yaml_load_buffer(text, strlen(text), "pod.yaml", &yf, &err), 0);
	kb_object *o = NULL;
	assert_int_equal(kb_object_decode(yf.docs[0], "pod.yaml", &c.resnames, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "status.startTime"));
	const char *text2 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
			    "spec: {activeDeadlineSeconds: 0, containers: [{name: c}]}\n";
	kb_yaml_file_release(&yf);
	assert_int_equal(kb_yaml_load_buffer(text2, strlen(text2), "pod.yaml", &yf, &err), 0);
	assert_int_equal(kb_object_decode(yf.docs[0], "pod.yaml", &c.resnames, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "spec.activeDeadlineSeconds"));
	kb_yaml_file_release(&yf);
	kb_cluster_release(&c);
}

/* Decodes the pod of text (one document). */
static kb_object *pod_of(kb_cluster *c, const char *text)
{
	kb_yaml_file yf;
	kb_err err = {0};
	assert_int_equal(kb_yaml_load_buffer(text, strlen(text), "pod.yaml", &yf, &err), 0);
	kb_object *o = NULL;
	assert_int_equal(kb_object_decode(yf.docs[0], "pod.yaml", &c->resnames, &o, &err), 0);
	kb_yaml_file_release(&yf);
	return o;
}

/* Finished pods read from the API feed the history: the latest
 * finishedAt of their containers less status.startTime, oldest end first
 * (the ring keeps the latest), under the job name and the queue of their
 * PodGroup; Failed pods, pods of another scheduler and pods with no
 * finishedAt tell nothing. */
static void history_from_finished_pods(void **state)
{
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, "apiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\n"
			 "metadata: {name: train, namespace: ns}\nspec: {minMember: 1, queue: research}\n");
#define FINISHED_FMT "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ns, labels: " \
			  "{job-name: train}, annotations: {scheduling.k8s.io/group-name: train}}\n" \
			  "spec: {schedulerName: %s, containers: [{name: a}, {name: b}]}\n" \
			  "status: {phase: %s, startTime: '2021-01-01T00:00:00Z', containerStatuses: " \
			  "[{name: a, state: {terminated: {finishedAt: '2021-01-01T00:00:%02dZ'}}}, " \
			  "{name: b, state: {terminated: {finishedAt: '2021-01-01T00:00:%02dZ'}}}]}\n"
	char text[1024];
	kb_object *pods[5];
	/* ran 30 s (b ended last), 10 s, 20 s; listed out of order */
	snprintf(text, sizeof(text), FINISHED_FMT, "p1", "kube-batchd", "Succeeded", 5, 30);
	pods[0] = pod_of(&c, text);
	assert_int_equal(pods[0]->u.pod.finished_ms, T0 + 30000);
	snprintf(text, sizeof(text), FINISHED_FMT, "p2", "kube-batchd", "Succeeded", 10, 1);
	pods[1] = pod_of(&c, text);
	snprintf(text, sizeof(text), FINISHED_FMT, "p3", "kube-batchd", "Succeeded", 20, 20);
	pods[2] = pod_of(&c, text);
	snprintf(text, sizeof(text), FINISHED_FMT, "p4", "kube-batchd", "Failed", 50, 50);
	pods[3] = pod_of(&c, text);
	snprintf(text, sizeof(text), FINISHED_FMT, "p5", "default-scheduler", "Succeeded", 40, 40);
	pods[4] = pod_of(&c, text);
#undef FINISHED_FMT
	kb_runtimes rt;
	kb_runtimes_init(&rt, 0, 2); /* two per key: the two latest ends stay */
	uint32_t recorded = 0;
	assert_int_equal(kb_runtimes_from_finished(&rt, &c, pods, 5, &recorded), 0);
	assert_int_equal(recorded, 3);
	const char *from = NULL;
	/* The ring of two holds 20 s and 30 s (the ends at :20 and :30), not the
	 * 10 s of the earliest end; the median is the lower middle one. */
	assert_int_equal(kb_runtimes_expect(&rt, "ns/train", NULL, &from), 20000);
	assert_string_equal(from, "job");
	assert_int_equal(kb_runtimes_expect(&rt, NULL, "research", &from), 20000);
	assert_string_equal(from, "queue");
	assert_int_equal(kb_runtimes_expect(&rt, NULL, "default", NULL), -1);
	/* A running pod's finishedAt is not read */
	kb_object *running = pod_of(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: ns}\n"
					"spec: {containers: [{name: a}]}\nstatus: {phase: Running, "
					"containerStatuses: [{name: a, state: {terminated: "
					"{finishedAt: '2021-01-01T00:00:09Z'}}}]}\n");
	assert_int_equal(running->u.pod.finished_ms, 0);
	assert_int_equal(kb_runtimes_record_finished(&rt, running, "q"), 0);
	kb_object_free(running);
	for (int i = 0; i < 5; i++)
		kb_object_free(pods[i]);
	kb_runtimes_release(&rt);
	kb_cluster_release(&c);
}

static void bad_finished_at_names_the_field(void **state)
{
	kb_yaml_file yf;
	kb_err err = {0};
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	const char *text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
			   "status: {phase: Succeeded, containerStatuses: [{name: c, state: "
			   "{terminated: {finishedAt: soon}}}]}\n";
	assert_int_equal(kb_yaml_load_buffer(text, strlen(text), "pod.yaml", &yf, &err), 0);
	kb_object *o = NULL;
	assert_int_equal(kb_object_decode(yf.docs[0], "pod.yaml", &c.resnames, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "terminated.finishedAt"));
	kb_yaml_file_release(&yf);
	kb_cluster_release(&c);
}

/* What `simulate --from-cluster -f NEW.yaml` does: the store read with
 * list_groups, a run that loads the manifests into it, and
 * kb_estimate_input_add_new: the manifests' gangs are estimated after the
 * pending ones, one starting at once on the node the manifests add, one
 * that would wait for ever behind next (whose pods name no end). */
static void manifests_gangs_are_estimated(void **state)
{
	fixture f;
	setup(&f, ", sim.kube-batchd.io/duration: '20'", "");
	char path[] = "/tmp/test_estimate_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *out = fdopen(fd, "w");
	assert_non_null(out);
	fputs("apiVersion: v1\nkind: Node\nmetadata: {name: n3}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"
	      "---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: third}\nspec: {minMember: 1}\n"
	      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: third-0, annotations: {scheduling.k8s.io/group-name: third}}\n"
	      "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
	      "---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: fourth}\nspec: {minMember: 2}\n"
	      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: fourth-0, annotations: {scheduling.k8s.io/group-name: fourth}}\n"
	      "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n"
	      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: fourth-1, annotations: {scheduling.k8s.io/group-name: fourth}}\n"
	      "spec: {schedulerName: kube-batchd, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}\n",
	      out);
	assert_int_equal(fclose(out), 0);

	kb_err err = {0};
	kb_estimate_options eo = {.conf = &f.conf, .now_ms = NOW, .list_groups = true};
	kb_estimate_input in;
	assert_int_equal(kb_estimate_input_read(&f.c, &eo, &in, &err), 0);
	assert_int_equal(in.pending.n, 1);
	assert_int_equal(in.groups.n, 2); /* busy and next */
	const char *files[] = {path};
	kb_sim_options so = {.files = files, .nfiles = 1, .registry = &kb_builtin_registry,
			     .conf = &f.conf, .cluster = &f.c, .start_ms = NOW,
			     .max_time_ms = KB_ESTIMATE_HORIZON_MS, .max_sessions = 200,
			     .ends = in.ends.v, .nends = (uint32_t)in.ends.n};
	assert_int_equal(kb_simulate_run(&so, &f.res, &err), 0);
	assert_int_equal(kb_estimate_input_add_new(&f.c, &in, &err), 0);
	assert_int_equal(in.pending.n, 3);
	assert_string_equal(in.pending.v[0], "default/next");
	assert_string_equal(in.pending.v[1], "default/fourth"); /* the new ones sorted, after */
	assert_string_equal(in.pending.v[2], "default/third");
	assert_int_equal(kb_estimate_fill(&f.c, &in, KB_ESTIMATE_HORIZON_MS, &f.res), 0);
	assert_int_equal(f.res.estimates.n, 3);
	const kb_sim_estimate *e = kb_estimate_find(&f.res, "default/next");
	assert_true(e->known);
	assert_int_equal(e->time_ms, 15000);
	e = kb_estimate_find(&f.res, "default/third");
	assert_true(e->known);
	assert_int_equal(e->time_ms, 0); /* at once, on n3 */
	e = kb_estimate_find(&f.res, "default/fourth");
	assert_false(e->known); /* next, started in the run, names no end */
	assert_non_null(strstr(e->unknown, "would not start once every known end has come"));
	kb_estimate_input_release(&in);
	unlink(path);
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_after_duration_annotation),
		cmocka_unit_test(start_after_active_deadline),
		cmocka_unit_test(duration_annotation_wins_over_deadline),
		cmocka_unit_test(unknown_when_running_pods_have_no_end),
		cmocka_unit_test(history_of_job_name_then_queue),
		cmocka_unit_test(unknown_past_the_horizon),
		cmocka_unit_test(unknown_past_the_session_limit),
		cmocka_unit_test(unknown_past_the_cpu_budget),
		cmocka_unit_test(history_median_and_ring),
		cmocka_unit_test(history_forgets_the_least_recent_key),
		cmocka_unit_test(job_names),
		cmocka_unit_test(bad_start_time_names_the_field),
		cmocka_unit_test(history_from_finished_pods),
		cmocka_unit_test(bad_finished_at_names_the_field),
		cmocka_unit_test(manifests_gangs_are_estimated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

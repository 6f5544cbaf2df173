/* decode_pod.c - a Pod's fields (see decode.h): scheduler, node, phase,
 * priority, the PodGroup it belongs to, the simulator's times and the GPU
 * annotations; its containers and placement are read by
 * decode_pod_containers.c and decode_pod_placement.c. */
#include "cache/decode.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "api/quantity.h"

#define DEFAULT_SCHEDULER "default-scheduler"

/* status.phase; absent or "" is Pending. */
static int dec_phase(dec_ctx *d, const kb_yaml_node *status, kb_pod_phase *ret)
{
	const kb_yaml_node *ph = kb_yaml_get(status, "phase");
	if (kb_yaml_is_null(ph) || dec_scalar_is(ph, "Pending") || dec_scalar_is(ph, ""))
		*ret = KB_POD_PENDING;
	else if (dec_scalar_is(ph, "Running"))
		*ret = KB_POD_RUNNING;
	else if (dec_scalar_is(ph, "Succeeded"))
		*ret = KB_POD_SUCCEEDED;
	else if (dec_scalar_is(ph, "Failed"))
		*ret = KB_POD_FAILED;
	else if (dec_scalar_is(ph, "Unknown"))
		*ret = KB_POD_UNKNOWN;
	else if (dec_is_scalar(ph))
		return dec_fail(d, -EINVAL, ph, "status.phase",
				"unknown phase \"%.*s\" (want Pending, Running, Succeeded, "
				"Failed or Unknown)",
				DEC_QUOTE_MAX, ph->str);
	else
		return dec_fail(d, -EINVAL, ph, "status.phase", "expected a string, got %s",
				kb_yaml_kind_name(ph));
	return 0;
}

/* The group the pod names, first found of: spec.schedulingGroup and
 * spec.workloadRef (Kubernetes' own, decode_workload.c), the annotations
 * KB_ANN_GROUP_NAME and KB_ANN_VOLCANO_GROUP_NAME, the labels
 * KB_LABEL_COSCHED_GROUP and KB_LABEL_COSCHED_GROUP_OLD. */
static int dec_group(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po)
{
	const kb_meta *m = &d->o->meta;
	int r = dec_pod_k8s_group(d, spec, po);
	if (r < 0 || po->group_name)
		return r;
	const char *g = kb_labels_get(&m->annotations, KB_ANN_GROUP_NAME);
	if (!g || !*g)
		g = kb_labels_get(&m->annotations, KB_ANN_VOLCANO_GROUP_NAME);
	if (!g || !*g)
		g = kb_labels_get(&m->labels, KB_LABEL_COSCHED_GROUP);
	if (!g || !*g)
		g = kb_labels_get(&m->labels, KB_LABEL_COSCHED_GROUP_OLD);
	po->group_name = g && *g ? g : NULL;
	po->group_via = po->group_name ? KB_GROUP_ANNOTATION : KB_GROUP_NONE;
	if (po->group_name &&
	    !(po->group_key = kb_arena_printf(d->a, "%s/%s", m->ns, po->group_name)))
		return dec_nomem(d);
	return 0;
}

/* KB_PREEMPTABLE_KEY as a label or an annotation: "true" or "false"
 * (either spelled as Go's strconv.ParseBool takes it); false in either
 * place wins; absent is true. */
static int dec_preemptable(dec_ctx *d, kb_pod_obj *po)
{
	static const char *const yes[] = {"true", "True", "TRUE", "t", "T", "1"};
	static const char *const no[] = {"false", "False", "FALSE", "f", "F", "0"};
	const kb_labels *where[] = {&d->o->meta.labels, &d->o->meta.annotations};
	static const char *const paths[] = {"metadata.labels." KB_PREEMPTABLE_KEY,
					    "metadata.annotations." KB_PREEMPTABLE_KEY};
	po->preemptable = true;
	for (int w = 0; w < 2; w++) {
		const char *v = kb_labels_get(where[w], KB_PREEMPTABLE_KEY);
		if (!v)
			continue;
		bool known = false;
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			known |= strcmp(v, yes[i]) == 0;
			if (strcmp(v, no[i]) == 0) {
				known = true;
				po->preemptable = false;
			}
		}
		if (!known)
			return dec_fail(d, -EINVAL, w ? dec_annotation_node(d, KB_PREEMPTABLE_KEY) : NULL,
					paths[w], "want \"true\" or \"false\", got \"%.*s\"",
					DEC_QUOTE_MAX, v);
	}
	return 0;
}

/* Annotation ann, seconds (possibly fractional), to ms exactly in *ret_ms;
 * absent leaves *ret_ms alone. */
static int dec_sim_seconds(dec_ctx *d, const char *ann, int64_t *ret_ms)
{
	const char *s = kb_labels_get(&d->o->meta.annotations, ann);
	if (!s)
		return 0;
	int64_t ms;
	char path[DEC_PATH_LEN];
	dec_path(path, "metadata.annotations.%s", ann);
	if (kb_quantity_parse(s, &ms) < 0 || ms < 0)
		return dec_fail(d, -EINVAL, dec_annotation_node(d, ann), path,
				"want a non-negative number of seconds (e.g. \"1.5\"), "
				"got \"%.*s\"",
				DEC_QUOTE_MAX, s);
	*ret_ms = ms;
	return 0;
}

/* KB_ANN_GPU_MILLI: a share of one GPU, 1..999 milli-GPU, for a pod that
 * asks for one nvidia.com/gpu or none. po->req stays what the kubelet
 * counts: a pod asking for one nvidia.com/gpu holds one whole at admission
 * however small its share (the snapshot charges a pod asking none its share,
 * see kb_cluster_snapshot). */
static int dec_gpu_milli(dec_ctx *d, kb_pod_obj *po)
{
	const char *milli = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPU_MILLI);
	if (!milli)
		return 0;
	const kb_yaml_node *at = dec_annotation_node(d, KB_ANN_GPU_MILLI);
	const char *path = "metadata.annotations." KB_ANN_GPU_MILLI;
	int v = 0;
	size_t len = strlen(milli);
	bool ok = len > 0 && len <= 3;
	for (size_t i = 0; ok && i < len; i++) {
		ok = milli[i] >= '0' && milli[i] <= '9';
		v = v * 10 + (milli[i] - '0');
	}
	if (!ok || v < 1 || v > 999)
		return dec_fail(d, -EINVAL, at, path,
				"want an integer 1..999 (milli-GPU of one GPU), got \"%.*s\"",
				DEC_QUOTE_MAX, milli);
	int gi = kb_resnames_intern(d->rn, KB_RES_GPU_NAME);
	if (gi == -ENOSPC)
		return dec_names_full(d, at, path);
	if (gi < 0)
		return dec_fail(d, -EINVAL, at, path, "cannot register %s", KB_RES_GPU_NAME);
	int64_t asked = po->req.q[gi];
	if (asked != 0 && asked != 1000)
		return dec_fail(d, -EINVAL, at, path,
				"a pod sharing a GPU must ask for 1 %s or none, it asks for "
				"%lld milli-GPU",
				KB_RES_GPU_NAME, (long long)asked);
	po->spec.gpu_milli = v;
	return 0;
}

/* The message for a devices annotation that does not parse. */
static int bad_devices(dec_ctx *d, const kb_yaml_node *at, const char *path, const char *devs)
{
	return dec_fail(d, -EINVAL, at, path,
			"want distinct device indices 0..%d like \"0,1\", got \"%.*s\"",
			KB_MAX_GPUS - 1, DEC_QUOTE_MAX, devs);
}

/* KB_ANN_GPUSHARE_IDX, "1": the device Alibaba's GPU sharing runs the pod
 * on, written by whichever scheduler placed it. Read as the device plugin
 * reads it; a value it would not take (not a device index) is no device,
 * never an error: the annotation is not ours to judge. */
static int dec_gpushare_idx(dec_ctx *d, kb_pod_obj *po)
{
	const char *idx = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPUSHARE_IDX);
	int dev = 0;
	size_t len = idx ? strlen(idx) : 0;
	if (len == 0 || len > 2)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (idx[i] < '0' || idx[i] > '9')
			return 0;
		dev = dev * 10 + (idx[i] - '0');
	}
	if (dev >= KB_MAX_GPUS)
		return 0;
	uint8_t *v = kb_arena_alloc(d->a, 1);
	if (!v)
		return dec_nomem(d);
	v[0] = (uint8_t)dev;
	po->gpu_devices = v;
	po->ngpu_devices = 1;
	return 0;
}

/* KB_ANN_GPU_DEVICES, "0,1": the devices chosen at bind (cluster mode);
 * else KB_ANN_GPUSHARE_IDX. */
static int dec_gpu_devices(dec_ctx *d, kb_pod_obj *po)
{
	const char *devs = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPU_DEVICES);
	if (!devs || !*devs)
		return dec_gpushare_idx(d, po);
	const kb_yaml_node *at = dec_annotation_node(d, KB_ANN_GPU_DEVICES);
	const char *path = "metadata.annotations." KB_ANN_GPU_DEVICES;
	uint8_t *v = kb_arena_alloc(d->a, KB_MAX_GPUS);
	if (!v)
		return dec_nomem(d);
	uint32_t n = 0, seen = 0;
	const char *p = devs;
	for (;;) {
		while (*p == ' ')
			p++;
		int dev = 0;
		const char *start = p;
		while (*p >= '0' && *p <= '9' && dev < KB_MAX_GPUS)
			dev = dev * 10 + (*p++ - '0');
		if (p == start || dev >= KB_MAX_GPUS || (seen & (1u << dev)))
			return bad_devices(d, at, path, devs);
		seen |= 1u << dev;
		v[n++] = (uint8_t)dev;
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if (*p != ',')
			return bad_devices(d, at, path, devs);
		p++;
	}
	po->gpu_devices = v;
	po->ngpu_devices = n;
	return 0;
}

/* The GPU annotations: models accepted, a share of one GPU, devices. */
static int dec_gpu_wishes(dec_ctx *d, kb_pod_obj *po)
{
	const char *models = kb_labels_get(&d->o->meta.annotations, KB_ANN_GPU_MODELS);
	if (models) {
		if (!*models)
			return dec_fail(d, -EINVAL, dec_annotation_node(d, KB_ANN_GPU_MODELS),
					"metadata.annotations." KB_ANN_GPU_MODELS,
					"must not be empty (want models like \"V100|A100\")");
		po->spec.gpu_models = models;
	}
	int r = dec_gpu_milli(d, po);
	if (r < 0)
		return r;
	/* volcano's vGPU: the devices it was given, which the vgpu plugin
	 * books against its node's registration (plugins/vgpu.h). */
	if ((r = dec_pod_vgpu_used(d, &po->spec)) < 0)
		return r;
	return dec_gpu_devices(d, po);
}

/* What bounds a running pod's run: status.startTime and
 * spec.activeDeadlineSeconds (>= 1, as the API validates it). */
static int dec_run_bounds(dec_ctx *d, const kb_yaml_node *spec, const kb_yaml_node *status,
			  kb_pod_obj *po)
{
	bool set = false;
	int64_t deadline = -1;
	int r = dec_time(d, kb_yaml_get(status, "startTime"), "status.startTime", &set,
			 &po->start_ms);
	if (r < 0)
		return r;
	if (!set)
		po->start_ms = 0;
	if ((r = dec_int(d, kb_yaml_get(spec, "activeDeadlineSeconds"),
			 "spec.activeDeadlineSeconds", 1, INT64_MAX / 1000, &deadline, &set)) < 0)
		return r;
	po->active_deadline_ms = set ? deadline * 1000 : -1;
	return 0;
}

/* A finished pod's end: the latest terminated.finishedAt of its
 * containers' statuses (kb_pod_obj.finished_ms). Only for the final
 * phases, so that the pods the scheduler watches cost nothing more. */
static int dec_finished(dec_ctx *d, const kb_yaml_node *status, kb_pod_obj *po)
{
	po->finished_ms = 0;
	if (po->phase != KB_POD_SUCCEEDED && po->phase != KB_POD_FAILED)
		return 0;
	const kb_yaml_node *cs;
	int r = dec_seq(d, kb_yaml_get(status, "containerStatuses"), "status.containerStatuses",
			&cs);
	for (size_t i = 0; r == 0 && cs && i < cs->n; i++) {
		const kb_yaml_node *term = kb_yaml_get(kb_yaml_get(cs->items[i], "state"), "terminated");
		bool set = false;
		int64_t at = 0;
		r = dec_time(d, kb_yaml_get(term, "finishedAt"),
			     "status.containerStatuses[].state.terminated.finishedAt", &set, &at);
		if (r == 0 && set && at > po->finished_ms)
			po->finished_ms = at;
	}
	return r;
}

int dec_pod(dec_ctx *d)
{
	kb_pod_obj *po = &d->o->u.pod;
	const kb_yaml_node *spec, *status;
	int r;
	if ((r = dec_map(d, kb_yaml_get(d->root, "spec"), "spec", &spec)) < 0 ||
	    (r = dec_map(d, kb_yaml_get(d->root, "status"), "status", &status)) < 0)
		return r;
	if ((r = dec_str_nonempty(d, kb_yaml_get(spec, "schedulerName"), "spec.schedulerName",
				  &po->scheduler_name)) < 0)
		return r;
	if (!po->scheduler_name)
		po->scheduler_name = DEFAULT_SCHEDULER;
	if ((r = dec_str_nonempty(d, kb_yaml_get(spec, "nodeName"), "spec.nodeName",
				  &po->node_name)) < 0 ||
	    (r = dec_phase(d, status, &po->phase)) < 0)
		return r;
	int64_t prio = 0;
	if ((r = dec_int(d, kb_yaml_get(spec, "priority"), "spec.priority", INT32_MIN, INT32_MAX,
			 &prio, &po->has_priority)) < 0)
		return r;
	po->priority = (int32_t)prio;
	if ((r = dec_str_nonempty(d, kb_yaml_get(spec, "priorityClassName"),
				  "spec.priorityClassName", &po->priority_class_name)) < 0)
		return r;
	if ((r = dec_preemption_policy(d, kb_yaml_get(spec, "preemptionPolicy"),
				       "spec.preemptionPolicy", &po->preemption_policy)) < 0 ||
	    (r = dec_preemptable(d, po)) < 0 || (r = dec_group(d, spec, po)) < 0)
		return r;
	po->task_role = kb_labels_get(&d->o->meta.annotations, KB_ANN_TASK_SPEC);
	po->queue_name = dec_annotation_nonempty(d, KB_ANN_VOLCANO_QUEUE);
	const kb_yaml_node *gates;
	if ((r = dec_seq(d, kb_yaml_get(spec, "schedulingGates"), "spec.schedulingGates",
			 &gates)) < 0)
		return r;
	po->gated = gates && gates->n > 0;

	po->spec.labels = d->o->meta.labels;
	if ((r = dec_pod_containers(d, spec, po)) < 0 ||
	    (r = dec_pod_placement(d, spec, &po->spec)) < 0 ||
	    (r = dec_pod_topology(d, spec, &po->spec)) < 0 ||
	    (r = dec_pod_claims(d, spec, po)) < 0)
		return r;
	po->sim_duration_ms = -1;
	if ((r = dec_sim_seconds(d, KB_ANN_SIM_ARRIVAL, &po->sim_arrival_ms)) < 0 ||
	    (r = dec_sim_seconds(d, KB_ANN_SIM_DURATION, &po->sim_duration_ms)) < 0)
		return r;
	if ((r = dec_run_bounds(d, spec, status, po)) < 0 || (r = dec_finished(d, status, po)) < 0 ||
	    (r = dec_gpu_wishes(d, po)) < 0 || (r = dec_topology(d, NULL, &po->topology)) < 0)
		return r;
	/* A share of a GPU is a request, even one the kubelet does not count. */
	po->best_effort = kb_res_is_best_effort(&po->req) && po->spec.gpu_milli == 0 &&
			  po->spec.nspill == 0;
	return 0;
}

/* vgpu.c - volcano's vGPU: per-GPU books, fit and device choice (see
 * vgpu.h). */
#include "plugins/vgpu.h"

#include <errno.h>
#include <string.h>

#include "base/arena.h"
#include "cache/objects.h"

/* What one GPU holds. */
typedef struct gpu_use {
	int32_t num;   /* vGPUs */
	int64_t mem;   /* MiB */
	int32_t cores; /* percent */
} gpu_use;

struct kb_vgpu {
	int gpu_res, share_res; /* slots of nvidia.com/gpu and aliyun.com/gpu-mem, or -1 */
	bool books_known;
	gpu_use (*used)[KB_MAX_GPUS]; /* per node, per registered GPU */
};

int32_t kb_vgpu_mem_of(const kb_pod_spec *spec, const kb_vgpu_dev *dev)
{
	if (spec->vgpu_mem > 0)
		return spec->vgpu_mem;
	return (int32_t)((int64_t)dev->mem * spec->vgpu_pct / 100);
}

/* Whether GPU dev, holding u, takes one more vGPU of spec. */
static bool takes(const kb_vgpu_dev *dev, const gpu_use *u, const kb_pod_spec *spec)
{
	int32_t cores = spec->vgpu_cores;
	return u->num < dev->count && dev->mem - u->mem >= kb_vgpu_mem_of(spec, dev) &&
	       u->cores + cores <= 100 && !(cores >= 100 && u->num > 0) &&
	       !(u->cores >= 100 && cores == 0);
}

/* The GPUs of n that take spec's vGPUs, highest index first, as a mask;
 * 0 when fewer than it asks for do. */
static uint32_t choose(const kb_node *n, const gpu_use *used, const kb_pod_spec *spec)
{
	uint32_t mask = 0;
	int32_t want = spec->vgpu_number;
	for (int d = (int)n->nvgpu - 1; d >= 0 && want > 0; d--)
		if (takes(&n->vgpu[d], &used[d], spec)) {
			mask |= 1u << d;
			want--;
		}
	return want > 0 ? 0 : mask;
}

static void book(const kb_node *n, gpu_use *used, const kb_pod_spec *spec, uint32_t mask,
		 int sign)
{
	for (uint32_t d = 0; d < n->nvgpu; d++)
		if (mask & (1u << d)) {
			used[d].num += sign;
			used[d].mem += (int64_t)sign * kb_vgpu_mem_of(spec, &n->vgpu[d]);
			used[d].cores += sign * spec->vgpu_cores;
		}
}

int kb_vgpu_open(kb_session *ssn, kb_vgpu **ret, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	*ret = NULL;
	if (kb_resnames_find(&s->resnames, KB_RES_VGPU_NUMBER) < 0 &&
	    kb_resnames_find(&s->resnames, KB_RES_VGPU_MEMORY) < 0)
		return 0; /* nothing asks for a vGPU */
	kb_vgpu *v = kb_arena_alloc(&ssn->arena, sizeof(*v));
	if (!v)
		return kb_err_set(err, -ENOMEM, "out of memory");
	v->gpu_res = s->gpu_res;
	v->share_res = kb_resnames_find(&s->resnames, KB_RES_GPUSHARE_MEM);
	v->books_known = false;
	v->used = kb_arena_calloc(&ssn->arena, s->nnodes ? s->nnodes : 1, sizeof(*v->used));
	if (!v->used)
		return kb_err_set(err, -ENOMEM, "out of memory");
	*ret = v;
	return 0;
}

bool kb_vgpu_asks(const kb_vgpu *v, const kb_task *t)
{
	return v && t->spec && t->spec->vgpu_number > 0;
}

/* Books, on node n, what a pod bound there was given by whoever placed it
 * (its volcano.sh/vgpu-ids-new, decoded: kb_pod_spec.vgpu_used): each GPU
 * on the registered one whose UUID the entry's contains, as volcano's
 * scheduler matches them. O(entries x devices). */
static void book_used(const kb_node *n, gpu_use *used, const kb_pod_spec *spec)
{
	for (uint32_t k = 0; k < spec->nvgpu_used; k++) {
		const kb_vgpu_use *u = &spec->vgpu_used[k];
		for (uint32_t d = 0; d < n->nvgpu; d++)
			if (strstr(u->uuid, n->vgpu[d].uuid)) {
				used[d].num++;
				used[d].mem += u->mem;
				used[d].cores += u->cores;
				break;
			}
	}
}

/* The books as the session found them: every pod on a vGPU node that holds
 * vGPUs, on the GPUs the cache recorded for it (placed by kube-batchd),
 * else those its annotation names. Tasks placed by this session are left
 * to on_allocate. O(pods on vGPU nodes), once. */
static void books_of(kb_vgpu *v, const kb_snapshot *s)
{
	if (v->books_known)
		return;
	v->books_known = true;
	for (uint32_t ni = 0; ni < s->nnodes; ni++) {
		const kb_node *n = &s->nodes[ni];
		if (n->nvgpu == 0)
			continue;
		for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next) {
			const kb_task *t = &s->tasks[ti];
			if (!t->spec || t->spec->vgpu_number <= 0 ||
			    !kb_task_status_on_node(t->status) || t->status == KB_TASK_ALLOCATED ||
			    t->status == KB_TASK_PIPELINED)
				continue;
			if (t->gpu_mask)
				book(n, v->used[ni], t->spec, t->gpu_mask, 1);
			else
				book_used(n, v->used[ni], t->spec);
		}
	}
}

int kb_vgpu_predicate(kb_vgpu *v, const kb_session *ssn, const kb_task *t, const kb_node *n,
		      const char **ret)
{
	const kb_pod_spec *spec = t->spec;
	if (spec->vgpu_containers > 1) {
		*ret = "pod asks for volcano's vGPU in more than one container; its device plugin "
		       "finds a pod by one container's device count and would never find it";
		return KB_FIT_FAIL;
	}
	if ((v->gpu_res >= 0 && t->req.q[v->gpu_res] > 0) ||
	    (v->share_res >= 0 && t->req.q[v->share_res] > 0)) {
		*ret = "pod asks for volcano's vGPU and another GPU resource";
		return KB_FIT_FAIL;
	}
	if (n->nvgpu == 0) {
		*ret = n->vgpu_off ? n->vgpu_off
				   : "node(s) had no volcano vGPU devices registered (" KB_ANN_VGPU_REGISTER
				     ")";
		return KB_FIT_FAIL;
	}
	books_of(v, ssn->snap);
	if (!choose(n, v->used[n - ssn->snap->nodes], spec)) {
		*ret = "node(s) had too few GPUs with a free vGPU, enough free memory and cores";
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

void kb_vgpu_on_allocate(kb_vgpu *v, kb_session *ssn, kb_task *t)
{
	const kb_snapshot *s = ssn->snap;
	if (t->node < 0 || !kb_vgpu_asks(v, t))
		return;
	books_of(v, s);
	const kb_node *n = &s->nodes[t->node];
	uint32_t mask = choose(n, v->used[t->node], t->spec);
	if (!mask)
		return; /* the predicate passed, so this does not happen */
	book(n, v->used[t->node], t->spec, mask, 1);
	kb_session_set_task_devices(ssn, (uint32_t)(t - s->tasks), mask);
}

void kb_vgpu_on_deallocate(kb_vgpu *v, kb_session *ssn, kb_task *t)
{
	const kb_snapshot *s = ssn->snap;
	if (t->node < 0 || !kb_vgpu_asks(v, t) || !t->gpu_mask)
		return;
	books_of(v, s);
	book(&s->nodes[t->node], v->used[t->node], t->spec, t->gpu_mask, -1);
	kb_session_set_task_devices(ssn, (uint32_t)(t - s->tasks), 0);
}

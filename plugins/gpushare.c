/* gpushare.c - Alibaba's GPU sharing: per-device memory books, fit and
 * device choice (see gpushare.h). */
#include "plugins/gpushare.h"

#include <errno.h>
#include <string.h>

#include "base/arena.h"
#include "cache/objects.h"

struct kb_gpushare {
	int mem_res; /* slot of aliyun.com/gpu-mem */
	int gpu_res; /* slot of nvidia.com/gpu, or -1 */
	bool books_known;
	/* Per node: milli-units of gpu-mem used on each device (KB_MAX_GPUS). */
	int64_t (*used)[KB_MAX_GPUS];
	int8_t *held; /* per task: the device booked for it, or -1 */
};

int64_t kb_gpushare_device_mem(const kb_node *n, int mem_res)
{
	if (mem_res < 0 || n->gpushare_count <= 0 || n->allocatable.q[mem_res] <= 0)
		return 0;
	return n->allocatable.q[mem_res] / 1000 / n->gpushare_count * 1000;
}

static int64_t device_mem(const kb_gpushare *g, const kb_node *n)
{
	return kb_gpushare_device_mem(n, g->mem_res);
}

static int ndevices(const kb_node *n)
{
	return n->gpushare_count < KB_MAX_GPUS ? n->gpushare_count : KB_MAX_GPUS;
}

/* The device with the least free memory that still holds ask (the lowest
 * index among equals), or -1. */
static int tightest(const kb_gpushare *g, const kb_node *n, const int64_t *used, int64_t ask)
{
	int64_t cap = device_mem(g, n);
	int best = -1;
	for (int d = 0; d < ndevices(n); d++) {
		int64_t free = cap - used[d];
		if (free >= ask && (best < 0 || free < cap - used[best]))
			best = d;
	}
	return best;
}

int kb_gpushare_open(kb_session *ssn, kb_gpushare **ret, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	*ret = NULL;
	int r = kb_resnames_find(&s->resnames, KB_RES_GPUSHARE_MEM);
	if (r < 0)
		return 0; /* nothing asks for it */
	kb_gpushare *g = kb_arena_alloc(&ssn->arena, sizeof(*g));
	if (!g)
		return kb_err_set(err, -ENOMEM, "out of memory");
	g->mem_res = r;
	g->gpu_res = s->gpu_res;
	g->books_known = false;
	g->used = kb_arena_calloc(&ssn->arena, s->nnodes ? s->nnodes : 1, sizeof(*g->used));
	g->held = kb_arena_alloc(&ssn->arena, s->ntasks ? s->ntasks : 1);
	if (!g->used || !g->held)
		return kb_err_set(err, -ENOMEM, "out of memory");
	memset(g->held, -1, s->ntasks ? s->ntasks : 1);
	*ret = g;
	return 0;
}

bool kb_gpushare_asks(const kb_gpushare *g, const kb_task *t)
{
	return g && t->req.q[g->mem_res] > 0;
}

/* The books as the session found them: every pod on a gpushare node that
 * holds gpu-mem, on the device its annotation names, else on the one this
 * module would choose. Tasks placed by this session are left to
 * on_allocate. O(pods on gpushare nodes), once. */
static void books_of(kb_gpushare *g, const kb_snapshot *s)
{
	if (g->books_known)
		return;
	g->books_known = true;
	for (uint32_t ni = 0; ni < s->nnodes; ni++) {
		const kb_node *n = &s->nodes[ni];
		if (device_mem(g, n) <= 0)
			continue;
		for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next) {
			const kb_task *t = &s->tasks[ti];
			int64_t ask = t->req.q[g->mem_res];
			if (ask <= 0 || !kb_task_status_on_node(t->status) ||
			    t->status == KB_TASK_ALLOCATED || t->status == KB_TASK_PIPELINED)
				continue;
			int d = t->gpu_mask ? __builtin_ctz(t->gpu_mask) : -1;
			if (d < 0 || d >= ndevices(n))
				d = tightest(g, n, g->used[ni], ask);
			if (d < 0) /* over-committed by someone else: the fullest device */
				for (int k = 0; k < ndevices(n); k++)
					if (d < 0 || g->used[ni][k] > g->used[ni][d])
						d = k;
			if (d < 0)
				continue;
			g->used[ni][d] += ask;
			g->held[ti] = (int8_t)d;
		}
	}
}

int kb_gpushare_predicate(kb_gpushare *g, const kb_session *ssn, const kb_task *t,
			  const kb_node *n, const char **ret)
{
	if (g->gpu_res >= 0 && t->req.q[g->gpu_res] > 0) {
		*ret = "pod asks for both " KB_RES_GPUSHARE_MEM " and nvidia.com/gpu";
		return KB_FIT_FAIL;
	}
	if (n->gpushare_count <= 0) {
		*ret = "node(s) had no " KB_RES_GPUSHARE_COUNT " (GPU sharing by memory)";
		return KB_FIT_FAIL;
	}
	books_of(g, ssn->snap);
	if (tightest(g, n, g->used[n - ssn->snap->nodes], t->req.q[g->mem_res]) < 0) {
		*ret = "node(s) had no single GPU with enough free " KB_RES_GPUSHARE_MEM;
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

double kb_gpushare_fill(kb_gpushare *g, const kb_session *ssn, const kb_task *t, const kb_node *n)
{
	books_of(g, ssn->snap);
	const int64_t *used = g->used[n - ssn->snap->nodes];
	int64_t ask = t->req.q[g->mem_res], cap = device_mem(g, n);
	int d = tightest(g, n, used, ask);
	if (d < 0 || cap <= 0)
		return 0;
	return (double)(used[d] + ask) / (double)cap;
}

void kb_gpushare_on_allocate(kb_gpushare *g, kb_session *ssn, kb_task *t)
{
	const kb_snapshot *s = ssn->snap;
	if (t->node < 0 || !kb_gpushare_asks(g, t))
		return;
	books_of(g, s);
	uint32_t ti = (uint32_t)(t - s->tasks);
	int64_t ask = t->req.q[g->mem_res];
	int d = tightest(g, &s->nodes[t->node], g->used[t->node], ask);
	if (d < 0)
		return; /* the predicate passed, so this does not happen */
	g->used[t->node][d] += ask;
	g->held[ti] = (int8_t)d;
	kb_session_set_task_devices(ssn, ti, 1u << d);
}

void kb_gpushare_on_deallocate(kb_gpushare *g, kb_session *ssn, kb_task *t)
{
	const kb_snapshot *s = ssn->snap;
	if (t->node < 0 || !kb_gpushare_asks(g, t))
		return;
	books_of(g, s);
	uint32_t ti = (uint32_t)(t - s->tasks);
	if (g->held[ti] < 0)
		return;
	g->used[t->node][g->held[ti]] -= t->req.q[g->mem_res];
	g->held[ti] = -1;
	kb_session_set_task_devices(ssn, ti, 0);
}

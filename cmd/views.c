/* views.c - what top and explain show (see views.h). */
#include "cmd/views.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"

static bool arena_share_node(const kb_node *n)
{
	const char *v;
	return ((v = kb_labels_get(&n->labels, "gpushare")) && strcmp(v, "true") == 0) ||
	       ((v = kb_labels_get(&n->labels, "cgpu")) && strcmp(v, "true") == 0) ||
	       ((v = kb_labels_get(&n->labels, "ack.node.gpu.schedule")) &&
		(strcmp(v, "share") == 0 || strcmp(v, "cgpu") == 0));
}

/* A pod Arena sees on its node: bound there and not finished. */
static bool holds_node(kb_task_status st)
{
	return kb_task_status_on_node(st) && st != KB_TASK_PIPELINED;
}

static int64_t res_of(const kb_res *r, int i)
{
	return i >= 0 ? r->q[i] : 0;
}

void kb_node_view_of(const kb_snapshot *s, uint32_t ni, kb_node_view *ret)
{
	const kb_node *n = &s->nodes[ni];
	int gpu = s->gpu_res;
	int mem = kb_resnames_find(&s->resnames, "aliyun.com/gpu-mem");
	kb_node_view v = {
		.name = n->name,
		.ready = n->ready && !n->undecodable,
		.cordoned = n->unschedulable,
		.gpus = n->ngpus,
		.replicas = n->gpu_replicas > 0 ? n->gpu_replicas : 1,
		.gpu_alloc = res_of(&n->allocatable, gpu),
		.gpu_used = res_of(&n->used, gpu),
		.gpu_mem_total = res_of(&n->allocatable, mem),
		.gpu_mem_used = res_of(&n->used, mem),
		.cpu_alloc = n->allocatable.q[KB_RES_CPU],
		.cpu_used = n->used.q[KB_RES_CPU],
		.mem_alloc = n->allocatable.q[KB_RES_MEMORY],
		.mem_used = n->used.q[KB_RES_MEMORY],
	};
	if (n->gpushare_count > 0)
		v.sharing = "gpushare";
	else if (v.gpu_alloc <= 0)
		v.sharing = "none";
	else if (n->gpu_sharing == KB_GPU_SHARING_TIME_SLICING)
		v.sharing = "time-slicing";
	else if (n->gpu_sharing == KB_GPU_SHARING_MPS)
		v.sharing = "mps";
	else
		v.sharing = "whole";
	uint32_t devices = 0; /* gpushare devices holding a pod */
	int64_t whole = 0;    /* nvidia.com/gpu asked for, shares charged by kube-batchd aside */
	for (int32_t t = n->task_head; t >= 0; t = s->tasks[t].node_next) {
		const kb_task *k = &s->tasks[t];
		if (!holds_node(k->status))
			continue;
		v.pods++;
		int64_t g = res_of(&k->req, gpu);
		/* A kube-batchd.io/gpu-milli pod that asks for no nvidia.com/gpu
		 * is charged its share (1..999 milli), which no kubelet counts. */
		bool share_only = k->spec && k->spec->gpu_milli > 0 && g == k->spec->gpu_milli;
		if (!share_only)
			whole += g;
		if (res_of(&k->req, mem) > 0)
			devices |= k->gpu_mask;
	}
	if (arena_share_node(n)) {
		v.arena_mode = KB_ARENA_SHARE;
		v.arena_total = n->gpushare_count;
		v.arena_allocated = __builtin_popcount(devices);
	} else if (v.gpu_alloc > 0) {
		v.arena_mode = KB_ARENA_EXCLUSIVE;
		v.arena_total = v.gpu_alloc / 1000;
		v.arena_allocated = whole / 1000;
	}
	*ret = v;
}

/* volcano's helpers.Share. */
static double share_of(int64_t l, int64_t r)
{
	if (r == 0)
		return l == 0 ? 0.0 : 1.0;
	return (double)l / (double)r;
}

double kb_queue_share(const kb_res *allocated, const kb_res *deserved)
{
	double res = 0.0;
	for (int i = 0; i < KB_RES_MAX; i++) {
		if (i == KB_RES_PODS)
			continue;
		double sh = share_of(allocated->q[i], deserved->q[i]);
		if (sh > res)
			res = sh;
	}
	return res;
}

bool kb_job_waiting(const kb_job *j)
{
	if (j->foreign || j->phase == KB_PG_COMPLETED)
		return false;
	int32_t min = j->min_member > 0 ? j->min_member : 1;
	return kb_job_ready_count(j) < min;
}

int kb_job_shortfall(const kb_snapshot *s, uint32_t ji, kb_shortfall *ret)
{
	const kb_job *j = &s->jobs[ji];
	kb_shortfall f;
	memset(&f, 0, sizeof(f));
	f.short_res = -1;
	int32_t min = j->min_member > 0 ? j->min_member : 1;
	f.needed = min - kb_job_ready_count(j);
	if (f.needed < 0)
		f.needed = 0;
	kb_res *room = calloc(s->nnodes ? s->nnodes : 1, sizeof(*room));
	if (!room)
		return -ENOMEM;
	int32_t roomiest = -1;
	for (uint32_t n = 0; n < s->nnodes; n++) {
		if (!kb_node_schedulable(&s->nodes[n]))
			continue;
		kb_node_future_idle(&s->nodes[n], &room[n]);
		kb_res_add(&f.free, &room[n]);
	}
	bool first = true;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (t->status != KB_TASK_PENDING)
			continue;
		f.pending++;
		int32_t fit = -1;
		for (uint32_t n = 0; n < s->nnodes; n++) {
			if (!kb_node_schedulable(&s->nodes[n]))
				continue;
			/* Names past the slots (api/resource.h) against what the
			 * node's pods hold, not the ones this count placed. */
			bool room_here = kb_res_le(&t->req, &room[n]) &&
					 kb_node_spill_short(s, t, &s->nodes[n], true) < 0;
			if (first && room_here)
				f.nodes_with_room++;
			if (fit < 0 && room_here)
				fit = (int32_t)n;
		}
		first = false;
		if (fit >= 0) {
			kb_res_sub(&room[fit], &t->req);
			f.fit++;
			continue;
		}
		kb_res_add(&f.need, &t->req);
		if (f.short_res >= 0)
			continue;
		/* The roomiest node for this pod: the fewest resources short. */
		int best = KB_RES_MAX + 1;
		roomiest = -1;
		for (uint32_t n = 0; n < s->nnodes; n++) {
			if (!kb_node_schedulable(&s->nodes[n]))
				continue;
			int nshort = 0;
			for (int r = 0; r < KB_RES_MAX; r++)
				nshort += t->req.q[r] > room[n].q[r];
			if (nshort < best) {
				best = nshort;
				roomiest = (int32_t)n;
			}
		}
		if (roomiest >= 0)
			f.short_res = kb_res_first_short(&t->req, &room[roomiest]);
		else
			f.short_res = kb_res_first_short(&t->req, &f.free);
	}
	/* What the pods that did not fit lack beyond the room the others left. */
	kb_res left = {{0}};
	for (uint32_t n = 0; n < s->nnodes; n++)
		if (kb_node_schedulable(&s->nodes[n]))
			kb_res_add(&left, &room[n]);
	for (int r = 0; r < KB_RES_MAX; r++)
		f.missing.q[r] = f.need.q[r] > left.q[r] ? f.need.q[r] - left.q[r] : 0;
	free(room);
	*ret = f;
	return 0;
}

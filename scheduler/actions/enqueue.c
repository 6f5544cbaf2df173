/* enqueue - admit Pending PodGroups whose minimum the cluster can hold.
 *
 * volcano's enqueue: jobs come in queue order then job order; a Pending job
 * becomes Inqueue when it is valid, every plugin that has an opinion finds it
 * enqueueable (proportion: its minimum fits under the queue's capability),
 * and its minimum resources fit into what is left of the cluster's
 * allocatable times the overcommit factor (argument "overcommit-factor" of
 * the proportion plugin is not used here; kube-batchd reads the
 * `enqueue.overcommit-factor` argument of the gang plugin, default 1.2).
 * The minimum is the PodGroup's spec.minResources, or else the requests of
 * its minMember smallest tasks. Lone pods are always admitted.
 *
 * When preempt is configured, what lower-priority jobs hold counts as room
 * for a job (preempt could take it back); when reclaim is configured, so
 * does what reclaimable queues hold above their deserved share. Otherwise a
 * high-priority gang could never be admitted on a full cluster, and so
 * never preempt. The preempt and reclaim actions decide precisely.
 *
 * Cost: O(jobs log jobs + tasks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/actions/actions.h"

int kb_job_ref_cmp(const void *a, const void *b)
{
	const kb_job_ref *x = a, *y = b;
	const kb_session *ssn = x->ssn;
	const kb_job *jx = &ssn->snap->jobs[x->job], *jy = &ssn->snap->jobs[y->job];
	if (jx->queue != jy->queue) {
		const kb_queue *qx = &ssn->snap->queues[jx->queue], *qy = &ssn->snap->queues[jy->queue];
		return kb_queue_less(ssn, qx, qy) ? -1 : 1;
	}
	if (kb_job_less(ssn, jx, jy))
		return -1;
	return kb_job_less(ssn, jy, jx) ? 1 : 0;
}

static int cmp_req_cpu(const void *a, const void *b)
{
	const kb_res *x = a, *y = b;
	for (int i = 0; i < KB_RES_MAX; i++)
		if (x->q[i] != y->q[i])
			return x->q[i] < y->q[i] ? -1 : 1;
	return 0;
}

typedef struct held {
	int32_t priority;
	kb_res sum; /* after the prefix pass: held by this entry and all before it */
} held;

static int cmp_held(const void *a, const void *b)
{
	const held *x = a, *y = b;
	return x->priority < y->priority ? -1 : x->priority > y->priority;
}

void kb_job_min_request(const kb_session *ssn, const kb_job *j, kb_res *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (j->has_min_resources) {
		*ret = j->min_resources;
		return;
	}
	const kb_snapshot *s = ssn->snap;
	uint32_t n = j->ntasks;
	if (n == 0)
		return;
	kb_res *reqs = malloc(n * sizeof(kb_res));
	if (!reqs)
		return;
	for (uint32_t k = 0; k < n; k++)
		reqs[k] = s->tasks[s->job_tasks[j->first_task + k]].req;
	qsort(reqs, n, sizeof(kb_res), cmp_req_cpu);
	uint32_t m = j->min_member > 0 && (uint32_t)j->min_member < n ? (uint32_t)j->min_member : n;
	for (uint32_t k = 0; k < m; k++)
		kb_res_add(ret, &reqs[k]);
	free(reqs);
}

static int enqueue_execute(kb_session *ssn, kb_err *err)
{
	kb_snapshot *s = ssn->snap_rw;
	kb_job_ref *items = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(*items));
	if (!items)
		return kb_err_set(err, -ENOMEM, "out of memory");
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->flavor != KB_PG_NONE && j->phase == KB_PG_PENDING && j->queue >= 0)
			items[n++] = (kb_job_ref){ssn, i};
	}
	qsort(items, n, sizeof(*items), kb_job_ref_cmp);

	/* What the cluster can still hold: total allocatable x factor - used. */
	double factor = 1.2;
	for (uint32_t t = 0; t < ssn->conf->ntiers; t++)
		for (uint32_t p = 0; p < ssn->conf->tiers[t].n; p++)
			if (strcmp(ssn->conf->tiers[t].plugins[p].name, "gang") == 0)
				factor = kb_plugin_arg_double(&ssn->conf->tiers[t].plugins[p],
							      "enqueue.overcommit-factor", factor);
	kb_res room = {{0}};
	for (int r = 0; r < KB_RES_MAX; r++)
		room.q[r] = (int64_t)((double)s->total_allocatable.q[r] * factor);
	for (uint32_t i = 0; i < s->nnodes; i++)
		if (s->nodes[i].ready && !s->nodes[i].unschedulable)
			kb_res_sub(&room, &s->nodes[i].used);
	/* Inqueue jobs that have not started yet also hold their minimum. */
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->phase == KB_PG_INQUEUE) {
			kb_res min;
			kb_job_min_request(ssn, j, &min);
			kb_res pending_part = min;
			kb_res_sub(&pending_part, &j->allocated);
			for (int r = 0; r < KB_RES_MAX; r++)
				if (pending_part.q[r] > 0)
					room.q[r] -= pending_part.q[r];
		}
	}

	/* Room that preemption could free for a job of priority p: what jobs of
	 * lower priority hold. Sorted by priority with prefix sums. */
	bool preempt = kb_conf_has_action(ssn->conf, "preempt");
	held *hs = kb_arena_calloc(&ssn->arena, s->njobs + 1, sizeof(held));
	if (!hs)
		return kb_err_set(err, -ENOMEM, "out of memory");
	uint32_t nh = 0;
	for (uint32_t i = 0; preempt && i < s->njobs; i++)
		if (!kb_res_is_zero(&s->jobs[i].allocated))
			hs[nh++] = (held){s->jobs[i].priority, s->jobs[i].allocated};
	qsort(hs, nh, sizeof(held), cmp_held);
	for (uint32_t i = 1; i < nh; i++)
		kb_res_add(&hs[i].sum, &hs[i - 1].sum);
	kb_res reclaimable = {{0}};
	if (kb_conf_has_action(ssn->conf, "reclaim"))
		for (uint32_t i = 0; i < s->nqueues; i++) {
			const kb_queue *q = &s->queues[i];
			for (int r = 0; q->reclaimable && r < KB_RES_MAX; r++)
				if (q->allocated.q[r] > ssn->deserved[i].q[r])
					reclaimable.q[r] += q->allocated.q[r] - ssn->deserved[i].q[r];
		}

	for (uint32_t k = 0; k < n; k++) {
		kb_job *j = &s->jobs[items[k].job];
		const char *invalid = kb_job_valid(ssn, j);
		if (invalid) {
			kb_job_out(ssn, j)->pending_reason = invalid;
			continue;
		}
		if (!kb_job_enqueueable(ssn, j)) {
			if (!kb_job_out(ssn, j)->pending_reason)
				kb_job_out(ssn, j)->pending_reason = "not enqueueable: its queue cannot take it now";
			continue;
		}
		kb_res min;
		kb_job_min_request(ssn, j, &min);
		min.q[KB_RES_PODS] = 0;
		kb_res could = room;
		uint32_t below = 0; /* jobs of lower priority: hs[0 .. below) */
		while (below < nh && hs[below].priority < j->priority)
			below++;
		if (below)
			kb_res_add(&could, &hs[below - 1].sum);
		if (!kb_queue_overused(ssn, &s->queues[j->queue]))
			kb_res_add(&could, &reclaimable);
		bool fits = true;
		for (int r = 0; r < KB_RES_MAX; r++)
			fits &= min.q[r] <= 0 || min.q[r] <= could.q[r];
		if (!fits) {
			kb_job_out(ssn, j)->pending_reason = "waiting to be enqueued: the cluster cannot hold its "
					    "minimum resources now";
			continue;
		}
		kb_res_sub(&room, &min);
		j->phase = KB_PG_INQUEUE;
	}
	return 0;
}

const kb_action_ops kb_action_enqueue = {
	.name = "enqueue",
	.execute = enqueue_execute,
};

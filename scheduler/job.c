#include "scheduler/job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool kb_job_has_pending(const kb_snapshot *s, const kb_job *j, bool best_effort)
{
	if (j->nstatus[KB_TASK_PENDING] == 0)
		return false; /* most jobs of a busy cluster: no walk over their tasks */
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->status == KB_TASK_PENDING && t->best_effort == best_effort)
			return true;
	}
	return false;
}

bool kb_job_admitted(const kb_session *ssn, const kb_job *j)
{
	if (!ssn->enqueue_configured || j->flavor == KB_PG_NONE)
		return true;
	return j->phase != KB_PG_PENDING;
}

static int cmp_res(const void *a, const void *b)
{
	const kb_res *x = a, *y = b;
	for (int i = 0; i < KB_RES_MAX; i++)
		if (x->q[i] != y->q[i])
			return x->q[i] < y->q[i] ? -1 : 1;
	return 0;
}

/* The sum of the requests of the k smallest of j's tasks (pending_only:
 * of its pending tasks that are not BestEffort) into *ret, and how many
 * such tasks there are into *ret_n (the sum is left zero when fewer than
 * k). Returns 0 or -ENOMEM. O(tasks), no allocation when they ask alike;
 * else O(tasks log tasks) with scratch from the session arena. */
static int sum_smallest(const kb_session *ssn, const kb_job *j, bool pending_only, uint32_t k,
			kb_res *ret, uint32_t *ret_n)
{
	const kb_snapshot *s = ssn->snap;
	memset(ret, 0, sizeof(*ret));
	/* A gang's members usually ask the same: then no copy and no sort. */
	const kb_res *first = NULL;
	bool alike = true;
	uint32_t n = 0;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (pending_only && (t->status != KB_TASK_PENDING || t->best_effort))
			continue;
		if (!first)
			first = &t->req;
		alike = alike && memcmp(&t->req, first, sizeof(*first)) == 0;
		n++;
	}
	*ret_n = n;
	if (k > n)
		return 0;
	if (alike) {
		for (uint32_t i = 0; i < k; i++)
			kb_res_add(ret, first);
		return 0;
	}
	kb_res *reqs = kb_session_calloc(ssn, n, sizeof(kb_res));
	if (!reqs)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (!pending_only || (t->status == KB_TASK_PENDING && !t->best_effort))
			reqs[n++] = t->req;
	}
	qsort(reqs, n, sizeof(kb_res), cmp_res);
	for (uint32_t i = 0; i < k; i++)
		kb_res_add(ret, &reqs[i]);
	return 0;
}

int kb_job_min_request(const kb_session *ssn, const kb_job *j, kb_res *ret)
{
	if (j->has_min_resources) {
		*ret = j->min_resources;
		return 0;
	}
	uint32_t n = j->ntasks, m = j->min_member > 0 && (uint32_t)j->min_member < n
					     ? (uint32_t)j->min_member
					     : n;
	return sum_smallest(ssn, j, false, m, ret, &n);
}

int kb_job_remaining_need(const kb_session *ssn, const kb_job *j, kb_res *ret, int32_t *ret_count)
{
	memset(ret, 0, sizeof(*ret));
	*ret_count = 0;
	int32_t k = j->min_member - kb_job_placed_count(j);
	if (k <= 0)
		return 0;
	uint32_t n;
	int r = sum_smallest(ssn, j, true, (uint32_t)k, ret, &n);
	if (r == 0)
		*ret_count = (uint32_t)k > n ? -1 : k;
	return r;
}

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

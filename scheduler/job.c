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

int kb_job_min_request(const kb_session *ssn, const kb_job *j, kb_res *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (j->has_min_resources) {
		*ret = j->min_resources;
		return 0;
	}
	const kb_snapshot *s = ssn->snap;
	uint32_t n = j->ntasks;
	if (n == 0)
		return 0;
	uint32_t m = j->min_member > 0 && (uint32_t)j->min_member < n ? (uint32_t)j->min_member : n;
	const kb_res *first = &s->tasks[s->job_tasks[j->first_task]].req;
	bool alike = true; /* a gang's members usually ask the same: no copy, no sort */
	for (uint32_t k = 1; k < n && alike; k++)
		alike = memcmp(&s->tasks[s->job_tasks[j->first_task + k]].req, first, sizeof(*first)) == 0;
	if (alike) {
		for (uint32_t k = 0; k < m; k++)
			kb_res_add(ret, first);
		return 0;
	}
	kb_res *reqs = kb_session_calloc(ssn, n, sizeof(kb_res));
	if (!reqs)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		reqs[k] = s->tasks[s->job_tasks[j->first_task + k]].req;
	qsort(reqs, n, sizeof(kb_res), cmp_res);
	for (uint32_t k = 0; k < m; k++)
		kb_res_add(ret, &reqs[k]);
	return 0;
}

int kb_job_remaining_need(const kb_session *ssn, const kb_job *j, kb_res *ret, int32_t *ret_count)
{
	const kb_snapshot *s = ssn->snap;
	memset(ret, 0, sizeof(*ret));
	*ret_count = 0;
	int32_t k = j->min_member - kb_job_placed_count(j);
	if (k <= 0)
		return 0;
	kb_res *reqs = kb_session_calloc(ssn, j->ntasks ? j->ntasks : 1, sizeof(kb_res));
	if (!reqs)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (t->status == KB_TASK_PENDING && !t->best_effort)
			reqs[n++] = t->req;
	}
	if ((uint32_t)k > n) {
		*ret_count = -1;
		return 0;
	}
	bool alike = true; /* a gang's members usually ask the same: no sort then */
	for (uint32_t i = 1; i < n && alike; i++)
		alike = memcmp(&reqs[i], &reqs[0], sizeof(kb_res)) == 0;
	if (!alike)
		qsort(reqs, n, sizeof(kb_res), cmp_res);
	for (int32_t i = 0; i < k; i++)
		kb_res_add(ret, &reqs[i]);
	*ret_count = k;
	return 0;
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

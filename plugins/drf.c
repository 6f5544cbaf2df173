/* drf - dominant resource fairness between jobs.
 *
 * A job's share is the largest, over resources, of what it has allocated
 * divided by the cluster's total (pods are not a resource here). Jobs with a
 * smaller dominant share go first. A running task may be preempted only when,
 * after the move, the preemptor's job would still have a smaller share than
 * the victim's (kube-batch's rule). Shares follow every tentative allocation
 * and eviction through the event handlers.
 */
#include <math.h>

#include "plugins/plugins.h"

static double share_of(const kb_snapshot *s, const kb_res *alloc)
{
	double best = 0;
	for (int r = 0; r < s->resnames.n; r++) {
		if (r == KB_RES_PODS || s->total_allocatable.q[r] <= 0)
			continue;
		double v = (double)alloc->q[r] / (double)s->total_allocatable.q[r];
		if (v > best)
			best = v;
	}
	return best;
}

static int drf_job_order(void *st, const kb_session *ssn, const kb_job *l, const kb_job *r)
{
	double ls = share_of(ssn->snap, &l->allocated), rs = share_of(ssn->snap, &r->allocated);
	if (ls == rs)
		return 0;
	return ls < rs ? -1 : 1;
}

static kb_vote drf_victims(void *st, const kb_session *ssn, const kb_task *preemptor,
			   const uint32_t *cands, uint32_t n, bool *allow)
{
	const kb_snapshot *s = ssn->snap;
	if (preemptor->job < 0)
		return KB_ABSTAIN;
	kb_res mine = s->jobs[preemptor->job].allocated;
	kb_res_add(&mine, &preemptor->req);
	double my_share = share_of(s, &mine);
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[cands[i]];
		if (t->job < 0)
			continue;
		kb_res theirs = s->jobs[t->job].allocated;
		kb_res_sub(&theirs, &t->req);
		double their_share = share_of(s, &theirs);
		allow[i] = my_share < their_share || fabs(my_share - their_share) < 1e-9;
	}
	return KB_PERMIT;
}

const kb_plugin_ops kb_plugin_drf = {
	.name = "drf",
	.job_order = drf_job_order,
	.preemptable = drf_victims,
};

/* volumes.c - volume binding in a session (see volumes.h). */
#include "scheduler/volumes.h"

#include <errno.h>
#include <string.h>

#include "api/labels.h"

#define NO_VOLUMES "node(s) didn't find available persistent volumes to bind"
#define NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define TOO_MANY_VOLUMES "node(s) exceed max volume count"
/* Distinct new CSI volumes the session placed on one node that a check
 * tells apart; past that, the node counts as full (no CSI driver limits a
 * node to anywhere near as many). */
#define CSI_SEEN_MAX 512
#define RWOP_CONFLICT                                                                              \
	"node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access " \
	"mode"

/* The session's volume state: who took each available volume, what each
 * placed task was given, and which placed task uses each ReadWriteOncePod
 * claim. */
struct kb_vol {
	int32_t *taker;      /* per snap->pvs: the task holding it, or -1 */
	int32_t **picks;     /* per task: its picks (volumes.h), or NULL */
	int32_t *rwop_taker; /* per snap->rwop_claims: the task using it, or -1 */
};

/* Whether a ReadWriteOncePod claim of task ti is used by another task the
 * session placed. */
static bool rwop_taken(const kb_session *ssn, uint32_t ti, const kb_task_volumes *v)
{
	const struct kb_vol *st = ssn->vol;
	for (uint32_t i = 0; st && i < v->nrwop; i++)
		if (st->rwop_taker[v->rwop[i]] >= 0 && (uint32_t)st->rwop_taker[v->rwop[i]] != ti)
			return true;
	return false;
}

/* Whether every pod on a node holding one of the task's ReadWriteOncePod
 * claims was evicted by this session from `node` (holders already being
 * deleted as the session started made the task wait: cache/volumes.h). */
static bool holders_gone(const kb_snapshot *s, const kb_task_volumes *v, const kb_node *node)
{
	for (uint32_t i = 0; i < v->nholders; i++) {
		const kb_task *h = &s->tasks[v->holders[i]];
		if (h->status != KB_TASK_RELEASING || h->node != node - s->nodes)
			return false;
	}
	return true;
}

bool kb_volumes_blocks(const kb_session *ssn, const kb_task *task, uint32_t victim)
{
	const kb_task_volumes *v = kb_task_vol(ssn->snap, task);
	for (uint32_t i = 0; v && i < v->nholders; i++)
		if (v->holders[i] == victim)
			return true;
	return false;
}

/* Whether node matches one of n terms (none: every node). */
static bool terms_match(const kb_selector_term *terms, uint32_t n, const kb_node *node)
{
	if (n == 0)
		return true;
	for (uint32_t i = 0; i < n; i++)
		if (kb_match_selector_term(&terms[i], node))
			return true;
	return false;
}

static bool pv_fits(const kb_pv *pv, const kb_claim_need *c, const kb_node *node)
{
	return strcmp(pv->class_name, c->class_name) == 0 && pv->capacity >= c->request &&
	       pv->block == c->block && (pv->access_modes & c->access_modes) == c->access_modes &&
	       (!c->selector || kb_match_label_selector(c->selector, pv->labels)) &&
	       terms_match(pv->terms, pv->nterms, node);
}

/* Whether the claim's provisioner has room for it on node, as its
 * CSIStorageCapacities say (true when it publishes none). */
static bool capacity_at(const kb_claim_need *c, const kb_node *node)
{
	if (!c->check_capacity)
		return true;
	for (uint32_t i = 0; i < c->ncapacity; i++)
		if (kb_match_label_selector(c->capacity[i], &node->labels))
			return true;
	return false;
}

/* Chooses, in picks[0..v->nto_bind), a volume or provisioning for each
 * claim to bind of task ti on node: NULL, or why some claim has neither. */
static const char *match_claims(const kb_session *ssn, uint32_t ti, const kb_task_volumes *v,
				const kb_node *node, int32_t *picks)
{
	const kb_snapshot *s = ssn->snap;
	const struct kb_vol *st = ssn->vol;
	for (uint32_t i = 0; i < v->nto_bind; i++) {
		const kb_claim_need *c = &v->to_bind[i];
		int32_t best = -1;
		for (uint32_t p = 0; p < s->npvs; p++) {
			if (st && st->taker[p] >= 0 && (uint32_t)st->taker[p] != ti)
				continue;
			bool mine = false;
			for (uint32_t k = 0; k < i && !mine; k++)
				mine = picks[k] == (int32_t)p;
			if (mine || !pv_fits(&s->pvs[p], c, node))
				continue;
			if (best < 0 || s->pvs[p].capacity < s->pvs[best].capacity)
				best = (int32_t)p;
		}
		if (best < 0 && !(c->dynamic && terms_match(c->allowed, c->nallowed, node)))
			return NO_VOLUMES;
		if (best < 0 && !capacity_at(c, node))
			return NOT_ENOUGH_SPACE;
		picks[i] = best;
	}
	return NULL;
}

static bool has_vol(const uint32_t *sorted, uint32_t n, uint32_t id)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] == id)
			return true;
		if (sorted[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool in_list(const uint32_t *v, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

/* Whether the task's CSI volumes keep within node's limits (kube-scheduler's
 * NodeVolumeLimits): per limited driver, the volumes in use there as the
 * session started, plus those the session's placements there added, plus
 * the task's own, each distinct volume once. */
static bool csi_fits(const kb_session *ssn, const kb_task *task, const kb_task_volumes *v,
		     const kb_node *node)
{
	const kb_snapshot *s = ssn->snap;
	const kb_node_csi *nc = &s->node_csi[node - s->nodes];
	if (nc->nlimits == 0)
		return true;
	/* The new volumes the session's placements put there. */
	uint32_t seen[CSI_SEEN_MAX], nseen = 0;
	for (int32_t ui = node->task_head; ui >= 0; ui = s->tasks[ui].node_next) {
		const kb_task *u = &s->tasks[ui];
		const kb_task_volumes *uv = kb_task_vol(s, u);
		if (u == task || !uv || uv->ncsi == 0 || !kb_task_status_on_node(u->status))
			continue;
		for (uint32_t k = 0; k < uv->ncsi; k++) {
			uint32_t id = uv->csi[k];
			if (has_vol(nc->vols, nc->nvols, id) || in_list(seen, nseen, id))
				continue;
			if (nseen == CSI_SEEN_MAX)
				return false;
			seen[nseen++] = id;
		}
	}
	for (uint32_t L = 0; L < nc->nlimits; L++) {
		int64_t mine = 0, added = 0;
		for (uint32_t k = 0; k < v->ncsi; k++) {
			uint32_t id = v->csi[k];
			mine += s->csi_vol_driver[id] == nc->driver[L] &&
				!has_vol(nc->vols, nc->nvols, id) && !in_list(seen, nseen, id);
		}
		if (mine == 0)
			continue;
		for (uint32_t k = 0; k < nseen; k++)
			added += s->csi_vol_driver[seen[k]] == nc->driver[L];
		if (nc->attached[L] + added + mine > nc->limit[L])
			return false;
	}
	return true;
}

int kb_volumes_fit(const kb_session *ssn, const kb_task *task, const kb_node *node,
		   const char **ret_reason)
{
	const kb_task_volumes *v = kb_task_vol(ssn->snap, task);
	if (!v)
		return KB_FIT_OK;
	if (v->wait) {
		*ret_reason = v->wait;
		return KB_FIT_FAIL;
	}
	if (v->pinned_node && strcmp(v->pinned_node, node->name) != 0) {
		*ret_reason = NO_VOLUMES;
		return KB_FIT_FAIL;
	}
	for (uint32_t i = 0; i < v->naffinities; i++)
		if (!terms_match(v->affinities[i].terms, v->affinities[i].nterms, node)) {
			*ret_reason = NODE_CONFLICT;
			return KB_FIT_FAIL;
		}
	if (v->nholders > 0 && !holders_gone(ssn->snap, v, node)) {
		*ret_reason = RWOP_CONFLICT;
		return KB_FIT_FAIL;
	}
	if (v->nrwop > 0 && rwop_taken(ssn, (uint32_t)(task - ssn->snap->tasks), v)) {
		*ret_reason = RWOP_CONFLICT;
		return KB_FIT_FAIL;
	}
	if (v->ncsi > 0 && ssn->snap->node_csi && !csi_fits(ssn, task, v, node)) {
		*ret_reason = TOO_MANY_VOLUMES;
		return KB_FIT_FAIL;
	}
	int32_t picks[KB_MAX_POD_CLAIMS];
	const char *why = v->nto_bind > 0 ? match_claims(ssn, (uint32_t)(task - ssn->snap->tasks), v,
							  node, picks)
					  : NULL;
	if (why) {
		*ret_reason = why;
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

static int vol_open(kb_session *ssn)
{
	const kb_snapshot *s = ssn->snap;
	struct kb_vol *st = kb_session_calloc(ssn, 1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->taker = kb_session_calloc(ssn, s->npvs + 1, sizeof(int32_t));
	st->picks = kb_session_calloc(ssn, s->ntasks + 1, sizeof(int32_t *));
	st->rwop_taker = kb_session_calloc(ssn, s->nrwop_claims + 1, sizeof(int32_t));
	if (!st->taker || !st->picks || !st->rwop_taker)
		return -ENOMEM;
	for (uint32_t p = 0; p < s->npvs; p++)
		st->taker[p] = -1;
	for (uint32_t p = 0; p < s->nrwop_claims; p++)
		st->rwop_taker[p] = -1;
	ssn->vol = st;
	return 0;
}

int kb_volumes_update(kb_session *ssn, const kb_task *task, int delta)
{
	const kb_task_volumes *v = kb_task_vol(ssn->snap, task);
	if (!v || (v->nto_bind == 0 && v->nrwop == 0))
		return 0;
	if (!ssn->vol && vol_open(ssn) < 0)
		return -ENOMEM;
	struct kb_vol *st = ssn->vol;
	uint32_t ti = (uint32_t)(task - ssn->snap->tasks);
	for (uint32_t i = 0; i < v->nrwop; i++)
		if (delta < 0 && st->rwop_taker[v->rwop[i]] == (int32_t)ti)
			st->rwop_taker[v->rwop[i]] = -1;
		else if (delta > 0 && task->node >= 0)
			st->rwop_taker[v->rwop[i]] = (int32_t)ti;
	if (v->nto_bind == 0)
		return 0;
	int32_t *picks = st->picks[ti];
	if (delta < 0) {
		for (uint32_t i = 0; picks && i < v->nto_bind; i++)
			if (picks[i] >= 0)
				st->taker[picks[i]] = -1;
		st->picks[ti] = NULL;
		return 0;
	}
	if (!picks && !(picks = kb_session_calloc(ssn, v->nto_bind, sizeof(int32_t))))
		return -ENOMEM;
	if (task->node < 0 || match_claims(ssn, ti, v, &ssn->snap->nodes[task->node], picks))
		return 0; /* not placed here by a fit check: nothing taken */
	for (uint32_t i = 0; i < v->nto_bind; i++)
		if (picks[i] >= 0)
			st->taker[picks[i]] = (int32_t)ti;
	st->picks[ti] = picks;
	return 0;
}

bool kb_volumes_ready(const kb_session *ssn, const kb_task *task)
{
	const kb_task_volumes *v = kb_task_vol(ssn->snap, task);
	return !v || v->ready;
}

const int32_t *kb_volumes_picks(const kb_session *ssn, const kb_task *task)
{
	if (!ssn->vol)
		return NULL;
	return ssn->vol->picks[task - ssn->snap->tasks];
}

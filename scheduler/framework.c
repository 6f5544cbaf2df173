#include "scheduler/framework.h"

#include "api/labels.h"

#include "api/quantity.h"
#include "scheduler/topology.h"
#include "scheduler/volumes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

/* ---- session lifecycle ----------------------------------------------------------- */

/* Whether plugin configuration pc enables hook h for a plugin with ops. */
static bool hook_enabled(const kb_plugin_conf *pc, const kb_plugin_ops *ops, enum kb_hook h)
{
	switch (h) {
	case KB_HOOK_JOB_ORDER:
		return ops->job_order && pc->job_order;
	case KB_HOOK_QUEUE_ORDER:
		return ops->queue_order && pc->queue_order;
	case KB_HOOK_TASK_ORDER:
		return ops->task_order && pc->task_order;
	case KB_HOOK_JOB_VALID:
		return ops->job_valid && pc->job_valid;
	case KB_HOOK_JOB_READY:
		return ops->job_ready && pc->job_ready;
	case KB_HOOK_JOB_PIPELINED:
		return ops->job_pipelined && pc->job_pipelined;
	case KB_HOOK_JOB_ENQUEUEABLE:
		return ops->job_enqueueable && pc->job_enqueued;
	case KB_HOOK_PREDICATE:
		return ops->predicate && pc->predicate;
	case KB_HOOK_NODE_ORDER:
		return ops->node_order && pc->node_order;
	case KB_HOOK_PREEMPTABLE:
		return ops->preemptable && pc->preemptable;
	case KB_HOOK_RECLAIMABLE:
		return ops->reclaimable && pc->reclaimable;
	case KB_HOOK_OVERUSED:
		return ops->overused && pc->overused;
	case KB_HOOK_JOB_STARVING:
		return ops->job_starving && pc->job_starving;
	case KB_HOOK_ALLOCATABLE:
		return ops->allocatable && pc->allocatable;
	case KB_HOOK_PREEMPTIVE:
		return ops->preemptive && pc->preemptive;
	case KB_HOOK_EVENTS:
		return ops->on_allocate || ops->on_deallocate;
	case KB_HOOK_COUNT:
		break;
	}
	return false;
}

int kb_session_open(kb_session *ssn, kb_snapshot *snap, const kb_conf *conf,
		    const kb_effects *effects, void *effects_ctx, int64_t now_ms, kb_err *err)
{
	memset(ssn, 0, sizeof(*ssn));
	kb_arena_init(&ssn->arena);
	ssn->arena.chunk_size = (size_t)256 * 1024;
	ssn->snap = snap;
	ssn->snap_rw = snap;
	ssn->conf = conf;
	ssn->effects = effects;
	ssn->effects_ctx = effects_ctx;
	ssn->now_ms = now_ms;
	ssn->until_ms = INT64_MAX;
	ssn->enqueue_configured = kb_conf_has_action(conf, "enqueue");

	uint32_t total = 0;
	for (uint32_t t = 0; t < conf->ntiers; t++)
		total += conf->tiers[t].n;
	ssn->plugins = kb_arena_calloc(&ssn->arena, total ? total : 1, sizeof(kb_hook_entry));
	bool oom = !ssn->plugins;
	for (int h = 0; h < KB_HOOK_COUNT; h++) {
		ssn->hooks[h].v = kb_arena_calloc(&ssn->arena, total ? total : 1, sizeof(kb_hook_entry));
		oom |= !ssn->hooks[h].v;
	}
	ssn->out = kb_arena_calloc(&ssn->arena, snap->njobs ? snap->njobs : 1, sizeof(*ssn->out));
	ssn->deserved = kb_arena_calloc(&ssn->arena, snap->nqueues ? snap->nqueues : 1,
					sizeof(*ssn->deserved));
	for (int i = 0; i < KB_RES_MAX && !oom; i++) {
		ssn->insufficient[i] = "Insufficient resources";
		if (i < snap->resnames.n && snap->resnames.name[i][0])
			oom |= !(ssn->insufficient[i] = kb_arena_printf(
					 &ssn->arena, "Insufficient %s", snap->resnames.name[i]));
	}
	uint32_t nknown = (uint32_t)snap->resnames.nknown;
	ssn->insufficient_known =
		kb_arena_calloc(&ssn->arena, nknown ? nknown : 1, sizeof(*ssn->insufficient_known));
	oom |= !ssn->insufficient_known;
	for (uint32_t k = 0; k < nknown && !oom; k++)
		oom |= !(ssn->insufficient_known[k] = kb_arena_printf(
				 &ssn->arena, "Insufficient %s", snap->resnames.known[k]));
	if (oom || !ssn->out || !ssn->deserved) {
		kb_arena_release(&ssn->arena);
		return kb_err_set(err, -ENOMEM, "opening the session: out of memory");
	}
	/* Plugins open in tier order (never map order); each hook list keeps it. */
	for (uint32_t t = 0; t < conf->ntiers; t++) {
		for (uint32_t p = 0; p < conf->tiers[t].n; p++) {
			const kb_plugin_conf *pc = &conf->tiers[t].plugins[p];
			const kb_plugin_ops *ops = pc->ops;
			void *state = NULL;
			if (ops->open) {
				int r = ops->open(ssn, pc, &state, err);
				if (r < 0) {
					kb_err_prefix(err, "plugin %s", ops->name);
					ssn->conf = conf;
					/* Close what was opened, then give up. */
					for (uint32_t k = ssn->nplugins; k-- > 0;)
						if (ssn->plugins[k].ops->close)
							ssn->plugins[k].ops->close(ssn, ssn->plugins[k].state);
					kb_arena_release(&ssn->arena);
					return r;
				}
			}
			kb_hook_entry e = {.ops = ops, .state = state, .tier = t};
			ssn->plugins[ssn->nplugins++] = e;
			for (int h = 0; h < KB_HOOK_COUNT; h++)
				if (hook_enabled(pc, ops, (enum kb_hook)h))
					ssn->hooks[h].v[ssn->hooks[h].n++] = e;
		}
	}
	return 0;
}

void kb_session_use_memo(kb_session *ssn, kb_session_memo *memo)
{
	ssn->memo = memo;
}

/* True when the memo stands for this session's memoizable actions. */
static bool memo_matches(const kb_session *ssn)
{
	const kb_session_memo *m = ssn->memo;
	return m && m->valid && ssn->snap->generation != 0 &&
	       m->generation == ssn->snap->generation && m->conf == ssn->conf &&
	       ssn->now_ms < m->until_ms;
}

int kb_session_run_actions(kb_session *ssn, kb_err *err)
{
	uint32_t na = ssn->conf->nactions;
	ssn->action_ns = na ? kb_arena_calloc(&ssn->arena, na, sizeof(*ssn->action_ns)) : NULL;
	ssn->action_evictions =
		na ? kb_arena_calloc(&ssn->arena, na, sizeof(*ssn->action_evictions)) : NULL;
	if (!ssn->action_ns || !ssn->action_evictions)
		ssn->action_ns = NULL, ssn->action_evictions = NULL;
	bool replay = memo_matches(ssn), skipped = false, ran = false;
	uint64_t before = 0; /* commits before the first memoizable action */
	uint64_t by_memoizable = 0;
	for (uint32_t i = 0; i < ssn->conf->nactions; i++) {
		const kb_action_ops *a = ssn->conf->actions[i];
		if (a->memoizable && !skipped && !ran)
			before = ssn->commits;
		/* The actions before it are deterministic over the same state:
		 * having committed what they did last time, they left the state
		 * the memo saw. */
		if (a->memoizable && replay && ssn->commits == ssn->memo->commits_before) {
			skipped = true;
			continue;
		}
		uint64_t c0 = ssn->commits;
		uint32_t e0 = ssn->evictions;
		int64_t t0 = kb_mono_ns();
		int r = a->execute(ssn, err);
		if (ssn->action_ns) {
			ssn->action_ns[i] = kb_mono_ns() - t0;
			ssn->action_evictions[i] = ssn->evictions - e0;
		}
		if (r < 0) {
			if (ssn->memo)
				ssn->memo->valid = false;
			return kb_err_prefix(err, "action %s", a->name);
		}
		if (a->memoizable) {
			ran = true;
			by_memoizable += ssn->commits - c0;
		}
	}
	ssn->memo_replayed = skipped;
	kb_session_memo *m = ssn->memo;
	if (!m)
		return 0;
	if (skipped && !ran) {
		m->replays++;
		return 0;
	}
	/* Some skipped, some ran (an action list that puts others between
	 * them): the skipped ones' time limits still hold. */
	int64_t until = ssn->until_ms;
	if (skipped && m->until_ms < until)
		until = m->until_ms;
	*m = (kb_session_memo){
		.valid = ran && by_memoizable == 0 && ssn->snap->generation != 0,
		.generation = ssn->snap->generation,
		.conf = ssn->conf,
		.until_ms = until,
		.commits_before = before,
		.replays = m->replays,
	};
	return 0;
}

static void note_effect(kb_session *ssn, int r, const char *what, const char *key)
{
	if (r >= 0)
		return;
	if (ssn->effect_errors++ == 0)
		kb_err_set(&ssn->first_effect_err, r, "%s \"%s\" failed (errno %d)", what, key, -r);
}

/* A job's pending reason as reported: the cache's verdict first. */
static const char *reason_of(const kb_session *ssn, uint32_t j)
{
	const kb_job *job = &ssn->snap->jobs[j];
	return job->invalid ? job->invalid : ssn->out[j].pending_reason;
}

/* Reports every job's status and every queue's share. O(jobs + queues). */
static void report_statuses(kb_session *ssn)
{
	const kb_snapshot *s = ssn->snap;
	const kb_effects *fx = ssn->effects;
	if (fx->job_status)
		for (uint32_t i = 0; i < s->njobs; i++) {
			kb_job_status st;
			kb_job_status_of(&s->jobs[i], ssn->out[i].pending_reason, ssn->enqueue_configured,
					 &st);
			note_effect(ssn, fx->job_status(ssn->effects_ctx, s, &s->jobs[i], &st),
				    "job status", s->jobs[i].key);
		}
	if (fx->queue_status)
		for (uint32_t q = 0; q < s->nqueues; q++)
			note_effect(ssn,
				    fx->queue_status(ssn->effects_ctx, s, &s->queues[q], &ssn->deserved[q]),
				    "queue status", s->queues[q].name);
}

/* Reports why each task still pending waits: job by job (the order of the
 * tasks), skipping jobs with nothing pending. O(jobs + their tasks). */
static void report_pending(kb_session *ssn)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t ji = 0; ji < s->njobs; ji++) {
		const kb_job *j = &s->jobs[ji];
		if (j->nstatus[KB_TASK_PENDING] == 0)
			continue;
		const char *why = reason_of(ssn, ji);
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
			if (t->foreign || t->status != KB_TASK_PENDING)
				continue;
			note_effect(ssn,
				    ssn->effects->task_pending(ssn->effects_ctx, s, t,
							       why ? why : "not scheduled yet"),
				    "pending report", t->key);
		}
	}
}

int kb_session_close(kb_session *ssn)
{
	/* Plugins close first: they may finish the jobs' reasons (gang). */
	for (uint32_t k = ssn->nplugins; k-- > 0;)
		if (ssn->plugins[k].ops->close)
			ssn->plugins[k].ops->close(ssn, ssn->plugins[k].state);
	if (ssn->effects) {
		report_statuses(ssn);
		if (ssn->effects->task_pending)
			report_pending(ssn);
	}
	int r = ssn->effect_errors ? ssn->first_effect_err.code : 0;
	kb_arena_release(&ssn->arena);
	return r;
}

const char *kb_session_printf(const kb_session *ssn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *s = kb_arena_vprintf(&((kb_session *)ssn)->arena, fmt, ap);
	va_end(ap);
	return s;
}

void *kb_session_calloc(const kb_session *ssn, size_t n, size_t size)
{
	return kb_arena_calloc(&((kb_session *)ssn)->arena, n, size);
}

void kb_session_set_task_devices(kb_session *ssn, uint32_t t, uint32_t gpu_mask)
{
	kb_snapshot_touch_task(ssn->snap_rw, t);
	ssn->snap_rw->tasks[t].gpu_mask = gpu_mask;
}

/* ---- dispatch -------------------------------------------------------------------- */

/* e names the loop variable it declares, so it cannot be parenthesized. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define FOR_HOOK(ssn, h, e)                                                                        \
	for (const kb_hook_entry *e = (ssn)->hooks[(h)].v, *e##_end_ = e + (ssn)->hooks[(h)].n;    \
	     e < e##_end_; e++)
/* NOLINTEND(bugprone-macro-parentheses) */

/* The last tie-break, between objects created in the same second (the
 * API's creationTimestamp has no finer grain): namespace/name, then UID.
 * volcano breaks it by UID alone, which the API draws at random: two
 * equal gangs of one `kubectl apply` would then be ordered differently in
 * the cluster and in the simulator, which has no UIDs. */
static bool tie_less(const char *lkey, const char *luid, const char *rkey, const char *ruid)
{
	int c = strcmp(lkey, rkey);
	return c ? c < 0 : strcmp(luid, ruid) < 0;
}

bool kb_job_less(const kb_session *ssn, const kb_job *l, const kb_job *r)
{
	FOR_HOOK(ssn, KB_HOOK_JOB_ORDER, e)
	{
		int c = e->ops->job_order(e->state, ssn, l, r);
		if (c)
			return c < 0;
	}
	if (l->creation_ms != r->creation_ms)
		return l->creation_ms < r->creation_ms;
	return tie_less(l->key, l->uid, r->key, r->uid);
}

bool kb_queue_less(const kb_session *ssn, const kb_queue *l, const kb_queue *r)
{
	FOR_HOOK(ssn, KB_HOOK_QUEUE_ORDER, e)
	{
		int c = e->ops->queue_order(e->state, ssn, l, r);
		if (c)
			return c < 0;
	}
	if (l->creation_ms != r->creation_ms)
		return l->creation_ms < r->creation_ms;
	/* Older than any Queue object (api/types.h): what the cluster's
	 * timestamps say, also when a simulation's objects have none. */
	if (l->configured != r->configured)
		return l->configured;
	return strcmp(l->name, r->name) < 0;
}

bool kb_task_less(const kb_session *ssn, const kb_task *l, const kb_task *r)
{
	FOR_HOOK(ssn, KB_HOOK_TASK_ORDER, e)
	{
		int c = e->ops->task_order(e->state, ssn, l, r);
		if (c)
			return c < 0;
	}
	if (l->creation_ms != r->creation_ms)
		return l->creation_ms < r->creation_ms;
	return tie_less(l->key, l->uid, r->key, r->uid);
}

const char *kb_job_valid(const kb_session *ssn, const kb_job *job)
{
	if (job->invalid)
		return job->invalid;
	FOR_HOOK(ssn, KB_HOOK_JOB_VALID, e)
	{
		const char *why = NULL;
		if (e->ops->job_valid(e->state, ssn, job, &why) == KB_REJECT)
			return why ? why : e->ops->name;
	}
	return NULL;
}

bool kb_job_ready(const kb_session *ssn, const kb_job *job)
{
	FOR_HOOK(ssn, KB_HOOK_JOB_READY, e)
	if (e->ops->job_ready(e->state, ssn, job) == KB_REJECT)
		return false;
	return true;
}

bool kb_job_pipelined(const kb_session *ssn, const kb_job *job)
{
	FOR_HOOK(ssn, KB_HOOK_JOB_PIPELINED, e)
	if (e->ops->job_pipelined(e->state, ssn, job) == KB_REJECT)
		return false;
	return true;
}

bool kb_job_enqueueable(const kb_session *ssn, const kb_job *job)
{
	const kb_hook_list *hl = &ssn->hooks[KB_HOOK_JOB_ENQUEUEABLE];
	uint32_t i = 0;
	while (i < hl->n) {
		uint32_t tier = hl->v[i].tier;
		bool permit = false;
		for (; i < hl->n && hl->v[i].tier == tier; i++) {
			kb_vote v = hl->v[i].ops->job_enqueueable(hl->v[i].state, ssn, job);
			if (v == KB_REJECT)
				return false;
			permit |= v == KB_PERMIT;
		}
		if (permit)
			return true;
	}
	return true;
}

bool kb_queue_overused(const kb_session *ssn, const kb_queue *queue)
{
	FOR_HOOK(ssn, KB_HOOK_OVERUSED, e)
	if (e->ops->overused(e->state, ssn, queue) == KB_PERMIT)
		return true;
	return false;
}

bool kb_job_starving(const kb_session *ssn, const kb_job *job)
{
	const kb_hook_list *hl = &ssn->hooks[KB_HOOK_JOB_STARVING];
	if (hl->n == 0)
		return false;
	uint32_t tier = hl->v[0].tier; /* the first tier with a callback decides */
	for (uint32_t i = 0; i < hl->n && hl->v[i].tier == tier; i++)
		if (hl->v[i].ops->job_starving(hl->v[i].state, ssn, job) == KB_REJECT)
			return false;
	return true;
}

bool kb_queue_preemptive(const kb_session *ssn, const kb_queue *queue, const kb_task *task)
{
	FOR_HOOK(ssn, KB_HOOK_PREEMPTIVE, e)
	if (e->ops->preemptive(e->state, ssn, queue, task) == KB_REJECT)
		return false;
	return true;
}

int kb_queue_fits(const kb_session *ssn, const kb_task *task, const char **ret_reason)
{
	const kb_snapshot *s = ssn->snap;
	if (task->job < 0 || s->jobs[task->job].queue < 0)
		return KB_FIT_OK;
	const kb_queue *q = &s->queues[s->jobs[task->job].queue];
	for (int r = 0; ssn->conf->queue_capability && q->capability_mask && r < KB_RES_MAX; r++) {
		if (!(q->capability_mask & (1u << r)) || task->req.q[r] <= 0 ||
		    (__int128)q->allocated.q[r] + q->pipelined.q[r] + task->req.q[r] <= q->capability.q[r])
			continue;
		if (ret_reason) {
			char cap[KB_QUANTITY_BUFSZ];
			*ret_reason = kb_session_printf(
				ssn, "queue \"%s\" would exceed its capability of %s %s", q->name,
				kb_res_format_one(q->capability.q[r], &s->resnames, r, cap),
				s->resnames.name[r]);
		}
		return KB_FIT_FAIL;
	}
	FOR_HOOK(ssn, KB_HOOK_ALLOCATABLE, e)
	{
		const char *why = NULL;
		if (e->ops->allocatable(e->state, ssn, q, task, &why) == KB_REJECT) {
			if (ret_reason)
				*ret_reason = why ? why : e->ops->name;
			return KB_FIT_FAIL;
		}
	}
	return KB_FIT_OK;
}

int kb_node_fits(const kb_session *ssn, const kb_task *task, const kb_node *node,
		 const char **ret_reason)
{
	if (!node->ready) {
		*ret_reason = node->undecodable ? "node(s) had an update kube-batchd could not decode"
			      : node->unreadable_pod
				      ? "node(s) ran a pod kube-batchd could not decode (what it "
					"uses there is unknown)"
				      : "node(s) were not ready";
		return KB_FIT_FAIL;
	}
	if (node->unschedulable) {
		/* kube-scheduler's NodeUnschedulable: cordoned, unless tolerated. */
		static const kb_taint cordon = {
			.key = "node.kubernetes.io/unschedulable",
			.value = "",
			.effect = KB_EFFECT_NO_SCHEDULE,
		};
		if (!kb_tolerates_taint(task->spec, &cordon)) {
			*ret_reason = "node(s) were unschedulable";
			return KB_FIT_FAIL;
		}
	}
	/* Future idle: what the node will have once releasing tasks are gone
	 * and pipelined ones have moved in. */
	const int64_t *idle = node->idle.q, *rel = node->releasing.q, *pip = node->pipelined.q;
	int64_t pods = task->req.q[KB_RES_PODS] > 0 ? task->req.q[KB_RES_PODS] : KB_ONE_POD;
	if (pods > idle[KB_RES_PODS] + rel[KB_RES_PODS] - pip[KB_RES_PODS]) {
		*ret_reason = "Too many pods";
		return KB_FIT_FAIL;
	}
	if (task->best_effort)
		return KB_FIT_OK;
	for (int i = 0; i < KB_RES_MAX; i++) {
		int64_t want = task->req.q[i];
		if (i == KB_RES_PODS || want <= 0 || want <= idle[i] + rel[i] - pip[i])
			continue;
		*ret_reason = ssn->insufficient[i];
		return KB_FIT_FAIL;
	}
	int k = kb_node_spill_short(ssn->snap, task, node, true);
	if (k >= 0) {
		int32_t known = task->spec->spill[k].known;
		*ret_reason = known < ssn->snap->resnames.nknown ? ssn->insufficient_known[known]
								  : "Insufficient resources";
		return KB_FIT_FAIL;
	}
	return KB_FIT_OK;
}

int kb_predicate(const kb_session *ssn, const kb_task *task, const kb_node *node,
		 const char **ret_reason)
{
	const char *why = NULL;
	if (kb_node_fits(ssn, task, node, &why) != KB_FIT_OK ||
	    (ssn->topo && !kb_topo_allows(ssn, task, (uint32_t)(node - ssn->snap->nodes), &why)) ||
	    kb_volumes_fit(ssn, task, node, &why) != KB_FIT_OK) {
		if (ret_reason)
			*ret_reason = why;
		return KB_FIT_FAIL;
	}
	FOR_HOOK(ssn, KB_HOOK_PREDICATE, e)
	{
		why = NULL;
		if (e->ops->predicate(e->state, ssn, task, node, &why) != KB_FIT_OK) {
			if (ret_reason)
				*ret_reason = why ? why : e->ops->name;
			return KB_FIT_FAIL;
		}
	}
	return KB_FIT_OK;
}

double kb_node_score(const kb_session *ssn, const kb_task *task, const kb_node *node)
{
	double score = 0;
	FOR_HOOK(ssn, KB_HOOK_NODE_ORDER, e)
	score += e->ops->node_order(e->state, ssn, task, node);
	return score;
}

typedef kb_vote (*victim_fn)(void *st, const kb_session *ssn, const kb_task *t,
			     const uint32_t *cands, uint32_t n, bool *allow);

/* Two flag arrays of at least n entries from the session arena, kept for
 * the next call (victim selection runs many times per session). The arena
 * is the session's own output memory; the framework, not a plugin, casts
 * the const session here. NULL on -ENOMEM. */
static bool *victim_flags(const kb_session *cssn, uint32_t n)
{
	kb_session *ssn = (kb_session *)cssn;
	if (n > ssn->victim_flags_cap) {
		uint32_t cap = n > 2 * ssn->victim_flags_cap ? n : 2 * ssn->victim_flags_cap;
		bool *v = kb_arena_alloc(&ssn->arena, 2 * (size_t)cap * sizeof(bool));
		if (!v)
			return NULL;
		ssn->victim_flags = v;
		ssn->victim_flags_cap = cap;
	}
	return ssn->victim_flags;
}

static int select_victims(const kb_session *ssn, enum kb_hook h, const kb_task *t,
			  const uint32_t *cands, uint32_t n, uint32_t *ret_victims)
{
	const kb_hook_list *hl = &ssn->hooks[h];
	if (n == 0)
		return 0;
	bool *acc = victim_flags(ssn, n);
	if (!acc)
		return -ENOMEM;
	bool *mine = acc + ssn->victim_flags_cap;
	uint32_t i = 0;
	while (i < hl->n) {
		uint32_t tier = hl->v[i].tier;
		bool decided = false;
		memset(acc, 1, n * sizeof(bool));
		for (; i < hl->n && hl->v[i].tier == tier; i++) {
			victim_fn fn = h == KB_HOOK_PREEMPTABLE ? hl->v[i].ops->preemptable
								: hl->v[i].ops->reclaimable;
			memset(mine, 1, n * sizeof(bool));
			if (fn(hl->v[i].state, ssn, t, cands, n, mine) == KB_ABSTAIN)
				continue;
			decided = true;
			for (uint32_t k = 0; k < n; k++)
				acc[k] &= mine[k];
		}
		if (decided) {
			int nv = 0;
			for (uint32_t k = 0; k < n; k++)
				if (acc[k])
					ret_victims[nv++] = cands[k];
			return nv;
		}
	}
	return 0;
}

bool kb_preempt_possible(const kb_session *ssn, const kb_task *t)
{
	const kb_hook_list *hl = &ssn->hooks[KB_HOOK_PREEMPTABLE];
	if (hl->n == 0)
		return false; /* no tier decides: select_victims chooses none */
	uint32_t tier = hl->v[0].tier;
	for (uint32_t i = 0; i < hl->n && hl->v[i].tier == tier; i++) {
		const kb_plugin_ops *ops = hl->v[i].ops;
		if (ops->preempt_possible && !ops->preempt_possible(hl->v[i].state, ssn, t))
			return false;
	}
	return true;
}

int kb_preemptable(const kb_session *ssn, const kb_task *preemptor, const uint32_t *cands,
		   uint32_t n, uint32_t *ret_victims)
{
	return select_victims(ssn, KB_HOOK_PREEMPTABLE, preemptor, cands, n, ret_victims);
}

int kb_reclaimable(const kb_session *ssn, const kb_task *reclaimer, const uint32_t *cands,
		   uint32_t n, uint32_t *ret_victims)
{
	return select_victims(ssn, KB_HOOK_RECLAIMABLE, reclaimer, cands, n, ret_victims);
}

/* ---- plugin arguments ------------------------------------------------------------ */

const char *kb_plugin_arg_str(const kb_plugin_conf *pc, const char *key, const char *def)
{
	for (uint32_t i = 0; pc && i < pc->nargs; i++)
		if (strcmp(pc->args[i].key, key) == 0)
			return pc->args[i].value;
	return def;
}

double kb_plugin_arg_double(const kb_plugin_conf *pc, const char *key, double def)
{
	const char *v = kb_plugin_arg_str(pc, key, NULL);
	if (!v || !*v)
		return def;
	char *end;
	double d = strtod(v, &end);
	return *end ? def : d;
}

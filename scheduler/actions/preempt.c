/* preempt and reclaim - make room for starving jobs, without breaking gangs.
 *
 * preempt: within a queue, a pending job evicts running tasks of other jobs
 *          of the same queue that the plugins allow (priority: lower
 *          priority only; gang: never below minMember; conformance: never
 *          critical pods; drf).
 * reclaim: across queues, a queue that is not overused takes resources back
 *          for a task only while it then stays within its deserved share
 *          (kb_queue_preemptive), from reclaimable queues, with the
 *          plugins' reclaimable filters (proportion: while the victim's queue
 *          is above its deserved share, volcano's rule).
 *
 * For each starving job (valid, admitted, not ready, with pending tasks), in
 * queue order then job order, inside one statement:
 *   1. task by task (task order): a node where the task fits as it is, or
 *      else the node needing the fewest victims (then the lowest-priority
 *      victims, then node order). Victims on a node are taken in victim order
 *      - lowest priority, least work lost (most recently started), name -
 *      only as many as the task needs, and only if the plugins allow exactly
 *      that set (so a gang loses its spare members or nothing). The victims
 *      are evicted and the task pipelined onto the room they leave.
 *   2. if that cannot make the job pipelined, whole victim jobs: the first
 *      k victim jobs in victim order (k = 1, 2, ... up to 16), evicted whole,
 *      then the job's tasks placed on what is left.
 * The statement is committed only if the job then reaches minMember
 * (pipelined); otherwise it is discarded and nothing is evicted.
 *
 * No thrash, with two arguments of either action in `configurations:`:
 *  - `cooldown` (default 60s): a job that lost a task to eviction less than
 *    this ago does not preempt or reclaim; for reclaim, neither does any job
 *    of a queue that lost a task less than this ago (so two queues do not
 *    take resources back and forth as their requests change);
 *  - `victim-cooldown` (default 300s): a task evicted less than this ago is
 *    not chosen as a victim again (so the most recently restarted task, which
 *    "least work lost" would otherwise pick first, is not evicted again and
 *    again).
 *
 * Cost: per starving job, O(tasks x nodes x tasks-per-node) for step 1 and
 * O(16^2 x tasks x nodes) at most for step 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "queue/deserved.h"
#include "scheduler/actions/actions.h"
#include "scheduler/actions/placement.h"
#include "scheduler/statement.h"

#define KB_MAX_VICTIM_JOBS 16
#define KB_DEFAULT_COOLDOWN_MS 60000
#define KB_DEFAULT_VICTIM_COOLDOWN_MS 300000

typedef enum evict_mode { MODE_PREEMPT, MODE_RECLAIM } evict_mode;

typedef struct evict_ctx {
	kb_session *ssn;
	evict_mode mode;
	int64_t cooldown_ms;
	int64_t victim_cooldown_ms;
	int64_t *queue_evicted_ms; /* per queue: its latest eviction */
	uint32_t *cands;   /* scratch, ntasks */
	uint32_t *victims; /* scratch, ntasks */
	uint32_t *chosen;  /* scratch, ntasks */
	uint32_t *best;    /* scratch, ntasks */
} evict_ctx;

static const char *mode_name(evict_mode m)
{
	return m == MODE_PREEMPT ? "preempt" : "reclaim";
}

static int32_t job_priority(const kb_snapshot *s, const kb_task *t)
{
	return t->job >= 0 ? s->jobs[t->job].priority : t->priority;
}

/* Victim order: lowest priority, least work lost, name. */
static int victim_cmp(const kb_snapshot *s, uint32_t a, uint32_t b)
{
	const kb_task *x = &s->tasks[a], *y = &s->tasks[b];
	int32_t px = job_priority(s, x), py = job_priority(s, y);
	if (px != py)
		return px < py ? -1 : 1;
	if (x->started_ms != y->started_ms)
		return x->started_ms > y->started_ms ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void sort_victims(const kb_snapshot *s, uint32_t *v, uint32_t n)
{
	/* Insertion sort: victim lists are per node and short. */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t x = v[i], j = i;
		while (j > 0 && victim_cmp(s, x, v[j - 1]) < 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Whether task v may be a victim of preemptor t in this mode, before the
 * plugins are asked. */
static bool candidate(const evict_ctx *ec, const kb_task *t, const kb_task *v)
{
	const kb_snapshot *s = ec->ssn->snap;
	if (v->foreign || v->job < 0 || v->job == t->job)
		return false;
	if (v->status != KB_TASK_RUNNING && v->status != KB_TASK_BOUND)
		return false;
	if (v->evicted_ms > 0 && ec->ssn->now_ms - v->evicted_ms < ec->victim_cooldown_ms)
		return false; /* evicted only recently: not again */
	int32_t tq = s->jobs[t->job].queue, vq = s->jobs[v->job].queue;
	if (ec->mode == MODE_PREEMPT)
		return tq == vq;
	if (tq == vq || vq < 0)
		return false;
	const kb_queue *q = &s->queues[vq];
	return q->reclaimable;
}

/* The plugins' victims among c[0..n) into out: their count, or -ENOMEM. */
static int allowed(const evict_ctx *ec, const kb_task *t, const uint32_t *c, uint32_t n,
			uint32_t *out)
{
	return ec->mode == MODE_PREEMPT ? kb_preemptable(ec->ssn, t, c, n, out)
					: kb_reclaimable(ec->ssn, t, c, n, out);
}

/* The fewest victims on node ni that let t fit there (their count), 0 when
 * none do, or -ENOMEM. */
static int victims_on_node(evict_ctx *ec, const kb_task *t, uint32_t ni, uint32_t *ret_victims)
{
	kb_snapshot *s = ec->ssn->snap_rw;
	const kb_node *n = &s->nodes[ni];
	uint32_t nc = 0;
	for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next)
		if (candidate(ec, t, &s->tasks[ti]))
			ec->cands[nc++] = (uint32_t)ti;
	if (nc == 0)
		return 0;
	int na = allowed(ec, t, ec->cands, nc, ec->victims);
	if (na <= 0)
		return na;
	sort_victims(s, ec->victims, (uint32_t)na);
	/* Take victims in order until the task fits the room they leave. */
	kb_node room = *n;
	uint32_t k = 0;
	for (; k < (uint32_t)na; k++) {
		const char *why;
		if (kb_predicate(ec->ssn, t, &room, &why) == KB_FIT_OK)
			break;
		kb_res_add(&room.releasing, &s->tasks[ec->victims[k]].req);
		ret_victims[k] = ec->victims[k];
	}
	const char *why;
	if (k == 0 || kb_predicate(ec->ssn, t, &room, &why) != KB_FIT_OK)
		return 0;
	/* The plugins must accept exactly this set (a gang loses its spare
	 * members, or everything, never a part in between). */
	int again = allowed(ec, t, ret_victims, k, ec->chosen);
	if (again < 0)
		return again;
	return again == (int)k ? (int)k : 0;
}

static const char *eviction_reason(evict_ctx *ec, const kb_task *t)
{
	return kb_arena_printf(&ec->ssn->arena, "%s by %s", ec->mode == MODE_PREEMPT ? "preempted" : "reclaimed",
			       t->key);
}

/* Places t where it fits as it is (allocate or pipeline). 1 placed, 0 not, <0 error. */
static int place_plain(kb_statement *st, uint32_t ti)
{
	kb_session *ssn = st->ssn;
	kb_task *t = &ssn->snap->tasks[ti];
	int32_t ni = kb_best_node(ssn, t, NULL);
	if (ni < 0)
		return 0;
	int r = kb_fits_idle(t, &ssn->snap->nodes[ni]) ? kb_stmt_allocate(st, ti, (uint32_t)ni)
						       : kb_stmt_pipeline(st, ti, (uint32_t)ni);
	return r < 0 ? r : 1;
}

/* Step 1: task by task, fewest victims per task. 1 if the job got pipelined. */
static int by_tasks(evict_ctx *ec, kb_statement *st, kb_job *j)
{
	kb_snapshot *s = ec->ssn->snap_rw;
	for (uint32_t k = 0; k < j->ntasks && !kb_job_pipelined(ec->ssn, j); k++) {
		uint32_t ti = s->job_tasks[j->first_task + k];
		kb_task *t = &s->tasks[ti];
		if (t->status != KB_TASK_PENDING || t->best_effort)
			continue;
		if (ec->mode == MODE_RECLAIM &&
		    !kb_queue_preemptive(ec->ssn, &s->queues[j->queue], t))
			return 0; /* its queue would pass its deserved share */
		int r = place_plain(st, ti);
		if (r < 0)
			return r;
		if (r == 1)
			continue;
		int best_n = -1, best_k = 0;
		for (uint32_t ni = 0; ni < s->nnodes; ni++) {
			int nv = victims_on_node(ec, t, ni, ec->chosen);
			if (nv < 0)
				return nv;
			if (nv == 0)
				continue;
			if (best_n < 0 || nv < best_k ||
			    (nv == best_k && victim_cmp(s, ec->chosen[nv - 1], ec->best[best_k - 1]) < 0)) {
				best_n = (int)ni;
				best_k = nv;
				memcpy(ec->best, ec->chosen, (size_t)nv * sizeof(uint32_t));
			}
		}
		if (best_n < 0)
			return 0; /* this task cannot be placed even with victims */
		const char *why = eviction_reason(ec, t);
		for (int v = 0; v < best_k; v++)
			if ((r = kb_stmt_evict(st, ec->best[v], why)) < 0)
				return r;
		if ((r = kb_stmt_pipeline(st, ti, (uint32_t)best_n)) < 0)
			return r;
	}
	return kb_job_pipelined(ec->ssn, j);
}

typedef struct victim_job {
	uint32_t job;
	int32_t priority;
	int64_t latest_start;
} victim_job;

static int cmp_victim_job(const void *a, const void *b, void *ctx)
{
	const victim_job *x = a, *y = b;
	const kb_snapshot *s = ctx;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->latest_start != y->latest_start)
		return x->latest_start > y->latest_start ? -1 : 1;
	return strcmp(s->jobs[x->job].key, s->jobs[y->job].key);
}

/* Every task victim job vj holds, if each is a candidate; else 0. */
static uint32_t whole_job(evict_ctx *ec, const kb_task *t, uint32_t vj, uint32_t *out)
{
	const kb_snapshot *s = ec->ssn->snap;
	const kb_job *v = &s->jobs[vj];
	uint32_t n = 0;
	for (uint32_t k = 0; k < v->ntasks; k++) {
		uint32_t ti = s->job_tasks[v->first_task + k];
		const kb_task *vt = &s->tasks[ti];
		if (!kb_task_status_allocated(vt->status))
			continue;
		if (!candidate(ec, t, vt))
			return 0;
		out[n++] = ti;
	}
	return n;
}

/* Step 2: whole victim jobs. 1 if the job got pipelined (statement kept). */
static int by_jobs(evict_ctx *ec, kb_job *j, uint32_t first_pending, kb_statement *ret_st)
{
	kb_session *ssn = ec->ssn;
	kb_snapshot *s = ssn->snap_rw;
	const kb_task *t = &s->tasks[first_pending];
	victim_job vjs[KB_MAX_VICTIM_JOBS];
	uint32_t nvj = 0;
	/* Candidate jobs, each allowed whole by the plugins. */
	victim_job *all = calloc(s->njobs ? s->njobs : 1, sizeof(victim_job));
	if (!all)
		return -ENOMEM;
	uint32_t nall = 0;
	for (uint32_t vj = 0; vj < s->njobs; vj++) {
		if (vj == (uint32_t)t->job)
			continue;
		uint32_t n = whole_job(ec, t, vj, ec->cands);
		int na = n ? allowed(ec, t, ec->cands, n, ec->victims) : 0;
		if (na < 0) {
			free(all);
			return na;
		}
		if (n == 0 || (uint32_t)na != n)
			continue;
		int64_t latest = 0;
		for (uint32_t k = 0; k < n; k++)
			if (s->tasks[ec->cands[k]].started_ms > latest)
				latest = s->tasks[ec->cands[k]].started_ms;
		all[nall++] = (victim_job){vj, s->jobs[vj].priority, latest};
	}
	qsort_r(all, nall, sizeof(victim_job), cmp_victim_job, s);
	nvj = nall < KB_MAX_VICTIM_JOBS ? nall : KB_MAX_VICTIM_JOBS;
	memcpy(vjs, all, nvj * sizeof(victim_job));
	free(all);

	for (uint32_t k = 1; k <= nvj; k++) {
		kb_statement st;
		kb_stmt_init(&st, ssn);
		const char *why = eviction_reason(ec, t);
		int r = 0;
		for (uint32_t v = 0; v < k && r == 0; v++) {
			uint32_t n = whole_job(ec, t, vjs[v].job, ec->cands);
			for (uint32_t i = 0; i < n && r == 0; i++)
				r = kb_stmt_evict(&st, ec->cands[i], why);
		}
		for (uint32_t m = 0; m < j->ntasks && r == 0 && !kb_job_pipelined(ssn, j); m++) {
			uint32_t ti = s->job_tasks[j->first_task + m];
			if (s->tasks[ti].status == KB_TASK_PENDING && !s->tasks[ti].best_effort)
				r = place_plain(&st, ti) < 0 ? -ENOMEM : 0;
		}
		if (r < 0) {
			kb_stmt_discard(&st);
			return r;
		}
		if (kb_job_pipelined(ssn, j)) {
			*ret_st = st;
			return 1;
		}
		kb_stmt_discard(&st);
	}
	return 0;
}

static bool recently_evicted(const evict_ctx *ec, const kb_job *j)
{
	const kb_snapshot *s = ec->ssn->snap;
	if (ec->mode == MODE_RECLAIM && j->queue >= 0 && ec->queue_evicted_ms[j->queue] > 0 &&
	    ec->ssn->now_ms - ec->queue_evicted_ms[j->queue] < ec->cooldown_ms)
		return true;
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->evicted_ms > 0 && ec->ssn->now_ms - t->evicted_ms < ec->cooldown_ms)
			return true;
	}
	return false;
}

static int first_pending(const kb_snapshot *s, const kb_job *j, uint32_t *ret)
{
	for (uint32_t k = 0; k < j->ntasks; k++) {
		uint32_t ti = s->job_tasks[j->first_task + k];
		if (s->tasks[ti].status == KB_TASK_PENDING && !s->tasks[ti].best_effort) {
			*ret = ti;
			return 1;
		}
	}
	return 0;
}

static int run(kb_session *ssn, evict_mode mode, kb_err *err)
{
	kb_snapshot *s = ssn->snap_rw;
	evict_ctx ec = {.ssn = ssn,
			.mode = mode,
			.cooldown_ms = KB_DEFAULT_COOLDOWN_MS,
			.victim_cooldown_ms = KB_DEFAULT_VICTIM_COOLDOWN_MS};
	static const char *const knobs[] = {"cooldown", "victim-cooldown"};
	int64_t *dst[] = {&ec.cooldown_ms, &ec.victim_cooldown_ms};
	for (int k = 0; k < 2; k++) {
		const char *v = kb_conf_action_arg(ssn->conf, mode_name(mode), knobs[k], NULL);
		if (v && kb_duration_parse_ms(v, dst[k]) < 0)
			return kb_err_set(err, -EINVAL, "%s: configuration of %s: bad %s \"%s\"",
					  ssn->conf->source, mode_name(mode), knobs[k], v);
	}
	ec.queue_evicted_ms = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(int64_t));
	if (!ec.queue_evicted_ms)
		return kb_err_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *t = &s->tasks[i];
		int32_t q = t->job >= 0 ? s->jobs[t->job].queue : -1;
		if (q >= 0 && t->evicted_ms > ec.queue_evicted_ms[q])
			ec.queue_evicted_ms[q] = t->evicted_ms;
	}
	size_t nt = s->ntasks ? s->ntasks : 1;
	ec.cands = kb_arena_calloc(&ssn->arena, nt, sizeof(uint32_t));
	ec.victims = kb_arena_calloc(&ssn->arena, nt, sizeof(uint32_t));
	ec.chosen = kb_arena_calloc(&ssn->arena, nt, sizeof(uint32_t));
	ec.best = kb_arena_calloc(&ssn->arena, nt, sizeof(uint32_t));
	kb_job_ref *jobs = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(kb_job_ref));
	if (!ec.cands || !ec.victims || !ec.chosen || !ec.best || !jobs)
		return kb_err_set(err, -ENOMEM, "out of memory");

	uint32_t n = 0;
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->queue < 0 || kb_job_valid(ssn, j) || !kb_job_admitted(ssn, j) ||
		    !kb_job_has_pending(s, j, false) || kb_job_pipelined(ssn, j))
			continue;
		jobs[n++] = (kb_job_ref){ssn, i};
	}
	qsort(jobs, n, sizeof(kb_job_ref), kb_job_ref_cmp);

	for (uint32_t i = 0; i < n; i++) {
		kb_job *j = &s->jobs[jobs[i].job];
		if (kb_job_pipelined(ssn, j) || recently_evicted(&ec, j))
			continue;
		if (mode == MODE_RECLAIM && kb_queue_overused(ssn, &s->queues[j->queue]))
			continue;
		uint32_t fp;
		if (!first_pending(s, j, &fp))
			continue;
		if (mode == MODE_RECLAIM && !kb_queue_preemptive(ssn, &s->queues[j->queue], &s->tasks[fp]))
			continue; /* its queue would pass its deserved share */
		kb_statement st;
		kb_stmt_init(&st, ssn);
		int r = by_tasks(&ec, &st, j);
		if (r == 1) {
			kb_stmt_commit(&st);
			continue;
		}
		kb_stmt_discard(&st);
		if (r < 0)
			return kb_err_set(err, r, "out of memory");
		r = by_jobs(&ec, j, fp, &st);
		if (r < 0)
			return kb_err_set(err, r, "out of memory");
		if (r == 1)
			kb_stmt_commit(&st);
	}
	return 0;
}

static int preempt_execute(kb_session *ssn, kb_err *err)
{
	return run(ssn, MODE_PREEMPT, err);
}

static int reclaim_execute(kb_session *ssn, kb_err *err)
{
	return run(ssn, MODE_RECLAIM, err);
}

const kb_action_ops kb_action_preempt = {
	.name = "preempt",
	.execute = preempt_execute,
};

const kb_action_ops kb_action_reclaim = {
	.name = "reclaim",
	.execute = reclaim_execute,
};

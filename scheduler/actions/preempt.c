/* preempt and reclaim - make room for starving jobs, without breaking gangs.
 *
 * preempt: within a queue, a starving job evicts running tasks of other jobs
 *          of the same queue that the plugins allow (priority: lower
 *          priority only; gang: never below minMember; conformance: never
 *          critical pods). Victims of the same queue free room in the
 *          queue's usage as well as on the node, so a queue at its
 *          capability can make room for its own higher-priority work.
 * reclaim: across queues, a job of a queue that is not overused takes
 *          resources back for a task only while its queue then stays within
 *          its deserved share (kb_queue_preemptive; proportion: volcano's
 *          rule), from reclaimable queues, with the plugins' reclaimable
 *          filters (proportion: while the victim's queue is above its
 *          deserved share in some resource, less the victims taken).
 *
 * Who may evict: a job that is valid, admitted and starving (the plugins'
 * job_starving: gang, fewer than minMember placed; priority, fewer placed
 * than it has), in queue order then job order. Its pending tasks with
 * preemptionPolicy Never wait and evict nobody. A BestEffort task may evict
 * only BestEffort victims.
 * Who may go: a running or bound task of another job (the same queue for
 * preempt, another reclaimable queue for reclaim), not marked
 * volcano.sh/preemptable: "false", and not evicted less than
 * `victim-cooldown` ago unless the preemptor's priority is at least
 * `cooldown-priority-gap` above the victim's.
 *
 * For each such job, inside one statement:
 *   1. task by task: a node where the task fits as it is, or else the node
 *      needing the fewest victims (then the lowest-priority last victim, then
 *      node order). On a node the candidates are put in victim order (lower
 *      job priority first, then least work lost; within one job its reverse
 *      task order: lowest pod priority first, newest first), the plugins
 *      filter that ordered list (so gang's "members above minMember" and
 *      proportion's surplus apply in that order), and victims are evicted
 *      tentatively one at a time until the task fits the node and its queue;
 *      the node's evictions are undone if it never does. The task is then
 *      pipelined onto the room they leave.
 *   2. if that cannot make the job pipelined, whole victim jobs: the first
 *      k victim jobs in victim order (k = 1 .. 16) that let it, pruned to a
 *      subset (a victim job whose eviction is not needed is kept).
 * The statement is committed only if the job then reaches minMember
 * (pipelined); otherwise it is discarded and nothing is evicted.
 *
 * A gang that needs one network domain (scheduler/topology.h: a required
 * level) does this inside one domain at a time: the domains whose free
 * plus evictable resources could hold it, the freest first (at most four),
 * each as the job's scope, so that victims are taken only on that
 * domain's nodes (whole victim jobs only among those with a task there)
 * and the gang then fits there; the first domain that works is committed.
 * A gang that only prefers a domain preempts as any other.
 *
 * No thrash, with arguments of either action in `configurations:`:
 *  - `cooldown` (default 60s): a job that lost a task to eviction less than
 *    this ago does not preempt or reclaim; for reclaim, neither does any job
 *    of a queue that lost a task less than this ago;
 *  - `victim-cooldown` (default 300s): a task evicted less than this ago is
 *    not chosen as a victim again;
 *  - `cooldown-priority-gap` (default 1000, >= 0): a preemptor whose
 *    priority is at least this much above a victim's preempts it through its
 *    victim cool-down (a critical job is not held back by a recent restart).
 *
 * Cost: per starving job, O(tasks x nodes x tasks-per-node) for step 1 and
 * O(16^2 x tasks x nodes) at most for step 2. A task that found no victims
 * anywhere is remembered: a later task of the same queue, priority and shape
 * that asks at least as much skips the search (candidates only shrink
 * within one action).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/pod_spec.h"
#include "api/quantity.h"
#include "scheduler/actions/actions.h"
#include "scheduler/actions/placement.h"
#include "scheduler/statement.h"
#include "scheduler/topology.h"
#include "scheduler/volumes.h"

#define KB_MAX_VICTIM_JOBS 16
#define KB_MAX_HOPELESS 64
#define KB_DEFAULT_COOLDOWN_MS 60000
#define KB_DEFAULT_VICTIM_COOLDOWN_MS 300000
#define KB_DEFAULT_COOLDOWN_PRIORITY_GAP 1000

typedef enum evict_mode { MODE_PREEMPT, MODE_RECLAIM } evict_mode;

typedef struct victim_job {
	uint32_t job;
	int32_t priority;
	int64_t latest_start;
} victim_job;

typedef struct evict_ctx {
	kb_session *ssn;
	evict_mode mode;
	int64_t cooldown_ms;
	int64_t victim_cooldown_ms;
	int64_t priority_gap;
	int64_t *queue_evicted_ms; /* per queue: its latest eviction */
	uint32_t *cands;   /* scratch, ntasks */
	uint32_t *victims; /* scratch, ntasks */
	uint32_t *chosen;  /* scratch, ntasks */
	uint32_t *best;    /* scratch, ntasks */
	victim_job *vjobs; /* scratch, njobs */
	const kb_task *why_task; /* the preemptor why was built for */
	const char *why;
	/* Tasks that found no node as they are, and the eviction count then:
	 * a later task that places alike, asks no less and comes before any
	 * new eviction finds none either. */
	uint32_t plain_failed[KB_MAX_HOPELESS];
	uint32_t nplain_failed;
	uint64_t room_grew; /* bumped by every eviction and undo: what may add room */
	uint64_t plain_failed_at; /* room_grew when the list was last written */
	/* Tasks that found no victims on any node (see the cost above). */
	uint32_t hopeless[KB_MAX_HOPELESS];
	uint32_t nhopeless;
	uint64_t commits; /* statements committed in this action */
	kb_res *evictable; /* per node (build_evictable), or NULL until needed */
	/* Reclaim: per queue, its allocation less the victims already allowed
	 * in the current call of above_deserved (valid where left_gen[q] ==
	 * gen). */
	kb_res *left;
	uint32_t *left_gen;
	uint32_t gen;
	/* Reclaim: the victim jobs last listed (in vjobs), and for whom. The
	 * reclaimable hooks judge a victim set by the reclaimer's queue, job
	 * priority and BestEffort class only (framework.h), and candidate()
	 * reads nothing else of the reclaimer but its job, which is never a
	 * victim of reclaim (another queue's jobs only): a reclaimer alike in
	 * those gets the same list while nothing was committed. */
	struct {
		bool valid, best_effort;
		int32_t queue, priority;
		uint64_t commits;
		int n;
	} vj_memo;
} evict_ctx;

static const char *mode_name(evict_mode m)
{
	return m == MODE_PREEMPT ? "preempt" : "reclaim";
}

static int32_t job_priority(const kb_snapshot *s, const kb_task *t)
{
	return t->job >= 0 ? s->jobs[t->job].priority : t->priority;
}

/* Victim order: lower job priority first, then least work lost (latest
 * start), then the job's key; within one job, its reverse task order
 * (lowest pod priority first, newest first, then name). */
static int victim_cmp(const kb_snapshot *s, uint32_t a, uint32_t b)
{
	const kb_task *x = &s->tasks[a], *y = &s->tasks[b];
	if (x->job != y->job) {
		int32_t px = job_priority(s, x), py = job_priority(s, y);
		if (px != py)
			return px < py ? -1 : 1;
		if (x->started_ms != y->started_ms)
			return x->started_ms > y->started_ms ? -1 : 1;
		return strcmp(s->jobs[x->job].key, s->jobs[y->job].key);
	}
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->creation_ms != y->creation_ms)
		return x->creation_ms > y->creation_ms ? -1 : 1;
	return strcmp(y->key, x->key);
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
	if (v->foreign || v->job < 0 || v->job == t->job || !v->preemptable)
		return false;
	if (v->status != KB_TASK_RUNNING && v->status != KB_TASK_BOUND)
		return false;
	if (t->best_effort && !v->best_effort)
		return false; /* a BestEffort preemptor needs only a pod slot */
	if (v->evicted_ms > 0 && ec->ssn->now_ms - v->evicted_ms < ec->victim_cooldown_ms &&
	    (int64_t)job_priority(s, t) - job_priority(s, v) < ec->priority_gap) {
		kb_session_until(ec->ssn, v->evicted_ms + ec->victim_cooldown_ms);
		return false; /* evicted only recently, and not by a much higher priority */
	}
	int32_t tq = s->jobs[t->job].queue, vq = s->jobs[v->job].queue;
	if (ec->mode == MODE_PREEMPT)
		return tq == vq;
	return tq != vq && vq >= 0 && s->queues[vq].reclaimable;
}

/* Reclaim takes from a queue only while it is above its deserved share in
 * some resource, counting the victims already allowed (volcano's
 * reclaimable, proportion's rule): keeps those of v[0..n) that pass, in
 * order, and returns their count. Applied whatever tier decided the
 * victims: in volcano a tier above proportion's (gang and conformance)
 * decides alone, and reclaim could then take from a queue at its share and
 * leave one above it untouched. Deserved shares are zero without
 * proportion, and reclaim then places nothing (reclaim_may_reach). O(n). */
static int above_deserved(evict_ctx *ec, uint32_t *v, int n)
{
	const kb_session *ssn = ec->ssn;
	const kb_snapshot *s = ssn->snap;
	int kept = 0;
	ec->gen++;
	for (int i = 0; i < n; i++) {
		const kb_task *t = &s->tasks[v[i]];
		int32_t q = t->job >= 0 ? s->jobs[t->job].queue : -1;
		if (q < 0)
			continue;
		if (ec->left_gen[q] != ec->gen) {
			ec->left_gen[q] = ec->gen;
			ec->left[q] = s->queues[q].allocated;
		}
		if (!kb_res_above_but_pods(&ec->left[q], &ssn->deserved[q]))
			continue;
		kb_res_sub(&ec->left[q], &t->req);
		v[kept++] = v[i];
	}
	return kept;
}

/* The plugins' victims among c[0..n) into out: their count, or -ENOMEM. */
static int allowed(evict_ctx *ec, const kb_task *t, const uint32_t *c, uint32_t n,
		   uint32_t *out)
{
	if (ec->mode == MODE_PREEMPT)
		return kb_preemptable(ec->ssn, t, c, n, out);
	int nv = kb_reclaimable(ec->ssn, t, c, n, out);
	return nv <= 0 ? nv : above_deserved(ec, out, nv);
}

/* Whether t fits node ni and its queue now (tentative evictions count). */
static bool fits(const evict_ctx *ec, const kb_task *t, uint32_t ni)
{
	return kb_queue_fits(ec->ssn, t, NULL) == KB_FIT_OK &&
	       kb_predicate(ec->ssn, t, &ec->ssn->snap->nodes[ni], NULL) == KB_FIT_OK;
}

/* "preempted by ns/pod": built once per preemptor (the node search asks
 * for it on every node with victims), from the session arena; NULL on
 * -ENOMEM. */
static const char *eviction_reason(evict_ctx *ec, const kb_task *t)
{
	if (ec->why_task != t) {
		ec->why = kb_arena_printf(&ec->ssn->arena, "%s by %s",
					  ec->mode == MODE_PREEMPT ? "preempted" : "reclaimed", t->key);
		ec->why_task = ec->why ? t : NULL;
	}
	return ec->why;
}

/* Whether t could fit node nd if tasks requesting `freed` in all left it:
 * a necessary condition for any victim set among them. O(resources). */
static bool could_fit(const kb_task *t, const kb_node *nd, const kb_res *freed)
{
	if (!nd->ready)
		return false;
	for (int i = 0; i < KB_RES_MAX; i++) {
		int64_t want = t->req.q[i];
		if (i == KB_RES_PODS)
			want = want > 0 ? want : KB_ONE_POD;
		else if (t->best_effort)
			continue;
		if (want > 0 && want > (__int128)nd->idle.q[i] + nd->releasing.q[i] - nd->pipelined.q[i] +
						freed->q[i])
			return false;
	}
	return true;
}

/* Per node, what every task that may ever be a victim holds (running or
 * bound, of a job, preemptable): a bound on what evictions can free there
 * for any preemptor, built once per action on the first node search. Tasks
 * evicted since count twice (here and as releasing), so it stays a bound.
 * O(tasks). */
static int build_evictable(evict_ctx *ec)
{
	const kb_snapshot *s = ec->ssn->snap;
	ec->evictable = kb_arena_calloc(&ec->ssn->arena, s->nnodes ? s->nnodes : 1, sizeof(kb_res));
	if (!ec->evictable)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *v = &s->tasks[i];
		if (v->node >= 0 && !v->foreign && v->job >= 0 && v->preemptable &&
		    (v->status == KB_TASK_RUNNING || v->status == KB_TASK_BOUND))
			kb_res_add(&ec->evictable[v->node], &v->req);
	}
	return 0;
}

/* Moves to the front of ec->victims[0..n) the victims t cannot be placed
 * beside at all (a pod holding a ReadWriteOncePod claim of t's,
 * kb_volumes_blocks), keeping the order otherwise: evicting others first
 * would never be enough, so they would all go. O(n) when t has such claims. */
static void blockers_first(evict_ctx *ec, const kb_task *t, uint32_t n)
{
	if (!kb_volumes_held(ec->ssn, t))
		return;
	uint32_t front = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = ec->victims[i];
		if (!kb_volumes_blocks(ec->ssn, t, x))
			continue;
		memmove(&ec->victims[front + 1], &ec->victims[front], (i - front) * sizeof(uint32_t));
		ec->victims[front++] = x;
	}
}

/* Evicts tentatively, in victim order, the fewest of node ni's candidates
 * that let t fit the node and its queue, and returns their count (the
 * victims in ret_victims), or 0 when t never fits. The evictions stay in st
 * when keep is true; otherwise (counting only, for the node search) st is
 * left as it was. -ENOMEM with st as it was. */
static int evict_on_node(evict_ctx *ec, kb_statement *st, const kb_task *t, uint32_t ni,
			 uint32_t *ret_victims, bool keep)
{
	const kb_snapshot *s = ec->ssn->snap;
	uint32_t nc = 0;
	for (int32_t ti = s->nodes[ni].task_head; ti >= 0; ti = s->tasks[ti].node_next)
		if (candidate(ec, t, &s->tasks[ti]))
			ec->cands[nc++] = (uint32_t)ti;
	if (nc == 0)
		return 0;
	kb_res freed = {0};
	for (uint32_t k = 0; k < nc; k++)
		kb_res_add(&freed, &s->tasks[ec->cands[k]].req);
	if (!could_fit(t, &s->nodes[ni], &freed))
		return 0; /* not even with every candidate gone */
	sort_victims(s, ec->cands, nc);
	int na = allowed(ec, t, ec->cands, nc, ec->victims);
	if (na <= 0)
		return na;
	blockers_first(ec, t, (uint32_t)na);
	uint32_t mark = kb_stmt_size(st), k = 0;
	const char *why = eviction_reason(ec, t);
	int r = why ? 0 : -ENOMEM;
	while (r == 0 && !fits(ec, t, ni)) {
		if (k == (uint32_t)na)
			break;
		ret_victims[k] = ec->victims[k];
		r = kb_stmt_evict(st, ec->victims[k++], why);
		ec->room_grew++;
	}
	/* The plugins must accept exactly this set (a gang loses its spare
	 * members, or everything, never a part in between), judged on the
	 * state before it was evicted: the tentative evictions are undone
	 * first (they lowered the very counts gang and proportion look at),
	 * and made again when the set passes. */
	if (r == 0 && k > 0 && fits(ec, t, ni)) {
		kb_stmt_discard_to(st, mark);
		int again = allowed(ec, t, ret_victims, k, ec->chosen);
		r = again < 0 ? again : again == (int)k ? 0 : 1;
		for (uint32_t i = 0; keep && r == 0 && i < k; i++)
			r = kb_stmt_evict(st, ret_victims[i], why);
		ec->room_grew++;
		if (r == 0)
			return (int)k;
		r = r < 0 ? r : 0;
	}
	if (r <= 0) {
		kb_stmt_discard_to(st, mark);
		ec->room_grew++;
	}
	return r;
}

/* Whether one of the tasks list[0..n), each of which failed a search in
 * this action, covers t: the same queue, a spec that places the same
 * (api/pod_spec.h), a request no larger, and, when the search looked at
 * victims (same_victims), the same job priority and BestEffort class, since
 * those decide who may be a victim. O(n). */
static bool memo_covers(const kb_session *ssn, const uint32_t *list, uint32_t n, const kb_task *t,
			bool same_victims)
{
	const kb_snapshot *s = ssn->snap;
	for (uint32_t i = 0; i < n; i++) {
		const kb_task *h = &s->tasks[list[i]];
		if (s->jobs[h->job].queue != s->jobs[t->job].queue || !kb_res_le(&h->req, &t->req) ||
		    !kb_pod_spec_same_placement(h->spec, t->spec) || !kb_volumes_alike(ssn, h, t))
			continue;
		if (!same_victims ||
		    (job_priority(s, h) == job_priority(s, t) && h->best_effort == t->best_effort))
			return true;
	}
	return false;
}

/* Places t where it fits as it is (allocate or pipeline). For reclaim, only
 * while its queue then stays within its deserved share (kb_queue_preemptive):
 * room this action freed is reclaimed room, whichever task takes it.
 * 1 placed, 0 not, <0 error. */
static int place_plain(evict_ctx *ec, kb_statement *st, uint32_t ti)
{
	kb_session *ssn = st->ssn;
	const kb_snapshot *s = ssn->snap;
	const kb_task *t = &s->tasks[ti];
	if (ec->mode == MODE_RECLAIM &&
	    !kb_queue_preemptive(ssn, &s->queues[s->jobs[t->job].queue], t))
		return 0;
	if (ec->plain_failed_at != ec->room_grew)
		ec->nplain_failed = 0; /* room was freed since: forget */
	if (memo_covers(ssn, ec->plain_failed, ec->nplain_failed, t, false))
		return 0;
	int32_t ni = kb_best_node(ssn, t, NULL);
	if (ni < 0) {
		if (ec->nplain_failed < KB_MAX_HOPELESS)
			ec->plain_failed[ec->nplain_failed++] = ti;
		ec->plain_failed_at = ec->room_grew;
		return 0;
	}
	/* A task whose claim's holder this session evicted waits on its node
	 * for the holder to go (pipelined), whatever room there is. */
	int r = kb_fits_idle(ssn->snap, t, &ssn->snap->nodes[ni]) && !kb_volumes_held(ssn, t)
			? kb_stmt_allocate(st, ti, (uint32_t)ni)
			: kb_stmt_pipeline(st, ti, (uint32_t)ni);
	return r < 0 ? r : 1;
}

/* The node where t needs the fewest victims, and their count; 0 when none
 * will do, or -ENOMEM. The snapshot is left as it was. */
static int best_victim_node(evict_ctx *ec, kb_statement *st, const kb_task *t, uint32_t *ret_node)
{
	const kb_snapshot *s = ec->ssn->snap;
	/* An earlier task of the same queue, priority and shape, asking no
	 * more, found no victims anywhere in this action: t finds none. */
	if (memo_covers(ec->ssn, ec->hopeless, ec->nhopeless, t, true))
		return 0;
	if (!ec->evictable && build_evictable(ec) < 0)
		return -ENOMEM;
	int best_n = -1, best_k = 0;
	for (uint32_t ni = 0; ni < s->nnodes; ni++) {
		if (!could_fit(t, &s->nodes[ni], &ec->evictable[ni]) ||
		    !kb_topo_allows(ec->ssn, t, ni, NULL))
			continue;
		int nv = evict_on_node(ec, st, t, ni, ec->chosen, false);
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
	if (best_n < 0 && ec->nhopeless < KB_MAX_HOPELESS)
		ec->hopeless[ec->nhopeless++] = (uint32_t)(t - s->tasks);
	*ret_node = (uint32_t)best_n;
	return best_k;
}

/* Whether t may evict for itself at all in this mode. */
static bool may_evict_for(const evict_ctx *ec, const kb_task *t)
{
	const kb_snapshot *s = ec->ssn->snap;
	if (t->status != KB_TASK_PENDING || t->preempt_never)
		return false;
	if (ec->mode == MODE_PREEMPT)
		return kb_preempt_possible(ec->ssn, t);
	return kb_queue_preemptive(ec->ssn, &s->queues[s->jobs[t->job].queue], t);
}

/* Step 1: task by task, fewest victims per task. 1 if the job got pipelined. */
static int by_tasks(evict_ctx *ec, kb_statement *st, const kb_job *j)
{
	kb_session *ssn = ec->ssn;
	const kb_snapshot *s = ssn->snap;
	for (uint32_t k = 0; k < j->ntasks && kb_job_starving(ssn, j); k++) {
		uint32_t ti = s->job_tasks[j->first_task + k];
		const kb_task *t = &s->tasks[ti];
		if (t->status != KB_TASK_PENDING)
			continue;
		int r = place_plain(ec, st, ti);
		if (r != 0) {
			if (r < 0)
				return r;
			continue;
		}
		if (!may_evict_for(ec, t))
			continue;
		uint32_t ni;
		int nv = best_victim_node(ec, st, t, &ni);
		if (nv <= 0) {
			if (nv < 0)
				return nv;
			continue; /* this task waits; a sibling may still fit */
		}
		if ((r = evict_on_node(ec, st, t, ni, ec->chosen, true)) <= 0)
			return r < 0 ? r : 0; /* deterministic: found above */
		if ((r = kb_stmt_pipeline(st, ti, ni)) < 0)
			return r;
	}
	return kb_job_pipelined(ssn, j);
}

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

/* Every task victim job vj holds, if each is a candidate; else 0. A job
 * with no running or bound task, or with a task placed but not bound yet
 * (never a candidate), or in a queue candidate() rules out, is answered
 * without a look at its tasks. */
static uint32_t whole_job(evict_ctx *ec, const kb_task *t, uint32_t vj, uint32_t *out)
{
	const kb_snapshot *s = ec->ssn->snap;
	const kb_job *v = &s->jobs[vj];
	if (v->nstatus[KB_TASK_RUNNING] + v->nstatus[KB_TASK_BOUND] == 0 ||
	    v->nstatus[KB_TASK_ALLOCATED] + v->nstatus[KB_TASK_BINDING] > 0)
		return 0;
	int32_t tq = s->jobs[t->job].queue;
	if (ec->mode == MODE_PREEMPT ? v->queue != tq
				     : v->queue == tq || v->queue < 0 || !s->queues[v->queue].reclaimable)
		return 0;
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

/* The candidate victim jobs for t, each allowed whole by the plugins, in
 * victim order, at most KB_MAX_VICTIM_JOBS; their count or -ENOMEM. */
static int victim_jobs(evict_ctx *ec, const kb_task *t)
{
	const kb_snapshot *s = ec->ssn->snap;
	int32_t tq = s->jobs[t->job].queue, tp = job_priority(s, t);
	const kb_topo_scope *sc = kb_topo_scope_of(ec->ssn, t->job);
	bool scoped = sc && sc->hard_level >= 0;
	bool alike = !scoped && ec->mode == MODE_RECLAIM && ec->vj_memo.valid &&
		     ec->vj_memo.commits == ec->commits && ec->vj_memo.queue == tq &&
		     ec->vj_memo.priority == tp && ec->vj_memo.best_effort == t->best_effort;
	if (alike)
		return ec->vj_memo.n;
	uint32_t nall = 0;
	for (uint32_t vj = 0; vj < s->njobs; vj++) {
		if (vj == (uint32_t)t->job)
			continue;
		uint32_t n = whole_job(ec, t, vj, ec->cands);
		if (scoped) {
			/* Only victim jobs with a task inside the domain. */
			bool in = false;
			for (uint32_t k = 0; k < n && !in; k++)
				in = kb_topo_allows(ec->ssn, t, (uint32_t)s->tasks[ec->cands[k]].node, NULL);
			if (!in)
				n = 0;
		}
		int na = n ? allowed(ec, t, ec->cands, n, ec->victims) : 0;
		if (na < 0)
			return na;
		if (n == 0 || (uint32_t)na != n)
			continue;
		int64_t latest = 0;
		for (uint32_t k = 0; k < n; k++)
			if (s->tasks[ec->cands[k]].started_ms > latest)
				latest = s->tasks[ec->cands[k]].started_ms;
		ec->vjobs[nall++] = (victim_job){vj, s->jobs[vj].priority, latest};
	}
	qsort_r(ec->vjobs, nall, sizeof(victim_job), cmp_victim_job, (void *)s);
	int n = nall < KB_MAX_VICTIM_JOBS ? (int)nall : KB_MAX_VICTIM_JOBS;
	ec->vj_memo.valid = !scoped;
	ec->vj_memo.best_effort = t->best_effort;
	ec->vj_memo.queue = tq;
	ec->vj_memo.priority = tp;
	ec->vj_memo.commits = ec->commits;
	ec->vj_memo.n = n;
	return n;
}

/* In one statement: evicts the victim jobs whose bit is set in use, then
 * places j's pending tasks. 1 when j is then pipelined (st kept open), 0
 * when not (st discarded), -ENOMEM. */
static int try_jobs(evict_ctx *ec, const kb_job *j, const kb_task *t, uint32_t use,
		    uint32_t nvj, kb_statement *st)
{
	kb_session *ssn = ec->ssn;
	const kb_snapshot *s = ssn->snap;
	kb_stmt_init(st, ssn);
	/* The jobs together, as one victim set: the plugins' cumulative rules
	 * (proportion: a queue keeps its deserved share, counting every victim
	 * taken from it) hold for the combination, not job by job. */
	uint32_t nall = 0;
	for (uint32_t v = 0; v < nvj; v++)
		if (use & (1u << v))
			nall += whole_job(ec, t, ec->vjobs[v].job, ec->victims + nall);
	int na = allowed(ec, t, ec->victims, nall, ec->chosen);
	if (na < 0)
		return na;
	if ((uint32_t)na != nall)
		return 0;
	const char *why = eviction_reason(ec, t);
	int r = why ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < nall && r == 0; i++)
		r = kb_stmt_evict(st, ec->victims[i], why);
	ec->room_grew++;
	/* Pending tasks not tried yet: once the placed ones and these cannot
	 * make minMember, the rest need not be tried. */
	int32_t untried = j->nstatus[KB_TASK_PENDING];
	for (uint32_t m = 0; m < j->ntasks && r == 0 && !kb_job_pipelined(ssn, j); m++) {
		uint32_t ti = s->job_tasks[j->first_task + m];
		if (s->tasks[ti].status != KB_TASK_PENDING)
			continue;
		if (kb_job_placed_count(j) + untried-- < j->min_member)
			break;
		int placed = place_plain(ec, st, ti);
		r = placed < 0 ? -ENOMEM : 0;
	}
	if (r == 0 && kb_job_pipelined(ssn, j))
		return 1;
	kb_stmt_discard(st);
	ec->room_grew++;
	return r;
}

/* Step 2: whole victim jobs, the shortest prefix in victim order that
 * works, then pruned: a job of it whose eviction is not needed is kept.
 * 1 if the job got pipelined (statement kept in ret_st), 0, or -ENOMEM. */
static int by_jobs(evict_ctx *ec, const kb_job *j, const kb_task *t, kb_statement *ret_st)
{
	const kb_snapshot *s = ec->ssn->snap;
	kb_res need, room = s->total_future_idle;
	int32_t nneed;
	if (kb_job_remaining_need(ec->ssn, j, &need, &nneed) < 0)
		return -ENOMEM;
	int nvj = victim_jobs(ec, t);
	if (nvj <= 0)
		return nvj;
	uint32_t use = 0;
	int r = 0;
	for (int k = 0; k < nvj && r == 0; k++) {
		use |= 1u << k;
		/* What the whole cluster would have free with these jobs gone: a
		 * prefix that cannot hold j's remaining minimum is not tried. */
		kb_res_add(&room, &s->jobs[ec->vjobs[k].job].allocated);
		if (nneed > 0 && kb_res_first_short(&need, &room) >= 0)
			continue;
		r = try_jobs(ec, j, t, use, (uint32_t)nvj, ret_st);
		if (r == 1) {
			kb_stmt_discard(ret_st); /* found; pruned and redone below */
			ec->room_grew++;
		}
	}
	if (r <= 0)
		return r;
	/* Prune, most valuable victim first (the last in victim order). */
	for (int v = nvj; v-- > 0;) {
		if (!(use & (1u << v)) || (use & ~(1u << v)) == 0)
			continue;
		if ((r = try_jobs(ec, j, t, use & ~(1u << v), (uint32_t)nvj, ret_st)) < 0)
			return r;
		if (r == 1) {
			kb_stmt_discard(ret_st);
			ec->room_grew++;
			use &= ~(1u << v);
		}
	}
	return try_jobs(ec, j, t, use, (uint32_t)nvj, ret_st);
}

static bool recently_evicted(const evict_ctx *ec, const kb_job *j)
{
	const kb_snapshot *s = ec->ssn->snap;
	if (ec->mode == MODE_RECLAIM && j->queue >= 0 && ec->queue_evicted_ms[j->queue] > 0 &&
	    ec->ssn->now_ms - ec->queue_evicted_ms[j->queue] < ec->cooldown_ms) {
		kb_session_until(ec->ssn, ec->queue_evicted_ms[j->queue] + ec->cooldown_ms);
		return true;
	}
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (t->evicted_ms > 0 && ec->ssn->now_ms - t->evicted_ms < ec->cooldown_ms) {
			kb_session_until(ec->ssn, t->evicted_ms + ec->cooldown_ms);
			return true;
		}
	}
	return false;
}

/* The first pending task of j that may evict for itself, or NULL. */
static const kb_task *first_evictor(const evict_ctx *ec, const kb_job *j)
{
	const kb_snapshot *s = ec->ssn->snap;
	for (uint32_t k = 0; k < j->ntasks; k++) {
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
		if (may_evict_for(ec, t))
			return t;
	}
	return NULL;
}

/* Parses one argument of preempt's or reclaim's configuration into ec (when
 * non-NULL). Returns 0 (unknown keys too: volcano's own are left alone) or
 * -EINVAL with err saying what the value must be. */
static int parse_argument(evict_ctx *ec, const char *key, const char *value, kb_err *err)
{
	int64_t ms;
	if (strcmp(key, "cooldown") == 0 || strcmp(key, "victim-cooldown") == 0) {
		if (kb_duration_parse_ms(value, &ms) < 0 || ms < 0)
			return kb_err_set(err, -EINVAL, "%s must be a duration such as 60s or 5m, got \"%s\"",
					  key, value);
		if (ec)
			*(key[0] == 'c' ? &ec->cooldown_ms : &ec->victim_cooldown_ms) = ms;
	} else if (strcmp(key, "cooldown-priority-gap") == 0) {
		char *end;
		errno = 0;
		long long g = strtoll(value, &end, 10);
		if (!*value || *end || g < 0 || errno)
			return kb_err_set(err, -EINVAL,
					  "cooldown-priority-gap must be a whole number >= 0, got \"%s\"",
					  value);
		if (ec)
			ec->priority_gap = g;
	}
	return 0;
}

static int check_argument(const char *key, const char *value, kb_err *err)
{
	return parse_argument(NULL, key, value, err);
}

static int read_arguments(evict_ctx *ec, kb_err *err)
{
	const kb_conf *conf = ec->ssn->conf;
	const char *name = mode_name(ec->mode);
	static const char *const keys[] = {"cooldown", "victim-cooldown", "cooldown-priority-gap"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = kb_conf_action_arg(conf, name, keys[k], NULL);
		kb_err why = {0};
		if (v && parse_argument(ec, keys[k], v, &why) < 0)
			return kb_err_set(err, -EINVAL, "%s: configuration of %s: %s", conf->source, name,
					  why.msg);
	}
	return 0;
}

/* Scratch and the queues' latest evictions, from the session arena. */
static int prepare(evict_ctx *ec)
{
	kb_session *ssn = ec->ssn;
	const kb_snapshot *s = ssn->snap;
	ec->queue_evicted_ms = kb_arena_calloc(&ssn->arena, s->nqueues ? s->nqueues : 1, sizeof(int64_t));
	size_t nt = s->ntasks ? s->ntasks : 1;
	ec->cands = kb_arena_alloc(&ssn->arena, nt * sizeof(uint32_t));
	ec->victims = kb_arena_alloc(&ssn->arena, nt * sizeof(uint32_t));
	ec->chosen = kb_arena_alloc(&ssn->arena, nt * sizeof(uint32_t));
	ec->best = kb_arena_alloc(&ssn->arena, nt * sizeof(uint32_t));
	ec->vjobs = kb_arena_alloc(&ssn->arena, (s->njobs ? s->njobs : 1) * sizeof(victim_job));
	size_t nq = s->nqueues ? s->nqueues : 1;
	ec->left = kb_arena_alloc(&ssn->arena, nq * sizeof(kb_res));
	ec->left_gen = kb_arena_calloc(&ssn->arena, nq, sizeof(uint32_t));
	if (!ec->queue_evicted_ms || !ec->cands || !ec->victims || !ec->chosen || !ec->best ||
	    !ec->vjobs || !ec->left || !ec->left_gen)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *t = &s->tasks[i];
		int32_t q = t->job >= 0 ? s->jobs[t->job].queue : -1;
		if (q >= 0 && t->evicted_ms > ec->queue_evicted_ms[q])
			ec->queue_evicted_ms[q] = t->evicted_ms;
	}
	return 0;
}

/* One starving job: step 1, else step 2; 1 when committed. 0 or -ENOMEM. */
static int evict_plain(evict_ctx *ec, const kb_job *j, const kb_task *t)
{
	kb_statement st;
	kb_stmt_init(&st, ec->ssn);
	int r = by_tasks(ec, &st, j);
	if (r == 1) {
		kb_stmt_commit(&st);
		ec->commits++;
		return 1;
	}
	kb_stmt_discard(&st);
	ec->room_grew++;
	if (r < 0)
		return r;
	r = by_jobs(ec, j, t, &st);
	if (r == 1) {
		kb_stmt_commit(&st);
		ec->commits++;
	}
	return r;
}

/* A gang with a topology wish: evict_plain inside each candidate domain
 * in turn, as the job's scope, until one commits (the scope stays); one
 * with no required level, evict_plain alone. What the searches remembered
 * inside one domain (no node, no victims) is forgotten before the next.
 * 1 when committed, 0 or -ENOMEM. */
static int evict_in_domains(evict_ctx *ec, const kb_job *j, const kb_task *t)
{
	kb_session *ssn = ec->ssn;
	uint32_t ji = (uint32_t)(j - ssn->snap->jobs);
	if (!ec->evictable && build_evictable(ec) < 0)
		return -ENOMEM;
	kb_topo_attempts at;
	if (kb_topo_attempts_for(ssn, j, ec->evictable, &at) < 0)
		return -ENOMEM;
	if (at.error)
		return 0;
	if (at.unconstrained)
		return evict_plain(ec, j, t);
	bool had_scope = kb_topo_scope_of(ssn, (int32_t)ji) != NULL;
	uint32_t nhopeless = ec->nhopeless;
	for (uint32_t a = 0; a < at.n; a++) {
		if (!had_scope && kb_topo_set_scope(ssn, ji, &at.v[a]) < 0)
			return -ENOMEM;
		int r = evict_plain(ec, j, t);
		ec->nhopeless = nhopeless;
		ec->nplain_failed = 0;
		if (r != 0)
			return r;
	}
	if (!had_scope && kb_topo_set_scope(ssn, ji, NULL) < 0)
		return -ENOMEM;
	return 0;
}

/* One starving job: step 1, else step 2 (inside one domain at a time for
 * a gang that needs one). 0 or -ENOMEM. */
static int evict_for(evict_ctx *ec, const kb_job *j)
{
	const kb_task *t = first_evictor(ec, j);
	if (!t)
		return 0;
	int r = kb_topo_wanted(j) ? evict_in_domains(ec, j, t) : evict_plain(ec, j, t);
	return r < 0 ? r : 0;
}

/* Reclaim: every task it places for j must leave j's queue within its
 * deserved share (kb_queue_preemptive), so a job whose remaining minimum is
 * above the queue's headroom (deserved - allocated - pipelined) in some
 * resource cannot be made pipelined: no node needs searching.
 * 1 may, 0 cannot, -ENOMEM. O(tasks of j). */
static int reclaim_may_reach(const evict_ctx *ec, const kb_job *j)
{
	const kb_session *ssn = ec->ssn;
	const kb_queue *q = &ssn->snap->queues[j->queue];
	const kb_res *deserved = &ssn->deserved[j->queue];
	kb_res need;
	int32_t k;
	if (kb_job_remaining_need(ssn, j, &need, &k) < 0)
		return -ENOMEM;
	for (int r = 0; k > 0 && r < KB_RES_MAX; r++)
		if (r != KB_RES_PODS && need.q[r] > 0 &&
		    (__int128)q->allocated.q[r] + q->pipelined.q[r] + need.q[r] > deserved->q[r])
			return 0;
	return 1;
}

static int run(kb_session *ssn, evict_mode mode, kb_err *err)
{
	const kb_snapshot *s = ssn->snap;
	evict_ctx ec = {.ssn = ssn,
			.mode = mode,
			.cooldown_ms = KB_DEFAULT_COOLDOWN_MS,
			.victim_cooldown_ms = KB_DEFAULT_VICTIM_COOLDOWN_MS,
			.priority_gap = KB_DEFAULT_COOLDOWN_PRIORITY_GAP};
	int r = read_arguments(&ec, err);
	if (r < 0)
		return r;
	kb_job_ref *jobs = kb_arena_alloc(&ssn->arena, (s->njobs ? s->njobs : 1) * sizeof(kb_job_ref));
	if (!jobs || prepare(&ec) < 0)
		return kb_err_set(err, -ENOMEM, "out of memory");

	uint32_t n = 0;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->queue < 0 || kb_job_valid(ssn, j) || !kb_job_admitted(ssn, j) ||
		    j->nstatus[KB_TASK_PENDING] == 0 || !kb_job_starving(ssn, j))
			continue;
		jobs[n++] = (kb_job_ref){ssn, i};
	}
	qsort(jobs, n, sizeof(kb_job_ref), kb_job_ref_cmp);

	for (uint32_t i = 0; i < n; i++) {
		const kb_job *j = &s->jobs[jobs[i].job];
		if (!kb_job_starving(ssn, j) || recently_evicted(&ec, j))
			continue;
		if (mode == MODE_RECLAIM && kb_queue_overused(ssn, &s->queues[j->queue]))
			continue;
		if (mode == MODE_RECLAIM && (r = reclaim_may_reach(&ec, j)) <= 0) {
			if (r < 0)
				return kb_err_set(err, r, "out of memory");
			continue;
		}
		if ((r = evict_for(&ec, j)) < 0)
			return kb_err_set(err, r, "out of memory");
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
	.check_arg = check_argument,
	.memoizable = true,
};

const kb_action_ops kb_action_reclaim = {
	.name = "reclaim",
	.execute = reclaim_execute,
	.check_arg = check_argument,
	.memoizable = true,
};

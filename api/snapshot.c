#include "api/snapshot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

typedef struct saved_task {
	uint32_t index;
	kb_task task;
} saved_task;

typedef struct saved_node {
	uint32_t index;
	kb_node node;
} saved_node;

struct kb_snapshot_journal {
	bool recording;
	uint8_t *task_saved; /* per task: saved since begin */
	uint8_t *node_saved;
	uint32_t ntasks_cap, nnodes_cap;
	KB_VEC(saved_task) tasks;
	KB_VEC(saved_node) nodes;
	kb_job *jobs;
	kb_queue *queues;
	uint32_t njobs_cap, nqueues_cap;
	kb_res total_allocatable, total_future_idle;
	__int128 future_idle_exact[KB_RES_MAX];
	bool failed; /* a save ran out of memory: rollback cannot be exact */
};

void kb_snapshot_init(kb_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	kb_arena_init(&s->arena);
	s->arena.chunk_size = 1u << 20;
	kb_resnames_init(&s->resnames);
	s->default_queue = -1;
	s->gpu_res = -1;
}

static void journal_free(struct kb_snapshot_journal *j)
{
	if (!j)
		return;
	free(j->task_saved);
	free(j->node_saved);
	KB_VEC_RELEASE(&j->tasks);
	KB_VEC_RELEASE(&j->nodes);
	free(j->jobs);
	free(j->queues);
	free(j);
}

void kb_snapshot_release(kb_snapshot *s)
{
	journal_free(s->journal);
	kb_arena_release(&s->arena);
	kb_snapshot_init(s);
}

/* Binary searches over arrays sorted by a string key. */
#define KB_BSEARCH(arr, count, field, want)                                                        \
	do {                                                                                       \
		uint32_t lo_ = 0, hi_ = (count);                                                   \
		while (lo_ < hi_) {                                                                \
			uint32_t mid_ = lo_ + (hi_ - lo_) / 2;                                     \
			int c_ = strcmp((arr)[mid_].field, (want));                                \
			if (c_ == 0)                                                               \
				return (int32_t)mid_;                                              \
			if (c_ < 0)                                                                \
				lo_ = mid_ + 1;                                                    \
			else                                                                       \
				hi_ = mid_;                                                        \
		}                                                                                  \
		return -1;                                                                         \
	} while (0)

int32_t kb_snapshot_find_node(const kb_snapshot *s, const char *name)
{
	KB_BSEARCH(s->nodes, s->nnodes, name, name);
}

int32_t kb_snapshot_find_queue(const kb_snapshot *s, const char *name)
{
	KB_BSEARCH(s->queues, s->nqueues, name, name);
}

int32_t kb_snapshot_find_job(const kb_snapshot *s, const char *key)
{
	KB_BSEARCH(s->jobs, s->njobs, key, key);
}

const kb_labels *kb_snapshot_namespace_labels(const kb_snapshot *s, const char *name)
{
	uint32_t lo = 0, hi = s->nnamespaces;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->namespaces[mid].name, name);
		if (c == 0)
			return &s->namespaces[mid].labels;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- undo journal ------------------------------------------------------------------ */

/* Grows *buf to hold n elements of size each; 0 or -ENOMEM. */
static int reserve(void **buf, uint32_t *cap, uint32_t n, size_t size)
{
	if (*cap >= n && *buf)
		return 0;
	void *nb = realloc(*buf, (n ? n : 1) * size);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = n;
	return 0;
}

int kb_snapshot_journal_begin(kb_snapshot *s)
{
	struct kb_snapshot_journal *j = s->journal;
	if (j && j->recording)
		return -EBUSY;
	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j)
			return -ENOMEM;
		s->journal = j;
	}
	uint32_t tcap = j->ntasks_cap, ncap = j->nnodes_cap;
	if (reserve((void **)&j->task_saved, &tcap, s->ntasks, 1) < 0 ||
	    reserve((void **)&j->node_saved, &ncap, s->nnodes, 1) < 0 ||
	    reserve((void **)&j->jobs, &j->njobs_cap, s->njobs, sizeof(kb_job)) < 0 ||
	    reserve((void **)&j->queues, &j->nqueues_cap, s->nqueues, sizeof(kb_queue)) < 0)
		return -ENOMEM;
	j->ntasks_cap = tcap;
	j->nnodes_cap = ncap;
	memset(j->task_saved, 0, s->ntasks);
	memset(j->node_saved, 0, s->nnodes);
	if (s->njobs)
		memcpy(j->jobs, s->jobs, s->njobs * sizeof(kb_job));
	if (s->nqueues)
		memcpy(j->queues, s->queues, s->nqueues * sizeof(kb_queue));
	j->total_allocatable = s->total_allocatable;
	j->total_future_idle = s->total_future_idle;
	memcpy(j->future_idle_exact, s->future_idle_exact, sizeof(j->future_idle_exact));
	j->tasks.n = j->nodes.n = 0;
	j->failed = false;
	j->recording = true;
	return 0;
}

void kb_snapshot_touch_task(kb_snapshot *s, uint32_t t)
{
	struct kb_snapshot_journal *j = s->journal;
	if (!j || !j->recording || j->task_saved[t])
		return;
	saved_task st = {.index = t, .task = s->tasks[t]};
	if (KB_VEC_PUSH(&j->tasks, st) < 0) {
		j->failed = true;
		return;
	}
	j->task_saved[t] = 1;
}

static void touch_node(kb_snapshot *s, uint32_t n)
{
	struct kb_snapshot_journal *j = s->journal;
	if (!j || !j->recording || j->node_saved[n])
		return;
	saved_node sn = {.index = n, .node = s->nodes[n]};
	if (KB_VEC_PUSH(&j->nodes, sn) < 0) {
		j->failed = true;
		return;
	}
	j->node_saved[n] = 1;
}

int kb_snapshot_journal_rollback(kb_snapshot *s)
{
	struct kb_snapshot_journal *j = s->journal;
	if (!j || !j->recording)
		return 0;
	for (size_t i = 0; i < j->tasks.n; i++)
		s->tasks[j->tasks.v[i].index] = j->tasks.v[i].task;
	for (size_t i = 0; i < j->nodes.n; i++)
		s->nodes[j->nodes.v[i].index] = j->nodes.v[i].node;
	if (s->njobs)
		memcpy(s->jobs, j->jobs, s->njobs * sizeof(kb_job));
	if (s->nqueues)
		memcpy(s->queues, j->queues, s->nqueues * sizeof(kb_queue));
	s->total_allocatable = j->total_allocatable;
	s->total_future_idle = j->total_future_idle;
	memcpy(s->future_idle_exact, j->future_idle_exact, sizeof(s->future_idle_exact));
	j->tasks.n = j->nodes.n = 0;
	j->recording = false;
	return j->failed ? -ENOMEM : 0;
}

int kb_node_spill_short_asked(const kb_snapshot *s, const kb_task *t, const kb_node *n,
			      bool future)
{
	for (uint32_t k = 0; k < t->spec->nspill; k++) {
		int32_t known = t->spec->spill[k].known;
		__int128 held = 0;
		for (int32_t o = n->task_head; o >= 0; o = s->tasks[o].node_next) {
			const kb_task *u = &s->tasks[o];
			if (!u->spills)
				continue;
			if (kb_task_status_allocated(u->status) ||
			    (future ? u->status == KB_TASK_PIPELINED : u->status == KB_TASK_RELEASING))
				held += kb_res_extra_get(u->spec->spill, u->spec->nspill, known);
		}
		if (t->spec->spill[k].milli > kb_res_extra_get(n->extra, n->nextra, known) - held)
			return (int)k;
	}
	return -1;
}

/* A node's future idle of resource i: idle + releasing - pipelined, exact. */
static __int128 node_future(const kb_node *n, int i)
{
	return (__int128)n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i];
}

/* total_future_idle += (sign) the node's future idle: the exact sum, then
 * its saturated int64 view. */
static void future_account(kb_snapshot *s, const kb_node *n, int sign)
{
	if (!kb_node_schedulable(n))
		return;
	for (int i = 0; i < KB_RES_MAX; i++) {
		s->future_idle_exact[i] += sign * node_future(n, i);
		s->total_future_idle.q[i] = kb_clamp128(s->future_idle_exact[i]);
	}
}

/* How a task in status st weighs on its node. */
static void node_account(kb_node *n, const kb_task *t, kb_task_status st, int sign)
{
	kb_res *dst[3] = {NULL, NULL, NULL};
	if (kb_task_status_allocated(st)) {
		dst[0] = &n->used;
	} else if (st == KB_TASK_RELEASING) {
		dst[0] = &n->used;
		dst[1] = &n->releasing;
	} else if (st == KB_TASK_PIPELINED) {
		dst[0] = &n->pipelined;
	}
	for (int i = 0; i < 3 && dst[i]; i++) {
		if (sign > 0)
			kb_res_add(dst[i], &t->req);
		else
			kb_res_sub(dst[i], &t->req);
	}
	n->idle = n->allocatable;
	kb_res_sub(&n->idle, &n->used);
}

void kb_snapshot_node_add_task(kb_snapshot *s, uint32_t ni, uint32_t ti)
{
	kb_node *n = &s->nodes[ni];
	kb_task *t = &s->tasks[ti];
	touch_node(s, ni);
	kb_snapshot_touch_task(s, ti);
	if (n->task_head >= 0)
		kb_snapshot_touch_task(s, (uint32_t)n->task_head);
	t->node_prev = -1;
	t->node_next = n->task_head;
	if (n->task_head >= 0)
		s->tasks[n->task_head].node_prev = (int32_t)ti;
	n->task_head = (int32_t)ti;
	n->ntasks++;
	n->gen++;
	s->node_log[s->node_changes++ % KB_NODE_LOG] = ni;
	future_account(s, n, -1);
	node_account(n, t, t->status, +1);
	future_account(s, n, +1);
}

void kb_snapshot_node_remove_task(kb_snapshot *s, uint32_t ni, uint32_t ti)
{
	kb_node *n = &s->nodes[ni];
	kb_task *t = &s->tasks[ti];
	touch_node(s, ni);
	kb_snapshot_touch_task(s, ti);
	if (t->node_prev >= 0)
		kb_snapshot_touch_task(s, (uint32_t)t->node_prev);
	if (t->node_next >= 0)
		kb_snapshot_touch_task(s, (uint32_t)t->node_next);
	if (t->node_prev >= 0)
		s->tasks[t->node_prev].node_next = t->node_next;
	else
		n->task_head = t->node_next;
	if (t->node_next >= 0)
		s->tasks[t->node_next].node_prev = t->node_prev;
	t->node_prev = t->node_next = -1;
	n->ntasks--;
	n->gen++;
	s->node_log[s->node_changes++ % KB_NODE_LOG] = ni;
	future_account(s, n, -1);
	node_account(n, t, t->status, -1);
	future_account(s, n, +1);
}

static bool status_requests(kb_task_status st)
{
	return st != KB_TASK_SUCCEEDED && st != KB_TASK_FAILED && st != KB_TASK_UNKNOWN;
}

/* Adds (sign=+1) or removes (-1) a task's weight in its job and queue. */
static void job_account(kb_snapshot *s, const kb_task *t, kb_task_status st, int sign)
{
	if (t->job < 0)
		return;
	kb_job *j = &s->jobs[t->job];
	kb_queue *q = j->queue >= 0 ? &s->queues[j->queue] : NULL;
	j->nstatus[st] += sign;
	if (kb_task_status_allocated(st)) {
		if (sign > 0) {
			kb_res_add(&j->allocated, &t->req);
			if (q)
				kb_res_add(&q->allocated, &t->req);
		} else {
			kb_res_sub(&j->allocated, &t->req);
			if (q)
				kb_res_sub(&q->allocated, &t->req);
		}
	}
	if (st == KB_TASK_PIPELINED && q) {
		if (sign > 0)
			kb_res_add(&q->pipelined, &t->req);
		else
			kb_res_sub(&q->pipelined, &t->req);
	}
	if (status_requests(st)) {
		if (sign > 0) {
			kb_res_add(&j->request, &t->req);
			if (q)
				kb_res_add(&q->request, &t->req);
		} else {
			kb_res_sub(&j->request, &t->req);
			if (q)
				kb_res_sub(&q->request, &t->req);
		}
	}
}

void kb_snapshot_set_task_status(kb_snapshot *s, uint32_t ti, kb_task_status st)
{
	kb_task *t = &s->tasks[ti];
	kb_snapshot_touch_task(s, ti);
	bool was_on = kb_task_status_on_node(t->status) && t->node >= 0;
	if (was_on)
		kb_snapshot_node_remove_task(s, (uint32_t)t->node, ti);
	job_account(s, t, t->status, -1);
	t->status = st;
	job_account(s, t, t->status, +1);
	if (kb_task_status_on_node(st) && t->node >= 0)
		kb_snapshot_node_add_task(s, (uint32_t)t->node, ti);
}

void kb_snapshot_derive(kb_snapshot *s)
{
	memset(&s->total_allocatable, 0, sizeof(s->total_allocatable));
	memset(&s->total_future_idle, 0, sizeof(s->total_future_idle));
	memset(s->future_idle_exact, 0, sizeof(s->future_idle_exact));
	for (uint32_t i = 0; i < s->nnodes; i++) {
		kb_node *n = &s->nodes[i];
		memset(&n->used, 0, sizeof(n->used));
		memset(&n->releasing, 0, sizeof(n->releasing));
		memset(&n->pipelined, 0, sizeof(n->pipelined));
		n->idle = n->allocatable;
		n->task_head = -1;
		n->ntasks = 0;
		if (kb_node_schedulable(n)) {
			kb_res_add(&s->total_allocatable, &n->allocatable);
			for (int r = 0; r < KB_RES_MAX; r++) {
				s->future_idle_exact[r] += n->allocatable.q[r];
				s->total_future_idle.q[r] = kb_clamp128(s->future_idle_exact[r]);
			}
		}
	}
	for (uint32_t i = 0; i < s->nqueues; i++) {
		memset(&s->queues[i].allocated, 0, sizeof(kb_res));
		memset(&s->queues[i].pipelined, 0, sizeof(kb_res));
		memset(&s->queues[i].request, 0, sizeof(kb_res));
	}
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		memset(j->nstatus, 0, sizeof(j->nstatus));
		memset(&j->allocated, 0, sizeof(j->allocated));
		memset(&j->request, 0, sizeof(j->request));
	}
	s->ntopo_tasks = 0;
	s->topo_counted = true;
	s->ngpu_tasks = 0;
	s->gpu_tasks = kb_arena_alloc(&s->arena, (s->ntasks ? s->ntasks : 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->ntasks; i++) {
		kb_task *t = &s->tasks[i];
		t->node_prev = t->node_next = -1;
		s->ntopo_tasks += kb_pod_spec_has_topology(t->spec);
		if (s->gpu_tasks && s->gpu_res >= 0 && t->req.q[s->gpu_res] > 0)
			s->gpu_tasks[s->ngpu_tasks++] = i;
		job_account(s, t, t->status, +1);
		if (t->node >= 0 && kb_task_status_on_node(t->status))
			kb_snapshot_node_add_task(s, (uint32_t)t->node, i);
	}
}

static bool broken(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes what is broken into why (cut to size) for kb_snapshot_check; returns false. */
static bool broken(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, size, fmt, ap); /* a long message is cut */
	va_end(ap);
	return false;
}

bool kb_snapshot_check(const kb_snapshot *s, char *why, size_t size)
{
	char dummy[8];
	if (!why) {
		why = dummy;
		size = sizeof(dummy);
	}
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const kb_node *n = &s->nodes[i];
		kb_res used = {{0}}, rel = {{0}}, pipe = {{0}};
		uint32_t count = 0;
		int32_t prev = -1;
		for (int32_t ti = n->task_head; ti >= 0; ti = s->tasks[ti].node_next) {
			const kb_task *t = &s->tasks[ti];
			if (t->node != (int32_t)i || t->node_prev != prev)
				return broken(why, size, "node %s: task list link broken at %s",
					      n->name, t->key);
			if (kb_task_status_allocated(t->status) || t->status == KB_TASK_RELEASING)
				kb_res_add(&used, &t->req);
			if (t->status == KB_TASK_RELEASING)
				kb_res_add(&rel, &t->req);
			if (t->status == KB_TASK_PIPELINED)
				kb_res_add(&pipe, &t->req);
			prev = ti;
			if (++count > s->ntasks)
				break;
		}
		if (count != n->ntasks)
			return broken(why, size, "node %s: %u tasks listed, %u counted", n->name,
				      count, n->ntasks);
		kb_res idle = n->allocatable;
		kb_res_sub(&idle, &used);
		if (memcmp(&used, &n->used, sizeof(used)) != 0 ||
		    memcmp(&rel, &n->releasing, sizeof(rel)) != 0 ||
		    memcmp(&pipe, &n->pipelined, sizeof(pipe)) != 0 ||
		    memcmp(&idle, &n->idle, sizeof(idle)) != 0)
			return broken(why, size,
				      "node %s: used/idle/releasing/pipelined disagree with its tasks",
				      n->name);
	}
	__int128 future[KB_RES_MAX] = {0};
	for (uint32_t i = 0; i < s->nnodes; i++)
		if (kb_node_schedulable(&s->nodes[i]))
			for (int r = 0; r < KB_RES_MAX; r++)
				future[r] += node_future(&s->nodes[i], r);
	for (int r = 0; r < KB_RES_MAX; r++)
		if (future[r] != s->future_idle_exact[r] ||
		    kb_clamp128(future[r]) != s->total_future_idle.q[r])
			return broken(why, size,
				      "the cluster's total future idle disagrees with its nodes");
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		for (int st = 0; st < KB_TASK_NSTATUS; st++)
			if (j->nstatus[st] < 0)
				return broken(why, size, "job %s: negative count for status %d",
					      j->key, st);
		if (kb_res_any_negative(&j->allocated))
			return broken(why, size, "job %s: negative allocated resources", j->key);
	}
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *t = &s->tasks[i];
		if (kb_task_status_on_node(t->status) && t->node < 0)
			return broken(why, size, "task %s: holds resources but has no node", t->key);
	}
	return true;
}

#include "cache/cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- stores ---------------------------------------------------------------------- */

static void store_init(kb_store *s)
{
	memset(s, 0, sizeof(*s));
	kb_strmap_init(&s->by_key);
}

static void slot_clear(kb_slot *sl)
{
	kb_object_free(sl->obj);
	free(sl->node);
	memset(sl, 0, sizeof(*sl));
}

static void store_release(kb_store *s)
{
	for (size_t i = 0; i < s->slots.n; i++)
		slot_clear(&s->slots.v[i]);
	KB_VEC_RELEASE(&s->slots);
	KB_VEC_RELEASE(&s->free_slots);
	kb_strmap_release(&s->by_key);
}

static kb_slot *store_get(const kb_store *s, const char *key)
{
	int64_t idx;
	if (!kb_strmap_get(&s->by_key, key, &idx))
		return NULL;
	return &s->slots.v[idx];
}

/* Puts obj into the store, replacing an object of the same key. On success
 * *ret_slot is its slot and *ret_replaced tells whether one was replaced. */
static int store_put(kb_store *s, kb_object *obj, kb_slot **ret_slot, bool *ret_replaced)
{
	int64_t idx;
	if (kb_strmap_get(&s->by_key, obj->meta.key, &idx)) {
		kb_slot *sl = &s->slots.v[idx];
		/* The map borrows the key string from the object: re-key before freeing. */
		kb_strmap_del(&s->by_key, sl->obj->meta.key);
		kb_object_free(sl->obj);
		sl->obj = obj;
		int r = kb_strmap_put(&s->by_key, obj->meta.key, idx);
		if (r < 0) {
			slot_clear(sl);
			KB_VEC_PUSH(&s->free_slots, (uint32_t)idx);
			return r;
		}
		*ret_slot = sl;
		*ret_replaced = true;
		return 0;
	}
	if (s->free_slots.n) {
		idx = s->free_slots.v[--s->free_slots.n];
	} else {
		kb_slot empty = {0};
		if (KB_VEC_PUSH(&s->slots, empty) < 0) {
			kb_object_free(obj);
			return -ENOMEM;
		}
		idx = (int64_t)s->slots.n - 1;
	}
	kb_slot *sl = &s->slots.v[idx];
	memset(sl, 0, sizeof(*sl));
	sl->obj = obj;
	int r = kb_strmap_put(&s->by_key, obj->meta.key, idx);
	if (r < 0) {
		slot_clear(sl);
		KB_VEC_PUSH(&s->free_slots, (uint32_t)idx);
		return r;
	}
	*ret_slot = sl;
	*ret_replaced = false;
	return 0;
}

static bool store_del(kb_store *s, const char *key)
{
	int64_t idx;
	if (!kb_strmap_get(&s->by_key, key, &idx))
		return false;
	kb_strmap_del(&s->by_key, key);
	slot_clear(&s->slots.v[idx]);
	/* Best effort: a failed push only loses the slot for reuse. */
	(void)KB_VEC_PUSH(&s->free_slots, (uint32_t)idx);
	return true;
}

/* ---- cluster --------------------------------------------------------------------- */

void kb_cluster_init(kb_cluster *c, const char *scheduler_name, const char *default_queue)
{
	memset(c, 0, sizeof(*c));
	kb_resnames_init(&c->resnames);
	store_init(&c->nodes);
	store_init(&c->pods);
	store_init(&c->podgroups);
	store_init(&c->queues);
	store_init(&c->priority_classes);
	c->scheduler_name = scheduler_name;
	c->default_queue = default_queue;
	kb_snapshot_init(&c->cache);
}

void kb_cluster_release(kb_cluster *c)
{
	kb_snapshot_release(&c->cache);
	store_release(&c->nodes);
	store_release(&c->pods);
	store_release(&c->podgroups);
	store_release(&c->queues);
	store_release(&c->priority_classes);
}

static kb_store *store_of(kb_cluster *c, kb_kind kind)
{
	switch (kind) {
	case KB_KIND_NODE:
		return &c->nodes;
	case KB_KIND_POD:
		return &c->pods;
	case KB_KIND_PODGROUP:
		return &c->podgroups;
	case KB_KIND_QUEUE:
		return &c->queues;
	case KB_KIND_PRIORITY_CLASS:
		return &c->priority_classes;
	default:
		return NULL;
	}
}

int kb_cluster_apply(kb_cluster *c, kb_object *obj, int64_t created_ms)
{
	kb_store *s = store_of(c, obj->kind);
	if (!s) {
		kb_object_free(obj);
		return 0;
	}
	kb_slot *sl;
	bool replaced;
	int r = store_put(s, obj, &sl, &replaced);
	if (r < 0)
		return r;
	if (!replaced) {
		sl->created_ms = obj->meta.creation_ms ? obj->meta.creation_ms : created_ms;
		sl->node_hint = -1;
	}
	c->shape++;
	if (obj->kind == KB_KIND_PODGROUP)
		sl->overridden = false; /* the API's status is the truth again */
	if (obj->kind == KB_KIND_POD && sl->overridden) {
		/* The API has caught up with what we assumed once it shows a node, or
		 * the pod has finished: the object is the truth again. */
		const kb_pod_obj *p = &obj->u.pod;
		if (p->node_name || p->phase == KB_POD_SUCCEEDED || p->phase == KB_POD_FAILED) {
			free(sl->node);
			sl->node = NULL;
			sl->overridden = false;
		}
	}
	c->generation++;
	return 0;
}

bool kb_cluster_delete(kb_cluster *c, kb_kind kind, const char *key)
{
	kb_store *s = store_of(c, kind);
	if (!s || !store_del(s, key))
		return false;
	c->shape++;
	c->generation++;
	return true;
}

kb_slot *kb_cluster_pod(kb_cluster *c, const char *key)
{
	return store_get(&c->pods, key);
}

int kb_cluster_set_pod(kb_cluster *c, const char *key, const char *node, kb_task_status st,
		       int64_t started_ms, uint32_t gpu_mask)
{
	kb_slot *sl = store_get(&c->pods, key);
	if (!sl)
		return -ENOENT;
	char *copy = NULL;
	if (node && !(copy = strdup(node)))
		return -ENOMEM;
	free(sl->node);
	sl->node = copy;
	sl->overridden = true;
	sl->status = st;
	sl->started_ms = started_ms;
	sl->gpu_mask = gpu_mask;
	c->generation++;
	return 0;
}

int kb_cluster_note_eviction(kb_cluster *c, const char *key, int64_t now_ms)
{
	kb_slot *sl = store_get(&c->pods, key);
	if (!sl)
		return -ENOENT;
	sl->evicted_ms = now_ms;
	c->generation++;
	return 0;
}

int kb_cluster_set_podgroup_phase(kb_cluster *c, const char *key, kb_pg_phase phase)
{
	kb_slot *sl = store_get(&c->podgroups, key);
	if (!sl)
		return -ENOENT;
	if (!sl->overridden || sl->pg_phase != phase) {
		sl->overridden = true;
		sl->pg_phase = phase;
		c->generation++;
	}
	return 0;
}

/* ---- snapshot -------------------------------------------------------------------- */

static int cmp_node_name(const void *a, const void *b)
{
	return strcmp(((const kb_node *)a)->name, ((const kb_node *)b)->name);
}

static int cmp_queue_name(const void *a, const void *b)
{
	return strcmp(((const kb_queue *)a)->name, ((const kb_queue *)b)->name);
}

static int cmp_job_key(const void *a, const void *b)
{
	return strcmp(((const kb_job *)a)->key, ((const kb_job *)b)->key);
}

/* Tasks sort by key so the array is deterministic. */
static int cmp_task_key(const void *a, const void *b)
{
	return strcmp(((const kb_task *)a)->key, ((const kb_task *)b)->key);
}

typedef struct job_task_ref {
	uint32_t job, task;
	int64_t creation_ms;
	const char *key;
} job_task_ref;

static int cmp_job_task_ref(const void *a, const void *b)
{
	const job_task_ref *x = a, *y = b;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	if (x->creation_ms != y->creation_ms)
		return x->creation_ms < y->creation_ms ? -1 : 1;
	return strcmp(x->key, y->key);
}

static kb_task_status status_of_pod(const kb_pod_obj *p, bool deleting)
{
	if (p->phase == KB_POD_SUCCEEDED)
		return KB_TASK_SUCCEEDED;
	if (p->phase == KB_POD_FAILED)
		return KB_TASK_FAILED;
	if (deleting && p->node_name)
		return KB_TASK_RELEASING;
	if (!p->node_name)
		return KB_TASK_PENDING;
	if (p->phase == KB_POD_RUNNING)
		return KB_TASK_RUNNING;
	if (p->phase == KB_POD_UNKNOWN)
		return KB_TASK_UNKNOWN;
	return KB_TASK_BOUND;
}

typedef struct prio_table {
	const kb_cluster *c;
	bool has_default;
	int32_t default_value;
} prio_table;

static bool priority_class_value(const prio_table *pt, const char *name, int32_t *ret)
{
	if (!name)
		return false;
	const kb_slot *sl = store_get(&pt->c->priority_classes, name);
	if (!sl)
		return false;
	*ret = sl->obj->u.priority_class.value;
	return true;
}

static int32_t pod_priority(const prio_table *pt, const kb_pod_obj *p)
{
	int32_t v;
	if (p->has_priority)
		return p->priority;
	if (priority_class_value(pt, p->priority_class_name, &v))
		return v;
	return pt->has_default ? pt->default_value : 0;
}

static bool is_critical(const kb_object *o, const kb_pod_obj *p)
{
	if (strcmp(o->meta.ns, "kube-system") == 0)
		return true;
	return p->priority_class_name && (strcmp(p->priority_class_name, "system-cluster-critical") == 0 ||
					  strcmp(p->priority_class_name, "system-node-critical") == 0);
}

static void queue_from_obj(kb_queue *q, const char *name, const kb_queue_obj *qo, int64_t created)
{
	memset(q, 0, sizeof(*q));
	q->name = name;
	q->weight = qo->weight > 0 ? qo->weight : 1;
	q->parent = -1;
	q->state = qo->state;
	q->reclaimable = qo->reclaimable;
	q->capability_mask = qo->capability_mask;
	q->capability = qo->capability;
	q->guarantee = qo->guarantee;
	q->creation_ms = created;
}

/* Queues: the queue file's definitions, then Queue objects (an object of the
 * same name as a file queue is ignored: the file wins, see queue/README.md),
 * then an implicit default queue if nobody defined it. Sorted by name. */
static int build_queues(const kb_cluster *c, kb_snapshot *s, const char ***ret_parents)
{
	uint32_t ndefs = c->queue_conf ? c->queue_conf->nqueues : 0;
	size_t cap = ndefs + c->queues.slots.n + 1;
	s->queues = kb_arena_calloc(&s->arena, cap, sizeof(kb_queue));
	const char **parents = kb_arena_calloc(&s->arena, cap, sizeof(char *));
	if (!s->queues || !parents)
		return -ENOMEM;
	uint32_t n = 0;
	kb_strmap seen;
	kb_strmap_init(&seen);
	int r = 0;
	for (uint32_t i = 0; i < ndefs; i++) {
		const kb_queue_def *d = &c->queue_conf->queues[i];
		kb_queue_obj qo = {
			.weight = d->weight,
			.capability_mask = d->capability_mask,
			.capability = d->capability,
			.guarantee = d->guarantee,
			.reclaimable = d->reclaimable,
			.state = d->state,
			.parent = d->parent,
		};
		queue_from_obj(&s->queues[n], d->name, &qo, 0);
		parents[n] = d->parent;
		if ((r = kb_strmap_put(&seen, d->name, n)) < 0)
			goto out;
		n++;
	}
	for (size_t i = 0; i < c->queues.slots.n; i++) {
		const kb_slot *sl = &c->queues.slots.v[i];
		if (!sl->obj || kb_strmap_get(&seen, sl->obj->meta.name, NULL))
			continue;
		queue_from_obj(&s->queues[n], sl->obj->meta.name, &sl->obj->u.queue, sl->created_ms);
		parents[n] = sl->obj->u.queue.parent;
		if ((r = kb_strmap_put(&seen, sl->obj->meta.name, n)) < 0)
			goto out;
		n++;
	}
	if (!kb_strmap_get(&seen, c->default_queue, NULL)) {
		kb_queue_obj dq = {.weight = 1, .reclaimable = true};
		queue_from_obj(&s->queues[n], c->default_queue, &dq, 0);
		parents[n] = NULL;
		n++;
	}
	/* Sort queues and parents together: sort an index permutation. */
	kb_queue *tmp = kb_arena_calloc(&s->arena, n, sizeof(kb_queue));
	const char **tmpp = kb_arena_calloc(&s->arena, n ? n : 1, sizeof(char *));
	if (!tmp || !tmpp) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		tmp[i] = s->queues[i];
		tmp[i].parent = (int32_t)i; /* remember the original index */
	}
	qsort(tmp, n, sizeof(kb_queue), cmp_queue_name);
	for (uint32_t i = 0; i < n; i++) {
		tmpp[i] = parents[tmp[i].parent];
		tmp[i].parent = -1;
	}
	memcpy(s->queues, tmp, n * sizeof(kb_queue));
	s->nqueues = n;
	*ret_parents = tmpp;
out:
	kb_strmap_release(&seen);
	return r;
}

/* The fields of task t that change without a new object: where it is, its
 * status, and the scheduler's own records (start, eviction, devices). The
 * snapshot's nodes must be in place. */
static void task_refresh(kb_snapshot *s, kb_task *t, kb_slot *sl)
{
	const kb_object *o = sl->obj;
	const kb_pod_obj *p = &o->u.pod;
	const char *node = sl->overridden ? sl->node : p->node_name;
	kb_task_status st = sl->overridden ? sl->status : status_of_pod(p, o->meta.deleting);
	t->status = st;
	t->started_ms = sl->started_ms;
	t->evicted_ms = sl->evicted_ms;
	t->gpu_mask = 0;
	if (sl->overridden) {
		t->gpu_mask = sl->gpu_mask;
	} else {
		for (uint32_t k = 0; k < p->ngpu_devices; k++)
			if (p->gpu_devices[k] < 32)
				t->gpu_mask |= 1u << p->gpu_devices[k];
	}
	t->node = -1;
	if (node) {
		int32_t h = sl->node_hint;
		if (h >= 0 && (uint32_t)h < s->nnodes && strcmp(s->nodes[h].name, node) == 0)
			t->node = h;
		else
			t->node = sl->node_hint = kb_snapshot_find_node(s, node);
	}
	if (t->node < 0 && kb_task_status_on_node(st)) {
		/* Bound to a node we do not know (yet): it holds nothing we
		 * track, and must not be scheduled again. */
		t->status = KB_TASK_UNKNOWN;
	}
}

void kb_cluster_queue_conf_changed(kb_cluster *c)
{
	c->shape++;
	c->generation++;
}

/* Copies src's arrays and scalars into dst (initialised, empty), in dst's
 * arena. Strings stay shared, except a job's invalid reason, which a build
 * allocates in its own arena: dst gets its own copy. 0 or -ENOMEM. */
static int copy_arrays(kb_snapshot *dst, const kb_snapshot *src)
{
	dst->resnames = src->resnames;
	dst->default_queue = src->default_queue;
	dst->gpu_res = src->gpu_res;
	dst->total_allocatable = src->total_allocatable;
	dst->nnodes = src->nnodes;
	dst->ntasks = src->ntasks;
	dst->njobs = src->njobs;
	dst->nqueues = src->nqueues;
	uint32_t njt = 0;
	for (uint32_t i = 0; i < src->njobs; i++)
		njt += src->jobs[i].ntasks;
	dst->nodes = kb_arena_calloc(&dst->arena, src->nnodes + 1, sizeof(kb_node));
	dst->tasks = kb_arena_calloc(&dst->arena, src->ntasks + 1, sizeof(kb_task));
	dst->jobs = kb_arena_calloc(&dst->arena, src->njobs + 1, sizeof(kb_job));
	dst->queues = kb_arena_calloc(&dst->arena, src->nqueues + 1, sizeof(kb_queue));
	dst->job_tasks = kb_arena_calloc(&dst->arena, njt + 1, sizeof(uint32_t));
	if (!dst->nodes || !dst->tasks || !dst->jobs || !dst->queues || !dst->job_tasks)
		return -ENOMEM;
	memcpy(dst->nodes, src->nodes, src->nnodes * sizeof(kb_node));
	memcpy(dst->tasks, src->tasks, src->ntasks * sizeof(kb_task));
	memcpy(dst->jobs, src->jobs, src->njobs * sizeof(kb_job));
	memcpy(dst->queues, src->queues, src->nqueues * sizeof(kb_queue));
	memcpy(dst->job_tasks, src->job_tasks, njt * sizeof(uint32_t));
	for (uint32_t i = 0; i < src->njobs; i++)
		if (src->jobs[i].invalid &&
		    !(dst->jobs[i].invalid = kb_arena_strdup(&dst->arena, src->jobs[i].invalid)))
			return -ENOMEM;
	return 0;
}

/* Keeps a copy of a fresh full build (before any session touched it). */
static int cache_store(kb_cluster *c, const kb_snapshot *s)
{
	c->cache_valid = false;
	kb_snapshot_release(&c->cache);
	kb_snapshot_init(&c->cache);
	int r = copy_arrays(&c->cache, s);
	if (r < 0)
		return r;
	c->cache_shape = c->shape;
	c->cache_valid = true;
	return 0;
}

/* A snapshot from the cache: the last full build, refreshed. */
static int cache_copy(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	if (copy_arrays(s, &c->cache) < 0)
		return kb_err_set(err, -ENOMEM, "building the snapshot: out of memory");
	for (uint32_t i = 0; i < s->ntasks; i++)
		task_refresh(s, &s->tasks[i], &c->pods.slots.v[s->tasks[i].cache_slot]);
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->cache_slot == UINT32_MAX)
			continue;
		const kb_slot *sl = &c->podgroups.slots.v[j->cache_slot];
		j->phase = sl->overridden ? sl->pg_phase : sl->obj->u.podgroup.phase;
	}
	kb_snapshot_derive(s);
	return 0;
}

static int snapshot_build(kb_cluster *c, kb_snapshot *s, kb_err *err);

int kb_cluster_snapshot(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	if (c->cache_valid && c->cache_shape == c->shape)
		return cache_copy(c, s, err);
	int r = snapshot_build(c, s, err);
	if (r == 0 && cache_store(c, s) < 0)
		c->cache_valid = false; /* out of memory for the cache: build next time */
	return r;
}

static int snapshot_build(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	int r = -ENOMEM;
	s->resnames = c->resnames;
	s->gpu_res = kb_resnames_find(&c->resnames, KB_RES_GPU_NAME);

	/* Priority classes: the global default, if any (the highest value wins a tie,
	 * then the name, so the choice is deterministic). */
	prio_table pt = {.c = c};
	const char *default_pc = NULL;
	for (size_t i = 0; i < c->priority_classes.slots.n; i++) {
		const kb_slot *sl = &c->priority_classes.slots.v[i];
		if (!sl->obj || !sl->obj->u.priority_class.global_default)
			continue;
		int32_t v = sl->obj->u.priority_class.value;
		if (!pt.has_default || v > pt.default_value ||
		    (v == pt.default_value && strcmp(sl->obj->meta.name, default_pc) < 0)) {
			pt.has_default = true;
			pt.default_value = v;
			default_pc = sl->obj->meta.name;
		}
	}

	/* Nodes. */
	s->nodes = kb_arena_calloc(&s->arena, c->nodes.slots.n ? c->nodes.slots.n : 1, sizeof(kb_node));
	if (!s->nodes)
		goto fail;
	for (size_t i = 0; i < c->nodes.slots.n; i++) {
		const kb_slot *sl = &c->nodes.slots.v[i];
		if (!sl->obj)
			continue;
		const kb_object *o = sl->obj;
		kb_node *n = &s->nodes[s->nnodes++];
		n->name = o->meta.name;
		n->labels = o->meta.labels;
		n->taints = o->u.node.taints;
		n->ntaints = o->u.node.ntaints;
		n->unschedulable = o->u.node.unschedulable;
		n->ready = o->u.node.ready && !o->meta.deleting;
		n->allocatable = o->u.node.allocatable;
		n->ngpus = o->u.node.ngpus;
		n->gpu_model = o->u.node.gpu_model;
		n->gpu_group = o->u.node.gpu_group;
	}
	qsort(s->nodes, s->nnodes, sizeof(kb_node), cmp_node_name);

	/* Queues. */
	const char **parents = NULL;
	if ((r = build_queues(c, s, &parents)) < 0)
		goto fail;
	for (uint32_t i = 0; i < s->nqueues; i++)
		s->queues[i].parent = parents[i] ? kb_snapshot_find_queue(s, parents[i]) : -1;
	s->default_queue = kb_snapshot_find_queue(s, c->default_queue);

	/* Jobs: one per PodGroup, one per lone pod of ours. */
	r = -ENOMEM;
	size_t maxjobs = c->podgroups.slots.n + c->pods.slots.n + 1;
	s->jobs = kb_arena_calloc(&s->arena, maxjobs, sizeof(kb_job));
	s->tasks = kb_arena_calloc(&s->arena, c->pods.slots.n ? c->pods.slots.n : 1, sizeof(kb_task));
	if (!s->jobs || !s->tasks)
		goto fail;
	for (size_t i = 0; i < c->podgroups.slots.n; i++) {
		const kb_slot *sl = &c->podgroups.slots.v[i];
		if (!sl->obj)
			continue;
		const kb_object *o = sl->obj;
		const kb_podgroup_obj *pg = &o->u.podgroup;
		kb_job *j = &s->jobs[s->njobs++];
		j->uid = o->meta.uid;
		j->ns = o->meta.ns;
		j->name = o->meta.name;
		j->key = o->meta.key;
		j->cache_slot = (uint32_t)i;
		j->flavor = pg->flavor;
		j->min_member = pg->min_member;
		j->creation_ms = sl->created_ms;
		j->phase = sl->overridden ? sl->pg_phase : pg->phase;
		j->has_min_resources = pg->has_min_resources;
		j->min_resources = pg->min_resources;
		j->priority = INT32_MIN; /* resolved below */
		int32_t v;
		if (priority_class_value(&pt, pg->priority_class_name, &v))
			j->priority = v;
		const char *qname = pg->queue;
		if (!qname && c->queue_conf)
			qname = kb_queue_conf_ns_queue(c->queue_conf, o->meta.ns);
		if (!qname)
			qname = c->default_queue;
		j->queue = -2; /* resolved after sorting */
		j->pending_reason = qname; /* borrowed slot: the queue name until resolved */
	}

	/* Tasks. */
	for (size_t i = 0; i < c->pods.slots.n; i++) {
		kb_slot *sl = &c->pods.slots.v[i];
		if (!sl->obj)
			continue;
		const kb_object *o = sl->obj;
		const kb_pod_obj *p = &o->u.pod;
		bool ours = strcmp(p->scheduler_name, c->scheduler_name) == 0;
		if (!ours && !(sl->overridden ? sl->node : p->node_name))
			continue; /* another scheduler's pending pod: not our business */
		kb_task *t = &s->tasks[s->ntasks++];
		t->uid = o->meta.uid;
		t->ns = o->meta.ns;
		t->name = o->meta.name;
		t->key = o->meta.key;
		t->job = -1;
		t->priority = pod_priority(&pt, p);
		t->creation_ms = sl->created_ms;
		t->req = p->req;
		t->best_effort = p->best_effort;
		t->foreign = !ours;
		t->critical = is_critical(o, p);
		t->spec = &p->spec;
		t->cache_slot = (uint32_t)i;
		task_refresh(s, t, sl);
		if (!ours)
			continue;
		/* Lone pods become jobs of one; grouped pods find their job below. */
		if (!p->group_name) {
			kb_job *j = &s->jobs[s->njobs++];
			j->uid = o->meta.uid;
			j->ns = o->meta.ns;
			j->name = o->meta.name;
			j->key = o->meta.key;
			j->cache_slot = UINT32_MAX;
			j->flavor = KB_PG_NONE;
			j->min_member = 1;
			j->creation_ms = sl->created_ms;
			j->phase = KB_PG_PENDING;
			j->priority = t->priority;
			const char *qname =
				c->queue_conf ? kb_queue_conf_ns_queue(c->queue_conf, o->meta.ns) : NULL;
			j->queue = -2;
			j->pending_reason = qname ? qname : c->default_queue;
		}
	}
	qsort(s->tasks, s->ntasks, sizeof(kb_task), cmp_task_key);

	/* Group keys of grouped pods; a pod naming a PodGroup that does not exist
	 * (yet) gets a job that says so, and waits. */
	const char **gkeys = kb_arena_calloc(&s->arena, s->ntasks ? s->ntasks : 1, sizeof(char *));
	kb_strmap jobkeys;
	kb_strmap_init(&jobkeys);
	if (!gkeys)
		goto fail;
	for (uint32_t i = 0; i < s->njobs; i++)
		if (kb_strmap_put(&jobkeys, s->jobs[i].key, i) < 0)
			goto fail_map;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		kb_task *t = &s->tasks[i];
		if (t->foreign)
			continue;
		const kb_pod_obj *p = &store_get(&c->pods, t->key)->obj->u.pod;
		if (!p->group_name)
			continue;
		gkeys[i] = p->group_key;
		if (kb_strmap_get(&jobkeys, gkeys[i], NULL))
			continue;
		kb_job *j = &s->jobs[s->njobs];
		j->uid = gkeys[i];
		j->ns = t->ns;
		j->name = p->group_name;
		j->key = gkeys[i];
		j->cache_slot = UINT32_MAX;
		j->flavor = KB_PG_NONE;
		j->min_member = 1;
		j->creation_ms = t->creation_ms;
		j->priority = t->priority;
		j->queue = -2;
		j->pending_reason = c->default_queue;
		j->invalid = kb_arena_printf(&s->arena, "PodGroup \"%s\" not found", gkeys[i]);
		if (kb_strmap_put(&jobkeys, gkeys[i], s->njobs) < 0)
			goto fail_map;
		s->njobs++;
	}
	kb_strmap_release(&jobkeys);
	qsort(s->jobs, s->njobs, sizeof(kb_job), cmp_job_key);
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		const char *qname = j->pending_reason;
		j->pending_reason = NULL;
		j->queue = kb_snapshot_find_queue(s, qname);
		if (j->queue < 0 && !j->invalid)
			j->invalid = kb_arena_printf(&s->arena, "queue \"%s\" not found", qname);
	}

	/* Link tasks to jobs, and list each job's tasks by creation, then name. */
	job_task_ref *refs = kb_arena_calloc(&s->arena, s->ntasks ? s->ntasks : 1, sizeof(*refs));
	if (!refs)
		goto fail;
	uint32_t nrefs = 0;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		kb_task *t = &s->tasks[i];
		if (t->foreign)
			continue;
		t->job = kb_snapshot_find_job(s, gkeys[i] ? gkeys[i] : t->key);
		refs[nrefs++] = (job_task_ref){(uint32_t)t->job, i, t->creation_ms, t->key};
	}
	qsort(refs, nrefs, sizeof(*refs), cmp_job_task_ref);
	s->job_tasks = kb_arena_calloc(&s->arena, nrefs ? nrefs : 1, sizeof(uint32_t));
	if (!s->job_tasks)
		goto fail;
	for (uint32_t k = 0; k < nrefs; k++) {
		s->job_tasks[k] = refs[k].task;
		kb_job *j = &s->jobs[refs[k].job];
		if (j->ntasks == 0)
			j->first_task = k;
		j->ntasks++;
	}
	/* Job priority: its PodGroup's class, else the highest of its tasks. */
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->priority != INT32_MIN)
			continue;
		j->priority = pt.has_default ? pt.default_value : 0;
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
			if (k == 0 || t->priority > j->priority)
				j->priority = t->priority;
		}
	}
	kb_snapshot_derive(s);
	return 0;
fail_map:
	kb_strmap_release(&jobkeys);
fail:
	return kb_err_set(err, r < 0 ? r : -ENOMEM, "building the snapshot: out of memory");
}

#include "cache/cluster.h"

#include "cache/volumes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/pod_spec.h"

/* ---- stores ---------------------------------------------------------------------- */

static void store_init(kb_store *s)
{
	*s = (kb_store){0};
	kb_strmap_init(&s->by_key);
}

/* Frees an object the store of s held, unless the store borrows its
 * objects (kb_cluster_share_copy). */
static void obj_drop(const kb_store *s, kb_object *o)
{
	if (!s->borrowed)
		kb_object_free(o);
}

static void slot_clear(const kb_store *s, kb_slot *sl)
{
	obj_drop(s, sl->obj);
	free(sl->node);
	memset(sl, 0, sizeof(*sl));
}

static void store_release(kb_store *s)
{
	for (size_t i = 0; i < s->slots.n; i++)
		slot_clear(s, &s->slots.v[i]);
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
 * *ret_slot is its slot and *ret_old the object it replaced (the caller's
 * now), or NULL. */
static int store_put(kb_store *s, kb_object *obj, kb_slot **ret_slot, kb_object **ret_old)
{
	int64_t idx;
	*ret_old = NULL;
	if (kb_strmap_get(&s->by_key, obj->meta.key, &idx)) {
		kb_slot *sl = &s->slots.v[idx];
		/* The map borrows the key string from the object: re-key first. */
		kb_strmap_del(&s->by_key, sl->obj->meta.key);
		kb_object *old = sl->obj;
		sl->obj = obj;
		int r = kb_strmap_put(&s->by_key, obj->meta.key, idx);
		if (r < 0) {
			obj_drop(s, old);
			slot_clear(s, sl);
			KB_VEC_PUSH(&s->free_slots, (uint32_t)idx);
			return r;
		}
		*ret_slot = sl;
		*ret_old = old;
		return 0;
	}
	if (s->free_slots.n) {
		idx = s->free_slots.v[--s->free_slots.n];
	} else {
		kb_slot empty = {0};
		if (KB_VEC_PUSH(&s->slots, empty) < 0) {
			obj_drop(s, obj);
			return -ENOMEM;
		}
		idx = (int64_t)s->slots.n - 1;
	}
	kb_slot *sl = &s->slots.v[idx];
	memset(sl, 0, sizeof(*sl));
	sl->obj = obj;
	int r = kb_strmap_put(&s->by_key, obj->meta.key, idx);
	if (r < 0) {
		slot_clear(s, sl);
		KB_VEC_PUSH(&s->free_slots, (uint32_t)idx);
		return r;
	}
	*ret_slot = sl;
	return 0;
}

static bool store_del(kb_store *s, const char *key)
{
	int64_t idx;
	if (!kb_strmap_get(&s->by_key, key, &idx))
		return false;
	kb_strmap_del(&s->by_key, key);
	slot_clear(s, &s->slots.v[idx]);
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
	store_init(&c->namespaces);
	store_init(&c->workloads);
	store_init(&c->pvcs);
	store_init(&c->pvs);
	store_init(&c->storage_classes);
	store_init(&c->csi_nodes);
	store_init(&c->volume_attachments);
	store_init(&c->csi_drivers);
	store_init(&c->storage_capacities);
	kb_arena_init(&c->vol_arena);
	c->scheduler_names[0] = scheduler_name;
	c->nscheduler_names = 1;
	c->default_queue = default_queue;
	kb_arena_init(&c->cache.arena);
	kb_snapshot_init(&c->live);
}

static kb_store *store_of(kb_cluster *c, kb_kind kind);
static bool forget_unreadable(kb_cluster *c, const char *key);

/* Applies every object of src's store `from` to c (borrowed), with the
 * overrides of its slots. 0 or -ENOMEM. */
static int share_store(kb_cluster *c, const kb_store *from)
{
	for (size_t i = 0; i < from->slots.n; i++) {
		const kb_slot *f = &from->slots.v[i];
		if (!f->obj)
			continue;
		int r = kb_cluster_apply(c, f->obj, f->created_ms);
		if (r < 0)
			return r;
		kb_store *s = store_of(c, f->obj->kind);
		kb_slot *sl = store_get(s, f->obj->meta.key);
		if (!sl)
			return -ENOMEM; /* cannot happen: just applied */
		char *node = f->node ? strdup(f->node) : NULL;
		if (f->node && !node)
			return -ENOMEM;
		free(sl->node);
		*sl = *f;
		sl->node = node;
		sl->node_hint = -1;
	}
	return 0;
}

int kb_cluster_share_copy(kb_cluster *ret, const kb_cluster *src)
{
	kb_cluster_init(ret, src->scheduler_names[0], src->default_queue);
	for (uint32_t i = 0; i < src->nscheduler_names; i++)
		ret->scheduler_names[i] = src->scheduler_names[i];
	ret->nscheduler_names = src->nscheduler_names;
	ret->resnames = src->resnames;
	ret->queue_conf = src->queue_conf;
	const kb_store *from[] = {&src->nodes, &src->pods, &src->podgroups, &src->queues,
				  &src->priority_classes, &src->workloads, &src->namespaces,
				  &src->pvcs, &src->pvs, &src->storage_classes,
				  &src->csi_nodes, &src->volume_attachments,
				  &src->csi_drivers, &src->storage_capacities};
	kb_store *to[] = {&ret->nodes, &ret->pods, &ret->podgroups, &ret->queues,
			  &ret->priority_classes, &ret->workloads, &ret->namespaces,
			  &ret->pvcs, &ret->pvs, &ret->storage_classes,
			  &ret->csi_nodes, &ret->volume_attachments,
			  &ret->csi_drivers, &ret->storage_capacities};
	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++)
		to[i]->borrowed = true;
	int r = 0;
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]) && r == 0; i++)
		r = share_store(ret, from[i]);
	for (size_t i = 0; i < src->unreadable.n && r >= 0; i++)
		r = kb_cluster_note_unreadable_pod(ret, src->unreadable.v[i].key,
						   src->unreadable.v[i].node);
	if (r < 0)
		kb_cluster_release(ret);
	return r;
}

int kb_cluster_add_scheduler_name(kb_cluster *c, const char *name)
{
	if (kb_cluster_name_is_ours(c, name))
		return 0;
	if (c->nscheduler_names == KB_MAX_SCHEDULER_NAMES)
		return -E2BIG;
	c->scheduler_names[c->nscheduler_names++] = name;
	return 0;
}

bool kb_cluster_name_is_ours(const kb_cluster *c, const char *name)
{
	for (uint32_t i = 0; i < c->nscheduler_names; i++)
		if (strcmp(name, c->scheduler_names[i]) == 0)
			return true;
	return false;
}

void kb_cluster_release(kb_cluster *c)
{
	kb_snapshot_release(&c->live);
	free(c->live_task_of_slot);
	KB_VEC_RELEASE(&c->live_dirty);
	kb_arena_release(&c->cache.arena);
	for (size_t i = 0; i < c->retired.n; i++)
		obj_drop(&c->pods, c->retired.v[i]);
	KB_VEC_RELEASE(&c->retired);
	store_release(&c->nodes);
	store_release(&c->pods);
	store_release(&c->podgroups);
	store_release(&c->queues);
	store_release(&c->priority_classes);
	store_release(&c->namespaces);
	store_release(&c->workloads);
	store_release(&c->pvcs);
	store_release(&c->pvs);
	store_release(&c->storage_classes);
	store_release(&c->csi_nodes);
	store_release(&c->volume_attachments);
	store_release(&c->csi_drivers);
	store_release(&c->storage_capacities);
	kb_arena_release(&c->vol_arena);
	for (size_t i = 0; i < c->unreadable.n; i++) {
		free(c->unreadable.v[i].key);
		free(c->unreadable.v[i].node);
	}
	KB_VEC_RELEASE(&c->unreadable);
	kb_strmap_release(&c->unreadable_index);
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
	case KB_KIND_WORKLOAD:
		return &c->workloads;
	case KB_KIND_NAMESPACE:
		return &c->namespaces;
	case KB_KIND_PVC:
		return &c->pvcs;
	case KB_KIND_PV:
		return &c->pvs;
	case KB_KIND_STORAGE_CLASS:
		return &c->storage_classes;
	case KB_KIND_CSI_NODE:
		return &c->csi_nodes;
	case KB_KIND_VOLUME_ATTACHMENT:
		return &c->volume_attachments;
	case KB_KIND_CSI_DRIVER:
		return &c->csi_drivers;
	case KB_KIND_STORAGE_CAPACITY:
		return &c->storage_capacities;
	default:
		return NULL;
	}
}

/* The store's shape changes: the cached build and the session snapshot
 * are stale, so nothing reads the retired objects any more. Only a change
 * a session could act on is work (cluster.h). */
static void shape_change(kb_cluster *c, bool work)
{
	c->shape++;
	if (work)
		c->work_generation++;
	for (size_t i = 0; i < c->retired.n; i++)
		obj_drop(&c->pods, c->retired.v[i]);
	c->retired.n = 0;
}

static void live_mark(kb_cluster *c, const kb_slot *sl);

/* Whether pod slot sl is held back from placement: by the scheduler
 * (kb_cluster_hold_pod), or because the API's latest version of it did not
 * decode and it is on no node (a pod on a node stays where it is, as its
 * last good version says). Either way its gang counts it as gated. */
static bool pod_held_back(const kb_slot *sl)
{
	const kb_object *o = sl->obj;
	return o->u.pod.held ||
	       (o->meta.undecodable && (sl->overridden ? sl->node : o->u.pod.node_name) == NULL);
}

/* True when pod slot sl makes a task of the build: ours, or on a node. */
static bool pod_in_build(const kb_cluster *c, const kb_slot *sl)
{
	const kb_pod_obj *p = &sl->obj->u.pod;
	return (kb_cluster_name_is_ours(c, p->scheduler_name) && !p->gated && !pod_held_back(sl)) ||
	       (sl->overridden ? sl->node : p->node_name) != NULL;
}

/* Whether replacing old by the object now in slot sl leaves the build as it
 * was but for what a refresh brings up to date (a pod's place and status,
 * a PodGroup's phase), or exactly as it was (a node's heartbeat). */
static bool replaced_in_place(const kb_cluster *c, const kb_slot *sl, const kb_object *old,
			      bool was_in_build)
{
	switch (old->kind) {
	case KB_KIND_POD:
		return kb_pod_same_build(old, sl->obj) && pod_in_build(c, sl) == was_in_build;
	case KB_KIND_PODGROUP:
		return kb_podgroup_same_build(old, sl->obj);
	case KB_KIND_NODE:
		return kb_node_same_build(old, sl->obj);
	case KB_KIND_NAMESPACE:
		return kb_labels_equal(&old->meta.labels, &sl->obj->meta.labels);
	default:
		return false;
	}
}

static kb_task_status status_of_pod(const kb_pod_obj *p, bool deleting);

/* A pod slot's status as a snapshot would show it. */
static kb_task_status slot_status(const kb_slot *sl)
{
	return sl->overridden ? sl->status
			      : status_of_pod(&sl->obj->u.pod, sl->obj->meta.deleting);
}

/* Whether a pod refreshed in place from status `from` to `to` may give a
 * session new work: it left its node, is being deleted or finished (its
 * resources free up). Going onto a node (a binding echoed, a kubelet's
 * Running) and updates that keep the status do not. */
static bool refresh_makes_work(kb_task_status from, kb_task_status to)
{
	return from != to && to != KB_TASK_BINDING && to != KB_TASK_BOUND &&
	       to != KB_TASK_RUNNING;
}

static bool volume_kind(kb_kind k)
{
	return k == KB_KIND_PVC || k == KB_KIND_PV || k == KB_KIND_STORAGE_CLASS ||
	       k == KB_KIND_CSI_NODE || k == KB_KIND_VOLUME_ATTACHMENT || k == KB_KIND_CSI_DRIVER ||
	       k == KB_KIND_STORAGE_CAPACITY;
}

/* Whether the object now in volume slot sl shows what the scheduler
 * assumed of it (kb_cluster_assume_*), as a pod's slot is caught up once
 * the API shows it on a node: a claim with a selected node or bound, a
 * volume with a claimRef. Until then an update (a status change, a label)
 * leaves the assumption in force; a failed write ends it
 * (kb_cluster_forget_volume_assumption). */
static bool volume_caught_up(const kb_slot *sl)
{
	const kb_object *o = sl->obj;
	if (o->kind == KB_KIND_PV)
		return o->u.pv.claim_key != NULL;
	if (o->kind != KB_KIND_PVC)
		return true;
	const kb_pvc_obj *pvc = &o->u.pvc;
	bool bound = pvc->volume_name && pvc->bind_completed;
	return sl->status == KB_TASK_BOUND ? bound : bound || pvc->selected_node != NULL;
}

/* A volume object added or replaced: no build reads it (cache/volumes.c
 * reads the store for each session), so only the generations move. An
 * assumption of ours stays until the API's object shows it. */
static int apply_volume(kb_cluster *c, kb_store *s, kb_object *obj)
{
	kb_slot *sl;
	kb_object *old;
	int r = store_put(s, obj, &sl, &old);
	c->generation++;
	c->work_generation++;
	if (r < 0)
		return r;
	if (sl->overridden && volume_caught_up(sl)) {
		free(sl->node);
		sl->node = NULL;
		sl->overridden = false;
		sl->status = KB_TASK_PENDING;
	}
	obj_drop(s, old);
	return 0;
}

int kb_cluster_apply(kb_cluster *c, kb_object *obj, int64_t created_ms)
{
	kb_store *s = store_of(c, obj->kind);
	if (!s) {
		kb_object_free(obj);
		return 0;
	}
	if (volume_kind(obj->kind))
		return apply_volume(c, s, obj);
	if (obj->kind == KB_KIND_POD)
		forget_unreadable(c, obj->meta.key);
	const kb_slot *prev = obj->kind == KB_KIND_POD ? store_get(s, obj->meta.key) : NULL;
	/* Pods whose volumes use claims: counted so that sessions of clusters
	 * without any skip the volume pass. */
	if (obj->kind == KB_KIND_POD)
		c->claim_pods += (obj->u.pod.nclaims > 0) - (prev && prev->obj->u.pod.nclaims > 0);
	bool was_in_build = prev && pod_in_build(c, prev);
	if (prev && prev->obj->u.pod.held)
		obj->u.pod.held = true; /* until kb_cluster_hold_pod releases it */
	kb_task_status was_status = prev ? slot_status(prev) : KB_TASK_PENDING;
	kb_slot *sl;
	kb_object *old;
	int r = store_put(s, obj, &sl, &old);
	if (r < 0) {
		shape_change(c, true);
		c->generation++;
		return r;
	}
	if (!old) {
		sl->created_ms = obj->meta.creation_ms ? obj->meta.creation_ms : created_ms;
		sl->node_hint = -1;
	}
	if (obj->kind == KB_KIND_PODGROUP)
		sl->overridden = false; /* the API's status is the truth again */
	if (obj->kind == KB_KIND_POD && sl->overridden) {
		/* The API has caught up with what we assumed once it shows the pod
		 * on a node (a binding) or being deleted (an eviction; an update
		 * from before it, still on its node, must not undo it), or the pod
		 * has finished: the object is the truth again. */
		const kb_pod_obj *p = &obj->u.pod;
		bool caught_up = sl->status == KB_TASK_RELEASING ? obj->meta.deleting
								 : p->node_name != NULL;
		if (caught_up || p->phase == KB_POD_SUCCEEDED || p->phase == KB_POD_FAILED) {
			free(sl->node);
			sl->node = NULL;
			sl->overridden = false;
		}
	}
	c->generation++;
	/* An object replaced by one that builds the same (most updates: a
	 * binding echoed, a status change) is refreshed in place: the cached
	 * build and the session snapshot still point into the old object, so
	 * it is kept (retired) until the shape next changes. A bounded number
	 * are kept; past that the shape changes, which frees them. */
	bool in_place = old && replaced_in_place(c, sl, old, was_in_build);
	bool work = !in_place || (obj->kind == KB_KIND_POD &&
				  refresh_makes_work(was_status, slot_status(sl)));
	if (in_place && c->retired.n < c->pods.slots.n / 16 + 64 &&
	    KB_VEC_PUSH(&c->retired, old) == 0) {
		if (obj->kind == KB_KIND_POD)
			live_mark(c, sl);
		else if (obj->kind == KB_KIND_PODGROUP)
			c->live_pg_dirty = true;
		/* A node that builds the same leaves nothing to refresh. */
		if (work)
			c->work_generation++;
		return 0;
	}
	/* Not in place, or too many retired: the next session builds afresh,
	 * but an update that could have been refreshed in place (a burst of
	 * binding echoes) still makes no work. */
	shape_change(c, work);
	obj_drop(s, old);
	return 0;
}

int kb_cluster_hold_pod(kb_cluster *c, const char *key, bool held)
{
	kb_slot *sl = store_get(&c->pods, key);
	if (!sl)
		return -ENOENT;
	if (sl->obj->u.pod.held == held)
		return 0;
	/* The cached build and the session snapshot read this flag: the next
	 * snapshot is a full build. */
	sl->obj->u.pod.held = held;
	shape_change(c, true);
	c->generation++;
	return 0;
}

/* Removes the note of an unreadable pod: it decoded or is gone. Returns
 * whether there was one. */
static bool forget_unreadable(kb_cluster *c, const char *key)
{
	int64_t i;
	if (c->unreadable.n == 0 || !kb_strmap_get(&c->unreadable_index, key, &i))
		return false;
	kb_unreadable_pod *u = &c->unreadable.v[i];
	(void)kb_strmap_del(&c->unreadable_index, u->key);
	free(u->key);
	free(u->node);
	size_t last = c->unreadable.n - 1;
	if ((size_t)i != last) {
		*u = c->unreadable.v[last];
		/* Replaces the value of a key present: no growth, cannot fail. */
		(void)kb_strmap_put(&c->unreadable_index, u->key, i);
	}
	c->unreadable.n--;
	shape_change(c, true);
	c->generation++;
	return true;
}

int kb_cluster_note_unreadable_pod(kb_cluster *c, const char *key, const char *node)
{
	int64_t i;
	char *n = NULL;
	if (kb_strmap_get(&c->unreadable_index, key, &i)) {
		kb_unreadable_pod *u = &c->unreadable.v[i];
		if (strcmp(u->node, node) == 0)
			return 1;
		if (!(n = strdup(node)))
			return -ENOMEM;
		free(u->node);
		u->node = n;
	} else {
		kb_unreadable_pod u = {.key = strdup(key), .node = strdup(node)};
		if (!u.key || !u.node || KB_VEC_PUSH(&c->unreadable, u) < 0) {
			free(u.key);
			free(u.node);
			return -ENOMEM;
		}
		if (kb_strmap_put(&c->unreadable_index, u.key, (int64_t)c->unreadable.n - 1) < 0) {
			c->unreadable.n--;
			free(u.key);
			free(u.node);
			return -ENOMEM;
		}
	}
	shape_change(c, true);
	c->generation++;
	return 0;
}

int kb_cluster_undecodable_object(kb_cluster *c, kb_kind kind, const char *key,
				  const kb_yaml_node *obj, const char **ret_node)
{
	int r = kb_cluster_mark_undecodable(c, kind, key);
	if (r != -ENOENT || kind != KB_KIND_POD || !obj)
		return r;
	const char *node = kb_yaml_str(kb_yaml_get(kb_yaml_get(obj, "spec"), "nodeName"));
	if (!node || !node[0])
		return -ENOENT;
	if ((r = kb_cluster_note_unreadable_pod(c, key, node)) < 0)
		return r;
	if (ret_node)
		*ret_node = node;
	return r == 0 ? 1 : 2;
}

int kb_cluster_mark_undecodable(kb_cluster *c, kb_kind kind, const char *key)
{
	kb_store *s = store_of(c, kind);
	kb_slot *sl = s ? store_get(s, key) : NULL;
	if (!sl)
		return -ENOENT;
	if (sl->obj->meta.undecodable)
		return 0;
	/* The cached build and the session snapshot read this flag (through
	 * node_fill, pod_held_back, build_podgroup_jobs): a full build. */
	sl->obj->meta.undecodable = true;
	shape_change(c, true);
	c->generation++;
	return 0;
}

bool kb_cluster_undecodable(kb_cluster *c, kb_kind kind, const char *key)
{
	kb_store *s = store_of(c, kind);
	const kb_slot *sl = s ? store_get(s, key) : NULL;
	return sl && sl->obj->meta.undecodable;
}

bool kb_cluster_delete(kb_cluster *c, kb_kind kind, const char *key)
{
	if (kind == KB_KIND_POD && forget_unreadable(c, key))
		return true; /* never stored */
	kb_store *s = store_of(c, kind);
	const kb_slot *sl = s && kind == KB_KIND_POD ? store_get(s, key) : NULL;
	bool had_claims = sl && sl->obj->u.pod.nclaims > 0;
	if (!s || !store_del(s, key))
		return false;
	c->claim_pods -= had_claims;
	if (volume_kind(kind)) {
		c->generation++;
		c->work_generation++;
		return true;
	}
	shape_change(c, true);
	c->generation++;
	return true;
}

/* Sets the override of a volume object's slot: text (copied) and status. */
const kb_slot *kb_cluster_slot(const kb_cluster *c, kb_kind kind, const char *key)
{
	const kb_store *st = store_of((kb_cluster *)c, kind);
	return st ? store_get(st, key) : NULL;
}

static int assume(kb_cluster *c, kb_kind kind, const char *key, const char *text,
		  kb_task_status st)
{
	kb_slot *sl = store_get(store_of(c, kind), key);
	if (!sl)
		return -ENOENT;
	char *t = strdup(text);
	if (!t)
		return -ENOMEM;
	free(sl->node);
	sl->node = t;
	sl->status = st;
	sl->overridden = true;
	c->generation++;
	c->work_generation++;
	return 0;
}

int kb_cluster_assume_selected_node(kb_cluster *c, const char *claim, const char *node)
{
	return assume(c, KB_KIND_PVC, claim, node, KB_TASK_PENDING);
}

int kb_cluster_assume_pv_claim(kb_cluster *c, const char *pv, const char *claim)
{
	return assume(c, KB_KIND_PV, pv, claim, KB_TASK_PENDING);
}

int kb_cluster_assume_claim_bound(kb_cluster *c, const char *claim, const char *pv)
{
	return assume(c, KB_KIND_PVC, claim, pv, KB_TASK_BOUND);
}

int kb_cluster_forget_volume_assumption(kb_cluster *c, kb_kind kind, const char *key)
{
	kb_slot *sl = volume_kind(kind) ? store_get(store_of(c, kind), key) : NULL;
	if (!sl)
		return -ENOENT;
	free(sl->node);
	sl->node = NULL;
	sl->overridden = false;
	sl->status = KB_TASK_PENDING;
	c->generation++;
	c->work_generation++;
	return 0;
}

/* Notes that the scheduler changed pod slot sl, for the session snapshot's
 * next refresh. When too many wait, a rebuild is cheaper: the snapshot is
 * dropped instead. */
static void live_mark(kb_cluster *c, const kb_slot *sl)
{
	if (!c->live_valid)
		return;
	uint32_t slot = (uint32_t)(sl - c->pods.slots.v);
	if (c->live_dirty.n > c->live.ntasks / 4 + 64 || KB_VEC_PUSH(&c->live_dirty, slot) < 0)
		c->live_valid = false;
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
	live_mark(c, sl);
	return 0;
}

int kb_cluster_reset_pod(kb_cluster *c, const char *key)
{
	kb_slot *sl = store_get(&c->pods, key);
	if (!sl)
		return -ENOENT;
	if (!sl->overridden)
		return 0;
	free(sl->node);
	sl->node = NULL;
	sl->overridden = false;
	c->generation++;
	live_mark(c, sl);
	return 0;
}

int kb_cluster_note_eviction(kb_cluster *c, const char *key, int64_t now_ms)
{
	kb_slot *sl = store_get(&c->pods, key);
	if (!sl)
		return -ENOENT;
	sl->evicted_ms = now_ms;
	c->generation++;
	live_mark(c, sl);
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
		c->live_pg_dirty = true;
	}
	return 0;
}

/* ---- snapshot -------------------------------------------------------------------- */

typedef struct node_ref {
	const char *name;
	uint32_t slot;
} node_ref;

static int cmp_node_ref(const void *a, const void *b)
{
	return strcmp(((const node_ref *)a)->name, ((const node_ref *)b)->name);
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

/* preemptionPolicy Never: the pod's own, else its PriorityClass's (the
 * API server's admission copies the class's into the pod; manifests for the
 * simulator may not have been through it). */
static bool pod_preempt_never(const prio_table *pt, const kb_pod_obj *p)
{
	if (p->preemption_policy != KB_PREEMPTION_UNSET)
		return p->preemption_policy == KB_PREEMPTION_NEVER;
	const kb_slot *sl =
		p->priority_class_name ? store_get(&pt->c->priority_classes, p->priority_class_name) : NULL;
	return sl && sl->obj->u.priority_class.preemption_policy == KB_PREEMPTION_NEVER;
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
		s->queues[n].configured = true;
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
		s->queues[n].configured = true;
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

/* The nodes that hold an unreadable pod (kb_cluster_note_unreadable_pod)
 * are no candidates. O(unreadable pods x log nodes). */
static void mark_unreadable_nodes(const kb_cluster *c, kb_snapshot *s)
{
	for (size_t i = 0; i < c->unreadable.n; i++) {
		int32_t n = kb_snapshot_find_node(s, c->unreadable.v[i].node);
		if (n >= 0) {
			s->nodes[n].ready = false;
			s->nodes[n].unreadable_pod = true;
		}
	}
}

/* A node's fields that come from its object; the rest is derived. Its
 * quantities of names that had no slot when it was decoded go into the
 * slots they were given since (rn: the cluster's names). O(its extras). */
static void node_fill(kb_node *n, const kb_object *o, const kb_resnames *rn)
{
	n->name = o->meta.name;
	n->labels = o->meta.labels;
	n->taints = o->u.node.taints;
	n->ntaints = o->u.node.ntaints;
	n->unschedulable = o->u.node.unschedulable;
	n->ready = o->u.node.ready && !o->meta.deleting && !o->meta.undecodable;
	n->undecodable = o->meta.undecodable;
	n->allocatable = o->u.node.allocatable;
	n->extra = o->u.node.extra;
	n->nextra = o->u.node.nextra;
	for (uint32_t i = 0; i < o->u.node.nextra; i++) {
		int slot = kb_resnames_known_slot(rn, o->u.node.extra[i].known);
		if (slot >= 0)
			n->allocatable.q[slot] = o->u.node.extra[i].milli;
	}
	n->ngpus = o->u.node.ngpus;
	n->gpu_replicas = o->u.node.gpu_replicas > 1 ? o->u.node.gpu_replicas : 1;
	n->gpu_sharing = o->u.node.gpu_sharing;
	n->gpu_model = o->u.node.gpu_model;
	n->gpu_group = o->u.node.gpu_group;
	n->gpushare_count = o->u.node.gpushare_count;
	n->vgpu = o->u.node.vgpu;
	n->nvgpu = o->u.node.nvgpu;
	n->vgpu_off = o->u.node.vgpu_off;
}

/* A task's fields that come from its object and slot, given what the build
 * resolved (priority, foreign, critical) and the index of nvidia.com/gpu
 * (gpu_res, -1 when none). job is left to the caller.
 *
 * What a task is charged (req): what the kubelet counts against the node's
 * allocatable (the pod's effective request), so that no node is ever bound
 * beyond it; a pod sharing a GPU (KB_ANN_GPU_MILLI) that asks for one
 * nvidia.com/gpu is charged it whole. A sharing pod that asks for none is
 * charged its share of one GPU on top: kube-batchd's own share model (the
 * simulator's), which no kubelet counts, so it only keeps the node further
 * below its allocatable. */
static void task_fill(kb_task *t, const kb_slot *sl, uint32_t slot, int32_t priority,
		      bool foreign, bool critical, bool preempt_never, int gpu_res)
{
	const kb_object *o = sl->obj;
	const kb_pod_obj *p = &o->u.pod;
	t->uid = o->meta.uid;
	t->ns = o->meta.ns;
	t->name = o->meta.name;
	t->key = o->meta.key;
	t->job = -1;
	t->priority = priority;
	t->creation_ms = sl->created_ms;
	t->req = p->req;
	if (p->spec.gpu_milli > 0 && gpu_res >= 0 && t->req.q[gpu_res] == 0)
		t->req.q[gpu_res] = p->spec.gpu_milli;
	t->best_effort = p->best_effort;
	t->spills = p->spec.nspill > 0;
	t->foreign = foreign;
	t->critical = critical;
	t->preempt_never = preempt_never;
	t->preemptable = p->preemptable;
	t->role = -1;
	t->spec = &p->spec;
	t->cache_slot = slot;
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
	shape_change(c, true);
	c->generation++;
}

/* Keeps what a fresh full build (before any session touched it) worked
 * out, in the cache: node order as store slots, each task's slot, job and
 * resolved priority, each job's fields but its resource sums, and the
 * queues and job task lists as built. 0 or -ENOMEM (the cache is then
 * invalid). Cost: O(nodes + pods + jobs). */
static int cache_store(kb_cluster *c, const kb_snapshot *s, const uint32_t *node_slots)
{
	kb_snapshot_cache *k = &c->cache;
	c->cache_valid = false;
	kb_arena_release(&k->arena);
	k->resnames = s->resnames;
	k->default_queue = s->default_queue;
	k->gpu_res = s->gpu_res;
	k->nnodes = s->nnodes;
	k->ntasks = s->ntasks;
	k->njobs = s->njobs;
	k->nqueues = s->nqueues;
	k->njob_tasks = 0;
	for (uint32_t i = 0; i < s->njobs; i++)
		k->njob_tasks += s->jobs[i].ntasks;
	k->node_slots = kb_arena_calloc(&k->arena, s->nnodes + 1, sizeof(uint32_t));
	k->tasks = kb_arena_calloc(&k->arena, s->ntasks + 1, sizeof(kb_cached_task));
	k->jobs = kb_arena_calloc(&k->arena, s->njobs + 1, sizeof(kb_cached_job));
	k->queues = kb_arena_calloc(&k->arena, s->nqueues + 1, sizeof(kb_queue));
	k->job_tasks = kb_arena_calloc(&k->arena, k->njob_tasks + 1, sizeof(uint32_t));
	if (!k->node_slots || !k->tasks || !k->jobs || !k->queues || !k->job_tasks)
		return -ENOMEM;
	memcpy(k->node_slots, node_slots, s->nnodes * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *t = &s->tasks[i];
		k->tasks[i] = (kb_cached_task){
			.slot = t->cache_slot,
			.job = t->job,
			.priority = t->priority,
			.foreign = t->foreign,
			.critical = t->critical,
			.preempt_never = t->preempt_never,
			.role = t->role,
		};
	}
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		k->jobs[i] = (kb_cached_job){
			.uid = j->uid,
			.ns = j->ns,
			.name = j->name,
			.key = j->key,
			.creation_ms = j->creation_ms,
			.flavor = j->flavor,
			.queue = j->queue,
			.min_member = j->min_member,
			.priority = j->priority,
			.phase = j->phase,
			.cache_slot = j->cache_slot,
			.first_task = j->first_task,
			.ntasks = j->ntasks,
			.ngated = j->ngated,
			.has_min_resources = j->has_min_resources,
			.foreign = j->foreign,
			.topology = j->topology,
		};
		if (j->invalid && !(k->jobs[i].invalid = kb_arena_strdup(&k->arena, j->invalid)))
			return -ENOMEM;
	}
	memcpy(k->queues, s->queues, s->nqueues * sizeof(kb_queue));
	memcpy(k->job_tasks, s->job_tasks, k->njob_tasks * sizeof(uint32_t));
	c->cache_shape = c->shape;
	c->cache_valid = true;
	return 0;
}

/* A snapshot from the cache: the last full build made again from the
 * objects in the cached order, refreshed (pod placements and statuses,
 * PodGroup phases), then derived. Job invalid reasons are copied into the
 * snapshot's own arena. Cost: O(nodes + pods + jobs), one pass over the
 * objects in snapshot order. */
static int cache_copy(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	const kb_snapshot_cache *k = &c->cache;
	s->resnames = k->resnames;
	s->default_queue = k->default_queue;
	s->gpu_res = k->gpu_res;
	s->nnodes = k->nnodes;
	s->ntasks = k->ntasks;
	s->njobs = k->njobs;
	s->nqueues = k->nqueues;
	s->nodes = kb_arena_calloc(&s->arena, k->nnodes + 1, sizeof(kb_node));
	s->tasks = kb_arena_calloc(&s->arena, k->ntasks + 1, sizeof(kb_task));
	s->jobs = kb_arena_calloc(&s->arena, k->njobs + 1, sizeof(kb_job));
	s->queues = kb_arena_calloc(&s->arena, k->nqueues + 1, sizeof(kb_queue));
	s->job_tasks = kb_arena_calloc(&s->arena, k->njob_tasks + 1, sizeof(uint32_t));
	if (!s->nodes || !s->tasks || !s->jobs || !s->queues || !s->job_tasks)
		return kb_err_set(err, -ENOMEM, "building the snapshot: out of memory");
	for (uint32_t i = 0; i < k->nnodes; i++)
		node_fill(&s->nodes[i], c->nodes.slots.v[k->node_slots[i]].obj, &c->resnames);
	mark_unreadable_nodes(c, s);
	for (uint32_t i = 0; i < k->njobs; i++) {
		const kb_cached_job *cj = &k->jobs[i];
		kb_job *j = &s->jobs[i];
		j->uid = cj->uid;
		j->ns = cj->ns;
		j->name = cj->name;
		j->key = cj->key;
		j->creation_ms = cj->creation_ms;
		j->flavor = cj->flavor;
		j->queue = cj->queue;
		j->min_member = cj->min_member;
		j->priority = cj->priority;
		j->phase = cj->phase;
		j->cache_slot = cj->cache_slot;
		j->first_task = cj->first_task;
		j->ntasks = cj->ntasks;
		j->ngated = cj->ngated;
		j->has_min_resources = cj->has_min_resources;
		j->foreign = cj->foreign;
		j->topology = cj->topology;
		if (cj->cache_slot != UINT32_MAX) {
			const kb_slot *sl = &c->podgroups.slots.v[cj->cache_slot];
			j->min_resources = sl->obj->u.podgroup.min_resources;
			j->roles = sl->obj->u.podgroup.min_task_member;
			j->nroles = sl->obj->u.podgroup.nmin_task_member;
			j->phase = sl->overridden ? sl->pg_phase : sl->obj->u.podgroup.phase;
		}
		if (cj->invalid && !(j->invalid = kb_arena_strdup(&s->arena, cj->invalid)))
			return kb_err_set(err, -ENOMEM, "building the snapshot: out of memory");
	}
	memcpy(s->queues, k->queues, k->nqueues * sizeof(kb_queue));
	memcpy(s->job_tasks, k->job_tasks, k->njob_tasks * sizeof(uint32_t));
	for (uint32_t i = 0; i < k->ntasks; i++) {
		/* Objects are read in the cached order, not in memory order:
		 * fetch a few ahead (the slot first, then its object). */
		if (i + 16 < k->ntasks)
			__builtin_prefetch(&c->pods.slots.v[k->tasks[i + 16].slot]);
		if (i + 8 < k->ntasks) {
			const kb_object *ahead = c->pods.slots.v[k->tasks[i + 8].slot].obj;
			__builtin_prefetch(ahead);
			__builtin_prefetch((const char *)ahead + 128);
			__builtin_prefetch((const char *)ahead + 256);
		}
		const kb_cached_task *ct = &k->tasks[i];
		kb_slot *sl = &c->pods.slots.v[ct->slot];
		kb_task *t = &s->tasks[i];
		task_fill(t, sl, ct->slot, ct->priority, ct->foreign, ct->critical, ct->preempt_never,
			  s->gpu_res);
		t->job = ct->job;
		t->role = ct->role;
		task_refresh(s, t, sl);
	}
	kb_snapshot_derive(s);
	return 0;
}

static int snapshot_build(kb_cluster *c, kb_snapshot *s, uint32_t **ret_node_slots, kb_err *err);

static int cmp_namespace(const void *a, const void *b)
{
	return strcmp(((const kb_namespace *)a)->name, ((const kb_namespace *)b)->name);
}

/* The Namespaces (name and labels), sorted by name, into s. O(n log n). */
static int build_namespaces(const kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	size_t n = 0;
	for (size_t i = 0; i < c->namespaces.slots.n; i++)
		n += c->namespaces.slots.v[i].obj != NULL;
	s->namespaces = NULL;
	s->nnamespaces = 0;
	if (n == 0)
		return 0;
	kb_namespace *v = kb_arena_calloc(&s->arena, n, sizeof(*v));
	if (!v)
		return kb_err_set(err, -ENOMEM, "building the snapshot: out of memory");
	n = 0;
	for (size_t i = 0; i < c->namespaces.slots.n; i++) {
		const kb_object *o = c->namespaces.slots.v[i].obj;
		if (o)
			v[n++] = (kb_namespace){.name = o->meta.name, .labels = o->meta.labels};
	}
	qsort(v, n, sizeof(*v), cmp_namespace);
	s->namespaces = v;
	s->nnamespaces = (uint32_t)n;
	return 0;
}

/* The snapshot without its volume needs: the session snapshot works those
 * out for each session (kb_cluster_session_snapshot), so its rebuild does
 * not work them out as well. */
static int snapshot_of(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	if (c->cache_valid && c->cache_shape == c->shape) {
		int r = cache_copy(c, s, err);
		if (r == 0)
			r = build_namespaces(c, s, err);
		s->generation = r == 0 ? c->generation : 0;
		return r;
	}
	uint32_t *node_slots = NULL;
	int r = snapshot_build(c, s, &node_slots, err);
	if (r == 0)
		r = build_namespaces(c, s, err);
	s->generation = r == 0 ? c->generation : 0;
	if (r == 0 && cache_store(c, s, node_slots) < 0) {
		/* Out of memory for the cache: build next time. */
		c->cache_valid = false;
		kb_arena_release(&c->cache.arena);
	}
	free(node_slots);
	return r;
}

int kb_cluster_snapshot(kb_cluster *c, kb_snapshot *s, kb_err *err)
{
	int r = snapshot_of(c, s, err);
	if (r == 0 && (r = kb_cluster_volumes(c, s, &s->arena, err)) < 0)
		s->generation = 0;
	return r;
}

/* The session snapshot ----------------------------------------------------------- */

/* Brings task t of the session snapshot up to date with its slot: off its
 * node and out of its job's counts, refreshed, then back in. Its strings
 * and spec are taken from the slot's object, which may have replaced the
 * one it was built from (equal in all of them). O(1) but for a node lookup
 * when the pod moved. */
static void live_refresh_task(kb_cluster *c, uint32_t ti)
{
	kb_snapshot *s = &c->live;
	kb_task *t = &s->tasks[ti];
	kb_slot *sl = &c->pods.slots.v[t->cache_slot];
	kb_snapshot_set_task_status(s, ti, KB_TASK_UNKNOWN); /* holds no node */
	const kb_object *o = sl->obj;
	t->uid = o->meta.uid;
	t->ns = o->meta.ns;
	t->name = o->meta.name;
	t->key = o->meta.key;
	t->spec = &o->u.pod.spec;
	kb_task fresh = *t;
	task_refresh(s, &fresh, sl);
	t->node = fresh.node;
	t->started_ms = fresh.started_ms;
	t->evicted_ms = fresh.evicted_ms;
	t->gpu_mask = fresh.gpu_mask;
	kb_snapshot_set_task_status(s, ti, fresh.status);
}

/* Builds the session snapshot again, and its slot -> task map. */
static int live_rebuild(kb_cluster *c, kb_err *err)
{
	c->live_builds++;
	c->live_valid = false;
	kb_snapshot_release(&c->live);
	int r = snapshot_of(c, &c->live, err);
	if (r < 0)
		return r;
	uint32_t n = (uint32_t)c->pods.slots.n;
	if (n > c->live_nslots || !c->live_task_of_slot) {
		uint32_t *m = realloc(c->live_task_of_slot, (n ? n : 1) * sizeof(uint32_t));
		if (!m)
			return kb_err_set(err, -ENOMEM, "building the snapshot: out of memory");
		c->live_task_of_slot = m;
		c->live_nslots = n;
	}
	memset(c->live_task_of_slot, 0xff, n * sizeof(uint32_t));
	for (uint32_t i = 0; i < c->live.ntasks; i++)
		c->live_task_of_slot[c->live.tasks[i].cache_slot] = i;
	c->live_dirty.n = 0;
	c->live_pg_dirty = false;
	c->live_shape = c->shape;
	c->live_valid = true;
	return 0;
}

int kb_cluster_session_snapshot(kb_cluster *c, kb_snapshot **ret, kb_err *err)
{
	kb_snapshot *s = &c->live;
	if (kb_snapshot_journal_rollback(s) < 0)
		c->live_valid = false; /* a save failed: not as it was */
	if (!c->live_valid || c->live_shape != c->shape) {
		int r = live_rebuild(c, err);
		if (r < 0)
			return r;
	} else {
		for (size_t k = 0; k < c->live_dirty.n; k++) {
			uint32_t slot = c->live_dirty.v[k];
			uint32_t ti = slot < c->live_nslots ? c->live_task_of_slot[slot] : UINT32_MAX;
			if (ti != UINT32_MAX)
				live_refresh_task(c, ti);
		}
		c->live_dirty.n = 0;
		if (c->live_pg_dirty) {
			for (uint32_t i = 0; i < s->njobs; i++) {
				kb_job *j = &s->jobs[i];
				if (j->cache_slot != UINT32_MAX) {
					const kb_slot *sl = &c->podgroups.slots.v[j->cache_slot];
					j->phase = sl->overridden ? sl->pg_phase : sl->obj->u.podgroup.phase;
				}
			}
			c->live_pg_dirty = false;
		}
	}
	int r = kb_snapshot_journal_begin(s);
	if (r < 0) {
		c->live_valid = false;
		return kb_err_set(err, r, "building the snapshot: out of memory");
	}
	kb_arena_reset(&c->vol_arena);
	if ((r = kb_cluster_volumes(c, s, &c->vol_arena, err)) < 0)
		return r;
	s->generation = c->generation;
	*ret = s;
	return 0;
}

/* True when key names a pod of ours in no group: it has a job of its own,
 * of that key. */
static bool lone_pod_of_ours(const kb_cluster *c, const char *key)
{
	const kb_slot *sl = store_get(&c->pods, key);
	return sl && !sl->obj->u.pod.group_name && !sl->obj->u.pod.gated && !pod_held_back(sl) &&
	       kb_cluster_name_is_ours(c, sl->obj->u.pod.scheduler_name);
}

/* Makes room for one more job in the build's array (a job for a PodGroup
 * that does not exist, which the first count could not foresee). */
static int jobs_reserve(kb_snapshot *s, size_t *cap)
{
	if (s->njobs < *cap)
		return 0;
	size_t ncap = *cap * 2;
	kb_job *jobs = kb_arena_calloc(&s->arena, ncap, sizeof(kb_job));
	if (!jobs)
		return -ENOMEM;
	memcpy(jobs, s->jobs, s->njobs * sizeof(kb_job));
	s->jobs = jobs;
	*cap = ncap;
	return 0;
}

/* The full build. *ret_node_slots (heap; the caller frees it, also on
 * failure) gets the node store slot of each snapshot node, for the cache.
 * Scratch arrays are freed before returning, so the snapshot holds only
 * what a session uses. */
/* The index of t's task role (its pod's volcano.sh/task-spec) among its
 * job's minTaskMember roles (sorted), or -1. O(log roles). */
static int16_t task_role(const kb_cluster *c, const kb_snapshot *s, const kb_task *t)
{
	const kb_job *j = t->job >= 0 ? &s->jobs[t->job] : NULL;
	if (!j || j->nroles == 0)
		return -1;
	const char *role = c->pods.slots.v[t->cache_slot].obj->u.pod.task_role;
	uint32_t lo = 0, hi = j->nroles;
	while (role && lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int cmp = strcmp(j->roles[mid].role, role);
		if (cmp == 0)
			return (int16_t)mid;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Gives job j the queue named qname (the queues are built and sorted
 * already), or marks it invalid when there is no such queue. A reason set
 * later (a PodGroup not found) replaces this one. O(log queues). */
static void job_set_queue(kb_snapshot *s, kb_job *j, const char *qname)
{
	j->queue = kb_snapshot_find_queue(s, qname);
	if (j->queue < 0)
		j->invalid = kb_arena_printf(&s->arena, "queue \"%s\" not found", qname);
}

/* The queue of a job: the one its PodGroup or pod names (spec.queue, else
 * the annotation KB_ANN_VOLCANO_QUEUE), else its namespace's in the queue
 * file, else the default queue. */
static const char *queue_of(const kb_cluster *c, const char *named, const char *ns)
{
	const char *q = named;
	if (!q && c->queue_conf)
		q = kb_queue_conf_ns_queue(c->queue_conf, ns);
	return q ? q : c->default_queue;
}

const char *kb_cluster_pod_queue(const kb_cluster *c, const kb_object *o)
{
	const kb_pod_obj *p = &o->u.pod;
	const kb_slot *pg = p->group_key ? kb_cluster_slot(c, KB_KIND_PODGROUP, p->group_key) : NULL;
	const char *named = pg && pg->obj->u.podgroup.queue ? pg->obj->u.podgroup.queue
							     : p->queue_name;
	return queue_of(c, named, o->meta.ns);
}

/* The global default PriorityClass, if any (the highest value wins a tie,
 * then the name, so the choice is deterministic). */
static void build_default_priority(const kb_cluster *c, prio_table *pt)
{
	const char *default_pc = NULL;
	for (size_t i = 0; i < c->priority_classes.slots.n; i++) {
		const kb_slot *sl = &c->priority_classes.slots.v[i];
		if (!sl->obj || !sl->obj->u.priority_class.global_default)
			continue;
		int32_t v = sl->obj->u.priority_class.value;
		if (!pt->has_default || v > pt->default_value ||
		    (v == pt->default_value && strcmp(sl->obj->meta.name, default_pc) < 0)) {
			pt->has_default = true;
			pt->default_value = v;
			default_pc = sl->obj->meta.name;
		}
	}
}

/* Nodes, sorted by name; *ret_node_slots (malloc'd) maps each to its slot. */
static int build_nodes(const kb_cluster *c, kb_snapshot *s, kb_arena *scratch,
		       uint32_t **ret_node_slots)
{
	size_t nslots = c->nodes.slots.n;
	node_ref *nrefs = kb_arena_calloc(scratch, nslots ? nslots : 1, sizeof(*nrefs));
	*ret_node_slots = malloc((nslots ? nslots : 1) * sizeof(uint32_t));
	s->nodes = kb_arena_calloc(&s->arena, nslots ? nslots : 1, sizeof(kb_node));
	if (!nrefs || !*ret_node_slots || !s->nodes)
		return -ENOMEM;
	uint32_t nnodes = 0;
	for (size_t i = 0; i < nslots; i++)
		if (c->nodes.slots.v[i].obj)
			nrefs[nnodes++] = (node_ref){c->nodes.slots.v[i].obj->meta.name, (uint32_t)i};
	qsort(nrefs, nnodes, sizeof(*nrefs), cmp_node_ref);
	for (uint32_t i = 0; i < nnodes; i++) {
		node_fill(&s->nodes[i], c->nodes.slots.v[nrefs[i].slot].obj, &c->resnames);
		(*ret_node_slots)[i] = nrefs[i].slot;
	}
	s->nnodes = nnodes;
	return 0;
}

/* Tasks, in store order: ours, and other schedulers' pods that hold a node.
 * *ret_nlone: our pods without a group (each becomes a job of one). */
static int build_tasks(kb_cluster *c, kb_snapshot *s, const prio_table *pt, size_t *ret_nlone)
{
	s->tasks = kb_arena_calloc(&s->arena, c->pods.slots.n ? c->pods.slots.n : 1, sizeof(kb_task));
	if (!s->tasks)
		return -ENOMEM;
	size_t nlone = 0;
	for (size_t i = 0; i < c->pods.slots.n; i++) {
		kb_slot *sl = &c->pods.slots.v[i];
		if (!sl->obj)
			continue;
		const kb_object *o = sl->obj;
		const kb_pod_obj *p = &o->u.pod;
		bool ours = kb_cluster_name_is_ours(c, p->scheduler_name) && !p->gated &&
			    !pod_held_back(sl);
		if (!ours && !(sl->overridden ? sl->node : p->node_name))
			continue; /* gated, or another scheduler's pending pod: not a task */
		kb_task *t = &s->tasks[s->ntasks++];
		task_fill(t, sl, (uint32_t)i, pod_priority(pt, p), !ours, is_critical(o, p),
			  pod_preempt_never(pt, p), s->gpu_res);
		task_refresh(s, t, sl);
		if (ours && !p->group_name)
			nlone++;
	}
	*ret_nlone = nlone;
	return 0;
}

/* One job per PodGroup of the store. */
static void build_podgroup_jobs(const kb_cluster *c, kb_snapshot *s, const prio_table *pt)
{
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
		j->roles = pg->min_task_member;
		j->nroles = pg->nmin_task_member;
		/* Until its pods say (mark_outside_pods): a volcano Job's group is
		 * volcano's, and a scheduling.k8s.io PodGroup may be any
		 * scheduler's (its pods come with it; no admission waits). */
		j->foreign = pg->volcano_job || pg->flavor == KB_PG_K8S;
		j->priority = INT32_MIN; /* resolved by resolve_job_priorities */
		int32_t v;
		if (priority_class_value(pt, pg->priority_class_name, &v))
			j->priority = v;
		job_set_queue(s, j, queue_of(c, pg->queue, o->meta.ns));
		if (o->meta.undecodable)
			j->invalid = "the API's latest version of the PodGroup did not decode (the "
				     "log names the field): not scheduled until a version decodes";
	}
}

/* Lone pods of ours become jobs of one. */
static void build_lone_jobs(const kb_cluster *c, kb_snapshot *s)
{
	for (uint32_t i = 0; i < s->ntasks; i++) {
		const kb_task *t = &s->tasks[i];
		const kb_object *o = c->pods.slots.v[t->cache_slot].obj;
		if (t->foreign || o->u.pod.group_name)
			continue;
		kb_job *j = &s->jobs[s->njobs++];
		j->uid = o->meta.uid;
		j->ns = o->meta.ns;
		j->name = o->meta.name;
		j->key = o->meta.key;
		j->cache_slot = UINT32_MAX;
		j->flavor = KB_PG_NONE;
		j->min_member = 1;
		j->creation_ms = t->creation_ms;
		j->phase = KB_PG_PENDING;
		j->priority = t->priority;
		job_set_queue(s, j, queue_of(c, o->u.pod.queue_name, o->meta.ns));
	}
}

/* The job of the gang a pod names through spec.workloadRef (v1.35): the
 * Workload's podGroup of that name gives minMember (minCount, 1 for
 * basic); the queue is the Workload's annotation, else the pod's, else the
 * namespace's, else the default. A Workload that does not exist (yet), or
 * lacks the podGroup, makes an invalid job that says so: its pods wait,
 * none is bound. 0, or -ENOMEM (no reason could be written).
 * O(log workloads + podGroups of the Workload). */
static int workload_job(const kb_cluster *c, kb_snapshot *s, kb_job *j, const kb_pod_obj *p,
			 const char *ns)
{
	const kb_slot *wsl = store_get(&c->workloads, p->workload_key);
	const kb_workload_obj *w = wsl ? &wsl->obj->u.workload : NULL;
	const kb_workload_group *g = NULL;
	for (uint32_t k = 0; w && k < w->ngroups && !g; k++)
		if (strcmp(w->groups[k].name, p->workload_pod_group) == 0)
			g = &w->groups[k];
	j->flavor = KB_PG_K8S_WORKLOAD;
	j->phase = KB_PG_INQUEUE; /* no admission step in this API */
	job_set_queue(s, j, queue_of(c, w && w->queue ? w->queue : p->queue_name, ns));
	if (g) {
		j->min_member = g->min_count;
		return 0;
	}
	if (!w) {
		j->invalid = kb_arena_printf(&s->arena,
					     "Workload \"%s\" (spec.workloadRef.name) not found",
					     p->workload_key);
		return j->invalid ? 0 : -ENOMEM;
	}
	/* Name what the Workload has, so the mistake is plain. */
	char have[256] = "";
	size_t len = 0;
	for (uint32_t k = 0; k < w->ngroups && len < sizeof(have); k++) {
		int n = snprintf(have + len, sizeof(have) - len, "%s\"%s\"", k ? ", " : "",
				 w->groups[k].name);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	j->invalid = kb_arena_printf(&s->arena,
				     "Workload \"%s\" has no podGroup \"%s\" (spec.workloadRef.podGroup; "
				     "it has %s)",
				     p->workload_key, p->workload_pod_group, w->ngroups ? have : "none");
	return j->invalid ? 0 : -ENOMEM;
}

/* Group keys of grouped pods into gkeys (by task, tasks sorted); a pod
 * naming a PodGroup that does not exist (yet) gets a job that says so, and
 * waits; a pod naming a v1alpha1 Workload's gang gets its job here
 * (workload_job). A job of that key exists when the store has the PodGroup, or a
 * lone pod of ours of that key (its job has the pod's key), or an earlier
 * pod made it. */
static int build_missing_group_jobs(const kb_cluster *c, kb_snapshot *s, const char **gkeys,
				    size_t *jobs_cap)
{
	kb_strmap jobkeys;
	kb_strmap_init(&jobkeys);
	int r = 0;
	for (uint32_t i = 0; i < s->ntasks && r == 0; i++) {
		kb_task *t = &s->tasks[i];
		if (t->foreign)
			continue;
		const kb_pod_obj *p = &c->pods.slots.v[t->cache_slot].obj->u.pod;
		if (!p->group_name)
			continue;
		gkeys[i] = p->group_key;
		if (store_get(&c->podgroups, gkeys[i]) || lone_pod_of_ours(c, gkeys[i]) ||
		    kb_strmap_get(&jobkeys, gkeys[i], NULL))
			continue;
		if ((r = jobs_reserve(s, jobs_cap)) < 0)
			break;
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
		if (p->group_via == KB_GROUP_WORKLOAD_REF) {
			if ((r = workload_job(c, s, j, p, t->ns)) < 0)
				break;
		} else {
			job_set_queue(s, j, queue_of(c, p->queue_name, t->ns));
			j->invalid = kb_arena_printf(&s->arena, "PodGroup \"%s\" not found", gkeys[i]);
			if (!j->invalid) {
				r = -ENOMEM;
				break;
			}
		}
		if ((r = kb_strmap_put(&jobkeys, gkeys[i], s->njobs)) < 0)
			break;
		s->njobs++;
	}
	kb_strmap_release(&jobkeys);
	return r < 0 ? -ENOMEM : 0;
}

/* Links tasks to jobs, and lists each job's tasks by creation, then name. */
static int link_tasks(const kb_cluster *c, kb_snapshot *s, kb_arena *scratch, const char **gkeys)
{
	job_task_ref *refs = kb_arena_calloc(scratch, s->ntasks ? s->ntasks : 1, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	uint32_t nrefs = 0;
	for (uint32_t i = 0; i < s->ntasks; i++) {
		kb_task *t = &s->tasks[i];
		if (t->foreign)
			continue;
		t->job = kb_snapshot_find_job(s, gkeys[i] ? gkeys[i] : t->key);
		t->role = task_role(c, s, t);
		refs[nrefs++] = (job_task_ref){(uint32_t)t->job, i, t->creation_ms, t->key};
	}
	qsort(refs, nrefs, sizeof(*refs), cmp_job_task_ref);
	s->job_tasks = kb_arena_calloc(&s->arena, nrefs ? nrefs : 1, sizeof(uint32_t));
	if (!s->job_tasks)
		return -ENOMEM;
	for (uint32_t k = 0; k < nrefs; k++) {
		s->job_tasks[k] = refs[k].task;
		kb_job *j = &s->jobs[refs[k].job];
		if (j->ntasks == 0)
			j->first_task = k;
		j->ntasks++;
	}
	return 0;
}

/* The pods of groups that are not their tasks: ours held back by
 * spec.schedulingGates (counted in ngated), and other schedulers'. A group
 * whose pods all name another scheduler is foreign: left alone, neither
 * scheduled nor written (the simulator shows why). A group with pods of
 * both is invalid: nothing of it is bound until they agree. A group with
 * no pods yet is ours (an operator creates it first, and its pods once it
 * is Inqueue), unless a volcano Job made it (volcano's job controller waits
 * for volcano's scheduler in the same way) or it is a scheduling.k8s.io
 * PodGroup (its controller makes its pods with it, for any scheduler). Cost: O(pods), plus O(log jobs) per such pod. */
static int mark_outside_pods(const kb_cluster *c, kb_snapshot *s, kb_arena *scratch)
{
	int32_t *nother = NULL;     /* per job: pods naming another scheduler */
	const char **other = NULL;  /* per job: the first such name */
	for (size_t i = 0; i < c->pods.slots.n; i++) {
		const kb_slot *sl = &c->pods.slots.v[i];
		const kb_object *o = sl->obj;
		if (!o || !o->u.pod.group_key)
			continue;
		const kb_pod_obj *p = &o->u.pod;
		bool ours = kb_cluster_name_is_ours(c, p->scheduler_name);
		if (ours && !p->gated && !pod_held_back(sl))
			continue;
		int32_t ji = kb_snapshot_find_job(s, p->group_key);
		if (ji < 0)
			continue;
		if (ours) {
			s->jobs[ji].ngated++;
			continue;
		}
		if (!nother) {
			nother = kb_arena_calloc(scratch, s->njobs, sizeof(*nother));
			other = kb_arena_calloc(scratch, s->njobs, sizeof(*other));
			if (!nother || !other)
				return -ENOMEM;
		}
		if (nother[ji]++ == 0)
			other[ji] = p->scheduler_name;
	}
	for (uint32_t i = 0; nother && i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (nother[i] == 0)
			continue;
		uint32_t mine = j->ntasks + (uint32_t)j->ngated;
		j->foreign = mine == 0;
		j->invalid = j->foreign
				     ? kb_arena_printf(&s->arena,
						       "its %d pods name schedulerName \"%s\", not \"%s\": "
						       "another scheduler's group, left alone",
						       nother[i], other[i], c->scheduler_names[0])
				     : kb_arena_printf(&s->arena,
						       "its pods name different schedulers (%u of them "
						       "ours, %d \"%s\"): none is bound until all name ours",
						       mine, nother[i], other[i]);
		if (!j->invalid)
			return -ENOMEM;
	}
	/* A group a volcano Job made is volcano's to admit while it has no
	 * pods; once its pods exist, they say whose it is (above). */
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (!j->foreign || j->invalid)
			continue;
		if (j->ntasks + (uint32_t)j->ngated > 0) {
			j->foreign = false;
			continue;
		}
		j->invalid = j->flavor == KB_PG_K8S
				     ? "a scheduling.k8s.io PodGroup with no pod yet: its pods' "
				       "schedulerName says whose it is, left alone until then"
				     : "made by a volcano Job (its controller ownerReference is "
				       "batch.volcano.sh) and no pod yet: volcano's scheduler admits "
				       "it, left alone";
	}
	return 0;
}

/* A scheduling.k8s.io PodGroup whose own annotation names no queue takes
 * the one its pods' annotation KB_ANN_VOLCANO_QUEUE names (the first task
 * in the job's order that has one): that API has no queue, and the
 * controllers that make its PodGroups (the Job controller) copy the pod
 * template's annotations onto the pods only. O(tasks of such jobs). */
static void k8s_pod_queues(const kb_cluster *c, kb_snapshot *s)
{
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->flavor != KB_PG_K8S || j->cache_slot == UINT32_MAX ||
		    c->podgroups.slots.v[j->cache_slot].obj->u.podgroup.queue)
			continue;
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
			const char *q = c->pods.slots.v[t->cache_slot].obj->u.pod.queue_name;
			if (q) {
				job_set_queue(s, j, q);
				break;
			}
		}
	}
}

/* Each gang's network-topology wish: its PodGroup's, else the first of its
 * pods' (in task order) that has one (Kueue's annotations come on the pods
 * from a Job's pod template). Every pod that says one must say the same
 * as the gang: a pod that differs makes the job invalid, naming it, and
 * nothing of it is bound. Lone pods have none (one pod is always in one
 * domain). 0 or -ENOMEM. O(tasks of gangs). */
static int job_topologies(const kb_cluster *c, kb_snapshot *s)
{
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->flavor == KB_PG_NONE)
			continue;
		const kb_topology_req *want = NULL;
		const char *from = NULL; /* the pod it came from, or NULL: the PodGroup */
		if (j->cache_slot != UINT32_MAX) {
			const kb_object *pg = c->podgroups.slots.v[j->cache_slot].obj;
			if (pg->u.podgroup.topology.set)
				want = &pg->u.podgroup.topology;
		}
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
			if (t->foreign)
				continue;
			const kb_object *po = c->pods.slots.v[t->cache_slot].obj;
			const kb_topology_req *tr = &po->u.pod.topology;
			if (!tr->set)
				continue;
			if (!want) {
				want = tr;
				from = po->meta.key;
				continue;
			}
			if (kb_topology_req_equal(want, tr) || j->invalid)
				continue;
			j->invalid = kb_arena_printf(
				&s->arena,
				"pod \"%s\" asks for a network topology (%s: required \"%s\", "
				"preferred \"%s\") other than %s%s%s (required \"%s\", preferred "
				"\"%s\"): a gang's members must agree; none is bound until they do",
				po->meta.key, tr->source ? tr->source : "", tr->required ? tr->required : "",
				tr->preferred ? tr->preferred : "", from ? "pod \"" : "its PodGroup",
				from ? from : "", from ? "\"" : "",
				want->required ? want->required : "", want->preferred ? want->preferred : "");
			if (!j->invalid)
				return -ENOMEM;
		}
		j->topology = want;
	}
	return 0;
}

/* Job priority: its PodGroup's class, else the highest of its tasks (else
 * the global default class, else 0). */
static void resolve_job_priorities(kb_snapshot *s, const prio_table *pt)
{
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->priority != INT32_MIN)
			continue;
		j->priority = pt->has_default ? pt->default_value : 0;
		for (uint32_t k = 0; k < j->ntasks; k++) {
			const kb_task *t = &s->tasks[s->job_tasks[j->first_task + k]];
			if (k == 0 || t->priority > j->priority)
				j->priority = t->priority;
		}
	}
}

/* The steps of a full build, in order; scratch (node order, group keys, job
 * task order) comes from an arena of its own, freed before returning, whose
 * large blocks are recycled from one build to the next. */
static int snapshot_build(kb_cluster *c, kb_snapshot *s, uint32_t **ret_node_slots, kb_err *err)
{
	kb_arena scratch;
	kb_arena_init(&scratch);
	scratch.chunk_size = 1u << 20;
	s->resnames = c->resnames;
	s->gpu_res = kb_resnames_find(&c->resnames, KB_RES_GPU_NAME);
	prio_table pt = {.c = c};
	build_default_priority(c, &pt);
	int r = build_nodes(c, s, &scratch, ret_node_slots);
	if (r == 0)
		mark_unreadable_nodes(c, s);
	const char **parents = NULL;
	if (r == 0 && (r = build_queues(c, s, &parents)) == 0) {
		for (uint32_t i = 0; i < s->nqueues; i++)
			s->queues[i].parent = parents[i] ? kb_snapshot_find_queue(s, parents[i]) : -1;
		s->default_queue = kb_snapshot_find_queue(s, c->default_queue);
	}
	size_t nlone = 0, jobs_cap = 0;
	if (r == 0)
		r = build_tasks(c, s, &pt, &nlone);
	if (r == 0) {
		/* One job per PodGroup, one per lone pod of ours (in that order,
		 * before sorting), then one per PodGroup that grouped pods name but
		 * that does not exist (rare: the array grows for those). */
		jobs_cap = c->podgroups.slots.n + nlone + 1;
		s->jobs = kb_arena_calloc(&s->arena, jobs_cap, sizeof(kb_job));
		r = s->jobs ? 0 : -ENOMEM;
	}
	const char **gkeys = NULL;
	if (r == 0) {
		build_podgroup_jobs(c, s, &pt);
		build_lone_jobs(c, s);
		qsort(s->tasks, s->ntasks, sizeof(kb_task), cmp_task_key);
		gkeys = kb_arena_calloc(&scratch, s->ntasks ? s->ntasks : 1, sizeof(char *));
		r = gkeys ? build_missing_group_jobs(c, s, gkeys, &jobs_cap) : -ENOMEM;
	}
	if (r == 0) {
		qsort(s->jobs, s->njobs, sizeof(kb_job), cmp_job_key);
		r = link_tasks(c, s, &scratch, gkeys);
	}
	if (r == 0) {
		k8s_pod_queues(c, s);
		r = mark_outside_pods(c, s, &scratch);
	}
	if (r == 0)
		r = job_topologies(c, s);
	kb_arena_release(&scratch);
	if (r < 0)
		return kb_err_set(err, r, "building the snapshot: out of memory");
	resolve_job_priorities(s, &pt);
	kb_snapshot_derive(s);
	return 0;
}

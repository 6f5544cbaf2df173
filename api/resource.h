/* resource.h - resource vectors: cpu, memory, pods and any extended resource.
 *
 * A kb_res holds one int64 count of milli-units per resource (see
 * quantity.h), indexed by a small integer. Indices 0..2 are fixed (cpu,
 * memory, pods); every other name ("nvidia.com/gpu", "example.com/fpga",
 * "ephemeral-storage", ...) is given the next free index the first time the
 * cluster mentions it, in a kb_resnames table the cluster owns. Arithmetic
 * never looks at names, so extended resources are handled exactly like cpu.
 *
 * Every pod asks for one "pods" (1000 milli-units) so that the pod count of
 * a node is checked by the same fit test as cpu and memory.
 *
 * Slots are for the names something asks for (a pod's requests, a
 * PodGroup's minResources, a queue's capability or guarantee) and for
 * nvidia.com/gpu. A name that only nodes advertise (the MIG profiles
 * nvidia.com/mig-1g.10gb, ..., hugepages-*, other vendors' devices) takes
 * no slot: it is a "known" name (kb_resnames_intern_known), and a node
 * keeps its quantity as a kb_res_extra; the day something asks for it, it
 * is given a slot (kb_resnames_intern) and kb_resnames_known_slot() maps
 * the node's quantity into that slot. A name no pod asks for cannot change
 * whether a pod fits, so the vectors stay KB_RES_MAX wide whatever the
 * nodes advertise: the arithmetic below, the hot path of every fit test,
 * costs the same with 5 names or 300.
 *
 * Past the slots. Once all KB_RES_MAX slots are held, a name something
 * asks for takes no slot either: it is a known name, "spilled". A pod's
 * asks in spilled names are a short list of kb_res_extra (kb_res_spill
 * while it is decoded, then kb_pod_spec.spill), beside its vector; a
 * node's quantities of them stay its kb_res_extra list (kb_node.extra).
 * Placement checks them (scheduler/framework.h: kb_node_fits;
 * scheduler/actions/placement.h: kb_fits_idle) by summing what the tasks
 * on the node ask (api/snapshot.h: kb_node_spill_short), so no node is
 * ever bound beyond its allocatable in any name. Only pods that ask for
 * one pay for it. What a spilled name is not part of: the vectors, so fair
 * share (drf, proportion), a queue's allocated and capability, a
 * PodGroup's minResources and the cluster totals do not count it. Which
 * names hold slots is first come, first served, and held for the daemon's
 * life; the queue file is read first, so its names always have slots.
 *
 * Limits (the cluster controls them; each refused with -ENOSPC and an
 * error naming the name): KB_RES_MAX names with a slot (cpu, memory and
 * pods included; a queue's capability or guarantee, and the GPU device
 * names of cache/decode.c's needs_slot, must name one of them), KB_RES_KNOWN_MAX names without one (advertised or spilled),
 * KB_RES_SPILL_MAX spilled names asked for by one pod.
 *
 * Sums cannot overflow. One quantity fits int64 (quantity.h refuses more
 * with -ERANGE), but a sum of them need not: memory counts milli-bytes, so
 * 8 PiB of it pass INT64_MAX. kb_res_add and kb_res_sub saturate at
 * INT64_MAX and INT64_MIN instead of wrapping (signed overflow would be
 * undefined, and a wrapped total turns negative: a full cluster would look
 * empty). Within range they are exact, so a sum taken apart again comes
 * back to what it was; a sum that saturated stays at the limit, which no
 * quantity a pod can ask for passes. The cluster's running totals are kept
 * exact in 128 bits (snapshot.h); shares are computed in 128 bits
 * (queue/deserved.h) or in double (drf).
 */
#ifndef KB_API_RESOURCE_H
#define KB_API_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KB_RES_MAX 16
#define KB_RES_KNOWN_MAX 256
#define KB_RES_SPILL_MAX 16
#define KB_RES_NAME_MAX 128

enum {
	KB_RES_CPU = 0,
	KB_RES_MEMORY = 1,
	KB_RES_PODS = 2, /* one pod is KB_ONE_POD (milli-units) */
	KB_RES_NFIXED = 3,
};

typedef struct kb_res {
	int64_t q[KB_RES_MAX];
} kb_res;

typedef struct kb_resnames {
	int n; /* slots in use; always >= KB_RES_NFIXED after init */
	char name[KB_RES_MAX][KB_RES_NAME_MAX];
	/* Names nodes advertised before anything asked for them, each with
	 * the slot it was given since (-1: none yet). */
	int nknown;
	char known[KB_RES_KNOWN_MAX][KB_RES_NAME_MAX];
	int8_t known_slot[KB_RES_KNOWN_MAX];
} kb_resnames;

/* A node's quantity of a known name (kb_resnames.known[known]), in
 * milli-units. */
typedef struct kb_res_extra {
	int32_t known;
	int64_t milli;
} kb_res_extra;

/* A pod's asks in spilled names while it is decoded (above): known
 * indices, each at most once, in the order first met. */
typedef struct kb_res_spill {
	uint32_t n;
	kb_res_extra e[KB_RES_SPILL_MAX];
} kb_res_spill;

/* The quantity of known name k in v[0..n), or 0 when absent. O(n). */
int64_t kb_res_extra_get(const kb_res_extra *v, uint32_t n, int32_t known);

/* s[known] = milli (added when absent). 0, or -ENOSPC when s holds
 * KB_RES_SPILL_MAX names and known is not one of them. O(s->n). */
int kb_res_spill_set(kb_res_spill *s, int32_t known, int64_t milli);

/* a += b, name by name. 0, -ENOSPC (as kb_res_spill_set) or -ERANGE when
 * a sum passes INT64_MAX; a is then partly changed. O(a->n x b->n). */
int kb_res_spill_add(kb_res_spill *a, const kb_res_spill *b);

/* a = max(a, b), name by name. 0 or -ENOSPC (a partly changed). O(a->n x
 * b->n). */
int kb_res_spill_max(kb_res_spill *a, const kb_res_spill *b);

/* Fills the fixed names; no known names. */
void kb_resnames_init(kb_resnames *t);

/* The slot of name, giving it one if it has none (a known name keeps its
 * known index, now mapped to the slot). Returns the slot (>= 0), -ENOSPC
 * when every slot is taken or -ENAMETOOLONG. O(n + nknown) string
 * compares. */
int kb_resnames_intern(kb_resnames *t, const char *name);

/* The names holding slots past cpu, memory and pods, in slot order, as
 * "nvidia.com/gpu, example.com/fpga" into buf (always terminated; a list
 * too long for buf ends with "..."): what a refusal with -ENOSPC names, so
 * that the operator sees which names hold the slots. Returns buf. O(n). */
char *kb_resnames_format_asked(const kb_resnames *t, char *buf, size_t size);

/* The slot of name, or -1 when nothing has asked for it. O(n). */
int kb_resnames_find(const kb_resnames *t, const char *name);

/* For a name a node advertises that has no slot: its known index, adding it
 * if new. Returns the index (>= 0), -EEXIST when the name has a slot (use
 * it), -ENOSPC when KB_RES_KNOWN_MAX known names are taken or
 * -ENAMETOOLONG. O(n + nknown) string compares. */
int kb_resnames_intern_known(kb_resnames *t, const char *name);

/* The slot known name k was given since, or -1. O(1). */
static inline int kb_resnames_known_slot(const kb_resnames *t, int32_t k)
{
	return k >= 0 && k < t->nknown && k < KB_RES_KNOWN_MAX ? t->known_slot[k] : -1;
}

/* a + b, saturated at INT64_MAX / INT64_MIN. O(1). */
static inline int64_t kb_sat_add64(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* a - b, saturated at INT64_MAX / INT64_MIN. O(1). */
static inline int64_t kb_sat_sub64(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* v clamped into int64. O(1). */
static inline int64_t kb_clamp128(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* a += b, each quantity saturated (above). O(KB_RES_MAX). */
static inline void kb_res_add(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		a->q[i] = kb_sat_add64(a->q[i], b->q[i]);
}

/* a -= b, each quantity saturated (above). O(KB_RES_MAX). */
static inline void kb_res_sub(kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		a->q[i] = kb_sat_sub64(a->q[i], b->q[i]);
}

/* True if a[i] <= b[i] for every resource. */
static inline bool kb_res_le(const kb_res *a, const kb_res *b)
{
	bool ok = true;
	for (int i = 0; i < KB_RES_MAX; i++)
		ok &= a->q[i] <= b->q[i];
	return ok;
}

/* The first resource index where req > avail, or -1 when req fits. */
static inline int kb_res_first_short(const kb_res *req, const kb_res *avail)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (req->q[i] > avail->q[i])
			return i;
	return -1;
}

/* True when a is above b in some resource other than pods (a queue over
 * its deserved share: proportion's reclaimable, reclaim's victims). */
static inline bool kb_res_above_but_pods(const kb_res *a, const kb_res *b)
{
	for (int i = 0; i < KB_RES_MAX; i++)
		if (i != KB_RES_PODS && a->q[i] > b->q[i])
			return true;
	return false;
}

/* True when every quantity is zero. */
static inline bool kb_res_is_zero(const kb_res *a)
{
	int64_t acc = 0;
	for (int i = 0; i < KB_RES_MAX; i++)
		acc |= a->q[i];
	return acc == 0;
}

/* True when the vector asks for nothing but pods: a BestEffort pod. */
bool kb_res_is_best_effort(const kb_res *a);

/* True when some quantity is negative. */
bool kb_res_any_negative(const kb_res *a);

/* a[i] = max(a[i], b[i]). */
void kb_res_max(kb_res *a, const kb_res *b);

/* Formats the non-zero quantities as "cpu: 4, memory: 4Gi, nvidia.com/gpu: 2"
 * into buf (always terminated). Returns buf. Cost: O(KB_RES_MAX). */
char *kb_res_format(const kb_res *a, const kb_resnames *t, char *buf, size_t size);

/* Formats one quantity of resource idx with the unit users expect, e.g.
 * "500m" for cpu, "7680Mi" for memory. buf needs KB_QUANTITY_BUFSZ bytes. */
char *kb_res_format_one(int64_t milli, const kb_resnames *t, int idx, char *buf);

/* One pod slot, in milli-units. */
#define KB_ONE_POD 1000

/* r as a JSON object of quantities ({"cpu": "1500m", ...}): the resources
 * of names with a non-zero quantity, pods aside, each formatted as
 * kb_res_format_one does. O(names). */
void kb_res_put_json(FILE *out, const kb_res *r, const kb_resnames *names);

#endif

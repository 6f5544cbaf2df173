/* topology.h - gangs inside network domains: the session's domain index,
 * the domain a gang is placed in, and why none would do.
 *
 * A gang's wish (kb_job.topology, api/types.h, decoded by
 * cache/decode_topology.c) names node label keys. The levels are label
 * keys, broadest first (block, rack, kubernetes.io/hostname): the gang's own
 * annotation kube-batchd.io/topology-levels, else the allocate action's
 * argument `topology-levels` in the scheduler configuration, else just the
 * key the gang names. A domain at level i is one combination of the values
 * of levels 0..i (Kueue's rule: rack "r1" of block "b1" and rack "r1" of
 * block "b2" are two racks), so every domain lies inside one domain of each
 * broader level. A node without one of those labels is in no domain at that
 * level or below (kubernetes.io/hostname defaults to the node's name).
 *
 *  - required level R: every member lands in one domain of R;
 *  - preferred level P: in one domain of P if the gang fits one; else in
 *    one domain of the next broader level, packed into as few domains of P
 *    as it can (the roomiest first); and so on up the levels; else over
 *    the whole cluster (inside its R domain when it has one), packed the
 *    same way (Kueue's podset-preferred-topology);
 *  - volcano's networkTopology: tier 1 is the narrowest level that is not
 *    kubernetes.io/hostname, tier 2 the next broader one...; mode hard with
 *    highestTierAllowed k is "required tier k, preferred tier 1"; soft, or
 *    a tier above every level, is "preferred tier 1".
 *
 * How it is placed. An action asks kb_topo_attempts() for a short list of
 * scopes (at most KB_TOPO_MAX_ATTEMPTS), sets one as the job's scope
 * (kb_topo_set_scope), places the job's tasks as usual, and commits, or
 * discards and tries the next. A scope is a hard domain (the predicate
 * refuses every node outside it, whatever action asks: kb_topo_allows) and
 * an order of domains to fill one after another (kb_best_node searches the
 * first domain with a feasible node, and only the hard domain's nodes).
 * Candidate domains come from aggregates: each domain's free resources
 * (the future idle of its ready, uncordoned nodes, kept exact through every
 * statement operation: kb_topo_node_changing / kb_topo_node_changed) must
 * hold what the gang still needs to reach minMember, and its nodes must
 * have room for that many pods of the gang's smallest request, counted node
 * by node; the tightest such domain is tried first (best fit, so that the
 * roomy ones stay whole for larger gangs). A gang some of whose members are
 * already placed stays in their domain.
 *
 * Cost: the index of one level list, O(levels x nodes log nodes) once per
 * session that meets a gang with that list; per gang, O(domains + nodes of
 * the domains counted) to choose, O(tasks x nodes of the domain) to place.
 * Everything lives in the session arena.
 */
#ifndef KB_SCHEDULER_TOPOLOGY_H
#define KB_SCHEDULER_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scheduler/framework.h"

#define KB_TOPO_MAX_LEVELS 16
#define KB_TOPO_MAX_ATTEMPTS 12

typedef struct kb_topo_tree kb_topo_tree;

/* Where a job's tasks may go and in which order (see above). */
typedef struct kb_topo_scope {
	const kb_topo_tree *tree;
	int32_t hard_level;   /* -1: no hard domain */
	uint32_t hard_domain; /* a domain of hard_level */
	int32_t order_level;  /* -1: no order */
	const uint32_t *order; /* domains of order_level inside the hard domain, to fill in turn */
	uint32_t norder;
	/* "node(s) outside the gang's topology.kubernetes.io/rack \"r1\"": the
	 * predicate's reason for a node outside the hard domain. */
	const char *outside;
} kb_topo_scope;

/* A job's attempts, best first, and what the reason needs if all fail. */
typedef struct kb_topo_attempts {
	/* Why the job cannot be placed at all (bad levels, a label no node has,
	 * no domain that could hold it): its pending reason; n is then 0. */
	const char *error;
	/* For preempt and reclaim: the job has no required level, so it
	 * evicts as any job would (no scope). */
	bool unconstrained;
	kb_topo_scope v[KB_TOPO_MAX_ATTEMPTS];
	uint32_t n;
} kb_topo_attempts;

/* Whether job j has a topology wish that the actions must honour (a
 * required or preferred level; O(1)). */
static inline bool kb_topo_wanted(const kb_job *j)
{
	return j->topology && j->topology->set && j->flavor != KB_PG_NONE;
}

/* The attempts for job j (which kb_topo_wanted) in *ret: for allocate, or
 * for preempt and reclaim (evicting: domains ranked by what they hold free
 * plus what may be evicted there, `evictable` per node, and only the
 * required level's domains; a job with no required level gets none). A job
 * already given a scope in this session (an earlier turn committed) gets
 * that scope alone. Returns 0 or -ENOMEM. O(domains + nodes counted). */
int kb_topo_attempts_for(kb_session *ssn, const kb_job *j, const kb_res *evictable,
			 kb_topo_attempts *ret);

/* Makes sc the scope of job ji's tasks for the rest of the session (copied;
 * NULL: none), and tells placement memos (kb_session_placement_changed).
 * 0 or -ENOMEM. O(1). */
int kb_topo_set_scope(kb_session *ssn, uint32_t ji, const kb_topo_scope *sc);

/* The scope of job ji, or NULL. O(1). */
static inline const kb_topo_scope *kb_topo_scope_of(const kb_session *ssn, int32_t ji);

/* Whether node ni is inside the hard domain of task t's job's scope (true
 * without one); when not, *ret_reason says so. O(1). */
bool kb_topo_allows(const kb_session *ssn, const kb_task *t, uint32_t ni, const char **ret_reason);

/* The nodes of domain d of the scope's tree at level l, in node order:
 * *ret_nodes[0 .. return value). O(1). */
uint32_t kb_topo_domain_nodes(const kb_topo_tree *tree, int32_t l, uint32_t d,
			      const uint32_t **ret_nodes);

/* The domain of level l that node ni is in, or -1. O(1). */
int32_t kb_topo_domain_of(const kb_topo_tree *tree, int32_t l, uint32_t ni);

/* Why job j found no domain, after its attempts failed (the last
 * failure's words in `fail`, or NULL): names the level, the best domain and
 * what it lacks, e.g.
 *   gang "ns/pg" needs one topology.kubernetes.io/rack (annotation
 *   kube-batchd.io/topology-required): none of 3 racks holds its 4 more
 *   pods; best rack "r2" lacks cpu: 4 (has 4 of the 8 needed)
 * From the session arena (NULL on -ENOMEM). O(nodes). */
const char *kb_topo_reason(kb_session *ssn, const kb_job *j, const char *fail);

/* Statement operations call these around every change of node ni's
 * resources, so each domain's free aggregate stays exact. O(trees x
 * levels x resources); nothing when no index was built. */
void kb_topo_node_changing(kb_session *ssn, int32_t ni);
void kb_topo_node_changed(kb_session *ssn, int32_t ni);

/* The index's invariant, for assert() in debug and test builds: every
 * domain's free aggregate and count of ready, uncordoned nodes equal what
 * its nodes hold now. True when it holds (or no index was built);
 * otherwise false and, if why != NULL, the first domain that differs in
 * why[0..size). O(trees x levels x nodes x resources). */
bool kb_topo_check(const kb_session *ssn, char *why, size_t size);

/* ---- inline -------------------------------------------------------------------- */

struct kb_topo {
	const kb_topo_scope **scope_of_job; /* per job, or NULL */
	kb_topo_tree *trees;                /* linked list of the indexes built */
};

static inline const kb_topo_scope *kb_topo_scope_of(const kb_session *ssn, int32_t ji)
{
	return ssn->topo && ji >= 0 ? ssn->topo->scope_of_job[ji] : NULL;
}

#endif

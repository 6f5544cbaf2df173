/* podtopo.h - the session's pod topology index: how many pods of each kind
 * are in each topology domain, for pod affinity, pod anti-affinity and
 * topology spread, in kube-scheduler's rules (InterPodAffinity and
 * PodTopologySpread of k8s.io/kubernetes v1.33).
 *
 * kube-scheduler works these counts out again for every pod it schedules,
 * by a pass over every pod of the cluster (PreFilter, PreScore); at 5,000
 * nodes its throughput with pod affinity falls to a few dozen pods a
 * second. Here they are worked out once per session and then kept current:
 *
 *  - When a task first asks, the selectors that matter are collected from
 *    the tasks: each pending task's own terms (what it asks of the pods
 *    around it) and every task's terms as a pod already placed (what it
 *    asks of pods that come near it: kube-scheduler's symmetry). Equal
 *    selectors are one entry (interned by their text), whatever the number
 *    of pods that carry them.
 *  - Each topology key named gets a map node -> domain (the node's value of
 *    the label), and each entry a count per domain: pods placed there that
 *    match it (or, for a term carried by placed pods, the count or the
 *    weight sum of those pods).
 *  - Statements keep the counts current: every tentative allocation,
 *    pipeline, eviction and their undoing goes through
 *    kb_podtopo_update() (scheduler/statement.c), so gang members placed
 *    earlier in the same session count, and a discarded statement leaves
 *    the counts as they were.
 *
 * A filter is then O(terms) per node and a score O(terms), never O(pods).
 * What is worked out per incoming task (its entries' ids, the domains its
 * spread constraints may use, the minimum count) is kept until the next
 * task or the next change of a count.
 *
 * Which pods count (as kube-scheduler's snapshot holds them): tasks on a
 * node (allocated, binding, bound, running, pipelined and releasing; a
 * terminating pod still counts for pod affinity, not for spread); another
 * scheduler's pods too. Evicting a task in a statement takes it out (a
 * preemption victim is gone for the pods that replace it).
 *
 * Namespaces: a term selects pods of the namespaces it lists (its pod's own
 * when it lists none and has no namespaceSelector) or of those whose labels
 * (snapshot->namespaces) match its namespaceSelector; a namespace the
 * snapshot does not know has no labels.
 *
 * Memory: from the session arena; O(keys x nodes + entries x domains).
 * Everything is deterministic (no decision reads hash order).
 */
#ifndef KB_SCHEDULER_PODTOPO_H
#define KB_SCHEDULER_PODTOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/framework.h"

typedef struct kb_podtopo kb_podtopo;

/* kube-scheduler's reasons. */
#define KB_REASON_POD_AFFINITY "node(s) didn't match pod affinity rules"
#define KB_REASON_POD_ANTI_AFFINITY "node(s) didn't match pod anti-affinity rules"
#define KB_REASON_EXISTING_ANTI_AFFINITY "node(s) didn't satisfy existing pods anti-affinity rules"
#define KB_REASON_SPREAD "node(s) didn't match pod topology spread constraints"
/* The index could not be built or read (out of memory): pod affinity and
 * spread are not checked, so nothing is placed as if they held. */
#define KB_REASON_PODTOPO_UNCHECKED                                                               \
	"pod affinity and topology spread could not be checked (out of memory); tried again next " \
	"session"
#define KB_REASON_SPREAD_LABEL \
	"node(s) didn't match pod topology spread constraints (missing required label)"

/* Makes the session's index (ssn->podtopo) if no plugin has yet: O(1).
 * It is built when a task first asks (a filter, a score, alike), from the
 * snapshot as it is then (placements of open statements included; an
 * eviction made before is told from a terminating pod by the updates it
 * saw), so a session that places nothing pays nothing. When no task has
 * pod affinity, anti-affinity or spread constraints the index is inactive
 * and every query answers at once. Building costs O(tasks) to find out
 * whether anything is asked and, when something is, O(nodes x keys +
 * placed tasks x their labels). Out of memory while building (or
 * preparing a task) fails every filter with KB_REASON_PODTOPO_UNCHECKED:
 * a constraint that was not checked is never taken as met. Returns 0 or
 * -ENOMEM (with err). */
int kb_podtopo_open(kb_session *ssn, kb_err *err);

/* Counts task t (which has just been placed on its node: delta +1, or is
 * about to leave it or has been evicted: delta -1). Calls
 * kb_session_placement_changed() when nodes other than t's own may read
 * otherwise. Called by statements only. O(t's labels + matching entries). */
void kb_podtopo_update(kb_session *ssn, const kb_task *t, int delta);

/* The required pod affinity, pod anti-affinity and existing pods'
 * anti-affinity of the task against the node, then its DoNotSchedule spread
 * constraints: KB_FIT_OK, or KB_FIT_FAIL with kube-scheduler's reason
 * (constants above). O(terms) after the per-task preparation. */
int kb_podtopo_filter(const kb_session *ssn, const kb_task *task, const kb_node *node,
		      const char **ret_reason);

/* Scores 0..10 (higher is better): the preferred pod affinity and
 * anti-affinity (the task's terms and placed pods' terms that select it,
 * required affinity of placed pods with weight 1, kube-scheduler's
 * hardPodAffinityWeight), and the ScheduleAnyway spread constraints.
 * kube-scheduler normalises by the best and worst feasible node; these
 * normalise by the best and worst domain of each term, which needs no
 * pass over the nodes (the order of nodes for one task is the same when a
 * node holds each term's best domain). 0 when the task has nothing to
 * score. O(terms). */
double kb_podtopo_affinity_score(const kb_session *ssn, const kb_task *task,
				 const kb_node *node);
double kb_podtopo_spread_score(const kb_session *ssn, const kb_task *task, const kb_node *node);

/* Whether a and b read the same to the index: same namespace and the same
 * values of every label key some selector of the session reads. True when
 * the index is inactive. O(keys read x log labels). */
bool kb_podtopo_alike(const kb_session *ssn, const kb_task *a, const kb_task *b);

#endif

/* labels.h - labels, selectors and taints: what a pod asks of a node's
 * labels and taints, in kube-scheduler's rules.
 *
 * kb_labels (api/types.h) are kept sorted by key, so a lookup is a binary
 * search. Used by the decoder, the framework's node fit (cordon), the
 * predicates, nodeorder and gpu plugins. Everything here is pure: no
 * allocation, no state. A NULL pod spec is treated as an empty one: no
 * selector, no affinity, no tolerations.
 */
#ifndef KB_API_LABELS_H
#define KB_API_LABELS_H

#include <stdbool.h>

#include "api/snapshot.h"
#include "api/types.h"

/* The value of key, or NULL when absent (or l or key is NULL). O(log n). */
const char *kb_labels_get(const kb_labels *l, const char *key);

/* True when the node matches one node selector term: every requirement
 * holds (AND). Label requirements use the operators In, NotIn (also true
 * when the label is absent), Exists, DoesNotExist, Gt and Lt (exactly one
 * value; both sides base-10 int64, otherwise no match). Field requirements
 * (req->field) see one field, "metadata.name" = node->name; any other field
 * is absent. A term without requirements matches nothing (kube-scheduler).
 * Cost: O(requirements * (values + log labels)). */
bool kb_match_selector_term(const kb_selector_term *term, const kb_node *node);

/* True when the pod may run on the node as far as labels go: every
 * nodeSelector key=value is among the node's labels, and, when the pod has
 * required node affinity terms, at least one of them matches (terms ORed;
 * see kb_match_selector_term). Cost: O(selector * log labels) plus the terms'. */
bool kb_match_node_selector(const kb_pod_spec *spec, const kb_node *node);

/* True when one of the pod's tolerations tolerates taint (kube-scheduler's
 * ToleratesTaint: the effects match or the toleration's is KB_EFFECT_ALL;
 * the keys match or the toleration's is empty; operator Exists, or Equal
 * with equal values). The taint's effect is not looked at otherwise.
 * Cost: O(tolerations). */
bool kb_tolerates_taint(const kb_pod_spec *spec, const kb_taint *taint);

/* True when every NoSchedule and NoExecute taint of the node is tolerated
 * (PreferNoSchedule never blocks). Otherwise false and, when
 * ret_untolerated is not NULL, *ret_untolerated points at the node's first
 * untolerated taint (not written on success).
 * Cost: O(taints * tolerations). */
bool kb_tolerates_taints(const kb_pod_spec *spec, const kb_node *node,
			 const kb_taint **ret_untolerated);

/* True when labels match the label selector (metav1.LabelSelector, as
 * labels.Selector reads it): every requirement holds, In (the label is
 * present with one of the values), NotIn (absent, or none of the values),
 * Exists, DoesNotExist. No requirements: true; a nil selector
 * (sel->nothing) or NULL: false. Cost: O(requirements * (values + log
 * labels)). */
bool kb_match_label_selector(const kb_label_selector *sel, const kb_labels *labels);

/* The well-known node label of a node's name, the narrowest topology domain. */
#define KB_LABEL_HOSTNAME "kubernetes.io/hostname"

/* Whether s[0..n) is a valid label key, [prefix/]name, as Kubernetes'
 * ValidateLabelName: the prefix a DNS-1123 subdomain (at most 253 of
 * [a-z0-9-.], alphanumeric at both ends), the name 1..63 of [A-Za-z0-9-_.],
 * alphanumeric at both ends. O(n). */
bool kb_label_key_valid(const char *s, size_t n);

/* Whether s[0..n) is a valid label value: empty, or a name as above. O(n). */
bool kb_label_value_valid(const char *s, size_t n);

#endif

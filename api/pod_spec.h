/* pod_spec.h - comparing the decoded pieces of pods (api/types.h) by value.
 *
 * Two users: placement reuses a node search for a gang member whose spec
 * reads the same to every predicate and score (scheduler/actions/
 * placement.c), and the object store refreshes a pod in place when an
 * update leaves everything a build reads as it was (cache/objects.h).
 * Strings compare by text; NULL equals only NULL.
 */
#ifndef KB_API_POD_SPEC_H
#define KB_API_POD_SPEC_H

#include <stdbool.h>

#include "api/types.h"

/* Same keys and values, in order (kb_labels are sorted by key). O(n). */
bool kb_labels_equal(const kb_labels *a, const kb_labels *b);

/* Whether two pod specs read the same to every predicate and score: every
 * field of kb_pod_spec but the pod's own labels (node selector, required
 * and preferred node affinity, tolerations, host ports, pod affinity and
 * anti-affinity, topology spread, GPU wishes). The pod's labels and
 * namespace matter too once other pods select pods (scheduler/podtopo.h
 * compares those). NULL equals only NULL. O(size of the specs). */
bool kb_pod_spec_same_placement(const kb_pod_spec *a, const kb_pod_spec *b);

/* Only the pod affinity, anti-affinity and topology spread fields. */
bool kb_pod_spec_same_topology(const kb_pod_spec *a, const kb_pod_spec *b);

#endif

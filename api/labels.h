/* labels.h - looking up labels and annotations.
 *
 * kb_labels (api/types.h) are kept sorted by key, so a lookup is a binary
 * search. Used by the decoder, the predicates and the gpu plugin.
 */
#ifndef KB_API_LABELS_H
#define KB_API_LABELS_H

#include "api/types.h"

/* The value of key, or NULL when absent (or l or key is NULL). O(log n). */
const char *kb_labels_get(const kb_labels *l, const char *key);

#endif

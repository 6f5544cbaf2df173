/* queue_conf.h - the multi-tenant queue configuration file (--queue-conf).
 *
 *   queues:
 *   - name: research
 *     weight: 3                       # >= 1, default 1
 *     capability: {cpu: "64", nvidia.com/gpu: "16"}   # ceiling (optional)
 *     guarantee: {cpu: "8"}           # floor (optional)
 *     reclaimable: true               # default true
 *     namespaces: [team-a, team-b]    # jobs there fall into this queue when
 *                                     # their PodGroup names no queue
 *     parent: root                    # optional, another queue of the file
 *     state: Open                     # Open (default) | Closed
 *
 * Merge rule with Queue objects from the API or manifests (documented in
 * queue/README.md): a queue defined in the file wins over a Queue object of
 * the same name; Queue objects the file does not name are used as they are;
 * the default queue exists even if nobody defines it (weight 1).
 *
 * Validation, each refused with "file:line:column: what is wrong": an unknown
 * key, a bad quantity, a duplicate queue name, a namespace mapped to two
 * queues, weight < 1, a guarantee above the capability for some resource, an
 * unknown parent or a parent cycle, a bad state. Against a cluster
 * (kb_queue_conf_check_cluster): guarantees summing above the cluster's
 * allocatable.
 *
 * Ownership: everything lives in conf->arena; kb_queue_conf_release() frees it.
 */
#ifndef KB_QUEUE_QUEUE_CONF_H
#define KB_QUEUE_QUEUE_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "api/resource.h"
#include "api/types.h"
#include "base/arena.h"
#include "base/error.h"

/* One queue as the file defines it. */
typedef struct kb_queue_def {
	const char *name;
	int32_t weight;
	uint32_t capability_mask; /* bit r: capability.q[r] applies */
	kb_res capability;
	kb_res guarantee;
	bool reclaimable;
	kb_queue_state state;
	const char *parent; /* or NULL */
	int line, col;      /* where the queue is defined */
} kb_queue_def;

typedef struct kb_ns_mapping {
	const char *ns;
	const char *queue;
} kb_ns_mapping;

typedef struct kb_queue_conf {
	kb_arena arena;
	const char *source;
	kb_queue_def *queues; /* file order */
	uint32_t nqueues;
	kb_ns_mapping *ns_map; /* sorted by namespace */
	uint32_t nns;
} kb_queue_conf;

/* Loads and validates a file. Resource names are interned into *resnames.
 * Returns 0, or -errno (-ENOENT, -EINVAL, -ENOSPC) with err =
 * "file:line:col: what is wrong"; *ret is then released. */
int kb_queue_conf_load_file(const char *path, kb_resnames *resnames, kb_queue_conf *ret,
			    kb_err *err);

/* The same from a buffer; name is used in messages. */
int kb_queue_conf_load_buffer(const char *buf, size_t len, const char *name, kb_resnames *resnames,
			      kb_queue_conf *ret, kb_err *err);

void kb_queue_conf_release(kb_queue_conf *qc);

/* Checks the file against a cluster: the guarantees of all queues, summed
 * per resource, must not exceed total. Returns 0 or -EINVAL with err naming
 * the file, the resource, the sum and the cluster's allocatable. */
int kb_queue_conf_check_cluster(const kb_queue_conf *qc, const kb_res *total,
				const kb_resnames *resnames, kb_err *err);

/* The queue a namespace maps to, or NULL. O(log namespaces). */
const char *kb_queue_conf_ns_queue(const kb_queue_conf *qc, const char *ns);

#endif

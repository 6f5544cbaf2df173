/* cluster_read.h - the cluster's state, read once through the API, into
 * the scheduler's store (cache/cluster.h): what `kube-batchd top`,
 * `explain` and `simulate --from-cluster` look at.
 *
 * Read-only: discovery (GET /apis and the scheduling.k8s.io versions), then
 * one paginated LIST of each resource the daemon watches
 * (kube/kube_source.h: Nodes, Pods not in a final phase, PriorityClasses,
 * Namespaces, the PodGroups and Queues of every family served), through
 * the daemon's own reflectors and decoders (kube/reflector.h,
 * cache/objects.h), so an object is read exactly as the daemon reads it.
 * Nothing is written to the API. The reflectors are stopped as soon as
 * every one has listed: the store holds one consistent LIST per resource
 * (resources are listed concurrently, not as one snapshot across them).
 *
 * Errors (returned, err says which and names the server's address):
 *  -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT ... the server cannot be
 *   reached ("cannot reach the API server at URL: ...");
 *  -EACCES: it answered 401 (the credentials were refused);
 *  -EPERM: it answered 403 (the user may not list a resource; err names it);
 *  -EIO: another failure of a LIST or of discovery (err has the status);
 *  -ETIMEDOUT: not every resource listed within timeout_ms;
 *  -ENOENT: no API server configured (kube/kube_source.h); -ENOMEM.
 * An object that does not decode is not an error: it is left out (or its
 * stored version marked, or, for a pod on a node, its node taken out of
 * placement: kb_cluster_undecodable_object, as the daemon does) and
 * counted in
 * ret->undecodable, its first message kept in ret->first_undecodable.
 *
 * Ownership: objects go to the store (the caller's, initialised with
 * kb_cluster_init and its scheduler names, default queue and queue file
 * before the call; on failure it may hold part of the cluster: release it).
 * Cost: O(objects) decoding, one page (500 objects) in memory at a time
 * beyond the store; a private libev loop and API client for the call.
 */
#ifndef KB_KUBE_CLUSTER_READ_H
#define KB_KUBE_CLUSTER_READ_H

#include <stdint.h>

#include "base/error.h"
#include "cache/cluster.h"
#include "scheduler/runtimes.h"

/* Finished pods kept for the history in one read; the rest are not read. */
#define KB_CLUSTER_READ_FINISHED_MAX 10000

typedef struct kb_cluster_read_options {
	const char *kubeconfig; /* --kubeconfig, or NULL (kube/kube_source.h) */
	const char *master;     /* --master, or NULL */
	long timeout_ms;        /* the whole read; 0: 60000 */
	/* When set, one more LIST: the pods in phase Succeeded
	 * (KB_FINISHED_POD_FIELD_SELECTOR), whose runs go into this history
	 * (scheduler/runtimes.h, kb_runtimes_from_finished) once the rest is
	 * read; they do not enter the store. At most
	 * KB_CLUSTER_READ_FINISHED_MAX are kept for it. */
	kb_runtimes *history;
} kb_cluster_read_options;

typedef struct kb_cluster_read_info {
	char server[256];         /* the API server's address, as configured */
	int64_t read_ms;          /* wall-clock time (Unix ms) when the last LIST ended */
	uint32_t resources;       /* resources listed */
	uint32_t undecodable;     /* objects that did not decode */
	char first_undecodable[512];
} kb_cluster_read_info;

/* Reads the cluster into c. ret (may be NULL) is filled on success and,
 * as far as known, on failure (server). See above for errors. */
int kb_cluster_read(const kb_cluster_read_options *opt, kb_cluster *c, kb_cluster_read_info *ret,
		    kb_err *err);

#endif

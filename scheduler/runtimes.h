/* runtimes.h - a bounded history of how long pods ran, by queue and by job
 * name, for the pods that say nothing of when they end.
 *
 * The daemon records a pod's runtime when it leaves the cluster after
 * running (it finished, Succeeded or Failed, or was deleted while on a
 * node; pods the scheduler itself evicted are not recorded): from its
 * status.startTime, else the time the scheduler bound it, to the moment
 * the watch showed it gone. A finished pod the API still holds (phase
 * Succeeded) tells its run too, from status.startTime to its containers'
 * last terminated.finishedAt (kb_runtimes_record_finished): `explain` and
 * `simulate --from-cluster` read the history from them (kube/cluster_read.h),
 * and so does the daemon when it starts. The estimator (scheduler/estimate.h) asks for
 * the expected runtime of a running pod with no duration annotation and no
 * activeDeadlineSeconds: the median of its job name's history, else of its
 * queue's, else none.
 *
 * Keys (kb_runtimes_job_name says exactly): a job is "NAMESPACE/NAME" where
 * NAME is the pod's label training.kubeflow.org/job-name (Kubeflow's
 * operators), else batch.kubernetes.io/job-name or job-name (a batch/v1
 * Job), else volcano.sh/job-name (a volcano Job), else its PodGroup's name
 * with a trailing "-<UUID>" (volcano's generated "<job>-<uid>") cut off;
 * a pod with none of them has no job name. A queue is its name. The two
 * kinds of key are kept apart ("job " and "queue " prefixes inside).
 *
 * Bounds: at most max_keys keys (job and queue together); when full, the
 * key recorded least recently is forgotten. Per key the last per_key
 * runtimes (a ring). Memory: about (64 + key length + 8 x per_key) bytes per
 * key. In memory only: a restarted daemon starts with what the finished
 * pods still in the API say.
 *
 * Not thread-safe; no global state. Cost: record O(1) amortised (plus
 * O(max_keys) when a key must be forgotten), median O(per_key log per_key).
 */
#ifndef KB_SCHEDULER_RUNTIMES_H
#define KB_SCHEDULER_RUNTIMES_H

#include <stddef.h>
#include <stdint.h>

#include "base/strmap.h"
#include "cache/cluster.h"
#include "cache/objects.h"

#define KB_RUNTIMES_MAX_PER_KEY 64
#define KB_RUNTIMES_DEFAULT_KEYS 4096
#define KB_RUNTIMES_DEFAULT_PER_KEY 16

typedef struct kb_runtime_key {
	char *key; /* owned; "job NS/NAME" or "queue NAME" */
	int64_t ms[KB_RUNTIMES_MAX_PER_KEY];
	uint32_t n, next; /* samples held; where the next goes */
	uint64_t last_use; /* kb_runtimes.clock when last recorded */
} kb_runtime_key;

typedef struct kb_runtimes {
	kb_strmap by_key; /* key -> index in keys */
	kb_runtime_key *keys;
	uint32_t nkeys, max_keys, per_key;
	uint64_t clock; /* counts records */
} kb_runtimes;

/* max_keys 0: KB_RUNTIMES_DEFAULT_KEYS; per_key 0: KB_RUNTIMES_DEFAULT_PER_KEY,
 * at most KB_RUNTIMES_MAX_PER_KEY (more is cut to it). */
void kb_runtimes_init(kb_runtimes *rt, uint32_t max_keys, uint32_t per_key);
void kb_runtimes_release(kb_runtimes *rt);

/* Records one runtime (ms >= 0; a negative one is ignored) under the job
 * name (may be NULL: none) and the queue (may be NULL). Returns 0 or
 * -ENOMEM (the history is as it was for the key that failed). */
int kb_runtimes_record(kb_runtimes *rt, const char *job, const char *queue, int64_t ms);

/* Records the run of finished pod o (phase Succeeded, kb_pod_obj.start_ms
 * and finished_ms both known, the end not before the start) under its job
 * name and queue (may be NULL). Returns 1 when recorded, 0 when o tells no
 * run, or -ENOMEM. */
int kb_runtimes_record_finished(kb_runtimes *rt, const kb_object *o, const char *queue);

/* The runs of finished pods (read from the API; borrowed, in any order)
 * into rt, oldest end first so that the ring of each key keeps the latest:
 * only the pods of c's scheduler names, each under its job name and its
 * queue as c resolves it (kb_cluster_pod_queue: c should hold the
 * PodGroups). *ret_recorded (may be NULL): how many were recorded.
 * Returns 0 or -ENOMEM. O(n log n). */
int kb_runtimes_from_finished(kb_runtimes *rt, const kb_cluster *c, kb_object *const *pods,
			      size_t n, uint32_t *ret_recorded);

/* The expected runtime: the median of the job name's runtimes, else of
 * the queue's, else -1. *ret_from (may be NULL) says which: "job" or
 * "queue" (constants). */
int64_t kb_runtimes_expect(const kb_runtimes *rt, const char *job, const char *queue,
			   const char **ret_from);

/* The job name of pod o ("NAMESPACE/NAME", above) into buf (size n);
 * returns buf, or NULL when the pod has none or it does not fit. */
const char *kb_runtimes_job_name(const kb_object *o, char *buf, size_t n);

#endif

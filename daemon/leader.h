/* leader.h - leader election on a coordination.k8s.io/v1 Lease.
 *
 * The Lease <namespace>/<name> (--leader-elect-resource-namespace, default
 * kube-system, and --leader-elect-resource-name), as client-go's
 * leaderelection does it, with kube-scheduler's defaults: every retry period
 * (2 s) the elector reads the lease and writes it as its own when it holds it
 * (a renewal) or when it is free: no holder, or a record that has not
 * changed for the lease's duration (15 s; the leaseDurationSeconds written is
 * this instance's, whole seconds) by our own monotonic clock, never
 * comparing clocks with the holder. A leader that could not renew for the
 * renew deadline (10 s), or that finds the lease held by someone else, has
 * lost it. Writes are conditional on the resourceVersion read, so two
 * electors never both win.
 *
 * Callbacks (on the loop, never inside a kb_leader_* call):
 *   gained    this instance now leads (once per term);
 *   lost      leadership was lost; the elector stops trying: the caller is
 *             expected to stop (cluster mode exits with -ENOLCK so that its
 *             Deployment restarts it);
 *   released  a release started by kb_leader_release is over: the lease was
 *             given up, the API server refused, or 1 s passed without an
 *             answer.
 * The elector logs what it does (base/log.h): who holds the lease, a take
 * over, a loss, a failed read or write.
 *
 * Ownership: the elector borrows the loop and the client (both outlive it)
 * and copies the name. Cost: one GET per retry period, one PUT per renewal.
 */
#ifndef KB_DAEMON_LEADER_H
#define KB_DAEMON_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "kube/kube_client.h"

struct ev_loop;

typedef struct kb_leader kb_leader;

typedef struct kb_leader_callbacks {
	void (*gained)(void *ctx);   /* may be NULL */
	void (*lost)(void *ctx);     /* required */
	void (*released)(void *ctx); /* required */
} kb_leader_callbacks;

/* Which Lease, and the timing. A zero duration takes client-go's default. */
typedef struct kb_leader_config {
	const char *namespace_;    /* NULL or "": kube-system */
	const char *name;          /* required */
	int64_t lease_duration_ms; /* 0: 15 s */
	int64_t renew_deadline_ms; /* 0: 10 s */
	int64_t retry_period_ms;   /* 0: 2 s */
} kb_leader_config;

#define KB_LEADER_DEFAULT_NAMESPACE "kube-system"
#define KB_LEADER_DEFAULT_LEASE_MS 15000
#define KB_LEADER_DEFAULT_RENEW_MS 10000
#define KB_LEADER_DEFAULT_RETRY_MS 2000

/* Starts electing for the Lease cfg names, the elector in *ret: the first
 * attempt is made on the loop's next iteration. The identity is
 * "<hostname>_<time><pid>". Returns 0, or -errno with err: -EINVAL (no
 * name, callbacks missing, a negative duration, or durations that are not
 * lease > renew deadline > retry period, as client-go requires),
 * -ENAMETOOLONG (the lease's path would not fit 512 bytes) or -ENOMEM. The
 * elector copies what it keeps of cfg. */
int kb_leader_start(struct ev_loop *loop, kb_kube_client *client, const kb_leader_config *cfg,
		    const kb_leader_callbacks *cb, void *ctx, kb_leader **ret, kb_err *err);

/* Gives the lease up (holder "", as client-go's ReleaseOnCancel) so that a
 * successor need not wait for it to expire, and stops electing. Returns true
 * when the release was sent: `released` follows, after the answer or after
 * at most 1 s. Returns false, and calls nothing, when this instance does not
 * lead (or has not written the lease yet) or the request cannot be made. */
bool kb_leader_release(kb_leader *l);

/* Stops the elector, cancels its requests in flight (their callbacks are
 * not called) and frees it; no callback runs after. Accepts NULL; returns
 * NULL. */
kb_leader *kb_leader_free(kb_leader *l);

#endif

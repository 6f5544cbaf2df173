/* token_bucket.h - the client-side rate limiter (--kube-api-qps,
 * --kube-api-burst), as client-go's flowcontrol token bucket.
 *
 * The bucket holds up to `burst` tokens and gains `qps` tokens a second; a
 * request takes one. A full bucket lets `burst` requests through at once,
 * then one every 1/qps seconds.
 *
 * Pure: the caller passes the time (milliseconds on any clock that does not
 * go back; a time earlier than the last one adds nothing); no clock, no
 * allocation, no global state. Cost: O(1).
 */
#ifndef KB_KUBE_TOKEN_BUCKET_H
#define KB_KUBE_TOKEN_BUCKET_H

#include <stdint.h>

typedef struct kb_token_bucket {
	double qps;     /* tokens gained a second, > 0 */
	double burst;   /* most tokens held, >= 1 */
	double tokens;  /* held at last_ms */
	int64_t last_ms; /* time of the last refill */
} kb_token_bucket;

/* A full bucket at now_ms. qps <= 0 is taken as 1 token a second, burst < 1
 * as 1. */
void kb_token_bucket_init(kb_token_bucket *b, double qps, int burst, int64_t now_ms);

/* Takes a token at now_ms if there is one: returns 0. Otherwise takes
 * nothing and returns the milliseconds until there will be one (>= 1,
 * rounded up, so that a timer set for the wait finds the token). */
int64_t kb_token_bucket_take(kb_token_bucket *b, int64_t now_ms);

#endif

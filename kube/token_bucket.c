/* token_bucket.c - the rate limiter's arithmetic (see token_bucket.h). */
#include "kube/token_bucket.h"

#include <math.h>

/* Tokens are doubles: a wait computed for exactly one token may refill to
 * 0.999999999; that counts as one. */
#define TOKEN_EPSILON 1e-9

void kb_token_bucket_init(kb_token_bucket *b, double qps, int burst, int64_t now_ms)
{
	b->qps = qps > 0 ? qps : 1.0;
	b->burst = burst < 1 ? 1.0 : (double)burst;
	b->tokens = b->burst;
	b->last_ms = now_ms;
}

int64_t kb_token_bucket_take(kb_token_bucket *b, int64_t now_ms)
{
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) / 1000.0 * b->qps;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_ms = now_ms;
	}
	if (b->tokens >= 1.0 - TOKEN_EPSILON) {
		b->tokens = b->tokens > 1.0 ? b->tokens - 1.0 : 0.0;
		return 0;
	}
	double wait_ms = ceil((1.0 - b->tokens) / b->qps * 1000.0 - TOKEN_EPSILON);
	return wait_ms >= 1.0 ? (int64_t)wait_ms : 1;
}

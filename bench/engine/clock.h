/* clock.h - the two clocks the engine benchmarks read: wall time
 * (CLOCK_MONOTONIC) and this thread's CPU time, which on a shared machine
 * moves far less than the wall clock when other work competes for the
 * cores. Milliseconds as doubles. O(1), no state. */
#ifndef KB_BENCH_ENGINE_CLOCK_H
#define KB_BENCH_ENGINE_CLOCK_H

#include <time.h>

static inline double bench_clock_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline double bench_mono_ms(void)
{
	return bench_clock_ms(CLOCK_MONOTONIC);
}

static inline double bench_cpu_ms(void)
{
	return bench_clock_ms(CLOCK_THREAD_CPUTIME_ID);
}

#endif

/* clock.c - see clock.h. */
#include "base/clock.h"

#include <time.h>

static struct timespec read_clock(clockid_t id)
{
	struct timespec ts = {0};
	if (clock_gettime(id, &ts) < 0)
		ts = (struct timespec){0};
	return ts;
}

double kb_mono_s(void)
{
	struct timespec ts = read_clock(CLOCK_MONOTONIC);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t kb_mono_ns(void)
{
	struct timespec ts = read_clock(CLOCK_MONOTONIC);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kb_wall_ms(void)
{
	struct timespec ts = read_clock(CLOCK_REALTIME);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t kb_wall_ns(void)
{
	struct timespec ts = read_clock(CLOCK_REALTIME);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

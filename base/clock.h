/* clock.h - the two clocks the project reads, in the units its callers use.
 *
 * Monotonic time (kb_mono_*) measures intervals: timeouts, backoffs, how
 * long something took. Wall time (kb_wall_*) is what is written for people
 * and the API: timestamps, annotations, record lines. Never subtract one
 * from the other.
 *
 * Errors: none. clock_gettime cannot fail for these clocks on Linux with a
 * valid buffer; if it ever did, the reading is 0.
 * Cost: one vDSO call, tens of nanoseconds.
 */
#ifndef KB_BASE_CLOCK_H
#define KB_BASE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in seconds. */
double kb_mono_s(void);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t kb_mono_ns(void);

/* CLOCK_REALTIME in Unix milliseconds. */
int64_t kb_wall_ms(void);

/* CLOCK_REALTIME in Unix nanoseconds. */
int64_t kb_wall_ns(void);

#endif

/* defaults.h - the defaults a user can see, each in one place.
 *
 * The scheduler name pods opt in with, the queue a job falls into when
 * nothing names one, and the schedule period. The built-in scheduler
 * configuration is scheduler/conf.h's KB_CONF_DEFAULT; the daemon's flags
 * take their defaults from here (cmd/main.c), as do the simulator, check-
 * config and the benchmarks.
 */
#ifndef KB_API_DEFAULTS_H
#define KB_API_DEFAULTS_H

#define KB_DEFAULT_SCHEDULER_NAME "kube-batchd"
#define KB_DEFAULT_QUEUE "default"
#define KB_DEFAULT_PERIOD_MS 1000
/* How many scheduler names (--scheduler-name, repeated) one daemon answers to. */
#define KB_MAX_SCHEDULER_NAMES 8

#endif

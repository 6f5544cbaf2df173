/* check_config.h - `kube-batchd check-config`: validate the configuration
 * files and show the queue tree with the shares it would give.
 *
 *   kube-batchd check-config --queue-conf F [--scheduler-conf F] [-f CLUSTER.yaml]...
 *
 * Validates, in this order, stopping at the first error: the scheduler
 * configuration (if given), the queue configuration file (if given), the
 * cluster manifests (if given: Nodes, Queues, PodGroups, ... exactly what
 * `simulate -f` takes), and the queue file's guarantees against the
 * cluster's total allocatable (kb_queue_conf_check_cluster).
 *
 * When everything is valid it prints to out, deterministically:
 *  - one line per checked file with what it holds;
 *  - the queue tree, children indented under their parent; roots come in
 *    file order, then the Queue objects of the manifests that the file does
 *    not define (by name; a file queue wins over an object of the same name,
 *    see queue/README.md), then the implicit default queue. Each queue shows
 *    where it comes from, its weight, reclaimable flag, state, capability,
 *    guarantee, namespaces and - with a cluster - its deserved share when
 *    every queue is hungry: kb_deserved_compute() with every queue asking for
 *    the cluster's whole allocatable, the arithmetic the proportion plugin
 *    uses. Without a cluster the deserved column is left out and a line says
 *    why;
 *  - warnings that do not make the files invalid (a PodGroup naming a queue
 *    that does not exist, a scheduler configuration without the proportion
 *    plugin, a queue whose parent chain loops through Queue objects).
 *
 * Nothing is printed to out on failure.
 */
#ifndef KB_SCHEDULER_CHECK_CONFIG_H
#define KB_SCHEDULER_CHECK_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "scheduler/conf.h"

typedef struct kb_check_config_options {
	const char *queue_conf;     /* NULL: no queue file (only Queue objects and default) */
	const kb_registry *registry; /* what the configuration may name (required) */
	const char *scheduler_conf; /* NULL: the built-in default, not checked */
	const char *const *files;   /* cluster manifests (-f); nfiles may be 0 */
	uint32_t nfiles;
	const char *scheduler_name; /* required (api/defaults.h) */
	const char *default_queue;  /* required (api/defaults.h) */
} kb_check_config_options;

/* Validates the files named in *o and prints the report to out.
 * Returns 0 when every file is valid; -EINVAL (a file is wrong: err says
 * "file:line:col: what is wrong"), -ENOENT (a file is missing), -ENOSPC (too
 * many resource names) or -ENOMEM, with err set. Cost: loading the files,
 * plus O(queues^2 + queues x resources x 64) for the tree and the shares. */
int kb_check_config(const kb_check_config_options *o, FILE *out, kb_err *err);

#endif

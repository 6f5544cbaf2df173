/*
 * openb_csv.h - load the openb trace CSVs (shared/data/openb) into the
 * kb_gpu_* model of plugins/gpu_frag.h.
 *
 * Columns are looked up by header name, so both pod layouts load: the full
 * 11-column one and the 5-column one of multigpu20. A header naming a column
 * that is not part of the format, a missing required column, a row with the
 * wrong number of fields or a malformed number is an error naming the file
 * and line. Empty lines are skipped; CRLF line ends are accepted.
 *
 * Nodes: sn, cpu_milli, memory_mib, gpu, model (required: all but sn).
 * Pods: name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
 *   pod_phase, creation_time, deletion_time, scheduled_time (required:
 *   cpu_milli, memory_mib, num_gpu, gpu_milli). gpu_spec is a '|'-separated
 *   list of acceptable models; a task may run on a node whose `model`
 *   equals one of them exactly; an empty or absent gpu_spec accepts any.
 */
#ifndef KB_BENCH_OPENB_CSV_H
#define KB_BENCH_OPENB_CSV_H

#include <stddef.h>

#include "plugins/gpu_frag.h"

/* Load the nodes file. Node models are interned into *models. On success
 * returns 0 and *ret_nodes (malloc'ed, caller frees) and *ret_count; on
 * failure returns a negative errno (-ENOENT etc. for I/O, -EINVAL for
 * content) with a message "FILE:LINE: what" in err (always terminated),
 * and writes no ret_ parameter. Work: O(file size). */
int openb_load_nodes(const char *path, struct kb_gpu_models *models,
		     char *err, size_t errlen, struct kb_gpu_node **ret_nodes,
		     size_t *ret_count);

/* Load the pods file; as openb_load_nodes, tasks in file order. */
int openb_load_pods(const char *path, struct kb_gpu_models *models,
		    char *err, size_t errlen, struct kb_gpu_task **ret_tasks,
		    size_t *ret_count);

#endif /* KB_BENCH_OPENB_CSV_H */

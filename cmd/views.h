/* views.h - what `kube-batchd top` and `explain` show, worked out from a
 * snapshot (api/snapshot.h) of the cluster's state.
 *
 * Pure: no I/O, no clock (the caller passes now), no global state; every
 * function reads the snapshot and writes only its ret_ argument.
 * Strings in results point into the snapshot (valid while it is).
 */
#ifndef KB_CMD_VIEWS_H
#define KB_CMD_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/snapshot.h"

/* Arena's GPU modes (kubeflow/arena pkg/topnode): a node labelled for
 * gpushare (gpushare=true, cgpu=true, ack.node.gpu.schedule=share|cgpu) is
 * "share", else one that advertises nvidia.com/gpu is "exclusive". */
typedef enum kb_arena_mode { KB_ARENA_NONE, KB_ARENA_EXCLUSIVE, KB_ARENA_SHARE } kb_arena_mode;

typedef struct kb_node_view {
	const char *name;
	bool ready, cordoned;
	/* GPUs as `arena top node` counts them: exclusive, nvidia.com/gpu
	 * advertised and the nvidia.com/gpu the pods on the node ask for
	 * (replicas on a time-sliced node); share, aliyun.com/gpu-count and
	 * the devices that hold a pod (ALIYUN_COM_GPU_MEM_IDX). */
	kb_arena_mode arena_mode;
	int64_t arena_total, arena_allocated;
	/* The scheduler's books: how the node shares its GPUs, the physical
	 * GPUs and replicas it read, nvidia.com/gpu allocatable and used in
	 * milli (kube-batchd.io/gpu-milli shares included), aliyun.com/gpu-mem
	 * total and used in milli (0 and -1 slot when no pod asks for it). */
	const char *sharing; /* "none", "whole", "time-slicing", "mps", "gpushare" */
	int32_t gpus, replicas;
	int64_t gpu_alloc, gpu_used;
	int64_t gpu_mem_total, gpu_mem_used;
	int64_t cpu_alloc, cpu_used, mem_alloc, mem_used; /* milli-cpu; memory in milli-bytes */
	uint32_t pods; /* pods holding room on it, other schedulers' too */
} kb_node_view;

/* Node n of s. Cost: O(pods on n). */
void kb_node_view_of(const kb_snapshot *s, uint32_t n, kb_node_view *ret);

/* volcano's share of one queue (api/helpers Share, as the proportion
 * plugin computes it): the largest allocated/deserved over the resources,
 * pods aside; a resource deserved 0 counts 1 when any is allocated, else
 * 0. O(KB_RES_MAX). */
double kb_queue_share(const kb_res *allocated, const kb_res *deserved);

/* Whether job j waits: ours, not finished, fewer pods bound or running
 * than minMember (at least 1). O(1). */
bool kb_job_waiting(const kb_job *j);

/* What the free room of the schedulable nodes says of a waiting job, by
 * requests alone (no predicates, queues or priorities: the scheduler's
 * reason says those):
 *  - needed: pods still to place for minMember (minMember - bound);
 *  - pending: its pending pods; fit: how many of them first-fit, in the
 *    job's order, into the nodes' free room (idle + releasing -
 *    pipelined), each taking room from the next;
 *  - nodes_with_room: schedulable nodes where its first pending pod fits
 *    on its own;
 *  - need: the requests of the pods that did not fit, summed;
 *  - free: what the schedulable nodes have free, summed;
 *  - missing: need less the room the pods that fit left, where positive
 *    (what the nodes lack in all; zero when the room is there but cut up
 *    between nodes);
 *  - short_res: the first resource a pod that did not fit lacked on the
 *    roomiest node, or -1.
 * Returns 0 or -ENOMEM. Cost: O(pending pods x nodes). */
typedef struct kb_shortfall {
	int32_t needed;
	uint32_t pending, fit, nodes_with_room;
	kb_res need, free, missing;
	int short_res;
} kb_shortfall;
int kb_job_shortfall(const kb_snapshot *s, uint32_t j, kb_shortfall *ret);

#endif

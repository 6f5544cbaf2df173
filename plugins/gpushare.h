/* gpushare.h - Alibaba's GPU sharing (gpushare-device-plugin, Arena's
 * --gpumemory), as the gpu plugin (plugins/gpu.c) applies it.
 *
 * A node advertises its GPUs' memory as aliyun.com/gpu-mem (all devices
 * together, in the device plugin's unit: GiB by default) and their number
 * as aliyun.com/gpu-count; each device has gpu-mem / gpu-count of it
 * (whole units, rounded down, as gpushare-scheduler-extender computes it).
 * A pod asks for aliyun.com/gpu-mem and runs on one device, which the
 * scheduler chooses and writes into the pod's annotations before the pod is
 * bound (ALIYUN_COM_GPU_MEM_IDX and the others, cache/objects.h); the
 * device plugin's Allocate reads them and exposes that device. The kubelet
 * only counts the node's total, so the per-device fit is ours:
 *
 *   - a device holds the gpu-mem of the pods whose ALIYUN_COM_GPU_MEM_IDX
 *     names it (a pod bound without one, or with an index the node lacks,
 *     is charged to the device this module would have chosen: never
 *     counted nowhere);
 *   - a pod fits a node when one device has its whole ask free (never split);
 *   - the device chosen is the one with the least free memory that holds
 *     the ask, the lowest index among equals (gpushare-scheduler-extender's
 *     rule), recorded through kb_session_set_task_devices (one bit).
 *
 * Books are built on first use in a session, O(pods on gpushare nodes);
 * every other call is O(devices of the node). A pod that asks for both
 * aliyun.com/gpu-mem and nvidia.com/gpu is refused (two device plugins
 * cannot both hand it a GPU). State lives in the session arena.
 */
#ifndef KB_PLUGINS_GPUSHARE_H
#define KB_PLUGINS_GPUSHARE_H

#include <stdbool.h>

#include "scheduler/framework.h"

typedef struct kb_gpushare kb_gpushare;

/* One device's aliyun.com/gpu-mem on node n (slot mem_res), in
 * milli-units: whole units of the node's total divided by its
 * aliyun.com/gpu-count, rounded down as the extender computes it; 0 when
 * the node shares none. What the pod annotation ALIYUN_COM_GPU_MEM_DEV
 * says. O(1). */
int64_t kb_gpushare_device_mem(const kb_node *n, int mem_res);

/* The session's state, or NULL when no pod or node mentions
 * aliyun.com/gpu-mem (then every other call is skipped). -ENOMEM in err. */
int kb_gpushare_open(kb_session *ssn, kb_gpushare **ret, kb_err *err);

/* True when t asks for aliyun.com/gpu-mem. O(1). g may be NULL. */
bool kb_gpushare_asks(const kb_gpushare *g, const kb_task *t);

/* KB_FIT_OK or KB_FIT_FAIL with a reason in kube-scheduler's style. */
int kb_gpushare_predicate(kb_gpushare *g, const kb_session *ssn, const kb_task *t,
			  const kb_node *n, const char **ret);

/* The share of the chosen device's memory in use once t is placed there
 * (0..1): higher packs pods onto devices already in use. 0 when t does not
 * fit. */
double kb_gpushare_fill(kb_gpushare *g, const kb_session *ssn, const kb_task *t, const kb_node *n);

/* Chooses t's device on its node (t->node), books it and records it with
 * kb_session_set_task_devices; on_deallocate gives it back. */
void kb_gpushare_on_allocate(kb_gpushare *g, kb_session *ssn, kb_task *t);
void kb_gpushare_on_deallocate(kb_gpushare *g, kb_session *ssn, kb_task *t);

#endif

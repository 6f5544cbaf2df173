/* vgpu.h - volcano's vGPU (HAMi's volcano-vgpu-device-plugin), as the gpu
 * plugin (plugins/gpu.c) applies it.
 *
 * A node's device plugin registers its GPUs in the Node annotation
 * volcano.sh/node-vgpu-register (cache/decode_vgpu.c): each with a number
 * of vGPUs it may hold (its split count) and its memory in MiB. A pod's
 * one vGPU container asks for vgpu-number vGPUs, each on a different GPU,
 * each with vgpu-memory MiB (or a percentage of its card, the whole card
 * by default) and vgpu-cores percent of its cores (kb_pod_spec.vgpu_*).
 * The scheduler chooses the GPUs and writes them into the pod's
 * annotations before it is bound (kube/writers.c: volcano.sh/vgpu-ids-new
 * and the others, cache/objects.h); the device plugin's Allocate finds the
 * pod by them and hands it those GPUs. The kubelet only counts the node's
 * totals of the three resources (the framework's allocatable check), so
 * the per-GPU fit is ours, by volcano's rule:
 *
 *   - a GPU holds the asks of the pods placed on it: those this session
 *     placed, and those whose volcano.sh/vgpu-ids-new names it (a pod's
 *     entry "UUID,NVIDIA,mem,cores:" counts on the GPU whose UUID it
 *     contains, as volcano's scheduler matches them);
 *   - a GPU takes one more vGPU while it holds fewer than its split count,
 *     has the memory free and stays at 100 % cores or below; one asking 100
 *     % cores takes only an empty GPU, and a GPU at 100 % takes none;
 *   - GPUs are tried from the highest index down, as volcano's scheduler
 *     does, and a pod fits when vgpu-number of them take it.
 *
 * Refused, with a reason: a pod with more than one vGPU container (the
 * device plugin finds a pod by one container's device count, so it would
 * never find such a pod), a pod that also asks for nvidia.com/gpu or
 * aliyun.com/gpu-mem, and nodes that register none (or whose registration
 * kube-batchd does not place; kb_node.vgpu_off).
 *
 * Books are built on first use in a session, O(pods on vGPU nodes x their
 * devices x the node's devices); every other call is O(devices of the
 * node). State lives in the session arena.
 */
#ifndef KB_PLUGINS_VGPU_H
#define KB_PLUGINS_VGPU_H

#include <stdbool.h>

#include "scheduler/framework.h"

typedef struct kb_vgpu kb_vgpu;

/* The MiB a pod of spec takes of device dev for each of its vGPUs: its
 * vgpu-memory, else its percentage of the device's memory. O(1). */
int32_t kb_vgpu_mem_of(const kb_pod_spec *spec, const kb_vgpu_dev *dev);

/* The session's state, or NULL when no pod asks for a vGPU (every other
 * call is then skipped). -ENOMEM in err. */
int kb_vgpu_open(kb_session *ssn, kb_vgpu **ret, kb_err *err);

/* True when t asks for vGPUs. O(1). v may be NULL. */
bool kb_vgpu_asks(const kb_vgpu *v, const kb_task *t);

/* KB_FIT_OK or KB_FIT_FAIL with a reason in kube-scheduler's style. */
int kb_vgpu_predicate(kb_vgpu *v, const kb_session *ssn, const kb_task *t, const kb_node *n,
		      const char **ret);

/* Chooses t's GPUs on its node (t->node), books them and records them with
 * kb_session_set_task_devices (bit i: the node's i-th registered GPU);
 * on_deallocate gives them back. */
void kb_vgpu_on_allocate(kb_vgpu *v, kb_session *ssn, kb_task *t);
void kb_vgpu_on_deallocate(kb_vgpu *v, kb_session *ssn, kb_task *t);

#endif

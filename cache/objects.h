/* objects.h - Kubernetes objects as the cache holds them, and their decoder.
 *
 * One decoder serves both modes: simulation feeds it YAML manifests, cluster
 * mode feeds it JSON from the API server converted to the same node tree
 * (base/yaml_doc.h). It reads only the fields the scheduler uses.
 *
 * Kinds: Node, Pod, PodGroup (scheduling.incubator.k8s.io/v1alpha1,
 * scheduling.volcano.sh/v1beta1, scheduling.x-k8s.io/v1alpha1 and its older
 * name scheduling.sigs.k8s.io/v1alpha1, and Kubernetes' own of KEP-4671,
 * scheduling.k8s.io/v1alpha2, v1alpha3 and v1beta1), Workload
 * (scheduling.k8s.io/v1alpha1 only: Kubernetes v1.35's gang API, where the
 * Workload itself lists the gangs; in v1.36 and later the runtime PodGroup
 * carries the policy and a Workload is only its template, which the
 * scheduler does not read, so those Workloads are KB_KIND_OTHER), Queue
 * (scheduling.incubator.k8s.io/v1alpha1, scheduling.volcano.sh/v1beta1),
 * PriorityClass (scheduling.k8s.io/v1), Namespace (v1),
 * PersistentVolumeClaim and PersistentVolume (v1), StorageClass, CSINode,
 * VolumeAttachment, CSIDriver and CSIStorageCapacity (storage.k8s.io/v1;
 * cache/decode_volume.c). Any other kind
 * decodes as KB_KIND_OTHER (callers skip it). cache/decode_workload.c says
 * how the upstream gang API maps onto a job.
 *
 * Ownership: a kb_object and every string and array it points to are one
 * heap block, sized to what the object holds (the decoder builds the object
 * in a scratch arena, then copies it into the block); kb_object_free() frees
 * it whole. Strings may also point at constants (defaults such as
 * "default-scheduler"). Objects are immutable once decoded: an update is a
 * new object replacing the old one.
 *
 * Errors name the object and the field, and the position:
 *   Pod "ns/p": spec.containers[0].resources.requests.cpu: bad quantity "1x" (jobs.yaml:14:20)
 *
 * Defaults, where Kubernetes or the CRD owners define them (see the unit
 * tests for each):
 *  - metadata.namespace "default" for Pod, PodGroup and Workload, "" for Node, Queue,
 *    PriorityClass and Namespace; for other kinds the namespace as written.
 *  - Node: status.allocatable, else status.capacity; pods 110 when absent
 *    (the kubelet's --max-pods default); Ready unless a Ready condition says
 *    otherwise.
 *  - Pod: schedulerName "default-scheduler"; phase Pending; a resource with
 *    a limit and no request requests its limit; effective request =
 *    max(sum of containers + sidecars, each init container + the sidecars
 *    started before it) + overhead, as k8s' resource helpers compute it
 *    (sidecars are init containers with restartPolicy Always; without any
 *    this is max(sum of containers, max of init containers)); pods = 1.
 *  - PodGroup: minMember 0 when absent in the three older APIs (Go's zero
 *    value: no CRD defaults it); a scheduling.k8s.io PodGroup's is its
 *    spec.schedulingPolicy.gang.minCount, or 1 for policy basic (each pod
 *    placed as it fits, none waits for another), and it is admitted
 *    (Inqueue) at once: that API has no admission phase; the queue is spec.queue, else the annotation
 *    KB_ANN_VOLCANO_QUEUE, else NULL, so the queue configuration's
 *    namespace mapping, then the default queue, applies (in a cluster,
 *    volcano's CRD writes "default" itself at admission);
 *    unknown status.phase strings are Pending.
 *  - Queue: weight 1 when absent (kube-batch's CRD default) or 0 (volcano's
 *    admission webhook); reclaimable true (volcano's webhook); state Open
 *    unless volcano's status.state says Closed or Closing.
 *  - Sharing pods (KB_ANN_GPU_MILLI = m): the pod asks for 1 nvidia.com/gpu
 *    or none; req is left as the containers ask (a pod asking 1 holds one
 *    whole nvidia.com/gpu at the kubelet's admission, whatever m), and the
 *    pod is not BestEffort. req is always what the kubelet counts against
 *    the node's allocatable; see kb_cluster_snapshot for what a task is
 *    charged.
 *
 * Where the code is: cache/objects.c (which kind, decoding start to
 * finish, packing, freeing), cache/decode.h (internal: the helpers every
 * kind shares and one decode_<kind>.c per kind), cache/objects_compare.c
 * (the *_same_build comparisons).
 */
#ifndef KB_CACHE_OBJECTS_H
#define KB_CACHE_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/labels.h"
#include "api/resource.h"
#include "api/types.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/yaml_doc.h"

/* Annotations and labels kube-batchd reads. */
#define KB_ANN_GROUP_NAME "scheduling.k8s.io/group-name"         /* kube-batch, volcano */
#define KB_ANN_VOLCANO_GROUP_NAME "scheduling.volcano.sh/group-name"
#define KB_LABEL_COSCHED_GROUP "scheduling.x-k8s.io/pod-group"   /* scheduler-plugins */
#define KB_LABEL_COSCHED_GROUP_OLD "pod-group.scheduling.sigs.k8s.io"
#define KB_ANN_SIM_ARRIVAL "sim.kube-batchd.io/arrival"   /* seconds after start */
#define KB_ANN_SIM_DURATION "sim.kube-batchd.io/duration" /* seconds once bound */
#define KB_ANN_GPU_MODELS "kube-batchd.io/gpu-models"     /* "V100|A100": models accepted */
/* KB_ANN_GPU_MILLI ("kube-batchd.io/gpu-milli", 1..999: a share of one GPU) is in api/types.h */
#define KB_ANN_GPU_TOPOLOGY "kube-batchd.io/gpu-topology" /* node: "0,1,2,3;4,5,6,7" groups */
#define KB_ANN_GPU_DEVICES "kube-batchd.io/gpu-devices"   /* pod, written at bind: "0,1" */
/* PodGroup, written by the daemon while it waits (daemon/estimates.h):
 * RFC 3339 UTC, or "unknown" */
#define KB_ANN_ESTIMATED_START "kube-batchd.io/estimated-start"
#define KB_LABEL_GPU_PRODUCT "nvidia.com/gpu.product"
/* GPU Feature Discovery's labels of a node whose device plugin shares GPUs
 * (time-slicing or MPS): each GPU is advertised as `replicas` nvidia.com/gpu,
 * `count` is the physical GPUs, the product name ends in "-SHARED". */
#define KB_LABEL_GPU_REPLICAS "nvidia.com/gpu.replicas"
#define KB_LABEL_GPU_SHARING "nvidia.com/gpu.sharing-strategy"
#define KB_LABEL_GPU_COUNT "nvidia.com/gpu.count"
#define KB_GPU_SHARED_SUFFIX "-SHARED"
/* Alibaba's GPU sharing (gpushare-device-plugin, Arena's --gpumemory): a node
 * advertises its GPUs' memory as KB_RES_GPUSHARE_MEM (all devices together,
 * in the device plugin's unit, GiB by default) and their number as
 * KB_RES_GPUSHARE_COUNT; a pod asks for KB_RES_GPUSHARE_MEM. The device
 * plugin reads the device chosen from the pod's annotations below (written
 * by the scheduler before the pod is bound; plugins/gpushare.c). */
#define KB_RES_GPUSHARE_MEM "aliyun.com/gpu-mem"
#define KB_RES_GPUSHARE_COUNT "aliyun.com/gpu-count"
#define KB_ANN_GPUSHARE_IDX "ALIYUN_COM_GPU_MEM_IDX"      /* device index, "0" */
#define KB_ANN_GPUSHARE_POD "ALIYUN_COM_GPU_MEM_POD"      /* the pod's gpu-mem, "8" */
#define KB_ANN_GPUSHARE_DEV "ALIYUN_COM_GPU_MEM_DEV"      /* one device's gpu-mem, "16" */
#define KB_ANN_GPUSHARE_ASSIGNED "ALIYUN_COM_GPU_MEM_ASSIGNED" /* "false" until Allocate */
#define KB_ANN_GPUSHARE_ASSUME_TIME "ALIYUN_COM_GPU_MEM_ASSUME_TIME" /* Unix ns */
/* volcano's vGPU (HAMi's volcano-vgpu-device-plugin; plugins/vgpu.h): a
 * container asks for vGPUs (each on a different GPU), MiB of device memory
 * per vGPU (or a percentage of the card) and a percentage of its cores. */
#define KB_RES_VGPU_NUMBER "volcano.sh/vgpu-number"
#define KB_RES_VGPU_MEMORY "volcano.sh/vgpu-memory"
#define KB_RES_VGPU_MEMPCT "volcano.sh/vgpu-memory-percentage"
#define KB_RES_VGPU_CORES "volcano.sh/vgpu-cores"
/* The node's devices, as its device plugin registers them
 * ("UUID,Count,Devmem,Type,Health,Mode:" per GPU), and whether it still
 * reports ("Reported ...", "Requesting_...", "Deleted_..."). */
#define KB_ANN_VGPU_REGISTER "volcano.sh/node-vgpu-register"
#define KB_ANN_VGPU_HANDSHAKE "volcano.sh/node-vgpu-handshake"
/* What the scheduler writes on a pod before it is bound, and the device
 * plugin's Allocate reads: the devices ("UUID,NVIDIA,mem,cores:" each,
 * containers separated by ';'), twice (ids-new stays as the record,
 * devices-to-allocate is consumed), the node, the times (Unix seconds) and
 * the phase ("allocating", then success or failed). */
#define KB_ANN_VGPU_IDS "volcano.sh/vgpu-ids-new"
#define KB_ANN_VGPU_TO_ALLOCATE "volcano.sh/devices-to-allocate"
#define KB_ANN_VGPU_NODE "volcano.sh/vgpu-node"
#define KB_ANN_VGPU_TIME "volcano.sh/vgpu-time"
#define KB_ANN_VGPU_BIND_PHASE "volcano.sh/bind-phase"
#define KB_ANN_VGPU_BIND_TIME "volcano.sh/bind-time"
/* volcano's: a pod (label or annotation) that may not be a victim of
 * preempt or reclaim when "false"; "true" or absent: it may. */
#define KB_PREEMPTABLE_KEY "volcano.sh/preemptable"
/* volcano's task role of a pod (the training-operator and volcano's job
 * controller set it): what a PodGroup's spec.minTaskMember counts. */
#define KB_ANN_TASK_SPEC "volcano.sh/task-spec"
/* volcano's queue of a PodGroup or a pod, as an annotation: the
 * training-operator copies it onto the PodGroup kinds that have no
 * spec.queue (coscheduling's); volcano's job controller puts it on pods. */
#define KB_ANN_VOLCANO_QUEUE "scheduling.volcano.sh/queue-name"
#define KB_RES_GPU_NAME "nvidia.com/gpu"
/* Network topology (kb_topology_req; cache/decode_topology.c), on a
 * PodGroup or on its pods: kube-batchd's own, and Kueue's PodSet
 * annotations (a Job's pod template carries them onto its pods). */
#define KB_ANN_TOPO_REQUIRED "kube-batchd.io/topology-required"
#define KB_ANN_TOPO_PREFERRED "kube-batchd.io/topology-preferred"
#define KB_ANN_TOPO_LEVELS "kube-batchd.io/topology-levels"
#define KB_ANN_KUEUE_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define KB_ANN_KUEUE_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define KB_ANN_KUEUE_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define KB_ANN_KUEUE_SLICE_REQUIRED "kueue.x-k8s.io/podset-slice-required-topology"

typedef enum kb_kind {
	KB_KIND_OTHER = 0,
	KB_KIND_NODE,
	KB_KIND_POD,
	KB_KIND_PODGROUP,
	KB_KIND_QUEUE,
	KB_KIND_PRIORITY_CLASS,
	KB_KIND_NAMESPACE,
	KB_KIND_WORKLOAD, /* scheduling.k8s.io/v1alpha1 Workload */
	KB_KIND_PVC,      /* v1 PersistentVolumeClaim */
	KB_KIND_PV,       /* v1 PersistentVolume */
	KB_KIND_STORAGE_CLASS, /* storage.k8s.io/v1 StorageClass */
	KB_KIND_CSI_NODE,      /* storage.k8s.io/v1 CSINode */
	KB_KIND_VOLUME_ATTACHMENT, /* storage.k8s.io/v1 VolumeAttachment */
	KB_KIND_CSI_DRIVER,        /* storage.k8s.io/v1 CSIDriver */
	KB_KIND_STORAGE_CAPACITY,  /* storage.k8s.io/v1 CSIStorageCapacity */
} kb_kind;

/* The last kind (for loops over every kind). */
#define KB_KIND_LAST KB_KIND_STORAGE_CAPACITY

/* The kind of an object of this apiVersion and kind: KB_KIND_OTHER for one
 * kube-batchd does not read (a Pod of another group, a later Workload, ...).
 * O(1) string compares. */
kb_kind kb_kind_of(const char *api_version, const char *kind);

/* The kind's name as the API spells it ("Node", ...); "object" for
 * KB_KIND_OTHER. O(1). */
const char *kb_kind_name(kb_kind kind);

typedef struct kb_meta {
	const char *name;
	const char *ns; /* "" for cluster-scoped objects */
	const char *uid; /* generated as "<kind>/<ns>/<name>" when absent (manifests) */
	const char *key; /* "ns/name", or "name" for cluster-scoped objects */
	const char *resource_version; /* "" when absent */
	int64_t creation_ms;          /* creationTimestamp; 0 when absent */
	bool deleting;                /* deletionTimestamp is set */
	/* Set by the store, never decoded (kb_cluster_mark_undecodable): the
	 * API's latest version of this object did not decode, and this is the
	 * last one that did. A node so marked is no candidate for placement, a
	 * pod not on a node is not placed, a PodGroup is not scheduled, until a
	 * version decodes again (it replaces this object). */
	bool undecodable;
	kb_labels labels;
	kb_labels annotations;
	int line, col; /* where the object starts in its file (0 for API objects) */
} kb_meta;

typedef enum kb_pod_phase {
	KB_POD_PENDING = 0,
	KB_POD_RUNNING,
	KB_POD_SUCCEEDED,
	KB_POD_FAILED,
	KB_POD_UNKNOWN,
} kb_pod_phase;

typedef struct kb_node_obj {
	kb_res allocatable; /* status.allocatable, else status.capacity; pods default 110 */
	/* Its quantities of the names nothing asked for when it was decoded
	 * (api/resource.h); the snapshot maps those given a slot since. */
	const kb_res_extra *extra;
	uint32_t nextra;
	const kb_taint *taints;
	uint32_t ntaints;
	bool unschedulable;
	bool ready; /* Ready condition True, or no conditions at all */
	/* Physical GPUs (0..KB_MAX_GPUS): allocatable nvidia.com/gpu, divided
	 * by gpu_replicas on a node whose device plugin shares them. */
	int32_t ngpus;
	int32_t gpu_replicas;       /* label KB_LABEL_GPU_REPLICAS when > 1, else 1 */
	kb_gpu_sharing gpu_sharing; /* label KB_LABEL_GPU_SHARING, else none */
	/* label nvidia.com/gpu.product without GFD's "-SHARED" suffix, or NULL */
	const char *gpu_model;
	const uint8_t *gpu_group; /* ngpus entries from KB_ANN_GPU_TOPOLOGY, or NULL */
	int32_t gpushare_count;   /* KB_RES_GPUSHARE_COUNT in allocatable (else capacity), or 0 */
	/* volcano's vGPU devices (KB_ANN_VGPU_REGISTER, while the handshake
	 * says the device plugin reports), in its order; NULL and 0 when none.
	 * vgpu_off: why a node that registers some offers none (a constant),
	 * else NULL. */
	const kb_vgpu_dev *vgpu;
	uint32_t nvgpu;
	const char *vgpu_off;
} kb_node_obj;

/* spec.preemptionPolicy of a Pod or a PriorityClass. */
typedef enum kb_preemption_policy {
	KB_PREEMPTION_UNSET = 0,        /* absent: the PriorityClass's, else PreemptLowerPriority */
	KB_PREEMPTION_LOWER_PRIORITY,   /* PreemptLowerPriority */
	KB_PREEMPTION_NEVER,            /* Never: waits, evicts nobody */
} kb_preemption_policy;

/* One claim a pod's volumes use (kb_pod_obj.claims). */
typedef struct kb_pod_claim {
	const char *name;
	bool ephemeral; /* made by the ephemeral volume controller for this pod */
} kb_pod_claim;

/* How a pod names its group (kb_pod_obj.group_via). */
typedef enum kb_group_via {
	KB_GROUP_NONE = 0,
	KB_GROUP_ANNOTATION,       /* an annotation or label of the three older families */
	KB_GROUP_SCHEDULING_GROUP, /* spec.schedulingGroup.podGroupName: a scheduling.k8s.io PodGroup */
	KB_GROUP_WORKLOAD_REF,     /* spec.workloadRef: a podGroup of a v1alpha1 Workload */
} kb_group_via;

typedef struct kb_pod_obj {
	const char *scheduler_name; /* spec.schedulerName; "default-scheduler" when absent */
	const char *node_name;      /* spec.nodeName, or NULL */
	kb_pod_phase phase;
	bool has_priority;
	int32_t priority; /* spec.priority */
	const char *priority_class_name; /* or NULL */
	kb_preemption_policy preemption_policy; /* spec.preemptionPolicy */
	bool preemptable;       /* KB_PREEMPTABLE_KEY, label or annotation; default true */
	const char *task_role;  /* KB_ANN_TASK_SPEC, or NULL */
	const char *queue_name; /* KB_ANN_VOLCANO_QUEUE (non-empty), or NULL */
	bool gated;             /* spec.schedulingGates is not empty: not to be placed */
	/* Held back by the scheduler itself (kb_cluster_hold_pod: a binding the
	 * API refused, in backoff): not to be placed, counted as gated in its
	 * gang. Never decoded; carried over to the pod's next object. */
	bool held;
	/* The pod's group, first found of: spec.schedulingGroup.podGroupName
	 * (Kubernetes >= 1.36), spec.workloadRef (1.35), the annotations
	 * KB_ANN_GROUP_NAME and KB_ANN_VOLCANO_GROUP_NAME, the labels
	 * KB_LABEL_COSCHED_GROUP and KB_LABEL_COSCHED_GROUP_OLD. */
	kb_group_via group_via;
	/* PodGroup name in the pod's namespace, or NULL; for a workloadRef
	 * "workload/podGroup[/replicaKey]" (the gang, not an object). */
	const char *group_name;
	const char *group_key;  /* "ns/group_name", or NULL */
	/* KB_GROUP_WORKLOAD_REF only: "ns/workload" and the podGroup name. */
	const char *workload_key;
	const char *workload_pod_group;
	kb_res req;      /* effective request, as the kubelet counts it (above) */
	bool best_effort;
	kb_pod_spec spec;
	int64_t sim_arrival_ms;  /* KB_ANN_SIM_ARRIVAL, 0 when absent */
	int64_t sim_duration_ms; /* KB_ANN_SIM_DURATION, -1 when absent (runs forever) */
	/* What says when a running pod ends (scheduler/estimate.h): status.startTime
	 * (0 when absent) and spec.activeDeadlineSeconds in ms (-1 when absent). */
	int64_t start_ms;
	int64_t active_deadline_ms;
	/* A finished pod's end (Succeeded or Failed): the latest
	 * status.containerStatuses[].state.terminated.finishedAt, 0 when none
	 * says (not read for other phases). The runtime history
	 * (scheduler/runtimes.h) reads finished pods' runs from it. */
	int64_t finished_ms;
	const uint8_t *gpu_devices; /* KB_ANN_GPU_DEVICES (cluster mode), or NULL */
	uint32_t ngpu_devices;
	/* The KB_ANN_TOPO_* and Kueue annotations (.set false without any):
	 * its gang's wish when the PodGroup says none. */
	kb_topology_req topology;
	/* The PersistentVolumeClaims its volumes name, in spec.volumes order:
	 * persistentVolumeClaim.claimName, or for an ephemeral volume the claim
	 * the ephemeral volume controller makes ("<pod>-<volume>"). */
	const kb_pod_claim *claims;
	uint32_t nclaims;
} kb_pod_obj;

typedef struct kb_podgroup_obj {
	kb_pg_flavor flavor;
	int32_t min_member;
	const char *queue; /* spec.queue, else annotation KB_ANN_VOLCANO_QUEUE, or NULL */
	const char *priority_class_name;
	bool has_min_resources;
	kb_res min_resources;
	/* volcano's spec.minTaskMember: the fewest pods of each task role
	 * (KB_ANN_TASK_SPEC) that must run; role names sorted, unique. */
	const kb_role_min *min_task_member;
	uint32_t nmin_task_member;
	kb_pg_phase phase; /* status.phase */
	/* The status as written, read leniently (a malformed field is only
	 * unknown): a restarted daemon compares its first report with it and
	 * writes nothing that is already there. */
	const char *status_phase; /* status.phase as written, or NULL */
	int32_t running, succeeded, failed; /* status counts; 0 absent, -1 malformed */
	const char *unschedulable; /* message of condition Unschedulable=True, or NULL */
	/* Its controlling owner (metadata.ownerReferences, controller: true)
	 * is a volcano Job (apiVersion batch.volcano.sh/...): volcano's job
	 * controller made it, and volcano's scheduler admits it. */
	bool volcano_job;
	/* Its network-topology wish: the KB_ANN_TOPO_* and Kueue annotations,
	 * or volcano's spec.networkTopology (.set false without any). */
	kb_topology_req topology;
} kb_podgroup_obj;

/* One item of a v1alpha1 Workload's spec.podGroups. */
typedef struct kb_workload_group {
	const char *name;
	bool basic;        /* policy.basic: its pods are placed one by one */
	int32_t min_count; /* policy.gang.minCount; 1 for basic */
} kb_workload_group;

/* A scheduling.k8s.io/v1alpha1 Workload: the gangs its pods name through
 * spec.workloadRef. It has no status. */
typedef struct kb_workload_obj {
	const kb_workload_group *groups; /* spec.podGroups, in order (names unique) */
	uint32_t ngroups;
	const char *queue; /* annotation KB_ANN_VOLCANO_QUEUE, or NULL */
} kb_workload_obj;

/* A Queue's status as the API last showed it (what the scheduler compares
 * its wish with before writing, kube/queue_status.h). */
typedef struct kb_queue_status_obj {
	bool state_set;           /* status.state present (volcano) */
	kb_queue_state state;
	int32_t unknown, pending, running, inqueue, completed; /* absent: 0 */
	uint32_t allocated_mask;  /* bit i: status.allocated names resource i (volcano) */
	kb_res allocated;
} kb_queue_status_obj;

typedef struct kb_queue_obj {
	kb_pg_flavor flavor; /* KB_PG_KUBE_BATCH or KB_PG_VOLCANO */
	int32_t weight;      /* default 1 */
	uint32_t capability_mask;
	kb_res capability;
	kb_res guarantee;
	bool reclaimable;    /* default true */
	kb_queue_state state;
	const char *parent;  /* or NULL */
	kb_queue_status_obj status;
} kb_queue_obj;

typedef struct kb_priority_class_obj {
	int32_t value;
	bool global_default;
	kb_preemption_policy preemption_policy; /* preemptionPolicy */
} kb_priority_class_obj;

/* status.phase of a PersistentVolumeClaim. */
typedef enum kb_claim_phase { KB_CLAIM_PENDING = 0, KB_CLAIM_BOUND, KB_CLAIM_LOST } kb_claim_phase;

typedef struct kb_pvc_obj {
	/* The class: the beta annotation volume.beta.kubernetes.io/storage-class,
	 * else spec.storageClassName; "" for none (kube-scheduler's rule). */
	const char *class_name;
	const char *volume_name;   /* spec.volumeName, or NULL */
	kb_claim_phase phase;
	bool bind_completed;       /* annotation pv.kubernetes.io/bind-completed */
	const char *selected_node; /* annotation volume.kubernetes.io/selected-node, or NULL */
	int64_t request;           /* spec.resources.requests.storage, bytes; 0 when absent */
	uint32_t access_modes;     /* KB_ACCESS_* */
	bool block;                /* spec.volumeMode Block */
	bool has_selector;
	kb_label_selector selector; /* spec.selector (has_selector) */
	const char *owner_uid;      /* its controlling owner's uid (ephemeral claims), or NULL */
} kb_pvc_obj;

/* status.phase of a PersistentVolume. */
typedef enum kb_pv_phase {
	KB_PV_PENDING = 0, KB_PV_AVAILABLE, KB_PV_BOUND, KB_PV_RELEASED, KB_PV_FAILED
} kb_pv_phase;

typedef struct kb_pv_obj {
	const char *class_name;  /* spec.storageClassName (or the beta annotation), "" for none */
	int64_t capacity;        /* spec.capacity.storage, bytes */
	uint32_t access_modes;
	bool block;
	kb_pv_phase phase;
	/* spec.claimRef: namespace, name and uid (uid may be NULL), or NULL */
	const char *claim_ns, *claim_name, *claim_uid;
	const char *claim_key; /* "ns/name", or NULL */
	const kb_selector_term *terms; /* spec.nodeAffinity.required.nodeSelectorTerms */
	uint32_t nterms;
	/* spec.csi.driver and spec.csi.volumeHandle, or NULL for a volume of
	 * another source (not counted against CSI volume limits) */
	const char *csi_driver, *csi_handle;
} kb_pv_obj;

typedef struct kb_storage_class_obj {
	const char *provisioner;
	bool wait_for_first_consumer; /* volumeBindingMode WaitForFirstConsumer (else Immediate) */
	/* allowedTopologies as node selector terms (each matchLabelExpressions
	 * item an In requirement), ORed; 0 = anywhere */
	const kb_selector_term *allowed;
	uint32_t nallowed;
} kb_storage_class_obj;

/* One driver of a CSINode: how many of its volumes the node may attach
 * (spec.drivers[].allocatable.count), or -1 when it says no limit. */
typedef struct kb_csi_driver_limit {
	const char *name;
	int64_t count;
} kb_csi_driver_limit;

/* A CSINode (named after its node): its drivers' volume limits. */
typedef struct kb_csi_node_obj {
	const kb_csi_driver_limit *drivers;
	uint32_t ndrivers;
} kb_csi_node_obj;

/* A VolumeAttachment: a CSI volume attached (or being attached) to a node,
 * counted against the node's limit even when no pod there uses it. */
typedef struct kb_volume_attachment_obj {
	const char *attacher;  /* spec.attacher, the CSI driver; NULL when absent */
	const char *node_name; /* spec.nodeName; NULL when absent */
	const char *pv_name;   /* spec.source.persistentVolumeName; NULL when absent */
} kb_volume_attachment_obj;

/* A CSIDriver (named after its driver): whether it publishes storage
 * capacity (spec.storageCapacity), so provisioning checks it. */
typedef struct kb_csi_driver_obj {
	bool storage_capacity;
} kb_csi_driver_obj;

/* A CSIStorageCapacity: room a driver has for new volumes of a class, on
 * the nodes its nodeTopology selects (none: no node). */
typedef struct kb_storage_capacity_obj {
	const char *class_name;      /* storageClassName */
	bool has_topology;
	kb_label_selector topology;  /* nodeTopology (has_topology) */
	/* The largest volume it takes, bytes: maximumVolumeSize, else
	 * capacity; -1 when it has neither. */
	int64_t limit;
} kb_storage_capacity_obj;

typedef struct kb_object {
	kb_kind kind;
	const char *api_version;
	const char *kind_name; /* as written, e.g. "Deployment" for KB_KIND_OTHER */
	kb_meta meta;
	union {
		kb_node_obj node;
		kb_pod_obj pod;
		kb_podgroup_obj podgroup;
		kb_queue_obj queue;
		kb_priority_class_obj priority_class;
		kb_workload_obj workload;
		kb_pvc_obj pvc;
		kb_pv_obj pv;
		kb_storage_class_obj storage_class;
		kb_csi_node_obj csi_node;
		kb_volume_attachment_obj volume_attachment;
		kb_csi_driver_obj csi_driver;
		kb_storage_capacity_obj storage_capacity;
	} u;
} kb_object;

/* Decodes one document. `source` names the file for messages (NULL for API
 * objects). Resource names are interned into *resnames. Returns 0 and a new
 * object in *ret_obj (caller owns; free with kb_object_free), or -EINVAL
 * (bad field, with err), -ENOSPC (too many resource names), -ENOMEM.
 * The document is not referenced afterwards. Cost: O(size of the
 * document); one malloc for the object, plus scratch space (1 KiB for a
 * typical pod, doubling for larger objects) freed before returning. */
int kb_object_decode(const kb_yaml_node *doc, const char *source, kb_resnames *resnames,
		     kb_object **ret_obj, kb_err *err);

/* Like kb_object_decode, for objects whose apiVersion or kind may be absent
 * (items of a LIST response): a missing or empty apiVersion is taken as
 * default_api_version, a missing or empty kind as default_kind. A NULL
 * default makes the field required, as in kb_object_decode (which is this
 * function with both defaults NULL). Same results and cost. */
int kb_object_decode_as(const kb_yaml_node *doc, const char *default_api_version,
			const char *default_kind, const char *source, kb_resnames *resnames,
			kb_object **ret_obj, kb_err *err);

/* The condition type a scheduler writes on a scheduling.k8s.io PodGroup
 * of api_version: "PodGroupScheduled" (v1alpha2) or
 * "PodGroupInitiallyScheduled" (v1alpha3, v1beta1). A constant; O(1).
 * (cache/decode_workload.c) */
const char *kb_k8s_podgroup_condition(const char *api_version);

/* Frees the object and everything it owns. Accepts NULL; returns NULL. */
kb_object *kb_object_free(kb_object *o);

/* True when a and b are both pods and differ at most in what a snapshot
 * refreshes without building again: spec.nodeName, status.phase, the
 * deletion mark, the GPU devices annotation, the resourceVersion and the
 * annotations and fields no build reads. Everything else a build or a
 * plugin reads (names, uid, creation time, labels, schedulerName, priority,
 * group, requests, the scheduling spec, the simulator's times) is compared
 * by value. Cost: O(size of the scheduling spec). (cache/objects_compare.c) */
bool kb_pod_same_build(const kb_object *a, const kb_object *b);

/* Whether two topology wishes are the same (both unset, or every field
 * equal; the source is not compared). O(length of the keys). */
bool kb_topology_req_equal(const kb_topology_req *a, const kb_topology_req *b);

/* The same for PodGroups: true when a and b differ at most in status.phase
 * and what no build reads. */
bool kb_podgroup_same_build(const kb_object *a, const kb_object *b);

/* The same for Nodes: true when a and b differ only in what no build reads
 * (heartbeats, conditions other than Ready, images, addresses...). */
bool kb_node_same_build(const kb_object *a, const kb_object *b);


#endif

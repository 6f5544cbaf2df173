/* types.h - the scheduling model: what a session sees of the cluster.
 *
 * These are kube-batch's "infos": a node (allocatable, used, idle, releasing,
 * pipelined), a task (one pod), a job (a PodGroup, or a lone pod) and a
 * queue. A session works on arrays of them (kb_snapshot in
 * api/snapshot.h); they refer to each other by INDEX into those arrays,
 * never by pointer, so a snapshot can be copied with memcpy and every
 * reference stays valid.
 *
 * Pod specs (selectors, tolerations, ports...) and names are immutable and
 * owned by the cache's objects; infos only point at them. A session never
 * writes through those pointers.
 *
 * Types only: functions on these live in their own modules (HAProxy's rule:
 * types in one header, functions in another).
 */
#ifndef KB_API_TYPES_H
#define KB_API_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "api/resource.h"

/* ---- pod spec pieces (immutable, owned by the cache) ---------------------------- */

typedef struct kb_label {
	const char *key;
	const char *value;
} kb_label;

typedef struct kb_labels {
	const kb_label *v; /* sorted by key, keys unique */
	uint32_t n;
} kb_labels;

typedef enum kb_taint_effect {
	KB_EFFECT_ALL = 0, /* only in a toleration: tolerates every effect */
	KB_EFFECT_NO_SCHEDULE,
	KB_EFFECT_PREFER_NO_SCHEDULE,
	KB_EFFECT_NO_EXECUTE,
} kb_taint_effect;

typedef struct kb_taint {
	const char *key;
	const char *value; /* "" when absent */
	kb_taint_effect effect;
} kb_taint;

typedef struct kb_toleration {
	const char *key; /* "" with exists=true tolerates every taint */
	const char *value;
	bool exists;     /* operator Exists (else Equal) */
	kb_taint_effect effect;
} kb_toleration;

typedef enum kb_selector_op {
	KB_SEL_IN,
	KB_SEL_NOT_IN,
	KB_SEL_EXISTS,
	KB_SEL_DOES_NOT_EXIST,
	KB_SEL_GT,
	KB_SEL_LT,
} kb_selector_op;

typedef struct kb_selector_req {
	const char *key;
	kb_selector_op op;
	bool field; /* matchFields (only metadata.name) rather than matchExpressions */
	const char *const *values;
	uint32_t nvalues;
} kb_selector_req;

/* A node selector term: every requirement must hold (AND). */
typedef struct kb_selector_term {
	const kb_selector_req *reqs;
	uint32_t n;
} kb_selector_term;

typedef struct kb_preferred_term {
	int32_t weight; /* 1..100 */
	kb_selector_term term;
} kb_preferred_term;

typedef enum kb_protocol { KB_PROTO_TCP, KB_PROTO_UDP, KB_PROTO_SCTP } kb_protocol;

typedef struct kb_host_port {
	const char *ip; /* "" or "0.0.0.0" means every address */
	uint16_t port;
	kb_protocol proto;
} kb_host_port;

/* A label selector over pods (metav1.LabelSelector): matchLabels (as In
 * with one value) and matchExpressions (In, NotIn, Exists, DoesNotExist),
 * every requirement must hold. No requirements matches every pod; a nil
 * selector (absent in the manifest) matches none (`nothing`). */
typedef struct kb_label_selector {
	const kb_selector_req *reqs;
	uint32_t n;
	bool nothing;
} kb_label_selector;

/* One pod (anti-)affinity term (v1.PodAffinityTerm), as kube-scheduler
 * reads it (framework.AffinityTerm): the pods it selects are those whose
 * namespace is in namespaces, or whose namespace's labels match
 * ns_selector, and whose labels match selector. matchLabelKeys and
 * mismatchLabelKeys are already merged into selector (as the API server
 * does at creation: key In/NotIn the pod's own value). */
typedef struct kb_pod_affinity_term {
	kb_label_selector selector;
	/* namespaces as written; the pod's own when neither namespaces nor
	 * namespaceSelector is given */
	const char *const *namespaces;
	uint32_t nnamespaces;
	kb_label_selector ns_selector; /* nothing when absent */
	const char *topology_key;      /* non-empty */
	int32_t weight;                /* preferred terms: 1..100; required: 0 */
} kb_pod_affinity_term;

/* One topology spread constraint (v1.TopologySpreadConstraint) with the
 * API's defaults applied and matchLabelKeys merged into selector (as
 * kube-scheduler v1.33 does). */
typedef struct kb_spread_constraint {
	int32_t max_skew;       /* >= 1 */
	int32_t min_domains;    /* >= 1; 1 when absent */
	const char *topology_key;
	bool schedule_anyway;   /* whenUnsatisfiable ScheduleAnyway (else DoNotSchedule) */
	bool honor_affinity;    /* nodeAffinityPolicy Honor (the default) */
	bool honor_taints;      /* nodeTaintsPolicy Honor (default Ignore) */
	kb_label_selector selector;
} kb_spread_constraint;

/* One GPU a pod was given by volcano's vGPU protocol, as its
 * KB_ANN_VGPU_IDS annotation says ("UUID,NVIDIA,mem,cores:"). */
typedef struct kb_vgpu_use {
	const char *uuid;
	int32_t mem;   /* MiB */
	int32_t cores; /* percent */
} kb_vgpu_use;

/* What the predicates and the gpu plugin need of a pod, decoded once. */
typedef struct kb_pod_spec {
	kb_labels labels;
	kb_labels node_selector;
	/* requiredDuringSchedulingIgnoredDuringExecution: terms ORed; 0 terms = none */
	const kb_selector_term *required;
	uint32_t nrequired;
	const kb_preferred_term *preferred;
	uint32_t npreferred;
	const kb_toleration *tolerations;
	uint32_t ntolerations;
	const kb_host_port *host_ports;
	uint32_t nhost_ports;
	/* Pod affinity and anti-affinity, required (weight 0) and preferred */
	const kb_pod_affinity_term *affinity;
	uint32_t naffinity;
	const kb_pod_affinity_term *anti_affinity;
	uint32_t nanti_affinity;
	const kb_pod_affinity_term *pref_affinity;
	uint32_t npref_affinity;
	const kb_pod_affinity_term *pref_anti_affinity;
	uint32_t npref_anti_affinity;
	/* spec.topologySpreadConstraints, in order */
	const kb_spread_constraint *spread;
	uint32_t nspread;
	/* GPU wishes (see plugins/gpu.c): models accepted, '|'-separated, or NULL */
	const char *gpu_models;
	/* A share of one GPU in milli-GPU (1..999, the pod annotation
	 * KB_ANN_GPU_MILLI), 0 when the pod takes whole GPUs */
	int32_t gpu_milli;
	/* volcano's vGPU (plugins/vgpu.h): what its one vGPU container asks,
	 * per vGPU: vgpu_number GPUs (0: asks none), vgpu_mem MiB of each (0:
	 * vgpu_pct % of the card), vgpu_cores % of each; vgpu_containers
	 * counts the containers that ask (more than one is refused).
	 * vgpu_used: the GPUs its KB_ANN_VGPU_IDS annotation says it was
	 * given (cache/decode_vgpu.c), nvgpu_used of them; NULL and 0 when
	 * none. */
	int32_t vgpu_number;
	int32_t vgpu_mem;
	int32_t vgpu_pct;
	int32_t vgpu_cores;
	int32_t vgpu_containers;
	const kb_vgpu_use *vgpu_used;
	uint32_t nvgpu_used;
	/* Its asks in names past the slots (api/resource.h, "Past the
	 * slots"): known indices, each once; NULL and 0 when none. */
	const kb_res_extra *spill;
	uint32_t nspill;
} kb_pod_spec;

/* Whether s asks anything of the pod topology index (scheduler/podtopo.h):
 * pod affinity or anti-affinity terms, or spread constraints. NULL: no.
 * O(1). */
static inline bool kb_pod_spec_has_topology(const kb_pod_spec *s)
{
	return s && (s->naffinity || s->nanti_affinity || s->npref_affinity ||
		     s->npref_anti_affinity || s->nspread);
}

/* The pod annotation of kb_pod_spec.gpu_milli, for reasons that name it. */
#define KB_ANN_GPU_MILLI "kube-batchd.io/gpu-milli"

/* One entry of volcano's minTaskMember: at least min pods of the task role
 * must run for the job to be ready. A PodGroup names at most KB_MAX_ROLES. */
#define KB_MAX_ROLES 64
typedef struct kb_role_min {
	const char *role;
	int32_t min;
} kb_role_min;

/* ---- topology (network domains) ------------------------------------------------ */

/* What a gang asks of the network domains its members land in, as its
 * PodGroup (or its pods) wrote it; scheduler/topology.h says how it is
 * placed, README.md ("Gangs inside one network domain") which objects and
 * fields it is read from. Strings are owned by the cache's objects. */
typedef struct kb_topology_req {
	bool set;              /* any of the below was given */
	const char *required;  /* a node label key: every member in one domain of it, or NULL */
	const char *preferred; /* a node label key: one domain of it if the gang fits, else
				* the fewest, or NULL */
	/* Node label keys, broadest first, comma-separated as written
	 * (validated: keys unique, kubernetes.io/hostname only last), or NULL
	 * for the scheduler's default (the allocate argument topology-levels). */
	const char *levels;
	/* volcano's spec.networkTopology: highestTierAllowed (>= 1; 0 when the
	 * PodGroup has none), and whether its mode is hard. Tier 1 is the
	 * narrowest level of the levels that is not kubernetes.io/hostname. */
	int32_t volcano_tier;
	bool volcano_hard;
	/* Where it was read, for reasons: "annotation kube-batchd.io/topology-required",
	 * "spec.networkTopology" ... A constant. */
	const char *source;
} kb_topology_req;

/* ---- task ------------------------------------------------------------------------ */

/* kube-batch's TaskStatus. */
typedef enum kb_task_status {
	KB_TASK_PENDING = 0,
	KB_TASK_ALLOCATED, /* placed in this session, not yet bound */
	KB_TASK_PIPELINED, /* placed onto resources that are being released */
	KB_TASK_BINDING,   /* bind sent, not yet confirmed */
	KB_TASK_BOUND,     /* nodeName set, not running yet */
	KB_TASK_RUNNING,
	KB_TASK_RELEASING, /* being evicted or deleted */
	KB_TASK_SUCCEEDED,
	KB_TASK_FAILED,
	KB_TASK_UNKNOWN,
	KB_TASK_NSTATUS
} kb_task_status;

/* True for statuses that hold resources on a node and count as "ready" for a
 * gang: Allocated, Binding, Bound, Running. (kube-batch's AllocatedStatus.) */
static inline bool kb_task_status_allocated(kb_task_status s)
{
	return s == KB_TASK_ALLOCATED || s == KB_TASK_BINDING || s == KB_TASK_BOUND ||
	       s == KB_TASK_RUNNING;
}

/* True for statuses that occupy a node's resources (allocated or releasing). */
static inline bool kb_task_status_on_node(kb_task_status s)
{
	return kb_task_status_allocated(s) || s == KB_TASK_RELEASING || s == KB_TASK_PIPELINED;
}

typedef struct kb_task {
	const char *uid;
	const char *ns;
	const char *name;
	const char *key; /* "ns/name" */
	int32_t job;     /* index into the snapshot's jobs; -1 for a foreign pod */
	int32_t node;    /* index into the snapshot's nodes; -1 when not placed */
	int32_t node_prev, node_next; /* links in the node's task list, -1 at the ends */
	kb_task_status status;
	int32_t priority;
	int64_t creation_ms; /* creationTimestamp (or simulated arrival), milliseconds */
	int64_t started_ms;  /* when it was bound/started; used for "least work lost" */
	int64_t evicted_ms;  /* when it was last evicted (preempted or reclaimed); 0 = never */
	kb_res req;          /* what it is charged: its request as the kubelet counts it (plus a
			      * share of a GPU it does not ask for; kb_cluster_snapshot) */
	bool best_effort;    /* asks for nothing but a pod slot */
	bool spills;         /* asks for names past the slots (spec->spill; api/resource.h) */
	bool foreign;        /* another scheduler's pod: occupies its node, never scheduled */
	bool critical;       /* system-cluster-critical / system-node-critical / kube-system */
	bool preempt_never;  /* preemptionPolicy Never (the pod's, else its PriorityClass's) */
	bool preemptable;    /* may be a victim (volcano.sh/preemptable, default true) */
	int16_t role;        /* index into its job's roles, or -1 */
	uint32_t gpu_mask;   /* device indices chosen on its node (bit i = GPU i) */
	const kb_pod_spec *spec;
	uint32_t cache_slot; /* the cache's slot of this pod (private to cache/) */
} kb_task;

/* ---- job ------------------------------------------------------------------------- */

typedef enum kb_pg_phase {
	KB_PG_PENDING = 0,
	KB_PG_INQUEUE,
	KB_PG_RUNNING,
	KB_PG_UNKNOWN,
	KB_PG_COMPLETED,
} kb_pg_phase;

/* Which API a job came from; decides how its status is written back. */
typedef enum kb_pg_flavor {
	KB_PG_NONE = 0,  /* a lone pod */
	KB_PG_KUBE_BATCH, /* scheduling.incubator.k8s.io/v1alpha1 */
	KB_PG_VOLCANO,    /* scheduling.volcano.sh/v1beta1 */
	KB_PG_COSCHED,    /* scheduling.x-k8s.io/v1alpha1 (or scheduling.sigs.k8s.io) */
	/* Kubernetes' own (KEP-4671): a scheduling.k8s.io PodGroup
	 * (v1alpha2, v1alpha3, v1beta1), whose status holds conditions only. */
	KB_PG_K8S,
	/* Kubernetes' own in v1.35: one podGroup (and replica key) of a
	 * scheduling.k8s.io/v1alpha1 Workload. No object of its own, no status:
	 * nothing is written for it. */
	KB_PG_K8S_WORKLOAD,
} kb_pg_flavor;

typedef struct kb_job {
	const char *uid;
	const char *ns;
	const char *name;
	/* "ns/name" of the PodGroup, or of the lone pod; for a v1alpha1
	 * Workload's gang "ns/workload/podGroup", "/replicaKey" appended when
	 * the pods give one (names cannot hold '/', so keys never clash). */
	const char *key;
	kb_pg_flavor flavor;
	int32_t queue; /* index into the snapshot's queues; -1 if its queue is unknown */
	int32_t min_member;
	int32_t priority;
	int64_t creation_ms;
	kb_pg_phase phase;
	bool has_min_resources;
	kb_res min_resources; /* PodGroup spec.minResources */
	/* minTaskMember (volcano), sorted by role; nroles == 0 when none. */
	const kb_role_min *roles;
	uint32_t nroles;
	uint32_t cache_slot; /* the cache's PodGroup slot, or UINT32_MAX (private to cache/) */
	/* Tasks of this job: snapshot->job_tasks[first_task .. first_task + ntasks) */
	uint32_t first_task;
	uint32_t ntasks;
	/* Derived, kept up to date by the session as tasks change status. */
	int32_t nstatus[KB_TASK_NSTATUS];
	kb_res allocated; /* requests of tasks in allocated statuses */
	kb_res request;   /* requests of every task that is not finished */
	/* Set by the cache when the job cannot be scheduled at all, e.g.
	 * "PodGroup \"ns/pg\" not found"; NULL otherwise. What a session
	 * concludes about a job is session output (scheduler/framework.h:
	 * kb_job_outcome), not part of the model. */
	const char *invalid;
	/* Pods of ours in the group held back by spec.schedulingGates: not
	 * tasks until ungated (the gang's reason counts them). */
	int32_t ngated;
	/* Every pod of the group names another scheduler: its group is left
	 * alone, neither scheduled nor written (invalid says why). */
	bool foreign;
	/* Its network-topology wish (its PodGroup's, else its pods'), or NULL
	 * for none. Owned by the cache's objects. */
	const kb_topology_req *topology;
} kb_job;

/* ---- node ------------------------------------------------------------------------ */

#define KB_MAX_GPUS 32

/* How a node's device plugin shares its GPUs, as GPU Feature Discovery
 * labels it (nvidia.com/gpu.sharing-strategy). */
typedef enum kb_gpu_sharing {
	KB_GPU_SHARING_NONE = 0,     /* "none" or no label: a nvidia.com/gpu is a GPU */
	KB_GPU_SHARING_TIME_SLICING, /* "time-slicing": a nvidia.com/gpu is a replica */
	KB_GPU_SHARING_MPS,          /* "mps": a replica, at most one per pod */
} kb_gpu_sharing;

/* One GPU of volcano's vGPU device plugin, as the node registers it. */
typedef struct kb_vgpu_dev {
	const char *uuid;
	int32_t count; /* vGPUs it may hold (the plugin's split count) */
	int32_t mem;   /* device memory, MiB (in the plugin's memory unit) */
} kb_vgpu_dev;

typedef struct kb_node {
	const char *name;
	kb_labels labels;
	const kb_taint *taints;
	uint32_t ntaints;
	bool unschedulable; /* spec.unschedulable (cordoned) */
	bool ready;         /* condition Ready=True (absent counts as ready in simulation) */
	/* The API's latest version of the node did not decode (the cache keeps
	 * the one before): ready is false, and the reason a pod does not fit
	 * says so. */
	bool undecodable;
	/* A pod the API puts on this node did not decode, so what it uses is
	 * unknown (kb_cluster_note_unreadable_pod): ready is false, and the
	 * reason a pod does not fit says so. */
	bool unreadable_pod;
	kb_res allocatable;
	/* Its allocatable of the names that have no slot (api/resource.h):
	 * what pods asking spilled names are checked against; owned by the
	 * cache's object. NULL and 0 when none. */
	const kb_res_extra *extra;
	uint32_t nextra;
	kb_res used;      /* requests of tasks in allocated statuses and releasing */
	kb_res idle;      /* allocatable - used */
	kb_res releasing; /* requests of tasks being evicted */
	kb_res pipelined; /* requests of tasks pipelined onto releasing resources */
	/* Tasks on this node (including foreign pods): a doubly linked list
	 * through kb_task.node_prev/node_next, head index or -1. */
	int32_t task_head;
	uint32_t ntasks;
	/* Bumped whenever a task joins or leaves the node (or changes how it
	 * weighs on it), so a session can tell which nodes changed since it last
	 * looked (scheduler/actions/placement.c). Only differences matter. */
	uint32_t gen;
	/* GPU devices (see plugins/gpu.c); ngpus == 0 when the node has none.
	 * ngpus counts physical GPUs: on a node whose device plugin shares
	 * them (gpu_replicas > 1) each is advertised as gpu_replicas
	 * nvidia.com/gpu. */
	int32_t ngpus;
	int32_t gpu_replicas;              /* 1, or GFD's nvidia.com/gpu.replicas */
	kb_gpu_sharing gpu_sharing;        /* GFD's nvidia.com/gpu.sharing-strategy */
	const char *gpu_model;             /* nvidia.com/gpu.product label, or NULL */
	const uint8_t *gpu_group;          /* topology group of each device, or NULL */
	int32_t gpushare_count;            /* aliyun.com/gpu-count (plugins/gpushare.c), or 0 */
	/* volcano's vGPU devices (plugins/vgpu.h), the cache's; why none when
	 * the node registers some but offers none, else NULL. */
	const kb_vgpu_dev *vgpu;
	uint32_t nvgpu;
	const char *vgpu_off;
} kb_node;

/* ---- volumes ---------------------------------------------------------------------- */

/* Claims per pod kube-batchd binds; a pod with more waits, saying so. */
#define KB_MAX_POD_CLAIMS 64

/* PersistentVolume access modes, as bits (kb_pv.access_modes,
 * kb_claim_need.access_modes). */
#define KB_ACCESS_RWO 1u  /* ReadWriteOnce */
#define KB_ACCESS_ROX 2u  /* ReadOnlyMany */
#define KB_ACCESS_RWX 4u  /* ReadWriteMany */
#define KB_ACCESS_RWOP 8u /* ReadWriteOncePod */

/* A PersistentVolume a claim waiting for its first consumer may be matched
 * with: Available, not being deleted (or already pre-bound to such a
 * claim). The cache builds them (cache/volumes.h); strings are the
 * cache's. */
typedef struct kb_pv {
	const char *name;
	const char *resource_version; /* a precondition for the write that binds it */
	const char *class_name; /* spec.storageClassName, "" for none */
	int64_t capacity;       /* spec.capacity.storage, bytes */
	uint32_t access_modes;  /* KB_ACCESS_* */
	bool block;             /* volumeMode Block (else Filesystem) */
	/* spec.claimRef "ns/name" when pre-bound to a claim, else NULL */
	const char *claim_key;
	/* spec.nodeAffinity.required.nodeSelectorTerms, ORed; 0 = every node */
	const kb_selector_term *terms;
	uint32_t nterms;
	const kb_labels *labels; /* for a claim's spec.selector */
} kb_pv;

/* A claim of a pod that kube-batchd must bind (its class binds on the
 * first consumer, WaitForFirstConsumer, and nothing chose for it yet):
 * either an available PV that fits on the chosen node, or dynamic
 * provisioning there. */
typedef struct kb_claim_need {
	const char *key; /* "ns/name" */
	const char *ns, *name, *uid;
	const char *resource_version;
	const char *class_name;
	int64_t request; /* spec.resources.requests.storage, bytes (0 when absent) */
	uint32_t access_modes;
	bool block;
	const kb_label_selector *selector; /* spec.selector, or NULL */
	/* The class has a provisioner (not kubernetes.io/no-provisioner):
	 * without a PV, the volume is provisioned on the chosen node. */
	bool dynamic;
	/* The class's allowedTopologies as node selector terms (ORed), 0 = any
	 * node: where it may provision. */
	const kb_selector_term *allowed;
	uint32_t nallowed;
	/* The provisioner is a CSI driver that publishes storage capacity
	 * (CSIDriver spec.storageCapacity) and the claim asks a size:
	 * provisioning on a node needs one of these, the nodeTopology of a
	 * CSIStorageCapacity of the class whose maximumVolumeSize (else
	 * capacity) holds the request, to select the node. */
	bool check_capacity;
	const kb_label_selector *const *capacity;
	uint32_t ncapacity;
} kb_claim_need;

/* A node constraint from a volume: the node must match one of the terms. */
typedef struct kb_volume_affinity {
	const char *pv; /* the PersistentVolume's name, for reasons */
	const kb_selector_term *terms;
	uint32_t nterms;
} kb_volume_affinity;

/* What a pending pod's PersistentVolumeClaims ask of its placement
 * (kube-scheduler's VolumeBinding), worked out by the cache for each
 * session (cache/volumes.h) and checked by scheduler/volumes.h. */
typedef struct kb_task_volumes {
	/* The pod can go nowhere yet, and why (kube-scheduler's words: a
	 * claim missing, being deleted, lost, or an Immediate claim not bound
	 * yet), or NULL. */
	const char *wait;
	/* Bound (or pre-bound) volumes with node affinity: every one must
	 * match the node. */
	const kb_volume_affinity *affinities;
	uint32_t naffinities;
	/* A claim's volume.kubernetes.io/selected-node: the pod goes only
	 * there (its volume is being provisioned there), or NULL. */
	const char *pinned_node;
	/* Claims to bind at placement, smallest request first. */
	const kb_claim_need *to_bind;
	uint32_t nto_bind;
	/* Every claim is bound (nothing to bind, nothing under way). */
	bool ready;
	/* When neither ready nor anything to bind: what is under way (a PV
	 * controller binding, a provisioner at work). */
	const char *under_way;
	/* Its ReadWriteOncePod claims, as indices into the snapshot's
	 * rwop_claims: no two pods may use one (kube-scheduler's
	 * VolumeRestrictions). */
	const uint32_t *rwop;
	uint32_t nrwop;
	/* Pods on nodes using those claims, as task indices: while one runs
	 * the pod fits nowhere; once the session evicts it, the pod fits its
	 * node (kube-scheduler nominates it there) and waits there for it. */
	const uint32_t *holders;
	uint32_t nholders;
	/* The CSI volumes its claims use whose driver a CSINode limits
	 * (kube-scheduler's NodeVolumeLimits), distinct, as indices into the
	 * snapshot's csi_vol_driver; 0 when none. */
	const uint32_t *csi;
	uint32_t ncsi;
} kb_task_volumes;

/* One node's CSI volume limits (a CSINode's drivers with
 * allocatable.count), as the session starts. */
typedef struct kb_node_csi {
	uint32_t nlimits;        /* 0: the node limits nothing */
	const uint32_t *driver;  /* per limit: the driver, an index into csi_drivers */
	const int64_t *limit;    /* per limit: allocatable.count */
	/* per limit: the distinct volumes of that driver in use there (its
	 * pods' claims and its VolumeAttachments), each counted once */
	const int64_t *attached;
	/* Of the volumes pending tasks use (kb_task_volumes.csi), those
	 * already counted in attached, sorted: they add nothing. */
	const uint32_t *vols;
	uint32_t nvols;
} kb_node_csi;

/* ---- namespace ------------------------------------------------------------------- */

/* A Namespace: its labels are what a pod affinity term's namespaceSelector
 * reads. */
typedef struct kb_namespace {
	const char *name;
	kb_labels labels;
} kb_namespace;

/* ---- queue ----------------------------------------------------------------------- */

typedef enum kb_queue_state { KB_QUEUE_OPEN = 0, KB_QUEUE_CLOSED, KB_QUEUE_CLOSING } kb_queue_state;

typedef struct kb_queue {
	const char *name;
	int32_t weight;
	int32_t parent; /* index, or -1 for a root */
	kb_queue_state state;
	bool reclaimable;
	uint32_t capability_mask; /* bit i set: resource i is capped by capability.q[i] */
	kb_res capability;        /* ceiling; only the resources in capability_mask */
	kb_res guarantee;  /* floor */
	int64_t creation_ms;
	/* From the queue file, or the implicit default queue: no object, so
	 * creation_ms is 0, older than any Queue object the API has made. In
	 * a simulation, manifests' Queue objects without a creationTimestamp
	 * are at 0 too; they still come after these, as in the cluster. */
	bool configured;
	/* Derived from the tasks (api/snapshot.h); a queue's deserved share is
	 * session output (scheduler/framework.h: kb_session.deserved). */
	kb_res allocated;
	kb_res pipelined; /* requests of its tasks pipelined onto releasing resources */
	kb_res request;
} kb_queue;

#endif

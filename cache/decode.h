/* decode.h - what every kind's decoder shares: one decoding's state, errors
 * that name the object and the field, and readers for scalars, mappings,
 * lists, labels, resource lists and metadata.
 *
 * Internal to cache/: nothing outside cache/ includes this header (the
 * entry points are kb_object_decode and kb_object_decode_as in
 * cache/objects.h), and its names carry the internal prefix dec_ rather
 * than kb_.
 *
 * How a document is decoded: cache/objects.c reads apiVersion and kind,
 * then metadata (dec_meta), then hands the document to the decoder of its
 * kind, which reads only the fields the scheduler uses:
 *   decode_node.c            Node
 *   decode_pod.c             Pod: status, priority, group, simulator and GPU annotations
 *   decode_pod_containers.c  Pod: requests of containers, init containers, overhead; host ports
 *   decode_pod_placement.c   Pod: node selector, node affinity, tolerations
 *   decode_pod_topology.c    Pod: pod affinity and anti-affinity, topology spread
 *   decode_podgroup.c        PodGroup (all four families)
 *   decode_queue.c           Queue (kube-batch, volcano)
 *   decode_priority_class.c  PriorityClass
 * (Namespace and unknown kinds have nothing beyond metadata.)
 *
 * Every reader takes the path of the field it reads
 * ("spec.containers[0].resources.requests") so that an error can name it;
 * every error goes through dec_fail(), which formats
 *   <Kind> "<key>": <field path>: <what> (<source>:<line>:<col>)
 * with the position of the offending node (the document root when the
 * field is missing). Tests and scenario expectations compare these texts:
 * keep them byte for byte.
 *
 * Contract of every function here that returns int, unless it says
 * otherwise: 0 on success; on failure a negative errno with d->err filled
 * (-EINVAL a bad field, -ENOSPC too many resource names in the cluster,
 * -ENOMEM); ret_ parameters are written only on success. Strings and arrays
 * decoded are allocated in d->a (the scratch arena objects.c later packs
 * into the object's block). A path may be truncated to DEC_PATH_LEN - 1
 * characters in messages.
 *
 * Cost: each reader is O(size of the node it reads), plus a sort for
 * dec_labels; a kind's decoder is O(size of the document). Nothing here
 * allocates outside d->a.
 */
#ifndef KB_CACHE_DECODE_H
#define KB_CACHE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/resource.h"
#include "api/types.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/yaml_doc.h"
#include "cache/objects.h"

/* Lists the cluster controls: containers + initContainers, tolerations,
 * labels (and annotations, node selectors, taints, terms, values, ports). */
#define KB_OBJ_LIST_MAX 1024
/* Room for a field path, with its NUL. */
#define DEC_PATH_LEN 256
/* Longest piece of user text quoted back in a message. */
#define DEC_QUOTE_MAX 64

/* One decoding in progress. objects.c fills it; the decoders read it and
 * write the object. */
typedef struct dec_ctx {
	kb_object *o;            /* the object being built (not yet packed) */
	kb_arena *a;             /* scratch: every string and array of o */
	const char *source;      /* file name for positions, or NULL (API objects) */
	kb_resnames *rn;         /* resource names, interned as they are met */
	kb_err *err;             /* filled on failure */
	const kb_yaml_node *root; /* the document */
	const char *kind;        /* for messages; "object" until kind is known */
	const char *key;         /* for messages; NULL until metadata.name is known */
} dec_ctx;

/* ---- errors -------------------------------------------------------------------- */

/* Fills d->err with "<Kind> \"<key>\": <path>: <what> (<source>:<line>:<col>)"
 * (no key part before metadata.name is known; no position for API objects),
 * `what` formatted from fmt. `at` is the offending node, NULL for the
 * document root. Returns code. */
__attribute__((format(printf, 5, 6))) int dec_fail(dec_ctx *d, int code, const kb_yaml_node *at,
						    const char *path, const char *fmt, ...);

/* Fills d->err for a resource name refused because it needs a slot (a
 * queue's capability or guarantee, nvidia.com/gpu) and every slot is
 * taken (kb_resnames_intern's -ENOSPC), naming the names that hold them.
 * Returns -ENOSPC. */
int dec_names_full(dec_ctx *d, const kb_yaml_node *at, const char *path);

/* Fills d->err for a name past KB_RES_KNOWN_MAX names without a slot
 * (kb_resnames_intern_known's -ENOSPC). Returns -ENOSPC. */
int dec_known_full(dec_ctx *d, const kb_yaml_node *at, const char *path);

/* Fills d->err with "out of memory". Returns -ENOMEM. */
int dec_nomem(dec_ctx *d);

/* Writes a field path into buf (DEC_PATH_LEN bytes), truncating long ones. */
__attribute__((format(printf, 2, 3))) void dec_path(char *buf, const char *fmt, ...);

/* ---- scalars ------------------------------------------------------------------- */

/* True when n is a scalar (not NULL, not a mapping or list). */
bool dec_is_scalar(const kb_yaml_node *n);

/* True when n is a scalar whose text is exactly s. */
bool dec_scalar_is(const kb_yaml_node *n, const char *s);

/* The field's text copied into the arena in *ret, or NULL when n is absent
 * or null. A mapping or a list is -EINVAL. */
int dec_str(dec_ctx *d, const kb_yaml_node *n, const char *path, const char **ret);

/* Like dec_str, but "" gives NULL too. */
int dec_str_nonempty(dec_ctx *d, const kb_yaml_node *n, const char *path, const char **ret);

/* An integer in [min, max] into *ret and true into *ret_present (may be
 * NULL); absent or null leaves *ret unchanged and writes false. Not an
 * integer, or out of range: -EINVAL. */
int dec_int(dec_ctx *d, const kb_yaml_node *n, const char *path, int64_t min, int64_t max,
	    int64_t *ret, bool *ret_present);

/* An RFC 3339 timestamp: *ret_set whether it is there (not absent, null
 * or ""), and then its time in ms since the epoch in *ret_ms. A bad one is
 * -EINVAL naming path. */
int dec_time(dec_ctx *d, const kb_yaml_node *n, const char *path, bool *ret_set,
	     int64_t *ret_ms);

/* true or false into *ret; absent or null leaves *ret unchanged. Anything
 * else: -EINVAL. */
int dec_bool(dec_ctx *d, const kb_yaml_node *n, const char *path, bool *ret);

/* The required `weight` (1..100) of a preferred scheduling term `it` at
 * path (node affinity's or pod affinity's), into *ret. */
int dec_term_weight(dec_ctx *d, const kb_yaml_node *it, const char *path, int32_t *ret);

/* A taint effect; absent or "" is KB_EFFECT_ALL (callers that need one
 * check first). Another word or a non-scalar: -EINVAL. */
/* A preemptionPolicy at path: absent is KB_PREEMPTION_UNSET, else
 * "PreemptLowerPriority" or "Never"; anything else is -EINVAL naming path. */
int dec_preemption_policy(dec_ctx *d, const kb_yaml_node *n, const char *path,
			  kb_preemption_policy *ret);

int dec_taint_effect(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_taint_effect *ret);

/* The PodGroup and Queue family an apiVersion names: KB_PG_KUBE_BATCH,
 * KB_PG_VOLCANO, KB_PG_COSCHED (scheduling.x-k8s.io and its older name
 * scheduling.sigs.k8s.io), KB_PG_K8S (scheduling.k8s.io/v1alpha2, v1alpha3,
 * v1beta1), or KB_PG_NONE. */
kb_pg_flavor dec_pg_flavor(const char *api_version);

/* ---- mappings and lists --------------------------------------------------------- */

/* n itself when it is a mapping, NULL when absent or null; anything else is
 * -EINVAL. */
int dec_map(dec_ctx *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret);

/* n itself when it is a list of at most KB_OBJ_LIST_MAX items, NULL when
 * absent or null; anything else is -EINVAL. */
int dec_seq(dec_ctx *d, const kb_yaml_node *n, const char *path, const kb_yaml_node **ret);

/* What dec_each_map does with an item that is null ("- " or "- ~"). */
typedef enum dec_null_item {
	DEC_NULL_ITEM_FAILS,   /* -EINVAL: "expected a mapping, got null" */
	DEC_NULL_ITEM_SKIPPED, /* no call for it */
} dec_null_item;

/* Decodes one item of a list of mappings: `item` is the item's mapping,
 * `path` its path ("<list path>[i]"), i its index, ctx the caller's. */
typedef int dec_item_fn(dec_ctx *d, const kb_yaml_node *item, const char *path, size_t i,
			void *ctx);

/* Calls fn for each item of seq, a list from dec_seq (NULL: no items), in
 * order, stopping at the first error. An item that is not a mapping is
 * -EINVAL at the item ("expected a mapping, got <kind>"); a null one as
 * `nulls` says. Returns 0 or the first error (fn's or its own).
 * Cost: O(items) plus fn's. */
int dec_each_map(dec_ctx *d, const kb_yaml_node *seq, const char *path, dec_null_item nulls,
		 dec_item_fn *fn, void *ctx);

/* The items of seq, a list from dec_seq with at least one item, as strings
 * (null items give "") in a new array of seq->n pointers in *ret. An item
 * that is a mapping or a list is -EINVAL ("<path>[i]"). */
int dec_strings(dec_ctx *d, const kb_yaml_node *seq, const char *path, const char ***ret);

/* ---- labels and resources ----------------------------------------------------- */

/* A map of strings (labels, annotations, nodeSelector), sorted by key, in
 * *ret; absent, null or empty leaves *ret unchanged. Values null give "". More
 * than KB_OBJ_LIST_MAX entries, a duplicate key or a value that is not a
 * string: -EINVAL. Cost: O(n log n). */
int dec_labels(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_labels *ret);

/* A ResourceList that asks for resources (requests, limits, overhead,
 * minResources, a queue's capability): the quantities named, in
 * milli-units, in *ret_res (others 0), and bit i of *ret_mask set for each
 * resource i named; absent or null gives an empty list. Each name is given
 * a slot in d->rn (those met before a failure keep theirs). Once every slot
 * is taken, a new name is a spilled one (api/resource.h): set in
 * *ret_spill, which the caller cleared, or, with ret_spill NULL, refused
 * with -ENOSPC (dec_names_full). A bad name, a quantity that does not parse
 * or is negative: -EINVAL; past KB_RES_SPILL_MAX spilled names in one list
 * or KB_RES_KNOWN_MAX in the cluster: -ENOSPC. */
int dec_reslist(dec_ctx *d, const kb_yaml_node *n, const char *path, kb_res *ret_res,
		uint32_t *ret_mask, kb_res_spill *ret_spill);

/* A ResourceList a node advertises (allocatable, capacity): as dec_reslist
 * for the names that have a slot and for nvidia.com/gpu (given one if
 * new); every other name is a known name of d->rn (api/resource.h) and its
 * quantity an entry of *ret_extra (*ret_nextra entries, in d->a; NULL when
 * none). A name past KB_RES_KNOWN_MAX known ones: -ENOSPC. */
int dec_reslist_advertised(dec_ctx *d, const kb_yaml_node *n, const char *path,
			   kb_res *ret_res, uint32_t *ret_mask, const kb_res_extra **ret_extra,
			   uint32_t *ret_nextra);

/* volcano's vGPU devices a Node registers (cache/decode_vgpu.c) into
 * no->vgpu, no->nvgpu, or why it offers none into no->vgpu_off. Never
 * fails but on -ENOMEM: the node is kept for every other pod. */
int dec_node_vgpu(dec_ctx *d, kb_node_obj *no);

/* The GPUs a pod's KB_ANN_VGPU_IDS says it was given, into ps->vgpu_used
 * (cache/decode_vgpu.c): entries that do not read are left out. Never
 * fails but on -ENOMEM. */
int dec_pod_vgpu_used(dec_ctx *d, kb_pod_spec *ps);

/* ---- metadata ------------------------------------------------------------------- */

/* Reads metadata into d->o->meta (d->o->kind and kind_name already set)
 * and sets d->key for later messages. Defaults: see cache/objects.h.
 * metadata or metadata.name missing, a bad timestamp or label: -EINVAL. */
int dec_meta(dec_ctx *d);

/* The node of annotation `key` (metadata.annotations.<key>), for error
 * positions; NULL when absent. */
const kb_yaml_node *dec_annotation_node(const dec_ctx *d, const char *key);
/* Annotation `key` of the object (decoded meta), or NULL when absent or
 * empty. O(log annotations). */
const char *dec_annotation_nonempty(const dec_ctx *d, const char *key);

/* ---- the decoders of each kind (files listed at the top) ----------------------- */

/* Each reads the kind's fields of d->root into d->o->u (metadata is already
 * decoded). Results as above; the object may be partly written on failure
 * (objects.c discards it). */
int dec_node(dec_ctx *d);
int dec_pod(dec_ctx *d);
int dec_podgroup(dec_ctx *d);
int dec_queue(dec_ctx *d);
int dec_priority_class(dec_ctx *d);
/* cache/decode_workload.c: a scheduling.k8s.io/v1alpha1 Workload; the
 * fields of a scheduling.k8s.io PodGroup (dec_podgroup hands those over);
 * a pod's spec.schedulingGroup or spec.workloadRef into po->group_* (left
 * alone when it has neither). */
int dec_workload(dec_ctx *d);
int dec_k8s_podgroup(dec_ctx *d);
int dec_pod_k8s_group(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po);

/* Pod pieces, for dec_pod. spec is the pod's spec mapping, or NULL.
 * dec_pod_containers: po->req (effective request, see cache/objects.h, with
 * pods = 1) and po->spec's host ports. dec_pod_placement: ps's node
 * selector, node affinity and tolerations. */
int dec_pod_containers(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po);
int dec_pod_placement(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps);
/* cache/decode_topology.c: the network-topology annotations of the object
 * (its metadata is decoded), and for a volcano PodGroup spec.networkTopology
 * (spec: its spec mapping, or NULL), into *ret. 0 or -EINVAL (an empty or
 * malformed label key, a bad level list, annotations that contradict each
 * other; the message names the field) or -ENOMEM. */
int dec_topology(dec_ctx *d, const kb_yaml_node *spec, kb_topology_req *ret);
/* dec_pod_topology (decode_pod_topology.c): ps's pod affinity and
 * anti-affinity terms and topology spread constraints (ps->labels and the
 * object's namespace must be decoded already: matchLabelKeys read them). */
int dec_pod_topology(dec_ctx *d, const kb_yaml_node *spec, kb_pod_spec *ps);

/* Shared with cache/decode_volume.c. dec_node_selector: a v1.NodeSelector
 * at n (its nodeSelectorTerms; a null term has no requirements) into
 * *ret_terms and *ret_n (0 and NULL when absent or empty).
 * dec_label_selector (decode_pod_topology.c): a metav1.LabelSelector at n
 * into *ret with room for `extra` more requirements; absent: nothing. */
int dec_node_selector(dec_ctx *d, const kb_yaml_node *n, const char *path,
		      const kb_selector_term **ret_terms, uint32_t *ret_n);
int dec_label_selector(dec_ctx *d, const kb_yaml_node *n, const char *path, size_t extra,
		       kb_label_selector *ret);
/* cache/decode_volume.c: PersistentVolumeClaim, PersistentVolume,
 * StorageClass, CSINode, VolumeAttachment, CSIDriver, CSIStorageCapacity;
 * dec_pod_claims: the claims a
 * pod's spec.volumes use into po->claims. */
int dec_pvc(dec_ctx *d);
int dec_pv(dec_ctx *d);
int dec_storage_class(dec_ctx *d);
int dec_csi_node(dec_ctx *d);
int dec_volume_attachment(dec_ctx *d);
int dec_csi_driver_obj(dec_ctx *d);
int dec_storage_capacity(dec_ctx *d);
int dec_pod_claims(dec_ctx *d, const kb_yaml_node *spec, kb_pod_obj *po);

#endif

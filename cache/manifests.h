/* manifests.h - Kubernetes manifests (multi-document YAML files) into the
 * object store: what `simulate -f` and `check-config` read.
 */
#ifndef KB_CACHE_MANIFESTS_H
#define KB_CACHE_MANIFESTS_H

#include "base/error.h"
#include "base/vec.h"
#include "cache/cluster.h"
#include "cache/objects.h"

/* Objects handed back to the caller (the pods that arrive later). */
typedef KB_VEC(kb_object *) kb_object_vec;

/* Loads every document of a manifest file into the cluster at time 0, except
 * Pods with an arrival time after 0, which are appended to *later (the caller
 * owns them: kb_object_free each). Used by the simulator, check-config and
 * the tests.
 * Returns 0 or -errno with err naming the file, document and field.
 *
 * The file is parsed and decoded one document at a time (base/yaml_doc.h,
 * kb_yaml_stream), so memory is the objects plus one document's tree.
 * Documents are applied in file order as they are read: on an error, the
 * documents before the bad one are already in the cluster (callers give up
 * on the cluster then), and the error reported is the first one met, in
 * file order, whether a syntax error or a bad field (before streaming, a
 * syntax error anywhere in the file won; an invalid byte is still met up to
 * 16 KiB before the parser gets to it, as libyaml decodes ahead). Messages
 * are unchanged. Cost: O(file size). */
int kb_manifests_load(kb_cluster *c, const char *path, kb_object_vec *later, kb_err *err);

/* kb_manifests_load, with created_ms stamping the objects that carry no
 * creationTimestamp (kb_cluster_apply) instead of 0: manifests added to a
 * cluster read from the API (`simulate --from-cluster`) are its newest
 * objects, as they would be once applied. */
int kb_manifests_load_at(kb_cluster *c, const char *path, int64_t created_ms, kb_object_vec *later,
			 kb_err *err);

#endif

/* kube_source.h - where the cluster is and what of it kube-batchd reads:
 * the API server's configuration as the daemon resolves its flags, and the
 * resources to list and watch once discovery has said which PodGroup
 * families are served. Shared by the daemon (daemon/daemon.c) and the
 * read-only commands (kube/cluster_read.h), so both read the same cluster
 * the same way.
 *
 * Pure but for kb_kube_source_config, which reads files and the
 * environment (KUBECONFIG, the in-cluster service account).
 */
#ifndef KB_KUBE_KUBE_SOURCE_H
#define KB_KUBE_KUBE_SOURCE_H

#include <stdint.h>

#include "base/error.h"
#include "kube/kube_client.h"
#include "kube/reflector.h"

/* The API server's configuration: kubeconfig (--kubeconfig) when given,
 * else the in-cluster configuration, else $KUBECONFIG; master (--master)
 * overrides the server of any of them, or stands alone. Either may be NULL.
 * Returns 0, -ENOENT (none of these: err says what to give), -ENOMEM, or
 * kb_kube_config_load's error (err names the file). *ret is written only
 * on success; kb_kube_config_release frees it. */
int kb_kube_source_config(const char *kubeconfig, const char *master, kb_kube_config *ret,
			  kb_err *err);

/* One resource to list and watch. */
typedef struct kb_watch_resource {
	char path[96];           /* "/api/v1/pods" */
	const char *api_version; /* a constant: "v1", "scheduling.volcano.sh/v1beta1" ... */
	const char *kind;        /* a constant: "Pod", "PodGroup" ... */
} kb_watch_resource;

#define KB_WATCH_MAX 24

/* The resources kube-batchd reads, given what discovery found served:
 * Nodes, Pods, PriorityClasses, Namespaces, PersistentVolumeClaims,
 * PersistentVolumes, StorageClasses, CSINodes, VolumeAttachments,
 * CSIDrivers, CSIStorageCapacities, then the PodGroups (and Queues)
 * of every family served, and Kubernetes' own gang API (its newest
 * PodGroups, else v1.35's Workloads). Writes them to ret[0..) and returns
 * how many (at most KB_WATCH_MAX). Cost: O(1). */
uint32_t kb_watch_resources(const kb_served *served, kb_watch_resource ret[KB_WATCH_MAX]);

#endif

/* kube_source.c - the API server's configuration and the resources read
 * (see kube_source.h). */
#include "kube/kube_source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_kube_source_config(const char *kubeconfig, const char *master, kb_kube_config *ret,
			  kb_err *err)
{
	const char *path = kubeconfig;
	bool has_master = master && master[0];
	kb_err e = {0};
	if (!path || !path[0]) {
		kb_kube_config c;
		if (kb_kube_config_in_cluster(&c, &e) == 0) {
			if (has_master) {
				char *m = strdup(master);
				if (!m) {
					kb_kube_config_release(&c);
					return kb_err_set(err, -ENOMEM, "out of memory");
				}
				free(c.server);
				c.server = m;
			}
			*ret = c;
			return 0;
		}
		path = getenv("KUBECONFIG");
	}
	if (path && path[0])
		return kb_kube_config_load(path, master, ret, err);
	if (has_master) {
		kb_kube_config c;
		memset(&c, 0, sizeof(c));
		if (!(c.server = strdup(master)))
			return kb_err_set(err, -ENOMEM, "out of memory");
		*ret = c;
		return 0;
	}
	/* In a pod (the service's variables are set) whose service account
	 * token cannot be read: that is what to fix. */
	if (e.code < 0 && getenv("KUBERNETES_SERVICE_HOST") && getenv("KUBERNETES_SERVICE_PORT"))
		return kb_err_set(err, e.code, "%s", e.msg);
	return kb_err_set(err, -ENOENT,
			  "no API server: give --kubeconfig or --master, set KUBECONFIG, or run "
			  "in a cluster");
}

static void add(kb_watch_resource *ret, uint32_t *n, const char *path, const char *api_version,
		const char *kind)
{
	if (*n >= KB_WATCH_MAX)
		return;
	kb_watch_resource *w = &ret[(*n)++];
	(void)snprintf(w->path, sizeof(w->path), "%s", path);
	w->api_version = api_version;
	w->kind = kind;
}

uint32_t kb_watch_resources(const kb_served *served, kb_watch_resource ret[KB_WATCH_MAX])
{
	uint32_t n = 0;
	add(ret, &n, "/api/v1/nodes", "v1", "Node");
	add(ret, &n, "/api/v1/pods", "v1", "Pod");
	add(ret, &n, "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1",
	    "PriorityClass");
	/* Namespaces: their labels (pod affinity's namespaceSelector) and the
	 * queue configuration's namespace mapping. */
	add(ret, &n, "/api/v1/namespaces", "v1", "Namespace");
	/* Volume binding: claims, volumes and their classes. */
	add(ret, &n, "/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaim");
	add(ret, &n, "/api/v1/persistentvolumes", "v1", "PersistentVolume");
	add(ret, &n, "/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClass");
	/* CSI volume limits: each node's drivers and what is attached there. */
	add(ret, &n, "/apis/storage.k8s.io/v1/csinodes", "storage.k8s.io/v1", "CSINode");
	add(ret, &n, "/apis/storage.k8s.io/v1/volumeattachments", "storage.k8s.io/v1",
	    "VolumeAttachment");
	/* Storage capacity for provisioning: drivers that publish it, and the
	 * capacity they publish. */
	add(ret, &n, "/apis/storage.k8s.io/v1/csidrivers", "storage.k8s.io/v1", "CSIDriver");
	add(ret, &n, "/apis/storage.k8s.io/v1/csistoragecapacities", "storage.k8s.io/v1",
	    "CSIStorageCapacity");
	if (served->incubator) {
		add(ret, &n, "/apis/scheduling.incubator.k8s.io/v1alpha1/podgroups",
		    "scheduling.incubator.k8s.io/v1alpha1", "PodGroup");
		add(ret, &n, "/apis/scheduling.incubator.k8s.io/v1alpha1/queues",
		    "scheduling.incubator.k8s.io/v1alpha1", "Queue");
	}
	if (served->volcano) {
		add(ret, &n, "/apis/scheduling.volcano.sh/v1beta1/podgroups",
		    "scheduling.volcano.sh/v1beta1", "PodGroup");
		add(ret, &n, "/apis/scheduling.volcano.sh/v1beta1/queues",
		    "scheduling.volcano.sh/v1beta1", "Queue");
	}
	if (served->cosched)
		add(ret, &n, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
		    "scheduling.x-k8s.io/v1alpha1", "PodGroup");
	if (served->cosched_old)
		add(ret, &n, "/apis/scheduling.sigs.k8s.io/v1alpha1/podgroups",
		    "scheduling.sigs.k8s.io/v1alpha1", "PodGroup");
	/* Kubernetes' own gang API (KEP-4671): the runtime PodGroups of the
	 * newest version served (v1.36 and later), else v1.35's Workloads,
	 * whose podGroups are the gangs. */
	if (served->k8s_podgroups) {
		char path[96];
		(void)snprintf(path, sizeof(path), "/apis/%s/podgroups", served->k8s_podgroups);
		add(ret, &n, path, served->k8s_podgroups, "PodGroup");
	} else if (served->k8s_workloads_v1alpha1) {
		add(ret, &n, "/apis/scheduling.k8s.io/v1alpha1/workloads", "scheduling.k8s.io/v1alpha1",
		    "Workload");
	}
	return n;
}

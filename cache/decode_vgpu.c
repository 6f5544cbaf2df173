/* decode_vgpu.c - volcano's vGPU devices a Node registers (see decode.h and
 * plugins/vgpu.h).
 *
 * The device plugin (HAMi's volcano-vgpu-device-plugin) writes, on its
 * Node, KB_ANN_VGPU_REGISTER: one record per GPU, "UUID,Count,Devmem,
 * Type,Health,Mode:", records concatenated; and KB_ANN_VGPU_HANDSHAKE,
 * "Reported <time>" each time it reports (volcano's scheduler rewrites it
 * to "Requesting_<time>", and to "Deleted_<time>" once the plugin has been
 * silent for a minute). Read as volcano's scheduler reads them: a node
 * without the handshake, or marked Deleted, offers no devices; devices
 * whose type does not name NVIDIA are not offered. What kube-batchd does
 * not place (a record it cannot read, mig mode, more than KB_MAX_GPUS
 * devices) makes the node offer none, with vgpu_off saying why: the node
 * itself is kept for every other pod.
 *
 * A pod's KB_ANN_VGPU_IDS, the GPUs it was given ("UUID,Type,mem,cores:"
 * per GPU, ';' between containers), is read here too, once, for the vgpu
 * plugin's books. It is whoever placed the pod's to write: an entry that
 * does not read is left out, never an error.
 */
#include "cache/decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Splits s at sep in place into at most max fields; returns their count
 * (an empty last field after a trailing sep is not counted). */
static int split(char *s, char sep, char **f, int max)
{
	int n = 0;
	while (*s && n < max) {
		f[n++] = s;
		char *e = strchr(s, sep);
		if (!e)
			break;
		*e = '\0';
		s = e + 1;
	}
	return n;
}

/* A decimal integer in [min, INT32_MAX], the whole string. */
static bool int_field(const char *s, long min, int32_t *ret)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > INT32_MAX)
		return false;
	*ret = (int32_t)v;
	return true;
}

int dec_pod_vgpu_used(dec_ctx *d, kb_pod_spec *ps)
{
	const char *ids = dec_annotation_nonempty(d, KB_ANN_VGPU_IDS);
	if (!ids)
		return 0;
	char *copy = kb_arena_strdup(d->a, ids);
	kb_vgpu_use *use = kb_arena_calloc(d->a, KB_MAX_GPUS, sizeof(*use));
	if (!copy || !use)
		return dec_nomem(d);
	uint32_t n = 0;
	char *cont[KB_MAX_GPUS];
	int ncont = split(copy, ';', cont, KB_MAX_GPUS);
	for (int c = 0; c < ncont; c++) {
		char *dev[KB_MAX_GPUS];
		int ndev = split(cont[c], ':', dev, KB_MAX_GPUS);
		for (int i = 0; i < ndev && n < KB_MAX_GPUS; i++) {
			char *f[4];
			if (split(dev[i], ',', f, 4) == 4 && f[0][0] &&
			    int_field(f[2], 0, &use[n].mem) && int_field(f[3], 0, &use[n].cores))
				use[n++].uuid = f[0];
		}
	}
	ps->vgpu_used = n ? use : NULL;
	ps->nvgpu_used = n;
	return 0;
}

int dec_node_vgpu(dec_ctx *d, kb_node_obj *no)
{
	const char *reg = dec_annotation_nonempty(d, KB_ANN_VGPU_REGISTER);
	if (!reg)
		return 0;
	const char *hs = dec_annotation_nonempty(d, KB_ANN_VGPU_HANDSHAKE);
	if (!hs) {
		no->vgpu_off = "node(s) registered volcano vGPU devices but no " KB_ANN_VGPU_HANDSHAKE
			       " (its device plugin has not reported)";
		return 0;
	}
	if (strstr(hs, "Deleted")) {
		no->vgpu_off = "node(s) had a volcano vGPU device plugin that stopped reporting "
			       "(" KB_ANN_VGPU_HANDSHAKE " Deleted)";
		return 0;
	}
	char *copy = kb_arena_strdup(d->a, reg);
	kb_vgpu_dev *devs = kb_arena_calloc(d->a, KB_MAX_GPUS, sizeof(*devs));
	if (!copy || !devs)
		return dec_nomem(d);
	char *rec[KB_MAX_GPUS + 1];
	int nrec = split(copy, ':', rec, KB_MAX_GPUS + 1);
	if (nrec > KB_MAX_GPUS) {
		no->vgpu_off = "node(s) registered more volcano vGPU devices than kube-batchd "
			       "places (32)";
		return 0;
	}
	uint32_t n = 0;
	for (int i = 0; i < nrec; i++) {
		char *f[6];
		if (split(rec[i], ',', f, 6) < 6 || !f[0][0] || !int_field(f[1], 0, &devs[n].count) ||
		    !int_field(f[2], 0, &devs[n].mem)) {
			no->vgpu_off = "node(s) had a " KB_ANN_VGPU_REGISTER
				       " kube-batchd could not read";
			return 0;
		}
		if (strcmp(f[5], "mig") == 0) {
			no->vgpu_off = "node(s) had volcano vGPU devices in mig mode, which "
				       "kube-batchd does not place";
			return 0;
		}
		if (!strstr(f[3], "NVIDIA"))
			continue; /* volcano's scheduler offers NVIDIA devices only */
		devs[n++].uuid = f[0];
	}
	no->vgpu = n ? devs : NULL;
	no->nvgpu = n;
	return 0;
}

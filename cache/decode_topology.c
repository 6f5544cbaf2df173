/* decode_topology.c - a gang's network-topology wish (kb_topology_req), read
 * from a PodGroup or a pod (see decode.h: dec_topology).
 *
 * Three spellings, one meaning (README.md, "Gangs inside one network
 * domain"):
 *  - kube-batchd's annotations: KB_ANN_TOPO_REQUIRED and KB_ANN_TOPO_PREFERRED
 *    name a node label key; KB_ANN_TOPO_LEVELS lists the keys broadest
 *    first ("block,rack,hostname"). Both required and preferred may be
 *    given when the levels list the required key before the preferred one
 *    (one block required, one rack preferred inside it).
 *  - Kueue's PodSet annotations KB_ANN_KUEUE_REQUIRED and
 *    KB_ANN_KUEUE_PREFERRED (at most one of them and
 *    KB_ANN_KUEUE_UNCONSTRAINED, Kueue's own rule); KB_ANN_KUEUE_UNCONSTRAINED
 *    asks for nothing; KB_ANN_KUEUE_SLICE_REQUIRED (a domain per slice of
 *    the PodSet) is refused as not supported rather than ignored.
 *  - volcano's PodGroup spec.networkTopology {mode: hard|soft (default
 *    hard), highestTierAllowed (default 1)}: kept as tiers, which the
 *    scheduler maps onto the levels (scheduler/topology.h).
 * The same key given twice (kube-batchd's and Kueue's) must agree; volcano's
 * field and an annotation together are refused as a conflict. Every error
 * names the field. Cost: O(length of the annotations).
 */
#include "cache/decode.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define TOPO_MAX_LEVELS 16 /* Kueue's Topology allows 16 levels */

/* Annotation `key` (NULL when absent), checked to be a label key. */
static int label_key_annotation(dec_ctx *d, const char *key, const char **ret)
{
	const char *v = kb_labels_get(&d->o->meta.annotations, key);
	*ret = NULL;
	if (!v)
		return 0;
	if (!kb_label_key_valid(v, strlen(v))) {
		char path[DEC_PATH_LEN];
		dec_path(path, "metadata.annotations.%s", key);
		return dec_fail(d, -EINVAL, dec_annotation_node(d, key), path,
				"must be a node label key such as topology.kubernetes.io/zone, got "
				"\"%.*s\"",
				DEC_QUOTE_MAX, v);
	}
	*ret = v;
	return 0;
}

/* The levels list: keys trimmed of blanks, joined by ',' into the arena.
 * Checked: 1..TOPO_MAX_LEVELS valid keys, unique, the hostname key only
 * last. */
static int dec_levels(dec_ctx *d, const char *v, const char **ret)
{
	char path[DEC_PATH_LEN];
	dec_path(path, "metadata.annotations.%s", KB_ANN_TOPO_LEVELS);
	const kb_yaml_node *at = dec_annotation_node(d, KB_ANN_TOPO_LEVELS);
	size_t len = strlen(v);
	char *out = kb_arena_alloc(d->a, len + 1);
	if (!out)
		return dec_nomem(d);
	const char *keys[TOPO_MAX_LEVELS];
	size_t lens[TOPO_MAX_LEVELS], nkeys = 0, o = 0;
	for (const char *p = v;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *e = end;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		size_t n = (size_t)(e - p);
		if (!kb_label_key_valid(p, n))
			return dec_fail(d, -EINVAL, at, path,
					"must list node label keys, broadest first, separated by "
					"commas; \"%.*s\" is not a label key",
					(int)(n < DEC_QUOTE_MAX ? n : DEC_QUOTE_MAX), p);
		if (nkeys == TOPO_MAX_LEVELS)
			return dec_fail(d, -EINVAL, at, path, "at most %d levels",
					TOPO_MAX_LEVELS);
		for (size_t k = 0; k < nkeys; k++)
			if (lens[k] == n && memcmp(keys[k], p, n) == 0)
				return dec_fail(d, -EINVAL, at, path, "level \"%.*s\" is listed twice",
						(int)(n < DEC_QUOTE_MAX ? n : DEC_QUOTE_MAX), p);
		if (nkeys > 0 && lens[nkeys - 1] == strlen(KB_LABEL_HOSTNAME) &&
		    memcmp(keys[nkeys - 1], KB_LABEL_HOSTNAME, lens[nkeys - 1]) == 0)
			return dec_fail(d, -EINVAL, at, path,
					"%s can only be the last (narrowest) level", KB_LABEL_HOSTNAME);
		keys[nkeys] = p;
		lens[nkeys++] = n;
		if (o)
			out[o++] = ',';
		memcpy(out + o, p, n);
		o += n;
		if (!comma)
			break;
		p = comma + 1;
	}
	out[o] = '\0';
	*ret = out;
	return 0;
}

/* The index of key in the comma-separated levels, or -1. O(length). */
static int level_of(const char *levels, const char *key)
{
	size_t n = strlen(key);
	int i = 0;
	for (const char *p = levels;; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && memcmp(p, key, n) == 0)
			return i;
		if (!comma)
			return -1;
		p = comma + 1;
	}
}

/* One of kube-batchd's and Kueue's spellings of the same wish, or both
 * when they agree. */
static int merge_key(dec_ctx *d, const char *ours, const char *ann_ours, const char *kueue,
		     const char *ann_kueue, const char **ret)
{
	if (ours && kueue && strcmp(ours, kueue) != 0) {
		char path[DEC_PATH_LEN];
		dec_path(path, "metadata.annotations.%s", ann_kueue);
		return dec_fail(d, -EINVAL, dec_annotation_node(d, ann_kueue), path,
				"\"%.*s\" contradicts annotation %s \"%.*s\": give one", DEC_QUOTE_MAX,
				kueue, ann_ours, DEC_QUOTE_MAX, ours);
	}
	*ret = ours ? ours : kueue;
	return 0;
}

/* Kueue's own rules for its PodSet annotations: at most one of required,
 * preferred and unconstrained (a boolean); slices are not supported. */
static int kueue_rules(dec_ctx *d)
{
	const kb_labels *a = &d->o->meta.annotations;
	const char *uncon = kb_labels_get(a, KB_ANN_KUEUE_UNCONSTRAINED);
	char path[DEC_PATH_LEN];
	int given = (kb_labels_get(a, KB_ANN_KUEUE_REQUIRED) != NULL) +
		    (kb_labels_get(a, KB_ANN_KUEUE_PREFERRED) != NULL) + (uncon != NULL);
	if (given > 1)
		return dec_fail(d, -EINVAL, dec_annotation_node(d, KB_ANN_KUEUE_PREFERRED),
				"metadata.annotations",
				"must not contain more than one topology annotation of %s, %s and %s "
				"(Kueue's rule)",
				KB_ANN_KUEUE_REQUIRED, KB_ANN_KUEUE_PREFERRED,
				KB_ANN_KUEUE_UNCONSTRAINED);
	if (uncon && strcmp(uncon, "true") != 0 && strcmp(uncon, "false") != 0) {
		dec_path(path, "metadata.annotations.%s", KB_ANN_KUEUE_UNCONSTRAINED);
		return dec_fail(d, -EINVAL, dec_annotation_node(d, KB_ANN_KUEUE_UNCONSTRAINED), path,
				"must be true or false, got \"%.*s\"", DEC_QUOTE_MAX, uncon);
	}
	if (kb_labels_get(a, KB_ANN_KUEUE_SLICE_REQUIRED)) {
		dec_path(path, "metadata.annotations.%s", KB_ANN_KUEUE_SLICE_REQUIRED);
		return dec_fail(d, -EINVAL, dec_annotation_node(d, KB_ANN_KUEUE_SLICE_REQUIRED), path,
				"a domain per slice of a gang is not supported by kube-batchd; use "
				"%s or %s for the whole gang",
				KB_ANN_KUEUE_REQUIRED, KB_ANN_KUEUE_PREFERRED);
	}
	return 0;
}

/* volcano's spec.networkTopology into *t. */
static int dec_network_topology(dec_ctx *d, const kb_yaml_node *spec, kb_topology_req *t)
{
	const kb_yaml_node *nt;
	int r = dec_map(d, kb_yaml_get(spec, "networkTopology"), "spec.networkTopology", &nt);
	if (r < 0 || !nt)
		return r;
	const kb_yaml_node *mode = kb_yaml_get(nt, "mode");
	if (kb_yaml_is_null(mode) || dec_scalar_is(mode, "hard"))
		t->volcano_hard = true;
	else if (!dec_scalar_is(mode, "soft"))
		return dec_fail(d, -EINVAL, mode, "spec.networkTopology.mode",
				"must be hard or soft, got %s",
				dec_is_scalar(mode) ? mode->str : kb_yaml_kind_name(mode));
	int64_t tier = 1;
	bool present = false;
	if ((r = dec_int(d, kb_yaml_get(nt, "highestTierAllowed"),
			 "spec.networkTopology.highestTierAllowed", 1, 64, &tier, &present)) < 0)
		return r;
	t->volcano_tier = (int32_t)tier;
	t->set = true;
	t->source = "spec.networkTopology";
	return 0;
}

int dec_topology(dec_ctx *d, const kb_yaml_node *spec, kb_topology_req *ret)
{
	kb_topology_req t = {0};
	const char *req_ours, *req_kueue, *pref_ours, *pref_kueue;
	const char *levels = kb_labels_get(&d->o->meta.annotations, KB_ANN_TOPO_LEVELS);
	int r;
	if ((r = kueue_rules(d)) < 0 ||
	    (r = label_key_annotation(d, KB_ANN_TOPO_REQUIRED, &req_ours)) < 0 ||
	    (r = label_key_annotation(d, KB_ANN_KUEUE_REQUIRED, &req_kueue)) < 0 ||
	    (r = label_key_annotation(d, KB_ANN_TOPO_PREFERRED, &pref_ours)) < 0 ||
	    (r = label_key_annotation(d, KB_ANN_KUEUE_PREFERRED, &pref_kueue)) < 0)
		return r;
	if ((r = merge_key(d, req_ours, KB_ANN_TOPO_REQUIRED, req_kueue, KB_ANN_KUEUE_REQUIRED,
			   &t.required)) < 0 ||
	    (r = merge_key(d, pref_ours, KB_ANN_TOPO_PREFERRED, pref_kueue, KB_ANN_KUEUE_PREFERRED,
			   &t.preferred)) < 0)
		return r;
	const char *src = t.required ? (req_ours ? "annotation " KB_ANN_TOPO_REQUIRED
						 : "annotation " KB_ANN_KUEUE_REQUIRED)
			  : t.preferred ? (pref_ours ? "annotation " KB_ANN_TOPO_PREFERRED
						     : "annotation " KB_ANN_KUEUE_PREFERRED)
					: NULL;
	if (levels && (r = dec_levels(d, levels, &t.levels)) < 0)
		return r;
	char path[DEC_PATH_LEN];
	const char *keys[2] = {t.required, t.preferred};
	const char *anns[2] = {req_ours ? KB_ANN_TOPO_REQUIRED : KB_ANN_KUEUE_REQUIRED,
			       pref_ours ? KB_ANN_TOPO_PREFERRED : KB_ANN_KUEUE_PREFERRED};
	for (int k = 0; k < 2 && t.levels; k++)
		if (keys[k] && level_of(t.levels, keys[k]) < 0) {
			dec_path(path, "metadata.annotations.%s", anns[k]);
			return dec_fail(d, -EINVAL, dec_annotation_node(d, anns[k]), path,
					"\"%.*s\" is not one of the levels of annotation %s (\"%.*s\")",
					DEC_QUOTE_MAX, keys[k], KB_ANN_TOPO_LEVELS, DEC_QUOTE_MAX,
					t.levels);
		}
	if (t.required && t.preferred &&
	    (!t.levels || level_of(t.levels, t.required) >= level_of(t.levels, t.preferred))) {
		dec_path(path, "metadata.annotations.%s", anns[1]);
		return dec_fail(d, -EINVAL, dec_annotation_node(d, anns[1]), path,
				"\"%.*s\" conflicts with the required \"%.*s\" (annotation %s): both "
				"are allowed only when annotation %s lists the required level "
				"before (broader than) the preferred one",
				DEC_QUOTE_MAX, t.preferred, DEC_QUOTE_MAX, t.required, anns[0],
				KB_ANN_TOPO_LEVELS);
	}
	t.set = t.required || t.preferred;
	t.source = src;
	if (spec && d->o->kind == KB_KIND_PODGROUP &&
	    d->o->u.podgroup.flavor == KB_PG_VOLCANO) {
		kb_topology_req v = {0};
		if ((r = dec_network_topology(d, spec, &v)) < 0)
			return r;
		if (v.set && t.set)
			return dec_fail(d, -EINVAL, kb_yaml_get(spec, "networkTopology"),
					"spec.networkTopology",
					"conflicts with %s: give one of the two", t.source);
		if (v.set) {
			v.levels = t.levels;
			t = v;
		}
	}
	*ret = t;
	return 0;
}

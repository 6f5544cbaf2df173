#include "cache/manifests.h"

#include "base/yaml_doc.h"

int kb_manifests_load_at(kb_cluster *c, const char *path, int64_t created_ms, kb_object_vec *later,
			 kb_err *err)
{
	/* One document at a time: its tree is freed before the next is parsed,
	 * so loading holds the objects and one document, never the file. */
	kb_yaml_stream *ys;
	int r = kb_yaml_stream_open_file(path, &ys, err);
	if (r < 0)
		return r;
	const kb_yaml_node *doc;
	while ((r = kb_yaml_stream_next(ys, &doc, err)) > 0) {
		kb_object *o = NULL;
		r = kb_object_decode(doc, path, &c->resnames, &o, err);
		if (r < 0)
			break;
		if (o->kind == KB_KIND_POD && o->u.pod.sim_arrival_ms > 0) {
			if ((r = KB_VEC_PUSH(later, o)) < 0) {
				kb_object_free(o);
				kb_err_set(err, r, "%s: out of memory", path);
				break;
			}
			continue;
		}
		if ((r = kb_cluster_apply(c, o, created_ms)) < 0) {
			kb_err_set(err, r, "%s: out of memory", path);
			break;
		}
	}
	kb_yaml_stream_free(ys);
	return r < 0 ? r : 0;
}

int kb_manifests_load(kb_cluster *c, const char *path, kb_object_vec *later, kb_err *err)
{
	return kb_manifests_load_at(c, path, 0, later, err);
}

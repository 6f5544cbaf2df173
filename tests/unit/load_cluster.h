/* load_cluster.h - for unit tests: manifests into a kb_cluster.
 *
 * load_cluster(c, text) decodes every document of text and applies it to c,
 * failing the current cmocka test on any error. Include after <cmocka.h>.
 */
#ifndef KB_TESTS_UNIT_LOAD_CLUSTER_H
#define KB_TESTS_UNIT_LOAD_CLUSTER_H

#include <string.h>

#include "base/yaml_doc.h"
#include "cache/cluster.h"

static inline void load_cluster(kb_cluster *c, const char *text)
{
	kb_yaml_file yf;
	kb_err err;
	assert_int_equal(kb_yaml_load_buffer(text, strlen(text), "cluster", &yf, &err), 0);
	for (size_t i = 0; i < yf.ndocs; i++) {
		kb_object *o;
		assert_int_equal(kb_object_decode(yf.docs[i], "cluster", &c->resnames, &o, &err), 0);
		assert_int_equal(kb_cluster_apply(c, o, 0), 0);
	}
	kb_yaml_file_release(&yf);
}

#endif

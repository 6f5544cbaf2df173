/* fuzz_pipeline.c - the simulator's path from bytes to decisions:
 * multi-document manifests (base/yaml_doc.h) -> objects (kb_object_decode,
 * as manifests) -> the store (kb_cluster_apply) -> session snapshots ->
 * three sessions one virtual second apart, each one's decisions applied
 * to the store as the simulator applies them, with the universal
 * invariants checked after every session (fuzz_sessions.h: no pod bound
 * twice, no node over its allocatable, no gang partly placed, every
 * pending pod with a reason). The configuration is KB_CONF_FULL (every
 * action and plugin); a queue file is not read (queues come from the
 * manifests). A document that does not decode is skipped, as the
 * reflectors skip one; a session may fail only with a message.
 *
 * Inputs past 16 KiB are ignored: a session's cost grows with the objects,
 * and small clusters reach every path. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/defaults.h"
#include "base/yaml_doc.h"
#include "cache/cluster.h"
#include "plugins/registry.h"
#include "scheduler/conf.h"
#include "tests/fuzz/fuzz_sessions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (16u << 10)
#define SESSIONS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	kb_conf conf;
	kb_err err = {0};
	if (kb_conf_load_buffer(KB_CONF_FULL, strlen(KB_CONF_FULL), "full", &kb_builtin_registry,
				&conf, &err) < 0)
		abort();
	kb_yaml_file f;
	if (kb_yaml_load_buffer((const char *)data, size, "fuzz.yaml", &f, &err) < 0) {
		kb_yaml_file_release(&f);
		kb_conf_release(&conf);
		return 0;
	}
	kb_cluster c;
	kb_cluster_init(&c, KB_DEFAULT_SCHEDULER_NAME, KB_DEFAULT_QUEUE);
	for (size_t i = 0; i < f.ndocs; i++) {
		kb_object *o = NULL;
		kb_err e = {0};
		if (kb_object_decode(f.docs[i], f.name, &c.resnames, &o, &e) < 0)
			continue;
		if (kb_cluster_apply(&c, o, (int64_t)i) < 0)
			abort(); /* only -ENOMEM */
	}
	kb_yaml_file_release(&f);
	kb_session_memo memo;
	memset(&memo, 0, sizeof(memo));
	for (int s = 0; s < SESSIONS; s++) {
		kb_err e = {0};
		if (fz_session(&c, &conf, &memo, 1000 * (int64_t)s, true, &e) < 0)
			break;
	}
	kb_cluster_release(&c);
	kb_conf_release(&conf);
	return 0;
}

/* run_session.h - for the action tests: one real session over manifests.
 *
 * run_session(r, conf_yaml, manifests) loads the manifests into a cluster,
 * loads the configuration (built-in registry), runs one session with every
 * configured action and records what it decided through the effects table:
 * the pods bound (and where), the pods evicted, each PodGroup's status
 * phase and pending reason. Fails the current cmocka test on any error.
 * Include after <cmocka.h>; release with session_result_release.
 */
#ifndef KB_TESTS_UNIT_RUN_SESSION_H
#define KB_TESTS_UNIT_RUN_SESSION_H

#include <stdio.h>
#include <string.h>

#include "load_cluster.h"
#include "plugins/registry.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"

#define RS_MAX 64

typedef struct session_result {
	char bound[RS_MAX][256];   /* "ns/pod@node" */
	int nbound;
	char evicted[RS_MAX][256]; /* "ns/pod" */
	int nevicted;
	char phase[RS_MAX][256];   /* "ns/pg=Phase" */
	int nphase;
	char reason[RS_MAX][256]; /* "ns/pg: reason" */
	int nreason;
} session_result;

static int rs_bind(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		   const kb_node *n)
{
	session_result *r = ctx;
	assert_true(r->nbound < RS_MAX);
	snprintf(r->bound[r->nbound++], sizeof(r->bound[0]), "%s@%s", t->key, n->name);
	return 0;
}

static int rs_evict(void *ctx, const kb_snapshot *snap, int64_t now, const kb_task *t,
		    const char *why)
{
	session_result *r = ctx;
	assert_true(r->nevicted < RS_MAX);
	snprintf(r->evicted[r->nevicted++], sizeof(r->evicted[0]), "%s", t->key);
	return 0;
}

static int rs_job_status(void *ctx, const kb_snapshot *snap, const kb_job *j,
			 const kb_job_status *st)
{
	session_result *r = ctx;
	if (j->flavor == KB_PG_NONE)
		return 0;
	assert_true(r->nphase < RS_MAX && r->nreason < RS_MAX);
	snprintf(r->phase[r->nphase++], sizeof(r->phase[0]), "%s=%s", j->key,
		 kb_pg_phase_name(st->phase));
	if (st->unschedulable)
		snprintf(r->reason[r->nreason++], sizeof(r->reason[0]), "%s: %s", j->key,
			 st->unschedulable);
	return 0;
}

static const kb_effects rs_effects = {
	.bind = rs_bind,
	.evict = rs_evict,
	.job_status = rs_job_status,
};

static inline void run_session(session_result *r, const char *conf_yaml, const char *manifests)
{
	memset(r, 0, sizeof(*r));
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, manifests);
	kb_conf conf;
	kb_err err = {0};
	assert_int_equal(kb_conf_load_buffer(conf_yaml, strlen(conf_yaml), "conf",
					     &kb_builtin_registry, &conf, &err),
			 0);
	kb_snapshot *snap;
	assert_int_equal(kb_cluster_session_snapshot(&c, &snap, &err), 0);
	kb_session ssn;
	assert_int_equal(kb_session_open(&ssn, snap, &conf, &rs_effects, r, 1000, &err), 0);
	assert_int_equal(kb_session_run_actions(&ssn, &err), 0);
	assert_int_equal(kb_session_close(&ssn), 0);
	kb_conf_release(&conf);
	kb_cluster_release(&c);
}

/* Whether list[0..n) holds an entry starting with prefix. */
static inline bool rs_has(char (*list)[256], int n, const char *prefix)
{
	for (int i = 0; i < n; i++)
		if (strncmp(list[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

#endif

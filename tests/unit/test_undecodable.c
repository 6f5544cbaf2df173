/* An object whose latest version did not decode (kb_cluster_mark_undecodable)
 * is taken out of placement until a version decodes: a node is no
 * candidate, a pending pod is held back and counted as gated by its gang, a
 * PodGroup is invalid; a pod on a node stays where it is. Real sessions over
 * the store (session_fixture.h), and the session snapshot the daemon uses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/json_doc.h"
#include "tests/unit/session_fixture.h"

#define REQ "{cpu: '1', memory: 1Gi}"
#define N1 NODE("n1", "{cpu: '4', memory: 8Gi, pods: '10'}")

/* One full session over the store as it is now (effects recorded afresh). */
static void session(fx *f)
{
	if (f->opened)
		fx_close(f);
	f->nbound = f->nevicted = f->npending = f->ngroups = 0;
	kb_snapshot_release(&f->snap);
	kb_snapshot_init(&f->snap);
	kb_conf_release(&f->conf);
	memset(&f->conf, 0, sizeof(f->conf));
	fx_open(f, NULL);
	fx_run(f);
	fx_close(f);
}

static bool was_bound(const fx *f, const char *key)
{
	for (int i = 0; i < f->nbound; i++)
		if (strcmp(f->bound[i], key) == 0)
			return true;
	return false;
}

static void undecodable_node_is_no_candidate_until_a_version_decodes(void **state)
{
	(void)state;
	fx *f = fx_new();
	/* n2 is too small for p, so that the queue has a share to place p
	 * with and the node search gives its reasons. */
	fx_loadf(f, N1 NODE("n2", "{cpu: 500m, memory: 8Gi, pods: '10'}") LONE_POD("p", REQ, ""));
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_NODE, "n1"), 0);
	assert_true(kb_cluster_undecodable(&f->cluster, KB_KIND_NODE, "n1"));
	session(f);
	assert_int_equal(f->nbound, 0);
	const char *why = fx_pending_reason(f, "default/p");
	assert_non_null(why);
	if (!strstr(why, "could not decode"))
		fail_msg("reason: %s", why);

	/* The same node again, decoded: it is a candidate again. */
	fx_loadf(f, N1);
	assert_false(kb_cluster_undecodable(&f->cluster, KB_KIND_NODE, "n1"));
	session(f);
	assert_true(was_bound(f, "default/p"));
	assert_string_equal(fx_bound_to(f, "default/p"), "n1");
	fx_free(f);
}

static void undecodable_pending_pod_is_held_and_its_gang_waits(void **state)
{
	(void)state;
	fx *f = fx_new();
	fx_loadf(f, N1 PODGROUP("g", 2, "") POD("a", "g", REQ, "") POD("b", "g", REQ, ""));
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_POD, "default/b"), 0);
	session(f);
	assert_int_equal(f->nbound, 0); /* a alone is below minMember: nothing bound */
	const kb_job *j = fx_job(f, "default/g");
	assert_int_equal(j->ntasks, 1);
	assert_int_equal(j->ngated, 1);
	assert_int_equal(f->snap.ntasks, 1); /* b is no task */

	fx_loadf(f, POD("b", "g", REQ, ""));
	session(f);
	assert_int_equal(f->nbound, 2);
	assert_true(was_bound(f, "default/a") && was_bound(f, "default/b"));
	fx_free(f);
}

static void undecodable_pod_on_a_node_keeps_its_place(void **state)
{
	(void)state;
	fx *f = fx_new();
	fx_loadf(f, NODE("n1", "{cpu: '2', memory: 8Gi, pods: '10'}") PODGROUP("g", 1, "")
			    RUNNING("r", "g", "n1", REQ, "") LONE_POD("p", "{cpu: '2'}", ""));
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_POD, "default/r"), 0);
	session(f);
	const kb_task *t = fx_task(f, "default/r");
	assert_non_null(t);
	assert_int_equal(t->status, KB_TASK_RUNNING);
	assert_int_equal(fx_job(f, "default/g")->ngated, 0);
	/* It still holds its cpu: p (2 cpu) does not fit beside it. */
	assert_int_equal(f->nbound, 0);
	assert_int_equal(f->nevicted, 0);
	fx_free(f);
}

static void undecodable_podgroup_is_invalid(void **state)
{
	(void)state;
	fx *f = fx_new();
	fx_loadf(f, N1 PODGROUP("g", 1, "") POD("a", "g", REQ, ""));
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_PODGROUP, "default/g"), 0);
	session(f);
	assert_int_equal(f->nbound, 0);
	assert_non_null(strstr(fx_group_reason(f, "default/g"), "did not decode"));

	fx_loadf(f, PODGROUP("g", 1, ""));
	session(f);
	assert_true(was_bound(f, "default/a"));
	fx_free(f);
}

static void marking_an_unknown_object_is_enoent(void **state)
{
	(void)state;
	fx *f = fx_new();
	fx_loadf(f, N1);
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_NODE, "n9"), -ENOENT);
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_POD, "default/x"), -ENOENT);
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_OTHER, "n1"), -ENOENT);
	/* Twice is once. */
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_NODE, "n1"), 0);
	uint64_t shape = f->cluster.shape;
	assert_int_equal(kb_cluster_mark_undecodable(&f->cluster, KB_KIND_NODE, "n1"), 0);
	assert_int_equal(f->cluster.shape, shape);
	/* A deletion ends the mark with the object. */
	assert_true(kb_cluster_delete(&f->cluster, KB_KIND_NODE, "n1"));
	assert_false(kb_cluster_undecodable(&f->cluster, KB_KIND_NODE, "n1"));
	fx_free(f);
}

/* The daemon's path: the session snapshot kept between sessions. The mark
 * and its end must both reach it, also when the version that decodes again
 * builds exactly as the one the store kept. */
static void session_snapshot_follows_the_mark(void **state)
{
	(void)state;
	kb_cluster c;
	kb_err err = {0};
	kb_snapshot *s;
	kb_cluster_init(&c, "kube-batchd", "default");
	load_cluster(&c, N1);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_true(s->nodes[0].ready);

	assert_int_equal(kb_cluster_mark_undecodable(&c, KB_KIND_NODE, "n1"), 0);
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_false(s->nodes[0].ready);
	assert_true(s->nodes[0].undecodable);

	load_cluster(&c, N1); /* the same node, decoded */
	assert_int_equal(kb_cluster_session_snapshot(&c, &s, &err), 0);
	assert_true(s->nodes[0].ready);
	assert_false(s->nodes[0].undecodable);
	kb_cluster_release(&c);
}

/* A pod on a node that no version of which decoded (another scheduler's,
 * with a field kube-batchd refuses): the store does not hold it, so what it
 * uses on its node is unknown, and the node is no candidate until it
 * decodes or is deleted. Before, its node looked free. */
static void unreadable_pod_on_a_node_takes_the_node_out(void **state)
{
	(void)state;
	static const char raw[] = "{\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"},"
				  "\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"other\"}}";
	kb_yaml_file doc;
	kb_err err = {0};
	assert_int_equal(kb_json_load_buffer(raw, strlen(raw), "x", &doc, &err), 0);
	fx *f = fx_new();
	/* n2 is too small for p: it gives the queue a share to place p with. */
	fx_loadf(f, N1 NODE("n2", "{cpu: 500m, memory: 8Gi, pods: '10'}") LONE_POD("p", REQ, ""));
	const char *node = NULL;
	assert_int_equal(kb_cluster_undecodable_object(&f->cluster, KB_KIND_POD, "default/x",
						       doc.docs[0], &node),
			 1);
	assert_string_equal(node, "n1");
	assert_int_equal(kb_cluster_undecodable_object(&f->cluster, KB_KIND_POD, "default/x",
						       doc.docs[0], NULL),
			 2);
	session(f);
	assert_int_equal(f->nbound, 0);
	const char *why = fx_pending_reason(f, "default/p");
	if (!why || !strstr(why, "ran a pod kube-batchd could not decode"))
		fail_msg("reason: %s", why ? why : "(none)");

	/* A copy for a what-if run carries the note. */
	kb_cluster copy;
	kb_snapshot *cs;
	assert_int_equal(kb_cluster_share_copy(&copy, &f->cluster), 0);
	assert_int_equal(kb_cluster_session_snapshot(&copy, &cs, &err), 0);
	assert_true(cs->nodes[0].unreadable_pod);
	assert_false(cs->nodes[0].ready);
	assert_true(cs->nodes[1].ready);
	kb_cluster_release(&copy);

	/* Deleted (a watch's DELETED, or a relist that lacks it): the node is
	 * a candidate again. */
	assert_true(kb_cluster_delete(&f->cluster, KB_KIND_POD, "default/x"));
	session(f);
	assert_true(was_bound(f, "default/p"));

	/* A pod without a node is simply unknown; one that decodes later ends
	 * the note (and is counted as the pod it is). */
	static const char unplaced[] = "{\"metadata\":{\"name\":\"y\",\"namespace\":\"default\"},"
				       "\"spec\":{\"nodeName\":\"\"}}";
	kb_yaml_file doc2;
	assert_int_equal(kb_json_load_buffer(unplaced, strlen(unplaced), "y", &doc2, &err), 0);
	assert_int_equal(kb_cluster_undecodable_object(&f->cluster, KB_KIND_POD, "default/y",
						       doc2.docs[0], NULL),
			 -ENOENT);
	assert_int_equal(kb_cluster_note_unreadable_pod(&f->cluster, "default/z", "n1"), 0);
	assert_int_equal(f->cluster.unreadable.n, 1);
	fx_loadf(f, LONE_POD("z", REQ, ""));
	assert_int_equal(f->cluster.unreadable.n, 0);
	kb_yaml_file_release(&doc);
	kb_yaml_file_release(&doc2);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(undecodable_node_is_no_candidate_until_a_version_decodes),
		cmocka_unit_test(undecodable_pending_pod_is_held_and_its_gang_waits),
		cmocka_unit_test(undecodable_pod_on_a_node_keeps_its_place),
		cmocka_unit_test(undecodable_podgroup_is_invalid),
		cmocka_unit_test(marking_an_unknown_object_is_enoent),
		cmocka_unit_test(session_snapshot_follows_the_mark),
		cmocka_unit_test(unreadable_pod_on_a_node_takes_the_node_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

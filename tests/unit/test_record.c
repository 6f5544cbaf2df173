/* test_record.c - the --record file: daemon/record's writer and
 * cache/record_file's reader. A recording read back record by record
 * (round trip of an object's JSON, decisions, the session's digest); a
 * file refused with its offset when truncated, of another format, not a
 * record file, malformed, over the reader's cap; the writer's cap ends the
 * file with a stop line at a session boundary; the reports by name written
 * as deltas (new, changed, gone) and the book that reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/json_doc.h"
#include "cache/record_file.h"
#include "cache/record_reports.h"
#include "daemon/record.h"
#include "plugins/registry.h"

/* A temporary file's path (mkstemp), removed by the caller. */
static char *temp_path(void)
{
	char *p = strdup("/tmp/test_record.XXXXXX");
	assert_non_null(p);
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Opening path fails with code and a message holding each of the words. */
static void refused(const char *path, uint64_t cap, int code, const char *w1, const char *w2)
{
	kb_record_reader rd;
	kb_err err = {0};
	int r = kb_record_reader_open(&rd, path, cap, &err);
	if (r == 0) {
		const kb_yaml_node *rec;
		while ((r = kb_record_reader_next(&rd, &rec, &err)) > 0)
			;
		kb_record_reader_release(&rd);
	}
	assert_int_equal(r, code);
	if (!strstr(err.msg, w1) || (w2 && !strstr(err.msg, w2)))
		fail_msg("expected \"%s\" and \"%s\" in: %s", w1, w2 ? w2 : "", err.msg);
}

static const char pod_json[] =
	"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\","
	"\"labels\":{\"a\":\"x\\\"y\"}},\"spec\":{\"schedulerName\":\"kube-batchd\","
	"\"priority\":-5,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
	"{\"cpu\":\"1\"}}}],\"hostNetwork\":false,\"nodeName\":null}}";

/* A recording: the configuration, an object, a removal, a session with a
 * decision and its end; read back. */
static void round_trip(void **state)
{
	char *path = temp_path();
	kb_err err = {0};
	kb_recorder *rec = kb_recorder_open(path, 0, &err);
	assert_non_null(rec);
	kb_conf conf;
	const char *names[] = {"kube-batchd", "other"};
	assert_int_equal(kb_recorder_load_conf(rec, NULL, &kb_builtin_registry, names, 2, "default",
					       &conf, &err),
			 0);
	kb_conf_release(&conf);
	kb_yaml_file doc;
	assert_int_equal(kb_json_load_buffer(pod_json, strlen(pod_json), "pod", &doc, &err), 0);
	kb_recorder_seen(rec, "v1", "Pod", doc.docs[0]);
	kb_recorder_upsert(rec, 1234);
	kb_recorder_remove(rec, KB_KIND_NODE, "n1");
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	kb_recorder_session_begin(rec, &c, 5000);
	kb_recorder_tee tee = {.next = &(kb_effects){0}, .rec = rec};
	kb_task task = {.key = "ns/p", .gpu_mask = 3};
	kb_node node = {.name = "n1"};
	assert_int_equal(kb_recorder_effects.bind(&tee, NULL, 5000, &task, &node), 0);
	kb_recorder_session_end(rec, 0);
	rec = kb_recorder_close(rec);
	kb_cluster_release(&c);

	kb_record_reader rd;
	assert_int_equal(kb_record_reader_open(&rd, path, 0, &err), 0);
	assert_string_equal(rd.version, KB_BUILD_VERSION);
	const kb_yaml_node *r;
	const char *types[] = {"conf", "object", "delete", "session", "bind", "end"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_int_equal(kb_record_reader_next(&rd, &r, &err), 1);
		assert_string_equal(kb_record_type(r), types[i]);
		if (i == 1) {
			/* The object's JSON comes back as the same tree. */
			char *a = NULL, *b = NULL;
			size_t na, nb;
			FILE *fa = open_memstream(&a, &na), *fb = open_memstream(&b, &nb);
			kb_record_put_node(fa, kb_yaml_get(r, "object"));
			kb_record_put_node(fb, doc.docs[0]);
			assert_int_equal(fclose(fa), 0);
			assert_int_equal(fclose(fb), 0);
			assert_string_equal(a, b);
			assert_non_null(strstr(a, "\"priority\":-5"));
			assert_non_null(strstr(a, "\"nodeName\":null"));
			free(a);
			free(b);
			int64_t t;
			assert_int_equal(kb_record_int(&rd, r, "t", &t, &err), 0);
			assert_int_equal(t, 1234);
		}
		if (i == 4) {
			kb_record_decision d;
			assert_int_equal(kb_record_decision_read(&rd, r, &d, &err), 0);
			kb_record_decision want = {.kind = KB_DECISION_BIND, .session = 1,
						   .pod = "ns/p", .node = "n1", .gpus = 3};
			assert_true(kb_record_decision_same(&d, &want));
			want.node = "n2";
			assert_false(kb_record_decision_same(&d, &want));
		}
	}
	assert_int_equal(kb_record_reader_next(&rd, &r, &err), 0);
	kb_record_reader_release(&rd);
	kb_yaml_file_release(&doc);
	unlink(path);
	free(path);
}

static const char header[] = "{\"magic\":\"kube-batchd-record\",\"format\":2,\"kube_batchd\":\"x\"}\n";

static void truncated_file_refused_with_offset(void **state)
{
	char *path = temp_path();
	char text[512];
	(void)snprintf(text, sizeof(text), "%s{\"r\":\"delete\",\"kind\":\"Pod\",\"key\":\"a/b\"}\n"
					   "{\"r\":\"session\",\"n\":1,",
		       header);
	write_text(path, text);
	char off[64];
	(void)snprintf(off, sizeof(off), "offset %zu (line 3)",
		       strlen(header) + strlen("{\"r\":\"delete\",\"kind\":\"Pod\",\"key\":\"a/b\"}\n"));
	refused(path, 0, -EINVAL, off, "truncated");
	unlink(path);
	free(path);
}

static void other_format_refused(void **state)
{
	char *path = temp_path();
	write_text(path, "{\"magic\":\"kube-batchd-record\",\"format\":1,\"kube_batchd\":\"9.0\"}\n");
	refused(path, 0, -EINVAL, "offset 0 (line 1)", "record format 1 (written by kube-batchd 9.0)");
	write_text(path, "{\"magic\":\"something-else\",\"format\":1}\n");
	refused(path, 0, -EINVAL, "offset 0", "not a kube-batchd record file");
	write_text(path, "");
	refused(path, 0, -EINVAL, "offset 0", "empty");
	unlink(path);
	free(path);
}

static void malformed_line_refused_with_offset(void **state)
{
	char *path = temp_path();
	char text[512];
	(void)snprintf(text, sizeof(text), "%s{\"r\":\"delete\",\"kind\":\"Pod\" \"key\":1}\n", header);
	write_text(path, text);
	char off[64];
	(void)snprintf(off, sizeof(off), "offset %zu (line 2)", strlen(header));
	refused(path, 0, -EINVAL, off, "malformed record");
	(void)snprintf(text, sizeof(text), "%s[1,2]\n", header);
	write_text(path, text);
	refused(path, 0, -EINVAL, off, "not a JSON object");
	(void)snprintf(text, sizeof(text), "%s{\"type\":\"delete\"}\n", header);
	write_text(path, text);
	refused(path, 0, -EINVAL, off, "no string field \"r\"");

	/* A field of the wrong type is named. */
	(void)snprintf(text, sizeof(text), "%s{\"r\":\"bind\",\"n\":1,\"pod\":\"a/b\",\"rc\":0,"
					   "\"node\":7,\"gpus\":0}\n",
		       header);
	write_text(path, text);
	kb_record_reader rd;
	kb_err err = {0};
	const kb_yaml_node *r;
	assert_int_equal(kb_record_reader_open(&rd, path, 0, &err), 0);
	assert_int_equal(kb_record_reader_next(&rd, &r, &err), 1);
	kb_record_decision d;
	assert_int_equal(kb_record_decision_read(&rd, r, &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, off));
	assert_non_null(strstr(err.msg, "record \"bind\": field \"node\": must be a string"));
	kb_record_reader_release(&rd);
	unlink(path);
	free(path);
}

static void reader_cap(void **state)
{
	char *path = temp_path();
	write_text(path, header);
	refused(path, strlen(header) - 1, -EFBIG, "over the size cap", "offset");
	kb_record_reader rd;
	kb_err err = {0};
	assert_int_equal(kb_record_reader_open(&rd, path, strlen(header), &err), 0);
	kb_record_reader_release(&rd);
	unlink(path);
	free(path);
}

/* The writer's cap: sessions past it are not written, a stop line says
 * why, the file stays under the cap and reads back to the stop. */
static void writer_cap_stops_at_a_session_boundary(void **state)
{
	char *path = temp_path();
	kb_err err = {0};
	assert_null(kb_recorder_open(path, KB_RECORD_MIN_BYTES - 1, &err));
	assert_int_equal(err.code, -EINVAL);
	kb_recorder *rec = kb_recorder_open(path, KB_RECORD_MIN_BYTES, &err);
	assert_non_null(rec);
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	char key[64];
	for (int s = 0; s < 100; s++) {
		for (int i = 0; i < 5; i++) {
			(void)snprintf(key, sizeof(key), "ns/pod-%d-%d", s, i);
			kb_recorder_remove(rec, KB_KIND_POD, key);
		}
		kb_recorder_session_begin(rec, &c, 1000 + s);
		kb_recorder_session_end(rec, 0);
	}
	rec = kb_recorder_close(rec);
	kb_cluster_release(&c);

	kb_record_reader rd;
	assert_int_equal(kb_record_reader_open(&rd, path, 0, &err), 0);
	assert_true(rd.size <= KB_RECORD_MIN_BYTES);
	const kb_yaml_node *r;
	char last[16] = "", before[16] = "";
	int n, sessions = 0;
	while ((n = kb_record_reader_next(&rd, &r, &err)) > 0) {
		memcpy(before, last, sizeof(last));
		(void)snprintf(last, sizeof(last), "%s", kb_record_type(r));
		sessions += strcmp(last, "end") == 0;
		if (strcmp(last, "stop") == 0)
			assert_non_null(strstr(kb_yaml_str(kb_yaml_get(r, "reason")), "size cap"));
	}
	assert_int_equal(n, 0);
	assert_string_equal(last, "stop");
	assert_string_equal(before, "end");
	assert_true(sessions > 3 && sessions < 100);
	kb_record_reader_release(&rd);
	unlink(path);
	free(path);
}

/* The report lines of a recording, "kind key text-or-gone", one per line. */
static char *report_lines(const char *path)
{
	kb_record_reader rd;
	kb_err err = {0};
	const kb_yaml_node *r;
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	assert_non_null(f);
	assert_int_equal(kb_record_reader_open(&rd, path, 0, &err), 0);
	while (kb_record_reader_next(&rd, &r, &err) == 1) {
		if (strcmp(kb_record_type(r), "report") == 0) {
			const kb_yaml_node *t = kb_yaml_get(r, "text");
			fprintf(f, "%s %s %s\n", kb_yaml_str(kb_yaml_get(r, "kind")),
				kb_yaml_str(kb_yaml_get(r, "key")), t ? kb_yaml_str(t) : "gone");
		} else if (strcmp(kb_record_type(r), "end") == 0) {
			fputs("end\n", f);
		}
	}
	kb_record_reader_release(&rd);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* Three sessions: a report is written when new or changed, not when the
 * same, and "gone" when a session no longer makes it. */
static void reports_written_as_deltas(void **state)
{
	char *path = temp_path();
	kb_err err = {0};
	kb_recorder *rec = kb_recorder_open(path, 0, &err);
	assert_non_null(rec);
	kb_cluster c;
	kb_cluster_init(&c, "kube-batchd", "default");
	kb_recorder_tee tee = {.next = &(kb_effects){0}, .rec = rec};
	kb_snapshot snap = {0};
	kb_job job = {.key = "ns/pg"};
	kb_task p1 = {.key = "ns/p1"}, p2 = {.key = "ns/p2"};
	kb_job_status st = {.phase = KB_PG_INQUEUE, .pending = 2, .unschedulable = "no room"};

	kb_recorder_session_begin(rec, &c, 1000);
	assert_int_equal(kb_recorder_effects.job_status(&tee, &snap, &job, &st), 0);
	assert_int_equal(kb_recorder_effects.task_pending(&tee, &snap, &p1, "no room"), 0);
	assert_int_equal(kb_recorder_effects.task_pending(&tee, &snap, &p2, "no room"), 0);
	kb_recorder_session_end(rec, 0);

	kb_recorder_session_begin(rec, &c, 2000);
	assert_int_equal(kb_recorder_effects.job_status(&tee, &snap, &job, &st), 0);
	assert_int_equal(kb_recorder_effects.task_pending(&tee, &snap, &p1, "no room"), 0);
	assert_int_equal(kb_recorder_effects.task_pending(&tee, &snap, &p2, "node gone"), 0);
	kb_recorder_session_end(rec, 0);

	st.phase = KB_PG_RUNNING;
	st.pending = 0;
	st.running = 2;
	st.unschedulable = NULL;
	kb_recorder_session_begin(rec, &c, 3000);
	assert_int_equal(kb_recorder_effects.job_status(&tee, &snap, &job, &st), 0);
	kb_recorder_session_end(rec, 0);
	rec = kb_recorder_close(rec);
	kb_cluster_release(&c);

	char *got = report_lines(path);
	assert_string_equal(got,
			    "job ns/pg phase Inqueue, running 0, succeeded 0, failed 0, pending 2, "
			    "scheduled 0, unschedulable: no room\n"
			    "pending ns/p1 no room\n"
			    "pending ns/p2 no room\n"
			    "end\n"
			    "pending ns/p2 node gone\n"
			    "end\n"
			    "job ns/pg phase Running, running 2, succeeded 0, failed 0, pending 0, "
			    "scheduled 0\n"
			    "pending ns/p2 gone\n"
			    "pending ns/p1 gone\n"
			    "end\n");
	free(got);
	unlink(path);
	char prev[64];
	(void)snprintf(prev, sizeof(prev), "%s.1", path);
	unlink(prev); /* temp_path's empty file, kept by the recorder */
	free(path);
}

/* The book: ids by kind and key, removal keeps the others findable. */
static void report_book(void **state)
{
	kb_report_book b;
	kb_report_book_init(&b);
	bool oom = false;
	assert_null(kb_report_book_at(&b, KB_REPORT_JOB, "a/b", false, &oom));
	char key[300];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	const char *keys[] = {"a/b", "q", key};
	kb_report_kind kinds[] = {KB_REPORT_JOB, KB_REPORT_QUEUE, KB_REPORT_PENDING};
	for (int i = 0; i < 3; i++) {
		kb_report_entry *e = kb_report_book_at(&b, kinds[i], keys[i], true, &oom);
		assert_non_null(e);
		assert_string_equal(e->key, keys[i]);
		assert_int_equal(kb_report_set(&e->text, keys[i]), 0);
	}
	/* The same key of another kind is another report. */
	assert_null(kb_report_book_at(&b, KB_REPORT_PENDING, "a/b", false, &oom));
	kb_report_book_remove(&b, 0);
	assert_int_equal(b.n, 2);
	for (int i = 1; i < 3; i++) {
		kb_report_entry *e = kb_report_book_at(&b, kinds[i], keys[i], false, &oom);
		assert_non_null(e);
		assert_string_equal(e->text, keys[i]);
	}
	assert_false(oom);
	kb_report_kind k;
	assert_int_equal(kb_report_kind_parse("pending", &k), 0);
	assert_int_equal(k, KB_REPORT_PENDING);
	assert_int_equal(kb_report_kind_parse("pods", &k), -EINVAL);
	kb_report_book_release(&b);
}

/* With no session (a standby, or the first LIST of a large cluster), the
 * objects gathered are written once they pass KB_RECORD_SPILL_BYTES: the
 * memory stays bounded and the file holds them. Before, a standby kept
 * every change in memory until the size cap stopped the recording. */
static void objects_spill_between_sessions(void **state)
{
	char *path = temp_path();
	kb_err err = {0};
	kb_recorder *rec = kb_recorder_open(path, 0, &err);
	assert_non_null(rec);
	kb_yaml_file doc;
	assert_int_equal(kb_json_load_buffer(pod_json, strlen(pod_json), "pod", &doc, &err), 0);
	size_t n = 3 * (size_t)KB_RECORD_SPILL_BYTES / strlen(pod_json) + 1;
	for (size_t i = 0; i < n; i++) {
		kb_recorder_seen(rec, "v1", "Pod", doc.docs[0]);
		kb_recorder_upsert(rec, (int64_t)i);
	}
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	/* Written while running (no close yet): at least two spills. */
	assert_true((uint64_t)st.st_size >= 2 * KB_RECORD_SPILL_BYTES);
	rec = kb_recorder_close(rec);
	kb_record_reader rd;
	const kb_yaml_node *r;
	assert_int_equal(kb_record_reader_open(&rd, path, 0, &err), 0);
	size_t objects = 0;
	while (kb_record_reader_next(&rd, &r, &err) == 1)
		objects += strcmp(kb_record_type(r), "object") == 0;
	assert_int_equal(objects, n);
	kb_record_reader_release(&rd);
	kb_yaml_file_release(&doc);
	unlink(path);
	char prev[64];
	(void)snprintf(prev, sizeof(prev), "%s.1", path);
	unlink(prev);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncated_file_refused_with_offset),
		cmocka_unit_test(other_format_refused),
		cmocka_unit_test(malformed_line_refused_with_offset),
		cmocka_unit_test(reader_cap),
		cmocka_unit_test(writer_cap_stops_at_a_session_boundary),
		cmocka_unit_test(reports_written_as_deltas),
		cmocka_unit_test(report_book),
		cmocka_unit_test(objects_spill_between_sessions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

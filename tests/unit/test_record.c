/* test_record.c - the --record file: daemon/record's writer and
 * cache/record_file's reader. A recording read back record by record
 * (round trip of an object's JSON, decisions, the session's digest); a
 * file refused with its offset when truncated, of another format, not a
 * record file, malformed, over the reader's cap; the writer's cap ends the
 * file with a stop line at a session boundary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/json_doc.h"
#include "cache/record_file.h"
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

static const char header[] = "{\"magic\":\"kube-batchd-record\",\"format\":1,\"kube_batchd\":\"x\"}\n";

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
	write_text(path, "{\"magic\":\"kube-batchd-record\",\"format\":2,\"kube_batchd\":\"9.0\"}\n");
	refused(path, 0, -EINVAL, "offset 0 (line 1)", "record format 2 (written by kube-batchd 9.0)");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncated_file_refused_with_offset),
		cmocka_unit_test(other_format_refused),
		cmocka_unit_test(malformed_line_refused_with_offset),
		cmocka_unit_test(reader_cap),
		cmocka_unit_test(writer_cap_stops_at_a_session_boundary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

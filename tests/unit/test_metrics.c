/* test_metrics.c - daemon/metrics and daemon/summary: the text of a
 * populated view (histogram buckets, label escaping, a queue with an
 * extended resource, capacities only where capped), reason classes, and
 * kube/queue_status: the Queue status wish, its comparison with the API's
 * copy and its patch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/queue_status.h"
#include "metrics_fixture.h"

static char *text_of(metrics_fixture *fx)
{
	char *t = NULL;
	assert_int_equal(kb_metrics_text(&fx->view, &t), 0);
	assert_non_null(t);
	return t;
}

/* The whole line `line` is in text. */
static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("missing line: %s", line);
}

static void lacks(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("unexpected: %s", what);
}

static void histogram_buckets_are_cumulative(void **state)
{
	kb_histogram h;
	kb_histogram_init(&h, kb_latency_ms_buckets, 16);
	kb_histogram_observe(&h, 0.05);  /* le 0.1 */
	kb_histogram_observe(&h, 0.1);   /* le 0.1: a bound is inclusive */
	kb_histogram_observe(&h, 0.15);  /* le 0.2 */
	kb_histogram_observe(&h, 5000);  /* +Inf */
	assert_int_equal(h.counts[0], 2);
	assert_int_equal(h.counts[1], 1);
	assert_int_equal(h.counts[16], 1);
	assert_int_equal(h.count, 4);

	metrics_fixture fx;
	metrics_fixture_init(&fx);
	fx.totals.e2e_ms = h;
	char *t = text_of(&fx);
	has_line(t, "# TYPE kube_batchd_e2e_scheduling_latency_milliseconds histogram");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_bucket{le=\"0.1\"} 2");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_bucket{le=\"0.2\"} 3");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_bucket{le=\"3276.8\"} 3");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_bucket{le=\"+Inf\"} 4");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_sum 5000.3");
	has_line(t, "kube_batchd_e2e_scheduling_latency_milliseconds_count 4");
	/* Per action, from the session summary: allocate ran 0.1 ms. */
	has_line(t, "kube_batchd_action_scheduling_latency_milliseconds_bucket{action=\"allocate\","
		    "le=\"0.1\"} 1");
	has_line(t, "kube_batchd_action_scheduling_latency_milliseconds_count{action=\"preempt\"} 1");
	has_line(t, "kube_batchd_preemption_victims_total{action=\"preempt\"} 1");
	free(t);
	metrics_fixture_release(&fx);
}

static void label_values_are_escaped(void **state)
{
	char out[64];
	kb_metrics_escape_label("a\"b\\c\nd", out);
	assert_string_equal(out, "a\\\"b\\\\c\\nd");
	metrics_fixture fx;
	metrics_fixture_init(&fx);
	char *t = text_of(&fx);
	has_line(t, "kube_batchd_queue_overused{queue_name=\"odd\\\"name\\\\x\\ny\"} 1");
	free(t);
	metrics_fixture_release(&fx);
}

static void queue_with_extended_resource(void **state)
{
	metrics_fixture fx;
	metrics_fixture_init(&fx);
	char *t = text_of(&fx);
	has_line(t, "kube_batchd_queue_allocated_milli_cpu{queue_name=\"team-a\"} 1500");
	has_line(t, "kube_batchd_queue_allocated_memory_bytes{queue_name=\"team-a\"} 4294967296");
	has_line(t, "kube_batchd_queue_allocated_scalar_resources{queue_name=\"team-a\","
		    "resource=\"example.com/fpga\"} 1");
	has_line(t, "kube_batchd_queue_allocated_scalar_resources{queue_name=\"team-a\","
		    "resource=\"nvidia.com/gpu\"} 2");
	has_line(t, "kube_batchd_queue_deserved_scalar_resources{queue_name=\"team-a\","
		    "resource=\"nvidia.com/gpu\"} 4");
	has_line(t, "kube_batchd_queue_guarantee_milli_cpu{queue_name=\"team-a\"} 1000");
	has_line(t, "kube_batchd_queue_share{queue_name=\"team-a\"} 0.5");
	has_line(t, "kube_batchd_queue_weight{queue_name=\"team-a\"} 3");
	has_line(t, "kube_batchd_queue_pod_group_running_count{queue_name=\"team-a\"} 2");
	has_line(t, "kube_batchd_queue_pod_group_inqueue_count{queue_name=\"team-a\"} 1");
	/* The capability caps only GPUs: no cpu or fpga capacity. */
	has_line(t, "kube_batchd_queue_capacity_scalar_resources{queue_name=\"team-a\","
		    "resource=\"nvidia.com/gpu\"} 8");
	lacks(t, "kube_batchd_queue_capacity_milli_cpu{queue_name=\"team-a\"}");
	lacks(t, "kube_batchd_queue_capacity_scalar_resources{queue_name=\"team-a\","
		 "resource=\"example.com/fpga\"}");
	lacks(t, "resource=\"pods\"");
	has_line(t, "kube_batchd_node_gpu_total{node=\"gpu-node-1\"} 8");
	has_line(t, "kube_batchd_node_gpu_allocated{node=\"gpu-node-1\"} 2");
	has_line(t, "kube_batchd_pending_pods{reason=\"gang\"} 3");
	has_line(t, "kube_batchd_pending_jobs{reason=\"gang\"} 1");
	has_line(t, "kube_batchd_schedule_attempts_total{result=\"scheduled\",profile=\"kube-batchd\"} 4");
	has_line(t, "kube_batchd_bind_failures_by_code_total{code=\"422\"} 1");
	has_line(t, "kube_batchd_bind_failures_by_code_total{code=\"error\"} 1");
	has_line(t, "kube_batchd_build_info{version=\"0.1.0-test\"} 1");
	has_line(t, "process_open_fds 7");
	free(t);
	metrics_fixture_release(&fx);
}

static void no_session_no_queue_series(void **state)
{
	metrics_fixture fx;
	metrics_fixture_init(&fx);
	fx.sum.valid = false;
	char *t = text_of(&fx);
	lacks(t, "kube_batchd_queue_weight");
	lacks(t, "kube_batchd_node_gpu_total{");
	has_line(t, "kube_batchd_sessions_total 1");
	free(t);
	metrics_fixture_release(&fx);
}

static void reasons_are_classed_by_cause(void **state)
{
	assert_int_equal(kb_reason_classify("gang \"ns/pg\": 2/4 tasks in gang fit: 0/3 nodes are "
					    "available: 3 Insufficient cpu"),
			 KB_REASON_RESOURCES);
	assert_int_equal(kb_reason_classify("gang \"ns/pg\": 2/4 tasks in gang fit: not enough "
					    "tasks to reach minMember"),
			 KB_REASON_GANG);
	assert_int_equal(kb_reason_classify("queue \"q\" would exceed its capability of 4 cpu"),
			 KB_REASON_QUEUE);
	assert_int_equal(kb_reason_classify("0/3 nodes are available: 3 node(s) didn't match "
					    "Pod's node affinity/selector"),
			 KB_REASON_PLACEMENT);
	assert_int_equal(kb_reason_classify(NULL), KB_REASON_OTHER);
	assert_string_equal(kb_reason_class_name(KB_REASON_PIPELINED), "pipelined");
}

static void process_figures_read_from_proc(void **state)
{
	kb_process_figures p;
	assert_int_equal(kb_metrics_read_process(&p), 0);
	assert_true(p.ok);
	assert_true(p.resident_bytes > 0);
	assert_true(p.open_fds >= 3); /* stdin, stdout, stderr */
	assert_true(p.start_time_seconds > 1.5e9);
}

/* ---- Queue status ---------------------------------------------------------------- */

static const int32_t counts[5] = {[KB_PG_PENDING] = 1, [KB_PG_INQUEUE] = 2, [KB_PG_RUNNING] = 3,
				  [KB_PG_UNKNOWN] = 0, [KB_PG_COMPLETED] = 4};

static void kube_batch_queue_folds_inqueue_into_pending(void **state)
{
	kb_res alloc = {0};
	kb_queue_report r;
	kb_queue_report_make(KB_PG_KUBE_BATCH, counts, KB_QUEUE_OPEN, &alloc, 3, NULL, &r);
	assert_int_equal(r.pending, 3);
	assert_int_equal(r.running, 3);
	assert_int_equal(r.inqueue, 0);
	assert_int_equal(r.completed, 0);
	assert_int_equal(r.allocated_mask, 0);
	kb_queue_status_obj cached = {.pending = 3, .running = 3};
	assert_true(kb_queue_report_matches(KB_PG_KUBE_BATCH, &r, &cached));
	cached.running = 2;
	assert_false(kb_queue_report_matches(KB_PG_KUBE_BATCH, &r, &cached));
}

static void volcano_queue_status_compares_allocated(void **state)
{
	kb_resnames rn;
	kb_resnames_init(&rn);
	int gpu = kb_resnames_intern(&rn, "nvidia.com/gpu");
	int fpga = kb_resnames_intern(&rn, "example.com/fpga");
	kb_res alloc = {0};
	alloc.q[KB_RES_CPU] = 1500;
	alloc.q[KB_RES_PODS] = 3000;
	alloc.q[gpu] = 2000;
	/* The API's copy still names the fpga it held before. */
	kb_queue_status_obj cached = {.state_set = true, .pending = 1, .inqueue = 2, .running = 3,
				      .completed = 4};
	cached.allocated_mask = (1u << KB_RES_CPU) | (1u << KB_RES_MEMORY) | (1u << gpu) |
				(1u << fpga);
	cached.allocated.q[KB_RES_CPU] = 1500;
	cached.allocated.q[gpu] = 2000;
	cached.allocated.q[fpga] = 1000;
	kb_queue_report r;
	kb_queue_report_make(KB_PG_VOLCANO, counts, KB_QUEUE_OPEN, &alloc, rn.n, &cached, &r);
	assert_true(r.allocated_mask & (1u << fpga));
	assert_false(r.allocated_mask & (1u << KB_RES_PODS));
	assert_false(kb_queue_report_matches(KB_PG_VOLCANO, &r, &cached)); /* fpga 1 -> 0 */
	json_t *body = kb_queue_report_body(KB_PG_VOLCANO, &r, &rn);
	assert_non_null(body);
	char *s = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"status\":{\"allocated\":{\"cpu\":\"1500m\","
			       "\"example.com/fpga\":\"0\",\"memory\":\"0\",\"nvidia.com/gpu\":\"2\"},"
			       "\"completed\":4,\"inqueue\":2,\"pending\":1,\"running\":3,"
			       "\"state\":\"Open\",\"unknown\":0}}");
	free(s);
	json_decref(body);
	cached.allocated.q[fpga] = 0;
	assert_true(kb_queue_report_matches(KB_PG_VOLCANO, &r, &cached));
	cached.state_set = false; /* never written: write the state */
	assert_false(kb_queue_report_matches(KB_PG_VOLCANO, &r, &cached));
	kb_queue_report r2 = r;
	assert_true(kb_queue_report_eq(&r, &r2));
	r2.running++;
	assert_false(kb_queue_report_eq(&r, &r2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(histogram_buckets_are_cumulative),
		cmocka_unit_test(label_values_are_escaped),
		cmocka_unit_test(queue_with_extended_resource),
		cmocka_unit_test(no_session_no_queue_series),
		cmocka_unit_test(reasons_are_classed_by_cause),
		cmocka_unit_test(process_figures_read_from_proc),
		cmocka_unit_test(kube_batch_queue_folds_inqueue_into_pending),
		cmocka_unit_test(volcano_queue_status_compares_allocated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

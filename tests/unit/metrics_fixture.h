/* metrics_fixture.h - a populated /metrics view: two queues (one with an
 * extended resource and a name that needs escaping), a GPU node, three
 * actions' latencies, a refused Binding. Shared by test_metrics.c and
 * tests/grafana/metrics_sample.c (whose output is the list of names the
 * dashboard check accepts), so both read what the daemon's formatter
 * writes, never a list typed by hand. */
#ifndef KB_TESTS_METRICS_FIXTURE_H
#define KB_TESTS_METRICS_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "daemon/metrics.h"
#include "daemon/summary.h"

typedef struct metrics_fixture {
	kb_summary sum;
	kb_metrics_totals totals;
	kb_metrics_view view;
	int fpga, gpu; /* resource slots */
} metrics_fixture;

static inline void metrics_fixture_init(metrics_fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	kb_summary *s = &fx->sum;
	kb_summary_init(s);
	kb_resnames_init(&s->resnames);
	fx->gpu = kb_resnames_intern(&s->resnames, "nvidia.com/gpu");
	fx->fpga = kb_resnames_intern(&s->resnames, "example.com/fpga");
	s->valid = true;
	s->nqueues = 2;
	s->queues = calloc(2, sizeof(*s->queues));
	s->queues[0].name = strdup("team-a");
	s->queues[1].name = strdup("odd\"name\\x\ny");
	kb_summary_queue *a = &s->queues[0];
	a->weight = 3;
	a->allocated.q[KB_RES_CPU] = 1500;
	a->allocated.q[KB_RES_MEMORY] = (int64_t)4 * 1024 * 1024 * 1024 * 1000;
	a->allocated.q[fx->gpu] = 2000;
	a->allocated.q[fx->fpga] = 1000;
	a->deserved.q[KB_RES_CPU] = 3000;
	a->deserved.q[fx->gpu] = 4000;
	a->capability_mask = 1u << fx->gpu;
	a->capability.q[fx->gpu] = 8000;
	a->guarantee.q[KB_RES_CPU] = 1000;
	a->share = 0.5;
	a->podgroups[KB_PG_RUNNING] = 2;
	a->podgroups[KB_PG_INQUEUE] = 1;
	s->queues[1].weight = 1;
	s->queues[1].overused = true;
	s->nnodes = 1;
	s->nodes = calloc(1, sizeof(*s->nodes));
	s->nodes[0].name = strdup("gpu-node-1");
	s->nodes[0].gpu_total_milli = 8000;
	s->nodes[0].gpu_allocated_milli = 2000;
	s->pending_pods[KB_REASON_GANG] = 3;
	s->pending_jobs[KB_REASON_GANG] = 1;
	s->pending_pods[KB_REASON_RESOURCES] = 2;
	s->scheduled = 4;
	s->unschedulable = 5;
	s->victims = 1;
	s->seconds = 0.0003; /* 0.3 ms */
	static const char *const names[3] = {"enqueue", "allocate", "preempt"};
	for (int i = 0; i < 3; i++)
		s->actions[i] = (kb_summary_action){.name = names[i], .seconds = 0.00005 * (i + 1),
						    .ran = true, .evictions = i == 2 ? 1 : 0};
	s->nactions = 3;
	kb_metrics_totals_init(&fx->totals);
	kb_metrics_totals_add(&fx->totals, s);
	kb_metrics_view *v = &fx->view;
	v->totals = &fx->totals;
	v->summary = s;
	v->profile = "kube-batchd";
	v->version = "0.1.0-test";
	v->sessions.sessions = 1;
	v->writes.bind_failures = 2;
	v->writes.bind_failure_codes[0] = (kb_code_count){.code = 422, .n = 1};
	v->writes.bind_failure_codes[1] = (kb_code_count){.code = 0, .n = 1};
	v->writes.nbind_failure_codes = 2;
	v->process = (kb_process_figures){.ok = true, .cpu_seconds = 1.5, .resident_bytes = 4096,
					  .open_fds = 7, .max_fds = 1024};
}

static inline void metrics_fixture_release(metrics_fixture *fx)
{
	kb_summary_release(&fx->sum);
}

#endif

/* fuzz_queue_conf.c - kb_queue_conf_load_buffer must survive any file without
 * crashing or leaking: every refusal has a code and a "file:..." message,
 * every accepted file keeps the promises of queue_conf.h (names unique,
 * weights >= 1, guarantee <= capability, parents defined, namespaces sorted
 * and unique), and its deserved shares on a cluster never exceed it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queue/deserved.h"
#include "queue/queue_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const kb_queue_def *find(const kb_queue_conf *qc, const char *name)
{
	for (uint32_t i = 0; i < qc->nqueues; i++)
		if (strcmp(qc->queues[i].name, name) == 0)
			return &qc->queues[i];
	return NULL;
}

static void check_conf(const kb_queue_conf *qc, const kb_resnames *names)
{
	if (!qc->source || (qc->nqueues && !qc->queues))
		abort();
	for (uint32_t i = 0; i < qc->nqueues; i++) {
		const kb_queue_def *q = &qc->queues[i];
		if (!q->name || !*q->name || find(qc, q->name) != q || q->weight < 1)
			abort();
		if (q->line < 1 || q->col < 1)
			abort();
		if (q->parent && !find(qc, q->parent))
			abort();
		for (int r = 0; r < KB_RES_MAX; r++) {
			if (q->guarantee.q[r] < 0 || q->capability.q[r] < 0)
				abort();
			if ((q->capability_mask & (1u << r)) && q->guarantee.q[r] > q->capability.q[r])
				abort();
			if ((q->capability_mask & (1u << r)) && r >= names->n)
				abort();
		}
	}
	for (uint32_t i = 0; i < qc->nns; i++) {
		const kb_ns_mapping *m = &qc->ns_map[i];
		if (!m->ns || !find(qc, m->queue))
			abort();
		if (i > 0 && strcmp(qc->ns_map[i - 1].ns, m->ns) >= 0)
			abort();
		if (kb_queue_conf_ns_queue((void *)qc, m->ns) != m->queue)
			abort();
	}
}

/* The shares every queue would get when all are hungry (what check-config
 * prints): never above the cluster, never above a capability. */
static void check_shares(const kb_queue_conf *qc, const kb_resnames *names)
{
	kb_res total = {{0}};
	total.q[KB_RES_CPU] = 64000;
	total.q[KB_RES_MEMORY] = 256LL << 30;
	for (int r = KB_RES_NFIXED; r < names->n; r++)
		total.q[r] = 8000;
	kb_err err = {0};
	int r = kb_queue_conf_check_cluster(qc, &total, names, &err);
	if (r != 0 && (r != -EINVAL || err.msg[0] == '\0' || !strstr(err.msg, qc->source)))
		abort();
	uint32_t n = qc->nqueues;
	kb_share_input *in = calloc(n ? n : 1, sizeof(*in));
	kb_res *out = calloc(n ? n : 1, sizeof(*out));
	if (!in || !out) {
		free(in);
		free(out);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		in[i].weight = qc->queues[i].weight;
		in[i].capability_mask = qc->queues[i].capability_mask;
		in[i].capability = qc->queues[i].capability;
		in[i].guarantee = qc->queues[i].guarantee;
		in[i].request = total;
	}
	kb_deserved_compute(&total, in, n, out);
	for (int res = 0; res < KB_RES_MAX; res++) {
		__int128 sum = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (out[i].q[res] < 0)
				abort();
			if ((in[i].capability_mask & (1u << res)) && out[i].q[res] > in[i].capability.q[res])
				abort();
			sum += out[i].q[res];
		}
		if (sum > total.q[res])
			abort();
	}
	free(in);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kb_resnames names;
	kb_resnames_init(&names);
	kb_queue_conf qc;
	kb_err err = {0};
	int r = kb_queue_conf_load_buffer((const char *)data, size, "fuzz.yaml", &names, &qc, &err);
	if (r == 0) {
		check_conf(&qc, &names);
		check_shares(&qc, &names);
	} else {
		if (err.code != r || strncmp(err.msg, "fuzz.yaml", 9) != 0)
			abort();
		if (r != -EINVAL && r != -ENOSPC && r != -ENOMEM && r != -E2BIG)
			abort();
		if (qc.nqueues != 0 || qc.queues)
			abort();
	}
	kb_queue_conf_release(&qc);
	return 0;
}

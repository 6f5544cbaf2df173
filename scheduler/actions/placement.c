#include "scheduler/actions/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report_add(kb_fit_report *rep, const char *reason)
{
	for (uint32_t i = 0; i < rep->nreasons; i++)
		if (rep->r[i].reason == reason || strcmp(rep->r[i].reason, reason) == 0) {
			rep->r[i].count++;
			return;
		}
	if (rep->nreasons < KB_FIT_REASONS_MAX) {
		rep->r[rep->nreasons].reason = reason;
		rep->r[rep->nreasons].count = 1;
		rep->nreasons++;
	}
}

static uint32_t feasible_to_find(kb_session *ssn)
{
	uint32_t n = ssn->snap->nnodes;
	if (ssn->feasible_to_find)
		return ssn->feasible_to_find;
	uint32_t want = n;
	if (n >= 100) {
		double pct = 50.0 - (double)n / 125.0;
		if (pct < 5)
			pct = 5;
		const char *arg = kb_conf_action_arg(ssn->conf, "allocate", "percentage-of-nodes-to-score", NULL);
		if (arg) {
			char *end;
			double v = strtod(arg, &end);
			if (*end == '\0' && v > 0 && v <= 100)
				pct = v;
		}
		want = (uint32_t)((double)n * pct / 100.0);
		if (want < 100)
			want = 100;
	}
	ssn->feasible_to_find = want ? want : 1;
	return ssn->feasible_to_find;
}

int32_t kb_best_node(kb_session *ssn, const kb_task *task, kb_fit_report *report)
{
	const kb_snapshot *s = ssn->snap;
	int32_t best = -1;
	double best_score = 0;
	uint32_t want = feasible_to_find(ssn), found = 0;
	if (report)
		memset(report, 0, sizeof(*report));
	uint32_t start = s->nnodes ? ssn->next_node % s->nnodes : 0;
	for (uint32_t k = 0; k < s->nnodes && found < want; k++) {
		uint32_t i = start + k < s->nnodes ? start + k : start + k - s->nnodes;
		ssn->next_node = i + 1;
		const kb_node *n = &s->nodes[i];
		const char *why = NULL;
		if (kb_predicate(ssn, task, n, &why) != KB_FIT_OK) {
			if (report)
				report_add(report, why ? why : "predicate failed");
			continue;
		}
		found++;
		double score = kb_node_score(ssn, task, n);
		if (best < 0 || score > best_score) {
			best = (int32_t)i;
			best_score = score;
		}
	}
	if (report)
		report->nnodes = s->nnodes;
	return best;
}

static int cmp_reason(const void *a, const void *b)
{
	const struct {
		const char *reason;
		uint32_t count;
	} *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

const char *kb_fit_report_format(kb_session *ssn, const kb_fit_report *report)
{
	char buf[1024];
	kb_fit_report sorted = *report;
	qsort(sorted.r, sorted.nreasons, sizeof(sorted.r[0]), cmp_reason);
	int off = snprintf(buf, sizeof(buf), "0/%u nodes are available", sorted.nnodes);
	for (uint32_t i = 0; i < sorted.nreasons && off > 0 && (size_t)off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off, "%s%u %s", i ? ", " : ": ",
				sorted.r[i].count, sorted.r[i].reason);
	return kb_arena_strdup(&ssn->arena, buf);
}

bool kb_fits_idle(const kb_task *task, const kb_node *node)
{
	return kb_res_le(&task->req, &node->idle);
}

#include "scheduler/simulate.h"

#include "base/json_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/defaults.h"
#include "api/quantity.h"
#include "base/strmap.h"
#include "base/yaml_doc.h"
#include "cache/manifests.h"
#include "scheduler/framework.h"
#include "api/jobstatus.h"

/* A bound on the sessions one run may take (one per period while decisions
 * keep changing; idle stretches are skipped and do not count). */
#define KB_SIM_MAX_SESSIONS 1000000u

/* ---- what the simulation records -------------------------------------------------- */

typedef struct sim_completion {
	int64_t end_ms;
	int64_t started_ms;
	char *pod;
	bool api_bound; /* a pod the API had bound (opt->ends), not the run */
} sim_completion;

typedef struct sim_state {
	kb_cluster own;     /* the store, unless the caller handed one (opt->cluster) */
	kb_cluster *cluster; /* &own or opt->cluster */
	const kb_sim_options *opt;
	int64_t now_ms;
	int64_t start_ms; /* virtual time of the first session; recorded times are after it */
	kb_sim_result res; /* bindings, evictions, and what the last session reported */
	KB_VEC(sim_completion) completions;
	/* Decisions of the session under way, applied after it closes. */
	KB_VEC(kb_sim_binding) new_binds;
	KB_VEC(kb_sim_eviction) new_evicts;
	bool changed; /* the session changed something worth another session */
	kb_session_memo memo; /* what the last session learnt for the next */
	kb_strmap started; /* PodGroups in res.gang_starts (keys borrowed from it) */
	int oom;
} sim_state;

static char *xstrdup(sim_state *sim, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		sim->oom = 1;
	return d;
}

static int fx_bind(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		   const kb_node *n)
{
	sim_state *sim = ctx;
	int gpu = snap->gpu_res;
	kb_sim_binding b = {
		.pod = xstrdup(sim, t->key),
		.node = xstrdup(sim, n->name),
		.time_ms = sim->now_ms - sim->start_ms,
		/* nvidia.com/gpu, or a device of Alibaba's GPU sharing */
		.has_gpus = (gpu >= 0 && t->req.q[gpu] > 0) || t->gpu_mask != 0,
		.gpu_mask = t->gpu_mask,
	};
	if (sim->oom || KB_VEC_PUSH(&sim->new_binds, b) < 0) {
		free(b.pod);
		free(b.node);
		return -ENOMEM;
	}
	return 0;
}

/* The PV controller's part, at once: each claim bound to the volume chosen
 * (the volume's claimRef set too), or to a volume provisioned for it on the
 * node (no object: it constrains nothing). */
static int fx_bind_volumes(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
			   const kb_node *n, const kb_task_volumes *vol, const int32_t *picks)
{
	(void)now_ms;
	(void)t;
	sim_state *sim = ctx;
	for (uint32_t i = 0; i < vol->nto_bind; i++) {
		const kb_claim_need *c = &vol->to_bind[i];
		const char *pv = picks[i] >= 0 ? snap->pvs[picks[i]].name : NULL;
		int r = kb_cluster_assume_claim_bound(sim->cluster, c->key, pv ? pv : "");
		if (r == 0 && pv)
			r = kb_cluster_assume_pv_claim(sim->cluster, pv, c->key);
		kb_sim_volume_binding b = {
			.claim = xstrdup(sim, c->key),
			.volume = pv ? xstrdup(sim, pv) : NULL,
			.node = xstrdup(sim, n->name),
			.time_ms = sim->now_ms,
		};
		if (r == 0 && (sim->oom || KB_VEC_PUSH(&sim->res.volume_binds, b) < 0))
			r = -ENOMEM;
		if (r < 0) {
			free(b.claim);
			free(b.volume);
			free(b.node);
			return r;
		}
	}
	sim->changed = true;
	return 1;
}

static int fx_evict(void *ctx, const kb_snapshot *snap, int64_t now_ms, const kb_task *t,
		    const char *reason)
{
	sim_state *sim = ctx;
	kb_sim_eviction e = {
		.pod = xstrdup(sim, t->key),
		.node = xstrdup(sim, t->node >= 0 ? snap->nodes[t->node].name : ""),
		.reason = xstrdup(sim, reason ? reason : "evicted"),
		.time_ms = sim->now_ms - sim->start_ms,
	};
	if (sim->oom || KB_VEC_PUSH(&sim->new_evicts, e) < 0) {
		free(e.pod);
		free(e.node);
		free(e.reason);
		return -ENOMEM;
	}
	return 0;
}

/* Records the first session that reports j running whole. 0 or -ENOMEM. */
static int note_gang_start(sim_state *sim, const kb_job *j, const kb_job_status *st)
{
	int32_t min = j->min_member > 0 ? j->min_member : 1;
	if (st->phase != KB_PG_RUNNING && st->phase != KB_PG_COMPLETED && st->scheduled < min)
		return 0;
	if (kb_strmap_get(&sim->started, j->key, NULL))
		return 0;
	kb_sim_gang_start g = {.name = xstrdup(sim, j->key), .time_ms = sim->now_ms - sim->start_ms};
	if (sim->oom || KB_VEC_PUSH(&sim->res.gang_starts, g) < 0) {
		free(g.name);
		return -ENOMEM;
	}
	return kb_strmap_put(&sim->started, g.name, 1);
}

static int fx_job_status(void *ctx, const kb_snapshot *snap, const kb_job *j,
			 const kb_job_status *st)
{
	sim_state *sim = ctx;
	if (j->flavor == KB_PG_NONE)
		return 0;
	kb_sim_group g = {
		.name = xstrdup(sim, j->key),
		.left_alone = j->foreign,
		.reason = st->unschedulable ? xstrdup(sim, st->unschedulable) : NULL,
		.phase = st->phase,
		.min_member = j->min_member,
		.scheduled = st->scheduled,
	};
	if (sim->oom || KB_VEC_PUSH(&sim->res.groups, g) < 0) {
		free(g.name);
		free(g.reason);
		return -ENOMEM;
	}
	int r = note_gang_start(sim, j, st);
	if (r < 0)
		return r;
	if (j->foreign)
		return 0; /* another scheduler's group: shown, never written */
	uint64_t before = sim->cluster->generation;
	r = kb_cluster_set_podgroup_phase(sim->cluster, j->key, st->phase);
	if (sim->cluster->generation != before)
		sim->changed = true;
	return r == -ENOENT ? 0 : r;
}

static int fx_task_pending(void *ctx, const kb_snapshot *snap, const kb_task *t, const char *reason)
{
	sim_state *sim = ctx;
	kb_sim_pending p = {.pod = xstrdup(sim, t->key), .reason = xstrdup(sim, reason)};
	if (sim->oom || KB_VEC_PUSH(&sim->res.pending, p) < 0) {
		free(p.pod);
		free(p.reason);
		return -ENOMEM;
	}
	return 0;
}


static void forget_reports(sim_state *sim)
{
	for (size_t i = 0; i < sim->res.pending.n; i++) {
		free(sim->res.pending.v[i].pod);
		free(sim->res.pending.v[i].reason);
	}
	for (size_t i = 0; i < sim->res.groups.n; i++) {
		free(sim->res.groups.v[i].name);
		free(sim->res.groups.v[i].reason);
	}
	for (size_t i = 0; i < sim->res.queues.n; i++)
		free(sim->res.queues.v[i].name);
	sim->res.pending.n = sim->res.groups.n = sim->res.queues.n = 0;
}

/* Queue shares as the session leaves them (after its own allocations). */
static int fx_queue_status(void *ctx, const kb_snapshot *snap, const kb_queue *q,
			   const kb_res *deserved)
{
	sim_state *sim = ctx;
	sim->res.resnames = snap->resnames;
	kb_sim_queue sq = {.name = xstrdup(sim, q->name), .weight = q->weight,
			.deserved = *deserved, .allocated = q->allocated};
	if (sim->oom || KB_VEC_PUSH(&sim->res.queues, sq) < 0) {
		free(sq.name);
		return -ENOMEM;
	}
	return 0;
}

static const kb_effects sim_effects = {
	.bind = fx_bind,
	.bind_volumes = fx_bind_volumes,
	.evict = fx_evict,
	.job_status = fx_job_status,
	.queue_status = fx_queue_status,
	.task_pending = fx_task_pending,
};

/* ---- time ------------------------------------------------------------------------ */

static int cmp_arrival(const void *a, const void *b)
{
	const kb_object *x = *(kb_object *const *)a, *y = *(kb_object *const *)b;
	if (x->u.pod.sim_arrival_ms != y->u.pod.sim_arrival_ms)
		return x->u.pod.sim_arrival_ms < y->u.pod.sim_arrival_ms ? -1 : 1;
	return strcmp(x->meta.key, y->meta.key);
}

/* Applies the decisions of the session that just closed. */
static int apply_decisions(sim_state *sim)
{
	int r = 0;
	for (size_t i = 0; i < sim->new_evicts.n; i++) {
		kb_sim_eviction *e = &sim->new_evicts.v[i];
		/* The controller recreates the pod: it is pending again at once. */
		if (r == 0)
			r = kb_cluster_set_pod(sim->cluster, e->pod, NULL, KB_TASK_PENDING, 0, 0);
		if (r == 0)
			r = kb_cluster_note_eviction(sim->cluster, e->pod, sim->now_ms);
		if (r == 0 && (r = KB_VEC_PUSH(&sim->res.evictions, *e)) < 0)
			break;
		sim->changed = true;
	}
	sim->new_evicts.n = 0;
	for (size_t i = 0; i < sim->new_binds.n; i++) {
		kb_sim_binding *b = &sim->new_binds.v[i];
		if (r == 0)
			r = kb_cluster_set_pod(sim->cluster, b->pod, b->node, KB_TASK_RUNNING, sim->now_ms,
					       b->gpu_mask);
		kb_slot *sl = kb_cluster_pod(sim->cluster, b->pod);
		if (r == 0 && sl && sl->obj->u.pod.sim_duration_ms >= 0) {
			sim_completion c = {
				.end_ms = sim->now_ms + sl->obj->u.pod.sim_duration_ms,
				.started_ms = sim->now_ms,
				.pod = xstrdup(sim, b->pod),
			};
			if (sim->oom || (r = KB_VEC_PUSH(&sim->completions, c)) < 0) {
				free(c.pod);
				r = -ENOMEM;
			}
		}
		if (r == 0 && (r = KB_VEC_PUSH(&sim->res.bindings, *b)) < 0)
			break;
		sim->changed = true;
	}
	sim->new_binds.n = 0;
	return r;
}

/* Adds pod's end on node at now to res.completions. 0 or -ENOMEM. */
static int record_completion(sim_state *sim, const char *pod, const char *node)
{
	kb_sim_completion done = {.pod = xstrdup(sim, pod), .node = xstrdup(sim, node),
				  .time_ms = sim->now_ms - sim->start_ms};
	if (sim->oom || KB_VEC_PUSH(&sim->res.completions, done) < 0) {
		free(done.pod);
		free(done.node);
		return -ENOMEM;
	}
	return 0;
}

/* The ends the caller gave (opt->ends) of the pods the API bound, as
 * completions. 0 or -ENOMEM. */
static int seed_ends(sim_state *sim)
{
	const kb_sim_options *opt = sim->opt;
	for (uint32_t i = 0; i < opt->nends; i++) {
		const kb_slot *sl = kb_cluster_pod(sim->cluster, opt->ends[i].pod);
		/* As the API shows it, or bound by the scheduler (a binding in flight). */
		if (!sl || (sl->overridden ? !sl->node || !kb_task_status_allocated(sl->status)
					   : !sl->obj->u.pod.node_name))
			continue;
		sim_completion c = {
			.end_ms = opt->ends[i].end_ms > sim->start_ms ? opt->ends[i].end_ms
								       : sim->start_ms,
			.started_ms = sl->started_ms,
			.pod = xstrdup(sim, opt->ends[i].pod),
			.api_bound = true,
		};
		if (sim->oom || KB_VEC_PUSH(&sim->completions, c) < 0) {
			free(c.pod);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Finishes the pods whose run ends at or before now. */
static int complete_due(sim_state *sim)
{
	size_t keep = 0;
	int r = 0;
	for (size_t i = 0; i < sim->completions.n; i++) {
		sim_completion *c = &sim->completions.v[i];
		if (c->end_ms > sim->now_ms) {
			sim->completions.v[keep++] = *c;
			continue;
		}
		kb_slot *sl = kb_cluster_pod(sim->cluster, c->pod);
		/* Only the run that was scheduled to end: an evicted and rebound pod has
		 * a later start; a pod the API bound, while the run has not moved it. */
		const char *node = NULL;
		if (sl && c->api_bound && !sl->overridden)
			node = sl->obj->u.pod.node_name;
		else if (sl && sl->overridden && sl->started_ms == c->started_ms &&
			 (sl->status == KB_TASK_RUNNING ||
			  (c->api_bound && kb_task_status_allocated(sl->status))))
			node = sl->node;
		if (node)
			r = record_completion(sim, c->pod, node);
		if (node && r == 0)
			r = kb_cluster_set_pod(sim->cluster, c->pod, node, KB_TASK_SUCCEEDED,
					       c->started_ms, sl->gpu_mask);
		free(c->pod);
		if (r < 0)
			break;
	}
	sim->completions.n = keep;
	return r;
}

static int64_t next_completion(const sim_state *sim)
{
	int64_t next = INT64_MAX;
	for (size_t i = 0; i < sim->completions.n; i++)
		if (sim->completions.v[i].end_ms < next)
			next = sim->completions.v[i].end_ms;
	return next;
}

/* ---- output ---------------------------------------------------------------------- */

static void json_time(FILE *out, int64_t ms)
{
	fprintf(out, "%" PRId64 ".%01" PRId64, ms / 1000, (ms % 1000) / 100);
	if (ms % 100)
		fprintf(out, "%02" PRId64, ms % 100);
}

static void json_gpus(FILE *out, uint32_t mask)
{
	fputs(", \"gpus\": [", out);
	bool first = true;
	for (int g = 0; g < 32; g++)
		if (mask & (1u << g)) {
			fprintf(out, "%s%d", first ? "" : ", ", g);
			first = false;
		}
	fputc(']', out);
}

/* "volume_bindings" (only when claims were bound), after "bindings". */
static void print_volume_bindings(const kb_sim_result *res, FILE *out)
{
	if (!res->volume_binds.n)
		return;
	fputs(",\n  \"volume_bindings\": [", out);
	for (size_t i = 0; i < res->volume_binds.n; i++) {
		const kb_sim_volume_binding *b = &res->volume_binds.v[i];
		fputs(i ? ",\n    {\"claim\": " : "\n    {\"claim\": ", out);
		kb_json_put_str(out, b->claim);
		fputs(", \"volume\": ", out);
		if (b->volume)
			kb_json_put_str(out, b->volume);
		else
			fputs("null", out);
		fputs(", \"node\": ", out);
		kb_json_put_str(out, b->node);
		fputs(", \"time\": ", out);
		json_time(out, b->time_ms);
		fputc('}', out);
	}
	fputs("\n  ]", out);
}

/* The time start_ms + ms as RFC 3339 UTC, to the second, into buf (32
 * bytes), or "?" when it has no such form. */
static const char *fmt_rfc3339(int64_t ms, char *buf, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return "?";
	return buf;
}

/* "estimates" (only when the caller filled any), after "queues". */
static void print_estimates_json(const kb_sim_result *res, FILE *out)
{
	if (!res->estimates.n)
		return;
	char ts[32];
	fputs(",\n  \"estimates\": [", out);
	for (size_t i = 0; i < res->estimates.n; i++) {
		const kb_sim_estimate *e = &res->estimates.v[i];
		fputs(i ? ",\n    {\"podgroup\": " : "\n    {\"podgroup\": ", out);
		kb_json_put_str(out, e->podgroup);
		if (e->known) {
			fprintf(out, ", \"estimated_start\": \"%s\", \"seconds_from_now\": ",
				fmt_rfc3339(res->start_ms + e->time_ms, ts, sizeof(ts)));
			json_time(out, e->time_ms);
			fputs(", \"after\": ", out);
			kb_json_put_str(out, e->after ? e->after : "");
		} else {
			fputs(", \"estimated_start\": \"unknown\", \"reason\": ", out);
			kb_json_put_str(out, e->unknown ? e->unknown : "");
		}
		fputc('}', out);
	}
	fputs("\n  ]", out);
}

static void print_json(const kb_sim_result *res, FILE *out)
{
	fprintf(out, "{\n  \"sessions\": %u,\n  \"end_time\": ", res->sessions);
	json_time(out, res->end_ms);
	fputs(",\n  \"bindings\": [", out);
	for (size_t i = 0; i < res->bindings.n; i++) {
		const kb_sim_binding *b = &res->bindings.v[i];
		fputs(i ? ",\n    {\"pod\": " : "\n    {\"pod\": ", out);
		kb_json_put_str(out, b->pod);
		fputs(", \"node\": ", out);
		kb_json_put_str(out, b->node);
		fputs(", \"time\": ", out);
		json_time(out, b->time_ms);
		if (b->has_gpus)
			json_gpus(out, b->gpu_mask);
		fputc('}', out);
	}
	fputs(res->bindings.n ? "\n  ]" : "]", out);
	print_volume_bindings(res, out);
	fputs(",\n  \"evictions\": [", out);
	for (size_t i = 0; i < res->evictions.n; i++) {
		const kb_sim_eviction *e = &res->evictions.v[i];
		fputs(i ? ",\n    {\"pod\": " : "\n    {\"pod\": ", out);
		kb_json_put_str(out, e->pod);
		fputs(", \"node\": ", out);
		kb_json_put_str(out, e->node);
		fputs(", \"time\": ", out);
		json_time(out, e->time_ms);
		fputs(", \"reason\": ", out);
		kb_json_put_str(out, e->reason);
		fputc('}', out);
	}
	fputs(res->evictions.n ? "\n  ],\n  \"pending\": [" : "],\n  \"pending\": [", out);
	for (size_t i = 0; i < res->pending.n; i++) {
		fputs(i ? ",\n    {\"pod\": " : "\n    {\"pod\": ", out);
		kb_json_put_str(out, res->pending.v[i].pod);
		fputs(", \"reason\": ", out);
		kb_json_put_str(out, res->pending.v[i].reason);
		fputc('}', out);
	}
	fputs(res->pending.n ? "\n  ],\n  \"podgroups\": [" : "],\n  \"podgroups\": [", out);
	for (size_t i = 0; i < res->groups.n; i++) {
		const kb_sim_group *g = &res->groups.v[i];
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		kb_json_put_str(out, g->name);
		fprintf(out, ", \"phase\": \"%s\", \"minMember\": %d, \"scheduled\": %d",
			kb_pg_phase_name(g->phase), g->min_member, g->scheduled);
		if (g->left_alone)
			fputs(", \"leftAlone\": true", out);
		if (g->reason) {
			fputs(", \"reason\": ", out);
			kb_json_put_str(out, g->reason);
		}
		fputc('}', out);
	}
	fputs(res->groups.n ? "\n  ],\n  \"queues\": [" : "],\n  \"queues\": [", out);
	for (size_t i = 0; i < res->queues.n; i++) {
		const kb_sim_queue *q = &res->queues.v[i];
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		kb_json_put_str(out, q->name);
		fprintf(out, ", \"weight\": %d, \"deserved\": ", q->weight);
		kb_res_put_json(out, &q->deserved, &res->resnames);
		fputs(", \"allocated\": ", out);
		kb_res_put_json(out, &q->allocated, &res->resnames);
		fputc('}', out);
	}
	fputs(res->queues.n ? "\n  ]" : "]", out);
	print_estimates_json(res, out);
	fputs("\n}\n", out);
}

/* "12.345s" into buf (callers pass 32 bytes: any int64 fits, nothing is cut). */
static const char *fmt_time(int64_t ms, char *buf, size_t n)
{
	int w = snprintf(buf, n, "%" PRId64 ".%03" PRId64 "s", ms / 1000, ms % 1000);
	return w >= 0 && (size_t)w < n ? buf : "?";
}

static void print_estimates_table(const kb_sim_result *res, FILE *out)
{
	if (!res->estimates.n)
		return;
	char ts[32], tb[32];
	fprintf(out, "\nESTIMATED STARTS (%zu)\n%-36s %-21s %-12s %s\n", res->estimates.n,
		"PODGROUP", "ESTIMATED START", "FROM NOW", "AFTER / WHY UNKNOWN");
	for (size_t i = 0; i < res->estimates.n; i++) {
		const kb_sim_estimate *e = &res->estimates.v[i];
		if (e->known)
			fprintf(out, "%-36s %-21s %-12s %s\n", e->podgroup,
				fmt_rfc3339(res->start_ms + e->time_ms, ts, sizeof(ts)),
				fmt_time(e->time_ms, tb, sizeof(tb)),
				e->after && *e->after ? e->after : "-");
		else
			fprintf(out, "%-36s %-21s %-12s %s\n", e->podgroup, "unknown", "-",
				e->unknown ? e->unknown : "");
	}
}

static void print_table(const kb_sim_result *res, FILE *out)
{
	char tb[32];
	fprintf(out, "Simulated %u sessions, %s of virtual time.\n\n", res->sessions,
		fmt_time(res->end_ms, tb, sizeof(tb)));
	fprintf(out, "BINDINGS (%zu)\n%-10s %-36s %-20s %s\n", res->bindings.n, "TIME", "POD", "NODE",
		"GPUS");
	for (size_t i = 0; i < res->bindings.n; i++) {
		const kb_sim_binding *b = &res->bindings.v[i];
		char gpus[128] = "-";
		if (b->has_gpus && b->gpu_mask) {
			size_t off = 0;
			gpus[0] = '\0';
			for (int g = 0; g < 32 && off < sizeof(gpus); g++)
				if (b->gpu_mask & (1u << g))
					off += (size_t)snprintf(gpus + off, sizeof(gpus) - off, "%s%d",
								off ? "," : "", g);
		}
		fprintf(out, "%-10s %-36s %-20s %s\n", fmt_time(b->time_ms, tb, sizeof(tb)), b->pod,
			b->node, gpus);
	}
	if (res->evictions.n) {
		fprintf(out, "\nEVICTIONS (%zu)\n%-10s %-36s %-20s %s\n", res->evictions.n, "TIME", "POD",
			"NODE", "REASON");
		for (size_t i = 0; i < res->evictions.n; i++) {
			const kb_sim_eviction *e = &res->evictions.v[i];
			fprintf(out, "%-10s %-36s %-20s %s\n", fmt_time(e->time_ms, tb, sizeof(tb)), e->pod,
				e->node, e->reason);
		}
	}
	fprintf(out, "\nPODGROUPS\n%-36s %-10s %-10s %s\n", "NAME", "PHASE", "MINMEMBER", "SCHEDULED");
	for (size_t i = 0; i < res->groups.n; i++) {
		const kb_sim_group *g = &res->groups.v[i];
		fprintf(out, "%-36s %-10s %-10d %d\n", g->name, kb_pg_phase_name(g->phase), g->min_member,
			g->scheduled);
	}
	fprintf(out, "\nQUEUES\n%-16s %-7s %-40s %s\n", "NAME", "WEIGHT", "DESERVED", "ALLOCATED");
	for (size_t i = 0; i < res->queues.n; i++) {
		const kb_sim_queue *q = &res->queues.v[i];
		char d[256], a[256];
		kb_res dq = q->deserved, aq = q->allocated;
		dq.q[KB_RES_PODS] = aq.q[KB_RES_PODS] = 0;
		kb_res_format(&dq, &res->resnames, d, sizeof(d));
		kb_res_format(&aq, &res->resnames, a, sizeof(a));
		fprintf(out, "%-16s %-7d %-40s %s\n", q->name, q->weight, d[0] ? d : "-", a[0] ? a : "-");
	}
	if (res->pending.n) {
		fprintf(out, "\nPENDING (%zu)\n%-36s %s\n", res->pending.n, "POD", "REASON");
		for (size_t i = 0; i < res->pending.n; i++)
			fprintf(out, "%-36s %s\n", res->pending.v[i].pod, res->pending.v[i].reason);
	}
	print_estimates_table(res, out);
}

/* ---- the run --------------------------------------------------------------------- */

void kb_sim_result_release(kb_sim_result *res)
{
	for (size_t i = 0; i < res->bindings.n; i++) {
		free(res->bindings.v[i].pod);
		free(res->bindings.v[i].node);
	}
	for (size_t i = 0; i < res->evictions.n; i++) {
		free(res->evictions.v[i].pod);
		free(res->evictions.v[i].node);
		free(res->evictions.v[i].reason);
	}
	for (size_t i = 0; i < res->pending.n; i++) {
		free(res->pending.v[i].pod);
		free(res->pending.v[i].reason);
	}
	for (size_t i = 0; i < res->groups.n; i++) {
		free(res->groups.v[i].name);
		free(res->groups.v[i].reason);
	}
	for (size_t i = 0; i < res->queues.n; i++)
		free(res->queues.v[i].name);
	for (size_t i = 0; i < res->volume_binds.n; i++) {
		free(res->volume_binds.v[i].claim);
		free(res->volume_binds.v[i].volume);
		free(res->volume_binds.v[i].node);
	}
	for (size_t i = 0; i < res->gang_starts.n; i++)
		free(res->gang_starts.v[i].name);
	for (size_t i = 0; i < res->completions.n; i++) {
		free(res->completions.v[i].pod);
		free(res->completions.v[i].node);
	}
	for (size_t i = 0; i < res->estimates.n; i++) {
		free(res->estimates.v[i].podgroup);
		free(res->estimates.v[i].after);
		free(res->estimates.v[i].unknown);
	}
	KB_VEC_RELEASE(&res->gang_starts);
	KB_VEC_RELEASE(&res->completions);
	KB_VEC_RELEASE(&res->estimates);
	KB_VEC_RELEASE(&res->volume_binds);
	KB_VEC_RELEASE(&res->bindings);
	KB_VEC_RELEASE(&res->evictions);
	KB_VEC_RELEASE(&res->pending);
	KB_VEC_RELEASE(&res->groups);
	KB_VEC_RELEASE(&res->queues);
	memset(res, 0, sizeof(*res));
}

static void sim_release(sim_state *sim)
{
	for (size_t i = 0; i < sim->completions.n; i++)
		free(sim->completions.v[i].pod);
	KB_VEC_RELEASE(&sim->completions);
	KB_VEC_RELEASE(&sim->new_binds);
	KB_VEC_RELEASE(&sim->new_evicts);
	kb_strmap_release(&sim->started);
	kb_sim_result_release(&sim->res);
	if (sim->cluster == &sim->own)
		kb_cluster_release(&sim->own);
}

/* The manifests and the queue file into sim's cluster; pods that arrive
 * later into *later, in arrival order. 0 or -errno with err. */
static int sim_load(sim_state *sim, kb_queue_conf *qconf, kb_object_vec *later, kb_err *err)
{
	const kb_sim_options *opt = sim->opt;
	int r = 0;
	if (opt->queue_conf && !opt->cluster) {
		if ((r = kb_queue_conf_load_file(opt->queue_conf, &sim->cluster->resnames, qconf, err)) < 0)
			return r;
		sim->cluster->queue_conf = qconf;
	}
	for (uint32_t i = 0; i < opt->nfiles && r == 0; i++)
		r = kb_manifests_load_at(sim->cluster, opt->files[i], sim->start_ms, later, err);
	if (r < 0)
		return r;
	if (opt->queue_conf && !opt->cluster) {
		/* Guarantees must fit the cluster the scenario describes. */
		kb_snapshot s0;
		kb_snapshot_init(&s0);
		r = kb_cluster_snapshot(sim->cluster, &s0, err);
		if (r == 0)
			r = kb_queue_conf_check_cluster(qconf, &s0.total_allocatable, &s0.resnames, err);
		kb_snapshot_release(&s0);
		if (r < 0)
			return r;
	}
	if (later->n)
		qsort(later->v, later->n, sizeof(kb_object *), cmp_arrival);
	return 0;
}

/* One session at sim->now_ms over the cluster, its decisions applied.
 * 0 or -errno with err. */
static int sim_session(sim_state *sim, const kb_conf *conf, kb_err *err)
{
	kb_snapshot *snap; /* lent by the cluster for the session */
	int r = kb_cluster_session_snapshot(sim->cluster, &snap, err);
	if (r < 0)
		return r;
	kb_session ssn;
	sim->changed = false;
	forget_reports(sim);
	if ((r = kb_session_open(&ssn, snap, conf, &sim_effects, sim, sim->now_ms, err)) < 0)
		return r;
	kb_session_use_memo(&ssn, &sim->memo);
	r = kb_session_run_actions(&ssn, err);
	int rc = kb_session_close(&ssn);
	if (r == 0 && rc < 0)
		r = kb_err_set(err, rc, "applying decisions: %s", strerror(-rc));
	if (r == 0)
		r = apply_decisions(sim);
	if (r == 0 && sim->oom)
		r = kb_err_set(err, -ENOMEM, "out of memory");
	return r;
}

/* The thread's CPU time in ms (for opt->budget_ms). */
static int64_t cpu_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The sessions, from sim->start_ms until nothing is left to happen, max
 * time or max sessions; the pods of later arrive on time (taken over).
 * 0 or -errno with err. */
static int sim_loop(sim_state *sim, const kb_conf *conf, kb_object_vec *later, kb_err *err)
{
	const kb_sim_options *opt = sim->opt;
	int r = 0;
	int64_t period = opt->period_ms > 0 ? opt->period_ms : KB_DEFAULT_PERIOD_MS;
	int64_t max_time = opt->max_time_ms > 0 ? opt->max_time_ms : 30LL * 24 * 3600 * 1000;
	uint32_t max_sessions = opt->max_sessions ? opt->max_sessions : KB_SIM_MAX_SESSIONS;
	int64_t start = sim->start_ms;
	size_t next_arrival = 0;
	uint32_t sessions = 0;
	int64_t end_ms = start;
	int64_t cpu0 = cpu_ms();
	sim->res.stop = KB_SIM_STOP_MAX_TIME;
	for (sim->now_ms = start; sim->now_ms - start <= max_time;) {
		if (opt->budget_ms > 0 && cpu_ms() - cpu0 > opt->budget_ms) {
			sim->res.stop = KB_SIM_STOP_BUDGET;
			break;
		}
		if (sessions >= max_sessions) {
			sim->res.stop = KB_SIM_STOP_MAX_SESSIONS;
			/* Something changes every period and keeps changing: report
			 * what there is rather than run for ever. */
			if (!opt->max_sessions)
				fprintf(stderr,
					"kube-batchd: warning: stopped after %u sessions (t=%" PRId64
					" ms) with decisions still changing every period\n",
					sessions, sim->now_ms - start);
			break;
		}
		/* Events due by now: arrivals, then completions. */
		for (; next_arrival < later->n &&
		       start + later->v[next_arrival]->u.pod.sim_arrival_ms <= sim->now_ms;
		     next_arrival++) {
			kb_object *o = later->v[next_arrival];
			later->v[next_arrival] = NULL;
			if ((r = kb_cluster_apply(sim->cluster, o, start + o->u.pod.sim_arrival_ms)) < 0)
				return r;
		}
		if ((r = complete_due(sim)) < 0 || (r = sim_session(sim, conf, err)) < 0)
			return r;
		sessions++;
		end_ms = sim->now_ms;
		/* Next session: the next period if this one changed anything, else the
		 * first period boundary at or after the next event. */
		int64_t next = sim->now_ms + period;
		if (!sim->changed) {
			int64_t ev = next_completion(sim);
			if (next_arrival < later->n &&
			    start + later->v[next_arrival]->u.pod.sim_arrival_ms < ev)
				ev = start + later->v[next_arrival]->u.pod.sim_arrival_ms;
			if (ev == INT64_MAX) {
				sim->res.stop = KB_SIM_STOP_QUIET;
				break;
			}
			if (ev > next)
				next = start + (ev - start + period - 1) / period * period;
		}
		sim->now_ms = next;
	}
	sim->res.sessions = sessions;
	sim->res.end_ms = end_ms - start;
	return 0;
}

int kb_simulate_run(const kb_sim_options *opt, kb_sim_result *ret, kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_conf own_conf;
	memset(&own_conf, 0, sizeof(own_conf));
	int r = 0;
	if (!opt->conf)
		r = opt->scheduler_conf
			    ? kb_conf_load_file(opt->scheduler_conf, opt->registry, &own_conf, err)
			    : kb_conf_load_default(opt->registry, &own_conf, err);
	if (r < 0)
		return r;
	const kb_conf *conf = opt->conf ? opt->conf : &own_conf;
	sim_state sim;
	memset(&sim, 0, sizeof(sim));
	kb_strmap_init(&sim.started);
	sim.opt = opt;
	sim.res.start_ms = opt->start_ms;
	if (opt->cluster) {
		sim.cluster = opt->cluster;
	} else {
		sim.cluster = &sim.own;
		kb_cluster_init(sim.cluster, opt->scheduler_name, opt->default_queue);
	}
	sim.start_ms = opt->start_ms;
	kb_queue_conf qconf;
	memset(&qconf, 0, sizeof(qconf));
	kb_object_vec later = {0};
	if ((r = sim_load(&sim, &qconf, &later, err)) < 0)
		goto out;
	if ((r = seed_ends(&sim)) < 0) {
		kb_err_set(err, r, "out of memory");
		goto out;
	}
	if ((r = sim_loop(&sim, conf, &later, err)) < 0)
		goto out;
	*ret = sim.res;
	memset(&sim.res, 0, sizeof(sim.res));
out:
	for (size_t i = 0; i < later.n; i++)
		kb_object_free(later.v[i]);
	KB_VEC_RELEASE(&later);
	sim_release(&sim);
	kb_queue_conf_release(&qconf);
	if (!opt->conf)
		kb_conf_release(&own_conf);
	return r;
}

void kb_sim_result_print(const kb_sim_result *res, kb_sim_output output, FILE *out)
{
	if (output == KB_SIM_JSON)
		print_json(res, out);
	else
		print_table(res, out);
}

int kb_simulate(const kb_sim_options *opt, FILE *out, kb_err *err)
{
	kb_sim_result res;
	int r = kb_simulate_run(opt, &res, err);
	if (r == 0)
		kb_sim_result_print(&res, opt->output, out);
	kb_sim_result_release(&res);
	return r;
}

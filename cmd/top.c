/* top.c - `kube-batchd top nodes|queues|jobs`: the cluster's state read
 * through the API (cmd/live.h), shown as the scheduler counts it.
 *
 *  nodes:  GPUs allocated/total as `arena top node` counts them, the
 *          scheduler's own books (replicas, gpu-milli shares, gpushare
 *          memory), cpu and memory, and Arena's cluster line;
 *  queues: weight, deserved (from one session over the state read, as the
 *          daemon computes it), allocated, capability, share, jobs waiting;
 *  jobs:   each PodGroup: queue, phase, pods bound or running / minMember,
 *          GPUs, age and, for one that waits, the reason the scheduler
 *          gives (from that session).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobstatus.h"

#include "base/json_out.h"
#include "api/quantity.h"
#include "base/strmap.h"
#include "cmd/cli_cmds.h"
#include "cmd/live.h"
#include "cmd/table.h"
#include "cmd/views.h"
#include "scheduler/simulate.h"

static void usage(FILE *out)
{
	fputs("usage: kube-batchd top nodes|queues|jobs [--kubeconfig F] [--master URL]\n"
	      "                       [--scheduler-conf F] [--queue-conf F] [-o|--output table|json]\n"
	      "                       [--scheduler-name N] [--default-queue Q] [--timeout D]\n"
	      "\n"
	      "Reads the cluster through the API (nothing is written) and shows, per node, the GPUs\n"
	      "allocated and in total as Arena counts them and as kube-batchd does, cpu and memory;\n"
	      "per queue, its deserved share (one session over the state read), allocation,\n"
	      "capability and waiting jobs; per PodGroup, its state and why it waits.\n",
	      out);
}

/* ---- output helpers ------------------------------------------------------------ */

/* A count in milli-units as a plain number: 1500 -> "1.5", 2000 -> "2". */
static const char *milli_num(int64_t m, char *buf, size_t n)
{
	if (m % 1000 == 0)
		(void)snprintf(buf, n, "%" PRId64, m / 1000);
	else
		(void)snprintf(buf, n, "%.3g", (double)m / 1000.0);
	return buf;
}

/* "used/total" of a resource, in its Kubernetes form ("4Gi/16Gi", "3/8"). */
static const char *used_of(int64_t used, int64_t total, const char *resname, char *buf, size_t n)
{
	char a[KB_QUANTITY_BUFSZ], b[KB_QUANTITY_BUFSZ];
	enum kb_quantity_format f = kb_quantity_format_for(resname);
	if (f == KB_QFMT_BINARY)
		(void)snprintf(buf, n, "%s/%s", kb_quantity_format(used, f, a),
			       kb_quantity_format(total, f, b));
	else
		(void)snprintf(buf, n, "%s/%s", milli_num(used, a, sizeof(a)),
			       milli_num(total, b, sizeof(b)));
	return buf;
}

static void res_text(const kb_res *r, const kb_resnames *names, char *buf, size_t n)
{
	kb_res c = *r;
	c.q[KB_RES_PODS] = 0;
	kb_res_format(&c, names, buf, n);
}

static const char *arena_mode_name(kb_arena_mode m)
{
	return m == KB_ARENA_SHARE ? "share" : m == KB_ARENA_EXCLUSIVE ? "exclusive" : "none";
}

/* ---- top nodes ------------------------------------------------------------------ */

static const char *node_status(const kb_node_view *v)
{
	if (v->cordoned)
		return v->ready ? "Ready,SchedulingDisabled" : "NotReady,SchedulingDisabled";
	return v->ready ? "Ready" : "NotReady";
}

/* How the scheduler counts the node's GPUs: "2 GPUs", "2 GPUs x4 replicas". */
static const char *sharing_text(const kb_node_view *v, char *buf, size_t n)
{
	if (strcmp(v->sharing, "time-slicing") == 0 || strcmp(v->sharing, "mps") == 0)
		(void)snprintf(buf, n, "%s: %d GPUs x%d", v->sharing, v->gpus, v->replicas);
	else
		(void)snprintf(buf, n, "%s", v->sharing);
	return buf;
}

static int top_nodes(const kb_snapshot *s, bool json, FILE *out)
{
	int64_t total = 0, alloc = 0;
	kb_table t;
	static const char *const head[] = {"NAME", "STATUS", "GPU-MODE", "GPU(Total)",
					   "GPU(Allocated)", "SHARING", "GPU(kube-batchd)",
					   "GPU-MEM", "CPU", "MEMORY", "PODS"};
	int r = json ? 0 : kb_table_init(&t, 11, head);
	if (r < 0)
		return r;
	if (json)
		fputs("{\n  \"nodes\": [", out);
	for (uint32_t i = 0; i < s->nnodes; i++) {
		kb_node_view v;
		kb_node_view_of(s, i, &v);
		total += v.arena_total;
		alloc += v.arena_allocated;
		char tot[24], al[24], sh[64], g[64], gm[64], cpu[64], mem[64], pods[16];
		(void)snprintf(tot, sizeof(tot), "%" PRId64, v.arena_total);
		(void)snprintf(al, sizeof(al), "%" PRId64, v.arena_allocated);
		(void)snprintf(pods, sizeof(pods), "%u", v.pods);
		if (json) {
			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
			kb_json_put_str(out, v.name);
			fprintf(out, ", \"status\": \"%s\", \"gpuMode\": \"%s\", \"gpuTotal\": %" PRId64
				", \"gpuAllocated\": %" PRId64 ", \"sharing\": \"%s\", \"gpus\": %d"
				", \"replicas\": %d",
				node_status(&v), arena_mode_name(v.arena_mode), v.arena_total,
				v.arena_allocated, v.sharing, v.gpus, v.replicas);
			fprintf(out, ", \"schedulerGpu\": {\"allocatable\": \"%s\", \"used\": \"%s\"}",
				milli_num(v.gpu_alloc, g, sizeof(g)), milli_num(v.gpu_used, gm, sizeof(gm)));
			fprintf(out, ", \"gpuMem\": {\"allocatable\": \"%s\", \"used\": \"%s\"}",
				milli_num(v.gpu_mem_total, g, sizeof(g)),
				milli_num(v.gpu_mem_used, gm, sizeof(gm)));
			fprintf(out, ", \"cpu\": {\"allocatable\": \"%s\", \"used\": \"%s\"}",
				kb_quantity_format(v.cpu_alloc, KB_QFMT_DECIMAL, g),
				kb_quantity_format(v.cpu_used, KB_QFMT_DECIMAL, gm));
			fprintf(out, ", \"memory\": {\"allocatable\": \"%s\", \"used\": \"%s\"}",
				kb_quantity_format(v.mem_alloc, KB_QFMT_BINARY, g),
				kb_quantity_format(v.mem_used, KB_QFMT_BINARY, gm));
			fprintf(out, ", \"pods\": %u}", v.pods);
			continue;
		}
		const char *row[] = {
			v.name, node_status(&v), arena_mode_name(v.arena_mode), tot, al,
			sharing_text(&v, sh, sizeof(sh)),
			v.gpu_alloc > 0 ? used_of(v.gpu_used, v.gpu_alloc, "nvidia.com/gpu", g, sizeof(g)) : "-",
			v.gpu_mem_total > 0 ? used_of(v.gpu_mem_used, v.gpu_mem_total, "count", gm, sizeof(gm)) : "-",
			used_of(v.cpu_used, v.cpu_alloc, "cpu", cpu, sizeof(cpu)),
			used_of(v.mem_used, v.mem_alloc, "memory", mem, sizeof(mem)),
			pods,
		};
		if ((r = kb_table_add(&t, row)) < 0)
			break;
	}
	char pct[16];
	kb_format_percent(alloc, total, pct, sizeof(pct));
	if (json) {
		fprintf(out, "%s\"cluster\": {\"gpuTotal\": %" PRId64 ", \"gpuAllocated\": %" PRId64 "}\n}\n",
			s->nnodes ? "\n  ],\n  " : "],\n  ", total, alloc);
		return 0;
	}
	if (r == 0) {
		kb_table_print(&t, out);
		fputs("---------------------------------------------------------------------------------------------------\n",
		      out);
		fprintf(out, "Allocated/Total GPUs In Cluster: %" PRId64 "/%" PRId64 " (%s)\n", alloc,
			total, pct);
	}
	kb_table_release(&t);
	return r;
}

/* ---- top queues ----------------------------------------------------------------- */

static const kb_sim_queue *find_sim_queue(const kb_sim_result *res, const char *name)
{
	for (size_t i = 0; i < res->queues.n; i++)
		if (strcmp(res->queues.v[i].name, name) == 0)
			return &res->queues.v[i];
	return NULL;
}

static int top_queues(const kb_snapshot *s, const kb_sim_result *res, bool json, FILE *out)
{
	kb_table t;
	static const char *const head[] = {"NAME", "WEIGHT", "DESERVED", "ALLOCATED", "CAPABILITY",
					   "SHARE", "JOBS", "PENDING-JOBS"};
	int r = json ? 0 : kb_table_init(&t, 8, head);
	if (r < 0)
		return r;
	if (json)
		fputs("{\n  \"queues\": [", out);
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_queue *q = &s->queues[i];
		const kb_sim_queue *sq = find_sim_queue(res, q->name);
		kb_res deserved = {{0}}, cap = {{0}};
		if (sq)
			deserved = sq->deserved;
		for (int k = 0; k < KB_RES_MAX; k++)
			if (q->capability_mask & (1u << k))
				cap.q[k] = q->capability.q[k];
		uint32_t jobs = 0, waiting = 0;
		for (uint32_t j = 0; j < s->njobs; j++) {
			const kb_job *jb = &s->jobs[j];
			if (jb->queue != (int32_t)i || jb->foreign)
				continue;
			jobs++;
			waiting += kb_job_waiting(jb);
		}
		double share = kb_queue_share(&q->allocated, &deserved);
		if (json) {
			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
			kb_json_put_str(out, q->name);
			fprintf(out, ", \"weight\": %d, \"deserved\": ", q->weight);
			kb_res_put_json(out, &deserved, &s->resnames);
			fputs(", \"allocated\": ", out);
			kb_res_put_json(out, &q->allocated, &s->resnames);
			fputs(", \"capability\": ", out);
			kb_res_put_json(out, &cap, &s->resnames);
			fprintf(out, ", \"share\": %.3f, \"jobs\": %u, \"pendingJobs\": %u}", share, jobs,
				waiting);
			continue;
		}
		char w[16], d[256], a[256], c[256], sh[16], nj[16], nw[16];
		(void)snprintf(w, sizeof(w), "%d", q->weight);
		res_text(&deserved, &s->resnames, d, sizeof(d));
		res_text(&q->allocated, &s->resnames, a, sizeof(a));
		res_text(&cap, &s->resnames, c, sizeof(c));
		(void)snprintf(sh, sizeof(sh), "%.2f", share);
		(void)snprintf(nj, sizeof(nj), "%u", jobs);
		(void)snprintf(nw, sizeof(nw), "%u", waiting);
		const char *row[] = {q->name, w, d, a, c, sh, nj, nw};
		if ((r = kb_table_add(&t, row)) < 0)
			break;
	}
	if (json) {
		fputs(s->nqueues ? "\n  ]\n}\n" : "]\n}\n", out);
		return 0;
	}
	if (r == 0)
		kb_table_print(&t, out);
	kb_table_release(&t);
	return r;
}

/* ---- top jobs ------------------------------------------------------------------- */

/* Why job j waits, as the session over the state read said: its group's
 * reason, else the first of its pending pods' reasons; NULL when the
 * session placed it (the daemon has not bound it yet). */
static const char *wait_reason(const kb_snapshot *s, const kb_job *j, const kb_sim_result *res,
			       const kb_strmap *pending)
{
	for (size_t i = 0; i < res->groups.n; i++)
		if (strcmp(res->groups.v[i].name, j->key) == 0 && res->groups.v[i].reason)
			return res->groups.v[i].reason;
	for (uint32_t i = 0; i < j->ntasks; i++) {
		int64_t at;
		const kb_task *t = &s->tasks[s->job_tasks[j->first_task + i]];
		if (kb_strmap_get(pending, t->key, &at))
			return res->pending.v[at].reason;
	}
	if (j->invalid)
		return j->invalid;
	return NULL;
}

static int top_jobs(const kb_snapshot *s, const kb_sim_result *res, int64_t now_ms, bool json,
		    FILE *out)
{
	kb_strmap pending;
	kb_strmap_init(&pending);
	int r = 0;
	for (size_t i = 0; i < res->pending.n && r == 0; i++)
		r = kb_strmap_put(&pending, res->pending.v[i].pod, (int64_t)i);
	kb_table t = {0};
	static const char *const head[] = {"NAME", "QUEUE", "PHASE", "RUNNING/MIN", "PENDING",
					   "GPUS", "AGE", "WAITING-BECAUSE"};
	if (r == 0 && !json)
		r = kb_table_init(&t, 8, head);
	if (r < 0)
		goto out;
	if (json)
		fputs("{\n  \"jobs\": [", out);
	bool first = true;
	int gpu = s->gpu_res;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->flavor == KB_PG_NONE)
			continue;
		const char *queue = j->queue >= 0 ? s->queues[j->queue].name : "?";
		int32_t ready = kb_job_ready_count(j), npending = j->nstatus[KB_TASK_PENDING];
		bool waiting = kb_job_waiting(j);
		const char *why = NULL;
		if (waiting) {
			why = wait_reason(s, j, res, &pending);
			if (!why)
				why = "placeable now: the next session binds it";
		}
		if (j->foreign)
			why = j->invalid ? j->invalid : "another scheduler's";
		int64_t g_alloc = gpu >= 0 ? j->allocated.q[gpu] : 0, g_req = gpu >= 0 ? j->request.q[gpu] : 0;
		char rm[32], np[16], gp[64], age[32], a[24], b[24];
		(void)snprintf(rm, sizeof(rm), "%d/%d", ready, j->min_member);
		(void)snprintf(np, sizeof(np), "%d", npending);
		(void)snprintf(gp, sizeof(gp), "%s/%s", milli_num(g_alloc, a, sizeof(a)),
			       milli_num(g_req, b, sizeof(b)));
		kb_format_age(now_ms - j->creation_ms, age, sizeof(age));
		if (json) {
			fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
			first = false;
			kb_json_put_str(out, j->key);
			fputs(", \"queue\": ", out);
			kb_json_put_str(out, queue);
			fprintf(out, ", \"phase\": \"%s\", \"running\": %d, \"minMember\": %d, "
				"\"pending\": %d, \"gpusAllocated\": \"%s\", \"gpusRequested\": \"%s\", "
				"\"ageSeconds\": %" PRId64 ", \"waiting\": %s",
				kb_pg_phase_name(j->phase), ready, j->min_member, npending, a, b,
				(now_ms - j->creation_ms) / 1000, waiting ? "true" : "false");
			if (why) {
				fputs(", \"reason\": ", out);
				kb_json_put_str(out, why);
			}
			fputc('}', out);
			continue;
		}
		const char *row[] = {j->key, queue, kb_pg_phase_name(j->phase), rm, np, gp, age, why};
		if ((r = kb_table_add(&t, row)) < 0)
			goto out;
	}
	if (json)
		fputs(first ? "]\n}\n" : "\n  ]\n}\n", out);
	else
		kb_table_print(&t, out);
out:
	kb_table_release(&t);
	kb_strmap_release(&pending);
	return r;
}

/* ---- the command ---------------------------------------------------------------- */

int kb_cmd_top(int argc, char **argv)
{
	kb_live_options o;
	int st = kb_live_parse(argc, argv, 0, usage, &o);
	if (st >= 0)
		goto out_opts;
	st = 2;
	const char *what = o.args.n == 1 ? o.args.v[0] : NULL;
	if (what && strcmp(what, "node") == 0)
		what = "nodes";
	else if (what && strcmp(what, "queue") == 0)
		what = "queues";
	else if (what && strcmp(what, "job") == 0)
		what = "jobs";
	if (!what || (strcmp(what, "nodes") != 0 && strcmp(what, "queues") != 0 &&
		      strcmp(what, "jobs") != 0)) {
		if (o.args.n == 0)
			fputs("kube-batchd: top: say what: nodes, queues or jobs\n", stderr);
		else
			fprintf(stderr, "kube-batchd: top: expected nodes, queues or jobs, got \"%s\"%s\n",
				o.args.v[0], o.args.n > 1 ? " and more" : "");
		usage(stderr);
		goto out_opts;
	}
	kb_err err = {0};
	kb_live live;
	int r = kb_live_load(&o, &live, &err);
	if (r < 0) {
		st = kb_live_fail(r, &err);
		goto out_opts;
	}
	if (live.info.undecodable)
		fprintf(stderr, "kube-batchd: warning: %u objects did not decode and are left out, "
			"the first: %s\n", live.info.undecodable, live.info.first_undecodable);
	kb_snapshot snap;
	kb_snapshot_init(&snap);
	kb_sim_result res;
	memset(&res, 0, sizeof(res));
	r = kb_cluster_snapshot(&live.cluster, &snap, &err);
	/* One session over the state read, as the daemon's next would be: its
	 * queues' deserved shares and its reasons. It changes only the store's
	 * records, after the snapshot above was taken. */
	if (r == 0 && strcmp(what, "nodes") != 0)
		r = kb_live_simulate(&live, &o, 1, &res, &err);
	if (r == 0) {
		if (strcmp(what, "nodes") == 0)
			r = top_nodes(&snap, o.json, stdout);
		else if (strcmp(what, "queues") == 0)
			r = top_queues(&snap, &res, o.json, stdout);
		else
			r = top_jobs(&snap, &res, live.info.read_ms, o.json, stdout);
		if (r < 0)
			kb_err_set(&err, r, "out of memory");
	}
	st = r < 0 ? kb_live_fail(r, &err) : 0;
	kb_sim_result_release(&res);
	kb_snapshot_release(&snap);
	kb_live_release(&live);
out_opts:
	kb_live_options_release(&o);
	return st;
}

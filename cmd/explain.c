/* explain.c - `kube-batchd explain NAMESPACE/PODGROUP`: why a PodGroup
 * waits, and what would make it run, from fresh simulations of the
 * cluster's state read through the API (cmd/live.h).
 *
 * What is said comes from runs of the scheduler itself, never from a
 * guess (the scheduler's reasons: gang, predicates, queues):
 *  1. the state as read: the reasons of the scheduler's next sessions
 *     (up to TRIAL_SESSIONS), and the room the nodes have for its pods by
 *     requests alone (cmd/views.h, kb_job_shortfall);
 *  2. its pending pods placed with every other pending pod held back:
 *     does it wait behind other work?
 *  3. with every other pod gone: can it run on this cluster at all?
 *  4. if so, jobs holding room that must finish (or be preempted) before
 *     it runs: the shortest prefix of them, lowest priority then newest
 *     first, that makes room (a binary search, each step a simulation),
 *     then each of those dropped in turn while the rest still make room
 *     (up to MINIMISE_TRIALS simulations).
 * Each step reads the cluster again (the store is changed by a run):
 * 4 + log2(jobs running) + MINIMISE_TRIALS reads and simulations at most.
 * And when it would start (scheduler/estimate.h, one more simulation over
 * a copy of the first read, the pods bound ending at their duration
 * annotation, activeDeadlineSeconds, or the runtime history the finished
 * pods the API still holds tell: kube/cluster_read.h), with the daemon's
 * own estimate from the PodGroup's annotation kube-batchd.io/estimated-start
 * when it wrote one (its history also has the pods deleted since).
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/jobstatus.h"

#include "base/json_out.h"
#include "api/quantity.h"
#include "cmd/cli_cmds.h"
#include "cmd/live.h"
#include "cmd/views.h"
#include "plugins/registry.h"
#include "scheduler/estimate.h"
#include "scheduler/simulate.h"

#define TRIAL_SESSIONS 10
#define MINIMISE_TRIALS 16

static void usage(FILE *out)
{
	fputs("usage: kube-batchd explain NAMESPACE/PODGROUP [--kubeconfig F] [--master URL]\n"
	      "                           [--scheduler-conf F] [--queue-conf F] [-o|--output table|json]\n"
	      "                           [--scheduler-name N] [--default-queue Q] [--timeout D]\n"
	      "\n"
	      "Reads the cluster through the API (nothing is written) and says why the PodGroup\n"
	      "waits and what would make it run, from simulations of the scheduler over that state.\n",
	      out);
}

/* ---- one trial ------------------------------------------------------------------ */

typedef struct trial {
	bool hold_others;  /* other jobs' pending pods held back */
	bool remove_all;   /* every pod on a node but the target's gone */
	const char *const *remove; /* job keys whose pods on nodes are gone */
	uint32_t nremove;
} trial;

typedef struct trial_result {
	bool placed;
	char *reason; /* the group's reason, or NULL */
	KB_VEC(char *) binds;     /* "pod -> node" of the target's pods */
	KB_VEC(char *) evictions; /* "pod on node: reason" */
} trial_result;

static void trial_result_release(trial_result *t)
{
	free(t->reason);
	for (size_t i = 0; i < t->binds.n; i++)
		free(t->binds.v[i]);
	for (size_t i = 0; i < t->evictions.n; i++)
		free(t->evictions.v[i]);
	KB_VEC_RELEASE(&t->binds);
	KB_VEC_RELEASE(&t->evictions);
	memset(t, 0, sizeof(*t));
}

static bool in_list(const char *key, const char *const *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(v[i], key) == 0)
			return true;
	return false;
}

static int push_fmt(void *vec_, const char *a, const char *sep, const char *b)
{
	KB_VEC(char *) *vec = vec_;
	size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = malloc(n);
	if (!s)
		return -ENOMEM;
	(void)snprintf(s, n, "%s%s%s", a, sep, b);
	if (KB_VEC_PUSH(vec, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}

/* Changes the freshly read store as t says. Keys are gathered from a
 * snapshot first: holding and finishing pods changes the store. */
static int shape(kb_live *l, const char *target, const trial *t, kb_err *err)
{
	kb_snapshot s;
	kb_snapshot_init(&s);
	int r = kb_cluster_snapshot(&l->cluster, &s, err);
	KB_VEC(uint32_t) hold = {0}, gone = {0};
	for (uint32_t i = 0; i < s.ntasks && r == 0; i++) {
		const kb_task *k = &s.tasks[i];
		const char *job = k->job >= 0 ? s.jobs[k->job].key : NULL;
		if (job && strcmp(job, target) == 0)
			continue;
		if (t->hold_others && k->status == KB_TASK_PENDING && !k->foreign)
			r = KB_VEC_PUSH(&hold, i);
		else if (k->node >= 0 && kb_task_status_on_node(k->status) &&
			 (t->remove_all || (job && in_list(job, t->remove, t->nremove))))
			r = KB_VEC_PUSH(&gone, i);
	}
	for (size_t i = 0; i < hold.n && r == 0; i++)
		r = kb_cluster_hold_pod(&l->cluster, s.tasks[hold.v[i]].key, true);
	for (size_t i = 0; i < gone.n && r == 0; i++) {
		const kb_task *k = &s.tasks[gone.v[i]];
		r = kb_cluster_set_pod(&l->cluster, k->key, s.nodes[k->node].name, KB_TASK_SUCCEEDED,
				       k->started_ms, k->gpu_mask);
	}
	if (r < 0 && !err->msg[0])
		kb_err_set(err, r, "preparing a simulation: %s", strerror(-r));
	KB_VEC_RELEASE(&hold);
	KB_VEC_RELEASE(&gone);
	kb_snapshot_release(&s);
	return r;
}

/* Reads the cluster, shapes it as t says, and simulates. */
static int run_trial(const kb_live_options *o, const char *target, const trial *t,
		     trial_result *ret, kb_err *err)
{
	memset(ret, 0, sizeof(*ret));
	kb_live l;
	int r = kb_live_load(o, &l, err);
	if (r < 0)
		return r;
	kb_sim_result res;
	memset(&res, 0, sizeof(res));
	/* The target's pods, by key, before the run changes the store. */
	kb_snapshot s;
	kb_snapshot_init(&s);
	KB_VEC(char *) pods = {0};
	int32_t min_member = 1, ready = 0;
	if ((r = kb_cluster_snapshot(&l.cluster, &s, err)) == 0) {
		int32_t j = kb_snapshot_find_job(&s, target);
		if (j >= 0) {
			const kb_job *jb = &s.jobs[j];
			min_member = jb->min_member > 0 ? jb->min_member : 1;
			ready = kb_job_ready_count(jb);
			for (uint32_t i = 0; i < jb->ntasks && r == 0; i++) {
				char *k = strdup(s.tasks[s.job_tasks[jb->first_task + i]].key);
				if (!k || KB_VEC_PUSH(&pods, k) < 0) {
					free(k);
					r = -ENOMEM;
				}
			}
		}
	}
	kb_snapshot_release(&s);
	if (r == 0)
		r = shape(&l, target, t, err);
	if (r == 0)
		r = kb_live_simulate(&l, o, TRIAL_SESSIONS, &res, err);
	int32_t bound = 0;
	for (size_t i = 0; i < res.bindings.n && r == 0; i++) {
		const kb_sim_binding *b = &res.bindings.v[i];
		if (!in_list(b->pod, (const char *const *)pods.v, (uint32_t)pods.n))
			continue;
		bound++;
		r = push_fmt(&ret->binds, b->pod, " -> ", b->node);
	}
	for (size_t i = 0; i < res.evictions.n && r == 0; i++) {
		const kb_sim_eviction *e = &res.evictions.v[i];
		char where[512];
		(void)snprintf(where, sizeof(where), "%s on %s", e->pod, e->node);
		r = push_fmt(&ret->evictions, where, ": ", e->reason);
	}
	for (size_t i = 0; i < res.groups.n && r == 0; i++)
		if (strcmp(res.groups.v[i].name, target) == 0 && res.groups.v[i].reason &&
		    !(ret->reason = strdup(res.groups.v[i].reason)))
			r = -ENOMEM;
	ret->placed = ready + bound >= min_member;
	if (r == -ENOMEM && !err->msg[0])
		kb_err_set(err, r, "out of memory");
	for (size_t i = 0; i < pods.n; i++)
		free(pods.v[i]);
	KB_VEC_RELEASE(&pods);
	kb_sim_result_release(&res);
	kb_live_release(&l);
	if (r < 0)
		trial_result_release(ret);
	return r;
}

/* ---- output --------------------------------------------------------------------- */

/* What is said, gathered, then printed as text or JSON. */
typedef struct report {
	const char *name;
	const char *state; /* "running", "waiting", "placeable" */
	char summary[512];
	char estimate[640];  /* "2026-...Z (in 20.000s, after ns/a)" or "unknown: why", or "" */
	bool estimate_known;
	char annotation[128]; /* the daemon's kube-batchd.io/estimated-start, or "" */
	KB_VEC(char *) why;   /* the scheduler's reasons */
	KB_VEC(char *) fixes; /* what would make it run */
	KB_VEC(char *) detail; /* bindings or evictions a fix would bring */
} report;

static int say(void *vec_, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(void *vec_, const char *fmt, ...)
{
	KB_VEC(char *) *vec = vec_;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	if (KB_VEC_PUSH(vec, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}

static void report_release(report *rp)
{
	for (size_t i = 0; i < rp->why.n; i++)
		free(rp->why.v[i]);
	for (size_t i = 0; i < rp->fixes.n; i++)
		free(rp->fixes.v[i]);
	for (size_t i = 0; i < rp->detail.n; i++)
		free(rp->detail.v[i]);
	KB_VEC_RELEASE(&rp->why);
	KB_VEC_RELEASE(&rp->fixes);
	KB_VEC_RELEASE(&rp->detail);
}

static void print_list_json(FILE *out, const char *key, char **v, size_t n)
{
	fprintf(out, ",\n  \"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", out);
		kb_json_put_str(out, v[i]);
	}
	fputc(']', out);
}

static void report_print(const report *rp, bool json, FILE *out)
{
	if (json) {
		fputs("{\n  \"podgroup\": ", out);
		kb_json_put_str(out, rp->name);
		fputs(",\n  \"state\": ", out);
		kb_json_put_str(out, rp->state);
		fputs(",\n  \"summary\": ", out);
		kb_json_put_str(out, rp->summary);
		if (rp->estimate[0]) {
			fputs(",\n  \"estimatedStart\": ", out);
			kb_json_put_str(out, rp->estimate);
		}
		if (rp->annotation[0]) {
			fputs(",\n  \"daemonEstimatedStart\": ", out);
			kb_json_put_str(out, rp->annotation);
		}
		print_list_json(out, "why", rp->why.v, rp->why.n);
		print_list_json(out, "wouldRunIf", rp->fixes.v, rp->fixes.n);
		print_list_json(out, "detail", rp->detail.v, rp->detail.n);
		fputs("\n}\n", out);
		return;
	}
	fprintf(out, "PodGroup %s: %s\n", rp->name, rp->summary);
	if (rp->estimate[0])
		fprintf(out, "Estimated start: %s\n", rp->estimate);
	if (rp->annotation[0])
		fprintf(out, "The daemon's estimate (annotation %s): %s\n", KB_ANN_ESTIMATED_START,
			rp->annotation);
	if (rp->why.n) {
		fputs("\nWhy it waits (the scheduler's reasons):\n", out);
		for (size_t i = 0; i < rp->why.n; i++)
			fprintf(out, "  - %s\n", rp->why.v[i]);
	}
	if (rp->fixes.n) {
		fputs("\nWhat would make it run (from simulations of the cluster's state):\n", out);
		for (size_t i = 0; i < rp->fixes.n; i++) /* "  x": a sub-item */
			fprintf(out, rp->fixes.v[i][0] == ' ' ? "    %s\n" : "  - %s\n",
				rp->fixes.v[i]);
	}
	for (size_t i = 0; i < rp->detail.n; i++)
		fprintf(out, "%s    %s\n", i ? "" : "\n", rp->detail.v[i]);
}

/* ---- the rules ------------------------------------------------------------------ */

/* "nvidia.com/gpu 6, cpu 2" of what r holds (pods aside). */
static void res_list(const kb_res *r, const kb_resnames *names, char *buf, size_t n)
{
	kb_res c = *r;
	c.q[KB_RES_PODS] = 0;
	kb_res_format(&c, names, buf, n);
}

/* The shortfall by requests alone, in words. */
static int say_shortfall(report *rp, const kb_snapshot *s, uint32_t j)
{
	kb_shortfall f;
	int r = kb_job_shortfall(s, j, &f);
	if (r < 0 || f.pending == 0)
		return r;
	char need[256], missing[256];
	res_list(&f.need, &s->resnames, need, sizeof(need));
	res_list(&f.missing, &s->resnames, missing, sizeof(missing));
	if (f.fit >= f.pending)
		return say(&rp->why, "by requests alone all %u pending pods fit in the free room of "
			   "the nodes: what holds it back is the reason above, not room", f.pending);
	char shortname[KB_RES_NAME_MAX + 1] = "";
	if (f.short_res >= 0)
		(void)snprintf(shortname, sizeof(shortname), "%s", s->resnames.name[f.short_res]);
	if (missing[0])
		return say(&rp->why, "by requests alone %u of its %u pending pods fit in the free room "
			   "of the nodes (%d more needed for minMember); the other %u ask for %s in "
			   "all, and the nodes are short of %s in total%s%s",
			   f.fit, f.pending, f.needed, f.pending - f.fit, need, missing,
			   shortname[0] ? "; first short: " : "", shortname);
	return say(&rp->why, "by requests alone %u of its %u pending pods fit in the free room of "
		   "the nodes (%d more needed for minMember): the room for the other %u (%s) is "
		   "there in total but cut up between nodes (%s short on the roomiest); %u "
		   "schedulable nodes have room for one pod",
		   f.fit, f.pending, f.needed, f.pending - f.fit, need,
		   shortname[0] ? shortname : "?", f.nodes_with_room);
}

/* Jobs holding room on nodes, other than j: lowest priority, then newest
 * first (the order in which finishing them loses the least). */
typedef struct holder {
	const char *key;
	int32_t priority;
	int64_t creation_ms;
	int64_t gpus; /* milli */
	bool foreign;
} holder;

typedef KB_VEC(holder) holder_vec;

static int cmp_holder(const void *a, const void *b)
{
	const holder *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->creation_ms != y->creation_ms)
		return x->creation_ms > y->creation_ms ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int holders_of(const kb_snapshot *s, uint32_t target, holder_vec *ret)
{
	for (uint32_t j = 0; j < s->njobs; j++) {
		const kb_job *jb = &s->jobs[j];
		if (j == target || kb_job_ready_count(jb) == 0)
			continue;
		holder h = {.key = jb->key, .priority = jb->priority, .creation_ms = jb->creation_ms,
			    .gpus = s->gpu_res >= 0 ? jb->allocated.q[s->gpu_res] : 0,
			    .foreign = jb->foreign};
		if (KB_VEC_PUSH(ret, h) < 0)
			return -ENOMEM;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(holder), cmp_holder);
	return 0;
}

/* Step 4's cut: drops the holders keys[0..*n) can do without, one at a
 * time in order, while the rest still make room (at most MINIMISE_TRIALS
 * simulations). *n is updated; keys keep their order. */
static int minimise(const kb_live_options *o, const char *target, const char **keys, size_t *n,
		    kb_err *err)
{
	size_t nkeep = *n;
	uint32_t tries = 0;
	for (size_t i = 0; i < nkeep && nkeep > 1 && tries < MINIMISE_TRIALS; tries++) {
		const char *dropped = keys[i];
		memmove(&keys[i], &keys[i + 1], (nkeep - i - 1) * sizeof(keys[0]));
		trial tm = {.hold_others = true, .remove = keys, .nremove = (uint32_t)(nkeep - 1)};
		trial_result tr;
		int r = run_trial(o, target, &tm, &tr, err);
		if (r < 0)
			return r;
		bool ok = tr.placed;
		trial_result_release(&tr);
		if (ok) {
			nkeep--;
			continue;
		}
		memmove(&keys[i + 1], &keys[i], (nkeep - i - 1) * sizeof(keys[0]));
		keys[i] = dropped;
		i++;
	}
	*n = nkeep;
	return 0;
}

/* Step 4: the jobs holding room that must finish for job j to run. */
static int holders_to_finish(const kb_live_options *o, const char *target, const kb_snapshot *s,
			     uint32_t j, report *rp, kb_err *err)
{
	holder_vec holders = {0};
	KB_VEC(const char *) keys = {0};
	trial_result best = {0};
	int r = holders_of(s, j, &holders);
	for (size_t i = 0; i < holders.n && r == 0; i++)
		r = KB_VEC_PUSH(&keys, holders.v[i].key);
	if (r < 0 || holders.n == 0) {
		if (r == 0)
			r = say(&rp->fixes, "nothing that holds room: with the other pending pods held "
				"back it still is not placed, yet on an empty cluster it is");
		goto out;
	}
	/* The shortest prefix that makes room (all of them do: that is the
	 * empty cluster, but for pods of no job). */
	size_t lo = 1, hi = holders.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		trial tm = {.hold_others = true, .remove = keys.v, .nremove = (uint32_t)mid};
		trial_result tr;
		if ((r = run_trial(o, target, &tm, &tr, err)) < 0)
			goto out;
		if (tr.placed)
			hi = mid;
		else
			lo = mid + 1;
		trial_result_release(&tr);
	}
	if ((r = minimise(o, target, keys.v, &hi, err)) < 0)
		goto out;
	trial tb = {.hold_others = true, .remove = keys.v, .nremove = (uint32_t)hi};
	if ((r = run_trial(o, target, &tb, &best, err)) < 0)
		goto out;
	if (!best.placed) {
		/* Every holder's pods gone yet not placed: what the empty cluster
		 * freed beyond them are pods of no job (other schedulers' lone pods). */
		r = say(&rp->fixes, "room held by pods outside any job (other schedulers' pods) "
			"would have to go: only on an empty cluster is it placed");
		goto out;
	}
	int32_t prio = s->jobs[j].priority;
	r = say(&rp->fixes, "%zu job%s holding room would have to finish or be preempted "
		"(lowest priority, then newest first; this PodGroup's priority is %d):",
		hi, hi == 1 ? "" : "s", prio);
	for (size_t i = 0; i < hi && r == 0; i++) {
		const holder *h = NULL;
		for (size_t k = 0; k < holders.n && !h; k++)
			if (holders.v[k].key == keys.v[i])
				h = &holders.v[k];
		char g[32] = "";
		if (h->gpus)
			(void)snprintf(g, sizeof(g), ", %g GPUs", (double)h->gpus / 1000.0);
		r = say(&rp->fixes, "  %s (priority %d%s%s%s)", h->key, h->priority,
			h->priority < prio ? ", lower than it" : ", not lower than it", g,
			h->foreign ? ", another scheduler's" : "");
	}
	for (size_t i = 0; i < best.binds.n && r == 0; i++)
		r = say(&rp->detail, "then bind %s", best.binds.v[i]);
out:
	trial_result_release(&best);
	KB_VEC_RELEASE(&keys);
	KB_VEC_RELEASE(&holders);
	return r;
}

/* Steps 1 to 3, then 4, for job j of s, which waits. */
static int why_and_fixes(const kb_live_options *o, const char *target, const kb_snapshot *s,
			 uint32_t j, report *rp, kb_err *err)
{
	trial_result now = {0}, alone = {0}, empty = {0};
	trial t_now = {0};
	int r = run_trial(o, target, &t_now, &now, err);
	if (r < 0)
		goto out;
	if (now.placed) {
		rp->state = "placeable";
		r = say(&rp->fixes, "nothing: the scheduler's next sessions place it as the cluster "
			"stands (is kube-batchd running and leading?)");
		for (size_t i = 0; i < now.binds.n && r == 0; i++)
			r = say(&rp->detail, "bind %s", now.binds.v[i]);
		for (size_t i = 0; i < now.evictions.n && r == 0; i++)
			r = say(&rp->detail, "evict %s", now.evictions.v[i]);
		goto out;
	}
	if (now.reason)
		r = say(&rp->why, "%s", now.reason);
	if (r == 0)
		r = say_shortfall(rp, s, j);
	trial t_alone = {.hold_others = true};
	if (r < 0 || (r = run_trial(o, target, &t_alone, &alone, err)) < 0)
		goto out;
	if (alone.placed) {
		r = say(&rp->fixes, "less pending work ahead of it: with every other pending pod "
			"held back it would be placed now; it waits its turn behind them (queue "
			"order, priority, fair share)");
		for (size_t i = 0; i < alone.binds.n && r == 0; i++)
			r = say(&rp->detail, "bind %s", alone.binds.v[i]);
		goto out;
	}
	trial t_empty = {.hold_others = true, .remove_all = true};
	if ((r = run_trial(o, target, &t_empty, &empty, err)) < 0)
		goto out;
	if (!empty.placed) {
		char tot[256];
		res_list(&s->total_allocatable, &s->resnames, tot, sizeof(tot));
		r = say(&rp->fixes, "a bigger or different cluster: even with every other pod gone it "
			"would not be placed (%s); the schedulable nodes have %s in all",
			empty.reason ? empty.reason : "no reason given", tot);
		goto out;
	}
	r = holders_to_finish(o, target, s, j, rp, err);
out:
	trial_result_release(&now);
	trial_result_release(&alone);
	trial_result_release(&empty);
	return r;
}

/* When target would start (scheduler/estimate.h) into rp->estimate, from
 * a copy of l's store (not changed). 0 or -errno with err. */
static int say_estimate(const kb_live_options *o, kb_live *l, const char *target, report *rp,
			kb_err *err)
{
	kb_conf conf;
	int r = o->scheduler_conf ? kb_conf_load_file(o->scheduler_conf, &kb_builtin_registry, &conf, err)
				  : kb_conf_load_default(&kb_builtin_registry, &conf, err);
	if (r < 0)
		return r;
	kb_estimate_options eo = {.conf = &conf, .now_ms = l->info.read_ms,
				  .period_ms = o->period_ms, .only = target, .history = &l->history};
	kb_sim_result res;
	r = kb_estimate_run(&l->cluster, &eo, &res, err);
	const kb_sim_estimate *e = r == 0 ? kb_estimate_find(&res, target) : NULL;
	if (e && e->known) {
		char ts[32] = "?";
		time_t t = (time_t)((l->info.read_ms + e->time_ms) / 1000);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			(void)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		(void)snprintf(rp->estimate, sizeof(rp->estimate), "%s (in %" PRId64 ".%03" PRId64
			       "s%s%s%s)", ts, e->time_ms / 1000, e->time_ms % 1000,
			       e->after[0] ? ", after " : "", e->after,
			       e->after[0] ? (strchr(e->after, ',') ? " end" : " ends") : "");
		rp->estimate_known = true;
	} else if (e) {
		(void)snprintf(rp->estimate, sizeof(rp->estimate), "unknown: %s", e->unknown);
	}
	kb_sim_result_release(&res);
	kb_conf_release(&conf);
	return r;
}

/* The daemon's estimate, from the PodGroup's annotation, into rp. */
static void say_annotation(kb_live *l, const char *target, report *rp)
{
	const kb_slot *sl = kb_cluster_slot(&l->cluster, KB_KIND_PODGROUP, target);
	const char *v = sl ? kb_labels_get(&sl->obj->meta.annotations, KB_ANN_ESTIMATED_START) : NULL;
	if (v)
		(void)snprintf(rp->annotation, sizeof(rp->annotation), "%s", v);
}

static int explain(const kb_live_options *o, const char *target, report *rp, kb_err *err)
{
	kb_live live;
	kb_live_options with_history = *o; /* the first read only: the estimate's */
	with_history.read_history = true;
	int r = kb_live_load(&with_history, &live, err);
	if (r < 0)
		return r;
	kb_snapshot s;
	kb_snapshot_init(&s);
	if ((r = kb_cluster_snapshot(&live.cluster, &s, err)) < 0)
		goto out;
	int32_t j = kb_snapshot_find_job(&s, target);
	if (j < 0 || s.jobs[j].flavor == KB_PG_NONE) {
		uint32_t npg = 0;
		for (uint32_t i = 0; i < s.njobs; i++)
			npg += s.jobs[i].flavor != KB_PG_NONE;
		r = kb_err_set(err, -ENOENT,
			       "PodGroup \"%s\" not found: the API server at %s has %u PodGroups "
			       "of pods that name kube-batchd's scheduler names (give "
			       "NAMESPACE/NAME)", target, live.info.server, npg);
		goto out;
	}
	const kb_job *jb = &s.jobs[j];
	int32_t min = jb->min_member > 0 ? jb->min_member : 1, ready = kb_job_ready_count(jb);
	if (jb->foreign) {
		rp->state = "foreign";
		(void)snprintf(rp->summary, sizeof(rp->summary), "left alone: %s",
			       jb->invalid ? jb->invalid : "its pods name another scheduler");
	} else if (!kb_job_waiting(jb)) {
		rp->state = "running";
		(void)snprintf(rp->summary, sizeof(rp->summary),
			       "not waiting: phase %s, %d of minMember %d pods bound or running",
			       kb_pg_phase_name(jb->phase), ready, min);
	} else {
		rp->state = "waiting";
		(void)snprintf(rp->summary, sizeof(rp->summary),
			       "waiting: phase %s, %d of minMember %d pods bound or running, %d "
			       "pending, %d held by scheduling gates", kb_pg_phase_name(jb->phase),
			       ready, min, jb->nstatus[KB_TASK_PENDING], jb->ngated);
		say_annotation(&live, target, rp);
		r = say_estimate(o, &live, target, rp, err);
		if (r == 0)
			r = why_and_fixes(o, target, &s, (uint32_t)j, rp, err);
	}
out:
	if (r == -ENOMEM && !err->msg[0])
		kb_err_set(err, r, "out of memory");
	kb_snapshot_release(&s);
	kb_live_release(&live);
	return r;
}

int kb_cmd_explain(int argc, char **argv)
{
	kb_live_options o;
	int st = kb_live_parse(argc, argv, 0, usage, &o);
	if (st >= 0)
		goto out;
	st = 2;
	if (o.args.n != 1) {
		fputs(o.args.n ? "kube-batchd: explain: one PodGroup at a time\n"
			       : "kube-batchd: explain: which PodGroup? give NAMESPACE/NAME\n",
		      stderr);
		usage(stderr);
		goto out;
	}
	const char *target = o.args.v[0];
	const char *slash = strchr(target, '/');
	if (!slash || slash == target || !slash[1]) {
		fprintf(stderr, "kube-batchd: explain: \"%s\": expected NAMESPACE/NAME\n", target);
		usage(stderr);
		goto out;
	}
	report rp = {.name = target, .state = "?"};
	kb_err err = {0};
	int r = explain(&o, target, &rp, &err);
	if (r < 0)
		st = kb_live_fail(r, &err);
	else {
		report_print(&rp, o.json, stdout);
		st = 0;
	}
	report_release(&rp);
out:
	kb_live_options_release(&o);
	return st;
}

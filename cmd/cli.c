/* cli.c - the commands' flag tables and their handlers (see cli.h). */
#include "cmd/cli.h"

#include <errno.h>
#include <string.h>

#include "api/defaults.h"
#include "daemon/leader.h"
#include "plugins/registry.h"

/* ---- shared handlers ------------------------------------------------------------ */

/* A name that must not be empty. */
static int nonempty(const char *flag, const kb_flag_value *v, kb_err *err)
{
	if (!v->text[0])
		return kb_err_set(err, -EINVAL, "--%s: must not be empty", flag);
	return 0;
}

static int period_ms(const char *flag, const kb_flag_value *v, int64_t *ret, kb_err *err)
{
	if (v->ms <= 0)
		return kb_err_set(err, -EINVAL, "--%s: must be more than 0, got \"%s\"", flag,
				  v->text);
	*ret = v->ms;
	return 0;
}

static int push_file(kb_cli_files *files, const kb_flag_value *v, kb_err *err)
{
	if (KB_VEC_PUSH(files, v->text) < 0)
		return kb_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* ---- the daemon ------------------------------------------------------------------ */

#define D(o) ((kb_cli_daemon *)(o))

static int d_kubeconfig(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.kubeconfig = v->text;
	return 0;
}

static int d_master(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.master = v->text;
	return 0;
}

/* The first --scheduler-name replaces the default; each other adds one. */
static int d_name(void *o, const kb_flag_value *v, kb_err *err)
{
	kb_cli_daemon *c = o;
	if (nonempty("scheduler-name", v, err) < 0)
		return -EINVAL;
	if (!c->names_given) {
		c->opt.scheduler_name = v->text;
		c->names_given = true;
		return 0;
	}
	if (c->opt.nmore_scheduler_names == KB_MAX_SCHEDULER_NAMES - 1)
		return kb_err_set(err, -EINVAL, "--scheduler-name: at most %d names, \"%s\" is one too many",
				  KB_MAX_SCHEDULER_NAMES, v->text);
	c->opt.more_scheduler_names[c->opt.nmore_scheduler_names++] = v->text;
	return 0;
}

static int d_sched_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.scheduler_conf = v->text;
	return 0;
}

static int d_queue_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.queue_conf = v->text;
	return 0;
}

static int d_period(void *o, const kb_flag_value *v, kb_err *err)
{
	return period_ms("schedule-period", v, &D(o)->opt.period_ms, err);
}

static int d_delay(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.delay_ms = v->ms;
	return 0;
}

static int d_queue(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("default-queue", v, err) < 0)
		return -EINVAL;
	D(o)->opt.default_queue = v->text;
	return 0;
}

static int d_record(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("record", v, err) < 0)
		return -EINVAL;
	D(o)->opt.record = v->text;
	return 0;
}

/* The cap of the record file: at least a few KiB (the header, the
 * configuration and the stop line), at most 1 TiB. */
static int d_record_max(void *o, const kb_flag_value *v, kb_err *err)
{
	if (v->i < 4096 || v->i > (1LL << 40))
		return kb_err_set(err, -EINVAL,
				  "--record-max-bytes: expected an integer 4096..1099511627776, got "
				  "\"%s\"",
				  v->text);
	D(o)->opt.record_max_bytes = (uint64_t)v->i;
	return 0;
}

static int d_qps(void *o, const kb_flag_value *v, kb_err *err)
{
	if (!(v->d >= 0) || v->d > 1e9)
		return kb_err_set(err, -EINVAL,
				  "--kube-api-qps: expected a number >= 0 (0: no client-side "
				  "limit), got \"%s\"",
				  v->text);
	D(o)->opt.qps = v->d;
	return 0;
}

static int d_burst(void *o, const kb_flag_value *v, kb_err *err)
{
	if (v->i < 1 || v->i > 1000000)
		return kb_err_set(err, -EINVAL,
				  "--kube-api-burst: expected an integer 1..1000000, got \"%s\"",
				  v->text);
	D(o)->opt.burst = (int)v->i;
	return 0;
}

static int d_listen(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.listen_address = v->text;
	return 0;
}

static int d_healthz(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.healthz_address = v->text;
	D(o)->healthz_given = true;
	return 0;
}

static int d_enable_healthz(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->enable_healthz = v->b;
	return 0;
}

static int d_enable_metrics(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->enable_metrics = v->b;
	return 0;
}

static int d_leader(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->opt.leader_elect = v->b;
	return 0;
}

static int d_lease_duration(void *o, const kb_flag_value *v, kb_err *err)
{
	return period_ms("leader-elect-lease-duration", v, &D(o)->opt.lease_duration_ms, err);
}

static int d_renew_deadline(void *o, const kb_flag_value *v, kb_err *err)
{
	return period_ms("leader-elect-renew-deadline", v, &D(o)->opt.renew_deadline_ms, err);
}

static int d_retry_period(void *o, const kb_flag_value *v, kb_err *err)
{
	return period_ms("leader-elect-retry-period", v, &D(o)->opt.retry_period_ms, err);
}

static int d_lease_ns(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("leader-elect-resource-namespace", v, err) < 0)
		return -EINVAL;
	D(o)->resource_namespace = v->text;
	return 0;
}

static int d_lock_ns(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->lock_object_namespace = v->text; /* "" leaves the other flag in force */
	return 0;
}

static int d_lease_name(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("leader-elect-resource-name", v, err) < 0)
		return -EINVAL;
	D(o)->opt.lease_name = v->text;
	return 0;
}

static int d_lease_lock(void *o, const kb_flag_value *v, kb_err *err)
{
	if (strcmp(v->text, "leases") != 0)
		return kb_err_set(err, -EINVAL,
				  "--leader-elect-resource-lock: only \"leases\" (a "
				  "coordination.k8s.io/v1 Lease), got \"%s\"",
				  v->text);
	return 0;
}

static int d_sharding(void *o, const kb_flag_value *v, kb_err *err)
{
	if (strcmp(v->text, "none") != 0)
		return kb_err_set(err, -EINVAL,
				  "--scheduler-sharding-mode: only \"none\" (one scheduler sees "
				  "every node; no sharding here), got \"%s\"",
				  v->text);
	return 0;
}

static int d_v(void *o, const kb_flag_value *v, kb_err *err)
{
	if (v->i < 0 || v->i > 10)
		return kb_err_set(err, -EINVAL, "--v: expected a level 0..10, got \"%s\"", v->text);
	D(o)->verbosity = (int)v->i;
	return 0;
}

static int d_logtostderr(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->logtostderr = v->b;
	return 0;
}

static int d_also(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->also_stderr = v->b;
	return 0;
}

static int d_log_file(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->log_file = v->text[0] ? v->text : NULL; /* klog: "" is no file */
	return 0;
}

static int d_format(void *o, const kb_flag_value *v, kb_err *err)
{
	if (strcmp(v->text, "text") == 0)
		D(o)->log_format = KB_LOG_TEXT;
	else if (strcmp(v->text, "json") == 0)
		D(o)->log_format = KB_LOG_JSON;
	else
		return kb_err_set(err, -EINVAL, "--logging-format: expected text or json, got \"%s\"",
				  v->text);
	return 0;
}

static int d_version(void *o, const kb_flag_value *v, kb_err *err)
{
	D(o)->version = v->b;
	return 0;
}

#define S KB_FLAG_STRING
#define B KB_FLAG_BOOL
#define T KB_FLAG_DURATION
#define I KB_FLAG_INT
#define N KB_FLAG_NUMBER
/* A flag of another scheduler that is accepted and ignored, or refused. */
#define IGNORED(name, kind, meta, why) {name, 0, kind, meta, NULL, NULL, NULL, why, false}
#define REFUSED(name, kind, meta, why) {name, 0, kind, meta, NULL, NULL, NULL, why, true}

static const kb_flag daemon_flags[] = {
	{"kubeconfig", 0, S, "FILE", "$KUBECONFIG, else in-cluster",
	 "kubeconfig file with the API server and credentials", d_kubeconfig, NULL, false},
	{"master", 0, S, "URL", NULL, "the API server's address (overrides the kubeconfig's)",
	 d_master, NULL, false},
	{"scheduler-name", 0, S, "NAME", KB_DEFAULT_SCHEDULER_NAME,
	 "schedule the pods whose schedulerName is NAME; up to 8 times, reports as the first",
	 d_name, NULL, false},
	{"scheduler-conf", 0, S, "FILE", "built in",
	 "scheduler configuration (kube-batch's format: actions and tiers)", d_sched_conf, NULL,
	 false},
	{"queue-conf", 0, S, "FILE", NULL, "queue configuration file, reloaded when it changes",
	 d_queue_conf, NULL, false},
	{"schedule-period", 0, T, "DURATION", "1s", "a session at least this often", d_period,
	 NULL, false},
	{"schedule-delay", 0, T, "DURATION", "150ms",
	 "a session once changes have stopped this long; 0: only on the period", d_delay, NULL,
	 false},
	{"default-queue", 0, S, "QUEUE", KB_DEFAULT_QUEUE, "the queue of jobs that name none",
	 d_queue, NULL, false},
	{"record", 0, S, "FILE", NULL,
	 "write every object change received and every decision to FILE, for `kube-batchd replay`",
	 d_record, NULL, false},
	{"record-max-bytes", 0, I, "N", "1073741824",
	 "the cap of the --record file; past it recording stops with a last line saying so",
	 d_record_max, NULL, false},
	{"kube-api-qps", 0, N, "QPS", "0", "client-side request rate limit; 0: none", d_qps, NULL,
	 false},
	{"kube-api-burst", 0, I, "N", "400", "burst of the client-side limit", d_burst, NULL,
	 false},
	{"listen-address", 0, S, "HOST:PORT", "127.0.0.1:10251",
	 "/healthz, /readyz, /livez and /metrics; \"\" turns the listener off", d_listen, NULL,
	 false},
	{"healthz-address", 0, S, "HOST:PORT", ":11251",
	 "a second listener with the same paths (volcano's health port); on when given or with "
	 "--enable-healthz",
	 d_healthz, NULL, false},
	{"enable-healthz", 0, B, NULL, "false", "start the --healthz-address listener",
	 d_enable_healthz, NULL, false},
	{"enable-metrics", 0, B, NULL, "true",
	 "volcano's switch: /metrics is always served on --listen-address", d_enable_metrics,
	 NULL, false},
	{"leader-elect", 0, B, NULL, "false", "schedule only while holding the Lease",
	 d_leader, NULL, false},
	{"leader-elect-lease-duration", 0, T, "DURATION", "15s",
	 "how long a lease not renewed stays its holder's", d_lease_duration, NULL, false},
	{"leader-elect-renew-deadline", 0, T, "DURATION", "10s",
	 "a leader that could not renew this long stops", d_renew_deadline, NULL, false},
	{"leader-elect-retry-period", 0, T, "DURATION", "2s",
	 "how often the lease is read and renewed", d_retry_period, NULL, false},
	{"leader-elect-resource-namespace", 0, S, "NAMESPACE", "kube-system",
	 "the Lease's namespace", d_lease_ns, NULL, false},
	{"leader-elect-resource-name", 0, S, "NAME", "the first --scheduler-name",
	 "the Lease's name", d_lease_name, NULL, false},
	{"leader-elect-resource-lock", 0, S, "KIND", "leases", "the lock's kind: only leases",
	 d_lease_lock, NULL, false},
	{"lock-object-namespace", 0, S, "NAMESPACE", NULL,
	 "kube-batch's name for --leader-elect-resource-namespace; wins over it", d_lock_ns,
	 NULL, false},
	{"scheduler-sharding-mode", 0, S, "MODE", "none", "volcano's: only none", d_sharding,
	 NULL, false},
	{"v", 'v', I, "LEVEL", "0", "log verbosity 0..10", d_v, NULL, false},
	{"logging-format", 0, S, "FORMAT", "text",
	 "text (klog's layout) or json (component-base's: ts, caller, msg, v)", d_format, NULL,
	 false},
	{"log-file", 0, S, "FILE", "none: stderr", "append the log lines to FILE instead",
	 d_log_file, NULL, false},
	{"alsologtostderr", 0, B, NULL, "false", "with --log-file, log to stderr as well",
	 d_also, NULL, false},
	{"logtostderr", 0, B, NULL, "true", "log to stderr unless --log-file is given",
	 d_logtostderr, NULL, false},
	{"version", 0, B, NULL, NULL, "print the version and exit", d_version, NULL, false},

	/* kube-batch (cmd/kube-batch/app/options) */
	IGNORED("enable-preemption", B, NULL, "the actions come from --scheduler-conf"),
	IGNORED("enable-backfill", B, NULL, "the actions come from --scheduler-conf"),
	/* volcano (cmd/scheduler/app/options) */
	IGNORED("resync-period", T, "DURATION",
		"there is no periodic resync: watches resume from their resourceVersion"),
	IGNORED("priority-class", B, NULL, "PriorityClasses are always honoured"),
	IGNORED("minimum-feasible-nodes", I, "N", "every node is considered in every session"),
	IGNORED("minimum-percentage-nodes-to-find", I, "PERCENT",
		"every node is considered in every session"),
	IGNORED("percentage-nodes-to-find", I, "PERCENT",
		"every node is considered in every session"),
	IGNORED("plugins-dir", S, "DIR", "plugins are built in; none are loaded from files"),
	IGNORED("enable-pprof", B, NULL, "there is no Go profiler; profile with perf"),
	IGNORED("csi-storage", B, NULL, "CSI storage capacity is not tracked"),
	IGNORED("cache-dumper", B, NULL, "there is no cache dumper"),
	IGNORED("cache-dump-dir", S, "DIR", "there is no cache dumper"),
	IGNORED("node-worker-threads", I, "N", "one event loop handles every object"),
	IGNORED("gate-removal-worker-num", I, "N", "scheduling gates are not removed here"),
	IGNORED("ignored-provisioners", S, "LIST", "volume provisioners are not considered"),
	IGNORED("resource-sync-timeout", T, "DURATION",
		"sessions start once every watch has synced"),
	IGNORED("disable-default-scheduler-config", B, NULL,
		"a bad --scheduler-conf always stops the start-up"),
	IGNORED("scheduler-sharding-name", S, "NAME", "there is no sharding"),
	IGNORED("feature-gates", S, "GATES", "there are no feature gates"),
	IGNORED("ca-cert-file", S, "FILE", "the health and metrics listeners are plain HTTP"),
	IGNORED("tls-cert-file", S, "FILE", "the health and metrics listeners are plain HTTP"),
	IGNORED("tls-private-key-file", S, "FILE",
		"the health and metrics listeners are plain HTTP"),
	REFUSED("node-selector", S, "LABEL",
		"kube-batchd schedules onto every node; ignoring the selector would place pods on "
		"nodes it was meant to keep out"),
	/* kube-scheduler (component-base, cmd/kube-scheduler/app/options) */
	REFUSED("config", S, "FILE",
		"kube-scheduler's configuration file is not read; give --scheduler-conf "
		"(kube-batch's format) and the flags"),
	IGNORED("kube-api-content-type", S, "TYPE", "the client speaks JSON"),
	IGNORED("bind-address", S, "IP", "the listeners are --listen-address and --healthz-address"),
	IGNORED("secure-port", I, "PORT",
		"the listeners are --listen-address and --healthz-address, plain HTTP"),
	IGNORED("authentication-kubeconfig", S, "FILE", "the listeners do not authenticate"),
	IGNORED("authorization-kubeconfig", S, "FILE", "the listeners do not authorize"),
	IGNORED("profiling", B, NULL, "there is no Go profiler; profile with perf"),
	IGNORED("contention-profiling", B, NULL, "there is no Go profiler; profile with perf"),
	IGNORED("log-flush-frequency", T, "DURATION", "each log line is written at once"),
	/* klog */
	IGNORED("vmodule", S, "PATTERN=N,...",
		"there is no per-file verbosity; -v applies everywhere"),
	IGNORED("log-dir", S, "DIR", "logs go to --log-file or stderr"),
	IGNORED("log-file-max-size", I, "MB",
		"the log file is not rotated here (logrotate with copytruncate does)"),
	IGNORED("stderrthreshold", S, "SEVERITY", "every line goes to stderr or --log-file"),
	IGNORED("skip-headers", B, NULL, "every line has its header"),
	IGNORED("skip-log-headers", B, NULL, "the log file has no header lines"),
	IGNORED("add-dir-header", B, NULL, "lines name the file, not its directory"),
	IGNORED("one-output", B, NULL, "a line is written once per destination"),
	IGNORED("log-backtrace-at", S, "FILE:LINE", "there are no backtraces in the log"),
};

const kb_flag_set kb_cli_daemon_flags = {
	.command = "kube-batchd",
	.synopsis = "[FLAGS]   (cluster mode; also: kube-batchd simulate|check-config --help)",
	.about = "Schedules the pods that name it, against the API server of --kubeconfig or of\n"
		 "the pod it runs in. DURATION is Go's form (\"1m30s\", \"250ms\", \"1.5h\") or "
		 "seconds (\"1.5\").\nkube-batch's, volcano's and kube-scheduler's flags work "
		 "unchanged (below: those that mean\nnothing here). Exit status: 0 after SIGTERM, "
		 "1 when start-up fails, 2 on a usage error.",
	.flags = daemon_flags,
	.nflags = sizeof(daemon_flags) / sizeof(daemon_flags[0]),
};

/* volcano's chart passes "2>&1" as an argument (no shell reads it). */
static bool shell_redirection(const char *a)
{
	return strcmp(a, "2>&1") == 0;
}

/* With --leader-elect, client-go's rule (component-base checks it the same
 * way): lease duration > renew deadline > retry period. Says which flags
 * break it on msgs. */
static bool leader_timing_bad(const kb_daemon_options *o, FILE *msgs)
{
	int64_t lease = o->lease_duration_ms ? o->lease_duration_ms : KB_LEADER_DEFAULT_LEASE_MS;
	int64_t renew = o->renew_deadline_ms ? o->renew_deadline_ms : KB_LEADER_DEFAULT_RENEW_MS;
	int64_t retry = o->retry_period_ms ? o->retry_period_ms : KB_LEADER_DEFAULT_RETRY_MS;
	if (lease <= renew) {
		fprintf(msgs,
			"kube-batchd: --leader-elect-lease-duration (%lld ms) must be more than "
			"--leader-elect-renew-deadline (%lld ms)\n",
			(long long)lease, (long long)renew);
		return true;
	}
	if (renew <= retry) {
		fprintf(msgs,
			"kube-batchd: --leader-elect-renew-deadline (%lld ms) must be more than "
			"--leader-elect-retry-period (%lld ms)\n",
			(long long)renew, (long long)retry);
		return true;
	}
	return false;
}

int kb_cli_daemon_parse(int argc, char **argv, kb_cli_daemon *c, FILE *msgs)
{
	*c = (kb_cli_daemon){
		.opt =
			{
				.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
				.default_queue = KB_DEFAULT_QUEUE,
				.registry = &kb_builtin_registry,
				.listen_address = "127.0.0.1:10251",
				.period_ms = KB_DEFAULT_PERIOD_MS,
				.delay_ms = 150,
				.qps = 0, /* API Priority and Fairness is the limit */
				.burst = 400,
			},
		.logtostderr = true,
		.enable_metrics = true,
	};
	int first = 0;
	int r = kb_flags_parse(&kb_cli_daemon_flags, argc, argv, c, msgs, &first);
	if (r != 0)
		return r;
	for (int i = first; i < argc; i++) {
		if (!shell_redirection(argv[i])) {
			fprintf(msgs, "kube-batchd: unexpected argument \"%s\" (kube-batchd --help "
				      "lists the flags)\n",
				argv[i]);
			return -EINVAL;
		}
		fprintf(msgs, "kube-batchd: warning: argument \"%s\" is ignored: it is a shell "
			      "redirection and no shell reads the args (stderr is the log already)\n",
			argv[i]);
	}
	if (c->opt.leader_elect && leader_timing_bad(&c->opt, msgs))
		return -EINVAL;
	c->opt.lease_namespace = c->lock_object_namespace && c->lock_object_namespace[0]
					 ? c->lock_object_namespace
					 : c->resource_namespace;
	if (!c->healthz_given && c->enable_healthz)
		c->opt.healthz_address = ":11251"; /* volcano's default */
	if (c->opt.healthz_address && c->opt.listen_address &&
	    strcmp(c->opt.healthz_address, c->opt.listen_address) == 0)
		c->opt.healthz_address = NULL; /* the one listener serves both */
	if (!c->enable_metrics)
		fputs("kube-batchd: warning: --enable-metrics=false is ignored: /metrics is always "
		      "served on --listen-address\n",
		      msgs);
	if (!c->logtostderr && !c->log_file)
		fputs("kube-batchd: warning: --logtostderr=false without --log-file: the log stays "
		      "on stderr\n",
		      msgs);
	return 0;
}

/* ---- simulate --------------------------------------------------------------------- */

#define SIM(o) ((kb_cli_simulate *)(o))

static int s_file(void *o, const kb_flag_value *v, kb_err *err)
{
	return push_file(&SIM(o)->files, v, err);
}

static int s_sched_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	SIM(o)->opt.scheduler_conf = v->text;
	return 0;
}

static int s_queue_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	SIM(o)->opt.queue_conf = v->text;
	return 0;
}

static int s_output(void *o, const kb_flag_value *v, kb_err *err)
{
	if (strcmp(v->text, "json") == 0)
		SIM(o)->opt.output = KB_SIM_JSON;
	else if (strcmp(v->text, "table") == 0)
		SIM(o)->opt.output = KB_SIM_TABLE;
	else
		return kb_err_set(err, -EINVAL, "--output: expected json or table, got \"%s\"",
				  v->text);
	return 0;
}

static int s_period(void *o, const kb_flag_value *v, kb_err *err)
{
	return period_ms("schedule-period", v, &SIM(o)->opt.period_ms, err);
}

static int s_max(void *o, const kb_flag_value *v, kb_err *err)
{
	SIM(o)->opt.max_time_ms = v->ms;
	return 0;
}

static int s_name(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("scheduler-name", v, err) < 0)
		return -EINVAL;
	SIM(o)->opt.scheduler_name = v->text;
	return 0;
}

static int s_queue(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("default-queue", v, err) < 0)
		return -EINVAL;
	SIM(o)->opt.default_queue = v->text;
	return 0;
}

static const kb_flag simulate_flags[] = {
	{"file", 'f', S, "FILE", NULL, "Kubernetes manifests of the scenario; repeatable, at least one",
	 s_file, NULL, false},
	{"scheduler-conf", 0, S, "FILE", "built in", "scheduler configuration", s_sched_conf,
	 NULL, false},
	{"queue-conf", 0, S, "FILE", NULL, "queue configuration file", s_queue_conf, NULL, false},
	{"output", 'o', S, "FORMAT", "json", "json or table", s_output, NULL, false},
	{"schedule-period", 0, T, "DURATION", "1s", "virtual time between sessions", s_period,
	 NULL, false},
	{"scheduler-name", 0, S, "NAME", KB_DEFAULT_SCHEDULER_NAME,
	 "schedule the pods whose schedulerName is NAME", s_name, NULL, false},
	{"default-queue", 0, S, "QUEUE", KB_DEFAULT_QUEUE, "the queue of jobs that name none",
	 s_queue, NULL, false},
	{"max-time", 0, T, "DURATION", "720h", "stop the simulation at this virtual time", s_max,
	 NULL, false},
};

const kb_flag_set kb_cli_simulate_flags = {
	.command = "kube-batchd simulate",
	.synopsis = "-f FILE... [FLAGS]",
	.about = "Runs the scheduler on the manifests in virtual time, with no cluster, and prints\n"
		 "the bindings, evictions, pending pods, PodGroups and queues. Exit status: 0,\n"
		 "1 when the input is wrong (the message names the file and line), 2 on a usage "
		 "error.",
	.flags = simulate_flags,
	.nflags = sizeof(simulate_flags) / sizeof(simulate_flags[0]),
};

int kb_cli_simulate_parse(int argc, char **argv, kb_cli_simulate *c, FILE *msgs)
{
	*c = (kb_cli_simulate){
		.opt =
			{
				.output = KB_SIM_JSON,
				.period_ms = KB_DEFAULT_PERIOD_MS,
				.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
				.default_queue = KB_DEFAULT_QUEUE,
				.registry = &kb_builtin_registry,
			},
	};
	int first = 0;
	int r = kb_flags_parse(&kb_cli_simulate_flags, argc, argv, c, msgs, &first);
	if (r != 0)
		return r;
	if (first < argc) {
		fprintf(msgs, "kube-batchd: unexpected argument \"%s\" (manifests are given with -f)\n",
			argv[first]);
		return -EINVAL;
	}
	if (c->files.n == 0) {
		fputs("kube-batchd: simulate needs at least one -f FILE\n", msgs);
		return -EINVAL;
	}
	c->opt.files = c->files.v;
	c->opt.nfiles = (uint32_t)c->files.n;
	return 0;
}

void kb_cli_simulate_release(kb_cli_simulate *c)
{
	KB_VEC_RELEASE(&c->files);
}

/* ---- check-config ----------------------------------------------------------------- */

#define CC(o) ((kb_cli_check_config *)(o))

static int c_file(void *o, const kb_flag_value *v, kb_err *err)
{
	return push_file(&CC(o)->files, v, err);
}

static int c_sched_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	CC(o)->opt.scheduler_conf = v->text;
	return 0;
}

static int c_queue_conf(void *o, const kb_flag_value *v, kb_err *err)
{
	CC(o)->opt.queue_conf = v->text;
	return 0;
}

static int c_name(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("scheduler-name", v, err) < 0)
		return -EINVAL;
	CC(o)->opt.scheduler_name = v->text;
	return 0;
}

static int c_queue(void *o, const kb_flag_value *v, kb_err *err)
{
	if (nonempty("default-queue", v, err) < 0)
		return -EINVAL;
	CC(o)->opt.default_queue = v->text;
	return 0;
}

static const kb_flag check_config_flags[] = {
	{"queue-conf", 0, S, "FILE", NULL, "the queue configuration file to check", c_queue_conf,
	 NULL, false},
	{"scheduler-conf", 0, S, "FILE", NULL, "the scheduler configuration to check",
	 c_sched_conf, NULL, false},
	{"file", 'f', S, "FILE", NULL,
	 "cluster manifests (Nodes, Queues, PodGroups ...) to check against; repeatable", c_file,
	 NULL, false},
	{"scheduler-name", 0, S, "NAME", KB_DEFAULT_SCHEDULER_NAME,
	 "the scheduler name the PodGroups are checked for", c_name, NULL, false},
	{"default-queue", 0, S, "QUEUE", KB_DEFAULT_QUEUE, "the queue of jobs that name none",
	 c_queue, NULL, false},
};

const kb_flag_set kb_cli_check_config_flags = {
	.command = "kube-batchd check-config",
	.synopsis = "[--queue-conf F] [--scheduler-conf F] [-f CLUSTER.yaml]... [FLAGS]",
	.about = "Validates the queue configuration, the scheduler configuration and the cluster\n"
		 "manifests, and prints the queue tree with the share each queue would deserve on\n"
		 "that cluster when every queue is hungry. Exit status: 0 valid, 1 invalid, 2 usage.",
	.flags = check_config_flags,
	.nflags = sizeof(check_config_flags) / sizeof(check_config_flags[0]),
};

int kb_cli_check_config_parse(int argc, char **argv, kb_cli_check_config *c, FILE *msgs)
{
	*c = (kb_cli_check_config){
		.opt =
			{
				.scheduler_name = KB_DEFAULT_SCHEDULER_NAME,
				.default_queue = KB_DEFAULT_QUEUE,
				.registry = &kb_builtin_registry,
			},
	};
	int first = 0;
	int r = kb_flags_parse(&kb_cli_check_config_flags, argc, argv, c, msgs, &first);
	if (r != 0)
		return r;
	if (first < argc) {
		fprintf(msgs, "kube-batchd: unexpected argument \"%s\" (manifests are given with -f)\n",
			argv[first]);
		return -EINVAL;
	}
	if (!c->opt.queue_conf && !c->opt.scheduler_conf && c->files.n == 0) {
		fputs("kube-batchd: check-config needs something to check: --queue-conf, "
		      "--scheduler-conf or -f\n",
		      msgs);
		return -EINVAL;
	}
	c->opt.files = c->files.v;
	c->opt.nfiles = (uint32_t)c->files.n;
	return 0;
}

void kb_cli_check_config_release(kb_cli_check_config *c)
{
	KB_VEC_RELEASE(&c->files);
}

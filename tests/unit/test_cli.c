/* test_cli.c - the command line: each kind of flag, the peers' flags
 * (supported, ignored with a warning, refused), the errors, --help, and the
 * man page listing exactly the tables' flags. argv[1] is docs/kube-batchd.8. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/cli.h"
#include "cmd/flags.h"

static const char *man_path;

/* A writable argv ("kube-batchd" first) from a NULL-terminated list, and
 * the messages stream. */
typedef struct run {
	char *argv[64];
	int argc;
	char *msgs;
	size_t nmsgs;
	FILE *f;
} run;

static void run_init(run *r, const char *const *args)
{
	*r = (run){0};
	r->argv[r->argc++] = strdup("kube-batchd");
	for (; *args; args++)
		r->argv[r->argc++] = strdup(*args);
	r->f = open_memstream(&r->msgs, &r->nmsgs);
	assert_non_null(r->f);
}

/* The messages written so far (NUL-terminated). */
static const char *run_msgs(run *r)
{
	fflush(r->f);
	return r->msgs ? r->msgs : "";
}

static void run_release(run *r)
{
	fclose(r->f);
	free(r->msgs);
	for (int i = 0; i < r->argc; i++)
		free(r->argv[i]);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Parses the daemon's flags; returns kb_cli_daemon_parse's result. */
static int daemon_parse(run *r, const char *const *args, kb_cli_daemon *c)
{
	run_init(r, args);
	return kb_cli_daemon_parse(r->argc, r->argv, c, r->f);
}

/* An error naming each of the words. */
static void expect_error(const char *const *args, const char *w1, const char *w2)
{
	run r;
	kb_cli_daemon c;
	int rc = daemon_parse(&r, args, &c);
	const char *m = run_msgs(&r);
	if (rc != -EINVAL || !strstr(m, w1) || (w2 && !strstr(m, w2)))
		fail_msg("args \"%s\": got %d and \"%s\", expected -EINVAL naming \"%s\" and \"%s\"",
			 args[0], rc, m, w1, w2 ? w2 : "");
	assert_null(strchr(strchr(m, '\n') + 1, '\n')); /* one line */
	run_release(&r);
}

static void defaults_without_flags(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--kubeconfig=k"), &c), 0);
	assert_string_equal(c.opt.kubeconfig, "k");
	assert_string_equal(c.opt.scheduler_name, "kube-batchd");
	assert_string_equal(c.opt.default_queue, "default");
	assert_string_equal(c.opt.listen_address, "127.0.0.1:10251");
	assert_null(c.opt.healthz_address);
	assert_int_equal(c.opt.period_ms, 1000);
	assert_int_equal(c.opt.delay_ms, 150);
	assert_int_equal(c.opt.burst, 400);
	assert_false(c.opt.leader_elect);
	assert_null(c.opt.lease_namespace);
	assert_null(c.opt.lease_name);
	assert_int_equal(c.opt.lease_duration_ms, 0); /* leader.c's defaults */
	assert_int_equal(c.verbosity, 0);
	assert_int_equal(c.log_format, KB_LOG_TEXT);
	assert_null(c.log_file);
	assert_string_equal(run_msgs(&r), "");
	run_release(&r);
}

static void each_kind_of_value(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r,
				      ARGS("--master", "https://x:6443",  /* string, separate */
					   "--queue-conf=q.yaml",             /* string, = */
					   "--leader-elect",                  /* bare bool */
					   "--enable-healthz=T",              /* Go's bool forms */
					   "--schedule-period=1m30s",         /* duration */
					   "--schedule-delay", "0.25",        /* seconds */
					   "--kube-api-burst=7",              /* int */
					   "--kube-api-qps", "2.5",           /* number */
					   "-v", "4"),                        /* shorthand */
				      &c),
			 0);
	assert_string_equal(c.opt.master, "https://x:6443");
	assert_string_equal(c.opt.queue_conf, "q.yaml");
	assert_true(c.opt.leader_elect);
	assert_string_equal(c.opt.healthz_address, ":11251");
	assert_int_equal(c.opt.period_ms, 90000);
	assert_int_equal(c.opt.delay_ms, 250);
	assert_int_equal(c.opt.burst, 7);
	assert_true(c.opt.qps == 2.5);
	assert_int_equal(c.verbosity, 4);
	run_release(&r);

	/* -v=3 (volcano's chart), --v 3 (kube-batch's), --leader-elect=false */
	assert_int_equal(daemon_parse(&r, ARGS("-v=3", "--leader-elect=false"), &c), 0);
	assert_int_equal(c.verbosity, 3);
	assert_false(c.opt.leader_elect);
	run_release(&r);
	assert_int_equal(daemon_parse(&r, ARGS("--v", "2"), &c), 0);
	assert_int_equal(c.verbosity, 2);
	run_release(&r);
}

static void lease_flags_fill_the_options(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r,
				      ARGS("--leader-elect", "--leader-elect-lease-duration=60s",
					   "--leader-elect-renew-deadline=20s",
					   "--leader-elect-retry-period=500ms",
					   "--leader-elect-resource-namespace=volcano-system",
					   "--leader-elect-resource-name=vc-scheduler",
					   "--leader-elect-resource-lock=leases"),
				      &c),
			 0);
	assert_int_equal(c.opt.lease_duration_ms, 60000);
	assert_int_equal(c.opt.renew_deadline_ms, 20000);
	assert_int_equal(c.opt.retry_period_ms, 500);
	assert_string_equal(c.opt.lease_namespace, "volcano-system");
	assert_string_equal(c.opt.lease_name, "vc-scheduler");
	run_release(&r);

	/* kube-batch's --lock-object-namespace wins, before or after (volcano's rule) */
	assert_int_equal(daemon_parse(&r,
				      ARGS("--lock-object-namespace=kb",
					   "--leader-elect-resource-namespace=other"),
				      &c),
			 0);
	assert_string_equal(c.opt.lease_namespace, "kb");
	run_release(&r);
	assert_int_equal(daemon_parse(&r,
				      ARGS("--leader-elect-resource-namespace=other",
					   "--lock-object-namespace="),
				      &c),
			 0);
	assert_string_equal(c.opt.lease_namespace, "other");
	run_release(&r);
}

static void scheduler_names_repeat_up_to_eight(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--scheduler-name=a", "--scheduler-name", "b"), &c),
			 0);
	assert_string_equal(c.opt.scheduler_name, "a");
	assert_int_equal(c.opt.nmore_scheduler_names, 1);
	assert_string_equal(c.opt.more_scheduler_names[0], "b");
	run_release(&r);
	expect_error(ARGS("--scheduler-name=1", "--scheduler-name=2", "--scheduler-name=3",
			  "--scheduler-name=4", "--scheduler-name=5", "--scheduler-name=6",
			  "--scheduler-name=7", "--scheduler-name=8", "--scheduler-name=9"),
		     "--scheduler-name", "\"9\"");
	expect_error(ARGS("--scheduler-name="), "--scheduler-name", "empty");
}

static void logging_flags(void **state)
{
	run r;
	kb_cli_daemon c;
	/* klog's underscores are dashes, as component-base normalises them */
	assert_int_equal(daemon_parse(&r,
				      ARGS("--log_file=/tmp/x.log", "--alsologtostderr",
					   "--logging-format=json", "--logtostderr"),
				      &c),
			 0);
	assert_string_equal(c.log_file, "/tmp/x.log");
	assert_true(c.also_stderr);
	assert_int_equal(c.log_format, KB_LOG_JSON);
	assert_string_equal(run_msgs(&r), "");
	run_release(&r);
	assert_int_equal(daemon_parse(&r, ARGS("--logtostderr=false"), &c), 0);
	assert_non_null(strstr(run_msgs(&r), "warning: --logtostderr=false without --log-file"));
	run_release(&r);
	expect_error(ARGS("--logging-format=yaml"), "--logging-format", "\"yaml\"");
}

static void ignored_flags_warn_once_each(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r,
				      ARGS("--vmodule=gang=4", "--percentage-nodes-to-find=30",
					   "--priority-class=false", "--kubeconfig=k"),
				      &c),
			 0);
	const char *m = run_msgs(&r);
	assert_non_null(strstr(m, "kube-batchd: warning: --vmodule is ignored: "));
	assert_non_null(strstr(m, "kube-batchd: warning: --percentage-nodes-to-find is ignored: "));
	assert_non_null(strstr(m, "kube-batchd: warning: --priority-class is ignored: "));
	int lines = 0;
	for (const char *p = m; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 3);
	assert_string_equal(c.opt.kubeconfig, "k"); /* the rest still applies */
	run_release(&r);

	/* an ignored flag's value is still checked */
	expect_error(ARGS("--percentage-nodes-to-find=lots"), "--percentage-nodes-to-find",
		     "\"lots\"");
	expect_error(ARGS("--resync-period=soon"), "--resync-period", "\"soon\"");
}

static void enable_metrics_false_and_redirection_warn(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--enable-metrics=false", "2>&1"), &c), 0);
	assert_non_null(strstr(run_msgs(&r), "warning: --enable-metrics=false is ignored"));
	assert_non_null(strstr(run_msgs(&r), "warning: argument \"2>&1\" is ignored"));
	run_release(&r);
	expect_error(ARGS("--kubeconfig=k", "stray"), "unexpected argument", "\"stray\"");
}

static void healthz_address_rules(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--healthz-address=127.0.0.1:9"), &c), 0);
	assert_string_equal(c.opt.healthz_address, "127.0.0.1:9"); /* given: on */
	run_release(&r);
	assert_int_equal(daemon_parse(&r, ARGS("--enable-healthz=false"), &c), 0);
	assert_null(c.opt.healthz_address);
	run_release(&r);
	/* the same address as --listen-address: one listener */
	assert_int_equal(daemon_parse(&r,
				      ARGS("--listen-address=:8080", "--healthz-address=:8080"), &c),
			 0);
	assert_null(c.opt.healthz_address);
	run_release(&r);
}

static void errors_name_the_flag_and_value(void **state)
{
	expect_error(ARGS("--bogus"), "unknown flag \"--bogus\"", "--help");
	expect_error(ARGS("--kubec=x"), "unknown flag \"--kubec=x\"", NULL); /* no abbreviations */
	expect_error(ARGS("-q"), "unknown flag \"-q\"", NULL);
	expect_error(ARGS("--kubeconfig"), "--kubeconfig needs a value", NULL);
	expect_error(ARGS("--leader-elect=maybe"), "--leader-elect", "\"maybe\"");
	expect_error(ARGS("--schedule-period=1x"), "--schedule-period", "\"1x\"");
	expect_error(ARGS("--schedule-period=0s"), "--schedule-period", "\"0s\"");
	expect_error(ARGS("--leader-elect-lease-duration=-1s"), "--leader-elect-lease-duration",
		     "\"-1s\"");
	expect_error(ARGS("--kube-api-burst=many"), "--kube-api-burst", "\"many\"");
	expect_error(ARGS("--kube-api-burst=0"), "--kube-api-burst", "\"0\"");
	expect_error(ARGS("--kube-api-qps=fast"), "--kube-api-qps", "\"fast\"");
	expect_error(ARGS("-v=11"), "--v", "\"11\"");
	expect_error(ARGS("--leader-elect-resource-lock=endpoints"),
		     "--leader-elect-resource-lock", "\"endpoints\"");
	expect_error(ARGS("--scheduler-sharding-mode=hard"), "--scheduler-sharding-mode", "\"hard\"");
	expect_error(ARGS("--node-selector=volcano.sh/role:train"), "--node-selector",
		     "not supported");
	expect_error(ARGS("--config=/etc/kubernetes/scheduler.yaml"), "--config", "not supported");
	/* durations out of client-go's order, with --leader-elect only */
	expect_error(ARGS("--leader-elect", "--leader-elect-renew-deadline=20s"),
		     "--leader-elect-lease-duration (15000 ms)", "--leader-elect-renew-deadline (20000 ms)");
	expect_error(ARGS("--leader-elect", "--leader-elect-retry-period=10s"),
		     "--leader-elect-renew-deadline (10000 ms)", "--leader-elect-retry-period (10000 ms)");
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--leader-elect-renew-deadline=20s"), &c), 0);
	run_release(&r);
}

static void help_is_asked_for(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r, ARGS("--kubeconfig=k", "--help"), &c), KB_FLAGS_HELP);
	run_release(&r);
	assert_int_equal(daemon_parse(&r, ARGS("-h"), &c), KB_FLAGS_HELP);
	run_release(&r);
}

/* --help prints one line per flag: the supported ones with their help and
 * default, the others with "ignored:" or "refused:" and why. */
static void help_has_a_line_per_flag(const kb_flag_set *set)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	kb_flags_help(set, f);
	fclose(f);
	for (size_t i = 0; i < set->nflags; i++) {
		const kb_flag *fl = &set->flags[i];
		char want[160], sh[8] = "    ";
		if (fl->shorthand)
			snprintf(sh, sizeof(sh), "-%c, ", fl->shorthand);
		snprintf(want, sizeof(want), "\n  %s--%s%s%s ", sh, fl->name, fl->metavar ? " " : "",
			 fl->metavar ? fl->metavar : "");
		const char *line = strstr(out, want);
		if (!line)
			fail_msg("%s --help has no line for --%s", set->command, fl->name);
		line++;
		const char *end = strchr(line, '\n');
		char buf[512];
		snprintf(buf, sizeof(buf), "%.*s", (int)(end - line), line);
		if (fl->why) {
			assert_non_null(strstr(buf, fl->refused ? "refused: " : "ignored: "));
			assert_non_null(strstr(buf, fl->why));
		} else {
			if (!strstr(buf, fl->help))
				fail_msg("--%s's help line lacks its help: %s", fl->name, buf);
			if (fl->def) {
				char d[128];
				snprintf(d, sizeof(d), "(default %s)", fl->def);
				if (!strstr(buf, d))
					fail_msg("--%s's help line has no \"%s\": %s", fl->name, d, buf);
			}
		}
	}
	assert_non_null(strstr(out, "--help"));
	free(out);
}

static void help_lines(void **state)
{
	help_has_a_line_per_flag(&kb_cli_daemon_flags);
	help_has_a_line_per_flag(&kb_cli_simulate_flags);
	help_has_a_line_per_flag(&kb_cli_check_config_flags);
}

static void simulate_and_check_config(void **state)
{
	run r;
	kb_cli_simulate s;
	run_init(&r, ARGS("-f", "a.yaml", "--file=b.yaml", "-o", "table", "--max-time=2h"));
	assert_int_equal(kb_cli_simulate_parse(r.argc, r.argv, &s, r.f), 0);
	assert_int_equal(s.opt.nfiles, 2);
	assert_string_equal(s.opt.files[1], "b.yaml");
	assert_int_equal(s.opt.output, KB_SIM_TABLE);
	assert_int_equal(s.opt.max_time_ms, 7200000);
	kb_cli_simulate_release(&s);
	run_release(&r);

	run_init(&r, ARGS("--output=yaml", "-f", "a"));
	assert_int_equal(kb_cli_simulate_parse(r.argc, r.argv, &s, r.f), -EINVAL);
	assert_non_null(strstr(run_msgs(&r), "--output: expected json or table, got \"yaml\""));
	kb_cli_simulate_release(&s);
	run_release(&r);

	run_init(&r, ARGS("--output=json"));
	assert_int_equal(kb_cli_simulate_parse(r.argc, r.argv, &s, r.f), -EINVAL);
	assert_non_null(strstr(run_msgs(&r), "at least one -f"));
	kb_cli_simulate_release(&s);
	run_release(&r);

	/* the daemon's flags are not simulate's */
	run_init(&r, ARGS("-f", "a", "--leader-elect"));
	assert_int_equal(kb_cli_simulate_parse(r.argc, r.argv, &s, r.f), -EINVAL);
	assert_non_null(strstr(run_msgs(&r), "unknown flag \"--leader-elect\""));
	kb_cli_simulate_release(&s);
	run_release(&r);

	kb_cli_check_config cc;
	run_init(&r, ARGS("--queue-conf", "q.yaml", "-f", "c.yaml"));
	assert_int_equal(kb_cli_check_config_parse(r.argc, r.argv, &cc, r.f), 0);
	assert_string_equal(cc.opt.queue_conf, "q.yaml");
	assert_int_equal(cc.opt.nfiles, 1);
	kb_cli_check_config_release(&cc);
	run_release(&r);
	run_init(&r, ARGS("--scheduler-name=x"));
	assert_int_equal(kb_cli_check_config_parse(r.argc, r.argv, &cc, r.f), -EINVAL);
	assert_non_null(strstr(run_msgs(&r), "needs something to check"));
	kb_cli_check_config_release(&cc);
	run_release(&r);
}

/* volcano's chart (installer/helm/chart/volcano/templates/scheduler.yaml)
 * and kube-batch's (deployment/kube-batch/templates) as they pass them. */
static void peers_deployment_args_parse(void **state)
{
	run r;
	kb_cli_daemon c;
	assert_int_equal(daemon_parse(&r,
				      ARGS("--logtostderr",
					   "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
					   "--scheduler-name=volcano", "--enable-healthz=true",
					   "--enable-metrics=true", "--leader-elect=true",
					   "--leader-elect-resource-namespace=volcano-system",
					   "--kube-api-qps=2000", "--kube-api-burst=2000",
					   "--schedule-period=1s", "--node-worker-threads=20",
					   "--percentage-nodes-to-find=100", "-v=3", "2>&1"),
				      &c),
			 0);
	assert_string_equal(c.opt.scheduler_name, "volcano");
	assert_true(c.opt.leader_elect);
	assert_string_equal(c.opt.lease_namespace, "volcano-system");
	assert_string_equal(c.opt.healthz_address, ":11251");
	assert_int_equal(c.verbosity, 3);
	run_release(&r);
	assert_int_equal(daemon_parse(&r, ARGS("--logtostderr", "--v", "3"), &c), 0);
	assert_int_equal(c.verbosity, 3);
	assert_string_equal(run_msgs(&r), "");
	run_release(&r);
}

/* Whether text has "\-\-name" not followed by another letter of a name. */
static bool man_lists(const char *text, const char *name)
{
	char want[96];
	snprintf(want, sizeof(want), "\\-\\-%s", name);
	for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) {
		char next = p[strlen(want)];
		if (!(next == '-' || (next >= 'a' && next <= 'z') || (next >= '0' && next <= '9')))
			return true;
	}
	return false;
}

static bool in_tables(const char *name)
{
	const kb_flag_set *sets[] = {&kb_cli_daemon_flags, &kb_cli_simulate_flags,
				     &kb_cli_check_config_flags};
	if (strcmp(name, "help") == 0)
		return true;
	for (size_t s = 0; s < 3; s++)
		for (size_t i = 0; i < sets[s]->nflags; i++)
			if (strcmp(sets[s]->flags[i].name, name) == 0)
				return true;
	return false;
}

static void man_page_lists_every_flag_and_no_other(void **state)
{
	FILE *f = fopen(man_path, "r");
	if (!f)
		fail_msg("cannot open the man page \"%s\"", man_path);
	char *text = calloc(1, 1 << 20);
	size_t n = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(n > 0);
	const kb_flag_set *sets[] = {&kb_cli_daemon_flags, &kb_cli_simulate_flags,
				     &kb_cli_check_config_flags};
	for (size_t s = 0; s < 3; s++)
		for (size_t i = 0; i < sets[s]->nflags; i++)
			if (!man_lists(text, sets[s]->flags[i].name))
				fail_msg("%s: no \\-\\-%s (a flag of %s)", man_path,
					 sets[s]->flags[i].name, sets[s]->command);
	/* and every flag it names is one */
	for (const char *p = strstr(text, "\\-\\-"); p; p = strstr(p + 1, "\\-\\-")) {
		char name[96];
		size_t k = 0;
		for (const char *q = p + 4; k + 1 < sizeof(name) &&
					    (*q == '-' || (*q >= 'a' && *q <= 'z') ||
					     (*q >= '0' && *q <= '9'));
		     q++)
			name[k++] = *q;
		name[k] = '\0';
		while (k > 0 && name[k - 1] == '-') /* "\-\-leader-elect-" never ends a name */
			name[--k] = '\0';
		if (k && !in_tables(name))
			fail_msg("%s names \\-\\-%s, which no table has", man_path, name);
	}
	free(text);
}

int main(int argc, char **argv)
{
	man_path = argc > 1 ? argv[1] : "docs/kube-batchd.8";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_without_flags),
		cmocka_unit_test(each_kind_of_value),
		cmocka_unit_test(lease_flags_fill_the_options),
		cmocka_unit_test(scheduler_names_repeat_up_to_eight),
		cmocka_unit_test(logging_flags),
		cmocka_unit_test(ignored_flags_warn_once_each),
		cmocka_unit_test(enable_metrics_false_and_redirection_warn),
		cmocka_unit_test(healthz_address_rules),
		cmocka_unit_test(errors_name_the_flag_and_value),
		cmocka_unit_test(help_is_asked_for),
		cmocka_unit_test(help_lines),
		cmocka_unit_test(simulate_and_check_config),
		cmocka_unit_test(peers_deployment_args_parse),
		cmocka_unit_test(man_page_lists_every_flag_and_no_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * exec_cred.c - exec credential plugins (see exec_cred.h for the protocol,
 * the cache, the cost of running synchronously and the limits).
 *
 * A run: posix_spawnp() the command in a process group of its own, stdin
 * /dev/null, stdout and stderr on pipes, every other descriptor closed and
 * every signal at its default; poll() both pipes until both end or the
 * deadline; reap the process (polling waitpid until the deadline); then
 * parse standard output with base/json_doc.h. A run that times out or
 * writes too much has its whole process group killed (SIGKILL) and reaped.
 */
#include "kube/exec_cred.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json_doc.h"
#include "base/json_out.h"
#include "base/log.h"

extern char **environ;

#define STDERR_LOG_MAX ((size_t)64 << 10)
#define EXEC_INFO_ENV "KUBERNETES_EXEC_INFO"

struct kb_exec_plugin {
	int refs;
	char *kubeconfig, *user, *api_version, *install_hint;
	char **argv; /* command, args..., NULL */
	char **env;  /* the kubeconfig's "NAME=value", NULL-terminated */
	char *info;  /* KUBERNETES_EXEC_INFO's value */
	long timeout_ms;
	size_t output_max;
	bool have; /* cred holds a credential */
	kb_exec_credential cred;
	uint64_t runs;
	bool failed; /* the last run failed: `failure` until retry_at */
	double retry_at;
	kb_err failure;
};

/* ---- small helpers ---------------------------------------------------------- */

static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

static void cred_release(kb_exec_credential *c)
{
	free_secret(c->token);
	free_secret(c->cert_pem);
	free_secret(c->key_pem);
	uint64_t gen = c->generation;
	memset(c, 0, sizeof(*c));
	c->generation = gen;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* A NULL-terminated copy of first (if non-NULL) followed by v[0..n). */
static char **strv_dup(const char *first, const char *const *v, size_t n)
{
	size_t k = first ? 1 : 0;
	char **out = calloc(n + k + 1, sizeof(*out));
	if (!out)
		return NULL;
	if (first && !(out[0] = strdup(first)))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!(out[k + i] = strdup(v[i])))
			goto fail;
	return out;
fail:
	strv_free(out);
	return NULL;
}

/* The length of the NAME in "NAME=value". */
static size_t env_name_len(const char *e)
{
	const char *eq = strchr(e, '=');
	return eq ? (size_t)(eq - e) : strlen(e);
}

static bool env_same_name(const char *a, const char *b)
{
	size_t n = env_name_len(a);
	return n == env_name_len(b) && strncmp(a, b, n) == 0;
}

/* ---- KUBERNETES_EXEC_INFO ----------------------------------------------------- */

/* The ExecCredential client-go writes (runtime.Encode with its JSON
 * serializer: the fields in its order, empty ones left out, a newline at
 * the end). NULL on ENOMEM. */
static char *make_info(const kb_exec_spec *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputs("{\"kind\":\"ExecCredential\",\"apiVersion\":", f);
	kb_json_put_str(f, s->api_version);
	fputs(",\"spec\":{", f);
	if (s->provide_cluster_info) {
		fputs("\"cluster\":{\"server\":", f);
		kb_json_put_str(f, s->server);
		if (s->insecure)
			fputs(",\"insecure-skip-tls-verify\":true", f);
		if (s->ca_pem && *s->ca_pem) {
			size_t n = strlen(s->ca_pem);
			unsigned char *b64 = malloc(4 * ((n + 2) / 3) + 1);
			if (b64) {
				(void)EVP_EncodeBlock(b64, (const unsigned char *)s->ca_pem, (int)n);
				fprintf(f, ",\"certificate-authority-data\":\"%s\"", (char *)b64);
				free(b64);
			} else {
				fputc('\0', f); /* marks the text as failed below */
			}
		}
		fprintf(f, ",\"config\":%s},", s->config_json ? s->config_json : "null");
	}
	fputs("\"interactive\":false}}\n", f);
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad || strlen(text) != len) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	return text;
}

/* ---- lifecycle ------------------------------------------------------------------ */

int kb_exec_plugin_new(const kb_exec_spec *s, kb_exec_plugin **ret, kb_err *err)
{
	kb_exec_plugin *p = calloc(1, sizeof(*p));
	if (!p)
		return kb_err_set(err, -ENOMEM, "out of memory");
	p->refs = 1;
	p->timeout_ms = KB_EXEC_TIMEOUT_MS;
	p->output_max = KB_EXEC_OUTPUT_MAX;
	if (!(p->kubeconfig = strdup(s->kubeconfig ? s->kubeconfig : "kubeconfig")) ||
	    !(p->user = strdup(s->user ? s->user : "")) ||
	    !(p->api_version = strdup(s->api_version)) ||
	    (s->install_hint && !(p->install_hint = strdup(s->install_hint))) ||
	    !(p->argv = strv_dup(s->command, s->args, s->nargs)) ||
	    !(p->env = strv_dup(NULL, s->env, s->nenv)) || !(p->info = make_info(s))) {
		kb_exec_plugin_unref(p);
		return kb_err_set(err, -ENOMEM, "out of memory");
	}
	*ret = p;
	return 0;
}

kb_exec_plugin *kb_exec_plugin_ref(kb_exec_plugin *p)
{
	if (p)
		p->refs++;
	return p;
}

kb_exec_plugin *kb_exec_plugin_unref(kb_exec_plugin *p)
{
	if (!p || --p->refs > 0)
		return NULL;
	cred_release(&p->cred);
	free(p->kubeconfig);
	free(p->user);
	free(p->api_version);
	free(p->install_hint);
	strv_free(p->argv);
	strv_free(p->env);
	free(p->info);
	free(p);
	return NULL;
}

void kb_exec_plugin_set_limits(kb_exec_plugin *p, long timeout_ms, size_t output_max)
{
	if (timeout_ms > 0)
		p->timeout_ms = timeout_ms;
	if (output_max > 0)
		p->output_max = output_max;
}

uint64_t kb_exec_plugin_runs(const kb_exec_plugin *p)
{
	return p ? p->runs : 0;
}

char *kb_exec_plugin_info(const kb_exec_plugin *p)
{
	return strdup(p->info);
}

/* ---- one run ---------------------------------------------------------------------- */

/* What a run collected. */
typedef struct run_io {
	kb_buf out;
	bool e2big;
	char line[1024]; /* a stderr line being gathered (a longer one is cut) */
	size_t line_len;
	size_t err_logged;
} run_io;

/* The plugin's environment: ours, less the names the kubeconfig sets and
 * KUBERNETES_EXEC_INFO, then the kubeconfig's (a later one of a name wins,
 * as Go's exec keeps the last), then KUBERNETES_EXEC_INFO. The strings are
 * borrowed but for the last entry's, at [n-1]: the caller frees it. */
static char **make_envp(const kb_exec_plugin *p)
{
	size_t nours = 0, nconf = 0;
	while (environ && environ[nours])
		nours++;
	while (p->env[nconf])
		nconf++;
	char **envp = calloc(nours + nconf + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < nours; i++) {
		bool replaced = env_same_name(environ[i], EXEC_INFO_ENV "=");
		for (size_t j = 0; j < nconf && !replaced; j++)
			replaced = env_same_name(environ[i], p->env[j]);
		if (!replaced)
			envp[n++] = environ[i];
	}
	for (size_t j = 0; j < nconf; j++) {
		bool later = env_same_name(p->env[j], EXEC_INFO_ENV "=");
		for (size_t k = j + 1; k < nconf && !later; k++)
			later = env_same_name(p->env[j], p->env[k]);
		if (!later)
			envp[n++] = p->env[j];
	}
	if (asprintf(&envp[n], EXEC_INFO_ENV "=%s", p->info) < 0) {
		free(envp);
		return NULL;
	}
	return envp;
}

static void free_envp(char **envp)
{
	size_t n = 0;
	while (envp[n])
		n++;
	if (n > 0)
		free(envp[n - 1]);
	free(envp);
}

/* Starts the plugin with its stdout on out_fd and stderr on err_fd. 0 with
 * *ret_pid, or -errno (glibc's posix_spawnp reports a failed exec). */
static int spawn_plugin(const kb_exec_plugin *p, int out_fd, int err_fd, pid_t *ret_pid)
{
	char **envp = make_envp(p);
	if (!envp)
		return -ENOMEM;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int e = posix_spawn_file_actions_init(&fa);
	if (e) {
		free_envp(envp);
		return -e;
	}
	if ((e = posix_spawnattr_init(&attr))) {
		(void)posix_spawn_file_actions_destroy(&fa);
		free_envp(envp);
		return -e;
	}
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	if (!(e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
	    !(e = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) &&
	    !(e = posix_spawn_file_actions_adddup2(&fa, err_fd, 2)) &&
	    !(e = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) &&
	    !(e = posix_spawnattr_setpgroup(&attr, 0)) &&
	    !(e = posix_spawnattr_setsigmask(&attr, &none)) &&
	    !(e = posix_spawnattr_setsigdefault(&attr, &all)) &&
	    !(e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
							  POSIX_SPAWN_SETSIGDEF)))
		e = posix_spawnp(ret_pid, p->argv[0], &fa, &attr, p->argv, envp);
	(void)posix_spawnattr_destroy(&attr);
	(void)posix_spawn_file_actions_destroy(&fa);
	free_envp(envp);
	return -e;
}

/* One stderr line to the log, while under the limit. */
static void log_line(const kb_exec_plugin *p, run_io *io)
{
	if (io->line_len == 0 || io->err_logged >= STDERR_LOG_MAX)
		return;
	io->err_logged += io->line_len;
	kb_warn("exec plugin \"%s\" of user \"%s\" (%s): %.*s", p->argv[0], p->user, p->kubeconfig,
		(int)io->line_len, io->line);
	io->line_len = 0;
}

static void take_stderr(const kb_exec_plugin *p, run_io *io, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n') {
			log_line(p, io);
			io->line_len = 0;
		} else if (io->line_len < sizeof(io->line)) {
			io->line[io->line_len++] = b[i];
		}
	}
}

/* 0, or -ENOMEM; sets e2big (and keeps nothing more) past the limit. */
static int take_stdout(const kb_exec_plugin *p, run_io *io, const char *b, size_t n)
{
	int r = kb_buf_append(&io->out, b, n, p->output_max);
	if (r == -E2BIG) {
		io->e2big = true;
		return 0;
	}
	return r;
}

/* Reads both pipes until both end, the output passes the limit or the
 * deadline. 0, -ETIMEDOUT, -E2BIG, -ENOMEM or a poll/read error. */
static int collect_output(const kb_exec_plugin *p, int out_fd, int err_fd, double deadline, run_io *io)
{
	struct pollfd fds[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
	char buf[16384];
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		double left = deadline - kb_mono_s();
		if (left <= 0)
			return -ETIMEDOUT;
		int k = poll(fds, 2, (int)(left * 1000.0) + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				fds[i].fd = -1; /* the end (or an error: the same for us) */
				continue;
			}
			if (i == 1) {
				take_stderr(p, io, buf, (size_t)n);
			} else if (take_stdout(p, io, buf, (size_t)n) < 0) {
				return -ENOMEM;
			} else if (io->e2big) {
				return -E2BIG;
			}
		}
	}
	log_line(p, io); /* a last line without its newline */
	return 0;
}

/* Waits for pid until the deadline; kills its group then. 0 with *status,
 * or -ETIMEDOUT (killed and reaped). */
static int reap_plugin(pid_t pid, double deadline, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (kb_mono_s() >= deadline)
			break;
		struct timespec ts = {0, 2000000L}; /* 2 ms */
		(void)nanosleep(&ts, NULL); /* an early wake-up only polls again */
	}
	(void)kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

/* ---- failures, named --------------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static int pfail(const kb_exec_plugin *p, kb_err *err,
						       int code, const char *fmt, ...)
{
	char what[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap); /* an error text: a long one is cut */
	va_end(ap);
	return kb_err_set(err, code, "%s: user \"%s\": exec plugin \"%s\": %s", p->kubeconfig,
			  p->user, p->argv[0], what);
}

static const char *install_hint_of(const kb_exec_plugin *p)
{
	return p->install_hint ? p->install_hint : "";
}

static int exit_error(const kb_exec_plugin *p, int status, kb_err *err)
{
	const char *sep = p->install_hint ? " (install hint: " : "";
	const char *end = p->install_hint ? ")" : "";
	if (WIFSIGNALED(status))
		return pfail(p, err, -EPERM, "killed by signal %d%s%s%s", WTERMSIG(status), sep,
			     install_hint_of(p), end);
	return pfail(p, err, -EPERM, "failed with exit code %d%s%s%s", WEXITSTATUS(status), sep,
		     install_hint_of(p), end);
}

/* ---- the output ------------------------------------------------------------------ */

/* The string at key of m: NULL when absent or null; -EPROTO when not a string. */
static int out_str(const kb_exec_plugin *p, const kb_yaml_node *m, const char *key,
		   const char **ret, kb_err *err)
{
	const kb_yaml_node *n = kb_yaml_get(m, key);
	*ret = NULL;
	if (kb_yaml_is_null(n))
		return 0;
	if (n->kind != KB_YAML_SCALAR)
		return pfail(p, err, -EPROTO, "its output's %s is not a string", key);
	*ret = n->len ? n->str : NULL;
	return 0;
}

/* Checks the output's apiVersion, kind and status; the strings it returns
 * point into the tree. */
static int check_output(const kb_exec_plugin *p, const kb_yaml_node *root, const char **tok,
			const char **cert, const char **key, const char **exp, kb_err *err)
{
	const char *api, *kind;
	if (!root || root->kind != KB_YAML_MAP)
		return pfail(p, err, -EPROTO, "its output is not a JSON object");
	int r;
	if ((r = out_str(p, root, "apiVersion", &api, err)) < 0 ||
	    (r = out_str(p, root, "kind", &kind, err)) < 0)
		return r;
	if (!api || strcmp(api, p->api_version) != 0)
		return pfail(p, err, -EPROTO,
			     "it is configured to use apiVersion %s, its output has apiVersion %s",
			     p->api_version, api ? api : "(none)");
	if (!kind || strcmp(kind, "ExecCredential") != 0)
		return pfail(p, err, -EPROTO, "its output is a %s, not an ExecCredential",
			     kind ? kind : "(no kind)");
	const kb_yaml_node *st = kb_yaml_get(root, "status");
	if (kb_yaml_is_null(st) || st->kind != KB_YAML_MAP)
		return pfail(p, err, -EPROTO, "its output has no status");
	if ((r = out_str(p, st, "token", tok, err)) < 0 ||
	    (r = out_str(p, st, "clientCertificateData", cert, err)) < 0 ||
	    (r = out_str(p, st, "clientKeyData", key, err)) < 0 ||
	    (r = out_str(p, st, "expirationTimestamp", exp, err)) < 0)
		return r;
	if (!*tok && !*cert && !*key)
		return pfail(p, err, -EPROTO,
			     "its output's status has neither a token nor "
			     "clientCertificateData and clientKeyData");
	if (!*cert != !*key)
		return pfail(p, err, -EPROTO, "its output's status has %s without %s",
			     *cert ? "clientCertificateData" : "clientKeyData",
			     *cert ? "clientKeyData" : "clientCertificateData");
	return 0;
}

static int parse_output(kb_exec_plugin *p, const run_io *io, kb_exec_credential *ret, kb_err *err)
{
	kb_yaml_file f;
	kb_err jerr = {0};
	int r = kb_json_load_buffer(io->out.data, io->out.len, "output", &f, &jerr);
	if (r < 0)
		return pfail(p, err, r == -ENOMEM ? -ENOMEM : -EPROTO,
			     "its output is not an ExecCredential: %s", jerr.msg);
	const char *tok = NULL, *cert = NULL, *key = NULL, *exp = NULL;
	r = check_output(p, f.ndocs ? f.docs[0] : NULL, &tok, &cert, &key, &exp, err);
	kb_exec_credential c = {0};
	if (r == 0 && exp && kb_rfc3339_parse(exp, &c.expiry) < 0)
		r = pfail(p, err, -EPROTO,
			  "its output's status.expirationTimestamp \"%s\" is not an RFC 3339 time",
			  exp);
	if (r == 0 && ((tok && !(c.token = strdup(tok))) || (cert && !(c.cert_pem = strdup(cert))) ||
		       (key && !(c.key_pem = strdup(key)))))
		r = pfail(p, err, -ENOMEM, "out of memory");
	kb_yaml_file_release(&f);
	if (r < 0) {
		cred_release(&c);
		return r;
	}
	*ret = c;
	return 0;
}

/* Runs the plugin once: 0 with *ret, or an error as kb_exec_plugin_get's. */
static int run_plugin(kb_exec_plugin *p, kb_exec_credential *ret, kb_err *err)
{
	int out[2], errp[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		return pfail(p, err, -errno, "cannot make a pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0) {
		int e = errno;
		(void)close(out[0]);
		(void)close(out[1]);
		return pfail(p, err, -e, "cannot make a pipe: %s", strerror(e));
	}
	double deadline = kb_mono_s() + (double)p->timeout_ms / 1000.0;
	pid_t pid;
	p->runs++;
	int r = spawn_plugin(p, out[1], errp[1], &pid);
	(void)close(out[1]);
	(void)close(errp[1]);
	run_io io = {0};
	int status = 0;
	if (r == 0) {
		r = collect_output(p, out[0], errp[0], deadline, &io);
		if (r < 0) /* a timeout or too much output: the group goes */
			(void)kill(-pid, SIGKILL);
		int w = reap_plugin(pid, r < 0 ? 0 : deadline, &status);
		if (r == 0)
			r = w;
	}
	(void)close(out[0]);
	(void)close(errp[0]);
	if (r == -ENOENT)
		r = pfail(p, err, r, "executable not found%s%s", p->install_hint ? ": " : "", install_hint_of(p));
	else if (r == -ETIMEDOUT)
		r = pfail(p, err, r, "still running after %ld ms: killed", p->timeout_ms);
	else if (r == -E2BIG)
		r = pfail(p, err, r, "wrote more than %zu bytes to standard output: killed",
			  p->output_max);
	else if (r < 0)
		r = pfail(p, err, r, "cannot run it: %s", strerror(-r));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		r = exit_error(p, status, err);
	else
		r = parse_output(p, &io, ret, err);
	if (io.out.data)
		explicit_bzero(io.out.data, io.out.len);
	kb_buf_release(&io.out);
	return r;
}

/* ---- the cache --------------------------------------------------------------------- */

int kb_exec_plugin_get(kb_exec_plugin *p, const kb_exec_credential **ret, kb_err *err)
{
	time_t now = time(NULL);
	if (p->have && (p->cred.expiry == 0 || now < p->cred.expiry)) {
		*ret = &p->cred;
		return 0;
	}
	if (p->failed && kb_mono_s() < p->retry_at) {
		if (err)
			*err = p->failure;
		return p->failure.code;
	}
	kb_exec_credential c;
	int r = run_plugin(p, &c, &p->failure);
	if (r < 0) {
		p->failed = true;
		p->retry_at = kb_mono_s() + (double)KB_EXEC_RETRY_MS / 1000.0;
		if (err)
			*err = p->failure;
		return r;
	}
	p->failed = false;
	uint64_t gen = p->cred.generation + 1;
	cred_release(&p->cred);
	p->cred = c;
	p->cred.generation = gen;
	p->have = true;
	*ret = &p->cred;
	return 0;
}

void kb_exec_plugin_invalidate(kb_exec_plugin *p, uint64_t generation)
{
	if (p && p->have && p->cred.generation == generation) {
		cred_release(&p->cred);
		p->have = false;
	}
}

/* ---- RFC 3339 ---------------------------------------------------------------------- */

/* n digits at *s as a number; advances *s past them. -1 when they are not
 * all digits (*s then stays on the first that is not, never past the end). */
static int rfc_digits(const char **s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (**s < '0' || **s > '9')
			return -1;
		v = v * 10 + (**s - '0');
		(*s)++;
	}
	return v;
}

/* Whether *s is one of chars (not the NUL); advances past it if so. */
static bool skip_char(const char **s, const char *chars)
{
	if (!**s || !strchr(chars, **s))
		return false;
	(*s)++;
	return true;
}

/* "+hh:mm", "-hh:mm" or "Z" at *s as seconds east of UTC; -1 when not one. */
static int zone_offset(const char **s, int *ret)
{
	if (skip_char(s, "Zz")) {
		*ret = 0;
		return 0;
	}
	int sign = **s == '-' ? -1 : 1;
	if (!skip_char(s, "+-"))
		return -1;
	int oh = rfc_digits(s, 2);
	int om = oh >= 0 && skip_char(s, ":") ? rfc_digits(s, 2) : -1;
	if (oh < 0 || oh > 23 || om < 0 || om > 59)
		return -1;
	*ret = sign * (oh * 3600 + om * 60);
	return 0;
}

int kb_rfc3339_parse(const char *s, int64_t *ret)
{
	const char *q = s;
	int Y = rfc_digits(&q, 4);
	int M = Y >= 0 && skip_char(&q, "-") ? rfc_digits(&q, 2) : -1;
	int D = M >= 0 && skip_char(&q, "-") ? rfc_digits(&q, 2) : -1;
	int h = D >= 0 && skip_char(&q, "Tt ") ? rfc_digits(&q, 2) : -1;
	int m = h >= 0 && skip_char(&q, ":") ? rfc_digits(&q, 2) : -1;
	int sec = m >= 0 && skip_char(&q, ":") ? rfc_digits(&q, 2) : -1;
	if (Y < 0 || M < 1 || M > 12 || D < 1 || D > 31 || h < 0 || h > 23 || m < 0 || m > 59 ||
	    sec < 0 || sec > 60)
		return -EINVAL;
	if (skip_char(&q, ".")) {
		if (rfc_digits(&q, 1) < 0)
			return -EINVAL;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	int off;
	if (zone_offset(&q, &off) < 0 || *q)
		return -EINVAL;
	struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D,
			.tm_hour = h, .tm_min = m, .tm_sec = sec};
	time_t t = timegm(&tm);
	if (sec < 60 && tm.tm_mday != D) /* 31 February and the like */
		return -EINVAL;
	*ret = (int64_t)t - off;
	return 0;
}

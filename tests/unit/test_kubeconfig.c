/* test_kubeconfig.c - kubeconfig and in-cluster configuration, and the API
 * client's parts that need no server: base64, token-file rotation, and a
 * request to a port nobody listens on. (Line framing and the token bucket
 * have their own tests: test_line_framer.c, test_token_bucket.c.)
 *
 * The client's internals are static, so this test includes the two source
 * files; it links kb_core and curl/OpenSSL/libev, not the kb_client
 * library. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/exec_cred.c"
#include "kube/kube_client.c"
#include "kube/kubeconfig.c"

/* ---- helpers ---------------------------------------------------------------- */

static char tmpdir[256];

static int make_tmpdir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/kb-kubeconfig.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int remove_tmpdir(void **state)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Writes text to tmpdir/name; returns the full path (static buffer). */
static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void assert_contains(const char *s, const char *want)
{
	if (!s || !strstr(s, want))
		fail_msg("\"%s\" lacks \"%s\"", s ? s : "(null)", want);
}

/* ---- base64 ----------------------------------------------------------------- */

static void base64_decodes_with_and_without_padding(void **state)
{
	size_t n;
	char *s = kb_base64_decode("aGVsbG8=", 8, &n);
	assert_string_equal(s, "hello");
	assert_int_equal(n, 5);
	free(s);
	s = kb_base64_decode("aGVsbG8", 7, &n);
	assert_string_equal(s, "hello");
	free(s);
	s = kb_base64_decode("aGVs\nbG8h\n", 10, &n); /* line breaks as in PEM bundles */
	assert_string_equal(s, "hello!");
	free(s);
	s = kb_base64_decode("", 0, &n);
	assert_int_equal(n, 0);
	free(s);
}

static void base64_padding_is_not_decoded_as_data(void **state)
{
	size_t n;
	/* "==": one byte in the last group; "=": two. EVP_DecodeBlock counts
	 * the padding as bytes: none of them may come out. */
	char *s = kb_base64_decode("QQ==", 4, &n);
	assert_int_equal(n, 1);
	assert_string_equal(s, "A");
	free(s);
	s = kb_base64_decode("QUI=", 4, &n);
	assert_int_equal(n, 2);
	assert_string_equal(s, "AB");
	free(s);
	s = kb_base64_decode("QUJD", 4, &n); /* no padding needed */
	assert_int_equal(n, 3);
	assert_string_equal(s, "ABC");
	free(s);
	s = kb_base64_decode("QUJDRA==", 8, &n);
	assert_int_equal(n, 4);
	assert_string_equal(s, "ABCD");
	free(s);
	s = kb_base64_decode("QUJDRA", 6, &n); /* the same, unpadded */
	assert_int_equal(n, 4);
	assert_string_equal(s, "ABCD");
	free(s);
	const char *spaced = " QUJD\r\nRA= =\n"; /* whitespace anywhere */
	s = kb_base64_decode(spaced, strlen(spaced), &n);
	assert_int_equal(n, 4);
	assert_string_equal(s, "ABCD");
	free(s);
	s = kb_base64_decode("-_-_", 4, &n); /* URL-safe alphabet, as "+/+/" */
	assert_int_equal(n, 3);
	assert_memory_equal(s, "\xfb\xff\xbf", 3);
	free(s);
}

static void base64_rejects_bad_input(void **state)
{
	size_t n;
	errno = 0;
	assert_null(kb_base64_decode("aGV*bG8=", 8, &n));
	assert_int_equal(errno, EINVAL);
	assert_null(kb_base64_decode("aGVsb", 5, &n)); /* a lone 6-bit group */
	assert_null(kb_base64_decode("aG==Vs", 6, &n)); /* data after padding */
	assert_null(kb_base64_decode("QQ=A", 4, &n));   /* a '=' inside a group */
	assert_null(kb_base64_decode("QQ===", 5, &n));  /* three '=' */
	assert_null(kb_base64_decode("QU\x01D", 4, &n)); /* a control character */
	assert_null(kb_base64_decode("QUJ\0", 4, &n));  /* a NUL inside the text */
	assert_null(kb_base64_decode("QUJ.", 4, &n));
	assert_int_equal(errno, EINVAL);
}

/* ---- kubeconfig ------------------------------------------------------------- */

#define PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
/* base64 of PEM */
#define PEM_B64                                                                             \
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static int load(const char *text, const char *master, kb_kube_config *c, kb_err *err)
{
	const char *path = write_file("config", text);
	memset(err, 0, sizeof(*err));
	memset(c, 0, sizeof(*c));
	return kb_kube_config_load(path, master, c, err);
}

static void kubeconfig_reads_current_context(void **state)
{
	kb_kube_config c;
	kb_err err;
	write_file("tok", "file-token\n");
	int r = load("apiVersion: v1\n"
		     "kind: Config\n"
		     "current-context: b\n"
		     "contexts:\n"
		     "- name: a\n  context: {cluster: one, user: u1}\n"
		     "- name: b\n  context: {cluster: two, user: u2}\n"
		     "clusters:\n"
		     "- name: one\n  cluster: {server: 'https://one:6443'}\n"
		     "- name: two\n"
		     "  cluster:\n"
		     "    server: https://127.0.0.1:6443/\n"
		     "    certificate-authority: pki/ca.crt\n"
		     "users:\n"
		     "- name: u1\n  user: {token: wrong}\n"
		     "- name: u2\n"
		     "  user:\n"
		     "    client-certificate-data: " PEM_B64 "\n"
		     "    client-key: /abs/key.pem\n"
		     "    token: secret\n"
		     "    tokenFile: tok\n",
		     NULL, &c, &err);
	if (r != 0)
		fail_msg("%d %s", r, err.msg);
	assert_string_equal(c.server, "https://127.0.0.1:6443"); /* trailing / dropped */
	char want[512];
	snprintf(want, sizeof(want), "%s/pki/ca.crt", tmpdir); /* relative to the file */
	assert_string_equal(c.ca_file, want);
	assert_null(c.ca_data);
	assert_false(c.insecure);
	assert_null(c.exec);
	assert_string_equal(c.cert_data, PEM);
	assert_null(c.cert_file);
	assert_string_equal(c.key_file, "/abs/key.pem");
	assert_string_equal(c.token, "secret");
	snprintf(want, sizeof(want), "%s/tok", tmpdir);
	assert_string_equal(c.token_file, want);
	kb_kube_config_release(&c);
}

static void kubeconfig_ca_data_and_master_override(void **state)
{
	kb_kube_config c;
	kb_err err;
	const char *cfg = "current-context: x\n"
			  "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
			  "clusters: [{name: c, cluster: {server: 10.0.0.1:443, "
			  "certificate-authority-data: " PEM_B64 "}}]\n"
			  "users: [{name: u, user: {token: t}}]\n";
	assert_int_equal(load(cfg, NULL, &c, &err), 0);
	assert_string_equal(c.server, "https://10.0.0.1:443"); /* no scheme: https */
	assert_string_equal(c.ca_data, PEM);
	assert_false(c.insecure);
	kb_kube_config_release(&c);

	assert_int_equal(load(cfg, "http://127.0.0.1:8080", &c, &err), 0);
	assert_string_equal(c.server, "http://127.0.0.1:8080");
	kb_kube_config_release(&c);

	/* --master alone, no kubeconfig */
	memset(&c, 0, sizeof(c));
	assert_int_equal(kb_kube_config_load(NULL, "https://m:1", &c, &err), 0);
	assert_string_equal(c.server, "https://m:1");
	assert_null(c.token);
	kb_kube_config_release(&c);
}

/* Loads text and expects code with a message naming the file and `want`. */
static void load_fails(const char *text, int code, const char *want)
{
	kb_kube_config c;
	kb_err err;
	int r = load(text, NULL, &c, &err);
	if (r != code)
		fail_msg("expected %d, got %d (%s)", code, r, err.msg);
	assert_int_equal(err.code, code);
	assert_contains(err.msg, tmpdir);
	assert_contains(err.msg, want);
	assert_null(c.server);
}

static void kubeconfig_errors_name_file_and_field(void **state)
{
	load_fails("clusters: []\n", -EINVAL, "current-context is missing");
	load_fails("current-context: x\ncontexts: []\n", -ENOENT,
		   "context \"x\" not found in contexts");
	load_fails("current-context: x\ncontexts: [{name: x, context: {user: u}}]\n", -EINVAL,
		   "context \"x\": cluster is missing");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n", -ENOENT,
		   "cluster \"c\" not found in clusters");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
		   "clusters: [{name: c, cluster: {certificate-authority: ca}}]\n",
		   -EINVAL, "cluster \"c\": server is missing");
	/* No host left: refused, as client-go does (a fuzzer's input). */
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
		   "clusters: [{name: c, cluster: {server: //}}]\n",
		   -EINVAL, "cluster \"c\": server \"//\": no host");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
		   "clusters: [{name: c, cluster: {server: 'https:///'}}]\n",
		   -EINVAL, "cluster \"c\": server \"https:///\": no host");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
		   "clusters: [{name: c, cluster: {server: s, certificate-authority-data: 'a*b'}}]\n",
		   -EINVAL, "cluster \"c\": certificate-authority-data: not valid base64");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
		   "clusters: [{name: c, cluster: {server: s}}]\n"
		   "users: [{name: u, user: {client-certificate: c.pem}}]\n",
		   -EINVAL, "user \"u\": a client certificate without client-key");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
		   "clusters: [{name: c, cluster: {server: s}}]\n"
		   "users: [{name: u, user: {exec: {command: aws}}}]\n",
		   -EINVAL, "user \"u\": exec: apiVersion is missing");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
		   "clusters: [{name: c, cluster: {server: s}}]\n",
		   -ENOENT, "user \"u\" not found in users");
	load_fails("- a list\n", -EINVAL, "expected a kubeconfig");

	kb_kube_config c = {0};
	kb_err err = {0};
	assert_int_equal(kb_kube_config_load("/nonexistent/kubeconfig", NULL, &c, &err), -ENOENT);
	assert_contains(err.msg, "/nonexistent/kubeconfig");
}

#define CTX_CU                                                                             \
	"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
#define CLUSTER_S "clusters: [{name: c, cluster: {server: s}}]\n"

static void insecure_with_a_ca_is_an_error_naming_the_cluster(void **state)
{
	load_fails(CTX_CU "clusters: [{name: c, cluster: {server: s, insecure-skip-tls-verify: true, "
			  "certificate-authority-data: " PEM_B64 "}}]\n",
		   -EINVAL,
		   "cluster \"c\": insecure-skip-tls-verify is true and certificate-authority-data "
		   "is given");
	load_fails(CTX_CU "clusters: [{name: c, cluster: {server: s, insecure-skip-tls-verify: true, "
			  "certificate-authority: ca.crt}}]\n",
		   -EINVAL, "insecure-skip-tls-verify is true and certificate-authority is given");
	kb_kube_config c;
	kb_err err;
	assert_int_equal(load(CTX_CU "clusters: [{name: c, cluster: {server: s, "
				     "insecure-skip-tls-verify: true}}]\n"
				     "users: [{name: u, user: {token: t}}]\n",
			      NULL, &c, &err),
			 0);
	assert_true(c.insecure);
	kb_kube_config_release(&c);
}

static void token_file_must_be_readable_and_not_empty_at_start(void **state)
{
	char want[512];
	snprintf(want, sizeof(want), "user \"u\": tokenFile %s/absent: No such file", tmpdir);
	load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {tokenFile: absent}}]\n", -ENOENT, want);
	write_file("empty-token", " \n");
	snprintf(want, sizeof(want), "user \"u\": tokenFile %s/empty-token: the file is empty",
		 tmpdir);
	load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {tokenFile: empty-token}}]\n", -ENODATA,
		   want);
	if (geteuid() != 0) { /* root reads any file */
		chmod(write_file("locked-token", "t"), 0);
		load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {tokenFile: locked-token}}]\n",
			   -EACCES, "Permission denied");
	}
}

static void auth_providers_are_refused_naming_their_exec_plugin(void **state)
{
	load_fails(CTX_CU CLUSTER_S
		   "users: [{name: u, user: {auth-provider: {name: gcp, config: {}}}}]\n",
		   -ENOTSUP, "user \"u\": auth-provider \"gcp\" is not supported");
	load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n",
		   -ENOTSUP, "gke-gcloud-auth-plugin");
	load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {auth-provider: {name: azure}}}]\n",
		   -ENOTSUP, "Azure/kubelogin");
	load_fails(CTX_CU CLUSTER_S "users: [{name: u, user: {auth-provider: {name: oidc}}}]\n",
		   -ENOTSUP, "int128/kubelogin");
}

static void exec_config_errors_name_user_and_field(void **state)
{
#define EXEC_USER(x) CTX_CU CLUSTER_S "users: [{name: u, user: {exec: {" x "}}}]\n"
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1alpha1, command: a"),
		   -EINVAL, "user \"u\": exec: apiVersion \"client.authentication.k8s.io/v1alpha1\"");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1, command: a"), -EINVAL,
		   "user \"u\": exec: interactiveMode is missing");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1, command: a, "
			     "interactiveMode: Always"),
		   -ENOTSUP, "interactiveMode Always needs a terminal");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1, command: a, "
			     "interactiveMode: Sometimes"),
		   -EINVAL, "interactiveMode \"Sometimes\"");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1beta1"), -EINVAL,
		   "user \"u\": exec: command is missing");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1beta1, command: a, "
			     "env: [{value: x}]"),
		   -EINVAL, "user \"u\": exec: env[0]: name is missing");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1beta1, command: a, "
			     "args: [{a: b}]"),
		   -EINVAL, "user \"u\": exec: args[0]: expected a string");
	load_fails(EXEC_USER("apiVersion: client.authentication.k8s.io/v1beta1, command: a, "
			     "provideClusterInfo: maybe"),
		   -EINVAL, "provideClusterInfo: expected true or false");
	load_fails(CTX_CU "clusters: [{name: c, cluster: {server: s, certificate-authority: "
			  "no-ca.crt}}]\n"
			  "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/"
			  "v1beta1, command: a, provideClusterInfo: true}}}]\n",
		   -ENOENT, "user \"u\": exec: provideClusterInfo: certificate-authority");
}

/* ---- exec plugins ------------------------------------------------------------ */

/* Writes an executable script to tmpdir/name. */
static void write_script(const char *name, const char *body)
{
	char text[4096];
	snprintf(text, sizeof(text), "#!/bin/sh\n%s", body);
	assert_int_equal(chmod(write_file(name, text), 0755), 0);
}

/* Loads a kubeconfig whose user runs tmpdir/NAME (relative: "./NAME"). */
static kb_exec_plugin *exec_user(const char *name, const char *extra, kb_kube_config *c)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 CTX_CU "clusters: [{name: c, cluster: {server: 'https://k:6443', "
			"certificate-authority-data: " PEM_B64 "}}]\n"
			"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, "
			"interactiveMode: Never, command: ./%s, installHint: 'get it from x.io'%s}}}]\n",
		 name, extra);
	kb_err err;
	int r = load(text, NULL, c, &err);
	if (r != 0)
		fail_msg("%d %s", r, err.msg);
	assert_non_null(c->exec);
	return c->exec;
}

#define TOKEN_OUT(exp)                                                                     \
	"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","   \
	"\"status\":{\"token\":\"tok-'$$'\"" exp "}}'\n"

static void exec_plugin_protocol_and_environment(void **state)
{
	char dump[1400];
	snprintf(dump, sizeof(dump),
		 "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > %s/info\n"
		 "echo \"$# $1 $2 $FOO $KEEP\" > %s/args\n"
		 "echo to the log >&2\n" TOKEN_OUT(""),
		 tmpdir, tmpdir);
	write_script("plugin", dump);
	setenv("FOO", "from-us", 1);
	setenv("KEEP", "kept", 1);
	kb_kube_config c;
	kb_exec_plugin *p = exec_user("plugin",
				      ", args: [one, 'two words'], provideClusterInfo: true, "
				      "env: [{name: FOO, value: bar}]",
				      &c);
	const kb_exec_credential *cred;
	kb_err err = {0};
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_non_null(strstr(cred->token, "tok-"));
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s/plugin", tmpdir); /* "./plugin", joined and cleaned */
	assert_string_equal(p->argv[0], cmd);
	assert_int_equal(cred->expiry, 0);
	assert_null(cred->cert_pem);
	char *info = kb_exec_plugin_info(p);
	const char *want =
		"{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
		"\"spec\":{\"cluster\":{\"server\":\"https://k:6443\",\"certificate-authority-data\":"
		"\"" PEM_B64 "\",\"config\":null},\"interactive\":false}}\n";
	assert_string_equal(info, want);
	char path[512];
	snprintf(path, sizeof(path), "%s/info", tmpdir);
	FILE *f = fopen(path, "r");
	char got[2048] = {0};
	assert_non_null(f);
	assert_true(fread(got, 1, sizeof(got) - 1, f) > 0);
	fclose(f);
	assert_string_equal(got, want);
	free(info);
	snprintf(path, sizeof(path), "%s/args", tmpdir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "2 one two words bar kept\n"); /* env replaces ours */
	/* No expiry: cached for good. */
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(kb_exec_plugin_runs(p), 1);
	kb_kube_config_release(&c);
	unsetenv("FOO");
	unsetenv("KEEP");
}

static void exec_credential_is_cached_until_it_expires_or_is_refused(void **state)
{
	write_script("future", TOKEN_OUT(",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\""));
	kb_kube_config c;
	kb_exec_plugin *p = exec_user("future", "", &c);
	const kb_exec_credential *cred;
	kb_err err;
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(cred->generation, 1);
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(kb_exec_plugin_runs(p), 1);
	kb_exec_plugin_invalidate(p, 7); /* not the current one: kept */
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(kb_exec_plugin_runs(p), 1);
	kb_exec_plugin_invalidate(p, 1); /* a 401 */
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(kb_exec_plugin_runs(p), 2);
	assert_int_equal(cred->generation, 2);
	kb_kube_config_release(&c);

	write_script("past", TOKEN_OUT(",\"expirationTimestamp\":\"2000-01-01T00:00:00+01:00\""));
	p = exec_user("past", "", &c);
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0);
	assert_int_equal(cred->expiry, 946681200);
	assert_int_equal(kb_exec_plugin_get(p, &cred, &err), 0); /* expired: runs again */
	assert_int_equal(kb_exec_plugin_runs(p), 2);
	kb_kube_config_release(&c);
}

/* Runs the plugin NAME (script BODY) and expects code and `want` in the
 * error, with the kubeconfig and user named. */
static void exec_fails(const char *name, const char *body, int code, const char *want)
{
	if (body)
		write_script(name, body);
	kb_kube_config c;
	kb_exec_plugin *p = exec_user(name, "", &c);
	kb_exec_plugin_set_limits(p, 400, 4096);
	const kb_exec_credential *cred;
	kb_err err = {0};
	int r = kb_exec_plugin_get(p, &cred, &err);
	if (r != code)
		fail_msg("%s: expected %d, got %d (%s)", name, code, r, err.msg);
	assert_contains(err.msg, tmpdir);
	assert_contains(err.msg, "user \"u\": exec plugin");
	assert_contains(err.msg, want);
	/* Remembered for a while: no second run. */
	kb_err again = {0};
	assert_int_equal(kb_exec_plugin_get(p, &cred, &again), code);
	assert_string_equal(again.msg, err.msg);
	assert_int_equal(kb_exec_plugin_runs(p), 1);
	kb_kube_config_release(&c);
}

static void exec_plugin_failures_are_named(void **state)
{
	exec_fails("exit3", "echo oops >&2; exit 3\n", -EPERM,
		   "failed with exit code 3 (install hint: get it from x.io)");
	exec_fails("absent", NULL, -ENOENT, "executable not found: get it from x.io");
	exec_fails("bigout", "head -c 5000 /dev/zero | tr '\\0' x\n", -E2BIG,
		   "wrote more than 4096 bytes to standard output");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	exec_fails("slow", "sleep 5; echo late\n", -ETIMEDOUT, "still running after 400 ms");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 3); /* killed, its sleep too */
	exec_fails("notjson", "echo hello\n", -EPROTO, "its output is not an ExecCredential");
	exec_fails("v1beta1",
		   "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
		   "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n",
		   -EPROTO,
		   "configured to use apiVersion client.authentication.k8s.io/v1, its output has "
		   "apiVersion client.authentication.k8s.io/v1beta1");
	exec_fails("nostatus",
		   "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}'\n",
		   -EPROTO, "its output has no status");
	exec_fails("certonly",
		   "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		   "\"status\":{\"clientCertificateData\":\"x\"}}'\n",
		   -EPROTO, "clientCertificateData without clientKeyData");
	exec_fails("nothing",
		   "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		   "\"status\":{\"token\":\"\"}}'\n",
		   -EPROTO, "neither a token nor clientCertificateData and clientKeyData");
	exec_fails("badtime", TOKEN_OUT(",\"expirationTimestamp\":\"tomorrow\""), -EPROTO,
		   "status.expirationTimestamp \"tomorrow\" is not an RFC 3339 time");
}

static void exec_command_paths_are_cleaned_as_go_does(void **state)
{
	const char *cases[][2] = {{"/a/./b", "/a/b"},	 {"/a/b/../c", "/a/c"},
				  {"/a/../../b", "/b"},	 {"a/../../b", "../b"},
				  {"//a//b/", "/a/b"},	 {"./x", "x"},
				  {"../../x/..", "../.."}, {"/", "/"},
				  {".", "."},		 {"a/..", "."}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		path_clean(buf);
		if (strcmp(buf, cases[i][1]) != 0)
			fail_msg("\"%s\" cleaned to \"%s\", want \"%s\"", cases[i][0], buf,
				 cases[i][1]);
	}
}

static void rfc3339_times(void **state)
{
	int64_t t;
	assert_int_equal(kb_rfc3339_parse("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(kb_rfc3339_parse("2024-02-29T12:00:00.123456789Z", &t), 0);
	assert_int_equal(t, 1709208000);
	assert_int_equal(kb_rfc3339_parse("2024-02-29T13:30:00+01:30", &t), 0);
	assert_int_equal(t, 1709208000);
	assert_int_equal(kb_rfc3339_parse("2024-02-29T10:00:00-02:00", &t), 0);
	assert_int_equal(t, 1709208000);
	const char *bad[] = {"", "2024", "2024-02-29", "2024-02-29T12:00:00", "2024-02-30T00:00:00Z",
			     "2024-13-01T00:00:00Z", "2024-02-29T12:00:00.Z", "2024-02-29T12:00Z",
			     "2024-02-29T12:00:00+0100", "2024-02-29T12:00:00Zjunk"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kb_rfc3339_parse(bad[i], &t) != -EINVAL)
			fail_msg("\"%s\" parsed", bad[i]);
}

/* ---- in-cluster -------------------------------------------------------------- */

static void in_cluster_needs_the_environment(void **state)
{
	kb_kube_config c = {0};
	kb_err err = {0};
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_equal(kb_kube_config_in_cluster(&c, &err), -ENOENT);
	assert_contains(err.msg, "KUBERNETES_SERVICE_HOST");

	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	setenv("KB_SERVICEACCOUNT_DIR", tmpdir, 1);
	unlink(write_file("token", "x")); /* no token file yet */
	assert_int_equal(kb_kube_config_in_cluster(&c, &err), -ENOENT);
	assert_contains(err.msg, "token");

	write_file("token", "abc\n");
	write_file("ca.crt", PEM);
	assert_int_equal(kb_kube_config_in_cluster(&c, &err), 0);
	assert_string_equal(c.server, "https://10.0.0.1:443");
	char want[512];
	snprintf(want, sizeof(want), "%s/token", tmpdir);
	assert_string_equal(c.token_file, want);
	snprintf(want, sizeof(want), "%s/ca.crt", tmpdir);
	assert_string_equal(c.ca_file, want);
	kb_kube_config_release(&c);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(kb_kube_config_in_cluster(&c, &err), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	kb_kube_config_release(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("KB_SERVICEACCOUNT_DIR");
}

/* ---- token file rotation ------------------------------------------------------- */

static void token_file_is_reread_when_it_changes(void **state)
{
	kb_kube_client c;
	memset(&c, 0, sizeof(c));
	c.token = "fallback";
	char path[512];
	snprintf(path, sizeof(path), "%s/sa-token", tmpdir);
	c.token_file = path;
	assert_string_equal(current_token(&c), "fallback"); /* no file yet */
	write_file("sa-token", "first\n");
	assert_string_equal(current_token(&c), "first");
	assert_string_equal(current_token(&c), "first");
	write_file("sa-token", "second-token");
	assert_string_equal(current_token(&c), "second-token");
	unlink(path); /* a missing file keeps the last token read */
	assert_string_equal(current_token(&c), "second-token");
	free(c.file_token);
}

/* ---- the client without a server ------------------------------------------------- */

typedef struct result {
	int calls, status;
	char body[256];
} result;

static void on_done(void *ctx, int status, const char *body, size_t len)
{
	result *r = ctx;
	r->calls++;
	r->status = status;
	snprintf(r->body, sizeof(r->body), "%.*s", (int)len, body);
}

static void client_reports_refused_connection_on_the_loop(void **state)
{
	/* A port on loopback nobody listens on (bound, never listened). */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t alen = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &alen);
	char server[64];
	snprintf(server, sizeof(server), "https://127.0.0.1:%d", ntohs(a.sin_port));

	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	kb_kube_config cfg = {.server = server, .token = "t"};
	kb_err err = {0};
	kb_kube_client *c = kb_kube_client_new(loop, &cfg, NULL, &err);
	assert_non_null(c);
	result r = {0};
	assert_int_equal(kb_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, on_done, &r), 0);
	assert_int_equal(r.calls, 0); /* never inside the queueing call */
	assert_int_equal(kb_kube_request(c, "GET", "no-slash", NULL, NULL, on_done, &r), -EINVAL);
	while (r.calls == 0)
		ev_run(loop, EVRUN_ONCE);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, -ECONNREFUSED);
	assert_contains(r.body, "/api/v1/nodes");
	assert_int_equal(kb_kube_client_requests(c), 1);
	kb_kube_client_free(c);
	ev_loop_destroy(loop);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base64_decodes_with_and_without_padding),
		cmocka_unit_test(base64_padding_is_not_decoded_as_data),
		cmocka_unit_test(base64_rejects_bad_input),
		cmocka_unit_test(kubeconfig_reads_current_context),
		cmocka_unit_test(kubeconfig_ca_data_and_master_override),
		cmocka_unit_test(kubeconfig_errors_name_file_and_field),
		cmocka_unit_test(insecure_with_a_ca_is_an_error_naming_the_cluster),
		cmocka_unit_test(token_file_must_be_readable_and_not_empty_at_start),
		cmocka_unit_test(auth_providers_are_refused_naming_their_exec_plugin),
		cmocka_unit_test(exec_config_errors_name_user_and_field),
		cmocka_unit_test(exec_plugin_protocol_and_environment),
		cmocka_unit_test(exec_credential_is_cached_until_it_expires_or_is_refused),
		cmocka_unit_test(exec_plugin_failures_are_named),
		cmocka_unit_test(exec_command_paths_are_cleaned_as_go_does),
		cmocka_unit_test(rfc3339_times),
		cmocka_unit_test(in_cluster_needs_the_environment),
		cmocka_unit_test(token_file_is_reread_when_it_changes),
		cmocka_unit_test(client_reports_refused_connection_on_the_loop),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

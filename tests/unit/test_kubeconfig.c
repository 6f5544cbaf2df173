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
		     "    insecure-skip-tls-verify: true\n"
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
	assert_true(c.insecure);
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
		   -ENOTSUP, "credential plugins");
	load_fails("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
		   "clusters: [{name: c, cluster: {server: s}}]\n",
		   -ENOENT, "user \"u\" not found in users");
	load_fails("- a list\n", -EINVAL, "expected a kubeconfig");

	kb_kube_config c = {0};
	kb_err err = {0};
	assert_int_equal(kb_kube_config_load("/nonexistent/kubeconfig", NULL, &c, &err), -ENOENT);
	assert_contains(err.msg, "/nonexistent/kubeconfig");
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
		cmocka_unit_test(in_cluster_needs_the_environment),
		cmocka_unit_test(token_file_is_reread_when_it_changes),
		cmocka_unit_test(client_reports_refused_connection_on_the_loop),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

/*
 * kubeconfig.c - where the API server is and who we are to it (see
 * kube_client.h): a kubeconfig file, or the in-cluster service account.
 *
 * The kubeconfig schema read (clientcmd's v1 Config), everything else is
 * ignored:
 *
 *   current-context: NAME
 *   contexts: [{name, context: {cluster, user}}]
 *   clusters: [{name, cluster: {server, certificate-authority,
 *               certificate-authority-data, insecure-skip-tls-verify}}]
 *   users:    [{name, user: {client-certificate, client-certificate-data,
 *               client-key, client-key-data, token, tokenFile,
 *               exec: {apiVersion, command, args, env: [{name, value}],
 *                      installHint, provideClusterInfo, interactiveMode}}}]
 *
 * Relative file paths resolve against the kubeconfig's directory, as
 * clientcmd does (an exec command only when it has a '/', cleaned as
 * filepath.Join does; a bare name is looked up on PATH). `*-data` fields
 * are base64 (whitespace allowed). Checked here, so that they are errors
 * at start: a tokenFile must be readable and not empty (the client re-reads
 * it on rotation); insecure-skip-tls-verify with a CA is refused, as
 * client-go's transport refuses it; an exec plugin is validated as
 * clientcmd does (apiVersion v1 or v1beta1, interactiveMode required for
 * v1, Always refused: no terminal) and made into a kb_exec_plugin
 * (kube/exec_cred.h), not run; an auth-provider is refused (-ENOTSUP)
 * naming the exec plugin that replaced it. A user with a token or a client
 * certificate does not use its exec plugin, as in client-go. Not read: the
 * cluster extension client.authentication.k8s.io/exec (spec.cluster.config
 * is passed as null), tls-server-name and proxy-url.
 *
 * Errors name the file, the position and the field:
 *   "/x/kubeconfig:12:5: cluster \"c\": server is missing"
 */
#include "kube/kube_client.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/yaml_doc.h"

#define SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"
#define SA_DIR_ENV "KB_SERVICEACCOUNT_DIR"
#define TOKEN_FILE_MAX ((size_t)64 << 10)
#define CA_FILE_MAX ((size_t)1 << 20)

/* ---- base64 -------------------------------------------------------------- */

/* Decodes standard (or URL-safe) base64, ignoring whitespace; padding is
 * optional. Returns a NUL-terminated malloc'd buffer and its length in
 * *ret_len, or NULL with errno EINVAL (bad character or length) / ENOMEM.
 * (The unit test includes this file to reach it.)
 *
 * OpenSSL's EVP_DecodeBlock decodes; it takes whole 4-character groups of
 * the standard alphabet only and decodes a '=' anywhere as zero bits, so
 * the text is first normalized: whitespace dropped, '-' and '_' mapped to
 * '+' and '/', padding allowed only at the end (at most two), the last
 * group padded out. EVP_DecodeBlock counts the bytes the padding stands for
 * in its result: they are taken off again. Cost: O(len), two allocations. */
static char *kb_base64_decode(const char *in, size_t len, size_t *ret_len)
{
	if (len > INT_MAX - 4) {
		errno = EINVAL;
		return NULL;
	}
	unsigned char *text = malloc(len + 4); /* + up to 3 '=' and a NUL */
	unsigned char *out = malloc((len + 3) / 4 * 3 + 1);
	if (!text || !out) {
		free(text);
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	size_t n = 0, npad = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];
		if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
			continue;
		if (ch == '=') {
			npad++;
			continue;
		}
		if (npad > 0)
			goto bad; /* data after padding */
		text[n++] = ch == '-' ? '+' : ch == '_' ? '/' : ch;
	}
	/* A last group of one character holds no whole byte: no encoder makes it. */
	if (npad > 2 || n % 4 == 1)
		goto bad;
	size_t pad = (4 - n % 4) % 4;
	for (size_t i = 0; i < pad; i++)
		text[n++] = '=';
	int k = n ? EVP_DecodeBlock(out, text, (int)n) : 0;
	if (k < 0 || (size_t)k < pad)
		goto bad; /* a character outside the alphabet */
	k -= (int)pad;
	out[k] = '\0';
	explicit_bzero(text, n); /* key data */
	free(text);
	*ret_len = (size_t)k;
	return (char *)out;
bad:
	explicit_bzero(text, n);
	free(text);
	free(out);
	errno = EINVAL;
	return NULL;
}

/* ---- files ---------------------------------------------------------------- */

/* Reads a whole file of at most max bytes into a NUL-terminated malloc'd
 * buffer. 0 with *ret and *ret_len, -errno, or -E2BIG. */
static int read_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *buf = malloc(max + 1);
	if (!buf) {
		(void)fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, max + 1, f);
	int e = ferror(f) ? -EIO : n > max ? -E2BIG : 0;
	(void)fclose(f); /* opened for reading: what was read is all that counts */
	if (e < 0) {
		explicit_bzero(buf, n);
		free(buf);
		return e;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = n;
	return 0;
}

int kb_kube_token_file_read(const char *path, char **ret)
{
	char *tok;
	size_t n;
	int r = read_file(path, TOKEN_FILE_MAX, &tok, &n);
	if (r < 0)
		return r;
	while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ' ||
			 tok[n - 1] == '\t'))
		n--;
	tok[n] = '\0';
	if (n == 0) {
		free(tok);
		return -ENODATA;
	}
	*ret = tok;
	return 0;
}

/* The reason a token file could not be used, for messages. */
static const char *token_file_problem(int r)
{
	return r == -ENODATA ? "the file is empty" :
	       r == -E2BIG   ? "the file is larger than 64 KiB" :
			       strerror(-r);
}

/* ---- helpers ------------------------------------------------------------- */

typedef struct loader {
	const char *path; /* the kubeconfig, for messages */
	char *dir;        /* its directory, for relative paths */
	kb_err *err;
	/* The user's exec plugin, read by load_exec and made once the server
	 * is known (--master may change it): the strings point into the YAML
	 * tree but for command, args and env, which are the loader's. */
	bool has_exec;
	kb_exec_spec exec;
	char *exec_command;
	const char **exec_args;
	char **exec_env;
} loader;

__attribute__((format(printf, 4, 5))) static int lfail(loader *l, int code,
							const kb_yaml_node *at, const char *fmt, ...)
{
	char what[KB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap); /* an error text: a long one is cut */
	va_end(ap);
	if (at)
		return kb_err_set(l->err, code, "%s:%d:%d: %s", l->path, at->line, at->col, what);
	return kb_err_set(l->err, code, "%s: %s", l->path, what);
}

static int lnomem(loader *l)
{
	return kb_err_set(l->err, -ENOMEM, "%s: out of memory", l->path);
}

/* The string value of key in map m (NULL when absent, null or empty). A
 * mapping or a list there is an error. */
static int get_str(loader *l, const kb_yaml_node *m, const char *what, const char *key,
		   const char **ret)
{
	const kb_yaml_node *n = kb_yaml_get(m, key);
	*ret = NULL;
	if (kb_yaml_is_null(n))
		return 0;
	if (n->kind != KB_YAML_SCALAR)
		return lfail(l, -EINVAL, n, "%s: %s: expected a string, got %s", what, key,
			     kb_yaml_kind_name(n));
	if (n->len)
		*ret = n->str;
	return 0;
}

/* Copies a file path, resolving a relative one against the kubeconfig's
 * directory. */
static int dup_path(loader *l, const char *p, char **ret)
{
	if (!p) {
		*ret = NULL;
		return 0;
	}
	char *s;
	if (p[0] == '/' || !l->dir)
		s = strdup(p);
	else if (asprintf(&s, "%s/%s", l->dir, p) < 0)
		s = NULL;
	if (!s)
		return lnomem(l);
	*ret = s;
	return 0;
}

/* Cleans a path in place as Go's filepath.Clean does (clientcmd joins the
 * exec command with the kubeconfig's directory through filepath.Join):
 * repeated slashes, "." and "name/.." go. Cost: O(len). */
static void path_clean(char *p)
{
	size_t n = strlen(p), r = 0, w = 0, dotdot = 0;
	bool rooted = p[0] == '/';
	if (rooted)
		r = w = dotdot = 1; /* p[0] stays '/' */
	while (r < n) {
		if (p[r] == '/' || (p[r] == '.' && (r + 1 == n || p[r + 1] == '/'))) {
			r++; /* an empty or "." element */
		} else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) { /* back up over the last element */
				w--;
				while (w > dotdot && p[w] != '/')
					w--;
			} else if (!rooted) { /* a leading ".." stays */
				if (w > 0)
					p[w++] = '/';
				p[w++] = '.';
				p[w++] = '.';
				dotdot = w;
			}
		} else {
			if (w != (rooted ? 1 : 0))
				p[w++] = '/';
			while (r < n && p[r] != '/')
				p[w++] = p[r++];
		}
	}
	if (w == 0)
		p[w++] = '.';
	p[w] = '\0';
}

/* Decodes a base64 `*-data` field into a NUL-terminated copy. */
static int dup_b64(loader *l, const kb_yaml_node *m, const char *what, const char *key,
		   char **ret)
{
	const char *v;
	int r = get_str(l, m, what, key, &v);
	*ret = NULL;
	if (r < 0 || !v)
		return r;
	size_t n;
	char *s = kb_base64_decode(v, strlen(v), &n);
	if (!s) {
		if (errno == ENOMEM)
			return lnomem(l);
		return lfail(l, -EINVAL, kb_yaml_get(m, key), "%s: %s: not valid base64", what,
			     key);
	}
	if (n == 0 || strlen(s) != n) {
		free(s);
		return lfail(l, -EINVAL, kb_yaml_get(m, key),
			     "%s: %s: decodes to %s, expected PEM text", what, key,
			     n == 0 ? "nothing" : "binary data");
	}
	*ret = s;
	return 0;
}

/* The entry named `name` of the list `list` (clusters, contexts, users):
 * returns its `field` mapping (cluster, context, user). */
static int find_named(loader *l, const kb_yaml_node *root, const char *list, const char *field,
		      const char *name, const kb_yaml_node **ret)
{
	const kb_yaml_node *seq = kb_yaml_get(root, list);
	if (!kb_yaml_is_null(seq) && seq->kind != KB_YAML_SEQ)
		return lfail(l, -EINVAL, seq, "%s: expected a list, got %s", list,
			     kb_yaml_kind_name(seq));
	for (size_t i = 0; seq && !kb_yaml_is_null(seq) && i < seq->n; i++) {
		const kb_yaml_node *it = seq->items[i];
		const char *n = kb_yaml_str(kb_yaml_get(it, "name"));
		if (!n || strcmp(n, name) != 0)
			continue;
		const kb_yaml_node *v = kb_yaml_get(it, field);
		if (kb_yaml_is_null(v)) {
			/* An empty entry (e.g. "user: {}" written as "user:"): anonymous. */
			*ret = NULL;
			return 0;
		}
		if (v->kind != KB_YAML_MAP)
			return lfail(l, -EINVAL, v, "%s \"%s\": %s: expected a mapping, got %s", field,
				     name, field, kb_yaml_kind_name(v));
		*ret = v;
		return 0;
	}
	return lfail(l, -ENOENT, NULL, "%s \"%s\" not found in %s", field, name, list);
}

/* "host:port" without a scheme means https, as in client-go. 0, -ENOMEM,
 * or -EINVAL when no host is left ("//", "https://", "http:///x": client-go
 * refuses them too, "host must be a URL or a host:port pair"). */
static int set_server(kb_kube_config *c, const char *server)
{
	char *s;
	if (strncmp(server, "https://", 8) == 0 || strncmp(server, "http://", 7) == 0)
		s = strdup(server);
	else if (asprintf(&s, "https://%s", server) < 0)
		s = NULL;
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	const char *host = strstr(s, "://");
	if (!host || host[3] == '\0' || host[3] == '/') {
		free(s);
		return -EINVAL;
	}
	free(c->server);
	c->server = s;
	return 0;
}

static int load_cluster(loader *l, const kb_yaml_node *root, const char *name, kb_kube_config *c)
{
	const kb_yaml_node *cl;
	int r = find_named(l, root, "clusters", "cluster", name, &cl);
	if (r < 0)
		return r;
	char what[160]; /* names the entry in error texts only: a long name is cut */
	(void)snprintf(what, sizeof(what), "cluster \"%s\"", name);

	const char *server, *ca;
	if ((r = get_str(l, cl, what, "server", &server)) < 0 ||
	    (r = get_str(l, cl, what, "certificate-authority", &ca)) < 0)
		return r;
	if (server && (r = set_server(c, server)) < 0)
		return r == -EINVAL ? lfail(l, r, kb_yaml_get(cl, "server"),
					    "%s: server \"%s\": no host (want a URL or host:port)",
					    what, server)
				    : lnomem(l);
	if ((r = dup_path(l, ca, &c->ca_file)) < 0 ||
	    (r = dup_b64(l, cl, what, "certificate-authority-data", &c->ca_data)) < 0)
		return r;
	const kb_yaml_node *ins = kb_yaml_get(cl, "insecure-skip-tls-verify");
	if (!kb_yaml_is_null(ins) && kb_yaml_bool(ins, &c->insecure) < 0)
		return lfail(l, -EINVAL, ins, "%s: insecure-skip-tls-verify: expected true or false",
			     what);
	/* client-go (transport.TLSConfigFor) refuses the same: a CA only
	 * serves to verify the server, which insecure turns off. */
	if (c->insecure && (c->ca_file || c->ca_data))
		return lfail(l, -EINVAL, ins,
			     "%s: insecure-skip-tls-verify is true and %s is given: a CA is "
			     "only used to verify the server, which insecure-skip-tls-verify "
			     "turns off; keep one of the two",
			     what, c->ca_data ? "certificate-authority-data" : "certificate-authority");
	return 0;
}

/* A tokenFile must be readable and not empty at start, as clientcmd reads
 * it when it builds the client's configuration (the client re-reads it
 * on rotation). */
static int check_token_file(loader *l, const kb_yaml_node *u, const char *what, const char *path)
{
	char *tok;
	int r = kb_kube_token_file_read(path, &tok);
	if (r == -ENOMEM)
		return lnomem(l);
	if (r < 0)
		return lfail(l, r, kb_yaml_get(u, "tokenFile"), "%s: tokenFile %s: %s", what, path,
			     token_file_problem(r));
	explicit_bzero(tok, strlen(tok));
	free(tok);
	return 0;
}

/* client-go's auth-providers: gcp and azure were removed (v1.26) for exec
 * plugins; oidc remains there, kubelogin replaces it as an exec plugin. */
static int refuse_auth_provider(loader *l, const kb_yaml_node *provider, const char *what)
{
	const char *name = kb_yaml_str(kb_yaml_get(provider, "name"));
	const char *instead =
		!name				? NULL :
		strcmp(name, "gcp") == 0	? "gke-gcloud-auth-plugin (gcloud components install "
						  "gke-gcloud-auth-plugin)" :
		strcmp(name, "azure") == 0	? "kubelogin (https://github.com/Azure/kubelogin)" :
		strcmp(name, "oidc") == 0	? "kubelogin (https://github.com/int128/kubelogin)" :
						  NULL;
	return lfail(l, -ENOTSUP, provider,
		     "%s: auth-provider \"%s\" is not supported: kube-batchd runs exec credential "
		     "plugins only; use %s in users[].user.exec",
		     what, name ? name : "(no name)",
		     instead ? instead : "the exec plugin your provider documents");
}

/* A list of strings at key of m (absent: none). *ret (malloc'd array of
 * borrowed strings) and *ret_n. */
static int get_str_list(loader *l, const kb_yaml_node *m, const char *what, const char *key,
			const char ***ret, size_t *ret_n)
{
	const kb_yaml_node *seq = kb_yaml_get(m, key);
	*ret = NULL;
	*ret_n = 0;
	if (kb_yaml_is_null(seq))
		return 0;
	if (seq->kind != KB_YAML_SEQ)
		return lfail(l, -EINVAL, seq, "%s: %s: expected a list, got %s", what, key,
			     kb_yaml_kind_name(seq));
	const char **v = calloc(seq->n + 1, sizeof(*v));
	if (!v)
		return lnomem(l);
	for (size_t i = 0; i < seq->n; i++) {
		const kb_yaml_node *it = seq->items[i];
		if (kb_yaml_is_null(it) || it->kind != KB_YAML_SCALAR) {
			free(v);
			return lfail(l, -EINVAL, it, "%s: %s[%zu]: expected a string", what, key, i);
		}
		v[i] = it->str;
	}
	*ret = v;
	*ret_n = seq->n;
	return 0;
}

/* exec.env: [{name, value}] as "NAME=value" strings (the loader's). */
static int load_exec_env(loader *l, const kb_yaml_node *ex, const char *what)
{
	const kb_yaml_node *seq = kb_yaml_get(ex, "env");
	if (kb_yaml_is_null(seq))
		return 0;
	if (seq->kind != KB_YAML_SEQ)
		return lfail(l, -EINVAL, seq, "%s: exec: env: expected a list, got %s", what,
			     kb_yaml_kind_name(seq));
	if (!(l->exec_env = calloc(seq->n + 1, sizeof(char *))))
		return lnomem(l);
	for (size_t i = 0; i < seq->n; i++) {
		const kb_yaml_node *it = seq->items[i];
		char at[224]; /* names the entry in error texts only */
		(void)snprintf(at, sizeof(at), "%s: exec: env[%zu]", what, i);
		const char *name = NULL, *value = NULL;
		int r;
		if (kb_yaml_is_null(it) || it->kind != KB_YAML_MAP)
			return lfail(l, -EINVAL, it, "%s: expected {name, value}", at);
		if ((r = get_str(l, it, at, "name", &name)) < 0 ||
		    (r = get_str(l, it, at, "value", &value)) < 0)
			return r;
		if (!name || strchr(name, '='))
			return lfail(l, -EINVAL, it, "%s: name is %s", at,
				     name ? "not a variable name (it has a '=')" : "missing");
		if (asprintf(&l->exec_env[i], "%s=%s", name, value ? value : "") < 0) {
			l->exec_env[i] = NULL;
			return lnomem(l);
		}
		l->exec.nenv = i + 1;
	}
	l->exec.env = (const char *const *)l->exec_env;
	return 0;
}

/* exec.apiVersion and exec.interactiveMode, as clientcmd validates and
 * defaults them: v1 must say its interactiveMode, v1beta1 defaults to
 * IfAvailable; Always needs a terminal, which kube-batchd has not. */
static int load_exec_modes(loader *l, const kb_yaml_node *ex, const char *what)
{
	const char *api, *mode;
	int r;
	if ((r = get_str(l, ex, what, "apiVersion", &api)) < 0 ||
	    (r = get_str(l, ex, what, "interactiveMode", &mode)) < 0)
		return r;
	if (!api)
		return lfail(l, -EINVAL, ex, "%s: exec: apiVersion is missing (%s or %s)", what,
			     KB_EXEC_API_V1, KB_EXEC_API_V1BETA1);
	if (strcmp(api, KB_EXEC_API_V1) != 0 && strcmp(api, KB_EXEC_API_V1BETA1) != 0)
		return lfail(l, -EINVAL, kb_yaml_get(ex, "apiVersion"),
			     "%s: exec: apiVersion \"%s\" is not supported (client-go takes %s and "
			     "%s; v1alpha1 was removed in Kubernetes 1.24)",
			     what, api, KB_EXEC_API_V1, KB_EXEC_API_V1BETA1);
	if (!mode && strcmp(api, KB_EXEC_API_V1) == 0)
		return lfail(l, -EINVAL, ex,
			     "%s: exec: interactiveMode is missing (Never, IfAvailable or Always; "
			     "%s requires it)",
			     what, KB_EXEC_API_V1);
	if (mode && strcmp(mode, "Always") == 0)
		return lfail(l, -ENOTSUP, kb_yaml_get(ex, "interactiveMode"),
			     "%s: exec: interactiveMode Always needs a terminal on standard input, "
			     "and kube-batchd runs without one; use Never or IfAvailable",
			     what);
	if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0)
		return lfail(l, -EINVAL, kb_yaml_get(ex, "interactiveMode"),
			     "%s: exec: interactiveMode \"%s\" is not Never, IfAvailable or Always",
			     what, mode);
	l->exec.api_version = api;
	return 0;
}

/* users[].user.exec (clientcmd's ExecConfig) into l->exec. */
static int load_exec(loader *l, const kb_yaml_node *ex, const char *what)
{
	if (ex->kind != KB_YAML_MAP)
		return lfail(l, -EINVAL, ex, "%s: exec: expected a mapping, got %s", what,
			     kb_yaml_kind_name(ex));
	char at[192];
	(void)snprintf(at, sizeof(at), "%s: exec", what);
	const char *cmd, *hint_text;
	int r;
	if ((r = load_exec_modes(l, ex, what)) < 0 || (r = get_str(l, ex, at, "command", &cmd)) < 0 ||
	    (r = get_str(l, ex, at, "installHint", &hint_text)) < 0 ||
	    (r = get_str_list(l, ex, at, "args", &l->exec_args, &l->exec.nargs)) < 0 ||
	    (r = load_exec_env(l, ex, what)) < 0)
		return r;
	if (!cmd)
		return lfail(l, -EINVAL, ex, "%s: command is missing", at);
	/* clientcmd resolves the command against the kubeconfig's directory
	 * only when it is a path (has a '/'); a bare name is looked up on PATH. */
	if ((r = strchr(cmd, '/') ? dup_path(l, cmd, &l->exec_command) :
				    (l->exec_command = strdup(cmd)) ? 0 : lnomem(l)) < 0)
		return r;
	if (strchr(cmd, '/'))
		path_clean(l->exec_command);
	const kb_yaml_node *pci = kb_yaml_get(ex, "provideClusterInfo");
	if (!kb_yaml_is_null(pci) && kb_yaml_bool(pci, &l->exec.provide_cluster_info) < 0)
		return lfail(l, -EINVAL, pci, "%s: provideClusterInfo: expected true or false", at);
	l->exec.command = l->exec_command;
	l->exec.args = l->exec_args;
	l->exec.install_hint = hint_text;
	return 0;
}

static int load_user(loader *l, const kb_yaml_node *root, const char *name, kb_kube_config *c)
{
	const kb_yaml_node *u;
	int r = find_named(l, root, "users", "user", name, &u);
	if (r < 0 || !u)
		return r;
	char what[160]; /* names the entry in error texts only: a long name is cut */
	(void)snprintf(what, sizeof(what), "user \"%s\"", name);

	const char *cert, *key, *token, *token_file;
	if ((r = get_str(l, u, what, "client-certificate", &cert)) < 0 ||
	    (r = get_str(l, u, what, "client-key", &key)) < 0 ||
	    (r = get_str(l, u, what, "token", &token)) < 0 ||
	    (r = get_str(l, u, what, "tokenFile", &token_file)) < 0)
		return r;
	if ((r = dup_path(l, cert, &c->cert_file)) < 0 || (r = dup_path(l, key, &c->key_file)) < 0 ||
	    (r = dup_path(l, token_file, &c->token_file)) < 0 ||
	    (r = dup_b64(l, u, what, "client-certificate-data", &c->cert_data)) < 0 ||
	    (r = dup_b64(l, u, what, "client-key-data", &c->key_data)) < 0)
		return r;
	if (token && !(c->token = strdup(token)))
		return lnomem(l);

	bool has_cert = c->cert_file || c->cert_data;
	bool has_key = c->key_file || c->key_data;
	if (has_cert != has_key)
		return lfail(l, -EINVAL, u, "%s: %s without %s", what,
			     has_cert ? "a client certificate" : "a client key",
			     has_cert ? "client-key or client-key-data" :
					"client-certificate or client-certificate-data");
	if (c->token_file && (r = check_token_file(l, u, what, c->token_file)) < 0)
		return r;
	const kb_yaml_node *provider = kb_yaml_get(u, "auth-provider");
	if (!kb_yaml_is_null(provider))
		return refuse_auth_provider(l, provider, what);
	const kb_yaml_node *plugin = kb_yaml_get(u, "exec");
	if (kb_yaml_is_null(plugin))
		return 0;
	if ((r = load_exec(l, plugin, what)) < 0)
		return r;
	/* As client-go: a token or a client certificate, when given, is used
	 * and the plugin is not (exec.Authenticator.UpdateTransportConfig). */
	l->has_exec = !has_cert && !c->token && !c->token_file;
	l->exec.user = name;
	return 0;
}

/* Makes the exec plugin load_exec read, now that the server is known. */
static int make_exec(loader *l, kb_kube_config *c)
{
	kb_exec_spec *s = &l->exec;
	s->kubeconfig = l->path;
	s->server = c->server;
	s->insecure = c->insecure;
	char *ca = NULL;
	if (s->provide_cluster_info && !c->ca_data && c->ca_file) {
		/* client-go hands the plugin the CA's bytes, the file read. */
		size_t n;
		int r = read_file(c->ca_file, CA_FILE_MAX, &ca, &n);
		if (r < 0)
			return lfail(l, r, NULL,
				     "user \"%s\": exec: provideClusterInfo: certificate-authority "
				     "%s: %s",
				     s->user, c->ca_file, strerror(-r));
	}
	s->ca_pem = c->ca_data ? c->ca_data : ca;
	int r = kb_exec_plugin_new(s, &c->exec, l->err);
	free(ca);
	return r;
}

/* ---- public -------------------------------------------------------------- */

void kb_kube_config_release(kb_kube_config *c)
{
	if (!c)
		return;
	char **secrets[] = {&c->token, &c->key_data};
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (*secrets[i])
			explicit_bzero(*secrets[i], strlen(*secrets[i]));
	free(c->server);
	free(c->ca_file);
	free(c->ca_data);
	free(c->cert_file);
	free(c->cert_data);
	free(c->key_file);
	free(c->key_data);
	free(c->token);
	free(c->token_file);
	kb_exec_plugin_unref(c->exec);
	memset(c, 0, sizeof(*c));
}

/* The current context's cluster (*ret_cluster, never NULL on success) and
 * user (*ret_user, NULL when it names none). */
static int current_context(loader *l, const kb_yaml_node *root, const char **ret_cluster,
			   const char **ret_user)
{
	const char *ctx_name;
	int r;
	if ((r = get_str(l, root, "kubeconfig", "current-context", &ctx_name)) < 0)
		return r;
	if (!ctx_name)
		return lfail(l, -EINVAL, NULL, "current-context is missing");
	const kb_yaml_node *ctx;
	if ((r = find_named(l, root, "contexts", "context", ctx_name, &ctx)) < 0)
		return r;
	char what[160]; /* names the entry in error texts only: a long name is cut */
	(void)snprintf(what, sizeof(what), "context \"%s\"", ctx_name);
	if (ctx && ((r = get_str(l, ctx, what, "cluster", ret_cluster)) < 0 ||
		    (r = get_str(l, ctx, what, "user", ret_user)) < 0))
		return r;
	if (!*ret_cluster)
		return lfail(l, -EINVAL, ctx, "%s: cluster is missing", what);
	return 0;
}

int kb_kube_config_load(const char *path, const char *master, kb_kube_config *ret, kb_err *err)
{
	kb_kube_config c = {0};
	int r;
	if (!path) {
		/* --master alone, as client-go's BuildConfigFromFlags("", master). */
		if (!master || !*master)
			return kb_err_set(err, -EINVAL, "neither a kubeconfig nor --master was given");
		if ((r = set_server(&c, master)) < 0)
			return r == -EINVAL ? kb_err_set(err, r, "--master \"%s\": no host", master)
					    : kb_err_set(err, r, "out of memory");
		*ret = c;
		return 0;
	}

	loader l = {.path = path, .err = err};
	const char *slash = strrchr(path, '/');
	if (slash && !(l.dir = strndup(path, slash == path ? 1 : (size_t)(slash - path))))
		return kb_err_set(err, -ENOMEM, "out of memory");

	kb_yaml_file f;
	if ((r = kb_yaml_load_file(path, &f, err)) < 0) {
		kb_err_prefix(err, "kubeconfig");
		goto out_dir;
	}
	const kb_yaml_node *root = f.ndocs > 0 ? f.docs[0] : NULL;
	if (!root || root->kind != KB_YAML_MAP) {
		r = lfail(&l, -EINVAL, root, "expected a kubeconfig (a mapping), got %s",
			  root ? kb_yaml_kind_name(root) : "an empty file");
		goto out_file;
	}

	const char *cluster = NULL, *user = NULL;
	if ((r = current_context(&l, root, &cluster, &user)) < 0)
		goto out_file;
	if ((r = load_cluster(&l, root, cluster, &c)) < 0)
		goto out_config;
	if (user && (r = load_user(&l, root, user, &c)) < 0)
		goto out_config;
	if (master && *master && (r = set_server(&c, master)) < 0) {
		r = r == -EINVAL ? lfail(&l, r, NULL, "--master \"%s\": no host", master)
				 : lnomem(&l);
		goto out_config;
	}
	if (!c.server) {
		r = lfail(&l, -EINVAL, NULL, "cluster \"%s\": server is missing", cluster);
		goto out_config;
	}
	if (l.has_exec && (r = make_exec(&l, &c)) < 0)
		goto out_config;
	*ret = c;
	r = 0;
	goto out_file;

out_config:
	kb_kube_config_release(&c);
out_file:
	kb_yaml_file_release(&f);
out_dir:
	free(l.dir);
	free(l.exec_command);
	free((void *)l.exec_args);
	for (size_t i = 0; l.exec_env && l.exec_env[i]; i++)
		free(l.exec_env[i]);
	free(l.exec_env);
	return r;
}

int kb_kube_config_in_cluster(kb_kube_config *ret, kb_err *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return kb_err_set(err, -ENOENT,
				  "not running in a cluster: KUBERNETES_SERVICE_HOST and "
				  "KUBERNETES_SERVICE_PORT are not set");
	const char *dir = getenv(SA_DIR_ENV);
	if (!dir || !*dir)
		dir = SA_DIR_DEFAULT;

	kb_kube_config c = {0};
	int r = -ENOMEM;
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(&c.server, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
		c.server = NULL;
		goto fail;
	}
	if (asprintf(&c.token_file, "%s/token", dir) < 0) {
		c.token_file = NULL;
		goto fail;
	}
	char *tok;
	if ((r = kb_kube_token_file_read(c.token_file, &tok)) < 0) {
		kb_err_set(err, r, "in-cluster configuration: service account token %s: %s",
			   c.token_file, token_file_problem(r));
		goto fail_set;
	}
	explicit_bzero(tok, strlen(tok));
	free(tok);
	r = -ENOMEM;
	char *ca;
	if (asprintf(&ca, "%s/ca.crt", dir) < 0)
		goto fail;
	if (access(ca, R_OK) == 0)
		c.ca_file = ca;
	else
		free(ca); /* client-go goes on with the system's roots */
	*ret = c;
	return 0;

fail:
	kb_err_set(err, r, "out of memory");
fail_set:
	kb_kube_config_release(&c);
	return r;
}

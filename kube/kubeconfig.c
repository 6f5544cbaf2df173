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
 *               client-key, client-key-data, token, tokenFile}}]
 *
 * Relative file paths resolve against the kubeconfig's directory, as
 * clientcmd does. `*-data` fields are base64 (whitespace allowed). A user
 * that only has an exec plugin or an auth-provider is refused (-ENOTSUP):
 * kube-batchd does not run credential plugins.
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

/* ---- helpers ------------------------------------------------------------- */

typedef struct loader {
	const char *path; /* the kubeconfig, for messages */
	char *dir;        /* its directory, for relative paths */
	kb_err *err;
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

/* "host:port" without a scheme means https, as in client-go. */
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
	if (server && set_server(c, server) < 0)
		return lnomem(l);
	if ((r = dup_path(l, ca, &c->ca_file)) < 0 ||
	    (r = dup_b64(l, cl, what, "certificate-authority-data", &c->ca_data)) < 0)
		return r;
	const kb_yaml_node *ins = kb_yaml_get(cl, "insecure-skip-tls-verify");
	if (!kb_yaml_is_null(ins) && kb_yaml_bool(ins, &c->insecure) < 0)
		return lfail(l, -EINVAL, ins, "%s: insecure-skip-tls-verify: expected true or false",
			     what);
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
	if (!has_cert && !c->token && !c->token_file) {
		const kb_yaml_node *plugin = kb_yaml_get(u, "exec");
		if (kb_yaml_is_null(plugin))
			plugin = kb_yaml_get(u, "auth-provider");
		if (!kb_yaml_is_null(plugin))
			return lfail(l, -ENOTSUP, plugin,
				     "%s: credential plugins (exec, auth-provider) are not "
				     "supported; use a token, tokenFile or a client certificate",
				     what);
	}
	return 0;
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
	memset(c, 0, sizeof(*c));
}

int kb_kube_config_load(const char *path, const char *master, kb_kube_config *ret, kb_err *err)
{
	kb_kube_config c = {0};
	int r;
	if (!path) {
		/* --master alone, as client-go's BuildConfigFromFlags("", master). */
		if (!master || !*master)
			return kb_err_set(err, -EINVAL, "neither a kubeconfig nor --master was given");
		if (set_server(&c, master) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
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

	const char *ctx_name;
	if ((r = get_str(&l, root, "kubeconfig", "current-context", &ctx_name)) < 0)
		goto out_file;
	if (!ctx_name) {
		r = lfail(&l, -EINVAL, NULL, "current-context is missing");
		goto out_file;
	}
	const kb_yaml_node *ctx;
	if ((r = find_named(&l, root, "contexts", "context", ctx_name, &ctx)) < 0)
		goto out_file;
	const char *cluster = NULL, *user = NULL;
	char what[160]; /* names the entry in error texts only: a long name is cut */
	(void)snprintf(what, sizeof(what), "context \"%s\"", ctx_name);
	if (ctx && ((r = get_str(&l, ctx, what, "cluster", &cluster)) < 0 ||
		    (r = get_str(&l, ctx, what, "user", &user)) < 0))
		goto out_file;
	if (!cluster) {
		r = lfail(&l, -EINVAL, ctx, "%s: cluster is missing", what);
		goto out_file;
	}
	if ((r = load_cluster(&l, root, cluster, &c)) < 0)
		goto out_config;
	if (user && (r = load_user(&l, root, user, &c)) < 0)
		goto out_config;
	if (master && *master && set_server(&c, master) < 0) {
		r = lnomem(&l);
		goto out_config;
	}
	if (!c.server) {
		r = lfail(&l, -EINVAL, NULL, "cluster \"%s\": server is missing", cluster);
		goto out_config;
	}
	*ret = c;
	r = 0;
	goto out_file;

out_config:
	kb_kube_config_release(&c);
out_file:
	kb_yaml_file_release(&f);
out_dir:
	free(l.dir);
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
	if (access(c.token_file, R_OK) < 0) {
		r = -errno;
		kb_err_set(err, r, "in-cluster configuration: service account token %s: %s",
			   c.token_file, strerror(errno));
		goto fail_set;
	}
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

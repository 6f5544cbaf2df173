/* exec_cred.h - kubeconfig `exec` credential plugins (users[].user.exec),
 * run as client-go v0.33 runs them (k8s.io/client-go/plugin/pkg/client/
 * auth/exec/exec.go): aws eks get-token, gke-gcloud-auth-plugin, kubelogin.
 *
 * The protocol. The command runs with the process's environment plus the
 * kubeconfig's env (a name given there replaces the inherited value), plus
 * KUBERNETES_EXEC_INFO: an ExecCredential in JSON of the configured
 * apiVersion, its spec.interactive false (kube-batchd has no terminal) and,
 * with provideClusterInfo, spec.cluster {server, insecure-skip-tls-verify,
 * certificate-authority-data, config}. Standard input is /dev/null.
 * Standard output must be one ExecCredential of the same apiVersion whose
 * status carries a token, or clientCertificateData and clientKeyData (PEM),
 * or both, and optionally expirationTimestamp (RFC 3339). Each line the
 * plugin writes to standard error goes to our log (a warning naming the
 * user), as client-go hands the plugin its own stderr.
 *
 * Caching, as client-go: the credential is kept until its
 * expirationTimestamp has passed (none: for the life of the process) and
 * the plugin runs again on the first request after that. A request the
 * API server answers 401 invalidates the credential it was sent with
 * (kb_exec_plugin_invalidate), so the next one runs the plugin again. One
 * kb_exec_plugin is shared by every client made from one kb_kube_config
 * (the daemon's three), so they run it once between them.
 *
 * Running it blocks. client-go runs the plugin synchronously under a lock,
 * in the goroutine of the request that needs it; kube-batchd runs it
 * synchronously on the loop, so nothing else (watches, leader election,
 * /healthz) is served while it runs. It runs once at start and once per
 * expiry (EKS: 15 minutes, GKE: an hour) and takes well under a second for
 * the real plugins, so that stall is the cost, bounded by a timeout
 * (KB_EXEC_TIMEOUT_MS, 10 s, less than the default leader-election renew
 * deadline): a plugin still running then is killed with its process group.
 * A failure is remembered for KB_EXEC_RETRY_MS (5 s): requests in that
 * time fail with it at once instead of running the plugin each, so a
 * broken plugin cannot hold the loop for a timeout per request.
 *
 * Limits: standard output KB_EXEC_OUTPUT_MAX (1 MiB: a token or a
 * certificate and key are a few KiB) -E2BIG; standard error is logged up
 * to 64 KiB a run and drained past that.
 *
 * Errors name the kubeconfig, the user and what failed:
 *   "/x/kubeconfig: user \"eks\": exec plugin \"aws\" failed with exit code
 *    255 (install hint: ...)"
 * Ownership: a kb_exec_plugin is reference-counted (one loop, no threads);
 * kb_exec_plugin_new copies the spec. Secrets are wiped before they are freed.
 */
#ifndef KB_KUBE_EXEC_CRED_H
#define KB_KUBE_EXEC_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define KB_EXEC_TIMEOUT_MS 10000L
#define KB_EXEC_RETRY_MS 5000L
#define KB_EXEC_OUTPUT_MAX ((size_t)1 << 20)

#define KB_EXEC_API_V1 "client.authentication.k8s.io/v1"
#define KB_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"

/* What kubeconfig.c read; every pointer is borrowed by kb_exec_plugin_new. */
typedef struct kb_exec_spec {
	const char *kubeconfig;  /* the file, for messages */
	const char *user;        /* the user's name, for messages */
	const char *api_version; /* KB_EXEC_API_V1 or KB_EXEC_API_V1BETA1 */
	const char *command;     /* as exec would take it: a name looked up on
				  * PATH, or a path (kubeconfig.c resolves a
				  * relative one with a '/' against the file's
				  * directory, as clientcmd does) */
	const char *const *args; /* nargs of them */
	size_t nargs;
	const char *const *env;  /* "NAME=value", nenv of them */
	size_t nenv;
	const char *install_hint; /* or NULL */
	/* spec.cluster, only when provide_cluster_info */
	bool provide_cluster_info;
	const char *server;
	const char *ca_pem;      /* the CA's PEM text, or NULL */
	bool insecure;
	const char *config_json; /* the cluster's client.authentication.k8s.io/exec
				  * extension as JSON, or NULL (written "null") */
} kb_exec_spec;

/* A credential the plugin gave. */
typedef struct kb_exec_credential {
	char *token;    /* or NULL */
	char *cert_pem; /* with key_pem, or both NULL */
	char *key_pem;
	int64_t expiry; /* Unix seconds; 0: does not expire */
	uint64_t generation; /* which run gave it (1, 2, ...) */
} kb_exec_credential;

typedef struct kb_exec_plugin kb_exec_plugin;

/* A plugin ready to run (nothing is run yet). Returns 0 with *ret (one
 * reference), or -ENOMEM. */
int kb_exec_plugin_new(const kb_exec_spec *spec, kb_exec_plugin **ret, kb_err *err);

/* Another reference to p (accepts NULL). */
kb_exec_plugin *kb_exec_plugin_ref(kb_exec_plugin *p);

/* Drops a reference; the last frees p and its credential. Accepts NULL;
 * returns NULL. */
kb_exec_plugin *kb_exec_plugin_unref(kb_exec_plugin *p);

/* Sets the timeout and the output limit (tests; 0 keeps a value). */
void kb_exec_plugin_set_limits(kb_exec_plugin *p, long timeout_ms, size_t output_max);

/* The credential for a request made now: the cached one while it has not
 * expired, else the plugin's new one (it runs, blocking for up to the
 * timeout). *ret is owned by p and valid until the next call of
 * kb_exec_plugin_get or _invalidate. Returns 0, or with err naming the
 * kubeconfig, user and cause: -ENOENT (the command is not found: the
 * install hint is given), -EPERM (it ran and exited non-zero, or was
 * killed by a signal: the hint is given), -ETIMEDOUT (it ran longer than
 * the timeout and was killed), -E2BIG (its output passed the limit),
 * -EPROTO (its output is not an ExecCredential of the configured
 * apiVersion with a token or a certificate and key, or its
 * expirationTimestamp is not RFC 3339), -ENOMEM, or another -errno when it
 * cannot be started. A failure is returned again without running the
 * plugin for KB_EXEC_RETRY_MS. */
int kb_exec_plugin_get(kb_exec_plugin *p, const kb_exec_credential **ret, kb_err *err);

/* The API server refused the credential of run `generation` (a 401): it
 * is dropped, if it is still the current one, and the next
 * kb_exec_plugin_get runs the plugin. Cost: O(1). */
void kb_exec_plugin_invalidate(kb_exec_plugin *p, uint64_t generation);

/* How many times the plugin was started. */
uint64_t kb_exec_plugin_runs(const kb_exec_plugin *p);

/* The KUBERNETES_EXEC_INFO text p passes, malloc'd (caller frees), or
 * NULL with errno ENOMEM. */
char *kb_exec_plugin_info(const kb_exec_plugin *p);

/* Parses an RFC 3339 date-time ("2026-01-02T03:04:05Z", fractions and
 * offsets "+01:00" allowed) into Unix seconds (fractions dropped). 0 or
 * -EINVAL. */
int kb_rfc3339_parse(const char *s, int64_t *ret);

#endif

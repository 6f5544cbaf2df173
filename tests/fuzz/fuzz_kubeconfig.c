/* fuzz_kubeconfig.c - kb_kube_config_load over any file: a refusal has a
 * negative code and a message and leaves *ret alone; a loaded configuration
 * has a server with its scheme and no trailing '/', and every decoded
 * `*-data` field is non-empty text (no NUL inside). The input is written
 * to a memfd and loaded through /proc/self/fd/N (the loader takes a path);
 * the first byte says whether --master overrides the server too. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kube/kube_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
	if (s && s[0] == '\0')
		abort();
}

static void check_config(const kb_kube_config *c, const char *master)
{
	const char *s = c->server;
	if (!s || (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0))
		abort();
	size_t n = strlen(s);
	if (n > 0 && s[n - 1] == '/')
		abort();
	if (master && strcmp(s, "https://10.0.0.1:6443") != 0)
		abort();
	check_text(c->ca_data);
	check_text(c->cert_data);
	check_text(c->key_data);
	check_text(c->ca_file);
	check_text(c->cert_file);
	check_text(c->key_file);
	check_text(c->token_file);
	if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data))
		abort();
}

/* A refusal leaves *ret as it was. */
static bool untouched(const kb_kube_config *c, const kb_kube_config *b)
{
	return c->server == b->server && c->ca_file == b->ca_file && c->ca_data == b->ca_data &&
	       c->cert_file == b->cert_file && c->cert_data == b->cert_data &&
	       c->key_file == b->key_file && c->key_data == b->key_data && c->token == b->token &&
	       c->token_file == b->token_file && c->insecure == b->insecure;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *master = data[0] & 1 ? "10.0.0.1:6443/" : NULL;
	data++;
	size--;
	int fd = memfd_create("kubeconfig", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	static char sentinel;
	char *x = &sentinel;
	kb_kube_config c = {.server = x, .ca_file = x, .ca_data = x, .cert_file = x,
			    .cert_data = x, .key_file = x, .key_data = x, .token = x,
			    .token_file = x, .insecure = true};
	kb_kube_config before = c;
	kb_err err = {0};
	int r = kb_kube_config_load(path, master, &c, &err);
	close(fd);
	if (r < 0) {
		if (err.code != r || err.msg[0] == '\0' || !untouched(&c, &before))
			abort();
		return 0;
	}
	if (r != 0)
		abort();
	check_config(&c, master);
	kb_kube_config_release(&c);
	return 0;
}

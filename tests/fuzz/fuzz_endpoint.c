/* fuzz_endpoint.c - the health endpoint's request parser
 * (kb_endpoint_route_request) fed the way a connection's reads fill its
 * buffer: the input arrives in pieces (the first byte seeds their sizes)
 * into a buffer of KB_ENDPOINT_REQUEST_MAX bytes, NUL-terminated after each
 * read, and the parser is asked after each one until it answers. Checks
 * against what the answer promises: INCOMPLETE only while no blank line
 * ends the head and the buffer has room; TOO_LARGE only on a full buffer;
 * a route only for GET or HEAD with exactly that path; the answer never
 * changes the buffer. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/endpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool head_complete(const char *buf)
{
	return strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n");
}

/* The first line's method and path, the query cut: what a route means. */
static void check_route(const char *buf, kb_endpoint_route route)
{
	char method[8] = "", path[256] = "";
	if (sscanf(buf, "%7s %255s", method, path) != 2) {
		if (route != KB_ROUTE_BAD)
			abort();
		return;
	}
	path[strcspn(path, "?")] = '\0';
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	static const char *const paths[] = {"/livez", "/healthz", "/readyz", "/metrics"};
	static const kb_endpoint_route routes[] = {KB_ROUTE_LIVEZ, KB_ROUTE_HEALTHZ, KB_ROUTE_READYZ,
						   KB_ROUTE_METRICS};
	kb_endpoint_route want = get ? KB_ROUTE_NOT_FOUND : KB_ROUTE_METHOD;
	for (size_t i = 0; get && i < 4; i++)
		if (strcmp(path, paths[i]) == 0)
			want = routes[i];
	if (route != want)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint32_t seed = data[0] * 2654435761u + 1;
	data++;
	size--;
	static char buf[KB_ENDPOINT_REQUEST_MAX];
	static char copy[KB_ENDPOINT_REQUEST_MAX];
	size_t len = 0, off = 0;
	kb_endpoint_route route = KB_ROUTE_INCOMPLETE;
	while (route == KB_ROUTE_INCOMPLETE && off < size) {
		/* One read: at most what the buffer has room for. */
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 16) % 512;
		if (n > size - off)
			n = size - off;
		if (n > sizeof(buf) - 1 - len)
			n = sizeof(buf) - 1 - len;
		memcpy(buf + len, data + off, n);
		off += n;
		len += n;
		buf[len] = '\0';
		memcpy(copy, buf, len + 1);
		route = kb_endpoint_route_request(buf, len);
		if (memcmp(copy, buf, len + 1) != 0)
			abort();
		bool complete = head_complete(buf);
		if (route == KB_ROUTE_INCOMPLETE && (complete || len >= sizeof(buf) - 1))
			abort();
		if (route == KB_ROUTE_TOO_LARGE && (complete || len < sizeof(buf) - 1))
			abort();
		if (route != KB_ROUTE_INCOMPLETE && route != KB_ROUTE_TOO_LARGE) {
			if (!complete)
				abort();
			check_route(buf, route);
		}
	}
	return 0;
}

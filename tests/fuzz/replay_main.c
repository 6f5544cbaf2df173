/* replay_main.c - runs a fuzz target over its seed corpus, as an ordinary test.
 *
 * Usage: fuzz_<name> DIR. Every regular file in DIR (not recursive) is read
 * and passed to LLVMFuzzerTestOneInput, in byte order of the file names so a
 * run is deterministic. Exits 0 after printing how many inputs ran; exits 1
 * if DIR is missing, unreadable or holds no files. A target that finds a bug
 * aborts (or a sanitizer stops the process).
 *
 * Built with clang -fsanitize=fuzzer, define KB_LIBFUZZER so libFuzzer's own
 * main is used instead.
 */
#ifndef KB_LIBFUZZER

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads a whole file into a heap buffer. 0 or a negative errno. */
static int read_file(const char *path, uint8_t **ret_data, size_t *ret_size)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -errno;
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;
	for (;;) {
		if (size == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *p = realloc(data, cap);
			if (!p) {
				free(data);
				fclose(fp);
				return -ENOMEM;
			}
			data = p;
		}
		size_t n = fread(data + size, 1, cap - size, fp);
		size += n;
		if (n == 0)
			break;
	}
	int r = ferror(fp) ? -EIO : 0;
	fclose(fp);
	if (r < 0) {
		free(data);
		return r;
	}
	*ret_data = data;
	*ret_size = size;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int status = 0;
	for (struct dirent *de; (de = readdir(d));) {
		char path[4096];
		struct stat st;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(names, cap * sizeof(*names));
			if (!p) {
				status = 1;
				break;
			}
			names = p;
		}
		if (!(names[n] = strdup(de->d_name))) {
			status = 1;
			break;
		}
		n++;
	}
	closedir(d);
	if (status == 0 && n == 0) {
		fprintf(stderr, "%s: no inputs\n", dir);
		status = 1;
	}
	if (status == 0)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; status == 0 && i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		uint8_t *data = NULL;
		size_t size = 0;
		int r = read_file(path, &data, &size);
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(-r));
			status = 1;
			break;
		}
		LLVMFuzzerTestOneInput(data, size);
		free(data);
	}
	if (status == 0)
		printf("%s: ran %zu inputs\n", dir, n);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return status;
}

#endif

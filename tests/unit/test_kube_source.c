/* test_kube_source.c - the resources the daemon watches (kube/kube_source.h):
 * with every PodGroup family served, each kind is named once and the list
 * stays within KB_WATCH_MAX, which also sizes the daemon's reflectors and
 * the --from-cluster reader (kb_watch_resources drops what does not fit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kube/kube_source.h"

static uint32_t count_kind(const kb_watch_resource *res, uint32_t n, const char *kind)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		k += strcmp(res[i].kind, kind) == 0;
	return k;
}

static void every_family_fits_the_limit(void **state)
{
	(void)state;
	kb_served all = {.incubator = true, .volcano = true, .cosched = true, .cosched_old = true,
			 .k8s_podgroups = "scheduling.k8s.io/v1beta1"};
	kb_watch_resource res[KB_WATCH_MAX];
	uint32_t n = kb_watch_resources(&all, res);
	/* Strictly below: a list that filled the array might have lost one. */
	assert_true(n < KB_WATCH_MAX);
	static const char *const once[] = {
		"Node", "Pod", "PriorityClass", "Namespace", "PersistentVolumeClaim",
		"PersistentVolume", "StorageClass", "CSINode", "VolumeAttachment", "CSIDriver",
		"CSIStorageCapacity",
	};
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		assert_int_equal(count_kind(res, n, once[i]), 1);
	/* incubator, volcano, x-k8s.io, sigs.k8s.io and scheduling.k8s.io */
	assert_int_equal(count_kind(res, n, "PodGroup"), 5);
	assert_int_equal(count_kind(res, n, "Queue"), 2);
}

static void nothing_optional_served(void **state)
{
	(void)state;
	kb_served none = {0};
	kb_watch_resource res[KB_WATCH_MAX];
	uint32_t n = kb_watch_resources(&none, res);
	assert_int_equal(count_kind(res, n, "PodGroup"), 0);
	assert_int_equal(count_kind(res, n, "Pod"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_family_fits_the_limit),
		cmocka_unit_test(nothing_optional_served),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_list_pager.c - kube/list_pager: the URLs of a paginated, consistent
 * LIST and its watch. Links no libcurl or libev (kb_kube_pure_dep). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/list_pager.h"

static void first_page_is_consistent_and_limited(void **state)
{
	kb_list_pager p;
	char *url = NULL;
	assert_int_equal(kb_list_pager_init(&p, "/api/v1/nodes", NULL, 500), 0);
	assert_int_equal(kb_list_pager_first(&p, &url), 0);
	/* No resourceVersion at all: the watch cache would ignore limit for "0". */
	assert_string_equal(url, "/api/v1/nodes?limit=500");
	assert_null(strstr(url, "resourceVersion"));
	assert_int_equal(p.page, 1);
	free(url);
	kb_list_pager_release(&p);
}

static void pods_carry_the_field_selector_everywhere(void **state)
{
	kb_list_pager p;
	char *url = NULL;
	assert_int_equal(kb_list_pager_init(&p, "/api/v1/pods",
					    "status.phase!=Succeeded,status.phase!=Failed", 500),
			 0);
	assert_int_equal(kb_list_pager_first(&p, &url), 0);
	assert_string_equal(url, "/api/v1/pods?limit=500&fieldSelector="
				 "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
	free(url);
	assert_int_equal(kb_list_pager_next(&p, "tok", &url), 0);
	assert_string_equal(url, "/api/v1/pods?limit=500&continue=tok&fieldSelector="
				 "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
	free(url);
	assert_int_equal(kb_list_pager_watch(&p, "123", 300, &url), 0);
	assert_string_equal(url, "/api/v1/pods?watch=true&allowWatchBookmarks=true&"
				 "resourceVersion=123&timeoutSeconds=300&fieldSelector="
				 "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
	free(url);
	kb_list_pager_release(&p);
}

static void continue_tokens_are_escaped_and_forgotten_by_a_new_list(void **state)
{
	kb_list_pager p;
	char *url = NULL;
	assert_int_equal(kb_list_pager_init(&p, "/apis/x/v1/things?labelSelector=a", NULL, 2), 0);
	/* A real token is base64 with '=' padding; '+' and '/' must not pass raw. */
	assert_int_equal(kb_list_pager_next(&p, "eyJ2Ijo+/x==", &url), 0);
	assert_string_equal(url, "/apis/x/v1/things?labelSelector=a&limit=2&continue=eyJ2Ijo%2B%2Fx%3D%3D");
	assert_int_equal(p.page, 1);
	free(url);
	assert_int_equal(kb_list_pager_next(&p, "second", &url), 0);
	assert_int_equal(p.page, 2);
	free(url);
	/* An expired token: the LIST starts over, without it. */
	assert_int_equal(kb_list_pager_first(&p, &url), 0);
	assert_string_equal(url, "/apis/x/v1/things?labelSelector=a&limit=2");
	assert_null(p.cont);
	assert_int_equal(p.page, 1);
	free(url);
	assert_int_equal(kb_list_pager_next(&p, "", &url), -EINVAL);
	kb_list_pager_release(&p);
}

static void shrink_halves_down_to_one_and_restore_goes_back(void **state)
{
	kb_list_pager p;
	assert_int_equal(kb_list_pager_init(&p, "/api/v1/pods", "", 5), 0);
	assert_null(p.selector);
	assert_int_equal(kb_list_pager_shrink(&p), 2);
	assert_int_equal(kb_list_pager_shrink(&p), 1);
	assert_int_equal(kb_list_pager_shrink(&p), 1);
	char *url;
	assert_int_equal(kb_list_pager_first(&p, &url), 0);
	assert_string_equal(url, "/api/v1/pods?limit=1");
	free(url);
	kb_list_pager_restore(&p);
	assert_int_equal(p.limit, 5);
	kb_list_pager_release(&p);
}

static void bad_arguments_are_refused(void **state)
{
	kb_list_pager p;
	assert_int_equal(kb_list_pager_init(&p, "api/v1/pods", NULL, 500), -EINVAL);
	kb_list_pager_release(&p);
	assert_int_equal(kb_list_pager_init(&p, "/api/v1/pods", NULL, 0), -EINVAL);
	kb_list_pager_release(&p);
	assert_int_equal(kb_list_pager_init(&p, "/api/v1/pods", NULL, 1), 0);
	char *url = (char *)"untouched";
	assert_int_equal(kb_list_pager_watch(&p, "", 10, &url), -EINVAL);
	assert_string_equal(url, "untouched");
	kb_list_pager_release(&p);
}

static void escape_keeps_unreserved_only(void **state)
{
	char *s = kb_url_escape("aZ09-_.~ /?&=%\xff");
	assert_string_equal(s, "aZ09-_.~%20%2F%3F%26%3D%25%FF");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_page_is_consistent_and_limited),
		cmocka_unit_test(pods_carry_the_field_selector_everywhere),
		cmocka_unit_test(continue_tokens_are_escaped_and_forgotten_by_a_new_list),
		cmocka_unit_test(shrink_halves_down_to_one_and_restore_goes_back),
		cmocka_unit_test(bad_arguments_are_refused),
		cmocka_unit_test(escape_keeps_unreserved_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scheduler/conf.h"
#include "scheduler/framework.h"
#include "plugins/registry.h"

static int load(const char *text, kb_conf *c, kb_err *err)
{
	memset(err, 0, sizeof(*err));
	return kb_conf_load_buffer(text, strlen(text), "conf.yaml", &kb_builtin_registry, c, err);
}

static void default_conf_is_kube_batchs_plus_gpu(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(kb_conf_load_default(&kb_builtin_registry, &c, &err), 0);
	assert_int_equal(c.nactions, 2);
	assert_string_equal(c.actions[0]->name, "allocate");
	assert_string_equal(c.actions[1]->name, "backfill");
	assert_int_equal(c.ntiers, 2);
	assert_int_equal(c.tiers[0].n, 2);
	assert_string_equal(c.tiers[0].plugins[0].name, "priority");
	assert_string_equal(c.tiers[0].plugins[1].name, "gang");
	assert_int_equal(c.tiers[1].n, 5);
	assert_string_equal(c.tiers[1].plugins[3].name, "nodeorder");
	assert_string_equal(c.tiers[1].plugins[4].name, "gpu"); /* kube-batchd's one addition */
	/* Every switch defaults to enabled, as a plain boolean. */
	assert_true(c.tiers[0].plugins[1].job_ready);
	assert_true(c.tiers[1].plugins[1].predicate);
	assert_false(kb_conf_has_action(&c, "enqueue"));
	kb_conf_release(&c);
}

static void switches_and_arguments_are_read(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(load("actions: \"enqueue, allocate\"\n"
			      "tiers:\n"
			      "- plugins:\n"
			      "  - name: gang\n"
			      "    enableJobOrder: false\n"
			      "  - name: nodeorder\n"
			      "    arguments:\n"
			      "      leastrequested.weight: 2\n",
			      &c, &err),
			 0);
	assert_true(kb_conf_has_action(&c, "enqueue"));
	assert_false(c.tiers[0].plugins[0].job_order);
	assert_true(c.tiers[0].plugins[0].job_ready);
	assert_int_equal(c.tiers[0].plugins[1].nargs, 1);
	assert_true(kb_plugin_arg_double(&c.tiers[0].plugins[1], "leastrequested.weight", 1) == 2.0);
	assert_true(kb_plugin_arg_double(&c.tiers[0].plugins[1], "absent", 5) == 5.0);
	kb_conf_release(&c);
}

static void unknown_action_names_file_and_line(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(load("\nactions: \"allocate, alocate\"\n", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "conf.yaml:2:10"));
	assert_non_null(strstr(err.msg, "unknown action \"alocate\""));
}

static void unknown_plugin_names_file_and_line(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(load("actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "conf.yaml:4:11: unknown plugin \"gnag\""));
}

static void unknown_switch_and_bad_value_are_refused(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(load("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrdr: true\n",
			      &c, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "conf.yaml:5:5: plugin gang: unknown key \"enableJobOrdr\""));
	assert_int_equal(load("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: maybe\n",
			      &c, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "must be true or false"));
}

static void duplicates_and_missing_actions_are_refused(void **state)
{
	kb_conf c;
	kb_err err;
	assert_int_equal(load("actions: \"allocate, allocate\"\n", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "listed twice"));
	assert_int_equal(load("tiers: []\n", &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "missing \"actions\""));
	assert_int_equal(load("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: gang\n",
			      &c, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "conf.yaml:6:5: plugin \"gang\" listed twice"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_conf_is_kube_batchs_plus_gpu),
		cmocka_unit_test(switches_and_arguments_are_read),
		cmocka_unit_test(unknown_action_names_file_and_line),
		cmocka_unit_test(unknown_plugin_names_file_and_line),
		cmocka_unit_test(unknown_switch_and_bad_value_are_refused),
		cmocka_unit_test(duplicates_and_missing_actions_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

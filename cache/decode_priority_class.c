/* decode_priority_class.c - a PriorityClass's fields (see decode.h): value
 * (required), globalDefault and preemptionPolicy. */
#include "cache/decode.h"

#include <errno.h>
#include <limits.h>

int dec_priority_class(dec_ctx *d)
{
	kb_priority_class_obj *pc = &d->o->u.priority_class;
	const kb_yaml_node *vn = kb_yaml_get(d->root, "value");
	int64_t v = 0;
	bool present;
	int r = dec_int(d, vn, "value", INT32_MIN, INT32_MAX, &v, &present);
	if (r < 0)
		return r;
	if (!present)
		return dec_fail(d, -EINVAL, NULL, "value", "required");
	pc->value = (int32_t)v;
	if ((r = dec_preemption_policy(d, kb_yaml_get(d->root, "preemptionPolicy"),
				       "preemptionPolicy", &pc->preemption_policy)) < 0)
		return r;
	return dec_bool(d, kb_yaml_get(d->root, "globalDefault"), "globalDefault",
			&pc->global_default);
}

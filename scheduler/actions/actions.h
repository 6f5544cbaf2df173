/* actions.h - the built-in actions and what they share.
 *
 * An action is a name and an execute function over a session
 * (scheduler/conf.h: kb_action_ops). The order they run in is the
 * configuration's "actions" string.
 */
#ifndef KB_SCHEDULER_ACTIONS_H
#define KB_SCHEDULER_ACTIONS_H

#include "api/snapshot.h"
#include "scheduler/conf.h"
#include "scheduler/framework.h"
#include "scheduler/job.h"

extern const kb_action_ops kb_action_enqueue;
extern const kb_action_ops kb_action_allocate;
extern const kb_action_ops kb_action_backfill;
extern const kb_action_ops kb_action_preempt;
extern const kb_action_ops kb_action_reclaim;

#endif

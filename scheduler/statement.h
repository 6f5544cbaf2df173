/* statement.h - tentative decisions, then commit or discard.
 *
 * Every action changes the session's snapshot only through a statement:
 * allocate (a pending task onto a node's idle resources), pipeline (onto
 * resources that are being released) and evict (a running task). Each
 * operation takes effect in the snapshot at once, so later decisions in the
 * same session see it, and is recorded. Commit hands the decisions to the
 * session's effects (bind, evict); discard undoes them in reverse order and
 * leaves the snapshot exactly as it was. This is how a gang that cannot
 * reach minMember leaves no trace.
 *
 * In debug and test builds, the snapshot invariants (api/snapshot.h) are
 * checked after every commit and discard on snapshots of moderate size.
 */
#ifndef KB_SCHEDULER_STATEMENT_H
#define KB_SCHEDULER_STATEMENT_H

#include <stdint.h>

#include "scheduler/framework.h"

typedef enum kb_stmt_op_kind {
	KB_OP_ALLOCATE,
	KB_OP_PIPELINE,
	KB_OP_EVICT,
	KB_OP_UNDONE, /* taken back inside commit (volume binding's gate) */
} kb_stmt_op_kind;

typedef struct kb_stmt_op {
	kb_stmt_op_kind kind;
	uint32_t task;
	int32_t prev_node;
	kb_task_status prev_status;
	const char *reason; /* evictions: why (names the preemptor) */
} kb_stmt_op;

/* The operations live in the session arena (grown by doubling; nothing to
 * free): a statement needs no release and cannot leak when an action
 * returns early. */
typedef struct kb_statement {
	kb_session *ssn;
	kb_stmt_op *ops;
	uint32_t n, cap;
} kb_statement;

void kb_stmt_init(kb_statement *st, kb_session *ssn);

/* Places pending task on node (its request must fit the node's idle
 * resources: the caller checked the predicates). Returns 0 or -ENOMEM (the
 * snapshot is then unchanged). O(1) plus the plugins' event handlers. */
int kb_stmt_allocate(kb_statement *st, uint32_t task, uint32_t node);

/* Places pending task on node's future idle resources (idle + releasing -
 * pipelined). Returns 0 or -ENOMEM. */
int kb_stmt_pipeline(kb_statement *st, uint32_t task, uint32_t node);

/* Marks a task that holds a node as releasing. reason is borrowed (session
 * arena or static). Returns 0 or -ENOMEM. */
int kb_stmt_evict(kb_statement *st, uint32_t task, const char *reason);

/* Hands allocations of ready jobs to effects->bind (tasks become Binding)
 * and evictions to effects->evict. A ready job some of whose allocations
 * still wait for their claims (scheduler/volumes.h) is not bound: the
 * claims to bind go to effects->bind_volumes, and unless that binds them
 * at once the job's allocations are taken back, its pending reason saying
 * what it waits for. Pipelined tasks stay pipelined. Effect
 * failures are counted in the session (kb_session_close reports them).
 * Empties the statement (it may be used again). */
void kb_stmt_commit(kb_statement *st);

/* Undoes every operation in reverse order and empties the statement. */
void kb_stmt_discard(kb_statement *st);

/* Undoes, in reverse order, the operations recorded after the first mark
 * ones (mark = kb_stmt_size() at the savepoint); the statement stays open
 * with those mark operations. O(undone operations). */
void kb_stmt_discard_to(kb_statement *st, uint32_t mark);

/* Number of operations recorded. */
static inline uint32_t kb_stmt_size(const kb_statement *st)
{
	return st->n;
}

#endif

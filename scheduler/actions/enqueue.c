/* enqueue - admit Pending PodGroups whose minimum the cluster can hold.
 *
 * volcano's enqueue: jobs come in queue order then job order; a Pending job
 * becomes Inqueue when every plugin that has an opinion finds it
 * enqueueable (proportion: its minimum fits under the queue's capability)
 * and its minimum resources fit into what is left of the cluster's
 * allocatable times the overcommit factor (kube-batchd reads the
 * `enqueue.overcommit-factor` argument of the gang plugin, default 1.2).
 * The minimum is the PodGroup's spec.minResources, or else the requests of
 * its minMember smallest tasks. Lone pods are always admitted.
 *
 * A group is admitted without its pods: training operators (Kubeflow's
 * training-operator in volcano mode, volcano's job controller) create the
 * PodGroup first and its pods only once it is Inqueue. Whether enough pods
 * exist (the job's validity) is allocate's question, not enqueue's; a group
 * with no pods and no minResources has a minimum of nothing and is admitted.
 * If its pods then ask for more than the whole cluster can ever hold, it
 * goes back to Pending (unadmit_impossible), so as not to hold every other
 * job out.
 * A group the cache found invalid (its queue unknown, its pods naming
 * another scheduler) is not.
 *
 * When preempt is configured, what lower-priority jobs hold counts as room
 * for a job (preempt could take it back); when reclaim is configured, so
 * does what reclaimable queues hold above their deserved share. Otherwise a
 * high-priority gang could never be admitted on a full cluster, and so
 * never preempt. The preempt and reclaim actions decide precisely.
 *
 * Cost: O(jobs log jobs + tasks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/actions/actions.h"

typedef struct held {
	int32_t priority;
	kb_res sum; /* after the prefix pass: held by this entry and all before it */
} held;

static int cmp_held(const void *a, const void *b)
{
	const held *x = a, *y = b;
	return x->priority < y->priority ? -1 : x->priority > y->priority;
}

/* What admission reasons with, built once per session. */
typedef struct enq_room {
	kb_res free;        /* allocatable x factor - used - minimum of Inqueue jobs */
	held *held;         /* preempt: what jobs hold, by priority, prefix sums */
	uint32_t nheld;
	kb_res reclaimable; /* reclaim: what reclaimable queues hold above deserved */
} enq_room;

static double overcommit_factor(const kb_conf *conf)
{
	double factor = 1.2;
	for (uint32_t t = 0; t < conf->ntiers; t++)
		for (uint32_t p = 0; p < conf->tiers[t].n; p++)
			if (strcmp(conf->tiers[t].plugins[p].name, "gang") == 0)
				factor = kb_plugin_arg_double(&conf->tiers[t].plugins[p],
							      "enqueue.overcommit-factor", factor);
	return factor;
}

/* What the cluster can still hold: total allocatable x factor - used - the
 * part of their minimum that Inqueue jobs have not started yet. */
static int free_room(kb_session *ssn, kb_res *ret)
{
	const kb_snapshot *s = ssn->snap;
	double factor = overcommit_factor(ssn->conf);
	for (int r = 0; r < KB_RES_MAX; r++) {
		/* A double past int64 does not convert (undefined): saturate. */
		double v = (double)s->total_allocatable.q[r] * factor;
		ret->q[r] = v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
	}
	for (uint32_t i = 0; i < s->nnodes; i++)
		if (kb_node_schedulable(&s->nodes[i]))
			kb_res_sub(ret, &s->nodes[i].used);
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->phase != KB_PG_INQUEUE)
			continue;
		kb_res pending_part;
		if (kb_job_min_request(ssn, j, &pending_part) < 0)
			return -ENOMEM;
		kb_res_sub(&pending_part, &j->allocated);
		for (int r = 0; r < KB_RES_MAX; r++)
			if (pending_part.q[r] > 0)
				ret->q[r] = kb_sat_sub64(ret->q[r], pending_part.q[r]);
	}
	return 0;
}

static int build_room(kb_session *ssn, enq_room *room)
{
	const kb_snapshot *s = ssn->snap;
	if (free_room(ssn, &room->free) < 0)
		return -ENOMEM;
	/* Room preemption could free for a job of priority p: what jobs of
	 * lower priority hold. Sorted by priority with prefix sums. */
	room->held = kb_arena_calloc(&ssn->arena, s->njobs + 1, sizeof(held));
	if (!room->held)
		return -ENOMEM;
	bool preempt = kb_conf_has_action(ssn->conf, "preempt");
	for (uint32_t i = 0; preempt && i < s->njobs; i++)
		if (!kb_res_is_zero(&s->jobs[i].allocated))
			room->held[room->nheld++] = (held){s->jobs[i].priority, s->jobs[i].allocated};
	qsort(room->held, room->nheld, sizeof(held), cmp_held);
	for (uint32_t i = 1; i < room->nheld; i++)
		kb_res_add(&room->held[i].sum, &room->held[i - 1].sum);
	memset(&room->reclaimable, 0, sizeof(room->reclaimable));
	if (!kb_conf_has_action(ssn->conf, "reclaim"))
		return 0;
	for (uint32_t i = 0; i < s->nqueues; i++) {
		const kb_queue *q = &s->queues[i];
		for (int r = 0; q->reclaimable && r < KB_RES_MAX; r++)
			if (q->allocated.q[r] > ssn->deserved[i].q[r])
				room->reclaimable.q[r] = kb_sat_add64(
					room->reclaimable.q[r],
					kb_sat_sub64(q->allocated.q[r], ssn->deserved[i].q[r]));
	}
	return 0;
}

/* Admits job j when its minimum fits the room (taking it from the room).
 * Returns 1 admitted, 0 not (with the job's reason), -ENOMEM. */
static int admit(kb_session *ssn, enq_room *room, kb_job *j)
{
	const kb_queue *q = &ssn->snap->queues[j->queue];
	if (q->state != KB_QUEUE_OPEN) {
		kb_job_out(ssn, j)->pending_reason =
			kb_arena_printf(&ssn->arena, "queue \"%s\" is not open", q->name);
		return 0;
	}
	if (!kb_job_enqueueable(ssn, j)) {
		if (!kb_job_out(ssn, j)->pending_reason)
			kb_job_out(ssn, j)->pending_reason = "not enqueueable: its queue cannot take it now";
		return 0;
	}
	kb_res min;
	if (kb_job_min_request(ssn, j, &min) < 0)
		return -ENOMEM;
	min.q[KB_RES_PODS] = 0;
	kb_res could = room->free;
	uint32_t below = 0; /* jobs of lower priority: held[0 .. below) */
	while (below < room->nheld && room->held[below].priority < j->priority)
		below++;
	if (below)
		kb_res_add(&could, &room->held[below - 1].sum);
	if (!kb_queue_overused(ssn, q))
		kb_res_add(&could, &room->reclaimable);
	for (int r = 0; r < KB_RES_MAX; r++)
		if (min.q[r] > 0 && min.q[r] > could.q[r]) {
			kb_job_out(ssn, j)->pending_reason =
				"waiting to be enqueued: the cluster cannot hold its minimum resources now";
			return 0;
		}
	kb_res_sub(&room->free, &min);
	j->phase = KB_PG_INQUEUE;
	return 1;
}

/* A group admitted before its pods existed was admitted with a minimum of
 * nothing. Once its pods say the minimum is more than the whole cluster can
 * ever hold (allocatable x factor), holding it back in the room would keep
 * every other job out while it cannot start either (volcano, which counts
 * only spec.minResources in the room, lets the others in): such a group,
 * with nothing allocated yet, goes back to Pending and is judged again with
 * the others, with its reason. Returns 0 or -ENOMEM. O(jobs + their tasks). */
static int unadmit_impossible(kb_session *ssn)
{
	kb_snapshot *s = ssn->snap_rw;
	double factor = overcommit_factor(ssn->conf);
	for (uint32_t i = 0; i < s->njobs; i++) {
		kb_job *j = &s->jobs[i];
		if (j->phase != KB_PG_INQUEUE || !kb_res_is_zero(&j->allocated) ||
		    j->nstatus[KB_TASK_PENDING] == 0)
			continue;
		kb_res min;
		if (kb_job_min_request(ssn, j, &min) < 0)
			return -ENOMEM;
		min.q[KB_RES_PODS] = 0;
		for (int r = 0; r < KB_RES_MAX; r++)
			if (min.q[r] > 0 && (double)min.q[r] > (double)s->total_allocatable.q[r] * factor) {
				j->phase = KB_PG_PENDING;
				break;
			}
	}
	return 0;
}

static int enqueue_execute(kb_session *ssn, kb_err *err)
{
	kb_snapshot *s = ssn->snap_rw;
	if (unadmit_impossible(ssn) < 0)
		return kb_err_set(err, -ENOMEM, "out of memory");
	kb_job_ref *items = kb_arena_calloc(&ssn->arena, s->njobs ? s->njobs : 1, sizeof(*items));
	if (!items)
		return kb_err_set(err, -ENOMEM, "out of memory");
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const kb_job *j = &s->jobs[i];
		if (j->flavor != KB_PG_NONE && j->phase == KB_PG_PENDING && j->queue >= 0 &&
		    !j->invalid)
			items[n++] = (kb_job_ref){ssn, i};
	}
	if (n == 0)
		return 0; /* the usual idle session: no room to build */
	qsort(items, n, sizeof(*items), kb_job_ref_cmp);
	enq_room room = {0};
	if (build_room(ssn, &room) < 0)
		return kb_err_set(err, -ENOMEM, "out of memory");
	for (uint32_t k = 0; k < n; k++)
		if (admit(ssn, &room, &s->jobs[items[k].job]) < 0)
			return kb_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

const kb_action_ops kb_action_enqueue = {
	.name = "enqueue",
	.execute = enqueue_execute,
};

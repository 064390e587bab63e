/*
 * gpusim: the thread state machine's table and its one transition function.
 *
 * gs_thread_transition() switches on the state, and each case handles every
 * event (the compiler's -Wswitch-enum keeps both switches total). Events that
 * cannot happen in a state answer GS_ACTION_INVALID and leave the state as it
 * is, so the engine can report misuse instead of corrupting a record.
 */
#include "config.h"

#include <string.h>

#include <gpusim/thread-state.h>

static const struct {
	const char *name;
	int java_id;
	gboolean waits;
} states[] = {
#define GS_X_ROW(suffix, name, java_id, waits) [GS_THREAD_##suffix] = {name, java_id, waits},
	GS_THREAD_STATE_MAP(GS_X_ROW)
#undef GS_X_ROW
};

static const char *const event_names[] = {
#define GS_X_ROW(suffix, name) [GS_EVENT_##suffix] = name,
	GS_THREAD_EVENT_MAP(GS_X_ROW)
#undef GS_X_ROW
};

static const char *const action_names[] = {
#define GS_X_ROW(suffix, name) [GS_ACTION_##suffix] = name,
	GS_THREAD_ACTION_MAP(GS_X_ROW)
#undef GS_X_ROW
};

G_STATIC_ASSERT(G_N_ELEMENTS(states) == GS_N_THREAD_STATES);
G_STATIC_ASSERT(G_N_ELEMENTS(event_names) == GS_N_THREAD_EVENTS);
G_STATIC_ASSERT(G_N_ELEMENTS(action_names) == GS_N_THREAD_ACTIONS);

const char *
gs_thread_state_name(GsThreadState state)
{
	g_return_val_if_fail(state < GS_N_THREAD_STATES, "invalid");
	return states[state].name;
}

gboolean
gs_thread_state_from_name(const char *name, GsThreadState *out)
{
	for (guint i = 0; i < GS_N_THREAD_STATES; i++) {
		if (strcmp(states[i].name, name) == 0) {
			*out = (GsThreadState) i;
			return TRUE;
		}
	}
	return FALSE;
}

int
gs_thread_state_java_id(GsThreadState state)
{
	g_return_val_if_fail(state < GS_N_THREAD_STATES, -2);
	return states[state].java_id;
}

gboolean
gs_thread_state_waits(GsThreadState state)
{
	g_return_val_if_fail(state < GS_N_THREAD_STATES, FALSE);
	return states[state].waits;
}

const char *
gs_thread_event_name(GsThreadEvent event)
{
	g_return_val_if_fail(event < GS_N_THREAD_EVENTS, "invalid");
	return event_names[event];
}

const char *
gs_thread_action_name(GsThreadAction action)
{
	g_return_val_if_fail(action < GS_N_THREAD_ACTIONS, "invalid");
	return action_names[action];
}

static GsTransition
go(GsThreadState to, GsThreadAction action)
{
	return (GsTransition){to, action};
}

/* The answer for events that leave a record where it is. */
#define STAY(action) go(from, GS_ACTION_##action)

/* Events that every state with a record answers the same way. */
static GsTransition
common(GsThreadState from, GsThreadEvent event)
{
	switch (event) {
	case GS_EVENT_REGISTER:
		return STAY(NONE);
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
		return STAY(NONE);
	case GS_EVENT_REMOVE:
		return go(GS_THREAD_UNKNOWN, GS_ACTION_ERASE);
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_BLOCK_UNTIL_READY:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return STAY(INVALID);
}

static GsTransition
from_unknown(GsThreadEvent event)
{
	const GsThreadState from = GS_THREAD_UNKNOWN;

	switch (event) {
	case GS_EVENT_REGISTER:
		return go(GS_THREAD_RUNNING, GS_ACTION_CREATE);
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_BLOCK_UNTIL_READY:
		return STAY(PROCEED);
	case GS_EVENT_ALLOC_SUCCESS:
		return STAY(NONE);
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
		/* An untracked thread's OOM still runs the check, then propagates. */
		return STAY(CHECK_DEADLOCK);
	case GS_EVENT_ALLOC_FAILED:
		return STAY(RETHROW);
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
	case GS_EVENT_REMOVE:
		return STAY(NONE);
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return STAY(INVALID);
}

static GsTransition
from_running(GsThreadEvent event)
{
	switch (event) {
	case GS_EVENT_ALLOC_START:
		return go(GS_THREAD_ALLOC, GS_ACTION_PROCEED);
	case GS_EVENT_BLOCK_UNTIL_READY:
		return go(GS_THREAD_RUNNING, GS_ACTION_PROCEED);
	case GS_EVENT_REMOVE:
		/* A running thread leaving is what releases rolled-back ones. */
		return go(GS_THREAD_UNKNOWN, GS_ACTION_ERASE_AND_WAKE);
	case GS_EVENT_REGISTER:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(GS_THREAD_RUNNING, event);
}

/* THREAD_ALLOC and THREAD_ALLOC_FREE: inside an allocation attempt. */
static GsTransition
from_alloc(GsThreadState from, GsThreadEvent event)
{
	const gboolean freed = from == GS_THREAD_ALLOC_FREE;

	switch (event) {
	case GS_EVENT_ALLOC_START:
		return STAY(RECURSIVE);
	case GS_EVENT_BLOCK_UNTIL_READY:
		return STAY(PROCEED);
	case GS_EVENT_ALLOC_SUCCESS:
		return go(GS_THREAD_RUNNING, GS_ACTION_WAKE_ONE);
	case GS_EVENT_ALLOC_OOM:
		/* Memory was freed during the attempt: retry at once, no wait. */
		return go(freed ? GS_THREAD_RUNNING : GS_THREAD_BLOCKED, GS_ACTION_CHECK_DEADLOCK);
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
		return go(freed ? GS_THREAD_RUNNING : GS_THREAD_BUFN_THROW,
			  GS_ACTION_CHECK_DEADLOCK);
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
		return go(GS_THREAD_RUNNING, GS_ACTION_CHECK_DEADLOCK);
	case GS_EVENT_ALLOC_FAILED:
		return go(GS_THREAD_RUNNING, GS_ACTION_RETHROW);
	case GS_EVENT_FREED_SAME_KIND:
		return go(GS_THREAD_ALLOC_FREE, GS_ACTION_NONE);
	case GS_EVENT_REGISTER:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
	case GS_EVENT_REMOVE:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(from, event);
}

static GsTransition
from_blocked(GsThreadEvent event)
{
	const GsThreadState from = GS_THREAD_BLOCKED;

	switch (event) {
	case GS_EVENT_BLOCK_UNTIL_READY:
		return STAY(WAIT);
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_WAKE_BLOCKED:
		return go(GS_THREAD_RUNNING, GS_ACTION_NOTIFY);
	case GS_EVENT_BUST_ROLLBACK:
		return go(GS_THREAD_BUFN_THROW, GS_ACTION_NOTIFY);
	case GS_EVENT_REMOVE:
		return go(GS_THREAD_REMOVE_THROW, GS_ACTION_NOTIFY);
	case GS_EVENT_REGISTER:
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_SPLIT_PICK:
	case GS_EVENT_WAKE_BUFN:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(from, event);
}

static GsTransition
from_bufn(GsThreadEvent event)
{
	const GsThreadState from = GS_THREAD_BUFN;

	switch (event) {
	case GS_EVENT_BLOCK_UNTIL_READY:
		return STAY(WAIT);
	case GS_EVENT_SPLIT_PICK:
		return go(GS_THREAD_SPLIT_THROW, GS_ACTION_NOTIFY);
	case GS_EVENT_WAKE_BUFN:
		return go(GS_THREAD_RUNNING, GS_ACTION_NOTIFY);
	case GS_EVENT_REMOVE:
		return go(GS_THREAD_REMOVE_THROW, GS_ACTION_NOTIFY);
	case GS_EVENT_REGISTER:
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(from, event);
}

/* BUFN_THROW, BUFN_WAIT, SPLIT_THROW: decided, not yet acted on by the thread. */
static GsTransition
from_pending(GsThreadState from, GsThreadEvent event)
{
	switch (event) {
	case GS_EVENT_BLOCK_UNTIL_READY:
		if (from == GS_THREAD_BUFN_THROW)
			return go(GS_THREAD_BUFN_WAIT, GS_ACTION_THROW_RETRY);
		if (from == GS_THREAD_BUFN_WAIT)
			return go(GS_THREAD_BUFN, GS_ACTION_CHECK_DEADLOCK);
		return go(GS_THREAD_RUNNING, GS_ACTION_THROW_SPLIT);
	case GS_EVENT_WAKE_BUFN:
		/* A pending rollback is cancelled; a split decision stands. */
		if (from == GS_THREAD_SPLIT_THROW)
			return STAY(NONE);
		return go(GS_THREAD_RUNNING, GS_ACTION_NONE);
	case GS_EVENT_REGISTER:
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_REMOVE:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(from, event);
}

static GsTransition
from_remove_throw(GsThreadEvent event)
{
	const GsThreadState from = GS_THREAD_REMOVE_THROW;

	switch (event) {
	case GS_EVENT_REGISTER:
		return STAY(SHUTTING_DOWN);
	case GS_EVENT_BLOCK_UNTIL_READY:
		return go(GS_THREAD_UNKNOWN, GS_ACTION_THROW_REMOVED);
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
	case GS_EVENT_REMOVE:
	case GS_N_THREAD_EVENTS:
		break;
	}
	return common(from, event);
}

GsTransition
gs_thread_transition(GsThreadState from, GsThreadEvent event)
{
	g_return_val_if_fail(event < GS_N_THREAD_EVENTS, go(from, GS_ACTION_INVALID));

	switch (from) {
	case GS_THREAD_UNKNOWN:
		return from_unknown(event);
	case GS_THREAD_RUNNING:
		return from_running(event);
	case GS_THREAD_ALLOC:
	case GS_THREAD_ALLOC_FREE:
		return from_alloc(from, event);
	case GS_THREAD_BLOCKED:
		return from_blocked(event);
	case GS_THREAD_BUFN:
		return from_bufn(event);
	case GS_THREAD_BUFN_THROW:
	case GS_THREAD_BUFN_WAIT:
	case GS_THREAD_SPLIT_THROW:
		return from_pending(from, event);
	case GS_THREAD_REMOVE_THROW:
		return from_remove_throw(event);
	case GS_N_THREAD_STATES:
		break;
	}
	g_return_val_if_reached(go(from, GS_ACTION_INVALID));
}

gboolean
gs_thread_transition_possible(GsThreadState from, GsThreadState to, GsThreadEvent *event)
{
	g_return_val_if_fail(from < GS_N_THREAD_STATES && to < GS_N_THREAD_STATES, FALSE);
	for (guint e = 0; e < GS_N_THREAD_EVENTS; e++) {
		GsTransition t = gs_thread_transition(from, (GsThreadEvent) e);

		if (t.action != GS_ACTION_INVALID && t.action != GS_ACTION_SHUTTING_DOWN &&
		    t.to == to) {
			if (event != NULL)
				*event = (GsThreadEvent) e;
			return TRUE;
		}
	}
	return FALSE;
}

gboolean
gs_thread_view_works_for(const GsThreadView *thread, GsTaskId task)
{
	if (!thread->is_pool || thread->pool_tasks == NULL)
		return FALSE;
	for (guint i = 0; i < thread->pool_tasks->len; i++) {
		if (g_array_index(thread->pool_tasks, GsTaskId, i) == task)
			return TRUE;
	}
	return FALSE;
}

const char *
gs_thread_view_check(const GsThreadView *t)
{
	if (t->state == GS_THREAD_UNKNOWN || t->state >= GS_N_THREAD_STATES)
		return "a record is never in state UNKNOWN";
	if (!t->is_pool) {
		if (t->task < 0)
			return "a dedicated thread has a task id >= 0";
		if (t->shuffle)
			return "only a pool thread can be a shuffle thread";
		if (t->pool_tasks != NULL && t->pool_tasks->len > 0)
			return "a dedicated thread works for no pool tasks";
		return NULL;
	}
	if (t->task != GS_NO_TASK)
		return "a pool thread has no task id of its own";
	if (t->pool_blocked)
		return "only a dedicated thread can wait on a pool";
	if (t->pool_tasks == NULL)
		return "a pool thread has a task set";
	for (guint i = 1; i < t->pool_tasks->len; i++) {
		if (g_array_index(t->pool_tasks, GsTaskId, i - 1) >=
		    g_array_index(t->pool_tasks, GsTaskId, i))
			return "a pool thread's task ids are ascending and distinct";
	}
	return NULL;
}

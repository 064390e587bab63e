/*
 * gpusim: a set of a driver's threads that they join and leave in constant
 * time.
 *
 * This module decides how a pass that runs often (the watchdog's tick, the
 * virtual clock's next deadline, a sample) costs what is live or waiting
 * rather than every thread a run ever made: the driver keeps the threads
 * that matter to the pass in a GsRunMembers and walks that. Each member
 * keeps its place in the set plus one (0: not in it) at a fixed offset
 * within itself, so that leaving moves the last member into the gap. The
 * order of the members is not kept; a pass that needs one sorts them.
 */
#ifndef GPUSIM_RUN_MEMBERS_H
#define GPUSIM_RUN_MEMBERS_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
	GPtrArray *all;     /* the members, in no particular order */
	gsize place_offset; /* of the guint in a member that holds its place + 1 */
} GsRunMembers;

/** An empty set of members whose place (a guint, 0 at first) is at @place_offset. */
void gs_run_members_init(GsRunMembers *set, gsize place_offset);
void gs_run_members_clear(GsRunMembers *set);

/** @member joins the set (@in) or leaves it; nothing happens when it is already so. */
void gs_run_members_put(GsRunMembers *set, gpointer member, gboolean in);

/** Whether @member is in the set. */
gboolean gs_run_members_has(const GsRunMembers *set, gconstpointer member);

static inline guint
gs_run_members_len(const GsRunMembers *set)
{
	return set->all->len;
}

static inline gpointer
gs_run_members_at(const GsRunMembers *set, guint i)
{
	return g_ptr_array_index(set->all, i);
}

G_END_DECLS

#endif /* GPUSIM_RUN_MEMBERS_H */

/* gpusim: a set of a driver's threads that they join and leave in constant time. */
#include "config.h"

#include "run/members.h"

static guint *
place_of(const GsRunMembers *set, gconstpointer member)
{
	return (guint *) ((char *) member + set->place_offset);
}

void
gs_run_members_init(GsRunMembers *set, gsize place_offset)
{
	set->all = g_ptr_array_new();
	set->place_offset = place_offset;
}

void
gs_run_members_clear(GsRunMembers *set)
{
	g_clear_pointer(&set->all, g_ptr_array_unref);
}

gboolean
gs_run_members_has(const GsRunMembers *set, gconstpointer member)
{
	return *place_of(set, member) > 0;
}

void
gs_run_members_put(GsRunMembers *set, gpointer member, gboolean in)
{
	guint *place = place_of(set, member);
	gpointer last;

	if (in == (*place > 0))
		return;
	if (in) {
		g_ptr_array_add(set->all, member);
		*place = set->all->len;
		return;
	}
	last = g_ptr_array_index(set->all, set->all->len - 1);
	*place_of(set, last) = *place;
	g_ptr_array_remove_index_fast(set->all, *place - 1);
	*place = 0;
}

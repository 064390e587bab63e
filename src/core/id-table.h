/*
 * gpusim: tables keyed by the ids drivers hand out (thread and task ids).
 *
 * This module decides where the slot of an id lives. Drivers hand out ids 0,
 * 1, 2... (the simulator does), so an id in range, or at most
 * GS_ID_TABLE_SLACK past it, gets its slot in an array indexed by id that
 * doubles as needed, with a presence bit; any other id (a real thread's, say)
 * goes to a hash table, created on first use. When the array grows over ids
 * the hash table holds, their slots move into it, so that every id has one
 * place however the ids arrive. Memory stays proportional to the ids handed
 * out in sequence. Tables are only looked up, never iterated, so their order
 * cannot leak into a decision. Internal to libgpusim: the engine's records
 * and the task priorities.
 */
#ifndef GPUSIM_ID_TABLE_H
#define GPUSIM_ID_TABLE_H

#include <glib.h>

G_BEGIN_DECLS

/* Past the end of the array by at most this much, an id still makes it grow. */
#define GS_ID_TABLE_SLACK 1024

typedef struct {
	gsize slot_size;
	guint8 *dense;      /* n_dense slots of slot_size bytes, by id */
	guint64 *present;   /* a bit per slot of dense: the id is in the table */
	guint64 n_dense;    /* a multiple of 64 */
	GHashTable *sparse; /* guint64* (owned) -> slot (owned), the other ids */
} GsIdTable;

/** An empty table of @slot_size-byte slots. */
void gs_id_table_init(GsIdTable *t, gsize slot_size);
/** Frees what the table holds; it is empty (and usable) again. */
void gs_id_table_clear(GsIdTable *t);
static inline gboolean
gs_id_table_dense_has(const GsIdTable *t, guint64 id)
{
	return (t->present[id / 64] >> (id % 64)) & 1;
}

static inline gpointer
gs_id_table_dense_slot(const GsIdTable *t, guint64 id)
{
	return t->dense + id * t->slot_size;
}

/** The slot of @id, or NULL when @id is not in the table (inline: the engine's every call). */
static inline gpointer
gs_id_table_lookup(const GsIdTable *t, guint64 id)
{
	if (id < t->n_dense)
		return gs_id_table_dense_has(t, id) ? gs_id_table_dense_slot(t, id) : NULL;
	return t->sparse != NULL ? g_hash_table_lookup(t->sparse, &id) : NULL;
}
/** The slot of @id, added (zeroed) when it was not in the table. */
gpointer gs_id_table_insert(GsIdTable *t, guint64 id);
/** Takes @id out of the table; FALSE if it was not in it. */
gboolean gs_id_table_remove(GsIdTable *t, guint64 id);
/** The number of ids in the table; O(size of the array), for invariant checks. */
guint gs_id_table_size(const GsIdTable *t);

G_END_DECLS

#endif /* GPUSIM_ID_TABLE_H */

/*
 * gpusim: tables keyed by the ids drivers hand out (see id-table.h).
 */
#include "config.h"

#include <string.h>

#include "core/id-table.h"

void
gs_id_table_init(GsIdTable *t, gsize slot_size)
{
	*t = (GsIdTable){.slot_size = slot_size};
}

void
gs_id_table_clear(GsIdTable *t)
{
	g_free(t->dense);
	g_free(t->present);
	if (t->sparse != NULL)
		g_hash_table_destroy(t->sparse);
	gs_id_table_init(t, t->slot_size);
}

/* A slot the hash table held for an id the array now covers moves into the array. */
static gboolean
move_into_array(gpointer key, gpointer slot, gpointer data)
{
	GsIdTable *t = data;
	guint64 id = *(const guint64 *) key;

	if (id >= t->n_dense)
		return FALSE;
	memcpy(gs_id_table_dense_slot(t, id), slot, t->slot_size);
	t->present[id / 64] |= (guint64) 1 << (id % 64);
	return TRUE;
}

static void
grow(GsIdTable *t, guint64 id)
{
	guint64 n = MAX(MAX(2 * t->n_dense, id + 1), 64);

	n = (n + 63) / 64 * 64;
	t->dense = g_realloc_n(t->dense, n, t->slot_size);
	memset(gs_id_table_dense_slot(t, t->n_dense), 0, (n - t->n_dense) * t->slot_size);
	t->present = g_renew(guint64, t->present, n / 64);
	memset(t->present + t->n_dense / 64, 0, (n - t->n_dense) / 64 * sizeof(guint64));
	t->n_dense = n;
	if (t->sparse != NULL)
		g_hash_table_foreach_remove(t->sparse, move_into_array, t);
}

gpointer
gs_id_table_insert(GsIdTable *t, guint64 id)
{
	gpointer slot;

	if (id >= t->n_dense && id < t->n_dense + GS_ID_TABLE_SLACK)
		grow(t, id);
	if (id < t->n_dense) {
		if (!gs_id_table_dense_has(t, id)) {
			memset(gs_id_table_dense_slot(t, id), 0, t->slot_size);
			t->present[id / 64] |= (guint64) 1 << (id % 64);
		}
		return gs_id_table_dense_slot(t, id);
	}
	if (t->sparse == NULL)
		t->sparse = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	slot = g_hash_table_lookup(t->sparse, &id);
	if (slot == NULL) {
		slot = g_malloc0(t->slot_size);
		g_hash_table_insert(t->sparse, g_memdup2(&id, sizeof id), slot);
	}
	return slot;
}

gboolean
gs_id_table_remove(GsIdTable *t, guint64 id)
{
	if (id < t->n_dense) {
		gboolean had = gs_id_table_dense_has(t, id);

		t->present[id / 64] &= ~((guint64) 1 << (id % 64));
		return had;
	}
	return t->sparse != NULL && g_hash_table_remove(t->sparse, &id);
}

guint
gs_id_table_size(const GsIdTable *t)
{
	guint n = t->sparse != NULL ? g_hash_table_size(t->sparse) : 0;

	for (guint64 i = 0; i < t->n_dense / 64; i++)
		n += (guint) __builtin_popcountll(t->present[i]);
	return n;
}

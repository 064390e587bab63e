/*
 * gpusim: storage memory beside execution memory (see storage.h).
 *
 * The memory store is one array of blocks, oldest first, over both modes:
 * a scenario caches a handful of blocks, and eviction walks them in that
 * order anyway (Spark's LinkedHashMap in insertion order).
 */
#include "config.h"

#include <gpusim/storage.h>

typedef struct {
	const char *name; /* the caller's, not copied */
	GsMemoryMode mode;
	gint64 size;
} Block;

typedef struct {
	gint64 max_memory; /* the unified region: storage size + execution pool size */
	gint64 region;     /* the storage region execution cannot evict */
	gint64 size;       /* the storage pool's size now */
	gint64 used;
	GsExecutionPool *exec; /* not owned */
} Mode;

struct GsStorage {
	Mode modes[GS_N_MEMORY_MODES];
	GArray *blocks;  /* Block, oldest first */
	GArray *evicted; /* Block: what the last call evicted, with the bytes taken */
	GsEvictMode evict;
};

gint64
gs_storage_region(gint64 max_memory, double fraction)
{
	return (gint64) ((double) max_memory * fraction);
}

GsStorage *
gs_storage_new(const gint64 max_memory[GS_N_MEMORY_MODES], double fraction, GsEvictMode evict,
	       GsExecutionPool *exec[GS_N_MEMORY_MODES])
{
	GsStorage *s = g_new0(GsStorage, 1);

	s->evict = evict;
	s->blocks = g_array_new(FALSE, FALSE, sizeof(Block));
	s->evicted = g_array_new(FALSE, FALSE, sizeof(Block));
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++) {
		Mode *mode = &s->modes[m];

		mode->max_memory = MAX(max_memory[m], 0);
		mode->region = CLAMP(gs_storage_region(mode->max_memory, fraction), 0,
				     mode->max_memory);
		mode->size = mode->region;
		mode->exec = exec[m];
		gs_execution_pool_set_size(exec[m], mode->max_memory - mode->region,
					   mode->max_memory);
	}
	return s;
}

void
gs_storage_free(GsStorage *s)
{
	if (s == NULL)
		return;
	g_array_unref(s->blocks);
	g_array_unref(s->evicted);
	g_free(s);
}

/* ---- the memory store ---- */

/* Notes that @take bytes of block @b were evicted. */
static void
note_evicted(GsStorage *s, const Block *b, gint64 take)
{
	Block gone = {.name = b->name, .mode = b->mode, .size = take};

	g_array_append_val(s->evicted, gone);
}

/*
 * Takes @bytes off the oldest blocks of @mode; blocks left empty go.
 * @evicting notes what each block lost.
 */
static void
trim_blocks(GsStorage *s, GsMemoryMode mode, gint64 bytes, gboolean evicting)
{
	for (guint i = 0; i < s->blocks->len && bytes > 0;) {
		Block *b = &g_array_index(s->blocks, Block, i);
		gint64 take;

		if (b->mode != mode) {
			i++;
			continue;
		}
		take = MIN(b->size, bytes);
		if (evicting)
			note_evicted(s, b, take);
		b->size -= take;
		bytes -= take;
		if (b->size == 0)
			g_array_remove_index(s->blocks, i);
		else
			i++;
	}
}

/* The MemoryStore: the oldest blocks of @mode that free @space together, or none. */
static gint64
evict_blocks(GsStorage *s, GsMemoryMode mode, gint64 space)
{
	gint64 freed = 0;
	guint last = 0;

	for (guint i = 0; i < s->blocks->len && freed < space; i++) {
		const Block *b = &g_array_index(s->blocks, Block, i);

		if (b->mode == mode) {
			freed += b->size;
			last = i + 1;
		}
	}
	if (freed < space)
		return 0;
	/* Dropping a block releases its storage memory, as BlockManager does. */
	for (guint i = 0; i < last; i++) {
		const Block *b = &g_array_index(s->blocks, Block, i);

		if (b->mode == mode)
			note_evicted(s, b, b->size);
	}
	for (guint i = last; i-- > 0;) {
		if (g_array_index(s->blocks, Block, i).mode == mode)
			g_array_remove_index(s->blocks, i);
	}
	s->modes[mode].used -= freed;
	return freed;
}

/* evictBlocksToFreeSpace for @space > 0 bytes of @mode. */
static GsEviction
evict(GsStorage *s, GsMemoryMode mode, gint64 space)
{
	GsEviction ev = {.asked = space};

	if (s->evict == GS_EVICT_BLOCKS) {
		ev.freed = evict_blocks(s, mode, space);
	} else if (space <= s->modes[mode].used) {
		/* The suites' mock: exactly what was asked, if storage holds it. */
		trim_blocks(s, mode, space, TRUE);
		s->modes[mode].used -= space;
		ev.freed = space;
	}
	return ev;
}

/* ---- the pools ---- */

static gint64
storage_free(const Mode *m)
{
	return m->size - m->used;
}

/* The execution pool gives @bytes of its size to storage (> 0) or takes them (< 0). */
static void
move_to_storage(Mode *m, gint64 bytes)
{
	m->size += bytes;
	gs_execution_pool_set_size(m->exec, m->max_memory - m->size,
				   m->max_memory - MIN(m->used, m->region));
}

GsStorageOutcome
gs_storage_acquire(GsStorage *s, GsMemoryMode mode, const char *block, gint64 bytes)
{
	GsStorageOutcome out = {0};
	Mode *m;
	Block fresh;

	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES && bytes >= 0, out);
	g_array_set_size(s->evicted, 0);
	m = &s->modes[mode];
	/* Fail fast: execution's memory is never evicted for storage. */
	if (bytes > m->max_memory - gs_execution_pool_get_used(m->exec)) {
		out.too_large = TRUE;
		return out;
	}
	if (bytes > storage_free(m)) {
		out.borrowed = MIN(gs_execution_pool_get_free(m->exec), bytes - storage_free(m));
		move_to_storage(m, out.borrowed);
	}
	if (bytes > storage_free(m))
		out.eviction = evict(s, mode, bytes - storage_free(m));
	out.granted = bytes <= storage_free(m);
	if (!out.granted)
		return out;
	m->used += bytes;
	fresh = (Block){.name = block != NULL ? block : "", .mode = mode, .size = bytes};
	if (bytes > 0)
		g_array_append_val(s->blocks, fresh);
	return out;
}

/* freeSpaceToShrinkPool: free memory first, then evicted blocks. */
static gint64
free_space_to_shrink(GsStorage *s, GsMemoryMode mode, gint64 space, GsEviction *ev)
{
	Mode *m = &s->modes[mode];
	gint64 unused = MIN(space, storage_free(m));

	if (space - unused <= 0)
		return unused;
	*ev = evict(s, mode, space - unused);
	return unused + ev->freed;
}

GsStorageOutcome
gs_storage_grow_execution(GsStorage *s, GsMemoryMode mode, gint64 num_bytes)
{
	GsStorageOutcome out = {0};
	Mode *m;
	gint64 extra, reclaimable;

	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, out);
	g_array_set_size(s->evicted, 0);
	m = &s->modes[mode];
	extra = num_bytes - gs_execution_pool_get_free(m->exec);
	reclaimable = MAX(storage_free(m), m->size - m->region);
	if (extra > 0 && reclaimable > 0) {
		out.reclaimed = free_space_to_shrink(s, mode, MIN(extra, reclaimable), &out.eviction);
		m->size -= out.reclaimed;
	}
	/* The maximum keeps a task from counting storage it could never evict. */
	gs_execution_pool_set_size(m->exec, m->max_memory - m->size,
				   m->max_memory - MIN(m->used, m->region));
	return out;
}

gint64
gs_storage_release(GsStorage *s, GsMemoryMode mode, gint64 bytes)
{
	Mode *m;
	gint64 released;

	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, 0);
	m = &s->modes[mode];
	released = CLAMP(bytes, 0, m->used);
	trim_blocks(s, mode, released, FALSE);
	m->used -= released;
	return released;
}

gint64
gs_storage_release_all(GsStorage *s, GsMemoryMode mode)
{
	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, 0);
	return gs_storage_release(s, mode, s->modes[mode].used);
}

gint64
gs_storage_get_used(const GsStorage *s, GsMemoryMode mode)
{
	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, 0);
	return s->modes[mode].used;
}

gint64
gs_storage_get_size(const GsStorage *s, GsMemoryMode mode)
{
	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, 0);
	return s->modes[mode].size;
}

guint
gs_storage_n_blocks(const GsStorage *s, GsMemoryMode mode)
{
	guint n = 0;

	g_return_val_if_fail(s != NULL && mode < GS_N_MEMORY_MODES, 0);
	for (guint i = 0; i < s->blocks->len; i++)
		n += g_array_index(s->blocks, Block, i).mode == mode;
	return n;
}

guint
gs_storage_n_evicted(const GsStorage *s)
{
	g_return_val_if_fail(s != NULL, 0);
	return s->evicted->len;
}

const char *
gs_storage_evicted(const GsStorage *s, guint index, gint64 *bytes)
{
	const Block *b;

	g_return_val_if_fail(s != NULL && index < s->evicted->len, NULL);
	b = &g_array_index(s->evicted, Block, index);
	if (bytes != NULL)
		*bytes = b->size;
	return b->name;
}

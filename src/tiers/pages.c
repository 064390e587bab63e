/*
 * gpusim: page tables, the consumer spill order and fair-share admission
 * (Spark's TaskMemoryManager, MemoryConsumer and ExecutionMemoryPool).
 *
 * The page table keeps Spark's bitset of allocated numbers, so "lowest free
 * number" is a scan for the first clear bit, and a slot array that grows on
 * demand: a full table is 8192 slots of 16 bytes (128 KiB), while most tasks
 * hold a handful of pages, and a simulator may run hundreds of tasks.
 *
 * The execution pool keeps its task -> bytes map as an array sorted by task
 * id. Only lookups and the count matter to the rule, but a sorted array keeps
 * every walk over it in a fixed order and costs nothing at the sizes involved
 * (one entry per running task).
 */
#include "config.h"

#include <string.h>

#include <gpusim/pages.h>

#define N_WORDS (GS_PAGE_TABLE_SIZE / 64)

G_STATIC_ASSERT(GS_PAGE_NUMBER_BITS + GS_PAGE_OFFSET_BITS == 64);
G_STATIC_ASSERT(GS_PAGE_TABLE_SIZE == 1u << GS_PAGE_NUMBER_BITS);
G_STATIC_ASSERT(GS_PAGE_OFFSET_MASK == (G_GUINT64_CONSTANT(1) << GS_PAGE_OFFSET_BITS) - 1);
G_STATIC_ASSERT(GS_PAGE_TABLE_SIZE % 64 == 0);

/* ---- Address encoding ---- */

guint64
gs_page_encode(guint page_number, guint64 offset)
{
	/*
	 * Spark only asserts the number is not negative; a larger one would lose
	 * its high bits in the shift and alias a lower page, which is never what
	 * a caller meant.
	 */
	g_return_val_if_fail(page_number < GS_PAGE_TABLE_SIZE, 0);
	return ((guint64) page_number << GS_PAGE_OFFSET_BITS) | (offset & GS_PAGE_OFFSET_MASK);
}

guint
gs_page_decode_number(guint64 addr)
{
	/* Unsigned: Java's >>> on a long whose top bit is a page-number bit. */
	return (guint) (addr >> GS_PAGE_OFFSET_BITS);
}

guint64
gs_page_decode_offset(guint64 addr)
{
	return addr & GS_PAGE_OFFSET_MASK;
}

/* ---- Default page size ---- */

/* ByteArrayMethods.nextPowerOf2: the number itself if a power of 2 (and 0 for 0). */
static gint64
next_power_of_2(gint64 num)
{
	gint64 high = 0;

	for (gint64 v = num; v != 0; v >>= 1)
		high = high == 0 ? 1 : high << 1;
	return high == num ? num : high << 1;
}

gint64
gs_page_default_size(gint64 pool_bytes, guint cores, gint64 array_header)
{
	gint64 size;

	g_return_val_if_fail(cores > 0, GS_PAGE_MIN_DEFAULT_BYTES);
	g_return_val_if_fail(pool_bytes >= 0, GS_PAGE_MIN_DEFAULT_BYTES);
	g_return_val_if_fail(array_header >= 0 && array_header < GS_PAGE_MIN_DEFAULT_BYTES,
			     GS_PAGE_MIN_DEFAULT_BYTES);

	/*
	 * 16 is Spark's safety factor: rounding up to a power of 2 can double the
	 * share, so each core gets between 1/16 and 1/8 of the pool per page.
	 */
	size = next_power_of_2(pool_bytes / (gint64) cores / 16);
	size = MIN(GS_PAGE_MAX_DEFAULT_BYTES, MAX(GS_PAGE_MIN_DEFAULT_BYTES, size));
	/*
	 * Under G1 a power-of-2 long[] plus its header would straddle a region
	 * boundary and waste most of a region (SPARK-37593).
	 */
	return size - array_header;
}

/* ---- Page table ---- */

static const char *const result_names[] = {
#define GS_X_ROW(suffix, name) [GS_PAGE_##suffix] = name,
	GS_PAGE_RESULT_MAP(GS_X_ROW)
#undef GS_X_ROW
};

G_STATIC_ASSERT(G_N_ELEMENTS(result_names) == GS_PAGE_N_RESULTS);

const char *
gs_page_result_name(GsPageResult result)
{
	g_return_val_if_fail(result < GS_PAGE_N_RESULTS, "invalid");
	return result_names[result];
}

typedef struct {
	gint64 size;
	gpointer memory;
} Slot;

struct GsPageTable {
	guint64 allocated[N_WORDS]; /* bit n set iff page n is allocated */
	Slot *slots;                /* n_slots long; only allocated numbers are meaningful */
	guint n_slots;
	guint count;
	gint64 bytes;
	gint64 peak_bytes;
	gboolean debug_fill;
};

GsPageTable *
gs_page_table_new(void)
{
	return g_new0(GsPageTable, 1);
}

void
gs_page_table_free(GsPageTable *table)
{
	if (table == NULL)
		return;
	g_free(table->slots);
	g_free(table);
}

void
gs_page_table_set_debug_fill(GsPageTable *table, gboolean on)
{
	g_return_if_fail(table != NULL);
	table->debug_fill = on != FALSE;
}

gboolean
gs_page_table_get_debug_fill(const GsPageTable *table)
{
	g_return_val_if_fail(table != NULL, FALSE);
	return table->debug_fill;
}

static gboolean
is_allocated(const GsPageTable *table, guint number)
{
	return number < GS_PAGE_TABLE_SIZE &&
	       (table->allocated[number / 64] >> (number % 64) & 1) != 0;
}

/* allocatedPages.nextClearBit(0); GS_PAGE_TABLE_SIZE when every bit is set. */
static guint
lowest_free(const GsPageTable *table)
{
	for (guint w = 0; w < N_WORDS; w++) {
		guint64 word = table->allocated[w];
		guint bit = 0;

		if (word == G_MAXUINT64)
			continue;
		while ((word >> bit & 1) != 0)
			bit++;
		return w * 64 + bit;
	}
	return GS_PAGE_TABLE_SIZE;
}

static void
ensure_slot(GsPageTable *table, guint number)
{
	guint n;

	if (number < table->n_slots)
		return;
	/* Doubling keeps growth amortised; 16 avoids a string of tiny steps. */
	n = MAX(MAX(number + 1, table->n_slots * 2), 16u);
	n = MIN(n, GS_PAGE_TABLE_SIZE);
	table->slots = g_renew(Slot, table->slots, n);
	memset(table->slots + table->n_slots, 0, (n - table->n_slots) * sizeof(Slot));
	table->n_slots = n;
}

GsPageResult
gs_page_table_allocate(GsPageTable *table, gint64 size, gpointer memory, guint *number_out)
{
	guint number;

	g_return_val_if_fail(table != NULL, GS_PAGE_NO_MEMORY);
	g_return_val_if_fail(size >= 0, GS_PAGE_NO_MEMORY);

	/* Spark's order: the size check comes before any memory is acquired... */
	if (size > GS_PAGE_MAX_BYTES)
		return GS_PAGE_TOO_LARGE;
	/* ...a grant of nothing returns null before a number is looked for... */
	if (size == 0)
		return GS_PAGE_NO_MEMORY;
	/* ...and only then is the table found full. */
	number = lowest_free(table);
	if (number >= GS_PAGE_TABLE_SIZE)
		return GS_PAGE_TABLE_FULL;

	ensure_slot(table, number);
	table->allocated[number / 64] |= G_GUINT64_CONSTANT(1) << (number % 64);
	table->slots[number] = (Slot){ .size = size, .memory = memory };
	table->count++;
	table->bytes += size;
	table->peak_bytes = MAX(table->peak_bytes, table->bytes);
	if (table->debug_fill && memory != NULL)
		memset(memory, GS_PAGE_FILL_ALLOCATED, (gsize) size);
	if (number_out != NULL)
		*number_out = number;
	return GS_PAGE_OK;
}

static gint64
release_page(GsPageTable *table, guint number)
{
	Slot *slot = &table->slots[number];
	gint64 size = slot->size;

	/* Filled before the number is given back, as the allocator fills before freeing. */
	if (table->debug_fill && slot->memory != NULL)
		memset(slot->memory, GS_PAGE_FILL_FREED, (gsize) size);
	table->allocated[number / 64] &= ~(G_GUINT64_CONSTANT(1) << (number % 64));
	*slot = (Slot){ 0 };
	table->count--;
	table->bytes -= size;
	return size;
}

GsPageResult
gs_page_table_free_page(GsPageTable *table, guint number, gint64 *size_out)
{
	gint64 size;

	g_return_val_if_fail(table != NULL, GS_PAGE_NOT_ALLOCATED);

	/*
	 * Spark asserts here (a double free, a page from another task). A
	 * scenario may script either, so it is an outcome, not a crash.
	 */
	if (!is_allocated(table, number))
		return GS_PAGE_NOT_ALLOCATED;
	size = release_page(table, number);
	if (size_out != NULL)
		*size_out = size;
	return GS_PAGE_OK;
}

gboolean
gs_page_table_lookup(const GsPageTable *table, guint number, GsPageInfo *info)
{
	g_return_val_if_fail(table != NULL, FALSE);

	if (!is_allocated(table, number))
		return FALSE;
	if (info != NULL) {
		info->number = number;
		info->size = table->slots[number].size;
		info->memory = table->slots[number].memory;
	}
	return TRUE;
}

gboolean
gs_page_table_resolve(const GsPageTable *table, guint64 addr, GsPageInfo *info, guint64 *offset)
{
	if (!gs_page_table_lookup(table, gs_page_decode_number(addr), info))
		return FALSE;
	if (offset != NULL)
		*offset = gs_page_decode_offset(addr);
	return TRUE;
}

guint
gs_page_table_count(const GsPageTable *table)
{
	g_return_val_if_fail(table != NULL, 0);
	return table->count;
}

gint64
gs_page_table_get_bytes(const GsPageTable *table)
{
	g_return_val_if_fail(table != NULL, 0);
	return table->bytes;
}

gint64
gs_page_table_get_peak_bytes(const GsPageTable *table)
{
	g_return_val_if_fail(table != NULL, 0);
	return table->peak_bytes;
}

gint64
gs_page_table_leaks(const GsPageTable *table, GArray *leaks)
{
	gint64 total = 0;

	g_return_val_if_fail(table != NULL, 0);
	g_return_val_if_fail(leaks == NULL ||
			     g_array_get_element_size(leaks) == sizeof(GsPageInfo), 0);

	/* Allocated numbers are all below n_slots, so the walk stops there. */
	for (guint n = 0; n < table->n_slots; n++) {
		GsPageInfo info;

		if (!gs_page_table_lookup(table, n, &info))
			continue;
		total += info.size;
		if (leaks != NULL)
			g_array_append_val(leaks, info);
	}
	return total;
}

gint64
gs_page_table_clean_up(GsPageTable *table, GArray *leaks)
{
	gint64 total;

	g_return_val_if_fail(table != NULL, 0);

	total = gs_page_table_leaks(table, leaks);
	for (guint n = 0; n < table->n_slots; n++) {
		if (is_allocated(table, n))
			release_page(table, n);
	}
	return total;
}

/* ---- Memory consumers ---- */

gint64
gs_consumer_page_request(gint64 page_size, gint64 required)
{
	return MAX(page_size, required);
}

gint
gs_consumer_pick_spill(const GsConsumerView *consumers, guint n_consumers, GsConsumerId requester,
		       gint64 needed)
{
	gint ceiling = -1, largest = -1;
	gint64 ceiling_key = 0, largest_key = 0;

	g_return_val_if_fail(n_consumers == 0 || consumers != NULL, -1);
	g_return_val_if_fail(n_consumers <= (guint) G_MAXINT, -1);

	if (needed <= 0)
		return -1;
	for (guint i = 0; i < n_consumers; i++) {
		const GsConsumerView *c = &consumers[i];
		gint64 key;

		if (!c->can_spill || c->used <= 0)
			continue;
		/*
		 * "Self-spill is lowest priority": the requester keyed 0 is never a
		 * ceiling of a positive need and is the largest key only when it is
		 * the last candidate.
		 */
		key = c->id == requester ? 0 : c->used;
		/* <= and >= rather than < and >: of equal keys, the one listed last wins. */
		if (key >= needed && (ceiling < 0 || key <= ceiling_key)) {
			ceiling = (gint) i;
			ceiling_key = key;
		}
		if (largest < 0 || key >= largest_key) {
			largest = (gint) i;
			largest_key = key;
		}
	}
	return ceiling >= 0 ? ceiling : largest;
}

GsSpillOutcome
gs_consumer_spill_loop(const GsConsumerView *consumers, guint n_consumers, GsConsumerId requester,
		       gint64 required, gint64 got, GsSpillFunc spill, GsReacquireFunc reacquire,
		       gpointer user_data, GArray *calls)
{
	GsSpillOutcome out = { .got = got };
	g_autofree GsConsumerView *snapshot = NULL;
	g_autofree gint64 *held = NULL;

	g_return_val_if_fail(n_consumers == 0 || consumers != NULL, out);
	g_return_val_if_fail(spill != NULL, out);
	g_return_val_if_fail(required >= 0 && got >= 0, out);
	g_return_val_if_fail(calls == NULL ||
			     g_array_get_element_size(calls) == sizeof(GsSpillCall), out);

	if (got >= required || n_consumers == 0)
		return out;

	/*
	 * The keys are taken once, as Spark builds its TreeMap once: a consumer
	 * that spilled keeps its original key. The copy's can_spill is cleared
	 * when a consumer releases nothing, which is how Spark's list loses it.
	 */
	snapshot = g_memdup2(consumers, n_consumers * sizeof *snapshot);
	held = g_new(gint64, n_consumers);
	for (guint i = 0; i < n_consumers; i++)
		held[i] = MAX(consumers[i].used, 0);

	while (out.got < required) {
		gint64 needed = required - out.got;
		gint i = gs_consumer_pick_spill(snapshot, n_consumers, requester, needed);
		GsSpillCall call = { .asked = needed };
		gint64 released;

		if (i < 0)
			break;
		call.consumer = snapshot[i].id;
		released = spill(call.consumer, needed, requester, user_data);
		call.released = CLAMP(released, 0, held[i]);
		if (call.released > 0) {
			gint64 regrant;

			held[i] -= call.released;
			/*
			 * Ask the pool again: the freed bytes are not ours until
			 * granted, and another task may have taken them (SPARK-35486).
			 */
			regrant = reacquire != NULL ? reacquire(needed, call.released, user_data)
						    : MIN(call.released, needed);
			call.acquired = CLAMP(regrant, 0, needed);
			out.got += call.acquired;
			out.released += call.released;
		} else {
			snapshot[i].can_spill = FALSE;
		}
		out.n_calls++;
		if (calls != NULL)
			g_array_append_val(calls, call);
	}
	return out;
}

/* ---- Fair share ---- */

GsFairShareGrant
gs_fair_share_decide(const GsFairShareRequest *req)
{
	GsFairShareGrant grant = { 0 };
	gint64 max_to_grant, to_grant;

	g_return_val_if_fail(req != NULL, grant);
	g_return_val_if_fail(req->num_bytes > 0, grant);
	g_return_val_if_fail(req->n_tasks >= 1, grant);
	g_return_val_if_fail(req->task_bytes >= 0 && req->memory_free >= 0, grant);

	/*
	 * The cap uses the size the pool could grow to, the floor the size it has
	 * now: a unified pool may lend to storage what a task could reclaim, but
	 * a task is only promised a share of what is really there.
	 */
	grant.max_per_task = req->max_pool_size / (gint64) req->n_tasks;
	grant.min_per_task = req->pool_size / (2 * (gint64) req->n_tasks);
	/* max(0, ...): a task above its cap after N grew is granted 0, never less (SPARK-4715). */
	max_to_grant = MIN(req->num_bytes, MAX(0, grant.max_per_task - req->task_bytes));
	to_grant = MIN(max_to_grant, req->memory_free);
	if (to_grant < req->num_bytes && req->task_bytes + to_grant < grant.min_per_task) {
		grant.must_wait = TRUE;
		return grant;
	}
	grant.granted = to_grant;
	return grant;
}

typedef struct {
	GsTaskId task;
	gint64 bytes;
} TaskBytes;

struct GsExecutionPool {
	gint64 pool_size;
	gint64 max_pool_size;
	gint64 used;
	GArray *tasks; /* TaskBytes, ascending task id */
};

GsExecutionPool *
gs_execution_pool_new(gint64 pool_size)
{
	GsExecutionPool *pool;

	g_return_val_if_fail(pool_size >= 0, NULL);
	pool = g_new0(GsExecutionPool, 1);
	pool->pool_size = pool_size;
	pool->max_pool_size = pool_size;
	pool->tasks = g_array_new(FALSE, FALSE, sizeof(TaskBytes));
	return pool;
}

void
gs_execution_pool_free(GsExecutionPool *pool)
{
	if (pool == NULL)
		return;
	g_array_unref(pool->tasks);
	g_free(pool);
}

void
gs_execution_pool_set_size(GsExecutionPool *pool, gint64 pool_size, gint64 max_pool_size)
{
	g_return_if_fail(pool != NULL);
	g_return_if_fail(pool_size >= pool->used);
	g_return_if_fail(max_pool_size >= 0);
	pool->pool_size = pool_size;
	pool->max_pool_size = max_pool_size;
}

/* Binary search; on a miss, *index is where the task would go. */
static gboolean
find_task(const GsExecutionPool *pool, GsTaskId task, guint *index)
{
	guint lo = 0, hi = pool->tasks->len;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		GsTaskId t = g_array_index(pool->tasks, TaskBytes, mid).task;

		if (t == task) {
			*index = mid;
			return TRUE;
		}
		if (t < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	*index = lo;
	return FALSE;
}

GsFairShareGrant
gs_execution_pool_acquire(GsExecutionPool *pool, GsTaskId task, gint64 num_bytes)
{
	GsFairShareGrant grant = { 0 };
	GsFairShareRequest req;
	TaskBytes *entry;
	guint index;

	g_return_val_if_fail(pool != NULL, grant);
	g_return_val_if_fail(num_bytes > 0, grant);

	/*
	 * Registered on every pass: while this task waited, a release by another
	 * of its consumers may have dropped its entry at 0, and a waiting task
	 * must still count in N for the others.
	 */
	if (!find_task(pool, task, &index)) {
		TaskBytes fresh = { .task = task, .bytes = 0 };

		g_array_insert_val(pool->tasks, index, fresh);
	}
	entry = &g_array_index(pool->tasks, TaskBytes, index);

	req = (GsFairShareRequest){
		.num_bytes = num_bytes,
		.task_bytes = entry->bytes,
		.n_tasks = pool->tasks->len,
		.pool_size = pool->pool_size,
		.max_pool_size = pool->max_pool_size,
		.memory_free = pool->pool_size - pool->used,
	};
	grant = gs_fair_share_decide(&req);
	if (!grant.must_wait) {
		entry->bytes += grant.granted;
		pool->used += grant.granted;
	}
	return grant;
}

gboolean
gs_execution_pool_acquire_all(GsExecutionPool *pool, GsTaskId task, gint64 num_bytes)
{
	GsFairShareGrant grant;

	/* Nothing to share out: acquireMemory itself takes only numBytes > 0. */
	if (num_bytes == 0)
		return TRUE;
	grant = gs_execution_pool_acquire(pool, task, num_bytes);
	if (!grant.must_wait && grant.granted == num_bytes)
		return TRUE;
	if (!grant.must_wait)
		gs_execution_pool_release(pool, task, grant.granted);
	return FALSE;
}

gint64
gs_execution_pool_release(GsExecutionPool *pool, GsTaskId task, gint64 bytes)
{
	TaskBytes *entry;
	gint64 to_free;
	guint index;

	g_return_val_if_fail(pool != NULL, 0);
	g_return_val_if_fail(bytes >= 0, 0);

	if (!find_task(pool, task, &index))
		return 0;
	entry = &g_array_index(pool->tasks, TaskBytes, index);
	/* Spark warns ("Internal error: release called on ...") and frees what is there. */
	to_free = MIN(bytes, entry->bytes);
	entry->bytes -= to_free;
	pool->used -= to_free;
	if (entry->bytes <= 0)
		g_array_remove_index(pool->tasks, index);
	return to_free;
}

gint64
gs_execution_pool_release_all(GsExecutionPool *pool, GsTaskId task)
{
	return gs_execution_pool_release(pool, task, gs_execution_pool_get_task_bytes(pool, task));
}

gint64
gs_execution_pool_get_task_bytes(const GsExecutionPool *pool, GsTaskId task)
{
	guint index;

	g_return_val_if_fail(pool != NULL, 0);
	if (!find_task(pool, task, &index))
		return 0;
	return g_array_index(pool->tasks, TaskBytes, index).bytes;
}

gboolean
gs_execution_pool_has_task(const GsExecutionPool *pool, GsTaskId task)
{
	guint index;

	g_return_val_if_fail(pool != NULL, FALSE);
	return find_task(pool, task, &index);
}

guint
gs_execution_pool_n_tasks(const GsExecutionPool *pool)
{
	g_return_val_if_fail(pool != NULL, 0);
	return pool->tasks->len;
}

gint64
gs_execution_pool_get_size(const GsExecutionPool *pool)
{
	g_return_val_if_fail(pool != NULL, 0);
	return pool->pool_size;
}

gint64
gs_execution_pool_get_used(const GsExecutionPool *pool)
{
	g_return_val_if_fail(pool != NULL, 0);
	return pool->used;
}

gint64
gs_execution_pool_get_free(const GsExecutionPool *pool)
{
	g_return_val_if_fail(pool != NULL, 0);
	return pool->pool_size - pool->used;
}

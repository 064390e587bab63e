/*
 * gpusim: results and their packed rows (result.h).
 */
#include "config.h"

#include <string.h>

#include "run/result.h"

/* ---- packed storage ---- */

/*
 * A result's rows are carved from blocks: one allocation per block instead
 * of one per row, and no allocator header or rounding per row. Nothing is
 * freed before the result frees its blocks.
 */
typedef struct {
	gsize used, size;
} BlockHead;

#define BLOCK_BYTES (64 * 1024)
/* Every record packed here holds only pointers and 64-bit integers at most. */
#define RECORD_ALIGN 8

static inline gsize
record_size(gsize size)
{
	return (size + RECORD_ALIGN - 1) & ~(gsize) (RECORD_ALIGN - 1);
}

static gpointer
block_alloc0(GPtrArray *blocks, gsize size)
{
	BlockHead *head = blocks->len > 0 ? blocks->pdata[blocks->len - 1] : NULL;
	gpointer p;

	size = record_size(size);
	if (head == NULL || head->size - head->used < size) {
		gsize bytes = MAX(BLOCK_BYTES, sizeof *head + size);

		head = g_malloc(bytes);
		head->used = sizeof *head;
		head->size = bytes;
		g_ptr_array_add(blocks, head);
	}
	p = (guint8 *) head + head->used;
	head->used += size;
	return memset(p, 0, size);
}

/* ---- names ---- */

static const char *const outcome_names[] = {"completed", "failed", "deadlock", "timeout"};

const char *
gs_outcome_name(GsOutcome outcome)
{
	g_return_val_if_fail(outcome < G_N_ELEMENTS(outcome_names), "invalid");
	return outcome_names[outcome];
}

static const char *const refusal_names[] = {
	[GS_REFUSED_NO_ROOM] = "no_room",       [GS_REFUSED_RESERVATION] = "reservation",
	[GS_REFUSED_FAIR_SHARE] = "fair_share", [GS_REFUSED_PAGE_TABLE] = "page_table",
	[GS_REFUSED_NEVER_FITS] = "never_fits", [GS_REFUSED_DEVICE] = "device",
};

G_STATIC_ASSERT(G_N_ELEMENTS(refusal_names) == GS_N_REFUSALS);

const char *
gs_refusal_name(GsRefusal why)
{
	g_return_val_if_fail(why < GS_N_REFUSALS, "invalid");
	return refusal_names[why];
}

/* ---- results ---- */

static void
thread_result_clear(gpointer data)
{
	GsThreadResult *t = data;

	if (t->exceptions != NULL)
		g_array_unref(t->exceptions);
}

void
gs_result_free(GsResult *r)
{
	if (r == NULL)
		return;
	g_ptr_array_unref(r->tasks);
	g_ptr_array_unref(r->threads);
	g_ptr_array_unref(r->rows);
	g_array_unref(r->timeline);
	g_array_unref(r->lost);
	g_array_unref(r->reservations);
	g_string_chunk_free(r->strings);
	g_free(r->stop_reason);
	g_free(r->invariant_broken);
	g_free(r->needless_bust);
	g_free(r);
}

GsResult *
gs_result_new_sized(guint tasks, guint threads)
{
	GsResult *r = g_new0(GsResult, 1);

	r->tasks = g_ptr_array_sized_new(tasks);
	r->threads = g_ptr_array_new_full(threads, thread_result_clear);
	r->rows = g_ptr_array_new_with_free_func(g_free);
	r->timeline = g_array_new(FALSE, TRUE, sizeof(GsSample));
	r->lost = g_array_new(FALSE, FALSE, sizeof(GsLostTime));
	r->reservations = g_array_new(FALSE, FALSE, sizeof(GsReservationView));
	r->strings = g_string_chunk_new(4096);
	return r;
}

GsResult *
gs_result_new(void)
{
	return gs_result_new_sized(0, 0);
}

GsTaskResult *
gs_result_add_task(GsResult *r, const char *id)
{
	GsTaskResult *t = block_alloc0(r->rows, sizeof *t);

	t->id = g_string_chunk_insert(r->strings, id);
	g_ptr_array_add(r->tasks, t);
	return t;
}

GsThreadResult *
gs_result_add_thread(GsResult *r, const char *name, const GsTaskResult *task)
{
	GsThreadResult *t = block_alloc0(r->rows, sizeof *t);

	t->name = g_string_chunk_insert(r->strings, name);
	t->task = task != NULL ? task->id : NULL;
	t->pool = task == NULL;
	g_ptr_array_add(r->threads, t);
	return t;
}

void
gs_result_add_task_metrics(GsTaskResult *task, const GsMetrics *m, gint64 footprint)
{
	task->retries += m->retries;
	task->splits += m->splits;
	task->blocked_ns = gs_time_add(task->blocked_ns, m->blocked_ns);
	task->lost_ns = gs_time_add(task->lost_ns, m->lost_ns);
	task->max_footprint = MAX(task->max_footprint, footprint);
	task->max_allocated = MAX(task->max_allocated, m->gpu_max_allocated);
}

void
gs_result_sum_tasks(GsResult *r)
{
	for (guint i = 0; i < r->tasks->len; i++) {
		GsTaskResult *task = r->tasks->pdata[i];

		r->totals.tasks_completed += task->outcome == GS_OUTCOME_COMPLETED;
		r->totals.tasks_failed += task->outcome == GS_OUTCOME_FAILED;
		r->totals.retries += task->retries;
		r->totals.splits += task->splits;
		r->totals.blocked_ns = gs_time_add(r->totals.blocked_ns, task->blocked_ns);
		r->totals.lost_ns = gs_time_add(r->totals.lost_ns, task->lost_ns);
		r->totals.leaked_bytes += task->leaked_bytes;
	}
}

void
gs_result_note_traffic(GsResult *r, const GsMemTraffic *traffic, guint64 corrupt)
{
	r->totals.spilled_gpu_to_host = traffic->gpu_to_host;
	r->totals.spilled_host_to_disk = traffic->host_to_disk;
	r->totals.unspilled_host_to_gpu = traffic->host_to_gpu;
	r->totals.unspilled_disk_to_host = traffic->disk_to_host;
	r->totals.copies_checked = traffic->copies;
	r->totals.copies_lost = traffic->tag_mismatches + corrupt;
}

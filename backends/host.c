/*
 * gpusim: the host backend: ordinary host memory standing in for every tier.
 *
 * It exists so that the real-thread driver's concurrency runs on any machine
 * (and under ThreadSanitizer): GPU and host buffers are malloc'ed blocks, a
 * compute is time spent on the CPU reading the buffers it uses, and a round
 * trip copies a buffer into a second block (host) or into a file in a private
 * directory (disk) and back. Capacities are the driver's bounded counters;
 * this backend only refuses what malloc refuses.
 *
 * Every buffer gets a pattern derived from its serial number (written at
 * allocation in a run that spills, else before its first round trip), and
 * every round trip, and every move that lands in memory, compares the whole
 * buffer with the pattern afterwards, so a copy that loses or changes a byte
 * is counted, not hidden. A move to disk writes a file of the private
 * directory; the buffer's record then holds only the file's name, and the
 * bytes are checked when they are read back.
 */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include <glib/gstdio.h>

#include "backend.h"
#include "pattern.h"

typedef struct {
	gint64 bytes;
	guint64 seed;
	gboolean filled; /* the pattern is written (at allocation, or at the first copy) */
	char *path;      /* on disk: the file that holds the bytes (no data here) */
	guint64 data[];  /* bytes rounded up to whole words */
} HostBuf;

typedef struct {
	char *disk_dir;         /* private directory (0700), removed at close */
	gboolean fill_at_alloc; /* the run spills: buffers may move while computes read them */
	atomic_uint_fast64_t serial; /* the last buffer's pattern seed */
	atomic_uint_fast64_t files;  /* disk copies made, for unique file names */
	atomic_uint_fast64_t round_trips, moves, bytes_checked, corrupt, refusals;
} Host;

static gpointer
host_open(const GsWorkload *w, GError **error)
{
	Host *h = g_new0(Host, 1);

	h->disk_dir = gs_private_dir_new(w->disk.path, error);
	if (h->disk_dir == NULL) {
		g_free(h);
		return NULL;
	}
	h->fill_at_alloc = w->policy.spill.enabled;
	return h;
}

static void
host_close(gpointer state)
{
	Host *h = state;

	gs_private_dir_remove(h->disk_dir);
	g_free(h->disk_dir);
	g_free(h);
}

static gsize
words_of(gint64 bytes)
{
	return ((gsize) bytes + sizeof(guint64) - 1) / sizeof(guint64);
}

static HostBuf *
buf_new(gint64 bytes, guint64 seed)
{
	HostBuf *b = g_try_malloc0(sizeof(HostBuf) + words_of(bytes) * sizeof(guint64));

	if (b != NULL) {
		b->bytes = bytes;
		b->seed = seed;
	}
	return b;
}

/* The pattern is written once, before the buffer's bytes are first copied. */
static void
buf_fill(HostBuf *b)
{
	if (!b->filled) {
		gs_pattern_fill(b->data, words_of(b->bytes), b->seed);
		b->filled = TRUE;
	}
}

static gboolean
host_alloc(gpointer state, gpointer thread, GsTier tier, guint device, gint64 bytes,
	   guint64 *handle)
{
	Host *h = state;
	HostBuf *b = buf_new(bytes, atomic_fetch_add(&h->serial, 1) + 1);

	if (b == NULL) {
		atomic_fetch_add(&h->refusals, 1);
		return FALSE;
	}
	/*
	 * Written now only when the buffer may move while a compute reads it;
	 * otherwise untouched until a round trip needs the pattern, since
	 * writing every byte would make an allocation cost what the scenario
	 * did not ask for.
	 */
	if (h->fill_at_alloc)
		buf_fill(b);
	*handle = GPOINTER_TO_SIZE(b);
	return TRUE;
}

static void
host_free(gpointer state, gpointer thread, GsTier tier, guint64 handle)
{
	HostBuf *b = GSIZE_TO_POINTER(handle);

	if (b->path != NULL) {
		g_unlink(b->path);
		g_free(b->path);
	}
	g_free(b);
}

/* Reads a word of every page of the buffers in use, so that the work touches them. */
static void
host_compute_begin(gpointer state, gpointer thread, GsTime ns, const guint64 *uses, guint n_uses)
{
	volatile guint64 sink = 0;

	for (guint i = 0; i < n_uses; i++) {
		const HostBuf *b = GSIZE_TO_POINTER(uses[i]);

		for (gsize w = 0; w < words_of(b->bytes); w += 4096 / sizeof(guint64))
			sink += b->data[w];
	}
	(void) sink;
}

/* Compares a copy that landed in memory with its pattern; TRUE when intact. */
static gboolean
check_landed(Host *h, const HostBuf *b)
{
	gboolean intact = gs_pattern_check(b->data, words_of(b->bytes), b->seed);

	atomic_fetch_add(&h->bytes_checked, words_of(b->bytes) * sizeof(guint64));
	if (!intact)
		atomic_fetch_add(&h->corrupt, 1);
	return intact;
}

/* Copies the buffer into a file of the private directory and reads it back. */
static gboolean
disk_round_trip(Host *h, HostBuf *b, GError **error)
{
	g_autofree char *path = NULL;
	gsize n = words_of(b->bytes) * sizeof(guint64);
	gboolean ok;

	path = g_strdup_printf("%s/buf-%" G_GUINT64_FORMAT, h->disk_dir, b->seed);
	ok = gs_file_write_all(path, b->data, n, error);
	if (ok) {
		memset(b->data, 0, n); /* the buffer's bytes now live only in the file */
		ok = gs_file_read_all(path, b->data, n, error);
	}
	g_unlink(path);
	return ok;
}

static gboolean
host_round_trip(gpointer state, gpointer thread, guint64 handle, GsTier to, GError **error)
{
	Host *h = state;
	HostBuf *b = GSIZE_TO_POINTER(handle);
	gsize n = words_of(b->bytes) * sizeof(guint64);
	gboolean ok = TRUE;

	buf_fill(b);
	if (to == GS_TIER_DISK) {
		ok = disk_round_trip(h, b, error);
	} else {
		guint64 *copy = g_try_malloc(n);

		if (copy == NULL) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no host memory for a %" G_GSIZE_FORMAT "-byte copy", n);
			return FALSE;
		}
		memcpy(copy, b->data, n);
		memset(b->data, 0, n);
		memcpy(b->data, copy, n);
		g_free(copy);
	}
	if (!ok)
		return FALSE;
	atomic_fetch_add(&h->round_trips, 1);
	return check_landed(h, b);
}

/* A file of the private directory for a disk copy of @b. */
static HostBuf *
to_disk(Host *h, HostBuf *b, GError **error)
{
	HostBuf *copy = g_new0(HostBuf, 1);

	copy->bytes = b->bytes;
	copy->seed = b->seed;
	copy->filled = TRUE;
	copy->path = g_strdup_printf("%s/buf-%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
				     h->disk_dir, b->seed, atomic_fetch_add(&h->files, 1));
	if (!gs_file_write_all(copy->path, b->data, words_of(b->bytes) * sizeof(guint64),
			       error)) {
		host_free(h, NULL, GS_TIER_DISK, GPOINTER_TO_SIZE(copy));
		return NULL;
	}
	return copy;
}

/* A copy in memory of @b, which lives in memory or (b->path) in a file. */
static HostBuf *
to_memory(HostBuf *b, GError **error)
{
	HostBuf *copy = buf_new(b->bytes, b->seed);
	gsize n = words_of(b->bytes) * sizeof(guint64);

	if (copy == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no host memory for a %" G_GSIZE_FORMAT "-byte copy", n);
		return NULL;
	}
	copy->filled = TRUE;
	if (b->path == NULL) {
		memcpy(copy->data, b->data, n);
	} else if (!gs_file_read_all(b->path, copy->data, n, error)) {
		g_free(copy);
		return NULL;
	}
	return copy;
}

static gboolean
host_move(gpointer state, gpointer thread, guint64 handle, GsTier from, GsTier to, guint device,
	  guint64 *moved, gboolean *intact, GError **error)
{
	Host *h = state;
	HostBuf *b = GSIZE_TO_POINTER(handle);
	HostBuf *copy;

	if (b->path == NULL)
		buf_fill(b);
	copy = to == GS_TIER_DISK ? to_disk(h, b, error) : to_memory(b, error);
	if (copy == NULL)
		return FALSE;
	*intact = to == GS_TIER_DISK || check_landed(h, copy);
	atomic_fetch_add(&h->moves, 1);
	*moved = GPOINTER_TO_SIZE(copy);
	return TRUE;
}

static void
host_stats(gpointer state, GsBackendStats *out)
{
	Host *h = state;

	out->round_trips = atomic_load(&h->round_trips);
	out->moves = atomic_load(&h->moves);
	out->bytes_checked = atomic_load(&h->bytes_checked);
	out->corrupt_buffers = atomic_load(&h->corrupt);
	out->device_refusals = atomic_load(&h->refusals);
}

const GsBackendOps gs_backend_host = {
	.api_version = 1,
	.name = "host",
	.open = host_open,
	.close = host_close,
	.alloc = host_alloc,
	.free = host_free,
	.compute_begin = host_compute_begin,
	.round_trip = host_round_trip,
	.move = host_move,
	.stats = host_stats,
	.calibrate = gs_host_calibrate,
};

/*
 * gpusim: the backend contract, what a real-thread driver needs from a device.
 *
 * A backend owns real memory and real time on one kind of machine: it hands
 * out the bytes of an allocation the driver has already admitted, keeps a
 * thread busy for a compute, copies a buffer between tiers and checks that no
 * byte was lost on the way. It decides nothing: who may allocate, who waits
 * and who rolls back is the engine's, and the bounded per-space counters that
 * admit an allocation are the driver's (backends/threads/threads.h), so a backend
 * never has to refuse a request for lack of capacity, only for a device that
 * says no (fragmentation, a real out-of-memory), which the driver treats as an
 * ordinary OOM. A device that fails (an illegal address, a kernel that could
 * not launch, an error that sticks to every later call) is not an OOM: the
 * backend says so through `healthy`, and the driver ends the run with that
 * error (GS_BACKEND_ERROR_FAILED, exit status 4).
 *
 * Every member is called from the simulated threads' own OS threads, at the
 * same time, without the driver's locks held: a backend makes its own calls
 * thread-safe (per-thread state lives in what thread_begin returns). Members
 * marked optional may be NULL; the gs_backend_*() wrappers say what NULL
 * means and are the only way the driver calls them.
 *
 * The drivers' table (src/cli/drivers.h) names the backends: "host" is always
 * there; "cuda" only in a build that found the CUDA Toolkit. `sim`, in the
 * same table, is no backend: it is the discrete-event driver of sim/.
 */
#ifndef GPUSIM_BACKEND_H
#define GPUSIM_BACKEND_H

#include <gpusim/gpusim.h>

G_BEGIN_DECLS

#define GS_BACKEND_ERROR (gs_backend_error_quark())
GQuark gs_backend_error_quark(void);

typedef enum {
	GS_BACKEND_ERROR_UNKNOWN,     /* no backend of that name: a usage error (exit 2) */
	GS_BACKEND_ERROR_UNAVAILABLE, /* not in this build, or no device here (exit 3) */
	GS_BACKEND_ERROR_INVALID,     /* the scenario asks for what the device cannot give (exit 2) */
	GS_BACKEND_ERROR_FAILED,      /* the device failed while running (exit 4) */
} GsBackendError;

/* What a backend counted while it ran (for the result and the tests). */
typedef struct {
	guint64 round_trips;     /* copies out of a tier and back, each checked */
	guint64 moves;           /* buffers moved to another tier (spills, unspills) */
	guint64 bytes_checked;   /* bytes compared against their pattern */
	guint64 corrupt_buffers; /* round trips or moves that found a byte changed or lost */
	guint64 device_refusals; /* admitted allocations the device still refused */
} GsBackendStats;

typedef struct {
	int api_version; /* 1 */
	const char *name;
	/*
	 * Opens the device for @w: sizes pools by the scenario's capacities,
	 * creates the disk directory. Returns the backend's state, or NULL with
	 * @error set (GS_BACKEND_ERROR_UNAVAILABLE when there is no device).
	 */
	gpointer (*open)(const GsWorkload *w, GError **error);
	/* Gives everything back; removes what open created on disk. */
	void (*close)(gpointer state);
	/*
	 * Optional: called on a simulated thread's own OS thread before its
	 * first op (per-thread streams); the result comes back as @thread.
	 */
	gpointer (*thread_begin)(gpointer state);
	void (*thread_end)(gpointer state, gpointer thread);
	/*
	 * Real memory for an allocation the driver admitted: @bytes of @tier on
	 * @device, filled with a pattern derived from *handle's value once set.
	 * FALSE when the device refuses (the driver un-admits it: an OOM).
	 */
	gboolean (*alloc)(gpointer state, gpointer thread, GsTier tier, guint device, gint64 bytes,
			  guint64 *handle);
	/*
	 * Frees an allocation, on the thread @thread (which may not be the one
	 * that allocated it), or, @thread NULL, after every thread has ended
	 * (a buffer given away to another thread that nobody freed).
	 */
	void (*free)(gpointer state, gpointer thread, GsTier tier, guint64 handle);
	/*
	 * Optional: starts @ns of work on the thread's device that reads the
	 * buffers in @uses (handles); the driver waits the time itself and
	 * then calls compute_end. NULL: the time passes on the CPU alone.
	 */
	void (*compute_begin)(gpointer state, gpointer thread, GsTime ns, const guint64 *uses,
			      guint n_uses);
	void (*compute_end)(gpointer state, gpointer thread);
	/*
	 * Optional: copies a GPU buffer to @to (host or disk) and back, then
	 * checks its pattern. FALSE when a byte differs (counted as corrupt).
	 */
	gboolean (*round_trip)(gpointer state, gpointer thread, guint64 handle, GsTier to,
			       GError **error);
	/*
	 * Optional: copies buffer @handle, which lives in @from, into new memory
	 * of @to (on @device when @to is the GPU) and returns that copy in
	 * *@moved; the driver frees the old handle once the move commits, or
	 * the new one if it does not. A copy that lands in memory (GPU or host)
	 * is compared with the buffer's pattern and *@intact says whether every
	 * byte arrived; a file is checked when it is read back. FALSE with
	 * @error when the copy could not be made (no memory for it, a device or
	 * file error): nothing new is held then.
	 */
	gboolean (*move)(gpointer state, gpointer thread, guint64 handle, GsTier from, GsTier to,
			 guint device, guint64 *moved, gboolean *intact, GError **error);
	void (*stats)(gpointer state, GsBackendStats *out);
	/*
	 * Optional: FALSE once the device has failed, with @error saying how
	 * (GS_BACKEND_ERROR_FAILED). The driver asks after every call that did
	 * not succeed (a refused allocation, a failed move) and after every
	 * compute. NULL: the device never fails.
	 */
	gboolean (*healthy)(gpointer state, GError **error);
	/*
	 * Optional: measures the device (allocation and free latency, copy
	 * bandwidth both ways, disk bandwidth in a private directory inside
	 * @disk_path) and appends the
	 * `memory:` / `links:` keys a scenario can include to @yaml.
	 */
	gboolean (*calibrate)(const char *disk_path, GString *yaml, GError **error);
} GsBackendOps;

/* ---- wrappers: the only way the driver calls a backend ---- */

gpointer gs_backend_open(const GsBackendOps *ops, const GsWorkload *w, GError **error);
void gs_backend_close(const GsBackendOps *ops, gpointer state);
gpointer gs_backend_thread_begin(const GsBackendOps *ops, gpointer state);
void gs_backend_thread_end(const GsBackendOps *ops, gpointer state, gpointer thread);
gboolean gs_backend_alloc(const GsBackendOps *ops, gpointer state, gpointer thread, GsTier tier,
			  guint device, gint64 bytes, guint64 *handle);
void gs_backend_free(const GsBackendOps *ops, gpointer state, gpointer thread, GsTier tier,
		     guint64 handle);
void gs_backend_compute_begin(const GsBackendOps *ops, gpointer state, gpointer thread, GsTime ns,
			      const guint64 *uses, guint n_uses);
void gs_backend_compute_end(const GsBackendOps *ops, gpointer state, gpointer thread);
/** Unsupported (NULL member) is an error, GS_BACKEND_ERROR_UNAVAILABLE. */
gboolean gs_backend_round_trip(const GsBackendOps *ops, gpointer state, gpointer thread,
			       guint64 handle, GsTier to, GError **error);
/** Unsupported (NULL member) is an error, GS_BACKEND_ERROR_UNAVAILABLE. */
gboolean gs_backend_move(const GsBackendOps *ops, gpointer state, gpointer thread, guint64 handle,
			 GsTier from, GsTier to, guint device, guint64 *moved, gboolean *intact,
			 GError **error);
void gs_backend_stats(const GsBackendOps *ops, gpointer state, GsBackendStats *out);
/** TRUE while the device works (always, for a backend without `healthy`). */
gboolean gs_backend_healthy(const GsBackendOps *ops, gpointer state, GError **error);
/** Unsupported is GS_BACKEND_ERROR_INVALID: only some backends can measure a device. */
gboolean gs_backend_calibrate(const GsBackendOps *ops, const char *disk_path, GString *yaml,
			      GError **error);

/* ---- the backends built in ---- */

extern const GsBackendOps gs_backend_host;
/* The host backend's calibrate member (host-calibrate.c), through its own operations. */
gboolean gs_host_calibrate(const char *disk_path, GString *yaml, GError **error);
#ifdef HAVE_CUDA
extern const GsBackendOps gs_backend_cuda;
#endif

G_END_DECLS

#endif /* GPUSIM_BACKEND_H */

/*
 * gpusim: the small value types every module of the policy engine shares.
 *
 * This header decides the vocabulary, nothing else: how time, thread and task
 * identities, allocation kinds and the exceptions a simulated thread can see are
 * represented. Times are integer nanoseconds supplied by the caller (the engine
 * never reads a clock). Thread ids are opaque 64-bit numbers chosen by the driver;
 * their numeric order matters only as the last tie-breaker of thread priority
 * (a larger id ranks higher, as in Spark-RAPIDS). Task ids are non-negative;
 * -1 means "no task" (a pool thread's own task id).
 */
#ifndef GPUSIM_TYPES_H
#define GPUSIM_TYPES_H

#include <glib.h>

G_BEGIN_DECLS

/* Marks the symbols libgpusim exports; everything else is hidden. */
#if defined(GS_COMPILATION) && defined(__GNUC__)
#define GS_API __attribute__((visibility("default")))
#else
#define GS_API
#endif

/** Nanoseconds of scenario (or real) time, as passed in by the driver. */
typedef gint64 GsTime;

/*
 * The last representable instant, some 292 years in. Times and durations are
 * never negative, and a sum that would pass this stays at it instead of
 * wrapping to a negative time: a driver ends a run whose next event lies
 * there (gs_time_add() and gs_time_mul() are the only ways to add times).
 */
#define GS_TIME_END G_MAXINT64

/** @a + @b (both >= 0), or GS_TIME_END if the sum is past it. */
static inline GsTime
gs_time_add(GsTime a, GsTime b)
{
	return b > GS_TIME_END - a ? GS_TIME_END : a + b;
}

/** @n times @d (@d >= 0), or GS_TIME_END if the product is past it. */
static inline GsTime
gs_time_mul(guint64 n, GsTime d)
{
	return d != 0 && n > (guint64) (GS_TIME_END / d) ? GS_TIME_END : (GsTime) n * d;
}

/** @ns (>= 0, or NaN) rounded to whole nanoseconds, GS_TIME_END if past it. */
static inline GsTime
gs_time_from_double(double ns)
{
	if (!(ns < (double) GS_TIME_END))
		return GS_TIME_END;
	return ns > 0 ? (GsTime) (ns + 0.5) : 0;
}

/** A thread's identity; larger ids win priority ties. */
typedef guint64 GsThreadId;
/* No thread: the simulator hands out ids from 1; engine calls accept it where a free has no owner. */
#define GS_NO_THREAD ((GsThreadId) 0)

/** A task's identity: >= 0 for a task; GS_NO_TASK for pool threads. */
typedef gint64 GsTaskId;
#define GS_NO_TASK ((GsTaskId) -1)

/** The two kinds of allocation the state machine keeps apart for wake-ups. */
typedef enum {
	GS_KIND_GPU = 0,
	GS_KIND_HOST = 1,
} GsAllocKind;

#define GS_N_KINDS 2

/** Which allocation kinds an injected exception fires on. */
typedef enum {
	GS_KIND_FILTER_ANY = 0,
	GS_KIND_FILTER_HOST = 1,
	GS_KIND_FILTER_GPU = 2,
} GsKindFilter;

/*
 * The exceptions a simulated thread can see (SPEC §3.5.2), one list that
 * generates the enum and the names. Columns: constant suffix, name as written
 * in scenarios and results, recoverable by a retry block.
 * IllegalArgumentException is what the engine throws for a call it refuses
 * (the reference's std::invalid_argument, e.g. a non-blocking host
 * allocation begun in THREAD_BUFN_WAIT). The last three are Spark's memory
 * manager's (SPEC §3.5.3): a page the task could not get, one above the
 * largest page, and a page table that is full.
 */
#define GS_EXCEPTION_MAP(X)                                      \
	X(NONE, "none", FALSE)                                   \
	X(GPU_RETRY_OOM, "GpuRetryOOM", TRUE)                    \
	X(GPU_SPLIT_AND_RETRY_OOM, "GpuSplitAndRetryOOM", TRUE)  \
	X(CPU_RETRY_OOM, "CpuRetryOOM", TRUE)                    \
	X(CPU_SPLIT_AND_RETRY_OOM, "CpuSplitAndRetryOOM", TRUE)  \
	X(GPU_OOM, "GpuOOM", FALSE)                              \
	X(CPU_OOM, "CpuOOM", FALSE)                              \
	X(CUDF_EXCEPTION, "CudfException", FALSE)                \
	X(RETRY_LIMIT_EXCEEDED, "RetryLimitExceeded", FALSE)     \
	X(COULD_NOT_SPLIT, "CouldNotSplit", FALSE)               \
	X(THREAD_REMOVED, "ThreadRemoved", FALSE)                \
	X(RESERVATION_TOO_LARGE, "ReservationTooLarge", FALSE)   \
	X(RESERVATION_FAILED, "ReservationFailed", FALSE)        \
	X(ILLEGAL_ARGUMENT, "IllegalArgumentException", FALSE)   \
	X(SPARK_OOM, "SparkOutOfMemoryError", FALSE)             \
	X(TOO_LARGE_PAGE, "TooLargePageException", FALSE)        \
	X(ILLEGAL_STATE, "IllegalStateException", FALSE)

typedef enum {
#define GS_X_ENUM(suffix, name, recoverable) GS_EXC_##suffix,
	GS_EXCEPTION_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_EXCEPTIONS
} GsException;

/** The exception's name as scenarios and results spell it. */
GS_API const char *gs_exception_name(GsException exc);

/** Looks a name up; returns FALSE if @name names no exception. */
GS_API gboolean gs_exception_from_name(const char *name, GsException *out);

/** TRUE for the RetryOOM and SplitAndRetryOOM kinds a retry block handles. */
GS_API gboolean gs_exception_is_recoverable(GsException exc);

/** TRUE for GpuSplitAndRetryOOM and CpuSplitAndRetryOOM. */
GS_API gboolean gs_exception_is_split(GsException exc);

/** The RetryOOM, SplitAndRetryOOM or fatal OOM exception of an allocation kind. */
GS_API GsException gs_exception_retry_oom(GsAllocKind kind);
GS_API GsException gs_exception_split_oom(GsAllocKind kind);
GS_API GsException gs_exception_fatal_oom(GsAllocKind kind);

/** "gpu" or "host". */
GS_API const char *gs_kind_name(GsAllocKind kind);

/** The package version, e.g. "0.1.0". */
GS_API const char *gs_version(void);

G_END_DECLS

#endif /* GPUSIM_TYPES_H */

/*
 * gpusim: what the engine tells a run, whichever driver runs it.
 *
 * This module decides what a run makes of the engine's news: every state
 * change of one of its threads becomes an event-log entry (GS_LOG_STATE),
 * and every deadlock the engine busts an entry (GS_LOG_DEADLOCK, its victim
 * named, "?" when it is none of the run's) and one more in the result's
 * totals, and, where the driver can tell (GsRunHooks.progressing), the
 * first bust made while a thread could still make progress a sentence in
 * the result (needless_bust); the running time a retry-type throw threw
 * away goes to the result's `lost` samples. An exception a thread saw is logged alike (GS_LOG_THROW), and so
 * is an allocation (GS_LOG_ALLOC), with what a refused one would have
 * made of its space's counter. The
 * driver keeps its own books through the hooks: which threads are its own
 * and their names, and what a state change means to it, which it hears
 * before the log does.
 */
#ifndef GPUSIM_RUN_WATCH_H
#define GPUSIM_RUN_WATCH_H

#include <gpusim/gpusim.h>

#include "run/hooks.h"
#include "run/result.h"

G_BEGIN_DECLS

typedef struct {
	GsResult *result;
	const GsRunHooks *hooks;
	gpointer driver;
} GsRunWatch;

/** From now on @watch hears what @engine does, for the run that @result is of. */
void gs_run_watch(GsRunWatch *watch, GsEngine *engine, GsResult *result,
		  const GsRunHooks *hooks, gpointer driver);

/** The log entry of exception @x that @thread saw. */
GsLogEntry gs_run_throw_entry(const char *thread, const GsSeenException *x);
/** The log entry of @thread's value @name (@spec names it) after @what made it @value. */
GsLogEntry gs_run_value_entry(const char *thread, const GsThreadSpec *spec, guint name,
			      gint64 value, const char *what);
/** The entry of allocation @e granted to thread @thread (@spec names its buffers) in @tier. */
GsLogEntry gs_run_alloc_granted(const char *thread, const GsThreadSpec *spec, const GsEffect *e,
				GsTier tier);
/**
 * The entry of allocation @e refused to @thread in @tier, @why it was, and
 * @usage the would-be counter of the space that had no room (0: refused for
 * another reason). The refusal counts in @result's totals; threads refused
 * at once may call this together.
 */
GsLogEntry gs_run_alloc_refused(GsResult *result, const char *thread, const GsThreadSpec *spec,
				const GsEffect *e, GsTier tier, gint64 usage, GsRefusal why);

/** Why the allocation that got @a was refused (a device's own refusal when @a is OK). */
GsRefusal gs_run_refusal_of(const GsMemAlloc *a);
/**
 * The entry of thread @thread waiting to make free @op of another thread's
 * buffers: it names the first of them the owner has not allocated yet, as
 * @allocated(@owner, name) says (@owner NULL: the owner has not started),
 * or the last.
 */
/**
 * Whether a thread may make free @op of another thread's buffers now: the
 * owner has started (@owner not NULL) and has ended (@done: it gave all
 * back) or allocated every buffer @op names, as @allocated(@owner, name)
 * says. A free comes after its allocation, as in the log it was read from.
 */
gboolean gs_run_owner_ready(const GsOp *op, gboolean (*allocated)(gconstpointer owner, guint name),
			    gconstpointer owner, gboolean done);
GsLogEntry gs_run_free_wait_entry(const GsWorkload *w, const char *thread, const GsOp *op,
				  gboolean (*allocated)(gconstpointer owner, guint name),
				  gconstpointer owner);

G_END_DECLS

#endif /* GPUSIM_RUN_WATCH_H */

/*
 * gpusim: the wrappers the driver calls backends through (see backend.h).
 */
#include "config.h"

#include <string.h>

#include "backend.h"

G_DEFINE_QUARK(gs-backend-error-quark, gs_backend_error)

gpointer
gs_backend_open(const GsBackendOps *ops, const GsWorkload *w, GError **error)
{
	gpointer state;

	g_return_val_if_fail(ops != NULL && ops->api_version == 1, NULL);
	state = ops->open(w, error);
	g_return_val_if_fail(state != NULL || error == NULL || *error != NULL, NULL);
	return state;
}

void
gs_backend_close(const GsBackendOps *ops, gpointer state)
{
	if (state != NULL)
		ops->close(state);
}

gpointer
gs_backend_thread_begin(const GsBackendOps *ops, gpointer state)
{
	return ops->thread_begin != NULL ? ops->thread_begin(state) : NULL;
}

void
gs_backend_thread_end(const GsBackendOps *ops, gpointer state, gpointer thread)
{
	if (ops->thread_end != NULL)
		ops->thread_end(state, thread);
}

gboolean
gs_backend_alloc(const GsBackendOps *ops, gpointer state, gpointer thread, GsTier tier,
		 guint device, gint64 bytes, guint64 *handle)
{
	gboolean ok = ops->alloc(state, thread, tier, device, bytes, handle);

	/* Handle 0 means "no buffer" to the interpreter's callers. */
	g_return_val_if_fail(!ok || *handle != 0, FALSE);
	return ok;
}

void
gs_backend_free(const GsBackendOps *ops, gpointer state, gpointer thread, GsTier tier,
		guint64 handle)
{
	if (handle != 0)
		ops->free(state, thread, tier, handle);
}

void
gs_backend_compute_begin(const GsBackendOps *ops, gpointer state, gpointer thread, GsTime ns,
			 const guint64 *uses, guint n_uses)
{
	if (ops->compute_begin != NULL)
		ops->compute_begin(state, thread, ns, uses, n_uses);
}

void
gs_backend_compute_end(const GsBackendOps *ops, gpointer state, gpointer thread)
{
	if (ops->compute_end != NULL)
		ops->compute_end(state, thread);
}

gboolean
gs_backend_healthy(const GsBackendOps *ops, gpointer state, GError **error)
{
	return ops->healthy == NULL || ops->healthy(state, error);
}

gboolean
gs_backend_round_trip(const GsBackendOps *ops, gpointer state, gpointer thread, guint64 handle,
		      GsTier to, GError **error)
{
	if (ops->round_trip == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "the %s backend does not copy between tiers", ops->name);
		return FALSE;
	}
	return ops->round_trip(state, thread, handle, to, error);
}

gboolean
gs_backend_move(const GsBackendOps *ops, gpointer state, gpointer thread, guint64 handle,
		GsTier from, GsTier to, guint device, guint64 *moved, gboolean *intact,
		GError **error)
{
	gboolean ok;

	if (ops->move == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "the %s backend does not move buffers between tiers", ops->name);
		return FALSE;
	}
	ok = ops->move(state, thread, handle, from, to, device, moved, intact, error);
	g_return_val_if_fail(!ok || *moved != 0, FALSE);
	return ok;
}

void
gs_backend_stats(const GsBackendOps *ops, gpointer state, GsBackendStats *out)
{
	memset(out, 0, sizeof *out);
	if (ops->stats != NULL && state != NULL)
		ops->stats(state, out);
}

gboolean
gs_backend_calibrate(const GsBackendOps *ops, const char *disk_path, GString *yaml, GError **error)
{
	if (ops->calibrate == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "the %s backend has no device to calibrate (calibrate --backend=host or cuda)",
			    ops->name);
		return FALSE;
	}
	return ops->calibrate(disk_path, yaml, error);
}

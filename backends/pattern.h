/*
 * gpusim: how a backend proves that a copy lost nothing, and where it puts
 * the disk tier.
 *
 * A buffer is filled with 64-bit words derived from a seed (its serial
 * number) and its word index, so that two buffers never look alike and a word
 * moved within a buffer is caught; after every round trip the whole buffer is
 * compared again. The disk tier lives in a private directory (mode 0700)
 * created inside memory.disk.path and removed, with whatever is left in it,
 * when the backend closes, or when the run is interrupted: a run killed by
 * SIGINT, SIGTERM or SIGHUP must not leave gigabytes of spilled buffers
 * behind (gs_private_dirs_guard).
 */
#ifndef GPUSIM_PATTERN_H
#define GPUSIM_PATTERN_H

#include <glib.h>

G_BEGIN_DECLS

/** The word at @index of the buffer seeded @seed. */
static inline guint64
gs_pattern_word(guint64 seed, gsize index)
{
	guint64 x = seed * 0x9e3779b97f4a7c15ull ^ (guint64) index * 0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 31);
}

void gs_pattern_fill(guint64 *words, gsize n, guint64 seed);
/** TRUE when every word is what gs_pattern_fill() wrote. */
gboolean gs_pattern_check(const guint64 *words, gsize n, guint64 seed);
/** The same for the part of a buffer that starts at its word @first (a block of it). */
void gs_pattern_fill_from(guint64 *words, gsize n, guint64 seed, gsize first);
gboolean gs_pattern_check_from(const guint64 *words, gsize n, guint64 seed, gsize first);

/** Creates a private directory (0700) inside @parent; NULL with @error set. */
char *gs_private_dir_new(const char *parent, GError **error);
/** Removes @dir and the plain files in it; NULL is fine. */
void gs_private_dir_remove(const char *dir);
/**
 * From now on SIGINT, SIGTERM and SIGHUP (those not ignored) remove every
 * private directory alive, then end the process as the signal would have.
 * Call it before any thread starts (CUDA's own included): it blocks the
 * signals in the caller, whose threads inherit the mask, and a thread of its
 * own waits for them. Idempotent.
 */
void gs_private_dirs_guard(void);

/** Writes / reads exactly @n bytes, retrying short transfers. */
gboolean gs_file_write_all(const char *path, const void *data, gsize n, GError **error);
gboolean gs_file_read_all(const char *path, void *data, gsize n, GError **error);

G_END_DECLS

#endif /* GPUSIM_PATTERN_H */

/*
 * gpusim tests: checks that every backend with moves must pass, shared by
 * the tests of the host backend and of the CUDA backend.
 */
#ifndef GPUSIM_TESTLIB_BACKEND_H
#define GPUSIM_TESTLIB_BACKEND_H

#include "backends/backend.h"

/* Where a buffer goes, one move after another; it starts in path[0]. */
typedef struct {
	GsTier path[4];
	guint n;
} TlMovePath;

extern const TlMovePath tl_move_paths[4];

/* Opens @ops for @w with its disk tier under @parent; the test fails if it cannot. */
gpointer tl_backend_open(const GsBackendOps *ops, GsWorkload *w, const char *parent);
/* Closes what tl_backend_open() opened, and removes @parent (closing emptied it). */
void tl_backend_close(const GsBackendOps *ops, gpointer state, const char *parent);

/*
 * Moves a @bytes-byte buffer along @path, the old copy freed at each step,
 * each move made by the thread that did not make the one before (threads
 * may be NULL where the backend has none); every move arrives intact, and
 * the backend counts each one and no corrupt buffer.
 */
void tl_moves_keep_every_byte(const GsBackendOps *ops, gpointer state, gpointer threads[2],
			      const TlMovePath *path, gint64 bytes);

/*
 * A buffer moved to disk has a bit flipped in its file under @parent (the
 * backend's disk.path); moved back to the GPU it is not intact, it is
 * counted, and freeing the disk copy removes the file.
 */
void tl_a_changed_file_is_caught(const GsBackendOps *ops, gpointer state, gpointer thread,
				 const char *parent);

#endif /* GPUSIM_TESTLIB_BACKEND_H */

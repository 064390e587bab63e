/*
 * gpusim tests: checks shared by the backends' tests (testlib-backend.h).
 */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>

#include "testlib-backend.h"

const TlMovePath tl_move_paths[4] = {
	{{GS_TIER_GPU, GS_TIER_HOST, GS_TIER_GPU}, 3},
	{{GS_TIER_GPU, GS_TIER_DISK, GS_TIER_GPU}, 3},
	{{GS_TIER_GPU, GS_TIER_HOST, GS_TIER_DISK, GS_TIER_GPU}, 4},
	{{GS_TIER_HOST, GS_TIER_DISK, GS_TIER_HOST}, 3},
};

gpointer
tl_backend_open(const GsBackendOps *ops, GsWorkload *w, const char *parent)
{
	g_autoptr(GError) error = NULL;
	gpointer state;

	g_free(w->disk.path);
	w->disk.path = g_strdup(parent);
	state = gs_backend_open(ops, w, &error);
	ck_assert_msg(state != NULL, "%s", error ? error->message : "?");
	return state;
}

void
tl_backend_close(const GsBackendOps *ops, gpointer state, const char *parent)
{
	gs_backend_close(ops, state);
	ck_assert_int_eq(g_rmdir(parent), 0);
}

void
tl_moves_keep_every_byte(const GsBackendOps *ops, gpointer state, gpointer threads[2],
			 const TlMovePath *path, gint64 bytes)
{
	guint64 handle, moved;
	GsBackendStats before, after;
	gboolean intact;

	gs_backend_stats(ops, state, &before);
	ck_assert(gs_backend_alloc(ops, state, threads[0], path->path[0], 0, bytes, &handle));
	for (guint k = 1; k < path->n; k++) {
		g_autoptr(GError) error = NULL;
		GsTier from = path->path[k - 1], to = path->path[k];

		ck_assert_msg(gs_backend_move(ops, state, threads[k % 2], handle, from, to, 0, &moved,
					      &intact, &error),
			      "%s", error ? error->message : "?");
		ck_assert(intact);
		gs_backend_free(ops, state, threads[(k + 1) % 2], from, handle);
		handle = moved;
	}
	gs_backend_stats(ops, state, &after);
	ck_assert_uint_eq(after.moves - before.moves, path->n - 1);
	ck_assert_uint_eq(after.corrupt_buffers, before.corrupt_buffers);
	ck_assert_uint_ge(after.bytes_checked - before.bytes_checked, (guint64) bytes);
	gs_backend_free(ops, state, threads[path->n % 2], path->path[path->n - 1], handle);
}

/* Flips one bit in the middle of the first file of the one directory under @parent. */
static char *
corrupt_a_spilled_file(const char *parent)
{
	GDir *dir = g_dir_open(parent, 0, NULL);
	g_autofree char *private_dir = NULL, *bytes = NULL;
	char *file;
	const char *name;
	gsize n;

	ck_assert_ptr_nonnull(dir);
	private_dir = g_build_filename(parent, g_dir_read_name(dir), NULL);
	g_dir_close(dir);
	dir = g_dir_open(private_dir, 0, NULL);
	ck_assert_ptr_nonnull(dir);
	name = g_dir_read_name(dir);
	ck_assert_ptr_nonnull(name);
	file = g_build_filename(private_dir, name, NULL);
	g_dir_close(dir);
	ck_assert(g_file_get_contents(file, &bytes, &n, NULL));
	ck_assert_uint_gt(n, 0);
	bytes[n / 2] ^= 0x10;
	ck_assert(g_file_set_contents(file, bytes, (gssize) n, NULL));
	return file;
}

void
tl_a_changed_file_is_caught(const GsBackendOps *ops, gpointer state, gpointer thread,
			    const char *parent)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *file = NULL;
	guint64 handle, on_disk, back;
	GsBackendStats before, after;
	gboolean intact;

	gs_backend_stats(ops, state, &before);
	ck_assert(gs_backend_alloc(ops, state, thread, GS_TIER_GPU, 0, 4096, &handle));
	ck_assert(gs_backend_move(ops, state, thread, handle, GS_TIER_GPU, GS_TIER_DISK, 0, &on_disk,
				  &intact, &error));
	file = corrupt_a_spilled_file(parent);
	ck_assert(gs_backend_move(ops, state, thread, on_disk, GS_TIER_DISK, GS_TIER_GPU, 0, &back,
				  &intact, &error));
	ck_assert(!intact);
	gs_backend_stats(ops, state, &after);
	ck_assert_uint_eq(after.corrupt_buffers - before.corrupt_buffers, 1);
	gs_backend_free(ops, state, thread, GS_TIER_GPU, handle);
	gs_backend_free(ops, state, thread, GS_TIER_DISK, on_disk);
	ck_assert(!g_file_test(file, G_FILE_TEST_EXISTS)); /* freeing a disk copy removes its file */
	gs_backend_free(ops, state, thread, GS_TIER_GPU, back);
}

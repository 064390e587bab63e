/*
 * gpusim: buffer patterns and the private disk directory (see pattern.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "backend.h"
#include "pattern.h"

void
gs_pattern_fill(guint64 *words, gsize n, guint64 seed)
{
	for (gsize i = 0; i < n; i++)
		words[i] = gs_pattern_word(seed, i);
}

gboolean
gs_pattern_check(const guint64 *words, gsize n, guint64 seed)
{
	for (gsize i = 0; i < n; i++) {
		if (words[i] != gs_pattern_word(seed, i))
			return FALSE;
	}
	return TRUE;
}

char *
gs_private_dir_new(const char *parent, GError **error)
{
	g_autofree char *template = g_build_filename(parent, "gpusim-XXXXXX", NULL);

	/* g_mkdtemp creates the directory with mode 0700. */
	if (g_mkdtemp(template) == NULL) {
		int err = errno;

		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "memory.disk.path: cannot create a private directory in %s: %s", parent,
			    g_strerror(err));
		return NULL;
	}
	return g_steal_pointer(&template);
}

void
gs_private_dir_remove(const char *dir)
{
	GDir *d;
	const char *name;

	if (dir == NULL)
		return;
	d = g_dir_open(dir, 0, NULL);
	if (d != NULL) {
		while ((name = g_dir_read_name(d)) != NULL) {
			g_autofree char *path = g_build_filename(dir, name, NULL);

			g_unlink(path);
		}
		g_dir_close(d);
	}
	g_rmdir(dir);
}

static gboolean
io_error(GError **error, const char *what, const char *path, int err)
{
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "%s %s: %s", what, path,
		    g_strerror(err));
	return FALSE;
}

gboolean
gs_file_write_all(const char *path, const void *data, gsize n, GError **error)
{
	int fd = g_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	if (fd < 0)
		return io_error(error, "cannot create", path, errno);
	while (n > 0) {
		gssize done = write(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			int err = done < 0 ? errno : ENOSPC;

			close(fd);
			return io_error(error, "cannot write", path, err);
		}
		p += done;
		n -= (gsize) done;
	}
	if (close(fd) != 0)
		return io_error(error, "cannot write", path, errno);
	return TRUE;
}

gboolean
gs_file_read_all(const char *path, void *data, gsize n, GError **error)
{
	int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
	char *p = data;

	if (fd < 0)
		return io_error(error, "cannot open", path, errno);
	while (n > 0) {
		gssize done = read(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			int err = done < 0 ? errno : EIO;

			close(fd);
			return io_error(error, "cannot read", path, err);
		}
		p += done;
		n -= (gsize) done;
	}
	close(fd);
	return TRUE;
}

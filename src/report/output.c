/*
 * gpusim: how a command's outputs reach the paths the user gave (see output.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "report/output.h"

/* As the kernel's limit on links followed in one path name (Linux's 40). */
#define MAX_LINKS 40
/* linux/magic.h's, spelled out: that header is not everywhere statfs is. */
#define PROC_SUPER_MAGIC 0x9fa0

typedef enum {
	OUTPUT_FILE,   /* a regular file, or none yet: renamed into place */
	OUTPUT_STREAM, /* a device, FIFO, socket or descriptor: written in place, last */
	OUTPUT_STDOUT, /* "-": standard output, last */
} OutputKind;

struct GsOutput {
	char *path;   /* as the user gave it */
	char *target; /* the file written: @path with its links followed */
	OutputKind kind;
	gboolean fifo;     /* a stream that is a named pipe */
	gboolean replaces; /* a regular file is at @target */
	mode_t mode;       /* its permission bits, when it replaces one */
	char *staged;      /* the temporary holding the content, once there is one */
};

struct GsOutputSet {
	GPtrArray *outputs;   /* GsOutput*, in the order added */
	GPtrArray *made_dirs; /* char*, parents before their children */
};

/* ---- errors ---- */

/* "cannot write PATH: why", naming the file a link led to when there was one. */
static gboolean
fail_errno(const GsOutput *out, int saved, GError **error)
{
	if (out->target != NULL && strcmp(out->target, out->path) != 0)
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot write %s (a link to %s): %s", out->path, out->target,
			    g_strerror(saved));
	else
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot write %s: %s", out->path, g_strerror(saved));
	return FALSE;
}

/* ---- the set ---- */

static void
output_free(GsOutput *out)
{
	g_free(out->path);
	g_free(out->target);
	g_free(out->staged);
	g_free(out);
}

GsOutputSet *
gs_output_set_new(void)
{
	GsOutputSet *set = g_new0(GsOutputSet, 1);

	set->outputs = g_ptr_array_new_with_free_func((GDestroyNotify) output_free);
	set->made_dirs = g_ptr_array_new_with_free_func(g_free);
	return set;
}

/*
 * A reader that opened the pipe waits for a writer; opening it without
 * blocking, and closing it, lets the reader see the end. With no reader the
 * open fails (ENXIO), and nothing is waiting anyway.
 */
static void
end_pipe(const GsOutput *out)
{
	int fd = g_open(out->target, O_WRONLY | O_NONBLOCK | O_CLOEXEC, 0);

	if (fd >= 0)
		close(fd);
}

static void
drop(GsOutput *out)
{
	if (out->staged != NULL)
		g_unlink(out->staged);
	g_clear_pointer(&out->staged, g_free);
	if (out->fifo)
		end_pipe(out);
}

void
gs_output_set_free(GsOutputSet *set)
{
	if (set == NULL)
		return;
	for (guint i = 0; i < set->outputs->len; i++)
		drop(set->outputs->pdata[i]);
	/* rmdir removes only empty folders: what the user put there stays. */
	for (guint i = set->made_dirs->len; i > 0; i--)
		g_rmdir(set->made_dirs->pdata[i - 1]);
	g_ptr_array_unref(set->outputs);
	g_ptr_array_unref(set->made_dirs);
	g_free(set);
}

gboolean
gs_output_set_make_dir(GsOutputSet *set, const char *dir, GError **error)
{
	g_autofree char *parent = NULL;
	int saved;

	if (g_file_test(dir, G_FILE_TEST_IS_DIR))
		return TRUE;
	parent = g_path_get_dirname(dir);
	if (strcmp(parent, dir) != 0 && !gs_output_set_make_dir(set, parent, error))
		return FALSE;
	/* "out/" names the folder its parent call just made. */
	if (g_file_test(dir, G_FILE_TEST_IS_DIR))
		return TRUE;
	if (g_mkdir(dir, 0777) == 0) {
		g_ptr_array_add(set->made_dirs, g_strdup(dir));
		return TRUE;
	}
	saved = errno;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "cannot create %s: %s",
		    dir, g_strerror(saved));
	return FALSE;
}

/* ---- adding: what is at the path ---- */

/*
 * A link in /proc (/dev/stdout leads to /proc/self/fd/1) stands for an open
 * descriptor, not for the file it names: what it reads as may be no path at
 * all ("pipe:[123]"), and when it is a file, the user means the descriptor's
 * place in it (after what the command printed), not a new file.
 */
static gboolean
is_descriptor_link(const char *link)
{
#ifdef __linux__
	g_autofree char *dir = g_path_get_dirname(link);
	struct statfs fs;

	return statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
#else
	(void) link;
	return FALSE;
#endif
}

/*
 * @path with every link of a chain at its end followed, up to a descriptor
 * link (*@descriptor then TRUE); NULL with errno set.
 */
static char *
follow_links(const char *path, gboolean *descriptor)
{
	char *target = g_strdup(path);

	*descriptor = FALSE;
	for (guint hops = 0;; hops++) {
		GStatBuf st;
		char *link;
		char *next;

		if (g_lstat(target, &st) != 0 || !S_ISLNK(st.st_mode))
			return target;
		if (is_descriptor_link(target)) {
			*descriptor = TRUE;
			return target;
		}
		link = hops < MAX_LINKS ? g_file_read_link(target, NULL) : NULL;
		if (link == NULL) {
			int saved = hops < MAX_LINKS ? errno : ELOOP;

			g_free(target);
			errno = saved;
			return NULL;
		}
		if (g_path_is_absolute(link)) {
			next = link;
		} else {
			g_autofree char *dir = g_path_get_dirname(target);

			next = g_build_filename(dir, link, NULL);
			g_free(link);
		}
		g_free(target);
		target = next;
	}
}

/* A temporary beside @out->target can be made, and renamed over it. */
static gboolean
dir_writable(const GsOutput *out, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(out->target);

	if (g_access(dir, W_OK | X_OK) != 0)
		return fail_errno(out, errno, error);
	return TRUE;
}

static gboolean
classify(GsOutput *out, GError **error)
{
	gboolean descriptor;
	GStatBuf st;

	if (strcmp(out->path, "-") == 0) {
		out->kind = OUTPUT_STDOUT;
		return TRUE;
	}
	out->target = follow_links(out->path, &descriptor);
	if (out->target == NULL)
		return fail_errno(out, errno, error);
	if (g_stat(out->target, &st) != 0) {
		if (errno != ENOENT)
			return fail_errno(out, errno, error);
		out->kind = OUTPUT_FILE;
		return dir_writable(out, error);
	}
	if (S_ISDIR(st.st_mode))
		return fail_errno(out, EISDIR, error);
	/* A file the user may not write is not replaced behind its back. */
	if (g_access(out->target, W_OK) != 0)
		return fail_errno(out, errno, error);
	if (descriptor || !S_ISREG(st.st_mode)) {
		out->kind = OUTPUT_STREAM;
		out->fifo = S_ISFIFO(st.st_mode);
		return TRUE;
	}
	out->kind = OUTPUT_FILE;
	out->replaces = TRUE;
	out->mode = st.st_mode & 07777;
	return dir_writable(out, error);
}

GsOutput *
gs_output_set_add(GsOutputSet *set, const char *path, GError **error)
{
	GsOutput *out = g_new0(GsOutput, 1);

	out->path = g_strdup(path);
	if (!classify(out, error)) {
		output_free(out);
		return NULL;
	}
	g_ptr_array_add(set->outputs, out);
	return out;
}

GsOutput *
gs_output_set_add_in(GsOutputSet *set, const char *dir, const char *name, GError **error)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);

	return gs_output_set_add(set, path, error);
}

const char *
gs_output_path(const GsOutput *out)
{
	return out->path;
}

/* ---- staging ---- */

/* The temporary for @out's content, made on first use; -1 with @error set. */
static int
open_staged(GsOutput *out, GError **error)
{
	g_autofree char *name = NULL;
	g_autofree char *tmpl = NULL;
	GError *local = NULL;
	int fd;

	if (out->staged != NULL) {
		fd = g_open(out->staged, O_WRONLY | O_TRUNC | O_CLOEXEC, 0);
		if (fd < 0)
			fail_errno(out, errno, error);
		return fd;
	}
	if (out->kind != OUTPUT_FILE) {
		fd = g_file_open_tmp("gpusim-XXXXXX", &out->staged, &local);
		if (fd < 0) {
			g_set_error(error, local->domain, local->code, "cannot write %s: %s",
				    out->path, local->message);
			g_error_free(local);
		}
		return fd;
	}
	name = g_path_get_basename(out->target);
	tmpl = g_path_get_dirname(out->target);
	out->staged = g_strdup_printf("%s/.%s.XXXXXX", tmpl, name);
	fd = g_mkstemp_full(out->staged, O_RDWR | O_CLOEXEC, 0666);
	if (fd < 0) {
		g_clear_pointer(&out->staged, g_free);
		fail_errno(out, errno, error);
	}
	return fd;
}

static gboolean
write_all(int fd, const char *data, gsize len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return FALSE;
		data += n;
		len -= (gsize) n;
	}
	return TRUE;
}

/* Writes @len bytes of @data to @fd and closes it; 0, or the first errno. */
static int
write_and_close(int fd, const char *data, gsize len)
{
	int saved = write_all(fd, data, len) ? 0 : errno;

	if (close(fd) != 0 && saved == 0)
		saved = errno;
	return saved;
}

gboolean
gs_output_write(GsOutput *out, const char *contents, GError **error)
{
	int fd = open_staged(out, error);
	int saved;

	if (fd < 0)
		return FALSE;
	saved = write_and_close(fd, contents, strlen(contents));
	return saved == 0 || fail_errno(out, saved, error);
}

struct GsOutputWriter {
	GsOutput *out;
	int fd;
	int saved; /* the first errno of a write, 0 while all went well */
};

GsOutputWriter *
gs_output_writer_new(GsOutput *out, GError **error)
{
	int fd = open_staged(out, error);
	GsOutputWriter *wr;

	if (fd < 0)
		return NULL;
	wr = g_new0(GsOutputWriter, 1);
	wr->out = out;
	wr->fd = fd;
	return wr;
}

gboolean
gs_output_writer_add(const char *data, gsize len, gpointer writer)
{
	GsOutputWriter *wr = writer;

	if (wr->saved == 0 && !write_all(wr->fd, data, len))
		wr->saved = errno;
	return wr->saved == 0;
}

gboolean
gs_output_writer_close(GsOutputWriter *wr, GError **error)
{
	int saved = wr->saved;
	GsOutput *out = wr->out;

	if (close(wr->fd) != 0 && saved == 0)
		saved = errno;
	g_free(wr);
	return saved == 0 || fail_errno(out, saved, error);
}

const char *
gs_output_staged_path(GsOutput *out, GError **error)
{
	int fd;

	if (out->staged != NULL)
		return out->staged;
	fd = open_staged(out, error);
	if (fd < 0)
		return NULL;
	close(fd);
	return out->staged;
}

/* ---- the commit ---- */

/* The content is on disk before the rename makes it the file, as GLib does for a replaced one. */
static gboolean
sync_staged(const GsOutput *out)
{
	int fd = g_open(out->staged, O_RDONLY | O_CLOEXEC, 0);
	gboolean ok;

	if (fd < 0)
		return FALSE;
	ok = fsync(fd) == 0;
	close(fd);
	return ok;
}

static gboolean
rename_into_place(GsOutput *out, GError **error)
{
	if (out->replaces && (g_chmod(out->staged, out->mode) != 0 || !sync_staged(out)))
		return fail_errno(out, errno, error);
	if (g_rename(out->staged, out->target) != 0)
		return fail_errno(out, errno, error);
	g_clear_pointer(&out->staged, g_free);
	return TRUE;
}

/* Copies the file @path to @fd a piece at a time (a long run's result is large); 0, or the errno. */
static int
copy_to(const char *path, int fd)
{
	char piece[64 * 1024];
	int in = g_open(path, O_RDONLY | O_CLOEXEC, 0);
	int saved = 0;
	gssize got;

	if (in < 0)
		return errno;
	while ((got = read(in, piece, sizeof piece)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || !write_all(fd, piece, (gsize) got)) {
			saved = errno;
			break;
		}
	}
	close(in);
	return saved;
}

static gboolean
write_stream(GsOutput *out, GError **error)
{
	int saved;

	/*
	 * After what the command printed before, wherever the stream leads
	 * (/dev/stdout too): stdio's buffer first, and O_APPEND so that a
	 * descriptor's file is written after what is in it already.
	 */
	fflush(stdout);
	if (out->kind == OUTPUT_STDOUT) {
		saved = copy_to(out->staged, STDOUT_FILENO);
	} else {
		int fd = g_open(out->target, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC, 0);

		saved = fd < 0 ? errno : copy_to(out->staged, fd);
		if (fd >= 0 && close(fd) != 0 && saved == 0)
			saved = errno;
	}
	if (saved != 0)
		return fail_errno(out, saved, error);
	/* Written: dropping it now removes the temporary and leaves the pipe alone. */
	g_unlink(out->staged);
	g_clear_pointer(&out->staged, g_free);
	out->fifo = FALSE;
	return TRUE;
}

gboolean
gs_output_set_commit(GsOutputSet *set, GError **error)
{
	for (guint i = 0; i < set->outputs->len; i++) {
		GsOutput *out = set->outputs->pdata[i];

		if (out->kind == OUTPUT_FILE && out->staged != NULL &&
		    !rename_into_place(out, error))
			return FALSE;
	}
	/* The folders hold the files now: they are the user's. */
	g_ptr_array_set_size(set->made_dirs, 0);
	for (guint i = 0; i < set->outputs->len; i++) {
		GsOutput *out = set->outputs->pdata[i];

		if (out->kind != OUTPUT_FILE && out->staged != NULL && !write_stream(out, error))
			return FALSE;
	}
	return TRUE;
}

/*
 * gpusim: reading an input file whole (see input.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string.h>

#include "scenario/input.h"
#include "scenario/loader.h"

static gboolean
fail_errno(int err, GError **error)
{
	g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(err), g_strerror(err));
	return FALSE;
}

static const char *
file_type(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a pipe";
	if (S_ISSOCK(mode))
		return "a socket";
	return "a special file";
}

static gboolean
check_regular(const struct stat *st, GError **error)
{
	if (!S_ISREG(st->st_mode)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "it is %s, not a regular file", file_type(st->st_mode));
		return FALSE;
	}
	if (st->st_size > GS_INPUT_MAX_BYTES) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "it is larger than %" G_GINT64_FORMAT " MiB, the most gpusim reads",
			    GS_INPUT_MAX_BYTES >> 20);
		return FALSE;
	}
	return TRUE;
}

/* Fills @buf (@size bytes) from @fd; a file that grows meanwhile is refused. */
static gboolean
read_exactly(int fd, char *buf, gsize size, GError **error)
{
	gsize done = 0;
	char extra;

	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_errno(errno, error);
		if (n == 0)
			break;
		done += (gsize) n;
	}
	if (done != size || read(fd, &extra, 1) != 0) {
		g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "it changed while it was being read");
		return FALSE;
	}
	return TRUE;
}

gboolean
gs_input_read(const char *path, char **contents, gsize *length, GError **error)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	gboolean ok;

	if (fd < 0)
		return fail_errno(errno, error);
	ok = fstat(fd, &st) == 0 || fail_errno(errno, error);
	ok = ok && check_regular(&st, error);
	if (ok) {
		buf = g_try_malloc((gsize) st.st_size + 1);
		if (buf == NULL)
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM,
				    "not enough memory to read its %" G_GINT64_FORMAT " bytes",
				    (gint64) st.st_size);
		ok = buf != NULL && read_exactly(fd, buf, (gsize) st.st_size, error);
	}
	close(fd);
	if (!ok) {
		g_free(buf);
		return FALSE;
	}
	buf[st.st_size] = '\0';
	*contents = buf;
	*length = (gsize) st.st_size;
	return TRUE;
}

gboolean
gs_input_check_text(const char *path, const char *what, const char *contents, gsize length,
		    GError **error)
{
	const char *nul = memchr(contents, '\0', length);
	guint line = 1;
	const char *line_start = contents;

	if (nul == NULL)
		return TRUE;
	for (const char *c = contents; c < nul; c++) {
		if (*c == '\n') {
			line++;
			line_start = c + 1;
		}
	}
	g_set_error(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID,
		    "%s:%u:%u: a NUL byte: not %s, which is text", path, line,
		    (guint) (nul - line_start) + 1, what);
	return FALSE;
}

gboolean
gs_input_read_text(const char *path, const char *what, char **contents, gsize *length,
		   GError **error)
{
	g_autoptr(GError) local = NULL;

	if (!gs_input_read(path, contents, length, &local)) {
		g_set_error(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID,
			    "%s:1:1: cannot read: %s", path, local->message);
		return FALSE;
	}
	if (gs_input_check_text(path, what, *contents, *length, error))
		return TRUE;
	g_clear_pointer(contents, g_free);
	return FALSE;
}

char *
gs_input_cut_line(char *line, char *end)
{
	char *newline = memchr(line, '\n', (gsize) (end - line));
	char *stop = newline != NULL ? newline : end;

	if (stop > line && stop[-1] == '\r')
		stop[-1] = '\0';
	*stop = '\0';
	return newline != NULL ? newline + 1 : NULL;
}

/*
 * gpusim: reading an input file whole (a scenario, an included file, a log).
 *
 * gpusim reads each input into memory before it parses it, so it takes only
 * what can be read whole, and at once: a regular file (or a symbolic link to
 * one) of at most GS_INPUT_MAX_BYTES. Anything else is refused before a byte
 * is read: /dev/zero would never end, a pipe or a terminal (/dev/stdin) would
 * wait for a writer, and opening a FIFO does not block either.
 *
 * An error is in G_FILE_ERROR and its message is the reason alone ("No such
 * file or directory", "it is a pipe, not a regular file"): each caller puts
 * the file and position in front, in its own form. Nothing here prints.
 */
#ifndef GPUSIM_INPUT_H
#define GPUSIM_INPUT_H

#include <glib.h>

G_BEGIN_DECLS

/* Far more than any scenario or log gpusim could replay in memory. */
#define GS_INPUT_MAX_BYTES (G_GINT64_CONSTANT(1) << 30)

/*
 * Reads the file at @path into *@contents, NUL-terminated (its *@length bytes
 * do not count the NUL), or returns FALSE with @error set.
 */
gboolean gs_input_read(const char *path, char **contents, gsize *length, GError **error);

/*
 * The text of a log at @path, NUL-terminated, into *@contents, or FALSE with
 * @error in GS_SCENARIO_ERROR, "PATH:1:1: cannot read: why" or, when it
 * holds a NUL byte (the lines after it would go unread), "PATH:L:C: a NUL
 * byte: not @what, which is text".
 */
gboolean gs_input_read_text(const char *path, const char *what, char **contents, gsize *length,
			    GError **error);

/** As gs_input_read_text()'s check for a NUL byte, on @contents already read. */
gboolean gs_input_check_text(const char *path, const char *what, const char *contents,
			     gsize length, GError **error);

/*
 * Ends the line at @line (text up to @end) in place, without its "\r\n" or
 * "\n", and returns the next line, or NULL after the last. memchr, not
 * strchr: a log of 10^6 lines is not measured again at every line.
 */
char *gs_input_cut_line(char *line, char *end);

G_END_DECLS

#endif /* GPUSIM_INPUT_H */

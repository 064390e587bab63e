/*
 * gpusim: reading an input file whole (a scenario, an included file, an RMM
 * log).
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

G_END_DECLS

#endif /* GPUSIM_INPUT_H */

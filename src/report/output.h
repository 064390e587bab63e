/*
 * gpusim: how a command's outputs reach the paths the user gave (SPEC §2).
 *
 * This module decides how and when every file a command writes is put in
 * place: run's --json, --events, --trace and --timeline, the folders of
 * compare and sweep (tables, CSV, results, traces, plots), import-rmm-log's
 * scenario and calibrate's YAML. A command gathers its outputs in one set
 * and commits the set once, at its end. Until then nothing at the user's
 * paths has changed, so an error on the way (a bad scenario, an output that
 * cannot be opened or written, a failed plot) leaves the old files as they
 * were and none of the new ones. What goes into an output is the caller's
 * business; this module never prints.
 *
 * What is at a path decides how it is written:
 *
 * - A regular file, or nothing yet: the content goes to a temporary file
 *   beside it (".NAME.XXXXXX", in the same directory, so that the rename
 *   stays on one file system), renamed over the path at the commit. A file it
 *   replaces keeps its permission bits; a new one gets 0666 less the umask.
 * - A symbolic link: followed, through every link of a chain, to the file it
 *   names, which is written as above in its own directory; the link stays.
 * - "-": standard output.
 * - A character device, a FIFO, a socket or any other file that is neither
 *   regular nor a directory: a stream, written in place, never unlinked or
 *   replaced (--events=/dev/null, a named pipe).
 * - A link in /proc, where /dev/stdout and /dev/fd/N lead: a stream too,
 *   since it stands for an open descriptor; written in append mode, so that
 *   when the descriptor is a file the output follows what the command
 *   printed, as it would through the descriptor itself.
 * - A directory, or a path the user may not write (its directory, or the
 *   file already there): refused when it is added, before anything runs.
 *
 * A stream cannot be taken back once written, so its content waits in a
 * private temporary file and is written last, after every regular file of
 * the set has been renamed into place: a reader that sees a stream end finds
 * the files there already, and a command that fails before its commit writes
 * nothing to any stream (a named pipe is opened and closed then, so that a
 * reader waiting on it sees its end instead of waiting forever). A stream
 * that fails while it is written (a full device, a reader gone) fails the
 * commit, with the regular files already in place.
 *
 * A rename cannot be undone: one that fails (the directory changed under the
 * command) leaves those renamed before it in place. A command interrupted by
 * a signal may leave its hidden temporaries behind.
 *
 * Outputs are added from one thread; different outputs of a set may then be
 * written from different threads at once (batch.h's workers do). Errors are
 * in G_FILE_ERROR and read "cannot write PATH: why" (or "cannot create DIR").
 */
#ifndef GPUSIM_OUTPUT_H
#define GPUSIM_OUTPUT_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct GsOutputSet GsOutputSet;
/* One output of a set, owned by the set. */
typedef struct GsOutput GsOutput;

GsOutputSet *gs_output_set_new(void);

/**
 * Ends the set: whatever was not committed is dropped (its temporaries
 * removed, the folders gs_output_set_make_dir() created removed when they are
 * empty), so freeing a set without committing it writes nothing.
 */
void gs_output_set_free(GsOutputSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsOutputSet, gs_output_set_free)

/**
 * Makes the folder @dir and its missing parents, for outputs to be added in
 * it; those it made are removed again if the set is dropped. FALSE with
 * @error set when one cannot be made.
 */
gboolean gs_output_set_make_dir(GsOutputSet *set, const char *dir, GError **error);

/**
 * Adds the output at @path (see above for what it may be); NULL with @error
 * set when it is refused. Nothing is created yet.
 */
GsOutput *gs_output_set_add(GsOutputSet *set, const char *path, GError **error);

/** gs_output_set_add() of the file @name in the folder @dir. */
GsOutput *gs_output_set_add_in(GsOutputSet *set, const char *dir, const char *name,
			       GError **error);

/**
 * Puts every output that was given content into place: the regular files
 * first, then the streams, each in the order added. FALSE with @error set at
 * the first that fails. An output never given content is left as it is.
 */
gboolean gs_output_set_commit(GsOutputSet *set, GError **error);

/** The path as the user gave it. */
const char *gs_output_path(const GsOutput *out);

/** Makes @contents (a string) the content of @out, replacing any it had. */
gboolean gs_output_write(GsOutput *out, const char *contents, GError **error);

/*
 * Content written in pieces as it is made (a long run's result), so that it
 * is never whole in memory: gs_output_writer_new() replaces any content @out
 * had, gs_output_writer_add() appends a piece (a GsReportSink, report.h;
 * FALSE once a write failed, and the pieces after are dropped), and
 * gs_output_writer_close() ends it, with @error set if any write failed.
 */
typedef struct GsOutputWriter GsOutputWriter;

GsOutputWriter *gs_output_writer_new(GsOutput *out, GError **error);
gboolean gs_output_writer_add(const char *data, gsize len, gpointer writer);
gboolean gs_output_writer_close(GsOutputWriter *writer, GError **error);

/**
 * The file that holds @out's content until the commit, created empty on the
 * first call: for a program that writes the content itself (gnuplot), or
 * reads content already written (a plot of a CSV output). NULL with @error
 * set when it cannot be made.
 */
const char *gs_output_staged_path(GsOutput *out, GError **error);

G_END_DECLS

#endif /* GPUSIM_OUTPUT_H */

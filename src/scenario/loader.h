/*
 * gpusim: the scenario loader (SPEC §3): YAML files in, a GsWorkload out.
 *
 * This module decides what a scenario file means and whether it is valid. It
 * reads a file (whole, and only a regular file: input.h) with libyaml into a
 * tree that remembers the file, line and column of every node, refusing as it
 * reads nesting deeper than 64 levels and aliases that would copy more than a
 * million nodes (an honest file's size is not limited); merges the files named
 * by `include:` under it, then the chosen variant and each `--set KEY=VALUE`
 * over it (maps merge key by key, anything else is replaced); and converts
 * the merged tree into the plain data of workload.h, with every quantity in
 * base units and every name resolved to an index. It checks everything SPEC
 * §3 demands on the way: unknown keys, node types, units, ranges, enum words,
 * duplicate ids and names, references to undefined buffers, streams,
 * reservations, tasks and threads.
 *
 * A scenario with problems is refused with a GError in GS_SCENARIO_ERROR
 * whose message has a line "file:line:column: what is wrong" for each, in
 * file order, the position being that of the offending node or key (1:1 for
 * a scenario that cannot be read, the include's for an included file);
 * nothing half-built is returned. A file that cannot be read or parsed (or
 * crosses a limit), an include that fails, an unknown variant or a --set
 * that cannot apply stops loading at once, with one line: what follows would
 * mean nothing. Otherwise loading goes on past a bad key, value or list item
 * to report each problem it finds, up to 20, and then a last line
 * "file:line:column: more than 20 errors: stopping here" at the next one; a
 * reference that may fail only because of another error (to a buffer, task
 * or thread left unread) is not reported beside it. Values given by --set
 * are positioned in the pseudo-file "--set KEY=VALUE", line 1, the column
 * counting from the first character of KEY.
 *
 * It neither runs nor generates anything (generate: is only recorded), and it
 * prints nothing: the caller reports the error.
 */
#ifndef GPUSIM_LOADER_H
#define GPUSIM_LOADER_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

#define GS_SCENARIO_ERROR gs_scenario_error_quark()

typedef enum {
	GS_SCENARIO_ERROR_INVALID, /* unreadable, malformed or invalid scenario */
} GsScenarioError;

GQuark gs_scenario_error_quark(void);

/*
 * Loads the scenario at @path, applies @variant (NULL: none; the names of all
 * variants are recorded in variant_names either way) and then each "KEY=VALUE"
 * of the NULL-terminated @sets (may be NULL), and returns the validated
 * workload, or NULL with @error set.
 */
GsWorkload *gs_loader_load(const char *path, const char *variant, const char *const *sets,
			   GError **error);

/*
 * As gs_loader_load(), with the calibration at @device (what `gpusim
 * calibrate` writes: memory: and links: keys, nothing else) merged over the
 * scenario and its includes, before @variant and @sets: a device's values
 * replace the scenario's, while a variant or --set still changes them.
 */
GsWorkload *gs_loader_load_device(const char *path, const char *device, const char *variant,
				  const char *const *sets, GError **error);

/*
 * As gs_loader_load(), for a scenario held in memory: @text, @len bytes (need
 * not end in NUL), read as if it were the file @name. Messages name @name,
 * and its include: paths are relative to @name's folder, as for a file.
 */
GsWorkload *gs_loader_load_text(const char *name, const char *text, gsize len,
				const char *variant, const char *const *sets, GError **error);

/*
 * Ends each line of @error, from loading with @variant, with " (with variant
 * VARIANT)": for the commands that load every variant, to say which failed.
 */
void gs_loader_error_in_variant(GError *error, const char *variant);

/*
 * The keys --set takes (memory.gpu.capacity, policy.oom...), from the tables
 * the loader reads scenarios with, in their order: each "KEY", or for a key
 * that takes one of some words "KEY<TAB>WORD WORD..." (an enum's, true and
 * false). NULL-terminated; g_strfreev() it.
 */
char **gs_loader_set_keys(void);

/*
 * Every key a scenario may hold, from the same tables, in the same format:
 * the maps and sequences too, a sequence's items as "tasks[].id", a map of
 * the scenario's own names as "expect.tasks.TASK.outcome", then each op's
 * word and the keys of its map ("alloc", "alloc.size"). The manual page
 * gpusim-scenario(5) documents each (tests/check-man-scenario.sh).
 */
char **gs_loader_format_keys(void);

typedef enum { GS_QUANTITY_SIZE, GS_QUANTITY_DURATION, GS_QUANTITY_BANDWIDTH } GsQuantity;

/*
 * @text as a size, a duration or a bandwidth written with its unit
 * ("512MiB", "10ms", "25GB/s"), in bytes, nanoseconds or bytes per second,
 * and which it is in *@kind (may be NULL); FALSE when it is none of those (a
 * bare number, a word, a value the loader would refuse).
 */
gboolean gs_loader_quantity(const char *text, gint64 *value, GsQuantity *kind);

/*
 * Reads @text, the value of the command-line @option ("--max-time"), as a
 * duration written as scenarios write them: exact, in ns, us, ms or s, and
 * no more than GsTime holds. FALSE with @error set otherwise, positioned in
 * the pseudo-file "OPTION=TEXT", line 1, at the column where TEXT starts.
 */
gboolean gs_loader_parse_duration(const char *option, const char *text, GsTime *out,
				  GError **error);

/*
 * The names of the scenario's variants (includes merged), in file order, as a
 * GPtrArray of strings that frees them; NULL with @error set if the file
 * cannot be read or its variants: section is malformed. The variants' bodies
 * are checked only when one is loaded.
 */
GPtrArray *gs_loader_variant_names(const char *path, GError **error);

G_END_DECLS

#endif /* GPUSIM_LOADER_H */

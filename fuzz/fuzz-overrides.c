/*
 * gpusim fuzzing: a scenario with a variant and --set values laid over it,
 * then a bounded simulation of what the loader accepts.
 *
 * The input is a scenario preceded by lines that start with "@" (which no
 * YAML document can start with): "@variant NAME" chooses a variant (the last
 * one wins) and "@set KEY=VALUE" adds a --set, in order. Without such lines
 * the input is a plain scenario.
 */
#include "config.h"

#include <string.h>

#include "harness.h"
#include "scenario/loader.h"

/* Takes the "@" lines at the start of *@text off it, into @variant and @sets. */
static void
take_overrides(const char **text, size_t *len, char **variant, GPtrArray *sets)
{
	while (*len > 0 && **text == '@') {
		const char *nl = memchr(*text, '\n', *len);
		size_t line_len = nl != NULL ? (size_t) (nl - *text) : *len;
		g_autofree char *line = g_strndup(*text, line_len);

		if (g_str_has_prefix(line, "@variant ")) {
			g_free(*variant);
			*variant = g_strdup(line + strlen("@variant "));
		} else if (g_str_has_prefix(line, "@set ")) {
			g_ptr_array_add(sets, g_strdup(line + strlen("@set ")));
		}
		*text += MIN(line_len + 1, *len);
		*len -= MIN(line_len + 1, *len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *) data;
	g_autofree char *variant = NULL;
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;

	take_overrides(&text, &size, &variant, sets);
	g_ptr_array_add(sets, NULL);
	w = gs_loader_load_text("fuzz.yaml", text, size, variant,
				(const char *const *) sets->pdata, &error);
	if (w == NULL)
		fuzz_check_message("scenario error", error->message);
	else
		fuzz_simulate(w);
	return 0;
}

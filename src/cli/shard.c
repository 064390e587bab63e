/*
 * gpusim: a shard's manifest, written and read back (shard.h).
 */
#include "config.h"

#include <string.h>

#include "cli/shard.h"
#include "scenario/input.h"

/* Raised when the manifest's meaning changes, so that an older one is refused. */
enum { MANIFEST_FORMAT = 1 };

/* ---- writing ---- */

static char *
scenario_digest(const char *path, GError **error)
{
	g_autofree char *contents = NULL;
	gsize length = 0;

	if (!gs_input_read(path, &contents, &length, error)) {
		g_prefix_error(error, "cannot read %s: ", path);
		return NULL;
	}
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) contents, length);
}

static GStrv
strv_end(GPtrArray *strings)
{
	g_ptr_array_add(strings, NULL);
	return (GStrv) g_ptr_array_free(strings, FALSE);
}

/* The --param texts of @grid, as the grid reads them back. */
static GStrv
param_texts(const GsSweepGrid *grid)
{
	GPtrArray *texts = g_ptr_array_new();

	for (guint k = 0; k < grid->params->len; k++) {
		const GsSweepParam *p = grid->params->pdata[k];
		GString *text = g_string_new(p->key);

		for (guint i = 0; i < p->values->len; i++)
			g_string_append_printf(text, "%c%s", i == 0 ? '=' : ',',
					       (const char *) p->values->pdata[i]);
		g_ptr_array_add(texts, g_string_free(text, FALSE));
	}
	return strv_end(texts);
}

static GStrv
variant_labels(const GsSweepGrid *grid)
{
	GPtrArray *labels = g_ptr_array_new();

	for (guint v = 0; v < grid->variants->len; v++)
		g_ptr_array_add(labels, g_strdup(((GsBatchVariant *) grid->variants->pdata[v])->label));
	return strv_end(labels);
}

static void
set_list(GKeyFile *kf, const char *key, const char *const *list)
{
	static const char *const none[] = {NULL};

	list = list != NULL ? list : none;
	g_key_file_set_string_list(kf, "sweep", key, list, g_strv_length((char **) list));
}

static void
set_sweep(GKeyFile *kf, const GsShardSweep *sweep, const GsSweepGrid *grid, const char *digest)
{
	g_auto(GStrv) params = param_texts(grid);
	g_auto(GStrv) variants = variant_labels(grid);

	g_key_file_set_string(kf, "sweep", "scenario_sha256", digest);
	set_list(kf, "params", (const char *const *) params);
	set_list(kf, "variants", (const char *const *) variants);
	set_list(kf, "sets", sweep->sets);
	g_key_file_set_int64(kf, "sweep", "seed", sweep->seed);
	g_key_file_set_string(kf, "sweep", "backend", sweep->backend);
	g_key_file_set_boolean(kf, "sweep", "trace", sweep->trace);
	g_key_file_set_uint64(kf, "sweep", "runs", grid->runs);
}

char *
gs_shard_manifest(const GsShardSweep *sweep, const GsSweepGrid *grid, const GsSweepShard *shard,
		  const char *name, const GsBatchMetrics *metrics, GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autofree char *digest = scenario_digest(sweep->scenario, error);

	if (digest == NULL)
		return NULL;
	g_key_file_set_comment(kf, NULL, NULL,
			       " A shard of a gpusim sweep: `gpusim merge` puts its shards together.",
			       NULL);
	g_key_file_set_integer(kf, "shard", "format", MANIFEST_FORMAT);
	g_key_file_set_uint64(kf, "shard", "shard", shard->k);
	g_key_file_set_uint64(kf, "shard", "shards", shard->n);
	g_key_file_set_string(kf, "shard", "scenario", sweep->scenario);
	g_key_file_set_string(kf, "shard", "name", name);
	set_sweep(kf, sweep, grid, digest);
	for (guint i = 0; i < grid->runs; i++) {
		g_autoptr(GString) row = g_string_new(NULL);
		char key[16];

		if (!gs_sweep_shard_takes(shard, i))
			continue;
		g_snprintf(key, sizeof key, "%u", i + 1);
		gs_batch_csv_metrics(row, &metrics[i]);
		g_key_file_set_string(kf, "runs", key, row->str);
	}
	return g_key_file_to_data(kf, NULL, NULL);
}

/* ---- reading ---- */

typedef struct {
	const char *dir;
	char *path; /* its manifest */
	GKeyFile *kf;
	GsSweepShard shard;
} Shard;

static void
shard_clear(Shard *s)
{
	g_free(s->path);
	if (s->kf != NULL)
		g_key_file_unref(s->kf);
}

static gboolean
bad_value(GError **error, const char *path, const char *why)
{
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", path, why);
	return FALSE;
}

/* Reads shard K of N from the folder @s->dir. */
static gboolean
shard_read(Shard *s, GError **error)
{
	g_autoptr(GError) why = NULL;
	g_autofree char *contents = NULL;
	gsize length = 0;
	guint64 k, n;

	s->path = g_build_filename(s->dir, GS_SHARD_MANIFEST, NULL);
	if (!gs_input_read(s->path, &contents, &length, &why)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: not a shard of a sweep (sweep --shard=K/N writes one): cannot read "
			    "%s: %s",
			    s->dir, s->path, why->message);
		return FALSE;
	}
	s->kf = g_key_file_new();
	if (!g_key_file_load_from_data(s->kf, contents, length, G_KEY_FILE_NONE, &why))
		return bad_value(error, s->path, why->message);
	if (g_key_file_get_integer(s->kf, "shard", "format", NULL) != MANIFEST_FORMAT)
		return bad_value(error, s->path, "not a shard manifest this gpusim writes (format)");
	k = g_key_file_get_uint64(s->kf, "shard", "shard", NULL);
	n = g_key_file_get_uint64(s->kf, "shard", "shards", NULL);
	if (k < 1 || k > n || n > g_key_file_get_uint64(s->kf, "sweep", "runs", NULL))
		return bad_value(error, s->path, "its shard is not K of N with 1 <= K <= N <= runs");
	s->shard = (GsSweepShard) {.k = (guint) k, .n = (guint) n};
	return TRUE;
}

/* Whether @b's [sweep] is @a's, key by key. */
static gboolean
same_sweep(const Shard *a, const Shard *b, GError **error)
{
	gsize n_a = 0, n_b = 0;
	g_auto(GStrv) keys_a = g_key_file_get_keys(a->kf, "sweep", &n_a, NULL);
	g_auto(GStrv) keys_b = g_key_file_get_keys(b->kf, "sweep", &n_b, NULL);

	for (gsize i = 0; i < MAX(n_a, n_b); i++) {
		const char *key = i < n_a ? keys_a[i] : keys_b[i];
		g_autofree char *value_a = g_key_file_get_value(a->kf, "sweep", key, NULL);
		g_autofree char *value_b = g_key_file_get_value(b->kf, "sweep", key, NULL);

		if (g_strcmp0(value_a, value_b) != 0) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s and %s are shards of different sweeps (their %s differ)",
				    a->dir, b->dir, key);
			return FALSE;
		}
	}
	return n_a > 0 || bad_value(error, a->path, "no [sweep] group");
}

/* @shards in the order of K, each once, all of one sweep and one N. */
static gboolean
order_shards(Shard *shards, guint count, Shard **by_k, GError **error)
{
	guint n = shards[0].shard.n;
	g_autoptr(GString) missing = g_string_new(NULL);
	guint n_missing = 0;

	for (guint i = 0; i < count; i++) {
		Shard *s = &shards[i];

		if (s->shard.n != n) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s is shard %u of %u, %s shard %u of %u: merge takes the shards "
				    "of one --shard=K/N split",
				    shards[0].dir, shards[0].shard.k, n, s->dir, s->shard.k, s->shard.n);
			return FALSE;
		}
		if (!same_sweep(&shards[0], s, error))
			return FALSE;
		if (by_k[s->shard.k - 1] != NULL) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "shard %u of %u is given twice: %s and %s", s->shard.k, n,
				    by_k[s->shard.k - 1]->dir, s->dir);
			return FALSE;
		}
		by_k[s->shard.k - 1] = s;
	}
	for (guint k = 1; k <= n; k++) {
		if (by_k[k - 1] == NULL)
			g_string_append_printf(missing, "%s%u", n_missing++ > 0 ? ", " : "", k);
	}
	if (n_missing == 0)
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s %s of %u %s missing: merge needs all %u", n_missing > 1 ? "shards" : "shard",
		    missing->str, n, n_missing > 1 ? "are" : "is", n);
	return FALSE;
}

/* The grid the manifest @s names. */
static GsSweepGrid *
grid_of(const Shard *s, GError **error)
{
	g_auto(GStrv) params = g_key_file_get_string_list(s->kf, "sweep", "params", NULL, NULL);
	g_auto(GStrv) labels = g_key_file_get_string_list(s->kf, "sweep", "variants", NULL, NULL);
	GPtrArray *variants = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_variant_free);
	g_autoptr(GError) why = NULL;
	GsSweepGrid *grid;

	for (guint v = 0; labels != NULL && labels[v] != NULL; v++) {
		GsBatchVariant *variant = g_new0(GsBatchVariant, 1);

		variant->label = g_strdup(labels[v]);
		g_ptr_array_add(variants, variant);
	}
	if (variants->len == 0) {
		g_ptr_array_unref(variants);
		bad_value(error, s->path, "no variants");
		return NULL;
	}
	grid = gs_sweep_grid_new((const char *const *) params, variants, &why);
	if (grid == NULL)
		bad_value(error, s->path, why->message);
	else if (g_key_file_get_uint64(s->kf, "sweep", "runs", NULL) != grid->runs) {
		bad_value(error, s->path, "its number of runs is not its grid's");
		g_clear_pointer(&grid, gs_sweep_grid_free);
	}
	return grid;
}

/*
 * The metrics of the runs of @s into @merge, which must be exactly those it
 * takes; from shard 1, whose first run is the sweep's, the workload's name.
 */
static gboolean
take_runs(const Shard *s, GsShardMerge *merge, GError **error)
{
	const GsSweepGrid *grid = merge->grid;
	gsize n_keys = 0;
	guint taken = 0;

	g_strfreev(g_key_file_get_keys(s->kf, "runs", &n_keys, NULL)); /* only their count */
	if (s->shard.k == 1 &&
	    (merge->name = g_key_file_get_string(s->kf, "shard", "name", NULL)) == NULL)
		return bad_value(error, s->path, "no name");
	for (guint i = 0; i < grid->runs; i++) {
		char key[16];
		g_autofree char *row = NULL;

		if (!gs_sweep_shard_takes(&s->shard, i))
			continue;
		taken++;
		g_snprintf(key, sizeof key, "%u", i + 1);
		row = g_key_file_get_string(s->kf, "runs", key, NULL);
		if (row == NULL || !gs_batch_csv_parse_metrics(row, &merge->metrics[i])) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s: run %s: %s", s->path, key,
				    row == NULL ? "missing" : "not the metrics of a run");
			return FALSE;
		}
		merge->dirs[i] = g_strdup(s->dir);
	}
	return n_keys == taken ||
	       bad_value(error, s->path, "it has runs its shard does not take");
}

static GsShardMerge *
merge_new(const Shard *first, GError **error)
{
	GsSweepGrid *grid = grid_of(first, error);
	GsShardMerge *merge;

	if (grid == NULL)
		return NULL;
	merge = g_new0(GsShardMerge, 1);
	merge->grid = grid;
	merge->metrics = g_new0(GsBatchMetrics, grid->runs);
	merge->dirs = g_new0(char *, grid->runs);
	merge->trace = g_key_file_get_boolean(first->kf, "sweep", "trace", NULL);
	return merge;
}

GsShardMerge *
gs_shard_merge_read(const char *const *dirs, GError **error)
{
	guint count = g_strv_length((char **) dirs);
	Shard *shards = g_new0(Shard, MAX(count, 1));
	g_autofree Shard **by_k = NULL;
	g_autoptr(GsShardMerge) merge = NULL;
	gboolean ok = count > 0;

	if (count == 0)
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "give the folders of the shards (DIR...)");
	for (guint i = 0; ok && i < count; i++) {
		shards[i].dir = dirs[i];
		ok = shard_read(&shards[i], error);
	}
	/* The grid first: it bounds N, and so what is allocated for it. */
	if (ok && (merge = merge_new(&shards[0], error)) != NULL) {
		by_k = g_new0(Shard *, shards[0].shard.n);
		ok = order_shards(shards, count, by_k, error);
		for (guint k = 0; ok && k < shards[0].shard.n; k++)
			ok = take_runs(by_k[k], merge, error);
	}
	for (guint i = 0; i < count; i++)
		shard_clear(&shards[i]);
	g_free(shards);
	return ok ? g_steal_pointer(&merge) : NULL;
}

void
gs_shard_merge_free(GsShardMerge *merge)
{
	if (merge == NULL)
		return;
	g_free(merge->metrics);
	g_free(merge->name);
	for (guint i = 0; i < merge->grid->runs; i++)
		g_free(merge->dirs[i]);
	g_free(merge->dirs);
	gs_sweep_grid_free(merge->grid);
	g_free(merge);
}

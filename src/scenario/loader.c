/*
 * gpusim: the scenario loader (SPEC §3).
 *
 * This module decides what a scenario means and whether it is valid; see
 * loader.h for the contract. It works in two stages so that every error can
 * name a position:
 *
 *   1. Reading and merging. libyaml's events are turned into a tree of Nodes
 *      that carry file, line and column, for each file (read whole, see
 *      input.h) and each --set value; nesting and aliases are bounded as they
 *      are read. Includes, the variant and the --set overrides are merged into
 *      one tree by merge(), which never modifies its inputs: it builds new map
 *      nodes and shares the rest. All nodes live in one arena (Loader.nodes)
 *      freed at the end, so sharing needs no ownership rules.
 *   2. Converting. The merged tree is read against tables of Fields (one row
 *      per key: its kind, where it goes, its bounds), or by small readers for
 *      what a table cannot express (tasks, threads, ops, expectations). Each
 *      map's unknown keys are reported first, in file order; its known keys
 *      are then converted in table order, which is what makes tasks exist
 *      before pool threads and expectations refer to them.
 *
 * Every error goes through fail_at(), the one place to put a breakpoint.
 * While reading and merging, the first one stops loading: nothing after a
 * syntax error, a limit crossed or a file that cannot be read means anything.
 * While converting, a reader that finds an error gives up on its node and
 * returns FALSE, and the reader of the list or map holding it goes on with
 * the node's siblings (go_on()), so that one load reports every error of a
 * file, up to MAX_ERRORS. What a node checks against its own children is
 * checked only when they read cleanly; a reference to something read
 * elsewhere (a task, a thread, a buffer, the GPUs) is checked only while no
 * other error has been found (fail_reference()), since that error may be why
 * it is missing. Any error frees the half-built workload.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <yaml.h>

#include <gpusim/pages.h>

#include "scenario/input.h"
#include "scenario/loader.h"

G_DEFINE_QUARK(gs-scenario-error-quark, gs_scenario_error)

/* Deeper than any scenario needs: a mistake, or an attack on the parser. */
#define MAX_DEPTH 64
/* More than any scenario's aliases repeat; "billion laughs" would be more. */
#define MAX_ALIAS_COPIES 1000000
/* More GPUs than one machine holds; each is simulated as a memory space. */
#define MAX_DEVICES 1024
/* Errors reported by one load: more are seldom read, and are often consequences. */
#define MAX_ERRORS 20

/* ==== the node tree ==== */

typedef enum { NODE_SCALAR, NODE_SEQ, NODE_MAP } NodeKind;

typedef struct Node Node;

typedef struct {
	Node *key; /* always a scalar */
	Node *value;
} Entry;

struct Node {
	NodeKind kind;
	const char *file;   /* owned by the Loader */
	guint line, column; /* 1-based */
	char *text;         /* scalars */
	GArray *entries;    /* maps: Entry, in the order written, keys unique */
	GPtrArray *items;   /* sequences: Node* */
};

/* Names a thread's ops refer to: each has its table in GsThreadSpec. */
typedef enum {
	NAME_BUFFER,
	NAME_STREAM,
	NAME_RESERVATION,
	NAME_CONSUMER,
	NAME_PAGE,
	NAME_VALUE,
	N_NAME_TABLES
} NameTable;

typedef struct {
	guint file_rank;    /* the file's place in Loader.files: files in the order read */
	guint line, column;
	guint found;        /* how many errors were found before it */
	char *message;      /* "file:line:column: what is wrong" */
} LoadError;

typedef struct {
	GPtrArray *nodes;     /* every Node made: the arena */
	GPtrArray *files;     /* char*: file names the nodes point to */
	GPtrArray *including; /* char*: the files being read, outermost first */
	GError **error;
	/* errors */
	gboolean keep_going;  /* converting: an error stops only its node */
	GPtrArray *errors;    /* LoadError*, in the order found, at most MAX_ERRORS */
	guint read_errors;    /* of them, those that may have left something unread */
	LoadError *stopped;   /* the error past MAX_ERRORS (or none): nothing more is read */
	/* conversion */
	GsWorkload *w;
	GHashTable *task_ids;     /* task id -> index in w->tasks + 1 */
	GPtrArray *task_nodes;    /* Node* of each task's id, by index */
	GHashTable *thread_names; /* thread name -> Node* where it was named */
	GPtrArray *foreign_frees; /* ForeignFree*: frees of another thread's buffers, to resolve */
} Loader;

/*
 * A free of another thread's buffers, read before that thread may be: its
 * names are resolved in that thread's table once every thread is read
 * (resolve_foreign_frees()). Until then the op's bufs hold this record's
 * index in Loader.foreign_frees.
 */
typedef struct {
	const Node *thread; /* free.thread */
	const Node *bufs;   /* free.buf: a name or a sequence of names */
} ForeignFree;

static void
node_free(gpointer data)
{
	Node *n = data;

	g_free(n->text);
	if (n->entries != NULL)
		g_array_unref(n->entries);
	if (n->items != NULL)
		g_ptr_array_unref(n->items);
	g_free(n);
}

static Node *
node_new(Loader *l, NodeKind kind, const char *file, guint line, guint column)
{
	Node *n = g_new0(Node, 1);

	n->kind = kind;
	n->file = file;
	n->line = line;
	n->column = column;
	if (kind == NODE_MAP)
		n->entries = g_array_new(FALSE, FALSE, sizeof(Entry));
	else if (kind == NODE_SEQ)
		n->items = g_ptr_array_new();
	g_ptr_array_add(l->nodes, n);
	return n;
}

static Node *
scalar_new(Loader *l, const char *file, guint line, guint column, const char *text)
{
	Node *n = node_new(l, NODE_SCALAR, file, line, column);

	n->text = g_strdup(text);
	return n;
}

static const char *
file_name(Loader *l, const char *name)
{
	for (guint i = 0; i < l->files->len; i++) {
		if (strcmp(l->files->pdata[i], name) == 0)
			return l->files->pdata[i];
	}
	g_ptr_array_add(l->files, g_strdup(name));
	return l->files->pdata[l->files->len - 1];
}

static Entry *
find_entry(const Node *map, const char *key)
{
	if (map == NULL || map->kind != NODE_MAP)
		return NULL;
	for (guint i = 0; i < map->entries->len; i++) {
		Entry *e = &g_array_index(map->entries, Entry, i);

		if (strcmp(e->key->text, key) == 0)
			return e;
	}
	return NULL;
}

static Node *
find_value(const Node *map, const char *key)
{
	Entry *e = find_entry(map, key);

	return e != NULL ? e->value : NULL;
}

/* YAML's null: an empty value, ~ or null. */
static gboolean
is_null(const Node *n)
{
	return n->kind == NODE_SCALAR &&
	       (n->text[0] == '\0' || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}

/* ==== errors ==== */

static void
load_error_free(gpointer data)
{
	LoadError *e = data;

	g_free(e->message);
	g_free(e);
}

static LoadError *
load_error_new(Loader *l, const char *file, guint line, guint column, const char *what)
{
	LoadError *e = g_new0(LoadError, 1);

	while (e->file_rank < l->files->len && strcmp(l->files->pdata[e->file_rank], file) != 0)
		e->file_rank++;
	e->line = line;
	e->column = column;
	e->found = l->errors->len;
	e->message = g_strdup_printf("%s:%u:%u: %s", file, line, column, what);
	return e;
}

/*
 * @text (owned, returned) with its line breaks and other control characters
 * written as escapes: an error is one line, whatever the values it quotes
 * hold, so that each line of a file's errors starts with its position.
 */
static char *
one_line(char *text)
{
	GString *s;

	if (strpbrk(text, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
			  "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f") == NULL)
		return text;
	s = g_string_sized_new(strlen(text) + 8);
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '\n')
			g_string_append(s, "\\n");
		else if (*p == '\t')
			g_string_append(s, "\\t");
		else if ((unsigned char) *p < 0x20)
			g_string_append_printf(s, "\\x%02x", (unsigned char) *p);
		else
			g_string_append_c(s, *p);
	}
	g_free(text);
	return g_string_free(s, FALSE);
}

/*
 * Records an error, unless loading has stopped. The first one stops it while
 * reading files; while converting, the one past MAX_ERRORS does. A
 * @reference error is not recorded after an error that may have left what
 * it refers to unread. Returns FALSE, for the reader to return.
 */
static gboolean
record_error(Loader *l, gboolean reference, const char *file, guint line, guint column,
	     const char *format, va_list args)
{
	g_autofree char *what = NULL;

	if (l->stopped != NULL || (!l->keep_going && l->errors->len > 0) ||
	    (reference && l->read_errors > 0))
		return FALSE;
	what = one_line(g_strdup_vprintf(format, args));
	g_debug("scenario error at %s:%u:%u: %s", file, line, column, what);
	if (l->errors->len == MAX_ERRORS) {
		g_autofree char *stop = g_strdup_printf("more than %d errors: stopping here",
							MAX_ERRORS);

		l->stopped = load_error_new(l, file, line, column, stop);
		return FALSE;
	}
	g_ptr_array_add(l->errors, load_error_new(l, file, line, column, what));
	if (!reference)
		l->read_errors++;
	return FALSE;
}

static gboolean
fail_at(Loader *l, const char *file, guint line, guint column, const char *format, ...)
	G_GNUC_PRINTF(5, 6);

/* The one error helper (with fail_reference()). */
static gboolean
fail_at(Loader *l, const char *file, guint line, guint column, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	record_error(l, FALSE, file, line, column, format, args);
	va_end(args);
	return FALSE;
}

static gboolean
fail_reference(Loader *l, const Node *at, const char *format, ...) G_GNUC_PRINTF(3, 4);

/*
 * @at refers to something read elsewhere that is not there: an error only
 * while every other node read cleanly.
 */
static gboolean
fail_reference(Loader *l, const Node *at, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	record_error(l, TRUE, at->file, at->line, at->column, format, args);
	va_end(args);
	return FALSE;
}

/*
 * Folds a node's outcome into @ok, its parent's so far. TRUE to go on with
 * the node's siblings: always, until loading stops.
 */
static gboolean
go_on(Loader *l, gboolean *ok, gboolean node_ok)
{
	*ok = *ok && node_ok;
	return l->stopped == NULL && (node_ok || l->keep_going);
}

/* File order (files in the order read); errors at one position in the order found. */
static gint
compare_errors(gconstpointer a, gconstpointer b)
{
	const LoadError *x = *(const LoadError *const *) a, *y = *(const LoadError *const *) b;

	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return x->found < y->found ? -1 : x->found > y->found;
}

/* Sets the caller's error to every error found, one line each. */
static void
report_errors(Loader *l)
{
	g_autoptr(GString) text = g_string_new(NULL);

	if (l->errors->len == 0)
		return;
	g_ptr_array_sort(l->errors, compare_errors);
	for (guint i = 0; i < l->errors->len; i++)
		g_string_append_printf(text, "%s%s", i > 0 ? "\n" : "",
				       ((LoadError *) l->errors->pdata[i])->message);
	if (l->stopped != NULL)
		g_string_append_printf(text, "\n%s", l->stopped->message);
	g_set_error_literal(l->error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID, text->str);
}

#define fail(l, node, ...) fail_at((l), (node)->file, (node)->line, (node)->column, __VA_ARGS__)

/* "line 3" when @first is in the same file as @here, else "file:3:5". */
static char *
position_text(const Node *first, const Node *here)
{
	if (strcmp(first->file, here->file) == 0)
		return g_strdup_printf("line %u", first->line);
	return g_strdup_printf("%s:%u:%u", first->file, first->line, first->column);
}

/* "a, b or c" from a NULL-terminated list. */
static char *
join_names(const char *const *names)
{
	GString *s = g_string_new(NULL);
	guint n = g_strv_length((char **) names);

	for (guint i = 0; i < n; i++) {
		if (i > 0)
			g_string_append(s, i + 1 == n ? " or " : ", ");
		g_string_append(s, names[i]);
	}
	return g_string_free(s, FALSE);
}

/*
 * The edit distance between @a and @b: insertions, deletions, substitutions
 * and swaps of two neighbours, case ignored (optimal string alignment).
 */
static guint
edit_distance(const char *a, const char *b)
{
	gsize m = strlen(a), n = strlen(b);
	g_autofree guint *d = g_new(guint, (m + 1) * (n + 1));

#define D(i, j) d[(i) * (n + 1) + (j)]
	for (gsize i = 0; i <= m; i++)
		D(i, 0) = (guint) i;
	for (gsize j = 0; j <= n; j++)
		D(0, j) = (guint) j;
	for (gsize i = 1; i <= m; i++) {
		for (gsize j = 1; j <= n; j++) {
			guint differ = g_ascii_tolower(a[i - 1]) != g_ascii_tolower(b[j - 1]);

			D(i, j) = MIN(MIN(D(i - 1, j) + 1, D(i, j - 1) + 1), D(i - 1, j - 1) + differ);
			if (i > 1 && j > 1 && g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 2]) &&
			    g_ascii_tolower(a[i - 2]) == g_ascii_tolower(b[j - 1]))
				D(i, j) = MIN(D(i, j), D(i - 2, j - 2) + 1);
		}
	}
	return D(m, n);
#undef D
}

/*
 * "; did you mean "NAME"?" for the one name of @names nearest to @word, when
 * it is near enough to be a typo (a third of the shorter one's letters, at
 * least one), else "".
 */
static char *
did_you_mean(const char *word, const char *const *names)
{
	const char *best = NULL;
	guint best_distance = G_MAXUINT;
	gboolean tie = FALSE;

	for (guint i = 0; names[i] != NULL; i++) {
		guint d = edit_distance(word, names[i]);

		if (d == best_distance)
			tie = TRUE;
		if (d < best_distance) {
			best = names[i];
			best_distance = d;
			tie = FALSE;
		}
	}
	if (best == NULL || tie || best_distance > MAX(MIN(strlen(best), strlen(word)) / 3, 1))
		return g_strdup("");
	return g_strdup_printf("; did you mean \"%s\"?", best);
}

static gboolean
expect_kind(Loader *l, const Node *n, NodeKind kind, const char *what)
{
	static const char *const kinds[] = {
		[NODE_SCALAR] = "a single value",
		[NODE_SEQ] = "a sequence",
		[NODE_MAP] = "a map",
	};

	if (n->kind == kind)
		return TRUE;
	if (n->kind == NODE_SCALAR)
		return fail(l, n, "%s must be %s, not \"%s\"", what, kinds[kind], n->text);
	return fail(l, n, "%s must be %s, not %s", what, kinds[kind], kinds[n->kind]);
}

/* ==== reading YAML ==== */

typedef struct {
	const char *file;
	guint column_offset; /* --set values: where VALUE starts in KEY=VALUE */
	guint end_column;    /* --set values: the column just after KEY=VALUE */
} Origin;

/*
 * A --set argument is one line: libyaml may place a problem at the end of
 * the input on a line of its own, which is the end of that line here.
 */
static void
mark_position(const Origin *o, yaml_mark_t mark, guint *line, guint *column)
{
	*line = (guint) mark.line + 1;
	*column = (guint) mark.column + 1 + (mark.line == 0 ? o->column_offset : 0);
	if (o->end_column != 0 && *line > 1) {
		*line = 1;
		*column = o->end_column;
	}
}

/*
 * Reader errors (bad UTF-8) come with a byte offset, not a mark: count the
 * lines and characters before it.
 */
static yaml_mark_t
reader_mark(const char *text, size_t offset)
{
	yaml_mark_t mark = {offset, 0, 0};

	for (size_t i = 0; i < offset && text[i] != '\0'; i++) {
		if (text[i] == '\n') {
			mark.line++;
			mark.column = 0;
		} else if (((guchar) text[i] & 0xc0) != 0x80) {
			mark.column++;
		}
	}
	return mark;
}

static gboolean
fail_parser(Loader *l, const yaml_parser_t *p, const Origin *o, const char *text)
{
	guint line, column;

	if (p->error == YAML_READER_ERROR)
		mark_position(o, reader_mark(text, p->problem_offset), &line, &column);
	else
		mark_position(o, p->problem_mark, &line, &column);
	if (p->error == YAML_MEMORY_ERROR)
		return fail_at(l, o->file, line, column, "out of memory reading YAML");
	if (p->context != NULL)
		return fail_at(l, o->file, line, column, "YAML syntax error: %s %s",
			       p->problem != NULL ? p->problem : "error", p->context);
	return fail_at(l, o->file, line, column, "YAML syntax error: %s",
		       p->problem != NULL ? p->problem : "error");
}

/*
 * The tree is built from libyaml's events as they come, not from its loaded
 * document, so that a limit stops the parse where it is crossed: libyaml's
 * scanner slows down with every level left open, and would take half a minute
 * to load a document of 100000 levels before a tree could be checked.
 */
typedef struct {
	Loader *l;
	const Origin *o;
	const char *text;         /* the input, for reader errors' positions */
	yaml_parser_t parser;
	GHashTable *anchors;      /* anchor name -> its Node, once complete */
	GPtrArray *open_anchors;  /* char*: the anchors of the nodes being read */
	guint copies;             /* nodes made by expanding aliases */
} Reader;

static gboolean
fail_event(Reader *r, yaml_mark_t mark, const char *format, ...) G_GNUC_PRINTF(3, 4);

static gboolean
fail_event(Reader *r, yaml_mark_t mark, const char *format, ...)
{
	g_autofree char *what = NULL;
	guint line, column;
	va_list args;

	va_start(args, format);
	what = g_strdup_vprintf(format, args);
	va_end(args);
	mark_position(r->o, mark, &line, &column);
	return fail_at(r->l, r->o->file, line, column, "%s", what);
}

static gboolean
next_event(Reader *r, yaml_event_t *e)
{
	if (yaml_parser_parse(&r->parser, e))
		return TRUE;
	return fail_parser(r->l, &r->parser, r->o, r->text);
}

static gboolean
check_depth(Reader *r, yaml_mark_t mark, guint depth)
{
	if (depth <= MAX_DEPTH)
		return TRUE;
	return fail_event(r, mark, "the document nests deeper than %d levels", MAX_DEPTH);
}

/*
 * An alias is a copy of its anchor's node, so that every node has one place in
 * the tree. Aliases of aliases can make a small file enormous ("billion
 * laughs"): the copies are counted, and limited. A file without aliases has no
 * limit but its size.
 */
static gboolean
copy_node(Reader *r, const Node *from, yaml_mark_t alias, guint depth, Node **out)
{
	if (!check_depth(r, alias, depth))
		return FALSE;
	if (++r->copies > MAX_ALIAS_COPIES)
		return fail_event(r, alias, "aliases expand the document by more than %d nodes",
				  MAX_ALIAS_COPIES);
	*out = node_new(r->l, from->kind, from->file, from->line, from->column);
	(*out)->text = g_strdup(from->text);
	for (guint i = 0; from->kind == NODE_SEQ && i < from->items->len; i++) {
		Node *item;

		if (!copy_node(r, from->items->pdata[i], alias, depth + 1, &item))
			return FALSE;
		g_ptr_array_add((*out)->items, item);
	}
	for (guint i = 0; from->kind == NODE_MAP && i < from->entries->len; i++) {
		const Entry *e = &g_array_index(from->entries, Entry, i);
		Entry copy = {e->key, NULL};

		if (!copy_node(r, e->value, alias, depth + 1, &copy.value))
			return FALSE;
		g_array_append_val((*out)->entries, copy);
	}
	return TRUE;
}

static gboolean
resolve_alias(Reader *r, const yaml_event_t *e, guint depth, Node **out)
{
	const char *anchor = (const char *) e->data.alias.anchor;
	const Node *target = g_hash_table_lookup(r->anchors, anchor);

	if (target != NULL)
		return copy_node(r, target, e->start_mark, depth, out);
	for (guint i = 0; i < r->open_anchors->len; i++) {
		if (strcmp(r->open_anchors->pdata[i], anchor) == 0)
			return fail_event(r, e->start_mark,
					  "alias *%s is inside the node it names (a recursive alias)",
					  anchor);
	}
	return fail_event(r, e->start_mark, "alias *%s names no anchor defined before it", anchor);
}

static gboolean read_node(Reader *r, const yaml_event_t *e, guint depth, Node **out);

/* Reads the node that starts with the next event into *@out. */
static gboolean
read_next_node(Reader *r, guint depth, Node **out)
{
	yaml_event_t e;
	gboolean ok;

	if (!next_event(r, &e))
		return FALSE;
	ok = read_node(r, &e, depth, out);
	yaml_event_delete(&e);
	return ok;
}

/* Sets *@end when the next event is @end_type (consumed), else reads a node. */
static gboolean
read_item(Reader *r, yaml_event_type_t end_type, guint depth, gboolean *end, Node **out)
{
	yaml_event_t e;
	gboolean ok = TRUE;

	if (!next_event(r, &e))
		return FALSE;
	*end = e.type == end_type;
	if (!*end)
		ok = read_node(r, &e, depth, out);
	yaml_event_delete(&e);
	return ok;
}

static gboolean
read_items(Reader *r, guint depth, Node *seq)
{
	for (;;) {
		gboolean end;
		Node *item;

		if (!read_item(r, YAML_SEQUENCE_END_EVENT, depth + 1, &end, &item))
			return FALSE;
		if (end)
			return TRUE;
		g_ptr_array_add(seq->items, item);
	}
}

static gboolean
read_pairs(Reader *r, guint depth, Node *map)
{
	for (;;) {
		gboolean end;
		Entry e, *first;

		if (!read_item(r, YAML_MAPPING_END_EVENT, depth + 1, &end, &e.key))
			return FALSE;
		if (end)
			return TRUE;
		if (e.key->kind != NODE_SCALAR)
			return fail(r->l, e.key, "a key must be a single word, not a %s",
				    e.key->kind == NODE_MAP ? "map" : "sequence");
		first = find_entry(map, e.key->text);
		if (first != NULL)
			return fail(r->l, e.key, "duplicate key \"%s\" (first at line %u)",
				    e.key->text, first->key->line);
		if (!read_next_node(r, depth + 1, &e.value))
			return FALSE;
		g_array_append_val(map->entries, e);
	}
}

/* A sequence or map: its anchor is open until its end, for resolve_alias(). */
static gboolean
read_collection(Reader *r, const yaml_char_t *anchor, guint depth, Node *n)
{
	gboolean ok;

	if (anchor != NULL)
		g_ptr_array_add(r->open_anchors, (char *) anchor);
	ok = n->kind == NODE_SEQ ? read_items(r, depth, n) : read_pairs(r, depth, n);
	if (anchor != NULL)
		g_ptr_array_remove_index(r->open_anchors, r->open_anchors->len - 1);
	return ok;
}

/* Reads the node that @e starts, with all its children's events. */
static gboolean
read_node(Reader *r, const yaml_event_t *e, guint depth, Node **out)
{
	const yaml_char_t *anchor = NULL;
	guint line, column;

	mark_position(r->o, e->start_mark, &line, &column);
	if (e->type != YAML_ALIAS_EVENT && !check_depth(r, e->start_mark, depth))
		return FALSE;
	switch (e->type) {
	case YAML_ALIAS_EVENT:
		return resolve_alias(r, e, depth, out);
	case YAML_SCALAR_EVENT:
		*out = node_new(r->l, NODE_SCALAR, r->o->file, line, column);
		(*out)->text = g_strndup((const char *) e->data.scalar.value,
					 e->data.scalar.length);
		anchor = e->data.scalar.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		*out = node_new(r->l, NODE_SEQ, r->o->file, line, column);
		anchor = e->data.sequence_start.anchor;
		if (!read_collection(r, anchor, depth, *out))
			return FALSE;
		break;
	case YAML_MAPPING_START_EVENT:
		*out = node_new(r->l, NODE_MAP, r->o->file, line, column);
		anchor = e->data.mapping_start.anchor;
		if (!read_collection(r, anchor, depth, *out))
			return FALSE;
		break;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		/* libyaml's grammar puts none of these where a node starts. */
		return fail_event(r, e->start_mark, "YAML syntax error: no node here");
	}
	if (anchor != NULL)
		g_hash_table_replace(r->anchors, g_strdup((const char *) anchor), *out);
	return TRUE;
}

/* Reads the next event for its type and position only. */
static gboolean
next_event_type(Reader *r, yaml_event_type_t *type, yaml_mark_t *mark)
{
	yaml_event_t e;

	if (!next_event(r, &e))
		return FALSE;
	*type = e.type;
	*mark = e.start_mark;
	yaml_event_delete(&e);
	return TRUE;
}

/*
 * Sets *out to the tree of the stream's one document, or to NULL if there is
 * none. libyaml's events are STREAM-START, then for each document
 * DOCUMENT-START, its node's and DOCUMENT-END, then STREAM-END. A scenario is
 * one YAML document: a second one is probably a mistake.
 */
static gboolean
read_stream(Reader *r, Node **out)
{
	yaml_event_type_t type;
	yaml_mark_t mark;

	*out = NULL;
	if (!next_event_type(r, &type, &mark) || !next_event_type(r, &type, &mark))
		return FALSE;
	if (type == YAML_STREAM_END_EVENT)
		return TRUE;
	if (!read_next_node(r, 0, out) || !next_event_type(r, &type, &mark) ||
	    !next_event_type(r, &type, &mark))
		return FALSE;
	if (type == YAML_STREAM_END_EVENT)
		return TRUE;
	/* A DOCUMENT-START: the position is its node's. */
	if (!next_event_type(r, &type, &mark))
		return FALSE;
	return fail_event(r, mark, "a second YAML document: a scenario is one document");
}

/* Sets *out to the tree of @text (@len bytes), or to NULL if it is empty. */
static gboolean
parse_text(Loader *l, const Origin *o, const char *text, size_t len, Node **out)
{
	Reader r = {.l = l, .o = o, .text = text};
	gboolean ok;

	r.anchors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	r.open_anchors = g_ptr_array_new();
	yaml_parser_initialize(&r.parser);
	yaml_parser_set_input_string(&r.parser, (const unsigned char *) text, len);
	ok = read_stream(&r, out);
	yaml_parser_delete(&r.parser);
	g_hash_table_unref(r.anchors);
	g_ptr_array_unref(r.open_anchors);
	return ok;
}

/* The tree of the file @path whose contents are @text (@len bytes). */
static gboolean
parse_file_text(Loader *l, const char *path, const char *text, size_t len, Node **out)
{
	Origin o = {file_name(l, path), 0, 0};
	gboolean ok = parse_text(l, &o, text, len, out);

	/* An empty file is an empty map: "missing gpusim" says more than "empty". */
	if (ok && *out == NULL)
		*out = node_new(l, NODE_MAP, o.file, 1, 1);
	return ok;
}

/* @from is the include item that names @path, NULL for the scenario itself. */
static gboolean
read_file(Loader *l, const char *path, const Node *from, Node **out)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	gsize len;

	*out = NULL;
	if (!gs_input_read(path, &text, &len, &error)) {
		if (from != NULL)
			return fail(l, from, "cannot include %s: %s", path, error->message);
		return fail_at(l, path, 1, 1, "cannot read: %s", error->message);
	}
	return parse_file_text(l, path, text, len, out);
}

static gboolean
parse_value(Loader *l, const char *file, const char *text, guint column_offset, Node **out)
{
	Origin o = {file, column_offset, column_offset + (guint) strlen(text) + 1};
	gboolean ok = parse_text(l, &o, text, strlen(text), out);

	if (ok && *out == NULL)
		*out = scalar_new(l, file, 1, column_offset + 1, "");
	return ok;
}

/* ==== merging: includes, variants, --set ==== */

/*
 * @over merged over @base: maps merge key by key, recursively; anything else
 * in @over replaces what @base has. The inputs are not modified.
 */
static Node *
merge(Loader *l, Node *base, Node *over)
{
	Node *m;

	if (base == NULL || base->kind != NODE_MAP || over->kind != NODE_MAP)
		return over;
	m = node_new(l, NODE_MAP, over->file, over->line, over->column);
	g_array_append_vals(m->entries, base->entries->data, base->entries->len);
	for (guint i = 0; i < over->entries->len; i++) {
		Entry *e = &g_array_index(over->entries, Entry, i);
		Entry *old = find_entry(m, e->key->text);

		if (old == NULL) {
			g_array_append_val(m->entries, *e);
		} else {
			old->value = merge(l, old->value, e->value);
			old->key = e->key;
		}
	}
	return m;
}

static Node *
without_key(Loader *l, const Node *map, const char *key)
{
	Node *m = node_new(l, NODE_MAP, map->file, map->line, map->column);

	for (guint i = 0; i < map->entries->len; i++) {
		Entry *e = &g_array_index(map->entries, Entry, i);

		if (strcmp(e->key->text, key) != 0)
			g_array_append_val(m->entries, *e);
	}
	return m;
}

/* Include paths are relative to the including file. */
static char *
include_path(const char *including, const char *name)
{
	g_autofree char *dir = NULL;

	if (g_path_is_absolute(name))
		return g_strdup(name);
	dir = g_path_get_dirname(including);
	if (strcmp(dir, ".") == 0)
		return g_strdup(name);
	return g_build_filename(dir, name, NULL);
}

static gboolean
check_cycle(Loader *l, const char *path, const Node *from)
{
	g_autofree char *canon = g_canonicalize_filename(path, NULL);

	for (guint i = 0; i < l->including->len; i++) {
		g_autofree char *other = g_canonicalize_filename(l->including->pdata[i], NULL);
		g_autoptr(GString) chain = NULL;

		if (strcmp(canon, other) != 0)
			continue;
		chain = g_string_new(NULL);
		for (guint j = i; j < l->including->len; j++)
			g_string_append_printf(chain, "%s includes ",
					       (char *) l->including->pdata[j]);
		g_string_append(chain, path);
		return fail(l, from, "include cycle: %s", chain->str);
	}
	return TRUE;
}

static gboolean load_tree(Loader *l, const char *path, const Node *from, Node **out);

static gboolean
load_include(Loader *l, const char *path, const Node *item, Node **base)
{
	g_autofree char *child = NULL;
	Node *sub;

	if (item->kind != NODE_SCALAR || is_null(item))
		return expect_kind(l, item, NODE_SCALAR, "each include") &&
		       fail(l, item, "include names a file, not an empty value");
	child = include_path(path, item->text);
	if (!load_tree(l, child, item, &sub))
		return FALSE;
	*base = merge(l, *base, sub);
	return TRUE;
}

/* The included files merged in order, then @root (without include:) over them. */
static gboolean
resolve_includes(Loader *l, const char *path, Node *root, Node **out)
{
	Node *inc = find_value(root, "include");
	Node *base = NULL;

	if (inc == NULL) {
		*out = root;
		return TRUE;
	}
	if (inc->kind == NODE_SEQ) {
		for (guint i = 0; i < inc->items->len; i++) {
			if (!load_include(l, path, inc->items->pdata[i], &base))
				return FALSE;
		}
	} else if (!is_null(inc) && !load_include(l, path, inc, &base)) {
		return FALSE;
	}
	*out = merge(l, base, without_key(l, root, "include"));
	return TRUE;
}

/* @root, the tree of the file @path, with the files it includes merged under it. */
static gboolean
resolve_root(Loader *l, const char *path, const Node *from, Node *root, Node **out)
{
	gboolean ok;

	if (root->kind != NODE_MAP)
		return expect_kind(l, root, NODE_MAP,
				   from != NULL ? "an included file" : "a scenario");
	g_ptr_array_add(l->including, g_strdup(path));
	ok = resolve_includes(l, path, root, out);
	g_ptr_array_remove_index(l->including, l->including->len - 1);
	return ok;
}

static gboolean
load_tree(Loader *l, const char *path, const Node *from, Node **out)
{
	Node *root = NULL;

	return check_cycle(l, path, from) && read_file(l, path, from, &root) &&
	       resolve_root(l, path, from, root, out);
}

/* Checks that variants: is a map of maps (or empty) and appends the names. */
static gboolean
collect_variants(Loader *l, const Node *v, GPtrArray *names)
{
	gboolean ok = TRUE;

	if (is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, "variants"))
		return FALSE;
	for (guint i = 0; i < v->entries->len; i++) {
		Entry *e = &g_array_index(v->entries, Entry, i);
		g_autofree char *what = g_strdup_printf("variant \"%s\"", e->key->text);
		gboolean good;

		if (e->key->text[0] == '\0')
			good = fail(l, e->key, "a variant needs a name");
		else
			good = is_null(e->value) || expect_kind(l, e->value, NODE_MAP, what);
		if (good)
			g_ptr_array_add(names, g_strdup(e->key->text));
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

static gboolean
fail_unknown_variant(Loader *l, const Node *at, const char *name, const Node *variants)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	if (variants == NULL || !collect_variants(l, variants, names))
		return fail(l, at, "unknown variant \"%s\": the scenario has no variants", name);
	if (names->len == 0)
		return fail(l, at, "unknown variant \"%s\": the scenario has no variants", name);
	g_ptr_array_add(names, NULL);
	list = join_names((const char *const *) names->pdata);
	hint = did_you_mean(name, (const char *const *) names->pdata);
	return fail(l, at, "unknown variant \"%s\"%s (the scenario has %s)", name, hint, list);
}

static gboolean
apply_variant(Loader *l, Node **root, const char *name)
{
	Entry *variants = find_entry(*root, "variants");
	Node *body = find_value(variants != NULL ? variants->value : NULL, name);
	static const char *const fixed[] = {"include", "variants"};

	if (body == NULL)
		return fail_unknown_variant(l, variants != NULL ? variants->key : *root, name,
					    variants != NULL ? variants->value : NULL);
	if (is_null(body))
		return TRUE;
	if (!expect_kind(l, body, NODE_MAP, "a variant"))
		return FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(fixed); i++) {
		Entry *e = find_entry(body, fixed[i]);

		if (e != NULL)
			return fail(l, e->key, "a variant cannot change %s", fixed[i]);
	}
	*root = merge(l, *root, body);
	return TRUE;
}

/*
 * Refuses a path that would have to go through a sequence or a value: such a
 * --set would silently replace it with a map.
 */
static gboolean
check_set_path(Loader *l, const char *file, Node *root, GPtrArray *keys, GArray *columns)
{
	Node *cur = root;

	for (guint i = 0; i + 1 < keys->len && cur != NULL; i++) {
		const char *key = keys->pdata[i];

		cur = find_value(cur, key);
		if (cur != NULL && cur->kind != NODE_MAP && !is_null(cur))
			return fail_at(l, file, 1, g_array_index(columns, guint, i),
				       "cannot set a key inside \"%s\": it is %s, not a map", key,
				       cur->kind == NODE_SEQ ? "a sequence" : "a single value");
	}
	return TRUE;
}

static gboolean
split_set_key(Loader *l, const char *file, const char *arg, gsize len, GPtrArray *keys,
	      GArray *columns)
{
	gsize start = 0;

	for (gsize i = 0; i <= len; i++) {
		guint column = (guint) start + 1;

		if (i < len && arg[i] != '.')
			continue;
		if (i == start)
			return fail_at(l, file, 1, column, "empty key in the --set path \"%.*s\"",
				       (int) len, arg);
		g_ptr_array_add(keys, g_strndup(arg + start, i - start));
		g_array_append_val(columns, column);
		start = i + 1;
	}
	return TRUE;
}

/* KEY=VALUE: VALUE (as YAML) at the dotted path KEY, merged over the tree. */
static gboolean
apply_set(Loader *l, Node **root, const char *arg)
{
	g_autofree char *pseudo = g_strdup_printf("--set %s", arg);
	const char *file = file_name(l, pseudo);
	const char *eq = strchr(arg, '=');
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) columns = g_array_new(FALSE, FALSE, sizeof(guint));
	Node *over;

	if (eq == NULL)
		return fail_at(l, file, 1, (guint) strlen(arg) + 1,
			       "expected KEY=VALUE, as in memory.gpu.capacity=8GiB");
	if (!split_set_key(l, file, arg, (gsize) (eq - arg), keys, columns) ||
	    !check_set_path(l, file, *root, keys, columns) ||
	    !parse_value(l, file, eq + 1, (guint) (eq - arg) + 1, &over))
		return FALSE;
	for (guint i = keys->len; i-- > 0;) {
		guint column = g_array_index(columns, guint, i);
		Node *map = node_new(l, NODE_MAP, file, 1, column);
		Entry e = {scalar_new(l, file, 1, column, keys->pdata[i]), over};

		g_array_append_val(map->entries, e);
		over = map;
	}
	*root = merge(l, *root, over);
	return TRUE;
}

/* ==== quantities (SPEC §3.1) ==== */

typedef struct {
	const char *name;
	guint64 factor;
} Unit;

#define KIB G_GUINT64_CONSTANT(1024)

static const Unit size_units[] = {
	{"B", 1},
	{"KiB", KIB},
	{"MiB", KIB * KIB},
	{"GiB", KIB * KIB * KIB},
	{"TiB", KIB * KIB * KIB * KIB},
	{"KB", 1000},
	{"MB", 1000000},
	{"GB", G_GUINT64_CONSTANT(1000000000)},
	{"TB", G_GUINT64_CONSTANT(1000000000000)},
	{NULL, 0},
};

static const Unit duration_units[] = {
	{"ns", 1},
	{"us", 1000},
	{"ms", 1000000},
	{"s", G_GUINT64_CONSTANT(1000000000)},
	{NULL, 0},
};

static const Unit bandwidth_units[] = {
	{"B/s", 1},
	{"KiB/s", KIB},
	{"MiB/s", KIB * KIB},
	{"GiB/s", KIB * KIB * KIB},
	{"TiB/s", KIB * KIB * KIB * KIB},
	{"KB/s", 1000},
	{"MB/s", 1000000},
	{"GB/s", G_GUINT64_CONSTANT(1000000000)},
	{"TB/s", G_GUINT64_CONSTANT(1000000000000)},
	{NULL, 0},
};

typedef struct {
	const char *what;    /* "size" */
	const Unit *units;
	gboolean bare;       /* a number without a unit counts base units */
	const char *base;    /* "bytes" */
	const char *unit_list;
	gint64 max;          /* the largest value accepted; its text in max_text */
	const char *max_text;
} Quantity;

static const Quantity size_quantity = {
	"size", size_units, TRUE, "bytes", "B, KiB, MiB, GiB, TiB, KB, MB, GB or TB",
	GS_MAX_BYTES, "1024 TiB",
};
static const Quantity duration_quantity = {
	"duration", duration_units, FALSE, "nanoseconds", "ns, us, ms or s",
	G_MAXINT64, NULL,
};
static const Quantity bandwidth_quantity = {
	"bandwidth", bandwidth_units, FALSE, "bytes per second",
	"B/s, KiB/s, MiB/s, GiB/s, TiB/s, KB/s, MB/s, GB/s or TB/s", G_MAXINT64, NULL,
};

typedef enum { NUM_OK, NUM_NONE, NUM_TOO_LARGE, NUM_NOT_WHOLE } NumResult;

/*
 * Reads digits[.digits] exactly, as mantissa / 10^decimals, so that 1.5GiB
 * is exact where a double could round.
 */
static NumResult
parse_decimal(const char **text, guint64 *mantissa, guint *decimals)
{
	const char *s = *text;
	guint64 m = 0;
	guint digits = 0, dec = 0;
	gboolean dot = FALSE, overflow = FALSE;

	for (;; s++) {
		if (g_ascii_isdigit(*s)) {
			if (m > (G_MAXUINT64 - 9) / 10)
				overflow = TRUE;
			else
				m = m * 10 + (guint64) (*s - '0');
			digits++;
			dec += dot;
		} else if (*s == '.' && !dot) {
			dot = TRUE;
		} else {
			break;
		}
	}
	*text = s;
	if (digits == 0)
		return NUM_NONE;
	if (overflow)
		return NUM_TOO_LARGE;
	while (dec > 0 && m % 10 == 0) {
		m /= 10;
		dec--;
	}
	*mantissa = m;
	*decimals = dec;
	return NUM_OK;
}

static guint64
gcd(guint64 a, guint64 b)
{
	while (b != 0) {
		guint64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* mantissa / 10^decimals * factor, which must be a whole number <= G_MAXINT64. */
static NumResult
scale(guint64 mantissa, guint decimals, guint64 factor, gint64 *out)
{
	guint64 p10 = 1, g;

	if (decimals > 19)
		return NUM_NOT_WHOLE;
	for (guint i = 0; i < decimals; i++)
		p10 *= 10;
	g = gcd(factor, p10);
	factor /= g;
	p10 /= g;
	if (mantissa % p10 != 0)
		return NUM_NOT_WHOLE;
	mantissa /= p10;
	if (factor != 0 && mantissa > (guint64) G_MAXINT64 / factor)
		return NUM_TOO_LARGE;
	*out = (gint64) (mantissa * factor);
	return NUM_OK;
}

static const Unit *
find_unit(const Unit *units, const char *name)
{
	for (const Unit *u = units; u->name != NULL; u++) {
		if (strcmp(u->name, name) == 0)
			return u;
	}
	return NULL;
}

/* @text (at @n, for the position) as a quantity in base units. */
static gboolean
parse_quantity(Loader *l, const Node *n, const char *text, const Quantity *q, gint64 *out)
{
	const char *p = text;
	guint64 mantissa = 0;
	guint decimals = 0;
	const Unit *unit;
	NumResult r;

	if (*p == '-')
		return fail(l, n, "negative %s \"%s\"", q->what, text);
	r = parse_decimal(&p, &mantissa, &decimals);
	if (r == NUM_NONE)
		return fail(l, n, "bad %s \"%s\": expected a number with a unit (%s)", q->what,
			    text, q->unit_list);
	while (*p == ' ')
		p++;
	if (*p == '\0' && !q->bare && !(r == NUM_OK && mantissa == 0))
		return fail(l, n, "%s \"%s\" needs a unit (%s)", q->what, text, q->unit_list);
	unit = *p == '\0' ? &q->units[0] : find_unit(q->units, p);
	if (unit == NULL)
		return fail(l, n, "unknown unit \"%s\" in %s \"%s\" (expected %s)", p, q->what,
			    text, q->unit_list);
	if (r == NUM_OK)
		r = scale(mantissa, decimals, unit->factor, out);
	if (r == NUM_NOT_WHOLE)
		return fail(l, n, "%s \"%s\" is not a whole number of %s", q->what, text, q->base);
	if (r == NUM_TOO_LARGE)
		return fail(l, n, "%s \"%s\" is too large", q->what, text);
	if (*out > q->max)
		return fail(l, n, "%s \"%s\" is too large (at most %s)", q->what, text,
			    q->max_text);
	return TRUE;
}

gboolean
gs_loader_quantity(const char *text, gint64 *value, GsQuantity *kind)
{
	/* By GsQuantity. */
	static const Quantity *const quantities[] = {&size_quantity, &duration_quantity,
						     &bandwidth_quantity};
	const char *p = text;
	guint64 mantissa = 0;
	guint decimals = 0;

	g_return_val_if_fail(text != NULL && value != NULL, FALSE);
	if (parse_decimal(&p, &mantissa, &decimals) != NUM_OK)
		return FALSE;
	while (*p == ' ')
		p++;
	for (guint i = 0; *p != '\0' && i < G_N_ELEMENTS(quantities); i++) {
		const Unit *unit = find_unit(quantities[i]->units, p);

		if (unit == NULL)
			continue;
		if (kind != NULL)
			*kind = (GsQuantity) i;
		return scale(mantissa, decimals, unit->factor, value) == NUM_OK &&
		       *value <= quantities[i]->max;
	}
	return FALSE;
}

static gboolean
scalar_quantity(Loader *l, const Node *n, const char *what, const Quantity *q, gint64 *out)
{
	return expect_kind(l, n, NODE_SCALAR, what) && parse_quantity(l, n, n->text, q, out);
}

/* A plain decimal number: no hex, no inf or nan, nothing after it. */
static gboolean
parse_number(const char *text, double *out)
{
	char *end;

	if (!g_ascii_isdigit(text[0]) && !(text[0] == '-' && g_ascii_isdigit(text[1])) &&
	    text[0] != '.')
		return FALSE;
	*out = g_ascii_strtod(text, &end);
	return *end == '\0' && isfinite(*out);
}

/* ==== tables of keys ==== */

typedef enum {
	F_SIZE,     /* gint64 bytes */
	F_DURATION, /* GsTime */
	F_BANDWIDTH,/* double, bytes per second */
	F_FRACTION, /* double in [0, 1] */
	F_NUMBER,   /* double >= min */
	F_COUNT,    /* guint >= min */
	F_INT,      /* int >= min */
	F_SEED,     /* guint64 */
	F_BOOL,     /* gboolean */
	F_ENUM,     /* int: the index of the word in names */
	F_STRING,   /* char*, replaced; min 1: not empty */
	F_MAP,      /* a nested table, same base */
	F_CUSTOM,   /* custom() converts it */
	F_OTHER,    /* known key, read by the caller */
} FieldKind;

/* What an expectation compares (expect.totals, expect.tasks.ID). */
typedef enum {
	VK_COUNT,    /* a whole number */
	VK_NS,       /* nanoseconds: a whole number or a duration */
	VK_DURATION, /* a duration */
	VK_SIZE,     /* a size */
	VK_OUTCOME,  /* a word of outcome_names, == or != only */
} ValueKind;

typedef struct {
	const char *key;
	ValueKind kind;
} ExpectKey;

typedef struct Field Field;

/*
 * A row of a table of keys. items, values and each describe what the reader
 * of an F_CUSTOM or F_OTHER row reads, and names the words of an F_OTHER
 * row, for the list of every key (gs_loader_format_keys()): nothing reads a
 * scenario by them.
 */
struct Field {
	const char *key;
	FieldKind kind;
	size_t offset;             /* into the base the table is read into */
	gint64 min;
	guint64 max;               /* F_COUNT: 0 is the type's limit */
	gboolean required;
	const char *const *names;  /* F_ENUM: NULL-terminated, index = value */
	const Field *sub;          /* F_MAP, and F_CUSTOM reading a map by it: NULL-key-terminated */
	gboolean (*custom)(Loader *l, const Node *v, const char *path, gpointer base);
	const Field *items;        /* a sequence of maps, each read by this table */
	const ExpectKey *values;   /* a map of expected values, read by this table */
	const char *each;          /* a map of the scenario's names (its placeholder, "TASK"),
				      each value read by sub or values */
	gboolean settable;         /* F_CUSTOM: --set gives its value whole (a list) */
};

#define FIELD(k, kind_, type, member, ...) \
	{.key = (k), .kind = (kind_), .offset = offsetof(type, member), __VA_ARGS__}
#define SUBMAP(k, table, ...) {.key = (k), .kind = F_MAP, .sub = (table), __VA_ARGS__}
#define CUSTOM(k, fn, ...) {.key = (k), .kind = F_CUSTOM, .custom = (fn), __VA_ARGS__}
#define OTHER(k, ...) {.key = (k), .kind = F_OTHER, __VA_ARGS__}

/* Enum fields are written as int: make sure the enums are int-sized. */
G_STATIC_ASSERT(sizeof(GsOomPolicy) == sizeof(int));
G_STATIC_ASSERT(sizeof(GsTier) == sizeof(int));
G_STATIC_ASSERT(sizeof(GsKindFilter) == sizeof(int));
G_STATIC_ASSERT(sizeof(GsGenerateModel) == sizeof(int));
G_STATIC_ASSERT(sizeof(GsTemplateArithmetic) == sizeof(int));

static gboolean read_fields(Loader *l, const Node *map, const char *where, const Field *fields,
			    gpointer base);

static char *
field_path(const char *where, const char *key)
{
	return where[0] != '\0' ? g_strdup_printf("%s.%s", where, key) : g_strdup(key);
}

static gboolean
fail_unknown_key(Loader *l, const Node *key, const char *where, const char *const *known)
{
	g_autofree char *list = join_names(known);
	g_autofree char *hint = did_you_mean(key->text, known);

	if (where[0] == '\0')
		return fail(l, key, "unknown key \"%s\"%s (expected %s)", key->text, hint, list);
	return fail(l, key, "unknown key \"%s\" in %s%s (expected %s)", key->text, where, hint,
		    list);
}

static const Field *
find_field(const Field *fields, const char *key)
{
	for (const Field *f = fields; f->key != NULL; f++) {
		if (strcmp(f->key, key) == 0)
			return f;
	}
	return NULL;
}

static gboolean
check_keys(Loader *l, const Node *map, const char *where, const Field *fields)
{
	gboolean ok = TRUE;

	for (guint i = 0; i < map->entries->len; i++) {
		Entry *e = &g_array_index(map->entries, Entry, i);
		g_autoptr(GPtrArray) known = NULL;

		if (find_field(fields, e->key->text) != NULL)
			continue;
		known = g_ptr_array_new();
		for (const Field *f = fields; f->key != NULL; f++)
			g_ptr_array_add(known, (gpointer) f->key);
		g_ptr_array_add(known, NULL);
		if (!go_on(l, &ok, fail_unknown_key(l, e->key, where,
						    (const char *const *) known->pdata)))
			return FALSE;
	}
	return ok;
}

static gboolean
convert_count(Loader *l, const Field *f, const Node *v, const char *path, guint64 max,
	      guint64 *out)
{
	if (!expect_kind(l, v, NODE_SCALAR, path))
		return FALSE;
	if (g_ascii_string_to_unsigned(v->text, 10, (guint64) f->min, max, out, NULL))
		return TRUE;
	if (f->max != 0)
		return fail(l, v,
			    "%s must be a whole number from %" G_GINT64_FORMAT " to %" G_GUINT64_FORMAT
			    ", not \"%s\"", path, f->min, f->max, v->text);
	return fail(l, v, "%s must be a whole number >= %" G_GINT64_FORMAT ", not \"%s\"", path,
		    f->min, v->text);
}

static gboolean
convert_double(Loader *l, const Field *f, const Node *v, const char *path, double *out)
{
	double x;

	if (!expect_kind(l, v, NODE_SCALAR, path))
		return FALSE;
	if (f->kind == F_FRACTION) {
		if (!parse_number(v->text, &x) || x < 0 || x > 1)
			return fail(l, v, "%s must be a fraction in [0, 1], not %s", path, v->text);
	} else if (!parse_number(v->text, &x) || x < (double) f->min) {
		return fail(l, v, "%s must be a number >= %" G_GINT64_FORMAT ", not \"%s\"", path,
			    f->min, v->text);
	}
	*out = x;
	return TRUE;
}

static gboolean
convert_enum(Loader *l, const Field *f, const Node *v, const char *path, int *out)
{
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	if (!expect_kind(l, v, NODE_SCALAR, path))
		return FALSE;
	for (int i = 0; f->names[i] != NULL; i++) {
		if (strcmp(f->names[i], v->text) == 0) {
			*out = i;
			return TRUE;
		}
	}
	list = join_names(f->names);
	hint = did_you_mean(v->text, f->names);
	return fail(l, v, "%s must be %s, not \"%s\"%s", path, list, v->text, hint);
}

static gboolean
convert_bool(Loader *l, const Node *v, const char *path, gboolean *out)
{
	if (!expect_kind(l, v, NODE_SCALAR, path))
		return FALSE;
	if (strcmp(v->text, "true") != 0 && strcmp(v->text, "false") != 0)
		return fail(l, v, "%s must be true or false, not \"%s\"", path, v->text);
	*out = strcmp(v->text, "true") == 0;
	return TRUE;
}

static gboolean
convert_string(Loader *l, const Field *f, const Node *v, const char *path, char **out)
{
	if (!expect_kind(l, v, NODE_SCALAR, path))
		return FALSE;
	if (f->min > 0 && is_null(v))
		return fail(l, v, "%s must not be empty", path);
	g_free(*out);
	*out = g_strdup(v->text);
	return TRUE;
}

static gboolean
convert_quantity(Loader *l, const Field *f, const Node *v, const char *path, gint64 *out)
{
	const Quantity *q = f->kind == F_SIZE ? &size_quantity : &duration_quantity;

	if (!scalar_quantity(l, v, path, q, out))
		return FALSE;
	if (*out < f->min)
		return fail(l, v, "%s must be at least %" G_GINT64_FORMAT " %s, not \"%s\"", path,
			    f->min, q->base, v->text);
	return TRUE;
}

/*
 * Where @f's value goes in @base. Only rows that write a member ask: a table
 * of F_OTHER and F_CUSTOM rows may be read with a NULL base, and an offset
 * from NULL is undefined even when nothing is written there.
 */
static gpointer
member(gpointer base, const Field *f)
{
	g_assert(base != NULL);
	return (char *) base + f->offset;
}

static gboolean
convert_field(Loader *l, const Field *f, const Node *v, const char *path, gpointer base)
{
	guint64 n = 0;
	gint64 q = 0;

	switch (f->kind) {
	case F_SIZE:
	case F_DURATION:
		return convert_quantity(l, f, v, path, member(base, f));
	case F_BANDWIDTH:
		if (!scalar_quantity(l, v, path, &bandwidth_quantity, &q))
			return FALSE;
		*(double *) member(base, f) = (double) q;
		return TRUE;
	case F_FRACTION:
	case F_NUMBER:
		return convert_double(l, f, v, path, member(base, f));
	case F_COUNT:
		if (!convert_count(l, f, v, path, f->max != 0 ? f->max : G_MAXUINT, &n))
			return FALSE;
		*(guint *) member(base, f) = (guint) n;
		return TRUE;
	case F_INT:
		if (!convert_count(l, f, v, path, G_MAXINT, &n))
			return FALSE;
		*(int *) member(base, f) = (int) n;
		return TRUE;
	case F_SEED:
		return convert_count(l, f, v, path, G_MAXUINT64, member(base, f));
	case F_BOOL:
		return convert_bool(l, v, path, member(base, f));
	case F_ENUM:
		return convert_enum(l, f, v, path, member(base, f));
	case F_STRING:
		return convert_string(l, f, v, path, member(base, f));
	case F_MAP:
		return read_fields(l, v, path, f->sub, base);
	case F_CUSTOM:
		return f->custom(l, v, path, base);
	case F_OTHER:
		break;
	}
	return TRUE;
}

static gboolean
fail_missing(Loader *l, const Node *map, const char *where, const char *key)
{
	if (where[0] == '\0')
		return fail(l, map, "missing required key \"%s\"", key);
	return fail(l, map, "missing required key \"%s\" in %s", key, where);
}

/*
 * Reads @map into @base by the table: unknown keys first (in file order),
 * then each present key in table order; a null value is an empty map. A
 * missing key is not reported beside an unknown one, which is likely it
 * misspelt.
 */
static gboolean
read_fields(Loader *l, const Node *map, const char *where, const Field *fields, gpointer base)
{
	gboolean ok = TRUE, known_keys;

	if (!is_null(map) && !expect_kind(l, map, NODE_MAP, where[0] ? where : "a scenario"))
		return FALSE;
	known_keys = map->kind != NODE_MAP || check_keys(l, map, where, fields);
	if (!go_on(l, &ok, known_keys))
		return FALSE;
	for (const Field *f = fields; f->key != NULL; f++) {
		Node *v = find_value(map, f->key);
		g_autofree char *path = NULL;

		if (v == NULL) {
			if (f->required && !go_on(l, &ok, !known_keys ||
							      fail_missing(l, map, where, f->key)))
				return FALSE;
			continue;
		}
		path = field_path(where, f->key);
		if (!go_on(l, &ok, convert_field(l, f, v, path, base)))
			return FALSE;
	}
	return ok;
}

/* ==== memory, links, executor, policy, generate (SPEC §3.3, §3.4, §3.7) ==== */

static const char *const allocator_names[] = {"exact", "pool", NULL};
static const char *const priority_names[] = {"fifo", "task_id", NULL};
static const char *const split_victim_names[] = {"highest", "lowest", NULL};
static const char *const victim_names[] = {"lru", "largest", "smallest_fit", "priority", NULL};
static const char *const host_full_names[] = {"disk", "fail", NULL};
static const char *const over_names[] = {"ignore", "fail", "increase", NULL};
static const char *const attribution_names[] = {"origin", "stream", NULL};
static const char *const blocking_names[] = {"channel", "whole", NULL};
static const char *const admission_names[] = {"none", "fair_share", NULL};
static const char *const on_oom_names[] = {"fail", "continue", NULL};
static const char *const alloc_kind_names[] = {"gpu", "host", NULL};
static const char *const kind_filter_names[] = {"any", "host", "gpu", NULL};
static const char *const tier_names[] = {"gpu", "host", "disk", NULL};
static const char *const strategy_names[] = {"any_in_tier", "specific", "any_in_tiers",
					     "downgrade", NULL};
static const char *const mode_names[] = {"block", "or_null", "upto", NULL};
static const char *const split_names[] = {"halves", "none", "target", "target_cpu", NULL};
static const char *const memory_mode_names[] = {"on_heap", "off_heap", NULL};
static const char *const share_names[] = {"fair", "none", NULL};
static const char *const outcome_names[] = {"completed", "failed", "deadlock", "timeout", NULL};

static const Field gpu_fields[] = {
	FIELD("capacity", F_SIZE, GsWorkload, gpu.capacity, .required = TRUE),
	FIELD("devices", F_COUNT, GsWorkload, gpu.devices, .min = 1, .max = MAX_DEVICES),
	FIELD("alignment", F_SIZE, GsWorkload, gpu.alignment, .min = 1),
	FIELD("streams", F_COUNT, GsWorkload, gpu.streams, .min = 1),
	FIELD("allocator", F_ENUM, GsWorkload, gpu.allocator, .names = allocator_names),
	FIELD("reservation_limit", F_FRACTION, GsWorkload, gpu.reservation_limit),
	FIELD("downgrade_trigger", F_FRACTION, GsWorkload, gpu.downgrade_trigger),
	FIELD("downgrade_stop", F_FRACTION, GsWorkload, gpu.downgrade_stop),
	{.key = NULL},
};

static const Field host_fields[] = {
	FIELD("capacity", F_SIZE, GsWorkload, host.capacity),
	FIELD("block_size", F_SIZE, GsWorkload, host.block_size, .min = 1),
	FIELD("pool_blocks", F_COUNT, GsWorkload, host.pool_blocks, .min = 1),
	FIELD("initial_pools", F_COUNT, GsWorkload, host.initial_pools),
	FIELD("reservation_limit", F_FRACTION, GsWorkload, host.reservation_limit),
	FIELD("pinned", F_SIZE, GsWorkload, host.pinned),
	{.key = NULL},
};

static const Field disk_fields[] = {
	FIELD("capacity", F_SIZE, GsWorkload, disk.capacity),
	FIELD("path", F_STRING, GsWorkload, disk.path, .min = 1),
	{.key = NULL},
};

/* The hysteresis only works with stop below trigger (cuCascade). */
static gboolean
read_gpu(Loader *l, const Node *v, const char *path, gpointer base)
{
	GsWorkload *w = base;
	Node *at;

	if (!read_fields(l, v, path, gpu_fields, base))
		return FALSE;
	if (w->gpu.downgrade_stop <= w->gpu.downgrade_trigger)
		return TRUE;
	at = find_value(v, "downgrade_stop");
	if (at == NULL)
		at = find_value(v, "downgrade_trigger");
	return fail(l, at,
		    "memory.gpu.downgrade_stop (%g) must not be above downgrade_trigger (%g)",
		    w->gpu.downgrade_stop, w->gpu.downgrade_trigger);
}

static const char *const evict_names[] = {"blocks", "bytes", NULL};

static const Field execution_memory_fields[] = {
	FIELD("on_heap", F_SIZE, GsWorkload, execution.pool[GS_MODE_ON_HEAP]),
	FIELD("off_heap", F_SIZE, GsWorkload, execution.pool[GS_MODE_OFF_HEAP]),
	FIELD("share", F_ENUM, GsWorkload, execution.share, .names = share_names),
	FIELD("page_size", F_SIZE, GsWorkload, execution.page_size, .min = 1),
	FIELD("storage_fraction", F_FRACTION, GsWorkload, execution.storage_fraction),
	FIELD("evict", F_ENUM, GsWorkload, execution.evict, .names = evict_names),
	{.key = NULL},
};

/* Storage lives beside ExecutionMemoryPool in the unified manager: share fair only. */
static gboolean
read_execution_memory(Loader *l, const Node *v, const char *path, gpointer base)
{
	GsWorkload *w = base;
	const Node *storage_key = find_value(v, "storage_fraction");

	if (!read_fields(l, v, path, execution_memory_fields, base))
		return FALSE;
	if (storage_key == NULL)
		storage_key = find_value(v, "evict");
	if (w->execution.share != GS_SHARE_FAIR && storage_key != NULL)
		return fail(l, storage_key,
			    "memory.execution with share none has no storage memory: storage_fraction "
			    "and evict need share fair (the unified memory manager)");
	return TRUE;
}

static const Field memory_fields[] = {
	CUSTOM("gpu", read_gpu, .required = TRUE, .sub = gpu_fields),
	SUBMAP("host", host_fields),
	SUBMAP("disk", disk_fields),
	CUSTOM("execution", read_execution_memory, .sub = execution_memory_fields),
	{.key = NULL},
};

static const Field gpu_host_fields[] = {
	FIELD("bandwidth", F_BANDWIDTH, GsWorkload, links.gpu_host.bandwidth),
	FIELD("latency", F_DURATION, GsWorkload, links.gpu_host.latency),
	{.key = NULL},
};

static const Field host_disk_fields[] = {
	FIELD("bandwidth", F_BANDWIDTH, GsWorkload, links.host_disk.bandwidth),
	FIELD("latency", F_DURATION, GsWorkload, links.host_disk.latency),
	{.key = NULL},
};

static const Field fresh_memory_fields[] = {
	FIELD("bandwidth", F_BANDWIDTH, GsWorkload, links.fresh.bandwidth),
	FIELD("from", F_SIZE, GsWorkload, links.fresh.from),
	{.key = NULL},
};

static const Field host_pools_fields[] = {
	FIELD("bandwidth", F_BANDWIDTH, GsWorkload, links.host_pools.bandwidth),
	{.key = NULL},
};

static const Field links_fields[] = {
	SUBMAP("gpu_host", gpu_host_fields),
	SUBMAP("host_disk", host_disk_fields),
	FIELD("alloc_latency", F_DURATION, GsWorkload, links.alloc_latency),
	SUBMAP("fresh_memory", fresh_memory_fields),
	SUBMAP("host_pools", host_pools_fields),
	FIELD("lanes", F_NUMBER, GsWorkload, links.lanes),
	{.key = NULL},
};

static const Field executor_fields[] = {
	FIELD("slots", F_COUNT, GsWorkload, executor_slots),
	{.key = NULL},
};

static const Field failure_callback_fields[] = {
	FIELD("enabled", F_BOOL, GsWorkload, policy.failure_callback.enabled),
	FIELD("allocate", F_SIZE, GsWorkload, policy.failure_callback.allocate),
	FIELD("retries", F_COUNT, GsWorkload, policy.failure_callback.retries),
	{.key = NULL},
};

static const Field spill_fields[] = {
	FIELD("enabled", F_BOOL, GsWorkload, policy.spill.enabled),
	FIELD("victim", F_ENUM, GsWorkload, policy.spill.victim, .names = victim_names),
	FIELD("on_demand", F_BOOL, GsWorkload, policy.spill.on_demand),
	FIELD("proactive", F_BOOL, GsWorkload, policy.spill.proactive),
	FIELD("host_full", F_ENUM, GsWorkload, policy.spill.host_full, .names = host_full_names),
	{.key = NULL},
};

static const Field reservations_fields[] = {
	FIELD("over", F_ENUM, GsWorkload, policy.reservations.over, .names = over_names),
	FIELD("increase_factor", F_NUMBER, GsWorkload, policy.reservations.increase_factor,
	      .min = 1),
	FIELD("attribution", F_ENUM, GsWorkload, policy.reservations.attribution,
	      .names = attribution_names),
	FIELD("blocking", F_ENUM, GsWorkload, policy.reservations.blocking,
	      .names = blocking_names),
	{.key = NULL},
};

static const Field policy_fields[] = {
	FIELD("oom", F_ENUM, GsWorkload, policy.oom, .names = gs_oom_policy_names),
	FIELD("priority", F_ENUM, GsWorkload, policy.priority, .names = priority_names),
	FIELD("split_victim", F_ENUM, GsWorkload, policy.split_victim,
	      .names = split_victim_names),
	FIELD("retry_before_bufn", F_BOOL, GsWorkload, policy.retry_before_bufn),
	FIELD("retry_cap", F_COUNT, GsWorkload, policy.retry_cap),
	FIELD("watchdog", F_DURATION, GsWorkload, policy.watchdog),
	FIELD("sleep_is_blocked", F_BOOL, GsWorkload, policy.sleep_is_blocked),
	FIELD("concurrent_gpu_tasks", F_COUNT, GsWorkload, policy.concurrent_gpu_tasks),
	FIELD("task_attempts", F_COUNT, GsWorkload, policy.task_attempts, .min = 1),
	SUBMAP("spill", spill_fields),
	SUBMAP("reservations", reservations_fields),
	FIELD("admission", F_ENUM, GsWorkload, policy.admission, .names = admission_names),
	FIELD("evac_gate", F_BOOL, GsWorkload, policy.evac_gate),
	SUBMAP("failure_callback", failure_callback_fields),
	{.key = NULL},
};

static const Field skew_fields[] = {
	FIELD("tasks", F_COUNT, GsWorkload, generate.skew_tasks, .max = GS_MAX_THREADS),
	FIELD("factor", F_NUMBER, GsWorkload, generate.skew_factor),
	{.key = NULL},
};

static const char *const generate_model_names[] = {"gpusim", "montecarlo", NULL};
static const char *const template_arithmetic_names[] = {"intended", "code", NULL};

static const Field generate_fields[] = {
	FIELD("tasks", F_COUNT, GsWorkload, generate.tasks, .max = GS_MAX_THREADS),
	FIELD("threads_per_task", F_COUNT, GsWorkload, generate.threads_per_task, .min = 1,
	      .max = GS_MAX_THREADS),
	FIELD("task_max", F_SIZE, GsWorkload, generate.task_max),
	FIELD("max_allocs", F_COUNT, GsWorkload, generate.max_allocs),
	FIELD("max_compute", F_DURATION, GsWorkload, generate.max_compute),
	FIELD("retry_blocks", F_BOOL, GsWorkload, generate.retry_blocks),
	SUBMAP("skew", skew_fields),
	FIELD("jitter", F_FRACTION, GsWorkload, generate.jitter),
	FIELD("shuffle_threads", F_COUNT, GsWorkload, generate.shuffle_threads,
	      .max = GS_MAX_THREADS),
	FIELD("model", F_ENUM, GsWorkload, generate.model, .names = generate_model_names),
	FIELD("template", F_BOOL, GsWorkload, generate.use_template),
	FIELD("template_change", F_NUMBER, GsWorkload, generate.template_change),
	FIELD("template_arithmetic", F_ENUM, GsWorkload, generate.template_arithmetic,
	      .names = template_arithmetic_names),
	{.key = NULL},
};

/* Keys one model reads and the other does not: naming one under the other is an error. */
static const char *const montecarlo_keys[] = {"template", "template_change",
					      "template_arithmetic", NULL};
static const char *const gpusim_keys[] = {"jitter", NULL};

/*
 * Model montecarlo makes every task at once (montecarlo.h): at most this
 * many allocations planned (tasks x max_allocs), some 3 ops each.
 */
#define MONTECARLO_MAX_ALLOCS ((guint64) GS_MAX_THREADS)

/* RmmSparkMonteCarlo's defaults, for the keys a montecarlo section leaves out. */
static void
montecarlo_defaults(GsGenerate *g)
{
	g->tasks = 12;
	g->task_max = 300 * (G_GINT64_CONSTANT(1) << 20);
	g->max_allocs = 50;
	g->max_compute = 100 * G_GINT64_CONSTANT(1000000);
	g->retry_blocks = TRUE;
	g->skew_factor = 2.0;
	g->template_change = 0.05;
}

static gboolean
fail_other_model(Loader *l, const Node *v, const char *const *keys, const char *model,
		 const char *other)
{
	for (guint i = 0; keys[i] != NULL; i++) {
		const Entry *e = find_entry(v, keys[i]);

		if (e != NULL)
			return fail(l, e->key,
				    "generate.%s is a key of model %s, and generate.model is %s",
				    keys[i], other, model);
	}
	return TRUE;
}

/* What the model asks of the keys read. */
static gboolean
check_generate_model(Loader *l, const Node *v)
{
	const GsGenerate *g = &l->w->generate;
	const Node *n;

	if (g->model == GS_GENERATE_GPUSIM)
		return fail_other_model(l, v, montecarlo_keys, "gpusim", "montecarlo");
	if (!fail_other_model(l, v, gpusim_keys, "montecarlo", "gpusim"))
		return FALSE;
	if ((n = find_value(v, "threads_per_task")) != NULL && g->threads_per_task != 1)
		return fail(l, n, "generate.threads_per_task must be 1 with model montecarlo, "
			    "whose tasks have one thread each, not %s", n->text);
	if ((n = find_value(v, "max_allocs")) != NULL && g->max_allocs < 1)
		return fail(l, n, "generate.max_allocs must be at least 1 with model montecarlo, "
			    "not %s", n->text);
	if ((n = find_value(v, "task_max")) != NULL && g->task_max < 1)
		return fail(l, n, "generate.task_max must be at least 1 B with model montecarlo, "
			    "not %s", n->text);
	if ((guint64) g->tasks * g->max_allocs > MONTECARLO_MAX_ALLOCS)
		return fail(l, v, "generate: model montecarlo makes every task at once, and %u tasks "
			    "of up to %u allocations are more than the %" G_GUINT64_FORMAT
			    " allocations it may plan", g->tasks, g->max_allocs,
			    MONTECARLO_MAX_ALLOCS);
	return TRUE;
}

/*
 * Present means enabled. Model gpusim: one thread per task and no skew
 * unless said; model montecarlo: the tool's defaults (read first, so that
 * the keys written go over them).
 */
static gboolean
read_generate(Loader *l, const Node *v, const char *path, gpointer base)
{
	GsWorkload *w = base;
	const Node *model = find_value(v, "model");

	w->generate.enabled = TRUE;
	w->generate.threads_per_task = 1;
	w->generate.skew_factor = 1.0;
	if (v->kind == NODE_MAP && !check_keys(l, v, path, generate_fields))
		return FALSE;
	if (model != NULL &&
	    !convert_field(l, find_field(generate_fields, "model"), model, "generate.model", base))
		return FALSE;
	if (w->generate.model == GS_GENERATE_MONTECARLO)
		montecarlo_defaults(&w->generate);
	return read_fields(l, v, path, generate_fields, base) && check_generate_model(l, v);
}

/* ==== threads and their ops (SPEC §3.5) ==== */

typedef struct {
	NameTable table;
	const Node *node;
} Use;

/* What one thread's ops define and use, checked once all are read. */
typedef struct {
	GsThreadSpec *spec;
	gboolean pool;
	GHashTable *defined[N_NAME_TABLES]; /* names (owned by spec's tables) */
	GHashTable *indices[N_NAME_TABLES]; /* name -> its index in spec's table + 1 */
	GArray *uses;                       /* Use, in file order */
} ThreadCtx;

static GPtrArray *
name_table(ThreadCtx *tc, NameTable table)
{
	switch (table) {
	case NAME_BUFFER:
		return tc->spec->buffers;
	case NAME_STREAM:
		return tc->spec->streams;
	case NAME_CONSUMER:
		return tc->spec->consumers;
	case NAME_PAGE:
		return tc->spec->pages;
	case NAME_VALUE:
		return tc->spec->values;
	case NAME_RESERVATION:
	case N_NAME_TABLES:
		break;
	}
	return tc->spec->reservations;
}

/*
 * gs_name_index() with an index: an imported log names a buffer for each
 * allocation, and a linear search made a thread's ops quadratic.
 */
static guint
name_index(ThreadCtx *tc, NameTable table, const char *name)
{
	GPtrArray *names = name_table(tc, table);
	gpointer found = g_hash_table_lookup(tc->indices[table], name);

	if (found != NULL)
		return GPOINTER_TO_UINT(found) - 1;
	g_ptr_array_add(names, g_strdup(name));
	g_hash_table_insert(tc->indices[table], names->pdata[names->len - 1],
			    GUINT_TO_POINTER(names->len));
	return names->len - 1;
}

static void
thread_ctx_init(ThreadCtx *tc, GsThreadSpec *spec, gboolean pool)
{
	*tc = (ThreadCtx){.spec = spec, .pool = pool};
	for (guint i = 0; i < N_NAME_TABLES; i++) {
		GPtrArray *names = name_table(tc, i);

		tc->defined[i] = g_hash_table_new(g_str_hash, g_str_equal);
		tc->indices[i] = g_hash_table_new(g_str_hash, g_str_equal);
		for (guint j = 0; j < names->len; j++)
			g_hash_table_insert(tc->indices[i], names->pdata[j], GUINT_TO_POINTER(j + 1));
	}
	tc->uses = g_array_new(FALSE, FALSE, sizeof(Use));
	/* The thread's consumers and values keys declared them all before its ops. */
	for (guint j = 0; j < spec->consumers->len; j++)
		g_hash_table_add(tc->defined[NAME_CONSUMER], spec->consumers->pdata[j]);
	for (guint j = 0; j < spec->values->len; j++)
		g_hash_table_add(tc->defined[NAME_VALUE], spec->values->pdata[j]);
}

static void
thread_ctx_clear(ThreadCtx *tc)
{
	for (guint i = 0; i < N_NAME_TABLES; i++) {
		g_hash_table_unref(tc->defined[i]);
		g_hash_table_unref(tc->indices[i]);
	}
	g_array_unref(tc->uses);
}

/* The index of the name @v in the thread's @table; @define: it creates it. */
static gboolean
read_name(Loader *l, ThreadCtx *tc, const Node *v, NameTable table, gboolean define,
	  const char *what, guint *out)
{
	GPtrArray *names = name_table(tc, table);

	if (!expect_kind(l, v, NODE_SCALAR, what))
		return FALSE;
	if (is_null(v))
		return fail(l, v, "%s must be a name, not an empty value", what);
	*out = name_index(tc, table, v->text);
	if (define) {
		g_hash_table_add(tc->defined[table], names->pdata[*out]);
	} else {
		Use use = {table, v};

		g_array_append_val(tc->uses, use);
	}
	return TRUE;
}

/* A name or a sequence of names, appended to @out as indices. */
static gboolean
read_names(Loader *l, ThreadCtx *tc, const Node *v, NameTable table, gboolean allow_empty,
	   const char *what, GsNames *out)
{
	guint index;
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (v->kind != NODE_SEQ) {
		if (!read_name(l, tc, v, table, FALSE, what, &index))
			return FALSE;
		gs_names_append(out, index);
		return TRUE;
	}
	if (v->items->len == 0 && !allow_empty)
		return fail(l, v, "%s needs at least one name", what);
	for (guint i = 0; i < v->items->len; i++) {
		gboolean good = read_name(l, tc, v->items->pdata[i], table, FALSE, what, &index);

		if (good)
			gs_names_append(out, index);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

static gboolean read_ops(Loader *l, ThreadCtx *tc, const Node *v, const char *where, GArray *ops);

static const Field free_fields[] = {
	OTHER("buf", .required = TRUE),
	OTHER("thread", .required = TRUE),
	{.key = NULL},
};

/*
 * free: a name or names of the thread's own buffers, or {buf, thread}:
 * buffers that another thread allocated (a cleaner's or a shuffle thread's
 * free), resolved once every thread is read.
 */
static gboolean
read_free(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	const Node *thread, *bufs;
	ForeignFree *foreign;

	if (v->kind != NODE_MAP)
		return read_names(l, tc, v, NAME_BUFFER, FALSE, "free", &op->free.bufs);
	if (!read_fields(l, v, "free", free_fields, op))
		return FALSE;
	thread = find_value(v, "thread");
	bufs = find_value(v, "buf");
	if (!expect_kind(l, thread, NODE_SCALAR, "free.thread"))
		return FALSE;
	if (strcmp(thread->text, tc->spec->name) == 0)
		return fail(l, thread, "free.thread names the thread that frees: its own buffers "
			    "are freed as free: NAME");
	if (bufs->kind == NODE_MAP)
		return fail(l, bufs, "free.buf must be a name or a sequence of names, not a map");
	if (bufs->kind == NODE_SEQ && bufs->items->len == 0)
		return fail(l, bufs, "free.buf needs at least one name");
	foreign = g_new0(ForeignFree, 1);
	foreign->thread = thread;
	foreign->bufs = bufs;
	op->free.thread = g_strdup(thread->text);
	gs_names_append(&op->free.bufs, l->foreign_frees->len);
	g_ptr_array_add(l->foreign_frees, foreign);
	return TRUE;
}

static const Field alloc_fields[] = {
	OTHER("buf", .required = TRUE),
	FIELD("size", F_SIZE, GsOp, alloc.size, .required = TRUE),
	FIELD("kind", F_ENUM, GsOp, alloc.kind, .names = alloc_kind_names),
	FIELD("blocking", F_BOOL, GsOp, alloc.blocking),
	FIELD("prefer_pinned", F_BOOL, GsOp, alloc.prefer_pinned),
	FIELD("spillable", F_BOOL, GsOp, alloc.spillable),
	OTHER("reservation"),
	FIELD("device", F_COUNT, GsOp, alloc.device),
	{.key = NULL},
};

/*
 * A device an op names must be one of the run's: memory.gpu.devices GPUs,
 * one space for the host and the disk (memory is read before the tasks).
 */
static gboolean
check_device(Loader *l, const Node *op_value, GsTier tier, guint device, const char *what)
{
	guint devices = tier == GS_TIER_GPU ? MAX(l->w->gpu.devices, 1) : 1;

	if (device < devices)
		return TRUE;
	if (tier != GS_TIER_GPU)
		return fail(l, find_value(op_value, "device"),
			    "%s device %u: the %s tier has one space, device 0", what, device,
			    tier == GS_TIER_HOST ? "host" : "disk");
	return fail_reference(l, find_value(op_value, "device"),
			      "%s device %u: the run has %u GPU%s (memory.gpu.devices), 0 to %u",
			      what, device, devices, devices == 1 ? "" : "s", devices - 1);
}

static gboolean
read_alloc(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	Node *res, *blocking, *pinned;
	guint index;

	op->alloc.kind = GS_KIND_GPU;
	op->alloc.blocking = TRUE;
	op->alloc.prefer_pinned = TRUE;
	op->alloc.reservation = -1;
	if (!read_fields(l, v, "alloc", alloc_fields, op) ||
	    !read_name(l, tc, find_value(v, "buf"), NAME_BUFFER, TRUE, "alloc.buf",
		       &op->alloc.buf))
		return FALSE;
	res = find_value(v, "reservation");
	if (res != NULL) {
		if (!read_name(l, tc, res, NAME_RESERVATION, FALSE, "alloc.reservation", &index))
			return FALSE;
		op->alloc.reservation = (gint) index;
	}
	blocking = find_value(v, "blocking");
	if (!op->alloc.blocking && op->alloc.kind == GS_KIND_GPU)
		return fail(l, blocking,
			    "blocking: false is only for host allocations (kind: host): a GPU "
			    "allocation waits or throws");
	pinned = find_value(v, "prefer_pinned");
	if (pinned != NULL && op->alloc.kind == GS_KIND_GPU)
		return fail(l, pinned,
			    "prefer_pinned is only for host allocations (kind: host): GPU memory "
			    "has no pinned pool");
	return op->alloc.kind != GS_KIND_GPU ||
	       check_device(l, v, GS_TIER_GPU, op->alloc.device, "alloc");
}

static const Field compute_fields[] = {
	FIELD("time", F_DURATION, GsOp, compute.time, .required = TRUE),
	OTHER("uses"),
	OTHER("stream"),
	{.key = NULL},
};

static gboolean
read_compute(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	Node *stream;
	guint index;

	op->compute.stream = -1;
	if (v->kind == NODE_SCALAR && !is_null(v))
		return scalar_quantity(l, v, "compute", &duration_quantity, &op->compute.time);
	if (!read_fields(l, v, "compute", compute_fields, op) ||
	    !read_names(l, tc, find_value(v, "uses"), NAME_BUFFER, TRUE, "compute.uses",
			&op->compute.uses))
		return FALSE;
	stream = find_value(v, "stream");
	if (stream == NULL)
		return TRUE;
	if (!read_name(l, tc, stream, NAME_STREAM, TRUE, "compute.stream", &index))
		return FALSE;
	op->compute.stream = (gint) index;
	return TRUE;
}

static const Field retry_fields[] = {
	FIELD("split", F_ENUM, GsOp, retry.split, .names = split_names),
	FIELD("max_splits", F_COUNT, GsOp, retry.max_splits),
	FIELD("target", F_SIZE, GsOp, retry.target, .min = 1),
	FIELD("min_target", F_SIZE, GsOp, retry.min_target, .min = 1),
	FIELD("data", F_SIZE, GsOp, retry.data),
	OTHER("input"),
	OTHER("restore"),
	OTHER("ops", .required = TRUE),
	{.key = NULL},
};

/* target, min_target and data belong to split: target (or target_cpu), which needs the first two. */
static gboolean
check_target_keys(Loader *l, const Node *v, const GsOp *op)
{
	static const char *const keys[] = {"target", "min_target", "data"};
	const gboolean target = GS_SPLIT_IS_TARGET(op->retry.split);

	for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
		Entry *e = find_entry(v, keys[i]);

		if (e != NULL && !target)
			return fail(l, e->key, "retry.%s is only for split: target", keys[i]);
		if (e == NULL && target && i < 2)
			return fail(l, v, "retry with split: target needs %s", keys[i]);
	}
	if (target && find_entry(v, "max_splits") != NULL)
		return fail(l, find_entry(v, "max_splits")->key,
			    "retry.max_splits is only for split: halves (a target splits down to "
			    "min_target)");
	if (target && op->retry.min_target > op->retry.target)
		return fail(l, find_entry(v, "min_target")->value,
			    "retry.min_target is larger than retry.target");
	return TRUE;
}

/*
 * The ops of a block (retry, repeat), read even after an error in its other
 * keys. ops is required: when it is missing, read_fields() has said so.
 */
static gboolean
read_block_ops(Loader *l, ThreadCtx *tc, const Node *v, const char *where, GArray *ops)
{
	const Node *body = find_value(v, "ops");

	return body == NULL || read_ops(l, tc, body, where, ops);
}

static gboolean
read_retry(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	gboolean ok = TRUE;

	op->retry.split = GS_SPLIT_HALVES;
	op->retry.max_splits = 16;
	op->retry.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
	if (!go_on(l, &ok, read_fields(l, v, "retry", retry_fields, op) &&
				   check_target_keys(l, v, op) &&
				   read_names(l, tc, find_value(v, "input"), NAME_BUFFER, TRUE,
					      "retry.input", &op->retry.input) &&
				   read_names(l, tc, find_value(v, "restore"), NAME_VALUE, TRUE,
					      "retry.restore", &op->retry.restore)))
		return FALSE;
	return read_block_ops(l, tc, v, "retry.ops", op->retry.ops) && ok;
}

static const Field repeat_fields[] = {
	FIELD("times", F_COUNT, GsOp, repeat.times, .required = TRUE),
	OTHER("ops", .required = TRUE),
	{.key = NULL},
};

static gboolean
read_repeat(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	gboolean ok = TRUE;

	op->repeat.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
	if (!go_on(l, &ok, read_fields(l, v, "repeat", repeat_fields, op)))
		return FALSE;
	return read_block_ops(l, tc, v, "repeat.ops", op->repeat.ops) && ok;
}

static const Field reserve_fields[] = {
	OTHER("res", .required = TRUE),
	FIELD("size", F_SIZE, GsOp, reserve.size, .required = TRUE),
	FIELD("tier", F_ENUM, GsOp, reserve.tier, .names = tier_names),
	FIELD("strategy", F_ENUM, GsOp, reserve.strategy, .names = strategy_names),
	FIELD("mode", F_ENUM, GsOp, reserve.mode, .names = mode_names),
	FIELD("device", F_COUNT, GsOp, reserve.device),
	OTHER("tiers", .names = tier_names),
	FIELD("from", F_ENUM, GsOp, reserve.from, .names = tier_names),
	FIELD("to", F_ENUM, GsOp, reserve.to, .names = tier_names),
	{.key = NULL},
};

/* The keys that belong to one strategy: elsewhere they are mistakes. */
static const struct {
	const char *key;
	GsReserveStrategy strategy;
	gboolean required;
} strategy_keys[] = {
	{"device", GS_STRATEGY_SPECIFIC, FALSE},
	{"tiers", GS_STRATEGY_ANY_IN_TIERS, TRUE},
	{"from", GS_STRATEGY_DOWNGRADE, TRUE},
	{"to", GS_STRATEGY_DOWNGRADE, TRUE},
};

static gboolean
check_strategy_keys(Loader *l, const Node *v, GsReserveStrategy strategy)
{
	for (guint i = 0; i < G_N_ELEMENTS(strategy_keys); i++) {
		Entry *e = find_entry(v, strategy_keys[i].key);
		const char *name = strategy_names[strategy_keys[i].strategy];

		if (e != NULL && strategy != strategy_keys[i].strategy)
			return fail(l, e->key, "reserve.%s is only for strategy %s",
				    strategy_keys[i].key, name);
		if (e == NULL && strategy == strategy_keys[i].strategy && strategy_keys[i].required)
			return fail(l, v, "reserve with strategy %s needs %s", name,
				    strategy_keys[i].key);
	}
	return TRUE;
}

static gboolean
read_tiers(Loader *l, const Node *v, GArray *tiers)
{
	static const Field tier_field = {.key = "tiers", .kind = F_ENUM, .names = tier_names};
	gboolean ok = TRUE;

	if (!expect_kind(l, v, NODE_SEQ, "reserve.tiers"))
		return FALSE;
	if (v->items->len == 0)
		return fail(l, v, "reserve.tiers needs at least one tier");
	for (guint i = 0; i < v->items->len; i++) {
		const Node *item = v->items->pdata[i];
		int tier;
		gboolean good = convert_enum(l, &tier_field, item, "reserve.tiers", &tier);

		for (guint j = 0; good && j < tiers->len; j++) {
			if (g_array_index(tiers, GsTier, j) == (GsTier) tier)
				good = fail(l, item, "tier %s is listed twice", item->text);
		}
		if (good)
			g_array_append_val(tiers, tier);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

static gboolean
read_reserve(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	Node *tiers;

	op->reserve.tiers = g_array_new(FALSE, FALSE, sizeof(GsTier));
	if (!read_fields(l, v, "reserve", reserve_fields, op) ||
	    !read_name(l, tc, find_value(v, "res"), NAME_RESERVATION, TRUE, "reserve.res",
		       &op->reserve.res) ||
	    !check_strategy_keys(l, v, op->reserve.strategy))
		return FALSE;
	tiers = find_value(v, "tiers");
	if (tiers != NULL && !read_tiers(l, tiers, op->reserve.tiers))
		return FALSE;
	if (op->reserve.strategy == GS_STRATEGY_DOWNGRADE && op->reserve.to <= op->reserve.from)
		return fail(l, find_value(v, "to"), "reserve.to must be a lower tier than from "
						     "(gpu, then host, then disk)");
	return op->reserve.strategy != GS_STRATEGY_SPECIFIC ||
	       check_device(l, v, op->reserve.tier, op->reserve.device, "reserve");
}

/* Resolves a task id written in a pool op to its index in w->tasks. */
static gboolean
add_task_index(Loader *l, const Node *v, const char *what, GArray *tasks)
{
	gpointer found;
	guint index;

	if (!expect_kind(l, v, NODE_SCALAR, what))
		return FALSE;
	found = g_hash_table_lookup(l->task_ids, v->text);
	if (found == NULL)
		return fail_reference(l, v, "unknown task \"%s\" in %s", v->text, what);
	index = GPOINTER_TO_UINT(found) - 1;
	g_array_append_val(tasks, index);
	return TRUE;
}

static const Field pool_fields[] = {
	OTHER("work_for"),
	OTHER("done_for"),
	{.key = NULL},
};

static gboolean
read_pool(Loader *l, const Node *v, GsOp *op)
{
	Entry *work, *done;
	const Node *list;
	const char *what;
	gboolean ok = TRUE;

	/*
	 * A task's thread may say it too: it is dedicated to its task, and the
	 * engine refuses it when it runs (IllegalArgumentException), as the
	 * reference refuses a dedicated thread that says it works for a pool.
	 */
	op->pool.tasks = g_array_new(FALSE, FALSE, sizeof(guint));
	if (!read_fields(l, v, "pool", pool_fields, op))
		return FALSE;
	work = find_entry(v, "work_for");
	done = find_entry(v, "done_for");
	if (work != NULL && done != NULL)
		return fail(l, done->key, "pool takes work_for or done_for, not both");
	if (work == NULL && done == NULL)
		return fail(l, v, "pool needs work_for or done_for");
	op->pool.done = done != NULL;
	list = done != NULL ? done->value : work->value;
	what = done != NULL ? "pool.done_for" : "pool.work_for";
	if (list->kind != NODE_SEQ)
		return add_task_index(l, list, what, op->pool.tasks);
	if (list->items->len == 0)
		return fail(l, list, "%s needs at least one task", what);
	for (guint i = 0; i < list->items->len; i++) {
		if (!go_on(l, &ok, add_task_index(l, list->items->pdata[i], what, op->pool.tasks)))
			return FALSE;
	}
	return ok;
}

/*
 * associate: TASK, dissociate: TASK (RmmSpark's startDedicatedTaskThread and
 * removeDedicatedThreadAssociation): any thread may say them; the engine
 * decides at run time, as the reference does.
 */
static gboolean
read_association(Loader *l, const Node *v, const char *name, GsOp *op)
{
	op->pool.tasks = g_array_new(FALSE, FALSE, sizeof(guint));
	return add_task_index(l, v, name, op->pool.tasks);
}

/*
 * The ops of Spark's TaskMemoryManager (SPEC §3.5.3) name one of the
 * thread's consumers, whose mode they take, or a mode without a consumer
 * (Spark's null consumer); a task's threads only.
 */
static const Field execution_fields[] = {
	FIELD("bytes", F_SIZE, GsOp, execution.bytes, .required = TRUE),
	OTHER("consumer"),
	FIELD("mode", F_ENUM, GsOp, execution.mode, .names = memory_mode_names),
	{.key = NULL},
};

static const Field page_fields[] = {
	OTHER("consumer", .required = TRUE),
	FIELD("size", F_SIZE, GsOp, execution.bytes, .required = TRUE),
	OTHER("page", .required = TRUE),
	{.key = NULL},
};

/* The memory manager's storage ops (acquireStorageMemory, releaseStorageMemory). */
static const Field storage_fields[] = {
	OTHER("block", .required = TRUE),
	FIELD("bytes", F_SIZE, GsOp, execution.bytes, .required = TRUE),
	FIELD("mode", F_ENUM, GsOp, execution.mode, .names = memory_mode_names),
	{.key = NULL},
};

static const Field release_storage_fields[] = {
	FIELD("bytes", F_SIZE, GsOp, execution.bytes, .required = TRUE),
	FIELD("mode", F_ENUM, GsOp, execution.mode, .names = memory_mode_names),
	{.key = NULL},
};

static gboolean
read_storage(Loader *l, const Node *v, GsOp *op)
{
	const char *name = gs_op_kind_name(op->kind);
	const Node *block;

	op->execution.consumer = -1;
	if (op->kind == GS_OP_RELEASE_STORAGE) {
		if (v->kind != NODE_MAP)
			return scalar_quantity(l, v, name, &size_quantity, &op->execution.bytes);
		return read_fields(l, v, name, release_storage_fields, op);
	}
	if (!expect_kind(l, v, NODE_MAP, name) || !read_fields(l, v, name, storage_fields, op))
		return FALSE;
	block = find_value(v, "block");
	if (!expect_kind(l, block, NODE_SCALAR, "acquire_storage.block"))
		return FALSE;
	if (block->text[0] == '\0')
		return fail(l, block, "acquire_storage.block needs a block id");
	op->execution.block = g_strdup(block->text);
	return TRUE;
}

static gboolean
read_op_consumer(Loader *l, ThreadCtx *tc, const Node *v, const char *what, GsOp *op)
{
	guint index;

	if (!read_name(l, tc, v, NAME_CONSUMER, FALSE, what, &index))
		return FALSE;
	op->execution.consumer = (gint) index;
	if (index < tc->spec->consumer_modes->len)
		op->execution.mode = g_array_index(tc->spec->consumer_modes, GsMemoryMode, index);
	return TRUE;
}

static gboolean
read_execution(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	const char *name = gs_op_kind_name(op->kind);
	const Node *consumer;
	g_autofree char *what = NULL;

	op->execution.consumer = -1;
	if (op->kind == GS_OP_ALLOCATE_PAGE) {
		if (!read_fields(l, v, name, page_fields, op) ||
		    !read_name(l, tc, find_value(v, "page"), NAME_PAGE, TRUE, "allocate_page.page",
			       &op->execution.page))
			return FALSE;
		return read_op_consumer(l, tc, find_value(v, "consumer"), "allocate_page.consumer",
					op);
	}
	if (v->kind != NODE_MAP)
		return scalar_quantity(l, v, name, &size_quantity, &op->execution.bytes) &&
		       (op->kind != GS_OP_ACQUIRE_EXECUTION || op->execution.bytes > 0 ||
			fail(l, v, "acquire_execution needs at least 1 byte"));
	if (!read_fields(l, v, name, execution_fields, op))
		return FALSE;
	if (op->kind == GS_OP_ACQUIRE_EXECUTION && op->execution.bytes == 0)
		return fail(l, find_value(v, "bytes"), "acquire_execution needs at least 1 byte");
	consumer = find_value(v, "consumer");
	if (consumer == NULL)
		return TRUE;
	if (find_value(v, "mode") != NULL)
		return fail(l, find_value(v, "mode"),
			    "%s takes the mode of its consumer: give consumer or mode, not both",
			    name);
	what = g_strdup_printf("%s.consumer", name);
	return read_op_consumer(l, tc, consumer, what, op);
}

/* borrow_stream: cuCascade's exclusive_stream_pool.acquire_stream(policy). */
static const char *const stream_policy_names[] = {"block", "grow", NULL};

static const Field borrow_fields[] = {
	OTHER("stream", .required = TRUE),
	FIELD("policy", F_ENUM, GsOp, borrow.grow, .names = stream_policy_names),
	FIELD("device", F_COUNT, GsOp, borrow.device),
	{.key = NULL},
};

static gboolean
read_borrow(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	if (v->kind != NODE_MAP)
		return read_name(l, tc, v, NAME_STREAM, TRUE, "borrow_stream", &op->borrow.stream);
	return read_fields(l, v, "borrow_stream", borrow_fields, op) &&
	       read_name(l, tc, find_value(v, "stream"), NAME_STREAM, TRUE, "borrow_stream.stream",
			 &op->borrow.stream) &&
	       check_device(l, v, GS_TIER_GPU, op->borrow.device, "borrow_stream");
}

static const Field inject_fields[] = {
	FIELD("retry_oom", F_INT, GsOp, inject.retry_oom),
	FIELD("split_oom", F_INT, GsOp, inject.split_oom),
	FIELD("cudf_exception", F_INT, GsOp, inject.cudf_exception),
	FIELD("skip", F_INT, GsOp, inject.skip),
	FIELD("kind", F_ENUM, GsOp, inject.kind, .names = kind_filter_names),
	{.key = NULL},
};

static const Field value_fields[] = {
	OTHER("name", .required = TRUE),
	OTHER("add"),
	OTHER("set"),
	{.key = NULL},
};

/* A whole number, negative or not, as a thread's values hold. */
static gboolean
read_integer(Loader *l, const Node *v, const char *what, gint64 *out)
{
	if (!expect_kind(l, v, NODE_SCALAR, what))
		return FALSE;
	if (!g_ascii_string_to_signed(v->text, 10, G_MININT64, G_MAXINT64, out, NULL))
		return fail(l, v, "%s must be a whole number, not \"%s\"", what, v->text);
	return TRUE;
}

/* value: {name, add: N} or {name, set: N}: a change to one of the thread's values. */
static gboolean
read_value_op(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	const Node *add, *set;

	if (!read_fields(l, v, "value", value_fields, op))
		return FALSE;
	add = find_value(v, "add");
	set = find_value(v, "set");
	if ((add == NULL) == (set == NULL))
		return fail(l, add != NULL ? find_entry(v, "set")->key : v,
			    "value takes one of add and set");
	op->value.set = set != NULL;
	return read_name(l, tc, find_value(v, "name"), NAME_VALUE, FALSE, "value.name",
			 &op->value.name) &&
	       read_integer(l, set != NULL ? set : add, set != NULL ? "value.set" : "value.add",
			    &op->value.amount);
}

static gboolean
read_op_value(Loader *l, ThreadCtx *tc, const Node *v, GsOp *op)
{
	const char *name = gs_op_kind_name(op->kind);

	switch (op->kind) {
	case GS_OP_ALLOC:
		return read_alloc(l, tc, v, op);
	case GS_OP_FREE:
		return read_free(l, tc, v, op);
	case GS_OP_SPILLABLE:
	case GS_OP_UNSPILLABLE:
		return read_names(l, tc, v, NAME_BUFFER, FALSE, name, &op->free.bufs);
	case GS_OP_COMPUTE:
		return read_compute(l, tc, v, op);
	case GS_OP_SYNC:
		return read_name(l, tc, v, NAME_STREAM, FALSE, name, &op->stream);
	case GS_OP_SLEEP:
	case GS_OP_UNTIL:
		return scalar_quantity(l, v, name, &duration_quantity, &op->time);
	case GS_OP_RETRY:
		return read_retry(l, tc, v, op);
	case GS_OP_RESERVE:
		return read_reserve(l, tc, v, op);
	case GS_OP_RELEASE:
		return read_name(l, tc, v, NAME_RESERVATION, FALSE, name, &op->res);
	case GS_OP_POOL:
		return read_pool(l, v, op);
	case GS_OP_ASSOCIATE:
	case GS_OP_DISSOCIATE:
		return read_association(l, v, name, op);
	case GS_OP_WAIT_ON_POOL:
		if (tc->pool)
			return fail(l, v, "wait_on_pool is for a task's threads, not pool threads");
		return convert_bool(l, v, name, &op->wait_on_pool);
	case GS_OP_INJECT:
		return read_fields(l, v, name, inject_fields, op);
	case GS_OP_REPEAT:
		return read_repeat(l, tc, v, op);
	case GS_OP_ACQUIRE_EXECUTION:
	case GS_OP_RELEASE_EXECUTION:
	case GS_OP_ALLOCATE_PAGE:
		return read_execution(l, tc, v, op);
	case GS_OP_BORROW_STREAM:
		return read_borrow(l, tc, v, op);
	case GS_OP_RETURN_STREAM:
		return read_name(l, tc, v, NAME_STREAM, FALSE, name, &op->stream);
	case GS_OP_FREE_PAGE:
		return read_name(l, tc, v, NAME_PAGE, FALSE, name, &op->execution.page);
	case GS_OP_VALUE:
		return read_value_op(l, tc, v, op);
	case GS_OP_CHECKPOINT:
		return read_names(l, tc, v, NAME_VALUE, FALSE, name, &op->checkpoint);
	case GS_OP_ACQUIRE_STORAGE:
	case GS_OP_RELEASE_STORAGE:
		return read_storage(l, v, op);
	case GS_OP_RELEASE_ALL_STORAGE:
	case GS_OP_BLOCK_UNTIL_READY:
	case GS_OP_TASK_DONE:
	case GS_OP_CLEAN_UP:
	case GS_OP_SHUTDOWN_RESERVATIONS:
	case GS_N_OP_KINDS:
		break;
	}
	return TRUE;
}

static gboolean
op_kind_from_name(const char *name, GsOpKind *out)
{
	for (guint i = 0; i < GS_N_OP_KINDS; i++) {
		if (strcmp(gs_op_kind_name((GsOpKind) i), name) == 0) {
			*out = (GsOpKind) i;
			return TRUE;
		}
	}
	return FALSE;
}

static gboolean
fail_unknown_op(Loader *l, const Node *word)
{
	const char *names[GS_N_OP_KINDS + 1];
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	for (guint i = 0; i < GS_N_OP_KINDS; i++)
		names[i] = gs_op_kind_name((GsOpKind) i);
	names[GS_N_OP_KINDS] = NULL;
	list = join_names(names);
	hint = did_you_mean(word->text, names);
	return fail(l, word, "unknown op \"%s\"%s (expected %s)", word->text, hint, list);
}

static gboolean
takes_no_value(GsOpKind kind)
{
	return kind == GS_OP_BLOCK_UNTIL_READY || kind == GS_OP_TASK_DONE ||
	       kind == GS_OP_CLEAN_UP || kind == GS_OP_SHUTDOWN_RESERVATIONS ||
	       kind == GS_OP_RELEASE_ALL_STORAGE;
}

/* An op: a bare word, or a map with one key whose value is the argument. */
static gboolean
read_op(Loader *l, ThreadCtx *tc, const Node *item, GsOp *op)
{
	const Node *word = item, *value = NULL;
	GsOpKind kind;

	if (item->kind == NODE_SEQ || (item->kind == NODE_MAP && item->entries->len == 0))
		return fail(l, item, "an op is a word or a map with one key, not %s",
			    item->kind == NODE_SEQ ? "a sequence" : "an empty map");
	if (item->kind == NODE_MAP) {
		Entry *first = &g_array_index(item->entries, Entry, 0);

		if (item->entries->len > 1) {
			Entry *second = &g_array_index(item->entries, Entry, 1);

			return fail(l, second->key,
				    "\"%s\" starts a second op in one list item (a missing \"-\"?)",
				    second->key->text);
		}
		word = first->key;
		value = first->value;
	}
	if (!op_kind_from_name(word->text, &kind))
		return fail_unknown_op(l, word);
	op->kind = kind;
	op->line = word->line;
	op->column = word->column;
	if (gs_op_kind_is_execution(kind) && tc->pool)
		return fail(l, value != NULL && !is_null(value) ? value : word,
			    "%s is for a task's threads: a pool thread has no task memory manager",
			    word->text);
	if ((kind == GS_OP_ACQUIRE_STORAGE || kind == GS_OP_RELEASE_STORAGE ||
	     kind == GS_OP_RELEASE_ALL_STORAGE) && l->w->execution.share != GS_SHARE_FAIR)
		return fail_reference(l, word,
				      "%s needs memory.execution.share fair: storage memory is the "
				      "unified memory manager's",
				      word->text);
	if (takes_no_value(kind))
		return value == NULL || is_null(value) ||
		       fail(l, value, "%s takes no value", word->text);
	if (value == NULL)
		return fail(l, word, "%s needs a value, as in \"%s: ...\"", word->text, word->text);
	return read_op_value(l, tc, value, op);
}

static gboolean
read_ops(Loader *l, ThreadCtx *tc, const Node *v, const char *where, GArray *ops)
{
	gboolean ok = TRUE;

	if (is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, where))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		GsOp op = {0};
		gboolean good = read_op(l, tc, v->items->pdata[i], &op);

		if (good)
			g_array_append_val(ops, op);
		else
			gs_op_clear(&op);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/* Why @name, used in @thread, is undefined there. */
static gboolean
fail_undefined(Loader *l, const Use *u, const char *thread)
{
	const char *name = u->node->text;

	switch (u->table) {
	case NAME_BUFFER:
		return fail_reference(l, u->node,
				      "undefined buffer \"%s\": no alloc in thread %s names it",
				      name, thread);
	case NAME_STREAM:
		return fail_reference(l, u->node,
				      "undefined stream \"%s\": no compute or borrow_stream in "
				      "thread %s names it",
				      name, thread);
	case NAME_CONSUMER:
		return fail_reference(l, u->node,
				      "undefined consumer \"%s\": thread %s's consumers do not "
				      "declare it",
				      name, thread);
	case NAME_PAGE:
		return fail_reference(l, u->node,
				      "undefined page \"%s\": no allocate_page in thread %s "
				      "names it",
				      name, thread);
	case NAME_VALUE:
		return fail_reference(l, u->node,
				      "undefined value \"%s\": thread %s's values do not "
				      "declare it",
				      name, thread);
	case NAME_RESERVATION:
	case N_NAME_TABLES:
		break;
	}
	return fail_reference(l, u->node,
			      "undefined reservation \"%s\": no reserve in thread %s names it",
			      name, thread);
}

/* Every name used must be defined somewhere in the same thread. */
static gboolean
check_uses(Loader *l, ThreadCtx *tc)
{
	gboolean ok = TRUE;

	for (guint i = 0; i < tc->uses->len; i++) {
		Use *u = &g_array_index(tc->uses, Use, i);

		if (g_hash_table_contains(tc->defined[u->table], u->node->text))
			continue;
		if (!go_on(l, &ok, fail_undefined(l, u, tc->spec->name)))
			return FALSE;
	}
	return ok;
}

static gboolean
read_thread_ops(Loader *l, GsThreadSpec *spec, gboolean pool, const Node *ops, const char *where)
{
	ThreadCtx tc;
	g_autofree char *what = g_strdup_printf("%s.ops", where);
	gboolean ok;

	thread_ctx_init(&tc, spec, pool);
	ok = read_ops(l, &tc, ops, what, spec->ops);
	ok = check_uses(l, &tc) && ok;
	thread_ctx_clear(&tc);
	return ok;
}

/* shuffle: a task's thread that says pool works for tasks as a shuffle thread. */
static const Field thread_fields[] = {
	OTHER("name"),
	FIELD("on_oom", F_ENUM, GsThreadSpec, on_oom, .names = on_oom_names),
	FIELD("shuffle", F_BOOL, GsThreadSpec, shuffle),
	OTHER("consumers"),
	OTHER("values"),
	OTHER("ops", .required = TRUE),
	{.key = NULL},
};

static const Field pool_thread_fields[] = {
	OTHER("name", .required = TRUE),
	FIELD("on_oom", F_ENUM, GsThreadSpec, on_oom, .names = on_oom_names),
	FIELD("shuffle", F_BOOL, GsThreadSpec, shuffle),
	OTHER("values"),
	OTHER("ops", .required = TRUE),
	{.key = NULL},
};

/*
 * consumers: {NAME: MODE, ...}, the Spark memory consumers a task's thread
 * makes (new MemoryConsumer(taskMemoryManager, mode)); its ops name them.
 */
static gboolean
read_consumers(Loader *l, GsThreadSpec *spec, const Node *v, const char *where)
{
	static const Field mode_field = {.key = "consumers", .kind = F_ENUM,
					 .names = memory_mode_names};
	g_autofree char *what = g_strdup_printf("%s.consumers", where);
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, what))
		return FALSE;
	for (guint i = 0; i < v->entries->len; i++) {
		const Entry *e = &g_array_index(v->entries, Entry, i);
		int mode;
		gboolean good = expect_kind(l, e->key, NODE_SCALAR, "a consumer's name") &&
				(!is_null(e->key) ||
				 fail(l, e->key, "a consumer's name must not be empty")) &&
				convert_enum(l, &mode_field, e->value, what, &mode);

		if (good) {
			g_ptr_array_add(spec->consumers, g_strdup(e->key->text));
			g_array_append_val(spec->consumer_modes, mode);
		}
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/* One entry of values:, NAME: N. */
static gboolean
read_value_start(Loader *l, GsThreadSpec *spec, const Entry *e, const char *what)
{
	g_autofree char *key = NULL;
	gint64 start;

	if (!expect_kind(l, e->key, NODE_SCALAR, "a value's name"))
		return FALSE;
	if (is_null(e->key))
		return fail(l, e->key, "a value's name must not be empty");
	key = g_strdup_printf("%s.%s", what, e->key->text);
	if (!read_integer(l, e->value, key, &start))
		return FALSE;
	g_ptr_array_add(spec->values, g_strdup(e->key->text));
	g_array_append_val(spec->value_starts, start);
	return TRUE;
}

/*
 * values: {NAME: N, ...}, state of the thread's own (a Retryable's) that
 * value ops change, checkpoint records and a retry block's restore puts
 * back; N is where it starts, and its first checkpoint.
 */
static gboolean
read_values(Loader *l, GsThreadSpec *spec, const Node *v, const char *where)
{
	g_autofree char *what = g_strdup_printf("%s.values", where);
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, what))
		return FALSE;
	for (guint i = 0; i < v->entries->len; i++) {
		if (!go_on(l, &ok,
			   read_value_start(l, spec, &g_array_index(v->entries, Entry, i), what)))
			return FALSE;
	}
	return ok;
}

/* Thread names are unique across all tasks and pool threads. */
static gboolean
claim_thread_name(Loader *l, const char *name, const Node *at)
{
	const Node *first = g_hash_table_lookup(l->thread_names, name);
	g_autofree char *where = NULL;

	if (first == NULL)
		return TRUE;
	where = position_text(first, at);
	return fail(l, at, "duplicate thread name \"%s\" (first at %s)", name, where);
}

static gboolean
check_thread_name(Loader *l, const Node *v)
{
	if (!expect_kind(l, v, NODE_SCALAR, "a thread's name"))
		return FALSE;
	return !is_null(v) || fail(l, v, "a thread's name must not be empty");
}

/*
 * Reads one thread into @into. @default_name: the name when none is given
 * (NULL for pool threads, which must name themselves).
 */
static gboolean
read_thread(Loader *l, const Node *n, const char *where, const char *default_name,
	    GPtrArray *into)
{
	gboolean pool = default_name == NULL;
	const Node *name_node, *at;
	const char *name;
	GsThreadSpec *spec;
	g_autofree char *thread_where = NULL;
	const Node *ops = find_value(n, "ops");
	gboolean ok = TRUE;

	if (!expect_kind(l, n, NODE_MAP, where))
		return FALSE;
	name_node = find_value(n, "name");
	if (name_node == NULL && pool)
		return fail_missing(l, n, where, "name");
	if (name_node != NULL && !check_thread_name(l, name_node))
		return FALSE;
	name = name_node != NULL ? name_node->text : default_name;
	at = name_node != NULL ? name_node : n;
	if (!claim_thread_name(l, name, at))
		return FALSE;
	spec = gs_thread_spec_new(name);
	g_ptr_array_add(into, spec);
	g_hash_table_insert(l->thread_names, spec->name, (gpointer) at);
	thread_where = g_strdup_printf(pool ? "pool_threads[%s]" : "threads[%s]", spec->name);
	/*
	 * read_fields() says that a pool thread's consumers are an unknown key,
	 * and that ops, which is required, is missing.
	 */
	if (!go_on(l, &ok, read_fields(l, n, thread_where,
				       pool ? pool_thread_fields : thread_fields, spec)) ||
	    !go_on(l, &ok, pool || read_consumers(l, spec, find_value(n, "consumers"),
						  thread_where)) ||
	    !go_on(l, &ok, read_values(l, spec, find_value(n, "values"), thread_where)))
		return FALSE;
	return (ops == NULL || read_thread_ops(l, spec, pool, ops, thread_where)) && ok;
}

static gboolean
read_pool_threads(Loader *l, const Node *v, const char *path, gpointer base)
{
	gboolean ok = TRUE;

	if (is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, path))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		g_autofree char *where = g_strdup_printf("pool_threads[%u]", i);

		if (!go_on(l, &ok, read_thread(l, v->items->pdata[i], where, NULL,
					       l->w->pool_threads)))
			return FALSE;
	}
	return ok;
}

/* ==== tasks (SPEC §3.5) ==== */

static const Field task_fields[] = {
	OTHER("id", .required = TRUE),
	FIELD("start", F_DURATION, GsTaskSpec, start),
	FIELD("priority", F_COUNT, GsTaskSpec, priority, .min = 1),
	FIELD("repeat", F_COUNT, GsTaskSpec, repeat, .min = 1, .max = GS_MAX_THREADS),
	FIELD("every", F_DURATION, GsTaskSpec, every),
	OTHER("threads", .required = TRUE, .items = thread_fields),
	{.key = NULL},
};

static gboolean
check_task_id(Loader *l, const Node *id)
{
	gpointer found;
	g_autofree char *where = NULL;

	if (!expect_kind(l, id, NODE_SCALAR, "a task id"))
		return FALSE;
	if (is_null(id))
		return fail(l, id, "a task id must not be empty");
	found = g_hash_table_lookup(l->task_ids, id->text);
	if (found == NULL)
		return TRUE;
	where = position_text(l->task_nodes->pdata[GPOINTER_TO_UINT(found) - 1], id);
	return fail(l, id, "duplicate task id \"%s\" (first at %s)", id->text, where);
}

static gboolean
read_task_threads(Loader *l, GsTaskSpec *task, const Node *v, const char *where)
{
	g_autofree char *what = g_strdup_printf("%s.threads", where);
	gboolean ok = TRUE;

	if (!expect_kind(l, v, NODE_SEQ, what))
		return FALSE;
	if (v->items->len == 0)
		return fail(l, v, "%s is empty: a task needs at least one thread", what);
	for (guint i = 0; i < v->items->len; i++) {
		g_autofree char *name = g_strdup_printf("%s.%u", task->id, i);
		g_autofree char *item = g_strdup_printf("%s[%u]", what, i);

		if (!go_on(l, &ok, read_thread(l, v->items->pdata[i], item, name, task->threads)))
			return FALSE;
	}
	return ok;
}

static gboolean
read_task(Loader *l, const Node *n, guint index)
{
	g_autofree char *where = g_strdup_printf("tasks[%u]", index);
	Node *id, *threads;
	GsTaskSpec *task;
	gboolean ok = TRUE;

	if (!expect_kind(l, n, NODE_MAP, where))
		return FALSE;
	id = find_value(n, "id");
	if (id == NULL)
		return fail_missing(l, n, where, "id");
	if (!check_task_id(l, id))
		return FALSE;
	task = gs_task_spec_new(id->text);
	task->line = n->line;
	task->column = n->column;
	g_ptr_array_add(l->w->tasks, task);
	g_ptr_array_add(l->task_nodes, id);
	g_hash_table_insert(l->task_ids, task->id, GUINT_TO_POINTER(l->w->tasks->len));
	g_free(where);
	where = g_strdup_printf("tasks[%s]", task->id);
	/* threads is required: when it is missing, read_fields() says so. */
	threads = find_value(n, "threads");
	if (!go_on(l, &ok, read_fields(l, n, where, task_fields, task)))
		return FALSE;
	return (threads == NULL || read_task_threads(l, task, threads, where)) && ok;
}

static gboolean
read_tasks(Loader *l, const Node *v, const char *path, gpointer base)
{
	gboolean ok = TRUE;

	if (is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, path))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		if (!go_on(l, &ok, read_task(l, v->items->pdata[i], i)))
			return FALSE;
	}
	return ok;
}

/* ==== expectations (SPEC §3.8) ==== */

static const ExpectKey totals_keys[] = {
	{"tasks", VK_COUNT},
	{"tasks_completed", VK_COUNT},
	{"tasks_failed", VK_COUNT},
	{"task_attempts", VK_COUNT},
	{"retries", VK_COUNT},
	{"splits", VK_COUNT},
	{"blocked_ns", VK_NS},
	{"lost_ns", VK_NS},
	{"spill_block_ns", VK_NS},
	{"semaphore_wait_ns", VK_NS},
	{"deadlocks_busted", VK_COUNT},
	{"deadlocks_unresolved", VK_COUNT},
	/* the spellings expect.c also accepts */
	{"blocked", VK_NS},
	{"lost", VK_NS},
	{"spill_block", VK_NS},
	{"semaphore_wait", VK_NS},
	{"spilled_bytes.gpu_to_host", VK_SIZE},
	{"spilled_bytes.host_to_disk", VK_SIZE},
	{"unspilled_bytes.host_to_gpu", VK_SIZE},
	{"unspilled_bytes.disk_to_host", VK_SIZE},
	{"spilled_gpu_to_host", VK_SIZE},
	{"spilled_host_to_disk", VK_SIZE},
	{"unspilled_host_to_gpu", VK_SIZE},
	{"unspilled_disk_to_host", VK_SIZE},
	{"copies_checked", VK_COUNT},
	{"copies_lost", VK_COUNT},
	{"leaked_bytes", VK_SIZE},
	{"host_pools", VK_COUNT},
	{"failure_callbacks", VK_COUNT},
	{"failure_callback_allocs", VK_COUNT},
	{"streams_grown", VK_COUNT},
	{NULL, VK_COUNT},
};

static const ExpectKey task_expect_keys[] = {
	{"outcome", VK_OUTCOME},
	{"attempts", VK_COUNT},
	{"retries", VK_COUNT},
	{"splits", VK_COUNT},
	{"blocked_ns", VK_NS},
	{"lost_ns", VK_NS},
	{"max_footprint", VK_SIZE},
	{"leaked_bytes", VK_SIZE},
	/* the spellings expect.c also accepts */
	{"blocked", VK_NS},
	{"lost", VK_NS},
	{"start_ns", VK_NS},
	{"start", VK_NS},
	{"end_ns", VK_NS},
	{"end", VK_NS},
	{NULL, VK_COUNT},
};

static const struct {
	const char *text;
	GsCmpOp op;
} cmp_ops[] = {
	{"==", GS_CMP_EQ}, {"!=", GS_CMP_NE}, {"<=", GS_CMP_LE},
	{">=", GS_CMP_GE}, {"<", GS_CMP_LT},  {">", GS_CMP_GT},
};

/* "OP VALUE" or "VALUE": the operator, and where the value starts. */
static gboolean
split_cmp(Loader *l, const Node *v, GsCmpOp *op, const char **rest)
{
	const char *s = v->text;
	gsize n = strspn(s, "=!<>~");

	*op = GS_CMP_EQ;
	*rest = s;
	if (n == 0)
		return TRUE;
	for (guint i = 0; i < G_N_ELEMENTS(cmp_ops); i++) {
		if (strlen(cmp_ops[i].text) == n && strncmp(cmp_ops[i].text, s, n) == 0) {
			*op = cmp_ops[i].op;
			*rest = s + n + strspn(s + n, " ");
			if (**rest == '\0')
				return fail(l, v, "comparison \"%s\" has no value", s);
			return TRUE;
		}
	}
	return fail(l, v,
		    "bad comparison operator \"%.*s\" in \"%s\" (expected ==, !=, <, <=, > or >=)",
		    (int) n, s, s);
}

static gboolean
parse_expect_number(Loader *l, const Node *v, const char *key, const char *text, ValueKind kind,
		    gint64 *out)
{
	guint64 n;

	switch (kind) {
	case VK_NS:
		if (g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, &n, NULL)) {
			*out = (gint64) n;
			return TRUE;
		}
		return parse_quantity(l, v, text, &duration_quantity, out);
	case VK_DURATION:
		return parse_quantity(l, v, text, &duration_quantity, out);
	case VK_SIZE:
		return parse_quantity(l, v, text, &size_quantity, out);
	case VK_COUNT:
	case VK_OUTCOME:
		break;
	}
	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, &n, NULL))
		return fail(l, v, "expect %s must be a whole number >= 0, not \"%s\"", key, text);
	*out = (gint64) n;
	return TRUE;
}

static gboolean
parse_outcome(Loader *l, const Node *v, const char *key, GsCmpOp op, const char *word,
	      GsExpectValue *ev)
{
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	if (op != GS_CMP_EQ && op != GS_CMP_NE)
		return fail(l, v, "expect %s compares only with == or !=", key);
	for (guint i = 0; outcome_names[i] != NULL; i++) {
		if (strcmp(outcome_names[i], word) == 0) {
			ev->text = g_strdup(word);
			return TRUE;
		}
	}
	list = join_names(outcome_names);
	hint = did_you_mean(word, outcome_names);
	return fail(l, v, "expect %s must be %s, not \"%s\"%s", key, list, word, hint);
}

/* One expected value: stored under @key ("totals.retries"). */
static gboolean
add_expect_value(Loader *l, const char *key, ValueKind kind, const Node *v)
{
	g_autofree char *what = g_strdup_printf("expect %s", key);
	GsExpectValue *ev;
	const char *rest;

	if (!expect_kind(l, v, NODE_SCALAR, what))
		return FALSE;
	ev = g_new0(GsExpectValue, 1);
	ev->key = g_strdup(key);
	ev->line = v->line;
	ev->column = v->column;
	g_ptr_array_add(l->w->expect.values, ev);
	if (!split_cmp(l, v, &ev->cmp.op, &rest))
		return FALSE;
	if (kind == VK_OUTCOME)
		return parse_outcome(l, v, key, ev->cmp.op, rest, ev);
	return parse_expect_number(l, v, key, rest, kind, &ev->cmp.value);
}

static gboolean
read_expect_values(Loader *l, const Node *map, const char *where, const char *prefix,
		   const ExpectKey *keys)
{
	gboolean ok = TRUE;

	if (map == NULL || is_null(map))
		return TRUE;
	if (!expect_kind(l, map, NODE_MAP, where))
		return FALSE;
	for (guint i = 0; i < map->entries->len; i++) {
		Entry *e = &g_array_index(map->entries, Entry, i);
		const ExpectKey *k = keys;
		g_autofree char *key = NULL;
		gboolean good;

		while (k->key != NULL && strcmp(k->key, e->key->text) != 0)
			k++;
		if (k->key == NULL) {
			g_autoptr(GPtrArray) known = g_ptr_array_new();

			for (k = keys; k->key != NULL; k++)
				g_ptr_array_add(known, (gpointer) k->key);
			g_ptr_array_add(known, NULL);
			good = fail_unknown_key(l, e->key, where,
						(const char *const *) known->pdata);
		} else {
			key = g_strdup_printf("%s.%s", prefix, k->key);
			good = add_expect_value(l, key, k->kind, e->value);
		}
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/*
 * Tasks and threads a generator makes are not known yet: with generate:,
 * expectations may name them unchecked.
 */
static gboolean
may_name_unknown(Loader *l)
{
	return l->w->generate.enabled;
}

/* "#k" at @s with k < @repeat, followed by exactly @suffix. */
static gboolean
is_copy_suffix(const char *s, guint repeat, const char *suffix)
{
	char *end;
	guint64 k;

	if (s[0] != '#' || !g_ascii_isdigit(s[1]))
		return FALSE;
	k = g_ascii_strtoull(s + 1, &end, 10);
	return k < repeat && strcmp(end, suffix) == 0;
}

/*
 * A repeated task runs as copies A#0, A#1, ... and no task is called A; their
 * threads are named as the simulator names them (sim/sim.c): A#k.0 for A.0,
 * NAME#k for a thread NAME that does not start with the task id and a dot.
 */
static gboolean
is_copy_thread(const GsTaskSpec *task, const char *thread, const char *name)
{
	const char *dot = strchr(thread, '.');
	gsize n;

	if (task->repeat < 2)
		return FALSE;
	if (dot != NULL && strncmp(thread, task->id, (gsize) (dot - thread)) == 0) {
		n = strlen(task->id);
		return strncmp(name, task->id, n) == 0 &&
		       is_copy_suffix(name + n, task->repeat, dot);
	}
	n = strlen(thread);
	return strncmp(name, thread, n) == 0 && is_copy_suffix(name + n, task->repeat, "");
}

/* The name of @thread in copy @k of @task (see is_copy_thread). */
static char *
copy_thread_name(const GsTaskSpec *task, const char *thread, guint k)
{
	const char *dot = strchr(thread, '.');

	if (dot != NULL && strncmp(thread, task->id, (gsize) (dot - thread)) == 0)
		return g_strdup_printf("%s#%u%s", task->id, k, dot);
	return g_strdup_printf("%s#%u", thread, k);
}

static const GsTaskSpec *
find_task(Loader *l, const char *id)
{
	gpointer found = g_hash_table_lookup(l->task_ids, id);

	return found != NULL ? l->w->tasks->pdata[GPOINTER_TO_UINT(found) - 1] : NULL;
}

/* Fails unless @key names a task of the run: a task id, or ID#k of a repeated one. */
static gboolean
check_expect_task(Loader *l, const Node *key, const char *what)
{
	const char *hash = strrchr(key->text, '#');
	const GsTaskSpec *task = find_task(l, key->text);
	g_autofree char *base = NULL;

	if (task != NULL && task->repeat < 2)
		return TRUE;
	if (task != NULL)
		return fail(l, key, "task %s repeats: name a copy, %s#0 to %s#%u, in %s", task->id,
			    task->id, task->id, task->repeat - 1, what);
	if (hash != NULL) {
		base = g_strndup(key->text, (gsize) (hash - key->text));
		task = find_task(l, base);
		if (task != NULL && is_copy_suffix(hash, task->repeat, "") && task->repeat > 1)
			return TRUE;
	}
	if (may_name_unknown(l))
		return TRUE;
	return fail_reference(l, key, "unknown task \"%s\" in %s", key->text, what);
}

/* Fails unless @v names a thread of the run (copies of repeated tasks included). */
static gboolean
check_expect_thread(Loader *l, const Node *v, const char *what)
{
	const Node *named = g_hash_table_lookup(l->thread_names, v->text);
	const GsTaskSpec *owner = NULL;

	for (guint i = 0; i < l->w->tasks->len; i++) {
		const GsTaskSpec *task = l->w->tasks->pdata[i];

		for (guint j = 0; j < task->threads->len; j++) {
			const GsThreadSpec *thread = task->threads->pdata[j];

			if (is_copy_thread(task, thread->name, v->text))
				return TRUE;
			if (strcmp(thread->name, v->text) == 0)
				owner = task;
		}
	}
	if (owner != NULL && owner->repeat > 1) {
		g_autofree char *copy = copy_thread_name(owner, v->text, 0);

		return fail(l, v,
			    "thread %s belongs to task %s, which repeats: name a copy's "
			    "thread, as %s, in %s",
			    v->text, owner->id, copy, what);
	}
	if (named != NULL || may_name_unknown(l))
		return TRUE;
	return fail_reference(l, v, "unknown thread \"%s\" in %s", v->text, what);
}

static gboolean
read_expect_tasks(Loader *l, const Node *v)
{
	gboolean ok = TRUE;

	if (v == NULL || is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, "expect.tasks"))
		return FALSE;
	for (guint i = 0; i < v->entries->len; i++) {
		Entry *e = &g_array_index(v->entries, Entry, i);
		g_autofree char *where = g_strdup_printf("expect.tasks.%s", e->key->text);
		g_autofree char *prefix = g_strdup_printf("tasks.%s", e->key->text);

		if (!go_on(l, &ok, check_expect_task(l, e->key, "expect.tasks") &&
				       read_expect_values(l, e->value, where, prefix,
							  task_expect_keys)))
			return FALSE;
	}
	return ok;
}

static gboolean
parse_state(Loader *l, const Node *v, const char *what, GsThreadState *out)
{
	const char *names[GS_N_THREAD_STATES + 1];
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	if (!expect_kind(l, v, NODE_SCALAR, what))
		return FALSE;
	if (gs_thread_state_from_name(v->text, out))
		return TRUE;
	for (guint i = 0; i < GS_N_THREAD_STATES; i++)
		names[i] = gs_thread_state_name((GsThreadState) i);
	names[GS_N_THREAD_STATES] = NULL;
	list = join_names(names);
	hint = did_you_mean(v->text, names);
	return fail(l, v, "unknown thread state \"%s\"%s (expected %s)", v->text, hint, list);
}

static gboolean
parse_exception(Loader *l, const Node *v, GsException *out)
{
	const char *names[GS_N_EXCEPTIONS];
	g_autofree char *list = NULL;
	g_autofree char *hint = NULL;

	if (!expect_kind(l, v, NODE_SCALAR, "an exception"))
		return FALSE;
	/* "none" is the absence of an exception, never thrown. */
	if (gs_exception_from_name(v->text, out) && *out != GS_EXC_NONE)
		return TRUE;
	for (guint i = 1; i < GS_N_EXCEPTIONS; i++)
		names[i - 1] = gs_exception_name((GsException) i);
	names[GS_N_EXCEPTIONS - 1] = NULL;
	list = join_names(names);
	hint = did_you_mean(v->text, names);
	return fail(l, v, "unknown exception \"%s\"%s (expected %s)", v->text, hint, list);
}

/* A state or a sequence of states. */
static gboolean
read_states(Loader *l, const Node *v, const char *what, GArray *out)
{
	GsThreadState state;
	guint n = v->kind == NODE_SEQ ? v->items->len : 1;
	gboolean ok = TRUE;

	for (guint i = 0; i < n; i++) {
		gboolean good =
			parse_state(l, v->kind == NODE_SEQ ? v->items->pdata[i] : v, what, &state);

		if (good)
			g_array_append_val(out, state);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

static gboolean
read_exceptions(Loader *l, const Node *v, GArray *out)
{
	GsException exc;
	gboolean ok = TRUE;

	if (!expect_kind(l, v, NODE_SEQ, "threw"))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		gboolean good = parse_exception(l, v->items->pdata[i], &exc);

		if (good)
			g_array_append_val(out, exc);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/*
 * never: states and exceptions, one sequence: a name that is a thread state
 * is one the thread must never enter, any other must be an exception it
 * never throws.
 */
static gboolean
read_never(Loader *l, const Node *v, GsExpectThread *et)
{
	gboolean ok = TRUE;

	if (!expect_kind(l, v, NODE_SEQ, "never"))
		return FALSE;
	et->never_in = g_array_new(FALSE, FALSE, sizeof(GsThreadState));
	et->never_threw = g_array_new(FALSE, FALSE, sizeof(GsException));
	for (guint i = 0; i < v->items->len; i++) {
		const Node *item = v->items->pdata[i];
		GsThreadState state;
		GsException exc;
		gboolean good;

		if (item->kind == NODE_SCALAR && gs_thread_state_from_name(item->text, &state)) {
			g_array_append_val(et->never_in, state);
			continue;
		}
		good = parse_exception(l, item, &exc);
		if (good)
			g_array_append_val(et->never_threw, exc);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

static const Field expect_thread_fields[] = {
	OTHER("reached"),
	OTHER("threw"),
	OTHER("never"),
	OTHER("final_state"),
	OTHER("acquired"),
	OTHER("pages"),
	OTHER("leaked"),
	OTHER("values"),
	OTHER("stored"),
	{.key = NULL},
};

/* stored: what the thread's acquire_storage answered, in order (true or false). */
static gboolean
read_stored(Loader *l, const Node *v, GArray **out)
{
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, "stored"))
		return FALSE;
	*out = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (guint i = 0; i < v->items->len; i++) {
		gboolean granted = FALSE;
		gboolean good = convert_bool(l, v->items->pdata[i], "stored", &granted);
		gint64 value = granted;

		if (good)
			g_array_append_val(*out, value);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/*
 * acquired, pages, leaked: what the thread's acquire_execution, allocate_page
 * and clean_up returned, in order: sizes, except page numbers.
 */
static gboolean
read_returned(Loader *l, const Node *v, const char *key, GArray **out)
{
	static const Field page_field = {.key = "pages", .kind = F_COUNT,
					 .max = GS_PAGE_TABLE_SIZE - 1};
	gboolean pages = strcmp(key, "pages") == 0;
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, key))
		return FALSE;
	*out = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (guint i = 0; i < v->items->len; i++) {
		const Node *item = v->items->pdata[i];
		gint64 value = 0;
		guint64 number = 0;
		gboolean good;

		if (pages) {
			good = convert_count(l, &page_field, item, key, GS_PAGE_TABLE_SIZE - 1,
					     &number);
			value = (gint64) number;
		} else {
			good = expect_kind(l, item, NODE_SCALAR, key) &&
			       scalar_quantity(l, item, key, &size_quantity, &value);
		}
		if (good)
			g_array_append_val(*out, value);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/* The spec of the thread an expectation names: as written, a copy's, or a pool thread's. */
static const GsThreadSpec *
expected_thread_spec(Loader *l, const char *name)
{
	for (guint i = 0; i < l->w->tasks->len; i++) {
		const GsTaskSpec *task = l->w->tasks->pdata[i];

		for (guint j = 0; j < task->threads->len; j++) {
			const GsThreadSpec *thread = task->threads->pdata[j];

			if (strcmp(thread->name, name) == 0 ||
			    is_copy_thread(task, thread->name, name))
				return thread;
		}
	}
	for (guint i = 0; i < l->w->pool_threads->len; i++) {
		const GsThreadSpec *thread = l->w->pool_threads->pdata[i];

		if (strcmp(thread->name, name) == 0)
			return thread;
	}
	return NULL;
}

/*
 * The thread's value @key names, with its start in *@start. Only the values
 * it declares have a start: a name its ops use undeclared follows them.
 */
static gboolean
find_thread_value(Loader *l, const GsExpectThread *et, const Node *key, gint64 *start)
{
	const GsThreadSpec *spec = expected_thread_spec(l, et->thread);

	for (guint i = 0; spec != NULL && i < spec->value_starts->len; i++) {
		if (strcmp(spec->values->pdata[i], key->text) == 0) {
			*start = g_array_index(spec->value_starts, gint64, i);
			return TRUE;
		}
	}
	return fail_reference(l, key, "thread %s declares no value \"%s\" in its values",
			      et->thread, key->text);
}

/* One entry of an expectation's values:, NAME: "OP N". */
static gboolean
read_expect_value_of(Loader *l, const Entry *e, GsExpectThread *et)
{
	GsExpectThreadValue x = {.line = e->value->line, .column = e->value->column};
	const char *rest;

	if (!expect_kind(l, e->key, NODE_SCALAR, "a value's name") ||
	    !find_thread_value(l, et, e->key, &x.start) ||
	    !expect_kind(l, e->value, NODE_SCALAR, "values") ||
	    !split_cmp(l, e->value, &x.cmp.op, &rest))
		return FALSE;
	if (!g_ascii_string_to_signed(rest, 10, G_MININT64, G_MAXINT64, &x.cmp.value, NULL))
		return fail(l, e->value, "expect values.%s must be a whole number, not \"%s\"",
			    e->key->text, rest);
	x.name = g_strdup(e->key->text);
	g_array_append_val(et->values, x);
	return TRUE;
}

/* values: {NAME: "OP N", ...}, the thread's values at its end. */
static gboolean
read_expect_values_of(Loader *l, const Node *v, GsExpectThread *et)
{
	gboolean ok = TRUE;

	if (v == NULL)
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, "values"))
		return FALSE;
	et->values = g_array_new(FALSE, TRUE, sizeof(GsExpectThreadValue));
	for (guint i = 0; i < v->entries->len; i++) {
		if (!go_on(l, &ok,
			   read_expect_value_of(l, &g_array_index(v->entries, Entry, i), et)))
			return FALSE;
	}
	return ok;
}

static gboolean
read_expect_thread(Loader *l, const Node *key, const Node *v)
{
	g_autofree char *where = g_strdup_printf("expect.threads.%s", key->text);
	GsExpectThread *et;
	Node *reached, *threw, *never, *final;
	gboolean ok = TRUE;

	if (!check_expect_thread(l, key, "expect.threads") ||
	    !go_on(l, &ok, read_fields(l, v, where, expect_thread_fields, NULL)))
		return FALSE;
	et = g_new0(GsExpectThread, 1);
	et->thread = g_strdup(key->text);
	et->line = key->line;
	et->column = key->column;
	g_ptr_array_add(l->w->expect.threads, et);
	reached = find_value(v, "reached");
	threw = find_value(v, "threw");
	never = find_value(v, "never");
	final = find_value(v, "final_state");
	if (reached != NULL) {
		et->reached = g_array_new(FALSE, FALSE, sizeof(GsThreadState));
		if (!go_on(l, &ok, read_states(l, reached, "reached", et->reached)))
			return FALSE;
	}
	if (threw != NULL) {
		et->threw = g_array_new(FALSE, FALSE, sizeof(GsException));
		if (!go_on(l, &ok, read_exceptions(l, threw, et->threw)))
			return FALSE;
	}
	if (!go_on(l, &ok, never == NULL || read_never(l, never, et)) ||
	    !go_on(l, &ok,
		   read_returned(l, find_value(v, "acquired"), "acquired", &et->acquired)) ||
	    !go_on(l, &ok, read_returned(l, find_value(v, "pages"), "pages", &et->pages)) ||
	    !go_on(l, &ok, read_returned(l, find_value(v, "leaked"), "leaked", &et->leaked)) ||
	    !go_on(l, &ok, read_expect_values_of(l, find_value(v, "values"), et)) ||
	    !go_on(l, &ok, read_stored(l, find_value(v, "stored"), &et->stored)))
		return FALSE;
	et->has_final_state = final != NULL;
	return (final == NULL || parse_state(l, final, "final_state", &et->final_state)) && ok;
}

static gboolean
read_expect_threads(Loader *l, const Node *v)
{
	gboolean ok = TRUE;

	if (v == NULL || is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_MAP, "expect.threads"))
		return FALSE;
	for (guint i = 0; i < v->entries->len; i++) {
		Entry *e = &g_array_index(v->entries, Entry, i);

		if (!go_on(l, &ok, read_expect_thread(l, e->key, e->value)))
			return FALSE;
	}
	return ok;
}

/* An expect.at row's pool: the index is GsExpectAt's pool_storage. */
static const char *const pool_names[] = {"execution", "storage", NULL};

static const Field expect_at_fields[] = {
	FIELD("time", F_DURATION, GsExpectAt, time, .required = TRUE),
	OTHER("thread"),
	OTHER("state"),
	OTHER("task"),
	FIELD("tier", F_ENUM, GsExpectAt, tier, .names = tier_names),
	OTHER("used"),
	OTHER("charged"),
	OTHER("available"),
	OTHER("max_memory"),
	OTHER("peak_charged"),
	OTHER("reserved"),
	OTHER("reservations"),
	OTHER("reservation"),
	OTHER("size"),
	OTHER("allocated"),
	OTHER("peak"),
	OTHER("device"),
	OTHER("pinned"),
	OTHER("non_pinned"),
	OTHER("execution"),
	OTHER("consumer"),
	FIELD("since", F_DURATION, GsExpectAt, since),
	OTHER("retries"),
	OTHER("splits"),
	OTHER("max_gpu"),
	OTHER("lost"),
	FIELD("pool", F_ENUM, GsExpectAt, pool_storage, .names = pool_names),
	FIELD("mode", F_ENUM, GsExpectAt, mode, .names = memory_mode_names),
	OTHER("free"),
	OTHER("evict_asked"),
	OTHER("evicted"),
	{.key = NULL},
};

/* What an expect.at row may read of a tier, by GsTierMeasure (the last two: the host's pools). */
static const char *const tier_measures[] = {"used",	    "charged",	"available",
					    "max_memory",   "peak_charged", "reserved",
					    "reservations", "pinned",	"non_pinned"};

/* What it may read of a thread's reservation, by GsReservationMeasure. */
static const char *const reservation_measures[] = {"size", "allocated", "peak", "available",
						   "device"};

/* The first of a reservation's measures that @v names, available aside (a tier's too), or NULL. */
static Entry *
find_reservation_measure(const Node *v)
{
	for (guint m = 0; m < G_N_ELEMENTS(reservation_measures); m++) {
		Entry *e = find_entry(v, reservation_measures[m]);

		if (e != NULL && m != GS_RES_AVAILABLE)
			return e;
	}
	return NULL;
}

/* The first of a tier's measures that @v names, or NULL. */
static Entry *
find_tier_measure(const Node *v)
{
	for (guint m = 0; m < G_N_ELEMENTS(tier_measures); m++) {
		Entry *e = find_entry(v, tier_measures[m]);

		if (e != NULL)
			return e;
	}
	return NULL;
}

static gboolean
read_at_thread(Loader *l, const Node *v, GsExpectAt *at)
{
	const Node *thread = find_value(v, "thread");
	const Node *state = find_value(v, "state");
	Entry *bytes = find_tier_measure(v);
	gboolean of_tier = bytes != NULL;

	if (bytes == NULL)
		bytes = find_entry(v, "execution");
	if (bytes == NULL)
		bytes = find_entry(v, "consumer");
	if (bytes != NULL)
		return fail(l, bytes->key, "%s is for a %s, not a thread", bytes->key->text,
			    of_tier ? "tier" : "task");
	if (state == NULL)
		return fail(l, v, "an expect.at check of a thread needs its state");
	if (!expect_kind(l, thread, NODE_SCALAR, "expect.at thread"))
		return FALSE;
	if (!check_expect_thread(l, thread, "expect.at"))
		return FALSE;
	at->thread = g_strdup(thread->text);
	return parse_state(l, state, "expect.at state", &at->state);
}

/* A number of an expect.at check, "3" or "<= 3", under @key. */
static gboolean
read_at_cmp(Loader *l, const Entry *key, ValueKind kind, GsCmp *cmp)
{
	const char *rest;

	return expect_kind(l, key->value, NODE_SCALAR, key->key->text) &&
	       split_cmp(l, key->value, &cmp->op, &rest) &&
	       parse_expect_number(l, key->value, key->key->text, rest, kind, &cmp->value);
}

/* The bytes of an expect.at check, "5MiB" or "<= 5MiB", under @key. */
static gboolean
read_at_bytes(Loader *l, const Entry *key, GsCmp *bytes)
{
	return read_at_cmp(l, key, VK_SIZE, bytes);
}

/* A task's bytes in a tier: the ones its threads hold there, so used, not charged. */
static gboolean
read_at_task(Loader *l, const Entry *task, GsExpectAt *at)
{
	if (!expect_kind(l, task->value, NODE_SCALAR, "expect.at task") ||
	    !check_expect_task(l, task->value, "expect.at"))
		return FALSE;
	at->task = g_strdup(task->value->text);
	return TRUE;
}

static gboolean
read_at_tier(Loader *l, const Node *v, GsExpectAt *at)
{
	Entry *state = find_entry(v, "state");
	Entry *found = NULL;

	if (state != NULL)
		return fail(l, state->key, "state is for a thread, not a tier");
	for (guint m = 0; m < G_N_ELEMENTS(tier_measures); m++) {
		Entry *e = find_entry(v, tier_measures[m]);

		if (e == NULL)
			continue;
		if (found != NULL)
			return fail(l, e->key, "an expect.at check of a tier reads one of used, "
				    "charged, available, max_memory, peak_charged, reserved, "
				    "reservations, pinned and non_pinned, not %s and %s",
				    found->key->text, e->key->text);
		found = e;
		at->measure = (GsTierMeasure) m;
	}
	if (found == NULL)
		return fail(l, v, "an expect.at check of a tier needs used, charged, available, "
			    "max_memory, peak_charged, reserved, reservations, pinned or non_pinned");
	if (gs_tier_measure_is_pool(at->measure) && at->tier != GS_TIER_HOST)
		return fail(l, found->key, "%s is a pool of host memory: it needs tier: host",
			    found->key->text);
	if (at->task != NULL && at->measure != GS_MEASURE_USED &&
	    !gs_tier_measure_is_pool(at->measure))
		return fail(l, found->key, "a task's bytes are the ones it uses: used, pinned or "
			    "non_pinned, not %s", found->key->text);
	at->has_tier = TRUE;
	if (at->measure == GS_MEASURE_RESERVATIONS)
		return read_at_cmp(l, found, VK_COUNT, &at->bytes);
	return read_at_bytes(l, found, &at->bytes);
}

/* Fails unless the thread @thread names (when known) has a reservation called @name. */
static gboolean
check_thread_reservation(Loader *l, const Node *thread, const Node *name)
{
	const GsThreadSpec *spec = expected_thread_spec(l, thread->text);

	if (spec == NULL)
		return TRUE; /* a generated task's thread: its reservations are made later */
	for (guint i = 0; i < spec->reservations->len; i++) {
		if (strcmp(spec->reservations->pdata[i], name->text) == 0)
			return TRUE;
	}
	return fail_reference(l, name,
			      "thread %s has no reservation \"%s\": no reserve in it names it",
			      thread->text, name->text);
}

/*
 * {time, thread, reservation, size | allocated | peak | available | device}:
 * the thread's reservation by that name, as cuCascade sees the stream it is
 * attached to; one not held (never, or released) reads 0 bytes and device
 * -1, and its available is the space's. tier says which space that is when
 * none is held (default gpu).
 */
static gboolean
read_at_reservation(Loader *l, const Node *v, GsExpectAt *at)
{
	const Node *name = find_value(v, "reservation");
	Entry *found = NULL, *other = find_entry(v, "state");

	if (other == NULL)
		other = find_entry(v, "task");
	for (guint m = 0; other == NULL && m < G_N_ELEMENTS(tier_measures); m++) {
		if (m != GS_MEASURE_AVAILABLE)
			other = find_entry(v, tier_measures[m]);
	}
	if (other != NULL)
		return fail(l, other->key, "an expect.at check of a reservation takes no %s",
			    other->key->text);
	for (guint m = 0; m < G_N_ELEMENTS(reservation_measures); m++) {
		Entry *e = find_entry(v, reservation_measures[m]);

		if (e == NULL)
			continue;
		if (found != NULL)
			return fail(l, e->key, "an expect.at check of a reservation reads one of "
				    "size, allocated, peak, available and device, not %s and %s",
				    found->key->text, e->key->text);
		found = e;
		at->res_measure = (GsReservationMeasure) m;
	}
	if (found == NULL)
		return fail(l, v, "an expect.at check of a reservation needs size, allocated, peak, "
			    "available or device");
	if (at->res_measure == GS_RES_AVAILABLE && at->tier == GS_TIER_GPU && l->w->gpu.devices > 1)
		return fail(l, found->key, "a reservation's available memory is read with one GPU "
			    "(the run's samples hold the GPUs together)");
	if (!expect_kind(l, name, NODE_SCALAR, "expect.at reservation") ||
	    !check_expect_thread(l, find_value(v, "thread"), "expect.at") ||
	    !check_thread_reservation(l, find_value(v, "thread"), name))
		return FALSE;
	at->thread = g_strdup(find_value(v, "thread")->text);
	at->reservation = g_strdup(name->text);
	if (at->res_measure == GS_RES_DEVICE)
		return read_at_cmp(l, found, VK_COUNT, &at->bytes);
	return read_at_bytes(l, found, &at->bytes);
}

/*
 * A task's Spark memory: {task, execution: BYTES} is what its task memory
 * manager holds (getMemoryConsumptionForThisTask), {task, consumer, used}
 * what one of its consumers holds (getUsed).
 */
static gboolean
read_at_execution(Loader *l, const Node *v, GsExpectAt *at)
{
	Entry *execution = find_entry(v, "execution");
	Entry *consumer = find_entry(v, "consumer");
	Entry *used = find_entry(v, "used");
	Entry *other = find_entry(v, "tier");

	if (other == NULL)
		other = find_entry(v, "charged");
	if (other == NULL)
		other = find_entry(v, "available");
	if (other == NULL)
		other = find_entry(v, "max_memory");
	if (other == NULL)
		other = find_entry(v, "pinned");
	if (other == NULL)
		other = find_entry(v, "non_pinned");
	if (other == NULL)
		other = find_entry(v, "state");
	if (other == NULL && execution != NULL)
		other = consumer != NULL ? consumer : used;
	if (other != NULL)
		return fail(l, other->key, "an expect.at check of a task's %s takes no %s",
			    execution != NULL ? "execution memory" : "consumer", other->key->text);
	if (consumer != NULL) {
		if (!expect_kind(l, consumer->value, NODE_SCALAR, "expect.at consumer"))
			return FALSE;
		if (used == NULL)
			return fail(l, v, "an expect.at check of a consumer needs its used bytes");
		at->consumer = g_strdup(consumer->value->text);
	}
	at->execution = execution != NULL;
	return read_at_bytes(l, execution != NULL ? execution : used, &at->bytes);
}

/* One "N" or ">= N" of a task's counts: a count, bytes for max_gpu, a duration for lost. */
static gboolean
read_at_count(Loader *l, const Node *v, const char *key, gboolean *has, GsCmp *cmp)
{
	const Node *value = find_value(v, key);
	const char *rest;
	ValueKind kind = strcmp(key, "max_gpu") == 0 || strcmp(key, "evict_asked") == 0 ||
					 strcmp(key, "evicted") == 0
				 ? VK_SIZE
			 : strcmp(key, "lost") == 0  ? VK_NS
						     : VK_COUNT;

	if (value == NULL)
		return TRUE;
	*has = TRUE;
	return expect_kind(l, value, NODE_SCALAR, key) && split_cmp(l, value, &cmp->op, &rest) &&
	       parse_expect_number(l, value, key, rest, kind, &cmp->value);
}

/*
 * {time, task, since, retries, splits, max_gpu, lost}: what the task's
 * threads did in (since, time]: retry and split-and-retry throws, the most
 * GPU bytes they held right after an allocation, and the running time the
 * throws threw away (RmmSpark's getAndResetNumRetryThrow,
 * getAndResetNumSplitRetryThrow, getAndResetGpuMaxMemoryAllocated and
 * getAndResetComputeTimeLostToRetryNs between two calls).
 */
static gboolean
read_at_window(Loader *l, const Node *v, GsExpectAt *at)
{
	Entry *other = find_entry(v, "tier");

	if (other == NULL)
		other = find_tier_measure(v);
	if (other == NULL)
		other = find_entry(v, "execution");
	if (other == NULL)
		other = find_entry(v, "consumer");
	if (other != NULL)
		return fail(l, other->key, "an expect.at check of a task's counts takes no %s",
			    other->key->text);
	if (at->since > at->time)
		return fail(l, find_value(v, "since"), "expect.at since must not be after its time");
	return read_at_count(l, v, "retries", &at->has_retries, &at->retries) &&
	       read_at_count(l, v, "splits", &at->has_splits, &at->splits) &&
	       read_at_count(l, v, "max_gpu", &at->has_max_gpu, &at->max_gpu) &&
	       read_at_count(l, v, "lost", &at->has_lost, &at->lost);
}

static gboolean
has_window_key(const Node *v)
{
	return find_entry(v, "retries") != NULL || find_entry(v, "splits") != NULL ||
	       find_entry(v, "max_gpu") != NULL || find_entry(v, "lost") != NULL;
}

/* Keys of other checks, which a check of a pool cannot take. */
static const char *const not_pool_keys[] = {"task", "tier", "state", "charged", "available",
					     "max_memory", "execution", "consumer", "retries",
					     "splits", "max_gpu", "lost"};

/* The evictions of a window: {time, since, pool: storage, evict_asked, evicted}. */
static gboolean
read_at_evictions(Loader *l, const Node *v, GsExpectAt *at)
{
	if (!at->pool_storage)
		return fail(l, find_value(v, "pool"), "evictions are storage's: pool storage");
	if (find_entry(v, "used") != NULL || find_entry(v, "free") != NULL)
		return fail(l, v, "an expect.at check of evictions reads evict_asked or evicted, "
			    "not used or free");
	if (at->since > at->time)
		return fail(l, find_value(v, "since"), "expect.at since must not be after its time");
	return read_at_count(l, v, "evict_asked", &at->has_evict_asked, &at->evict_asked) &&
	       read_at_count(l, v, "evicted", &at->has_evicted, &at->evicted);
}

/*
 * A memory manager's pool, one mode or both together: {time, pool, used}
 * or {time, pool, free} (storageMemoryUsed, executionMemoryUsed, a pool's
 * memoryFree); with since, storage's evictions in (since, time].
 */
static gboolean
read_at_pool(Loader *l, const Node *v, GsExpectAt *at)
{
	Entry *used = find_entry(v, "used");
	Entry *free_bytes = find_entry(v, "free");

	for (guint i = 0; i < G_N_ELEMENTS(not_pool_keys); i++) {
		Entry *e = find_entry(v, not_pool_keys[i]);

		if (e != NULL)
			return fail(l, e->key, "an expect.at check of a pool takes no %s",
				    e->key->text);
	}
	at->has_pool = TRUE;
	at->all_modes = find_entry(v, "mode") == NULL;
	if (find_entry(v, "evict_asked") != NULL || find_entry(v, "evicted") != NULL ||
	    find_entry(v, "since") != NULL)
		return read_at_evictions(l, v, at);
	if ((used == NULL) == (free_bytes == NULL))
		return fail(l, v, "an expect.at check of a pool reads used or free (or, with since, "
			    "evict_asked and evicted)");
	at->pool_free = free_bytes != NULL;
	return read_at_bytes(l, used != NULL ? used : free_bytes, &at->bytes);
}

static gboolean
read_expect_at_item(Loader *l, const Node *v)
{
	GsExpectAt *at = g_new0(GsExpectAt, 1);
	Entry *thread, *tier, *task;

	g_ptr_array_add(l->w->expect.at, at);
	at->line = v->line;
	at->column = v->column;
	if (!read_fields(l, v, "expect.at", expect_at_fields, at))
		return FALSE;
	thread = find_entry(v, "thread");
	tier = find_entry(v, "tier");
	task = find_entry(v, "task");
	if (find_entry(v, "reservation") != NULL) {
		if (thread == NULL)
			return fail(l, v, "an expect.at check of a reservation names its thread");
		return read_at_reservation(l, v, at);
	}
	if (find_reservation_measure(v) != NULL)
		return fail(l, find_reservation_measure(v)->key,
			    "%s is for a thread's reservation (reservation: NAME)",
			    find_reservation_measure(v)->key->text);
	if (thread != NULL && tier != NULL)
		return fail(l, tier->key, "an expect.at check names a thread or a tier, not both");
	if (thread != NULL && task != NULL)
		return fail(l, task->key, "an expect.at check names a thread or a task, not both");
	if (thread != NULL && find_entry(v, "pool") != NULL)
		return fail(l, find_entry(v, "pool")->key,
			    "an expect.at check names a thread or a pool, not both");
	if (thread != NULL)
		return read_at_thread(l, v, at);
	if (find_entry(v, "pool") != NULL)
		return read_at_pool(l, v, at);
	for (const char *const *k = (const char *const[]){"mode", "free", "evict_asked", "evicted",
							   NULL}; *k != NULL; k++) {
		if (find_entry(v, *k) != NULL)
			return fail(l, find_entry(v, *k)->key, "%s is for a check of a pool", *k);
	}
	if (has_window_key(v)) {
		if (task == NULL)
			return fail(l, v, "an expect.at check of retries, splits, max_gpu or lost "
				    "names its task");
		return read_at_task(l, task, at) && read_at_window(l, v, at);
	}
	if (find_entry(v, "since") != NULL)
		return fail(l, find_entry(v, "since")->key,
			    "since is for a task's retries, splits, max_gpu or lost");
	if (find_entry(v, "execution") != NULL || find_entry(v, "consumer") != NULL) {
		if (task == NULL)
			return fail(l, v, "an expect.at check of execution memory or a consumer "
				    "names its task");
		return read_at_task(l, task, at) && read_at_execution(l, v, at);
	}
	if (task != NULL && tier == NULL)
		return fail(l, task->key, "an expect.at check of a task needs its tier and used bytes");
	if (task != NULL && !read_at_task(l, task, at))
		return FALSE;
	if (tier != NULL)
		return read_at_tier(l, v, at);
	return fail(l, v, "an expect.at check needs thread and state, a thread's reservation, or "
		    "tier and one of its measures");
}

static gboolean
read_expect_at(Loader *l, const Node *v)
{
	gboolean ok = TRUE;

	if (v == NULL || is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, "expect.at"))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		if (!go_on(l, &ok, read_expect_at_item(l, v->items->pdata[i])))
			return FALSE;
	}
	return ok;
}

static const Field expect_fields[] = {
	OTHER("outcome", .names = outcome_names),
	OTHER("makespan"),
	OTHER("makespan_ns"),
	OTHER("totals", .values = totals_keys),
	OTHER("tasks", .values = task_expect_keys, .each = "TASK"),
	OTHER("threads", .sub = expect_thread_fields, .each = "THREAD"),
	OTHER("at", .items = expect_at_fields),
	{.key = NULL},
};

static gboolean
read_expect(Loader *l, const Node *v, const char *path, gpointer base)
{
	Node *outcome = find_value(v, "outcome");
	Node *makespan = find_value(v, "makespan");
	Node *makespan_ns = find_value(v, "makespan_ns");
	gboolean ok = TRUE;

	if (!go_on(l, &ok, read_fields(l, v, path, expect_fields, NULL)) ||
	    !go_on(l, &ok,
		   outcome == NULL || add_expect_value(l, "outcome", VK_OUTCOME, outcome)) ||
	    !go_on(l, &ok,
		   makespan == NULL || add_expect_value(l, "makespan", VK_DURATION, makespan)) ||
	    !go_on(l, &ok, makespan_ns == NULL ||
				   add_expect_value(l, "makespan_ns", VK_NS, makespan_ns)) ||
	    !go_on(l, &ok, read_expect_values(l, find_value(v, "totals"), "expect.totals",
					      "totals", totals_keys)) ||
	    !go_on(l, &ok, read_expect_tasks(l, find_value(v, "tasks"))) ||
	    !go_on(l, &ok, read_expect_threads(l, find_value(v, "threads"))))
		return FALSE;
	return read_expect_at(l, find_value(v, "at")) && ok;
}

/* ==== the top level (SPEC §3.2) ==== */

static gboolean
read_version(Loader *l, const Node *v, const char *path, gpointer base)
{
	if (!expect_kind(l, v, NODE_SCALAR, "gpusim"))
		return FALSE;
	if (strcmp(v->text, "1") != 0)
		return fail(l, v, "unsupported format version \"%s\": this gpusim reads gpusim: 1",
			    v->text);
	return TRUE;
}

static gboolean
read_variants(Loader *l, const Node *v, const char *path, gpointer base)
{
	return collect_variants(l, v, l->w->variant_names);
}

/* include: is resolved while reading files; here it can only come from --set. */
static gboolean
read_late_include(Loader *l, const Node *v, const char *path, gpointer base)
{
	return fail(l, v, "include works only in a file, not in a variant or --set");
}

/* schedule: [N, ...]: the choices a run takes, each a whole number from 0. */
static gboolean
read_schedule(Loader *l, const Node *v, const char *path, gpointer base)
{
	GArray *schedule = l->w->schedule;

	g_array_set_size(schedule, 0);
	if (is_null(v))
		return TRUE;
	if (!expect_kind(l, v, NODE_SEQ, "schedule"))
		return FALSE;
	for (guint i = 0; i < v->items->len; i++) {
		const Node *item = v->items->pdata[i];
		guint64 choice;

		if (!expect_kind(l, item, NODE_SCALAR, "a choice of schedule"))
			return FALSE;
		if (!g_ascii_string_to_unsigned(item->text, 10, 0, G_MAXUINT32, &choice, NULL))
			return fail(l, item, "a choice of schedule is a whole number from 0, not "
					     "\"%s\"", item->text);
		g_array_append_val(schedule, (guint){(guint) choice});
	}
	return TRUE;
}

static const Field root_fields[] = {
	CUSTOM("gpusim", read_version, .required = TRUE),
	FIELD("name", F_STRING, GsWorkload, name, .required = TRUE, .min = 1),
	FIELD("description", F_STRING, GsWorkload, description),
	FIELD("seed", F_SEED, GsWorkload, seed),
	CUSTOM("include", read_late_include),
	SUBMAP("memory", memory_fields, .required = TRUE),
	SUBMAP("links", links_fields),
	SUBMAP("executor", executor_fields),
	SUBMAP("policy", policy_fields),
	CUSTOM("variants", read_variants),
	CUSTOM("tasks", read_tasks, .items = task_fields),
	CUSTOM("pool_threads", read_pool_threads, .items = pool_thread_fields),
	CUSTOM("generate", read_generate, .sub = generate_fields),
	CUSTOM("expect", read_expect, .sub = expect_fields),
	CUSTOM("schedule", read_schedule, .settable = TRUE),
	FIELD("schedule_jitter", F_FRACTION, GsWorkload, schedule_jitter),
	{.key = NULL},
};

/* ---- the keys --set takes, and every key ---- */

/* The ops that take a map, by the table that reads it. */
static const struct {
	GsOpKind kind;
	const Field *fields;
} op_tables[] = {
	{GS_OP_ALLOC, alloc_fields},
	{GS_OP_FREE, free_fields},
	{GS_OP_COMPUTE, compute_fields},
	{GS_OP_RETRY, retry_fields},
	{GS_OP_RESERVE, reserve_fields},
	{GS_OP_BORROW_STREAM, borrow_fields},
	{GS_OP_POOL, pool_fields},
	{GS_OP_INJECT, inject_fields},
	{GS_OP_ACQUIRE_EXECUTION, execution_fields},
	{GS_OP_RELEASE_EXECUTION, execution_fields},
	{GS_OP_ALLOCATE_PAGE, page_fields},
	{GS_OP_ACQUIRE_STORAGE, storage_fields},
	{GS_OP_RELEASE_STORAGE, release_storage_fields},
	{GS_OP_REPEAT, repeat_fields},
	{GS_OP_VALUE, value_fields},
};

/* "KEY", or "KEY<TAB>WORD WORD..." for a key that takes one of some words. */
static char *
key_line(const Field *f, const char *key)
{
	g_autofree char *words = NULL;

	if (f->kind == F_BOOL)
		return g_strdup_printf("%s\ttrue false", key);
	if (f->names == NULL)
		return g_strdup(key);
	words = g_strjoinv(" ", (char **) f->names);
	return g_strdup_printf("%s\t%s", key, words);
}

/*
 * Appends the keys of @fields under @prefix to @out: with @all every key,
 * the maps and sequences too (a sequence's items as KEY[].ITEM_KEY, a map of
 * names as KEY.TASK.ITEM_KEY); else only the values --set can reach.
 */
static void
list_keys(const Field *fields, const char *prefix, gboolean all, GPtrArray *out)
{
	for (const Field *f = fields; f->key != NULL; f++) {
		g_autofree char *key = field_path(prefix, f->key);
		g_autofree char *inner = f->each != NULL ? field_path(key, f->each) : g_strdup(key);
		g_autofree char *items = g_strdup_printf("%s[]", key);

		if (all || f->settable || (f->sub == NULL && f->kind != F_CUSTOM && f->kind != F_OTHER))
			g_ptr_array_add(out, key_line(f, key));
		if (!all && f->each != NULL)
			continue;
		if (f->sub != NULL)
			list_keys(f->sub, inner, all, out);
		for (const ExpectKey *k = f->values; all && k != NULL && k->key != NULL; k++)
			g_ptr_array_add(out, field_path(inner, k->key));
		if (all && f->items != NULL)
			list_keys(f->items, items, all, out);
	}
}

char **
gs_loader_set_keys(void)
{
	GPtrArray *out = g_ptr_array_new();

	list_keys(root_fields, "", FALSE, out);
	g_ptr_array_add(out, NULL);
	return (char **) g_ptr_array_free(out, FALSE);
}

/* The op words, each followed by the keys of its map (alloc.size), if it takes one. */
static void
list_op_keys(GPtrArray *out)
{
	for (guint i = 0; i < GS_N_OP_KINDS; i++) {
		const char *name = gs_op_kind_name((GsOpKind) i);

		g_ptr_array_add(out, g_strdup(name));
		for (guint t = 0; t < G_N_ELEMENTS(op_tables); t++) {
			if (op_tables[t].kind == (GsOpKind) i)
				list_keys(op_tables[t].fields, name, TRUE, out);
		}
	}
}

char **
gs_loader_format_keys(void)
{
	GPtrArray *out = g_ptr_array_new();

	list_keys(root_fields, "", TRUE, out);
	list_op_keys(out);
	g_ptr_array_add(out, NULL);
	return (char **) g_ptr_array_free(out, FALSE);
}

static gboolean
fail_run_size(Loader *l, const Node *v, const char *what, guint64 threads)
{
	return fail(l, v,
		    "%s makes the run's threads %" G_GUINT64_FORMAT ", more than the %u a run "
		    "can hold", what, threads, GS_MAX_THREADS);
}

/* Each field is within bounds; their product over tasks and copies must be too. */
static gboolean
check_run_size(Loader *l, const Node *root)
{
	const GsWorkload *w = l->w;
	guint64 threads = w->pool_threads->len;
	const Node *generate = find_value(root, "generate");

	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];
		const Node *id = l->task_nodes->pdata[i];
		g_autofree char *what = g_strdup_printf("task %s (%u copies of %u threads)",
							 task->id, MAX(task->repeat, 1),
							 MAX(task->threads->len, 1));

		threads += (guint64) MAX(task->repeat, 1) * MAX(task->threads->len, 1);
		if (threads > GS_MAX_THREADS)
			return fail_run_size(l, id, what, threads);
	}
	if (!w->generate.enabled)
		return TRUE;
	threads += (guint64) w->generate.tasks * MAX(w->generate.threads_per_task, 1) +
		   w->generate.shuffle_threads;
	if (threads > GS_MAX_THREADS)
		return fail_run_size(l, generate, "generate", threads);
	return TRUE;
}

/*
 * One name of a free of @owner's buffers, as an index into @owner's buffer
 * names; the buffer is given away: it outlives @owner.
 */
static gboolean
resolve_foreign_name(Loader *l, GsThreadSpec *owner, const Node *v, GsNames *out)
{
	if (!expect_kind(l, v, NODE_SCALAR, "free.buf"))
		return FALSE;
	for (guint i = 0; i < owner->buffers->len; i++) {
		if (strcmp(owner->buffers->pdata[i], v->text) == 0) {
			gs_names_append(out, i);
			if (owner->given_away == NULL)
				owner->given_away = g_array_new(FALSE, TRUE, sizeof(gboolean));
			if (i >= owner->given_away->len)
				g_array_set_size(owner->given_away, owner->buffers->len);
			g_array_index(owner->given_away, gboolean, i) = TRUE;
			return TRUE;
		}
	}
	return fail_reference(l, v, "undefined buffer \"%s\": no alloc in thread %s names it",
			      v->text, owner->name);
}

/* @op frees another thread's buffers: its names become that thread's indices. */
static gboolean
resolve_foreign_free(Loader *l, GsOp *op)
{
	const ForeignFree *f = l->foreign_frees->pdata[gs_names_data(&op->free.bufs)[0]];
	const GsTaskSpec *task;
	GsThreadSpec *owner = gs_workload_thread(l->w, f->thread->text, &task);
	gboolean ok = TRUE;

	gs_names_clear(&op->free.bufs);
	if (owner == NULL)
		return fail_reference(l, f->thread, "unknown thread \"%s\" in free.thread",
				      f->thread->text);
	if (task != NULL && task->repeat > 1)
		return fail(l, f->thread,
			    "free.thread %s is a thread of task %s, which repeats: a free names one "
			    "thread", owner->name, task->id);
	if (f->bufs->kind != NODE_SEQ)
		return resolve_foreign_name(l, owner, f->bufs, &op->free.bufs);
	for (guint i = 0; i < f->bufs->items->len; i++) {
		if (!go_on(l, &ok, resolve_foreign_name(l, owner, f->bufs->items->pdata[i],
							&op->free.bufs)))
			return FALSE;
	}
	return ok;
}

static gboolean
resolve_foreign_in(Loader *l, GArray *ops)
{
	gboolean ok = TRUE;

	for (guint i = 0; ops != NULL && i < ops->len; i++) {
		GsOp *op = &g_array_index(ops, GsOp, i);
		gboolean good = TRUE;

		if (op->kind == GS_OP_FREE && op->free.thread != NULL)
			good = resolve_foreign_free(l, op);
		else if (op->kind == GS_OP_RETRY)
			good = resolve_foreign_in(l, op->retry.ops);
		else if (op->kind == GS_OP_REPEAT)
			good = resolve_foreign_in(l, op->repeat.ops);
		if (!go_on(l, &ok, good))
			return FALSE;
	}
	return ok;
}

/*
 * Every free of another thread's buffers, now that every thread is read
 * (each read cleanly or not: only ops read cleanly are in a thread's ops).
 */
static gboolean
resolve_foreign_frees(Loader *l)
{
	gboolean ok = TRUE;

	if (l->foreign_frees->len == 0)
		return TRUE;
	for (guint i = 0; i < l->w->tasks->len; i++) {
		const GsTaskSpec *task = l->w->tasks->pdata[i];

		for (guint j = 0; j < task->threads->len; j++) {
			if (!go_on(l, &ok, resolve_foreign_in(l, ((GsThreadSpec *)
								   task->threads->pdata[j])->ops)))
				return FALSE;
		}
	}
	for (guint i = 0; i < l->w->pool_threads->len; i++) {
		if (!go_on(l, &ok, resolve_foreign_in(l, ((GsThreadSpec *)
							   l->w->pool_threads->pdata[i])->ops)))
			return FALSE;
	}
	return ok;
}

/* The version first: a file of another version may well have other keys. */
static gboolean
convert_root(Loader *l, const Node *root)
{
	Node *version = find_value(root, "gpusim");
	gboolean ok;

	if (version == NULL)
		return fail(l, root,
			    "missing required key \"gpusim\" (the format version: gpusim: 1)");
	if (!read_version(l, version, "gpusim", l->w))
		return FALSE;
	ok = read_fields(l, root, "", root_fields, l->w);
	ok = check_run_size(l, root) && ok;
	return resolve_foreign_frees(l) && ok;
}

/* ==== the loader ==== */

static void
loader_init(Loader *l, GError **error)
{
	memset(l, 0, sizeof *l);
	l->nodes = g_ptr_array_new_with_free_func(node_free);
	l->files = g_ptr_array_new_with_free_func(g_free);
	l->including = g_ptr_array_new_with_free_func(g_free);
	l->error = error;
	l->errors = g_ptr_array_new_with_free_func(load_error_free);
	l->task_ids = g_hash_table_new(g_str_hash, g_str_equal);
	l->task_nodes = g_ptr_array_new();
	l->thread_names = g_hash_table_new(g_str_hash, g_str_equal);
	l->foreign_frees = g_ptr_array_new_with_free_func(g_free);
}

/* Reports the errors found (report_errors()) and frees what loading made. */
static void
loader_finish(Loader *l)
{
	report_errors(l);
	g_ptr_array_unref(l->errors);
	g_clear_pointer(&l->stopped, load_error_free);
	g_ptr_array_unref(l->nodes);
	g_ptr_array_unref(l->files);
	g_ptr_array_unref(l->including);
	g_hash_table_unref(l->task_ids);
	g_ptr_array_unref(l->task_nodes);
	g_hash_table_unref(l->thread_names);
	g_ptr_array_unref(l->foreign_frees);
	gs_workload_free(l->w);
}

static gboolean
apply_overrides(Loader *l, Node **root, const char *variant, const char *const *sets)
{
	if (variant != NULL && !apply_variant(l, root, variant))
		return FALSE;
	for (guint i = 0; sets != NULL && sets[i] != NULL; i++) {
		if (!apply_set(l, root, sets[i]))
			return FALSE;
	}
	return TRUE;
}

/* The workload of the merged tree @root of the scenario @path; NULL on error. */
static GsWorkload *
workload_from_tree(Loader *l, const char *path, Node *root, const char *variant,
		   const char *const *sets)
{
	GsWorkload *w = NULL;

	if (!apply_overrides(l, &root, variant, sets))
		return NULL;
	l->w = gs_workload_new();
	l->w->file = g_strdup(path);
	l->w->variant = g_strdup(variant);
	l->keep_going = TRUE;
	if (convert_root(l, root) && l->errors->len == 0) {
		w = l->w;
		l->w = NULL;
	}
	return w;
}

GsWorkload *
gs_loader_load(const char *path, const char *variant, const char *const *sets, GError **error)
{
	Loader l;
	Node *root;
	GsWorkload *w = NULL;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	loader_init(&l, error);
	if (load_tree(&l, path, NULL, &root))
		w = workload_from_tree(&l, path, root, variant, sets);
	loader_finish(&l);
	return w;
}

/* The calibration at @path: a map of memory: and links: alone, includes merged. */
static gboolean
load_device(Loader *l, const char *path, Node **out)
{
	static const char *const keys[] = {"memory", "links", NULL};
	gboolean ok = TRUE;

	if (!load_tree(l, path, NULL, out))
		return FALSE;
	for (guint i = 0; i < (*out)->entries->len; i++) {
		const Node *key = g_array_index((*out)->entries, Entry, i).key;

		if (!g_strv_contains(keys, key->text))
			ok = fail(l, key, "a device file holds memory: and links: only, not %s:",
				  key->text);
	}
	return ok;
}

GsWorkload *
gs_loader_load_device(const char *path, const char *device, const char *variant,
		      const char *const *sets, GError **error)
{
	Loader l;
	Node *root, *over;
	GsWorkload *w = NULL;

	g_return_val_if_fail(path != NULL && device != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	loader_init(&l, error);
	if (load_tree(&l, path, NULL, &root) && load_device(&l, device, &over))
		w = workload_from_tree(&l, path, merge(&l, root, over), variant, sets);
	loader_finish(&l);
	return w;
}

GsWorkload *
gs_loader_load_text(const char *name, const char *text, gsize len, const char *variant,
		    const char *const *sets, GError **error)
{
	Loader l;
	Node *file, *root;
	GsWorkload *w = NULL;

	g_return_val_if_fail(name != NULL && (text != NULL || len == 0), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	loader_init(&l, error);
	if (parse_file_text(&l, name, text != NULL ? text : "", len, &file) &&
	    resolve_root(&l, name, NULL, file, &root))
		w = workload_from_tree(&l, name, root, variant, sets);
	loader_finish(&l);
	return w;
}

void
gs_loader_error_in_variant(GError *error, const char *variant)
{
	g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
	GString *message = g_string_new(NULL);

	for (guint i = 0; lines[i] != NULL; i++)
		g_string_append_printf(message, "%s%s (with variant %s)", i > 0 ? "\n" : "",
				       lines[i], variant);
	g_free(error->message);
	error->message = g_string_free(message, FALSE);
}

gboolean
gs_loader_parse_duration(const char *option, const char *text, GsTime *out, GError **error)
{
	Loader l;
	char *file = g_strdup_printf("%s=%s", option, text);
	gboolean ok;

	g_return_val_if_fail(option != NULL && text != NULL && out != NULL, FALSE);
	loader_init(&l, error);
	g_ptr_array_add(l.files, file);
	ok = parse_quantity(&l, scalar_new(&l, file, 1, (guint) strlen(option) + 2, text), text,
			    &duration_quantity, out);
	loader_finish(&l);
	return ok;
}

GPtrArray *
gs_loader_variant_names(const char *path, GError **error)
{
	Loader l;
	Node *root;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	Node *variants;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	loader_init(&l, error);
	if (!load_tree(&l, path, NULL, &root) ||
	    ((variants = find_value(root, "variants")) != NULL &&
	     !collect_variants(&l, variants, names)))
		g_clear_pointer(&names, g_ptr_array_unref);
	loader_finish(&l);
	return names;
}

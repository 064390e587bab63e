/*
 * gpusim tests: shared helpers (see testlib.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static void
seen_state(gpointer data, GsThreadId thread, GsThreadState from, GsThreadState to,
	   GsThreadEvent cause, GsTime now)
{
	TlSeen s = {.kind = TL_SEEN_STATE, .thread = thread, .from = from, .to = to,
		    .cause = cause, .now = now};

	g_array_append_val(((TlEngine *) data)->seen, s);
}

static void
seen_throw(gpointer data, GsThreadId thread, GsException exc, gboolean injected, GsTime now)
{
	TlSeen s = {.kind = TL_SEEN_THROW, .thread = thread, .exc = exc, .injected = injected,
		    .now = now};

	g_array_append_val(((TlEngine *) data)->seen, s);
}

static void
seen_bust(gpointer data, GsThreadId victim, GsBustAction action, GsCheckReason reason, GsTime now)
{
	TlSeen s = {.kind = TL_SEEN_BUST, .thread = victim, .action = action, .reason = reason,
		    .now = now};

	g_array_append_val(((TlEngine *) data)->seen, s);
}

static const GsEngineObserver recorder = {
	.api_version = 1,
	.state_changed = seen_state,
	.thrown = seen_throw,
	.busted = seen_bust,
};

TlEngine *
tl_engine_new(const GsEngineOpts *opts)
{
	TlEngine *t = g_new0(TlEngine, 1);

	t->engine = gs_engine_new(opts);
	t->seen = g_array_new(FALSE, FALSE, sizeof(TlSeen));
	gs_engine_set_observer(t->engine, &recorder, t);
	return t;
}

void
tl_engine_free(TlEngine *t)
{
	tl_check(t);
	gs_engine_free(t->engine);
	g_array_unref(t->seen);
	g_free(t);
}

void
tl_check(TlEngine *t)
{
	const char *broken = gs_engine_check_invariants(t->engine);

	ck_assert_msg(broken == NULL, "engine invariant broken: %s", broken);
}

void
tl_dedicated(TlEngine *t, GsThreadId thread, GsTaskId task)
{
	GsEngineError err = gs_engine_register_dedicated(t->engine, thread, task, 0);

	ck_assert_msg(err == GS_ENGINE_ERROR_NONE, "register %" G_GUINT64_FORMAT ": %s", thread,
		      gs_engine_error_message(err));
	tl_check(t);
}

void
tl_pool(TlEngine *t, GsThreadId thread, gboolean shuffle, guint n_tasks, ...)
{
	GsTaskId tasks[16];
	GsEngineError err;
	va_list ap;

	ck_assert_uint_le(n_tasks, G_N_ELEMENTS(tasks));
	va_start(ap, n_tasks);
	for (guint i = 0; i < n_tasks; i++)
		tasks[i] = va_arg(ap, int);
	va_end(ap);
	err = gs_engine_register_pool(t->engine, thread, tasks, n_tasks, shuffle, 0);
	ck_assert_msg(err == GS_ENGINE_ERROR_NONE, "pool %" G_GUINT64_FORMAT ": %s", thread,
		      gs_engine_error_message(err));
	tl_check(t);
}

GsDecision
tl_begin(TlEngine *t, GsThreadId thread, GsAllocKind kind, gboolean blocking, GsTime now)
{
	GsDecision d = gs_engine_alloc_begin(t->engine, thread, kind, blocking, now);

	tl_check(t);
	return d;
}

GsDecision
tl_success(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, GsTime now)
{
	GsDecision d = gs_engine_alloc_success(t->engine, thread, kind, bytes, FALSE, now);

	tl_check(t);
	return d;
}

GsDecision
tl_oom(TlEngine *t, GsThreadId thread, GsAllocKind kind, gboolean blocking, GsTime now)
{
	GsDecision d = gs_engine_alloc_failed(t->engine, thread, kind, TRUE, blocking, FALSE, now);

	tl_check(t);
	return d;
}

void
tl_free(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, GsTime now)
{
	gs_engine_dealloc(t->engine, thread, kind, bytes, now);
	tl_check(t);
}

GsDecision
tl_bur(TlEngine *t, GsThreadId thread, GsTime now)
{
	GsDecision d = gs_engine_block_until_ready(t->engine, thread, now);

	tl_check(t);
	return d;
}

void
tl_task_done(TlEngine *t, GsTaskId task, GsTime now)
{
	gs_engine_task_done(t->engine, task, now);
	tl_check(t);
}

gboolean
tl_watchdog(TlEngine *t, GsTime now, guint n_outside, ...)
{
	GsThreadId outside[16];
	gboolean deadlocked;
	va_list ap;

	ck_assert_uint_le(n_outside, G_N_ELEMENTS(outside));
	va_start(ap, n_outside);
	for (guint i = 0; i < n_outside; i++)
		outside[i] = va_arg(ap, int);
	va_end(ap);
	deadlocked = gs_engine_check_deadlocks(t->engine, outside, n_outside, now);
	tl_check(t);
	return deadlocked;
}

GsDecision
tl_alloc(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, gboolean fits, GsTime now)
{
	for (guint round = 0; round < 1000; round++) {
		GsDecision d = tl_begin(t, thread, kind, TRUE, now);

		if (d.verdict != GS_VERDICT_PROCEED)
			return d;
		if (fits)
			return tl_success(t, thread, kind, bytes, now);
		d = tl_oom(t, thread, kind, TRUE, now);
		if (d.verdict != GS_VERDICT_RETRY)
			return d;
	}
	ck_abort_msg("allocation loop of thread %" G_GUINT64_FORMAT " did not settle", thread);
	return (GsDecision){.verdict = GS_VERDICT_ERROR};
}

GArray *
tl_wakes(TlEngine *t)
{
	GArray *ids = g_array_new(FALSE, FALSE, sizeof(GsThreadId));
	GsThreadId id;

	while (gs_engine_pop_wake(t->engine, &id))
		g_array_append_val(ids, id);
	return ids;
}

GsThreadState
tl_state(TlEngine *t, GsThreadId thread)
{
	return gs_engine_thread_state(t->engine, thread);
}

guint
tl_count(TlEngine *t, TlSeenKind kind, GsThreadId thread)
{
	guint n = 0;

	for (guint i = 0; i < t->seen->len; i++) {
		const TlSeen *s = &g_array_index(t->seen, TlSeen, i);

		if (s->kind == kind && (thread == TL_ANY_THREAD || s->thread == thread))
			n++;
	}
	return n;
}

GsException
tl_last_throw(TlEngine *t, GsThreadId thread)
{
	for (guint i = t->seen->len; i-- > 0;) {
		const TlSeen *s = &g_array_index(t->seen, TlSeen, i);

		if (s->kind == TL_SEEN_THROW && s->thread == thread)
			return s->exc;
	}
	return GS_EXC_NONE;
}

const TlSeen *
tl_bust(TlEngine *t, guint n)
{
	for (guint i = 0; i < t->seen->len; i++) {
		const TlSeen *s = &g_array_index(t->seen, TlSeen, i);

		if (s->kind == TL_SEEN_BUST && n-- == 0)
			return s;
	}
	return NULL;
}

gboolean
tl_reached(TlEngine *t, GsThreadId thread, GsThreadState state)
{
	for (guint i = 0; i < t->seen->len; i++) {
		const TlSeen *s = &g_array_index(t->seen, TlSeen, i);

		if (s->kind == TL_SEEN_STATE && s->thread == thread && s->to == state)
			return TRUE;
	}
	return FALSE;
}

int
tl_run_suite(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	int failed;

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void
tl_trace_add(GString *trace, const char *format, ...)
{
	va_list args;

	if (trace->len > 0)
		g_string_append(trace, ", ");
	va_start(args, format);
	g_string_append_vprintf(trace, format, args);
	va_end(args);
}

/* ---- a validating JSON parser ---- */

static gboolean json_value(const char **p, guint depth);

static void
json_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

/* A string; its contents (escapes kept) are appended to @out when not NULL. */
static gboolean
json_string(const char **p, GString *out)
{
	if (**p != '"')
		return FALSE;
	(*p)++;
	for (;;) {
		unsigned char c = (unsigned char) **p;

		if (c == '"') {
			(*p)++;
			return TRUE;
		}
		if (c < 0x20)
			return FALSE; /* also the end of the text */
		if (c == '\\') {
			if (out != NULL)
				g_string_append_c(out, '\\');
			(*p)++;
			c = (unsigned char) **p;
			if (c == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!g_ascii_isxdigit((*p)[i]))
						return FALSE;
			} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
				return FALSE;
			}
		}
		if (out != NULL)
			g_string_append_c(out, (char) c);
		(*p)++;
	}
}

static gboolean
json_digits(const char **p)
{
	if (!g_ascii_isdigit(**p))
		return FALSE;
	while (g_ascii_isdigit(**p))
		(*p)++;
	return TRUE;
}

static gboolean
json_number(const char **p)
{
	if (**p == '-')
		(*p)++;
	if (**p == '0')
		(*p)++;
	else if (!json_digits(p))
		return FALSE;
	if (**p == '.') {
		(*p)++;
		if (!json_digits(p))
			return FALSE;
	}
	if (**p == 'e' || **p == 'E') {
		(*p)++;
		if (**p == '+' || **p == '-')
			(*p)++;
		if (!json_digits(p))
			return FALSE;
	}
	return TRUE;
}

static gboolean
json_word(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n) != 0)
		return FALSE;
	*p += n;
	return TRUE;
}

static gboolean
json_object(const char **p, guint depth)
{
	g_autoptr(GHashTable) keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	(*p)++;
	json_ws(p);
	if (**p == '}') {
		(*p)++;
		return TRUE;
	}
	for (;;) {
		GString *key = g_string_new(NULL);

		json_ws(p);
		if (!json_string(p, key)) {
			g_string_free(key, TRUE);
			return FALSE;
		}
		if (g_hash_table_contains(keys, key->str)) {
			g_string_free(key, TRUE);
			return FALSE; /* a duplicate key */
		}
		g_hash_table_add(keys, g_string_free(key, FALSE));
		json_ws(p);
		if (**p != ':')
			return FALSE;
		(*p)++;
		if (!json_value(p, depth + 1))
			return FALSE;
		json_ws(p);
		if (**p == '}') {
			(*p)++;
			return TRUE;
		}
		if (**p != ',')
			return FALSE;
		(*p)++;
	}
}

static gboolean
json_array(const char **p, guint depth)
{
	(*p)++;
	json_ws(p);
	if (**p == ']') {
		(*p)++;
		return TRUE;
	}
	for (;;) {
		if (!json_value(p, depth + 1))
			return FALSE;
		json_ws(p);
		if (**p == ']') {
			(*p)++;
			return TRUE;
		}
		if (**p != ',')
			return FALSE;
		(*p)++;
	}
}

static gboolean
json_value(const char **p, guint depth)
{
	if (depth > 64)
		return FALSE;
	json_ws(p);
	switch (**p) {
	case '{':
		return json_object(p, depth);
	case '[':
		return json_array(p, depth);
	case '"':
		return json_string(p, NULL);
	case 't':
		return json_word(p, "true");
	case 'f':
		return json_word(p, "false");
	case 'n':
		return json_word(p, "null");
	default:
		return json_number(p);
	}
}

gboolean
tl_json_valid(const char *text)
{
	const char *p = text;

	if (!g_utf8_validate(text, -1, NULL))
		return FALSE;
	if (!json_value(&p, 0))
		return FALSE;
	json_ws(&p);
	return *p == '\0';
}

void
tl_ck_json(const char *text)
{
	ck_assert_msg(tl_json_valid(text), "not valid JSON:\n%s", text);
}

void
tl_ck_contains(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) != NULL, "missing <%s> in:\n%s", needle, text);
}

guint
tl_count_of(const char *text, const char *needle)
{
	guint n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * Unit tests of loader.h: every kind of invalid scenario is refused with the
 * right file:line:column and message (one table row each), and a file's
 * several errors with a line each, in file order, up to the limit; quantities
 * convert to base units; a complete scenario (tests/data/loader-full.yaml)
 * loads into the expected structure; includes, variants and --set merge in
 * the right order. Scenarios are written to a temporary directory; the fixtures under
 * tests/data are found through $top_srcdir, which `make check` exports.
 */
#include <check.h>
#include <gpusim/gpusim.h>

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/loader.h"
#include "testlib.h"

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define US ((gint64) 1000)
#define MS (US * 1000)
#define SEC (MS * 1000)

/* ---- helpers: scenarios in a temporary directory ---- */

typedef struct {
	char *dir;
	GPtrArray *files; /* paths written, removed by tmp_free */
} Tmp;

static Tmp *
tmp_new(void)
{
	Tmp *t = g_new0(Tmp, 1);
	g_autoptr(GError) error = NULL;

	t->dir = g_dir_make_tmp("test-loader-XXXXXX", &error);
	ck_assert_msg(t->dir != NULL, "cannot make a temporary directory: %s",
		      error ? error->message : "?");
	t->files = g_ptr_array_new_with_free_func(g_free);
	return t;
}

/* Writes @text to @name (which may be in a subdirectory) and returns the path. */
static const char *
tmp_write(Tmp *t, const char *name, const char *text)
{
	char *path = g_build_filename(t->dir, name, NULL);
	g_autofree char *dir = g_path_get_dirname(path);
	g_autoptr(GError) error = NULL;

	ck_assert_int_eq(g_mkdir_with_parents(dir, 0700), 0);
	ck_assert_msg(g_file_set_contents(path, text, -1, &error), "%s",
		      error ? error->message : "");
	g_ptr_array_add(t->files, path);
	return path;
}

static void
tmp_free(Tmp *t)
{
	for (guint i = t->files->len; i-- > 0;) {
		g_autofree char *dir = g_path_get_dirname(t->files->pdata[i]);

		g_unlink(t->files->pdata[i]);
		if (strcmp(dir, t->dir) != 0)
			g_rmdir(dir);
	}
	g_rmdir(t->dir);
	g_ptr_array_unref(t->files);
	g_free(t->dir);
	g_free(t);
}

/* The error message with the temporary directory taken out of every path. */
static char *
relative_message(const Tmp *t, const GError *error)
{
	GString *s = g_string_new(error->message);
	g_autofree char *prefix = g_strconcat(t->dir, G_DIR_SEPARATOR_S, NULL);

	g_string_replace(s, prefix, "", 0);
	return g_string_free(s, FALSE);
}

static char *
fixture(const char *name)
{
	const char *srcdir = g_getenv("top_srcdir");

	return g_build_filename(srcdir != NULL ? srcdir : ".", "tests", "data", name, NULL);
}

/* ---- invalid scenarios: one row each ---- */

/* Lines 1-3: the smallest valid scenario. */
#define HEAD "gpusim: 1\nname: t\nmemory: {gpu: {capacity: 10MiB}}\n"
/* Lines 4-7; thread A.0's ops start on line 8, each "- " at column 11, the op at 13. */
#define TASK HEAD "tasks:\n  - id: A\n    threads:\n      - ops:\n"
#define OP "          - "
/* Line 8 ends the ops; expect: is line 9, its keys start on line 10 at column 3. */
#define EXPECT TASK OP "task_done\n" "expect:\n"
/* Thread A.0 declares values: {v: 5} on line 7; its ops start on line 9. */
#define VALUES_TASK \
	HEAD "tasks:\n  - id: A\n    threads:\n      - values: {v: 5}\n        ops:\n" OP
/* Thread A.0 reserves r on line 8; expect.at's one row is line 11, from column 7. */
#define AT_RESERVED TASK OP "reserve: {res: r, size: 1MiB}\n" "expect:\n  at:\n    - "

/* Sequences nested 64 deep: as a top-level value, levels 1 to 64, the most allowed. */
#define OPEN_9 "[[[[[[[[["
#define CLOSE_9 "]]]]]]]]]"
#define LEVELS_64 "[" OPEN_9 OPEN_9 OPEN_9 OPEN_9 OPEN_9 OPEN_9 OPEN_9 \
	CLOSE_9 CLOSE_9 CLOSE_9 CLOSE_9 CLOSE_9 CLOSE_9 CLOSE_9 "]"

typedef struct {
	/* Inputs */
	const char *yaml;    /* s.yaml */
	const char *b_yaml;  /* b.yaml beside it, or NULL */
	const char *variant; /* or NULL */
	const char *set;     /* one --set KEY=VALUE, or NULL */
	/* Outputs: the start of the message, temporary directory removed */
	const char *expected;
} BadRow;

static const BadRow bad_rows[] = {
	/* the top level */
	{"name: t\nmemory: {gpu: {capacity: 1}}\n", NULL, NULL, NULL,
	 "s.yaml:1:1: missing required key \"gpusim\""},
	{"gpusim: 2\nname: t\n", NULL, NULL, NULL,
	 "s.yaml:1:9: unsupported format version \"2\": this gpusim reads gpusim: 1"},
	{"gpusim: {v: 1}\nname: t\n", NULL, NULL, NULL,
	 "s.yaml:1:9: gpusim must be a single value, not a map"},
	{"gpusim: 1\nmemory: {gpu: {capacity: 1}}\n", NULL, NULL, NULL,
	 "s.yaml:1:1: missing required key \"name\""},
	{"gpusim: 1\nname: \"\"\nmemory: {gpu: {capacity: 1}}\n", NULL, NULL, NULL,
	 "s.yaml:2:7: name must not be empty"},
	{"gpusim: 1\nname: t\n", NULL, NULL, NULL, "s.yaml:1:1: missing required key \"memory\""},
	{HEAD "polcy: {}\n", NULL, NULL, NULL,
	 "s.yaml:4:1: unknown key \"polcy\"; did you mean \"policy\"? (expected gpusim, name, description"},
	{HEAD "name: u\n", NULL, NULL, NULL,
	 "s.yaml:4:1: duplicate key \"name\" (first at line 2)"},
	{"- a\n", NULL, NULL, NULL, "s.yaml:1:1: a scenario must be a map, not a sequence"},
	{HEAD "---\nname: u\n", NULL, NULL, NULL,
	 "s.yaml:5:1: a second YAML document: a scenario is one document"},
	{"gpusim: 1\nname: [t\n", NULL, NULL, NULL, "s.yaml:3:1: YAML syntax error: "},
	{"gpusim: 1\nname: t\ndescription: ab\xff\n", NULL, NULL, NULL,
	 "s.yaml:3:16: YAML syntax error: invalid leading UTF-8 octet"},
	{"gpusim: 1\nname: t\nmemory: &m {gpu: *m}\n", NULL, NULL, NULL,
	 "s.yaml:3:18: alias *m is inside the node it names (a recursive alias)"},
	{"gpusim: 1\nname: t\nmemory: *m\n", NULL, NULL, NULL,
	 "s.yaml:3:9: alias *m names no anchor defined before it"},
	{"gpusim: 1\nname: t\nmemory: {gpu: *m}\nx: &m 1\n", NULL, NULL, NULL,
	 "s.yaml:3:15: alias *m names no anchor defined before it"},
	/* an alias's copy must fit in the levels where it is used */
	{"gpusim: 1\nname: t\na: &a " LEVELS_64 "\nb: [*a]\n", NULL, NULL, NULL,
	 "s.yaml:4:5: the document nests deeper than 64 levels"},
	{HEAD "include: /dev/zero\n", NULL, NULL, NULL,
	 "s.yaml:4:10: cannot include /dev/zero: it is a character device, not a regular file"},
	{HEAD "include: [b.yaml, .]\n", "seed: 1\n", NULL, NULL,
	 "s.yaml:4:19: cannot include .: it is a directory, not a regular file"},
	{HEAD "policy: [oom]\n", NULL, NULL, NULL,
	 "s.yaml:4:9: policy must be a map, not a sequence"},
	{HEAD "tasks: A\n", NULL, NULL, NULL, "s.yaml:4:8: tasks must be a sequence, not \"A\""},
	/* memory and quantities */
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capcity: 1MiB\n", NULL, NULL, NULL,
	 "s.yaml:5:5: unknown key \"capcity\" in memory.gpu; did you mean \"capacity\"? (expected capacity, devices"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu: {devices: 1}\n", NULL, NULL, NULL,
	 "s.yaml:4:8: missing required key \"capacity\" in memory.gpu"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: 6MB/s\n", NULL, NULL, NULL,
	 "s.yaml:5:15: unknown unit \"MB/s\" in size \"6MB/s\""},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: -1MiB\n", NULL, NULL, NULL,
	 "s.yaml:5:15: negative size \"-1MiB\""},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: 1.5B\n", NULL, NULL, NULL,
	 "s.yaml:5:15: size \"1.5B\" is not a whole number of bytes"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: lots\n", NULL, NULL, NULL,
	 "s.yaml:5:15: bad size \"lots\": expected a number with a unit"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: 99999999TiB\n", NULL, NULL, NULL,
	 "s.yaml:5:15: size \"99999999TiB\" is too large"},
	/* Sizes leave room for their sums: 2^63 - 1 bytes could not be added to anything. */
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: 1025TiB\n", NULL, NULL, NULL,
	 "s.yaml:5:15: size \"1025TiB\" is too large (at most 1024 TiB)"},
	{TASK OP "alloc: {buf: a, size: 9223372036854775807}\n", NULL, NULL, NULL,
	 "s.yaml:8:35: size \"9223372036854775807\" is too large (at most 1024 TiB)"},
	{TASK OP "reserve: {res: r, size: 1125899906842625}\n", NULL, NULL, NULL,
	 "s.yaml:8:37: size \"1125899906842625\" is too large (at most 1024 TiB)"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu:\n    capacity: 1\n    reservation_limit: 1.2\n",
	 NULL, NULL, NULL,
	 "s.yaml:6:24: memory.gpu.reservation_limit must be a fraction in [0, 1], not 1.2"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu: {capacity: 1, devices: 0}\n", NULL, NULL, NULL,
	 "s.yaml:4:31: memory.gpu.devices must be a whole number from 1 to 1024, not \"0\""},
	{"gpusim: 1\nname: t\nmemory:\n  gpu: {capacity: 1, devices: 4294967295}\n", NULL, NULL,
	 NULL,
	 "s.yaml:4:31: memory.gpu.devices must be a whole number from 1 to 1024, not "
	 "\"4294967295\""},
	/* A run's threads are bounded: each keeps its state and rows for the whole run. */
	{HEAD "tasks: [{id: A, repeat: 4000000000, threads: [{ops: []}]}]\n", NULL, NULL, NULL,
	 "s.yaml:4:25: tasks[A].repeat must be a whole number from 1 to 10000000, not "
	 "\"4000000000\""},
	{HEAD "tasks: [{id: A, repeat: 5000001, threads: [{ops: []}, {ops: []}]}]\n", NULL, NULL,
	 NULL,
	 "s.yaml:4:14: task A (5000001 copies of 2 threads) makes the run's threads 10000002, "
	 "more than the 10000000 a run can hold"},
	{HEAD "generate: {tasks: 4000000000}\n", NULL, NULL, NULL,
	 "s.yaml:4:19: generate.tasks must be a whole number from 0 to 10000000, not "
	 "\"4000000000\""},
	{HEAD "generate: {tasks: 4000000, threads_per_task: 2, shuffle_threads: 2000001}\n", NULL,
	 NULL, NULL,
	 "s.yaml:4:11: generate makes the run's threads 10000001, more than the 10000000 a run "
	 "can hold"},
	{"gpusim: 1\nname: t\nmemory:\n  gpu: {capacity: 1, downgrade_stop: 0.8}\n", NULL, NULL,
	 NULL,
	 "s.yaml:4:38: memory.gpu.downgrade_stop (0.8) must not be above downgrade_trigger (0.75)"},
	{HEAD "policy: {watchdog: 5}\n", NULL, NULL, NULL,
	 "s.yaml:4:20: duration \"5\" needs a unit (ns, us, ms or s)"},
	{HEAD "policy: {watchdog: 5m}\n", NULL, NULL, NULL,
	 "s.yaml:4:20: unknown unit \"m\" in duration \"5m\""},
	{HEAD "links: {gpu_host: {bandwidth: 25GB}}\n", NULL, NULL, NULL,
	 "s.yaml:4:31: unknown unit \"GB\" in bandwidth \"25GB\""},
	{HEAD "links: {lanes: -1}\n", NULL, NULL, NULL,
	 "s.yaml:4:16: links.lanes must be a number >= 0, not \"-1\""},
	{HEAD "links: {fresh_memory: {bandwidth: 2GB}}\n", NULL, NULL, NULL,
	 "s.yaml:4:35: unknown unit \"GB\" in bandwidth \"2GB\""},
	{HEAD "links: {fresh_memory: {from: -1}}\n", NULL, NULL, NULL,
	 "s.yaml:4:30: negative size \"-1\""},
	{HEAD "links: {host_pools: {bandwidth: 2GB}}\n", NULL, NULL, NULL,
	 "s.yaml:4:33: unknown unit \"GB\" in bandwidth \"2GB\""},
	{HEAD "links: {host_pools: {latency: 1us}}\n", NULL, NULL, NULL,
	 "s.yaml:4:22: unknown key \"latency\" in links.host_pools"},
	{HEAD "executor: {slots: -1}\n", NULL, NULL, NULL,
	 "s.yaml:4:19: executor.slots must be a whole number >= 0, not \"-1\""},
	/* policy enums and booleans */
	{HEAD "policy: {oom: sometimes}\n", NULL, NULL, NULL,
	 "s.yaml:4:15: policy.oom must be fail, block or retry, not \"sometimes\""},
	{HEAD "policy: {oom: retyr}\n", NULL, NULL, NULL,
	 "s.yaml:4:15: policy.oom must be fail, block or retry, not \"retyr\"; did you mean "
	 "\"retry\"?"},
	/* a value with a line break is quoted on the error's one line */
	{HEAD "policy: {oom: \"some\\ntimes\"}\n", NULL, NULL, NULL,
	 "s.yaml:4:15: policy.oom must be fail, block or retry, not \"some\\ntimes\""},
	{HEAD "policy: {oom: RETRY}\n", NULL, NULL, NULL,
	 "s.yaml:4:15: policy.oom must be fail, block or retry, not \"RETRY\"; did you mean "
	 "\"retry\"?"},
	{HEAD "policy: {spill: {enabled: yes}}\n", NULL, NULL, NULL,
	 "s.yaml:4:27: policy.spill.enabled must be true or false, not \"yes\""},
	{HEAD "policy: {spill: {victim: newest}}\n", NULL, NULL, NULL,
	 "s.yaml:4:26: policy.spill.victim must be lru, largest, smallest_fit or priority, not "
	 "\"newest\""},
	{HEAD "policy: {reservations: {over: maybe}}\n", NULL, NULL, NULL,
	 "s.yaml:4:31: policy.reservations.over must be ignore, fail or increase, not \"maybe\""},
	{HEAD "policy: {reservations: {increase_factor: 0.5}}\n", NULL, NULL, NULL,
	 "s.yaml:4:42: policy.reservations.increase_factor must be a number >= 1, not \"0.5\""},
	{HEAD "policy: {admission: fair}\n", NULL, NULL, NULL,
	 "s.yaml:4:21: policy.admission must be none or fair_share, not \"fair\""},
	/* generate.model and the keys of one model only */
	{HEAD "generate: {model: monte}\n", NULL, NULL, NULL,
	 "s.yaml:4:19: generate.model must be gpusim or montecarlo, not \"monte\""},
	{HEAD "generate: {tasks: 2, template: true}\n", NULL, NULL, NULL,
	 "s.yaml:4:22: generate.template is a key of model montecarlo, and generate.model is "
	 "gpusim"},
	{HEAD "generate: {model: montecarlo, jitter: 0.1}\n", NULL, NULL, NULL,
	 "s.yaml:4:31: generate.jitter is a key of model gpusim, and generate.model is montecarlo"},
	{HEAD "generate: {model: montecarlo, threads_per_task: 2}\n", NULL, NULL, NULL,
	 "s.yaml:4:49: generate.threads_per_task must be 1 with model montecarlo, whose tasks "
	 "have one thread each, not 2"},
	{HEAD "generate: {model: montecarlo, max_allocs: 0}\n", NULL, NULL, NULL,
	 "s.yaml:4:43: generate.max_allocs must be at least 1 with model montecarlo, not 0"},
	{HEAD "generate: {model: montecarlo, task_max: 0}\n", NULL, NULL, NULL,
	 "s.yaml:4:41: generate.task_max must be at least 1 B with model montecarlo, not 0"},
	{HEAD "generate: {model: montecarlo, template_change: -0.1}\n", NULL, NULL, NULL,
	 "s.yaml:4:48: generate.template_change must be a number >= 0, not \"-0.1\""},
	{HEAD "generate: {model: montecarlo, template_arithmetic: tool}\n", NULL, NULL, NULL,
	 "s.yaml:4:52: generate.template_arithmetic must be intended or code, not \"tool\""},
	{HEAD "generate: {model: montecarlo, template: yes}\n", NULL, NULL, NULL,
	 "s.yaml:4:41: generate.template must be true or false, not \"yes\""},
	{HEAD "generate: {model: montecarlo, tasks: 1000000, max_allocs: 11}\n", NULL, NULL, NULL,
	 "s.yaml:4:11: generate: model montecarlo makes every task at once, and 1000000 tasks "
	 "of up to 11 allocations are more than the 10000000 allocations it may plan"},
	{HEAD "generate: {jitter: 1.5}\n", NULL, NULL, NULL,
	 "s.yaml:4:20: generate.jitter must be a fraction in [0, 1], not 1.5"},
	{HEAD "generate: {taks: 3}\n", NULL, NULL, NULL,
	 "s.yaml:4:12: unknown key \"taks\" in generate; did you mean \"tasks\"? (expected tasks, threads_per_task"},
	/* tasks and threads */
	{HEAD "tasks:\n  - threads: []\n", NULL, NULL, NULL,
	 "s.yaml:5:5: missing required key \"id\" in tasks[0]"},
	{TASK OP "task_done\n  - id: A\n    threads: [{ops: []}]\n", NULL, NULL, NULL,
	 "s.yaml:9:9: duplicate task id \"A\" (first at line 5)"},
	{HEAD "tasks:\n  - id: A\n    priority: 0\n    threads: [{ops: []}]\n", NULL, NULL, NULL,
	 "s.yaml:6:15: tasks[A].priority must be a whole number >= 1, not \"0\""},
	{HEAD "tasks:\n  - id: A\n    start: -1ms\n    threads: [{ops: []}]\n", NULL, NULL, NULL,
	 "s.yaml:6:12: negative duration \"-1ms\""},
	{HEAD "tasks:\n  - id: A\n    threads: []\n", NULL, NULL, NULL,
	 "s.yaml:6:14: tasks[A].threads is empty: a task needs at least one thread"},
	{HEAD "tasks:\n  - id: A\n    threads: [{on_oom: ignore, ops: []}]\n", NULL, NULL, NULL,
	 "s.yaml:6:24: threads[A.0].on_oom must be fail or continue, not \"ignore\""},
	{HEAD "tasks:\n  - id: A\n    threads: [{name: X, ops: []}]\n  - id: B\n"
	      "    threads: [{name: X, ops: []}]\n",
	 NULL, NULL, NULL, "s.yaml:8:22: duplicate thread name \"X\" (first at line 6)"},
	{HEAD "tasks:\n  - id: A\n    threads: [{ops: []}]\n  - id: B\n"
	      "    threads: [{name: A.0, ops: []}]\n",
	 NULL, NULL, NULL, "s.yaml:8:22: duplicate thread name \"A.0\" (first at line 6)"},
	{HEAD "tasks:\n  - id: A\n    threads: [{ops: []}]\npool_threads:\n  - name: A.0\n"
	      "    ops: []\n",
	 NULL, NULL, NULL, "s.yaml:8:11: duplicate thread name \"A.0\" (first at line 6)"},
	{HEAD "pool_threads:\n  - ops: []\n", NULL, NULL, NULL,
	 "s.yaml:5:5: missing required key \"name\" in pool_threads[0]"},
	{HEAD "tasks:\n  - id: A\n    threads: [{ops: [], colour: red}]\n", NULL, NULL, NULL,
	 "s.yaml:6:25: unknown key \"colour\" in threads[A.0] (expected name, on_oom, shuffle, "
	 "consumers, values or ops)"},
	/* ops */
	{TASK OP "allocate: {buf: x}\n", NULL, NULL, NULL,
	 "s.yaml:8:13: unknown op \"allocate\" (expected alloc, free, compute"},
	/* a typo's nearest name, two letters swapped or one missing; none when far or tied */
	{TASK OP "aloc: {buf: x}\n", NULL, NULL, NULL,
	 "s.yaml:8:13: unknown op \"aloc\"; did you mean \"alloc\"? (expected alloc, free"},
	{TASK OP "comptue: {time: 1ms}\n", NULL, NULL, NULL,
	 "s.yaml:8:13: unknown op \"comptue\"; did you mean \"compute\"? (expected alloc"},
	{TASK OP "XYZZY: {}\n", NULL, NULL, NULL,
	 "s.yaml:8:13: unknown op \"XYZZY\" (expected alloc, free, compute"},
	{TASK OP "alloc: {buf: x, size: 1}\n            free: x\n", NULL, NULL, NULL,
	 "s.yaml:9:13: \"free\" starts a second op in one list item (a missing \"-\"?)"},
	{TASK OP "[free, x]\n", NULL, NULL, NULL,
	 "s.yaml:8:13: an op is a word or a map with one key, not a sequence"},
	{TASK OP "free\n", NULL, NULL, NULL,
	 "s.yaml:8:13: free needs a value, as in \"free: ...\""},
	{TASK OP "task_done: 1\n", NULL, NULL, NULL, "s.yaml:8:24: task_done takes no value"},
	{TASK OP "alloc: {buf: x, sise: 1}\n", NULL, NULL, NULL,
	 "s.yaml:8:29: unknown key \"sise\" in alloc; did you mean \"size\"? (expected buf, size, kind"},
	{TASK OP "alloc: {buf: x}\n", NULL, NULL, NULL,
	 "s.yaml:8:20: missing required key \"size\" in alloc"},
	{TASK OP "alloc: {buf: x, size: 1MiB, blocking: false}\n", NULL, NULL, NULL,
	 "s.yaml:8:51: blocking: false is only for host allocations (kind: host)"},
	{TASK OP "alloc: {buf: x, size: 1MiB, prefer_pinned: false}\n", NULL, NULL, NULL,
	 "s.yaml:8:56: prefer_pinned is only for host allocations (kind: host)"},
	{TASK OP "alloc: {buf: x, size: 1, kind: host, prefer_pinned: maybe}\n", NULL, NULL, NULL,
	 "s.yaml:8:65: alloc.prefer_pinned must be true or false, not \"maybe\""},
	{HEAD, NULL, NULL, "memory.host.pinned=-1KiB", "--set memory.host.pinned"},
	{"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 1}, host: {pinned: 4 KiBs}}\n", NULL, NULL,
	 NULL, "s.yaml:3:45: unknown unit \"KiBs\" in size \"4 KiBs\""},
	{TASK OP "alloc: {buf: x, size: 1, kind: tpu}\n", NULL, NULL, NULL,
	 "s.yaml:8:44: alloc.kind must be gpu or host, not \"tpu\""},
	{TASK OP "alloc: {buf: x, size: 1}\n" OP "free: y\n", NULL, NULL, NULL,
	 "s.yaml:9:19: undefined buffer \"y\": no alloc in thread A.0 names it"},
	{TASK OP "alloc: {buf: x, size: 1}\n" OP "free: []\n", NULL, NULL, NULL,
	 "s.yaml:9:19: free needs at least one name"},
	{TASK OP "compute: {time: 1ms, uses: [x]}\n", NULL, NULL, NULL,
	 "s.yaml:8:41: undefined buffer \"x\": no alloc in thread A.0 names it"},
	{TASK OP "compute: 5\n", NULL, NULL, NULL, "s.yaml:8:22: duration \"5\" needs a unit"},
	{TASK OP "retry: {input: [z], ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:29: undefined buffer \"z\": no alloc in thread A.0 names it"},
	{TASK OP "retry:\n              ops:\n"
		 "                - repeat: {times: 2, ops: [{free: q}]}\n",
	 NULL, NULL, NULL, "s.yaml:10:51: undefined buffer \"q\": no alloc in thread A.0 names it"},
	{TASK OP "retry: {split: thirds, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:28: retry.split must be halves, none, target or target_cpu, not \"thirds\""},
	{TASK OP "retry: {target: 1MiB, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:21: retry.target is only for split: target"},
	{TASK OP "retry: {split: target, target: 1MiB, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:20: retry with split: target needs min_target"},
	{TASK OP "retry: {split: target_cpu, min_target: 1MiB, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:20: retry with split: target needs target"},
	{TASK OP "retry: {split: target, target: 1MiB, min_target: 2MiB, ops: []}\n", NULL, NULL,
	 NULL, "s.yaml:8:62: retry.min_target is larger than retry.target"},
	{TASK OP "retry: {split: target, target: 2, min_target: 1, max_splits: 3, ops: []}\n",
	 NULL, NULL, NULL, "s.yaml:8:62: retry.max_splits is only for split: halves"},
	{TASK OP "retry: {split: target, target: 0, min_target: 1, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:44: retry.target must be at least 1 bytes, not \"0\""},
	/* expect.at rows of a thread's reservation, and a tier's reservation counters */
	{AT_RESERVED "{time: 1ms, reservation: r, size: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:7: an expect.at check of a reservation names its thread"},
	{AT_RESERVED "{time: 1ms, thread: A.0, reservation: q, size: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:45: thread A.0 has no reservation \"q\": no reserve in it names it"},
	{AT_RESERVED "{time: 1ms, thread: A.0, reservation: r, size: 1MiB, peak: 1MiB}\n", NULL,
	 NULL, NULL,
	 "s.yaml:11:60: an expect.at check of a reservation reads one of size, allocated, "
	 "peak, available and device, not size and peak"},
	{AT_RESERVED "{time: 1ms, thread: A.0, reservation: r}\n", NULL, NULL, NULL,
	 "s.yaml:11:7: an expect.at check of a reservation needs size, allocated, peak, "
	 "available or device"},
	{AT_RESERVED "{time: 1ms, thread: A.0, reservation: r, state: THREAD_RUNNING, size: 1MiB}\n",
	 NULL, NULL, NULL,
	 "s.yaml:11:48: an expect.at check of a reservation takes no state"},
	{AT_RESERVED "{time: 1ms, thread: A.0, reservation: r, charged: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:48: an expect.at check of a reservation takes no charged"},
	{AT_RESERVED "{time: 1ms, tier: gpu, allocated: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:30: allocated is for a thread's reservation (reservation: NAME)"},
	{AT_RESERVED "{time: 1ms, tier: gpu, reservations: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:44: expect reservations must be a whole number >= 0, not \"1MiB\""},
	{AT_RESERVED "{time: 1ms, tier: gpu, reserved: 1MiB, charged: 1MiB}\n", NULL, NULL, NULL,
	 "s.yaml:11:30: an expect.at check of a tier reads one of used, charged, available, "
	 "max_memory, peak_charged, reserved, reservations, pinned and non_pinned, not charged "
	 "and reserved"},
	{HEAD "tasks:\n  - id: A\n    threads:\n      - ops:\n          - reserve: {res: r, size: 1MiB}\n"
	 "expect:\n  at:\n    - {time: 1ms, thread: A.0, reservation: r, available: 1MiB}\n",
	 NULL, NULL, "memory.gpu.devices=2",
	 "s.yaml:11:48: a reservation's available memory is read with one GPU (the run's samples "
	 "hold the GPUs together)"},
	/* values (line 7), value, checkpoint and restore */
	{TASK OP "value: {name: v, add: 1}\n", NULL, NULL, NULL,
	 "s.yaml:8:27: undefined value \"v\": thread A.0's values do not declare it"},
	{TASK OP "checkpoint: [v]\n", NULL, NULL, NULL,
	 "s.yaml:8:26: undefined value \"v\": thread A.0's values do not declare it"},
	{TASK OP "retry: {restore: w, ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:30: undefined value \"w\": thread A.0's values do not declare it"},
	{TASK OP "value: {name: v}\n", NULL, NULL, NULL,
	 "s.yaml:8:20: value takes one of add and set"},
	{TASK OP "value: {name: v, add: 1, set: 2}\n", NULL, NULL, NULL,
	 "s.yaml:8:38: value takes one of add and set"},
	{VALUES_TASK "value: {name: v, add: 1.5}\n", NULL, NULL, NULL,
	 "s.yaml:9:35: value.add must be a whole number, not \"1.5\""},
	{VALUES_TASK "checkpoint: []\n", NULL, NULL, NULL,
	 "s.yaml:9:25: checkpoint needs at least one name"},
	{HEAD "tasks:\n  - id: A\n    threads:\n      - values: [v]\n        ops: []\n", NULL,
	 NULL, NULL, "s.yaml:7:17: threads[A.0].values must be a map, not a sequence"},
	{HEAD "tasks:\n  - id: A\n    threads:\n      - values: {v: abc}\n        ops: []\n",
	 NULL, NULL, NULL, "s.yaml:7:21: threads[A.0].values.v must be a whole number, not \"abc\""},
	{VALUES_TASK "task_done\nexpect:\n  threads:\n    A.0: {values: {w: 1}}\n", NULL, NULL,
	 NULL, "s.yaml:12:20: thread A.0 declares no value \"w\" in its values"},
	{VALUES_TASK "task_done\nexpect:\n  threads:\n    A.0: {values: {v: \">= x\"}}\n",
	 NULL, NULL, NULL, "s.yaml:12:23: expect values.v must be a whole number, not \"x\""},
	{TASK OP "repeat: {ops: []}\n", NULL, NULL, NULL,
	 "s.yaml:8:21: missing required key \"times\" in repeat"},
	{TASK OP "sync: s\n", NULL, NULL, NULL,
	 "s.yaml:8:19: undefined stream \"s\": no compute or borrow_stream in thread A.0 names it"},
	{TASK OP "alloc: {buf: x, size: 1, device: 1}\n", NULL, NULL, NULL,
	 "s.yaml:8:46: alloc device 1: the run has 1 GPU (memory.gpu.devices), 0 to 0"},
	{TASK OP "reserve: {res: r, size: 1, tier: host, strategy: specific, device: 1}\n", NULL,
	 NULL, NULL, "s.yaml:8:80: reserve device 1: the host tier has one space, device 0"},
	{TASK OP "borrow_stream: {stream: s, device: 2}\n", NULL, NULL, NULL,
	 "s.yaml:8:48: borrow_stream device 2: the run has 1 GPU (memory.gpu.devices), 0 to 0"},
	{TASK OP "borrow_stream: {stream: s, policy: wait}\n", NULL, NULL, NULL,
	 "s.yaml:8:48: borrow_stream.policy must be block or grow, not \"wait\""},
	{TASK OP "return_stream: s\n", NULL, NULL, NULL,
	 "s.yaml:8:28: undefined stream \"s\": no compute or borrow_stream in thread A.0 names it"},
	{TASK OP "release: r\n", NULL, NULL, NULL,
	 "s.yaml:8:22: undefined reservation \"r\": no reserve in thread A.0 names it"},
	{TASK OP "alloc: {buf: x, size: 1, reservation: r}\n", NULL, NULL, NULL,
	 "s.yaml:8:51: undefined reservation \"r\": no reserve in thread A.0 names it"},
	{TASK OP "reserve: {res: r, size: 1, tiers: [gpu]}\n", NULL, NULL, NULL,
	 "s.yaml:8:40: reserve.tiers is only for strategy any_in_tiers"},
	{TASK OP "reserve: {res: r, size: 1, strategy: any_in_tiers}\n", NULL, NULL, NULL,
	 "s.yaml:8:22: reserve with strategy any_in_tiers needs tiers"},
	{TASK OP "reserve: {res: r, size: 1, strategy: downgrade, from: host, to: gpu}\n", NULL,
	 NULL, NULL, "s.yaml:8:77: reserve.to must be a lower tier than from"},
	{TASK OP "reserve: {res: r, size: 1, tier: ssd}\n", NULL, NULL, NULL,
	 "s.yaml:8:46: reserve.tier must be gpu, host or disk, not \"ssd\""},
	{TASK OP "inject: {kind: cpu}\n", NULL, NULL, NULL,
	 "s.yaml:8:28: inject.kind must be any, host or gpu, not \"cpu\""},
	{TASK OP "associate: Z\n", NULL, NULL, NULL, "s.yaml:8:24: unknown task \"Z\" in associate"},
	{TASK OP "dissociate: [A]\n", NULL, NULL, NULL, "s.yaml:8:25: dissociate must be a single value, not a sequence"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [{pool: {work_for: [Z]}}]\n", NULL, NULL, NULL,
	 "s.yaml:6:30: unknown task \"Z\" in pool.work_for"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [{wait_on_pool: true}]\n", NULL, NULL, NULL,
	 "s.yaml:6:26: wait_on_pool is for a task's threads, not pool threads"},
	/* a free of another thread's buffers */
	{TASK OP "free: {buf: a, thread: Z}\n", NULL, NULL, NULL,
	 "s.yaml:8:36: unknown thread \"Z\" in free.thread"},
	{TASK OP "free: {buf: a, thread: A.0}\n", NULL, NULL, NULL,
	 "s.yaml:8:36: free.thread names the thread that frees: its own buffers are freed as "
	 "free: NAME"},
	{TASK OP "free: {buf: a}\n", NULL, NULL, NULL,
	 "s.yaml:8:19: missing required key \"thread\" in free"},
	{TASK OP "free: {buf: {x: 1}, thread: B.0}\n", NULL, NULL, NULL,
	 "s.yaml:8:25: free.buf must be a name or a sequence of names, not a map"},
	{TASK OP "free: {buf: [], thread: B.0}\n", NULL, NULL, NULL,
	 "s.yaml:8:25: free.buf needs at least one name"},
	{TASK OP "free: {buf: [x, y], thread: B.0}\n"
	 "  - id: B\n    threads: [{ops: [{alloc: {buf: x, size: 1}}]}]\n", NULL, NULL, NULL,
	 "s.yaml:8:29: undefined buffer \"y\": no alloc in thread B.0 names it"},
	{TASK OP "free: {buf: x, thread: B.0}\n"
	 "  - id: B\n    repeat: 2\n    threads: [{ops: [{alloc: {buf: x, size: 1}}]}]\n", NULL,
	 NULL, NULL,
	 "s.yaml:8:36: free.thread B.0 is a thread of task B, which repeats: a free names one "
	 "thread"},
	/* Spark's execution memory */
	{TASK OP "release_execution: {bytes: 1, consumer: c}\n", NULL, NULL, NULL,
	 "s.yaml:8:53: undefined consumer \"c\": thread A.0's consumers do not declare it"},
	{TASK OP "acquire_execution: 0\n", NULL, NULL, NULL,
	 "s.yaml:8:32: acquire_execution needs at least 1 byte"},
	{TASK OP "free_page: p\n", NULL, NULL, NULL,
	 "s.yaml:8:24: undefined page \"p\": no allocate_page in thread A.0 names it"},
	{TASK OP "allocate_page: {size: 1, page: p}\n", NULL, NULL, NULL,
	 "s.yaml:8:28: missing required key \"consumer\" in allocate_page"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [{acquire_execution: 1}]\n", NULL, NULL, NULL,
	 "s.yaml:6:31: acquire_execution is for a task's threads: a pool thread has no task "
	 "memory manager"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [{free_page: p}]\n", NULL, NULL, NULL,
	 "s.yaml:6:23: free_page is for a task's threads: a pool thread has no task memory "
	 "manager"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [clean_up]\n", NULL, NULL, NULL,
	 "s.yaml:6:11: clean_up is for a task's threads: a pool thread has no task memory "
	 "manager"},
	{HEAD "tasks:\n  - id: A\n    threads:\n      - consumers: {c: on_heap}\n"
	 "        ops: [{acquire_execution: {bytes: 1, consumer: c, mode: off_heap}}]\n", NULL, NULL,
	 NULL, "s.yaml:8:65: acquire_execution takes the mode of its consumer: give consumer or "
	 "mode, not both"},
	{HEAD "tasks:\n  - id: A\n    threads:\n      - consumers: {c: heap}\n        ops: []\n",
	 NULL, NULL, NULL,
	 "s.yaml:7:24: threads[A.0].consumers must be on_heap or off_heap, not \"heap\""},
	{EXPECT "  at: [{time: 0, execution: 5}]\n", NULL, NULL, NULL,
	 "s.yaml:10:8: an expect.at check of execution memory or a consumer names its task"},
	{EXPECT "  at: [{time: 0, task: A, consumer: c, execution: 5}]\n", NULL, NULL, NULL,
	 "s.yaml:10:27: an expect.at check of a task's execution memory takes no consumer"},
	{EXPECT "  at: [{time: 1ms, since: 2ms, task: A, retries: 1}]\n", NULL, NULL, NULL,
	 "s.yaml:10:27: expect.at since must not be after its time"},
	{EXPECT "  at: [{time: 1ms, retries: 1}]\n", NULL, NULL, NULL,
	 "s.yaml:10:8: an expect.at check of retries, splits, max_gpu or lost names its task"},
	{EXPECT "  at: [{time: 1ms, since: 0, tier: gpu, used: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:20: since is for a task's retries, splits, max_gpu or lost"},
	{EXPECT "  at: [{time: 1ms, task: A, tier: gpu, retries: 1}]\n", NULL, NULL, NULL,
	 "s.yaml:10:29: an expect.at check of a task's counts takes no tier"},
	{EXPECT "  threads: {A.0: {pages: [8192]}}\n", NULL, NULL, NULL,
	 "s.yaml:10:27: pages must be a whole number from 0 to 8191, not \"8192\""},
	/* Spark's storage memory */
	{TASK OP "acquire_storage: 5\n", NULL, NULL, NULL,
	 "s.yaml:8:30: acquire_storage must be a map, not \"5\""},
	{TASK OP "acquire_storage: {bytes: 5}\n", NULL, NULL, NULL,
	 "s.yaml:8:30: missing required key \"block\" in acquire_storage"},
	{TASK OP "acquire_storage: {block: [b], bytes: 5}\n", NULL, NULL, NULL,
	 "s.yaml:8:38: acquire_storage.block must be a single value, not a sequence"},
	{TASK OP "acquire_storage: {block: b, bytes: 5, mode: heap}\n", NULL, NULL, NULL,
	 "s.yaml:8:57: acquire_storage.mode must be on_heap or off_heap, not \"heap\""},
	{TASK OP "release_storage: {mode: off_heap}\n", NULL, NULL, NULL,
	 "s.yaml:8:30: missing required key \"bytes\" in release_storage"},
	{TASK OP "release_storage: -1\n", NULL, NULL, NULL,
	 "s.yaml:8:30: negative size \"-1\""},
	{TASK OP "release_all_storage: 1\n", NULL, NULL, NULL,
	 "s.yaml:8:34: release_all_storage takes no value"},
	{HEAD "pool_threads:\n  - name: P\n    ops: [release_all_storage]\n", NULL, NULL, NULL,
	 "s.yaml:6:11: release_all_storage is for a task's threads: a pool thread has no task "
	 "memory manager"},
	{"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 10MiB}, execution: {share: none}}\n"
	 "tasks:\n  - id: A\n    threads:\n      - ops:\n" OP "release_storage: 1\n", NULL, NULL,
	 NULL, "s.yaml:8:13: release_storage needs memory.execution.share fair: storage memory is "
	 "the unified memory manager's"},
	{"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 1}, execution: {share: none, evict: bytes}}\n",
	 NULL, NULL, NULL,
	 "s.yaml:3:62: memory.execution with share none has no storage memory: storage_fraction "
	 "and evict need share fair (the unified memory manager)"},
	{"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 1}, execution: {storage_fraction: 1.5}}\n",
	 NULL, NULL, NULL, "s.yaml:3:60: memory.execution.storage_fraction must be a fraction in [0, 1], not 1.5"},
	{"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 1}, execution: {evict: lru}}\n",
	 NULL, NULL, NULL,
	 "s.yaml:3:49: memory.execution.evict must be blocks or bytes, not \"lru\""},
	{EXPECT "  threads: {A.0: {stored: [yes]}}\n", NULL, NULL, NULL,
	 "s.yaml:10:28: stored must be true or false, not \"yes\""},
	{EXPECT "  at: [{time: 1ms, pool: disk, used: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:26: expect.at.pool must be execution or storage, not \"disk\""},
	{EXPECT "  at: [{time: 1ms, pool: storage}]\n", NULL, NULL, NULL,
	 "s.yaml:10:8: an expect.at check of a pool reads used or free"},
	{EXPECT "  at: [{time: 1ms, pool: storage, used: 0, free: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:8: an expect.at check of a pool reads used or free"},
	{EXPECT "  at: [{time: 1ms, pool: storage, task: A, used: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:35: an expect.at check of a pool takes no task"},
	{EXPECT "  at: [{time: 1ms, since: 0, pool: execution, evicted: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:36: evictions are storage's: pool storage"},
	{EXPECT "  at: [{time: 1ms, since: 2ms, pool: storage, evicted: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:27: expect.at since must not be after its time"},
	{EXPECT "  at: [{time: 1ms, since: 0, pool: storage, used: 0, evicted: 0}]\n", NULL, NULL,
	 NULL, "s.yaml:10:8: an expect.at check of evictions reads evict_asked or evicted, "
	 "not used or free"},
	{EXPECT "  at: [{time: 1ms, tier: gpu, free: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:31: free is for a check of a pool"},
	{EXPECT "  at: [{time: 1ms, thread: A.0, state: UNKNOWN, pool: storage}]\n", NULL, NULL,
	 NULL, "s.yaml:10:49: an expect.at check names a thread or a pool, not both"},
	/* expectations */
	{EXPECT "  threads: {B.0: {final_state: UNKNOWN}}\n", NULL, NULL, NULL,
	 "s.yaml:10:13: unknown thread \"B.0\" in expect.threads"},
	{EXPECT "  tasks: {B: {retries: 1}}\n", NULL, NULL, NULL,
	 "s.yaml:10:11: unknown task \"B\" in expect.tasks"},
	{EXPECT "  tasks: {A: {retry: 1}}\n", NULL, NULL, NULL,
	 "s.yaml:10:15: unknown key \"retry\" in expect.tasks.A (expected outcome, attempts"},
	{EXPECT "  threads: {A.0: {reached: [THREAD_SLEEPING]}}\n", NULL, NULL, NULL,
	 "s.yaml:10:29: unknown thread state \"THREAD_SLEEPING\" (expected UNKNOWN, "
	 "THREAD_RUNNING"},
	{EXPECT "  threads: {A.0: {never: [THREAD_ALLOC, GpuOops]}}\n", NULL, NULL, NULL,
	 "s.yaml:10:41: unknown exception \"GpuOops\"; did you mean \"GpuOOM\"? (expected GpuRetryOOM"},
	{EXPECT "  threads: {A.0: {never: THREAD_ALLOC}}\n", NULL, NULL, NULL,
	 "s.yaml:10:26: never must be a sequence, not \"THREAD_ALLOC\""},
	{EXPECT "  at: [{time: 1ms, task: Z, tier: gpu, used: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:26: unknown task \"Z\" in expect.at"},
	{EXPECT "  at: [{time: 1ms, task: A, tier: gpu, charged: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:40: a task's bytes are the ones it uses: used, pinned or non_pinned, not "
	 "charged"},
	{EXPECT "  at: [{time: 1ms, task: A, used: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:20: an expect.at check of a task needs its tier and used bytes"},
	{EXPECT "  at: [{time: 1ms, task: A, thread: A.0, state: UNKNOWN}]\n", NULL, NULL, NULL,
	 "s.yaml:10:20: an expect.at check names a thread or a task, not both"},
	{EXPECT "  threads: {A.0: {threw: [GpuOops]}}\n", NULL, NULL, NULL,
	 "s.yaml:10:27: unknown exception \"GpuOops\"; did you mean \"GpuOOM\"? (expected GpuRetryOOM"},
	{EXPECT "  threads: {A.0: {final_state: DONE}}\n", NULL, NULL, NULL,
	 "s.yaml:10:32: unknown thread state \"DONE\""},
	{EXPECT "  makespan: \"=< 2s\"\n", NULL, NULL, NULL,
	 "s.yaml:10:13: bad comparison operator \"=<\" in \"=< 2s\" (expected ==, !=, <, <=, > or "
	 ">=)"},
	{EXPECT "  makespan: \"<=\"\n", NULL, NULL, NULL,
	 "s.yaml:10:13: comparison \"<=\" has no value"},
	{EXPECT "  makespan: 2\n", NULL, NULL, NULL, "s.yaml:10:13: duration \"2\" needs a unit"},
	{EXPECT "  outcome: finished\n", NULL, NULL, NULL,
	 "s.yaml:10:12: expect outcome must be completed, failed, deadlock or timeout, not "
	 "\"finished\""},
	{EXPECT "  totals: {retry: 1}\n", NULL, NULL, NULL,
	 "s.yaml:10:12: unknown key \"retry\" in expect.totals (expected tasks, tasks_completed"},
	{EXPECT "  totals: {retries: many}\n", NULL, NULL, NULL,
	 "s.yaml:10:21: expect totals.retries must be a whole number >= 0, not \"many\""},
	{EXPECT "  at: [{time: 1ms, thread: A.0, state: THREAD_RUNNING, tier: gpu}]\n", NULL, NULL,
	 NULL, "s.yaml:10:56: an expect.at check names a thread or a tier, not both"},
	{EXPECT "  at: [{time: 1ms, tier: gpu}]\n", NULL, NULL, NULL,
	 "s.yaml:10:8: an expect.at check of a tier needs used, charged, available, max_memory, "
	 "peak_charged, reserved, reservations, pinned or non_pinned"},
	{EXPECT "  at: [{time: 1ms, tier: gpu, used: 0, available: 1MiB}]\n", NULL, NULL, NULL,
	 "s.yaml:10:40: an expect.at check of a tier reads one of used, charged, available, "
	 "max_memory, peak_charged, reserved, reservations, pinned and non_pinned, not used and "
	 "available"},
	{EXPECT "  at: [{time: 1ms, task: A, tier: gpu, max_memory: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:40: a task's bytes are the ones it uses: used, pinned or non_pinned, not "
	 "max_memory"},
	{EXPECT "  at: [{time: 1ms, tier: gpu, pinned: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:31: pinned is a pool of host memory: it needs tier: host"},
	{EXPECT "  at: [{time: 1ms, task: A, tier: disk, non_pinned: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:41: non_pinned is a pool of host memory: it needs tier: host"},
	{EXPECT "  at: [{time: 1ms, tier: host, pinned: 0, non_pinned: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:43: an expect.at check of a tier reads one of used, charged, available, "
	 "max_memory, peak_charged, reserved, reservations, pinned and non_pinned, not pinned and "
	 "non_pinned"},
	{EXPECT "  at: [{time: 1ms, thread: A.0, state: UNKNOWN, pinned: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:49: pinned is for a tier, not a thread"},
	{EXPECT "  at: [{time: 1ms, tier: host, pinned: lots}]\n", NULL, NULL, NULL,
	 "s.yaml:10:40: bad size \"lots\""},
	{EXPECT "  at: [{time: 1ms, thread: A.0, state: UNKNOWN, available: 0}]\n", NULL, NULL, NULL,
	 "s.yaml:10:49: available is for a tier, not a thread"},
	{EXPECT "  at: [{time: 1ms, thread: Z, state: UNKNOWN}]\n", NULL, NULL, NULL,
	 "s.yaml:10:28: unknown thread \"Z\" in expect.at"},
	{HEAD "tasks:\n  - id: A\n    repeat: 3\n    threads: [{ops: []}]\nexpect:\n"
	      "  tasks: {A: {retries: 0}}\n",
	 NULL, NULL, NULL, "s.yaml:9:11: task A repeats: name a copy, A#0 to A#2, in expect.tasks"},
	{HEAD "tasks:\n  - id: A\n    repeat: 3\n    threads: [{ops: []}]\nexpect:\n"
	      "  tasks: {A#3: {retries: 0}}\n",
	 NULL, NULL, NULL, "s.yaml:9:11: unknown task \"A#3\" in expect.tasks"},
	{EXPECT "  tasks: {A#0: {retries: 0}}\n", NULL, NULL, NULL,
	 "s.yaml:10:11: unknown task \"A#0\" in expect.tasks"},
	{HEAD "tasks:\n  - id: A\n    repeat: 3\n    threads: [{ops: []}]\nexpect:\n"
	      "  threads: {A.0: {final_state: UNKNOWN}}\n",
	 NULL, NULL, NULL,
	 "s.yaml:9:13: thread A.0 belongs to task A, which repeats: name a copy's thread, as "
	 "A#0.0, in expect.threads"},
	/* includes */
	{HEAD "include: [b.yaml]\n", "include: [s.yaml]\n", NULL, NULL,
	 "b.yaml:1:11: include cycle: s.yaml includes b.yaml includes s.yaml"},
	{HEAD "include: missing.yaml\n", NULL, NULL, NULL,
	 "s.yaml:4:10: cannot include missing.yaml: No such file or directory"},
	{HEAD "include: [b.yaml]\n", "- a\n", NULL, NULL,
	 "b.yaml:1:1: an included file must be a map, not a sequence"},
	{HEAD "include: [b.yaml]\n", "policy: {oom: maybe}\n", NULL, NULL,
	 "b.yaml:1:15: policy.oom must be fail, block or retry, not \"maybe\""},
	/* variants */
	{HEAD "variants:\n  a: {}\n  b: {policy: {oom: fail}}\n", NULL, "c", NULL,
	 "s.yaml:4:1: unknown variant \"c\" (the scenario has a or b)"},
	{HEAD, NULL, "x", NULL, "s.yaml:1:1: unknown variant \"x\": the scenario has no variants"},
	{HEAD "variants:\n  v: {policy: {oom: maybe}}\n", NULL, "v", NULL,
	 "s.yaml:5:21: policy.oom must be fail, block or retry, not \"maybe\""},
	{HEAD "variants:\n  v: {include: [b.yaml]}\n", NULL, "v", NULL,
	 "s.yaml:5:7: a variant cannot change include"},
	{HEAD "variants:\n  v: [1]\n", NULL, NULL, NULL,
	 "s.yaml:5:6: variant \"v\" must be a map, not a sequence"},
	/* --set */
	{HEAD, NULL, NULL, "memory.gpu.capacity",
	 "--set memory.gpu.capacity:1:20: expected KEY=VALUE"},
	{HEAD, NULL, NULL, "memory..capacity=1",
	 "--set memory..capacity=1:1:8: empty key in the --set path \"memory..capacity\""},
	{HEAD, NULL, NULL, "memory.gpu.capcity=1",
	 "--set memory.gpu.capcity=1:1:12: unknown key \"capcity\" in memory.gpu"},
	{HEAD, NULL, NULL, "polcy.oom=fail", "--set polcy.oom=fail:1:1: unknown key \"polcy\""},
	{HEAD, NULL, NULL, "policy.oom=sometimes",
	 "--set policy.oom=sometimes:1:12: policy.oom must be fail, block or retry, not "
	 "\"sometimes\""},
	{HEAD, NULL, NULL, "memory.gpu.capacity=-8GiB",
	 "--set memory.gpu.capacity=-8GiB:1:21: negative size \"-8GiB\""},
	{HEAD, NULL, NULL, "policy={spill: {enabled: maybe}}",
	 "--set policy={spill: {enabled: maybe}}:1:26: policy.spill.enabled must be true or false"},
	{HEAD, NULL, NULL, "name.first=x",
	 "--set name.first=x:1:1: cannot set a key inside \"name\": it is a single value, not a "
	 "map"},
	{TASK, NULL, NULL, "tasks.0.id=B",
	 "--set tasks.0.id=B:1:1: cannot set a key inside \"tasks\": it is a sequence, not a map"},
	{HEAD, NULL, NULL, "policy={oom: [",
	 "--set policy={oom: [:1:15: YAML syntax error: "},
	{HEAD, NULL, NULL, "include=b.yaml",
	 "--set include=b.yaml:1:9: include works only in a file, not in a variant or --set"},
};

START_TEST(test_bad)
{
	const BadRow *row = &bad_rows[_i];
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml", row->yaml);
	const char *sets[] = {row->set, NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;
	g_autofree char *message = NULL;

	if (row->b_yaml != NULL)
		tmp_write(t, "b.yaml", row->b_yaml);
	w = gs_loader_load(path, row->variant, sets, &error);
	ck_assert_msg(w == NULL, "row %d loaded, expected: %s", _i, row->expected);
	ck_assert(error != NULL);
	ck_assert(g_error_matches(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID));
	message = relative_message(t, error);
	ck_assert_msg(g_str_has_prefix(message, row->expected),
		      "row %d:\n  got:      %s\n  expected: %s", _i, message, row->expected);
	ck_assert_msg(strchr(message, '\n') == NULL, "row %d: more than one error:\n%s", _i,
		      message);
	tmp_free(t);
}
END_TEST

/*
 * The same rows held in memory under the name s.yaml would have: the same
 * messages, b.yaml included from beside that name. The text is copied
 * without its NUL, which the loader must not need.
 */
START_TEST(test_bad_text)
{
	const BadRow *row = &bad_rows[_i];
	Tmp *t = tmp_new();
	g_autofree char *name = g_build_filename(t->dir, "s.yaml", NULL);
	gsize len = strlen(row->yaml);
	g_autofree char *text = g_memdup2(row->yaml, len);
	const char *sets[] = {row->set, NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;
	g_autofree char *message = NULL;

	if (row->b_yaml != NULL)
		tmp_write(t, "b.yaml", row->b_yaml);
	w = gs_loader_load_text(name, text, len, row->variant, sets, &error);
	ck_assert_msg(w == NULL, "row %d loaded, expected: %s", _i, row->expected);
	ck_assert(g_error_matches(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID));
	message = relative_message(t, error);
	ck_assert_msg(g_str_has_prefix(message, row->expected),
		      "row %d:\n  got:      %s\n  expected: %s", _i, message, row->expected);
	ck_assert_msg(strchr(message, '\n') == NULL, "row %d: more than one error:\n%s", _i,
		      message);
	tmp_free(t);
}
END_TEST

/* ---- several errors in one file: each on its line, in file order ---- */

/* "task_done: 1", each an error: from line 8 in TASK, the value at column 24. */
#define DONE OP "task_done: 1\n"
#define DONE_5 DONE DONE DONE DONE DONE
#define DONE_20 DONE_5 DONE_5 DONE_5 DONE_5
#define DONE_AT(line) "s.yaml:" #line ":24: task_done takes no value\n"
#define DONE_AT_8_TO_27                                                                  \
	DONE_AT(8) DONE_AT(9) DONE_AT(10) DONE_AT(11) DONE_AT(12) DONE_AT(13) DONE_AT(14)  \
	DONE_AT(15) DONE_AT(16) DONE_AT(17) DONE_AT(18) DONE_AT(19) DONE_AT(20) DONE_AT(21) \
	DONE_AT(22) DONE_AT(23) DONE_AT(24) DONE_AT(25) DONE_AT(26) DONE_AT(27)

typedef struct {
	/* Inputs */
	const char *yaml; /* s.yaml */
	/*
	 * Outputs: the whole message, each line (an error) ended by a newline;
	 * without a newline at its end, the start of the one line expected
	 */
	const char *expected;
} SeveralRow;

static const SeveralRow several_rows[] = {
	/* two, in file order: unknown keys are found before the known keys' values */
	{HEAD "tasks:\n  - id: A\n    start: soon\n    threads: [{ops: [task_done]}]\n"
	      "polcy: {}\n",
	 "s.yaml:6:12: bad duration \"soon\": expected a number with a unit (ns, us, ms or s)\n"
	 "s.yaml:8:1: unknown key \"polcy\"; did you mean \"policy\"? (expected gpusim, name, "
	 "description, seed, include, memory, links, executor, policy, variants, tasks, "
	 "pool_threads, generate, expect, schedule or schedule_jitter)\n"},
	/*
	 * three; the misspelt size is not also missing, and the free of a, whose
	 * alloc did not read, is not an undefined buffer
	 */
	{HEAD "policy: {oom: maybe}\ntasks:\n  - id: A\n    threads:\n      - ops:\n"
	 OP "alloc: {buf: a, sise: 1MiB}\n" OP "free: a\n" OP "sleep: 1parsec\n",
	 "s.yaml:4:15: policy.oom must be fail, block or retry, not \"maybe\"\n"
	 "s.yaml:9:29: unknown key \"sise\" in alloc; did you mean \"size\"? (expected buf, "
	 "size, kind, blocking, prefer_pinned, spillable, reservation or device)\n"
	 "s.yaml:11:20: unknown unit \"parsec\" in duration \"1parsec\" (expected ns, us, ms or "
	 "s)\n"},
	/* three references to what is not there, when the rest reads cleanly */
	{TASK OP "free: a\n" OP "sync: s\n" "expect:\n  threads:\n    Z.0: {reached: [running]}\n",
	 "s.yaml:8:19: undefined buffer \"a\": no alloc in thread A.0 names it\n"
	 "s.yaml:9:19: undefined stream \"s\": no compute or borrow_stream in thread A.0 names "
	 "it\n"
	 "s.yaml:12:5: unknown thread \"Z.0\" in expect.threads\n"},
	/* as many as are reported */
	{TASK DONE_20, DONE_AT_8_TO_27},
	/* more: loading stops at the one past the limit */
	{TASK DONE_20 DONE DONE,
	 DONE_AT_8_TO_27 "s.yaml:28:24: more than 20 errors: stopping here\n"},
	/* a file that does not parse has only that error */
	{HEAD "polcy: {}\ntasks: [\n", "s.yaml:6:1: YAML syntax error: "},
};

START_TEST(test_several)
{
	const SeveralRow *row = &several_rows[_i];
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml", row->yaml);
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);
	g_autofree char *message = NULL;
	g_autofree char *lines = NULL;

	ck_assert_msg(w == NULL, "row %d loaded", _i);
	ck_assert(g_error_matches(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID));
	message = relative_message(t, error);
	lines = g_strconcat(message, "\n", NULL);
	if (g_str_has_suffix(row->expected, "\n"))
		ck_assert_msg(strcmp(lines, row->expected) == 0,
			      "row %d:\n  got:\n%s  expected:\n%s", _i, lines, row->expected);
	else
		ck_assert_msg(g_str_has_prefix(lines, row->expected) &&
				      strchr(lines, '\n') == lines + strlen(lines) - 1,
			      "row %d:\n  got:\n%s  expected one line:\n%s", _i, lines,
			      row->expected);
	tmp_free(t);
}
END_TEST

/* ---- quantities in base units, through --set on a minimal scenario ---- */

typedef enum { Q_GPU_CAPACITY, Q_WATCHDOG, Q_BANDWIDTH, Q_FRACTION, Q_SLOTS, Q_SEED } QField;

typedef struct {
	/* Inputs */
	const char *set;
	QField field;
	/* Outputs */
	gint64 value;  /* sizes, durations, counts */
	double real;   /* bandwidths, fractions */
} GoodRow;

static const GoodRow good_rows[] = {
	{"memory.gpu.capacity=0", Q_GPU_CAPACITY, 0, 0},
	{"memory.gpu.capacity=1000", Q_GPU_CAPACITY, 1000, 0},
	{"memory.gpu.capacity=7B", Q_GPU_CAPACITY, 7, 0},
	{"memory.gpu.capacity=6MiB", Q_GPU_CAPACITY, 6 * MIB, 0},
	{"memory.gpu.capacity=1.5GiB", Q_GPU_CAPACITY, 3 * GIB / 2, 0},
	{"memory.gpu.capacity=1.25KiB", Q_GPU_CAPACITY, 1280, 0},
	{"memory.gpu.capacity=2TiB", Q_GPU_CAPACITY, 2 * 1024 * GIB, 0},
	{"memory.gpu.capacity=10KB", Q_GPU_CAPACITY, 10000, 0},
	{"memory.gpu.capacity=0.5KB", Q_GPU_CAPACITY, 500, 0},
	{"memory.gpu.capacity=3 MB", Q_GPU_CAPACITY, 3000000, 0},
	{"memory.gpu.capacity=1.50GB", Q_GPU_CAPACITY, 1500000000, 0},
	{"memory.gpu.capacity=1TB", Q_GPU_CAPACITY, G_GINT64_CONSTANT(1000000000000), 0},
	{"memory.gpu.capacity=8EB", Q_GPU_CAPACITY, -1, 0}, /* -1: refused */
	{"policy.watchdog=0", Q_WATCHDOG, 0, 0},
	{"policy.watchdog=0s", Q_WATCHDOG, 0, 0},
	{"policy.watchdog=7ns", Q_WATCHDOG, 7, 0},
	{"policy.watchdog=0.5us", Q_WATCHDOG, 500, 0},
	{"policy.watchdog=250us", Q_WATCHDOG, 250 * US, 0},
	{"policy.watchdog=1.5ms", Q_WATCHDOG, 1500 * US, 0},
	{"policy.watchdog=2s", Q_WATCHDOG, 2 * SEC, 0},
	{"policy.watchdog=0.1ns", Q_WATCHDOG, -1, 0},
	{"links.gpu_host.bandwidth=25GB/s", Q_BANDWIDTH, 0, 25e9},
	{"links.gpu_host.bandwidth=900MiB/s", Q_BANDWIDTH, 0, 900.0 * 1024 * 1024},
	{"links.gpu_host.bandwidth=1.5GiB/s", Q_BANDWIDTH, 0, 1.5 * 1024 * 1024 * 1024},
	{"links.gpu_host.bandwidth=0", Q_BANDWIDTH, 0, 0},
	{"memory.gpu.reservation_limit=0", Q_FRACTION, 0, 0},
	{"memory.gpu.reservation_limit=1", Q_FRACTION, 0, 1},
	{"memory.gpu.reservation_limit=0.25", Q_FRACTION, 0, 0.25},
	{"memory.gpu.reservation_limit=1.0", Q_FRACTION, 0, 1},
	{"memory.gpu.reservation_limit=1.01", Q_FRACTION, -1, 0},
	{"executor.slots=0", Q_SLOTS, 0, 0},
	{"executor.slots=12", Q_SLOTS, 12, 0},
	{"executor.slots=1.5", Q_SLOTS, -1, 0},
	{"seed=18446744073709551615", Q_SEED, -1 /* as gint64 */, 1},
};

static gint64
quantity_of(const GsWorkload *w, QField field)
{
	switch (field) {
	case Q_GPU_CAPACITY:
		return w->gpu.capacity;
	case Q_WATCHDOG:
		return w->policy.watchdog;
	case Q_SLOTS:
		return w->executor_slots;
	case Q_SEED:
		return (gint64) w->seed;
	case Q_BANDWIDTH:
	case Q_FRACTION:
		break;
	}
	return 0;
}

START_TEST(test_quantity)
{
	const GoodRow *row = &good_rows[_i];
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml", HEAD);
	const char *sets[] = {row->set, NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, sets, &error);
	gboolean refused = row->value == -1 && row->real == 0;

	tmp_free(t);
	if (refused) {
		ck_assert_msg(w == NULL, "row %d (%s) was accepted", _i, row->set);
		return;
	}
	ck_assert_msg(w != NULL, "row %d (%s): %s", _i, row->set, error ? error->message : "");
	if (row->field == Q_BANDWIDTH)
		ck_assert_double_eq(w->links.gpu_host.bandwidth, row->real);
	else if (row->field == Q_FRACTION)
		ck_assert_double_eq(w->gpu.reservation_limit, row->real);
	else
		ck_assert_int_eq(quantity_of(w, row->field), row->value);
}
END_TEST

/* ---- a complete scenario ---- */

static GsWorkload *
load_full(const char *variant, const char *const *sets)
{
	g_autofree char *path = fixture("loader-full.yaml");
	g_autoptr(GError) error = NULL;
	GsWorkload *w = gs_loader_load(path, variant, sets, &error);

	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	return w;
}

static GsOp *
op_at(GArray *ops, guint i)
{
	ck_assert_uint_lt(i, ops->len);
	return &g_array_index(ops, GsOp, i);
}

static guint
uint_at(GArray *a, guint i)
{
	ck_assert_uint_lt(i, a->len);
	return g_array_index(a, guint, i);
}

static guint
name_at(const GsNames *names, guint i)
{
	ck_assert_uint_lt(i, names->len);
	return gs_names_data(names)[i];
}

static GsThreadSpec *
task_thread(GsWorkload *w, guint task, guint thread)
{
	GsTaskSpec *t = w->tasks->pdata[task];

	ck_assert_uint_lt(thread, t->threads->len);
	return t->threads->pdata[thread];
}

START_TEST(test_full_top)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);

	ck_assert_str_eq(w->name, "loader-full");
	ck_assert_str_eq(w->description, "every key the loader knows");
	ck_assert(w->variant == NULL);
	ck_assert(g_str_has_suffix(w->file, "loader-full.yaml"));
	ck_assert_uint_eq(w->seed, 7);
	/* memory: the file's keys over the included ones, the others kept */
	ck_assert_int_eq(w->gpu.capacity, 10 * MIB);
	ck_assert_uint_eq(w->gpu.devices, 2);
	ck_assert_int_eq(w->gpu.alignment, 512);
	ck_assert_int_eq(w->gpu.allocator, GS_ALLOCATOR_POOL);
	ck_assert_double_eq(w->gpu.reservation_limit, 0.8);
	ck_assert_double_eq(w->gpu.downgrade_trigger, 0.7);
	ck_assert_double_eq(w->gpu.downgrade_stop, 0.5);
	ck_assert_int_eq(w->host.capacity, 64 * GIB);
	ck_assert_int_eq(w->host.block_size, 2 * MIB);
	ck_assert_uint_eq(w->host.pool_blocks, 128);
	ck_assert_int_eq(w->disk.capacity, G_GINT64_CONSTANT(1000000000000));
	ck_assert_str_eq(w->disk.path, "/tmp");
	ck_assert_double_eq(w->links.gpu_host.bandwidth, 25e9);
	ck_assert_int_eq(w->links.gpu_host.latency, 10 * US);
	ck_assert_double_eq(w->links.host_disk.bandwidth, 2e9);
	ck_assert_int_eq(w->links.host_disk.latency, 100 * US);
	ck_assert_int_eq(w->links.alloc_latency, US);
	ck_assert_double_eq(w->links.fresh.bandwidth, 0);
	ck_assert_int_eq(w->links.fresh.from, 0);
	ck_assert_double_eq(w->links.host_pools.bandwidth, 0);
	ck_assert_double_eq(w->links.lanes, 0);
	ck_assert_uint_eq(w->executor_slots, 4);
	ck_assert_uint_eq(w->variant_names->len, 2);
	ck_assert_str_eq(w->variant_names->pdata[0], "fail-fast");
	ck_assert_str_eq(w->variant_names->pdata[1], "small");
	ck_assert(!w->generate.enabled);
}
END_TEST

START_TEST(test_full_policy)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	const GsPolicy *p = &w->policy;

	ck_assert_int_eq(p->oom, GS_OOM_RETRY); /* the file's retry over the included block */
	ck_assert_int_eq(p->priority, GS_PRIORITY_TASK_ID);
	ck_assert_int_eq(p->split_victim, GS_SPLIT_LOWEST);
	ck_assert(!p->retry_before_bufn);
	ck_assert_uint_eq(p->retry_cap, 100);
	ck_assert_int_eq(p->watchdog, 50 * MS);
	ck_assert(p->sleep_is_blocked);
	ck_assert_uint_eq(p->concurrent_gpu_tasks, 2);
	ck_assert_uint_eq(p->task_attempts, 4);
	/* spill: the included enabled/victim kept, the file's keys merged in */
	ck_assert(p->spill.enabled);
	ck_assert_int_eq(p->spill.victim, GS_VICTIM_LARGEST);
	ck_assert(!p->spill.on_demand);
	ck_assert(!p->spill.proactive);
	ck_assert_int_eq(p->spill.host_full, GS_HOST_FULL_FAIL);
	ck_assert_int_eq(p->reservations.over, GS_OVER_INCREASE);
	ck_assert_double_eq(p->reservations.increase_factor, 1.5);
	ck_assert_int_eq(p->reservations.attribution, GS_ATTRIBUTION_STREAM);
	ck_assert_int_eq(p->reservations.blocking, GS_BLOCK_FOR_WHOLE);
	ck_assert_int_eq(p->admission, GS_ADMISSION_FAIR_SHARE);
	ck_assert(!p->evac_gate);
}
END_TEST

START_TEST(test_full_tasks)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	GsTaskSpec *a, *two;

	ck_assert_uint_eq(w->tasks->len, 2);
	a = w->tasks->pdata[0];
	two = w->tasks->pdata[1];
	ck_assert_str_eq(a->id, "A");
	ck_assert_int_eq(a->start, 0);
	ck_assert_uint_eq(a->priority, 0);
	ck_assert_uint_eq(a->repeat, 1);
	ck_assert_uint_eq(a->line, 36);
	ck_assert_uint_eq(a->column, 5);
	ck_assert_uint_eq(a->threads->len, 2);
	ck_assert_str_eq(task_thread(w, 0, 0)->name, "A.0"); /* the default name */
	ck_assert_int_eq(task_thread(w, 0, 0)->on_oom, GS_ON_OOM_FAIL);
	ck_assert_str_eq(task_thread(w, 0, 1)->name, "A.helper");
	ck_assert_int_eq(task_thread(w, 0, 1)->on_oom, GS_ON_OOM_CONTINUE);
	ck_assert_str_eq(two->id, "2"); /* an integer id, as written */
	ck_assert_int_eq(two->start, MS);
	ck_assert_uint_eq(two->priority, 1);
	ck_assert_uint_eq(two->repeat, 3);
	ck_assert_int_eq(two->every, 2 * MS);
	ck_assert_str_eq(task_thread(w, 1, 0)->name, "2.0");
	ck_assert_uint_eq(task_thread(w, 1, 0)->ops->len, 2);
	ck_assert_int_eq(op_at(task_thread(w, 1, 0)->ops, 0)->alloc.size, 1000);
}
END_TEST

START_TEST(test_full_ops)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	GsThreadSpec *t = task_thread(w, 0, 0);
	GsOp *op, *retry, *repeat;

	ck_assert_uint_eq(t->ops->len, 5);
	ck_assert_uint_eq(t->buffers->len, 3);
	ck_assert_str_eq(t->buffers->pdata[0], "x");
	ck_assert_str_eq(t->buffers->pdata[1], "y");
	ck_assert_str_eq(t->buffers->pdata[2], "t");
	ck_assert_uint_eq(t->streams->len, 1);
	op = op_at(t->ops, 0);
	ck_assert_int_eq(op->kind, GS_OP_ALLOC);
	ck_assert_uint_eq(op->line, 40);
	ck_assert_uint_eq(op->column, 13);
	ck_assert_uint_eq(op->alloc.buf, 0);
	ck_assert_int_eq(op->alloc.size, 6 * MIB);
	ck_assert_int_eq(op->alloc.kind, GS_KIND_GPU);
	ck_assert(op->alloc.blocking);
	ck_assert(!op->alloc.spillable);
	ck_assert_int_eq(op->alloc.reservation, -1);
	op = op_at(t->ops, 1);
	ck_assert_int_eq(op->kind, GS_OP_COMPUTE);
	ck_assert_int_eq(op->compute.time, 5 * MS);
	ck_assert_uint_eq(op->compute.uses.len, 0);
	ck_assert_int_eq(op->compute.stream, -1);
	retry = op_at(t->ops, 2);
	ck_assert_int_eq(retry->kind, GS_OP_RETRY);
	ck_assert_int_eq(retry->retry.split, GS_SPLIT_HALVES);
	ck_assert_uint_eq(retry->retry.max_splits, 16);
	ck_assert_uint_eq(retry->retry.input.len, 1);
	ck_assert_uint_eq(name_at(&retry->retry.input, 0), 0);
	ck_assert_uint_eq(retry->retry.ops->len, 5);
	op = op_at(retry->retry.ops, 0);
	ck_assert_uint_eq(op->alloc.buf, 1);
	ck_assert_int_eq(op->alloc.size, 3 * MIB / 2);
	ck_assert(op->alloc.spillable);
	op = op_at(retry->retry.ops, 1);
	ck_assert_int_eq(op->compute.time, 250 * US);
	ck_assert_uint_eq(name_at(&op->compute.uses, 0), 0);
	ck_assert_uint_eq(name_at(&op->compute.uses, 1), 1);
	ck_assert_int_eq(op->compute.stream, 0);
	op = op_at(retry->retry.ops, 2);
	ck_assert_int_eq(op->kind, GS_OP_SYNC);
	ck_assert_uint_eq(op->stream, 0);
	repeat = op_at(retry->retry.ops, 3);
	ck_assert_int_eq(repeat->kind, GS_OP_REPEAT);
	ck_assert_uint_eq(repeat->repeat.times, 3);
	ck_assert_uint_eq(repeat->repeat.ops->len, 2);
	ck_assert_uint_eq(op_at(repeat->repeat.ops, 0)->alloc.buf, 2);
	ck_assert_int_eq(op_at(repeat->repeat.ops, 0)->alloc.size, KIB);
	ck_assert_uint_eq(name_at(&op_at(repeat->repeat.ops, 1)->free.bufs, 0), 2);
	op = op_at(retry->retry.ops, 4);
	ck_assert_int_eq(op->retry.split, GS_SPLIT_NONE);
	ck_assert_uint_eq(op->retry.input.len, 0);
	ck_assert_int_eq(op_at(op->retry.ops, 0)->kind, GS_OP_BLOCK_UNTIL_READY);
	op = op_at(t->ops, 3);
	ck_assert_int_eq(op->kind, GS_OP_FREE);
	ck_assert_uint_eq(op->free.bufs.len, 2);
	ck_assert_uint_eq(name_at(&op->free.bufs, 1), 1);
	ck_assert_int_eq(op_at(t->ops, 4)->kind, GS_OP_TASK_DONE);
}
END_TEST

START_TEST(test_full_helper_ops)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	GsThreadSpec *t = task_thread(w, 0, 1);
	GsOp *op;

	ck_assert_uint_eq(t->ops->len, 10);
	op = op_at(t->ops, 0);
	ck_assert_int_eq(op->kind, GS_OP_RESERVE);
	ck_assert_uint_eq(op->reserve.res, 0);
	ck_assert_int_eq(op->reserve.size, GIB);
	ck_assert_int_eq(op->reserve.tier, GS_TIER_HOST);
	ck_assert_int_eq(op->reserve.strategy, GS_STRATEGY_ANY_IN_TIERS);
	ck_assert_int_eq(op->reserve.mode, GS_RESERVE_UPTO);
	ck_assert_uint_eq(op->reserve.tiers->len, 2);
	ck_assert_int_eq(g_array_index(op->reserve.tiers, GsTier, 1), GS_TIER_DISK);
	op = op_at(t->ops, 1);
	ck_assert_int_eq(op->alloc.kind, GS_KIND_HOST);
	ck_assert(!op->alloc.blocking);
	ck_assert_int_eq(op->alloc.reservation, 0);
	ck_assert_int_eq(op_at(t->ops, 2)->kind, GS_OP_SPILLABLE);
	ck_assert_int_eq(op_at(t->ops, 3)->kind, GS_OP_UNSPILLABLE);
	ck_assert_uint_eq(name_at(&op_at(t->ops, 3)->free.bufs, 0), 0);
	ck_assert(op_at(t->ops, 4)->wait_on_pool);
	op = op_at(t->ops, 5);
	ck_assert_int_eq(op->inject.retry_oom, 2);
	ck_assert_int_eq(op->inject.split_oom, 0);
	ck_assert_int_eq(op->inject.skip, 1);
	ck_assert_int_eq(op->inject.kind, GS_KIND_FILTER_GPU);
	ck_assert_int_eq(op_at(t->ops, 6)->time, 200 * MS);
	ck_assert_int_eq(op_at(t->ops, 7)->kind, GS_OP_UNTIL);
	ck_assert_int_eq(op_at(t->ops, 7)->time, 3 * MS);
	ck_assert_uint_eq(op_at(t->ops, 8)->res, 0);
	ck_assert_int_eq(op_at(t->ops, 9)->kind, GS_OP_FREE);
}
END_TEST

START_TEST(test_full_pool)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	GsThreadSpec *s;
	GsOp *op;

	ck_assert_uint_eq(w->pool_threads->len, 1);
	s = w->pool_threads->pdata[0];
	ck_assert_str_eq(s->name, "S");
	ck_assert(s->shuffle);
	op = op_at(s->ops, 0);
	ck_assert(!op->pool.done);
	ck_assert_uint_eq(op->pool.tasks->len, 2);
	ck_assert_uint_eq(uint_at(op->pool.tasks, 0), 0);
	ck_assert_uint_eq(uint_at(op->pool.tasks, 1), 1); /* task "2" is tasks[1] */
	op = op_at(s->ops, 1);
	ck_assert_int_eq(op->reserve.strategy, GS_STRATEGY_DOWNGRADE);
	ck_assert_int_eq(op->reserve.from, GS_TIER_GPU);
	ck_assert_int_eq(op->reserve.to, GS_TIER_HOST);
	ck_assert_int_eq(op->reserve.mode, GS_RESERVE_OR_NULL);
	op = op_at(s->ops, 3);
	ck_assert(op->pool.done);
	ck_assert_uint_eq(uint_at(op->pool.tasks, 0), 0);
}
END_TEST

/* The unified memory manager's keys, its storage ops and the checks that read them. */
static const char storage_yaml[] =
	"gpusim: 1\nname: t\n"
	"memory: {gpu: {capacity: 1MiB}, execution: {on_heap: 1000, off_heap: 10,"
	" storage_fraction: 0.25, evict: bytes}}\n"
	"tasks:\n  - id: A\n    threads:\n      - ops:\n"
	"          - acquire_storage: {block: rdd_1_0, bytes: 10, mode: off_heap}\n"
	"          - release_storage: 4\n"
	"          - release_storage: {bytes: 2, mode: off_heap}\n"
	"          - release_all_storage\n"
	"expect:\n  threads: {A.0: {stored: [true, false]}}\n"
	"  at:\n"
	"    - {time: 1ms, pool: storage, mode: off_heap, free: 5}\n"
	"    - {time: 2ms, pool: execution, used: <= 3}\n"
	"    - {time: 3ms, since: 1ms, pool: storage, evict_asked: 7, evicted: \"> 0\"}\n";

START_TEST(test_storage)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load_text("s.yaml", storage_yaml,
						      sizeof storage_yaml - 1, NULL, NULL, &error);
	const GsThreadSpec *t;
	const GsExpectThread *et;
	const GsExpectAt *at;

	ck_assert_msg(w != NULL, "%s", error != NULL ? error->message : "");
	ck_assert(w->execution.storage_fraction == 0.25);
	ck_assert_int_eq(w->execution.evict, GS_EVICT_BYTES);
	t = task_thread(w, 0, 0);
	ck_assert_int_eq(op_at(t->ops, 0)->kind, GS_OP_ACQUIRE_STORAGE);
	ck_assert_str_eq(op_at(t->ops, 0)->execution.block, "rdd_1_0");
	ck_assert_int_eq(op_at(t->ops, 0)->execution.bytes, 10);
	ck_assert_int_eq(op_at(t->ops, 0)->execution.mode, GS_MODE_OFF_HEAP);
	ck_assert_int_eq(op_at(t->ops, 1)->kind, GS_OP_RELEASE_STORAGE);
	ck_assert_int_eq(op_at(t->ops, 1)->execution.mode, GS_MODE_ON_HEAP);
	ck_assert_int_eq(op_at(t->ops, 2)->execution.bytes, 2);
	ck_assert_int_eq(op_at(t->ops, 2)->execution.mode, GS_MODE_OFF_HEAP);
	ck_assert_int_eq(op_at(t->ops, 3)->kind, GS_OP_RELEASE_ALL_STORAGE);
	et = w->expect.threads->pdata[0];
	ck_assert_uint_eq(et->stored->len, 2);
	ck_assert_int_eq(g_array_index(et->stored, gint64, 0), 1);
	ck_assert_int_eq(g_array_index(et->stored, gint64, 1), 0);
	at = w->expect.at->pdata[0];
	ck_assert(at->has_pool && at->pool_storage && at->pool_free && !at->all_modes);
	ck_assert_int_eq(at->mode, GS_MODE_OFF_HEAP);
	ck_assert_int_eq(at->bytes.value, 5);
	at = w->expect.at->pdata[1];
	ck_assert(at->has_pool && !at->pool_storage && !at->pool_free && at->all_modes);
	ck_assert_int_eq(at->bytes.op, GS_CMP_LE);
	at = w->expect.at->pdata[2];
	ck_assert(at->has_evict_asked && at->has_evicted);
	ck_assert_int_eq(at->since, MS);
	ck_assert_int_eq(at->evict_asked.value, 7);
	ck_assert_int_eq(at->evicted.op, GS_CMP_GT);
}
END_TEST

static const GsExpectValue *
expect_value(const GsWorkload *w, const char *key)
{
	for (guint i = 0; i < w->expect.values->len; i++) {
		const GsExpectValue *v = w->expect.values->pdata[i];

		if (strcmp(v->key, key) == 0)
			return v;
	}
	ck_abort_msg("no expectation %s", key);
	return NULL;
}

static void
check_cmp(const GsWorkload *w, const char *key, GsCmpOp op, gint64 value)
{
	const GsExpectValue *v = expect_value(w, key);

	ck_assert_msg(v->cmp.op == op && v->cmp.value == value, "%s: %s %" G_GINT64_FORMAT, key,
		      gs_cmp_op_text(v->cmp.op), v->cmp.value);
	ck_assert(v->text == NULL);
}

START_TEST(test_full_expect)
{
	g_autoptr(GsWorkload) w = load_full(NULL, NULL);
	const GsExpectThread *t;
	const GsExpectAt *at;

	ck_assert_uint_eq(w->expect.values->len, 12);
	ck_assert_str_eq(expect_value(w, "outcome")->text, "completed");
	ck_assert_uint_eq(expect_value(w, "outcome")->line, 85);
	check_cmp(w, "makespan", GS_CMP_LE, 2 * SEC);
	check_cmp(w, "totals.retries", GS_CMP_EQ, 1);
	check_cmp(w, "totals.deadlocks_busted", GS_CMP_GE, 1);
	check_cmp(w, "totals.blocked_ns", GS_CMP_LT, 3 * MS);
	check_cmp(w, "totals.lost_ns", GS_CMP_EQ, 500);
	ck_assert_str_eq(expect_value(w, "tasks.A.outcome")->text, "completed");
	check_cmp(w, "tasks.A.max_footprint", GS_CMP_LE, 8 * MIB);
	check_cmp(w, "tasks.2#1.attempts", GS_CMP_EQ, 1);
	ck_assert_uint_eq(w->expect.threads->len, 2);
	t = w->expect.threads->pdata[0];
	ck_assert_str_eq(t->thread, "A.0");
	ck_assert_uint_eq(t->reached->len, 2);
	ck_assert_int_eq(g_array_index(t->reached, GsThreadState, 1), GS_THREAD_BUFN);
	ck_assert_uint_eq(t->threw->len, 1);
	ck_assert_int_eq(g_array_index(t->threw, GsException, 0), GS_EXC_GPU_RETRY_OOM);
	ck_assert(t->has_final_state);
	ck_assert_int_eq(t->final_state, GS_THREAD_UNKNOWN);
	t = w->expect.threads->pdata[1];
	ck_assert(t->reached == NULL);       /* not checked */
	ck_assert_uint_eq(t->threw->len, 0); /* checked: threw nothing */
	ck_assert(!t->has_final_state);
	ck_assert_uint_eq(w->expect.at->len, 3);
	at = w->expect.at->pdata[0];
	ck_assert_int_eq(at->time, 1500 * US);
	ck_assert_str_eq(at->thread, "A.0");
	ck_assert_int_eq(at->state, GS_THREAD_BLOCKED);
	ck_assert(!at->has_tier);
	at = w->expect.at->pdata[1];
	ck_assert(at->has_tier && at->thread == NULL);
	ck_assert_int_eq(at->tier, GS_TIER_GPU);
	ck_assert_int_eq(at->measure, GS_MEASURE_USED);
	ck_assert_int_eq(at->bytes.op, GS_CMP_EQ);
	ck_assert_int_eq(at->bytes.value, 5 * MIB);
	at = w->expect.at->pdata[2];
	ck_assert_int_eq(at->tier, GS_TIER_HOST);
	ck_assert_int_eq(at->measure, GS_MEASURE_CHARGED);
	ck_assert_int_eq(at->bytes.op, GS_CMP_GT);
}
END_TEST

/* A free of another thread's buffers names them by that thread's names, defined later too. */
START_TEST(test_a_free_of_another_threads_buffers)
{
	static const char text[] =
		"gpusim: 1\nname: t\nmemory: {gpu: {capacity: 10MiB}}\n"
		"tasks:\n  - id: A\n    threads: [{ops: [{free: {buf: [y, x], thread: P}}]}]\n"
		"pool_threads:\n  - {name: P, ops: [{alloc: {buf: x, size: 1}}, "
		"{alloc: {buf: y, size: 1}}]}\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load_text("s.yaml", text, sizeof text - 1, NULL, NULL,
						      &error);
	const GsTaskSpec *task;
	const GsOp *op;
	const GsThreadSpec *owner;

	ck_assert_msg(w != NULL, "%s", error != NULL ? error->message : "?");
	task = w->tasks->pdata[0];
	op = &g_array_index(((GsThreadSpec *) task->threads->pdata[0])->ops, GsOp, 0);
	owner = w->pool_threads->pdata[0];
	ck_assert_int_eq(op->kind, GS_OP_FREE);
	ck_assert_str_eq(op->free.thread, "P");
	ck_assert_uint_eq(op->free.bufs.len, 2);
	ck_assert_str_eq(owner->buffers->pdata[gs_names_data(&op->free.bufs)[0]], "y");
	ck_assert_str_eq(owner->buffers->pdata[gs_names_data(&op->free.bufs)[1]], "x");
	ck_assert(gs_workload_frees_across_threads(w));
}
END_TEST

/* ---- defaults ---- */

START_TEST(test_defaults)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml", TASK OP "task_done\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);
	g_autoptr(GsWorkload) d = gs_workload_new();

	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert(memcmp(&w->policy, &d->policy, sizeof d->policy) == 0);
	ck_assert(memcmp(&w->host, &d->host, sizeof d->host) == 0);
	ck_assert(memcmp(&w->links, &d->links, sizeof d->links) == 0);
	ck_assert_int_eq(w->gpu.capacity, 10 * MIB);
	ck_assert_uint_eq(w->gpu.devices, d->gpu.devices);
	ck_assert_int_eq(w->gpu.alignment, d->gpu.alignment);
	ck_assert_str_eq(w->disk.path, "/var/tmp");
	ck_assert_uint_eq(w->seed, 1);
	ck_assert_uint_eq(w->executor_slots, 0);
	ck_assert(w->description == NULL);
	ck_assert_uint_eq(w->variant_names->len, 0);
	ck_assert_uint_eq(w->expect.values->len, 0);
	ck_assert_uint_eq(w->pool_threads->len, 0);
	ck_assert_str_eq(task_thread(w, 0, 0)->name, "A.0");
}
END_TEST

/* Name lists longer than what an op holds inline keep every name, in order. */
START_TEST(test_long_name_list)
{
	GString *text = g_string_new(TASK);
	Tmp *t = tmp_new();
	const char *path;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;
	const GsOp *release;

	for (guint i = 0; i < 19; i++)
		g_string_append_printf(text, OP "alloc: {buf: b%u, size: 1 KiB}\n", i);
	g_string_append(text, OP "free: [b18");
	for (guint i = 0; i < 18; i++)
		g_string_append_printf(text, ", b%u", i);
	g_string_append(text, "]\n");
	path = tmp_write(t, "s.yaml", text->str);
	w = gs_loader_load(path, NULL, NULL, &error);
	tmp_free(t);
	g_string_free(text, TRUE);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	release = op_at(task_thread(w, 0, 0)->ops, 19);
	ck_assert_uint_eq(release->free.bufs.len, 19);
	ck_assert_uint_eq(name_at(&release->free.bufs, 0), 18);
	for (guint i = 1; i < 19; i++)
		ck_assert_uint_eq(name_at(&release->free.bufs, i), i - 1);
}
END_TEST

START_TEST(test_generate)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml",
				     HEAD "generate:\n  tasks: 12\n  task_max: 300MiB\n"
					  "  max_compute: 100ms\n  retry_blocks: true\n"
					  "  skew: {tasks: 1, factor: 2.0}\n  jitter: 0.05\n"
					  "expect:\n  tasks: {G3: {retries: 0}}\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);

	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert(w->generate.enabled);
	ck_assert_int_eq(w->generate.model, GS_GENERATE_GPUSIM);
	ck_assert_uint_eq(w->generate.tasks, 12);
	ck_assert_uint_eq(w->generate.threads_per_task, 1);
	ck_assert_int_eq(w->generate.task_max, 300 * MIB);
	ck_assert_uint_eq(w->generate.max_allocs, 0);
	ck_assert_int_eq(w->generate.max_compute, 100 * MS);
	ck_assert(w->generate.retry_blocks);
	ck_assert_uint_eq(w->generate.skew_tasks, 1);
	ck_assert_double_eq(w->generate.skew_factor, 2.0);
	ck_assert_double_eq(w->generate.jitter, 0.05);
	/* generated tasks are not known yet: expectations may name them */
	ck_assert_str_eq(expect_value(w, "tasks.G3.retries")->key, "tasks.G3.retries");
}
END_TEST

/* Model montecarlo: the tool's defaults for what is left out, the keys written over them. */
START_TEST(test_generate_montecarlo)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml",
				     HEAD "generate:\n  model: montecarlo\n  tasks: 4\n"
					  "  template_arithmetic: code\n  shuffle_threads: 2\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);
	g_autoptr(GsWorkload) d = NULL;
	const char *const sets[] = {"generate.template=true", "generate.template_change=0.2",
				    "generate.skew={tasks: 1}", NULL};

	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert(w->generate.enabled);
	ck_assert_int_eq(w->generate.model, GS_GENERATE_MONTECARLO);
	ck_assert_uint_eq(w->generate.tasks, 4);
	ck_assert_uint_eq(w->generate.threads_per_task, 1);
	ck_assert_int_eq(w->generate.task_max, 300 * MIB);
	ck_assert_uint_eq(w->generate.max_allocs, 50);
	ck_assert_int_eq(w->generate.max_compute, 100 * MS);
	ck_assert(w->generate.retry_blocks);
	ck_assert_uint_eq(w->generate.skew_tasks, 0);
	ck_assert_double_eq(w->generate.skew_factor, 2.0);
	ck_assert(!w->generate.use_template);
	ck_assert_double_eq(w->generate.template_change, 0.05);
	ck_assert_int_eq(w->generate.template_arithmetic, GS_TEMPLATE_CODE);
	ck_assert_uint_eq(w->generate.shuffle_threads, 2);
	/* --set over the file, the defaults under both */
	d = gs_loader_load(path, NULL, sets, &error);
	tmp_free(t);
	ck_assert_msg(d != NULL, "%s", error ? error->message : "");
	ck_assert(d->generate.use_template);
	ck_assert_double_eq(d->generate.template_change, 0.2);
	ck_assert_uint_eq(d->generate.skew_tasks, 1);
	ck_assert_double_eq(d->generate.skew_factor, 2.0);
	ck_assert_uint_eq(d->generate.tasks, 4);
}
END_TEST

/* Expectations name the copies of a repeated task as the simulator does. */
START_TEST(test_repeat_names)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(
		t, "s.yaml",
		HEAD "tasks:\n  - id: A\n    repeat: 3\n"
		     "    threads: [{ops: []}, {name: main, ops: []}]\n"
		     "expect:\n  tasks: {A#2: {retries: 0}}\n"
		     "  threads: {A#0.0: {final_state: UNKNOWN}, main#2: {threw: []}}\n"
		     "  at: [{time: 0, thread: A#1.0, state: THREAD_RUNNING}]\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);

	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert_str_eq(expect_value(w, "tasks.A#2.retries")->key, "tasks.A#2.retries");
	ck_assert_str_eq(((GsExpectThread *) w->expect.threads->pdata[1])->thread, "main#2");
	ck_assert_str_eq(((GsExpectAt *) w->expect.at->pdata[0])->thread, "A#1.0");
}
END_TEST

/* ---- includes, variants, --set ---- */

START_TEST(test_include_order)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(
		t, "s.yaml",
		"gpusim: 1\nname: s\ninclude: [a.yaml, b.yaml]\npolicy: {oom: fail}\n"
		"tasks:\n  - id: S\n    threads: [{ops: [task_done]}]\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;

	tmp_write(t, "a.yaml",
		  "include: sub/c.yaml\nmemory: {gpu: {capacity: 1MiB}}\n"
		  "policy: {oom: block, retry_cap: 7}\n"
		  "tasks:\n  - id: A\n    threads: [{ops: [task_done]}]\n");
	tmp_write(t, "b.yaml",
		  "memory: {gpu: {capacity: 2MiB}}\npolicy: {spill: {enabled: true}}\n");
	/* relative to sub/c.yaml: sub/d.yaml */
	tmp_write(t, "sub/c.yaml", "include: [d.yaml]\nseed: 3\nexecutor: {slots: 1}\n");
	tmp_write(t, "sub/d.yaml", "seed: 9\nexecutor: {slots: 5}\ndescription: from d\n");
	w = gs_loader_load(path, NULL, NULL, &error);
	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert_int_eq(w->gpu.capacity, 2 * MIB);         /* b over a */
	ck_assert_int_eq(w->policy.oom, GS_OOM_FAIL);       /* the file over its includes */
	ck_assert_uint_eq(w->policy.retry_cap, 7);          /* a's, merged key by key */
	ck_assert(w->policy.spill.enabled);                 /* b's */
	ck_assert_uint_eq(w->seed, 3);                      /* c over d */
	ck_assert_uint_eq(w->executor_slots, 1);
	ck_assert_str_eq(w->description, "from d");
	ck_assert_uint_eq(w->tasks->len, 1);                /* sequences are replaced */
	ck_assert_str_eq(((GsTaskSpec *) w->tasks->pdata[0])->id, "S");
}
END_TEST

START_TEST(test_variants)
{
	g_autoptr(GsWorkload) small = load_full("small", NULL);
	g_autoptr(GsWorkload) fail = load_full("fail-fast", NULL);

	ck_assert_str_eq(small->variant, "small");
	ck_assert_int_eq(small->gpu.capacity, 4 * MIB);
	ck_assert_int_eq(small->gpu.allocator, GS_ALLOCATOR_POOL); /* untouched keys stay */
	ck_assert_int_eq(small->policy.spill.victim, GS_VICTIM_LRU);
	ck_assert(small->policy.spill.enabled);
	ck_assert(!small->policy.spill.on_demand);
	ck_assert_int_eq(small->policy.oom, GS_OOM_RETRY);
	ck_assert_uint_eq(small->variant_names->len, 2);
	ck_assert_int_eq(fail->policy.oom, GS_OOM_FAIL);
	ck_assert_int_eq(fail->gpu.capacity, 10 * MIB);
}
END_TEST

START_TEST(test_variant_names)
{
	g_autofree char *path = fixture("loader-full.yaml");
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) names = gs_loader_variant_names(path, &error);
	g_autofree char *missing = fixture("no-such-file.yaml");

	ck_assert_msg(names != NULL, "%s", error ? error->message : "");
	ck_assert_uint_eq(names->len, 2);
	ck_assert_str_eq(names->pdata[0], "fail-fast");
	ck_assert_str_eq(names->pdata[1], "small");
	ck_assert(gs_loader_variant_names(missing, &error) == NULL);
	ck_assert(g_str_has_suffix(error->message,
				   "no-such-file.yaml:1:1: cannot read: No such file or directory"));
}
END_TEST

START_TEST(test_sets)
{
	const char *sets[] = {
		"memory.gpu.capacity=8GiB",
		"policy.oom=block",
		"policy.spill={victim: priority}", /* a map merges: enabled stays */
		"memory.gpu.capacity=3GiB",        /* later --set wins */
		"executor.slots=2",                /* a key the file does not have */
		"generate={tasks: 4}",
		NULL,
	};
	g_autoptr(GsWorkload) w = load_full("small", sets);

	ck_assert_int_eq(w->gpu.capacity, 3 * GIB);
	ck_assert_int_eq(w->policy.oom, GS_OOM_BLOCK);
	ck_assert_int_eq(w->policy.spill.victim, GS_VICTIM_PRIORITY);
	ck_assert(w->policy.spill.enabled);
	ck_assert_uint_eq(w->executor_slots, 2);
	ck_assert(w->generate.enabled);
	ck_assert_uint_eq(w->generate.tasks, 4);
}
END_TEST

/* A scenario in memory loads as the file it came from, variant and --set included. */
START_TEST(test_text_as_file)
{
	g_autofree char *path = fixture("loader-full.yaml");
	g_autofree char *text = NULL;
	gsize len;
	const char *sets[] = {"executor.slots=2", NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) from_file = load_full("small", sets);
	g_autoptr(GsWorkload) from_text = NULL;

	ck_assert(g_file_get_contents(path, &text, &len, NULL));
	from_text = gs_loader_load_text(path, text, len, "small", sets, &error);
	ck_assert_msg(from_text != NULL, "%s", error ? error->message : "");
	ck_assert_str_eq(from_text->file, path);
	ck_assert_str_eq(from_text->name, from_file->name);
	ck_assert_int_eq(from_text->gpu.capacity, from_file->gpu.capacity);
	ck_assert_uint_eq(from_text->executor_slots, 2);
	ck_assert_uint_eq(from_text->tasks->len, from_file->tasks->len);
	ck_assert_uint_eq(from_text->variant_names->len, from_file->variant_names->len);
	ck_assert_uint_eq(from_text->expect.values->len, from_file->expect.values->len);
	/* nothing at all is an empty scenario, which lacks its first key */
	ck_assert(gs_loader_load_text("empty.yaml", NULL, 0, NULL, NULL, &error) == NULL);
	ck_assert_msg(g_str_has_prefix(error->message, "empty.yaml:1:1: "), "%s", error->message);
}
END_TEST

START_TEST(test_missing_file)
{
	g_autoptr(GError) error = NULL;

	ck_assert(gs_loader_load("/nonexistent/s.yaml", NULL, NULL, &error) == NULL);
	ck_assert_str_eq(error->message,
			 "/nonexistent/s.yaml:1:1: cannot read: No such file or directory");
	/* a NULL error is allowed */
	ck_assert(gs_loader_load("/nonexistent/s.yaml", NULL, NULL, NULL) == NULL);
}
END_TEST

/* Reading stops at what is not a regular file, before it would read forever. */
START_TEST(test_not_a_file)
{
	g_autoptr(GError) error = NULL;

	ck_assert(gs_loader_load("/dev/zero", NULL, NULL, &error) == NULL);
	ck_assert_str_eq(error->message, "/dev/zero:1:1: cannot read: it is a character device, "
					 "not a regular file");
}
END_TEST

/*
 * Nesting fails where it passes the limit, while libyaml parses, not after:
 * libyaml alone would take tens of seconds over these 100000 levels.
 */
START_TEST(test_deep_nesting)
{
	Tmp *t = tmp_new();
	GString *yaml = g_string_new(HEAD "policy: ");
	g_autoptr(GError) error = NULL;
	g_autofree char *message = NULL;
	const char *path;

	for (int i = 0; i < 100000; i++)
		g_string_append(yaml, "{a: ");
	path = tmp_write(t, "s.yaml", yaml->str);
	g_string_free(yaml, TRUE);
	ck_assert(gs_loader_load(path, NULL, NULL, &error) == NULL);
	message = relative_message(t, error);
	/* policy's map is level 1, the key of the 64th map level 65 */
	ck_assert_str_eq(message, "s.yaml:4:262: the document nests deeper than 64 levels");
	tmp_free(t);
}
END_TEST

/*
 * Aliases of aliases (a "billion laughs") are refused once their copies pass
 * a million nodes, however small the file; an honest large file has no limit.
 */
START_TEST(test_alias_bomb)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(t, "s.yaml",
				     HEAD "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
					  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
					  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
					  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
					  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
					  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
					  "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n");
	g_autoptr(GError) error = NULL;
	g_autofree char *message = NULL;

	ck_assert(gs_loader_load(path, NULL, NULL, &error) == NULL);
	message = relative_message(t, error);
	ck_assert_str_eq(message,
			 "s.yaml:9:36: aliases expand the document by more than 1000000 nodes");
	tmp_free(t);
}
END_TEST

/* An honest file may be far larger than an alias bomb is allowed to grow. */
START_TEST(test_large_file)
{
	Tmp *t = tmp_new();
	GString *yaml = g_string_new(TASK);
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = NULL;
	const char *path;

	/* 120000 times 10 nodes: more than the copies aliases may make */
	for (int i = 0; i < 120000; i++)
		g_string_append(yaml, OP "alloc: {buf: b, size: 1KiB}\n" OP "free: b\n");
	path = tmp_write(t, "s.yaml", yaml->str);
	g_string_free(yaml, TRUE);
	w = gs_loader_load(path, NULL, NULL, &error);
	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
}
END_TEST

/* An alias is a copy of its anchor's node, wherever it is used. */
START_TEST(test_aliases)
{
	Tmp *t = tmp_new();
	const char *path = tmp_write(
		t, "s.yaml",
		HEAD "tasks:\n  - id: A\n    threads:\n      - ops: &ops [{alloc: {buf: b, size: 1KiB}},"
		     " {free: b}]\n      - ops: *ops\n  - id: B\n    threads: [{ops: *ops}]\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);

	tmp_free(t);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "");
	ck_assert_uint_eq(task_thread(w, 0, 1)->ops->len, 2);
	ck_assert_uint_eq(task_thread(w, 1, 0)->ops->len, 2);
	ck_assert_int_eq(op_at(task_thread(w, 1, 0)->ops, 0)->alloc.size, KIB);
}
END_TEST

Suite *gs_test_suite_loader(void);

Suite *
gs_test_suite_loader(void)
{
	Suite *s = suite_create("loader");
	TCase *tc = tcase_create("bad");

	tcase_add_loop_test(tc, test_bad, 0, G_N_ELEMENTS(bad_rows));
	tcase_add_loop_test(tc, test_bad_text, 0, G_N_ELEMENTS(bad_rows));
	tcase_add_loop_test(tc, test_several, 0, G_N_ELEMENTS(several_rows));
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_a_free_of_another_threads_buffers);
	tcase_add_test(tc, test_not_a_file);
	suite_add_tcase(s, tc);

	/* Large inputs: slow under the sanitizers, on a busy machine. */
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_deep_nesting);
	tcase_add_test(tc, test_alias_bomb);
	tcase_add_test(tc, test_large_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("quantities");
	tcase_add_loop_test(tc, test_quantity, 0, G_N_ELEMENTS(good_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("structure");
	tcase_add_test(tc, test_full_top);
	tcase_add_test(tc, test_full_policy);
	tcase_add_test(tc, test_full_tasks);
	tcase_add_test(tc, test_full_ops);
	tcase_add_test(tc, test_full_helper_ops);
	tcase_add_test(tc, test_full_pool);
	tcase_add_test(tc, test_full_expect);
	tcase_add_test(tc, test_storage);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_long_name_list);
	tcase_add_test(tc, test_generate);
	tcase_add_test(tc, test_generate_montecarlo);
	tcase_add_test(tc, test_repeat_names);
	tcase_add_test(tc, test_aliases);
	suite_add_tcase(s, tc);

	tc = tcase_create("merge");
	tcase_add_test(tc, test_include_order);
	tcase_add_test(tc, test_variants);
	tcase_add_test(tc, test_variant_names);
	tcase_add_test(tc, test_sets);
	tcase_add_test(tc, test_text_as_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_loader());
}

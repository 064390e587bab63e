/*
 * random-scenarios: writes valid random scenarios for the property test
 * (tests/check-random.sh).
 *
 *     random-scenarios SEED                  one scenario on stdout
 *     random-scenarios DIR FIRST LAST        DIR/random-SEED.yaml for each seed
 *
 * What it decides: which scenario a seed stands for. Everything random comes
 * from one GRand seeded with the seed and drawn in the order the text is
 * written, so a seed gives the same bytes on every machine and run; the
 * scenario's own `seed:` is drawn too, for its generate: section. Frees of
 * another thread's buffers come from a second GRand, so that adding them
 * left every other line of a seed as it was.
 *
 * What it covers (SPEC §3): every key of memory (but disk.path), links,
 * executor and policy, each left at its default about half the time; tasks with explicit or
 * default thread names, starts, explicit priorities and repeats; pool threads
 * (shuffle or not) that work for and leave tasks; every op, with retry and
 * repeat blocks nested up to MAX_DEPTH, and now and then a free of a buffer
 * an earlier thread allocates (of a task that does not repeat, or a pool
 * thread); a generate: section, variants and
 * expectations now and then. Sizes are mostly well below the tier they go to
 * (so that runs do work rather than fail at once), some near or above it,
 * some below the 256 bytes a split repeats rather than halves, some 0, and
 * rarely near the most a scenario may hold. Times stay within tens of
 * milliseconds, so a seed's run on real threads takes about that long.
 *
 * Validity is the generator's promise: every name an op uses is defined in
 * the same thread (or, for a free naming a thread, in that thread), pool ops only in pool threads, wait_on_pool only in a
 * task's, blocking: false and prefer_pinned only on host allocations, the keys of a reserve
 * strategy only with it, downgrade_stop at most downgrade_trigger, devices in
 * range (the host and the disk have one space each). What happens at run
 * time is the engine's to get right: a free of a buffer that is not live, a
 * release of a reservation given back already, or a sync of a stream with
 * nothing in flight are all allowed and do occur.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include <gpusim/workload.h>

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)

/* Nesting of retry and repeat blocks; the interpreter copes with more. */
#define MAX_DEPTH 3
#define MAX_TASKS 5
#define MAX_THREADS 3
#define MAX_POOL_THREADS 2
/* Ops in one list; a nested list gets fewer. */
#define MAX_OPS 10

typedef struct {
	GRand *rand;
	/*
	 * Frees of another thread's buffers draw from a stream of their own, so
	 * that every other line stays what the seed wrote before they came.
	 */
	GRand *across;
	/* Values, checkpoints and restores (a Retryable's state) likewise. */
	GRand *values;
	/*
	 * Storage memory draws from a stream of its own too: a scenario with
	 * storage is one whose execution section the seed wrote with share
	 * none, and whose other lines stay as they were.
	 */
	GRand *storage_rand;
	gboolean storage;  /* memory.execution is share fair with storage: storage ops only */
	GPtrArray *given;  /* char*: "THREAD BUF" of buffers another thread may free */
	GString *out;
	gint64 gpu_capacity;
	gint64 host_sizes; /* host sizes are drawn against this: the capacity, at most 64 MiB */
	guint devices;
	GPtrArray *task_ids; /* char*, in file order */
} Gen;

/* What one thread's ops have defined so far. */
typedef struct {
	const char *name;    /* the thread's name, when another thread may free its buffers */
	gboolean pool;
	gboolean consumers;  /* it declares consumers c0 (on heap) and c1 (off heap) */
	guint n_values;      /* it declares values v0, v1, ... */
	guint n_bufs, n_streams, n_res, n_pages;
	GPtrArray *names;    /* char*: every name made, owned here */
	GPtrArray *live;     /* buffers allocated and not freed, as the text reads */
	GPtrArray *streams;  /* streams named by a compute */
	GPtrArray *held;     /* reservations made and not released */
	GPtrArray *pages;    /* pages allocated and not freed, as the text reads */
} Thread;

/* ---- drawing ---- */

static guint
below(Gen *g, guint n)
{
	return n <= 1 ? 0 : (guint) g_rand_int_range(g->rand, 0, (gint32) n);
}

static gboolean
chance(Gen *g, double p)
{
	return g_rand_double(g->rand) < p;
}

static gint64
between(Gen *g, gint64 lo, gint64 hi)
{
	if (hi <= lo)
		return lo;
	return lo + (gint64) (g_rand_double(g->rand) * (double) (hi - lo + 1));
}

static const char *
one_of(Gen *g, const char *const *words, guint n)
{
	return words[below(g, n)];
}

#define ONE_OF(g, ...)                                                                             \
	one_of((g), (const char *const[]){__VA_ARGS__},                                            \
	       G_N_ELEMENTS(((const char *const[]){__VA_ARGS__})))

/* ---- writing ---- */

static void G_GNUC_PRINTF(3, 4)
line(Gen *g, guint indent, const char *format, ...)
{
	va_list args;

	g_string_append_printf(g->out, "%*s", (int) indent, "");
	va_start(args, format);
	g_string_append_vprintf(g->out, format, args);
	va_end(args);
	g_string_append_c(g->out, '\n');
}

/* A size in one of the spellings SPEC §3.1 allows; whole bytes in each. */
static char *
size_text(Gen *g, gint64 bytes)
{
	if (bytes > 0 && bytes % MIB == 0 && chance(g, 0.7))
		return g_strdup_printf("%" G_GINT64_FORMAT "MiB", bytes / MIB);
	if (bytes > 0 && bytes % KIB == 0 && chance(g, 0.7))
		return g_strdup_printf("%" G_GINT64_FORMAT "KiB", bytes / KIB);
	if (bytes > 0 && bytes % 1000 == 0 && chance(g, 0.5))
		return g_strdup_printf("%" G_GINT64_FORMAT "KB", bytes / 1000);
	return g_strdup_printf("%" G_GINT64_FORMAT, bytes);
}

/* A duration of @us microseconds, spelled in ns, us or ms. */
static char *
time_text(Gen *g, gint64 us)
{
	if (us == 0 && chance(g, 0.5))
		return g_strdup("0");
	if (us % 1000 == 0 && chance(g, 0.6))
		return g_strdup_printf("%" G_GINT64_FORMAT "ms", us / 1000);
	if (chance(g, 0.2))
		return g_strdup_printf("%" G_GINT64_FORMAT "ns", us * 1000);
	return g_strdup_printf("%" G_GINT64_FORMAT "us", us);
}

static const char *
boolean(Gen *g)
{
	return chance(g, 0.5) ? "true" : "false";
}

/*
 * A size for a tier of @capacity bytes: mostly up to a third of it, some up
 * to all of it, a few above it, below 256 bytes, 0, or near the most a
 * scenario may hold (GS_MAX_BYTES).
 */
static gint64
draw_size(Gen *g, gint64 capacity)
{
	double p = g_rand_double(g->rand);

	if (p < 0.70)
		return between(g, 1, MAX(capacity / 3 / KIB, 1)) * KIB;
	if (p < 0.85)
		return between(g, capacity / 3, capacity);
	if (p < 0.92)
		return between(g, capacity + 1, 2 * capacity);
	if (p < 0.97)
		return between(g, 1, 255);
	if (p < 0.995)
		return 0;
	return GS_MAX_BYTES - between(g, 0, MIB);
}

/* ---- memory, links, executor, policy ---- */

static void
write_fraction(Gen *g, guint indent, const char *key)
{
	if (chance(g, 0.3))
		line(g, indent, "%s: %.2f", key, g_rand_double_range(g->rand, 0.3, 1.0));
}

static void
write_gpu(Gen *g)
{
	g_autofree char *capacity = NULL;

	g->gpu_capacity = between(g, 4, 64) * MIB;
	g->devices = chance(g, 0.2) ? 2 : 1;
	capacity = size_text(g, g->gpu_capacity);
	line(g, 2, "gpu:");
	line(g, 4, "capacity: %s", capacity);
	if (g->devices > 1 || chance(g, 0.1))
		line(g, 4, "devices: %u", g->devices);
	if (chance(g, 0.2))
		line(g, 4, "alignment: %s", ONE_OF(g, "1", "256", "4KiB", "1MiB"));
	if (chance(g, 0.3))
		line(g, 4, "allocator: %s", ONE_OF(g, "exact", "pool"));
	write_fraction(g, 4, "reservation_limit");
	if (chance(g, 0.2))
		line(g, 4, "streams: %u", 1 + below(g, 4));
	if (chance(g, 0.3)) {
		double trigger = g_rand_double_range(g->rand, 0.2, 1.0);

		line(g, 4, "downgrade_trigger: %.2f", trigger);
		line(g, 4, "downgrade_stop: %.2f", trigger * g_rand_double(g->rand));
	}
}

/* The default host (4 GiB) is real memory under --backend=host: sizes stay as with 64 MiB. */
static void
write_host(Gen *g)
{
	g->host_sizes = 64 * MIB;
	if (chance(g, 0.4))
		return;
	g->host_sizes = between(g, 2, 64) * MIB;
	line(g, 2, "host:");
	line(g, 4, "capacity: %" G_GINT64_FORMAT "MiB", g->host_sizes / MIB);
	if (chance(g, 0.3))
		line(g, 4, "block_size: %s", ONE_OF(g, "64KiB", "1MiB", "2MiB"));
	if (chance(g, 0.4))
		line(g, 4, "pool_blocks: %u", 1 + below(g, 16));
	if (chance(g, 0.4))
		line(g, 4, "initial_pools: %u", below(g, 5));
	write_fraction(g, 4, "reservation_limit");
	if (chance(g, 0.3))
		line(g, 4, "pinned: %uMiB", 1 + below(g, 64));
}

/*
 * Spark's execution memory: one counter (share none) that never makes a
 * task wait, so that every wait the property test sees is one it knows.
 * Without the section the pools are empty, and a fair share of nothing is
 * granted as 0 at once.
 */
static void
write_execution(Gen *g)
{
	gint64 on_heap, off_heap;
	const char *page_size;
	g_autofree char *share = NULL;

	if (chance(g, 0.7))
		return;
	on_heap = between(g, 0, 4096);
	off_heap = between(g, 0, 1024);
	page_size = chance(g, 0.5) ? ", page_size: 4KiB" : "";
	/*
	 * Storage memory never waits, but a fair share of execution memory
	 * may: with storage, a scenario's threads make storage calls only.
	 */
	g->storage = g_rand_double(g->storage_rand) < 0.3;
	share = g->storage ? g_strdup_printf("fair, storage_fraction: %.2f, evict: %s",
					     g_rand_double(g->storage_rand),
					     g_rand_boolean(g->storage_rand) ? "blocks" : "bytes")
			   : g_strdup("none");
	line(g, 2, "execution: {on_heap: %" G_GINT64_FORMAT "KiB, off_heap: %" G_GINT64_FORMAT
		   "KiB, share: %s%s}", on_heap, off_heap, share, page_size);
}

static void
write_memory(Gen *g)
{
	line(g, 0, "memory:");
	write_gpu(g);
	write_host(g);
	write_execution(g);
	if (chance(g, 0.3)) {
		line(g, 2, "disk:");
		line(g, 4, "capacity: %" G_GINT64_FORMAT "MiB", between(g, 1, 256));
	}
}

static void
write_links(Gen *g)
{
	if (chance(g, 0.5))
		return;
	line(g, 0, "links:");
	if (chance(g, 0.5))
		line(g, 2, "gpu_host: {bandwidth: %uGB/s, latency: %uus}", 1 + below(g, 50),
		     below(g, 50));
	if (chance(g, 0.5))
		line(g, 2, "host_disk: {bandwidth: %uMiB/s, latency: %uus}", 100 + below(g, 4000),
		     below(g, 500));
	if (chance(g, 0.5))
		line(g, 2, "alloc_latency: %uns", below(g, 5000));
}

static void
write_spill(Gen *g)
{
	if (chance(g, 0.4))
		return;
	line(g, 2, "spill:");
	line(g, 4, "enabled: %s", chance(g, 0.8) ? "true" : "false");
	if (chance(g, 0.6))
		line(g, 4, "victim: %s", ONE_OF(g, "lru", "largest", "smallest_fit", "priority"));
	if (chance(g, 0.3))
		line(g, 4, "on_demand: %s", boolean(g));
	if (chance(g, 0.4))
		line(g, 4, "proactive: %s", boolean(g));
	if (chance(g, 0.4))
		line(g, 4, "host_full: %s", ONE_OF(g, "disk", "fail"));
}

static void
write_reservations(Gen *g)
{
	if (chance(g, 0.6))
		return;
	line(g, 2, "reservations:");
	line(g, 4, "over: %s", ONE_OF(g, "ignore", "fail", "increase"));
	if (chance(g, 0.3))
		line(g, 4, "increase_factor: %.2f", g_rand_double_range(g->rand, 1.0, 3.0));
	if (chance(g, 0.5))
		line(g, 4, "attribution: %s", ONE_OF(g, "origin", "stream"));
	if (chance(g, 0.5))
		line(g, 4, "blocking: %s", ONE_OF(g, "channel", "whole"));
}

static void
write_policy(Gen *g)
{
	line(g, 0, "policy:");
	/* retry is the state machine with the most to get wrong: half the runs. */
	line(g, 2, "oom: %s", chance(g, 0.5) ? "retry" : ONE_OF(g, "fail", "block"));
	if (chance(g, 0.3))
		line(g, 2, "priority: %s", ONE_OF(g, "fifo", "task_id"));
	if (chance(g, 0.3))
		line(g, 2, "split_victim: %s", ONE_OF(g, "highest", "lowest"));
	if (chance(g, 0.2))
		line(g, 2, "retry_before_bufn: %s", boolean(g));
	if (chance(g, 0.2))
		line(g, 2, "retry_cap: %u", below(g, 20));
	if (chance(g, 0.3))
		line(g, 2, "watchdog: %s", ONE_OF(g, "0", "1ms", "5ms", "100ms"));
	if (chance(g, 0.2))
		line(g, 2, "sleep_is_blocked: %s", boolean(g));
	if (chance(g, 0.2))
		line(g, 2, "concurrent_gpu_tasks: %u", below(g, 4));
	if (chance(g, 0.3))
		line(g, 2, "task_attempts: %u", 1 + below(g, 4));
	write_spill(g);
	write_reservations(g);
	if (chance(g, 0.3))
		line(g, 2, "admission: %s", ONE_OF(g, "none", "fair_share"));
	if (chance(g, 0.2))
		line(g, 2, "evac_gate: %s", boolean(g));
	if (chance(g, 0.15))
		line(g, 2, "failure_callback: {enabled: %s, allocate: %uKiB, retries: %u}",
		     boolean(g), below(g, 2048), below(g, 12));
}

/* ---- ops ---- */

static void write_ops(Gen *g, Thread *t, guint indent, guint depth, guint max_ops);

static const char *
new_name(Thread *t, const char *prefix, guint *counter)
{
	char *name = g_strdup_printf("%s%u", prefix, (*counter)++);

	g_ptr_array_add(t->names, name);
	return name;
}

/* A live buffer; NULL when there is none. */
static const char *
some_buffer(Gen *g, Thread *t)
{
	if (t->live->len == 0)
		return NULL;
	return t->live->pdata[below(g, t->live->len)];
}

static void
forget(GPtrArray *names, const char *name)
{
	for (guint i = 0; i < names->len; i++) {
		if (strcmp(names->pdata[i], name) == 0) {
			g_ptr_array_remove_index(names, i);
			return;
		}
	}
}

static void
write_alloc(Gen *g, Thread *t, guint indent)
{
	gboolean host = chance(g, 0.2);
	const char *buf = new_name(t, "b", &t->n_bufs);
	g_autofree char *size = size_text(g, draw_size(g, host ? g->host_sizes : g->gpu_capacity));
	GString *extra = g_string_new(NULL);

	if (host) {
		g_string_append(extra, ", kind: host");
		if (chance(g, 0.4))
			g_string_append_printf(extra, ", blocking: %s", boolean(g));
		if (chance(g, 0.3))
			g_string_append_printf(extra, ", prefer_pinned: %s", boolean(g));
	} else if (chance(g, 0.1)) {
		g_string_append(extra, ", kind: gpu");
	}
	if (chance(g, 0.4))
		g_string_append_printf(extra, ", spillable: %s", chance(g, 0.8) ? "true" : "false");
	if (t->held->len > 0 && chance(g, 0.4))
		g_string_append_printf(extra, ", reservation: %s",
				       (char *) t->held->pdata[below(g, t->held->len)]);
	if (!host && (g->devices > 1 || chance(g, 0.05)))
		g_string_append_printf(extra, ", device: %u", below(g, g->devices));
	line(g, indent, "- alloc: {buf: %s, size: %s%s}", buf, size, extra->str);
	g_ptr_array_add(t->live, (gpointer) buf);
	g_string_free(extra, TRUE);
	if (t->name != NULL)
		g_ptr_array_add(g->given, g_strdup_printf("%s %s", t->name, buf));
}

/*
 * Now and then, a free of a buffer an earlier thread allocates (never the
 * thread's own): whether that buffer is live when it runs, or ever will be,
 * is the run's to sort out.
 */
static void
write_free_across(Gen *g, Thread *t, guint indent)
{
	g_auto(GStrv) pair = NULL;

	if (g->given->len == 0 || g_rand_double(g->across) >= 0.08)
		return;
	pair = g_strsplit(g->given->pdata[g_rand_int_range(g->across, 0, (gint32) g->given->len)],
			  " ", 2);
	if (t->name != NULL && strcmp(pair[0], t->name) == 0)
		return;
	line(g, indent, "- free: {buf: %s, thread: %s}", pair[1], pair[0]);
}

/* Now and then, a change to one of the thread's values, or a checkpoint of them. */
static void
write_value_op(Gen *g, Thread *t, guint indent)
{
	guint name;

	if (t->n_values == 0 || g_rand_double(g->values) >= 0.15)
		return;
	name = (guint) g_rand_int_range(g->values, 0, (gint32) t->n_values);
	switch (g_rand_int_range(g->values, 0, 3)) {
	case 0:
		line(g, indent, "- value: {name: v%u, add: %d}", name,
		     g_rand_int_range(g->values, -9, 10));
		break;
	case 1:
		line(g, indent, "- value: {name: v%u, set: %d}", name,
		     g_rand_int_range(g->values, -9, 10));
		break;
	default:
		line(g, indent, "- checkpoint: v%u", name);
		break;
	}
}

static void
write_free(Gen *g, Thread *t, guint indent)
{
	const char *buf = some_buffer(g, t);

	if (buf == NULL)
		return;
	if (t->live->len > 1 && chance(g, 0.2)) {
		const char *other = some_buffer(g, t);

		/* Naming a buffer twice in one free is allowed too. */
		line(g, indent, "- free: [%s, %s]", buf, other);
		forget(t->live, other);
	} else {
		line(g, indent, "- free: %s", buf);
	}
	forget(t->live, buf);
}

static void
write_compute(Gen *g, Thread *t, guint indent)
{
	g_autofree char *time = time_text(g, below(g, 2000));
	GString *uses = g_string_new(NULL);
	const char *stream;

	if (t->live->len == 0 || chance(g, 0.5)) {
		line(g, indent, "- compute: %s", time);
		g_string_free(uses, TRUE);
		return;
	}
	for (guint i = 0, n = 1 + below(g, MIN(t->live->len, 3)); i < n; i++)
		g_string_append_printf(uses, "%s%s", i > 0 ? ", " : "",
				       (char *) t->live->pdata[below(g, t->live->len)]);
	if (chance(g, 0.4)) {
		if (t->streams->len > 0 && chance(g, 0.5)) {
			stream = t->streams->pdata[below(g, t->streams->len)];
		} else {
			stream = new_name(t, "s", &t->n_streams);
			g_ptr_array_add(t->streams, (gpointer) stream);
		}
		line(g, indent, "- compute: {time: %s, uses: [%s], stream: %s}", time, uses->str,
		     stream);
	} else {
		line(g, indent, "- compute: {time: %s, uses: [%s]}", time, uses->str);
	}
	g_string_free(uses, TRUE);
}

static void
write_reserve(Gen *g, Thread *t, guint indent)
{
	const char *res = new_name(t, "r", &t->n_res);
	const char *tier = ONE_OF(g, "gpu", "gpu", "host", "disk");
	gint64 capacity = strcmp(tier, "host") == 0 ? g->host_sizes : g->gpu_capacity;
	g_autofree char *size = size_text(g, draw_size(g, capacity));
	const char *mode = ONE_OF(g, "block", "or_null", "upto");
	guint strategy = below(g, 4);

	switch (strategy) {
	case 0:
		line(g, indent, "- reserve: {res: %s, size: %s, tier: %s, mode: %s}", res, size,
		     tier, mode);
		break;
	case 1:
		line(g, indent,
		     "- reserve: {res: %s, size: %s, tier: %s, strategy: specific, device: %u, "
		     "mode: %s}",
		     res, size, tier, strcmp(tier, "gpu") == 0 ? below(g, g->devices) : 0, mode);
		break;
	case 2:
		line(g, indent,
		     "- reserve: {res: %s, size: %s, strategy: any_in_tiers, tiers: [%s], mode: %s}",
		     res, size, ONE_OF(g, "gpu, host", "host, gpu", "gpu", "host, disk"), mode);
		break;
	default:
		line(g, indent,
		     "- reserve: {res: %s, size: %s, strategy: downgrade, from: %s, mode: %s}", res,
		     size, ONE_OF(g, "gpu, to: host", "gpu, to: disk", "host, to: disk"), mode);
		break;
	}
	g_ptr_array_add(t->held, (gpointer) res);
}

static void
write_release(Gen *g, Thread *t, guint indent)
{
	const char *res;

	if (t->held->len == 0)
		return;
	res = t->held->pdata[below(g, t->held->len)];
	line(g, indent, "- release: %s", res);
	if (chance(g, 0.9))
		forget(t->held, res);
}

/* A call of the memory manager's storage: a block cached, some bytes or all released. */
static void
write_storage_op(Gen *g, guint indent)
{
	GRand *r = g->storage_rand;
	const char *mode = g_rand_boolean(r) ? "on_heap" : "off_heap";
	g_autofree char *size = size_text(g, g_rand_int_range(r, 1, 2049) * KIB);

	switch (g_rand_int_range(r, 0, 4)) {
	case 0:
	case 1:
		line(g, indent, "- acquire_storage: {block: b%d, bytes: %s, mode: %s}",
		     g_rand_int_range(r, 0, 4), size, mode);
		break;
	case 2:
		line(g, indent, "- release_storage: {bytes: %s, mode: %s}", size, mode);
		break;
	default:
		line(g, indent, "- release_all_storage");
		break;
	}
}

/* A call of the task's memory manager; the thread's consumers only if it declared them. */
static void
write_execution_op(Gen *g, Thread *t, guint indent)
{
	const char *consumer = ONE_OF(g, "c0", "c1");
	g_autofree char *size = size_text(g, between(g, 1, 2048) * KIB);
	const char *page;

	switch (below(g, t->consumers ? 5 : 3)) {
	case 0:
		if (t->consumers && chance(g, 0.6))
			line(g, indent, "- acquire_execution: {consumer: %s, bytes: %s}", consumer, size);
		else
			line(g, indent, "- acquire_execution: {bytes: %s, mode: %s}", size,
			     ONE_OF(g, "on_heap", "off_heap"));
		break;
	case 1:
		if (t->consumers && chance(g, 0.6))
			line(g, indent, "- release_execution: {consumer: %s, bytes: %s}", consumer, size);
		else
			line(g, indent, "- release_execution: %s", size);
		break;
	case 2:
		line(g, indent, "- clean_up");
		break;
	case 3:
		page = new_name(t, "p", &t->n_pages);
		line(g, indent, "- allocate_page: {consumer: %s, size: %s, page: %s}", consumer, size,
		     page);
		g_ptr_array_add(t->pages, (gpointer) page);
		break;
	default:
		if (t->pages->len == 0)
			break;
		page = t->pages->pdata[below(g, t->pages->len)];
		line(g, indent, "- free_page: %s", page);
		forget(t->pages, page);
		break;
	}
}

/* A stream of the GPU's pool, borrowed under GROW (never a wait), or one given back. */
static void
write_stream_op(Gen *g, Thread *t, guint indent)
{
	const char *stream;

	if (t->streams->len > 0 && chance(g, 0.4)) {
		line(g, indent, "- return_stream: %s",
		     (char *) t->streams->pdata[below(g, t->streams->len)]);
		return;
	}
	stream = new_name(t, "s", &t->n_streams);
	g_ptr_array_add(t->streams, (gpointer) stream);
	line(g, indent, "- borrow_stream: {stream: %s, policy: grow, device: %u}", stream,
	     below(g, g->devices));
}

static void
write_inject(Gen *g, guint indent)
{
	line(g, indent, "- inject: {retry_oom: %u, split_oom: %u, cudf_exception: %u, skip: %u, "
			"kind: %s}",
	     below(g, 4), below(g, 3), chance(g, 0.2) ? 1 : 0, below(g, 3),
	     ONE_OF(g, "any", "gpu", "host"));
}

static void
write_pool(Gen *g, guint indent, gboolean done)
{
	GString *tasks = g_string_new(NULL);

	for (guint i = 0, n = 1 + below(g, MIN(g->task_ids->len, 2)); i < n; i++)
		g_string_append_printf(tasks, "%s%s", i > 0 ? ", " : "",
				       (char *) g->task_ids->pdata[below(g, g->task_ids->len)]);
	line(g, indent, "- pool: {%s: [%s]}", done ? "done_for" : "work_for", tasks->str);
	g_string_free(tasks, TRUE);
}

/* Buffers allocated inside a block belong to it: afterwards they are not known to be live. */
static void
restore_live(Thread *t, GPtrArray *before)
{
	g_ptr_array_set_size(t->live, 0);
	for (guint i = 0; i < before->len; i++)
		g_ptr_array_add(t->live, before->pdata[i]);
}

static GPtrArray *
copy_names(GPtrArray *names)
{
	GPtrArray *copy = g_ptr_array_new();

	for (guint i = 0; i < names->len; i++)
		g_ptr_array_add(copy, names->pdata[i]);
	return copy;
}

static void
write_retry(Gen *g, Thread *t, guint indent, guint depth)
{
	g_autoptr(GPtrArray) before = copy_names(t->live);

	const char *split = chance(g, 0.4) ? ONE_OF(g, "halves", "none", "target", "target_cpu")
					   : NULL;

	line(g, indent, "- retry:");
	if (split != NULL)
		line(g, indent + 4, "split: %s", split);
	if (split != NULL && g_str_has_prefix(split, "target")) {
		/* A target of up to the GPU's capacity, split down to a 1/2^k of it, data or not. */
		gint64 target = between(g, 1, MAX(g->gpu_capacity, 1));
		g_autofree char *target_text = size_text(g, target);
		g_autofree char *min_text = size_text(g, MAX(target >> below(g, 6), 1));

		line(g, indent + 4, "target: %s", target_text);
		line(g, indent + 4, "min_target: %s", min_text);
		if (chance(g, 0.3)) {
			g_autofree char *data = size_text(g, between(g, 0, target));

			line(g, indent + 4, "data: %s", data);
		}
	} else if (chance(g, 0.3)) {
		line(g, indent + 4, "max_splits: %u", below(g, 5));
	}
	if (t->live->len > 0 && chance(g, 0.4))
		line(g, indent + 4, "input: [%s]", some_buffer(g, t));
	if (t->n_values > 0 && g_rand_double(g->values) < 0.5)
		line(g, indent + 4, "restore: [v%d]",
		     g_rand_int_range(g->values, 0, (gint32) t->n_values));
	line(g, indent + 4, "ops:");
	write_ops(g, t, indent + 6, depth + 1, MAX_OPS / 2);
	restore_live(t, before);
}

static void
write_repeat(Gen *g, Thread *t, guint indent, guint depth)
{
	g_autoptr(GPtrArray) before = copy_names(t->live);

	line(g, indent, "- repeat:");
	line(g, indent + 4, "times: %u", below(g, 4));
	line(g, indent + 4, "ops:");
	write_ops(g, t, indent + 6, depth + 1, MAX_OPS / 2);
	restore_live(t, before);
}

typedef enum {
	OP_ALLOC,
	OP_FREE,
	OP_COMPUTE,
	OP_SYNC,
	OP_SLEEP,
	OP_UNTIL,
	OP_SPILLABLE,
	OP_RETRY,
	OP_REPEAT,
	OP_BLOCK_UNTIL_READY,
	OP_RESERVE,
	OP_RELEASE,
	OP_WAIT_ON_POOL,
	OP_INJECT,
	OP_TASK_DONE,
	OP_EXECUTION,
	OP_STREAM,
	N_OPS,
} OpChoice;

/* How often each op is drawn, in parts of the sum. */
static const guint op_weights[N_OPS] = {
	[OP_ALLOC] = 30,       [OP_FREE] = 20,    [OP_COMPUTE] = 20,
	[OP_SYNC] = 4,         [OP_SLEEP] = 4,    [OP_UNTIL] = 3,
	[OP_SPILLABLE] = 4,    [OP_RETRY] = 10,   [OP_REPEAT] = 4,
	[OP_BLOCK_UNTIL_READY] = 2, [OP_RESERVE] = 5, [OP_RELEASE] = 4,
	[OP_WAIT_ON_POOL] = 2, [OP_INJECT] = 3,   [OP_TASK_DONE] = 1,
	[OP_EXECUTION] = 4,    [OP_STREAM] = 2,
};

static OpChoice
draw_op(Gen *g)
{
	guint total = 0, at;

	for (guint i = 0; i < N_OPS; i++)
		total += op_weights[i];
	at = below(g, total);
	for (guint i = 0; i < N_OPS; i++) {
		if (at < op_weights[i])
			return (OpChoice) i;
		at -= op_weights[i];
	}
	return OP_COMPUTE;
}

static void
write_time_op(Gen *g, guint indent, const char *op, gint64 max_us)
{
	g_autofree char *time = time_text(g, below(g, (guint) max_us));

	line(g, indent, "- %s: %s", op, time);
}

static void
write_op(Gen *g, Thread *t, guint indent, guint depth)
{
	const char *buf;

	write_free_across(g, t, indent);
	write_value_op(g, t, indent);
	switch (draw_op(g)) {
	case OP_ALLOC:
		write_alloc(g, t, indent);
		break;
	case OP_FREE:
		write_free(g, t, indent);
		break;
	case OP_COMPUTE:
		write_compute(g, t, indent);
		break;
	case OP_SYNC:
		if (t->streams->len > 0)
			line(g, indent, "- sync: %s",
			     (char *) t->streams->pdata[below(g, t->streams->len)]);
		break;
	case OP_SLEEP:
		write_time_op(g, indent, "sleep", 3000);
		break;
	case OP_UNTIL:
		write_time_op(g, indent, "until", 30000);
		break;
	case OP_SPILLABLE:
		buf = some_buffer(g, t);
		if (buf != NULL)
			line(g, indent, "- %s: %s", chance(g, 0.5) ? "spillable" : "unspillable", buf);
		break;
	case OP_RETRY:
		if (depth < MAX_DEPTH)
			write_retry(g, t, indent, depth);
		break;
	case OP_REPEAT:
		if (depth < MAX_DEPTH)
			write_repeat(g, t, indent, depth);
		break;
	case OP_BLOCK_UNTIL_READY:
		line(g, indent, "- block_until_ready");
		break;
	case OP_RESERVE:
		write_reserve(g, t, indent);
		break;
	case OP_RELEASE:
		write_release(g, t, indent);
		break;
	case OP_WAIT_ON_POOL:
		if (!t->pool)
			line(g, indent, "- wait_on_pool: %s", boolean(g));
		break;
	case OP_INJECT:
		write_inject(g, indent);
		break;
	case OP_TASK_DONE:
		if (!t->pool && depth == 0)
			line(g, indent, "- task_done");
		break;
	case OP_EXECUTION:
		if (!t->pool && g->storage)
			write_storage_op(g, indent);
		else if (!t->pool)
			write_execution_op(g, t, indent);
		break;
	case OP_STREAM:
		write_stream_op(g, t, indent);
		break;
	case N_OPS:
		break;
	}
}

/* An op list is never empty: an alloc opens it, the rest is drawn. */
static void
write_ops(Gen *g, Thread *t, guint indent, guint depth, guint max_ops)
{
	write_alloc(g, t, indent);
	for (guint i = 0, n = below(g, max_ops); i < n; i++)
		write_op(g, t, indent, depth);
	while (t->live->len > 0 && chance(g, 0.8))
		write_free(g, t, indent);
}

/*
 * A thread's ops, after its "ops:" line; its names are its own. @name: the
 * thread's, when later threads may free its buffers (not in a repeated task,
 * whose copies a free cannot tell apart).
 */
static void
write_thread_ops(Gen *g, const char *name, gboolean pool, gboolean consumers, guint n_values,
		 guint indent)
{
	Thread t = {
		.name = name,
		.pool = pool,
		.consumers = consumers,
		.n_values = n_values,
		.pages = g_ptr_array_new(),
		.names = g_ptr_array_new_with_free_func(g_free),
		.live = g_ptr_array_new(),
		.streams = g_ptr_array_new(),
		.held = g_ptr_array_new(),
	};

	if (pool)
		write_pool(g, indent, FALSE);
	write_ops(g, &t, indent, 0, MAX_OPS);
	if (pool && chance(g, 0.7))
		write_pool(g, indent, TRUE);
	g_ptr_array_unref(t.live);
	g_ptr_array_unref(t.streams);
	g_ptr_array_unref(t.held);
	g_ptr_array_unref(t.pages);
	g_ptr_array_unref(t.names);
}

/* ---- tasks and pool threads ---- */

/* A key of a task's thread (taken): the first one opens the list item. */
static void
thread_key(Gen *g, gboolean *first, char *text)
{
	line(g, *first ? 6 : 8, "%s%s", *first ? "- " : "", text);
	*first = FALSE;
	g_free(text);
}

/* values: {v0: N, ...}, @n of them. */
static char *
values_text(Gen *g, guint n)
{
	GString *text = g_string_new("values: {");

	for (guint i = 0; i < n; i++)
		g_string_append_printf(text, "%sv%u: %d", i > 0 ? ", " : "", i,
				       g_rand_int_range(g->values, -9, 10));
	g_string_append_c(text, '}');
	return g_string_free(text, FALSE);
}

static void
write_task(Gen *g, guint index)
{
	const char *id = g->task_ids->pdata[index];
	guint threads = 1 + below(g, MAX_THREADS);
	gboolean repeats = FALSE;

	line(g, 2, "- id: %s", id);
	if (chance(g, 0.5)) {
		g_autofree char *start = time_text(g, below(g, 10) * 500);

		line(g, 4, "start: %s", start);
	}
	if (chance(g, 0.2))
		line(g, 4, "priority: %u", 1 + below(g, MAX_TASKS));
	if (chance(g, 0.15)) {
		g_autofree char *every = time_text(g, below(g, 5) * 1000);

		guint copies = 1 + below(g, 3);

		line(g, 4, "repeat: %u", copies);
		line(g, 4, "every: %s", every);
		repeats = copies > 1;
	}
	line(g, 4, "threads:");
	for (guint k = 0; k < threads; k++) {
		/* A name (never "<id>.<k>", the default another thread may have), on_oom, ops. */
		gboolean named = chance(g, 0.3);
		gboolean on_oom = chance(g, 0.3);
		gboolean consumers = chance(g, 0.3);
		guint n_values = g_rand_double(g->values) < 0.2 ? 1 + g_rand_int_range(g->values, 0, 3)
								: 0;
		gboolean first = TRUE;
		g_autofree char *name = named ? g_strdup_printf("%s-w%u", id, k)
					      : g_strdup_printf("%s.%u", id, k);

		if (named)
			thread_key(g, &first, g_strdup_printf("name: %s-w%u", id, k));
		if (on_oom)
			thread_key(g, &first,
				   g_strdup_printf("on_oom: %s", ONE_OF(g, "fail", "continue")));
		if (consumers)
			thread_key(g, &first, g_strdup("consumers: {c0: on_heap, c1: off_heap}"));
		if (n_values > 0)
			thread_key(g, &first, values_text(g, n_values));
		thread_key(g, &first, g_strdup("ops:"));
		write_thread_ops(g, repeats ? NULL : name, FALSE, consumers, n_values, 10);
	}
}

static void
write_tasks(Gen *g)
{
	guint n = 1 + below(g, MAX_TASKS);

	for (guint i = 0; i < n; i++) {
		/* Ids are strings or integers (SPEC §3.5). */
		g_ptr_array_add(g->task_ids, chance(g, 0.3) ? g_strdup_printf("%u", 10 + i)
							    : g_strdup_printf("t%u", i));
	}
	line(g, 0, "tasks:");
	for (guint i = 0; i < n; i++)
		write_task(g, i);
}

static void
write_pool_threads(Gen *g)
{
	guint n = chance(g, 0.3) ? 1 + below(g, MAX_POOL_THREADS) : 0;

	if (n == 0)
		return;
	line(g, 0, "pool_threads:");
	for (guint i = 0; i < n; i++) {
		g_autofree char *name = g_strdup_printf("pool%u", i);

		line(g, 2, "- name: %s", name);
		if (chance(g, 0.5))
			line(g, 4, "shuffle: %s", boolean(g));
		if (chance(g, 0.2))
			line(g, 4, "on_oom: %s", ONE_OF(g, "fail", "continue"));
		line(g, 4, "ops:");
		write_thread_ops(g, name, TRUE, FALSE, 0, 6);
	}
}

/* ---- the rest of the top level ---- */

static void
write_generate(Gen *g)
{
	if (chance(g, 0.85))
		return;
	line(g, 0, "generate:");
	line(g, 2, "tasks: %u", below(g, 4));
	line(g, 2, "threads_per_task: %u", 1 + below(g, 2));
	line(g, 2, "task_max: %" G_GINT64_FORMAT "KiB", between(g, 1, g->gpu_capacity / KIB));
	line(g, 2, "max_allocs: %u", below(g, 6));
	line(g, 2, "max_compute: %ums", below(g, 5));
	line(g, 2, "retry_blocks: %s", boolean(g));
	if (chance(g, 0.3))
		line(g, 2, "skew: {tasks: %u, factor: %.1f}", below(g, 3),
		     g_rand_double_range(g->rand, 0.5, 3.0));
	if (chance(g, 0.3))
		line(g, 2, "jitter: %.2f", g_rand_double_range(g->rand, 0.0, 0.3));
	if (chance(g, 0.3))
		line(g, 2, "shuffle_threads: %u", below(g, 3));
}

/* Variants are loaded by validate only; run uses the scenario as written. */
static void
write_variants(Gen *g)
{
	if (chance(g, 0.8))
		return;
	line(g, 0, "variants:");
	line(g, 2, "other-oom: {policy: {oom: %s}}", ONE_OF(g, "fail", "block", "retry"));
	line(g, 2, "spill: {policy: {spill: {enabled: true, victim: %s}}}",
	     ONE_OF(g, "lru", "largest", "smallest_fit", "priority"));
}

static void
write_expect(Gen *g)
{
	if (chance(g, 0.7))
		return;
	line(g, 0, "expect:");
	line(g, 2, "outcome: %s", ONE_OF(g, "completed", "\"!= deadlock\"", "\"!= timeout\""));
	line(g, 2, "totals: {copies_lost: 0, tasks: \">= %u\"}", g->task_ids->len);
}

static char *
scenario_new(guint64 seed)
{
	Gen g = {
		.rand = g_rand_new_with_seed((guint32) seed),
		.across = g_rand_new_with_seed((guint32) seed ^ 0x5eedu),
		.values = g_rand_new_with_seed((guint32) seed ^ 0x7a1eu),
		.storage_rand = g_rand_new_with_seed((guint32) seed ^ 0x570eu),
		.given = g_ptr_array_new_with_free_func(g_free),
		.out = g_string_new(NULL),
		.task_ids = g_ptr_array_new_with_free_func(g_free),
	};

	line(&g, 0, "gpusim: 1");
	line(&g, 0, "name: random-%" G_GUINT64_FORMAT, seed);
	line(&g, 0, "description: written by tests/random-scenarios for seed %" G_GUINT64_FORMAT,
	     seed);
	line(&g, 0, "seed: %u", g_rand_int(g.rand));
	write_memory(&g);
	write_links(&g);
	if (chance(&g, 0.2))
		line(&g, 0, "executor: {slots: %u}", 1 + below(&g, 3));
	write_policy(&g);
	write_tasks(&g);
	write_pool_threads(&g);
	write_generate(&g);
	write_variants(&g);
	write_expect(&g);
	g_rand_free(g.rand);
	g_rand_free(g.across);
	g_rand_free(g.values);
	g_rand_free(g.storage_rand);
	g_ptr_array_unref(g.given);
	g_ptr_array_unref(g.task_ids);
	return g_string_free(g.out, FALSE);
}

/* ---- the command ---- */

static gboolean
parse_seed(const char *text, guint64 *out)
{
	char *end;

	errno = 0;
	*out = g_ascii_strtoull(text, &end, 10);
	return errno == 0 && end != text && *end == '\0' && *out <= G_MAXUINT32;
}

static int
write_range(const char *dir, guint64 first, guint64 last)
{
	for (guint64 seed = first; seed <= last; seed++) {
		g_autofree char *text = scenario_new(seed);
		g_autofree char *name = g_strdup_printf("random-%" G_GUINT64_FORMAT ".yaml", seed);
		g_autofree char *path = g_build_filename(dir, name, NULL);
		g_autoptr(GError) error = NULL;

		if (!g_file_set_contents(path, text, -1, &error)) {
			fprintf(stderr, "random-scenarios: %s\n", error->message);
			return 1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	guint64 seed, last;

	if (argc == 2 && parse_seed(argv[1], &seed)) {
		g_autofree char *text = scenario_new(seed);

		fputs(text, stdout);
		return 0;
	}
	if (argc == 4 && parse_seed(argv[2], &seed) && parse_seed(argv[3], &last) && seed <= last)
		return write_range(argv[1], seed, last);
	fprintf(stderr, "usage: random-scenarios SEED\n"
			"       random-scenarios DIR FIRST LAST\n"
			"(seeds from 0 to 2^32 - 1)\n");
	return 2;
}

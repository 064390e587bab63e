/*
 * gpusim: the modelled memory of a run (see memory.h for what it decides).
 *
 * Records are recycled through a free list, since a run allocates and frees
 * millions of buffers; the id -> record table exists only when buffers can
 * move (the spill store names buffers by id).
 */
#include "config.h"

#include "tiers/device.h"
#include "tiers/memory.h"

struct GsMemory {
	const GsWorkload *w;
	GPtrArray *gpus;             /* GsDevice* per GPU space */
	GPtrArray *gpu_accounts;     /* GsSpaceAccount* per GPU space */
	GsSpaceAccount *host_account;
	GsHostBlocks *host_blocks;
	GsSpaceAccount *disk_account;
	gint64 disk_used;
	gint64 pinned_used;          /* the pinned pool's bytes (memory.host.pinned) */
	GsSpillStore *store;         /* NULL unless spilling is on */
	GHashTable *by_id;           /* GsSpillBufId -> GsMemBuf*, with the store */
	GsGate *gate;
	GsSpillBufId next_id;
	GSList *spare;               /* recycled records */
	GsMemBuf *live;              /* live records, a doubly linked list */
	GsMemTraffic traffic;
	GsMemReservationFunc on_reservation;
	gpointer on_reservation_data;
	guint n_freed;               /* buffers freed while locked, their memory still held */
};

/* ---- set-up ---- */

/* The fractions a space of @tier is configured with, from the scenario. */
static GsSpaceFractions
fractions_of(const GsWorkload *w, GsTier tier)
{
	GsSpaceFractions gpu = {w->gpu.reservation_limit, w->gpu.downgrade_trigger,
				w->gpu.downgrade_stop, GS_DOWNGRADE_FORMULA_REFERENCE};
	GsSpaceFractions host = GS_SPACE_FRACTIONS_DEFAULT;
	GsSpaceFractions disk = GS_SPACE_FRACTIONS_DISK;

	host.reservation_limit = w->host.reservation_limit;
	return tier == GS_TIER_GPU ? gpu : tier == GS_TIER_HOST ? host : disk;
}

GsSpaceThresholds
gs_memory_space_thresholds(const GsWorkload *w, GsTier tier)
{
	GsSpaceFractions f = fractions_of(w, tier);
	gint64 capacity = tier == GS_TIER_GPU	 ? w->gpu.capacity
			  : tier == GS_TIER_HOST ? w->host.capacity
						 : w->disk.capacity;

	return gs_space_thresholds(capacity, &f);
}

guint
gs_memory_spaces(const GsWorkload *w, GsTier tier)
{
	return tier == GS_TIER_GPU ? MAX(w->gpu.devices, 1) : 1;
}

static GsSpaceAccount *
account_for(const GsWorkload *w, GsTier tier, gint64 granule)
{
	GsSpaceThresholds t = gs_memory_space_thresholds(w, tier);
	GsSpaceAccount *acct = gs_space_account_new(tier, &t, granule);

	gs_space_account_set_blocking(acct, w->policy.reservations.blocking == GS_BLOCK_ON_CHANNEL
						    ? GS_BLOCKING_IDLE_UPTO
						    : GS_BLOCKING_WAIT);
	return acct;
}

GsMemory *
gs_memory_new(const GsWorkload *w)
{
	GsMemory *m = g_new0(GsMemory, 1);

	m->w = w;
	m->gpus = g_ptr_array_new_with_free_func((GDestroyNotify) gs_device_free);
	m->gpu_accounts = g_ptr_array_new_with_free_func((GDestroyNotify) gs_space_account_free);
	for (guint i = 0; i < gs_memory_spaces(w, GS_TIER_GPU); i++) {
		g_ptr_array_add(m->gpus, gs_device_new(w->gpu.capacity, w->gpu.alignment,
						       w->gpu.allocator));
		g_ptr_array_add(m->gpu_accounts, account_for(w, GS_TIER_GPU, MAX(w->gpu.alignment, 1)));
	}
	m->host_blocks = gs_host_blocks_new(w->host.block_size, w->host.pool_blocks,
					    w->host.initial_pools, w->host.capacity);
	m->host_account = account_for(w, GS_TIER_HOST, gs_host_blocks_get_block_size(m->host_blocks));
	m->disk_account = account_for(w, GS_TIER_DISK, 1);
	if (w->policy.spill.enabled) {
		m->store = gs_spill_store_new();
		m->by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
	}
	m->gate = gs_gate_new(1);
	m->next_id = 1;
	return m;
}

void
gs_memory_free(GsMemory *m)
{
	if (m == NULL)
		return;
	g_ptr_array_unref(m->gpus);
	g_ptr_array_unref(m->gpu_accounts);
	gs_space_account_free(m->host_account);
	gs_host_blocks_free(m->host_blocks);
	gs_space_account_free(m->disk_account);
	if (m->store != NULL) {
		gs_spill_store_free(m->store);
		g_hash_table_unref(m->by_id);
	}
	gs_gate_free(m->gate);
	while (m->live != NULL) {
		GsMemBuf *b = m->live;

		m->live = b->next;
		g_free(b);
	}
	g_slist_free_full(m->spare, g_free);
	g_free(m);
}

gboolean
gs_memory_spills(const GsMemory *m)
{
	return m->store != NULL;
}

GsSpillStore *
gs_memory_store(GsMemory *m)
{
	return m->store;
}

GsSpillStreamId
gs_memory_stream_id(GsThreadId thread, gint stream)
{
	return stream < 0 ? GS_SPILL_SYNCHRONOUS : ((GsSpillStreamId) thread << 20) | stream;
}

static gboolean in_use(const GsMemory *m, const GsMemBuf *b);
static void release_buffer(GsMemory *m, GsMemBuf *b, GsSpaceReservation *res);
static GsSpaceReservation *freed_credit(GsMemBuf *b);

gboolean
gs_memory_unlock_all(GsMemory *m, GArray *ids, GPtrArray *released_owners)
{
	gboolean released = FALSE;

	for (guint i = 0; i < ids->len; i++)
		gs_spill_unlock(m->store, g_array_index(ids, GsSpillBufId, i));
	/* A buffer freed while locked goes with its last lock. */
	for (guint i = 0; m->n_freed > 0 && i < ids->len; i++) {
		GsMemBuf *b = g_hash_table_lookup(m->by_id, &g_array_index(ids, GsSpillBufId, i));

		if (b != NULL && b->freed && !in_use(m, b)) {
			if (released_owners != NULL)
				g_ptr_array_add(released_owners, b->owner);
			release_buffer(m, b, freed_credit(b));
			m->n_freed--;
			released = TRUE;
		}
	}
	g_array_set_size(ids, 0);
	return released;
}

GsGate *
gs_memory_gate(GsMemory *m)
{
	return m->gate;
}

guint
gs_memory_n_gpus(const GsMemory *m)
{
	return m->gpus->len;
}

const GsSpaceAccount *
gs_memory_gpu_account(const GsMemory *m, guint device)
{
	return m->gpu_accounts->pdata[MIN(device, m->gpus->len - 1)];
}

const GsMemTraffic *
gs_memory_traffic(const GsMemory *m)
{
	return &m->traffic;
}

/* ---- spaces ---- */

static GsSpaceAccount *
account_of(GsMemory *m, GsTier tier, guint device)
{
	switch (tier) {
	case GS_TIER_GPU:
		return m->gpu_accounts->pdata[MIN(device, m->gpus->len - 1)];
	case GS_TIER_HOST:
		return m->host_account;
	case GS_TIER_DISK:
		break;
	}
	return m->disk_account;
}

static GsDevice *
gpu_of(GsMemory *m, guint device)
{
	return m->gpus->pdata[MIN(device, m->gpus->len - 1)];
}

gboolean
gs_memory_res_in_space(const GsMemReservation *res, GsTier tier, guint device)
{
	return res != NULL && res->held && res->tier == tier &&
	       (tier != GS_TIER_GPU || res->device == device);
}

void
gs_memory_watch_reservations(GsMemory *m, GsMemReservationFunc fn, gpointer data)
{
	m->on_reservation = fn;
	m->on_reservation_data = data;
}

/* @acct is a GsMemReservation's, its first member: that reservation changed. */
static void
reservation_changed(GsMemory *m, const GsSpaceReservation *acct)
{
	if (acct != NULL && m->on_reservation != NULL)
		m->on_reservation((const GsMemReservation *) acct, m->on_reservation_data);
}

/*
 * Room for @size bytes in one space: the account's charge (inside @res if
 * given) and the tier's own store (a GPU device's address space, the host
 * blocks, the disk's bytes). All or nothing. Returns the bytes it holds
 * there, or -1 with *@short_by set.
 */
static gint64
take_room(GsMemory *m, GsTier tier, guint device, gint64 size, GsSpaceReservation *res,
	  guint64 *handle, gint64 *short_by)
{
	GsSpaceAccount *acct = account_of(m, tier, device);
	GsSpaceAlloc a = gs_space_account_allocate(acct, size, res);
	gint64 blocks;

	reservation_changed(m, res);
	if (a.outcome != GS_SPACE_ALLOC_OK) {
		*short_by = MAX(1, gs_space_account_charged(acct) + a.padded -
				       gs_space_account_get_thresholds(acct)->capacity);
		return -1;
	}
	switch (tier) {
	case GS_TIER_GPU:
		if (gs_device_alloc(gpu_of(m, device), size, handle))
			return a.padded;
		*short_by = MAX(1, a.padded - gs_device_largest_free(gpu_of(m, device)));
		break;
	case GS_TIER_HOST:
		blocks = gs_host_blocks_alloc(m->host_blocks, size);
		if (blocks != GS_HOST_BLOCKS_FAILED)
			return blocks * gs_host_blocks_get_block_size(m->host_blocks);
		*short_by = a.padded;
		break;
	case GS_TIER_DISK:
		m->disk_used += a.padded;
		return a.padded;
	}
	gs_space_account_free_bytes(acct, size, res);
	reservation_changed(m, res);
	return -1;
}

/* Gives back what take_room() took; @res is the reservation credited (or NULL). */
static void
give_room(GsMemory *m, GsTier tier, guint device, gint64 size, gint64 held, guint64 handle,
	  GsSpaceReservation *res)
{
	switch (tier) {
	case GS_TIER_GPU:
		gs_device_release(gpu_of(m, device), handle);
		break;
	case GS_TIER_HOST:
		gs_host_blocks_free_blocks(m->host_blocks,
					   held / gs_host_blocks_get_block_size(m->host_blocks));
		break;
	case GS_TIER_DISK:
		m->disk_used -= held;
		break;
	}
	gs_space_account_free_bytes(account_of(m, tier, device), size, res);
	reservation_changed(m, res);
}

/* ---- buffers ---- */

static GsMemBuf *
record_new(GsMemory *m)
{
	GsMemBuf *b;

	if (m->spare != NULL) {
		b = m->spare->data;
		m->spare = g_slist_delete_link(m->spare, m->spare);
		*b = (GsMemBuf){0};
	} else {
		b = g_new0(GsMemBuf, 1);
	}
	b->id = m->next_id++;
	b->next = m->live;
	if (m->live != NULL)
		m->live->prev = b;
	m->live = b;
	/* A value no other buffer carries: what every copy of this one must bring. */
	b->tag = b->id * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15);
	return b;
}

static void
record_free(GsMemory *m, GsMemBuf *b)
{
	GsMemBuf *prev = b->prev, *next = b->next;

	if (prev != NULL)
		prev->next = next;
	else
		m->live = next;
	if (next != NULL)
		next->prev = prev;
	m->spare = g_slist_prepend(m->spare, b);
}

/*
 * The over-reservation policies (policy.reservations.over, §A.7), as data:
 * whether an allocation @extra bytes past its reservation @res goes on.
 */
static gboolean
over_ignore(GsMemory *m, GsSpaceAccount *acct, GsMemReservation *res, gint64 extra)
{
	(void) m, (void) acct, (void) res, (void) extra;
	return TRUE;
}

static gboolean
over_fail(GsMemory *m, GsSpaceAccount *acct, GsMemReservation *res, gint64 extra)
{
	(void) m, (void) acct, (void) res, (void) extra;
	return FALSE;
}

/* Grown first, so the allocation then fits and nothing is charged twice. */
static gboolean
over_increase(GsMemory *m, GsSpaceAccount *acct, GsMemReservation *res, gint64 extra)
{
	gint64 grown = gs_bytes_scaled(extra, m->w->policy.reservations.increase_factor);

	if (!gs_space_account_grow(acct, &res->acct, grown) &&
	    !gs_space_account_grow(acct, &res->acct, extra))
		return FALSE;
	reservation_changed(m, &res->acct);
	return TRUE;
}

static gboolean (*const over_policies[])(GsMemory *, GsSpaceAccount *, GsMemReservation *,
					  gint64) = {
	[GS_OVER_IGNORE] = over_ignore,
	[GS_OVER_FAIL] = over_fail,
	[GS_OVER_INCREASE] = over_increase,
};

/* An allocation of @size inside @res; FALSE when it must fail. */
static gboolean
over_reservation(GsMemory *m, GsSpaceAccount *acct, GsMemReservation *res, gint64 size)
{
	gint64 granule = gs_space_account_get_granule(acct);
	gint64 extra = res->acct.allocated + (size + granule - 1) / granule * granule -
		       res->acct.size;

	return extra <= 0 || over_policies[m->w->policy.reservations.over](m, acct, res, extra);
}

/* ---- the pinned pool ---- */

/* Whether host allocations have a pinned pool beside the non-pinned limit. */
static gboolean
has_pinned(const GsMemory *m)
{
	return m->w->host.pinned > 0;
}

/* PinnedMemoryPool's tryAllocate: exact bytes within the pool, or nothing. */
static gboolean
pinned_take(GsMemory *m, gint64 size)
{
	if (!has_pinned(m) || size > m->w->host.pinned - m->pinned_used)
		return FALSE;
	m->pinned_used += size;
	return TRUE;
}

gboolean
gs_memory_host_never_fits(const GsMemory *m, const GsMemRequest *req)
{
	gboolean pinned_only = m->w->host.capacity == 0;
	gboolean pinned_fails, non_pinned_fails;

	if (!has_pinned(m) || req->kind != GS_KIND_HOST || req->res != NULL)
		return FALSE;
	pinned_fails = (pinned_only || req->prefer_pinned) && req->size > m->w->host.pinned;
	non_pinned_fails = pinned_only || req->size > m->w->host.capacity;
	return pinned_fails && non_pinned_fails;
}

gint64
gs_memory_pinned_used(const GsMemory *m)
{
	return m->pinned_used;
}

const char *
gs_memory_pool_name(const GsMemory *m, const GsMemBuf *b)
{
	if (!has_pinned(m) || b == NULL || b->tier != GS_TIER_HOST)
		return NULL;
	return b->pinned ? "pinned" : "non_pinned";
}

/*
 * Room for a host request with a pinned pool, in HostAlloc's order: the
 * preferred pool, then the other (a fallback, either way round). Returns
 * the bytes held, -1 with *@short_by when neither pool has the room.
 */
static gint64
take_host_room(GsMemory *m, const GsMemRequest *req, gboolean *pinned, gboolean *fallback,
	       gint64 *short_by)
{
	gint64 held;

	*pinned = req->prefer_pinned && pinned_take(m, req->size);
	if (*pinned)
		return req->size;
	held = take_room(m, GS_TIER_HOST, 0, req->size, NULL, NULL, short_by);
	*fallback = TRUE;
	if (held >= 0) {
		*fallback = req->prefer_pinned;
		return held;
	}
	*pinned = !req->prefer_pinned && pinned_take(m, req->size);
	if (*pinned)
		return req->size;
	/* HostAlloc asks the host store to spill the request's size, whichever pool is short. */
	*short_by = MAX(1, req->size);
	return -1;
}

/* The record of a buffer that has its room. */
static GsMemBuf *
record_buffer(GsMemory *m, const GsMemRequest *req, GsTier tier, gint64 held, guint64 handle,
	      GsMemReservation *res)
{
	GsMemBuf *b = record_new(m);

	b->kind = req->kind;
	b->device = tier == GS_TIER_GPU ? MIN(req->device, m->gpus->len - 1) : 0;
	b->size = req->size;
	b->tier = tier;
	b->dest = tier;
	b->held = held;
	b->handle = handle;
	b->res = res;
	b->res_serial = res != NULL ? res->serial : 0;
	if (m->store != NULL) {
		gs_spill_add(m->store, b->id, req->owner, req->size, tier, req->spillable, b->tag,
			     req->now);
		g_hash_table_insert(m->by_id, &b->id, b);
	}
	return b;
}

/* What pinning the pools the host tier added since it had @pools costs (links.host_pools). */
static GsTime
pinning_since(const GsMemory *m, guint pools)
{
	double bandwidth = m->w->links.host_pools.bandwidth;
	guint added = gs_host_blocks_pools(m->host_blocks) - pools;

	if (bandwidth <= 0 || added == 0)
		return 0;
	return gs_time_from_double((double) added * gs_host_blocks_get_pool_blocks(m->host_blocks) *
				   (double) gs_host_blocks_get_block_size(m->host_blocks) * 1e9 /
				   bandwidth);
}

GsMemAlloc
gs_memory_alloc(GsMemory *m, const GsMemRequest *req)
{
	GsMemAlloc out = {.outcome = GS_MEM_NO_ROOM};
	GsTier tier = req->kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU;
	GsMemReservation *res = gs_memory_res_in_space(req->res, tier, req->device) ? req->res : NULL;
	GsSpaceAccount *acct = account_of(m, tier, req->device);
	guint64 handle = 0;
	gboolean pinned = FALSE, fallback = FALSE;
	guint pools = gs_host_blocks_pools(m->host_blocks);
	gint64 held;
	GsMemBuf *b;

	out.tier = tier;
	if (res != NULL && !over_reservation(m, acct, res, req->size)) {
		/* fail refuses it; increase that could not grow leaves it without room */
		out.outcome = m->w->policy.reservations.over == GS_OVER_FAIL ? GS_MEM_OVER_RESERVATION
									      : GS_MEM_NO_ROOM;
		out.short_by = MAX(1, res->acct.allocated + req->size - res->acct.size);
		return out;
	}
	if (tier == GS_TIER_HOST && res == NULL && has_pinned(m))
		held = take_host_room(m, req, &pinned, &fallback, &out.short_by);
	else
		held = take_room(m, tier, req->device, req->size, res != NULL ? &res->acct : NULL,
				 &handle, &out.short_by);
	if (held < 0) {
		gint64 granule = gs_space_account_get_granule(acct);

		out.usage = gs_space_account_charged(acct) +
			    (req->size + granule - 1) / granule * granule;
		return out;
	}
	b = record_buffer(m, req, tier, held, handle, res);
	b->pinned = pinned;
	b->fallback = fallback;
	out.outcome = GS_MEM_OK;
	out.buf = b;
	out.pinning = pinning_since(m, pools);
	return out;
}

/*
 * The reservation @b was allocated in, while that grant is held: once it is
 * released, the name may be reserved again (in another space, too), and the
 * arena the buffer came from is gone.
 */
static GsSpaceReservation *
origin(GsMemBuf *b)
{
	if (b->res == NULL || !b->res->held || b->res->serial != b->res_serial)
		return NULL;
	return &b->res->acct;
}

/* The reservation a free of @b credits, by the attribution policy. */
static GsSpaceReservation *
credited(GsMemory *m, GsMemBuf *b, GsMemReservation *stream_res)
{
	if (m->w->policy.reservations.attribution == GS_ATTRIBUTION_STREAM)
		return gs_memory_res_in_space(stream_res, b->tier, b->device) ? &stream_res->acct
									       : NULL;
	return origin(b);
}

/* Whether a compute holds @b (a synchronous lock). */
static gboolean
in_use(const GsMemory *m, const GsMemBuf *b)
{
	GsSpillBufView v;

	return m->store != NULL && gs_spill_lookup(m->store, b->id, &v) && v.locks > 0;
}

/* Gives @b's memory back, crediting @res, and forgets it. */
static void
release_buffer(GsMemory *m, GsMemBuf *b, GsSpaceReservation *res)
{
	if (b->pinned)
		m->pinned_used -= b->size;
	else
		give_room(m, b->tier, b->device, b->size, b->held, b->handle, res);
	if (m->store != NULL) {
		gs_spill_remove(m->store, b->id);
		g_hash_table_remove(m->by_id, &b->id);
	}
	record_free(m, b);
}

/* The reservation a free made while @b was locked credits now: that grant, if still held. */
static GsSpaceReservation *
freed_credit(GsMemBuf *b)
{
	GsMemReservation *res = b->freed_res;

	if (res == NULL || !res->held || res->serial != b->freed_res_serial)
		return NULL;
	return &res->acct;
}

gboolean
gs_memory_free_buffer(GsMemory *m, GsMemBuf *b, GsMemReservation *stream_res)
{
	GsSpaceReservation *res;

	if (b->moving)
		gs_memory_copy_abort(m, b);
	res = credited(m, b, stream_res);
	if (!in_use(m, b)) {
		release_buffer(m, b, res);
		return TRUE;
	}
	/* Another thread frees what a compute reads: the memory stays until the compute ends. */
	b->freed = TRUE;
	b->freed_res = (GsMemReservation *) res; /* acct is a GsMemReservation's first member */
	b->freed_res_serial = res != NULL ? b->freed_res->serial : 0;
	m->n_freed++;
	return FALSE;
}

GsMemBuf *
gs_memory_buffer(const GsMemory *m, GsSpillBufId id)
{
	return m->by_id != NULL ? g_hash_table_lookup(m->by_id, &id) : NULL;
}

/* ---- copies ---- */

static GsTime
link_time(const GsLink *link, gint64 bytes)
{
	double transfer;

	if (link->bandwidth <= 0)
		return link->latency;
	transfer = (double) bytes * 1e9 / link->bandwidth;
	return gs_time_add(link->latency, gs_time_from_double(transfer));
}

GsTime
gs_memory_copy_time(const GsMemory *m, GsTier from, GsTier to, gint64 bytes)
{
	GsTier low = MAX(from, to), high = MIN(from, to);
	GsTime t = 0;

	if (high == GS_TIER_GPU && low >= GS_TIER_HOST)
		t = link_time(&m->w->links.gpu_host, bytes);
	if (low == GS_TIER_DISK && high <= GS_TIER_HOST)
		t = gs_time_add(t, link_time(&m->w->links.host_disk, bytes));
	if (to != GS_TIER_DISK)
		t = gs_time_add(t, gs_memory_first_write_time(m, bytes)); /* it lands in memory */
	return t;
}

/*
 * Only a run that spills writes its buffers at allocation: one may be
 * copied out while a compute reads it, so its bytes must be there (the host
 * backend's pattern). Elsewhere nothing is written until a copy needs it.
 * Below fresh.from the memory was touched before and costs nothing more.
 */
GsTime
gs_memory_first_write_time(const GsMemory *m, gint64 bytes)
{
	double bandwidth = m->w->links.fresh.bandwidth;

	if (bandwidth <= 0 || !m->w->policy.spill.enabled || bytes < m->w->links.fresh.from)
		return 0;
	return gs_time_from_double((double) bytes * 1e9 / bandwidth);
}

gint64
gs_memory_plan_spill(GsMemory *m, GsTier tier, gint64 need, GsTime now, GArray *moves)
{
	g_array_set_size(moves, 0);
	if (m->store == NULL)
		return 0;
	return gs_spill_plan(m->store, tier, need, m->w->policy.spill.victim, now, moves);
}

void
gs_memory_set_spillable(GsMemory *m, const GArray *ids, gboolean spillable)
{
	if (m->store == NULL)
		return;
	for (guint i = 0; i < ids->len; i++)
		gs_spill_set_spillable(m->store, g_array_index(ids, GsSpillBufId, i), spillable);
}

static gboolean
is_spillable(GsMemory *m, GsSpillBufId id)
{
	GsSpillBufView view;

	return gs_spill_lookup(m->store, id, &view) && view.spillable;
}

gint64
gs_memory_plan_victims(GsMemory *m, GsTier tier, gint64 need, GsTime now, GArray *moves,
		       gboolean (*mine)(const GsMemBuf *b, gconstpointer requester),
		       gconstpointer requester)
{
	g_autoptr(GArray) own = NULL;
	gint64 planned;

	if (m->store == NULL || m->w->policy.spill.victim != GS_VICTIM_SMALLEST_FIT)
		return gs_memory_plan_spill(m, tier, need, now, moves);
	own = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	for (const GsMemBuf *b = m->live; b != NULL; b = b->next)
		if (mine(b, requester) && is_spillable(m, b->id))
			g_array_append_val(own, b->id);
	gs_memory_set_spillable(m, own, FALSE);
	planned = gs_memory_plan_spill(m, tier, need, now, moves);
	gs_memory_set_spillable(m, own, TRUE);
	if (planned >= need || own->len == 0)
		return planned;
	return gs_memory_plan_spill(m, tier, need, now, moves);
}

void
gs_memory_block_enter(GsMemory *m, GArray *inputs, const GArray *ids)
{
	static const GsSpillBufId block_start = 0;

	if (m->store == NULL)
		return;
	g_array_append_val(inputs, block_start);
	for (guint i = 0; i < ids->len; i++) {
		GsSpillBufId id = g_array_index(ids, GsSpillBufId, i);
		GsSpillBufView view;

		if (gs_spill_lookup(m->store, id, &view) && !view.spillable) {
			gs_spill_set_spillable(m->store, id, TRUE);
			g_array_append_val(inputs, id);
		}
	}
}

void
gs_memory_block_leave(GsMemory *m, GArray *inputs)
{
	while (m->store != NULL && inputs->len > 0) {
		GsSpillBufId id = g_array_index(inputs, GsSpillBufId, inputs->len - 1);

		g_array_set_size(inputs, inputs->len - 1);
		if (id == 0)
			break;
		gs_spill_set_spillable(m->store, id, FALSE); /* gone already: refused, harmlessly */
	}
}

gboolean
gs_memory_copy_begin(GsMemory *m, GsMemBuf *b, GsTier to, GsTime *duration)
{
	guint pools = gs_host_blocks_pools(m->host_blocks);
	gint64 short_by;

	g_return_val_if_fail(m->store != NULL && !b->moving && b->tier != to, FALSE);
	if (gs_spill_move_begin(m->store, b->id, to) != GS_SPILL_OK)
		return FALSE;
	b->dest_held = take_room(m, to, b->device, b->size, NULL, &b->dest_handle, &short_by);
	if (b->dest_held < 0) {
		gs_spill_move_abort(m->store, b->id);
		return FALSE;
	}
	b->moving = TRUE;
	b->dest = to;
	*duration = gs_time_add(gs_memory_copy_time(m, b->tier, to, b->size),
				pinning_since(m, pools));
	return TRUE;
}

void
gs_memory_copy_abort(GsMemory *m, GsMemBuf *b)
{
	g_return_if_fail(b->moving);
	give_room(m, b->dest, b->device, b->size, b->dest_held, b->dest_handle, NULL);
	gs_spill_move_abort(m->store, b->id);
	b->moving = FALSE;
	b->dest = b->tier;
}

static void
count_traffic(GsMemory *m, GsTier from, GsTier to, gint64 bytes)
{
	if (from < to) {
		m->traffic.gpu_to_host += from == GS_TIER_GPU ? bytes : 0;
		m->traffic.host_to_disk += to == GS_TIER_DISK ? bytes : 0;
	} else {
		m->traffic.host_to_gpu += to == GS_TIER_GPU ? bytes : 0;
		m->traffic.disk_to_host += from == GS_TIER_DISK ? bytes : 0;
	}
}

gboolean
gs_memory_copy_commit(GsMemory *m, GsMemBuf *b)
{
	GsSpillResult r;

	g_return_val_if_fail(b->moving, FALSE);
	/* The copy carries the source's tag: the store checks it is the buffer's. */
	r = gs_spill_moved(m->store, b->id, b->dest, b->tag);
	m->traffic.copies++;
	if (r != GS_SPILL_OK) {
		m->traffic.tag_mismatches += r == GS_SPILL_TAG_MISMATCH;
		give_room(m, b->dest, b->device, b->size, b->dest_held, b->dest_handle, NULL);
		b->moving = FALSE;
		b->dest = b->tier;
		return FALSE;
	}
	if (b->pinned)
		m->pinned_used -= b->size; /* what comes back to the host later is non-pinned */
	else
		give_room(m, b->tier, b->device, b->size, b->held, b->handle, origin(b));
	b->pinned = FALSE;
	count_traffic(m, b->tier, b->dest, b->size);
	b->res = NULL; /* its reservation stays behind in the old tier */
	b->tier = b->dest;
	b->held = b->dest_held;
	b->handle = b->dest_handle;
	b->moving = FALSE;
	return TRUE;
}

/* ---- reservations ---- */

/* One memory space: a tier and, for the GPU, a device. */
typedef struct {
	GsTier tier;
	guint device;
} Space;

static gint64
space_room(GsMemory *m, Space s)
{
	return gs_space_account_available(account_of(m, s.tier, s.device));
}

/* The downgrade strategy: the target tier's space with the most room now (ties: the first). */
static void
keep_roomiest(GsMemory *m, GArray *spaces)
{
	guint best = 0;

	for (guint i = 1; i < spaces->len; i++) {
		if (space_room(m, g_array_index(spaces, Space, i)) >
		    space_room(m, g_array_index(spaces, Space, best)))
			best = i;
	}
	g_array_index(spaces, Space, 0) = g_array_index(spaces, Space, best);
	g_array_set_size(spaces, MIN(spaces->len, 1));
}

/* The spaces a strategy asks, in order; *@strong: ask the first only (§A.5). */
static void
candidates(GsMemory *m, const GsOp *op, GArray *out, gboolean *strong)
{
	GsTier tiers[GS_N_TIERS];
	guint n = 0;

	*strong = op->reserve.strategy == GS_STRATEGY_SPECIFIC ||
		  op->reserve.strategy == GS_STRATEGY_DOWNGRADE;
	switch (op->reserve.strategy) {
	case GS_STRATEGY_SPECIFIC:
		g_array_append_val(out, ((Space){op->reserve.tier, op->reserve.device}));
		return;
	case GS_STRATEGY_ANY_IN_TIERS:
		for (guint i = 0; op->reserve.tiers != NULL && i < op->reserve.tiers->len; i++)
			tiers[n++] = g_array_index(op->reserve.tiers, GsTier, i);
		break;
	case GS_STRATEGY_DOWNGRADE:
		tiers[n++] = op->reserve.to;
		break;
	case GS_STRATEGY_ANY_IN_TIER:
		tiers[n++] = op->reserve.tier;
		break;
	}
	for (guint i = 0; i < n && i < GS_N_TIERS; i++) {
		guint spaces = tiers[i] == GS_TIER_GPU ? m->gpus->len : 1;

		for (guint d = 0; d < spaces; d++)
			g_array_append_val(out, ((Space){tiers[i], d}));
	}
	if (op->reserve.strategy == GS_STRATEGY_DOWNGRADE)
		keep_roomiest(m, out);
}

static GsReservationOutcome
reserve_in(GsMemory *m, Space s, GsReserveMode mode, gint64 bytes, GsMemReservation *res)
{
	GsReserveResult r = gs_space_account_reserve(account_of(m, s.tier, s.device), mode, bytes,
						     &res->acct);

	if (gs_reservation_outcome_held(r.outcome)) {
		res->held = TRUE;
		res->tier = s.tier;
		res->device = s.tier == GS_TIER_GPU ? s.device : 0;
		reservation_changed(m, &res->acct);
	}
	return r.outcome;
}

GsReservationOutcome
gs_memory_reserve(GsMemory *m, const GsOp *op, GsMemReservation *res)
{
	g_autoptr(GArray) spaces = g_array_new(FALSE, FALSE, sizeof(Space));
	gboolean strong;

	g_return_val_if_fail(!res->held, GS_RESERVATION_REFUSED);
	candidates(m, op, spaces, &strong);
	if (spaces->len == 0)
		return GS_RESERVATION_REFUSED;
	/* Weak ordering: a first pass takes any space with room now. */
	for (guint i = 0; !strong && i < spaces->len; i++) {
		if (reserve_in(m, g_array_index(spaces, Space, i), GS_RESERVE_OR_NULL,
			       op->reserve.size, res) == GS_RESERVATION_GRANTED)
			return GS_RESERVATION_GRANTED;
	}
	return reserve_in(m, g_array_index(spaces, Space, 0), op->reserve.mode, op->reserve.size,
			  res);
}

GsReservationOutcome
gs_memory_reserve_again(GsMemory *m, const GsOp *op, GsMemReservation *res)
{
	g_autoptr(GArray) spaces = g_array_new(FALSE, FALSE, sizeof(Space));
	GsSpaceAccount *acct;
	Space s;
	gboolean strong;

	if (m->w->policy.reservations.blocking == GS_BLOCK_FOR_WHOLE)
		return gs_memory_reserve(m, op, res);
	candidates(m, op, spaces, &strong);
	if (spaces->len == 0)
		return GS_RESERVATION_WAIT;
	s = g_array_index(spaces, Space, 0);
	acct = account_of(m, s.tier, s.device);
	if (!gs_space_account_woken(acct))
		return GS_RESERVATION_WAIT;
	/* Awake, it waits again at once after each notification that did not help. */
	for (;;) {
		switch (gs_space_account_wait(acct)) {
		case GS_CHANNEL_SHUTDOWN:
			return GS_RESERVATION_SHUTDOWN;
		case GS_CHANNEL_NOTIFIED:
			if (reserve_in(m, s, GS_RESERVE_OR_NULL, op->reserve.size, res) ==
			    GS_RESERVATION_GRANTED)
				return GS_RESERVATION_GRANTED;
			continue;
		case GS_CHANNEL_IDLE:
			reserve_in(m, s, GS_RESERVE_UPTO, op->reserve.size, res);
			return GS_RESERVATION_IDLE;
		case GS_CHANNEL_BLOCKED:
			return GS_RESERVATION_WAIT;
		}
	}
}

/* Does @fn to every space's account: each GPU's, the host's, the disk's. */
static void
each_account(GsMemory *m, void (*fn)(GsSpaceAccount *acct))
{
	for (guint i = 0; i < m->gpu_accounts->len; i++)
		fn(m->gpu_accounts->pdata[i]);
	fn(m->host_account);
	fn(m->disk_account);
}

void
gs_memory_settle_channels(GsMemory *m)
{
	each_account(m, gs_space_account_settle);
}

void
gs_memory_shutdown_channels(GsMemory *m)
{
	each_account(m, gs_space_account_shutdown);
}

gint64
gs_memory_release(GsMemory *m, GsMemReservation *res)
{
	gint64 refund;

	g_return_val_if_fail(res->held, 0);
	refund = gs_space_account_release(account_of(m, res->tier, res->device), &res->acct);
	res->held = FALSE;
	reservation_changed(m, &res->acct);
	return refund;
}

/* ---- the tiers ---- */

gint64
gs_memory_used(const GsMemory *m, GsTier tier)
{
	gint64 used = 0;

	switch (tier) {
	case GS_TIER_GPU:
		for (guint i = 0; i < m->gpus->len; i++)
			used += gs_device_used(m->gpus->pdata[i]);
		return used;
	case GS_TIER_HOST:
		return gs_host_blocks_in_use(m->host_blocks) *
			       gs_host_blocks_get_block_size(m->host_blocks) +
		       m->pinned_used;
	case GS_TIER_DISK:
		break;
	}
	return m->disk_used;
}

guint
gs_memory_host_pools(const GsMemory *m)
{
	return gs_host_blocks_pools(m->host_blocks);
}

gint64
gs_memory_host_pool_bytes(const GsMemory *m)
{
	return gs_host_blocks_system_bytes(m->host_blocks);
}

gint64
gs_memory_charged(const GsMemory *m, GsTier tier)
{
	gint64 charged = 0;

	switch (tier) {
	case GS_TIER_GPU:
		for (guint i = 0; i < m->gpus->len; i++)
			charged += gs_space_account_charged(m->gpu_accounts->pdata[i]);
		return charged;
	case GS_TIER_HOST:
		return gs_space_account_charged(m->host_account);
	case GS_TIER_DISK:
		break;
	}
	return gs_space_account_charged(m->disk_account);
}

/* The bytes the live buffers hold in the pinned pool, counted afresh. */
static gint64
pinned_held(const GsMemory *m)
{
	gint64 held = 0;

	for (const GsMemBuf *b = m->live; b != NULL; b = b->next)
		held += b->pinned ? b->size : 0;
	return held;
}

const char *
gs_memory_check(const GsMemory *m)
{
	for (guint i = 0; i < m->gpus->len; i++) {
		const char *problem = gs_device_check(m->gpus->pdata[i]);

		if (problem != NULL)
			return problem;
	}
	if (m->traffic.tag_mismatches > 0)
		return "a copy arrived with another buffer's content tag";
	if (pinned_held(m) != m->pinned_used || m->pinned_used > m->w->host.pinned)
		return "the pinned pool's bytes in use are not its buffers' or pass its size";
	return m->store != NULL ? gs_spill_store_check(m->store) : NULL;
}

/* ---- helpers the drivers share ---- */

GsMemReservation *
gs_memory_reservation_at(GPtrArray *reservations, guint index)
{
	while (reservations->len <= index)
		g_ptr_array_add(reservations, g_new0(GsMemReservation, 1));
	return reservations->pdata[index];
}

GsMemReservation *
gs_memory_newest_reservation(const GPtrArray *reservations, GsTier tier, guint device)
{
	GsMemReservation *newest = NULL;

	for (guint i = 0; reservations != NULL && i < reservations->len; i++) {
		GsMemReservation *res = reservations->pdata[i];

		if (gs_memory_res_in_space(res, tier, device) &&
		    (newest == NULL || res->serial > newest->serial))
			newest = res;
	}
	return newest;
}

gint64
gs_memory_unspill_need(GsMemory *m, const GArray *ids)
{
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	gint64 need = gs_spill_unspill_plan(gs_memory_store(m), (const GsSpillBufId *) ids->data,
					    ids->len, moves, NULL);

	for (guint i = 0; i < moves->len; i++) {
		if (g_array_index(moves, GsSpillMove, i).from != GS_TIER_GPU)
			return MAX(1, need);
	}
	return 0;
}

gboolean
gs_memory_take_page(GsPageTable **pages, GsMemBuf *b)
{
	guint number;

	b->page = -1;
	if (pages == NULL || b->kind != GS_KIND_HOST)
		return TRUE;
	if (*pages == NULL)
		*pages = gs_page_table_new();
	if (gs_page_table_allocate(*pages, b->size, NULL, &number) != GS_PAGE_OK)
		return FALSE;
	b->page = (gint) number;
	return TRUE;
}

void
gs_memory_give_page(GsPageTable *pages, GsMemBuf *b)
{
	if (b->page >= 0 && pages != NULL)
		gs_page_table_free_page(pages, (guint) b->page, NULL);
}

GsDowngradeDecision
gs_memory_downgrade_step(GsMemory *m, guint device, gboolean *on)
{
	GsDowngradeDecision d = gs_space_account_downgrade(gs_memory_gpu_account(m, device), *on);

	*on = d == GS_DOWNGRADE_START || d == GS_DOWNGRADE_CONTINUE;
	return d;
}

GsMemBuf *
gs_memory_downgrade_victim(GsMemory *m, guint device, GsTime now, GArray *moves)
{
	const GsSpaceAccount *acct = gs_memory_gpu_account(m, device);

	if (gs_gate_is_closed(gs_memory_gate(m)) ||
	    gs_space_downgrade_amount(gs_space_account_get_thresholds(acct),
				      gs_space_account_charged(acct)) <= 0)
		return NULL;
	gs_memory_plan_spill(m, GS_TIER_GPU, G_MAXINT64, now, moves);
	for (guint i = 0; i < moves->len; i++) {
		GsMemBuf *b = gs_memory_buffer(m, g_array_index(moves, GsSpillMove, i).id);

		if (b != NULL && b->device == device)
			return b;
	}
	return NULL;
}

/*
 * gpusim: names of the shared value types (exceptions, kinds) and the version.
 */
#include "config.h"

#include <string.h>

#include <gpusim/types.h>

static const struct {
	const char *name;
	gboolean recoverable;
} exceptions[] = {
#define GS_X_ROW(suffix, name, recoverable) [GS_EXC_##suffix] = {name, recoverable},
	GS_EXCEPTION_MAP(GS_X_ROW)
#undef GS_X_ROW
};

G_STATIC_ASSERT(G_N_ELEMENTS(exceptions) == GS_N_EXCEPTIONS);

const char *
gs_exception_name(GsException exc)
{
	g_return_val_if_fail(exc < GS_N_EXCEPTIONS, "invalid");
	return exceptions[exc].name;
}

gboolean
gs_exception_from_name(const char *name, GsException *out)
{
	for (guint i = 0; i < GS_N_EXCEPTIONS; i++) {
		if (strcmp(exceptions[i].name, name) == 0) {
			*out = (GsException) i;
			return TRUE;
		}
	}
	return FALSE;
}

gboolean
gs_exception_is_recoverable(GsException exc)
{
	g_return_val_if_fail(exc < GS_N_EXCEPTIONS, FALSE);
	return exceptions[exc].recoverable;
}

gboolean
gs_exception_is_split(GsException exc)
{
	return exc == GS_EXC_GPU_SPLIT_AND_RETRY_OOM || exc == GS_EXC_CPU_SPLIT_AND_RETRY_OOM;
}

GsException
gs_exception_retry_oom(GsAllocKind kind)
{
	return kind == GS_KIND_HOST ? GS_EXC_CPU_RETRY_OOM : GS_EXC_GPU_RETRY_OOM;
}

GsException
gs_exception_split_oom(GsAllocKind kind)
{
	return kind == GS_KIND_HOST ? GS_EXC_CPU_SPLIT_AND_RETRY_OOM : GS_EXC_GPU_SPLIT_AND_RETRY_OOM;
}

GsException
gs_exception_fatal_oom(GsAllocKind kind)
{
	return kind == GS_KIND_HOST ? GS_EXC_CPU_OOM : GS_EXC_GPU_OOM;
}

const char *
gs_kind_name(GsAllocKind kind)
{
	return kind == GS_KIND_HOST ? "host" : "gpu";
}

const char *
gs_version(void)
{
	return PACKAGE_VERSION;
}

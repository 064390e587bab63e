#!/bin/sh
# Fails if a pure source file (core, tiers, run) reaches for threads, clocks, I/O or CUDA.
# The core decides; drivers wait, read clocks and talk to devices.
set -u
status=0
forbidden='pthread|g_thread|GThread|g_mutex|GMutex|g_cond|GCond|g_get_real_time|g_get_monotonic_time|g_usleep|clock_gettime|gettimeofday|\b(time|clock|sleep|usleep|nanosleep|open|read|write|puts|rand|fopen|fread|fwrite|fprintf|printf|getenv)\(|g_print|g_printerr|g_file_|GFile|g_spawn|cuda|CUDA|g_random|<stdio\.h>|<unistd\.h>|<time\.h>|<sys/'
for f in ${GS_PURE_SOURCES:?GS_PURE_SOURCES is not set}; do
	# Comments may mention anything; only code counts.
	hits=$(sed -e 's://.*$::' "$top_srcdir/$f" | perl -0pe 's:/\*.*?\*/::gs' | grep -nE "$forbidden")
	if [ -n "$hits" ]; then
		echo "$f reaches outside the pure layers:"
		echo "$hits"
		status=1
	fi
done
for f in "$top_srcdir"/include/gpusim/*.h; do
	if sed -e 's://.*$::' "$f" | perl -0pe 's:/\*.*?\*/::gs' | grep -qE 'cuda|CUDA|pthread'; then
		echo "$f: a public header names CUDA or threads"
		status=1
	fi
done
[ $status -eq 0 ] && echo "pure sources: $GS_PURE_SOURCES"
exit $status

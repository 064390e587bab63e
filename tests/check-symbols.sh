#!/bin/sh
# Fails if a global symbol of libgpusim lacks the gs_ prefix.
set -u
lib="$top_builddir/.libs/libgpusim.so"
if [ ! -f "$lib" ]; then
	echo "no shared libgpusim at $lib"
	exit 77
fi
# Defined, global (upper-case type letter) symbols; sanitizer builds add their
# own runtime symbols, which are not libgpusim's.
bad=$(${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ { print $3 }' |
	grep -vE '^gs_' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' |
	grep -vE '^(__asan|__ubsan|__sanitizer|__lsan|__odr_asan|__tsan)' )
if [ -n "$bad" ]; then
	echo "global symbols without the gs_ prefix in libgpusim:"
	echo "$bad"
	exit 1
fi
echo "every global symbol of libgpusim starts with gs_: $(${NM:-nm} -D --defined-only "$lib" | grep -c ' T gs_') functions"
exit 0

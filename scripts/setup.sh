#!/usr/bin/env bash
# Sets gpusim up on a Debian machine: installs the Debian packages it needs
# when they are missing (saying so first), bootstraps, configures and builds
# into build/ (or $GPUSIM_BUILD_DIR). Extra arguments go to ./configure
# (CC=clang among them: then clang is installed as well).
# Sourced by scripts/quickstart and scripts/test; run alone, it only builds.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${GPUSIM_BUILD_DIR:-$top/build}
packages=(gcc make autoconf automake libtool pkg-config libglib2.0-dev libyaml-dev check gnuplot-nox
	bash-completion parallel)
# A clang build (CC=clang) needs compiler-rt too: the sanitizers' runtimes and libFuzzer.
if [[ "${CC:-}" == clang* || " $* " == *" CC=clang"* ]]; then
	packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "gpusim needs these Debian packages, which are missing: ${missing[*]}"
	echo "Installing them with apt-get…"
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
	echo "Bootstrapping (autoreconf)…"
	autoreconf -fi
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$#" -gt 0 ]; then
	"$top/configure" "$@"
fi
make -j"$(nproc)"

#!/usr/bin/env bash
# Build a free-threaded CPython (configure --disable-gil) from Debian's source
# package of python3.13, install fixedutf32 into a venv of it, and run the
# kernel tests there, then threads hammering the same and different buffers
# (tools/freethreaded_hammer.py).
#
# Usage: bash tools/freethreaded.sh [WORKDIR]     (default: /tmp/fixedutf32-ft)
#
# For machines without a free-threaded binary (Debian bookworm has Python 3.11
# only).  The source comes from the Debian mirror this machine's apt already
# uses, through a private apt state under WORKDIR (the system's apt lists and
# sources are left alone), from the suite in $FT_SUITE (default: trixie, whose
# python3.13 is 3.13.x).  The build takes 10-20 minutes on two cores; the
# tests a few minutes.  Everything stays under WORKDIR; run again, it reuses
# the interpreter built before.  Not run in CI: the build alone would take a
# large share of CI's time, for a result that changes only with the threading
# code (run it by hand after such a change).
#
# Needs: gcc, make, dpkg-dev (dpkg-source), and the -dev packages of zlib,
# libffi, libssl, libbz2 and liblzma (apt-get install build-essential dpkg-dev
# zlib1g-dev libffi-dev libssl-dev libbz2-dev liblzma-dev).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-/tmp/fixedutf32-ft}"
SUITE="${FT_SUITE:-trixie}"
PREFIX="$WORK/python"
PYTHON="$PREFIX/bin/python3.13t"
mkdir -p "$WORK"
log() { echo "[freethreaded] $*" >&2; }

if [ ! -x "$PYTHON" ]; then
    # The mirror of this machine's own Debian sources (deb822 or one-line format).
    mirror="$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 || true)"
    if [ -z "$mirror" ]; then
        mirror="$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
    fi
    [ -n "$mirror" ] || { log "no Debian mirror found in /etc/apt"; exit 2; }
    apt_dir="$WORK/apt"
    mkdir -p "$apt_dir/lists/partial" "$WORK/src"
    echo "deb-src [trusted=yes] $mirror $SUITE main" > "$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
    log "fetching the source package python3.13 ($SUITE)"
    apt-get "${apt_opts[@]}" update > "$WORK/apt-update.log" 2>&1 \
        || { tail -5 "$WORK/apt-update.log"; exit 1; }
    (cd "$WORK/src" && apt-get "${apt_opts[@]}" source --download-only python3.13 > "$WORK/apt-source.log" 2>&1) \
        || { tail -5 "$WORK/apt-source.log"; exit 1; }
    # The upstream tarball is all that is needed (Debian's patches are for its own layout).
    orig="$(ls "$WORK"/src/python3.13_*.orig.tar.* | head -1)"
    log "building $(basename "$orig") with --disable-gil (log: $WORK/build.log)"
    rm -rf "$WORK/cpython" && mkdir "$WORK/cpython"
    tar -xf "$orig" -C "$WORK/cpython" --strip-components=1
    (cd "$WORK/cpython" \
        && ./configure --disable-gil --prefix="$PREFIX" --with-ensurepip=no --disable-test-modules \
        && make -j"$(nproc)" \
        && make install) > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
fi

"$PYTHON" -c "import sys; assert not sys._is_gil_enabled(), 'the GIL is on'; print(sys.version)"

VENV="$WORK/venv"
if [ ! -x "$VENV/bin/pip" ]; then
    "$PYTHON" -m venv --without-pip "$VENV"
    # pip from the wheel the source tree bundles, else from PyPI through the
    # pip of the interpreter in $HOST_PYTHON (default python3).
    if ! "$VENV/bin/python" -m ensurepip --default-pip > "$WORK/ensurepip.log" 2>&1; then
        "${HOST_PYTHON:-python3}" -m pip download --quiet --no-deps --only-binary :all: \
            -d "$WORK/wheels" pip
        wheel="$(ls "$WORK"/wheels/pip-*.whl | head -1)"
        "$VENV/bin/python" "$wheel/pip" install --quiet "$wheel"
    fi
fi
log "installing fixedutf32 and the test tools into $VENV"
# --prefer-binary: the newest hypothesis may come as an sdist with a Rust part.
"$VENV/bin/python" -m pip install --quiet --prefer-binary "setuptools>=77" "Cython>=3.1" numpy pytest hypothesis
(cd "$ROOT" && "$VENV/bin/python" -m pip install --quiet --no-build-isolation . > "$WORK/install.log" 2>&1) \
    || { tail -30 "$WORK/install.log"; exit 1; }

cd "$WORK"  # the installed package, not the source tree
# The module says it runs without the GIL: importing it must not turn the GIL on.
"$VENV/bin/python" -W error -c "
import sys, fixedutf32
assert not sys._is_gil_enabled(), 'importing fixedutf32 turned the GIL on'
print('fixedutf32', fixedutf32.__version__, 'imported, GIL still off; SIMD level', fixedutf32.get_simd_level())"

log "kernel tests"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$WORK/pytest" \
    "$ROOT/tests/test_chunk.py" "$ROOT/tests/test_batch.py" "$ROOT/tests/test_capi.py" \
    "$ROOT/tests/test_concurrent_input.py" "$ROOT/tests/test_transcode.py" "$ROOT/tests/test_hostile.py"
log "threads hammering the same and different buffers"
"$VENV/bin/python" "$ROOT/tools/freethreaded_hammer.py"

#!/usr/bin/env bash
# Run zarr-python's own tests (codecs, arrays, indexing, ...) twice: stock, and
# with fixedutf32's codec and pipeline selected through zarr's environment
# variables; report the tests that fail only with the integration.
#
# The tests come from the sdist of the zarr-python version installed in the
# current environment (pip download), so they match the code they test.
#
# Exit status: 0 no test fails only with the integration, 1 some do,
# 2 usage error or the suite could not be fetched or run.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/zarr_suite.sh [--stock-only] [--parallel] [--workdir DIR] [--findings FILE] [--no-install] [TEST ...]

Fetches the sdist of the installed zarr-python with pip, installs the test
requirements of the chosen tests (pytest, pytest-asyncio, hypothesis,
pytest-benchmark) into the work directory (not into the current environment:
pytest-asyncio would change every pytest run there), and runs zarr's tests
with the current environment's zarr and fixedutf32 twice: stock, then with
  ZARR_CODEC_PIPELINE__PATH=fixedutf32.zarr.CodecPipeline
  ZARR_CODECS__BYTES=fixedutf32.zarr.BytesCodec
Prints both summaries and the tests that fail with the integration but pass
stock, with their errors.

  --stock-only      run the stock pass only (zarr's own failures, timings)
  --parallel        run the two passes at once, in two processes (about half
                    the time on two cores; each pass's seconds are then longer)
  --workdir DIR     unpack and keep the sdist and logs in DIR (reused if present);
                    default: a temporary directory, removed afterwards
  --findings FILE   also write the tests that fail only with the integration to FILE
  --no-install      use the test requirements installed in the current environment
  TEST ...          test paths inside the sdist (default: the list below)

Environment: PYTHON (default: python), the interpreter whose zarr is tested.
EOF
}

# Tests that exercise codecs, arrays, indexing and metadata; all run offline.
# Left out: test_store (no codec involved), test_api/ (needs numpydoc, checks
# docstrings), test_regression (needs uv and older zarr versions), test_docs.
DEFAULT_TESTS=(
    tests/test_codecs
    tests/test_array.py
    tests/test_indexing.py
    tests/test_v2.py
    tests/test_api.py
    tests/test_group.py
    tests/test_dtype
    tests/test_metadata
    tests/test_properties.py
)
REQUIREMENTS=(pytest pytest-asyncio hypothesis pytest-benchmark packaging)

stock_only=0
parallel=0
workdir=""
findings=""
install=1
tests=()
while [ $# -gt 0 ]; do
    case "$1" in
        --stock-only) stock_only=1 ;;
        --parallel) parallel=1 ;;
        --workdir) [ $# -ge 2 ] || { usage >&2; exit 2; }; workdir="$2"; shift ;;
        --findings) [ $# -ge 2 ] || { usage >&2; exit 2; }; findings="$2"; shift ;;
        --no-install) install=0 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "zarr_suite.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) tests+=("$1") ;;
    esac
    shift
done
[ ${#tests[@]} -gt 0 ] || tests=("${DEFAULT_TESTS[@]}")

PYTHON="${PYTHON:-python}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
compare="$here/zarr_suite_compare.py"

version="$("$PYTHON" -c 'import zarr; print(zarr.__version__)' 2>/dev/null)" || {
    echo "zarr_suite.sh: zarr-python is not importable with $PYTHON; install it (pip install zarr)" >&2
    exit 2
}
if [ $stock_only -eq 0 ] && ! "$PYTHON" -c 'import fixedutf32.zarr' 2>/dev/null; then
    echo "zarr_suite.sh: fixedutf32.zarr is not importable with $PYTHON; use --stock-only for zarr's own baseline" >&2
    exit 2
fi

if [ -z "$workdir" ]; then
    workdir="$(mktemp -d -t zarr-suite.XXXXXX)"
    trap 'rm -rf "$workdir"' EXIT
fi
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"
log() { echo "zarr_suite.sh: $*" >&2; }

sdist="$workdir/zarr-$version"
if [ ! -d "$sdist/tests" ]; then
    log "fetching the zarr==$version sdist"
    "$PYTHON" -m pip download -q --no-deps --no-binary :all: "zarr==$version" -d "$workdir" \
        >"$workdir/pip-download.log" 2>&1 \
        || { log "pip download zarr==$version failed; see below"; tail -20 "$workdir/pip-download.log" >&2; exit 2; }
    tar -xzf "$workdir/zarr-$version.tar.gz" -C "$workdir"
fi
site=""
if [ $install -eq 1 ]; then
    # A directory of its own, put first on PYTHONPATH for the test runs only.
    site="$workdir/site-packages"
    if [ ! -d "$site" ]; then
        log "installing the test requirements into $site: ${REQUIREMENTS[*]}"
        "$PYTHON" -m pip install -q --target "$site" "${REQUIREMENTS[@]}" >"$workdir/pip-install.log" 2>&1 \
            || { rm -rf "$site"; log "pip install failed; see below"; tail -20 "$workdir/pip-install.log" >&2; exit 2; }
    fi
fi

# One pass of the tests; zarr's own pytest configuration (pyproject.toml of the
# sdist) applies: filterwarnings=error, strict markers, asyncio_mode=auto.
run_pass() {
    local name="$1"; shift
    local start end status
    log "running zarr's tests ($name): ${tests[*]}"
    start=$(date +%s)
    set +e
    (cd "$sdist" && env "$@" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m pytest -p no:cacheprovider -q -rfE \
        --junit-xml="$workdir/$name.xml" -o junit_family=xunit2 "${tests[@]}") \
        >"$workdir/$name.log" 2>&1
    status=$?
    set -e
    end=$(date +%s)
    echo "$((end - start))" >"$workdir/$name.seconds"
    # pytest: 0 all passed, 1 some failed; anything else means it could not run.
    if [ $status -gt 1 ]; then
        log "pytest ($name) exited with status $status; the end of its log:"
        tail -30 "$workdir/$name.log" >&2
        exit 2
    fi
}

STOCK=(-u ZARR_CODEC_PIPELINE__PATH -u ZARR_CODECS__BYTES)
INTEGRATION=(ZARR_CODEC_PIPELINE__PATH=fixedutf32.zarr.CodecPipeline
             ZARR_CODECS__BYTES=fixedutf32.zarr.BytesCodec)
if [ $stock_only -eq 0 ]; then
    # Fail early and clearly if the variables do not reach zarr's configuration.
    env "${INTEGRATION[@]}" "$PYTHON" - <<'EOF' || exit 2
import sys
import zarr.registry
pipeline = zarr.registry.get_pipeline_class()
codec = zarr.registry.get_codec_class("bytes")
names = [f"{c.__module__}.{c.__qualname__}" for c in (pipeline, codec)]
if not all(name.startswith("fixedutf32.zarr") for name in names):
    sys.exit(f"zarr_suite.sh: the environment did not select the integration: got {names}")
print(f"zarr_suite.sh: integration selected: {', '.join(names)}", file=sys.stderr)
EOF
fi
if [ $stock_only -eq 1 ]; then
    run_pass stock "${STOCK[@]}"
elif [ $parallel -eq 1 ]; then
    # Each pass in a subshell of its own: run_pass's exit 2 ends that subshell only.
    (run_pass stock "${STOCK[@]}") &
    stock_pid=$!
    (run_pass integration "${INTEGRATION[@]}") &
    integration_pid=$!
    failed=0
    wait "$stock_pid" || failed=1
    wait "$integration_pid" || failed=1
    [ $failed -eq 0 ] || exit 2
else
    run_pass stock "${STOCK[@]}"
    run_pass integration "${INTEGRATION[@]}"
fi

args=(--version "$version" --stock "$workdir/stock.xml" --stock-seconds "$(cat "$workdir/stock.seconds")")
if [ $stock_only -eq 0 ]; then
    args+=(--integration "$workdir/integration.xml" --integration-seconds "$(cat "$workdir/integration.seconds")")
fi
[ -z "$findings" ] || args+=(--findings "$findings")
"$PYTHON" "$compare" "${args[@]}"

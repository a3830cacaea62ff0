"""Run the fuzz targets of fixedutf32; exit 1 on any finding.

    python fuzz/run.py --seconds 60                     # every target, time split among them
    python fuzz/run.py --target hostile --seconds 3600  # one target, for an hour
    python fuzz/run.py --target decode --reproduce fuzz/findings/decode-crash-<sha>
    python fuzz/run.py --list

Each target runs in its own process (atheris/libFuzzer when atheris is
installed, else plain random inputs), so a crash is reported as a finding with
its input saved under fuzz/findings/ instead of killing this runner.
Progress goes to stderr; exit 0 clean, 1 findings, 2 usage.
"""

import argparse
import faulthandler
import hashlib
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
FINDINGS = HERE / "findings"
CORPUS = HERE / "corpus"
SEEDS = HERE / "seeds"
ARTIFACTS = ("crash-", "oom-", "timeout-", "leak-")
_CHILD_GRACE = 60  # seconds a child may overrun its budget before it counts as hung
_RECENT = 64  # inputs kept on disk: a crash may come some calls after the input that caused it
_MAX_LEN = 4096  # longest input
_SLOT = 12 + _MAX_LEN


def _log(message):
    print(f"fuzz: {message}", file=sys.stderr, flush=True)


def _have_atheris():
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def _targets():
    from targets import TARGETS
    return TARGETS


class _Recent:
    """The last inputs run, kept on disk, so that a crash that leaves no
    artifact (the process dies inside a signal handler, or heap damage kills
    it some calls later) still leaves the inputs that led to it.

    A ring of fixed slots in one open file: one pwrite per input, as opening
    a file per input costs more than a run of most targets.
    """

    def __init__(self, name):
        self.path = FINDINGS / f"{name}-recent.bin"
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.count = 0

    def add(self, data):
        data = data[:_MAX_LEN]
        self.count += 1
        slot = struct.pack("<QI", self.count, len(data)) + data
        os.pwrite(self.fd, slot, (self.count % _RECENT) * _SLOT)

    @staticmethod
    def read(path):
        """The inputs in a ring file, oldest first."""
        raw = path.read_bytes()
        entries = []
        for offset in range(0, len(raw) - 11, _SLOT):
            count, size = struct.unpack_from("<QI", raw, offset)
            if count:
                entries.append((count, raw[offset + 12:offset + 12 + size]))
        return [data for _, data in sorted(entries)]


# --- inside the child process ---------------------------------------------------------------

def _run_atheris(name, seconds):
    import atheris

    with atheris.instrument_imports(include=["fixedutf32"]):
        import fixedutf32.chunk  # noqa: F401
        import fixedutf32.metadata  # noqa: F401
        import fixedutf32.transcode  # noqa: F401
    fuzz_one = _targets()[name]
    recent = _Recent(name)

    def target(data):
        if not recent.count:
            # Only now: libFuzzer installs its signal handlers in Fuzz() and keeps
            # one already there, so faulthandler goes first (to print the Python
            # stack) and hands the signal on to libFuzzer, which saves the input.
            faulthandler.enable()
        recent.add(data)
        fuzz_one(data)

    corpus = CORPUS / name
    corpus.mkdir(parents=True, exist_ok=True)
    argv = [sys.argv[0], str(corpus)]
    if (SEEDS / name).is_dir():
        argv.append(str(SEEDS / name))
    argv += [f"-max_total_time={seconds}", f"-artifact_prefix={FINDINGS / name}-",
             "-timeout=30", "-rss_limit_mb=3072", f"-max_len={_MAX_LEN}",
             "-print_final_stats=1"]
    atheris.Setup(argv, target)
    atheris.Fuzz()


def _run_random(name, seconds):
    """No atheris: random bytes and mutated seeds, the input written before each call."""
    target = _targets()[name]
    seeds = [p.read_bytes() for p in sorted((SEEDS / name).glob("*"))] if (
        SEEDS / name).is_dir() else []
    rng = random.Random()
    recent = _Recent(name)
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        if seeds and rng.random() < 0.5:
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 8)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data)
        else:
            data = rng.randbytes(rng.randint(0, rng.choice([16, 64, 512, _MAX_LEN])))
        recent.add(data)
        try:
            target(data)
        except Exception:
            traceback.print_exc()
            path = FINDINGS / f"{name}-crash-{hashlib.sha1(data).hexdigest()}"
            path.write_bytes(data)
            print(f"Test unit written to {path}", file=sys.stderr)
            sys.exit(1)
        runs += 1
    print(f"Done {runs} runs in {seconds} second(s)", file=sys.stderr)


def _child(name, seconds, engine):
    FINDINGS.mkdir(exist_ok=True)
    if engine == "atheris":
        _run_atheris(name, seconds)
    else:
        faulthandler.enable()
        _run_random(name, seconds)


# --- in the runner ----------------------------------------------------------------------------

def _artifacts(name):
    return {p for p in FINDINGS.glob(f"{name}-*") if p.name[len(name) + 1:].startswith(ARTIFACTS)}


def _tail(text, lines=40):
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _crash_signature(output):
    """"crash, <what> at <innermost Python frame>" from faulthandler's report, or None."""
    fatal = re.search(r"^Fatal Python error: (.*)$", output, re.M)
    if not fatal:
        return None
    frames = [line.strip() for line in output[fatal.end():].splitlines()
              if line.strip().startswith("File ") or "<no Python frame>" in line]
    where = frames[0].removeprefix("File ") if frames else "?"
    return f"crash, {fatal.group(1).strip()} at {where}"


def _exception_signature(output):
    """The last "SomeError: message" line of a Python traceback, or None."""
    errors = [line for line in output.splitlines()
              if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit)\b", line)]
    return errors[-1][:200] if errors else None


def _keep_recent(name):
    """Save the last inputs of a child that died without an artifact, oldest first."""
    recent = FINDINGS / f"{name}-recent.bin"
    inputs = _Recent.read(recent) if recent.exists() else []
    if not inputs:
        return None
    kept = FINDINGS / f"{name}-crash-recent-{time.strftime('%Y%m%d-%H%M%S')}"
    kept.mkdir()
    for i, data in enumerate(inputs):
        last = "-last" if i == len(inputs) - 1 else ""
        (kept / f"{i:03d}{last}").write_bytes(data)
    return kept


def _run_target(name, seconds, engine, seen):
    """Run one target in a child process; return its findings as (signature, message)."""
    FINDINGS.mkdir(exist_ok=True)
    before = _artifacts(name)
    log_path = FINDINGS / f"{name}.log"
    command = [sys.executable, str(HERE / "run.py"), "--child", name, "--seconds",
               str(seconds), "--engine", engine]
    start = time.monotonic()
    with open(log_path, "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        try:
            code = child.wait(timeout=seconds + _CHILD_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            code = child.wait()
            log.write(f"\nfuzz: killed after {seconds + _CHILD_GRACE} s\n")
    elapsed = time.monotonic() - start
    output = log_path.read_text(errors="replace")
    new = sorted(_artifacts(name) - before)
    crash, exception = _crash_signature(output), _exception_signature(output)
    # A crash inside libFuzzer's own crash handler (heap damage) can even end with
    # exit code 0 and no artifact: the log says what happened.
    failed = code != 0 or crash is not None or "ERROR: libFuzzer" in output
    how = f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
    results = []  # (signature, saved input or None)
    if new:
        signature = exception or crash or how
        results += [(signature, path) for path in new]
        if crash and exception:
            # the exception was saved, then the process crashed on its way out:
            # damage done by an earlier input, among the last ones run
            results.append((crash, _keep_recent(name)))
    elif failed:
        results.append((crash or exception or how, _keep_recent(name)))
    (FINDINGS / f"{name}-recent.bin").unlink(missing_ok=True)
    runs = next((line.split()[1] for line in output.splitlines() if line.startswith("Done ")), "?")
    if not results:
        _log(f"{name}: clean, {runs} runs in {elapsed:.0f} s")
        return []
    findings = []
    runner = os.path.relpath(HERE / "run.py", Path.cwd())
    for signature, path in results:
        signature = f"{name}: {signature}"
        if path is None:
            reproduce = "no input was saved"
        else:
            reproduce = (f"python {runner} --target {name} --reproduce "
                         f"{os.path.relpath(path, Path.cwd())}")
            if path.is_dir():
                reproduce += (" (the last inputs before the crash, replayed in order; "
                              "the one marked -last was running)")
        findings.append((signature, f"{signature}\n    reproduce: {reproduce}"))
    if any(signature not in seen for signature, _ in findings):
        print(f"=== finding in target {name!r} ({how}); log {log_path}", flush=True)
        print(_tail(output), flush=True)
        for _, message in findings:
            print(message, flush=True)
    else:
        _log(f"{name}: again {findings[0][0]}")
    seen.update(signature for signature, _ in findings)
    return findings


def _reproduce(name, path):
    faulthandler.enable()
    path = Path(path)
    inputs = sorted(path.iterdir()) if path.is_dir() else [path]
    target = _targets()[name]
    import targets
    targets.VERBOSE = True
    failed = 0
    for one in inputs:
        data = one.read_bytes()
        _log(f"running {name} on {one} ({len(data)} bytes)")
        try:
            target(data)
        except Exception:
            traceback.print_exc()
            failed += 1
    if failed:
        _log(f"{failed} of {len(inputs)} input(s) raised")
        return 1
    _log("no finding: the input runs clean" if len(inputs) == 1 else
         f"no finding: the {len(inputs)} inputs run clean")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60,
                        help="total time, split among the targets (default 60)")
    parser.add_argument("--target", action="append", help="run only this target (repeatable)")
    parser.add_argument("--reproduce", metavar="FILE", help="run --target on one saved input")
    parser.add_argument("--keep-going", action="store_true",
                        help="after a finding, restart the target until the time is up")
    parser.add_argument("--engine", choices=("atheris", "random"),
                        help="default: atheris when installed, else random")
    parser.add_argument("--list", action="store_true", help="list the targets")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    engine = args.engine or ("atheris" if _have_atheris() else "random")
    if args.child:
        _child(args.child, max(int(args.seconds), 1), engine)
        return 0
    targets = _targets()
    if args.list:
        for name, fn in targets.items():
            print(f"{name}: {(fn.__doc__ or '').strip().splitlines()[0]}")
        return 0
    names = args.target or list(targets)
    unknown = [n for n in names if n not in targets]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}; targets: {', '.join(targets)}")
    if args.reproduce:
        if len(names) != 1:
            parser.error("--reproduce needs exactly one --target")
        if not Path(args.reproduce).exists():
            parser.error(f"--reproduce: no such file or folder {args.reproduce!r}")
        return _reproduce(names[0], args.reproduce)
    if engine == "random":
        _log("atheris is not installed: plain random inputs, no coverage guidance "
             "(pip install atheris)")
    share = args.seconds / len(names)
    _log(f"{len(names)} target(s), {share:.0f} s each, engine {engine}")
    findings, seen = [], set()
    for name in names:
        deadline = time.monotonic() + share
        while True:
            remaining = deadline - time.monotonic()
            found = _run_target(name, max(int(remaining) - 1, 1), engine, seen)
            findings += found
            if not (found and args.keep_going and deadline - time.monotonic() > 2):
                break
    if findings:
        counts = {}
        for signature, message in findings:
            counts.setdefault(signature, []).append(message)
        _log(f"{len(findings)} finding(s), {len(counts)} distinct:")
        for signature, messages in counts.items():
            print(f"{messages[0]}" + (f"\n    (and {len(messages) - 1} more like it)"
                                      if len(messages) > 1 else ""))
        return 1
    _log("no findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())

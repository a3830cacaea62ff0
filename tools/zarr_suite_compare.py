"""Compare two runs of zarr-python's tests (JUnit XML): stock and with fixedutf32.

Used by ``tools/zarr_suite.sh``.  Prints a summary of each run, zarr's own
failures (those that fail stock), and the tests that fail only with the
integration, each with its error.  Exit status 1 if there are any of the
latter, 0 otherwise, 2 if a report cannot be read.
"""

import argparse
import sys
import xml.etree.ElementTree as ElementTree

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed")
TRACEBACK_LINES = 12  # the end of each traceback: where it raised, and what


def read_report(path):
    """Map test id -> (outcome, message, end of the traceback) from a JUnit XML report."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise SystemExit(f"zarr_suite_compare: cannot read the pytest report {path}: {error}") from None
    results = {}
    for case in root.iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}".lstrip(":")
        outcome, message, text = "passed", "", ""
        for child in case:
            kind = child.tag
            if kind in ("failure", "error"):
                outcome = "failed" if kind == "failure" else "error"
                message = child.get("message", "")
                text = "\n".join((child.text or "").rstrip().splitlines()[-TRACEBACK_LINES:])
                break
            if kind == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                message = child.get("message", "")
        results[test_id] = (outcome, message, text)
    return results


def summary(results):
    counts = {outcome: 0 for outcome in OUTCOMES}
    for outcome, _, _ in results.values():
        counts[outcome] += 1
    return ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES)


def is_failure(outcome):
    return outcome in ("failed", "error")


def regressions(stock, integration):
    """Tests that fail with the integration but not stock, and stock passes missing from it."""
    found = []
    for test_id, (outcome, message, text) in integration.items():
        if is_failure(outcome) and not is_failure(stock.get(test_id, ("passed",))[0]):
            found.append((test_id, outcome, message, text))
    for test_id, (outcome, _, _) in stock.items():
        if outcome == "passed" and test_id not in integration:
            found.append((test_id, "not run", "passes stock but did not run with the integration "
                          "(a collection error above says why)", ""))
    return sorted(found)


def format_failure(test_id, outcome, message, text):
    lines = [f"{test_id}  [{outcome}]"]
    if message:
        lines.append(f"    {message.splitlines()[0] if message.strip() else message}")
    lines.extend(f"    | {line}" for line in text.splitlines())
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="zarr_suite_compare", description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="zarr-python version tested")
    parser.add_argument("--stock", required=True, help="JUnit XML of the stock run")
    parser.add_argument("--stock-seconds", type=float, default=None)
    parser.add_argument("--integration", help="JUnit XML of the run with the integration")
    parser.add_argument("--integration-seconds", type=float, default=None)
    parser.add_argument("--findings", help="also write the failures only with the integration here")
    args = parser.parse_args(argv)

    def seconds(value):
        return "" if value is None else f"  ({value:.0f} s)"

    stock = read_report(args.stock)
    print(f"zarr-python {args.version}: its own tests")
    print(f"  stock:            {summary(stock)}{seconds(args.stock_seconds)}")
    integration = None
    if args.integration:
        integration = read_report(args.integration)
        print(f"  with fixedutf32:  {summary(integration)}{seconds(args.integration_seconds)}")

    own = sorted((test_id, *result) for test_id, result in stock.items() if is_failure(result[0]))
    print()
    print(f"zarr's own failures (fail stock): {len(own) or 'none'}")
    for test_id, outcome, message, _ in own:
        first = message.splitlines()[0] if message.strip() else ""
        print(f"  {test_id}  [{outcome}] {first}")
    if integration is None:
        return 0

    found = regressions(stock, integration)
    print()
    print(f"failing only with the integration: {len(found) or 'none'}")
    text = "\n\n".join(format_failure(*item) for item in found)
    if found:
        print(text)
    if args.findings:
        header = (f"zarr-python {args.version}: tests that fail with fixedutf32.zarr "
                  f"(ZARR_CODEC_PIPELINE__PATH, ZARR_CODECS__BYTES) and pass stock: {len(found)}\n"
                  f"stock:           {summary(stock)}\nwith fixedutf32: {summary(integration)}\n\n")
        with open(args.findings, "w", encoding="utf-8") as file:
            file.write(header + text + ("\n" if text else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

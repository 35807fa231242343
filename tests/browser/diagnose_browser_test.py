#!/usr/bin/env python3
"""`gpuscope diagnose --html` in real headless Chromium (CTest label `browser`).

The diagnosis of an H100 trace (tests/fixtures/diagnose/h100_sync_every_step) as HTML: no
console error, no network request, the findings section first, and every evidence chart drawn
(per-step breakdown, idle time by gap length, the first steps' timeline). Reuses the DevTools
driver of report_browser_test.py.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_browser_test import CHECK_CHARTS, DevTools  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpuscope", required=True)
    parser.add_argument("--chromium", default="")
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    chromium = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or not os.path.exists(chromium):
        print("FAIL: Chromium not found: scripts/setup-deps.sh installs Debian's `chromium`")
        return 1
    os.makedirs(args.out, exist_ok=True)
    page = os.path.join(args.out, "diagnose.html")
    trace = os.path.join(args.fixtures, "diagnose", "h100_sync_every_step")
    rendered = subprocess.run([args.gpuscope, "diagnose", "--html", page, trace],
                              capture_output=True, text=True)
    if rendered.returncode != 0:
        print("FAIL: gpuscope diagnose exited %d: %s" % (rendered.returncode, rendered.stderr))
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="gpuscope-chromium-") as profile:
        chrome = DevTools(chromium, profile, 1440, 900)
        try:
            chrome.open_page(1440, 900)
            chrome.navigate("file://" + os.path.abspath(page))
            deadline = time.monotonic() + 60
            state = chrome.evaluate(CHECK_CHARTS)
            while state["drawnFlag"] is None and time.monotonic() < deadline:
                chrome.drain(0.25)
                state = chrome.evaluate(CHECK_CHARTS)
            chrome.drain(1.0)
            failures += chrome.problems()
            if state["drawnFlag"] is None:
                failures.append("the page never reported its charts drawn")
            if len(state["charts"]) != 3:
                failures.append("expected 3 charts, found %d" % len(state["charts"]))
            for c in state["charts"]:
                if c["svgs"] < 1 or c["traces"] < 1 or c["drawnData"] != c["data"] or c["marks"] < 1:
                    failures.append("chart %s not drawn: %s" % (c["id"], c))
            sections = [s for s in state["sections"] if s != "summary"]
            if not sections or sections[0] not in ("findings", "s-diagnose"):
                failures.append("the findings do not come first: %s" % state["sections"])
            chrome.screenshot(os.path.join(args.out, "diagnose.png"), clip_height=1800)
        finally:
            chrome.close()
    print("sections: %s; charts: %s" % (state["sections"], [c["id"] for c in state["charts"]]))
    if failures:
        print("FAIL:")
        for f in failures:
            print("  " + f)
        return 1
    print("PASS: no console error, no network request, findings first, every chart drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gpuscope diagnose --html` in real headless Chromium (CTest label `browser`).

The diagnosis of an H100 trace (tests/fixtures/diagnose/h100_sync_every_step) as HTML: no
console error, no network request, the findings section first, and every evidence chart drawn
(per-step breakdown, idle time by gap length, the first steps' timeline). Reuses the DevTools
driver of report_browser_test.py.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_browser_test import (DevTools, load_charts, parse_args, rendered,  # noqa: E402
                                 verdict)


def main():
    args, chromium = parse_args(__doc__.splitlines()[0])
    if chromium is None:
        return 1
    page = os.path.join(args.out, "diagnose.html")
    trace = os.path.join(args.fixtures, "diagnose", "h100_sync_every_step")
    if not rendered([args.gpuscope, "diagnose", "--html", page, trace]):
        return 1
    with tempfile.TemporaryDirectory(prefix="gpuscope-chromium-") as profile:
        chrome = DevTools(chromium, profile, 1440, 900)
        try:
            chrome.open_page(1440, 900)
            state, failures = load_charts(chrome, page)
            if len(state["charts"]) != 3:
                failures.append("expected 3 charts, found %d" % len(state["charts"]))
            sections = [s for s in state["sections"] if s != "summary"]
            if not sections or sections[0] not in ("findings", "s-diagnose"):
                failures.append("the findings do not come first: %s" % state["sections"])
            chrome.screenshot(os.path.join(args.out, "diagnose.png"), clip_height=1800)
        finally:
            chrome.close()
    print("sections: %s; charts: %s" % (state["sections"], [c["id"] for c in state["charts"]]))
    return verdict(failures,
                   "no console error, no network request, findings first, every chart drawn")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gpuscope report` in real headless Chromium, end to end (CTest label `browser`).

Renders a report from the fixtures (the H100 recordings and the hand-made telemetry, bench and
sweep runs), loads it in headless Chromium and fails on any console error, uncaught exception or
failed load, and on any request that is not file:, data:, blob: or about: (the page must work
offline). Then checks that plotly drew every chart (its .main-svg and data traces are in the
DOM) and saves screenshots next to the report in --out: report.png (the top of the page) and
report_full.png (all of it).

Chromium is driven through the DevTools protocol over --remote-debugging-pipe (JSON messages
ending in NUL on file descriptors 3 and 4): Python's standard library only. Three controls run
first, so that the checks are known to work: a page that fetches from the network, one whose
policy refuses that fetch, and one that logs a console error must all be caught. Each chart is
also hovered, so the code that interaction runs is exercised too.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

ALLOWED_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:")


class DevTools:
    """One Chromium process and one page, spoken to over the DevTools pipe."""

    def __init__(self, binary, profile_dir, width, height):
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Chromium insists on fds 3 (commands in) and 4 (replies out): move the pipe ends out of
        # the way first, then dup them into place in the child.
        child_in = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 20)
        child_out = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 20)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def place_fds():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [
            binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--user-data-dir=" + profile_dir, "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update",
            "--disable-default-apps", "--metrics-recording-only", "--mute-audio",
            "--hide-scrollbars", "--force-color-profile=srgb",
            # A laptop with a mouse: headless Chromium has no pointing device, and plotly then
            # shows its toolbar on every chart all the time.
            "--blink-settings=primaryHoverType=2,availableHoverTypes=2,"
            "primaryPointerType=4,availablePointerTypes=4",
            "--window-size=%d,%d" % (width, height), "about:blank",
        ]
        self.log = open(os.path.join(profile_dir, "chromium.log"), "wb")
        self.proc = subprocess.Popen(args, preexec_fn=place_fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(child_in)
        os.close(child_out)
        self.write_fd = to_chrome_w
        self.read_fd = from_chrome_r
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.read_fd], [], [], left)
            if ready:
                chunk = os.read(self.read_fd, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe (see chromium.log)")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, timeout=30, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s failed: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def drain(self, seconds):
        """Collects the events that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def open_page(self, width, height):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def navigate(self, url, timeout=60):
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", timeout)

    def evaluate(self, expression, timeout=30):
        result = self.call("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           timeout=timeout)
        if "exceptionDetails" in result:
            raise RuntimeError("page script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def problems(self):
        """Console errors, exceptions, failed loads and requests off this machine, as text."""
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                args = [a.get("value", a.get("description", "")) for a in params.get("args", [])]
                found.append("console.%s: %s" % (params["type"], " ".join(map(str, args))))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append("uncaught exception: %s" % details.get("exception", {}).get(
                    "description", details.get("text")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append("browser log error: %s (%s)" % (params["entry"].get("text"),
                                                             params["entry"].get("url", "")))
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith(ALLOWED_SCHEMES):
                    found.append("network request: %s" % url)
            elif method == "Network.loadingFailed" and not params.get("canceled"):
                found.append("failed load: %s" % params.get("errorText"))
        return found

    def screenshot(self, path, clip_height=None):
        params = {"format": "png", "captureBeyondViewport": True}
        if clip_height is not None:
            params["clip"] = {"x": 0, "y": 0, "width": 1440, "height": clip_height, "scale": 1}
        else:
            metrics = self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"],
                              "height": min(size["height"], 16000), "scale": 1}
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# Per chart: plotly's SVG exists, and it holds as many drawn traces as the figure has data.
CHECK_CHARTS = r"""
(() => {
  const figures = JSON.parse(document.getElementById("gpuscope-figures").textContent);
  const charts = Object.keys(figures).map((id) => {
    const div = document.getElementById(id);
    const svgs = div ? div.querySelectorAll(".main-svg").length : 0;
    const traces = div ? div.querySelectorAll(".cartesianlayer g.trace").length : 0;
    // Drawn marks: bars (g.point), markers (path.point) and lines (path.js-line).
    const marks = div ? div.querySelectorAll(".cartesianlayer g.trace g.point, " +
                                             ".cartesianlayer g.trace path.point, " +
                                             ".cartesianlayer g.trace path.js-line").length : 0;
    const drawnData = div && div.data ? div.data.length : 0;
    const box = div ? div.getBoundingClientRect() : {width: 0, height: 0};
    return {id, svgs, traces, marks, data: figures[id].data.length, drawnData,
            width: box.width, height: box.height};
  });
  return {
    drawnFlag: document.body.getAttribute("data-charts-drawn"),
    cards: document.querySelectorAll(".card").length,
    sections: Array.from(document.querySelectorAll("main > section")).map((s) => s.id),
    tables: document.querySelectorAll("table.data").length,
    charts,
  };
})()
"""


def parse_args(description):
    """The options of both browser tests, and the Chromium to run: None, said with a FAIL line,
    where there is none. Makes the --out folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--gpuscope", required=True)
    parser.add_argument("--chromium", default="")
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    chromium = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or not os.path.exists(chromium):
        print("FAIL: Chromium not found: scripts/setup-deps.sh installs Debian's `chromium`")
        return args, None
    os.makedirs(args.out, exist_ok=True)
    return args, chromium


def rendered(command):
    """Runs `command`, gpuscope writing a page; False, said with a FAIL line, where it fails."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print("FAIL: gpuscope %s exited %d: %s" % (command[1], done.returncode, done.stderr))
        return False
    return True


def load_charts(chrome, page):
    """Opens `page` and waits up to 60 s for it to report its charts drawn. Returns its
    CHECK_CHARTS state and what failed: console errors, requests, charts not drawn."""
    chrome.navigate("file://" + os.path.abspath(page))
    deadline = time.monotonic() + 60
    state = chrome.evaluate(CHECK_CHARTS)
    while state["drawnFlag"] is None and time.monotonic() < deadline:
        chrome.drain(0.25)
        state = chrome.evaluate(CHECK_CHARTS)
    chrome.drain(1.0)  # late console messages
    failures = list(chrome.problems())
    if state["drawnFlag"] is None:
        failures.append("the page never reported its charts drawn")
    for c in state["charts"]:
        if c["svgs"] < 1 or c["traces"] < 1 or c["drawnData"] != c["data"] or c["marks"] < 1:
            failures.append("chart %s not drawn: %s" % (c["id"], c))
    return state, failures


def verdict(failures, passed):
    """Prints the failures, or PASS and what `passed` says; the exit code."""
    if failures:
        print("FAIL:")
        for f in failures:
            print("  " + f)
        return 1
    print("PASS: " + passed)
    return 0


def hover_every_chart(chrome, chart_ids):
    """Moves the mouse over the middle of each chart's plot area and returns the ids of those
    that showed no hover label (hover runs code that loading does not)."""
    silent = []
    for chart_id in chart_ids:
        box = chrome.evaluate("""(() => {
          const div = document.getElementById(%s);
          div.scrollIntoView({block: "center"});
          const plot = div.querySelector(".cartesianlayer .plot") || div;
          const r = plot.getBoundingClientRect();
          return {x: r.left + r.width * 0.55, y: r.top + r.height * 0.5};
        })()""" % json.dumps(chart_id))
        for dx in (0, 7, 15):
            chrome.call("Input.dispatchMouseEvent",
                        {"type": "mouseMoved", "x": box["x"] + dx, "y": box["y"]})
        chrome.drain(0.15)
        shown = chrome.evaluate(
            "document.getElementById(%s).querySelectorAll('.hoverlayer > *').length" %
            json.dumps(chart_id))
        if not shown:
            silent.append(chart_id)
    return silent


def control_problems(chrome, work, name, html, seconds):
    """The problems seen on a control page of `html`, written to `name` in `work`."""
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(html)
    chrome.events.clear()
    chrome.navigate("file://" + path)
    chrome.drain(seconds)
    return chrome.problems()


def run_controls(chrome, work):
    """The checks must be able to fail: a page that reaches for the network, one whose policy
    refuses such a fetch, and one that logs an error are all caught."""
    problems = control_problems(chrome, work, "control_network.html",
                                '<!DOCTYPE html><img src="http://gpuscope-test.invalid/x.png">', 1.0)
    if not any(p.startswith("network request: http://gpuscope-test.invalid") for p in problems):
        raise AssertionError("control failed: a network request went unnoticed: %s" % problems)
    # The report's own Content-Security-Policy blocks a fetch before it becomes a request; the
    # refusal must still be caught.
    if not control_problems(chrome, work, "control_csp.html",
                            '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" '
                            'content="default-src \'none\'; img-src data:">'
                            '<img src="http://gpuscope-test.invalid/y.png">', 1.0):
        raise AssertionError("control failed: a fetch refused by the page's policy went unnoticed")
    problems = control_problems(chrome, work, "control_error.html",
                                '<!DOCTYPE html><script>console.error("control error")</script>',
                                0.5)
    if not any("control error" in p for p in problems):
        raise AssertionError("control failed: a console error went unnoticed")
    chrome.events.clear()


def main():
    args, chromium = parse_args(__doc__.splitlines()[0])
    if chromium is None:
        return 1
    report = os.path.join(args.out, "report.html")
    inputs = [
        os.path.join(args.fixtures, "report", "h100_burn_worker_2026-11-22.jsonl"),
        os.path.join(args.fixtures, "info", "h100_recorded_2026-11-22.json"),
        os.path.join(args.fixtures, "report", "h100_monitor_2026-11-22.jsonl"),
        os.path.join(args.fixtures, "report", "telemetry_handmade.records.json"),
        os.path.join(args.fixtures, "report", "bench_handmade.records.json"),
        os.path.join(args.fixtures, "report", "sweep_rtx3090_handmade.records.json"),
    ]
    if not rendered([args.gpuscope, "report", *inputs, "-o", report,
                     "--title", "gpuscope report: H100 80GB HBM3 (fixtures)"]):
        return 1

    with tempfile.TemporaryDirectory(prefix="gpuscope-chromium-") as profile:
        chrome = DevTools(chromium, profile, 1440, 900)
        try:
            chrome.open_page(1440, 900)
            run_controls(chrome, profile)
            state, failures = load_charts(chrome, report)
            if not state["charts"]:
                failures.append("the report has no charts")
            for c in state["charts"]:
                if c["width"] < 200 or c["height"] < 200:
                    failures.append("chart %s is too small: %s" % (c["id"], c))
            for section in ("summary", "s-burn", "s-telemetry", "s-bench", "s-sweep"):
                if section not in state["sections"]:
                    failures.append("section %s missing (have %s)" % (section, state["sections"]))
            if state["cards"] < 4:
                failures.append("only %d summary cards" % state["cards"])
            silent = hover_every_chart(chrome, [c["id"] for c in state["charts"]])
            print("hover labels shown on %d of %d charts" %
                  (len(state["charts"]) - len(silent), len(state["charts"])))
            if len(silent) > len(state["charts"]) // 2:
                failures.append("hovering showed no label on %s" % silent)
            failures += [p for p in chrome.problems() if p not in failures]
            chrome.evaluate("window.scrollTo(0, 0)")
            chrome.screenshot(os.path.join(args.out, "report.png"), clip_height=1800)
            chrome.screenshot(os.path.join(args.out, "report_full.png"))
        finally:
            chrome.close()

    print("report: %s" % report)
    print("charts drawn: %d; sections: %s; tables: %d" %
          (len(state["charts"]), ", ".join(state["sections"]), state["tables"]))
    for c in state["charts"]:
        print("  %-40s traces %2d  marks %4d  %dx%d" % (c["id"], c["traces"], c["marks"],
                                                        c["width"], c["height"]))
    print("screenshots: %s, %s" % (os.path.join(args.out, "report.png"),
                                   os.path.join(args.out, "report_full.png")))
    return verdict(failures, "no console error, no network request, every chart drawn")


if __name__ == "__main__":
    sys.exit(main())

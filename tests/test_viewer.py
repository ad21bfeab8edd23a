#!/usr/bin/env python3
"""The replay viewer page in a real browser (docs/viewer.md).

Usage: test_viewer.py BRAINLESSLAB [CHROMIUM]

Generates the development replays with `brainlesslab replays DEST`, opens
DEST/index.html from disk (file://) in headless Chromium and reads back what
the page reports in the data attributes of #test-report (the page's test
hooks, web/viewer.js): the eight cases listed; every case chosen through
the hash, played to its end tick by tick with the canvases drawn (not
blank) and no page errors; one case opened through the file-picker path;
and, in one run without virtual time (whose clock stands still while a
script runs), the time to draw a frame of the longest replays, which is
printed, never asserted.

Chromium absent is a failure (scripts/install-deps installs it), unless
BL_SKIP_BROWSER_TESTS is set to a reason: then the test reports itself
skipped with it (exit 77, ctest's SKIP_RETURN_CODE).
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
# Generous: two loaded cores, a cold browser start. No wall-clock assertion.
BROWSER_TIMEOUT_S = 300


class Report(html.parser.HTMLParser):
    """The attributes of <output id="test-report"> and the #cases buttons."""

    def __init__(self):
        super().__init__()
        self.report = None
        self.buttons = []
        self._in_cases = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "output" and a.get("id") == "test-report":
            self.report = {k[5:]: v for k, v in a.items() if k.startswith("data-")}
        if tag == "ul" and a.get("id") == "cases":
            self._in_cases = True
        if tag == "button" and self._in_cases:
            self.buttons.append(a.get("data-id"))

    def handle_endtag(self, tag):
        if tag == "ul":
            self._in_cases = False


def chromium_args(chromium, virtual_time=True):
    args = [chromium, "--headless", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--hide-scrollbars"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root otherwise (CI)
    if virtual_time:
        args.append("--virtual-time-budget=60000")
    return args


def page(chromium, url, profile, virtual_time=True):
    """The DOM of url once loaded (and, with virtual time, once idle)."""
    cmd = chromium_args(chromium, virtual_time) + [
        "--user-data-dir=" + profile, "--dump-dom", url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S,
                       check=False)
    if r.returncode != 0:
        sys.exit("chromium failed (exit %d) on %s:\n%s" % (r.returncode, url, r.stderr[-2000:]))
    parser = Report()
    parser.feed(r.stdout)
    if parser.report is None:
        sys.exit("no #test-report in the page at %s; DOM:\n%s" % (url, r.stdout[:2000]))
    return parser


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def no_errors(report, what):
    check(report.get("error-count", "0") == "0",
          "%s: page errors: %s" % (what, report.get("errors")))


def played(report, frames, what):
    """A replay chosen and played from its first tick to its last."""
    no_errors(report, what)
    check(report.get("status") == "done", "%s: playback did not finish: %r" % (what, report))
    check(report.get("frames") == str(frames), "%s: %s frames, the document has %d"
          % (what, report.get("frames"), frames))
    check(report.get("frames-drawn") == str(frames), "%s: drew %s frames of %d"
          % (what, report.get("frames-drawn"), frames))
    check(report.get("first-tick") == "1" and report.get("last-tick") == str(frames)
          and report.get("distinct-ticks") == str(frames) and report.get("monotonic") == "true",
          "%s: ticks did not advance 1..%d: %r" % (what, frames, report))
    check(report.get("tick-text") == "tick %d / %d" % (frames, frames),
          "%s: tick counter reads %r" % (what, report.get("tick-text")))
    # Not blank: a fair part of each canvas is drawn on.
    check(int(report.get("world-ink", "0")) > 2000, "%s: world canvas blank: %r" % (what, report))
    check(int(report.get("net-ink", "0")) > 2000, "%s: network canvas blank: %r" % (what, report))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    binary = sys.argv[1]
    chromium = sys.argv[2] if len(sys.argv) == 3 else (shutil.which("chromium") or "")
    reason = os.environ.get("BL_SKIP_BROWSER_TESTS", "")
    if reason:
        print("SKIPPED: BL_SKIP_BROWSER_TESTS=%s" % reason)
        return SKIP
    if not chromium or not os.access(chromium, os.X_OK):
        sys.exit("chromium not found (scripts/install-deps installs it; set "
                 "BL_SKIP_BROWSER_TESTS=<reason> to skip this test)")

    with tempfile.TemporaryDirectory(prefix="bl-viewer-") as tmp:
        dest = os.path.join(tmp, "replays")
        r = subprocess.run([binary, "replays", dest], capture_output=True, text=True, check=False)
        check(r.returncode == 0, "replays failed: %s" % r.stderr)
        with open(os.path.join(dest, "index.json"), encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        ids = [c["id"] for c in cases]
        check(len(ids) == 8, "index.json lists %d cases" % len(ids))
        frames = {}
        for c in ids:
            with open(os.path.join(dest, c + ".json"), encoding="utf-8") as f:
                frames[c] = len(json.load(f)["frames"])
        base = "file://" + os.path.abspath(os.path.join(dest, "index.html"))
        profile = os.path.join(tmp, "profile")

        # The list of cases, as the index has them, with nothing chosen.
        p = page(chromium, base + "#test", profile)
        no_errors(p.report, "index page")
        check(p.buttons == ids, "the page lists %r, index.json %r" % (p.buttons, ids))
        check(p.report.get("cases") == "8", "data-cases = %r" % p.report.get("cases"))

        # Every case chosen from the index and played to its end.
        checksums = {}
        for c in ids:
            p = page(chromium, base + "#replay=%s&autoplay&test" % c, profile)
            played(p.report, frames[c], c)
            check(p.report.get("replay") == c, "%s: showed %r" % (c, p.report.get("replay")))
            check(c.split("-")[0] in p.report.get("trial-text", "").lower(),
                  "%s: trial identity missing: %r" % (c, p.report.get("trial-text")))
            checksums[c] = p.report["world-checksum"]
            print("ok %s: %s frames, world ink %s px, network ink %s px"
                  % (c, frames[c], p.report["world-ink"], p.report["net-ink"]))
        # Different worlds look different.
        check(len(set(checksums.values())) == len(ids), "world canvases repeat: %r" % checksums)

        # A document opened through the file-picker path (File + FileReader).
        c = "falandays-delayed-cue"
        p = page(chromium, base + "#replay=%s&autoplay&test&viafile" % c, profile)
        played(p.report, frames[c], c + " via file")
        check(p.report.get("replay") == c + ".json", "via file: showed %r" % p.report.get("replay"))
        check(p.report.get("world-checksum") == checksums[c],
              "via file: the last frame differs from the case's: %r" % p.report)
        print("ok %s through the file-picker path" % c)

        # The keyboard shortcuts and the slider (Space toggles playback;
        # the second press pauses before a tick passes under virtual time).
        c = "sorn-tracking"
        p = page(chromium, base + "#replay=%s&test&keys" % c, profile)
        no_errors(p.report, c + " keys")
        n = frames[c]
        want = ("End=%d Home=1 ArrowRight=2 ArrowRight=3 ArrowRight=4 ArrowLeft=3 "
                "Space=3+playing Space=3 scrub=10 +=10 +=10 -=10" % n)
        check(p.report.get("keys") == want,
              "keys: %r, expected %r" % (p.report.get("keys"), want))
        check(p.report.get("speeds") == "30 60 120 60", "speeds: %r" % p.report.get("speeds"))
        print("ok keyboard shortcuts and slider")

        # Draw times of the longest replays, in real time (reported only).
        longest = max(frames.values())
        for c in [c for c in ids if frames[c] == longest]:
            p = page(chromium, base + "#replay=%s&autoplay&test&sync" % c, profile,
                     virtual_time=False)
            played(p.report, frames[c], c + " (timed)")
            print("draw time %s (%d frames): median %s ms, worst %s ms (%s ms after the first)"
                  % (c, frames[c], p.report["draw-median-ms"], p.report["draw-worst-ms"],
                     p.report["draw-worst-warm-ms"]))
    print("viewer: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

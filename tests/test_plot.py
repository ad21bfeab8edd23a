#!/usr/bin/python3
"""`brainlesslab plot` on real records (docs/figures.md).

    /usr/bin/python3 tests/test_plot.py PATH/TO/brainlesslab

ctest passes the built program. The test makes four records with small
plans in a fresh temporary root: a two-target plan with a paired contrast,
calibrated with `--calibration` by a calibration record it also makes; a
sweep plan written by `brainlesslab sweep`; and tests/plans/decode-small.toml
recorded with probe events and decoded with `decode --out`. Every figure must
be well-formed XML with axes, axis labels, a legend and the expected data
marks, whose data-* values must equal the record's own numbers; every SVG is
rendered once by headless Chromium, which must produce a PNG that is not
blank. Without Chromium the test fails, unless BL_SKIP_BROWSER_TESTS names a
reason to skip that part (the viewer test's switch). Bad input must give one error line, the spec's exit code and
leave nothing behind.
"""
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = None  # from argv[1]
SVG = "{http://www.w3.org/2000/svg}"
POINTS = ("cue_end", "delay_end", "response")

TWO = """format = "brainlesslab-plan"
format_version = 4
id = "two"
operation = "profile"
evidence = "exploratory"

[evaluation]
blocks = 3
trials_per_block = 2
horizon = 2000
root_seed = 5

[[targets]]
id = "res"
pairing_key = "p"
[targets.composition]
count = 8
[targets.composition.node]
kind = "falandays"
[targets.composition.task]
kind = "tracking"

[[targets]]
id = "null & <co>"
pairing_key = "p"
controller = "reference_null"
[targets.composition]
count = 8
[targets.composition.node]
kind = "falandays"
[targets.composition.task]
kind = "tracking"
"""

BASE = """format = "brainlesslab-plan"
format_version = 4
id = "base"
operation = "profile"
evidence = "exploratory"

[evaluation]
blocks = 2
trials_per_block = 4
root_seed = 3

[[targets]]
id = "baseline"
[targets.composition]
count = 8
[targets.composition.node]
kind = "falandays"
[targets.composition.task]
kind = "{task}"
"""


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def run(*args, check=True):
    p = subprocess.run([BINARY, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("brainlesslab %s: exit %d\n%s" % (" ".join(args), p.returncode,
                                                               p.stderr))
    return p


def record_of(stdout):
    return json.loads(stdout.splitlines()[0])["record"]


def num(text):
    return float(text)


def png_dark_pixels(path):
    """Pixels darker than mid grey in an 8-bit RGB(A) PNG (zlib only)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG pixel format"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    dark = 0
    for row in range(height):
        filt = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if filt == 1:
                line[i] = (line[i] + a) & 255
            elif filt == 2:
                line[i] = (line[i] + b) & 255
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        for i in range(0, stride, bpp):
            if line[i] + line[i + 1] + line[i + 2] < 3 * 128:
                dark += 1
        prev = line
    return dark


class Plot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="bl-plot-")
        root = os.path.join(cls.tmp, "records")
        def w(name, text):
            with open(os.path.join(cls.tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        w("two.toml", TWO)
        w("cue.toml", BASE.format(task="delayed_cue"))
        w("track.toml", BASE.format(task="tracking").replace('id = "base"', 'id = "tbase"'))
        t = lambda n: os.path.join(cls.tmp, n)
        run("calibrate", t("track.toml"), "--out", t("cal.toml"))
        cls.calibration = record_of(run("run", t("cal.toml"), "--root", root).stdout)
        cls.two = record_of(run("run", t("two.toml"), "--root", root, "--calibration",
                                cls.calibration).stdout)
        run("sweep", t("cue.toml"), "--axis", "leak=0.1,0.25,0.5", "--axis",
            'weight_init_mode="excitatory","pong_mixed"', "--out", t("sweep.toml"))
        cls.sweep = record_of(run("run", t("sweep.toml"), "--root", root).stdout)
        plan = os.path.join(HERE, "plans", "decode-small.toml")
        cls.probe = record_of(run("run", plan, "--root", root, "--recording",
                                  "probe_events").stdout)
        cls.decoded = t("decoded.json")
        splits = ("--fit", "32", "--validation", "16", "--evaluation", "16")
        run("decode", cls.probe, *splits, "--out", cls.decoded)
        # The same plan with another root seed: a record whose decoding is
        # not the first one's.
        w("other.toml", read(plan).replace("root_seed = 31337", "root_seed = 4242"))
        other = record_of(run("run", t("other.toml"), "--root", root, "--recording",
                              "probe_events").stdout)
        cls.other_decoded = t("other-decoded.json")
        run("decode", other, *splits, "--out", cls.other_decoded)
        cls.figures = {}
        for name in ("two", "sweep", "probe"):
            out = t("fig-" + name)
            args = ["plot", getattr(cls, name), "--out", out]
            if name == "probe":
                args += ["--decoded", cls.decoded]
            p = run(*args)
            printed = json.loads(p.stdout)
            index = json.loads(read(os.path.join(out, "figures.json")))
            assert printed["figures"] == [f["file"] for f in index["figures"]]
            cls.figures[name] = (out, index)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    # ---- helpers ----------------------------------------------------------

    def summary(self, record):
        return json.loads(read(os.path.join(record, "summary", "summary.json")))

    def svg(self, name, file):
        out, index = self.figures[name]
        entry = [f for f in index["figures"] if f["file"] == file]
        self.assertEqual(len(entry), 1, "%s lists %s once" % (name, file))
        root = ET.parse(os.path.join(out, file)).getroot()
        marks = [g for g in root.iter(SVG + "g") if "mark" in g.get("class", "").split()]
        self.assertEqual(len(marks), entry[0]["marks"])
        return root, marks

    def of_class(self, marks, cls, category=None):
        return [m for m in marks if cls in m.get("class").split() and
                (category is None or m.get("data-category") == category)]

    # ---- every figure -----------------------------------------------------

    def test_every_figure_has_axes_labels_and_legend(self):
        for name, (out, index) in self.figures.items():
            self.assertEqual(index["format"], "brainlesslab-figures")
            files = sorted(os.listdir(out))
            self.assertEqual(files, sorted([f["file"] for f in index["figures"]] +
                                           ["figures.json"]))
            for f in index["figures"]:
                root = ET.parse(os.path.join(out, f["file"])).getroot()
                self.assertEqual(root.tag, SVG + "svg")
                self.assertEqual(root.find(SVG + "title").text, f["title"])
                groups = {g.get("class"): g for g in root.iter(SVG + "g")}
                # A categorical x axis may hold one category; values need two ticks.
                for axis, least in (("axis y-axis", 2), ("axis x-axis", 1)):
                    ticks = [t.text for t in groups[axis].iter(SVG + "text")]
                    self.assertGreaterEqual(len(ticks), least, "%s: %s" % (f["file"], axis))
                labels = {t.get("class"): t.text for t in root.iter(SVG + "text")
                          if "axis-label" in (t.get("class") or "")}
                self.assertIn("(", labels["axis-label y-label"])  # the unit
                self.assertTrue(labels["axis-label x-label"])
                legend = [g for g in root.iter(SVG + "g") if g.get("class") == "legend-entry"]
                self.assertGreaterEqual(len(legend), 2)
                self.assertGreater(f["marks"], 0)

    def test_outcomes_agree_with_summaries(self):
        summary = self.summary(self.two)
        root, marks = self.svg("two", "outcomes-track_score.svg")
        self.assertEqual(len(self.of_class(marks, "interval")), len(summary["summaries"]))
        for s in summary["summaries"]:
            t = s["target_id"]
            (estimate,) = self.of_class(marks, "estimate", t)
            self.assertEqual(num(estimate.get("data-value")), s["outcome"]["raw"])
            (interval,) = self.of_class(marks, "interval", t)
            self.assertEqual([num(interval.get("data-low")), num(interval.get("data-high"))],
                             s["raw_interval"])
            blocks = [num(m.get("data-value")) for m in self.of_class(marks, "block-mean", t)]
            self.assertEqual(len(blocks), s["independent_blocks"])
            self.assertAlmostEqual(sum(blocks) / len(blocks), s["outcome"]["raw"], places=12)
            # Calibrated with --calibration: the null band is the record's.
            (band,) = self.of_class(marks, "null-band", t)
            adj = s["adjusted"]
            self.assertEqual([num(band.get("data-low")), num(band.get("data-high"))],
                             adj["null_interval"])
            self.assertEqual(num(band.get("data-mean")), adj["null_mean"])
            self.assertLess(adj["null_interval"][0], adj["null_interval"][1])
        # Text from the plan is escaped, never markup.
        ticks = [t.text for t in root.iter(SVG + "text")]
        self.assertIn("null & <co>", ticks)

    def test_contrasts_agree_with_summary(self):
        summary = self.summary(self.two)
        (k,) = summary["contrasts"]
        _, marks = self.svg("two", "contrasts-track_score.svg")
        (estimate,) = self.of_class(marks, "estimate")
        self.assertEqual(num(estimate.get("data-value")), k["estimate"])
        (interval,) = self.of_class(marks, "interval")
        self.assertEqual([num(interval.get("data-low")), num(interval.get("data-high"))],
                         k["interval"])
        diffs = [num(m.get("data-value")) for m in self.of_class(marks, "block-difference")]
        self.assertEqual(diffs, k["block_differences"])

    def test_sweep_outcome_against_swept_value(self):
        summary = self.summary(self.sweep)
        plan = read(os.path.join(self.sweep, "request.toml"))
        _, marks = self.svg("sweep", "sweep-recall_accuracy.svg")
        estimates = self.of_class(marks, "estimate")
        self.assertEqual(len(estimates), 6)
        self.assertEqual(len(self.of_class(marks, "interval")), 6)
        series = {m.get("data-series") for m in estimates}
        self.assertEqual(series, {'weight_init_mode="excitatory"',
                                  'weight_init_mode="pong_mixed"'})
        for s in summary["summaries"]:
            (m,) = [m for m in estimates if m.get("data-category") == s["target_id"]]
            self.assertEqual(num(m.get("data-value")), s["outcome"]["raw"])
            # The swept value is the target's leak in the plan.
            block = plan[plan.index('id = "%s"' % s["target_id"]):]
            leak = block[block.index("leak = ") + 7:].split("\n")[0]
            self.assertEqual(num(m.get("data-x")), float(leak))

    def test_probe_accuracies_per_point(self):
        _, marks = self.svg("probe", "probe-1.svg")
        with open(os.path.join(self.probe, "data", "probe_trials.csv"), newline="") as f:
            trials = {(r["block_id"], r["trial_id"]): float(r["native_score"])
                      for r in csv.DictReader(f)}
        with open(os.path.join(self.probe, "data", "probe_events.csv"), newline="") as f:
            events = list(csv.DictReader(f))
        decoded = json.loads(read(self.decoded))
        for point in POINTS:
            scores = [trials[(e["block_id"], e["trial_id"])] for e in events
                      if e["point"] == point]
            (native,) = self.of_class(marks, "native", point)
            self.assertAlmostEqual(num(native.get("data-value")), sum(scores) / len(scores),
                                   places=12)
            for cls, field in (("decoder", "accuracy"), ("permutation", "permutation_accuracy"),
                               ("constant", "constant_accuracy")):
                values = [d[field] for d in decoded if d["point"] == point]
                self.assertEqual(len(values), 2)  # two blocks
                (m,) = self.of_class(marks, cls, point)
                self.assertAlmostEqual(num(m.get("data-value")), sum(values) / 2, places=12)
        # Without --decoded only the record's own accuracy is drawn.
        out = os.path.join(self.tmp, "probe-alone")
        run("plot", self.probe, "--out", out)
        root = ET.parse(os.path.join(out, "probe-1.svg")).getroot()
        classes = {g.get("class") for g in root.iter(SVG + "g")}
        self.assertIn("mark native", classes)
        self.assertNotIn("mark decoder", classes)

    def test_chromium_renders_every_svg(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            reason = os.environ.get("BL_SKIP_BROWSER_TESTS", "")
            if reason:
                self.skipTest("chromium absent and BL_SKIP_BROWSER_TESTS=%s" % reason)
            self.fail("chromium is not installed (scripts/install-deps; "
                      "BL_SKIP_BROWSER_TESTS=<reason> skips this check)")
        shots = os.path.join(self.tmp, "shots")
        os.mkdir(shots)
        for name, (out, index) in self.figures.items():
            for f in index["figures"]:
                png = os.path.join(shots, name + "-" + f["file"] + ".png")
                profile = tempfile.mkdtemp(dir=self.tmp)
                subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                "--user-data-dir=" + profile, "--window-size=760,480",
                                "--screenshot=" + png, "file://" + os.path.join(out, f["file"])],
                               capture_output=True, timeout=120)
                self.assertTrue(os.path.exists(png), "no screenshot of " + f["file"])
                # Axes, text and marks are black on white: a blank page has none.
                self.assertGreater(png_dark_pixels(png), 500, f["file"] + " rendered blank")

    # ---- bad input ----------------------------------------------------------

    def refused(self, args, code, text):
        out = os.path.join(self.tmp, "refused")
        p = run("plot", *args, check=False)
        self.assertEqual(p.returncode, code, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn(text, p.stderr)
        if code == 1:
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertTrue(p.stderr.startswith("brainlesslab: "))
        self.assertFalse(os.path.exists(out), "left behind: " + out)
        return out

    def test_bad_input(self):
        out = os.path.join(self.tmp, "refused")
        missing = os.path.join(self.tmp, "no-such-record")
        self.refused([missing, "--out", out], 1, "ValueError")
        self.refused([self.two], 2, "the following arguments are required: --out")
        # A corrupt copy: one byte of its summary changed.
        bad = os.path.join(self.tmp, "corrupt")
        shutil.copytree(self.two, bad)
        path = os.path.join(bad, "summary", "summary.json")
        data = read(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(data.replace("0", "1", 1))
        self.refused([bad, "--out", out], 1, "plot requires a complete record; this record "
                                              "is incomplete")
        # --out inside the record, directly or by a detour: the record stays complete.
        for inside in (os.path.join(self.two, "figures"),
                       os.path.join(self.two, "x", "..", "y"),
                       os.path.join(os.path.dirname(self.two), "z", "..",
                                    os.path.basename(self.two), "w"),
                       self.two):
            self.refused([self.two, "--out", inside], 1, "--out must be outside the record")
            self.assertFalse(os.path.exists(os.path.join(self.two, "figures")))
        self.assertEqual(run("inspect", self.two).returncode, 0)
        # An existing --out stays untouched.
        os.mkdir(out)
        p = run("plot", self.two, "--out", out, check=False)
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("FileExistsError", p.stderr)
        self.assertEqual(os.listdir(out), [])
        os.rmdir(out)
        # --decoded: not decode's output, another record's, a record without probes.
        self.refused([self.probe, "--decoded", os.path.join(self.two, "summary",
                                                            "summary.json"), "--out", out],
                     1, "not the output of brainlesslab decode")
        broken = os.path.join(self.tmp, "broken.json")
        d = json.loads(read(self.decoded))
        d[0]["accuracy"] = "high"
        with open(broken, "w", encoding="utf-8") as f:
            json.dump(d, f)
        self.refused([self.probe, "--decoded", broken, "--out", out], 1,
                     "not the output of brainlesslab decode")
        self.refused([self.probe, "--decoded", self.other_decoded, "--out", out], 1,
                     "decoded results do not belong to this record")
        self.refused([self.two, "--decoded", self.decoded, "--out", out], 1,
                     "decoded results do not belong to this record")
        self.refused([self.probe, "--decoded", missing, "--out", out], 1, "FileNotFoundError")


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv.pop(1))
    unittest.main()

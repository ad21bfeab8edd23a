/* BrainlessLab replay viewer (docs/viewer.md). Plain browser JavaScript, no
 * dependencies, no build step. The page opens from file://, where a page
 * may not fetch its neighbours but may load neighbouring scripts: each
 * replay document sits beside the page also as "<id>.js", which calls
 * brainlesslabViewer.registerReplay(id, document), and the index as
 * "index.js" (registerIndex). A replay document from anywhere else is
 * opened with the file picker or by dropping it on the page.
 *
 * Test hooks (tests/test_viewer.py): the hash "#replay=<id>&autoplay&test"
 * chooses a case, plays it to its end one tick per timer turn and writes
 * what was seen into the data attributes of #test-report; "&viafile" opens
 * the case's document through the file-picker path instead; "&tick=N"
 * shows tick N (screenshots). Errors of the page (window.onerror,
 * unhandled rejections, console.error) are listed in #errors and counted
 * in the report. */
"use strict";

const brainlesslabViewer = (function () {
  const $ = (id) => document.getElementById(id);
  const errors = [];
  const replays = Object.create(null); /* id -> registered document */
  let index = null;
  let pendingId = null; /* a case whose script is loading */
  let view = null;      /* the prepared replay on show */
  let frame = 0;        /* index into view.frames */
  let playing = false;
  let lastTime = 0, carry = 0;
  const hash = parseHash();
  const test = hash.has("test");
  const drawTimes = [];
  const seenTicks = [];

  /* ---- errors ------------------------------------------------------------ */

  function noteError(message) {
    errors.push(String(message));
    const el = $("errors");
    if (el) {
      el.hidden = false;
      el.textContent = errors.join("\n");
    }
    const report = $("test-report");
    if (report) {
      report.dataset.errorCount = String(errors.length);
      report.dataset.errors = errors.join(" | ");
    }
  }
  window.addEventListener("error", (e) => noteError("error: " + (e.message || e)));
  window.addEventListener("unhandledrejection", (e) => noteError("unhandled rejection: " + e.reason));
  const consoleError = console.error.bind(console);
  console.error = function (...args) {
    noteError("console.error: " + args.join(" "));
    consoleError(...args);
  };

  function parseHash() {
    const map = new Map();
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      if (!part) continue;
      const eq = part.indexOf("=");
      if (eq < 0) map.set(decodeURIComponent(part), "");
      else map.set(decodeURIComponent(part.slice(0, eq)), decodeURIComponent(part.slice(eq + 1)));
    }
    return map;
  }

  /* ---- registration and the case list ------------------------------------ */

  function registerIndex(name, doc) {
    if (!doc || doc.format !== "brainlesslab-replay-index" || !Array.isArray(doc.cases)) {
      noteError(name + ".js: not a brainlesslab-replay-index");
      return;
    }
    index = doc;
  }

  function registerReplay(id, doc) {
    replays[id] = doc;
    if (pendingId === id) {
      pendingId = null;
      show(doc, id);
    }
  }

  function listCases() {
    const list = $("cases");
    list.textContent = "";
    const cases = index ? index.cases : [];
    $("cases-empty").hidden = cases.length > 0;
    cases.forEach((c, i) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = c.label || c.id;
      b.dataset.id = c.id;
      b.title = c.id + (i < 9 ? " (key " + (i + 1) + ")" : "");
      b.addEventListener("click", () => openCase(c.id));
      li.appendChild(b);
      list.appendChild(li);
    });
    const report = $("test-report");
    report.dataset.cases = String(cases.length);
    report.dataset.caseIds = cases.map((c) => c.id).join(" ");
  }

  function markCurrent(id) {
    for (const b of document.querySelectorAll("#cases button"))
      b.setAttribute("aria-current", b.dataset.id === id ? "true" : "false");
  }

  /* A case of the index: its registered document, or its script loaded
   * first. Ids are checked against the index and its character set before
   * they become a script name. */
  function openCase(id) {
    if (!index || !index.cases.some((c) => c.id === id) || !/^[A-Za-z0-9_-]+$/.test(id)) {
      noteError("unknown replay case: " + id);
      return;
    }
    if (replays[id]) {
      show(replays[id], id);
      return;
    }
    pendingId = id;
    const s = document.createElement("script");
    s.src = id + ".js";
    s.onerror = () => noteError("cannot load " + id + ".js (is it beside index.html?)");
    document.body.appendChild(s);
  }

  function openText(text, name) {
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      showProblem(name + ": not JSON (" + e.message + ")");
      return;
    }
    show(doc, name);
  }

  function openFile(file) {
    file.text().then((text) => openText(text, file.name),
                     (e) => showProblem(file.name + ": cannot read (" + e + ")"));
  }

  /* A bad document is the user's mistake, not the page's: it is shown, not
   * counted as a page error. */
  function showProblem(message) {
    const el = $("errors");
    el.hidden = false;
    el.textContent = message;
  }

  /* ---- preparing a replay ------------------------------------------------ */

  const PROBES = ["delayed_cue", "recall_interference", "delayed_xor", "evidence_accumulation",
                  "context_integration", "temporal_order", "reversal_adaptation"];

  function checkDoc(doc) {
    if (!doc || typeof doc !== "object" || doc.format !== "brainlesslab-replay")
      return "not a brainlesslab-replay document";
    if (!Array.isArray(doc.frames) || doc.frames.length === 0)
      return "a replay must contain recorded frames";
    for (const f of doc.frames)
      if (!f || typeof f.tick !== "number" || !Array.isArray(f.activity) ||
          !Array.isArray(f.effectors) || !Array.isArray(f.inputs) || typeof f.world !== "object")
        return "a frame lacks tick, activity, effectors, inputs or world";
    return null;
  }

  /* Values -> a w x h image, one pixel per (tick, row), on a canvas kept
   * off screen and scaled onto the page with drawImage: a frame then costs
   * one blit however many nodes there are. */
  function raster(frames, key, rows, hue) {
    const c = document.createElement("canvas");
    c.width = Math.max(1, frames.length);
    c.height = Math.max(1, rows);
    if (rows === 0) return { canvas: c, max: 0 };
    let max = 0;
    for (const f of frames)
      for (const v of f[key]) max = Math.max(max, Math.abs(v));
    const ctx = c.getContext("2d");
    const img = ctx.createImageData(c.width, c.height);
    const scale = max > 0 ? 1 / max : 0;
    frames.forEach((f, t) => {
      const values = f[key];
      for (let r = 0; r < rows; r++) {
        const v = (values[r] || 0) * scale;
        const a = Math.min(1, Math.abs(v));
        const o = 4 * (r * c.width + t);
        if (v >= 0) {
          img.data[o] = 255 - a * hue[0];
          img.data[o + 1] = 255 - a * hue[1];
          img.data[o + 2] = 255 - a * hue[2];
        } else {
          img.data[o] = 255 - a * 40;
          img.data[o + 1] = 255 - a * 200;
          img.data[o + 2] = 255 - a * 200;
        }
        img.data[o + 3] = 255;
      }
    });
    ctx.putImageData(img, 0, 0);
    return { canvas: c, max };
  }

  function prepare(doc, id) {
    const frames = doc.frames;
    const p = doc.provenance || {};
    const v = {
      id, doc, frames,
      task: doc.task || "",
      options: (p.resolved && p.resolved.task_options) || {},
      trial: p.trial || {},
      nAct: frames[0].activity.length,
      nIn: frames[0].inputs.length,
      nEff: frames[0].effectors.length,
    };
    v.family = v.task === "tracking" ? "tracking" : v.task === "pong" ? "pong"
             : v.task.startsWith("cartpole") ? "cartpole"
             : PROBES.includes(v.task) ? "probe" : "other";
    v.activity = raster(frames, "activity", v.nAct, [230, 170, 80]);
    v.inputs = raster(frames, "inputs", v.nIn, [60, 200, 200]);
    if (v.family === "pong") preparePong(v);
    if (v.family === "tracking") prepareTracking(v);
    if (v.family === "probe") prepareProbe(v);
    return v;
  }

  /* Hits and misses from the ball (tasks.md §3.4): a hit sends the ball
   * back from the paddle plane (x = 115, vx turns positive); a miss
   * re-serves it from the right wall (x = 995) without its having got
   * there by flying. */
  function preparePong(v) {
    v.hits = [];
    v.misses = [];
    let hits = 0, misses = 0, prev = null;
    for (const f of v.frames) {
      const w = f.world;
      if (prev) {
        if (prev.world.vx < 0 && w.vx > 0 && w.ball_x <= 115.5) hits++;
        if (w.ball_x >= 995 && prev.world.ball_x < 500) misses++;
      }
      v.hits.push(hits);
      v.misses.push(misses);
      prev = f;
    }
  }

  function wrapPi(a) {
    const t = (a + Math.PI) % (2 * Math.PI);
    return (t < 0 ? t + 2 * Math.PI : t) - Math.PI;
  }

  function prepareTracking(v) {
    v.error = v.frames.map((f) => wrapPi(f.world.theta - f.world.phi));
  }

  /* The probe's schedule, which the replay does not carry (its world holds
   * only done and round, platform.md §4.12), derived as tasks.md §5 defines
   * it: frame i is tick i's advance and holds the stimulus row S[i]; the
   * "respond now" receptor (the last; receptor 2 in reversal) marks each
   * round's response window; the trial ends (done) at tick L; a round's
   * decision is 2 when the summed e1 over its window exceeds e0's (a tie
   * is 1). delayed_cue: cue [0, cue_ticks), delay up to the response, the
   * cue's label the cue receptor lit during the cue phase. */
  function prepareProbe(v) {
    const fr = v.frames;
    const ind = v.task === "reversal_adaptation" ? 2 : v.nIn - 1;
    const doneAt = fr.findIndex((f) => f.world.done);
    v.length = doneAt >= 0 ? doneAt + 1 : fr.length;
    v.windows = [];
    for (let i = 0; i < v.length; i++) {
      if (!fr[i].inputs[ind]) continue;
      if (i > 0 && fr[i - 1].inputs[ind] && v.windows.length) v.windows[v.windows.length - 1].end = i + 1;
      else v.windows.push({ start: i, end: i + 1 });
    }
    for (const w of v.windows) {
      let e0 = 0, e1 = 0;
      for (let i = w.start; i < w.end; i++) {
        e0 += fr[i].effectors[0] || 0;
        e1 += fr[i].effectors[1] || 0;
      }
      w.decision = e1 > e0 ? 2 : 1;
    }
    const c = Number.isInteger(v.options.cue_ticks) ? v.options.cue_ticks : 0;
    v.cueEnd = Math.min(c, v.length);
    v.label = null;
    if (v.task === "delayed_cue" || v.task === "recall_interference") {
      for (let i = 0; i < v.cueEnd && v.label === null; i++) {
        if (fr[i].inputs[0] > 0) v.label = 1;
        else if (fr[i].inputs[1] > 0) v.label = 2;
      }
    }
    /* A hidden cue (or another family) leaves the label to the outcome:
     * a single-round probe scores 1 exactly when its decision was right. */
    const raw = v.trial.outcome ? v.trial.outcome.raw : null;
    if (v.label === null && v.windows.length === 1 && (raw === 0 || raw === 1))
      v.label = raw === 1 ? v.windows[0].decision : 3 - v.windows[0].decision;
  }

  /* ---- showing a replay -------------------------------------------------- */

  function show(doc, id) {
    const problem = checkDoc(doc);
    if (problem) {
      showProblem(id + ": " + problem);
      return;
    }
    $("errors").hidden = errors.length === 0;
    pause();
    view = prepare(doc, id);
    markCurrent(id);
    describe(view);
    const scrub = $("scrub");
    scrub.max = String(view.frames.length);
    for (const b of ["play", "back", "fwd", "scrub"]) $(b).disabled = false;
    frame = 0;
    /* the case the hash chose, by its id or (through the file path) its file name */
    const chosen = hash.get("replay") === id || hash.get("replay") + ".json" === id;
    const tick = parseInt(hash.get("tick"), 10);
    if (chosen && tick > 0) frame = Math.min(view.frames.length, tick) - 1;
    draw();
    if (chosen && hash.has("keys")) testKeys();
    else if (chosen && hash.has("autoplay")) play();
  }

  function fmt(x, digits) {
    if (x === null || x === undefined) return "none";
    if (typeof x === "number") return Number.isInteger(x) ? String(x) : x.toFixed(digits || 4);
    return String(x);
  }

  function describe(v) {
    const t = v.trial, o = t.outcome || {};
    const caseInfo = index && index.cases.find((c) => c.id === v.id);
    const rows = [
      ["Replay", caseInfo ? caseInfo.label : v.id],
      ["Node", v.doc.node], ["Task", v.task], ["Trial", v.doc.trial_key],
      ["Status", t.status + ", " + fmt(t.completed_ticks) + " ticks"],
      ["Outcome", (o.key || "outcome") + " = " + fmt(o.raw) +
                  (o.normalised !== null && o.normalised !== undefined ? " (normalised " + fmt(o.normalised) + ")" : "")],
      ["World seed", (t.world_seed || "").slice(0, 16)],
      ["Nodes", v.nAct + " nodes, " + v.nIn + " receptors, " + v.nEff + " effectors"],
    ];
    const dl = $("trial");
    dl.textContent = "";
    for (const [k, val] of rows) {
      const dt = document.createElement("dt");
      dt.textContent = k;
      const dd = document.createElement("dd");
      dd.textContent = val === undefined ? "" : String(val);
      dl.append(dt, dd);
    }
  }

  /* ---- playback ---------------------------------------------------------- */

  function setFrame(i) {
    if (!view) return;
    frame = Math.max(0, Math.min(view.frames.length - 1, i));
    draw();
  }

  function play() {
    if (!view) return;
    if (frame >= view.frames.length - 1) frame = 0;
    playing = true;
    $("play").textContent = "Pause";
    lastTime = performance.now();
    carry = 0;
    if (test && hash.has("sync")) while (playing) testStep(false);
    else if (test) setTimeout(testStep, 0);
    else requestAnimationFrame(tickLoop);
  }

  function pause() {
    playing = false;
    $("play").textContent = "Play";
  }

  function tickLoop(now) {
    if (!playing || !view) return;
    carry += (now - lastTime) * Number($("speed").value) / 1000;
    lastTime = now;
    const steps = Math.floor(carry);
    if (steps > 0) {
      carry -= steps;
      setFrame(frame + steps);
      if (frame >= view.frames.length - 1) {
        pause();
        return;
      }
    }
    requestAnimationFrame(tickLoop);
  }

  /* Test playback: every frame drawn once, in order, one per timer turn;
   * with "&sync" all in one go, before the page's load event, for a browser
   * run without virtual time, whose clock is real (under Chromium's
   * --virtual-time-budget performance.now() stands still while a script
   * runs, so draw times can only be measured without it). */
  function testStep(chain = true) {
    if (!playing || !view) return;
    if (frame < view.frames.length - 1) {
      setFrame(frame + 1);
      if (chain) setTimeout(testStep, 0);
    } else {
      pause();
      finishTest();
    }
  }

  function changeSpeed(delta) {
    const s = $("speed");
    s.selectedIndex = Math.max(0, Math.min(s.options.length - 1, s.selectedIndex + delta));
  }

  /* ---- drawing ----------------------------------------------------------- */

  const INK = "#1d232a", MUTED = "#7a848e", ACCENT = "#1f5fa8", GOOD = "#1d7a3a", BAD = "#b3261e";

  function draw() {
    if (!view) return;
    const t0 = performance.now();
    const f = view.frames[frame];
    const scrub = $("scrub");
    scrub.value = String(frame + 1);
    scrub.setAttribute("aria-valuetext", "tick " + f.tick);
    $("tick").textContent = "tick " + f.tick + " / " + view.frames[view.frames.length - 1].tick;
    drawWorld(view, f);
    drawNet(view);
    drawTimes.push(performance.now() - t0);
    seenTicks.push(f.tick);
  }

  function clear(ctx) {
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
    ctx.font = "13px system-ui, sans-serif";
    ctx.textBaseline = "alphabetic";
    ctx.textAlign = "left";
  }

  function drawWorld(v, f) {
    const ctx = $("world").getContext("2d");
    clear(ctx);
    if (v.family === "pong") drawPong(ctx, v, f);
    else if (v.family === "tracking") drawTracking(ctx, v, f);
    else if (v.family === "cartpole") drawCartpole(ctx, v, f);
    else if (v.family === "probe") drawProbe(ctx, v, f);
    else {
      ctx.fillStyle = INK;
      ctx.fillText("No drawing for task " + v.task + "; world: " + JSON.stringify(f.world), 12, 24);
    }
  }

  function drawPong(ctx, v, f) {
    const w = f.world, W = w.width || 1000, H = w.height || 500;
    const s = Math.min((ctx.canvas.width - 180) / W, (ctx.canvas.height - 20) / H);
    const ox = 10, oy = 10;
    ctx.strokeStyle = MUTED;
    ctx.lineWidth = 1;
    ctx.strokeRect(ox, oy, W * s, H * s);
    /* the paddle plane and the ball's recent path */
    ctx.setLineDash([4, 4]);
    ctx.beginPath();
    ctx.moveTo(ox + (w.paddle_x + w.ball_r) * s, oy);
    ctx.lineTo(ox + (w.paddle_x + w.ball_r) * s, oy + H * s);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.strokeStyle = "#b8c7da";
    ctx.beginPath();
    for (let i = Math.max(0, frame - 20); i <= frame; i++) {
      const b = v.frames[i].world, x = ox + b.ball_x * s, y = oy + b.ball_y * s;
      if (i > 0 && i > frame - 20 && Math.abs(b.ball_x - v.frames[i - 1].world.ball_x) > 50) ctx.moveTo(x, y);
      else if (i === Math.max(0, frame - 20)) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.fillStyle = ACCENT;
    ctx.fillRect(ox + w.paddle_x * s - 6, oy + (w.paddle_y - w.paddle_h / 2) * s, 6, w.paddle_h * s);
    ctx.fillStyle = INK;
    ctx.beginPath();
    ctx.arc(ox + w.ball_x * s, oy + w.ball_y * s, Math.max(3, w.ball_r * s), 0, 2 * Math.PI);
    ctx.fill();
    const tx = ox + W * s + 16;
    ctx.fillText("Pong", tx, 28);
    ctx.fillStyle = GOOD;
    ctx.fillText("hits " + v.hits[frame], tx, 52);
    ctx.fillStyle = BAD;
    ctx.fillText("misses " + v.misses[frame], tx, 72);
    ctx.fillStyle = INK;
    ctx.fillText("paddle y " + w.paddle_y.toFixed(0), tx, 96);
    ctx.fillText("ball " + w.ball_x.toFixed(0) + ", " + w.ball_y.toFixed(0), tx, 116);
    ctx.fillStyle = MUTED;
    ctx.fillText("e0 moves the paddle", tx, 140);
    ctx.fillText("toward +y (down)", tx, 156);
  }

  function drawTracking(ctx, v, f) {
    const w = f.world, cx = 170, cy = 160, r = 120;
    ctx.strokeStyle = "#c9ced4";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(cx, cy, r, 0, 2 * Math.PI);
    ctx.stroke();
    /* the two eyes' receptive fields around the heading (tasks.md §2.3) */
    const eye = (v.options.eye_offset_deg ?? 30) * Math.PI / 180;
    const offs = v.options.sensor_offsets_deg || [-60, 60];
    const lo = Math.min(...offs) * Math.PI / 180, hi = Math.max(...offs) * Math.PI / 180;
    ctx.fillStyle = "rgba(31, 95, 168, 0.08)";
    for (const e of [-eye, eye]) {
      ctx.beginPath();
      ctx.moveTo(cx, cy);
      ctx.arc(cx, cy, r, -(w.theta + e + hi), -(w.theta + e + lo));
      ctx.closePath();
      ctx.fill();
    }
    const at = (a, rr) => [cx + rr * Math.cos(a), cy - rr * Math.sin(a)];
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.moveTo(cx, cy);
    ctx.lineTo(...at(w.theta, r));
    ctx.stroke();
    ctx.fillStyle = BAD;
    ctx.beginPath();
    ctx.arc(...at(w.phi, r), 9, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = INK;
    ctx.beginPath();
    ctx.arc(cx, cy, 5, 0, 2 * Math.PI);
    ctx.fill();
    const err = v.error[frame] * 180 / Math.PI;
    const tx = 330;
    ctx.fillText("Tracking", tx, 28);
    ctx.fillStyle = ACCENT;
    ctx.fillText("gaze (heading) " + (w.theta * 180 / Math.PI).toFixed(1) + "\u00b0", tx, 52);
    ctx.fillStyle = BAD;
    ctx.fillText("target " + (w.phi * 180 / Math.PI).toFixed(1) + "\u00b0, turning " +
                 (w.direction > 0 ? "+" : "\u2212"), tx, 72);
    ctx.fillStyle = INK;
    ctx.fillText("error " + err.toFixed(1) + "\u00b0, cos " + Math.cos(v.error[frame]).toFixed(3), tx, 92);
    /* cos(error) over the whole trial with the current tick marked */
    const px = tx, py = 120, pw = 360, ph = 150, n = v.frames.length;
    ctx.strokeStyle = "#c9ced4";
    ctx.lineWidth = 1;
    ctx.strokeRect(px, py, pw, ph);
    ctx.beginPath();
    ctx.moveTo(px, py + ph / 2);
    ctx.lineTo(px + pw, py + ph / 2);
    ctx.stroke();
    ctx.strokeStyle = INK;
    ctx.beginPath();
    for (let i = 0; i <= frame; i++) {
      const x = px + (i + 0.5) * pw / n, y = py + ph / 2 - Math.cos(v.error[i]) * ph / 2;
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.fillStyle = MUTED;
    ctx.fillText("cos(error) per tick: +1 on target, \u22121 opposite", px, py + ph + 18);
  }

  function drawCartpole(ctx, v, f) {
    const w = f.world, maxX = w.max_x || 2.4, W = ctx.canvas.width;
    const ground = 230, s = (W - 240) / (2 * maxX), x0 = 20 + maxX * s;
    ctx.strokeStyle = MUTED;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x0 - maxX * s - 10, ground);
    ctx.lineTo(x0 + maxX * s + 10, ground);
    ctx.stroke();
    ctx.strokeStyle = BAD;
    for (const lim of [-maxX, maxX]) {
      ctx.beginPath();
      ctx.moveTo(x0 + lim * s, ground - 40);
      ctx.lineTo(x0 + lim * s, ground + 10);
      ctx.stroke();
    }
    const cxp = x0 + w.x * s, cw = 50, ch = 24;
    ctx.fillStyle = ACCENT;
    ctx.fillRect(cxp - cw / 2, ground - ch, cw, ch);
    /* the pole: full length 2·pole_length, θ = 0 upright, θ > 0 leans to +x */
    const len = 2 * (w.pole_length || 0.5) * s, top = ground - ch;
    const fail = Math.abs(w.theta) > 0.2095;
    ctx.strokeStyle = fail ? BAD : "#8a5a14";
    ctx.lineWidth = 6;
    ctx.beginPath();
    ctx.moveTo(cxp, top);
    ctx.lineTo(cxp + len * Math.sin(w.theta), top - len * Math.cos(w.theta));
    ctx.stroke();
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 4]);
    ctx.strokeStyle = MUTED;
    for (const a of [-0.2095, 0.2095]) {
      ctx.beginPath();
      ctx.moveTo(cxp, top);
      ctx.lineTo(cxp + len * Math.sin(a), top - len * Math.cos(a));
      ctx.stroke();
    }
    ctx.setLineDash([]);
    const tx = W - 200;
    ctx.fillStyle = INK;
    ctx.fillText("Plank CartPole", tx, 28);
    ctx.fillText("x " + w.x.toFixed(3) + " m", tx, 52);
    ctx.fillText("\u03b8 " + (w.theta * 180 / Math.PI).toFixed(2) + "\u00b0", tx, 72);
    ctx.fillText("\u1e8b " + w.x_dot.toFixed(3), tx, 92);
    ctx.fillText("\u03b8\u0307 " + w.theta_dot.toFixed(3), tx, 112);
    ctx.fillStyle = w.done ? BAD : GOOD;
    ctx.fillText(w.done ? "done (fell or left the track)" : "balancing", tx, 136);
    ctx.fillStyle = MUTED;
    ctx.fillText("track limits \u00b1" + maxX + " m, pole \u00b112\u00b0", tx, 160);
  }

  function drawProbe(ctx, v, f) {
    const W = ctx.canvas.width, L = v.length, x0 = 110, tw = W - 130;
    const X = (t) => x0 + t * tw / L;
    ctx.fillStyle = INK;
    ctx.fillText(v.task.replace(/_/g, " ") + " \u2014 " + L + " ticks", 12, 24);
    /* the phases */
    const y = 44, h = 26;
    const phases = [];
    if (v.cueEnd > 0) phases.push(["cue", 0, v.cueEnd, "#f2c46d"]);
    let from = v.cueEnd;
    for (const w of v.windows) {
      if (w.start > from) phases.push([v.cueEnd > 0 && phases.length === 1 ? "delay" : "stimulus", from, w.start, "#dfe3e8"]);
      phases.push(["response", w.start, w.end, "#9cc3e6"]);
      from = w.end;
    }
    if (from < L) phases.push(["after", from, L, "#eef0f2"]);
    for (const [name, a, b, colour] of phases) {
      ctx.fillStyle = colour;
      ctx.fillRect(X(a), y, X(b) - X(a), h);
      ctx.fillStyle = INK;
      if (X(b) - X(a) > 50) ctx.fillText(name + " " + a + "\u2013" + b, X(a) + 4, y + 17);
    }
    ctx.fillStyle = MUTED;
    ctx.fillText("phase", 12, y + 17);
    /* the receptors, one row each */
    const names = v.task === "delayed_cue" || v.task === "recall_interference"
      ? ["cue 1", "cue 2", "respond"] : null;
    const rh = Math.min(18, 120 / Math.max(1, v.nIn));
    for (let r = 0; r < v.nIn; r++) {
      const ry = y + h + 12 + r * rh;
      ctx.fillStyle = MUTED;
      if (rh >= 12) ctx.fillText(names ? names[r] || "in " + r : "in " + r, 12, ry + rh - 4);
      ctx.fillStyle = "#3b6ea5";
      for (let i = 0; i < L && i < v.frames.length; i++)
        if (v.frames[i].inputs[r] > 0) ctx.fillRect(X(i), ry + 2, Math.max(1, X(i + 1) - X(i) - 0.5), rh - 4);
    }
    /* evidence in the current (or last) response window and the answer */
    const t = frame; /* frame i is tick i's advance */
    const ey = y + h + 24 + v.nIn * rh;
    let k = v.windows.findIndex((w) => t < w.end);
    if (k < 0) k = v.windows.length - 1;
    ctx.fillStyle = INK;
    if (k >= 0) {
      const w = v.windows[k];
      let e0 = 0, e1 = 0;
      for (let i = w.start; i < Math.min(w.end, t + 1); i++) {
        e0 += v.frames[i].effectors[0] || 0;
        e1 += v.frames[i].effectors[1] || 0;
      }
      ctx.fillText("evidence (round " + (k + 1) + "): e0 " + e0.toFixed(2) + ", e1 " + e1.toFixed(2), 12, ey);
      if (t >= w.end - 1) {
        const right = v.label === null ? null : w.decision === v.label;
        ctx.fillStyle = right === null ? INK : right ? GOOD : BAD;
        ctx.font = "bold 16px system-ui, sans-serif";
        ctx.fillText("answer " + w.decision + (v.label === null ? "" : ", cue was " + v.label +
                     (right ? ": right" : ": wrong")), 12, ey + 26);
        ctx.font = "13px system-ui, sans-serif";
      } else if (t < w.start) {
        ctx.fillStyle = MUTED;
        ctx.fillText("waiting for the response phase" + (v.label ? " (cue " + v.label + ")" : ""), 12, ey + 26);
      } else {
        ctx.fillText("responding\u2026", 12, ey + 26);
      }
    }
    /* the cursor */
    ctx.strokeStyle = BAD;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(X(Math.min(t, L) + 0.5), y - 6);
    ctx.lineTo(X(Math.min(t, L) + 0.5), y + h + 12 + v.nIn * rh);
    ctx.stroke();
    ctx.lineWidth = 1;
  }

  /* Network: activity raster, effector traces and receptor inputs over the
   * last WINDOW ticks, the current tick at the right edge. */
  const WINDOW = 120;

  function drawNet(v) {
    const ctx = $("net").getContext("2d");
    clear(ctx);
    const W = ctx.canvas.width, left = 96, right = W - 8, cw = (right - left) / WINDOW;
    const end = frame + 1, start = Math.max(0, end - WINDOW), count = end - start;
    const xOf = (i) => left + (i - (end - WINDOW)) * cw;
    ctx.imageSmoothingEnabled = false;
    const blocks = [
      { name: "activity", sub: v.nAct + " nodes", img: v.activity, y: 8, h: 200 },
      { name: "inputs", sub: v.nIn + " receptors", img: v.inputs, y: 318, h: 96 },
    ];
    for (const b of blocks) {
      ctx.strokeStyle = "#d5d9de";
      ctx.strokeRect(left - 0.5, b.y - 0.5, right - left + 1, b.h + 1);
      if (count > 0 && b.img.canvas.height > 0)
        ctx.drawImage(b.img.canvas, start, 0, count, b.img.canvas.height, xOf(start), b.y, count * cw, b.h);
      ctx.fillStyle = INK;
      ctx.fillText(b.name, 8, b.y + 14);
      ctx.fillStyle = MUTED;
      ctx.fillText(b.sub, 8, b.y + 30);
    }
    /* effectors: one line each in [0, 1] */
    const ey = 220, eh = 86, colours = [ACCENT, BAD, GOOD, "#8a5a14"];
    ctx.strokeStyle = "#d5d9de";
    ctx.strokeRect(left - 0.5, ey - 0.5, right - left + 1, eh + 1);
    ctx.fillStyle = INK;
    ctx.fillText("effectors", 8, ey + 14);
    for (let e = 0; e < v.nEff; e++) {
      ctx.strokeStyle = colours[e % colours.length];
      ctx.fillStyle = colours[e % colours.length];
      ctx.fillText("e" + e + " " + (v.frames[frame].effectors[e] ?? 0).toFixed(2), 8, ey + 34 + 16 * e);
      ctx.beginPath();
      for (let i = start; i < end; i++) {
        const val = Math.max(0, Math.min(1, v.frames[i].effectors[e] || 0));
        const x = xOf(i) + cw / 2, y = ey + eh - 2 - val * (eh - 4);
        if (i === start) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.stroke();
    }
    /* the current tick */
    ctx.strokeStyle = "rgba(179, 38, 30, 0.6)";
    ctx.beginPath();
    ctx.moveTo(xOf(frame) + cw / 2, 4);
    ctx.lineTo(xOf(frame) + cw / 2, 416);
    ctx.stroke();
  }

  /* ---- the test report --------------------------------------------------- */

  /* What a person would see, as numbers: how much of each canvas is not
   * background, and a checksum of its pixels. */
  function canvasSummary(id) {
    const c = $(id), data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let ink = 0, sum = 2166136261;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] !== 255 || data[i + 1] !== 255 || data[i + 2] !== 255) ink++;
      sum = Math.imul(sum ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16)), 16777619);
    }
    return { ink, checksum: (sum >>> 0).toString(16) };
  }

  function finishTest() {
    const r = $("test-report");
    const sorted = drawTimes.slice().sort((a, b) => a - b);
    const median = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : 0;
    const world = canvasSummary("world"), net = canvasSummary("net");
    let monotonic = true;
    for (let i = 1; i < seenTicks.length; i++) if (seenTicks[i] < seenTicks[i - 1]) monotonic = false;
    Object.assign(r.dataset, {
      replay: view.id, frames: String(view.frames.length),
      framesDrawn: String(drawTimes.length), firstTick: String(seenTicks[0]),
      lastTick: String(seenTicks[seenTicks.length - 1]), distinctTicks: String(new Set(seenTicks).size),
      monotonic: String(monotonic), tickText: $("tick").textContent,
      worldInk: String(world.ink), worldChecksum: world.checksum,
      netInk: String(net.ink), netChecksum: net.checksum,
      drawMedianMs: median.toFixed(3), drawWorstMs: (sorted[sorted.length - 1] || 0).toFixed(3),
      /* the first draw also warms up fonts and canvases */
      drawWorstWarmMs: Math.max(0, ...drawTimes.slice(1)).toFixed(3),
      trialText: $("trial").textContent, status: "done",
    });
  }

  /* The keyboard shortcuts and the scrub slider, driven as a person would
   * (events dispatched to the page), with the tick shown after each:
   * "key=tick" pairs in data-keys, the speeds in data-speeds. */
  function testKeys() {
    const steps = [];
    const press = (key) => {
      document.body.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
      steps.push((key === " " ? "Space" : key) + "=" + view.frames[frame].tick +
                 (playing ? "+playing" : ""));
    };
    ["End", "Home", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft", " ", " "].forEach(press);
    const scrub = $("scrub");
    scrub.value = "10";
    scrub.dispatchEvent(new Event("input", { bubbles: true }));
    steps.push("scrub=" + view.frames[frame].tick);
    const speeds = [$("speed").value];
    for (const key of ["+", "+", "-"]) {
      press(key);
      speeds.push($("speed").value);
    }
    Object.assign($("test-report").dataset, {
      replay: view.id, keys: steps.join(" "), speeds: speeds.join(" "), status: "done",
    });
  }

  /* ---- wiring the page --------------------------------------------------- */

  function keys(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const tag = e.target && e.target.tagName;
    if (tag === "SELECT" || (tag === "INPUT" && e.target.type !== "range")) return;
    if (tag === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    const n = view ? view.frames.length : 0;
    let handled = true;
    switch (e.key) {
      case " ": playing ? pause() : play(); break;
      case "ArrowRight": pause(); setFrame(frame + 1); break;
      case "ArrowLeft": pause(); setFrame(frame - 1); break;
      case "Home": pause(); setFrame(0); break;
      case "End": pause(); setFrame(n - 1); break;
      case "+": case "=": changeSpeed(1); break;
      case "-": changeSpeed(-1); break;
      default:
        if (/^[1-9]$/.test(e.key) && index && index.cases[Number(e.key) - 1])
          openCase(index.cases[Number(e.key) - 1].id);
        else handled = false;
    }
    if (handled) e.preventDefault();
  }

  function start() {
    listCases();
    $("play").addEventListener("click", () => (playing ? pause() : play()));
    $("back").addEventListener("click", () => { pause(); setFrame(frame - 1); });
    $("fwd").addEventListener("click", () => { pause(); setFrame(frame + 1); });
    $("scrub").addEventListener("input", (e) => { pause(); setFrame(Number(e.target.value) - 1); });
    $("file").addEventListener("change", (e) => { if (e.target.files[0]) openFile(e.target.files[0]); });
    document.addEventListener("keydown", keys);
    const drop = $("drop");
    let depth = 0;
    document.addEventListener("dragenter", (e) => { e.preventDefault(); depth++; drop.hidden = false; });
    document.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; drop.hidden = true; } });
    document.addEventListener("dragover", (e) => e.preventDefault());
    document.addEventListener("drop", (e) => {
      e.preventDefault();
      depth = 0;
      drop.hidden = true;
      const file = e.dataTransfer && e.dataTransfer.files[0];
      if (file) openFile(file);
    });
    const id = hash.get("replay");
    if (id && hash.has("viafile")) {
      /* The file-picker path, fed the case's document as a File. */
      pendingId = null;
      const s = document.createElement("script");
      s.src = id + ".js";
      window.brainlesslabViewer.registerReplay = (rid, doc) => {
        window.brainlesslabViewer.registerReplay = registerReplay;
        openFile(new File([JSON.stringify(doc)], rid + ".json", { type: "application/json" }));
      };
      s.onerror = () => noteError("cannot load " + id + ".js");
      document.body.appendChild(s);
    } else if (id) {
      openCase(id);
    } else if (test) {
      $("test-report").dataset.status = "done";
    }
  }

  return { registerIndex, registerReplay, start };
})();
window.brainlesslabViewer = brainlesslabViewer;

"""NumPy oracle for the differential tests (spec/numpy-compat.md §1).

Usage: numpy_ref.py REQUESTS OUT. REQUESTS holds one request per line,
whitespace-separated; seeds are 256-bit integers in hex (the display form).
OUT receives one record per request: a little-endian uint64 byte count, then
the bytes of the result (little-endian arrays).

Requests:
  raw SEED N                 Philox(seed).random_raw(N)                  -> uint64[N]
  random SEED N              Generator(Philox(seed)).random(N)           -> float64[N]
  normal SEED N              .standard_normal(N)                         -> float64[N]
  uniform SEED LO HI N       .uniform(LO, HI, N)                         -> float64[N]
  integers SEED LOW HIGH N   .integers(LOW, HIGH, N) (int64)             -> int64[N]
  integers1 SEED LOW HIGH N  N scalar .integers(LOW, HIGH) calls         -> int64[N]
  permutation SEED N         .permutation(N)                             -> int64[N]
  shuffle SEED N             .shuffle(arange(N)) twice in a row          -> int64[2N]
  choice SEED LEN N          N scalar .choice(arange(LEN)) calls         -> int64[N]
  mixed SEED N               N rounds of (integers(0,7), random(), standard_normal(),
                             integers(0, 2**40)) interleaved             -> float64[4N]
  seedseq SEED N             SeedSequence(seed).generate_state(N, uint32) -> uint32[N]
  stats SEED N KIND          data array (see make_data), then sum, mean, std ddof 0,
                             std ddof 1, quantile at QS                   -> float64[4+len(QS)]
  data SEED N KIND           the data array itself                       -> float64[N]
  npy PATH                   numpy.load(PATH) (no whitespace in PATH)    -> ASCII line
                             "DESCR NDIM DIM0 DIM1 ...\n", then the array's bytes in C order
  npz PATH                   numpy.load(PATH, allow_pickle=False) of a .npz archive
                             -> ASCII line "COUNT\n", then per member in sorted name order
                             "NAME DESCR NDIM DIM0 ...\n" and the array's bytes in C order
  rawkey K0 K1 C0 C1 C2 C3 N Philox(key=[K0,K1], counter=[C0..C3]).random_raw(N)
                             (words in hex)                              -> uint64[N]
  ops SEED OP,OP,...         one generator, the ops in order, each giving 8-byte
                             little-endian values: r random, n standard_normal,
                             u:LO:HI uniform, i:LO:HI scalar integers (int64),
                             w bit_generator.random_raw() (uint64), p:N permutation,
                             s:N shuffle(arange(N)), c:LEN choice(arange(LEN))
  seedfor HEX                HEX = hex of the UTF-8 JSON [root, partition, stream,
                             [key, ...]] (keys int, str or bool): the reference's
                             seed_for, independently -> sha256 digest (32 bytes) + payload
  falandays_construct SEED N R E K=V,K=V,...
                             Falandays construction (spec/models.md section 2.3) with
                             Generator(Philox(seed)); keys: axis, mode, repair, link_p,
                             input_link_p (P:P:... or none), inhibitory_frac, scale,
                             input_weight, weight_init_std, targ_min (floats as repr)
                             -> float64: signs[N], mask[N,N], input_weights[N,R],
                             output_mask[N,E], weights[N,N], acts, targets, spikes,
                             then integers(0, 1000) and random() drawn afterwards (the
                             generator's position, 32-bit cache included)
  sorn_construct SEED N R E K=V,K=V,...
                             SORN construction (spec/models.md section 3.4) with
                             Generator(Philox(seed)); keys: ratio, p_ee, p_ei, p_ie,
                             p_input, p_output, ee_sum, ei_sum, ie_sum, input_sum,
                             te_max, ti_max (floats as repr)
                             -> float64: N_E, ee_mask[NE,NE], w_ee, c_e[NE],
                             w_ei[NE,NI], w_ie[NI,NE], w_eu[NE,R], output_mask[E,NE],
                             t_e[NE], t_i[NI], then integers(0, 1000) and random()
  world_prepare SEED KIND HORIZON OPTHEX
                             a world of family KIND prepared from Generator(Philox(seed))
                             as spec/tasks.md sections 2.2, 3.2, 4.2, 5 and 7.1 describe it,
                             written independently of the C code; OPTHEX = hex of the
                             UTF-8 JSON of the resolved options -> float64: L, R, M, K,
                             reversal, physical[8], draws[K,2], stimuli[L,R], starts[M],
                             ends[M], cue_ends[M], labels[M], bounds[M,2], metadata (cue,
                             delay, context, initial_mapping, congruent, n distractors,
                             their labels, their starts), then integers(0, 1000), random()
  bootstrap DSEED M KIND BSEED REPS
                             platform.md section 5.3: v = data DSEED M KIND, one
                             integers(0, M, size=(REPS, M)) call from BSEED, the rows'
                             means -> float64: quantiles 0.025, 0.975, then the REPS means
  nullboot ROOT SIGID DSEED KIND REPS
                             tasks.md section 9.4 on scores = data DSEED 1024 KIND with
                             generator(ROOT, "calibration", "null-mean-bootstrap", SIGID),
                             one integers(0, 1024, size=1024) call per repetition
                             -> float64: mean, SD(ddof 1)/sqrt(1024), quantiles 0.025, 0.975
  adjusted SEED CALID BSEED M BKIND NULL U REPS
                             platform.md section 5.5 adjusted_interval of blocks = data
                             BSEED M BKIND with the summary seed SEED (hex) as the root of
                             seed_for; NULL is "analytic" (constant 0.5) or DSEED:KIND (1024
                             scores = data DSEED 1024 KIND); U the upper bound
                             -> float64: estimate, raw mean, raw interval, null interval,
                             adjusted interval (NaN pair when any denominator is invalid),
                             invalid denominator draws
"""
import hashlib
import json
import struct
import sys
import warnings

import numpy as np

QS = [0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1.0, 1.0 / 3.0]


def gen(seed_hex):
    return np.random.Generator(np.random.Philox(int(seed_hex, 16)))


def make_data(seed_hex, n, kind):
    """Arrays built only from exact IEEE operations on draws, so the C side
    can rebuild them bit for bit from its own (separately proven) draws."""
    g = gen(seed_hex)
    if kind == "normal":
        return g.standard_normal(n)
    if kind == "scaled":
        a = g.standard_normal(n)
        b = g.random(n)
        return a * (1.0 + 1000.0 * b)
    if kind == "ties":
        return g.integers(0, 5, n).astype(np.float64)
    if kind == "unit":
        return g.random(n)
    if kind == "nearu":
        return (g.random(n) < 0.999).astype(np.float64)
    raise SystemExit("unknown data kind " + kind)


def seed_for_payload(root, partition, stream, keys):
    """The reference's payload (spec/models.md section 6.1), written here
    from the spec so the C writer is checked against Python's json."""
    tagged = [[type(k).__name__, k] for k in keys]
    return json.dumps(["philox-host-v1", root, partition, stream, tagged],
                      separators=(",", ":")).encode("utf-8")


def seed_for(root, partition, stream, *keys):
    """The reference's seed_for: the payload's SHA-256 as a little-endian
    integer; a 256-bit root is just a Python int in the payload."""
    payload = seed_for_payload(root, partition, stream, list(keys))
    return int.from_bytes(hashlib.sha256(payload).digest(), "little")


def quantiles(a):
    return list(np.quantile(np.asarray(a), [0.025, 0.975]))


def bootstrap(dseed, m, kind, bseed, reps):
    v = make_data(dseed, m, kind)
    means = v[gen(bseed).integers(0, m, size=(reps, m))].mean(axis=1)
    return np.array(quantiles(means) + list(means), dtype="<f8")


def nullboot(root, sig_id, dseed, kind, reps):
    scores = make_data(dseed, 1024, kind)
    g = np.random.Generator(np.random.Philox(
        seed_for(root, "calibration", "null-mean-bootstrap", sig_id)))
    means = [scores[g.integers(0, 1024, size=1024)].mean() for _ in range(reps)]
    vals = [scores.mean(), scores.std(ddof=1) / np.sqrt(1024)] + quantiles(means)
    return np.array(vals, dtype="<f8")


def adjusted(seed_hex, cal_id, bseed, m, bkind, null, upper, reps):
    """adjusted_interval as platform.md section 5.5 words it: two independent
    streams, one m-vector and one 1024-vector per repetition, analytic null
    the constant 0.5, invalid denominators counted and never dropped."""
    blocks = make_data(bseed, m, bkind)
    root = int(seed_hex, 16)

    def stream(name):
        return np.random.Generator(np.random.Philox(
            seed_for(root, "uncertainty", name, cal_id)))

    gm = stream("model-block-bootstrap")
    if null == "analytic":
        scores, null_mean = None, 0.5
    else:
        dseed, dkind = null.split(":")
        scores = make_data(dseed, 1024, dkind)
        null_mean = scores.mean()
        gn = stream("calibration-trajectory-bootstrap")
    raw, nul = [], []
    for _ in range(reps):
        raw.append(blocks[gm.integers(0, m, size=m)].mean())
        nul.append(0.5 if scores is None else scores[gn.integers(0, 1024, size=1024)].mean())
    raw, nul = np.array(raw), np.array(nul)
    den = upper - nul
    invalid = int(np.sum(~np.isfinite(den) | (den <= 0)))
    raw_mean = blocks.mean()
    d = upper - null_mean
    estimate = (raw_mean - null_mean) / d if np.isfinite(d) and d > 0 else np.nan
    interval = [np.nan, np.nan] if invalid else quantiles((raw - nul) / den)
    vals = [estimate, raw_mean] + quantiles(raw) + quantiles(nul) + interval + [invalid]
    return np.array(vals, dtype="<f8")


def run_ops(g, ops):
    out = bytearray()
    for op in ops.split(","):
        parts = op.split(":")
        kind = parts[0]
        if kind == "r":
            out += struct.pack("<d", g.random())
        elif kind == "n":
            out += struct.pack("<d", g.standard_normal())
        elif kind == "u":
            out += struct.pack("<d", g.uniform(float(parts[1]), float(parts[2])))
        elif kind == "i":
            out += struct.pack("<q", int(g.integers(int(parts[1]), int(parts[2]))))
        elif kind == "w":
            out += struct.pack("<Q", int(g.bit_generator.random_raw()))
        elif kind == "p":
            out += g.permutation(int(parts[1])).astype("<i8").tobytes()
        elif kind == "s":
            a = np.arange(int(parts[1]), dtype=np.int64)
            g.shuffle(a)
            out += a.astype("<i8").tobytes()
        elif kind == "c":
            out += struct.pack("<q", int(g.choice(np.arange(int(parts[1]), dtype=np.int64))))
        else:
            raise SystemExit("unknown op " + op)
    return np.frombuffer(bytes(out), dtype=np.uint8)


def npy_record(path):
    a = np.load(path, allow_pickle=False)
    head = " ".join([np.lib.format.dtype_to_descr(a.dtype), str(a.ndim)] +
                    [str(d) for d in a.shape]) + "\n"
    body = np.ascontiguousarray(a).tobytes()
    return np.frombuffer(head.encode("ascii") + body, dtype=np.uint8)


def npz_record(path):
    """Every member through NumPy's own .npz reader, pickles refused."""
    out = b""
    with np.load(path, allow_pickle=False) as z:
        names = sorted(z.files)
        out += ("%d\n" % len(names)).encode("ascii")
        for name in names:
            a = z[name]
            head = " ".join([name, np.lib.format.dtype_to_descr(a.dtype), str(a.ndim)] +
                            [str(d) for d in a.shape]) + "\n"
            out += head.encode("ascii") + np.ascontiguousarray(a).tobytes()
    return np.frombuffer(out, dtype=np.uint8)


def falandays_construct(seed_hex, n, r, e, spec):
    """Section 2.3 written from the spec in the reference's vectorised style,
    independently of the C code: whole-array draws in C order, boolean masks,
    NumPy broadcasting and NumPy's own maximum/where."""
    cfg = dict(kv.split("=", 1) for kv in spec.split(","))
    axis, mode = cfg["axis"], cfg["mode"]
    link_p = float(cfg["link_p"])
    g = gen(seed_hex)
    signs = np.ones(n, dtype=np.int32)
    if axis == "dale":
        signs[g.random(n) < float(cfg["inhibitory_frac"])] = -1
    mask = (g.random((n, n)) < link_p).astype(np.int32)
    np.fill_diagonal(mask, 0)
    if cfg["input_link_p"] == "none":
        probs = np.full(r, link_p)
    else:
        probs = np.array([float(p) for p in cfg["input_link_p"].split(":")])
        assert probs.shape == (r,)
    inputs = g.random((n, r)) < probs
    outputs = g.random((n, e)) < link_p
    if cfg["repair"] == "1":
        eligible = np.flatnonzero(probs > 0)
        if axis == "unsigned" and eligible.size:
            for i in range(n):
                if not mask[i].any() and not inputs[i].any():
                    inputs[i, g.choice(eligible)] = True
        for k in range(e):
            if not outputs[:, k].any():
                outputs[g.integers(0, n), k] = True
    if axis == "dale":
        w = np.maximum(0, 1 + 0.2 * g.standard_normal((n, n)))
    elif mode == "excitatory":
        w = float(cfg["input_weight"]) + 0.1 * g.standard_normal((n, n))
    elif mode == "pong_mixed":
        u2 = g.random((n, n))
        z1 = g.standard_normal((n, n))
        z2 = g.standard_normal((n, n))
        w = np.where(u2 < 0.25, -1 + 0.1 * z1, 0.2 * z2)
    elif mode == "legacy_normal":
        w = float(cfg["weight_init_std"]) * g.standard_normal((n, n))
    else:
        raise SystemExit("unknown weight_init_mode " + mode)
    w = w * mask
    w = w * float(cfg["scale"])
    parts = [signs, mask, inputs.astype(np.float64) * float(cfg["input_weight"]),
             outputs.astype(np.float64), w, np.zeros(n),
             np.full(n, float(cfg["targ_min"])), np.zeros(n),
             [g.integers(0, 1000), g.random()]]
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in parts]).astype("<f8")


def sorn_construct(seed_hex, n, r, e, spec):
    """Section 3.4 written from the spec in the reference's style,
    independently of the C code: whole-matrix draws compared with p,
    boolean-mask assignment of the weights, Python's sum for the row totals
    and NumPy's own axis sum for c_e."""
    cfg = {k: float(v) for k, v in (kv.split("=", 1) for kv in spec.split(","))}
    g = gen(seed_hex)
    n_e = min(n, max(1, round(n / (1 + cfg["ratio"]))))
    n_i = n - n_e

    def mask(rows, cols, p, no_self=False):
        m = g.random((rows, cols)) < p
        if no_self:
            np.fill_diagonal(m, False)
        if cols > 0:
            for i in range(rows):
                if not m[i].any():
                    cand = [j for j in range(cols) if not (no_self and j == i)]
                    if cand:
                        m[i, g.choice(cand)] = True
        return m

    def fanout(rows, cols, fraction):
        f = min(rows, max(1, round(fraction * rows)))
        m = np.zeros((rows, cols), dtype=bool)
        for c in range(cols):
            m[g.permutation(rows)[:f], c] = True
        return m

    def weights(m, target):
        w = np.zeros(m.shape)
        if target == 0:
            return w
        w[m] = g.random(int(m.sum()))
        for i in range(w.shape[0]):
            tot = sum(w[i])
            if tot > 0:
                w[i] = w[i] * (target / tot)
        return w

    ee = mask(n_e, n_e, cfg["p_ee"], no_self=True)
    ei = mask(n_e, n_i, cfg["p_ei"])
    ie = mask(n_i, n_e, cfg["p_ie"])
    inputs = fanout(n_e, r, cfg["p_input"])
    outputs = fanout(n_e, e, cfg["p_output"]).T
    w_ee = weights(ee, cfg["ee_sum"])
    c_e = np.sum(w_ee, axis=1)
    w_ei = weights(ei, cfg["ei_sum"])
    w_ie = weights(ie, cfg["ie_sum"])
    w_eu = weights(inputs, cfg["input_sum"])
    t_e = cfg["te_max"] * g.random(n_e)
    t_i = cfg["ti_max"] * g.random(n_i)
    parts = [[n_e], ee, w_ee, c_e, w_ei, w_ie, w_eu, outputs, t_e, t_i,
             [g.integers(0, 1000), g.random()]]
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in parts]).astype("<f8")


WORLD_WIDTHS = {"pong": 46, "cartpole_plank_easy": 8, "delayed_cue": 3,
                "recall_interference": 3, "delayed_xor": 5, "evidence_accumulation": 3,
                "context_integration": 7, "temporal_order": 4, "reversal_adaptation": 8}


def cue_table(n_ticks, c, cue, mode):
    """The stimulus table of a cue trial: the cue's column is 1 for the
    whole trial ("persistent") or its first c ticks ("transient")."""
    table = np.zeros((n_ticks, 3))
    if mode == "persistent":
        table[:, cue - 1] = 1
    elif mode == "transient":
        table[0:c, cue - 1] = 1
    return table


def world_prepare(seed_hex, kind, horizon, opt_hex):
    """tasks.md §2.2-§5.10 from the text: each family's draws, in §7.1 order."""
    g = gen(seed_hex)
    o = json.loads(bytes.fromhex(opt_hex).decode("utf-8"))
    width = 2 * len(o["sensor_offsets_deg"]) if kind == "tracking" else WORLD_WIDTHS[kind]
    physical = np.zeros(8)
    draws = np.zeros((1, 2))
    table = np.zeros((1, width))
    rounds = []  # (response_start, response_end, cue_end, label, start, end)
    meta = {"cue": 0, "delay": 0, "context": 0, "mapping": 0, "congruent": 0,
            "dl": [], "ds": []}
    reversal = 0
    c = o.get("cue_ticks", 0)
    r = o.get("response_ticks", 0)

    def pulse_stream(n, f, label):
        # Number of "1" pulses; the final pulse is a fresh fair draw.
        ones = int(n * (1 + f) / 2) if label == 1 else int(n * (1 - f) / 2)
        last = g.integers(1, 3)
        ones -= 1 if last == 1 else 0
        body = np.array([1] * ones + [2] * (n - 1 - ones), dtype=np.int32)
        g.shuffle(body)
        return list(body) + [last]

    if kind == "tracking":
        rnd = o["randomize_start"]
        if o["theta0"] is not None:
            physical[0] = o["theta0"]
        else:
            physical[0] = 2 * np.pi * g.random() if rnd else np.pi / 2
        if o["phi0"] is not None:
            physical[1] = o["phi0"]
        else:
            physical[1] = 2 * np.pi * g.random() if rnd else 0.0
        if o["direction0"] is not None:
            physical[2] = o["direction0"]
        else:
            physical[2] = (1.0 if g.integers(2) == 1 else -1.0) if rnd else 1.0
    elif kind == "pong":
        draws = g.random((horizon + 1, 2))
        physical[0:5] = (995.0, 1.0 + 498.0 * draws[0][0], 250.0, -5.0,
                         5.0 if draws[0][1] >= 0.5 else -5.0)
    elif kind == "cartpole_plank_easy":
        for i, (lo, hi) in enumerate(o["initial_ranges"]):
            physical[i] = lo if lo == hi else g.uniform(lo, hi)
    elif kind == "delayed_cue":
        cue = int(g.integers(1, 3))
        delay = int(g.choice(o["delays"]))
        n_ticks = c + delay + r
        table = cue_table(n_ticks, c, cue, o["cue_mode"])
        rounds.append((c + delay, n_ticks, c, cue, 0, n_ticks))
        meta["cue"], meta["delay"] = cue, delay
    elif kind == "recall_interference":
        cue = int(g.integers(1, 3))
        k, w, delay = o["distractors"], o["distractor_ticks"], o["delay"]
        drawn = [int(g.integers(1, 3)) for _ in range(k)]
        n_ticks = c + delay + r
        table = cue_table(n_ticks, c, cue, o["cue_mode"])
        starts = []
        for i in range(1, k + 1):
            s0 = c + (i * (delay - w)) // (k + 1)
            starts.append(s0)
            mode = o["distractor_mode"]
            if mode == "absent":
                continue
            lab = {"matched": cue, "opposite": 3 - cue, "random": drawn[i - 1]}[mode]
            table[s0:s0 + w, 0] = 0
            table[s0:s0 + w, 1] = 0
            table[s0:s0 + w, lab - 1] = 1
        rounds.append((c + delay, n_ticks, c, cue, 0, n_ticks))
        meta["cue"], meta["dl"], meta["ds"] = cue, drawn, starts
    elif kind == "delayed_xor":
        a = int(g.integers(1, 3))
        b = int(g.integers(1, 3))
        gap = o["gap"]
        n_ticks = 2 * c + gap + r
        table = np.zeros((n_ticks, 5))
        if o["cue_mode"] == "transient":
            table[0:c, a - 1] = 1
            table[c + gap:2 * c + gap, b + 1] = 1
        elif o["cue_mode"] == "persistent":
            table[:, a - 1] = 1
            table[c + gap:, b + 1] = 1
        rounds.append((2 * c + gap, n_ticks, c, 1 if a == b else 2, 0, n_ticks))
        meta["cue"] = a
    elif kind == "evidence_accumulation":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        label = int(g.integers(1, 3))
        stream = pulse_stream(n, f, label)
        n_ticks = n * p + r
        table = np.zeros((n_ticks, 3))
        if o["input_mode"] == "visible":
            for i, pulse in enumerate(stream):
                table[i * p:(i + 1) * p, pulse - 1] = 1
        rounds.append((n * p, n_ticks, p, label, 0, n_ticks))
    elif kind == "context_integration":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        context, label, other_draw = (int(v) for v in g.integers(1, 3, size=3))
        other = {"congruent": label, "conflicting": 3 - label,
                 "mixed": other_draw}[o["congruency"]]
        labels_of = [label, other] if context == 1 else [other, label]
        streams = [pulse_stream(n, f, labels_of[0])]
        streams.append(pulse_stream(n, f, labels_of[1]))
        n_ticks = c + n * p + r
        table = np.zeros((n_ticks, 7))
        if o["context_mode"] == "transient":
            table[0:c, context - 1] = 1
        elif o["context_mode"] == "persistent":
            table[:, context - 1] = 1
        for s_i, stream in enumerate(streams):
            for i, pulse in enumerate(stream):
                table[c + i * p:c + (i + 1) * p, 2 + 2 * s_i + pulse - 1] = 1
        rounds.append((c + n * p, n_ticks, c, label, 0, n_ticks))
        meta["context"], meta["congruent"] = context, int(label == other)
    elif kind == "temporal_order":
        label = int(g.integers(1, 3))
        gap, term = o["gap"], o["terminal_ticks"]
        n_ticks = 2 * c + gap + term + r
        table = np.zeros((n_ticks, 4))
        if o["input_mode"] == "visible":
            table[0:c, label - 1] = 1
            table[c + gap:2 * c + gap, 2 - label] = 1
        table[2 * c + gap:n_ticks - r, 2] = 1
        rounds.append((n_ticks - r, n_ticks, c, label, 0, n_ticks))
    elif kind == "reversal_adaptation":
        swapped = bool(g.integers(2))
        lo, hi = o["reversal_range"]
        reversal = int(g.integers(lo, hi + 1))
        m, fb = o["rounds"], o["feedback_ticks"]
        cues = g.integers(1, 3, size=m)
        period = c + r + fb
        table = np.zeros((m * period, 8))
        for k in range(m):
            s0 = k * period
            cue = int(cues[k])
            table[s0:s0 + c + r, cue - 1] = 1
            table[s0 + c + r:s0 + period, 3] = 1
            flip = swapped != (k + 1 >= reversal)
            rounds.append((s0 + c, s0 + c + r, s0 + c, 3 - cue if flip else cue, s0, s0 + period))
        meta["mapping"] = int(swapped)
    else:
        raise SystemExit("unknown task " + kind)
    respond = 2 if kind == "reversal_adaptation" else width - 1
    for start, end, *_ in rounds:
        table[start:end, respond] = 1
    cols = list(zip(*rounds)) if rounds else [[]] * 6
    parts = [[table.shape[0], width, len(rounds), draws.shape[0], reversal], physical,
             draws, table]
    parts += [cols[0], cols[1], cols[2], cols[3],
              [v for row in rounds for v in (row[4], row[5])]]
    parts += [[meta["cue"], meta["delay"], meta["context"], meta["mapping"],
               meta["congruent"], len(meta["dl"])], meta["dl"], meta["ds"]]
    parts += [[g.integers(0, 1000), g.random()]]
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in parts]).astype("<f8")


def handle(words):
    op, seed = words[0], words[1]
    if op == "npy":
        return npy_record(seed)
    if op == "npz":
        return npz_record(seed)
    if op == "bootstrap":
        return bootstrap(seed, int(words[2]), words[3], words[4], int(words[5]))
    if op == "nullboot":
        return nullboot(int(seed), words[2], words[3], words[4], int(words[5]))
    if op == "adjusted":
        return adjusted(seed, words[2], words[3], int(words[4]), words[5], words[6],
                        float(words[7]), int(words[8]))
    if op == "world_prepare":
        return world_prepare(seed, words[2], int(words[3]), words[4])
    if op == "falandays_construct":
        return falandays_construct(seed, *(int(w) for w in words[2:5]), words[5])
    if op == "sorn_construct":
        return sorn_construct(seed, *(int(w) for w in words[2:5]), words[5])
    if op == "rawkey":
        key = np.array([int(w, 16) for w in words[1:3]], dtype=np.uint64)
        ctr = np.array([int(w, 16) for w in words[3:7]], dtype=np.uint64)
        return np.random.Philox(key=key, counter=ctr).random_raw(int(words[7])).astype("<u8")
    if op == "seedfor":
        root, partition, stream, keys = json.loads(bytes.fromhex(seed).decode("utf-8"))
        payload = seed_for_payload(root, partition, stream, keys)
        digest = hashlib.sha256(payload).digest()
        return np.frombuffer(digest + payload, dtype=np.uint8)
    if op == "ops":
        return run_ops(gen(seed), words[2])
    if op == "raw":
        return np.random.Philox(int(seed, 16)).random_raw(int(words[2])).astype("<u8")
    if op == "seedseq":
        ss = np.random.SeedSequence(int(seed, 16))
        return ss.generate_state(int(words[2]), np.uint32).astype("<u4")
    g = gen(seed)
    if op == "random":
        return g.random(int(words[2])).astype("<f8")
    if op == "normal":
        return g.standard_normal(int(words[2])).astype("<f8")
    if op == "uniform":
        return g.uniform(float(words[2]), float(words[3]), int(words[4])).astype("<f8")
    if op == "integers":
        return g.integers(int(words[2]), int(words[3]), int(words[4]), dtype=np.int64).astype("<i8")
    if op == "integers1":
        lo, hi, n = int(words[2]), int(words[3]), int(words[4])
        return np.array([g.integers(lo, hi) for _ in range(n)], dtype="<i8")
    if op == "permutation":
        return g.permutation(int(words[2])).astype("<i8")
    if op == "shuffle":
        n = int(words[2])
        a = np.arange(n, dtype=np.int64)
        g.shuffle(a)
        b = np.arange(n, dtype=np.int64)
        g.shuffle(b)
        return np.concatenate([a, b]).astype("<i8")
    if op == "choice":
        a = np.arange(int(words[2]), dtype=np.int64)
        return np.array([g.choice(a) for _ in range(int(words[3]))], dtype="<i8")
    if op == "mixed":
        out = []
        for _ in range(int(words[2])):
            out.append(float(g.integers(0, 7)))
            out.append(g.random())
            out.append(g.standard_normal())
            out.append(float(g.integers(0, 2**40)))
        return np.array(out, dtype="<f8")
    if op in ("stats", "data"):
        a = make_data(seed, int(words[2]), words[3])
        if op == "data":
            return a.astype("<f8")
        vals = [np.sum(a), np.mean(a), np.std(a, ddof=0), np.std(a, ddof=1)]
        vals += [np.quantile(a, q) for q in QS]
        return np.array(vals, dtype="<f8")
    raise SystemExit("unknown request " + op)


def main():
    # std with ddof >= n warns on stderr; the value itself is what is compared.
    warnings.simplefilter("ignore", RuntimeWarning)
    with open(sys.argv[1]) as f, open(sys.argv[2], "wb") as out:
        for line in f:
            words = line.split()
            if not words:
                continue
            data = np.ascontiguousarray(handle(words)).tobytes()
            out.write(struct.pack("<Q", len(data)))
            out.write(data)


if __name__ == "__main__":
    main()

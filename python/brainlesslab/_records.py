"""Records from Python: run() writes one, Record reads one.

A Record is opened through the CLI's own inspection (``inspect``): the
manifest is read and every artifact's SHA-256 checked before anything is
read from the directory. Tables come back as NumPy structured arrays, one
field per CSV column, with the column's type: integers as int64, reals as
float64 (NaN where the record has no value), everything else as str.
"""

import csv
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from . import _commands

# The typed columns of the record's CSV tables (docs/records.md,
# spec/platform.md §5.1, §7); the others are text.
_INT_COLUMNS = {"block_id", "trial_id", "completed_ticks", "neural_frames", "scoring_window",
                "round", "tick"}
_REAL_COLUMNS = {"raw", "normalised", "native_score"}


def _column(name, texts):
    if name in _INT_COLUMNS:
        return np.array([int(t) for t in texts], dtype=np.int64)
    if name in _REAL_COLUMNS:
        return np.array([float(t) if t != "" else np.nan for t in texts], dtype=np.float64)
    width = max((len(t) for t in texts), default=1) or 1
    return np.array(texts, dtype=f"U{width}")


def read_table(data, columns=None):
    """A structured array from the bytes of a record CSV (Python's excel
    dialect, header first); `columns` keeps only those, in that order."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    header = next(reader, None)
    if header is None:
        raise ValueError("a record table has no header")
    rows = list(reader)
    for r in rows:
        if len(r) != len(header):
            raise ValueError(f"a record table row has {len(r)} fields, its header {len(header)}")
    names = header if columns is None else [c for c in columns if c in header]
    arrays = [_column(n, [r[header.index(n)] for r in rows]) for n in names]
    out = np.empty(len(rows), dtype=[(n, a.dtype) for n, a in zip(names, arrays)])
    for n, a in zip(names, arrays):
        out[n] = a
    return out


class ProbeEvents:
    """A record's probe events (``--recording probe_events``): ``events``,
    one row per event of data/probe_events.csv (``feature_ids`` as the JSON
    text it is stored as); ``features``, the event's feature vector from
    data/probe_features.npz, one float64 array per event in event order;
    ``trials``, data/probe_trials.csv."""

    __slots__ = ("events", "features", "trials")

    def __init__(self, events, features, trials):
        self.events = events
        self.features = features
        self.trials = trials

    def __len__(self):
        return len(self.events)


class Record:
    """A record directory, verified by the CLI's inspection on opening.

    ``path`` (a Path), ``status`` ("complete", "failed" or "incomplete"),
    ``inspection`` (the inspection map), ``trials`` and ``seeds`` (structured
    arrays of trials.csv and seeds.csv), ``summary`` (summary/summary.json),
    ``probe_events()``, ``replays()`` and ``trials_frame()`` (pandas)."""

    def __init__(self, path):
        self.path = Path(os.fsdecode(path))
        self.inspection = _commands.inspect(self.path)
        self.status = self.inspection["status"]
        self._digests = (self.inspection.get("manifest") or {}).get("artifact_sha256") or {}
        self._cache = {}

    def __repr__(self):
        return f"Record({str(self.path)!r}, status={self.status!r})"

    def __fspath__(self):
        return str(self.path)

    def _artifact(self, rel):
        """The bytes of one artifact the manifest lists (its digest checked
        again, so a file changed since opening is refused)."""
        if rel not in self._digests:
            raise FileNotFoundError(f"{self.path}: the record has no artifact {rel}")
        data = (self.path / rel).read_bytes()
        if hashlib.sha256(data).hexdigest() != self._digests[rel]:
            raise ValueError(f"{self.path}: {rel} does not match the manifest's checksum")
        return data

    def _table(self, rel):
        if rel not in self._cache:
            self._cache[rel] = read_table(self._artifact(rel))
        return self._cache[rel]

    @property
    def trials(self):
        """trials.csv: one row per trial in job order."""
        return self._table("trials.csv")

    @property
    def seeds(self):
        """seeds.csv: one row per (trial, seed stream)."""
        return self._table("seeds.csv")

    @property
    def summary(self):
        """summary/summary.json: summaries, contrasts, timings, metadata."""
        if "summary" not in self._cache:
            self._cache["summary"] = json.loads(self._artifact("summary/summary.json"))
        return self._cache["summary"]

    def trials_frame(self):
        """trials as a pandas DataFrame (pandas is optional)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Record.trials_frame() needs pandas (apt-get install "
                              "python3-pandas); Record.trials is the same table as a NumPy "
                              "structured array") from e
        return pandas.DataFrame(self.trials)

    def probe_events(self):
        """The probe events of a ``--recording probe_events`` record."""
        if "data/probe_events.csv" not in self._digests:
            raise ValueError(f"{self.path}: the record has no probe events "
                             "(run with recording=\"probe_events\")")
        events = read_table(self._artifact("data/probe_events.csv"))
        npz = np.load(io.BytesIO(self._artifact("data/probe_features.npz")), allow_pickle=False)
        with npz:
            features = [np.asarray(npz[name], dtype=np.float64) for name in events["feature_array"]]
        return ProbeEvents(events, features, read_table(self._artifact("data/probe_trials.csv")))

    def replays(self):
        """The replay documents of a ``--recording replay`` record, in the
        order of their files (sorted trial keys), as dicts."""
        names = sorted(rel for rel in self._digests if rel.startswith("replays/"))
        return [json.loads(self._artifact(rel)) for rel in names]


def open_record(path):
    """Record(path): an existing record, verified by inspection."""
    return Record(path)


def run(path, root=None, *, cpu_threads=None, batch_size=None, recording=None,
        calibration=None, backend=None, memory_budget_mib=None, recording_budget_mib=None,
        shard=None):
    """Runs a plan into a new record under `root`, as ``brainlesslab run``
    does with the same options (None: the CLI's default: root "records",
    backend "cpu", batch_size 32, memory_budget_mib 256, recording
    "summary", recording_budget_mib 32, cpu_threads 1; calibration a path or
    a list of paths; shard "K/N" for part K of N, a shard record for merge),
    and returns the Record. A refused plan or option raises
    the CLI's error; Ctrl-C raises KeyboardInterrupt and leaves a FAILED
    record."""
    argv = _commands.run_argv(path, root, backend=backend, batch_size=batch_size,
                              memory_budget_mib=memory_budget_mib, recording=recording,
                              recording_budget_mib=recording_budget_mib,
                              cpu_threads=cpu_threads, calibration=calibration, shard=shard)
    return _record_of(_commands.command(argv))


def merge(shards, root=None):
    """Merges shard records (run(..., shard="K/N"), one per part) into the
    record a single run writes, as ``brainlesslab merge`` does, and returns
    it. A missing, overlapping, foreign, tampered or incomplete shard raises
    the CLI's error and writes nothing."""
    sources = [shards] if isinstance(shards, (str, bytes, os.PathLike)) else list(shards)
    argv = ["merge"]
    if root is not None:
        argv += ["--root", os.fspath(root)]
    argv += ["--"] + [os.fspath(s) for s in sources]
    return _record_of(_commands.command(argv))


def _record_of(result):
    line = json.loads(result.stdout.decode("utf-8"))
    return Record(line["record"])


def decode(record, **options):
    """Offline probe decoding of a probe_events record, as ``brainlesslab
    decode`` (options: points, fit, validation, evaluation, lambdas,
    split_seed, permutation_seed, memory_budget_mib, out): the
    DecoderResult list."""
    argv = _commands.decode_argv(record, **options)
    return json.loads(_commands.command(argv).stdout.decode("utf-8"))

"""Record: an existing record opened through inspection, its tables as
NumPy structured arrays, its probe events and replays."""

import csv
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import brainlesslab
from conftest import assert_same_error

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cli_record(repo, run_cli, tmp_path_factory):
    """A complete record the CLI made."""
    root = tmp_path_factory.mktemp("cli")
    cli = run_cli("run", repo / "plans" / "quick-start.toml", "--root", root)
    assert cli.returncode == 0, cli.stderr
    return Path(json.loads(cli.stdout)["record"])


def test_open_record_reads_a_cli_record(cli_record):
    record = brainlesslab.open_record(cli_record)
    assert isinstance(record, brainlesslab.Record)
    assert record.path == cli_record and record.status == "complete"
    assert record.inspection["checksums_valid"] is True
    with open(cli_record / "trials.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(record.trials) == len(rows) == 128
    assert list(record.trials["trial_id"]) == [int(r["trial_id"]) for r in rows]
    assert record.trials["raw"].tolist() == [float(r["raw"]) for r in rows]
    assert set(record.seeds["stream"]) >= {"world", "construction"}
    assert record.summary == json.loads((cli_record / "summary" / "summary.json").read_text())
    assert str(cli_record) in repr(record)
    # A Record is a path-like: it goes wherever a record path does.
    assert brainlesslab.inspect(record) == record.inspection


def test_missing_reals_are_nan():
    # An empty field (a null) in a real column is NaN; text stays text.
    table = brainlesslab._records.read_table(b"raw,normalised,target_id\r\n1.5,,x\r\n,2,y\r\n")
    assert table.dtype["raw"] == np.float64 and table.dtype["target_id"].kind == "U"
    assert table["raw"][0] == 1.5 and np.isnan(table["raw"][1])
    assert np.isnan(table["normalised"][0]) and table["normalised"][1] == 2.0
    with pytest.raises(ValueError, match="fields"):
        brainlesslab._records.read_table(b"a,b\r\n1\r\n")


def test_trials_frame_is_pandas_or_says_it_needs_pandas(cli_record):
    record = brainlesslab.Record(cli_record)
    if importlib.util.find_spec("pandas") is None:  # the optional extra
        with pytest.raises(ImportError, match="needs pandas"):
            record.trials_frame()
    else:
        frame = record.trials_frame()
        assert list(frame.columns) == list(record.trials.dtype.names)
        assert frame["raw"].tolist() == record.trials["raw"].tolist()


def test_a_changed_artifact_is_refused_on_reading(cli_record, tmp_path):
    copy = tmp_path / cli_record.name
    shutil.copytree(cli_record, copy)
    data = (copy / "seeds.csv").read_bytes()
    (copy / "seeds.csv").write_bytes(data.replace(b"world", b"World", 1))
    record = brainlesslab.Record(copy)
    assert record.status == "incomplete"
    assert record.inspection["invalid_artifacts"] == ["seeds.csv"]
    assert len(record.trials) == 128  # an intact artifact still reads
    with pytest.raises(ValueError, match="seeds.csv does not match the manifest"):
        record.seeds
    with pytest.raises(ValueError, match="no probe events"):
        record.probe_events()
    assert record.replays() == []


def test_open_record_refuses_what_inspect_refuses(tmp_path, run_cli):
    assert_same_error(run_cli("inspect", tmp_path), lambda: brainlesslab.Record(tmp_path))
    assert_same_error(run_cli("inspect", tmp_path / "none"),
                      lambda: brainlesslab.open_record(tmp_path / "none"))


def test_probe_events_features_are_the_npz_arrays(repo, tmp_path):
    record = brainlesslab.run(repo / "tests" / "plans" / "decode-small.toml", tmp_path,
                              recording="probe_events")
    probes = record.probe_events()
    with open(record.path / "data" / "probe_events.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(probes) == len(rows) == len(probes.features) > 0
    assert probes.events.dtype["tick"].kind == "i"
    npz = np.load(record.path / "data" / "probe_features.npz", allow_pickle=False)
    for k in (0, len(rows) // 2, len(rows) - 1):
        name = rows[k]["feature_array"]
        assert probes.events["feature_array"][k] == name
        assert probes.features[k].dtype == np.float64
        assert np.array_equal(probes.features[k], npz[name])
        assert len(probes.features[k]) == len(json.loads(rows[k]["feature_ids"]))
    with open(record.path / "data" / "probe_trials.csv", newline="") as f:
        assert len(probes.trials) == len(list(csv.DictReader(f)))
    assert probes.trials.dtype["native_score"] == np.float64


def test_replays_are_the_replay_documents(tmp_path):
    record = brainlesslab.run(HERE / "plans" / "replay-small.toml", tmp_path, recording="replay")
    replays = record.replays()
    files = sorted((record.path / "replays").glob("*.json"))
    assert len(replays) == len(files) == 8
    for doc, path in zip(replays, files):
        assert doc == json.loads(path.read_text())

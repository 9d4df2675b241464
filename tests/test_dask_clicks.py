"""Click logs counted on a real ``distributed.LocalCluster`` with 2 worker processes (issue 49).

``rankboost.dask.read_click_counts`` over shards of a simulated log (10^5 sessions cut into 7
shards at session ends; and 10^6 sessions as 8 shards simulated on the workers, each its own
seed, as ``benchmarks/bench_dask_clicks.py`` makes them) gives the counts, propensities and
model that the one-machine streaming reader gives for the whole log, bit for bit; glob and
list inputs; an empty glob,
a missing shard and a bad line are clear errors naming the shard (and the line); a worker
killed while it counts a shard is survived with the same counts.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import pickle
import re
import signal
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import rankboost as rb
from conftest import letor_like, two_worker_client

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed")):
    pytest.skip("dask and distributed are not installed", allow_module_level=True)
distributed: Any = None
rbd: Any = None

# the same make-test worker as tests/test_dask.py: one LocalCluster at a time
pytestmark = pytest.mark.xdist_group("dask")

N_SESSIONS = 100_000
N_SHARDS = 7
N_MILLION, N_MILLION_SHARDS = 1_000_000, 8
FIELDS = ("pairs", "n_samples", "n_sessions", "n_entries", "n_clicks", "max_click_position")
ARRAYS = (
    "pair_lower",
    "pair_upper",
    "pair_position",
    "pair_count",
    "cell_row",
    "cell_position",
    "cell_impressions",
    "cell_clicks",
)


@pytest.fixture(scope="module")
def client():
    global distributed, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import distributed

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def split_log(src, dst, n_shards):
    """Cut a log written session by session (the simulator's) into ``n_shards`` files of about
    equal rows, each with the header, never inside a session; their paths."""
    with gzip.open(src, "rb") as fh:
        header, *lines = fh.read().splitlines(keepends=True)
    target = -(-len(lines) // n_shards)
    cuts, at = [0], target
    while at < len(lines):
        key = lines[at - 1].split(b"\t")[0:5:4]  # (qid, session)
        while at < len(lines) and lines[at].split(b"\t")[0:5:4] == key:
            at += 1
        cuts.append(at)
        at += target
    cuts.append(len(lines))
    paths = []
    for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        if hi > lo:
            paths.append(str(dst / f"part-{k:02d}.tsv.gz"))
            with gzip.open(paths[-1], "wb", compresslevel=1) as out:
                out.write(header + b"".join(lines[lo:hi]))
    return paths


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Features, the whole simulated log, its shards (in a folder of their own), and the
    one-machine counts of the whole log."""
    from rankboost.clicks import read_click_counts, simulate_to_file

    tmp = tmp_path_factory.mktemp("clicks")
    X, y, qid = letor_like(n_queries=200, missing=0.0, seed=3)
    docid = np.array([f"d{i}" for i in range(qid.shape[0])])
    whole = tmp / "log.tsv.gz"
    simulate_to_file(whole, y, qid, X[:, 0], N_SESSIONS, docids=docid, random_state=1)
    (tmp / "shards").mkdir()
    paths = split_log(whole, tmp / "shards", N_SHARDS)
    assert len(paths) == N_SHARDS
    one = read_click_counts(whole, qid, docid)
    return X, qid, docid, whole, paths, one


def assert_same_counts(got, want):
    for name in FIELDS:
        assert getattr(got, name) == getattr(want, name), name
    for name in ARRAYS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_glob_of_shards_equals_the_whole_log_on_one_machine(client, shards):
    """Counts, propensities (regression-EM) and the model trained on them: bit for bit."""
    X, qid, docid, _, paths, one = shards
    pattern = os.path.join(os.path.dirname(paths[0]), "part-*.tsv.gz")
    got = rbd.read_click_counts(client, pattern, qid, docid)
    assert got.n_sessions == N_SESSIONS
    assert_same_counts(got, one)
    assert got.source == f"click logs {pattern!r} ({N_SHARDS} shards)"
    dist = rb.RankBoostRanker(n_estimators=5).fit(X, None, clicks=got)
    local = rb.RankBoostRanker(n_estimators=5).fit(X, None, clicks=one)
    np.testing.assert_array_equal(dist.propensity_.values, local.propensity_.values)
    assert dist.model_.to_dict() == local.model_.to_dict()


@pytest.fixture(scope="module")
def million(client, tmp_path_factory):
    """10^6 sessions as 8 shards, simulated as tasks on the workers: shard ``k`` is its share
    of the sessions drawn with seed ``10 + k``, numbered after the previous shards' sessions,
    a header gzip member then a rows member (gzip level 1); the whole log is the header
    member then every shard's rows member (bytes copied). Features, shards, whole log."""
    from rankboost.clicks import simulate_to_file
    from rankboost.clicks._simulate import HEADER

    tmp = tmp_path_factory.mktemp("million")
    X, y, qid = letor_like(n_queries=200, missing=0.0, seed=3)
    docid = np.array([f"d{i}" for i in range(qid.shape[0])])
    share = N_MILLION // N_MILLION_SHARDS
    rows = [tmp / f"rows-{k}.gz" for k in range(N_MILLION_SHARDS)]
    done = [
        client.submit(
            simulate_to_file, str(path), y, qid, X[:, 0], share, docids=docid, random_state=10 + k,
            first_session=k * share, header=False, compresslevel=1, pure=False,
        )
        for k, path in enumerate(rows)
    ]  # fmt: skip
    assert sum(n for n, *_ in client.gather(done)) == N_MILLION
    head = gzip.compress(HEADER, compresslevel=1, mtime=0)
    bodies = [path.read_bytes() for path in rows]
    assert len(set(bodies)) == N_MILLION_SHARDS  # distinct sessions, not copies
    (tmp / "shards").mkdir()
    paths = []
    for k, body in enumerate(bodies):
        paths.append(tmp / "shards" / f"part-{k}.tsv.gz")
        paths[-1].write_bytes(head + body)
    whole = tmp / "whole.tsv.gz"
    whole.write_bytes(head + b"".join(bodies))
    return X, qid, docid, whole, paths


def test_a_million_sessions_as_8_shards_equal_the_whole_log_on_one_machine(
    client, million, monkeypatch
):
    """10^6 sessions: the Dask counts of the shards are the one-machine counts of the whole
    log (streamed: no session comes back, so it is never read whole), and so are the
    propensities and the model."""
    from rankboost.clicks import _stream, read_click_counts

    X, qid, docid, whole, paths = million

    def never(*args, **kwargs):
        raise AssertionError("the whole log was read whole, not streamed")

    with monkeypatch.context() as m:
        m.setattr(_stream, "read_click_log", never)
        one = read_click_counts(whole, qid, docid)
    got = rbd.read_click_counts(client, paths, qid, docid)
    assert got.n_sessions == one.n_sessions == N_MILLION
    assert_same_counts(got, one)
    dist = rb.RankBoostRanker(n_estimators=5).fit(X, None, clicks=got)
    local = rb.RankBoostRanker(n_estimators=5).fit(X, None, clicks=one)
    np.testing.assert_array_equal(dist.propensity_.values, local.propensity_.values)
    assert dist.model_.to_dict() == local.model_.to_dict()


@pytest.mark.parametrize("pairs", ["all_shown", "skip_above"])
def test_list_of_shards_in_any_order(client, shards, pairs):
    """A list (here reversed, one shard given as a path object) sums to the same counts."""
    from pathlib import Path

    from rankboost.clicks import read_click_counts

    _, qid, docid, whole, paths, one = shards
    listed = [Path(paths[-1]), *paths[-2::-1]]
    got = rbd.read_click_counts(client, listed, qid, docid, pairs=pairs)
    want = one if pairs == "all_shown" else read_click_counts(whole, qid, docid, pairs=pairs)
    assert_same_counts(got, want)
    assert got.source == f"click logs {paths[-1]!r} and {N_SHARDS - 1} more"


def test_one_shard_is_the_one_machine_reader(client, shards):
    from rankboost.clicks import read_click_counts

    _, qid, docid, _, paths, _ = shards
    got = rbd.read_click_counts(client, paths[2], qid, docid)
    assert_same_counts(got, read_click_counts(paths[2], qid, docid))


def test_sum_click_counts_refuses_other_rows_or_pairs(shards):
    from rankboost.clicks import read_click_counts
    from rankboost.dask._clicks import sum_click_counts

    _, qid, docid, _, paths, _ = shards
    a = read_click_counts(paths[0], qid, docid)
    b = read_click_counts(paths[1], qid, docid, pairs="skip_next")
    with pytest.raises(ValueError, match=r"skip_next pairs over \d+ rows but .* all_shown"):
        sum_click_counts(a, b)


def _kill_at_first_chunk(marker: str) -> Any:
    """A worker plugin: the worker process that first parses a chunk of a click log SIGKILLs
    itself there, once in the cluster's life (``marker``, created exclusively, says it
    happened). Defined here, after the fixture imported distributed (pickled by value)."""

    class KillAtFirstChunk(distributed.WorkerPlugin):
        def setup(self, worker: Any) -> None:
            from rankboost.clicks import _stream

            feed = _stream._Stream.feed

            def feed_then_die(stream: Any, *args: Any) -> None:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    return feed(stream, *args)
                os.kill(os.getpid(), signal.SIGKILL)  # mid-count: a chunk parsed, not summed
                return None

            _stream._Stream.feed = feed_then_die

    return KillAtFirstChunk()


def test_killed_worker_mid_count(client, shards, tmp_path):
    """kill -9 the worker process counting a shard, after its first chunk is parsed: Dask runs
    the task again (on the restarted worker or the other) and the counts are the same."""
    _, qid, docid, _, paths, one = shards
    marker = str(tmp_path / "killed")
    client.wait_for_workers(2, timeout=60)
    client.register_plugin(_kill_at_first_chunk(marker), name="kill-at-first-chunk")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = rbd.read_click_counts(client, paths, qid, docid)
    finally:
        client.unregister_worker_plugin("kill-at-first-chunk")
    assert os.path.exists(marker)  # a worker was killed
    assert_same_counts(got, one)
    client.wait_for_workers(2, timeout=60)


# ---------------------------------------------------------------------------------------------
# bad input


def test_empty_glob_missing_file_and_bad_paths(client, shards, tmp_path):
    _, qid, docid, _, paths, _ = shards
    with pytest.raises(ValueError, match=r"no file matches '.*nothing-\*\.tsv\.gz'"):
        rbd.read_click_counts(client, str(tmp_path / "nothing-*.tsv.gz"), qid, docid)
    missing = str(tmp_path / "part-99.tsv.gz")
    with pytest.raises(FileNotFoundError, match=rf"click log '{missing}' does not exist"):
        rbd.read_click_counts(client, [paths[0], missing], qid, docid)
    with pytest.raises(ValueError, match=r"paths is empty"):
        rbd.read_click_counts(client, [], qid, docid)
    with pytest.raises(ValueError, match=r"the shard '.*part-00\.tsv\.gz' is given twice"):
        rbd.read_click_counts(client, [paths[0], paths[1], paths[0]], qid, docid)
    with pytest.raises(TypeError, match=r"each entry of paths must be a path .* got int"):
        rbd.read_click_counts(client, [paths[0], 3], qid, docid)
    with pytest.raises(TypeError, match=r"paths must be a path, a glob pattern .* got int"):
        rbd.read_click_counts(client, 3, qid, docid)
    with pytest.raises(ValueError, match=r"pairs must be one of .* got 'nope'"):
        rbd.read_click_counts(client, paths, qid, docid, pairs="nope")


@pytest.mark.parametrize(
    ("line", "bad", "message"),
    [
        (57, b"q\td\t1\t0\n", r"line 57: 4 fields but the header has 6"),
        (4000, None, r"position must be an integer; line 4000 has '1.5'"),
    ],
)
def test_bad_line_names_the_shard_and_the_line(client, shards, tmp_path, line, bad, message):
    """One line of one shard broken: the one-machine reader's one-line error, naming that
    shard's path and the line in it."""
    _, qid, docid, _, paths, _ = shards
    with gzip.open(paths[3], "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    fields = lines[line - 1].split(b"\t")
    lines[line - 1] = bad or b"\t".join([*fields[:2], b"1.5", *fields[3:]])
    broken = str(tmp_path / "part-03.tsv.gz")
    with gzip.open(broken, "wb") as out:
        out.write(b"".join(lines))
    given = [*paths[:3], broken, *paths[4:]]
    with pytest.raises(ValueError, match=rf"^click log '{broken}', {message}|^click log "
                       rf"'{broken}': {message}"):  # fmt: skip
        rbd.read_click_counts(client, given, qid, docid)


def test_what_a_worker_unpickles_imports_no_sklearn(shards):
    """A worker counting a shard imports neither scikit-learn nor the training loop."""
    from rankboost.dask import _clicks

    _, qid, docid, _, paths, _ = shards
    shipped = pickle.dumps([_clicks._count_shard, _clicks.sum_click_counts, paths[0], (qid, docid)])
    probe = (
        "import pickle, sys; count, add, path, rows = pickle.loads(sys.stdin.buffer.read()); "
        "c = count(path, rows, 'all_shown', None, 'rows'); add(c, c); "
        "print(' '.join(m for m in ('sklearn', 'scipy.stats', 'pandas', 'rankboost.engine') "
        "if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", probe], input=shipped, capture_output=True, check=True, env=env
    )
    assert out.stdout.split() == []


# ---------------------------------------------------------------------------------------------
# the command line: train --clicks 'shards/*' --scheduler ADDRESS


def test_train_clicks_on_the_scheduler_is_train_clicks_of_the_whole_log(
    client, shards, tmp_path, capsys
):
    """``train --clicks PATTERN --scheduler ADDRESS`` writes the model ``train --clicks LOG``
    writes from the whole log (the same pairs and propensities)."""
    from rankboost.cli import main
    from rankboost.datasets import dump_svmlight

    X, qid, docid, whole, paths, _ = shards
    data = tmp_path / "train.txt"
    dump_svmlight(data, X, np.zeros(qid.shape[0]), qid, docids=docid)
    pattern = os.path.join(os.path.dirname(paths[0]), "part-*.tsv.gz")
    address = client.scheduler.address
    common = ["train", str(data), "--rounds", "5", "-q"]
    on_cluster = ["--clicks", pattern, "--scheduler", address]
    assert main([*common, *on_cluster, "-o", str(tmp_path / "d.json")]) == 0
    assert "from 100000 sessions" in capsys.readouterr().err
    assert main([*common, "--clicks", str(whole), "-o", str(tmp_path / "o.json")]) == 0
    assert (tmp_path / "d.json").read_bytes() == (tmp_path / "o.json").read_bytes()


def test_train_clicks_on_the_scheduler_bad_input(client, shards, tmp_path, capsys):
    """Exit status 1 and one ``rankboost: error:`` line naming the shard (and line)."""
    from rankboost.cli import main
    from rankboost.datasets import dump_svmlight

    X, qid, docid, _, paths, _ = shards
    data = tmp_path / "train.txt"
    dump_svmlight(data, X, np.zeros(qid.shape[0]), qid, docids=docid)
    address = client.scheduler.address
    out = tmp_path / "m.json"

    def fails(argv, match):
        capsys.readouterr()
        assert main(["train", str(data), *argv, "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith("rankboost: error: ")
        assert "Traceback" not in err
        assert "rankboost.dask" not in err
        assert re.search(match, err), err

    fails(["--scheduler", address], r"--scheduler needs --clicks LOG")
    fails(["--clicks", str(tmp_path / "no-*.tsv.gz"), "--scheduler", address], r"no file matches")
    fails(
        ["--clicks", str(tmp_path / "none.tsv.gz"), "--scheduler", address],
        r"click log '.*none\.tsv\.gz' does not exist",
    )
    with gzip.open(paths[1], "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    lines[9] = b"1\t2\n"
    (tmp_path / "shards").mkdir()
    broken = tmp_path / "shards" / "part-01.tsv.gz"
    with gzip.open(broken, "wb") as fh:
        fh.write(b"".join(lines))
    fails(
        ["--clicks", str(broken), "--scheduler", address],
        rf"click log '{re.escape(str(broken))}', line 10: 2 fields but the header has 6",
    )
    assert not out.exists()

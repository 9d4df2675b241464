"""Bad input raises ValueError/TypeError with a message naming the argument (STYLE rule 2).

The second half holds the non-regression tests of issue 15 (bad input, faults), one per class
and per entry point (Python API and command line).
"""

from __future__ import annotations

import bz2
import copy
import gzip
import json
import lzma
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from conftest import letor_like
from rankboost.cli import main
from rankboost.datasets import dump_svmlight, load_svmlight
from rankboost.fusion import (
    Qrels,
    RankFusion,
    Run,
    read_letor_agg,
    read_qrels,
    read_run,
    write_letor_agg,
    write_qrels,
    write_run,
)
from rankboost.metrics import dcg_score, evaluate, ndcg_score
from rankboost.model import load_model
from test_fusion import _synthetic

X = np.arange(12.0).reshape(6, 2)
Y = np.array([0, 1, 0, 1, 2, 0])
FB = rb.LayeredFeedback(Y)


# --------------------------------------------------------------------------- feedback


@pytest.mark.parametrize(
    ("y", "qid", "error", "match"),
    [
        ([0, 1, np.nan], None, ValueError, r"y contains NaN or infinity \(first at row 2\)"),
        ([0, np.inf, 1], None, ValueError, r"y contains NaN or infinity \(first at row 1\)"),
        ([[0, 1], [1, 0]], None, ValueError, r"y must be 1-D of shape \(n_samples,\)"),
        (["a", "b"], None, TypeError, r"y must be a 1-D array of numbers"),
        ([0, 1, 1], [1, 1], ValueError, r"qid has 2 entries but there are 3 rows"),
        ([0, 1, 1], [[1, 1, 1]] * 2, ValueError, r"qid must be 1-D of shape \(n_samples,\)"),
        ([0, 1], [1.0, np.nan], ValueError, r"qid contains NaN"),
        ([1, 1, 1], None, ValueError, r"y has no crucial pair"),
        ([0, 1, 0, 1], [1, 2, 3, 4], ValueError, r"y has no crucial pair"),
    ],
)
def test_layered_feedback_bad_labels(y, qid, error, match):
    with pytest.raises(error, match=match):
        rb.LayeredFeedback(y, qid)


def test_layered_feedback_bad_normalize():
    with pytest.raises(
        ValueError,
        match=r"'normalize' parameter of LayeredFeedback must be one of .*; got 'queries'",
    ):
        rb.LayeredFeedback([0, 1], normalize="queries")


def test_bipartite_feedback_non_binary():
    with pytest.raises(ValueError, match=r"y must contain only 0 and 1 for BipartiteFeedback"):
        rb.BipartiteFeedback([0, 1, 2])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"pairs": [[0, 1, 2]]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": [0, 1]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": [[0.5, 1.0]]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": np.empty((0, 2), dtype=int)}, ValueError, r"pairs is empty"),
        ({"pairs": [[0, 5]], "n_samples": 3}, ValueError, r"pairs\[0\] = \[0, 5\] is out of range"),
        ({"pairs": [[0, 1], [-1, 1]]}, ValueError, r"pairs\[1\] = \[-1, 1\] is out of range"),
        ({"pairs": [[0, 1], [2, 2]]}, ValueError, r"pairs\[1\] compares row 2 with itself"),
        ({"pairs": [[0, 1]], "weights": [1, 2]}, ValueError, r"weights has 2 entries but pairs"),
        ({"pairs": [[0, 1]], "weights": [np.nan]}, ValueError, r"weights contains NaN or inf"),
        ({"pairs": [[0, 1]], "weights": [np.inf]}, ValueError, r"weights contains NaN or inf"),
        ({"pairs": [[0, 1], [1, 2]], "weights": [1, 0]}, ValueError, r"weights must be positive"),
        ({"pairs": [[0, 1]], "weights": [-2.0]}, ValueError, r"weights\[0\] = .*-2\.0"),
        ({"pairs": [[0, 1]], "n_samples": 2.0}, TypeError, r"n_samples must be an int"),
    ],
)
def test_pair_feedback_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        rb.PairFeedback(**kwargs)


# --------------------------------------------------------------------------- train: X


@pytest.mark.parametrize(
    ("X_bad", "error", "match"),
    [
        (
            np.arange(6.0),
            ValueError,
            r"X must be 2-D of shape \(n_samples, n_features\); got a 1-D",
        ),
        (np.zeros((6, 2, 1)), ValueError, r"X must be 2-D of shape \(n_samples, n_features\)"),
        (np.zeros((6, 0)), ValueError, r"X must have at least one row and one column"),
        (np.array([["a", "b"]] * 6), TypeError, r"X must hold numbers"),
        (np.where(np.eye(6, 2) > 0, np.inf, 0.0), ValueError, r"X contains infinity"),
        (np.zeros((5, 2)), ValueError, r"feedback covers 6 rows but X has 5"),
        ([[1, 2], [3]], TypeError, r"X must be a 2-D array-like of numbers"),
    ],
)
def test_train_bad_X(X_bad, error, match):
    with pytest.raises(error, match=match):
        rb.train(X_bad, FB, 3)


def test_train_bad_feedback_type():
    with pytest.raises(TypeError, match=r"feedback must be a rankboost PairFeedback"):
        rb.train(X, Y, 3)


def test_pair_feedback_wrong_size():
    fb = rb.PairFeedback([[0, 1]], n_samples=2)
    with pytest.raises(ValueError, match=r"feedback covers 2 rows but X has 6"):
        rb.train(X, fb, 3)


# --------------------------------------------------------------------------- train: params


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"n_rounds": 0},
            ValueError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got 0",
        ),
        (
            {"n_rounds": -3},
            ValueError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got -3",
        ),
        (
            {"n_rounds": 2.5},
            TypeError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got 2\.5",
        ),
        (
            {"n_rounds": True},
            TypeError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got True",
        ),
        (
            {"alpha": "newton"},
            ValueError,
            r"'alpha' parameter of rankboost.train must be one of .*; got 'newton'",
        ),
        (
            {"alpha": None},
            ValueError,
            r"'alpha' parameter of rankboost.train must be one of .*; got None",
        ),
        (
            {"weak_ranker": "stump"},
            ValueError,
            r"'weak_ranker' parameter of rankboost.train must be one of .*; got 'stump'",
        ),
        (
            {"alpha": "exact", "weak_ranker": "feature"},
            ValueError,
            r"alpha='exact' needs binary weak rankers .*weak_ranker='feature'",
        ),
        (
            {"alpha": "exact", "weak_ranker": "both"},
            ValueError,
            r"alpha='exact' needs binary weak rankers .*weak_ranker='both'",
        ),
        (
            {"thresholds": 1},
            ValueError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int number of bins",
        ),
        (
            {"thresholds": "every"},
            ValueError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int",
        ),
        (
            {"thresholds": 3.0},
            TypeError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int .*got 3\.0",
        ),
        (
            {"tol": -1.0},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got -1\.0",
        ),
        (
            {"tol": float("nan")},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got nan",
        ),
        (
            {"tol": "small"},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got 'small'",
        ),
        (
            {"positive_cumulative": "yes"},
            TypeError,
            r"'positive_cumulative' parameter of rankboost.train must be True or False",
        ),
        ({"feature_names": ["a"]}, ValueError, r"feature_names has 1 names but X has 2 columns"),
    ],
)
def test_train_bad_params(kwargs, error, match):
    params = {"n_rounds": 3, **kwargs}
    with pytest.raises(error, match=match):
        rb.train(X, FB, **params)


# --------------------------------------------------------------------------- model use


@pytest.fixture(scope="module")
def model():
    return rb.train(np.random.default_rng(0).normal(size=(6, 2)), FB, 3)


def test_predict_wrong_number_of_features(model):
    with pytest.raises(ValueError, match=r"X has 3 features but the model was trained on 2"):
        model.decision_function(np.zeros((4, 3)))


def test_predict_with_infinity(model):
    with pytest.raises(ValueError, match=r"X contains infinity \(first at row 1, column 0\)"):
        model.predict(np.array([[0.0, 1.0], [-np.inf, 0.0]]))


@pytest.mark.parametrize(
    ("n_rounds", "error", "match"),
    [
        (4, ValueError, r"n_rounds must be between 0 and 3"),
        (-1, ValueError, r"n_rounds must be between 0 and 3"),
        (1.0, TypeError, r"n_rounds must be an int or None"),
    ],
)
def test_predict_bad_n_rounds(model, n_rounds, error, match):
    with pytest.raises(error, match=match):
        model.decision_function(np.zeros((2, 2)), n_rounds=n_rounds)


def test_bad_importance_type(model):
    with pytest.raises(ValueError, match=r"importance_type must be 'gain', 'split' or 'alpha'"):
        model.feature_importances("weight")


def test_rloss_bad_scores():
    with pytest.raises(ValueError, match=r"scores must be 1-D with 6 entries"):
        FB.rloss(np.zeros(5))
    with pytest.raises(ValueError, match=r"scores contains NaN \(first at row 0\)"):
        FB.rloss(np.full(6, np.nan))


# --------------------------------------------------------------------------- legal oddities


def test_all_nan_and_constant_features_are_legal_and_never_chosen():
    rng = np.random.default_rng(1)
    n = 40
    y = (rng.random(n) < 0.4).astype(float)
    good = y + rng.normal(scale=0.8, size=n)
    Xo = np.column_stack([np.full(n, np.nan), np.full(n, 2.0), good])
    model = rb.train(Xo, rb.BipartiteFeedback(y), 10, weak_ranker="both")
    assert model.n_rounds == 10
    assert set(model.history["feature"].tolist()) == {2}


# =========================================================================== issue 15
# Nothing lost, nothing leaked: one test per class of the bad-input campaign and per entry
# point it touches (Python API and command line). CLI checks: the exit status and a stderr of
# exactly one line "rankboost: error: ..." with no traceback.

SRC = Path(rb.__file__).resolve().parents[1]


def _cli(capsys, *argv) -> tuple[int, str]:
    """Run ``rankboost ARGV`` in process: ``(exit status, the one stderr line)``."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        status = int(exc.code)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rankboost: error: "), err
    return status, lines[0]


def _subprocess(*argv) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "rankboost", *map(str, argv)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def _damage(data: bytes, how: str) -> bytes:
    """Truncate a compressed stream, or flip bytes in its middle (a corrupt stream)."""
    if how == "truncated":
        return data[: len(data) // 2]
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xFF for b in data[mid : mid + 8]) + data[mid + 8 :]


COMPRESSORS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}
SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A LETOR file, a model trained on it, TREC runs + qrels and a fusion model."""
    tmp = tmp_path_factory.mktemp("issue15")
    rng = np.random.default_rng(15)
    Xd = rng.random((60, 4))
    yd = np.round(2 * Xd[:, 0] + 0.3 * rng.normal(size=60)).clip(0, 2)
    qd = np.repeat(np.arange(6), 10)
    dump_svmlight(tmp / "d.txt", Xd, yd, qd)
    dump_svmlight(tmp / "v.txt", Xd[:30], yd[:30], qd[:30])
    assert (
        main(["train", str(tmp / "d.txt"), "-o", str(tmp / "m.json"), "--rounds", "5", "-q"]) == 0
    )
    runs, qrels = _synthetic(seed=15, n_queries=8, n_docs=12)
    run_paths = []
    for name, r in runs.items():
        run_paths.append(tmp / f"{name}.run")
        write_run(run_paths[-1], r)
    write_qrels(tmp / "qrels.txt", qrels)
    write_letor_agg(tmp / "agg.txt", runs, qrels)
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *map(str, run_paths), "--qrels", str(tmp / "qrels.txt")]  # fmt: skip
    assert main([*argv, "-o", str(tmp / "f.json"), "--rounds", "5"]) == 0
    return tmp, run_paths


# --------------------------------------------------------------------------- 1. output = input


def _links(tmp: Path) -> None:
    for name, target in (("sym.txt", "d.txt"), ("sym.json", "m.json")):
        if not (tmp / name).is_symlink():
            (tmp / name).symlink_to(target)
    if not (tmp / "hard.txt").exists():
        os.link(tmp / "d.txt", tmp / "hard.txt")


OUTPUT_IS_INPUT = [
    (["train", "{d}", "-o", "{d}"], "training file"),
    (["train", "{d}", "-o", "{tmp}/sym.txt"], "training file"),  # a symbolic link to it
    (["train", "{d}", "-o", "{tmp}/hard.txt"], "training file"),  # a hard link to it
    (["train", "{d}", "-o", "{tmp}/./d.txt"], "training file"),  # another spelling
    (["train", "{d}", "--valid", "{tmp}/v.txt", "-o", "{tmp}/v.txt"], "validation file"),
    (["predict", "{m}", "{d}", "-o", "{d}"], "data file"),
    (["predict", "{m}", "{d}", "-o", "{m}"], "model file"),
    (["predict", "{m}", "{d}", "-o", "{tmp}/sym.json"], "model file"),
    (["fuse", "apply", "{f}", "--runs", "{runs}", "-o", "{run1}"], "run file"),
    (["fuse", "apply", "{f}", "--runs", "{runs}", "-o", "{f}"], "fusion model file"),
    (["fuse", "train", "--runs", "{runs}", "--qrels", "{q}", "-o", "{q}"], "qrels file"),
    (["fuse", "train", "--runs", "{runs}", "--qrels", "{q}", "-o", "{run0}"], "run file"),
]


def _expand(argv: list[str], tmp: Path, runs: list[Path]) -> list[str]:
    out: list[str] = []
    for a in argv:
        if a == "{runs}":
            out.extend(map(str, runs))
            continue
        out.append(
            a.format(
                tmp=tmp,
                d=tmp / "d.txt",
                m=tmp / "m.json",
                f=tmp / "f.json",
                q=tmp / "qrels.txt",
                run0=runs[0],
                run1=runs[1],
            )  # fmt: skip
        )
    return out


@pytest.mark.skipif(os.name != "posix", reason="symbolic and hard links")
@pytest.mark.parametrize(("argv", "what"), OUTPUT_IS_INPUT)
def test_issue15_output_that_is_an_input_is_refused(files, capsys, argv, what):
    tmp, runs = files
    _links(tmp)
    args = _expand(argv, tmp, runs)
    before = {p: p.read_bytes() for p in tmp.iterdir() if p.is_file()}
    status, line = _cli(capsys, *args)
    assert status == 2
    assert re.search(rf"is the {what} .*; writing it would destroy the input", line), line
    assert {p: p.read_bytes() for p in tmp.iterdir() if p.is_file()} == before


def test_issue15_output_check_comes_before_reading(files, capsys, tmp_path):
    """A damaged input that is also the output: refused (exit 2) before it is even read."""
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(b"\x1f\x8b not gzip at all")
    status, line = _cli(capsys, "train", bad, "-o", bad)
    assert status == 2
    assert "would destroy the input" in line
    assert bad.read_bytes() == b"\x1f\x8b not gzip at all"


# --------------------------------------------------------------------------- 2. damaged streams


@pytest.fixture(scope="module")
def plain_contents(files):
    tmp, runs = files
    return {
        "letor": (tmp / "d.txt").read_bytes(),
        "run": runs[0].read_bytes(),
        "qrels": (tmp / "qrels.txt").read_bytes(),
        "agg": (tmp / "agg.txt").read_bytes(),
    }


READERS = {
    "letor": load_svmlight,
    "run": read_run,
    "qrels": read_qrels,
    "agg": read_letor_agg,
}


@pytest.mark.parametrize("how", ["truncated", "corrupt"])
@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_issue15_damaged_compressed_file_is_a_value_error(
    plain_contents, tmp_path, reader, kind, how
):
    path = tmp_path / f"input{SUFFIX[kind]}"
    path.write_bytes(_damage(COMPRESSORS[kind](plain_contents[reader]), how))
    with pytest.raises(
        ValueError, match=rf"input{re.escape(SUFFIX[kind])}.*damaged or truncated {kind} data"
    ):
        READERS[reader](path)


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "{bad}", "-o", "{tmp}/out.json"],
        ["predict", "{m}", "{bad}"],
        ["evaluate", "{m}", "{bad}"],
        ["fuse", "evaluate", "--runs", "{bad}", "--qrels", "{q}"],
        ["fuse", "evaluate", "--runs", "{run0}", "--qrels", "{bad}"],
        ["fuse", "train", "--runs", "{run0}", "--qrels", "{bad}", "-o", "{tmp}/out.json"],
    ],
)
def test_issue15_damaged_compressed_file_in_the_cli(files, capsys, tmp_path, argv):
    tmp, runs = files
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress((tmp / "d.txt").read_bytes())[:-40])
    args = [
        a.format(bad=bad, tmp=tmp_path, m=tmp / "m.json", q=tmp / "qrels.txt", run0=runs[0])
        for a in argv
    ]
    status, line = _cli(capsys, *args)
    assert status == 1
    assert re.search(r"bad\.gz.*damaged or truncated gzip data", line), line
    assert not (tmp_path / "out.json").exists()


def test_issue15_damaged_compressed_file_in_a_real_process(files, tmp_path):
    bad = tmp_path / "bad.txt.xz"
    bad.write_bytes(lzma.compress((files[0] / "d.txt").read_bytes())[:100])
    res = _subprocess("train", bad, "-o", tmp_path / "m.json")
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1
    assert "Traceback" not in res.stderr
    assert "damaged or truncated xz data" in res.stderr


# --------------------------------------------------------------------------- 3. integer overflow


LETOR_OVERFLOW = [
    (
        "1 qid:99999999999999999999 1:0.5\n",
        r"line 1: query id 'qid:99999999999999999999' is outside the int64 range "
        r"\[-9223372036854775808, 9223372036854775807\]",
    ),
    (
        "1 qid:1 1:0.5\n0 qid:1 1000000000000:0.5\n",
        r"line 2: feature index 1000000000000 \(token '1000000000000:0.5'\) exceeds the largest "
        r"supported index 2147483647",
    ),
    (
        "1 qid:1 3000000000:1\n",
        r"line 1: feature index 3000000000 .* exceeds the largest supported index 2147483647",
    ),
]


@pytest.mark.parametrize(("text", "match"), LETOR_OVERFLOW)
def test_issue15_letor_integer_overflow_api(tmp_path, text, match):
    path = tmp_path / "big.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"big\.txt.*" + match):
        load_svmlight(path)


@pytest.mark.parametrize(("text", "match"), LETOR_OVERFLOW)
def test_issue15_letor_integer_overflow_cli(tmp_path, capsys, text, match):
    path = tmp_path / "big.txt"
    path.write_text(text)
    status, line = _cli(capsys, "train", path, "-o", tmp_path / "m.json")
    assert status == 1
    assert re.search(match, line), line


def test_issue15_too_wide_dense_matrix_is_a_value_error(tmp_path, monkeypatch):
    """A feature index within the limit whose dense X cannot be allocated: a clear error."""
    path = tmp_path / "wide.txt"
    path.write_text("1 qid:1 1:0.5\n0 qid:1 2000000000:0.5\n")

    def no_memory(shape, dtype=float):
        raise MemoryError("Unable to allocate")

    import rankboost.datasets._svmlight as svm

    monkeypatch.setattr(svm.np, "zeros", no_memory)
    with pytest.raises(ValueError, match=r"wide\.txt.*2 rows x 2000000000 features .*at line 2"):
        load_svmlight(path)


@pytest.mark.parametrize(
    ("reader", "text", "match"),
    [
        (
            read_run,
            "1 Q0 d1 99999999999999999999 1.0 t\n",
            r"rank must be a positive integer \(1 = top\) of at most 2\*\*53",
        ),
        (
            read_qrels,
            "1 0 d1 99999999999999999999\n",
            r"rel '99999999999999999999' is outside the int64 range",
        ),
        (
            read_letor_agg,
            "99999999999999999999 qid:1 1:1 #docid = a\n",
            r"label '99999999999999999999' is outside the int64 range",
        ),
        (
            read_letor_agg,
            "1 qid:1 1:99999999999999999999 #docid = a\n",
            r"rank of ranker 1 must be a positive integer",
        ),
    ],
)
def test_issue15_trec_integer_overflow(tmp_path, reader, text, match):
    path = tmp_path / "f.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"f\.txt:1: " + match):
        reader(path)


# --------------------------------------------------------------------------- 4. model reader


def _model_text(files) -> str:
    return (files[0] / "m.json").read_text()


MALFORMED_JSON = [
    ("[" * 100_000 + "]" * 100_000, r"nested too deeply"),
    ("NF1e999", r"the number 1e999 is beyond the float64 range"),
    ("NFInfinity", r"non-standard JSON constant Infinity"),
    ("NFNaN", r"non-standard JSON constant NaN"),
    ("NF-Infinity", r"non-standard JSON constant -Infinity"),
    ("NF" + "9" * 5000, r"is not valid JSON"),  # beyond Python's int digits limit
    ("\udcff", r"not UTF-8 text"),
]


def _malformed(files, text: str) -> bytes:
    if text.startswith("NF"):
        good = _model_text(files)
        return re.sub(r'"n_features": \d+', f'"n_features": {text[2:]}', good).encode()
    return text.encode("utf-8", "surrogateescape")


@pytest.mark.parametrize(("text", "match"), MALFORMED_JSON)
def test_issue15_malformed_model_json_api(files, tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_bytes(_malformed(files, text))
    with pytest.raises(ValueError, match=match):
        load_model(path)


@pytest.mark.parametrize(("text", "match"), MALFORMED_JSON)
def test_issue15_malformed_model_json_cli(files, capsys, tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_bytes(_malformed(files, text))
    for argv in (["info", path], ["predict", path, files[0] / "d.txt"]):
        status, line = _cli(capsys, *argv)
        assert status == 1
        assert re.search(match, line), line


@pytest.mark.parametrize("text", ["[" * 100_000, '{"n": 1e999}', '{"n": Infinity}'])
def test_issue15_malformed_fusion_model_json(tmp_path, capsys, text):
    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"f\.json is not valid JSON"):
        RankFusion.load(path)


def test_issue15_model_path_is_a_directory(tmp_path, capsys, files):
    with pytest.raises(IsADirectoryError, match=r"model file '.*' is a directory"):
        load_model(tmp_path)
    with pytest.raises(IsADirectoryError, match=r"is a directory"):
        RankFusion.load(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"model file '.*absent\.json' does not exist"):
        load_model(tmp_path / "absent.json")
    status, line = _cli(capsys, "info", tmp_path)
    assert (status, bool(re.search(r"model file '.*' is a directory", line))) == (1, True)
    runs = files[1]
    status, line = _cli(capsys, "fuse", "apply", tmp_path, "--runs", *runs, "-o", tmp_path / "x")
    assert status == 1
    assert "is a directory" in line


def test_issue15_nested_model_in_a_real_process(tmp_path):
    path = tmp_path / "nested.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    res = _subprocess("info", path)
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1
    assert "Traceback" not in res.stderr


# --------------------------------------------------------------------------- 5. tampered models


def _tamper(data: dict, path: str, value) -> dict:
    out = copy.deepcopy(data)
    node = out
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    node[int(last) if isinstance(node, list) else last] = value
    return out


TAMPERED = [
    ("version", 0, r"unknown format version 0"),
    ("version", -1, r"unknown format version -1"),
    ("rounds.alpha.0", "inf", r"rounds.alpha\[0\] is inf; it must be finite"),
    ("rounds.alpha.1", "-inf", r"rounds.alpha\[1\] is -inf; it must be finite"),
    ("rounds.alpha.0", "nan", r"rounds.alpha\[0\] is nan; it must be finite"),
    ("rounds.alpha.0", 1e300, r"the weights \|alpha\| sum to .*; scores would overflow"),
    ("rounds.default.0", 2.0, r"rounds.default\[0\] is 2.0; it must be in \[0, 1\]"),
    ("rounds.feature.0", 10**30, r"rounds.feature\[0\] is 10000000000000000000.*, outside"),
    ("rounds.threshold.0", 10**400, r"rounds.threshold\[0\] is .*, too large"),
    ("feature_names", ["a", "b"], r"feature_names is not a list of 4 strings"),
    ("feature_names", ["a", "b", "c", 4], r"feature_names is not a list of 4 strings"),
    ("n_features", 0, r"n_features is 0, not between 1 and 2147483647"),
    ("n_features", 2**31, r"n_features is 2147483648, not between 1"),
    ("history.r.0", 1.5, r"history.r\[0\] is 1.5; it must be in \[-1, 1\]"),
    ("history.z.0", 0.0, r"history.z\[0\] is 0.0; it must be finite and > 0"),
    ("history.z.0", "inf", r"history.z\[0\] is inf"),
    ("history.rloss.0", -0.5, r"history.rloss\[0\] is -0.5; it must be in \[0, 1\]"),
    ("history.bound.0", "nan", r"history.bound\[0\] is nan"),
    ("best_iteration", 0, r"best_iteration is 0; it must be between 1 and the 5 rounds"),
    ("best_iteration", 6, r"best_iteration is 6; it must be between 1 and the 5 rounds"),
    ("params", {"a": [[[[[[[[[1]]]]]]]]]}, r"params nests deeper than 8 levels"),
    ("stop_reason", [[[[[[[[[[[["deep"]]]]]]]]]]]], r"stop_reason is \[\[\[\[\[\[.*, not a string"),
]  # fmt: skip


@pytest.mark.parametrize(("field", "value", "match"), TAMPERED)
def test_issue15_tampered_model_api(files, tmp_path, field, value, match):
    data = _tamper(json.loads(_model_text(files)), field, value)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"malformed model file: .*" + match):
        load_model(path)


def test_a_perfect_first_round_saves_and_loads(tmp_path):
    """A first round that orders every pair records r = 1 + 4e-16 (a sum of weights in
    floating point): the loader refused the model the engine had just saved. Rounding is
    allowed now; a damaged r (1.5, above) or rloss is still refused."""
    rng = np.random.default_rng(26)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        model = rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(4), 10)), n_rounds=3)
    assert model.history["r"][0] > 1  # what the engine computed, recorded as it is
    model.save(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    data = json.loads((tmp_path / "m.json").read_text())
    for field, value in (("r", 1 + 1e-6), ("r", -1 - 1e-6), ("rloss", 1 + 1e-6)):
        data["history"][field][0] = value
        (tmp_path / "t.json").write_text(json.dumps(data))
        with pytest.raises(ValueError, match=rf"history.{field}\[0\] is {value!r}"):
            load_model(tmp_path / "t.json")
        data["history"][field][0] = model.history[field][0]


@pytest.mark.parametrize(("field", "value", "match"), TAMPERED[:4] + TAMPERED[9:10])
def test_issue15_tampered_model_cli(files, capsys, tmp_path, field, value, match):
    data = _tamper(json.loads(_model_text(files)), field, value)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    for argv in (["info", path], ["evaluate", path, files[0] / "d.txt"]):
        status, line = _cli(capsys, *argv)
        assert status == 1
        assert re.search(match, line), line


def test_issue15_tampered_fusion_model(files, tmp_path):
    data = json.loads((files[0] / "f.json").read_text())
    for field, value, match in [
        ("version", 0, r"version is 0, not an int >= 1"),
        ("version", True, r"version is True"),
        ("list_names", ["a", 1, "c"], r"list_names is not a list of strings"),
        ("params.rank_feature", "log", r"rank_feature 'log'"),
        ("params.alpha", "best", r"The 'alpha' parameter of RankFusion must be one of"),
        ("model.rounds.alpha.0", "inf", r"rounds.alpha\[0\] is inf"),
    ]:
        (tmp_path / "f.json").write_text(json.dumps(_tamper(data, field, value)))
        with pytest.raises(ValueError, match=r"malformed .*" + match):
            RankFusion.load(tmp_path / "f.json")


# --------------------------------------------------------------------------- 6. CLI numbers


NEGATIVE_NUMBERS = [
    (["info", "{m}", "--top", "-1"], r"argument --top: must be an int >= 0; got '-1'"),
    (["info", "{m}", "--head", "-3"], r"argument --head: must be an int >= 0; got '-3'"),
    (["info", "{m}", "--top", "ten"], r"argument --top: must be an int >= 0; got 'ten'"),
    (["predict", "{m}", "{d}", "--rounds", "0"], r"argument --rounds: must be an int >= 1"),
    (["evaluate", "{m}", "{d}", "--rounds", "-2"], r"argument --rounds: must be an int >= 1"),
    (["train", "{d}", "--early-stopping", "0"], r"argument --early-stopping: must be an int >= 1"),
    (["train", "{d}", "--rounds", "-5"], r"argument --rounds: must be an int >= 1; got '-5'"),
    (["train", "{d}", "--learning-rate", "-0.5"], r"argument --learning-rate: must be a float"),
    (["train", "{d}", "--tol", "-1"], r"argument --tol: must be a number >= 0"),
    (["demo", "--fold", "-1"], r"argument --fold: invalid choice"),
    (
        ["fuse", "apply", "{f}", "--runs", "{run0}", "-o", "x", "--depth", "-1"],
        r"argument --depth: must be an int >= 1; got '-1'",
    ),
    (
        ["fuse", "train", "--runs", "{run0}", "--qrels", "{q}", "-o", "x", "--depth", "0"],
        r"argument --depth: must be an int >= 1; got '0'",
    ),
    (
        ["fuse", "train", "--runs", "{run0}", "--qrels", "{q}", "-o", "x", "--n-rounds", "-3"],
        r"argument --n-rounds: must be 'auto' or an int >= 1",
    ),
]


@pytest.mark.parametrize(("argv", "match"), NEGATIVE_NUMBERS)
def test_issue15_cli_numbers_out_of_range_are_usage_errors(files, capsys, argv, match):
    tmp, runs = files
    args = [
        a.format(m=tmp / "m.json", d=tmp / "d.txt", f=tmp / "f.json", q=tmp / "qrels.txt",
                 run0=runs[0])
        for a in argv
    ]  # fmt: skip
    status, line = _cli(capsys, *args)
    assert status == 2
    assert re.search(match, line), line


@pytest.mark.parametrize(
    ("argv", "ranges"),
    [
        (["info"], ["--top N", "an int >= 0", "--head N"]),
        (["fuse", "apply"], ["an int >= 1"]),
        (["fuse", "train"], ["an int >= 1"]),
    ],
)
def test_issue15_numeric_ranges_are_documented_in_help(capsys, argv, ranges):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for text in ranges:
        assert text in out


# --------------------------------------------------------------------------- 7. mixed qids


MIXED_QIDS = [
    ([1, 1, "1", "1"], r"int at row 0 \(1\), str at row 2 \('1'\)"),
    (["1", "1", 1, 1], r"str at row 0 \('1'\), int at row 2 \(1\)"),
    (np.array([0, 0, "a", "a"], dtype=object), r"int at row 0 \(0\), str at row 2 \('a'\)"),
    (np.array(["a", "a", 0, 0], dtype=object), r"str at row 0 \('a'\), int at row 2 \(0\)"),
    ([1.5, 1.5, "x", "x"], r"float at row 0 \(1.5\), str at row 2"),
    ([None, None, 1, 1], r"NoneType at row 0 \(None\), int at row 2"),
]


@pytest.mark.parametrize(("qid", "match"), MIXED_QIDS)
def test_issue15_mixed_query_ids_feedback(qid, match):
    with pytest.raises(TypeError, match=r"qid mixes query ids of different types \(" + match):
        rb.LayeredFeedback([0, 1, 0, 1], qid=qid)


@pytest.mark.parametrize(("qid", "match"), MIXED_QIDS[:4])
def test_issue15_mixed_query_ids_metrics_and_estimator(qid, match):
    with pytest.raises(TypeError, match=match):
        evaluate([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], qid, metrics=["ndcg@10"])
    with pytest.raises(TypeError, match=match):
        rb.RankBoostRanker(n_estimators=2).fit(np.eye(4), [0, 1, 0, 1], qid=qid)


@pytest.mark.parametrize(
    "qid",
    [[1, 1, 2.0, 2.0], ["a", "a", "b", "b"], np.array(["a", "a", "b", "b"], dtype=object)],
)
def test_issue15_one_type_of_query_id_is_fine(qid):
    assert rb.LayeredFeedback([0, 1, 0, 1], qid=qid).n_queries == 2


# --------------------------------------------------------------------------- 8. metric overflow


def test_issue15_exp2_gain_label_limit():
    match = r"gain='exp2' needs relevance labels y_true <= 31 .*got a maximum of 2000.0"
    with pytest.raises(ValueError, match=r"ndcg_score with " + match):
        ndcg_score([2000, 0, 1], [3, 2, 1])
    with pytest.raises(ValueError, match=r"dcg_score with " + match):
        dcg_score([2000, 0, 1], [3, 2, 1])
    with pytest.raises(ValueError, match=match):
        evaluate([2000, 0, 1], [3, 2, 1], metrics=["ndcg@10"])
    # at the limit the gain is exact and finite; gain="linear" takes any label
    assert np.isfinite(ndcg_score([31, 0, 1], [3, 2, 1]))
    assert np.isfinite(
        evaluate([2000, 0, 1], [3, 2, 1], metrics=["ndcg@10"], gain="linear")["ndcg@10"]
    )


def test_issue15_exp2_gain_label_limit_cli(files, capsys, tmp_path):
    path = tmp_path / "big_labels.txt"
    dump_svmlight(path, np.random.default_rng(0).random((6, 4)), [2000, 0, 1, 0, 3, 1], [1] * 6)
    status, line = _cli(capsys, "evaluate", files[0] / "m.json", path, "--metric", "ndcg@10")
    assert status == 1
    assert "needs relevance labels y_true <= 31" in line


# --------------------------------------------------------------------------- warnings, exit codes


def test_issue15_cli_warnings_are_one_readable_line(files, capsys, tmp_path):
    tmp, runs = files
    qrels = read_qrels(tmp / "qrels.txt")
    keep = qrels.qid != qrels.qid[0]  # one query of the runs is no longer judged
    write_qrels(tmp_path / "q.txt", Qrels(qrels.qid[keep], qrels.docid[keep], qrels.rel[keep]))
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *map(str, runs), "--qrels", str(tmp_path / "q.txt")]  # fmt: skip
    assert main([*argv, "-o", str(tmp_path / "f.json"), "--rounds", "3", "-q"]) == 0  # no bar
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == len(runs)
    for line in lines:
        assert line.startswith("rankboost: warning: run ")
        assert "queries are not in the qrels" in line
        assert "FusionWarning" not in line
        assert ".py:" not in line


def test_issue15_unknown_metric_is_a_usage_error_everywhere(files, capsys):
    tmp, runs = files
    status, line = _cli(capsys, "evaluate", tmp / "m.json", tmp / "d.txt", "--metric", "ndgc@10")
    assert status == 2
    assert "Unknown metric 'ndgc@10'" in line
    argv = ["fuse", "evaluate", "--runs", *runs, "--qrels", tmp / "qrels.txt"]
    status, line = _cli(capsys, *argv, "--metric", "ndgc@10")
    assert status == 2
    assert "Unknown metric 'ndgc@10'" in line
    status, line = _cli(capsys, "fuse")
    assert status == 2
    assert "rankboost fuse needs a subcommand" in line


def test_ctrl_c_during_training_is_raised_between_rounds():
    """The CLI's SIGINT handler sets a flag; the round-end callback raises. Raised by the
    handler itself, the interrupt could land in a finaliser, where Python ignores it (a CI
    run saw training go on after Ctrl-C). A second Ctrl-C raises at once; the handler is
    restored; a Ctrl-C after the last check still interrupts when the block ends."""
    import signal

    from rankboost.cli._common import interrupt_at_round_end

    reached: list[str] = []

    def one_ctrl_c_then_round_end() -> None:
        with interrupt_at_round_end() as check:
            check(None)  # no Ctrl-C yet: nothing happens
            signal.raise_signal(signal.SIGINT)  # handled: the flag only
            reached.append("after the first Ctrl-C")
            check(None)  # the round ends: raises

    def two_ctrl_c() -> None:
        with interrupt_at_round_end():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)  # the second one raises in the handler
            raise AssertionError("not reached")

    def ctrl_c_after_the_last_check() -> None:
        with interrupt_at_round_end():
            signal.raise_signal(signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)
    for case in (one_ctrl_c_then_round_end, two_ctrl_c, ctrl_c_after_the_last_check):
        with pytest.raises(KeyboardInterrupt):
            case()
        assert signal.getsignal(signal.SIGINT) is before, case.__name__
    assert reached == ["after the first Ctrl-C"]
    X, y, qid = letor_like(n_queries=5, seed=1)
    with interrupt_at_round_end() as check:  # no Ctrl-C: training runs through
        model = rb.train(X, rb.LayeredFeedback(y, qid), 3, callbacks=[check])
    assert model.n_rounds == 3


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_issue15_ctrl_c_exits_130_without_a_partial_file(tmp_path):
    """Ctrl-C (SIGINT) during training: exit status 130, no model and no temp file.

    The signal is sent once the progress bar shows that training has started (not during
    the imports, whatever the machine's load)."""
    import signal

    rng = np.random.default_rng(1)
    X = rng.random((6000, 30))
    dump_svmlight(tmp_path / "big.txt", X, (X[:, 0] * 3).round(), np.repeat(np.arange(300), 20))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    cmd = [
        sys.executable,
        "-m",
        "rankboost",
        "train",
        str(tmp_path / "big.txt"),
        "--rounds",
        "100000",
        "-o",
        str(tmp_path / "m.json"),
        "--progress",
    ]  # fmt: skip  (issue 45: a bar into a pipe only when asked)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    seen = b""
    while b"%|" not in seen:  # the progress bar: training runs (for minutes)
        chunk = proc.stderr.read1(4096)
        assert chunk, seen.decode(errors="replace")  # the process ended early
        seen += chunk
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    err = (seen + rest).decode(errors="replace")
    assert proc.returncode == 130, err
    assert err.replace("\r", "\n").strip().splitlines()[-1] == (
        "rankboost: interrupted; no output file is left half-written"
    )
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


# --------------------------------------------------------------------------- issue 26
def test_issue26_damaged_gzip_to_train_is_one_clean_error(files, capsys, tmp_path):
    """The LETOR-agg sniffing read the damaged stream again and let zlib.error escape."""
    tmp, _ = files
    data = bytearray(gzip.compress((tmp / "d.txt").read_bytes()))
    for i in range(20, len(data) - 20):
        data[i] ^= 0x55
    bad = tmp_path / "d.txt.gz"
    bad.write_bytes(bytes(data))
    status, line = _cli(capsys, "train", bad, "-o", tmp_path / "m.json", "-q")
    assert status == 1
    assert "damaged or truncated gzip data" in line
    from rankboost.fusion import is_letor_agg

    assert is_letor_agg(bad) is False  # no escape from the sniffing itself either


@pytest.mark.parametrize("command", ["train", "fuse train", "fuse apply"])
def test_issue26_missing_output_folder_is_named_never_the_temporary(files, capsys, command):
    tmp, runs = files
    out = tmp / "no" / "such" / "dir" / "out.json"
    argv = {
        "train": ["train", tmp / "d.txt", "--rounds", "2", "-q"],
        "fuse train": [
            "fuse",
            "train",
            "--runs",
            *runs,
            "--qrels",
            tmp / "qrels.txt",
            "--rounds",
            "2",
        ],
        "fuse apply": ["fuse", "apply", tmp / "f.json", "--runs", *runs],
    }[command]
    status, line = _cli(capsys, *argv, "-o", out)
    assert status == 1
    assert "does not exist" in line
    assert str(Path("no", "such", "dir")) in line
    assert ".tmp" not in line


@pytest.mark.parametrize(
    ("run", "match"),
    [
        (Run(["1"], ["d 1"], [1], [1.0]), r"docid 'd 1' .* has whitespace"),
        (Run(["1"], [""], [1], [1.0]), r"docid '' .* is empty"),
        (Run(["#1"], ["d"], [1], [1.0]), r"qid '#1' .* starts with '#'"),
    ],
)
def test_issue26_trec_writers_refuse_ids_a_trec_file_cannot_hold(tmp_path, run, match):
    with pytest.raises(ValueError, match=match):
        write_run(tmp_path / "r.run", run)
    with pytest.raises(ValueError, match=match):
        write_qrels(tmp_path / "q.txt", Qrels(run.qid, run.docid, [1]))
    assert list(tmp_path.iterdir()) == []


def test_issue26_negative_grades_are_not_relevant_as_in_trec_eval(tmp_path, capsys):
    """Qrels documents -2 (TREC spam) as allowed: fuse evaluate and fuse train take it, and
    score it as trec_eval does (a grade <= 0 is not relevant)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    (tmp_path / "a.run").write_text("1 Q0 b 1 3 t\n1 Q0 a 2 2 t\n2 Q0 c 1 3 t\n2 Q0 a 2 1 t\n")
    (tmp_path / "q.txt").write_text("1 0 a 2\n1 0 b -2\n1 0 c 0\n2 0 a 1\n2 0 c -2\n")
    argv = ["fuse", "evaluate", "--runs", str(tmp_path / "a.run"), "--qrels"]
    argv += [str(tmp_path / "q.txt"), "--metric", "ndcg@10", "--metric", "map", "--json"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)[str(tmp_path / "a.run")]
    assert set(got) == {"ndcg@10", "map"}  # both metrics, not the last one only
    qrels = {"1": {"a": 2, "b": -2, "c": 0}, "2": {"a": 1, "c": -2}}
    run = {"1": {"b": 3.0, "a": 2.0}, "2": {"c": 3.0, "a": 1.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert got["map"] == pytest.approx(np.mean([v["map"] for v in ref.values()]))
    # fuse train's --rounds auto scores its inner folds by NDCG@10, which refused -2
    runs, qrels = _synthetic(seed=26, n_queries=6, n_docs=8)
    paths = []
    for name, r in runs.items():
        paths.append(str(tmp_path / f"{name}.run"))
        write_run(paths[-1], r)
    rel = np.where(qrels.rel == 0, -2, qrels.rel)
    write_qrels(tmp_path / "neg.txt", Qrels(qrels.qid, qrels.docid, rel))
    train = ["fuse", "train", "--family", "boost",
             "--runs", *paths, "--qrels", str(tmp_path / "neg.txt")]  # fmt: skip
    train += ["--cv-folds", "2", "--max-rounds", "3", "-o", str(tmp_path / "f.json")]
    assert main(train) == 0


@pytest.mark.parametrize("command", ["evaluate", "fuse evaluate"])
def test_issue26_one_metric_syntax_for_both_evaluate_commands(files, capsys, command):
    tmp, runs = files
    head = (
        ["evaluate", str(tmp / "m.json"), str(tmp / "d.txt")]
        if command == "evaluate"
        else ["fuse", "evaluate", "--runs", str(runs[0]), "--qrels", str(tmp / "qrels.txt")]
    )
    outs = []
    for metrics in (["--metric", "ndcg@10", "map"], ["--metric", "ndcg@10", "--metric", "map"]):
        assert main([*head, *metrics, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        outs.append(out if command == "evaluate" else out[str(runs[0])])
    assert outs[0] == outs[1]
    assert {"ndcg@10", "map"} <= set(outs[0])


def test_issue26_cli_usage_and_hints(files, capsys, tmp_path, monkeypatch):
    tmp, runs = files
    # --early-stopping without --valid: a usage error (2), before reading anything
    status, line = _cli(capsys, "train", tmp / "nothing.txt", "--early-stopping", "3")
    assert status == 2
    assert "--valid" in line
    # no -o and a model.json here: never replaced silently
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.json").write_text("mine\n")
    status, line = _cli(capsys, "train", tmp / "d.txt", "--rounds", "2", "-q")
    assert status == 2
    assert "model.json exists" in line
    assert (tmp_path / "model.json").read_text() == "mine\n"
    # a TREC run given to train, a ranking model given to fuse apply, features to convert
    status, line = _cli(capsys, "train", runs[0], "-o", tmp_path / "x.json", "-q")
    assert status == 1
    assert "looks like a TREC run" in line
    status, line = _cli(
        capsys, "fuse", "apply", tmp / "m.json", "--runs", *runs, "-o", tmp_path / "o"
    )
    assert status == 1
    assert "is a ranking model from 'rankboost train'" in line
    assert "rankboost predict" in line
    status, line = _cli(capsys, "convert", tmp / "d.txt", "--to", "trec", "-o", tmp_path / "c")
    assert status == 1
    assert "is it a feature file" in line


def test_issue26_evaluate_without_qid_says_so_and_query_file_gives_groups(files, capsys, tmp_path):
    tmp, _ = files
    X, y, _ = load_svmlight(tmp / "d.txt")
    dump_svmlight(tmp_path / "noqid.txt", X, y, None)
    (tmp_path / "groups.txt").write_text("10\n" * 6)
    argv = ["evaluate", str(tmp / "m.json"), str(tmp_path / "noqid.txt"), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "has no qid: all rows form one query" in captured.err
    assert "--query-file" in captured.err
    assert main([*argv, "--query-file", str(tmp_path / "groups.txt")]) == 0
    captured = capsys.readouterr()
    assert "no qid" not in captured.err
    assert main(["evaluate", str(tmp / "m.json"), str(tmp / "d.txt"), "--json"]) == 0
    assert json.loads(captured.out) == json.loads(capsys.readouterr().out)  # the same queries


def test_issue26_early_stopping_on_a_set_without_relevant_documents_warns():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), np.tile([0, 1], 20)
    qid = np.repeat(np.arange(4), 10)
    monitor = rb.callback.EvaluationMonitor([(X[:20], np.zeros(20), qid[:20])])
    with pytest.warns(UserWarning, match="no query has two different grades"):
        rb.callback.early_stopping(monitor, 3)
    fine = rb.callback.EvaluationMonitor([(X[:20], y[:20], qid[:20])])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rb.callback.early_stopping(fine, 3)


# ------------------------------------------------- issue 26: a fit that raised leaves no half state


class _Stop(Exception):
    pass


def _raise_at_round_2(env):
    if env.iteration >= 1:
        raise _Stop


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _ranker_case(monkeypatch):
    from rankboost.sklearn import RankBoostRanker

    Xl, yl, ql = letor_like(n_queries=6, seed=26)
    est = RankBoostRanker(n_estimators=3)
    fit = lambda **kw: est.fit(Xl, yl, qid=ql, **kw)  # noqa: E731
    return est, fit, lambda: fit(callbacks=[_raise_at_round_2]), lambda: est.predict(Xl)


def _fusion_case(monkeypatch):
    runs, qrels = _synthetic(seed=26, n_queries=6, n_docs=10)
    est = RankFusion(n_rounds=3, prior="rrf", prior_scale=2.0)  # the prior's scale is state too
    fit = lambda **kw: est.fit(runs, qrels, **kw)  # noqa: E731
    return est, fit, lambda: fit(callbacks=[_raise_at_round_2]), lambda: est.fuse(runs)


def _linear_case(monkeypatch):
    from rankboost.fusion import LinearFusion, linear

    runs, qrels = _synthetic(seed=26, n_queries=6, n_docs=10)
    est = LinearFusion(n_rounds=3)

    def fail():
        monkeypatch.setattr(linear, "boost_path", _interrupt)  # Ctrl-C while boosting
        try:
            est.fit(runs, qrels)
        finally:
            monkeypatch.undo()

    return est, lambda: est.fit(runs, qrels), fail, lambda: est.fuse(runs)


def _recommender_case(mode):
    def case(monkeypatch):
        from rankboost.recommend import RankBoostRecommender, _per_user, _rounds

        rng = np.random.default_rng(26)
        R = rng.integers(1, 6, size=(8, 20)).astype(float)
        R[rng.random(R.shape) < 0.3] = np.nan
        est = RankBoostRecommender(n_estimators=3, mode=mode, feature_users=[4, 5, 6, 7])

        def fail():
            for module in (_per_user, _rounds):  # Ctrl-C while training
                monkeypatch.setattr(module, "train_checked", _interrupt)
            try:
                est.fit(R, target_users=[0, 1])
            finally:
                monkeypatch.undo()

        return est, lambda: est.fit(R, target_users=[0, 1]), fail, lambda: est.recommend(0)

    return case


@pytest.mark.parametrize(
    "case",
    [
        _ranker_case,
        _fusion_case,
        _linear_case,
        _recommender_case("per_user"),
        _recommender_case("pooled"),
    ],
    ids=["RankBoostRanker", "RankFusion", "LinearFusion", "recommender-per_user", "pooled"],
)
def test_issue26_predict_after_a_fit_that_raised_is_not_fitted(monkeypatch, case):
    """scikit-learn's NotFittedError before any fit and after a fit that raised (in a callback,
    or Ctrl-C), also when an earlier fit succeeded: never the old model mixed with the new
    fit's attributes (RankFusion kept the old model_ with prior_scale_ reset to 0)."""
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    est, fit, fail, predict = case(monkeypatch)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        predict()
    for fitted_before in (False, True):
        if fitted_before:
            fit()
            assert len(predict()) > 0
        with pytest.raises((_Stop, KeyboardInterrupt)):
            fail()
        with pytest.raises(NotFittedError, match="not fitted yet"):
            predict()
        if isinstance(est, BaseEstimator):
            with pytest.raises(NotFittedError):
                check_is_fitted(est)


@pytest.mark.parametrize("mode", ["per_user", "pooled"])
def test_issue26_recommender_with_no_item_to_score_answers_empty(mode):
    """No candidate left (none given, or every one rated): an empty answer in both modes, not
    an engine error about an empty X (pooled)."""
    from rankboost.recommend import RankBoostRecommender

    rng = np.random.default_rng(26)
    R = rng.integers(1, 6, size=(8, 20)).astype(float)
    R[0, :10] = np.nan
    rec = RankBoostRecommender(n_estimators=3, mode=mode, feature_users=[4, 5, 6, 7])
    rec.fit(R, target_users=[0, 1])
    assert rec.predict(0, []).shape == (0,)
    assert rec.rank(0, []).shape == (0,)
    items, scores = rec.recommend(0, candidates=[10, 11])  # both rated by user 0
    assert items.shape == scores.shape == (0,)


def test_issue26_negative_grades_in_linear_fusion_and_auto_rounds(tmp_path, capsys):
    """fuse train --family linear refused -2 (its inner folds scored NDCG on the raw grade);
    every judged document of these runs is 0, 1 or 2, so writing 0 as -2 keeps the order of
    the grades and, scored as trec_eval does (-2 not relevant), the same model and curves."""
    from rankboost.fusion import LinearFusion

    runs, qrels = _synthetic(seed=26, n_queries=8, n_docs=10)
    neg = Qrels(qrels.qid, qrels.docid, np.where(qrels.rel == 0, -2, qrels.rel))
    a, b = LinearFusion().fit(runs, qrels), LinearFusion().fit(runs, neg)
    assert np.array_equal(a.cv_results_["mean"], b.cv_results_["mean"])
    assert np.array_equal(a.weights_, b.weights_)
    a = RankFusion(n_rounds="auto", max_rounds=5, cv_folds=2).fit(runs, qrels)
    b = RankFusion(n_rounds="auto", max_rounds=5, cv_folds=2).fit(runs, neg)
    assert np.array_equal(a.cv_results_["mean"], b.cv_results_["mean"])
    paths = []
    for name, r in runs.items():
        paths.append(str(tmp_path / f"{name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "neg.txt", neg)
    argv = ["fuse", "train", "--family", "linear", "--runs", *paths, "--qrels"]
    assert main([*argv, str(tmp_path / "neg.txt"), "-o", str(tmp_path / "l.json")]) == 0


def test_issue26_early_stopping_without_relevant_documents_warns_at_every_entry_point(
    files, capsys, tmp_path
):
    """The estimator's eval_set and the CLI's --valid go through the same warning."""
    from rankboost.sklearn import RankBoostRanker

    tmp, _ = files
    data = load_svmlight(tmp / "d.txt")
    zeros = np.zeros_like(data.y)
    est = RankBoostRanker(n_estimators=5)
    with pytest.warns(UserWarning, match="no query has two different grades") as seen:
        est.fit(
            data.X,
            data.y,
            qid=data.qid,
            eval_set=[(data.X, zeros)],
            eval_qid=[data.qid],
            early_stopping_rounds=2,
        )
    # at the user's fit line, not inside the package (it pointed at rankboost's own code)
    assert {w.filename for w in seen if "two different" in str(w.message)} == {__file__}
    dump_svmlight(tmp_path / "v0.txt", data.X, zeros, data.qid)
    argv = ["train", str(tmp / "d.txt"), "--valid", str(tmp_path / "v0.txt"), "--rounds", "5"]
    assert main([*argv, "--early-stopping", "2", "-q", "-o", str(tmp_path / "m.json")]) == 0
    assert "no query has two different grades" in capsys.readouterr().err


def test_issue26_judged_query_missing_from_the_run_is_not_silent(tmp_path, capsys):
    """A judged query the run does not return is scored as a random order of its judged
    documents (the candidate set), which trec_eval leaves out: fuse evaluate says so, and
    with the qrels cut to the run's queries the numbers are trec_eval's."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from rankboost.fusion import FusionWarning, evaluate_run

    run = Run(["1", "1", "1", "2"], ["a", "b", "c", "x"], [1, 2, 3, 1], [3.0, 2.0, 1.0, 1.0])
    judged = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"x": 1}}
    qrels = Qrels.from_dict({**judged, "3": {"z": 1, "y": 0}})
    metrics = ["ndcg@10", "map", "p@10", "mrr"]
    with pytest.warns(FusionWarning, match=r"1 judged queries are not in the run \(e.g. '3'\)"):
        evaluate_run(run, qrels, metrics, gain="linear")
    write_run(tmp_path / "s.run", run)
    write_qrels(tmp_path / "q.txt", qrels)
    argv = ["fuse", "evaluate", "--runs", str(tmp_path / "s.run"), "--qrels"]
    assert main([*argv, str(tmp_path / "q.txt"), "--metric", "map"]) == 0
    assert "trec_eval leaves them out" in capsys.readouterr().err
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = evaluate_run(run, Qrels.from_dict(judged), metrics, gain="linear")
    measures = {"ndcg_cut.10", "map", "P.10", "recip_rank"}
    ref = pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(run.to_dict())
    for ours, theirs in zip(metrics, ["ndcg_cut_10", "map", "P_10", "recip_rank"], strict=True):
        assert got[ours] == pytest.approx(np.mean([v[theirs] for v in ref.values()]), abs=1e-12)


def test_issue26_dask_ranker_after_a_fit_that_raised_is_not_fitted():
    """DaskRankBoostRanker: a refit that raises drops the earlier model (no cluster needed:
    the fit raises before it asks for a client)."""
    pytest.importorskip("distributed")
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from rankboost.dask import DaskRankBoostRanker
    from rankboost.sklearn import RankBoostRanker

    Xl, yl, ql = letor_like(n_queries=6, seed=26)
    est = DaskRankBoostRanker(n_estimators=3)
    for k, v in vars(RankBoostRanker(n_estimators=3).fit(Xl, yl, qid=ql)).items():
        if k.endswith("_"):
            setattr(est, k, v)  # a fitted DaskRankBoostRanker, as to_local copies it back
    check_is_fitted(est)
    # issue 49: init_score is supported on Dask; with eval_set it is refused, as in memory
    with pytest.raises(ValueError, match="init_score= with eval_set="):
        est.fit(Xl, yl, qid=ql, init_score=np.zeros(len(yl)), eval_set=[(Xl, yl)])
    with pytest.raises(NotFittedError):
        est.predict(Xl)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


@pytest.mark.parametrize("mode", ["per_user", "pooled"])
def test_issue26_recommend_all_with_k_above_the_item_count(mode):
    """k larger than the catalogue: rows of every item (as recommend gives), not a
    (n_users, k) array padded up to k (k=10**12 asked for terabytes)."""
    from rankboost.recommend import RankBoostRecommender

    rng = np.random.default_rng(26)
    R = rng.integers(1, 6, size=(8, 20)).astype(float)
    R[0, :10] = np.nan
    rec = RankBoostRecommender(n_estimators=3, mode=mode, feature_users=[4, 5, 6, 7])
    rec.fit(R, target_users=[0, 1])
    users, items, scores = rec.recommend_all(k=10**12)
    assert items.shape == scores.shape == (2, 20)
    for row, user in enumerate(users.tolist()):
        top, top_scores = rec.recommend(user, k=10**12)
        assert items[row, : len(top)].tolist() == top.tolist()
        np.testing.assert_array_equal(scores[row, : len(top)], top_scores)
        assert (items[row, len(top) :] == -1).all()

"""Fuzzing every reader (issue 15): each outcome is a parsed result or a clear error.

Readers: LETOR/SVMlight (``load_svmlight``), TREC runs (``read_run``), qrels
(``read_qrels``), LETOR 4.0 aggregation (``read_letor_agg``), model JSON (``load_model``,
versions 1 and 2, and ``RankFusion.load``), and damaged gzip / bzip2 / xz streams of all of
them. The documented outcomes are the parsed object or a ``ValueError`` whose message names
the file; any other exception (``OverflowError``, ``RecursionError``, ``zlib.error``,
``EOFError``, ``IndexError``, ...) fails the test. A model that loads must also score finite
numbers, print its ``rankboost info`` and save back to the same model.

Hypothesis runs derandomized (the same examples on every run) with a modest number of
examples, so the whole file stays within a few seconds.
"""

from __future__ import annotations

import bz2
import contextlib
import copy
import gzip
import io
import json
import lzma
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankboost as rb
from conftest import two_round_model
from rankboost.cli import main
from rankboost.clicks import read_click_log
from rankboost.datasets import dump_svmlight, load_feature_names, load_query_file, load_svmlight
from rankboost.fusion import RankFusion, read_letor_agg, read_qrels, read_run
from rankboost.model import RankBoostModel, load_model

FUZZ = settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _outcome(read, path: Path, data: bytes, *, names_file: bool = True) -> Any:
    """Write ``data`` to ``path`` and read it: the result, or None for a clear ValueError."""
    path.write_bytes(data)
    try:
        return read(path)
    except ValueError as exc:
        message = str(exc)
        assert len(message) > 20, message  # a sentence, not a bare token
        if names_file:
            assert path.name in message, message
        return None


JUNK_TOKENS = (
    "99999999999999999999", "-99999999999999999999", "1" + "0" * 30, "qid:99999999999999999999",
    "1000000000000:1", "2147483648:0.5", "0:1", "-1:2", "x", "", "nan", "inf", "-inf", "1e999",
    "-1e999", "1e-320", "1,5", "1.5", "qid:", "qid:x", ":", "1:", ":1", "NULL", "#", "Q0", "\x00",
)  # fmt: skip


@st.composite
def _mutated(draw, line: st.SearchStrategy[str], rate: int) -> str:
    """A line of the format; at ``rate`` 1 or 2, sometimes one token replaced, dropped or
    doubled, or the whole line replaced by arbitrary text (rate 0: a valid line)."""
    if rate == 0:
        return draw(line)
    if draw(st.integers(0, 10 * rate)) == 0:
        return draw(st.text(max_size=12))
    tokens = draw(line).split(" ")
    counts = [0, 0, 0, 0, 0, 0, 1, 2] if rate == 1 else [0, 0, 0, 1, 1, 2]
    for _ in range(draw(st.sampled_from(counts))):
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.sampled_from(["replace", "replace", "drop", "double"]))
        if how == "replace":
            tokens[i] = draw(st.sampled_from(JUNK_TOKENS) | st.text(max_size=4))
        elif how == "drop" and len(tokens) > 1:
            del tokens[i]
        else:
            tokens.insert(i, tokens[i])
    return draw(st.sampled_from([" ", "\t"])).join(tokens)


def _document(line: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """A file of such lines: valid, lightly or heavily damaged (``rate`` 0, 1, 2)."""
    return st.sampled_from([0, 1, 1, 2]).flatmap(
        lambda rate: st.builds(
            lambda ls, nl: nl.join(ls).encode("utf-8", "surrogatepass"),
            st.lists(_mutated(line, rate), min_size=0, max_size=10),
            st.sampled_from(["\n", "\n", "\r\n"]),
        )
    )


# --------------------------------------------------------------------------- LETOR/SVMlight


def _usually(common: st.SearchStrategy[Any], *rare: Any) -> st.SearchStrategy[str]:
    """``common`` 9 times in 10, else one of the ``rare`` edge values (as text)."""
    return st.integers(0, 9).flatmap(lambda i: st.sampled_from(rare) if i == 0 else common.map(str))


INT_EDGES = ("99999999999999999999", "-9223372036854775809", "9223372036854775807", "1.5")
INDEX_EDGES = ("2147483648", "3000000000", "1000000000000", "0", "-1")
FLOAT_EDGES = ("nan", "inf", "-inf", "1e999", "-1e999", "1e-320", "-0")


@st.composite
def _letor_line(draw) -> str:
    label = draw(_usually(st.integers(0, 4), *FLOAT_EDGES, "99999999999999999999"))
    qid = draw(_usually(st.integers(0, 3), *INT_EDGES))
    idx = sorted(draw(st.sets(st.integers(1, 8), max_size=5)))
    value = _usually(st.floats(-1e6, 1e6).map(repr), *FLOAT_EDGES)
    feats = [f"{draw(_usually(st.just(i), *INDEX_EDGES))}:{draw(value)}" for i in idx]
    comment = draw(st.sampled_from(["", "#docid = d1", "#docid = d2 x = 1", "# junk"]))
    return " ".join([label, f"qid:{qid}", *feats, comment]).strip()


def _check_dataset(ds: Any) -> None:
    assert ds.X.ndim == 2
    assert ds.X.shape[0] == ds.y.shape[0] >= 1
    assert ds.qid is None or ds.qid.shape == ds.y.shape


@FUZZ
@given(data=_document(_letor_line()))
def test_fuzz_letor_reader(folder, data):
    ds = _outcome(load_svmlight, folder / "fuzz.txt", data)
    if ds is not None:
        _check_dataset(ds)


# --------------------------------------------------------------------------- TREC

QIDS = st.sampled_from(["1", "2", "q1"])
DOCS = st.integers(0, 500).map(lambda j: f"d{j}")


@st.composite
def _run_line(draw) -> str:
    score = draw(_usually(st.floats(-1e6, 1e6).map(repr), *FLOAT_EDGES))
    rank = draw(_usually(st.integers(1, 20), *INT_EDGES, "0"))
    return f"{draw(QIDS)} Q0 {draw(DOCS)} {rank} {score} tag"


@FUZZ
@given(data=_document(_run_line()))
def test_fuzz_trec_run_reader(folder, data):
    run = _outcome(read_run, folder / "fuzz.run", data)
    if run is not None:
        assert len(run) >= 1
        assert np.isfinite(run.score).all()
        assert (run.rank >= 1).all()


@st.composite
def _qrels_line(draw) -> str:
    return f"{draw(QIDS)} 0 {draw(DOCS)} {draw(_usually(st.integers(-1, 4), *INT_EDGES))}"


@FUZZ
@given(data=_document(_qrels_line()))
def test_fuzz_qrels_reader(folder, data):
    qrels = _outcome(read_qrels, folder / "fuzz.qrels", data)
    if qrels is not None:
        assert len(qrels) >= 1


@st.composite
def _agg_line(draw) -> str:
    rank = _usually(st.sampled_from(["NULL", "1", "2", "3", "7"]), *INT_EDGES, "0")
    slots = " ".join(f"{j + 1}:{draw(rank)}" for j in range(3))
    label = draw(_usually(st.integers(0, 2), *INT_EDGES))
    return f"{label} qid:{draw(QIDS)} {slots} #docid = {draw(DOCS)}"


@FUZZ
@given(data=_document(_agg_line()))
def test_fuzz_letor_agg_reader(folder, data):
    agg = _outcome(read_letor_agg, folder / "fuzz.agg", data)
    if agg is not None:
        assert agg.ranks.shape[0] == agg.labels.shape[0] >= 1


# --------------------------------------------------------------------------- damaged streams


@pytest.fixture(scope="module")
def valid_files(folder) -> dict[str, bytes]:
    rng = np.random.default_rng(3)
    X = rng.random((40, 3))
    dump_svmlight(folder / "ok.txt", X, (X[:, 0] * 3).round(), np.repeat(np.arange(4), 10))
    run = "".join(f"{q} Q0 d{j} {j + 1} {10.0 - j!r} t\n" for q in range(4) for j in range(8))
    qrels = "".join(f"{q} 0 d{j} {j % 3}\n" for q in range(4) for j in range(8))
    agg = "".join(
        f"{j % 3} qid:{q} 1:{j + 1} 2:{'NULL' if j % 4 == 0 else 8 - j} #docid = d{j}\n"
        for q in range(4)
        for j in range(8)
    )
    clicks = "qid\tdocid\tposition\tclick\n" + "".join(
        f"{q}\td{j}\t{j + 1}\t{int(j == q)}\n" for q in range(4) for j in range(8)
    )
    return {
        "letor": (folder / "ok.txt").read_bytes(),
        "run": run.encode(),
        "qrels": qrels.encode(),
        "agg": agg.encode(),
        "names": "".join(f"feature_{i}\n" for i in range(60)).encode(),
        "query": b"10\n" * 4,
        "clicks": clicks.encode(),
    }


READERS = {
    "letor": load_svmlight,
    "run": read_run,
    "qrels": read_qrels,
    "agg": read_letor_agg,
    "names": load_feature_names,
    "query": load_query_file,
    "clicks": read_click_log,
}
COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@st.composite
def _damage(draw, data: bytes) -> bytes:
    how = draw(st.sampled_from(["truncate", "flip", "insert", "tail"]))
    n = len(data)
    if how == "truncate":
        return data[: draw(st.integers(0, n - 1))]
    if how == "tail":  # trailing garbage after a complete stream
        return data + draw(st.binary(min_size=1, max_size=16))
    pos = draw(st.integers(0, n - 1))
    if how == "insert":
        return data[:pos] + draw(st.binary(min_size=1, max_size=8)) + data[pos:]
    count = draw(st.integers(1, 8))
    mask = draw(st.binary(min_size=count, max_size=count))
    chunk = bytes(b ^ (m or 1) for b, m in zip(data[pos : pos + count], mask, strict=False))
    return data[:pos] + chunk + data[pos + len(chunk) :]


@FUZZ
@given(reader=st.sampled_from(sorted(READERS)), kind=st.sampled_from(sorted(COMPRESS)),
       data=st.data())  # fmt: skip
def test_fuzz_damaged_compressed_streams(folder, valid_files, reader, kind, data):
    packed = COMPRESS[kind](valid_files[reader])
    damaged = data.draw(_damage(packed))
    out = _outcome(READERS[reader], folder / f"damaged.{kind}", damaged)
    if out is not None and reader == "letor":
        _check_dataset(out)


# --------------------------------------------------------------------------- model JSON


@pytest.fixture(scope="module")
def model_dicts() -> list[dict]:
    """A mixed (threshold + real-valued) model with early stopping, as v2 and as v1."""
    import test_model_io as tmio

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=120) > 0).astype(int)
    model = rb.train(X, rb.BipartiteFeedback(y), 12, weak_ranker="both", thresholds=8)
    model.best_iteration = 7
    model.feature_names = ["a", "b", "c"]
    return [model.to_dict(), tmio.to_v1(model)]


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            out += _paths(v, (*prefix, i))
    return out


JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 20),
        st.sampled_from([2**31, 2**63, -(2**63) - 1, 10**30, 10**400]),
        st.floats(),  # NaN and +-inf: json.dumps writes the tokens NaN and Infinity
        st.sampled_from(["nan", "inf", "-inf", "threshold", "feature", "x", "", "1"]),
    ),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=2),
    max_leaves=6,
)

TEXT_EDITS = [
    lambda t: t[: len(t) // 2],
    lambda t: t.replace('"n_features": 3', '"n_features": 1e999', 1),
    lambda t: t.replace('"best_iteration": 7', '"best_iteration": Infinity', 1),
    lambda t: t.replace('"best_iteration": 7', '"best_iteration": NaN', 1),
    lambda t: t.replace('"params": {', '"params": {"x": ' + "[" * 5000 + "]" * 5000 + ",", 1),
    lambda t: "[" * 50_000 + t,
    lambda t: t.replace("0.", "9" * 5000 + ".", 1),
]


def _similar(value: Any) -> st.SearchStrategy[Any]:
    """A value of the same JSON type as ``value`` (a tampered but well-typed field)."""
    if isinstance(value, bool):
        return st.booleans()
    edges = st.sampled_from([math.inf, -math.inf, math.nan, 1e300, 10**30, 1.5])
    if isinstance(value, int):
        return st.integers(-2, 30) | edges
    if isinstance(value, float):
        return st.floats(-1e3, 1e3) | st.sampled_from(["inf", "-inf", "nan", 1e-310]) | edges
    if isinstance(value, str):
        return st.sampled_from([value, "nan", "inf", "threshold", "feature", ""])
    if isinstance(value, list):
        return st.sampled_from([value[:-1], value + value[-1:], []])
    return JSON_VALUES


@st.composite
def _mutated_model(draw, dicts: list[dict]) -> str:
    data = copy.deepcopy(draw(st.sampled_from(dicts)))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        path = draw(st.sampled_from(_paths(data)[1:]))
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["similar", "similar", "set", "delete"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "similar":
            parent[path[-1]] = draw(_similar(parent[path[-1]]))
        else:
            parent[path[-1]] = draw(JSON_VALUES)
        if not _paths(data)[1:]:
            break
    text = json.dumps(data)
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from(TEXT_EDITS))(text)
    return text


def _check_loaded(model: RankBoostModel, path: Path) -> None:
    """A model that loads scores finite numbers, prints its info and saves back the same."""
    n = model.n_features
    if n <= 64:
        X = np.random.default_rng(0).normal(size=(16, n)) * 10
        X[::3, :] = np.nan
        assert np.isfinite(model.decision_function(X)).all()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(["info", str(path), "--head", "0", "--top", "0"]) == 0, err.getvalue()
    model.save(path.with_suffix(".again.json"))
    assert load_model(path.with_suffix(".again.json")) == model


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_fuzz_model_json(folder, model_dicts, data):
    text = data.draw(_mutated_model(model_dicts))
    path = folder / "model.json"
    # NOTE: load_model's messages start "malformed model file: ..." (the CLI adds the path)
    model = _outcome(load_model, path, text.encode(), names_file=False)
    if model is not None:
        _check_loaded(model, path)


@pytest.fixture(scope="module")
def fusion_dict() -> dict:
    from test_fusion import _synthetic

    runs, qrels = _synthetic(seed=1, n_queries=6, n_docs=8)
    return RankFusion(n_rounds=6).fit(runs, qrels).to_dict()


@settings(FUZZ, max_examples=100)
@given(data=st.data())
def test_fuzz_fusion_model_json(folder, fusion_dict, data):
    text = data.draw(_mutated_model([fusion_dict]))
    fusion = _outcome(RankFusion.load, folder / "fusion.json", text.encode(), names_file=False)
    if fusion is not None:
        n_lists = fusion.n_lists_
        n_expected = n_lists * (2 if fusion.score_features else 1)
        n_expected += n_lists + 1 if fusion.missing_features else 0
        assert fusion.model_.n_features == n_expected


# ------------------------------------------------------------------ issue 26: the fast path
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _both_parsers(data: bytes) -> tuple[Any, Any]:
    """The numeric arrays of ``data`` by the numpy fast path and by sklearn's parser."""
    from rankboost.datasets import _svmlight as sv

    lines = data.split(b"\n")
    fast = sv._parse_numeric(lines, None)
    try:
        slow = sv._parse_numeric_sklearn(lines, "'x'", None)
    except ValueError:
        slow = None
    return fast, slow


def _assert_same(fast: Any, slow: Any) -> None:
    y1, p1, i1, v1, w1 = fast
    y2, p2, i2, v2, w2 = slow
    assert w1 == w2
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(i1, i2)
    # bit for bit: -0.0 and NaN payloads included
    np.testing.assert_array_equal(np.asarray(v1).view(np.int64), np.asarray(v2).view(np.int64))
    np.testing.assert_array_equal(np.asarray(y1).view(np.int64), np.asarray(y2).view(np.int64))


@pytest.mark.parametrize(
    "name",
    [
        "letor4/MQ2008/Fold1/test.txt.gz",
        "letor4/MQ2008/Fold1/vali.txt.gz",
        "lightgbm_lambdarank/rank.test.gz",
    ],
)
def test_issue26_fast_svmlight_parser_equals_sklearn_on_the_real_files(name):
    from rankboost.datasets._io import read_bytes

    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared/data)")
    fast, slow = _both_parsers(read_bytes(path, "file")[1])
    assert fast is not None  # these files take the fast path
    _assert_same(fast, slow)


_TOKEN = st.sampled_from(
    ["1", "0", "-0.0", "2.5", "1e-3", "+3", "nan", "inf", "-inf", "1_0", "0x1", "1.", ".5",
     "", ":", "1:", ":1", "1:2:3", "a", "٣", "1e400", "qid:4", "qid:x", "#", "\t", "#docid = D"]
)  # fmt: skip


@FUZZ
@given(
    st.lists(
        st.tuples(
            _TOKEN,
            st.lists(st.tuples(st.integers(-1, 6), _TOKEN), max_size=5),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_issue26_fast_svmlight_parser_accepts_what_sklearn_accepts(rows):
    """On random lines the fast path gives sklearn's arrays, or leaves the file to it."""
    lines = []
    for label, feats, qid in rows:
        parts = [label, *(["qid:7"] if qid else []), *(f"{i}:{v}" for i, v in feats)]
        lines.append(" ".join(parts))
    fast, slow = _both_parsers("\n".join(lines).encode())
    if fast is not None:
        assert slow is not None, lines  # never accepts what sklearn refuses
        _assert_same(fast, slow)


_PLAIN_VALUE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(0, 16)
    .flatmap(lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places))
    .map(str),
    st.from_regex(r"\A-?[0-9]{0,17}\.?[0-9]{0,17}\Z"),
    st.sampled_from(["0", "-0", "-0.0", "1.", ".5", "-.5", "007.50", "9" * 15, "0." + "9" * 15]),
)
_PAIR = st.tuples(
    st.one_of(st.integers(0, 10**19).map(str), st.from_regex(r"\A[0-9]{1,3}\Z")), _PLAIN_VALUE
)


@FUZZ
@given(st.lists(_PAIR, min_size=1, max_size=8))
def test_parse_pairs_is_int_and_float_bit_for_bit(pairs):
    """The all-at-once conversion of index:value tokens gives Python's int() and float() of
    each, bit for bit, or None (then each token is converted on its own)."""
    from rankboost.datasets._pairs import parse_pairs

    tokens = [f"{i}:{v}".encode() for i, v in pairs]
    out = parse_pairs(tokens)
    if out is None:
        return
    expected_values = np.array([float(v) for _, v in pairs])
    assert out[0].tolist() == [int(i) for i, _ in pairs]
    np.testing.assert_array_equal(out[1].view(np.int64), expected_values.view(np.int64))


def test_parse_pairs_takes_the_plain_tokens_and_leaves_the_rest():
    from rankboost.datasets._pairs import parse_pairs

    out = parse_pairs([b"1:0.052893", b"46:-0", b"007:-.5", b"2:1.", b"3:" + b"9" * 15])
    assert out is not None
    assert out[0].tolist() == [1, 46, 7, 2, 3]
    assert [v.hex() for v in out[1].tolist()] == [
        v.hex() for v in (0.052893, -0.0, -0.5, 1.0, 999999999999999.0)
    ]
    for token in [b"1:1e-3", b"1:+3", b"1:nan", b"1:inf", b"1:1_0", b"1:0x1", b"-1:2", b"1:2:3",
                  b"1:", b":1", b"1:-", b"1:.", b"1:2-", b"1:1.2.3", b"1.5:2", b"1:2\x00",
                  b"1:" + b"9" * 16, b"9" * 10 + b":" + b"9" * 9, b"1 :2"]:  # fmt: skip
        assert parse_pairs([b"1:2", token]) is None, token
    assert parse_pairs([]) is None


# ------------------------------------------------- damaged streams, every command (issue 26)


@pytest.fixture(scope="module")
def cli_inputs(folder, valid_files) -> Path:
    """The valid inputs of every command, and a model (from arrays: nothing to train)."""
    tmp = folder / "cli"
    tmp.mkdir()
    for name, data in valid_files.items():
        (tmp / name).write_bytes(data)
    X = np.random.default_rng(26).random((40, 3))
    docids = [f"d{j}" for q in range(4) for j in range(10)]  # the click log's documents
    qid = np.repeat(np.arange(4), 10)
    dump_svmlight(tmp / "letor", X, (X[:, 0] * 3).round(), qid, docids=docids)
    rows = (f"{int(x[0] > 0.5)} 1:{x[0]!r} 2:{x[1]!r} 3:{x[2]!r}\n" for x in X.tolist())
    (tmp / "noqid").write_text("".join(rows))  # no qid: the groups come from the query file
    two_round_model().save(tmp / "m.json")
    return tmp


#: (argv with {bad} for the damaged input, which valid file is damaged)
DAMAGED_COMMANDS = {
    "train": (["train", "{bad}", "-q"], "letor"),
    "train --valid": (["train", "{t}/letor", "--valid", "{bad}", "-q"], "letor"),
    "train --feature-names": (["train", "{t}/letor", "--feature-names", "{bad}", "-q"], "names"),
    "train --query-file": (["train", "{t}/noqid", "--query-file", "{bad}", "-q"], "query"),
    "train --clicks": (["train", "{t}/letor", "--clicks", "{bad}", "-q"], "clicks"),
    "predict": (["predict", "{t}/m.json", "{bad}"], "letor"),
    "evaluate": (["evaluate", "{t}/m.json", "{bad}"], "letor"),
    "convert --to trec": (["convert", "{bad}", "--to", "trec"], "agg"),
    "convert --to trec (features)": (["convert", "{bad}", "--to", "trec"], "letor"),
    "convert --to letor": (["convert", "{bad}", "--to", "letor", "--qrels", "{t}/qrels"], "run"),
    "fuse train": (["fuse", "train", "--runs", "{bad}", "{t}/run", "--qrels", "{t}/qrels"], "run"),
    "fuse evaluate (qrels)": (
        ["fuse", "evaluate", "--runs", "{t}/run", "--qrels", "{bad}"],
        "qrels",
    ),
    "clicks propensity": (["clicks", "propensity", "{bad}"], "clicks"),
    "export --feature-names": (
        ["export", "{t}/m.json", "-f", "xgboost", "--feature-names", "@{bad}"],
        "names",
    ),
}
WRITES = ("train", "predict", "convert", "fuse train", "clicks", "export")


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("command", sorted(DAMAGED_COMMANDS))
def test_issue26_every_command_reports_a_damaged_stream_in_one_line(
    cli_inputs, tmp_path, capsys, command, kind
):
    """Exit 1 (an error in the data), one line naming the file and the compression, no
    traceback, no hint that sends the user elsewhere ('is it a feature file?'), nothing
    written."""
    argv, which = DAMAGED_COMMANDS[command]
    packed = bytearray(COMPRESS[kind](cli_inputs.joinpath(which).read_bytes()))
    middle = len(packed) // 2
    packed[middle : middle + 8] = bytes(b ^ 0x55 for b in packed[middle : middle + 8])
    bad = tmp_path / f"bad.{kind}"
    bad.write_bytes(bytes(packed))
    args = [a.format(bad=bad, t=cli_inputs) for a in argv]
    if command.startswith(WRITES):
        args += ["-o", str(tmp_path / ("out" if "trec" in command else "out.txt"))]
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("rankboost: warning")]
    assert len(lines) == 1, err
    name = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}[kind]
    assert lines[0].startswith("rankboost: error: "), err
    assert f"{str(bad)!r} holds damaged or truncated {name} data" in lines[0], err
    assert "feature file" not in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]


@pytest.mark.parametrize(
    "content", [b"", b"\x00" * 64, bytes(range(256))], ids=["empty", "nul", "binary"]
)
def test_issue26_feature_names_file_that_is_not_text(tmp_path, content):
    """An empty, NUL or binary names file: a ValueError naming it (was a bare
    UnicodeDecodeError, 'utf-8' codec can't decode byte ..., for binary data)."""
    path = tmp_path / "names.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"names\.txt") as err:
        load_feature_names(path, 3)
    assert "codec" not in str(err.value)


def test_issue26_feature_names_file_may_be_compressed(tmp_path):
    path = tmp_path / "names.txt.gz"
    path.write_bytes(gzip.compress(b"# names\nbm25\n\npagerank\n"))
    assert load_feature_names(path, 2) == ["bm25", "pagerank"]

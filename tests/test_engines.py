"""Learned fusion served by real engines: Qdrant (local mode) and Milvus Lite (issue 34).

The tiny collection ``tests/data/engines_tiny.json`` (6 CISI queries, their top BM25 and
dense documents: BM25 sparse vectors and 12-d dense vectors, written by
``python experiments/engine_pipeline.py tiny``) is indexed in each engine; the engine's own
``bm25`` and ``dense`` runs train a linear fusion of every family the engine can express;
``fuse export`` writes the engine's request, and the engine's fused top ``LIMIT`` must equal
``fuse apply``'s ranking of the same runs query by query: ids exactly, scores to 1e-6
relative. Versions: the ``engines`` extra (qdrant-client 1.20, pymilvus 3.0, milvus-lite 3.2).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rankboost.cli import main
from rankboost.fusion import Qrels, Run, write_qrels, write_run
from rankboost.fusion.engines import check_export, compare_served, export_linear
from rankboost.fusion.linear import LinearFusion

DATA = json.loads((Path(__file__).parent / "data" / "engines_tiny.json").read_text())
DEPTH, LIMIT, COLL = 8, 12, "tiny"
FIELDS = ["bm25", "dense"]
DIM = len(next(iter(DATA["docs"].values()))["dense"])
QRELS = Qrels(*map(list, zip(*DATA["qrels"], strict=True)))


# ---------------------------------------------------------------------- the engines
@pytest.fixture(scope="module")
def qdrant():
    pytest.importorskip("qdrant_client", reason="the 'engines' extra is not installed")
    from qdrant_client import QdrantClient, models

    client = QdrantClient(":memory:")
    client.create_collection(
        COLL,
        vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.DOT)},
        sparse_vectors_config={"bm25": models.SparseVectorParams()},
    )
    points = [
        models.PointStruct(id=i, payload={"docid": d},
                           vector={"dense": v["dense"], "bm25": models.SparseVector(**v["bm25"])})
        for i, (d, v) in enumerate(DATA["docs"].items())
    ]  # fmt: skip
    client.upsert(COLL, points)
    yield client
    client.close()


@pytest.fixture(scope="module")
def milvus(tmp_path_factory):
    pytest.importorskip("pymilvus", reason="the 'engines' extra is not installed")
    pytest.importorskip("milvus_lite", reason="the 'engines' extra is not installed")
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "tiny.db"))
    for name, metric in ((COLL, "IP"), ("cosine", "COSINE")):
        schema = client.create_schema(auto_id=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=DIM)
        schema.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
        ip = client.prepare_index_params()
        ip.add_index("dense", index_type="FLAT", metric_type=metric)
        ip.add_index("bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        client.create_collection(name, schema=schema, index_params=ip)
        client.insert(name, [{"id": d, "dense": v["dense"], "bm25": _pairs(v["bm25"])}
                             for d, v in DATA["docs"].items()])  # fmt: skip
    yield client
    client.close()


def _pairs(sp: dict) -> dict[int, float]:
    return dict(zip(sp["indices"], sp["values"], strict=True))


def _qdrant_queries() -> dict:
    return {q: {"dense": v["dense"], "bm25": v["bm25"]} for q, v in DATA["queries"].items()}


def _milvus_queries() -> dict:
    return {q: {"dense": v["dense"], "bm25": _pairs(v["bm25"])} for q, v in DATA["queries"].items()}


@pytest.fixture(scope="module")
def qdrant_runs(qdrant):
    from rankboost.fusion.engines.qdrant import qdrant_run

    qv = _qdrant_queries()
    return [qdrant_run(qdrant, COLL, f, {q: v[f] for q, v in qv.items()}, DEPTH, id_field="docid")
            for f in FIELDS]  # fmt: skip


@pytest.fixture(scope="module")
def milvus_runs(milvus):
    from rankboost.fusion.engines.milvus import milvus_run

    qv = _milvus_queries()
    return [milvus_run(milvus, COLL, f, {q: v[f] for q, v in qv.items()}, DEPTH) for f in FIELDS]


def _train(runs: list[Run], normalizer: str, tmp_path: Path) -> tuple[LinearFusion, list[str]]:
    """``rankboost fuse train --family linear`` on the engine's runs (files named as fields)."""
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "qrels", QRELS)
    model = str(tmp_path / f"{normalizer}.json")
    argv = ["fuse", "train", "--runs", *paths, "--qrels", str(tmp_path / "qrels"), "-o", model,
            "--family", "linear", "--normalizer", normalizer, "--rounds", "5",
            "--prior-scale", "1"]  # fmt: skip
    assert main(argv) == 0
    return LinearFusion.load(model), paths


def _same_top(ours: Run, served: Run, k: int) -> None:
    """Every query: the served top ``k`` ids are fuse apply's, scores to 1e-6 relative (ties
    as sets: :func:`rankboost.fusion.engines.compare_served`)."""
    assert sorted(ours.queries) == sorted(served.queries)
    assert compare_served(ours, served, k) == []


# ---------------------------------------------------------------------- exactness
@pytest.mark.parametrize("normalizer", ["dbsf", "rrf"])
def test_qdrant_serves_what_fuse_apply_ranks(qdrant, qdrant_runs, normalizer, tmp_path) -> None:
    from rankboost.fusion.engines.qdrant import qdrant_fused_run

    trained, paths = _train(qdrant_runs, normalizer, tmp_path)
    # the trained weights, then both lists counting (the formula really sums two scores)
    for weights in (trained.weights_, np.array([0.37, 1.0])):
        model = _model(normalizer, weights.tolist(), trained.list_names_)
        model.save(tmp_path / "m.json")
        out = tmp_path / "request.json"
        argv = ["fuse", "export", str(tmp_path / "m.json"), "--engine", "qdrant",
                "--vectors", *FIELDS, "--rank-window-size", str(DEPTH), "--limit", str(LIMIT),
                "-o", str(out), "--check-runs", *paths]  # fmt: skip
        assert main(argv) == 0
        body = json.loads(out.read_text())
        served = qdrant_fused_run(qdrant, COLL, body, _qdrant_queries(), id_field="docid")
        _same_top(model.fuse(qdrant_runs, match="order"), served, LIMIT)


@pytest.mark.parametrize("normalizer", ["atan", "rrf"])
def test_milvus_serves_what_fuse_apply_ranks(milvus, milvus_runs, normalizer, tmp_path) -> None:
    from rankboost.fusion.engines.milvus import milvus_fused_run

    trained, paths = _train(milvus_runs, normalizer, tmp_path)
    # Milvus's RRFRanker has no weights: only an equal-weight rrf model is exported
    others = [[0.75, 0.75]] if normalizer == "rrf" else [trained.weights_.tolist(), [0.37, 1.0]]
    for weights in others:
        model = _model(normalizer, weights, trained.list_names_)
        model.save(tmp_path / "m.json")
        out = tmp_path / "request.json"
        argv = ["fuse", "export", str(tmp_path / "m.json"), "--engine", "milvus",
                "--vectors", *FIELDS, "--rank-window-size", str(DEPTH), "--limit", str(LIMIT),
                "-o", str(out), "--check-runs", *paths]  # fmt: skip
        assert main(argv) == 0
        body = json.loads(out.read_text())
        served = milvus_fused_run(milvus, COLL, body, _milvus_queries())
        _same_top(model.fuse(milvus_runs, match="order"), served, LIMIT)


def test_qdrant_rrf_needs_k_plus_one(qdrant, qdrant_runs) -> None:
    """Regression: Qdrant's RRF scores position p (from 0) 1 / (k + p), so ours is k + 1."""
    from rankboost.fusion.engines.qdrant import qdrant_fused_run

    lin = _model("rrf", [1.0, 2.0])
    body = export_linear(lin, "qdrant", vectors=FIELDS, rank_window_size=DEPTH, limit=LIMIT)
    assert body["prefetch"][0]["query"] == {"rrf": {"k": 61}}
    body["prefetch"][0]["query"] = body["prefetch"][1]["query"] = {"rrf": {"k": 60}}
    served = qdrant_fused_run(qdrant, COLL, body, _qdrant_queries(), id_field="docid")
    with pytest.raises(AssertionError):
        _same_top(lin.fuse(qdrant_runs, match="order"), served, LIMIT)


def test_milvus_scales_weights_into_its_range(milvus, milvus_runs) -> None:
    """WeightedRanker takes weights in [0, 1]: divided by the largest, scores scaled back."""
    from rankboost.fusion.engines.milvus import milvus_fused_run

    lin = _model("atan", [3.0, 1.5])
    body = export_linear(lin, "milvus", vectors=FIELDS, rank_window_size=DEPTH, limit=LIMIT)
    assert body["rerank"]["params"]["weights"] == [1.0, 0.5]
    assert body["score_scale"] == 3.0
    served = milvus_fused_run(milvus, COLL, body, _milvus_queries())
    _same_top(lin.fuse(milvus_runs, match="order"), served, LIMIT)
    assert check_export(lin, milvus_runs, "milvus", body) == len(DATA["queries"])


# ---------------------------------------------------------------------- bad input
def _model(normalizer: str, weights: list[float], names: list[str] = FIELDS) -> LinearFusion:
    lin = LinearFusion(normalizer=normalizer)
    lin.weights_ = np.asarray(weights, dtype=np.float64)
    lin.list_names_ = list(names)
    lin.n_lists_ = len(names)
    lin.prior_scale_, lin.n_rounds_, lin.cv_results_ = 1.0, 0, None
    return lin


@pytest.mark.parametrize(
    ("engine", "normalizer", "match"),
    [
        ("qdrant", "minmax", "no Qdrant request.*'--normalizer dbsf'"),
        ("qdrant", "atan", "no Qdrant request.*no per-query min/max nor arctan"),
        ("milvus", "minmax", "no Milvus ranker.*'--normalizer atan'"),
        ("milvus", "dbsf", "no Milvus ranker"),
        ("elasticsearch", "dbsf", "elasticsearch normalises with min-max or RRF"),
        ("opensearch", "atan", "opensearch normalises with min-max or RRF"),
    ],
)
def test_families_an_engine_cannot_express_are_refused(engine, normalizer, match) -> None:
    with pytest.raises(ValueError, match=match):
        export_linear(_model(normalizer, [1.0, 2.0]), engine)


def test_milvus_refuses_weighted_rrf() -> None:
    with pytest.raises(ValueError, match="RRFRanker is unweighted.*weights differ.*atan"):
        export_linear(_model("rrf", [1.0, 2.0]), "milvus")


@pytest.mark.parametrize("engine", ["qdrant", "milvus"])
@pytest.mark.parametrize("bad", [float("nan"), -0.5])
def test_nan_or_negative_weights(engine, bad) -> None:
    with pytest.raises(ValueError, match="the engines take finite weights >= 0"):
        export_linear(_model("rrf", [bad, 1.0]), engine)


@pytest.mark.parametrize("engine", ["qdrant", "milvus"])
def test_three_run_model_for_a_two_vector_request(engine) -> None:
    lin = _model("rrf", [1.0, 1.0, 1.0], ["bm25", "dense", "splade"])
    with pytest.raises(ValueError, match="2 (vector names|fields) given .* model of 3 lists"):
        export_linear(lin, engine, vectors=FIELDS)


def test_qdrant_vector_the_collection_lacks_and_dimension(qdrant) -> None:
    from rankboost.fusion.engines.qdrant import qdrant_fused_run

    body = export_linear(_model("dbsf", [1.0, 1.0]), "qdrant", vectors=["bm25", "minilm"])
    queries = {q: {"bm25": v["bm25"], "minilm": v["dense"]} for q, v in _qdrant_queries().items()}
    with pytest.raises(ValueError, match="no vector named 'minilm' .*'dense', 'bm25'.*--vectors"):
        qdrant_fused_run(qdrant, COLL, body, queries)
    body = export_linear(_model("dbsf", [1.0, 1.0]), "qdrant", vectors=FIELDS)
    short = {q: {**v, "dense": v["dense"][:-1]} for q, v in _qdrant_queries().items()}
    with pytest.raises(ValueError, match=f"'dense' has dimension {DIM} but the query vector "
                       f"has {DIM - 1}"):  # fmt: skip
        qdrant_fused_run(qdrant, COLL, body, short)
    with pytest.raises(ValueError, match="no query vector for 'dense'"):
        qdrant_fused_run(qdrant, COLL, body, {q: {"bm25": v["bm25"]}
                                              for q, v in _qdrant_queries().items()})  # fmt: skip


def test_milvus_field_the_collection_lacks_dimension_and_metric(milvus) -> None:
    from rankboost.fusion.engines.milvus import milvus_fused_run

    body = export_linear(_model("atan", [1.0, 1.0]), "milvus", vectors=["bm25", "minilm"])
    queries = {q: {"bm25": v["bm25"], "minilm": v["dense"]} for q, v in _milvus_queries().items()}
    with pytest.raises(ValueError, match="has no field 'minilm'.*--vectors"):
        milvus_fused_run(milvus, COLL, body, queries)
    body = export_linear(_model("atan", [1.0, 1.0]), "milvus", vectors=FIELDS)
    short = {q: {**v, "dense": v["dense"][:-1]} for q, v in _milvus_queries().items()}
    with pytest.raises(ValueError, match=f"'dense' has dimension {DIM} but the query vector "
                       f"has {DIM - 1}"):  # fmt: skip
        milvus_fused_run(milvus, COLL, body, short)
    with pytest.raises(ValueError, match="'dense' is indexed with metric COSINE.*metric_type='IP'"):
        milvus_fused_run(milvus, "cosine", body, _milvus_queries())


def test_qdrant_client_without_the_formula_api(monkeypatch) -> None:
    pytest.importorskip("qdrant_client", reason="the 'engines' extra is not installed")
    from qdrant_client import models

    from rankboost.fusion.engines.qdrant import qdrant_query_args

    body = export_linear(_model("dbsf", [1.0, 1.0]), "qdrant", vectors=FIELDS)
    monkeypatch.delattr(models, "FormulaQuery")
    with pytest.raises(
        ImportError, match=r"lacks FormulaQuery.*pip install 'rankboost\[engines\]'"
    ):
        qdrant_query_args(body, next(iter(_qdrant_queries().values())))


def test_compare_served_catches_a_swap_a_score_and_a_short_list() -> None:
    ours = Run(["q"] * 3, ["a", "b", "c"], [1, 2, 3], [3.0, 2.0, 1.0])
    assert compare_served(ours, Run(["q"] * 2, ["a", "b"], [1, 2], [3.0, 2.0]), 2) == []
    swap = Run(["q"] * 2, ["b", "a"], [1, 2], [3.0, 2.0])
    assert compare_served(ours, swap, 2) == ["query 'q': position 1 serves 'b', not 'a'"]
    off = Run(["q"] * 2, ["a", "b"], [1, 2], [3.0, 2.00001])
    assert compare_served(ours, off, 2) == ["query 'q': position 2 scores 2.00001, not 2.0"]
    short = Run(["q"], ["a"], [1], [3.0])
    assert compare_served(ours, short, 2) == ["query 'q': 1 documents served, not 2"]


@pytest.mark.parametrize(
    ("engine", "normalizer", "weights", "extra", "code", "match"),
    [
        ("qdrant", "minmax", [1.0, 2.0], [], 1, "'--normalizer dbsf'"),
        ("qdrant", "rrf", [1.0, 2.0], ["--vectors", "a", "b", "c"], 1,
         "3 vector names given .* model of 2 lists"),
        ("milvus", "rrf", [1.0, 2.0], [], 1, "RRFRanker is unweighted"),
        ("elasticsearch", "rrf", [1.0, 2.0], ["--vectors", "a", "b"], 2,
         "--vectors names Qdrant's vectors"),
    ],
)  # fmt: skip
def test_cli_export_errors(tmp_path, capsys, engine, normalizer, weights, extra, code, match):
    """One ``rankboost: error:`` line, exit 1 for a model the engine cannot take, 2 for usage."""
    path = tmp_path / "m.json"
    _model(normalizer, weights).save(path)
    out = tmp_path / "o.json"
    assert main(["fuse", "export", str(path), "--engine", engine, "-o", str(out), *extra]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("rankboost: error:"), err
    assert re.search(match, err[0]), err
    assert "Traceback" not in err[0]
    assert not out.exists()


def test_engine_normalisations_by_hand() -> None:
    """dbsf: Qdrant's (sample sd, 0.5 for one or equal scores, no clipping); atan: Milvus's IP."""
    from rankboost.fusion.features import normalise_scores

    run = Run(["a"] * 3 + ["b", "c", "c"], ["x", "y", "z", "x", "x", "y"], [1, 2, 3, 1, 1, 2],
              [3.0, 2.0, 1.0, 5.0, 4.0, 4.0])  # fmt: skip
    # query a: mean 2, sample sd 1 -> (s - (2 - 3)) / 6
    np.testing.assert_allclose(
        normalise_scores(run, "dbsf"), [4 / 6, 3 / 6, 2 / 6, 0.5, 0.5, 0.5], rtol=1e-15
    )
    np.testing.assert_allclose(
        normalise_scores(run, "atan"), 0.5 + np.arctan([3.0, 2, 1, 5, 4, 4]) / np.pi, rtol=1e-15
    )
    with pytest.raises(ValueError, match="method must be one of .*'dbsf', 'atan'"):
        normalise_scores(run, "arctan")


# ---------------------------------------------------------------------- the table (issue 45)
def test_issue45_the_engines_are_one_table() -> None:
    """``ENGINES``: one row per engine, each row the ``ENGINE`` of the engine's own module."""
    import importlib

    from rankboost.fusion.engines import ENGINES

    assert list(ENGINES) == ["elasticsearch", "opensearch", "qdrant", "milvus", "lancedb"]
    for name, row in ENGINES.items():
        module = importlib.import_module(f"rankboost.fusion.engines.{name}")
        assert module.ENGINE is row
        assert row.name == name
        assert row.scores is getattr(module, f"{name}_scores")
        assert set(row.options) <= {"retrievers", "rank_window_size", "vectors", "limit",
                                    "text_list"}  # fmt: skip


def _toy_runs() -> list[Run]:
    """Two lists of 3 queries, positive scores, ranks 1..n: every engine's input."""
    rng = np.random.default_rng(4)
    runs = []
    for name in FIELDS:
        q, d, s = [], [], []
        for i in range(3):
            docs = rng.permutation(8)[:6]
            q += [f"q{i}"] * 6
            d += [f"d{j}" for j in docs]
            s += sorted(rng.uniform(1.0, 9.0, 6).tolist(), reverse=True)
        runs.append(Run.from_scores(q, d, s, name=name))
    return runs


@pytest.mark.parametrize("engine", ["elasticsearch", "opensearch", "qdrant", "milvus", "lancedb"])
@pytest.mark.parametrize("normalizer", ["minmax", "rrf", "dbsf", "atan"])
def test_issue45_each_row_says_what_its_engine_serves(engine, normalizer) -> None:
    """``export_linear`` writes what the row's normalisers say, refuses the others with the
    row's message, and the row's evaluator ranks every exact one as ``fuse apply``."""
    from rankboost.fusion.engines import ENGINES

    row = ENGINES[engine]
    runs = _toy_runs()
    lin = _model(normalizer, [0.75, 0.75])  # equal weights: every condition holds
    support = row.normalizers.get(normalizer)
    if support is None:
        text = row.refusal.format(engine=engine, normalizer=normalizer)
        with pytest.raises(ValueError, match=re.escape(text)):
            export_linear(lin, engine)
        assert row.serves(normalizer, lin.weights_) == ("no", "")
        return
    if support.how == "approximate":
        with pytest.raises(ValueError, match=re.escape(support.refusal)):
            export_linear(lin, engine)
        assert export_linear(lin, engine, **{support.option: True})
        return
    # LanceDB is told which list its full-text search serves; the other engines ignore it
    body = export_linear(lin, engine, text_list=lin.list_names_[0])
    assert check_export(lin, runs, engine, body) == 3
    assert row.serves(normalizer, lin.weights_) == ("exact", "")


def test_issue45_unknown_export_option() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'vector'; the options"):
        export_linear(_model("rrf", [1.0, 1.0]), "qdrant", vector=["a", "b"])


#: A command-line file that still names engines (``--vectors``), until it reads
#: ``"vectors" in ENGINES[engine].options``.
_CLI_PENDING = {"cli/fuse_export.py"}


def test_issue45_no_engine_branch_outside_its_module() -> None:
    """No ``engine == "qdrant"`` outside ``fusion/engines/qdrant.py``: an engine is one row."""
    import ast

    import rankboost
    from rankboost.fusion.engines import ENGINES

    src = Path(rankboost.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            named = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)} & set(ENGINES)
            if named - {Path(rel).stem} and rel not in _CLI_PENDING:
                found.append(f"{rel}:{node.lineno} {sorted(named)}")
    assert found == []


def test_a_search_without_hits_is_the_same_clear_error_in_both_engines(qdrant, milvus) -> None:
    """A sparse query sharing no term with any document (issue 46 item 4: Milvus raised
    'not enough values to unpack', Qdrant another message): one sentence for both."""
    from qdrant_client import models

    from rankboost.fusion.engines.milvus import milvus_run
    from rankboost.fusion.engines.qdrant import qdrant_run

    unseen = {"indices": [987654], "values": [1.0]}
    said = "the engine returned no document for any of the 1 queries; a run needs at least one"
    with pytest.raises(ValueError, match=r"qdrant_run \(bm25\): " + said):
        qdrant_run(qdrant, COLL, "bm25", {"q": models.SparseVector(**unseen)}, DEPTH)
    with pytest.raises(ValueError, match=r"milvus_run \(bm25\): " + said):
        milvus_run(milvus, COLL, "bm25", {"q": _pairs(unseen)}, DEPTH)
    # a query without hits beside one with hits is left out of the run, in both engines
    seen = DATA["queries"][next(iter(DATA["queries"]))]["bm25"]
    two = qdrant_run(qdrant, COLL, "bm25", {"a": models.SparseVector(**unseen),
                                            "b": models.SparseVector(**seen)}, DEPTH)  # fmt: skip
    assert set(two.qid.tolist()) == {"b"}
    two = milvus_run(milvus, COLL, "bm25", {"a": _pairs(unseen), "b": _pairs(seen)}, DEPTH)
    assert set(two.qid.tolist()) == {"b"}


@pytest.mark.parametrize(
    ("engine", "normalizer", "option"),
    [("qdrant", "dbsf", "--vectors"), ("milvus", "atan", "--vectors"),
     ("lancedb", "minmax", "--text-list")],
)  # fmt: skip
def test_cli_export_asks_for_what_the_model_cannot_say(tmp_path, capsys, engine, normalizer,
                                                       option) -> None:  # fmt: skip
    """Issue 46 item 5: without --vectors, Qdrant's request named the run files as vectors
    and exited 0; now a usage error names the option and the model's lists, writing nothing.
    Given it, the export says what it wrote."""
    path = tmp_path / "m.json"
    _model(normalizer, [1.0, 1.0]).save(path)
    out = tmp_path / "o.json"
    assert main(["fuse", "export", str(path), "--engine", engine, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"--engine {engine} needs {option}: " in err[0], err
    assert "the model's lists are 'bm25', 'dense'" in err[0], err
    assert not out.exists()
    given = ["--vectors", "bm25", "dense"] if option == "--vectors" else [option, "bm25"]
    assert main(["fuse", "export", str(path), "--engine", engine, "-o", str(out), *given]) == 0
    label = {"qdrant": "Qdrant", "milvus": "Milvus", "lancedb": "LanceDB"}[engine]
    assert (
        capsys.readouterr().out
        == f"wrote {out} ({label} request, 2 lists, {normalizer} normaliser)\n"
    )
    assert out.exists()


def test_check_export_compares_what_is_served_with_float32_ties_as_ties() -> None:
    """Issue 46 item 2: a float32 near-tie below the request's limit, or one the engine
    scores equal, failed --check-runs on a real collection; a real swap still fails."""
    lin = _model("minmax", [1.0, 1.0])
    q = ["q"] * 4
    bm25 = Run(q, ["b", "a", "c", "z"], [1, 2, 3, 4], [1.0, 1.0 - 1e-12, 0.5, 0.0], name="bm25")
    dense = Run(q, ["c", "b", "a", "z"], [1, 2, 3, 4], [1.0, 0.2, 0.2, 0.0], name="dense")
    body = export_linear(lin, "elasticsearch")
    # fuse apply (float64) ranks b above a; Elasticsearch's float32 sums are equal: a tie
    assert lin.fuse([bm25, dense]).sorted().docid.tolist()[1:3] == ["b", "a"]
    assert check_export(lin, [bm25, dense], "elasticsearch", body) == 1
    # a real difference is still one: the engine's request with another weight
    other = export_linear(_model("minmax", [3.0, 1.0]), "elasticsearch")
    with pytest.raises(ValueError, match="ranks 1 of 1 queries differently"):
        check_export(lin, [bm25, dense], "elasticsearch", other)
    # a request serving the top 1 compares the top 1 only
    lin_q = _model("rrf", [1.0, 1.0])
    served = export_linear(lin_q, "qdrant", vectors=FIELDS, limit=1)
    assert check_export(lin_q, [bm25, dense], "qdrant", served) == 1


def test_a_document_without_terms_goes_into_milvus(milvus) -> None:
    """Issue 46 item 3: Milvus Lite refuses an all-zero sparse vector (a document with an
    empty text); milvus_sparse gives it a term no query holds: found by its dense vector,
    never by BM25, every other score unchanged."""
    from pymilvus import DataType

    from rankboost.fusion.engines.milvus import milvus_run, milvus_sparse

    schema = milvus.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=2)
    schema.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
    ip = milvus.prepare_index_params()
    ip.add_index("dense", index_type="FLAT", metric_type="IP")
    ip.add_index("bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    milvus.create_collection("empty_texts", schema=schema, index_params=ip)
    with pytest.raises(Exception, match="at least one nonzero"):  # what the pipeline met
        milvus.insert("empty_texts", [{"id": "x", "dense": [1.0, 0.0], "bm25": {}}])
    milvus.insert("empty_texts", [
        {"id": "empty", "dense": [1.0, 0.0], "bm25": milvus_sparse([], [])},
        {"id": "full", "dense": [0.0, 1.0], "bm25": milvus_sparse([1, 5], [2.0, 0.5])},
    ])  # fmt: skip
    bm25 = milvus_run(milvus, "empty_texts", "bm25", {"q": {1: 1.0, 5: 2.0}}, 5)
    assert bm25.docid.tolist() == ["full"]
    assert bm25.score.tolist() == [3.0]
    dense = milvus_run(milvus, "empty_texts", "dense", {"q": [1.0, 0.0]}, 5)
    assert dense.docid.tolist()[0] == "empty"


# ---------------------------------------------------------------------- the pipeline's steps


def _pipeline():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "experiments" / "engine_pipeline.py"
    spec = importlib.util.spec_from_file_location("engine_pipeline", path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_issue46_engine_pipeline_says_each_long_step_before_it_runs(tmp_path, capsys, monkeypatch):
    """Issue 46 item 10: ``engine_pipeline.py index|serve`` was silent for 15-47 s; each step
    that takes seconds says what runs on stderr before it starts (the results: stdout). The
    engine is a stand-in here: what runs in Qdrant, Milvus and LanceDB is tested above."""
    ep = _pipeline()
    docs = {"d1": "ranking boosting", "d2": "boosting trees", "d3": "trees forests"}
    queries = {"q1": "ranking", "q2": "trees"}
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}}
    rng = np.random.default_rng(0)
    bm25 = Run(
        ["q1", "q1", "q2", "q2"], ["d1", "d2", "d2", "d3"], [1, 2, 1, 2], [3.0, 1.0, 2.0, 1.5]
    )
    dense = Run(
        ["q1", "q1", "q2", "q2"], ["d2", "d1", "d3", "d2"], [1, 2, 1, 2], [0.9, 0.8, 0.7, 0.1]
    )
    runs = {"bm25": bm25, "dense": dense}
    monkeypatch.setattr(ep, "load", lambda c: (docs, queries, qrels, tmp_path / "v.npz"))
    monkeypatch.setattr(
        ep, "dense_vectors", lambda d, q, e, p: (rng.random((3, 4)), rng.random((2, 4)))
    )
    monkeypatch.setattr(ep, "open_engine", lambda engine, out, fresh: object())
    monkeypatch.setattr(ep, "index", lambda *args: None)
    monkeypatch.setattr(ep, "engine_runs", lambda engine, client, qv, depth: runs)
    out = tmp_path / "out"
    ep.main(["index", "--engine", "qdrant", "--out", str(out)])
    got = capsys.readouterr()
    assert got.err.splitlines() == [
        "engine_pipeline index: reading the cisi collection (documents, queries, qrels)",
        "engine_pipeline index: BM25 vectors of 3 documents and 2 queries; dense: reading v.npz",
        f"engine_pipeline index: starting qdrant in {out} and indexing 3 documents",
        "engine_pipeline index: qdrant answers 2 queries x 2 runs (top 100)",
    ]
    assert got.out.startswith("qdrant: 3 documents (4-d dense, ")
    assert sorted(p.name for p in out.iterdir()) == [
        "bm25.run",
        "dense.run",
        "qrels",
        "queries.json",
    ]

    model = LinearFusion(normalizer="dbsf", n_rounds=2, prior_scale=0.5)
    named = [Run(r.qid, r.docid, r.rank, r.score, name=n) for n, r in runs.items()]
    model.fit(named, Qrels(["q1", "q2", "q2"], ["d1", "d2", "d3"], [1, 1, 1]))
    model.save(out / "model.json")
    (out / "request.json").write_text("{}")
    monkeypatch.setattr(ep, "served", lambda e, c, body, qv, limit: model.fuse(named, depth=limit))
    monkeypatch.setattr(ep, "engine_rrf", lambda e, c, qv, depth, limit: bm25)
    ep.main(["serve", "--engine", "qdrant", "--out", str(out), "--model",
             str(out / "model.json"), "--request", str(out / "request.json")])  # fmt: skip
    got = capsys.readouterr()
    assert got.err.splitlines() == [
        f"engine_pipeline serve: opening qdrant in {out}; it answers 2 queries x 2 runs again",
        f"engine_pipeline serve: qdrant serves 2 queries with {out / 'request.json'}, then its "
        "own RRF",
    ]
    assert got.out.startswith("qdrant serves the learned fusion (dbsf): its top 100 differs ")

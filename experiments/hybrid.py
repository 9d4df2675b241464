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

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

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
        rows["tfidf"] += _top(np.where(keep, S[i], -np.inf), doc_ids, q, min(depth, int(keep.sum())))
    svd = TruncatedSVD(n_components=200, random_state=0)
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

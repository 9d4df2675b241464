"""Light start-up (issue 16, item 10): ``import rankboost`` and ``rankboost --help`` import
neither numba nor scipy nor scikit-learn; every public name still resolves on first use.

Timings are in ``benchmarks/bench_startup.py`` (targets there, not here: the machine is shared).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import rankboost as rb

HEAVY = ("numba", "scipy", "sklearn", "pandas")


def _imported_after(code: str, modules: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``modules`` in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return out.split()


@pytest.mark.parametrize(
    "code",
    [
        "import rankboost",
        "import rankboost.cli",
        "from rankboost.cli import _build_parser; _build_parser()",
        "import rankboost; rankboost.params; rankboost.TrainParams; rankboost.__version__",
    ],
)
def test_light_imports_issue16(code: str) -> None:
    assert _imported_after(code) == []


def test_help_and_version_import_no_numba_issue16() -> None:
    code = (
        "import contextlib, io\n"
        "from rankboost.cli import main\n"
        "for argv in (['--help'], ['--version'], ['fuse', '--help'], ['export', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main(argv)"
    )
    assert _imported_after(code) == []


def test_every_public_name_resolves() -> None:
    for name in rb.__all__:
        assert getattr(rb, name) is not None, name
    assert set(rb.__all__) <= set(dir(rb))
    assert rb.recommend.RankBoostRecommender is rb.RankBoostRecommender
    assert rb.fusion.RankFusion is rb.RankFusion
    from rankboost import RankBoostRanker, train  # from-import goes through __getattr__

    assert train is importlib.import_module("rankboost.engine").train
    assert RankBoostRanker is importlib.import_module("rankboost.sklearn").RankBoostRanker


def test_fusion_public_names_resolve() -> None:
    for name in rb.fusion.__all__:
        assert getattr(rb.fusion, name) is not None, name
    assert set(rb.fusion.__all__) <= set(dir(rb.fusion))


@pytest.mark.parametrize(
    "package",
    [
        "rankboost",
        "rankboost.fusion",
        "rankboost.clicks",
        "rankboost.dask",
        "rankboost.metrics",
        "rankboost.datasets",
    ],  # fmt: skip
)
def test_every_lazy_name_is_a_typing_import(package: str) -> None:
    """A lazy package's names are its ``if TYPE_CHECKING:`` imports (rankboost._lazy): every
    public name not bound at import is one of them, and each resolves in a fresh process."""
    from rankboost._lazy import lazy_names

    module = importlib.import_module(package)
    code = f"import {package} as m\nprint(' '.join(sorted(vars(m))))"
    eager = set(subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split())  # fmt: skip
    assert set(module.__all__) - eager <= set(lazy_names(package))
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("module", [rb, rb.fusion])
def test_unknown_attribute_raises_attribute_error(module: object) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")  # noqa: B009


def test_first_use_imports_the_engine() -> None:
    assert "numba" in _imported_after("import rankboost as rb; rb.train")


# --------------------------------------------------------------------------- cold compile
# The kernels that a cold first training compiles were cut down (issue 16, item 10): the
# written-out paths below must give what the general ones (and numpy) give, bit for bit.

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rankboost._kernels import binning as kbinning  # noqa: E402
from rankboost._kernels import pairwise as kpairwise  # noqa: E402
from rankboost._kernels import ranking_metrics as kmetrics  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 300),
    n_queries=st.integers(1, 8),
    n_values=st.integers(1, 6),
    use_secondary=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_rank_within_queries_is_lexsort(
    n: int, n_queries: int, n_values: int, use_secondary: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_queries, n).astype(np.int64)
    codes[:n_queries] = np.arange(min(n, n_queries))  # dense codes 0..n_queries-1
    nq = int(codes.max()) + 1
    scores = rng.integers(0, n_values, n).astype(np.float64) * rng.choice([1.0, -1.0])
    scores[rng.random(n) < 0.2] = -0.0  # -0.0 ties with 0.0
    secondary = rng.integers(0, 3, n).astype(np.float64)
    order, starts = np.empty(n, np.int64), np.empty(nq + 1, np.int64)
    kmetrics.rank_within_queries(codes, scores, secondary, use_secondary, nq, order, starts)
    keys = (secondary, -scores, codes) if use_secondary else (-scores, codes)
    np.testing.assert_array_equal(order, np.lexsort(keys))
    np.testing.assert_array_equal(starts, np.r_[0, np.cumsum(np.bincount(codes, minlength=nq))])


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 70), min_size=1, max_size=6), seed=st.integers(0, 2**32))
def test_ideal_dcg_sums_the_sorted_gains(sizes: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    gains = np.exp2(rng.integers(0, 5, sum(sizes)).astype(np.float64)) - 1.0
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    discount = 1.0 / np.log2(np.arange(2, 12))
    out = np.empty(len(sizes))
    kmetrics.ideal_dcg_at_k(gains, starts, discount, out)
    for q in range(len(sizes)):
        best = np.sort(gains[starts[q] : starts[q + 1]])[::-1][: discount.size]
        want = 0.0
        for i, g in enumerate(best):  # the kernel's order of additions
            want += g * discount[i]
        assert out[q] == want


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400), d=st.integers(1, 7), n_cuts=st.integers(0, 40),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_small_binning_runs_numpy_with_the_kernels_codes(
    n: int, d: int, n_cuts: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n + 5, d)), 1)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[rng.random(X.shape) < 0.05] = rng.choice([np.inf, -np.inf])
    rows = rng.permutation(n + 5)[:n].astype(np.int64)
    cut_list = [np.unique(np.round(rng.normal(size=n_cuts), 1)) for _ in range(d)]
    cuts = np.concatenate(cut_list)
    cut_starts = np.r_[0, np.cumsum([c.size for c in cut_list])].astype(np.int64)
    assert n * d < kbinning.NUMPY_MAX_WORK  # the wrappers take the numpy route
    small, kernel = np.empty((d, n), np.uint8), np.empty((d, n), np.uint8)
    kbinning.bin_rows(X, rows, cuts, cut_starts, small)
    guide, scale = kbinning.build_guides(cuts, cut_starts, kbinning._GUIDE_BUCKETS)
    kbinning._bin_rows_serial(X, rows, cuts, cut_starts, guide, scale, kernel)
    np.testing.assert_array_equal(small, kernel)
    k = min(d, 3)
    small_g, kernel_g = np.empty((k, n)), np.empty((k, n))
    kbinning.gather_columns(X, rows, d - k, small_g)
    kbinning._gather_columns_serial(X, rows, d - k, kernel_g)
    np.testing.assert_array_equal(small_g, kernel_g)


def test_binary_reorder_merges_like_the_general_driver() -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(2, 40, 25)
    qstart = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    level = np.concatenate([np.sort(rng.integers(0, 5, s)) for s in sizes]).astype(np.int64)
    n = level.size
    H = np.round(rng.normal(size=n), 1)
    order = np.concatenate(
        [
            lo + np.lexsort((-level[lo:hi], H[lo:hi]))
            for lo, hi in zip(qstart[:-1], qstart[1:], strict=True)
        ]
    ).astype(np.int32)
    h = rng.integers(0, 2, n).astype(np.float64)
    H += 0.5 * h  # an update with a binary h: each h-group keeps its order
    got, want = order.copy(), order.copy()
    kpairwise.reorder(H, h, level, True, qstart, got, np.empty(n, np.int32))
    kpairwise._reorder_serial(H, h, level, True, qstart, want, np.empty(n, np.int32))
    np.testing.assert_array_equal(got, want)
    lstart = np.arange(26, dtype=np.int64) * 5  # 5 levels a query
    ties = kpairwise.sorted_level_errors(H, level, got, qstart, lstart, 1.0)
    general = np.empty(25)
    scratch = np.empty(2 * int(lstart[-1]) + 26)
    kpairwise._sorted_errors_serial(H, level, got, qstart, lstart, 1.0, scratch, general)
    assert ties.sum() > 0
    np.testing.assert_array_equal(ties, general)


def test_a_small_training_loads_only_its_serial_kernels() -> None:
    """Which drivers a small first training compiles (or loads from the cache): serial ones
    only, and none of the general paths it never runs (the functions they call are left
    out: loaded from the cache they have no overloads of their own, compiled they do)."""
    code = (
        "import numpy as np, rankboost as rb, rankboost._kernels as k, importlib, pkgutil\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(4), 10)), n_rounds=5)\n"
        "mods = [importlib.import_module('rankboost._kernels.' + m.name)"
        " for m in pkgutil.iter_modules(k.__path__)]\n"
        "print(' '.join(sorted({m.__name__.rsplit('.', 1)[1] + '.' + n for m in mods"
        " for n, f in vars(m).items() if getattr(f, 'overloads', None)})))"
    )
    used = set(
        subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout.split()
    )
    drivers = {n for n in used if n.endswith(("_serial", "_parallel")) or "build_guides" in n}
    assert drivers == {
        "candidates._threshold_candidates_serial",  # the candidate table (issue 36)
        "histogram._histograms_serial",
        "layered._binary_update_serial",
        "layered._potential_serial",
        "layered._refresh_serial",
    }
    assert "histogram.threshold_values" in used


@pytest.mark.parametrize("k", [3, kpairwise._COUNTER_MAX_LEVELS + 2])
def test_flagged_queries_are_finished_as_the_one_call_does(k: int) -> None:
    """The binary update leaves two rare routes to ``finish_counts`` (compiled only when
    reached): a tie made by rounding (1e-17 + 1 == 2e-17 + 1), and more levels than the
    merge's counters. Finished, order and count are those of ``_merge_counting_errors``."""
    H0 = np.array([1e-17, 2e-17, 5.0, 7.0])
    level = np.array([0, k - 1, 1, 0])
    order0 = np.array([0, 1, 2, 3], dtype=np.int32)  # the kept order before the update
    h = np.array([1, 1, 0, 0], dtype=np.uint8)
    H = H0 + 1.0 * h  # rows 0 and 1 now tie at 1.0, level 0 below level k - 1
    want_order = order0.copy()
    want = kpairwise._merge_counting_errors(
        H, h, level, want_order, np.empty(4, np.int32), 0, 4, k, np.zeros(2 * k + 1), 0
    )
    got_order = order0.copy()
    tmp = np.empty(4, np.int32)
    flag = kpairwise.counting_merge(H, h, level, got_order, tmp, 0, 4, k)
    assert flag == (kpairwise._NEEDS_TIE_FIX if k == 3 else kpairwise._NEEDS_MERGE)
    errors = np.array([flag])
    qstart, lstart = np.array([0, 4]), np.array([0, k])
    kpairwise.finish_counts(
        H, h, level, qstart, lstart, got_order, tmp, np.zeros(2 * k + 1), errors
    )
    np.testing.assert_array_equal(got_order, want_order)
    assert errors[0] == want == 4.0  # the tie (rows 0, 1), and row 1 below rows 2, 3; row 2 below 3


@pytest.fixture(scope="module")
def model_and_data(tmp_path_factory):
    """A saved model and an SVMlight file (made here: the subprocesses only read them)."""
    from rankboost.datasets import dump_svmlight

    tmp = tmp_path_factory.mktemp("startup26")
    rng = np.random.default_rng(26)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)  # noisy: no round orders every pair
    qid = np.repeat(np.arange(4), 10)
    rb.train(X, rb.LayeredFeedback(y, qid), n_rounds=3).save(tmp / "m.json")
    rb.load_model(tmp / "m.json")  # predict gets past the model (a perfect first round's
    # r = 1 + 4e-16 was refused by the loader, so predict stopped there, importing nothing)
    dump_svmlight(tmp / "d.txt", X, y, qid)
    return tmp


@pytest.mark.parametrize(
    ("argv", "allowed", "status"),
    [
        (["predict", "{tmp}/m.json", "{tmp}/d.txt"], set(), 0),
        (["predict", "{tmp}/m.json", "{tmp}/d.txt", "--format", "trec"], set(), 0),
        (["predict", "{tmp}/m.json", "{tmp}/no-such-file.txt"], set(), 1),
        (["predict", "{tmp}/no-such-model.json", "{tmp}/d.txt"], set(), 1),
        (["train", "{tmp}/no-such-file.txt", "-o", "{tmp}/x.json"], set(), 1),
        (["evaluate", "{tmp}/m.json", "{tmp}/d.txt"], {"numba", "scipy"}, 0),  # metric kernels
    ],
)
def test_issue26_predict_and_error_paths_import_neither_sklearn_nor_scipy(
    model_and_data, argv, allowed, status
):
    """``rankboost predict`` was 2.2 s of which 3 ms scoring: the rest importing scikit-learn
    for the SVMlight parser (issue 26). Timings: benchmarks/bench_startup.py --predict."""
    args = [a.format(tmp=model_and_data) for a in argv]
    code = (
        "import contextlib, io\n"
        "from rankboost.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        f"    status = main({args!r})\n"
        f"assert status == {status}, err.getvalue()"  # the path meant, not an earlier error
    )
    assert set(_imported_after(code)) <= allowed


def test_issue47_predict_reads_no_package_metadata(model_and_data):
    """``importlib.metadata`` (about 40 ms, a seventh of ``rankboost predict``'s process) is
    imported only when ``__version__`` is asked for, and then gives the installed version;
    nor does scoring import ``numpy.ma`` (``np.unique``'s, 7 ms)."""
    tmp = model_and_data
    code = (
        "import contextlib, io\n"
        "from rankboost.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['predict', '{tmp}/m.json', '{tmp}/d.txt']) == 0\n"
    )
    assert _imported_after(code, ("importlib.metadata", "numpy.ma")) == []  # np.unique's
    asked = "import rankboost; v = rankboost.__version__; assert v == rankboost.__version__"
    assert _imported_after(asked, ("importlib.metadata",)) == ["importlib.metadata"]
    from importlib.metadata import version

    assert rb.__version__ == version("rankboost")


OTHER_FORMATS = {
    "data.csv": "a,b,c\n1,2,3\n",
    "u.data": "196\t242\t3\t881250949\n186\t302\t3\t891717742\n",
    "run.txt": "1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n",
}


@pytest.mark.parametrize("name", sorted(OTHER_FORMATS))
def test_issue47_a_file_of_another_format_is_refused_before_numpy(model_and_data, name):
    """``rankboost train data.csv`` took 1.25 s to say the file is CSV, importing numpy and
    scikit-learn's SVMlight parser before the format was guessed (issue 47): the first line
    is sniffed first. ``predict`` (numpy for the model) imports no parser either."""
    tmp = model_and_data
    (tmp / name).write_text(OTHER_FORMATS[name])
    for argv, allowed in [
        (["train", str(tmp / name), "-o", str(tmp / "never.json")], ()),
        (["predict", str(tmp / "m.json"), str(tmp / name)], ("numpy",)),
    ]:
        code = (
            "import contextlib, io\n"
            "from rankboost.cli import main\n"
            "err = io.StringIO()\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
            f"    status = main({argv!r})\n"
            "assert status == 1, err.getvalue()\n"
            "assert ' looks like ' in err.getvalue(), err.getvalue()"
        )
        heavy = (*HEAVY, "numpy", "rankboost.datasets._svmlight")
        assert set(_imported_after(code, heavy)) <= set(allowed), argv
    assert not (tmp / "never.json").exists()


TRAIN_AND_DEMO = [
    ["train", "{tmp}/d.txt", "--valid", "{tmp}/d.txt", "--early-stopping", "2", "--metric",
     "map", "--rounds", "4", "-q", "-o", "{tmp}/valid.json"],
    ["train", "{tmp}/noqid.txt", "--query-file", "{tmp}/groups.txt", "--feature-names",
     "{tmp}/names.txt", "--rounds", "3", "-q", "-o", "{tmp}/names.json"],
    ["demo", "--rounds", "3", "--quiet"],
]  # fmt: skip


def test_train_and_demo_import_no_sklearn(tmp_path):
    """``rankboost train`` and ``demo`` spent 2 s of a small run importing scikit-learn (and
    through it scipy.stats and pandas) for ``RankBoostRanker.fit``; they now call its
    sklearn-free steps, ``rankboost._fit.fit_ranker``. Each command must succeed (an early
    error would import nothing); all three run in one fresh interpreter."""
    from rankboost.datasets import dump_svmlight

    rng = np.random.default_rng(27)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)  # noisy: no round is perfect
    dump_svmlight(tmp_path / "d.txt", X, y, np.repeat(np.arange(4), 10))
    dump_svmlight(tmp_path / "noqid.txt", X, y, None)
    (tmp_path / "groups.txt").write_text("10\n" * 4)
    (tmp_path / "names.txt").write_text("a\nb\nc\n")
    runs = [[a.format(tmp=tmp_path) for a in argv] for argv in TRAIN_AND_DEMO]
    code = (
        "import contextlib, io\n"
        "from rankboost.cli import main\n"
        f"for args in {runs!r}:\n"
        "    out, err = io.StringIO(), io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "        status = main(args)\n"
        "    assert status == 0, (args, err.getvalue())"
    )
    assert _imported_after(code, ("sklearn", "pandas", "scipy.stats")) == []
    for argv, args in zip(TRAIN_AND_DEMO, runs, strict=True):
        if argv[0] == "train":
            model = rb.load_model(args[-1])
            assert model.n_rounds > 0
            assert (model.feature_names == ["a", "b", "c"]) == ("--feature-names" in argv)
            assert (model.best_iteration is not None) == ("--early-stopping" in argv)


# --------------------------------------------------------------------------- cold compile count
# Issue 36, item 3: what a first training compiles on an empty numba cache (counted, not
# timed: benchmarks/bench_startup.py --train --cold times it), and that a second process
# compiles nothing (the cache is read back).

_COMPILED = """\
import warnings
from numba.core import event
names = []
class Listener(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        f = getattr(ev.data.get("dispatcher"), "py_func", None)
        if f is not None and f.__module__.startswith("rankboost."):
            names.append(f.__module__.rsplit(".", 1)[1] + "." + f.__qualname__)
event.register("numba:compile", Listener())
import numpy as np, rankboost as rb
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(4), 10)), n_rounds=5)
print(" ".join(names))
"""


def test_a_cold_first_training_compiles_each_body_once_issue36(tmp_path) -> None:
    """The per-unit bodies (``_x_query``, ``_four_histograms``, ...) are compiled into their
    serial drivers, not on their own as well; layered's small helpers are compiled once each
    (not re-translated at every call site, ``inline="always"``); a second process with the
    same cache compiles nothing."""
    import os

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-c", _COMPILED]
    first = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    compiled = first.stdout.split()
    assert sorted(compiled) == sorted(
        [
            "candidates._threshold_candidates_serial",
            "histogram._histograms_serial",
            "histogram.threshold_values",
            "layered._binary_update_serial",
            "layered._cross_log_mass",
            "layered._lse2",
            "layered._level_potential_factors",
            "layered._potential_serial",
            "layered._query_mass_and_factors",
            "layered._refresh_serial",
            "pairwise.counting_merge",
        ]
    )
    second = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    assert second.stdout.split() == []
    assert any(p.suffix == ".nbi" for p in tmp_path.rglob("*"))


def test_numba_is_set_up_before_the_first_kernel_compiles_issue47(tmp_path) -> None:
    """On a cache miss ``KernelCache`` sets numba's compiler up before the compile, as numba's
    own cache lookup does, so that no kernel's ``numba:compile`` event counts the one-time
    set-up (``bench_startup.py --cold`` sums those events per kernel); a hit does not."""
    import os

    code = (
        "import numpy as np, rankboost as rb\n"
        "from numba.core import base, event\n"
        "depth, seen = [0], []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev): depth[0] += 1\n"
        "    def on_end(self, ev): depth[0] -= 1\n"
        "event.register('numba:compile', L())\n"
        "refresh = base.BaseContext.refresh\n"
        "def spy(self):\n"
        "    seen.append(depth[0])\n"
        "    return refresh(self)\n"
        "base.BaseContext.refresh = spy\n"
        "X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(4), 10)), n_rounds=2)\n"
        "print(' '.join(map(str, seen)))"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-W", "ignore", "-c", code]
    cold = subprocess.run(run, check=True, capture_output=True, text=True, env=env).stdout
    assert cold.split()[0] == "0"  # the first set-up, outside any compile
    warm = subprocess.run(run, check=True, capture_output=True, text=True, env=env).stdout
    assert warm.split() == []  # read from the cache: no set-up at all


def test_serial_drivers_inline_their_bodies_and_parallel_ones_call_them_issue36() -> None:
    from rankboost._kernels import histogram, layered

    for module, driver, body in [
        (layered, "_binary_update", "_binary_update_query"),
        (layered, "_refresh", "_refresh_query"),
        (histogram, "_histograms", "_four_histograms"),
    ]:
        serial = getattr(module, driver + "_serial").py_func.__globals__[body]
        parallel = getattr(module, driver + "_parallel").py_func.__globals__[body]
        assert serial.targetoptions.get("inline") == "always", (driver, body)
        assert serial.py_func.__name__ == body + "_inlined"  # its own cache name, never filled
        assert parallel is getattr(module, body)
        assert parallel.targetoptions.get("inline", "never") == "never"


def test_a_change_to_one_kernel_file_recompiles_the_drivers_that_call_it(tmp_path) -> None:
    """numba keys a cached function on its own file only; ``layered``'s drivers hold
    ``pairwise.counting_merge``'s code, so after a change to ``pairwise.py`` alone (an
    upgrade) they must not be read back from the cache: ``rankboost._kernels._cache`` stamps
    every kernel with a digest of all kernel sources. Fails without it (only what
    ``pairwise.py`` defines, if anything, would compile)."""
    import os
    import shutil

    import rankboost

    src = tmp_path / "src"
    shutil.copytree(
        os.path.dirname(rankboost.__file__),
        src / "rankboost",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(src)}
    run = [sys.executable, "-c", _COMPILED]
    first = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    assert "layered._binary_update_serial" in first.stdout.split()
    again = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    assert again.stdout.split() == []  # unchanged sources: read back
    with open(src / "rankboost" / "_kernels" / "pairwise.py", "a") as f:
        f.write("\n# an upgrade that changes this file only\n")
    after = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    assert sorted(after.stdout.split()) == sorted(first.stdout.split())


def test_issue46_the_compile_label_shows_only_when_numba_compiles(tmp_path) -> None:
    """``rankboost train --progress`` names its bar 'compiling kernels' while numba compiles
    (an empty cache), not when it reads the kernels back from its cache (issue 46, item 12:
    the label showed on every run). The same command twice on one temporary cache."""
    import os

    pytest.importorskip("tqdm")

    from rankboost.datasets import dump_svmlight

    rng = np.random.default_rng(46)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
    dump_svmlight(tmp_path / "d.txt", X, y, np.repeat(np.arange(4), 10))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    run = [sys.executable, "-m", "rankboost", "train", str(tmp_path / "d.txt"), "--rounds", "3",
           "--progress", "-o", str(tmp_path / "m.json")]  # fmt: skip
    first = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    second = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    assert "rankboost (compiling kernels)" in first.stderr
    assert "rankboost" in second.stderr  # the bar is shown
    assert "compiling" not in second.stderr


_LOADED = """\
import sys, warnings
import numpy as np, rankboost as rb
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
qid = np.repeat(np.arange(4), 10)
model = rb.train(X, rb.LayeredFeedback(y, qid), n_rounds=5)
setup = sorted(m for m in ("numba.np.arraymath", "numba.np.linalg") if m in sys.modules)
print(" ".join(setup) or "-")
from rankboost.metrics import ndcg_score  # its kernels are compiled after the loaded ones
print(round(float(ndcg_score(y, model.predict(X), qid, k=5)), 12))
"""


def test_issue47_kernels_read_from_the_cache_skip_numbas_compiler_setup(tmp_path) -> None:
    """numba sets its compiler up (``BaseContext.refresh``: numba.np.arraymath, linalg, ...
    imported, 1,000 typing templates registered; 0.3-0.7 s of CPU) before reading a cached
    function; the kernels' ``KernelCache`` reads them without it (issue 47). A process that
    then compiles a kernel (the metric's, not in this cache) sets the compiler up itself and
    gets the same score as the process that compiled everything."""
    import os

    from rankboost._kernels import _cache, layered

    assert isinstance(layered._refresh_serial._cache, _cache.KernelCache)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-c", _LOADED]
    first = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    indexes = list(tmp_path.rglob("ranking_metrics.*.nbi"))
    assert indexes
    for index in indexes:  # the metric's kernels are compiled again by the second process
        index.unlink()
    second = subprocess.run(run, check=True, capture_output=True, text=True, env=env)
    first_lines, second_lines = first.stdout.splitlines(), second.stdout.splitlines()
    assert first_lines[0] == "numba.np.arraymath numba.np.linalg"  # compiled: set up
    assert second_lines[0] == "-"  # read from the cache: no compiler set-up
    assert second_lines[1] == first_lines[1]  # then a compile in that process: the same score

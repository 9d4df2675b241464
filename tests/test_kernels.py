"""Serial and parallel kernel drivers compiled from one source (``_kernels.serial_and_parallel``).

The public wrappers run the parallel driver only from ``PARALLEL_MIN_WORK`` elements, which
no other test reaches; here both drivers of every kernel run on the same small inputs and
must give the same bits. numba's on-disk cache does not tell a function's serial and
parallel compilations apart (it keys on name, line, bytecode and signature), so the tests
also check that no two cached kernels share a cache index and that each driver runs the
machine code of its own kind.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import numpy as np
import pytest

import rankboost._kernels as kernels
from rankboost._kernels import binning, pairwise, serial_and_parallel

# Every parallel driver compiles here: in one make-test worker, not in each (conftest).
pytestmark = pytest.mark.xdist_group("parallel_drivers")


def _kernel_modules() -> list[Any]:
    return [
        importlib.import_module(f"{kernels.__name__}.{m.name}")
        for m in pkgutil.iter_modules(kernels.__path__)
    ]


def _driver_pairs() -> dict[str, tuple[Any, Any]]:
    """``{module.driver: (serial, parallel)}`` for every ``x_serial``/``x_parallel`` pair."""
    pairs = {}
    for mod in _kernel_modules():
        for name, serial in vars(mod).items():
            stem = name.removesuffix("_serial")
            if stem != name and hasattr(mod, stem + "_parallel"):
                pairs[f"{mod.__name__}.{stem}"] = (serial, getattr(mod, stem + "_parallel"))
    return pairs


def test_the_group_reaches_xdist(request):
    """Under ``--dist loadgroup`` (make test) pytest-xdist files this module's tests under
    their group by suffixing their ids; a pytest that ignores the suffix (9.2 with xdist 3.8)
    would scatter them over the workers without a word (pyproject.toml pins below it)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@parallel_drivers"), request.node.nodeid


def test_every_driver_pair_is_compiled_from_one_source_apart():
    pairs = _driver_pairs()
    # + clicks: count_pairs, fill_pairs (issue 25); candidates, gram (35/36);
    # cells: user_knn, item_knn, cooccurrence, ease; gram: top_k_rows (35);
    # cells: ease_rows (45: EASE's penalty search ranks with the base recommender's kernel)
    # push: eval, potential, split (48: the P-Norm Push); refresh, step (48: its cost)
    assert len(pairs) == 31
    for name, (serial, parallel) in pairs.items():
        assert not serial.targetoptions.get("parallel"), name
        assert parallel.targetoptions.get("parallel"), name
        assert serial.py_func.__code__ is parallel.py_func.__code__, name  # one source
        stem = name.rsplit(".", 1)[1]
        assert serial.py_func.__qualname__ == stem + "_serial", name
        assert parallel.py_func.__qualname__ == stem + "_parallel", name


def test_no_two_cached_kernels_share_a_cache_index():
    """Two dispatchers filed under one index would load each other's machine code."""
    bases: dict[str, set[str]] = {}
    seen = set()
    for mod in _kernel_modules():
        for name, obj in vars(mod).items():
            # numba's FunctionCache: _impl.filename_base names the index file (.nbi)
            impl = getattr(getattr(obj, "_cache", None), "_impl", None)
            if impl is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            bases.setdefault(impl.filename_base, set()).add(f"{mod.__name__}.{name}")
    assert len(bases) > 30
    assert {b: n for b, n in bases.items() if len(n) > 1} == {}


def test_drivers_pass_their_loop_index_as_int64():
    """With ``parallel=True`` numba types a ``prange`` index as uint64 (int64 in the serial
    copy): a driver that hands it bare to its per-unit helper compiles the helper twice
    (``serial_and_parallel``'s docstring). Read off each driver's source."""
    import ast
    import inspect
    import textwrap

    bare = []
    for name, (serial, _) in _driver_pairs().items():
        tree = ast.parse(textwrap.dedent(inspect.getsource(serial.py_func)))
        for loop in ast.walk(tree):
            if not (
                isinstance(loop, ast.For)
                and isinstance(loop.iter, ast.Call)
                and getattr(loop.iter.func, "id", "") == "prange"
                and isinstance(loop.target, ast.Name)
            ):
                continue
            index = loop.target.id
            for call in (c for c in ast.walk(loop) if isinstance(c, ast.Call)):
                if getattr(call.func, "attr", "") == "int64":  # np.int64(q): the cast itself
                    continue
                args = [*call.args, *(k.value for k in call.keywords)]
                if any(isinstance(a, ast.Name) and a.id == index for a in args):
                    bare.append(f"{name}: {ast.unparse(call)[:60]}")
    assert bare == []


def test_serial_and_parallel_refuses_a_closure():
    def factory(k: int) -> Any:
        def driver(x: np.ndarray) -> None:
            x[0] = k

        return driver

    with pytest.raises(TypeError, match="without a closure; .*closes over \\('k',\\)"):
        serial_and_parallel(factory(1))


# --------------------------------------------------------------------------- same bits


def _block(seed: int) -> dict[str, Any]:
    """A block of queries as ``_blocks.LayeredState`` holds it; one query has more levels than the
    counting merge's counters (``_COUNTER_MAX_LEVELS``)."""
    rng = np.random.default_rng(seed)
    ks = [*rng.integers(2, 7, size=30).tolist(), pairwise._COUNTER_MAX_LEVELS + 4]
    level_parts = []
    for k in ks:
        m = k + int(rng.integers(0, 60))
        level_parts.append(np.sort(np.r_[np.arange(k), rng.integers(0, k, m - k)]))
    level = np.concatenate(level_parts).astype(np.int64)
    qstart = np.r_[0, np.cumsum([p.size for p in level_parts])].astype(np.int64)
    lstart = np.r_[0, np.cumsum(ks)].astype(np.int64)
    n, n_levels, n_q = level.size, int(lstart[-1]), len(ks)
    of_row = np.repeat(np.arange(n_q), np.diff(qstart))
    order = (qstart[of_row] + qstart[of_row + 1] - 1 - np.arange(n)).astype(np.int32)
    return {
        "layout": (level, qstart, lstart, rng.normal(-6.0, 1.0, n_q)),
        "rows": (np.zeros(n), np.empty(n), np.empty(n), order),
        "levels": tuple(np.empty(n_levels) for _ in range(4)),
        "factors": (np.empty(n_levels), np.empty(n_levels)),
        "scratch": (
            np.empty((n_levels, 6)),
            np.empty(n, dtype=np.int32),
            np.empty(2 * n_levels + n_q),
        ),
        "out": (np.empty(n_q), np.empty(n), np.empty(n_q)),
        "h": [rng.integers(0, 2, n).astype(np.uint8) for _ in range(5)],
        "alpha": rng.normal(0.0, 2.0, 5),
        "real_h": rng.normal(size=n),
    }


def _run_layered(kind: str, b: dict[str, Any]) -> list[np.ndarray]:
    """A few rounds of the engine's kernel calls with the ``kind`` drivers."""
    pick = 0 if kind == "serial" else 1
    pairs = _driver_pairs()
    refresh = pairs["rankboost._kernels.layered._refresh"][pick]
    potential = pairs["rankboost._kernels.layered._potential"][pick]
    binary = pairs["rankboost._kernels.layered._binary_update"][pick]
    reorder = pairs["rankboost._kernels.pairwise._reorder"][pick]
    sorted_errors = pairs["rankboost._kernels.pairwise._sorted_errors"][pick]
    level_errors = pairs["rankboost._kernels.pairwise._level_pair_errors"][pick]
    merge = pairs["rankboost._kernels.pairwise._merge_queries"][pick]
    tie_errors = pairs["rankboost._kernels.pairwise._sorted_tie_errors"][pick]
    layout, rows, levels, out = b["layout"], b["rows"], b["levels"], b["out"]
    factors, scratch = b["factors"], b["scratch"]
    level, qstart, lstart, _ = layout
    H, _, _, order = rows
    _, tmp, tree = scratch
    log_mass, pi, errors = out
    seen = []
    refresh(np.zeros(H.shape[0]), 0.0, layout, rows, levels, log_mass)
    log_total = float(np.logaddexp.reduce(log_mass))
    potential(log_total, layout, rows, levels, factors, pi)
    seen += [log_mass.copy(), pi.copy(), *factors]
    finish = pairs["rankboost._kernels.pairwise._finish_counts"][pick]
    for h, alpha in zip(b["h"], b["alpha"], strict=True):
        binary(h, float(alpha), log_total, layout, rows, levels, factors, scratch, out)
        flagged = np.flatnonzero(errors < 0)  # the query with 20 levels, every round
        assert flagged.size
        finish(H, h, level, qstart, lstart, order, tmp, tree, errors, flagged)
        log_total = float(np.logaddexp.reduce(log_mass))
        seen += [x.copy() for x in (*rows, *levels, *factors, *out)]
    # an exact refresh with a binary h, then the merge alone and the tie-weight-1 count
    refresh(b["h"][0].astype(np.float64), 0.7, layout, rows, levels, log_mass)
    merge(H, b["h"][0], level, qstart, order, tmp)
    tie_out = np.empty(qstart.shape[0] - 1)
    tie_errors(H, level, order, qstart, lstart, tree, tie_out)
    sorted_errors(H, level, order, qstart, lstart, 1.0, tree, errors)
    np.testing.assert_array_equal(tie_out, errors)
    seen += [order.copy(), tie_out]
    refresh(b["real_h"], 0.3, layout, rows, levels, log_mass)
    reorder(H, b["real_h"], level, False, qstart, order, tmp)
    log_total = float(np.logaddexp.reduce(log_mass))
    potential(log_total, layout, rows, levels, factors, pi)
    sorted_errors(H, level, order, qstart, lstart, 0.5, tree, errors)
    level_out = np.empty(qstart.shape[0] - 1)
    level_errors(H, level, qstart, lstart, 0.5, level_out)
    seen += [x.copy() for x in (*rows, *levels, *out, level_out)]
    return seen


def test_layered_and_pairwise_drivers_give_the_same_bits():
    serial = _run_layered("serial", _block(0))
    parallel = _run_layered("parallel", _block(0))
    assert len(serial) == len(parallel) > 40
    for s, p in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(s, p)
    assert np.all(np.isfinite(serial[-1]))
    np.testing.assert_array_equal(serial[-1], serial[-2])  # sorted vs unsorted counts


def _run_others(pick: int) -> list[np.ndarray]:
    """The binning, histogram, candidate-table and graded-errors drivers (``pick`` 0: serial,
    1: parallel)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 9))
    X[rng.random(X.shape) < 0.1] = np.nan
    rows = rng.permutation(3000)[:2000].astype(np.int64)
    cuts = np.sort(rng.normal(size=(9, 20)), axis=1).ravel()
    cut_starts = np.arange(0, 181, 20, dtype=np.int64)
    guide, scale = binning.build_guides(cuts, cut_starts, binning._GUIDE_BUCKETS)
    pi = rng.normal(size=rows.size)
    labels = rng.integers(0, 4, rows.size).astype(np.float64)
    starts = np.arange(0, rows.size + 1, 50, dtype=np.int64)
    pairs = {name.rsplit(".", 1)[1]: fs[pick] for name, fs in _driver_pairs().items()}
    gathered = np.empty((9, rows.size))
    pairs["_gather_columns"](X, rows, 0, gathered)
    codes = np.empty((9, rows.size), dtype=np.uint8)
    pairs["_bin_rows"](X, rows, cuts, cut_starts, guide, scale, codes)
    hist = np.empty((9, 22))
    pairs["_histograms"](codes, pi, 0.5, hist)
    hist_words = np.empty((9, 22))  # uint8 codes read as words: the same sums
    pairs["_histograms_words"](codes, pi, 0.5, hist_words)
    np.testing.assert_array_equal(hist_words, hist)
    n_bins = np.array([0, 1, 2, 5, 20, 21, 21, 3, 21], dtype=np.int64)  # codes 1 .. n_bins
    table_r, table_valid = np.empty((9, 42)), np.empty((9, 42), dtype=np.bool_)
    pairs["_threshold_candidates"](hist, n_bins, table_r, table_valid)  # issue 36
    errors, n_pairs = np.empty(starts.size - 1), np.empty(starts.size - 1)
    order = np.arange(rows.size, dtype=np.int64)
    pairs["_graded_pair_errors"](pi, labels, order, starts, 0.5, errors, n_pairs)
    np.testing.assert_array_equal(gathered, X[rows].T)
    return [gathered, codes, hist, table_r, table_valid, errors, n_pairs]


def _run_clicks(pick: int) -> list[np.ndarray]:
    """The click-pair drivers of ``rankboost.clicks`` (issue 25; ``pick`` as above)."""
    from rankboost._kernels import clicks as ck

    rng = np.random.default_rng(3)
    starts = np.arange(0, 401, 10, dtype=np.int64)  # 40 sessions of 10 shown documents
    rows = rng.integers(0, 50, 400).astype(np.int64)
    clicked = (rng.random(400) < 0.3).astype(np.uint8)
    weight = rng.uniform(1, 5, 400)
    fs = [
        (ck._count_pairs_serial, ck._fill_pairs_serial),
        (ck._count_pairs_parallel, ck._fill_pairs_parallel),
    ][pick]
    out = []
    for mode in range(5):
        counts = np.empty(40, dtype=np.int64)
        fs[0](starts, rows, clicked, weight, mode, counts)
        offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
        lo, up, w = (
            np.empty(offsets[-1], np.int64),
            np.empty(offsets[-1], np.int64),
            np.empty(offsets[-1]),
        )
        fs[1](starts, rows, clicked, weight, mode, offsets, lo, up, w)
        out += [counts, lo, up, w]
    return out


def _run_gram(pick: int) -> np.ndarray:
    """The item-similarity Gram driver of ``rankboost.recommend`` (issue 35; ``pick`` as above)."""
    import scipy.sparse as sp

    from rankboost._kernels import gram

    V = sp.random(30, 50, density=0.3, format="csr", random_state=np.random.default_rng(4))
    VT = sp.csr_matrix(V.T)
    out = np.zeros((20, 30))
    f = (gram._gram_rows_serial, gram._gram_rows_parallel)[pick]
    f(5, 25, V.indptr.astype(np.int64), V.indices, V.data, VT.indptr.astype(np.int64),
      VT.indices, VT.data, out)  # fmt: skip
    return out


def _run_push(pick: int) -> np.ndarray:
    """The P-Norm Push drivers (issue 48; ``pick`` as above) on a tiny layered block."""
    from rankboost._kernels import push, push_split, push_step

    level = np.array([0, 1, 1, 0, 2], dtype=np.int64)
    qstart = np.array([0, 3, 5], dtype=np.int64)
    lstart = np.array([0, 2, 5], dtype=np.int64)
    log_c = np.log(np.array([0.25, 0.5]))
    H = np.array([0.1, -0.2, 0.3, 0.0, 0.5])
    h = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    lp, s, v, pi = (np.empty(5) for _ in range(4))
    lvl, split = np.empty((5, 4)), np.empty((5, 6))
    (push._eval_serial, push._eval_parallel)[pick](
        level, qstart, lstart, log_c, H, h, 0.0, 2.0, lp, s, v, lvl
    )
    log_r = push.push_combine(lp, s, v)[0]
    (push._potential_serial, push._potential_parallel)[pick](
        level, qstart, lstart, H, lp, log_r, lvl, pi
    )
    w_row, m_lvl = np.empty(5), np.empty(5)
    (push_step._refresh_serial, push_step._refresh_parallel)[pick](
        level, qstart, lstart, log_c, H, 2.0, lp, lvl, w_row, m_lvl, np.empty(2)
    )
    (push_split._split_serial, push_split._split_parallel)[pick](
        level, qstart, lstart, log_c, H, h.astype(np.uint8), 2.0, split, w_row, m_lvl
    )
    order = np.array([1, 0, 2, 3, 4], dtype=np.int32)  # each query's rows by increasing H
    errors = np.empty(2)
    (push_step._step_serial, push_step._step_parallel)[pick](
        H.copy(), h.astype(np.uint8), 0.5, level, qstart, lstart, log_c, 2.0, order,
        np.empty_like(order), errors, lp, lvl, w_row, m_lvl, np.empty(2),
    )  # fmt: skip
    return pi


def _run_top_k(pick: int) -> list[np.ndarray]:
    """The item-similarity pruning driver (``_scale.top_k_similar``; ``pick`` as above)."""
    from rankboost._kernels import gram

    rng = np.random.default_rng(5)
    S = np.round(rng.normal(size=(20, 30)), 1)  # ties, zeros and negatives
    out = []
    for scale in (np.empty(0), 1 / np.sqrt(rng.integers(1, 9, 30))):
        idx, val, cnt = np.zeros((20, 6), np.int64), np.zeros((20, 6)), np.zeros(20, np.int64)
        (gram._top_k_rows_serial, gram._top_k_rows_parallel)[pick](4, S, scale, 6, idx, val, cnt)
        out += [idx, val, cnt]
    return out


def test_gram_drivers_give_the_same_bits():
    np.testing.assert_array_equal(_run_gram(0), _run_gram(1))
    for s, p in zip(_run_top_k(0), _run_top_k(1), strict=True):
        np.testing.assert_array_equal(s, p)


def _run_cells(pick: int) -> list[np.ndarray]:
    """The base recommenders' cell drivers (``BaseScores.cells``, issue 35; ``pick`` as above)."""
    import scipy.sparse as sp

    from rankboost._kernels import cells as kc

    rng = np.random.default_rng(6)

    def triple(M):
        return M.indptr.astype(np.int64), M.indices, M.data

    n_users, n_items = 12, 140
    hist = triple(sp.random(n_users, n_items, density=0.2, format="csr", random_state=rng))
    near = triple(sp.random(n_items, n_items, density=0.05, format="csr", random_state=rng))
    pool = sp.random(9, n_items, density=0.3, format="csr", random_state=rng)
    starts = np.r_[0, np.cumsum(rng.integers(0, 9, n_users))].astype(np.int64)
    cells = (starts, rng.integers(0, n_items, starts[-1]).astype(np.int64))
    sim = rng.normal(size=(n_users, 9))
    W = rng.normal(size=(n_items, n_items))
    n = starts[-1]
    uk, ik, co, ea = (np.zeros(n) for _ in range(4))
    rows = np.zeros((n_users, n_items))
    f = {name: getattr(kc, f"_{name}_cells_" + ("serial", "parallel")[pick])
         for name in ("user_knn", "item_knn", "cooccurrence", "ease")}  # fmt: skip
    f["user_knn"](cells, sim, triple(sp.csc_matrix(pool)), rng.normal(size=n_users), uk)
    f["item_knn"](cells, hist, near, rng.normal(size=n_items), ik)
    f["cooccurrence"](cells, hist, near, n_items, co)
    f["ease"](cells, hist, W, ea)
    (kc._ease_rows_serial, kc._ease_rows_parallel)[pick](hist, W, rows)
    return [uk, ik, co, ea, rows]


def test_cell_drivers_give_the_same_bits():
    for s, p in zip(_run_cells(0), _run_cells(1), strict=True):
        np.testing.assert_array_equal(s, p)


def test_click_pair_drivers_give_the_same_bits():
    for s, p in zip(_run_clicks(0), _run_clicks(1), strict=True):
        np.testing.assert_array_equal(s, p)


def test_binning_histogram_and_graded_drivers_give_the_same_bits():
    for s, p in zip(_run_others(0), _run_others(1), strict=True):
        np.testing.assert_array_equal(s, p)


def _run_split_sums(pick: int) -> list[np.ndarray]:
    """The split-sum drivers of ``criterion="exact_z"`` / RankBoost+ (``pick`` as above)."""
    from rankboost._kernels import split_sums as ss

    rng = np.random.default_rng(2)
    n, d, n_codes = 600, 5, 12
    codes = rng.integers(0, n_codes, size=(d, n)).astype(np.uint8)
    pairs = {name.rsplit(".", 1)[1]: fs[pick] for name, fs in _driver_pairs().items()}
    i0, i1 = rng.integers(0, n, size=(2, 900))
    w = rng.random(900)
    out_pairs = np.empty((4, d, n_codes - 1))
    pairs["_pair_sums"](codes, (i0, i1, w), out_pairs)
    qstart = np.arange(0, n + 1, 30, dtype=np.int64)
    level = np.tile(np.repeat(np.arange(3), 10), n // 30).astype(np.int64)
    lstart = np.arange(0, 3 * (qstart.size - 1) + 1, 3, dtype=np.int64)
    estart = np.arange(0, 9 * (qstart.size - 1) + 1, 9, dtype=np.int64)
    a, b = np.empty(n), np.empty(n)
    A, B, E = np.empty(lstart[-1]), np.empty(lstart[-1]), np.empty(estart[-1])
    log_c = np.zeros(qstart.size - 1)
    layout = (level, qstart, lstart, log_c)
    factors = (a, b, A, B, E, estart)
    ss.layered_factors(rng.normal(size=n), 0.0, layout, factors)
    order = ss.code_order(codes, qstart)
    out_layered = np.empty((4, d, n_codes - 1))
    pairs["_layered_sums"](codes, order, layout, factors, out_layered)
    return [out_pairs, out_layered]


def test_split_sum_drivers_give_the_same_bits():
    for s, p in zip(_run_split_sums(0), _run_split_sums(1), strict=True):
        np.testing.assert_array_equal(s, p)


def test_each_driver_runs_machine_code_of_its_own_kind():
    """After the two tests above ran every driver (compiled or loaded from the on-disk
    cache): only the parallel ones carry numba's parfor reload hook. A serial dispatcher
    that loaded its parallel twin's cache entry (or the reverse) would fail here."""
    _run_layered("serial", _block(2))
    _run_layered("parallel", _block(2))
    _run_others(0)
    _run_others(1)
    _run_split_sums(0)
    _run_split_sums(1)
    _run_clicks(0)
    _run_clicks(1)
    _run_gram(0)
    _run_gram(1)
    _run_top_k(0)
    _run_top_k(1)
    _run_cells(0)
    _run_cells(1)
    _run_push(0)
    _run_push(1)
    for name, (serial, parallel) in _driver_pairs().items():
        for dispatcher, want in ((serial, False), (parallel, True)):
            assert dispatcher.overloads, name
            for cres in dispatcher.overloads.values():
                hooks = [getattr(f, "__name__", "") for f in cres.reload_init]
                assert ("_reload_parfors" in hooks) is want, (name, want)

"""Tests for rankboost.datasets.

External data comes from ``../shared/data`` (see its README for provenance); tests that
need it skip when the folder is absent.
"""

from __future__ import annotations

import gzip
import lzma
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from rankboost.datasets import (
    MQ2008_FEATURE_NAMES,
    RankingDataset,
    RatingsDataset,
    dump_svmlight,
    load_movielens,
    load_mq2008,
    load_query_file,
    load_svmlight,
)
from rankboost.datasets._bundled import _FOLDS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MQ2008_DIR = SHARED / "letor4" / "MQ2008"
LAMBDARANK_DIR = SHARED / "lightgbm_lambdarank"
ML100K = SHARED / "movielens" / "ml-100k" / "u.data.gz"
BUNDLED = Path(__file__).resolve().parents[1] / "src" / "rankboost" / "datasets" / "data"

needs_mq2008 = pytest.mark.skipif(not MQ2008_DIR.is_dir(), reason="../shared data absent")
needs_lambdarank = pytest.mark.skipif(not LAMBDARANK_DIR.is_dir(), reason="../shared data absent")
needs_ml100k = pytest.mark.skipif(not ML100K.is_file(), reason="../shared data absent")


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def assert_same_dataset(a: RankingDataset, b: RankingDataset) -> None:
    np.testing.assert_array_equal(a.X, b.X, strict=True)
    np.testing.assert_array_equal(a.y, b.y, strict=True)
    np.testing.assert_array_equal(a.qid, b.qid, strict=True)
    if a.docids is None or b.docids is None:
        assert a.docids is None
        assert b.docids is None
    else:
        np.testing.assert_array_equal(a.docids, b.docids)


# ---------------------------------------------------------------------------------------
# RankingDataset
# ---------------------------------------------------------------------------------------


def test_ranking_dataset_unpacks_and_summarises():
    data = RankingDataset(np.eye(3), np.array([2.0, 0.0, 1.0]), np.array([7, 7, 9]))
    X, y, qid = data
    assert X is data.X
    assert y is data.y
    assert qid is data.qid
    assert data.n_queries == 2
    assert (data.n_samples, data.n_features) == (3, 3)
    assert repr(data) == "RankingDataset(n_samples=3, n_features=3, n_queries=2, y in [0, 2])"
    no_qid = RankingDataset(np.eye(2), np.zeros(2), None)
    assert no_qid.n_queries == 1
    assert "qid=None" in repr(no_qid)


def test_ranking_dataset_is_frozen():
    data = RankingDataset(np.eye(2), np.zeros(2), np.zeros(2, dtype=np.int64))
    with pytest.raises(AttributeError):
        data.y = np.ones(2)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"X": np.zeros(3), "y": np.zeros(3), "qid": None}, "must be 2-D"),
        ({"X": np.zeros((3, 2)), "y": np.zeros(2), "qid": None}, r"y must have shape \(3,\)"),
        ({"X": np.zeros((3, 2)), "y": np.zeros(3), "qid": np.zeros(4)}, "qid must have shape"),
        (
            {"X": np.zeros((3, 2)), "y": np.zeros(3), "qid": None, "feature_names": ["a"]},
            "has 1 names but X has 2 columns",
        ),
    ],
)
def test_ranking_dataset_rejects_inconsistent_shapes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RankingDataset(**kwargs)


# ---------------------------------------------------------------------------------------
# load_svmlight
# ---------------------------------------------------------------------------------------


def test_load_svmlight_basic_semantics(tmp_path):
    path = write(
        tmp_path / "a.txt",
        "# a header comment line\n"
        "2 qid:10 1:0.5 3:1.5 #docid = GX01 inc = 1 prob = 0.3\n"
        "\n"
        "0 qid:10 2:-0.25 #docid = GX02\n"
        "1 qid:3 1:1e-3\n",
    )
    data = load_svmlight(path)
    # 1-based indices: feature k in column k - 1; absent entries are 0.
    np.testing.assert_array_equal(data.X, [[0.5, 0, 1.5], [0, -0.25, 0], [1e-3, 0, 0]])
    assert data.X.dtype == np.float64
    assert data.X.flags.c_contiguous
    np.testing.assert_array_equal(data.y, [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(data.qid, [10, 10, 3])
    assert data.qid.dtype == np.int64
    assert data.docids.tolist() == ["GX01", "GX02", ""]
    assert data.feature_names is None


def test_load_svmlight_n_features_pads(tmp_path):
    path = write(tmp_path / "a.txt", "1 qid:1 2:3\n")
    assert load_svmlight(path, n_features=5).X.shape == (1, 5)


def test_load_svmlight_without_qid_or_comments(tmp_path):
    data = load_svmlight(write(tmp_path / "a.svm", "1 1:2\n0 2:3\n"))
    assert data.qid is None
    assert data.docids is None
    assert data.n_queries == 1


def test_load_svmlight_qid_agrees_with_sklearn(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((50, 4))
    qid = np.sort(rng.integers(0, 9, 50))
    path = tmp_path / "a.txt"
    dump_svmlight(path, X, rng.integers(0, 3, 50), qid)
    _, _, sk_qid = load_svmlight_file(str(path), query_id=True)
    np.testing.assert_array_equal(load_svmlight(path).qid, sk_qid)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_load_svmlight_compressed(tmp_path, suffix):
    X = np.array([[1.0, 2.0], [3.0, 0.5]])
    plain = tmp_path / "plain.txt"
    dump_svmlight(plain, X, [1, 0], [4, 4], docids=["a", "b"])
    packed = tmp_path / ("packed.txt" + suffix)
    dump_svmlight(packed, X, [1, 0], [4, 4], docids=["a", "b"])
    assert packed.read_bytes() != plain.read_bytes()
    assert_same_dataset(load_svmlight(packed), load_svmlight(plain))


def test_compression_detected_from_content(tmp_path):
    path = tmp_path / "no_suffix"
    path.write_bytes(gzip.compress(b"1 qid:1 1:2\n"))
    np.testing.assert_array_equal(load_svmlight(path).X, [[2.0]])


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"1 qid:1 1:2 #docid = D1\r\n0 qid:1 1:3 #docid = D2\r\n")
    data = load_svmlight(path)
    np.testing.assert_array_equal(data.X, [[2.0], [3.0]])
    assert data.docids.tolist() == ["D1", "D2"]


def test_load_svmlight_missing_file(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_svmlight(missing)


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("1 qid:1 1:2\nabc qid:1 1:2\n", 2, "could not convert"),
        ("1 qid:1 1:2\n1 qid:1 1:x\n", 2, "could not convert"),
        ("1 qid:1 1:2\n\n1 qid:1 2 3\n", 3, "not enough values"),
        ("1 qid:1 0:2\n", 1, "index 0 is invalid"),
        ("1 qid:1 2:1 1:2\n", 1, "increasing and unique"),
        ("1 qid:1 1:2\n1 qid:1 1:2 1:3\n", 2, "increasing and unique"),
    ],
)
def test_load_svmlight_malformed_line_reports_line_number(tmp_path, text, line, match):
    path = write(tmp_path / "bad.txt", text)
    with pytest.raises(ValueError, match=rf"bad\.txt', line {line}: .*{match}"):
        load_svmlight(path)


def test_load_svmlight_malformed_qid(tmp_path):
    path = write(tmp_path / "bad.txt", "1 qid:1 1:2\n1 qid:x 1:2\n")
    with pytest.raises(ValueError, match=r"bad\.txt', line 2: malformed query id 'qid:x'"):
        load_svmlight(path)


def test_load_svmlight_mixed_qid_presence(tmp_path):
    path = write(tmp_path / "mixed.txt", "1 qid:1 1:2\n1 1:2\n")
    with pytest.raises(ValueError, match=r"line 2: this line has no 'qid:'"):
        load_svmlight(path)


def test_load_svmlight_n_features_too_small(tmp_path):
    path = write(tmp_path / "a.txt", "1 qid:1 1:2\n1 qid:1 4:2\n")
    with pytest.raises(
        ValueError, match=r"line 2: feature index 4 is above the 3 features expected"
    ):
        load_svmlight(path, n_features=3)


@pytest.mark.parametrize("n_features", [0, -1, 2.5, True, "3"])
def test_load_svmlight_bad_n_features(tmp_path, n_features):
    path = write(tmp_path / "a.txt", "1 qid:1 1:2\n")
    with pytest.raises(ValueError, match="n_features must be a positive int or None"):
        load_svmlight(path, n_features=n_features)


def test_load_svmlight_empty_file(tmp_path):
    path = write(tmp_path / "empty.txt", "# only a comment\n\n")
    with pytest.raises(ValueError, match="contains no data lines"):
        load_svmlight(path)


# ---------------------------------------------------------------------------------------
# LightGBM .query files
# ---------------------------------------------------------------------------------------


def test_load_query_file(tmp_path):
    path = write(tmp_path / "g.query", "3\n\n2\n")
    sizes = load_query_file(path)
    np.testing.assert_array_equal(sizes, [3, 2])
    assert sizes.dtype == np.int64


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("3\nx\n", r"line 2: expected a positive integer group size; got 'x'"),
        ("3\n0\n", r"line 2: expected a positive integer group size; got '0'"),
        ("2.5\n", r"line 1: expected a positive integer"),
        ("\n", "contains no group sizes"),
    ],
)
def test_load_query_file_errors(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_query_file(write(tmp_path / "g.query", text))


def test_load_query_file_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"g\.query"):
        load_query_file(tmp_path / "g.query")


@pytest.mark.parametrize(
    ("data_name", "query_name"),
    [
        ("train.txt", "train.txt.query"),
        ("train.txt", "train.txt.query.gz"),
        ("train.txt.gz", "train.txt.gz.query"),
        ("train.txt.gz", "train.txt.query"),
        ("train.txt.gz", "train.txt.query.gz"),
    ],
)
def test_query_file_auto_discovery(tmp_path, data_name, query_name):
    dump_svmlight(tmp_path / data_name, np.ones((5, 2)), np.arange(5), None)
    payload = b"3\n2\n"
    query = tmp_path / query_name
    query.write_bytes(gzip.compress(payload) if query_name.endswith(".gz") else payload)
    data = load_svmlight(tmp_path / data_name)
    np.testing.assert_array_equal(data.qid, [0, 0, 0, 1, 1])
    assert load_svmlight(tmp_path / data_name, query_file=None).qid is None


def test_query_file_auto_ignored_when_file_has_qid(tmp_path):
    dump_svmlight(tmp_path / "t.txt", np.ones((2, 1)), [1, 0], [8, 9])
    write(tmp_path / "t.txt.query", "2\n")
    np.testing.assert_array_equal(load_svmlight(tmp_path / "t.txt").qid, [8, 9])


def test_query_file_explicit(tmp_path):
    dump_svmlight(tmp_path / "t.txt", np.ones((3, 1)), [1, 0, 1], None)
    groups = write(tmp_path / "groups.txt", "1\n2\n")
    np.testing.assert_array_equal(
        load_svmlight(tmp_path / "t.txt", query_file=groups).qid, [0, 1, 1]
    )


def test_query_file_explicit_conflicts_with_qid(tmp_path):
    dump_svmlight(tmp_path / "t.txt", np.ones((2, 1)), [1, 0], [8, 9])
    groups = write(tmp_path / "groups.txt", "2\n")
    with pytest.raises(
        ValueError, match=r"query_file='.*groups\.txt' was given but .* already has 'qid:'"
    ):
        load_svmlight(tmp_path / "t.txt", query_file=groups)


def test_query_file_sizes_must_match_rows(tmp_path):
    dump_svmlight(tmp_path / "t.txt", np.ones((3, 1)), [1, 0, 1], None)
    write(tmp_path / "t.txt.query", "2\n2\n")
    with pytest.raises(ValueError, match=r"summing to 4, but .*t\.txt' has 3 rows"):
        load_svmlight(tmp_path / "t.txt")


def test_query_file_explicit_missing(tmp_path):
    dump_svmlight(tmp_path / "t.txt", np.ones((3, 1)), [1, 0, 1], None)
    with pytest.raises(FileNotFoundError, match=r"nothere\.query"):
        load_svmlight(tmp_path / "t.txt", query_file=tmp_path / "nothere.query")


@needs_lambdarank
def test_lightgbm_lambdarank_train_with_query_file():
    """LightGBM examples/lambdarank/rank.train (+ .query); counts from shared/data/README."""
    data = load_svmlight(LAMBDARANK_DIR / "rank.train.gz")
    assert data.X.shape == (3005, 300)
    assert data.n_queries == 201
    sizes = load_query_file(LAMBDARANK_DIR / "rank.train.query.gz")
    assert (sizes.sum(), sizes.min(), sizes.max()) == (3005, 1, 27)
    np.testing.assert_array_equal(np.bincount(data.qid), sizes)
    np.testing.assert_array_equal(np.bincount(data.y.astype(int)), [645, 1211, 858, 222, 69])
    assert data.docids is None
    X_sk, y_sk = load_svmlight_file(str(LAMBDARANK_DIR / "rank.train.gz"), zero_based=False)
    np.testing.assert_array_equal(data.X, X_sk.toarray())
    np.testing.assert_array_equal(data.y, y_sk)


# ---------------------------------------------------------------------------------------
# dump_svmlight
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rt.txt", "rt.txt.gz"])
def test_round_trip_is_exact(tmp_path, name):
    rng = np.random.default_rng(42)
    X = rng.standard_normal((40, 7)) * 10.0 ** rng.integers(-300, 300, (40, 7))
    X[0, :3] = [0.0, -0.0, 1 / 3]
    X[1, :] = 0.0
    X[:, -1] = 0.0  # an all-zero last column must survive (written explicitly)
    y = rng.integers(0, 5, 40).astype(float)
    y[3] = 0.1 + 0.2
    qid = np.sort(rng.integers(-5, 2**40, 40))
    docids = [f"doc-{i}" for i in range(40)]
    path = tmp_path / name
    dump_svmlight(path, X, y, qid, docids=docids, comment="written by\nthe tests")
    back = load_svmlight(path)
    assert back.X.tobytes() == X.tobytes()  # bit-exact, including -0.0
    assert back.y.tobytes() == y.tobytes()
    np.testing.assert_array_equal(back.qid, qid)
    assert back.docids.tolist() == docids
    if name.endswith(".gz"):
        with gzip.open(path, "rt") as fh:
            assert fh.readline() == "# written by\n"


def test_dump_writes_letor_style(tmp_path):
    path = tmp_path / "out.txt"
    dump_svmlight(path, [[0.25, 1.0]], [2.0], [7], docids=["GX01"])
    assert path.read_text() == "2 qid:7 1:0.25 2:1.0 #docid = GX01\n"
    dump_svmlight(path, [[0.25, 1.0]], [0.5], None)
    assert path.read_text() == "0.5 1:0.25 2:1.0\n"


def test_dump_accepts_sparse_and_float_qid(tmp_path):
    from scipy import sparse

    path = tmp_path / "out.txt"
    dump_svmlight(path, sparse.csr_matrix([[0.0, 3.0]]), [1], np.array([4.0]))
    assert path.read_text() == "1 qid:4 1:0.0 2:3.0\n"


def test_dump_is_atomic_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old content\n")
    with pytest.raises(ValueError, match="NaN or infinity"):
        dump_svmlight(path, [[np.nan]], [1], [1])
    assert path.read_text() == "old content\n"
    dump_svmlight(path, [[1.0]], [1], [1])
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_dump_cleans_up_temp_file_on_write_error(tmp_path, monkeypatch):
    import rankboost.datasets._svmlight_write as mod

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")
        yield ""  # pragma: no cover

    monkeypatch.setattr(mod, "_iter_lines", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        dump_svmlight(tmp_path / "out.txt", [[1.0]], [1], [1])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("X", "y", "qid", "docids", "match"),
    [
        ([[1.0, np.nan]], [1], [1], None, r"NaN or infinity \(first at row 0, column 1\)"),
        ([[np.inf]], [1], [1], None, "cannot represent them"),
        ([[1.0]], [np.nan], [1], None, "y contains NaN"),
        ([[1.0], [2.0]], [1], [1, 1], None, "y has 1 entries but X has 2 rows"),
        ([[1.0]], [1], [1, 2], None, r"one query id per row \(1\)"),
        ([[1.0]], [1], ["q1"], None, "needs integer query ids"),
        ([[1.0]], [1], [1.5], None, "needs integer query ids"),
        ([[1.0]], [1], [1], ["a", "b"], "docids has 2 entries but X has 1 rows"),
        ([[1.0]], [1], [1], ["a b"], r"docids\[0\] = 'a b' cannot be written"),
        ([[1.0]], [1], [1], ["a#b"], "cannot be written"),
        ([[1.0]], [1], [1], [""], "cannot be written"),
    ],
)
def test_dump_svmlight_errors(tmp_path, X, y, qid, docids, match):
    with pytest.raises(ValueError, match=match):
        dump_svmlight(tmp_path / "out.txt", X, y, qid, docids=docids)


def test_dump_svmlight_rejects_1d_X(tmp_path):
    with pytest.raises(ValueError, match="must be 2-D"):
        dump_svmlight(tmp_path / "out.txt", [1.0, 2.0], [1, 0], None)


# ---------------------------------------------------------------------------------------
# Bundled MQ2008
# ---------------------------------------------------------------------------------------


def test_mq2008_fold1_shapes_and_counts():
    """Counts from shared/data/README.md (measured on the LETOR files)."""
    train, vali, test = load_mq2008()
    for part, (n, q, labels) in zip(
        (train, vali, test),
        [
            (9630, 471, [7820, 1223, 587]),
            (2707, 157, [2140, 400, 167]),
            (2874, 156, [2319, 378, 177]),
        ],
        strict=True,
    ):
        assert part.X.shape == (n, 46)
        assert part.n_queries == q
        np.testing.assert_array_equal(np.bincount(part.y.astype(int)), labels)
        assert part.docids is not None
        assert part.docids[0].startswith("GX")
        assert part.feature_names == list(MQ2008_FEATURE_NAMES)
    assert 0.0 <= train.X.min()
    assert train.X.max() <= 1.0


def test_mq2008_all_folds_cover_all_queries_once():
    for fold in range(1, 6):
        parts = load_mq2008(fold)
        assert sum(p.n_samples for p in parts) == 15211
        qids = np.concatenate([np.unique(p.qid) for p in parts])
        assert qids.shape[0] == np.unique(qids).shape[0] == 784


def test_mq2008_returns_fresh_writable_copies():
    train, _, test = load_mq2008(1)
    train.X[:] = -1.0
    test.y[:] = 99.0
    test.feature_names.append("junk")
    train2, _, test2 = load_mq2008(1)
    assert train2.X.min() >= 0.0
    assert test2.y.max() == 2.0
    assert len(test2.feature_names) == 46


def test_mq2008_feature_names():
    assert len(MQ2008_FEATURE_NAMES) == 46 == len(set(MQ2008_FEATURE_NAMES))
    assert MQ2008_FEATURE_NAMES[0] == "tf_body"
    assert MQ2008_FEATURE_NAMES[24] == "bm25_whole_document"
    assert MQ2008_FEATURE_NAMES[40] == "pagerank"
    assert MQ2008_FEATURE_NAMES[45] == "child_page_count"


@pytest.mark.parametrize("fold", [0, 6, 1.0, "1", True, None])
def test_mq2008_bad_fold(fold):
    with pytest.raises(ValueError, match=r"fold must be one of 1, 2, 3, 4, 5; got"):
        load_mq2008(fold)


@needs_mq2008
@pytest.mark.parametrize("fold", [1, 2, 3, 4, 5])
def test_bundled_subsets_rebuild_shared_fold_files_byte_for_byte(fold):
    subsets = {
        k: lzma.decompress((BUNDLED / f"MQ2008-S{k}.txt.xz").read_bytes()) for k in range(1, 6)
    }
    train, vali, test = _FOLDS[fold]
    for part, keys in (("train", train), ("vali", (vali,)), ("test", (test,))):
        with gzip.open(MQ2008_DIR / f"Fold{fold}" / f"{part}.txt.gz", "rb") as fh:
            assert b"".join(subsets[k] for k in keys) == fh.read(), (fold, part)


@needs_mq2008
def test_bundled_fold1_equals_shared_files():
    bundled = load_mq2008(1)
    for part, data in zip(("train", "vali", "test"), bundled, strict=True):
        shared = load_svmlight(MQ2008_DIR / "Fold1" / f"{part}.txt.gz")
        assert_same_dataset(data, shared)
        X_sk, y_sk, q_sk = load_svmlight_file(
            str(MQ2008_DIR / "Fold1" / f"{part}.txt.gz"), query_id=True, zero_based=False
        )
        np.testing.assert_array_equal(data.X, X_sk.toarray())
        np.testing.assert_array_equal(data.y, y_sk)
        np.testing.assert_array_equal(data.qid, q_sk)


# ---------------------------------------------------------------------------------------
# MovieLens
# ---------------------------------------------------------------------------------------


@needs_ml100k
def test_movielens_100k_counts():
    """MovieLens 100K u.data; counts from shared/data/README.md."""
    ratings = load_movielens(ML100K)
    assert len(ratings) == 100_000
    assert (ratings.n_users, ratings.n_items) == (943, 1682)
    np.testing.assert_array_equal(
        np.bincount(ratings.rating.astype(int))[1:], [6110, 11370, 27145, 34174, 21201]
    )
    assert (ratings.user[0], ratings.item[0], ratings.rating[0], ratings.timestamp[0]) == (
        196,
        242,
        3.0,
        881250949,
    )
    assert (ratings.timestamp.min(), ratings.timestamp.max()) == (874724710, 893286638)
    for name, dtype in (("user", np.int64), ("item", np.int64), ("rating", np.float64)):
        assert getattr(ratings, name).dtype == dtype
    M, users, items = ratings.to_matrix()
    assert M.shape == (943, 1682)
    assert M.nnz == 100_000
    assert M.dtype == np.float64
    assert M[np.searchsorted(users, 196), np.searchsorted(items, 242)] == 3.0


def test_movielens_ratings_dat_format(tmp_path):
    path = write(
        tmp_path / "ratings.dat",
        "1::1193::5::978300760\n1::661::3::978302109\n\n2::1193::4::978298413\n",
    )
    ratings = load_movielens(path)
    np.testing.assert_array_equal(ratings.user, [1, 1, 2])
    np.testing.assert_array_equal(ratings.item, [1193, 661, 1193])
    np.testing.assert_array_equal(ratings.rating, [5.0, 3.0, 4.0])
    np.testing.assert_array_equal(ratings.timestamp, [978300760, 978302109, 978298413])
    M, users, items = ratings.to_matrix()
    np.testing.assert_array_equal(M.toarray(), [[3.0, 5.0], [0.0, 4.0]])
    np.testing.assert_array_equal(users, [1, 2])
    np.testing.assert_array_equal(items, [661, 1193])


def test_movielens_csv_with_header_and_gz(tmp_path):
    path = tmp_path / "ratings.csv.gz"
    path.write_bytes(
        gzip.compress(
            b"userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n"
        )
    )
    ratings = load_movielens(path)
    np.testing.assert_array_equal(ratings.rating, [2.5, 3.0])
    assert (ratings.n_users, ratings.n_items) == (1, 2)


def test_movielens_u_data_format(tmp_path):
    ratings = load_movielens(write(tmp_path / "u.data", "196\t242\t3\t881250949\n"))
    assert repr(ratings) == "RatingsDataset(n_ratings=1, n_users=1, n_items=1)"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1\t2\t3\t4\n1\t3\t5\n", r"not valid u\.data .*columns"),
        ("1::2::x::4\n", r"not valid ratings\.dat"),
        ("1\t2\tnan\t4\n", r"line 1: rating nan is not a finite number"),
        (
            "\n1\t2\t3\t4\n1\t3\t4\t4\n\n1\t2\t5\t9\n",
            r"user 1 rates item 2 twice \(lines 2 and 5\)",
        ),
        ("u,i,r,t\n1,2,3,4\n1,2,3,5\n", r"lines 2 and 3"),
        ("\n\n", "contains no ratings"),
        ("userId,movieId,rating,timestamp\n", "contains no ratings"),
    ],
)
def test_movielens_errors(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_movielens(write(tmp_path / "ratings", text))


def test_movielens_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"u\.data' does not exist \(nor u\.data\.gz"):
        load_movielens(tmp_path / "u.data")


@pytest.mark.parametrize("suffix", [".gz", ".xz"])
def test_movielens_plain_name_finds_the_compressed_copy(tmp_path, suffix):
    """The README's ``load_movielens("ml-100k/u.data")`` on a gzipped mirror (../shared/data)."""
    text = b"196\t242\t3\t881250949\n186\t302\t3\t891717742\n"
    packed = gzip.compress(text) if suffix == ".gz" else lzma.compress(text)
    (tmp_path / f"u.data{suffix}").write_bytes(packed)
    ratings = load_movielens(tmp_path / "u.data")
    np.testing.assert_array_equal(ratings.user, [196, 186])
    (tmp_path / "u.data").write_bytes(b"1\t2\t4\t5\n")  # the plain file wins when both exist
    np.testing.assert_array_equal(load_movielens(tmp_path / "u.data").user, [1])


def test_ratings_dataset_rejects_mismatched_fields():
    with pytest.raises(ValueError, match="rating has shape"):
        RatingsDataset(np.arange(2), np.arange(2), np.zeros(3), np.arange(2))


# ---------------------------------------------------------------------- rankboost datasets write


def _provenance_sha256() -> dict[int, str]:
    """The sha256 of each decompressed subset, from the table of PROVENANCE.md."""
    import re

    text = (Path(__file__).parents[1] / "src/rankboost/datasets/data/PROVENANCE.md").read_text()
    cells = r"\| `MQ2008-S(\d)\.txt\.xz` \|.*\| `[0-9a-f]{64}` \| `([0-9a-f]{64})` \|"
    rows = re.findall(cells, text)
    return {int(k): h for k, h in rows}


@pytest.mark.parametrize("fold", [1, 3])
def test_datasets_write_mq2008_fold_files(tmp_path, capsys, fold):
    """The written fold is LETOR's files (sha256 of PROVENANCE.md), read alike by sklearn."""
    import hashlib

    from rankboost.cli import main

    out = tmp_path / "new" / "mq2008"  # missing folders are created
    assert main(["datasets", "write", "mq2008", str(out), "--fold", str(fold)]) == 0
    assert "train.txt, vali.txt, test.txt, feature_names.txt" in capsys.readouterr().out
    sha = _provenance_sha256()
    train_k, vali_k, test_k = _FOLDS[fold]
    assert hashlib.sha256((out / "vali.txt").read_bytes()).hexdigest() == sha[vali_k]
    assert hashlib.sha256((out / "test.txt").read_bytes()).hexdigest() == sha[test_k]
    train, _, test = load_mq2008(fold)
    X, y, qid = load_svmlight_file(str(out / "train.txt"), query_id=True, n_features=46)
    np.testing.assert_array_equal(X.toarray(), train.X)
    np.testing.assert_array_equal(y, train.y)
    np.testing.assert_array_equal(qid, train.qid)
    assert_same_dataset(load_svmlight(out / "test.txt"), test)
    names = (out / "feature_names.txt").read_text().splitlines()
    assert names == list(MQ2008_FEATURE_NAMES)


def test_datasets_write_refuses_what_it_cannot_write(tmp_path, capsys):
    """A file as DIR, existing outputs without --force: status 2 and nothing written."""
    from rankboost.cli import main

    a_file = write(tmp_path / "f.txt", "x")
    assert main(["datasets", "write", "mq2008", str(a_file)]) == 2
    assert "is a file; pass a folder" in capsys.readouterr().err
    out = tmp_path / "d"
    out.mkdir()
    keep = write(out / "test.txt", "mine\n")
    assert main(["datasets", "write", "mq2008", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankboost: error:")
    assert "already has test.txt; pass --force" in err
    assert keep.read_text() == "mine\n"
    assert sorted(os.listdir(out)) == ["test.txt"]
    (out / "vali.txt").mkdir()
    assert main(["datasets", "write", "mq2008", str(out), "--force"]) == 2
    assert "vali.txt' is a folder" in capsys.readouterr().err
    (out / "vali.txt").rmdir()
    assert main(["datasets", "write", "mq2008", str(out), "--force"]) == 0
    assert keep.read_text().startswith("0 qid:18219 ")  # fold 1 test = S5
    with pytest.raises(SystemExit) as exc:
        main(["datasets", "write", "mq2009", str(out)])
    assert exc.value.code == 2


def test_make_ranking_is_the_examples_toy_data():
    """make_ranking draws X, then the label noise, as the examples did by hand."""
    from rankboost.datasets import make_ranking

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    Xm, ym, qm = make_ranking(300, noise=0.5)
    np.testing.assert_array_equal(Xm, X)
    np.testing.assert_array_equal(ym, y)
    np.testing.assert_array_equal(qm, np.repeat(np.arange(30), 10))
    assert make_ranking(25, 1)[2].tolist() == [0] * 10 + [1] * 10 + [2] * 5  # a short last query
    with pytest.raises(ValueError, match=r"make_ranking: n_samples must be >= 1, got 0\."):
        make_ranking(0)
    with pytest.raises(TypeError, match=r"make_ranking: query_size must be an int"):
        make_ranking(10, query_size=2.5)

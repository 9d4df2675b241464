"""Every model describes itself, and ``rankboost info`` prints that description (issue 45).

Defect 2 of issue 45: ``rankboost info`` on a linear model trained with ``--normalizer dbsf``
or ``atan`` described RRF ("weight x the list's 1 / (60 + rank)") and suggested ``fuse export
--engine elasticsearch``, which refuses such a model. Now the formula line is the
normaliser's definition from the one table of normalisers
(:data:`rankboost.fusion.features.NORMALIZERS`) and the engines are the ones of
:data:`rankboost.fusion.engines.ENGINES` that serve it, with the exact command, which works.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import rankboost as rb
from rankboost.cli import main
from rankboost.cli._common import table as _table
from rankboost.description import Description
from rankboost.fusion import Qrels, RankFusion, Run, write_qrels, write_run
from rankboost.fusion.auto import AutoFusion
from rankboost.fusion.engines import ENGINES
from rankboost.fusion.features import NORMALIZERS, normalise_scores
from rankboost.fusion.linear import LINEAR_NORMALIZERS, LinearFusion
from test_model_files import _runs as _two_runs


def _runs(n_q: int = 12, seed: int = 0) -> tuple[list[Run], Qrels]:
    return _two_runs(n_q, seed, names=("bm25", "dense"))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("describe")
    runs, qrels = _runs()
    paths = []
    for r in runs:
        paths.append(str(tmp / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp / "qrels.txt", qrels)
    return tmp, paths, str(tmp / "qrels.txt")


def _info(path: str, capsys) -> list[str]:
    assert main(["info", path, "--top", "0"]) == 0
    return capsys.readouterr().out.splitlines()


#: The engine ``info`` suggests for each normaliser, and its line of engines (docs/hybrid.md,
#: docs/serving.md).
SERVED = {
    "minmax": ("elasticsearch", "elasticsearch, lancedb exactly; opensearch approximately "
               "(--approximate); not qdrant, milvus"),
    "rrf": ("elasticsearch", "elasticsearch, opensearch, qdrant, lancedb exactly; not milvus "
            "(only when the weights are all equal)"),
    "dbsf": ("qdrant", "qdrant exactly; not elasticsearch, opensearch, milvus, lancedb"),
    "atan": ("milvus", "milvus exactly; not elasticsearch, opensearch, qdrant, lancedb"),
}  # fmt: skip


@pytest.mark.parametrize("normalizer", LINEAR_NORMALIZERS)
def test_issue45_info_states_the_normaliser_and_the_engines_that_serve_it(
    files, normalizer, capsys
) -> None:
    """Fails on f395245: dbsf/atan were described as RRF and sent to Elasticsearch; no model
    said which engines serve it."""
    tmp, runs, qrels = files
    model = str(tmp / f"lin_{normalizer}.json")
    argv = ["fuse", "train", "--family", "linear", "--normalizer", normalizer, "--runs", *runs,
            "--qrels", qrels, "--rounds", "3", "--prior-scale", "1", "-o", model, "-q"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    out = _info(model, capsys)
    definition = NORMALIZERS[normalizer].describe(60)
    assert (
        f"fused score = sum over lists of weight x the list's {definition}; 0 where the list "
        "did not return the document"
    ) in out
    engine, line = SERVED[normalizer]
    asked = " --vectors VECTORS" if engine in ("qdrant", "milvus") else ""  # issue 46 item 5
    command = f"rankboost fuse export {model} --engine {engine} -o OUT{asked}"
    assert f"export it: {command}" in out
    assert f"engines: {line}" in out
    # the command it suggests works, its placeholders filled
    written = tmp / f"{normalizer}.{engine}.json"
    filled = command.replace("OUT", str(written)).replace("VECTORS", "bm25 dense")
    assert main(shlex.split(filled)[1:]) == 0
    assert written.exists()


@pytest.mark.parametrize("normalizer", ["dbsf", "atan"])
def test_issue45_engine_normalisers_are_not_described_as_rrf(normalizer) -> None:
    lin = _linear(normalizer, [1.0, 0.5])
    desc = lin.describe("m.json")
    assert "rank" not in desc.formula
    assert desc.normalizer_definition == NORMALIZERS[normalizer].describe()
    assert desc.engines("exact") == [SERVED[normalizer][0]]
    assert "elasticsearch" in desc.engines("no")


def _linear(normalizer: str, weights: list[float]) -> LinearFusion:
    lin = LinearFusion(normalizer=normalizer)
    lin.weights_ = np.asarray(weights, dtype=np.float64)
    lin.list_names_ = [f"l{i}" for i in range(len(weights))]
    lin.n_lists_ = len(weights)
    lin.prior_scale_, lin.n_rounds_, lin.cv_results_ = 1.0, 0, None
    return lin


def test_conditions_and_approximations_are_the_tables() -> None:
    """Milvus serves RRF only with equal weights; OpenSearch min-max only when asked."""
    equal = _linear("rrf", [0.5, 0.5]).describe("m.json")
    assert equal.engines("exact") == ["elasticsearch", "opensearch", "qdrant", "milvus", "lancedb"]
    unequal = _linear("rrf", [0.5, 0.7]).describe("m.json")
    assert unequal.engines("no") == ["milvus"]
    (target,) = [t for t in unequal.targets if t.name == "milvus"]
    assert (target.command, target.note) == ("", "only when the weights are all equal")
    minmax = _linear("minmax", [1.0, 2.0]).describe("m.json")
    (target,) = [t for t in minmax.targets if t.how == "approximate"]
    assert target.name == "opensearch"
    assert target.command == "rankboost fuse export m.json --engine opensearch -o OUT --approximate"


def test_issue45_a_model_no_engine_serves_says_what_to_train(files, capsys) -> None:
    """A boosted model (steps on ranks), and a linear one of a normaliser no engine has."""
    tmp, runs, qrels = files
    boost = str(tmp / "boost.json")
    argv = ["fuse", "train", "--family", "boost", "--runs", *runs, "--qrels", qrels, "--rounds",
            "4", "-o", boost, "-q"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    out = _info(boost, capsys)
    assert not any(line.startswith("export it: rankboost fuse export") for line in out)
    assert (
        "no search engine's hybrid query computes it (steps on the runs' ranks): for an engine "
        "('rankboost fuse export'), train 'rankboost fuse train --family linear' on the same runs"
    ) in out
    assert any(line.startswith(f"export it: rankboost export {boost} --format") for line in out)
    zscore = _linear("zscore", [1.0, 1.0]).describe("z.json")  # not a linear normaliser
    assert zscore.engines("exact") == zscore.engines("approximate") == []
    assert zscore.advice == (
        "no engine serves a linear model of normalizer 'zscore': train 'rankboost fuse train "
        "--family linear --normalizer N' with N minmax or rrf (elasticsearch), rrf "
        "(opensearch), dbsf or rrf (qdrant), atan (milvus), minmax or rrf (lancedb)"
    )
    assert zscore.advice in zscore.lines(_table)


def test_an_auto_model_describes_its_choice_and_the_chosen_model(files) -> None:
    runs, qrels = _runs()
    auto = AutoFusion(candidates=("convex", "rrf"), fallback="convex", cv_folds=3)
    desc = auto.fit(runs, qrels).describe("auto.json")
    assert (desc.family, desc.chosen.family, desc.selection["family"]) == ("auto", "linear",
                                                                          "convex")  # fmt: skip
    assert desc.targets == desc.chosen.targets
    assert desc.formula == desc.chosen.formula
    lines = desc.lines(_table)
    assert lines[0] == "auto fusion model: auto.json"
    assert "the chosen model (convex):" in lines
    assert (
        lines.count("export it: rankboost fuse export auto.json --engine elasticsearch -o OUT") == 1
    )


def test_a_boosted_model_with_a_prior_says_so() -> None:
    runs, qrels = _runs()
    fusion = RankFusion(n_rounds=3, prior="combsum", prior_scale=2.0).fit(runs, qrels)
    desc = fusion.describe("p.json")
    assert desc.formula.startswith(
        "fused score = 2 x F_0 + sum of H, F_0 = the sum over lists of the list's "
        f"{NORMALIZERS['minmax'].describe()}"
    )
    assert "(fused score = 2 x F_0 + sum of H" in desc.tables[-1].caption


def test_the_ranking_models_description_is_what_info_prints(tmp_path, capsys) -> None:
    """``RankBoostModel.describe(path).lines`` is ``rankboost info``'s text (its tables, the
    --top and --head rows), with the line of export formats."""
    X = np.random.default_rng(0).normal(size=(90, 4))
    y = np.tile([0, 1, 2], 30)
    model = rb.train(X, rb.LayeredFeedback(y + (X[:, 0] > 0), np.repeat(range(9), 10)), 12)
    path = str(tmp_path / "m.json")
    model.save(path)
    assert main(["info", path, "--top", "2", "--head", "3"]) == 0
    shown = capsys.readouterr().out.splitlines()
    lines = "\n".join(model.describe(path).lines(_table, top=2, head=3)).splitlines()
    (export,) = [line for line in lines if line.startswith("export it:")]
    assert export.startswith(f"export it: rankboost export {path} --format FORMAT -o OUT (FORMAT")
    assert [line for line in shown if not line.startswith("export it:")] == [
        line for line in lines if line != export
    ]


@pytest.mark.parametrize(
    "model", [RankFusion(), LinearFusion(), AutoFusion()], ids=lambda m: type(m).__name__
)
def test_describe_an_unfitted_model(model) -> None:
    with pytest.raises(NotFittedError, match=f"{type(model).__name__}.describe: .* not fitted"):
        model.describe()


def test_every_normaliser_is_described_beside_its_values() -> None:
    """One table: the values ``normalise_scores`` computes and the definition info prints."""
    run = Run(["q", "q", "q", "r"], ["a", "b", "c", "a"], [1, 2, 3, 1], [3.0, 2.0, 1.0, 5.0])
    assert set(LINEAR_NORMALIZERS) <= set(NORMALIZERS)
    for name, norm in NORMALIZERS.items():
        np.testing.assert_array_equal(normalise_scores(run, name, k=7), norm.values(run, 7))
        assert "{" not in norm.describe(7)
    assert NORMALIZERS["rrf"].describe(7) == "1 / (7 + rank)"
    for engine in ENGINES.values():  # every engine expresses normalisers that exist
        assert set(engine.normalizers) <= set(LINEAR_NORMALIZERS), engine.name


def test_description_is_light() -> None:
    code = "import sys, rankboost.description; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert Description(kind="k", family="f", formula="x").path == "MODEL"

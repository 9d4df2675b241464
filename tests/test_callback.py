"""The public callbacks live in ``rankboost.callback`` (LightGBM's layout)."""

from __future__ import annotations

import rankboost as rb
import rankboost.callback as callback

PUBLIC = [
    "CallbackEnv",
    "EarlyStopException",
    "EvaluationMonitor",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
]


def test_public_callbacks_are_defined_in_rankboost_callback():
    assert sorted(callback.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        obj = getattr(callback, name)
        assert obj.__module__ == "rankboost.callback", name
        assert getattr(rb, name) is obj, name

"""The pieces of ``experiments/hybrid.py`` (the hybrid-search benchmark), split by concept.

* :mod:`hybridlib.corpora`: the test collections (CISI, MED, CACM, LISA), their first-stage
  runs (six lexical retrievers and the all-MiniLM-L6-v2 dense run);
* :mod:`hybridlib.protocol`: folds, per-query scores, paired tests, the fusion methods per fold;
* :mod:`hybridlib.report`: tables, the chart and the docs writer;
* :mod:`hybridlib.loco`: the leave-one-collection-out benchmark (issue 33).
"""

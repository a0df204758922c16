"""rag_judge in other tools: runs logged to an MLflow tracking store, judges as MLflow scorers.

:mod:`~rag_judge.integrations.tracking_store` logs a finished run (what ``--mlflow`` does),
:mod:`~rag_judge.integrations.logged_runs` says what a sweep, a score run or a calibration puts
there, and :mod:`~rag_judge.integrations.mlflow` makes any judge a scorer for
``mlflow.genai.evaluate``. MLflow is an optional extra (``pip install 'rag-judge[mlflow]'``),
imported only when one of them is used.
"""

"""The jobs (score rows, sweep k, compare retrievers, calibrate): orchestration only.

Each job opens one :class:`~rag_judge.runtime.session.Session` and calls the floors below it.
"""

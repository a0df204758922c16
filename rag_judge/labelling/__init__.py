"""``rag-judge label``: a local page that shows one judged row at a time and records a person's
labels as an append-only log (:mod:`rag_judge.calibration.label_log`) that ``calibrate`` reads.

- ``plan.py``: which rows to offer (the score file, the metric, the seeded sample) and what the
  page shows of each;
- ``store.py``: the log on disk, resumed when it exists; every label written and synced;
- ``app.py``: the page and its JSON API (starlette), behind a token;
- ``serve.py``: the server on 127.0.0.1 (uvicorn);
- ``static/``: the page itself, HTML, CSS and plain JavaScript (no network, no CDN).
"""

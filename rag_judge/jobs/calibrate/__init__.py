"""Calibration jobs: how far a judge agrees with people, and a judge fitted to their labels.

``job`` judges a bundled labelled set or joins score and label files and hands the statistics
to :mod:`rag_judge.calibration` (``rag-judge calibrate``); ``fit_profile`` fits a profile from a
score file and labels, checks it before a run and applies it to score and sweep results
(``calibrate --fit``, ``--calibration``).
"""

"""The configuration sweep: a grid of retrievers, rerankers, chunkings (or your own RAGs), each
swept at every k on the same questions, and one decision over every (configuration, k) arm.

Usage (:func:`~rag_judge.jobs.grid.job.asweep_grid` is the twin to await)::

    from rag_judge.jobs.grid.job import sweep_grid
    grid = sweep_grid("squad2_en_chunked", grid=["retriever=bm25,dense,hybrid"], limit=150)
    grid.decision.headline, grid.per_question  # a configuration column beside k

Parts: :mod:`.job` (the sweep, where the executor says), :mod:`.until_decided` (elimination of
arms), :mod:`.result` (the arms and the one table), :mod:`.dry_run` (the plan before any call).
The grid itself, its axes and configurations, is one of the sweep's options
(:mod:`rag_judge.jobs.sweep.grid_axes`, checked when parsed, with the others).
"""

"""Synthetic eval sets from a team's own documents: what ``rag-judge synth`` is made of.

Chunks are sampled across documents (:mod:`.sampling`); the model writes a question per chunk
or pair of chunks (:mod:`.steps`); pure filters drop questions that copy their chunk or repeat
another (:mod:`.overlap`); the kept questions become an eval set folder (:mod:`.set_writer`).
The order of the work, and the filters that need a judge, are the job's
(:mod:`rag_judge.jobs.synth`).
"""

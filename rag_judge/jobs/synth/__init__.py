"""``rag-judge synth``: an eval set from a folder of documents (see :mod:`.job`)."""

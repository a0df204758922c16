"""rag_judge: evaluate retrieval-augmented generation end to end."""

__version__ = "0.1.0"

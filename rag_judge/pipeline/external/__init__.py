"""The user's own RAG under test: a Python callable, a JSONL file of retrievals, or an endpoint."""

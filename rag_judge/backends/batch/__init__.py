"""Batch APIs: collecting requests, the OpenAI Batch wire and reading its replies."""

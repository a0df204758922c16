"""Prompt files: loading, rendering, hashing and checking them, and the output models they name."""

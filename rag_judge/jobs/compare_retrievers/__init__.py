"""The retriever comparison job: rank once per retriever, score by id and by text, test pairs."""

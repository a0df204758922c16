"""The score job: judge rows with the LLM judges and summarise the results."""

"""Settings, and the one place that builds the model client, cache, ledger and embedders."""

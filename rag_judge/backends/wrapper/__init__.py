"""The shared wrapper every backend is called through: client, cache, ledger, retries."""

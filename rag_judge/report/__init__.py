"""Turning results into things people read: tables, the k-sweep plot, HTML and markdown reports."""

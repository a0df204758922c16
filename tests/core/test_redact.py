"""URLs as rag_judge prints and logs them: secrets hidden, everything else exactly as given."""

from __future__ import annotations

import pytest

from rag_judge.core.redact import redact_url, redact_urls


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///mlflow.db",
        "sqlite:////tmp/abs/mlflow.db",
        "file:///tmp/mlruns",
        "http://127.0.0.1:5000",
        "https://rag.example/ask?k=3&lang=zh",
    ],
)
def test_a_url_with_nothing_secret_is_kept_as_given(url: str) -> None:
    assert redact_url(url) == url


def test_user_info_and_secret_query_values_are_hidden() -> None:
    assert redact_url("https://me:pw@rag.example/ask") == "https://***@rag.example/ask"
    hidden = redact_url("https://rag.example/ask?api_key=abc&k=3")
    assert "abc" not in hidden
    assert hidden.endswith("k=3")


def test_urls_inside_a_message_are_redacted() -> None:
    text = redact_urls("failed on https://me:pw@h.example/x (sqlite:///m.db fine)")
    assert text == "failed on https://***@h.example/x (sqlite:///m.db fine)"

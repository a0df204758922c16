"""JSON from users' files: nesting too deep to parse is malformed JSON like any other.

``json.loads`` raises ``RecursionError`` on a value nested some thousands deep (a line of
100,000 ``[`` is one); every reader of user input parses through :func:`loads`, so it gets a
``JSONDecodeError`` and its usual one-line error naming the file and line.

>>> loads('{"a": [1, 2]}')
{'a': [1, 2]}
>>> loads("[" * 100_000)
Traceback (most recent call last):
...
json.decoder.JSONDecodeError: nested too deeply: line 1 column 1 (char 0)
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """``json.loads``, with too deep nesting raised as ``json.JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        document = text if isinstance(text, str) else ""
        raise json.JSONDecodeError("nested too deeply", document, 0) from None

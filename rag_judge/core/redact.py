"""URLs as they may be shown: without the password, key or token a user put in them.

A URL given on the command line (``--rag http://user:SECRET@host/rag``, ``--base-url
https://host/v1?api_key=...``) is printed in reports, progress lines and errors; every such
place shows :func:`redact_url` of it, and an error text that quotes one goes through
:func:`redact_urls`.

>>> redact_url("http://user:SECRET@127.0.0.1:8000/rag?k=3&token=abc")
'http://***@127.0.0.1:8000/rag?k=3&token=***'
>>> redact_urls("POST http://me:pw@host/x failed")
'POST http://***@host/x failed'
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_PARAMETERS: Final = re.compile(
    r"key|token|secret|password|passwd|pwd|auth|signature|sig|credential|session|code",
    re.IGNORECASE,
)
"""Query parameters whose values are hidden (``api_key``, ``access_token``, ``sig`` ...)."""
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
HIDDEN: Final = "***"


def redact_url(url: str) -> str:
    """``url`` with its user info and secret-looking query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return HIDDEN
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rsplit('@', 1)[1]}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret = any(SECRET_PARAMETERS.search(k) for k, _ in pairs)
    if netloc == parts.netloc and not secret:
        return url  # as given: urlunsplit would turn sqlite:///x.db into sqlite:/x.db
    query = parts.query
    if secret:
        query = urlencode(
            [(k, HIDDEN if SECRET_PARAMETERS.search(k) else v) for k, v in pairs], safe="*"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_urls(text: str) -> str:
    """Every URL inside ``text`` redacted (error messages that quote the URL they failed on)."""
    return _URL.sub(lambda match: redact_url(match.group()), text)

"""Where in the user's own code an error arose: ``file:line``, for a one-line message.

An error of the code behind ``--rag`` is the user's to fix, so the message names their file and
line rather than printing a traceback through rag_judge, importlib or a library.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

_OURS = Path(__file__).resolve().parents[2]
"""The rag_judge package: never the user's code."""
_INSTALLED = tuple(
    Path(p).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)  # fmt: skip
"""The standard library and installed packages: the user's code calls into them."""


def where(error: BaseException) -> str:
    """``file:line`` of the innermost frame of ``error`` in the user's own code (else the
    innermost frame outside rag_judge; "" when there is none). A syntax error names the line
    the parser stopped at."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<")
    ]  # fmt: skip
    outside = [f for f in frames if not _within(f.filename, (_OURS,))]
    own = [f for f in outside if not _within(f.filename, _INSTALLED)]
    chosen = (own or outside)[-1:]
    return f"{chosen[0].filename}:{chosen[0].lineno}" if chosen else ""


def _within(filename: str, roots: tuple[Path, ...]) -> bool:
    path = Path(filename).resolve()
    return any(path.is_relative_to(root) for root in roots)


def described(error: BaseException) -> str:
    """``ValueError: message (at file.py:12)``: the error in one line, with where it arose."""
    text = str(error.msg) if isinstance(error, SyntaxError) else str(error)
    found = where(error)
    return f"{type(error).__name__}: {text}" + (f" (at {found})" if found else "")

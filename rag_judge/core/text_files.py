"""Reading a user's text file: UTF-8 with or without a BOM, every failure an InputError."""

from __future__ import annotations

import os
from pathlib import Path

from rag_judge.core.errors import InputError


def read_text(path: str | os.PathLike[str]) -> str:
    """A UTF-8 file's text, a leading BOM dropped (spreadsheets and Windows editors write one;
    kept, it would become part of the first query id or column name)."""
    source = str(path)
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found", source=source) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", source=source) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", source=source) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=source) from None

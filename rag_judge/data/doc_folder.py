"""A folder of a team's own documents, read as :class:`~rag_judge.core.types.Document` values.

``.txt`` and ``.md`` files are one document each (a Markdown file's first ``#`` heading is its
title), ``.html``/``.htm`` one document of its visible text (``<script>``/``<style>`` dropped,
``<title>`` as the title), and ``.jsonl`` one document per line (``text``, optional ``title``
and ``id``/``doc_id``). Subfolders are read too, in sorted order, so the result does not depend
on the file system. Files of other kinds are listed as skipped, never read silently; PDF and
Word files are refused with a "convert it first" message, as are binary files, text that is not
UTF-8 and files over :data:`MAX_FILE_BYTES`. Every error names the file (and line, for JSONL).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.md").write_text("# Wind tunnels\\nA tunnel at Mach 2.", encoding="utf-8")
>>> found = read_document_folder(folder)
>>> [(d.id, d.title, d.text) for d in found.documents]
[('a.md', 'Wind tunnels', '# Wind tunnels\\nA tunnel at Mach 2.')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

from rag_judge.core.errors import InputError
from rag_judge.core.types import Document

TEXT_SUFFIXES: Final = (".txt", ".md", ".markdown")
HTML_SUFFIXES: Final = (".html", ".htm")
LINES_SUFFIXES: Final = (".jsonl",)
READ_SUFFIXES: Final = (*TEXT_SUFFIXES, *HTML_SUFFIXES, *LINES_SUFFIXES)
"""The kinds of file read, by extension (case-insensitive)."""
CONVERT_FIRST: Final = {".pdf": "PDF", ".docx": "Word", ".doc": "Word", ".odt": "OpenDocument"}
"""Document formats refused with a "convert it to text first" message."""
MAX_FILE_BYTES: Final = 20 * 1024 * 1024
"""Largest file read: a bigger one is usually an export or a dump; split it (one document per
JSONL line) or point at the part that holds documents."""
_SNIFF_BYTES: Final = 8192
_BLOCK_TAGS: Final = frozenset(
    [
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "tr",
        "td",
        "th",
        "table",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "dt",
        "dd",
        "hr",
    ]
)


@dataclass(frozen=True)
class DocumentFolder:
    """The documents read from a folder, and the files passed over with the reason."""

    documents: tuple[Document, ...]
    files: tuple[str, ...]
    """The files read, relative to the folder, in order."""
    skipped: dict[str, str]
    """Files not read (relative path -> why): other kinds, empty files."""


def read_document_folder(folder: str | Path) -> DocumentFolder:
    """Every document under ``folder`` (see the module docstring).

    Raises:
        InputError: no folder, no document in it, or a file that cannot be read as text
            (named, with the reason and what to do).
    """
    root = Path(folder)
    if not root.is_dir():
        what = "is a file, not a folder" if root.is_file() else "no such folder"
        raise InputError(what, source=str(root))
    documents: list[Document] = []
    files: list[str] = []
    skipped: dict[str, str] = {}
    seen: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            skipped[name] = "hidden"
            continue
        suffix = path.suffix.lower()
        if suffix in CONVERT_FIRST:
            raise InputError(
                f"{CONVERT_FIRST[suffix]} files are not read; convert it to .txt, .md or "
                ".html first (e.g. pdftotext, pandoc)",
                source=str(path),
            )
        if suffix not in READ_SUFFIXES:
            skipped[name] = f"not a kind read ({', '.join(READ_SUFFIXES)})"
            continue
        found = _read_file(path, name)
        if not found:
            skipped[name] = "no text"
            continue
        for document in found:
            if document.id in seen:
                raise InputError(
                    f"document id '{document.id}' repeats (first in {seen[document.id]})",
                    source=str(path),
                    field="id",
                )
            seen[document.id] = name
        documents.extend(found)
        files.append(name)
    if not documents:
        kinds = ", ".join(READ_SUFFIXES)
        why = f"; passed over: {_few(skipped)}" if skipped else ""
        raise InputError(f"no documents to read (looked for {kinds}){why}", source=str(root))
    return DocumentFolder(tuple(documents), tuple(files), skipped)


def _read_file(path: Path, name: str) -> list[Document]:
    """The documents of one file (empty: the file has no text)."""
    text = _text(path)
    suffix = path.suffix.lower()
    if suffix in LINES_SUFFIXES:
        return _jsonl_documents(text, path, name)
    if suffix in HTML_SUFFIXES:
        title, body = html_text(text)
        return [Document(name, body, title or None)] if body.strip() else []
    if not text.strip():
        return []
    return [Document(name, text, _markdown_title(text) if suffix != ".txt" else None)]


def _text(path: Path) -> str:
    """The file's text: not too big, not binary, UTF-8 (a BOM dropped)."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"{size / 2**20:.1f} MiB is over the {MAX_FILE_BYTES // 2**20} MiB a document file "
            "may have; split it (e.g. one document per line of a .jsonl file)",
            source=str(path),
        )
    data = path.read_bytes()
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise InputError(
            "binary data (a NUL byte), not text; convert it to UTF-8 text or move it out of the "
            "folder",
            source=str(path),
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); re-save it as "
            "UTF-8 (e.g. iconv -f GB18030 -t UTF-8)",
            source=str(path),
            line=line,
        ) from None


def _jsonl_documents(text: str, path: Path, name: str) -> list[Document]:
    documents = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON: {error.msg}", source=str(path), line=number) from None
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", source=str(path), line=number)
        body = row.get("text")
        if not isinstance(body, str):
            what = "missing" if "text" not in row else "must be a string"
            raise InputError(what, source=str(path), line=number, field="text")
        given = row.get("id", row.get("doc_id"))
        if given is not None and not isinstance(given, (str, int)):
            raise InputError("must be a string", source=str(path), line=number, field="id")
        title = row.get("title")
        if title is not None and not isinstance(title, str):
            raise InputError("must be a string", source=str(path), line=number, field="title")
        if body.strip():
            doc_id = str(given) if given is not None else f"{name}:{number}"
            documents.append(Document(doc_id, body, title or None))
    return documents


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip() or None
    return None


class _Visible(HTMLParser):
    """The visible text of a page (block elements on their own lines) and its ``<title>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._hidden = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript", "template"):
            self._hidden += 1
        elif tag == "title":
            self._in_title = True
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript", "template"):
            self._hidden = max(0, self._hidden - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            self.parts.append(data)


def html_text(page: str) -> tuple[str, str]:
    """A page's title and visible text, one paragraph per line, runs of spaces collapsed.

    >>> html_text("<title>T</title><p>One <b>two</b></p><script>x()</script><p>Three</p>")
    ('T', 'One two\\nThree')
    """
    parser = _Visible()
    parser.feed(page)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return " ".join("".join(parser.title).split()), "\n".join(line for line in lines if line)


def _few(skipped: dict[str, str], shown: int = 3) -> str:
    items = [f"{name} ({why})" for name, why in list(skipped.items())[:shown]]
    more = f" and {len(skipped) - shown} more" if len(skipped) > shown else ""
    return ", ".join(items) + more

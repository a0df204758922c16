"""Reading a folder of a team's documents: every kind of file, and every bad input named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synth_toy import write_docs

from rag_judge.core.errors import InputError
from rag_judge.data.doc_folder import MAX_FILE_BYTES, html_text, read_document_folder


def test_every_kind_of_file_is_read_in_sorted_order(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs")
    (folder / "notes.png").write_bytes(b"\x89PNG\x00")
    (folder / ".hidden.txt").write_text("secret", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "empty.txt").write_text("  \n", encoding="utf-8")
    found = read_document_folder(folder)
    assert [d.id for d in found.documents] == [
        "france.txt",
        "japan.txt",
        "kenya.html",
        "chile",
        "egypt",
        "peru.md",
    ]
    by_id = {d.id: d for d in found.documents}
    assert by_id["peru.md"].title == "Peru"
    assert by_id["kenya.html"].title == "Kenya"
    assert "alert" not in by_id["kenya.html"].text  # scripts are not text
    assert by_id["kenya.html"].text.splitlines()[0] == "Kenya is a country in Africa."
    assert by_id["chile"].title == "Chile"
    assert by_id["egypt"].title is None
    assert found.skipped == {
        ".hidden.txt": "hidden",
        "notes.png": "not a kind read (.txt, .md, .markdown, .html, .htm, .jsonl)",
        "sub/empty.txt": "no text",
    }


def test_html_entities_and_blocks() -> None:
    title, text = html_text("<title>A &amp; B</title><div>x&lt;y</div><style>p{}</style>z")
    assert (title, text) == ("A & B", "x<y\nz")


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("a.txt", b"GIF89a\x00\x01", "binary data"),
        ("b.txt", "caf\u00e9 au lait".encode("latin-1"), "not UTF-8 (byte 0xe9 at offset 3)"),
        ("c.pdf", b"%PDF-1.4", "PDF files are not read; convert it"),
        ("d.docx", b"PK\x03\x04", "Word files are not read"),
        ("e.jsonl", b'{"text": "ok"}\n{"title": "no text"}\n', "e.jsonl:2, field 'text': missing"),
        ("f.jsonl", b'{"text": "ok"}\nnot json\n', "f.jsonl:2: invalid JSON"),
    ],
)
def test_a_bad_file_is_named(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    write_docs(tmp_path)
    (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError) as raised:
        read_document_folder(tmp_path)
    assert str(tmp_path / name) in str(raised.value)
    assert message in str(raised.value)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "dump.txt"
    with big.open("wb") as out:
        out.truncate(50 * 1024 * 1024)  # sparse: 50 MB on paper, nothing on disk
    assert big.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(InputError, match=r"50\.0 MiB is over the 20 MiB") as raised:
        read_document_folder(tmp_path)
    assert str(big) in str(raised.value)


def test_an_empty_or_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no documents to read"):
        read_document_folder(tmp_path)
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(InputError, match=r"passed over: image\.png"):
        read_document_folder(tmp_path)
    with pytest.raises(InputError, match="no such folder"):
        read_document_folder(tmp_path / "nope")


def test_a_repeated_document_id_is_named(tmp_path: Path) -> None:
    rows = [{"id": "x", "text": "one"}, {"id": "x", "text": "two"}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    with pytest.raises(InputError, match="document id 'x' repeats"):
        read_document_folder(tmp_path)

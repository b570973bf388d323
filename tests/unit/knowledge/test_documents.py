"""Help documents: HTML to text, titles, folders, and passages with overlap."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import StarweaveError
from starweave.knowledge import collect_files, html_to_text, read_document, split_passages


def test_html_loses_tags_scripts_and_styles_and_keeps_blocks_apart() -> None:
    title, text = html_to_text(
        "<html><head><title> Mousepad  help </title><style>p {color: red}</style></head>"
        "<body><h1>Fonts</h1><p>Open <b>Edit</b> &amp; Preferences.</p><script>alert(1)</script>"
        "<ul><li>one</li><li>two</li></ul></body></html>"
    )
    assert title == "Mousepad help"
    assert text == "Fonts\n\nOpen Edit & Preferences.\n\none\n\ntwo"
    assert "alert" not in text and "color" not in text and "<" not in text


def test_read_document_titles_and_unsupported_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("\n# Saving files\n\nPress Control+S.\n")
    (tmp_path / "b.htm").write_text("<title>Calc</title><p>Adds</p>")
    (tmp_path / "c.txt").write_bytes(b"caf\xe9 latin-1 bytes\n")
    (tmp_path / "d.png").write_bytes(b"\x89PNG")
    assert read_document(tmp_path / "a.md").title == "Saving files"
    assert read_document(tmp_path / "b.htm").text == "Adds"
    assert "caf\ufffd" in read_document(tmp_path / "c.txt").text
    with pytest.raises(StarweaveError, match="not a help document"):
        read_document(tmp_path / "d.png")


def pdf_bytes(lines: list[str], title: str = "") -> bytes:
    """A minimal one-page PDF whose page shows ``lines`` (Helvetica), with a correct xref table."""
    content = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({line}) '" for line in lines) + " ET"
    info = f"<< /Title ({title}) >>" if title else "<< >>"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        info,
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def test_pdf_help_documents_are_read_with_their_title(tmp_path: Path) -> None:
    (tmp_path / "guide.pdf").write_bytes(
        pdf_bytes(["Press Control+S to save.", "Fonts are in Preferences."], "Mousepad guide")
    )
    document = read_document(tmp_path / "guide.pdf")
    assert document.title == "Mousepad guide"
    assert "Press Control+S to save." in document.text and "Fonts are in Preferences." in document.text
    (tmp_path / "blank.pdf").write_bytes(pdf_bytes([]))
    with pytest.raises(StarweaveError, match="the PDF has no text"):
        read_document(tmp_path / "blank.pdf")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(StarweaveError, match="not a readable PDF"):
        read_document(tmp_path / "broken.pdf")
    assert [p.name for p in collect_files([tmp_path])] == ["blank.pdf", "broken.pdf", "guide.pdf"]


def test_collect_files_searches_folders_and_skips_hidden_ones(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".git").mkdir()
    for name in ("a.md", "sub/b.html", ".git/c.md", "sub/.d.md", "e.png"):
        (tmp_path / name).write_text("x")
    assert [p.relative_to(tmp_path).as_posix() for p in collect_files([tmp_path])] == ["a.md", "sub/b.html"]
    with pytest.raises(StarweaveError, match="no such file or folder"):
        collect_files([tmp_path / "missing"])


def test_passages_respect_size_and_overlap() -> None:
    words = [f"w{i}" for i in range(25)]
    passages = split_passages(" ".join(words), size=10, overlap=3)
    assert [len(p.split()) for p in passages] == [10, 10, 10, 4]
    assert passages[1].split()[:3] == passages[0].split()[-3:]
    assert " ".join(dict.fromkeys(w for p in passages for w in p.split())) == " ".join(words)


def test_passages_cut_at_paragraph_ends_when_a_paragraph_fits() -> None:
    assert split_passages("a b c\n\nd e f\n\ng h i j k", size=6, overlap=2) == ["a b c d e f", "f g h i j k"]
    assert split_passages("a b c\n\nd e f\n\ng h i j k", size=6, overlap=0) == ["a b c d e f", "g h i j k"]
    assert split_passages("", size=6, overlap=2) == [] and split_passages("one") == ["one"]
    with pytest.raises(ValueError):
        split_passages("x", size=5, overlap=5)

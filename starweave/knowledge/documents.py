"""Help documents as text: reading markdown, text and HTML files, and splitting them into passages.

A passage is a few hundred words, cut at paragraph ends where possible, and each one repeats the end
of the one before (the overlap), so a sentence that straddles a cut is still found whole in one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from starweave.errors import StarweaveError

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
PDF_SUFFIXES = frozenset({".pdf"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES

PASSAGE_WORDS = 300
OVERLAP_WORDS = 50

# Tags whose content is never shown to a reader.
_HIDDEN_TAGS = frozenset({"script", "style", "template", "noscript", "svg", "head"})
# Tags that end a line of text (so words of two blocks are not glued together).
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "section", "article",
        "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "hr", "dt", "dd", "header",
        "footer", "nav", "main", "aside", "title", "body", "html",
    }
)  # fmt: skip


@dataclass(frozen=True)
class TextDocument:
    """A help document read from a file: its title (first heading or <title>) and its plain text."""

    path: Path
    title: str
    text: str


class _TextExtractor(HTMLParser):
    """Collects an HTML page's visible text, one line per block element, and its <title>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._hidden = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN_TAGS:
            self._hidden += 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN_TAGS and self._hidden:
            self._hidden -= 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML page: tags, scripts and styles removed, entities decoded."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    paragraphs = (" ".join(block.split()) for block in "".join(parser.parts).split("\n\n"))
    return " ".join(parser.title.split()), "\n\n".join(p for p in paragraphs if p)


def _markdown_title(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            return stripped.lstrip("#").strip()
        if stripped:
            return stripped[:80]
    return ""


def read_document(path: Path) -> TextDocument:
    """Read one help document (markdown, text or HTML; undecodable bytes are replaced)."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise StarweaveError(f"{path}: not a help document this can read (it reads {kinds})")
    if suffix in PDF_SUFFIXES:
        title, text = pdf_to_text(path)
        return TextDocument(path=path, title=title or path.stem, text=text)
    raw = path.read_text(encoding="utf-8", errors="replace")
    if suffix in HTML_SUFFIXES:
        title, text = html_to_text(raw)
    else:
        title, text = _markdown_title(raw), raw
    return TextDocument(path=path, title=title or path.stem, text=text)


def pdf_to_text(path: Path) -> tuple[str, str]:
    """The title (from the PDF's metadata) and the text of every page of a PDF, with pypdf
    (``pip install 'starweave[pdf]'``). An encrypted, broken or image-only PDF is an error."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:
        raise StarweaveError(f"{path}: reading PDF needs pypdf: pip install 'starweave[pdf]'") from None
    # pypdf logs what it repairs; the user gets our one-line error or the text, not its log lines.
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise StarweaveError(f"{path}: the PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
        title = str(reader.metadata.title or "") if reader.metadata is not None else ""
    except (PyPdfError, ValueError, KeyError) as exc:
        raise StarweaveError(f"{path}: not a readable PDF ({exc})") from None
    finally:
        quiet.setLevel(level)
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise StarweaveError(f"{path}: the PDF has no text (scanned pages need OCR first)")
    return title.strip(), text


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """The help documents named: files as given, folders searched recursively for readable files
    (hidden files and folders skipped). A missing path is an error."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix.lower() in SUPPORTED_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise StarweaveError(f"{path}: no such file or folder")
    return found


def _paragraph_words(text: str) -> Iterator[list[str]]:
    for paragraph in re.split(r"\n\s*\n", text):
        words = paragraph.split()
        if words:
            yield words


def split_passages(text: str, size: int = PASSAGE_WORDS, overlap: int = OVERLAP_WORDS) -> list[str]:
    """Split ``text`` into passages of at most ``size`` words, cut at paragraph ends when a paragraph
    fits, each starting with (up to) the last ``overlap`` words of the one before."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("need size > 0 and 0 <= overlap < size")
    passages: list[str] = []
    current: list[str] = []
    fresh = False  # whether `current` holds words the previous passage did not

    def flush() -> None:
        nonlocal current, fresh
        passages.append(" ".join(current))
        current, fresh = (current[-overlap:] if overlap else []), False

    for words in _paragraph_words(text):
        if len(words) <= size and len(current) + len(words) > size:
            # The paragraph fits in a passage of its own: cut before it, and shorten the overlap
            # rather than cut the paragraph.
            if fresh:
                flush()
            current = (
                current[len(current) + len(words) - size :] if len(current) + len(words) > size else current
            )
        while words:
            if len(current) >= size:
                flush()
            space = size - len(current)
            current, words, fresh = current + words[:space], words[space:], True
    if fresh:
        flush()
    return passages

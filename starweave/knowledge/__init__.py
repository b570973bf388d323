"""Retrieval of help documents, demonstrations and experience (the reference's RAG, offline):
one SQLite FTS5 store per kind under ``vectordb/``, filled by ``starweave learn``."""

from starweave.knowledge.documents import (
    SUPPORTED_SUFFIXES,
    TextDocument,
    collect_files,
    html_to_text,
    read_document,
    split_passages,
)
from starweave.knowledge.store import (
    KINDS,
    DocumentInfo,
    Hit,
    KnowledgeBase,
    KnowledgeError,
    KnowledgeStore,
    check_fts5,
    default_root,
    match_expression,
)

__all__ = [
    "KINDS",
    "SUPPORTED_SUFFIXES",
    "DocumentInfo",
    "Hit",
    "KnowledgeBase",
    "KnowledgeError",
    "KnowledgeStore",
    "TextDocument",
    "check_fts5",
    "collect_files",
    "default_root",
    "html_to_text",
    "match_expression",
    "read_document",
    "split_passages",
]

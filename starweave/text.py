"""Small text helpers shared by the prompts, the logs' summaries and the evaluators."""

from __future__ import annotations


def flat_clip(value: object, limit: int) -> str:
    """``value`` as one line (every run of whitespace made one space), cut to ``limit`` characters
    with a closing ``…`` when longer."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unencodable_problem(text: str, what: str, *, nul: bool = False) -> str | None:
    """Why ``text`` cannot go on as UTF-8 (a lone UTF-16 surrogate, which JSON and Python allow
    but no file, process or peer can take), or None; with ``nul``, a NUL character is refused too
    (a path or argument that reaches the OS cannot hold one)."""
    if nul and "\0" in text:
        return f"{what} contains a NUL character, which the operating system cannot take"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"{what} is not valid text: it holds a lone UTF-16 surrogate (\\ud800-\\udfff) "
            f"at position {exc.start}"
        )
    return None

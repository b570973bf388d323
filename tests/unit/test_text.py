"""flat_clip: one line, at most the limit, an ellipsis when cut."""

from __future__ import annotations

from starweave.text import flat_clip


def test_flat_clip_folds_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert flat_clip("a\n  b\tc ", 10) == "a b c"
    assert flat_clip("abcdefghij", 10) == "abcdefghij"
    assert flat_clip("abcdefghijk", 10) == "abcdefghi…"
    assert flat_clip(12345, 3) == "12…"

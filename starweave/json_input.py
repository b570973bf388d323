"""Parsing JSON that came from outside (a page, a form, a plan file, a model): depth bounded.

``json.loads`` recurses once per nested array or object, so 100000 ``[`` raise RecursionError, which
is no ValueError and escapes every ``except ValueError`` around a parse; a document just under
Python's limit parses, then breaks whatever walks it next (a YAML dump, a pydantic model).
:func:`parse_json` turns both into a ValueError that says what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JSONTooDeep", "json_depth", "parse_json"]

# Far deeper than any device entry, plan or WebUI message; far below Python's recursion limit.
MAX_JSON_DEPTH = 64


class JSONTooDeep(ValueError):
    """A JSON document nested deeper than its reader allows."""


def json_depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests lists and dicts, counted up to ``limit + 1`` (no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (list, dict)):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``; ValueError (JSONDecodeError, or JSONTooDeep) for bad or too deep JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONTooDeep(f"JSON nested too deeply (at most {max_depth} levels)") from None
    if json_depth(value, max_depth) > max_depth:
        raise JSONTooDeep(f"JSON nested too deeply (at most {max_depth} levels)")
    return value

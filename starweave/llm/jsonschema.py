"""JSON extraction from model answers and a small JSON-schema validator (no extra dependency).

Extraction tolerates what chat models wrap around their JSON: Markdown fences, leading or trailing
prose. The validator covers the subset our agents' schemas use: ``type``, ``required``, ``enum``,
``const``, ``properties``, ``items``, ``additionalProperties``, ``anyOf``/``oneOf``, local ``$ref``,
string lengths, array sizes and number bounds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from starweave.errors import JSONExtractionError, SchemaValidationError
from starweave.llm.base import Schema

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _outermost_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text``; braces inside JSON strings do not count."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def extract_json(text: str) -> dict[str, Any]:
    """Return the JSON object in a model answer.

    Tries, in order: the whole text, the content of each Markdown code fence, then the outermost
    balanced ``{...}`` (of the whole text, then from the first ``{`` to the last ``}``).
    Raises :class:`JSONExtractionError` naming what was wrong.
    """
    stripped = text.strip()
    if not stripped:
        raise JSONExtractionError("the answer is empty; expected one JSON object")
    candidates = [stripped]
    candidates += [match.group(1).strip() for match in _FENCE.finditer(stripped)]
    balanced = _outermost_object(stripped)
    if balanced is not None:
        candidates.append(balanced)
    first, last = stripped.find("{"), stripped.rfind("}")
    if 0 <= first < last:
        candidates.append(stripped[first : last + 1])
    for candidate in candidates:
        value = _loads_object(candidate)
        if value is not None:
            return value
    if first < 0:
        raise JSONExtractionError("the answer contains no JSON object (no '{' found)")
    try:
        json.loads(balanced or stripped[first:], strict=False)
    except json.JSONDecodeError as exc:
        raise JSONExtractionError(f"the answer is not valid JSON: {exc}") from exc
    raise JSONExtractionError("the answer's JSON is not an object")


def schema_dict(schema: Schema) -> dict[str, Any]:
    """The JSON-schema dict of ``schema`` (a pydantic model class is converted)."""
    if isinstance(schema, dict):
        return schema
    return schema.model_json_schema()


def schema_name(schema: Schema) -> str:
    """A name for the schema usable in OpenAI's ``json_schema.name`` (``[a-zA-Z0-9_-]``, ≤ 64)."""
    raw = schema.__name__ if isinstance(schema, type) else str(schema.get("title") or "response")
    return re.sub(r"[^a-zA-Z0-9_-]", "_", raw)[:64] or "response"


def schema_instruction(json_schema: dict[str, Any] | None) -> str:
    """The instruction to answer with one JSON object matching ``json_schema``.

    With ``None`` the schema is left out: for providers whose decoder already enforces it, so
    repeating it would only spend context (the embedded model has 4,096 tokens).
    """
    lead = "Reply with exactly one JSON object and nothing else (no Markdown fence), matching "
    if json_schema is None:
        return lead + "the requested JSON schema."
    return f"{lead}this JSON schema:\n{json.dumps(json_schema, ensure_ascii=False)}"


def validate(value: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """Validate ``value`` against ``schema`` and return it (a pydantic model dumps its validated form).

    Raises :class:`SchemaValidationError` listing every mismatch.
    """
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            return schema.model_validate(value).model_dump(mode="json", by_alias=True)
        except ValidationError as exc:
            errors = [f"{'.'.join(str(p) for p in err['loc']) or '$'}: {err['msg']}" for err in exc.errors()]
            raise SchemaValidationError(errors) from exc
    errors = schema_errors(value, schema)
    if errors:
        raise SchemaValidationError(errors)
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int,),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target if isinstance(target, dict) else {}


def schema_errors(
    value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """Every way ``value`` fails ``schema`` (empty list = valid), each as ``path: problem``."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    errors: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, name) for name in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: must be {schema['const']!r}")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options and not any(not schema_errors(value, option, root, path) for option in options):
            errors.append(f"{path}: matches none of the {key} alternatives")
    if isinstance(value, dict):
        errors += _object_errors(value, schema, root, path)
    elif isinstance(value, list):
        errors += _array_errors(value, schema, root, path)
    elif isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: less than {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: greater than {schema['maximum']}")
    return errors


def _object_errors(
    value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str
) -> list[str]:
    errors = [
        f"{path}: missing required key {key!r}" for key in schema.get("required", []) if key not in value
    ]
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            errors += schema_errors(item, properties[key], root, f"{path}.{key}")
        elif extra is False:
            errors.append(f"{path}: unexpected key {key!r} (allowed: {', '.join(properties) or 'none'})")
        elif isinstance(extra, dict):
            errors += schema_errors(item, extra, root, f"{path}.{key}")
    return errors


def _array_errors(value: list[Any], schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            errors += schema_errors(item, items, root, f"{path}[{index}]")
    return errors

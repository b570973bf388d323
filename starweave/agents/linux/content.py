"""Writing an arithmetic expression where its value was meant: caught before the file is written.

Asked to write "the number times two" into a file, a small model writes ``21*2``: ``write_file``
stores it as it is, and ``echo 21*2 > f`` too. A write whose whole content is such an expression
is not run the first time: the note gives the expression's value, computed here, so the next
answer can write the number. Written again (the model may really want the expression), it runs.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

# Digits, dots, spaces, parentheses and + - * / x, with at least one operator between two numbers.
_EXPRESSION = re.compile(r"^\(*\s*-?\d+(?:\.\d+)?\s*\)*(?:\s*[-+*/x×]\s*\(*\s*\d+(?:\.\d+)?\s*\)*)+$")
# echo EXPR > file (quoted or not): the shell does no arithmetic there.
_ECHO = re.compile(r"""^\s*(?:echo|printf)\s+(?P<q>['"]?)(?P<expr>[^'"<>|;&]+?)(?P=q)\s*>>?\s*\S+\s*$""")
_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
MAX_DIGITS = 30


def _value(node: ast.AST) -> Decimal:
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Decimal(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return Decimal(_OPERATORS[type(node.op)](_value(node.left), _value(node.right)))
    raise ValueError("not plain arithmetic")


def expression_value(text: str) -> str | None:
    """The value of ``text`` when all of it is an arithmetic expression of numbers ("21*2" -> "42"),
    else None (a lone number, words, a date such as 2024-01-02 are not expressions)."""
    text = text.strip()
    if len(text) > 80 or not _EXPRESSION.match(text) or re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        value = _value(ast.parse(text.replace("×", "*").replace("x", "*"), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, InvalidOperation):
        return None
    if value.adjusted() > MAX_DIGITS:
        return None
    # Six decimals at most: 10/3 is written 3.333333, 7/2 is 3.5, 21*2 is 42.
    return format(value.quantize(Decimal("0.000001")).normalize(), "f")


def written_expression(function: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """``(expression, value)`` when the call writes only an arithmetic expression into a file."""
    if function == "write_file":
        text = str(arguments.get("content") or "")
    elif function == "execute_command":
        found = _ECHO.match(str(arguments.get("command") or ""))
        text = found["expr"] if found else ""
    else:
        return None
    value = expression_value(text)
    return (text.strip(), value) if value is not None else None


def expression_note(expression: str, value: str) -> str:
    """The note of a write that was not run because its content is an expression."""
    return (
        f"Not written: the content {expression} is an arithmetic expression, and the file would hold it "
        f"as it is. Its value is {value}: write that if the file should hold the result (the same call "
        "again writes the expression)."
    )

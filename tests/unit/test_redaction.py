"""Secret redaction: known values (and their encodings), key shapes and named credentials anywhere in a
line, untouched ordinary text, speed."""

from __future__ import annotations

import base64
import hashlib
import json
import string
import time
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starweave.redaction import redact

OPENAI_KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"
PROJECT_KEY = "sk-proj-" + "Ab12_cd34-EF56gh78IJ90kl12MN34op56"
ANTHROPIC_KEY = "sk-ant-api03-" + "xY9_zW8-vU7tS6rQ5pO4nM3lK2jI1hG0fE"
GOOGLE_KEY = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"


@pytest.mark.parametrize("key", [OPENAI_KEY, PROJECT_KEY, ANTHROPIC_KEY, GOOGLE_KEY])
def test_provider_key_shapes_are_masked(key: str) -> None:
    text = f"Incorrect API key provided: {key}. See the docs; key={key}\n"
    assert redact(text) == "Incorrect API key provided: ****. See the docs; key=****\n"


def test_bearer_token_keeps_the_word_bearer() -> None:
    text = 'headers: {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}'
    assert redact(text) == 'headers: {"Authorization": "Bearer ****"}'
    assert redact("authorization: bearer abcdefghijklmnop0123==") == "authorization: bearer ****"
    assert redact("AUTHORIZATION: BEARER abcdefghijklmnop0123") == "AUTHORIZATION: BEARER ****"


def test_known_secrets_are_masked_exactly_and_longest_first() -> None:
    azure_key = "0123456789abcdef0123456789abcdef"
    text = f"key {azure_key} and tok3n and tok3n-extended and abc"
    masked = redact(text, [azure_key, "tok3n", "tok3n-extended", "abc", ""], mask="[hidden]")
    assert masked == "key [hidden] and [hidden] and [hidden] and abc"


def test_custom_mask_is_inserted_literally() -> None:
    assert redact(f"k={OPENAI_KEY}", mask=r"<\1>") == r"k=<\1>"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain prose about a risk-assessment-of-everything and a task-list-with-many-items",
        "The bearer of this letter; a Bearer token is short here: Bearer abc",
        "short key sk-abc and AIza123",
        "md5 " + hashlib.md5(b"starweave").hexdigest() + " uuid 123e4567-e89b-12d3-a456-426614174000",
        "C:\\Users\\me\\AppData\\Local\\Programs\\app.exe --flag=sk",
    ],
)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert redact(text, ["not-present-secret"]) == text


def test_large_text_redacts_quickly() -> None:
    filler = "The quick brown fox jumps over the lazy dog; Bearer of news; task-list.\n" * 2800
    text = filler + f"key {OPENAI_KEY}\nAuthorization: Bearer {'t' * 40}\n{GOOGLE_KEY}\n" + filler
    assert len(text) >= 200_000
    started = time.perf_counter()
    masked = redact(text, ["secret-one", "secret-two", "0123456789abcdef"])
    elapsed = time.perf_counter() - started
    assert OPENAI_KEY not in masked and GOOGLE_KEY not in masked and "t" * 40 not in masked
    # About 0.2 s when idle and linear in the text; backtracking gone quadratic would take minutes.
    # The bound leaves room for a loaded machine.
    assert elapsed < 5.0, f"redacting {len(text)} characters took {elapsed:.3f} s"


KEYS = [OPENAI_KEY, PROJECT_KEY, ANTHROPIC_KEY, GOOGLE_KEY]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_at_the_start_of_a_line_is_masked_raw_and_in_json(key: str) -> None:
    text = f"{key}\nnext line\n  {key} indented\n"
    assert key not in redact(text)
    line = json.dumps({"thought": f"the output was:\n{key}\n\tand\t{key}", "tab": f"\t{key}"})
    masked = redact(line)
    assert key not in masked
    assert json.loads(masked)["thought"] == "the output was:\n****\n\tand\t****"


@pytest.mark.parametrize("key", KEYS)
def test_a_key_glued_to_other_text_is_masked_when_it_looks_random(key: str) -> None:
    for text in (f"\x1b[1m{key}\x1b[0m", f"prefix{key}", json.dumps(f"\u001b[31m{key}")):
        assert key not in redact(text), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GET /ws?token=abc123&x=1 HTTP/1.1", "GET /ws?token=****&x=1 HTTP/1.1"),
        ("https://api.example/v1?key=AbcDef123&q=1", "https://api.example/v1?key=****&q=1"),
        ("api_key=hunter2hunter2", "api_key=****"),
        ("\nAPI_KEY: hunter2hunter2", "\nAPI_KEY: ****"),
        (
            '{"api_key": "hunter2", "password": "p4ss", "x": 1}',
            '{"api_key": "****", "password": "****", "x": 1}',
        ),
        ('"{\\"token\\": \\"zzz\\"}"', '"{\\"token\\": \\"****\\"}"'),
        ("OPENAI_API_KEY=abc.def-ghi", "OPENAI_API_KEY=****"),
        ('"\\nSTARWEAVE_API_KEY=zz9"', '"\\nSTARWEAVE_API_KEY=****"'),
        ("AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY: ****"),
        ("X-API-Key: k", "X-API-Key: ****"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ****"),
        ("authorization=sekrit", "authorization=****"),
        ("postgres://admin:s3cr3t@db:5432/app", "postgres://admin:****@db:5432/app"),
        ("client_secret=xyz&grant_type=c", "client_secret=****&grant_type=c"),
    ],
)
def test_credentials_named_by_their_context_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"step": 1, "tokens": 1100, "prompt_tokens": 30, "max_tokens": 2000, "total_tokens": 9}',
        "max_tokens=2000 and tokens: 1100",
        '{"api_key": null, "token": "", "secret": false}',
        "https://example.com/path?q=1&page=2",
        "mailto:someone@example.com and git@github.com:owner/repo.git",
    ],
)
def test_counters_empty_values_and_plain_urls_are_unchanged(text: str) -> None:
    assert redact(text) == text


def test_known_secret_is_masked_in_its_encoded_forms() -> None:
    secret = 'az-key/with"quote+plus'
    forms = [
        json.dumps({"v": secret}),
        quote(secret, safe=""),
        secret.encode().hex(),
        *(base64.b64encode(b"x" * pad + secret.encode() + b"tail").decode() for pad in range(3)),
    ]
    for text in forms:
        assert redact(text, [secret]) != text, text
    assert redact(json.dumps({"v": secret}), [secret]) == '{"v": "****"}'


KEY_BODY = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=24, max_size=60).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s)
)
AROUND = st.text(alphabet=string.printable + "é€\u001b", max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    prefix=AROUND, body=KEY_BODY, suffix=AROUND, kind=st.sampled_from(["sk-", "sk-proj-", "sk-ant-", "AIza"])
)
def test_a_key_shaped_string_never_survives_anywhere_in_a_line(
    prefix: str, body: str, suffix: str, kind: str
) -> None:
    key = kind + body
    for text in (prefix + key + suffix, json.dumps(prefix + key + suffix)):
        assert key not in redact(text)


@settings(max_examples=200, deadline=None)
@given(
    prefix=AROUND,
    secret=st.text(min_size=4, max_size=40).filter(lambda s: s.strip() and "*" not in s),
    suffix=AROUND,
)
def test_a_known_secret_never_survives_raw_or_json_escaped(prefix: str, secret: str, suffix: str) -> None:
    text = prefix + secret + suffix
    assert secret not in redact(text, [secret])
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    assert escaped not in redact(json.dumps(text, ensure_ascii=False), [secret])

"""Secret redaction: known values, provider key shapes, untouched ordinary text, speed."""

from __future__ import annotations

import hashlib
import time

import pytest

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
    assert elapsed < 0.5, f"redacting {len(text)} characters took {elapsed:.3f} s"

"""OpenAI → Anthropic message conversion."""

from __future__ import annotations

import pytest

from starweave.errors import LLMError
from starweave.llm.providers.anthropic import to_anthropic_messages


def test_system_messages_become_the_system_parameter() -> None:
    system, messages = to_anthropic_messages(
        [
            {"role": "system", "content": "You are an agent."},
            {"role": "system", "content": [{"type": "text", "text": "Answer in JSON."}]},
            {"role": "user", "content": "hi"},
        ]
    )
    assert system == "You are an agent.\n\nAnswer in JSON."
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_images_become_base64_or_url_blocks() -> None:
    _, messages = to_anthropic_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                    {"type": "image_url", "image_url": {"url": "https://example.org/a.jpg"}},
                ],
            }
        ]
    )
    blocks = messages[0]["content"]
    assert blocks[0] == {"type": "text", "text": "look"}
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert blocks[2] == {"type": "image", "source": {"type": "url", "url": "https://example.org/a.jpg"}}


def test_same_role_turns_are_merged_and_roles_alternate() -> None:
    _, messages = to_anthropic_messages(
        [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": "c"},
            {"role": "tool", "content": "d"},
        ]
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in messages[0]["content"]] == ["a", "b"]


def test_unknown_part_type_is_an_error() -> None:
    with pytest.raises(LLMError, match="input_audio"):
        to_anthropic_messages([{"role": "user", "content": [{"type": "input_audio"}]}])

"""The embedded model's KV-cache slot choice, its prefix store and thread defaults (no model needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from starweave.errors import ProviderUnavailable
from starweave.llm.providers import local_threads
from starweave.llm.providers.local import compact_grammar
from starweave.llm.providers.local_slots import (
    MIN_COPY_CHARS,
    PrefixStore,
    SlotTable,
    common_prefix,
    conversation_text,
    message_text,
    model_key,
    opening_text,
    system_part,
    system_text,
    timings_of,
)

SYSTEM = {"role": "system", "content": "You are LinuxAgent. " + "Rule: be brief. " * 60}
PLANNER = {"role": "system", "content": "You are the Constellation agent. " + "Plan small DAGs. " * 60}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def answered(messages: list[dict[str, str]], answer: str) -> str:
    return conversation_text(messages) + message_text({"role": "assistant", "content": answer})


def test_common_prefix_matches_the_naive_definition() -> None:
    long_a, long_b = "x" * 5000 + "a", "x" * 5000 + "b"
    cases = [("", ""), ("abc", "abd"), ("abc", "abc"), ("abc", "abcdef"), (long_a, long_b)]
    for a, b in cases:
        naive = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        assert common_prefix(a, b) == naive


def test_texts_follow_the_message_structure() -> None:
    messages = [SYSTEM, user("count the files"), {"role": "assistant", "content": "{}"}, user("3")]
    assert system_text(messages).startswith("system\x1fYou are LinuxAgent.")
    assert system_text([user("hi")]) == ""
    opening = opening_text(messages)
    assert opening == conversation_text(messages[:2])
    assert system_part(opening) == system_text(messages)
    assert system_part(opening_text([user("hi")])) == ""
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:x"}}]
    assert message_text({"role": "user", "content": parts}) == "user\x1flookdata:x"


def test_a_conversation_keeps_its_slot_while_another_one_runs() -> None:
    table = SlotTable(4)
    device_1 = [SYSTEM, user("Task: create hello.txt on device 1")]
    device_2 = [SYSTEM, user("Task: create hello.txt on device 2")]

    first = table.choose(conversation_text(device_1), opening_text(device_1))
    assert first.slot == 0 and not first.continues and first.donor is None
    table.record(first.slot, answered(device_1, '{"step":1}'))

    # The second device shares the system prompt only: its own (empty) slot, warmed from slot 0.
    second = table.choose(conversation_text(device_2), opening_text(device_2))
    assert second.slot == 1 and not second.continues
    assert second.donor == 0 and second.donor_chars >= len(system_text(device_2))
    table.copy(0, 1)
    table.record(second.slot, answered(device_2, '{"step":1}'))

    # Device 1's next step continues in slot 0 although slot 1 was used last.
    step_2 = [*device_1, {"role": "assistant", "content": '{"step":1}'}, user("Result: ok")]
    again = table.choose(conversation_text(step_2), opening_text(step_2))
    assert again.slot == 0 and again.continues


def test_a_related_conversation_reuses_the_slot_that_shares_the_most() -> None:
    table = SlotTable(2)
    review_1 = [PLANNER, user("[Request] hello on both\n[Constellation] t1 running, t2 pending")]
    device = [SYSTEM, user("Task: hello")]
    table.record(0, answered(review_1, "{}"))
    table.record(1, answered(device, "{}"))
    # The next review has a new first message (the constellation changed) but the same request.
    review_2 = [PLANNER, user("[Request] hello on both\n[Constellation] t1 done, t2 running")]
    choice = table.choose(conversation_text(review_2), opening_text(review_2))
    assert choice.slot == 0 and choice.continues


def test_sharing_only_the_system_prompt_does_not_make_a_conversation_related() -> None:
    table = SlotTable(2)
    first = [SYSTEM, user("Fact: cities have names. " * 10 + "Name the capital of France.")]
    table.record(0, answered(first, "{}"))
    table.record(1, answered([PLANNER, user("plan")], "{}"))
    table.record(0, answered(first, "{}"))  # slot 0 used last: slot 1 is the one to evict
    other = [SYSTEM, user("Name the capital of Italy.")]
    choice = table.choose(conversation_text(other), opening_text(other))
    assert choice.slot == 1 and not choice.continues and choice.donor == 0


def test_a_new_conversation_evicts_the_least_recently_used_slot() -> None:
    table = SlotTable(2)
    old = [SYSTEM, user("old task")]
    recent = [PLANNER, user("recent plan")]
    table.record(0, answered(old, "{}"))
    table.record(1, answered(recent, "{}"))
    fresh = [{"role": "system", "content": "Another agent. " * 50}, user("something else")]
    choice = table.choose(conversation_text(fresh), opening_text(fresh))
    assert choice.slot == 0 and not choice.continues and choice.donor is None


def test_a_short_shared_prefix_is_not_worth_a_copy() -> None:
    table = SlotTable(2)
    small = [{"role": "system", "content": "Be brief."}, user("a")]
    table.record(0, answered(small, "{}"))
    other = [{"role": "system", "content": "Be brief."}, user("b")]
    choice = table.choose(conversation_text(other), opening_text(other))
    assert choice.slot == 1 and choice.donor is None
    assert len(system_text(other)) < MIN_COPY_CHARS


def test_a_single_slot_is_always_chosen_and_zero_slots_are_refused() -> None:
    table = SlotTable(1)
    for task in ("a", "b"):
        messages = [SYSTEM, user(task)]
        assert table.choose(conversation_text(messages), opening_text(messages)).slot == 0
        table.record(0, answered(messages, "{}"))
    with pytest.raises(ValueError, match="at least one cache slot"):
        SlotTable(0)


def test_prefix_store_names_prunes_and_never_leaks_text(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"gguf")
    store = PrefixStore(tmp_path / "kv", model_key(model, 4096))
    store.prepare()
    assert (tmp_path / "kv").stat().st_mode & 0o777 == 0o700
    system = system_text([SYSTEM])
    name = store.name_for(system)
    assert name.startswith("prefix-") and name.endswith(".bin") and "LinuxAgent" not in name
    assert name != PrefixStore(tmp_path / "kv", model_key(model, 8192)).name_for(system)
    assert not store.has(system)
    for index in range(5):
        path = store.folder / f"prefix-{index}.bin"
        path.write_bytes(b"x")
        os.utime(path, (1000 + index, 1000 + index))
    (store.folder / name).write_bytes(b"state")
    assert store.has(system)
    store.touch(system)
    store.prune(keep=3)
    left = sorted(p.name for p in store.folder.iterdir())
    assert left == sorted([name, "prefix-4.bin", "prefix-3.bin"])


def test_compact_grammar_forbids_flexible_whitespace() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    grammar = compact_grammar(schema)
    header, _, body = grammar.partition("start: %json ")
    assert header.startswith("%llguidance {}")
    sent = json.loads(body)
    assert sent["x-guidance"] == {"whitespace_flexible": False}
    assert {k: v for k, v in sent.items() if k != "x-guidance"} == schema
    assert "x-guidance" not in schema


def test_timings_keep_the_numbers_llama_cpp_reports() -> None:
    raw = {"timings": {"cache_n": 400, "prompt_n": 12, "prompt_ms": 300.5, "predicted_per_second": 15.0}}
    assert timings_of(raw) == {"cache_n": 400.0, "prompt_n": 12.0, "prompt_ms": 300.5}
    assert timings_of({}) == {} and timings_of({"timings": "x"}) == {}


def test_thread_defaults_follow_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in (*local_threads.THREAD_ENV_VARS, local_threads.BATCH_THREAD_ENV_VAR):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(local_threads, "usable_cpus", lambda: 2)
    assert local_threads.resolve_threads(0) == 1
    assert local_threads.resolve_batch_threads(0) == 2
    monkeypatch.setattr(local_threads, "usable_cpus", lambda: 16)
    assert local_threads.resolve_threads(0) == local_threads.MAX_AUTO_THREADS
    assert local_threads.resolve_batch_threads(0) == local_threads.MAX_AUTO_BATCH_THREADS
    assert local_threads.resolve_threads(3) == 3 and local_threads.resolve_batch_threads(5) == 5
    monkeypatch.setenv(local_threads.BATCH_THREAD_ENV_VAR, "3")
    assert local_threads.resolve_batch_threads(5) == 3
    monkeypatch.setenv(local_threads.BATCH_THREAD_ENV_VAR, "0")
    with pytest.raises(ProviderUnavailable, match="STARWEAVE_LLM_BATCH_THREADS='0' must be at least 1"):
        local_threads.resolve_batch_threads(0)

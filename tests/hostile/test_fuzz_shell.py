"""Property-based fuzzing of the real shell's two gates with hypothesis.

The confirmation classifier (``dangerous_reason``): on random command lines built from shell-ish
characters, operators, quotes, tool names and hostile paths it never raises, answers within a
deadline and always the same; a flagged command stays flagged whatever precedes or follows it and
behind whichever wrapper, substitution or compound command runs it (so nothing slips past the
question by being wrapped).

The runner: random lines of harmless tools run with bash in each sandbox never make ``run_command``
raise, always give a well-formed result within their deadline, and change nothing outside.
The example counts are modest; ``test_classifier_fuzz_heavy`` (marked slow) runs many more.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.shell_sessions import SANDBOXES, probe, run, session_for
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from starweave.tools.servers.shell.danger import dangerous_reason

DEADLINE = 5.0  # seconds one classification may take, whatever the input
T = TypeVar("T")

SHELL_CHARS = "abcxyz-_./~*?[]{}$'\"\\|&;<>()#=:,@%+!` \t\n0123456789"
OPERATORS = ["|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>", "|&", "<<", "<(", "$(", "`", "\n"]
TOOLS = [
    "ls", "cat", "grep", "sed", "awk", "find", "xargs", "tar", "git", "sort", "head", "tail", "echo",
    "printf", "env", "nice", "timeout", "sudo", "bash", "sh", "python3", "perl", "cp", "mv", "rm",
    "chmod", "curl", "wget", "ssh", "eval", "exec", "source", "cd", "export", "read", "kill", "dd",
]  # fmt: skip
OPTIONS = [
    "-o",
    "--output",
    "-t",
    "-S",
    "-C",
    "-c",
    "-e",
    "-f",
    "-i",
    "--in-pl",
    "-exec",
    "-delete",
    "-r",
    "--",
]
PATHS = [
    "a.txt", "sub", "..", "../outside", "/", "/etc/shadow", "~", "~/.ssh/id_rsa", "/proc/self/environ",
    "/dev/zero", "fifo", "link_out/x", ".git/config", ".env", "$HOME", "$PWD/..", "*", "/*/*/*", "{}",
    "\\;", "+", "'quoted path'", '"$(id)"',
]  # fmt: skip
# Commands that must be asked about, and benign arguments that do not change a line's structure.
FLAGGED = [
    "rm x", "rm -rf sub", "mv a b", "chmod 600 a.txt", "kill 123", "git push", "git clean -fd",
    "git reset --hard", "curl -o f https://example.com", "python3 s.py", "./run.sh", "sed -i s/a/b/ f",
    "find . -delete", "bash -c id", "eval ls", "dd if=/dev/zero of=f", "truncate -s 0 f",
]  # fmt: skip
WORDS = st.text("abcxyz0123456789._-/", min_size=1, max_size=8)
AROUND = [
    ("echo ok; ", ""), ("true && ", ""), ("false || ", ""), ("ls | ", ""), ("( ", " )"), ("{ ", "; }"),
    ("if true; then ", "; fi"), ("for i in 1 2; do ", "; done"), ("while false; do :; done; ", ""),
    ("echo $(", ")"), ('echo "$(', ')"'), ("echo `", "`"), ('x="$(', ')"'), ("cat <(", ")"),
    ("sleep 1 & ", ""), ("X=1 ", ""), ("f() { ", "; }; f"), ("", " ; ls"), ("", " && echo done"),
    ("", " | cat"), ("", " &"), ("", " 2>/dev/null"), ("", " > out.txt"), ("cat <<'E'\nrm x\nE\n", ""),
]  # fmt: skip
WRAPPERS = [
    "nice", "nice -n 5", "timeout 5", "timeout -s KILL 5", "env", "env -i", "env A=1", "stdbuf -o0",
    "nohup", "sudo", "sudo -u bob", "xargs", "xargs -0 -n1", "time", "command", "exec", "setsid",
    "/usr/bin/env", "ionice -c3", "flock /tmp/l",
]  # fmt: skip


def bounded(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` run in a thread; fails when it takes longer than DEADLINE (a thread cannot be
    killed, so a hung check is left behind as a daemon thread)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE)
    if thread.is_alive():
        raise AssertionError(f"no answer within {DEADLINE:g}s for {args!r:.300}")
    if "error" in box:
        raise box["error"]
    return box["value"]


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    """A command line from tool names, options, hostile paths, operators and quoting."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if parts:
            parts.append(draw(st.sampled_from(OPERATORS)))
        parts.append(draw(st.sampled_from(TOOLS + FLAGGED)))
        for _ in range(draw(st.integers(0, 5))):
            word = draw(
                st.one_of(st.sampled_from(OPTIONS), st.sampled_from(PATHS), st.text(SHELL_CHARS, max_size=8))
            )
            quote = draw(st.sampled_from(["", "", "'", '"']))
            parts.append(f"{quote}{word}{quote}" if quote and quote not in word else word)
    return " ".join(parts)


# What the runner fuzz runs for real: readers and shell syntax only, so that even a broken sandbox
# would not harm the machine (no rm, mv, kill, dd or find -delete in any combination).
SAFE_TOOLS = [
    "ls", "cat", "grep", "sort", "head", "tail", "echo", "printf", "wc", "tr", "cut", "true", "false",
    "env", "sleep 0.1", "bash -c", "sh -c", "python3 -c", "xargs echo", "read x",
]  # fmt: skip
SAFE_OPTIONS = ["-n", "-c", "-r", "-l", "-a", "--", "-"]


@st.composite
def safe_lines(draw: st.DrawFn) -> str:
    """A command line of harmless tools with random operators, paths and quoting."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if parts:
            parts.append(draw(st.sampled_from(OPERATORS)))
        parts.append(draw(st.sampled_from(SAFE_TOOLS)))
        for _ in range(draw(st.integers(0, 4))):
            word = draw(
                st.one_of(
                    st.sampled_from(SAFE_OPTIONS), st.sampled_from(PATHS), st.text(SHELL_CHARS, max_size=8)
                )
            )
            quote = draw(st.sampled_from(["", "", "'", '"']))
            parts.append(f"{quote}{word}{quote}" if quote and quote not in word else word)
    return " ".join(parts)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# No shrinking where an example may hang: every shrinking step would wait out the deadline again.
NO_SHRINK = settings(FAST, phases=[Phase.explicit, Phase.reuse, Phase.generate])
ANY_LINE = st.one_of(st.text(SHELL_CHARS, max_size=120), command_lines(), st.text(max_size=80))


@NO_SHRINK
@given(ANY_LINE)
def test_the_classifier_never_raises_and_always_answers_the_same(text: str) -> None:
    first = bounded(dangerous_reason, text)
    assert first is None or (isinstance(first, str) and first)
    assert bounded(dangerous_reason, text) == first


@FAST
@given(
    st.sampled_from(FLAGGED),
    st.lists(WORDS, max_size=3),
    st.sampled_from(AROUND),
    st.sampled_from(WRAPPERS),
)
def test_a_flagged_command_stays_flagged_wherever_it_runs(
    command: str, args: list[str], around: tuple[str, str], wrapper: str
) -> None:
    line = " ".join([command, *args])
    assert dangerous_reason(line), line
    before, after = around
    for variant in (f"{before}{line}{after}", f"{wrapper} {line}", f"{before}{wrapper} {line}{after}"):
        assert dangerous_reason(variant), f"{line!r} is flagged but {variant!r} is not"
    execs = [
        f"find . -exec {line} {{}} \\;",
        f"find . -execdir {line} {{}} +",
        f"echo x | xargs -I{{}} {line}",
    ]
    for variant in execs:
        assert dangerous_reason(variant), f"{line!r} is flagged but {variant!r} is not"


@pytest.mark.slow
@settings(NO_SHRINK, max_examples=1000)
@given(st.one_of(ANY_LINE, st.text(SHELL_CHARS, max_size=2000)))
def test_classifier_fuzz_heavy(line: str) -> None:
    bounded(dangerous_reason, line)


# ---- the runner -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A workspace with ordinary files, a symlink out of it and a FIFO; the tree outside."""
    base = tmp_path_factory.mktemp("fuzz")
    ws, outside = base / "ws", base / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("outside\n")
    (ws / "a.txt").write_text("a\nb\n")
    (ws / "script.sh").write_text("echo hi\n")
    os.symlink(outside, ws / "link_out")
    os.mkfifo(ws / "fifo")
    yield ws, outside


def _outside(outside: Path) -> list[tuple[str, int, bytes]]:
    return [
        (str(p), p.lstat().st_mode, p.read_bytes() if p.is_file() else b"")
        for p in sorted(outside.rglob("*"))
    ]


@pytest.mark.parametrize("kind", SANDBOXES)
def test_random_lines_never_break_the_runner_nor_leave_the_workspace(
    kind: str, places: tuple[Path, Path]
) -> None:
    ws, outside = places
    ok, detail = probe(kind)
    if not ok:
        pytest.skip(f"{kind} does not work here: {detail}")
    expected = _outside(outside)

    @settings(NO_SHRINK, max_examples=25)
    @given(safe_lines())
    def check(line: str) -> None:
        session = session_for(kind, ws)
        result = asyncio.run(run(session, line, limit=3))
        assert isinstance(result, dict) and isinstance(result.get("success"), bool), result
        if "error" in result and not result["error"].startswith("Timeout"):
            assert result["success"] is False and "exit_code" not in result, result
        else:
            assert {"exit_code", "stdout", "stderr"} <= set(result), result
        assert _outside(outside) == expected, line

    check()

"""Property-based fuzzing of the shell lexer, parser and policy with hypothesis.

Random command lines are built from shell-ish characters, operators and quotes, the names and
options of real tools, and hostile paths (secrets, globs, a FIFO, a symlink out of the workspace).
Properties: the lexer and the parser only ever raise PolicyViolation; the policy never raises and
decides within a deadline; a refused line stays refused whatever follows it after ``;`` or precedes
it, and whichever wrapper (nice, timeout, env, stdbuf) runs it; the verdict is deterministic.
The example counts are modest; ``test_policy_fuzz_heavy`` (marked slow) runs many more.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.shell_catalog import known_commands
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.danger import dangerous_reason
from starweave.tools.servers.shell.lexer import tokenize
from starweave.tools.servers.shell.parser import parse_command_line
from starweave.tools.servers.shell.policy import PolicyDecision, ShellPolicy

DEADLINE = 5.0  # seconds one check may take, whatever the input
T = TypeVar("T")

SHELL_CHARS = "abcxyz-_./~*?[]{}$'\"\\|&;<>()#=:,@%+! \t\n0123456789"
OPERATORS = ["|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>", "|&", "<<", "<(", "$(", "`", "\n"]
REFUSED = [
    "sudo",
    "bash",
    "sh",
    "python3",
    "perl",
    "vi",
    "mount",
    "busybox",
    "eval",
    "exec",
    "cd",
    "export",
    "rm",
]
OPTIONS = [
    "-o",
    "--output",
    "--outp=x",
    "-t",
    "--target=..",
    "-S",
    "--split=sh",
    "-C",
    "--chd=..",
    "-e",
    "--expr=e id",
    "-f",
    "--fil=x",
    "-i",
    "--in-pl",
    "-exec",
    "-execdir",
    "-delete",
    "-fprint",
    "--compress-p=sh",
    "--to-com=sh",
    "--checkpoint-act=exec=sh",
    "-I",
    "--use-comp=sh",
    "-P",
    "--absolute-n",
    "-x",
    "-c",
    "-vS'sh -c id'",
    "-W",
    "exec",
    "--files0=x",
    "--arg-f=x",
    "-O",
    "--open-files-in-pager=sh",
    "-p",
    "-a",
    "--preserve=mode",
    "-m",
    "4755",
    "u+s",
    "--reference=/usr/bin/passwd",
    "-r",
    "-R",
    "-L",
    "--",
    "-",
    "-K",
    "--config",
    "-T",
    "-d",
]
PATHS = [
    "a.txt",
    "sub",
    "sub/../..",
    "..",
    "../outside",
    "/",
    "/etc/shadow",
    "/etc",
    "~",
    "~/.ssh/id_rsa",
    "~root",
    "/proc/self/environ",
    "/proc/1/environ",
    "/proc/self/cwd/..",
    "/dev/zero",
    "/dev/stdin",
    "fifo",
    "link_out",
    "link_out/x",
    ".git/config",
    ".env",
    "x.pem",
    "$HOME",
    "$PWD/..",
    "*",
    "*/*",
    "/*/*/*",
    "?",
    "[a-z]*",
    "script.sh",
    "'quoted path'",
    '"/etc/passwd"',
    "\\;",
    "{}",
    "+",
    "/*/*/*/*/*/*",
    "/proc/*/*/*",
]
KNOWN = sorted(known_commands())
# Whole commands of the families the hostile suite attacks: mixed into the random lines so that a
# modest number of examples reaches the rules, the FIFO, the glob walker and the script readers.
HOT = [
    "sed -f fifo a.txt",
    "sed -f /dev/zero a.txt",
    "awk -f fifo",
    "awk -f /dev/zero",
    "cat < fifo",
    "sort --outp=/etc/x a.txt",
    "sort --compress-p=sh -S 1 a.txt",
    "env -vS'sh -c id'",
    "env --chd=.. touch x",
    "xargs --arg-f=../outside/.env echo",
    "tar --checkpoint-act=exec=sh -cf x a.txt",
    "cp --target=.. a.txt",
    "git grep -O'sh script.sh' x",
    "link_out/../sub/x",
    "echo /*/*/*/*/*/*",
    "ls -d /*/*/*/*/*/*/nomatch",
    "date --fi=../outside/.env",
    "awk 'BEGIN{system\\\n(\"id\")}'",
    "awk 'BEGIN{ARGV[1]=\"/etc/shadow\"}{print}' a.txt",
    "find . -exec sh {} \\;",
    "tar -C .. -C outside -xf x.tar",
    "chmod u+s a.txt",
    "cp -p /usr/bin/passwd p",
]


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
    """A command line from real tool names, options, hostile paths, operators and quoting."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if parts:
            parts.append(draw(st.sampled_from(OPERATORS)))
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(HOT)))
            continue
        parts.append(draw(st.sampled_from(KNOWN + REFUSED)))
        for _ in range(draw(st.integers(0, 5))):
            word = draw(
                st.one_of(st.sampled_from(OPTIONS), st.sampled_from(PATHS), st.text(SHELL_CHARS, max_size=8))
            )
            quote = draw(st.sampled_from(["", "", "'", '"']))
            parts.append(f"{quote}{word}{quote}" if quote and quote not in word else word)
    return " ".join(parts)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A workspace with ordinary files, a symlink out of it, a FIFO and a secret-looking file."""
    base = tmp_path_factory.mktemp("fuzz")
    ws, outside = base / "ws", base / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "a.txt").write_text("a\nb\n")
    (ws / "script.sh").write_text("echo hi\n")
    (ws / "x.pem").write_text("not really\n")
    os.symlink(outside, ws / "link_out")
    os.mkfifo(ws / "fifo")
    yield ws


@pytest.fixture(scope="module")
def policies(workspace: Path) -> list[ShellPolicy]:
    """The policy without a sandbox and as it is when commands run sandboxed."""
    config = ShellConfig.model_validate({"workspace": str(workspace)})
    return [ShellPolicy(config), ShellPolicy(config, sandboxed=True)]


def _decide(policy: ShellPolicy, line: str) -> PolicyDecision:
    decision = bounded(policy.evaluate, line, None)
    assert isinstance(decision, PolicyDecision), decision
    assert isinstance(decision.reason, str) and decision.reason
    return decision


def _lexes(line: str) -> bool:
    try:
        tokenize(line)
    except PolicyViolation:
        return False
    return True


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# No shrinking where an example may hang: every shrinking step would wait out the deadline again.
NO_SHRINK = settings(FAST, phases=[Phase.explicit, Phase.reuse, Phase.generate])


@FAST
@given(st.text(SHELL_CHARS, max_size=120))
def test_lexer_only_refuses(text: str) -> None:
    try:
        tokens = bounded(tokenize, text)
    except PolicyViolation:
        return
    assert isinstance(tokens, list)


@FAST
@given(st.one_of(st.text(SHELL_CHARS, max_size=120), command_lines()))
def test_parser_only_refuses(text: str) -> None:
    try:
        line = bounded(parse_command_line, text)
    except PolicyViolation:
        return
    assert line.pipelines and len(line.connectors) == len(line.pipelines) - 1


@FAST
@given(st.one_of(st.text(SHELL_CHARS, max_size=120), command_lines()))
def test_dangerous_reason_never_raises(text: str) -> None:
    reason = bounded(dangerous_reason, text)
    assert reason is None or isinstance(reason, str)


@NO_SHRINK
@given(command_lines())
def test_policy_decides_within_the_deadline_and_never_raises(policies: list[ShellPolicy], line: str) -> None:
    first = [_decide(p, line).allowed for p in policies]
    assert [_decide(p, line).allowed for p in policies] == first, "the verdict changed between two checks"


@NO_SHRINK
@given(command_lines(), command_lines())
def test_a_refused_line_stays_refused_whatever_follows_or_precedes(
    policies: list[ShellPolicy], line: str, other: str
) -> None:
    for policy in policies:
        if not _lexes(line) or _decide(policy, line).allowed:
            continue
        assert not _decide(policy, f"{line} ; {other}").allowed, f"{line!r} ; {other!r}"
        assert not _decide(policy, f"echo ok ; {line}").allowed, f"echo ok ; {line!r}"
        assert not _decide(policy, f"true && {line}").allowed, f"true && {line!r}"


@settings(NO_SHRINK, max_examples=100)
@given(
    st.sampled_from(KNOWN + REFUSED),
    st.lists(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(PATHS)), max_size=4),
    st.sampled_from(["nice", "nice -n 5", "timeout 5", "env", "env -i", "stdbuf -o0", "nohup", "xargs"]),
)
def test_a_wrapper_never_makes_a_refused_command_allowed(
    policies: list[ShellPolicy], name: str, args: list[str], wrapper: str
) -> None:
    line = " ".join([name, *args])
    for policy in policies:
        if not _lexes(line) or _decide(policy, line).allowed:
            continue
        wrapped = f"{wrapper} {line}"
        assert not _decide(policy, wrapped).allowed, f"{line!r} is refused but {wrapped!r} is allowed"


@pytest.mark.slow
@settings(NO_SHRINK, max_examples=600)
@given(st.one_of(st.text(SHELL_CHARS, max_size=300), command_lines()))
def test_policy_fuzz_heavy(policies: list[ShellPolicy], line: str) -> None:
    for policy in policies:
        _decide(policy, line)

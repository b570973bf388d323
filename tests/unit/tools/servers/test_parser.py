"""The command-line parser: structure, quoting, redirections and expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.parser import expand_command, parse_command_line, real_home


def _argvs(command: str, cwd: Path) -> list[list[list[str]]]:
    line = parse_command_line(command)
    return [
        [expand_command(c, cwd=str(cwd), workspace=str(cwd)).argv for c in p.commands] for p in line.pipelines
    ]


def test_pipelines_and_connectors(tmp_path: Path) -> None:
    line = parse_command_line("a 1 | b && c || d; e")
    assert line.connectors == ["&&", "||", ";"]
    assert [len(p.commands) for p in line.pipelines] == [2, 1, 1, 1]
    assert _argvs("a 1 | b", tmp_path) == [[["a", "1"], ["b"]]]


def test_quotes_and_escapes(tmp_path: Path) -> None:
    assert _argvs("echo 'a b' \"c $HOME\" d\\ e '' x", tmp_path) == [
        [["echo", "a b", f"c {tmp_path}", "d e", "", "x"]]
    ]
    assert _argvs("awk '{print $1}' f", tmp_path) == [[["awk", "{print $1}", "f"]]]
    assert _argvs("echo a#b # comment", tmp_path) == [[["echo", "a#b"]]]
    assert _argvs("echo cost: $", tmp_path) == [[["echo", "cost:", "$"]]]


def test_redirections(tmp_path: Path) -> None:
    line = parse_command_line("cmd < in.txt > out.txt 2>&1 2>> err.log")
    cmd = expand_command(line.pipelines[0].commands[0], cwd=str(tmp_path), workspace=str(tmp_path))
    kinds = [(r.fd, r.kind, r.target, r.dup_to) for r in cmd.redirects]
    assert kinds == [
        (0, "read", "in.txt", None),
        (1, "write", "out.txt", None),
        (2, "dup", "", 1),
        (2, "append", "err.log", None),
    ]
    both = expand_command(
        parse_command_line("ls &> all.log").pipelines[0].commands[0], cwd="/", workspace="/"
    )
    assert [(r.fd, r.kind) for r in both.redirects] == [(1, "write"), (2, "dup")]
    pipe_err = parse_command_line("ls |& cat").pipelines[0].commands[0]
    assert pipe_err.redirects[0].op == ">&"


def test_globs_expand_relative_to_cwd_and_keep_literal_without_match(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a.txt").write_text("")
    (tmp_path / ".hidden.txt").write_text("")
    assert _argvs("ls *.txt", tmp_path) == [[["ls", "a.txt", "b.txt"]]]
    assert _argvs("ls '*.txt'", tmp_path) == [[["ls", "*.txt"]]]
    assert _argvs("ls *.nothing", tmp_path) == [[["ls", "*.nothing"]]]
    assert _argvs("ls [ab].txt ?.txt", tmp_path) == [[["ls", "a.txt", "b.txt", "a.txt", "b.txt"]]]
    assert _argvs(f"ls {tmp_path}/a*", tmp_path) == [[["ls", f"{tmp_path}/a.txt"]]]


def test_tilde_is_the_real_home(tmp_path: Path) -> None:
    assert _argvs("ls ~ ~/x '~'", tmp_path) == [[["ls", real_home(), f"{real_home()}/x", "~"]]]


def test_allowed_assignments(tmp_path: Path) -> None:
    line = parse_command_line("LANG=C LC_ALL=C sort f")
    cmd = line.pipelines[0].commands[0]
    assert cmd.assignments == {"LANG": "C", "LC_ALL": "C"}
    assert _argvs("LANG=C sort f", tmp_path) == [[["sort", "f"]]]
    assert _argvs("echo A=1", tmp_path) == [[["echo", "A=1"]]]


def test_trailing_semicolon_and_newlines(tmp_path: Path) -> None:
    assert _argvs("echo a;", tmp_path) == [[["echo", "a"]]]
    assert _argvs("echo a\necho b", tmp_path) == [[["echo", "a"]], [["echo", "b"]]]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls |", "empty command"),
        ("&& ls", "empty command"),
        ("> f", "redirection without a command"),
        ("ls &&", "ends with"),
        ("echo 'open", "unterminated single quote"),
        ('echo "open', "unterminated double quote"),
        ('echo "$(id)"', "command substitution"),
        ('echo "`id`"', "backticks"),
        ("echo $'x'", "$'...' quoting"),
        ("ls 3> f", "file descriptor 3"),
        ("ls >", "needs a file name"),
        ("echo $1", "special parameter"),
        ("", "empty"),
    ],
)
def test_syntax_errors_are_refused(command: str, reason: str) -> None:
    with pytest.raises(PolicyViolation) as info:
        parse_command_line(command)
    assert reason in str(info.value)

"""Options are parsed the way the tools parse them (getopt_long), and the tables are the real ones."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from helpers.shell_catalog import known_commands

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.optables import TABLES, spec_for
from starweave.tools.servers.shell.optables_git import GIT_SUBCOMMANDS
from starweave.tools.servers.shell.options import Args, insert_options, parse_options

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
# Commands whose rule parses the arguments itself (find's expression, ps's three syntaxes ...).
CUSTOM_PARSED = {"find", "jq", "ps", "unzip", "zip", "xxd"}
NESTED = {
    "stash": ["list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store"],
    "remote": [
        "add",
        "rename",
        "remove",
        "set-head",
        "show",
        "prune",
        "update",
        "set-branches",
        "get-url",
        "set-url",
    ],
    "worktree": ["add", "list", "lock", "move", "prune", "remove", "repair", "unlock"],
    "notes": ["add", "copy", "append", "edit", "show", "merge", "remove", "prune", "get-ref", "list"],
    "bundle": ["create", "verify", "list-heads", "unbundle"],
    "reflog": ["show", "expire", "delete", "exists"],
}
HELP_ARGS = {
    "curl": ["--help", "all"],
    "xz": ["--long-help"],
    "zstd": ["-H"],
    "ps": ["--help", "all"],
}


def _parse(name: str, words: list[str]) -> Args:
    spec = spec_for(name)
    assert spec is not None
    return parse_options(name, words, spec)


def test_unique_prefixes_resolve_to_the_full_option() -> None:
    args = _parse("sort", ["--outp=/etc/x", "f"])
    assert args.opts == [("--output", "/etc/x")] and args.pos == ["f"]
    assert _parse("cp", ["--target", "/etc", "a"]).values("--target-directory") == ["/etc"]
    assert _parse("tar", ["--checkpoint-act=exec=sh"]).has("--checkpoint-action")
    assert _parse("env", ["--split=sh -c x"]).values("--split-string") == ["sh -c x"]
    assert _parse("sed", ["--expr=e id"]).values("--expression") == ["e id"]


def test_ambiguous_prefix_and_unknown_option_are_refused_with_the_tool_named() -> None:
    with pytest.raises(
        PolicyViolation, match=r"sort: --r is ambiguous .*--random-sort.*write the option in full"
    ):
        _parse("sort", ["--r"])
    with pytest.raises(PolicyViolation, match=r"sort: unknown option --foo; see sort --help"):
        _parse("sort", ["--foo"])
    with pytest.raises(PolicyViolation, match=r"sort: unknown option -Q"):
        _parse("sort", ["-Q"])
    with pytest.raises(PolicyViolation, match="takes no value"):
        _parse("sort", ["--reverse=yes"])
    with pytest.raises(PolicyViolation, match="needs a value"):
        _parse("sort", ["-o"])


def test_combined_short_flags_with_attached_values() -> None:
    assert _parse("env", ["-vS'sh -c x'"]).opts == [("-v", None), ("-S", "'sh -c x'")]
    assert _parse("head", ["-n5", "f"]).values("-n") == ["5"]
    assert _parse("tar", ["-xvf", "a.tar"]).values("-f") == ["a.tar"]
    assert _parse("sort", ["-rko", "x"]).opts == [("-r", None), ("-k", "o")]


def test_optional_values_are_attached_only() -> None:
    args = _parse("ls", ["--color", "auto"])
    assert args.opts == [("--color", None)] and args.pos == ["auto"]
    assert _parse("sed", ["-i.bak", "s/a/b/", "f"]).values("-i") == [".bak"]
    assert _parse("sed", ["-i", "s/a/b/", "f"]).pos == ["s/a/b/", "f"]


def test_permutation_double_dash_and_stop_at_first_operand() -> None:
    args = _parse("sort", ["f", "-o", "out", "--", "-r"])
    assert args.values("-o") == ["out"] and args.pos == ["f", "-r"] and args.dashdash == 3
    wrapped = _parse("env", ["-i", "ls", "-l"])
    assert wrapped.has("-i") and wrapped.pos == ["ls", "-l"]
    assert _parse("timeout", ["-s", "KILL", "5", "sh", "-c", "id"]).pos == ["5", "sh", "-c", "id"]
    assert _parse("seq", ["-5", "5"]).pos == ["-5", "5"]


def test_options_are_injected_before_the_double_dash() -> None:
    argv = ["grep", "-r", "x", "--", "-dir"]
    args = parse_options("grep", argv[1:], TABLES["grep"])
    assert insert_options(argv, args, ["--exclude=.env"]) == [
        "grep",
        "-r",
        "x",
        "--exclude=.env",
        "--",
        "-dir",
    ]


def test_every_allowed_command_has_an_option_table_or_its_own_parser() -> None:
    missing = [c for c in known_commands() if c not in CUSTOM_PARSED and spec_for(c, _real(c)) is None]
    assert missing == []


def _real(name: str) -> str:
    found = shutil.which(name, path=SYSTEM_PATH)
    return os.path.realpath(found) if found else ""


def _help_names(exe: str, args: list[str]) -> set[str]:
    out = subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False
    )
    return set(re.findall(r"--(?:\[no-\])?([A-Za-z0-9][A-Za-z0-9.-]*)", out.stdout + out.stderr))


@pytest.mark.parametrize("name", sorted(n for n, s in TABLES.items() if s.long and n != "git"))
def test_every_long_option_is_in_the_installed_tools_help(name: str) -> None:
    exe = shutil.which(name, path=SYSTEM_PATH)
    if exe is None:
        pytest.skip(f"{name} is not installed here")
    documented = _help_names(exe, HELP_ARGS.get(name, ["--help"]))
    assert [opt for opt in TABLES[name].long if opt not in documented] == []


@pytest.mark.parametrize("sub", sorted(s for s, spec in GIT_SUBCOMMANDS.items() if spec.long))
def test_every_git_option_is_in_the_subcommands_help(sub: str) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    documented = _help_names("git", [sub, "-h"])
    for nested in NESTED.get(sub, ()):
        documented |= _help_names("git", [sub, nested, "-h"])
    assert [opt for opt in GIT_SUBCOMMANDS[sub].long if opt not in documented] == []

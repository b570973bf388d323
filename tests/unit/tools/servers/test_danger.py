"""dangerous_reason flags destructive but allowed commands for a user confirmation."""

from __future__ import annotations

import pytest

from starweave.tools.servers.shell.danger import dangerous_reason


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm notes.txt", "rm deletes"),
        ("rmdir empty", "rmdir"),
        ("mv a b", "mv"),
        ("truncate -s 0 f", "truncate"),
        ("chmod 600 f", "chmod"),
        ("chown me f", "chown"),
        ("kill 123", "kill"),
        ("pkill sleep", "pkill"),
        ("git reset --hard HEAD~1", "reset --hard"),
        ("git clean -fd", "git clean"),
        ("find . -name '*.tmp' -delete", "find -delete"),
        ("sed -i 's/a/b/' f", "sed -i"),
        ("find . | xargs rm", "rm deletes"),
        ("timeout 5 rm x", "rm deletes"),
        ("mkdir d && rm -r d", "rm deletes"),
    ],
)
def test_destructive_commands_are_flagged(command: str, reason: str) -> None:
    found = dangerous_reason(command)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a | sort",
        "echo hi >> log",
        "ls 2>/dev/null",
        "ls > /dev/null",
        "cp -n a b",
        "cp a b",
        "echo hi > a.txt",
        "ls &> out.log",
        "cat a | tee b",
        "sort -o out.txt in.txt",
        "git status",
        "grep -r rm .",
        "tee -a log",
        "echo 'rm -rf /'",
    ],
)
def test_harmless_commands_are_not_flagged(command: str) -> None:
    assert dangerous_reason(command) is None


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("sed --in-pl 's/a/b/' f", "sed -i"),
        ("sed -ni.bak 's/a/b/p' f", "sed -i"),
        ("env -i LANG=C rm x", "rm deletes"),
        ("nice -n 5 timeout 3 rm x", "rm deletes"),
        ("xargs -0 -n1 rm", "rm deletes"),
        ("/usr/bin/rm x", "rm deletes"),
        ("b/cat notes.txt", "program from the workspace"),
        ("./run.sh", "program from the workspace"),
        ("python3 script.py", "runs a script"),
        ("bash run.sh", "runs a script"),
        ("curl -o page.html https://example.com", "network"),
        ("git clone https://example.com/r.git", "network"),
        ("git reset --ha HEAD", "reset --hard"),
        ("mv --no-t a b", "mv moves"),
        ("ln --forc a b", "ln -f"),
    ],
)
def test_confirmation_sees_through_abbreviations_wrappers_and_paths(command: str, reason: str) -> None:
    found = dangerous_reason(command)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "command", ["/usr/bin/ls -l", "env LANG=C sort a", "mv -n a b", "sed -n 1p f", "git log -5"]
)
def test_harmless_variants_stay_unflagged(command: str) -> None:
    assert dangerous_reason(command) is None

"""dangerous_reason flags command lines a person should approve (CONFIRM): destructive, publishing
or running code, wherever in a real bash line bash would run them; it never raises and stays fast."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# ---- real shell: what bash runs is looked at where bash runs it ------------------------------------


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo $(rm x)", "rm deletes"),
        ('echo "$(rm x)"', "rm deletes"),
        ('x="$(curl -s https://example.com)"', "curl uses the network"),
        ('echo "$(echo "$(git push)")"', "git push"),
        ("echo `rm x`", "rm deletes"),
        ('echo "`rm x`"', "rm deletes"),
        ("cat <(rm x)", "rm deletes"),
        ("diff <(sort a) <(rm b)", "rm deletes"),
        ("cat < <(rm x)", "rm deletes"),
        ("echo a > >(rm x)", "rm deletes"),
        ("cat <<EOF\n$(rm x)\nEOF", "rm deletes"),  # an unquoted here-document expands $(...)
        ("cat <<EOF | sh\necho hi\nEOF", "sh runs a script"),
        ("find . -exec rm {} +", "rm deletes"),
        ("find . -type f -exec chmod 644 {} +", "chmod"),
        ("find . -name '*.o' -execdir rm {} \\;", "rm deletes"),
        ("find . -ok rm {} \\;", "rm deletes"),
        ("bash -c 'echo sub'", "bash runs a script"),
        ("sh -c ls", "sh runs a script"),
        ("python3 -c 'print(1+1)'", "python3 runs a script"),
        ("eval ls", "eval runs a command line"),
        ("source env.sh", "source runs a command line"),
        ("git -C dir push", "git push uses the network"),
        ("git -C dir -c user.name=x push origin main", "git push uses the network"),
        ("git --git-dir=.git fetch", "git fetch uses the network"),
        ("for f in *.txt; do rm $f; done", "rm deletes"),
        ("if true; then kill 1; fi", "kill stops"),
        ('while read f; do rm "$f"; done < list', "rm deletes"),
        ("( cd sub && rm x )", "rm deletes"),
        ("{ rm x; }", "rm deletes"),
        ("f() { rm x; }; f", "rm deletes"),
        ("X=1 rm x", "rm deletes"),
        ("sleep 1 & rm x", "rm deletes"),
        ("nohup rm x &", "rm deletes"),
        ("exec rm x", "rm deletes"),
        ("ls|rm x", "rm deletes"),
        ("ls;rm x", "rm deletes"),
    ],
)
def test_commands_bash_runs_from_anywhere_are_flagged(command: str, reason: str) -> None:
    found = dangerous_reason(command)
    assert found is not None and reason in found, found


@pytest.mark.parametrize(
    "command",
    [
        "for f in *.txt; do echo $f; done",
        "X=3; echo $X",
        "echo $(ls | wc -l)",
        'echo "$(date +%F)"',
        "echo $((1 + 2))",
        "sleep 1 &",
        "diff <(sort a) <(sort b)",
        "echo '$(rm x)'",  # single quotes: bash runs nothing
        "echo 'rm -rf /' | wc -c",
        'echo "rm x; kill 1"',
        "cat <<EOF\nrm -rf /\nkill -9 1\nEOF",  # a here-document body that merely says rm
        "cat <<'EOF' > notes.md\nrm `kill 1` $(shutdown)\nEOF\necho done",
        "cat <<-EOF\n\trm x\n\tEOF\nls",
        'cat <<"END"\n$(rm x)\nEND',
        "grep -c rm notes.txt",
        "cat <<< 'rm x'",
        "git -C dir status",
        "git -C dir log --oneline -5",
        "xargs -n1 echo < list",
        "find . -name '*.txt' -print",
    ],
)
def test_real_shell_that_only_reads_or_creates_is_not_flagged(command: str) -> None:
    assert dangerous_reason(command) is None, dangerous_reason(command)


def test_nesting_too_deep_to_read_is_asked_about() -> None:
    line = 'echo "$(' * 40 + "ls" + ')"' * 40
    assert "too deeply" in (dangerous_reason(line) or "")


def _seconds(line: str) -> float:
    start = time.perf_counter()
    dangerous_reason(line)
    return time.perf_counter() - start


@pytest.mark.parametrize(
    "unit",
    [
        "echo a | grep b && ls -la; ",
        "`a` ",
        "$(a ",
        '"$(echo ',
        "'a' \"b\" ",
        "cat <<E\n",
        "> >(x) ",
        "( ",
        "'",
        "\\",
    ],
)
def test_a_long_line_is_read_in_linear_time(unit: str) -> None:
    small, large = ((unit * (size // len(unit) + 1))[:size] for size in (10_000, 100_000))
    # A generous ratio on a shared machine (linear is about 10, quadratic would be about 100); the
    # best of three takes the noise out of each.
    ratio = min(_seconds(large) for _ in range(3)) / max(min(_seconds(small) for _ in range(3)), 1e-3)
    assert ratio < 40, ratio
    assert _seconds(large) < 30


SHELL_TEXT = "abcxyz-_./~*?[]{}$'\"\\|&;<>()#=:,@%+!` \t\n0123456789"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(SHELL_TEXT, max_size=200), st.text(max_size=200), st.binary(max_size=200)))
def test_garbage_never_raises(data: str | bytes) -> None:
    line = data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else data
    for text in (line, line + "\0", "'" + line, '"$(' + line, "cat <<E\n" + line):
        reason = dangerous_reason(text)
        assert reason is None or (isinstance(reason, str) and reason)

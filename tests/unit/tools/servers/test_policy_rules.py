"""The rules issue 11 changed, family by family: options parsed like the tools, real targets,
closed configuration, recursive readers, special files, set-id bits, pipeline races and bounds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.policy import ShellPolicy


@pytest.fixture
def policy(workspace: Path) -> ShellPolicy:
    return ShellPolicy(ShellConfig(workspace=str(workspace)))


@pytest.fixture
def confined(workspace: Path) -> ShellPolicy:
    """The same rules as when a sandbox runs the commands."""
    return ShellPolicy(ShellConfig(workspace=str(workspace)), sandbox="bwrap")


def _refused(policy: ShellPolicy, command: str, reason: str) -> None:
    decision = policy.evaluate(command)
    assert not decision.allowed, command
    assert reason in decision.reason, decision.reason


REFUSED: list[tuple[str, str]] = [
    # GNU options the old checks did not know: abbreviations, bundles, options after operands
    ("sort --outp=/etc/x notes.txt", "write outside the workspace"),
    ("sort notes.txt --outp /etc/x", "write outside the workspace"),
    ("sort -ro/etc/x notes.txt", "write outside the workspace"),
    ("sort --compress=sh notes.txt", "--compress-program"),
    ("sort --files0-from=list", "--files0-from"),
    ("cp --target=/etc notes.txt", "write outside the workspace"),
    ("cp notes.txt -t /etc", "write outside the workspace"),
    ("tar --checkpoint-act=exec=sh -cf a.tar notes.txt", "--checkpoint-action"),
    ("tar cfI a.tar sh notes.txt", "tar -I"),
    ("tar -cf a.tar notes.txt --use-compress=sh", "--use-compress-program"),
    ("tar -T list -cf a.tar", "-T"),
    ("env --split='sh -c id'", "--split-string"),
    ("env -vS'sh -c id'", "env -S"),
    ("env -C /tmp ls", "env -C"),
    ("sed --expr='e id' notes.txt", "the e command"),
    ("sed -i'/tmp/*' s/a/b/ notes.txt", "backup suffix"),
    ("ls --frobnicate", "ls: unknown option --frobnicate; see ls --help"),
    ("ls --c", "ambiguous"),
    ("xargs --process-slot-var=LD_PRELOAD echo", "--process-slot-var"),
    ("wc --files0-from=names", "--files0-from"),
    ("file -C -m magic", "file -C"),
    ("ss -K dst 1.2.3.4", "ss -K"),
    ("kill -9 -1", "only process ids"),
    ("kill 1", "init, Starweave"),
    (f"kill {os.getpid()}", "init, Starweave"),
    ("pkill python", "use ps, then kill PID"),
    # the real target decides the rule
    ("b/cat notes.txt", "runs /usr/bin/bash"),
    ("./cat", "runs /usr/bin/bash"),
    ("/tmp/evil/ls", "only programs from"),
    # tools that run helpers or read configuration
    ("git grep -O sh alpha", "pager"),
    ("git grep --open=sh alpha", "--open-files-in-pager"),
    ("git log --outp=/tmp/x", "write --output in full"),
    ("git log --output=/tmp/x", "write outside the workspace"),
    ("git diff --ext-diff", "external program"),
    ("git -c alias.x=!sh x", "git -c alias.x"),
    ("git config --global user.name x", "--global"),
    ("git config --file /tmp/c user.name x", "another config file"),
    ("git rebase -x id HEAD~1", "runs a command"),
    ("git commit -S -m x", "gpg"),
    ("git init --template=/tmp/t x", "template"),
    ("git merge -s evil topic", "built-in strategies"),
    ("git apply --unsafe-paths p.diff", "outside the repository"),
    ("git --exec-path=/tmp status", "unknown option --exec-path"),
    ("zip -TT sh a.zip notes.txt", "runs a program"),
    ("zip -T a.zip notes.txt", "runs a program"),
    ("zip -@ a.zip", "not an option the policy accepts"),
    ("unzip -K a.zip", "unzip -K"),
    ("unzip -: a.zip", "unzip -:"),
    ("curl -q", "network"),
    ("awk -f lib.awk -W exec prog", "awk -W exec"),
    ("awk -i inplace '{print}' notes.txt", "unknown option"),
    # awk programs, checked by a tokenizer
    ("awk 'BEGIN { system \\\n(\"id\") }'", "calls system()"),
    ("awk 'BEGIN{ARGV[1]=\"/etc/shadow\"; ARGC=2} {print}'", "ARGV"),
    ("awk 'function f(a){a[1]=\"/etc/shadow\"} BEGIN{f(ARGV)} {print}'", "ARGV"),
    ("awk '{print | \"sh\"}' notes.txt", "pipes to or from a command"),
    ("awk '{print > \"/etc/x\"}' notes.txt", "redirects print output"),
    ("awk '{printf(\"%s\", $0) >> out}' notes.txt", "redirects printf output"),
    ("awk 'BEGIN{getline l < \"/etc/passwd\"; print l}'", "getline <"),
    ("awk 'BEGIN{getline $(1+1) < \"/etc/passwd\"}'", "getline <"),
    ('awk \'BEGIN{ENVIRON["PATH"]="/tmp"}\'', "ENVIRON"),
    ('awk \'BEGIN{print "x" |& "/inet/tcp/0/h/80"}\'', "coprocess"),
    ("awk '@include \"x\"'", "@"),
    ("awk '{ x = a / system(\"id\") / 2 }' notes.txt", "system()"),
    ('awk \'{ print "a" > "/dev/stderr" "x" }\' notes.txt', "redirects print output"),
    ("awk -v ARGC=1 '{print}'", "assigning ARGC"),
    # recursive readers and process listings
    ("grep -r KEY /", "would include"),
    ("grep -r KEY /etc", "would include /etc/gshadow"),
    ("grep --directories=recurse KEY /home", "would include"),
    ("grep -R KEY .", "grep -R follows links"),
    ("diff -r /etc /usr/share", "would include"),
    ("cp -r /etc etc-copy", "would include"),
    ("tar czf a.tgz /root", "sensitive"),
    ("tar czf a.tgz -C / etc", "would include"),
    ("zip -r a.zip /etc", "would include"),
    ("git grep --no-index KEY /etc", "would include"),
    ("ps e", "environment of other processes"),
    ("ps -o pid axe", "environment of other processes"),
    ("cat /proc/1/environ", "exposes a process"),
    ("cat /proc/self/cmdline", "exposes a process"),
    ("cat /proc/1/task/1/environ", "exposes a process"),
    ("cat /proc/self/root/etc/shadow", "exposes a process"),
    ("ls /proc/1/fd/", "exposes a process"),
    ("cat /dev/stdin", "standard stream"),
    ("find / -name x | xargs cat", "come from stdin"),
    # special files
    ("cat fifo", "FIFO"),
    ("wc -l < fifo", "FIFO"),
    ("sed -f fifo notes.txt", "FIFO"),
    ("awk -f fifo notes.txt", "FIFO"),
    ("sed -f /dev/zero notes.txt", "never ends"),
    ("sed -f /dev/stdin notes.txt", "standard stream"),
    ("echo x > fifo", "FIFO"),
    ("cat /dev/kmsg", "character device"),
    ("dd if=notes.txt of=/dev/null bs=1 of=fifo", "FIFO"),
    # set-id bits and owners
    ("chmod u+s notes.txt", "set-user-ID"),
    ("chmod 4755 notes.txt", "set-user-ID"),
    ("chmod =2755 notes.txt", "set-user-ID"),
    ("chmod -x+s notes.txt", "set-user-ID"),
    ("chmod a=rwxs notes.txt", "set-user-ID"),
    ("chmod --reference=/usr/bin/passwd notes.txt", "set-id bit"),
    ("install -m 6755 notes.txt x", "set-user-ID"),
    ("mkdir -m g+s d", "set-user-ID"),
    ("cp -p /usr/bin/passwd .", "set-user-ID"),
    ("cp --preserve=mode /usr/bin/passwd .", "set-user-ID"),
    ("tar xpf a.tar", "tar -p"),
    ("tar --same-owner -xf a.tar", "--same-owner"),
    ("chown nobody notes.txt", "giving files to 'nobody'"),
    ("chgrp 4242 notes.txt", "not one of the current user's groups"),
    ("install -o nobody notes.txt x", "giving files"),
    ("install -s notes.txt x", "strip program"),
    # pipeline races
    ("ln -s /etc x | cat x/passwd", "run them one after another"),
    ("mv a b | cat b", "run them one after another"),
    ("tar xf a.tar | cat notes.txt", "run them one after another"),
]


@pytest.mark.parametrize(("command", "reason"), REFUSED, ids=[c for c, _ in REFUSED])
def test_refused(policy: ShellPolicy, workspace: Path, command: str, reason: str) -> None:
    os.mkfifo(workspace / "fifo")
    os.symlink("/bin/bash", workspace / "cat")
    (workspace / "b").mkdir()
    os.symlink("/bin/bash", workspace / "b" / "cat")
    _refused(policy, command, reason)


ALLOWED: list[str] = [
    "sort -rn -k2 notes.txt",
    "sort notes.txt -o sorted.txt",
    "ls --col=auto -la",
    "head -5 notes.txt",
    "tail -n +2 notes.txt",
    "seq -5 5",
    "grep -rn alpha . --include='*.txt'",
    "grep -c alpha notes.txt",
    "cut -d: -f1 /etc/passwd",
    "awk '$2 > 100 {print $1}' notes.txt",
    "awk -F: '{print $1 \"|\" $3}' /etc/passwd",
    "awk '{ s += $2 } END { printf \"%d\\n\", s }' notes.txt",
    "awk '/alpha|beta/ { n++ } END { print n / 2 }' notes.txt",
    "awk '{print > \"/dev/stderr\"}' notes.txt",
    "awk 'BEGIN { print ENVIRON[\"HOME\"] }'",
    "awk 'BEGIN { while ((getline line) > 0) print line }'",
    "sed -n '1,2p' notes.txt",
    "sed -E 's/(a|b)+/x/g' notes.txt",
    "cat notes.txt | sort > out.txt",
    "echo x | tee f",
    "head -c 16 /dev/urandom | od -An -tx1",
    "ls -l /dev/null",
    "chmod 755 notes.txt",
    "chmod -R u+rwX,go-w demo",
    "chmod -s notes.txt",
    f"chown {os.geteuid()} notes.txt",
    "cp -a demo demo2",
    "tar czf out.tgz notes.txt demo",
    "zip -r a.zip demo",
    "unzip -l a.zip",
    "ps aux",
    "ps -eo pid,comm",
    "kill -TERM 4242",
    "date +%Y-%m-%d",
    "du -sh /usr/share",
    "git status",
    "git log --oneline -5 --stat",
    "git -C demo status",
    "env LANG=C sort notes.txt",
    "nice -5 ls",
    "timeout -s KILL 5 sleep 1",
    "xxd -ps notes.txt",
    "jq -r .name notes.txt",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(policy: ShellPolicy, command: str) -> None:
    decision = policy.evaluate(command)
    assert decision.allowed, decision.reason


@pytest.mark.parametrize(
    "command",
    ["python3 script.py", "./run.sh", "find . | xargs grep -l alpha", "pkill sleep", "tar xf a.tar -C demo"],
)
def test_allowed_only_with_a_sandbox(
    policy: ShellPolicy, confined: ShellPolicy, workspace: Path, command: str
) -> None:
    _make_tar(workspace, symlink=True)
    assert not policy.evaluate(command).allowed
    assert confined.evaluate(command).allowed, confined.evaluate(command).reason


def _make_tar(workspace: Path, *, symlink: bool = False, name: str = "a.tar") -> None:
    import io
    import tarfile

    with tarfile.open(workspace / name, "w") as tf:
        data = b"hello\n"
        info = tarfile.TarInfo("dir/file.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        if symlink:
            link = tarfile.TarInfo("dir/link")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc"
            tf.addfile(link)


def test_injected_options(policy: ShellPolicy, confined: ShellPolicy, workspace: Path) -> None:
    cwd = str(workspace)
    assert policy.check_argv(["sed", "-n", "1p", "notes.txt"], cwd)[:2] == ["sed", "--sandbox"]
    tar = confined.check_argv(["tar", "xf", "a.tar"], cwd)
    assert {"--no-same-owner", "--no-same-permissions", "--force-local"} <= set(tar)
    assert tar[-2:] == ["-f", "a.tar"]  # the old-style bundle was rewritten, not broken
    grep = policy.check_argv(["grep", "-r", "x", "."], cwd)
    assert "--exclude=.env" in grep and "--exclude-dir=.ssh" in grep
    diff = policy.check_argv(["diff", "-r", "demo", "demo"], cwd)
    assert "--no-dereference" in diff
    git = policy.check_argv(["git", "status"], cwd)
    assert "safe.bareRepository=explicit" in git and "core.editor=false" in git
    zip_argv = policy.check_argv(["zip", "-r", "a.zip", "demo"], cwd)
    assert zip_argv[:2] == ["zip", "-y"] and ".env" in zip_argv


def test_the_real_target_decides_the_rule(policy: ShellPolicy, workspace: Path) -> None:
    os.symlink("/usr/bin/sort", workspace / "cat")
    _refused(policy, "./cat --outp=/etc/x notes.txt", "write outside the workspace")
    assert policy.evaluate("/usr/bin/awk '{print}' notes.txt").allowed
    _refused(policy, "/usr/bin/awk 'BEGIN{system(\"id\")}'", "system()")


def test_archive_members_are_checked_without_a_sandbox(policy: ShellPolicy, workspace: Path) -> None:
    import io
    import tarfile

    _make_tar(workspace, symlink=True, name="links.tar")
    _refused(policy, "tar xf links.tar", "holds the link")
    for name, kind, reason in (
        ("../up.txt", tarfile.REGTYPE, "outside the folder"),
        ("/abs.txt", tarfile.REGTYPE, "outside the folder"),
        ("dev", tarfile.CHRTYPE, "device, FIFO or socket"),
    ):
        with tarfile.open(workspace / "bad.tar", "w") as tf:
            info = tarfile.TarInfo(name)
            info.type = kind
            tf.addfile(info, io.BytesIO(b""))
        _refused(policy, "tar xf bad.tar", reason)
    # a member that would be written through a link already in the workspace
    _make_tar(workspace, name="plain.tar")
    os.symlink(workspace.parent / "outside", workspace / "dir")
    _refused(policy, "tar xf plain.tar", "write outside the workspace")
    _refused(policy, "tar xf plain.tar -C demo -C ../../outside", "write outside the workspace")


def test_a_planted_git_config_is_refused(policy: ShellPolicy, workspace: Path) -> None:
    git = workspace / "repo" / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text('[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = x\n')
    assert policy.evaluate("git -C repo status").allowed
    for planted in (
        "[core]\n\tfsmonitor = id\n",
        '[diff "x"]\n\ttextconv = id\n',
        "[alias]\n\tst = !id\n",
        "[include]\n\tpath = /tmp/x\n",
        "[core]\n\tpager = less\n",
    ):
        (git / "config").write_text(planted)
        _refused(policy, "git -C repo status", "could run a program")
    assert policy.evaluate("git -C repo config --unset core.pager").allowed  # the way out
    (workspace / "wt").mkdir()
    (workspace / "wt" / ".git").write_text("gitdir: /tmp\n")
    _refused(policy, "git -C wt status", "outside the workspace")


def test_git_may_only_read_a_repository_outside_the_workspace(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    (outer / "ws").mkdir()
    policy = ShellPolicy(ShellConfig(workspace=str(outer / "ws")))
    assert policy.evaluate("git status").allowed
    # The check of the whole line lets it pass (an earlier "git init" may create a repository); the
    # check right before it runs decides.
    assert policy.evaluate("git init -q && git commit -m x").allowed
    with pytest.raises(PolicyViolation, match="outside the workspace and may only be read"):
        policy.check_argv(["git", "commit", "-m", "x"], str(outer / "ws"))


def test_glob_bomb_is_refused_quickly(policy: ShellPolicy) -> None:
    start = time.monotonic()
    _refused(policy, "echo /*/*/*/*/*/*/*/*", "the pattern '/*/*/*/*/*/*/*/*'")
    _refused(policy, "ls /*/*/*/*/*/*/nomatch", "the pattern '/*/*/*/*/*/*/nomatch'")
    assert time.monotonic() - start < 20  # a bound, not a speed target: see benchmarks/


def test_command_line_caps(policy: ShellPolicy) -> None:
    _refused(policy, "echo " + "x" * 70_000, "characters long")
    _refused(policy, " | ".join(["cat"] * 40), "at most 32 commands")
    _refused(policy, "; ".join(["true"] * 70), "at most 64 pipelines")

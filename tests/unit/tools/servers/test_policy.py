"""ShellPolicy: hostile commands are refused with a specific reason; ordinary ones are accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.servers.shell.policy import ShellPolicy

HOSTILE: list[tuple[str, str]] = [
    # writes outside the workspace: absolute, .., ~, symlinks, hard links
    ("rm -rf /", "write outside the workspace"),
    ("rm -rf ~", "write outside the workspace"),
    ("rm -rf ../..", "write outside the workspace"),
    ("rm -rf .", "would delete the workspace itself"),
    ("rm -rf $HOME", "would delete the workspace itself"),
    ("rm --no-preserve-root -rf notes.txt", "--no-preserve-root"),
    ("echo x > ../escape.txt", "write outside the workspace"),
    ("echo x > /etc/passwd", "write outside the workspace"),
    ("echo x >> demo/../../escape.txt", "write outside the workspace"),
    ("echo x > link_out/new.txt", "resolves to"),
    ("echo x > outlink.txt", "resolves to"),
    ("echo x >> hard.txt", "hard links"),
    ("ls 2> /tmp/errors.log", "write outside the workspace"),
    ("ls &> /tmp/all.log", "write outside the workspace"),
    ("touch link_out/new", "write outside the workspace"),
    ("cp notes.txt /tmp/elsewhere.txt", "write outside the workspace"),
    ("cp -t /etc notes.txt", "write outside the workspace"),
    ("mv ../outside/target.txt here.txt", "write outside the workspace"),
    ("ln -s /etc/passwd /tmp/link", "write outside the workspace"),
    ("ln /etc/passwd hardlink", "hard link"),
    ("chmod 777 /etc/passwd", "write outside the workspace"),
    ("chmod -w ../outside/target.txt", "write outside the workspace"),
    ("chown nobody ../outside/target.txt", "write outside the workspace"),
    ("mkdir /opt/evil", "write outside the workspace"),
    ("tee /etc/motd", "write outside the workspace"),
    ("truncate -s 0 /etc/hosts", "write outside the workspace"),
    ("install notes.txt /usr/local/bin/evil", "write outside the workspace"),
    ("dd if=/dev/zero of=/dev/sda", "write outside the workspace"),
    ("gzip /etc/hosts", "write outside the workspace"),
    ("cd /etc && cat passwd", "outside the workspace"),
    # sensitive reads
    ("cat /etc/shadow", "sensitive system path"),
    ("head -1 ~/.ssh/id_rsa", "sensitive"),
    ("cat /proc/1/environ", "environment"),
    ("cat /proc/self/environ", "environment"),
    ("grep KEY .env", "looks like a secret"),
    ("cat server.pem", "looks like a secret"),
    ("wc -l < /etc/gshadow", "sensitive system path"),
    ("ls /home/someone/.aws/credentials", "credentials directory"),
    # shell features we do not implement
    ("echo $(whoami)", "command substitution $(...)"),
    ("echo `whoami`", "backticks"),
    ("echo $OPENAI_API_KEY", "variable expansion $OPENAI_API_KEY"),
    ("echo ${PATH}", "variable expansion ${PATH}"),
    ("echo $((1+2))", "arithmetic expansion"),
    ("cat <(ls)", "process substitution"),
    ("sleep 10 &", "background jobs"),
    ("cat <<EOF", "here-document"),
    ("cat <<< hi", "here-string"),
    ("(cd / && ls)", "subshells"),
    ("{ ls; }", "shell keyword"),
    ("if true; then ls; fi", "shell keyword"),
    ("eval ls", "shell builtin"),
    ("exec ls", "shell builtin"),
    ("source x.sh", "shell builtin"),
    (". x.sh", "shell builtin"),
    ("export A=1", "shell builtin"),
    ("LD_PRELOAD=/tmp/x.so ls", "environment assignment LD_PRELOAD"),
    ("mkdir -p demo/{a,b}", "brace expansion"),
    ("ls ~root", "another user's home"),
    # per-command rules
    ("sort --compress-program=sh notes.txt", "--compress-program"),
    ("sort -o /etc/passwd notes.txt", "write outside the workspace"),
    ("find . -exec rm {} \\;", "find -exec"),
    ("find . -execdir sh -c id \\;", "find -execdir"),
    ("find . -ok rm {} \\;", "find -ok"),
    ("find . -okdir rm {} \\;", "find -okdir"),
    ("find / -name '*.log' -delete", "write outside the workspace"),
    ("find . -fprint /tmp/list", "find -fprint"),
    ("awk 'BEGIN{system(\"id\")}'", "calls system()"),
    ("awk '{print | \"sh\"}' notes.txt", "pipes to or from a command"),
    ('awk \'BEGIN{print "id" |& "sh"}\'', "coprocess"),
    ("awk '{print > \"/etc/x\"}' notes.txt", "redirects print output"),
    ("awk 'BEGIN{while ((getline l < \"/etc/shadow\") > 0) print l}'", "getline"),
    ("gawk -l filefuncs 'BEGIN{}'", "loads code from a library"),
    ("sed 'e id' notes.txt", "the e command"),
    ("sed 's/alpha/id/e' notes.txt", "the e flag"),
    ("sed -n 'w /etc/x' notes.txt", "the w command writes files"),
    ("sed 's/a/b/w /tmp/out' notes.txt", "the w command writes files"),
    ("sed -i 's/a/b/' /etc/hosts", "write outside the workspace"),
    ("tar --to-command=sh -xf a.tar", "--to-command"),
    ("tar -I sh -cf a.tar notes.txt", "tar -I"),
    ("tar --checkpoint=1 --checkpoint-action=exec=id -cf a.tar notes.txt", "--checkpoint-action"),
    ("tar --use-compress-program=sh -cf a.tar notes.txt", "--use-compress-program"),
    ("tar --rsh-command=/bin/sh -cf host:a.tar notes.txt", "--rsh-command"),
    ("tar -F sh -cf a.tar notes.txt", "tar -F"),
    ("tar -xf a.tar -C /etc", "write outside the workspace"),
    ("tar czf /tmp/a.tgz notes.txt", "write outside the workspace"),
    ("git -c core.pager=sh log", "git -c core.pager"),
    ("git -c core.sshCommand=sh fetch", "git -c core.sshCommand"),
    ("git --config-env=core.pager=X log", "--config-env"),
    ("git config core.hooksPath /tmp/hooks", "git config core.hooksPath"),
    ("git config alias.x '!sh'", "git config alias.x"),
    ("git -C /etc status", "must be inside the workspace"),
    ("git filter-branch --tree-filter id", "not allowed"),
    ("echo x > .git/hooks/pre-commit", "hook file"),
    ("echo '[core]' > .gitconfig", "hook file"),
    ("date -s '2020-01-01'", "clock"),
    ("hostname evil", "host name"),
    ("top", "top is interactive"),
    # wrappers do not escape the policy
    ("env LD_PRELOAD=/x.so ls", "setting LD_PRELOAD is refused"),
    ("env rm -rf /", "write outside the workspace"),
    ("env -S 'rm -rf /'", "env -S"),
    ("xargs rm", "come from stdin"),
    ("find . -name '*.txt' | xargs -I{} cp {} /etc", "come from stdin"),
    ("xargs sh -c id", "come from stdin"),
    ("nice rm /etc/passwd", "write outside the workspace"),
    ("nohup rm /etc/passwd", "write outside the workspace"),
    ("timeout 5 rm /etc/passwd", "write outside the workspace"),
    ("timeout -s KILL 5 bash -c id", "inline code"),
    ("stdbuf -oL rm /etc/passwd", "write outside the workspace"),
    ("time rm /etc/passwd", "write outside the workspace"),
    ("nice -n 5 env sudo id", "changes privileges"),
    ("setsid ls", "policy cannot check"),
    ("command ls", "shell builtin"),
    ("builtin echo x", "shell builtin"),
    ("sudo ls", "changes privileges"),
    ("su -c id", "changes privileges"),
    ("doas ls", "changes privileges"),
    ("chroot / ls", "changes privileges"),
    ("unshare -r sh", "changes privileges"),
    ("nsenter -t 1 sh", "changes privileges"),
    ("busybox rm -rf /", "policy cannot check"),
    ("ionice -c3 ls", "policy cannot check"),
    ("taskset 1 ls", "policy cannot check"),
    ("chrt 1 ls", "policy cannot check"),
    ("watch ls", "policy cannot check"),
    ("flock lockfile ls", "policy cannot check"),
    ("script -c id", "policy cannot check"),
    ("/bin/rm -rf /", "write outside the workspace"),
    ("/usr/bin/env rm -rf /", "write outside the workspace"),
    ("/tmp/evil/ls", "only programs from"),
    # interpreters
    ("python3 -c 'import os'", "inline code"),
    ("python -m http.server", "inline code"),
    ("perl -e 'print 1'", "inline code"),
    ("perl -ne 'print' notes.txt", "inline code"),
    ("bash -c id", "inline code"),
    ("sh -c id", "inline code"),
    ("node -e 1", "inline code"),
    ("ruby -e 1", "inline code"),
    ("python3", "stdin"),
    ("echo 'import os' | python3", "stdin"),
    ("python3 script.py", "needs a sandbox"),
    ("./run.sh", "needs a sandbox"),
    ("python3 ../outside/target.txt", "only scripts inside the workspace"),
    # interactive and network
    ("less notes.txt", "interactive"),
    ("more notes.txt", "interactive"),
    ("man ls", "interactive"),
    ("vi notes.txt", "interactive"),
    ("ssh host", "network"),
    ("scp notes.txt host:/tmp", "network"),
    ("curl http://example.com", "network"),
    ("wget http://example.com", "network"),
    ("nc -l 1234", "network"),
    # system administration and unknown commands
    ("mkfs.ext4 /dev/sda", "formats a file system"),
    ("mount /dev/sda /mnt", "system administration"),
    ("shutdown now", "system administration"),
    ("apt-get install foo", "package manager"),
    ("nosuchtool --flag", "not in the allowed list"),
]

ALLOWED: list[str] = [
    "echo 'hello' > demo/a.txt",
    "mkdir demo2 && echo hi > demo2/a.txt",
    "ls -la /usr/bin | sort -k5 -n | tail -3",
    "wc -l /etc/passwd",
    "find . -name '*.txt' | wc -l",
    "cat notes.txt | tail -n 1",
    "ls -la",
    "grep -rn alpha .",
    "sort -k2 -n notes.txt | uniq -c",
    "awk '$2 > 100 {print $1}' notes.txt",
    "sed -n '1,2p' notes.txt",
    "sed -i 's/alpha/ALPHA/' notes.txt",
    "find . -name '*.tmp' -delete",
    "tar -czf out.tgz notes.txt",
    "tar xzf out.tgz",
    "git status",
    "git log --oneline -5",
    "git -c user.name=bot commit -m msg",
    "cp /etc/hosts .",
    "head -c 100 /etc/os-release",
    "du -sh .",
    "df -h",
    "ps aux",
    "echo hi 2>&1 | tee out.txt",
    "LANG=C sort notes.txt",
    "cd demo && ls",
    "find . -name '*.txt' | xargs ls -l",
    "timeout 5 sleep 1",
    "env",
    "printenv PATH",
    "date +%Y",
    "uname -a",
    "cat $HOME/notes.txt",
    "ls *.txt",
    "echo 'a|b' | cut -d'|' -f1",
    "chmod +x notes.txt",
    "rm -f notes.txt",
    "echo /etc/shadow",
    "ls 2>/dev/null",
    "echo x >> log.txt; cat log.txt",
    "mkdir -p a/b/c && cd a/b/c && touch file",
    "/usr/bin/ls -l",
    "cat link_out/target.txt",
]


@pytest.fixture
def policy(workspace: Path) -> ShellPolicy:
    return ShellPolicy(ShellConfig(workspace=str(workspace)))


@pytest.mark.parametrize(("command", "reason"), HOSTILE, ids=[c for c, _ in HOSTILE])
def test_hostile_command_is_refused_with_reason(policy: ShellPolicy, command: str, reason: str) -> None:
    decision = policy.evaluate(command)
    assert not decision.allowed
    assert reason in decision.reason
    with pytest.raises(PolicyViolation, match=r".+"):
        policy.enforce(command)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_command_is_allowed(policy: ShellPolicy, command: str) -> None:
    decision = policy.evaluate(command)
    assert decision.allowed, decision.reason
    assert decision.line is not None and decision.line.pipelines


def test_table_sizes() -> None:
    assert len(HOSTILE) >= 40 and len(ALLOWED) >= 15


READONLY_REFUSED = [
    "echo x > a.txt",
    "touch a",
    "mkdir d",
    "rm notes.txt",
    "sed -i 's/a/b/' notes.txt",
    "sort -o out.txt notes.txt",
    "git commit -m x",
    "tee out.txt",
    "find . -delete",
    "cp notes.txt copy.txt",
]


@pytest.mark.parametrize("command", READONLY_REFUSED)
def test_readonly_mode_refuses_writes(workspace: Path, command: str) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(workspace), mode="readonly"))
    decision = policy.evaluate(command)
    assert not decision.allowed
    assert "readonly" in decision.reason


@pytest.mark.parametrize(
    "command", ["cat notes.txt | sort", "git status", "ls 2>/dev/null", "grep -c a notes.txt"]
)
def test_readonly_mode_allows_reads(workspace: Path, command: str) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(workspace), mode="readonly"))
    assert policy.evaluate(command).allowed


def test_sandbox_unlocks_scripts_and_xargs_writers(workspace: Path) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(workspace)), sandboxed=True)
    for command in (
        "python3 script.py",
        "./run.sh",
        "sh run.sh",
        "find . -name '*.tmp' | xargs rm",
        "find . -name '*.txt' | xargs grep -l alpha",
    ):
        assert policy.evaluate(command).allowed, command
    assert "inline code" in policy.evaluate("python3 -c 1").reason
    assert "outside" in policy.evaluate("python3 ../outside/target.txt").reason


def test_network_commands_follow_allow_network(workspace: Path) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(workspace), allow_network=True))
    assert policy.evaluate("curl -o page.html http://example.com").allowed
    assert "write outside the workspace" in policy.evaluate("curl -o /etc/x http://example.com").reason
    assert "-K/--config" in policy.evaluate("curl -K cfg http://example.com").reason
    assert "runs wgetrc commands" in policy.evaluate("wget -e x=y http://example.com").reason
    assert "runs a local command" in policy.evaluate("ssh -o ProxyCommand=id host").reason
    assert "runs a program" in policy.evaluate("nc -e /bin/sh host 1").reason


def test_cwd_must_be_inside_workspace(policy: ShellPolicy, workspace: Path) -> None:
    assert "outside the workspace" in policy.evaluate("ls", cwd="/etc").reason
    assert "outside the workspace" in policy.evaluate("ls", cwd="link_out").reason
    assert policy.evaluate("ls", cwd="demo").allowed
    assert policy.evaluate("ls", cwd=str(workspace / "demo")).allowed


def test_git_gets_safety_settings_injected(policy: ShellPolicy, workspace: Path) -> None:
    argv = policy.check_argv(["git", "status"], str(workspace))
    assert argv[0] == "git" and argv[-1] == "status"
    assert "core.hooksPath=/dev/null" in argv and "core.fsmonitor=false" in argv


def test_unrestricted_mode_has_no_policy(workspace: Path) -> None:
    policy = ShellPolicy(ShellConfig(workspace=str(workspace), mode="unrestricted"), sandboxed=True)
    assert policy.evaluate("echo $(id) > /tmp/x").allowed
    assert policy.sandboxed is False


def test_workspace_must_be_absolute() -> None:
    with pytest.raises(ConfigError, match=r"SHELL\.WORKSPACE"):
        ShellPolicy(ShellConfig(workspace="relative/dir"))

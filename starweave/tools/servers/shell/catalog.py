"""Which commands exist for the policy, and the rule each one gets.

Unknown commands are refused: a command runs only if it is listed here, either with a rule of its
own or in one of the simple families (read-only tools, argument-only tools). Refused families carry
their reason so the model learns what to do instead.
"""

from __future__ import annotations

import re

from starweave.tools.servers.shell.rulebook import Rule, generic_look, generic_read, no_paths, refuser
from starweave.tools.servers.shell.rules_archive import ARCHIVE_RULES
from starweave.tools.servers.shell.rules_files import FILE_RULES
from starweave.tools.servers.shell.rules_git import rule_git
from starweave.tools.servers.shell.rules_system import SYSTEM_RULES
from starweave.tools.servers.shell.rules_text import TEXT_RULES
from starweave.tools.servers.shell.rules_tools import INTERPRETER, TOOL_RULES, rule_interpreter

RULE_TABLES: tuple[dict[str, Rule], ...] = (
    FILE_RULES,
    ARCHIVE_RULES,
    TEXT_RULES,
    SYSTEM_RULES,
    TOOL_RULES,
    {"git": rule_git},
)

# Tools that only read the files named in their arguments (each argument that looks like a path is
# checked against the sensitive-file rules).
READ_ONLY = frozenset(
    {
        "cat",
        "head",
        "tail",
        "cut",
        "nl",
        "od",
        "hexdump",
        "cmp",
        "comm",
        "paste",
        "join",
        "column",
        "fold",
        "fmt",
        "expand",
        "unexpand",
        "rev",
        "tac",
        "strings",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "base64",
        "base32",
        "basenc",
        "pgrep",
        "pidof",
        "uname",
        "whoami",
        "who",
        "w",
        "nproc",
        "arch",
        "locale",
        "getconf",
        "lsb_release",
        "lsattr",
        "tsort",
        "pr",
        "look",
        "numfmt",
        "bc",
        "tty",
        "logname",
        "users",
        "pwd",
    }
)
# Tools that only look at metadata or system state: any file type may be named (ls /dev/null).
LOOK_ONLY = frozenset({"ls", "dir", "stat", "df", "namei", "getfacl", "whereis", "which"})
# System listings: known options; option values and operands that name files are read.
LISTINGS = frozenset(
    {
        "lsblk",
        "lscpu",
        "findmnt",
        "lsmod",
        "lspci",
        "lsusb",
        "netstat",
        "vmstat",
        "iostat",
        "mpstat",
        "free",
        "uptime",
    }
)
# Tools whose arguments are never opened as files.
NO_PATHS = frozenset(
    {
        "echo",
        "printf",
        "true",
        "false",
        "seq",
        "yes",
        "expr",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "test",
        "[",
        "printenv",
        "tr",
        "factor",
        "sleep",
        "id",
        "groups",
        "cal",
    }
)
# Commands xargs may run without a sandbox: whatever names arrive on stdin, they open no file.
XARGS_SAFE = LOOK_ONLY | NO_PATHS | frozenset({"du"})

SHELL_BUILTINS = {
    "export": "set variables in the command itself (LANG=C sort ...) or not at all",
    "set": "",
    "unset": "",
    "alias": "",
    "read": "",
    "declare": "",
    "local": "",
    "trap": "",
    "ulimit": "",
    "umask": "",
    "wait": "",
    "jobs": "",
    "fg": "",
    "bg": "",
    "history": "",
    "hash": "",
    "shopt": "",
    "pushd": "use cd",
    "popd": "use cd",
    "exit": "",
    "return": "",
    "let": "use expr",
    "readonly": "",
    "type": "use 'which NAME'",
    "command": "use 'which NAME'",
    "builtin": "",
    "source": "",
    ".": "",
    "eval": "",
    "exec": "",
}
REFUSED: dict[str, str] = {}


def _refuse_all(names: str, reason: str) -> None:
    for name in names.split():
        REFUSED[name] = reason


_refuse_all(
    "sudo su doas pkexec runuser chroot unshare nsenter setpriv capsh", "changes privileges or namespaces"
)
_refuse_all(
    "mount umount fdisk sfdisk parted mkswap swapon swapoff losetup shutdown reboot poweroff halt init "
    "telinit "
    "systemctl service insmod rmmod modprobe iptables ip6tables nft sysctl useradd userdel usermod groupadd "
    "groupdel passwd chpasswd crontab at batch chattr setcap kexec wipefs blkdiscard",
    "is a system administration command",
)
_refuse_all(
    "apt apt-get aptitude dpkg snap flatpak pip pip3 pipx npm npx yarn pnpm gem cargo conda",
    "is a package manager and modifies the system; ask the user to install software",
)
_refuse_all(
    "less more most pg man info vi vim nvim view vimdiff nano emacs ed ex pico joe mc htop btop screen tmux "
    "telnet ftp dc",
    "is interactive (or has a shell escape); use cat, head, tail or grep to read files",
)
_refuse_all(
    "setsid busybox toybox ionice taskset chrt watch flock script expect socat parallel",
    "runs other commands in a way the policy cannot check; run the command directly",
)
_refuse_all(
    "rsync",
    "is not supported (it runs remote shells and preserves modes and owners); use cp -r locally, or scp",
)
_refuse_all("find2perl ldd strace ltrace gdb", "can execute the program it inspects")
MKFS = re.compile(r"mkfs(\..+)?|mke2fs|mkdosfs")


def lookup_rule(name: str) -> Rule:
    """The rule for command ``name`` (a base name); a refusing rule when it is refused or unknown."""
    for table in RULE_TABLES:
        if name in table:
            return table[name]
    if name in READ_ONLY:
        return generic_read
    if name in LOOK_ONLY:
        return generic_look
    if name in LISTINGS:  # system listings (lsblk, findmnt ...): their path values are read
        return generic_read
    if name in NO_PATHS:
        return no_paths
    if name in SHELL_BUILTINS:
        hint = SHELL_BUILTINS[name]
        return refuser(f"is a shell builtin; commands run without a shell{'; ' + hint if hint else ''}")
    if name in REFUSED:
        return refuser(REFUSED[name])
    if MKFS.fullmatch(name):
        return refuser("formats a file system")
    if INTERPRETER.fullmatch(name):
        return rule_interpreter
    return refuser(
        "is not in the allowed list of commands; use a common tool (ls, cat, grep, find, sort, ...) "
        "or ask the user to allow it"
    )


def catalogued(name: str) -> bool:
    """Whether the policy has a verdict of its own on command ``name`` (allowed, refused, a builtin or an
    interpreter), i.e. whether it is a command-line program rather than an unknown (GUI) application."""
    return (
        any(name in table for table in RULE_TABLES)
        or name in SHELL_BUILTINS
        or name in REFUSED
        or name in READ_ONLY
        or name in LOOK_ONLY
        or name in LISTINGS
        or name in NO_PATHS
        or MKFS.fullmatch(name) is not None
        or INTERPRETER.fullmatch(name) is not None
    )

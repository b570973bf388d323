"""The git rule: a closed configuration, known subcommands and options, and repositories checked.

Every git command gets ``-c`` settings that switch off what could run a program (hooks, fsmonitor,
pager, editor, credential helpers, the ext:: transport, implicit bare repositories); the sandbox adds
``GIT_CONFIG_NOSYSTEM`` and ``GIT_CONFIG_GLOBAL=/dev/null``. Options are parsed with the
subcommand's own table (git accepts unique abbreviations: ``git grep --open`` is
``--open-files-in-pager``). A repository inside the workspace must have a config that runs nothing
(:mod:`gitconfig`); one outside it may be read but not changed.
"""

from __future__ import annotations

import os
import re

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.gitconfig import check_repository, find_git_dir
from starweave.tools.servers.shell.optables_git import GIT, GIT_SUBCOMMANDS, REV_STYLE
from starweave.tools.servers.shell.options import Args, parse_options, resolve_long
from starweave.tools.servers.shell.rulebook import RuleContext, check_reads, refuse

GIT_READ = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "grep",
        "describe",
        "shortlog",
        "cat-file",
        "reflog",
        "version",
        "count-objects",
        "whatchanged",
        "name-rev",
        "for-each-ref",
        "show-ref",
        "rev-list",
        "merge-base",
        "var",
        "check-ignore",
    ]
)
GIT_WRITE = frozenset(
    [
        "init",
        "add",
        "commit",
        "checkout",
        "switch",
        "restore",
        "reset",
        "rm",
        "mv",
        "stash",
        "merge",
        "cherry-pick",
        "revert",
        "branch",
        "tag",
        "clean",
        "apply",
        "notes",
        "rebase",
        "config",
        "remote",
        "format-patch",
        "archive",
        "bundle",
        "gc",
        "prune",
        "worktree",
        "mktree",
        "update-index",
    ]
)
GIT_NETWORK = frozenset({"clone", "fetch", "pull", "push", "ls-remote"})
# Subcommands that can put links (or anything from the repository) into the work tree.
GIT_RELINKS = frozenset(
    [
        "checkout",
        "switch",
        "restore",
        "reset",
        "stash",
        "merge",
        "cherry-pick",
        "revert",
        "rebase",
        "pull",
        "clone",
        "worktree",
        "apply",
        "mv",
    ]
)
# Settings a command line may pass with -c or write with git config: none of them runs a program.
GIT_SAFE_KEY = re.compile(
    r"(user\.(name|email)|color\.[a-z.]+|core\.quotepath|core\.autocrlf|init\.defaultbranch|advice\.[a-z]+"
    r"|log\.(abbrevcommit|date|decorate|follow|showroot)|pull\.rebase|push\.default|merge\.ff"
    r"|safe\.directory|diff\.renames"
    r"|status\.[a-z]+|branch\.[^.]+\.(remote|merge)|remote\.[^.]+\.(url|fetch))",
    re.IGNORECASE,
)
GIT_SAFETY = [
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.pager=cat"),
    *("-c", "core.editor=false"),
    *("-c", "sequence.editor=false"),
    *("-c", "credential.helper="),
    *("-c", "protocol.ext.allow=never"),
    *("-c", "safe.bareRepository=explicit"),
]
# Options that run a program, sign (gpg), open an editor or need a terminal: (why, the subcommands
# where the option means that, or None for every subcommand).
ALL = None
GIT_REFUSED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "--open-files-in-pager": ("runs a pager program", ALL),
    "-O": ("runs a pager program", ("grep",)),
    "--upload-pack": ("runs a program", ALL),
    "--receive-pack": ("runs a program", ALL),
    "--exec": ("runs a program", ALL),
    "-x": ("runs a command", ("rebase",)),
    "--ext-diff": ("runs an external diff program", ALL),
    "--textconv": ("runs text conversion programs", ALL),
    "--show-signature": ("runs gpg", ALL),
    "-S": ("signs with gpg", ("commit", "merge", "rebase", "cherry-pick", "revert", "pull", "tag")),
    "--gpg-sign": ("signs with gpg", ALL),
    "-s": ("signs with gpg", ("tag",)),
    "--sign": ("signs with gpg", ALL),
    "-u": ("signs with gpg", ("tag",)),
    "--local-user": ("signs with gpg", ALL),
    "--template": ("copies hooks from a template folder", ("init", "clone")),
    "--unsafe-paths": ("writes outside the repository", ALL),
    "-e": ("opens an editor", ("commit", "config", "merge", "tag", "notes", "revert", "cherry-pick", "add")),
    "--edit": (
        "opens an editor",
        ("commit", "config", "merge", "tag", "notes", "revert", "cherry-pick", "add"),
    ),
    "-i": ("needs a terminal", ("rebase", "add", "clean")),
    "--interactive": ("needs a terminal", ("rebase", "add", "commit", "clean")),
    "-p": ("needs a terminal", ("add", "commit", "stash", "checkout", "restore", "reset")),
    "--patch": ("needs a terminal", ("add", "commit", "stash", "checkout", "restore", "reset")),
    "--global": ("changes the user's git configuration", ALL),
    "--system": ("changes the system's git configuration", ALL),
    "-f": ("reads or writes another config file", ("config",)),
    "--file": ("reads or writes another config file", ("config",)),
    "--blob": ("reads config from a blob", ALL),
    "--remote": ("asks another server to run an archiver", ("archive",)),
}
REV_DANGEROUS = ("output", "ext-diff", "textconv", "show-signature", "output-directory", "exec")
STRATEGIES = frozenset({"ort", "recursive", "resolve", "octopus", "ours", "subtree"})


def _git_key(setting: str, how: str) -> None:
    key = setting.split("=", 1)[0]
    if not GIT_SAFE_KEY.fullmatch(key):
        refuse(
            f"git {how} {key} is refused: only settings that run no program may be set "
            "(user.name, user.email, color.*, init.defaultBranch, ...); core.pager, core.sshCommand, "
            "core.hooksPath, alias.*, filters and the like could execute commands"
        )


def rule_git(argv: list[str], ctx: RuleContext) -> list[str]:
    """git: safe -c settings only; read subcommands always, writes in workspace mode and only in
    repositories inside the workspace, network ones need ALLOW_NETWORK; options that name a
    program to run are refused."""
    top = parse_options("git", argv[1:], GIT)
    where = ctx.cwd
    for name, value in top.opts:
        if name == "-c" and value is not None:
            _git_key(value, "-c")
        elif name == "-C" and value is not None:
            where = ctx.guard.resolve(value, where)
            if not ctx.guard.in_workspace(where):
                refuse(f"git -C {value}: the repository must be inside the workspace")
        elif (
            name in ("--git-dir", "--work-tree")
            and value is not None
            and not ctx.guard.in_workspace(ctx.guard.resolve(value, where))
        ):
            refuse(f"git {name} {value}: the repository must be inside the workspace")
    if not top.pos:
        return argv
    sub, rest = top.pos[0], top.pos[1:]
    if sub in GIT_NETWORK or (sub == "remote" and rest[:1] == ["update"]):
        ctx.need_network(f"git {sub}")
    elif sub not in GIT_READ and sub not in GIT_WRITE:
        refuse(f"git {sub} is not allowed (allowed: {', '.join(sorted(GIT_READ | GIT_WRITE | GIT_NETWORK))})")
    args = _sub_options(sub, rest, ctx)
    readonly_ok = _reads_only(sub, args)
    if ctx.mode == "readonly" and not readonly_ok:
        refuse(f"SHELL.MODE is readonly: git {sub} may change the repository")
    _sub_checks(sub, args, ctx, where)
    fixing_config = sub == "config" and args.has("--unset", "--unset-all", "--remove-section")
    if sub not in ("init", "clone", "version") and not fixing_config:
        _check_repo(sub, top, where, readonly_ok, ctx)
    if sub in GIT_RELINKS:
        ctx.relinks(f"git {sub} writes files (and links) from the repository")
    return [argv[0], *GIT_SAFETY, *argv[1:]]


def _sub_options(sub: str, rest: list[str], ctx: RuleContext) -> Args:
    spec = GIT_SUBCOMMANDS[sub]
    if sub not in REV_STYLE:
        return parse_options(f"git {sub}", rest, spec)
    # Revision and diff options are matched by exact name by git; the subcommand's own options
    # (in the table) may be abbreviated. Unknown ones pass, unless they name a dangerous option.
    out = Args()
    for i, word in enumerate(rest):
        if word == "--":
            out.add_pos(rest[i + 1 :])
            break
        if not word.startswith("-") or word == "-":
            out.add_pos([word])
            continue
        name, eq, value = word.partition("=")
        if name.startswith("--"):
            bare = name[2:]
            full = resolve_long(f"git {sub}", spec, name[2:])
            for bad in REV_DANGEROUS:
                if len(bare) < 3 or not bad.startswith(bare) or full is not None:
                    continue
                if bad in ("output", "output-directory") and bare == bad and eq:
                    ctx.write(value)
                    break
                if bare == bad:
                    refuse(f"git {sub} {name} is refused: it runs an external program")
                refuse(
                    f"git {sub} {name} is refused: write --{bad} in full (abbreviations of it are refused)"
                )
            out.add_opt(f"--{full}" if full else name, value if eq else None)
        elif word.startswith("-O"):
            check_reads([word[2:]], ctx)
        else:
            out.add_opt(word[:2], word[2:] or None)
    return out


def _reads_only(sub: str, args: Args) -> bool:
    if sub in GIT_READ:
        return True
    if sub == "config":
        return args.has("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color")
    if sub == "stash":
        return args.pos[:1] in (["list"], ["show"])
    if sub == "remote":
        return not args.pos or args.pos[0] in ("show", "get-url")
    if sub in ("branch", "tag"):
        return not args.pos and not args.has(
            "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy", "-a", "-f", "--force"
        )
    return False


def _sub_checks(sub: str, args: Args, ctx: RuleContext, where: str) -> None:
    for name, _ in args.opts:
        why, where_refused = GIT_REFUSED.get(name, ("", ()))
        if sub == "stash" and args.pos[:1] == ["show"] and name in ("-p", "--patch"):
            continue  # stash show -p prints a diff
        if why and (where_refused is None or sub in where_refused):
            refuse(f"git {sub} {name} is refused: it {why}")
    for strategy in args.values("-s", "--strategy"):
        if sub != "tag" and strategy not in STRATEGIES:
            refuse(
                f"git {sub} --strategy {strategy}: only built-in strategies ({', '.join(sorted(STRATEGIES))})"
            )
    for out in args.values("-o", "--output", "--output-directory", "--separate-git-dir"):
        if sub in ("format-patch", "archive", "clone"):
            ctx.write(out)
    check_reads(args.values("-F", "--file", "-t", "--template", "--pathspec-from-file", "--contents"), ctx)
    for setting in args.values("-c", "--config"):
        if sub == "clone":
            _git_key(setting, "clone --config")
    fixing = args.has("--unset", "--unset-all", "--remove-section")
    if sub == "config" and not _reads_only(sub, args) and args.pos and not fixing:
        _git_key(args.pos[0], "config")
    if sub == "init":
        ctx.write(os.path.join(where, args.pos[0]) if args.pos else where)
        for sep in args.values("--separate-git-dir"):
            ctx.write(os.path.join(where, sep))
    if sub == "clone":
        targets = args.pos
        ctx.write(os.path.join(where, targets[1]) if len(targets) > 1 else where)
    if sub == "worktree" and args.pos[:1] in (["add"], ["move"]) and len(args.pos) > 1:
        ctx.write(os.path.join(where, args.pos[-1] if args.pos[0] == "move" else args.pos[1]))
    if sub == "bundle" and args.pos[:1] == ["create"] and len(args.pos) > 1:
        ctx.write(os.path.join(where, args.pos[1]))
    if sub == "grep" and args.has("--no-index"):
        for p in args.pos[1:] or ["."]:
            ctx.recursive(os.path.join(where, p), "git grep --no-index")
        return
    check_reads([os.path.join(where, p) if "/" in p or p.startswith(".") else p for p in args.pos], ctx)


def _check_repo(sub: str, top: Args, where: str, readonly_ok: bool, ctx: RuleContext) -> None:
    explicit = top.values("--git-dir")
    try:
        git_dir = ctx.guard.resolve(explicit[-1], where) if explicit else find_git_dir(where, ctx.guard)
        if git_dir is None:
            return  # git itself says "not a git repository"
        if not ctx.guard.in_workspace(git_dir):
            if not readonly_ok and not ctx.upfront:  # an earlier "git init" may make one here
                refuse(
                    f"git {sub}: the repository at {os.path.dirname(git_dir)} is outside the workspace and "
                    "may only be read; run git init (or git clone) inside the workspace"
                )
            return
        check_repository(git_dir, ctx.guard)
    except OSError as exc:
        raise PolicyViolation(f"git: the repository could not be checked: {exc}") from exc

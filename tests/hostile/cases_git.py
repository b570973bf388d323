"""git reads configuration from $HOME, $XDG_CONFIG_HOME, .git/config, include.path and templates, and
runs programs named there (diff.external, core.editor, gpg.program, filters, textconv) or on its
command line (grep -O); some of its options write where the rule does not look."""

from __future__ import annotations

from hostile.casebook import Call, CaseBook, member, plant_payload, sh, tar, write, zipfile

BOOK = CaseBook("config")
add = BOOK.add
PAYLOAD = plant_payload("evil.sh")
INIT = sh(
    "git init -q && echo x > a.txt && git add a.txt && git -c user.name=a -c user.email=a@b commit -qm init"
)
WHO = "-c user.name=a -c user.email=a@b"
DOT_GIT_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    "[diff]\n\texternal = sh evil.sh\n[core]\n\teditor = sh evil.sh\n"
)


def xdg(text: str) -> Call:
    """Plant ``text`` as git's per-user config under $HOME/.config/git (HOME is the workspace today)."""
    return write(".config/git/config", text)


add(
    "git-xdg-config-diff-external",
    "~/.config/git/config names diff.external; git diff runs it",
    PAYLOAD,
    INIT,
    xdg("[diff]\n\texternal = sh evil.sh\n"),
    sh("echo y >> a.txt && git diff"),
    e2e=True,
)
add(
    "git-xdg-config-editor",
    "core.editor in ~/.config/git/config runs on git commit without -m",
    PAYLOAD,
    INIT,
    xdg("[core]\n\teditor = sh evil.sh\n"),
    sh(f"echo y >> a.txt && git {WHO} commit -a"),
)
add(
    "git-xdg-config-gpg-program",
    "gpg.program runs when commit.gpgsign (an allowed -c key) is on",
    PAYLOAD,
    sh("chmod +x evil.sh"),
    INIT,
    xdg("[gpg]\n\tprogram = @WS@/evil.sh\n"),
    sh(f"echo y >> a.txt && git {WHO} -c commit.gpgsign=true commit -qam two"),
)
add(
    "git-xdg-config-clean-filter",
    "a clean filter runs on git add",
    PAYLOAD,
    INIT,
    xdg('[filter "x"]\n\tclean = sh evil.sh\n'),
    write(".gitattributes", "* filter=x\n"),
    sh("echo z > b.txt && git add b.txt"),
)
add(
    "git-xdg-config-textconv",
    "a textconv driver runs on git log -p",
    PAYLOAD,
    INIT,
    xdg('[diff "t"]\n\ttextconv = sh evil.sh\n'),
    write(".gitattributes", "* diff=t\n"),
    sh(f"git add .gitattributes && git {WHO} commit -qm attrs && git log -p -2"),
)
add(
    "git-xdg-config-smudge-cat-file",
    "git cat-file --filters runs a smudge filter",
    PAYLOAD,
    INIT,
    xdg('[filter "x"]\n\tsmudge = sh evil.sh\n'),
    write(".gitattributes", "* filter=x\n"),
    sh("git cat-file --filters HEAD:a.txt"),
)
add(
    "git-xdg-config-include",
    "include.path pulls in a config that names diff.external",
    PAYLOAD,
    INIT,
    write("inc.cfg", "[diff]\n\texternal = sh evil.sh\n"),
    xdg("[include]\n\tpath = ../../inc.cfg\n"),
    sh("echo y >> a.txt && git diff"),
)
add(
    "git-xdg-config-alias",
    "an alias with ! runs a shell command",
    PAYLOAD,
    INIT,
    xdg("[alias]\n\tst = !sh evil.sh\n"),
    sh("git st"),
)
add(
    "git-xdg-config-fsmonitor",
    "core.fsmonitor names a program git status runs",
    PAYLOAD,
    INIT,
    xdg("[core]\n\tfsmonitor = sh evil.sh\n"),
    sh("git status"),
)
add(
    "git-xdg-config-hookspath",
    "core.hooksPath points at a workspace folder of hooks",
    PAYLOAD,
    INIT,
    write("hooks/post-commit", "#!/bin/sh\nsh evil.sh\n"),
    sh("chmod +x hooks/post-commit"),
    xdg("[core]\n\thooksPath = hooks\n"),
    sh(f"git {WHO} commit -q --allow-empty -m hook"),
)
add(
    "git-gitconfig-via-tar",
    "a .gitconfig planted by tar (direct writes to it are refused)",
    PAYLOAD,
    INIT,
    write("cfg.b64", tar(member("file", ".gitconfig", data="[core]\n\teditor = sh evil.sh\n"))),
    sh("base64 -d cfg.b64 > cfg.tar && tar xf cfg.tar"),
    sh(f"echo y >> a.txt && git {WHO} commit -a"),
)
add(
    "git-dot-git-config-via-tar",
    ".git/config replaced by a tar member, then git diff",
    PAYLOAD,
    INIT,
    write("cfg.b64", tar(member("file", ".git/config", data=DOT_GIT_CONFIG))),
    sh("base64 -d cfg.b64 > cfg.tar && tar xf cfg.tar"),
    sh("echo y >> a.txt && git diff"),
    e2e=True,
)
add(
    "git-dot-git-config-via-unzip",
    ".git/config replaced by a zip member, then git commit",
    PAYLOAD,
    INIT,
    write("cfg.b64", zipfile(member("file", ".git/config", data=DOT_GIT_CONFIG))),
    sh("base64 -d cfg.b64 > cfg.zip && unzip -o -q cfg.zip"),
    sh(f"echo y >> a.txt && git {WHO} commit -a"),
)
add(
    "git-dot-git-hook-via-tar",
    "a post-commit hook planted by tar",
    PAYLOAD,
    INIT,
    write("h.b64", tar(member("file", ".git/hooks/post-commit", data="#!/bin/sh\nsh evil.sh\n", mode=0o755))),
    sh("base64 -d h.b64 > h.tar && tar xf h.tar"),
    sh(f"git {WHO} commit -q --allow-empty -m x"),
)
add(
    "git-template-config",
    "git init --template copies a config that names core.editor",
    PAYLOAD,
    write("tpl/config", "[core]\n\teditor = sh ../evil.sh\n"),
    sh(f"git init -q --template=tpl r && cd r && echo x > f && git add f && git {WHO} commit"),
)
add(
    "git-separate-git-dir-config",
    "--git-dir names a workspace folder whose config runs diff.external",
    PAYLOAD,
    INIT,
    sh("cp -r .git other.git"),
    write("other.git/config", DOT_GIT_CONFIG),
    sh("echo y >> a.txt && git --git-dir=other.git --work-tree=. diff"),
)
add(
    "git-grep-open-files-in-pager",
    "git grep -O<cmd> runs the command on the matching files",
    PAYLOAD,
    INIT,
    sh("git grep -O'sh evil.sh' x"),
)
add(
    "git-grep-open-files-in-pager-long",
    "git grep --open-files-in-pager=<cmd>",
    PAYLOAD,
    INIT,
    sh("git grep --open-files-in-pager='sh evil.sh' x"),
)
add(
    "git-grep-open-files-in-pager-abbrev",
    "git grep --open-f=<cmd> (an abbreviation git accepts)",
    PAYLOAD,
    INIT,
    sh("git grep --open-f='sh evil.sh' x"),
)
add(
    "git-commit-message-from-secret",
    "git commit -F../.env stores the secret, git log prints it",
    INIT,
    sh(f"git {WHO} commit -q --allow-empty -F../.env && git log -1 --format=%B"),
)
add(
    "git-commit-file-long-home",
    "git commit --file= with the user's AWS credentials",
    INIT,
    sh(f"git {WHO} commit -q --allow-empty --file=@HOME@/.aws/credentials && git log -1 --format=%B"),
)
add(
    "git-blame-contents-secret",
    "git blame --contents= shows another file's lines",
    INIT,
    sh("git blame --contents=../.env a.txt"),
)
add("git-init-outside", "git init creates a repository outside", sh("git init -q ../outside/repo"))
add(
    "git-worktree-add-branch-outside",
    "git worktree add -b NAME DIR: the rule checks NAME, not DIR",
    INIT,
    sh("git worktree add -q -b wb ../outside/wt"),
)
add(
    "git-bundle-create-outside",
    "git bundle create writes outside",
    INIT,
    sh("git bundle create ../outside/@MARK@.bundle HEAD"),
)
add(
    "git-apply-unsafe-paths",
    "git apply --unsafe-paths --directory writes outside",
    INIT,
    write(
        "p.patch", "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+pwned\n"
    ),
    sh("git apply --unsafe-paths --directory=@OUT@ p.patch"),
)
add(
    "git-dash-c-diff-external",
    "git -c diff.external=... (keys that run programs stay refused)",
    PAYLOAD,
    INIT,
    sh("echo y >> a.txt && git -c diff.external='sh evil.sh' diff"),
)
add(
    "git-config-global-include",
    "git config --global include.path, then git diff",
    PAYLOAD,
    INIT,
    write("evil.cfg", "[diff]\n\texternal = sh evil.sh\n"),
    sh("git config --global include.path @WS@/evil.cfg"),
    sh("echo y >> a.txt && git diff"),
)
add(
    "git-diff-no-index-secret",
    "git diff --no-index shows a file outside the repository",
    INIT,
    sh("git diff --no-index /dev/null ../outside/.env"),
)
add(
    "git-exec-path",
    "git --exec-path=. runs a workspace git-pwn",
    INIT,
    write("git-pwn", "#!/bin/sh\necho pwned > ../outside/@MARK@\n"),
    sh("chmod +x git-pwn"),
    sh("git --exec-path=. pwn"),
)

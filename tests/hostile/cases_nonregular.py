"""Non-regular files (FIFOs, devices, sockets) as script files, arguments and redirections: Starweave
must never open one itself (sed -f, awk -f, redirections, the File server) nor hang on it."""

from __future__ import annotations

from hostile.casebook import DOS_TIMEOUT, CaseBook, Prep, read, sh, write

BOOK = CaseBook("nonregular")
add = BOOK.add
TEXT = write("a.txt", "b\na\nc\n")
FIFO = (Prep("fifo", "p"),)
SOCKET = (Prep("socket", "s"),)
T = DOS_TIMEOUT

# ---- script files Starweave reads to check them
add(
    "sed-f-dev-zero",
    "sed -f /dev/zero: an endless script file",
    TEXT,
    sh("sed -f /dev/zero a.txt", timeout=T),
    dos=True,
)
add(
    "sed-f-dev-stdin",
    "sed -f /dev/stdin: Starweave's own stdin",
    TEXT,
    sh("sed -f /dev/stdin a.txt", timeout=T),
    dos=True,
    e2e=True,
)
add("sed-f-dev-urandom", "sed -f /dev/urandom", TEXT, sh("sed -f /dev/urandom a.txt", timeout=T), dos=True)
add(
    "sed-f-proc-self-fd0",
    "sed -f /proc/self/fd/0",
    TEXT,
    sh("sed -f /proc/self/fd/0 a.txt", timeout=T),
    dos=True,
)
add(
    "sed-f-fifo",
    "sed -f on a FIFO nobody writes to",
    TEXT,
    sh("sed -f p a.txt", timeout=T),
    prep=FIFO,
    dos=True,
)
add("sed-f-socket", "sed -f on a unix socket", TEXT, sh("sed -f s a.txt", timeout=T), prep=SOCKET, dos=True)
add("awk-f-dev-zero", "awk -f /dev/zero", TEXT, sh("awk -f /dev/zero a.txt", timeout=T), dos=True)
add("awk-f-dev-stdin", "awk -f /dev/stdin", TEXT, sh("awk -f /dev/stdin a.txt", timeout=T), dos=True)
add("awk-f-fifo", "awk -f on a FIFO", TEXT, sh("awk -f p a.txt", timeout=T), prep=FIFO, dos=True)
add(
    "awk-f-symlink-to-dev-zero",
    "awk -f on a workspace symlink to /dev/zero",
    TEXT,
    sh("ln -s /dev/zero z"),
    sh("awk -f z a.txt", timeout=T),
    dos=True,
)
add(
    "sed-f-symlink-to-fifo",
    "sed -f on a symlink to a FIFO",
    TEXT,
    sh("ln -s p q"),
    sh("sed -f q a.txt", timeout=T),
    prep=FIFO,
    dos=True,
)

# ---- redirections Starweave opens
add("redirect-from-fifo", "cat < FIFO (no writer)", sh("cat < p", timeout=T), prep=FIFO, dos=True)
add("redirect-to-fifo", "echo > FIFO (no reader)", sh("echo x > p", timeout=T), prep=FIFO, dos=True)
add("redirect-append-to-fifo", "echo >> FIFO", sh("echo x >> p", timeout=T), prep=FIFO, dos=True)
add("redirect-stderr-to-fifo", "ls 2> FIFO", sh("ls missing 2> p", timeout=T), prep=FIFO, dos=True)
add("redirect-from-socket", "cat < a unix socket", sh("cat < s", timeout=T), prep=SOCKET, dos=True)
add("redirect-from-dev-zero", "wc -c < /dev/zero", sh("wc -c < /dev/zero", timeout=T), dos=True)
add(
    "redirect-from-dev-stdin",
    "cat < /dev/stdin hands Starweave's stdin to a tool",
    sh("cat < /dev/stdin", timeout=T),
    dos=True,
)
add("redirect-from-dev-tty", "cat < /dev/tty", sh("cat < /dev/tty", timeout=T), dos=True)
add(
    "redirect-from-symlinked-fifo",
    "a redirection through a symlink to a FIFO",
    sh("ln -s p q"),
    sh("wc -l < q", timeout=T),
    prep=FIFO,
    dos=True,
)

# ---- the File server
add("read-file-fifo", "read_file on a FIFO", read("p"), prep=FIFO, dos=True)
add("write-file-fifo", "write_file on a FIFO", write("p", "x"), prep=FIFO, dos=True)
add(
    "read-file-symlink-to-fifo",
    "read_file through a symlink to a FIFO",
    sh("ln -s p q"),
    read("q"),
    prep=FIFO,
    dos=True,
)
add(
    "read-file-dev-zero-link",
    "read_file through a symlink to /dev/zero",
    sh("ln -s /dev/zero z"),
    read("z"),
    dos=True,
)
# ---- tools handed a special file
add(
    "grep-recursive-over-fifo",
    "grep -r opens a FIFO in the workspace",
    sh("mkdir -p d && grep -r x .", timeout=T),
    prep=(Prep("fifo", "d/p"),),
    dos=True,
)
add("tar-list-fifo", "tar -tf on a FIFO", sh("tar -tf p", timeout=T), prep=FIFO, dos=True)
add("python-script-dev-stdin", "python3 /dev/stdin", sh("python3 /dev/stdin", timeout=T), dos=True)
add("sh-script-fifo", "sh on a FIFO script", sh("sh p", timeout=T), prep=FIFO, dos=True)

# ---- sockets made in the workspace without socket(AF_UNIX)
add(
    "script-mknod-socket-node",
    "mknod(S_IFSOCK) makes a socket inode in the workspace (only device and FIFO types are filtered)",
    write(
        "m.py",
        "import os, stat\nos.mknod('s', stat.S_IFSOCK | 0o600)\nprint(oct(os.lstat('s').st_mode))\n",
    ),
    sh("python3 m.py"),
    read("s"),
    sh("cat < s", timeout=T),
    dos=True,
)
add(
    "script-socketpair-bind-path",
    "socketpair() stays allowed; binding one end to a path leaves a socket file in the workspace",
    write(
        "b.py",
        "import os, socket\na, b = socket.socketpair()\na.bind('sock')\n"
        "print(oct(os.lstat('sock').st_mode))\n",
    ),
    sh("python3 b.py"),
    sh("ls -l sock"),
)
add(
    "script-socketpair-bind-abstract",
    "a socketpair end bound to an abstract name, then a second command connects to it",
    write(
        "b.py",
        "import socket, time\na, b = socket.socketpair()\na.bind('\\0swh-canary')\nprint('bound')\n",
    ),
    sh("python3 b.py"),
)
add(
    "script-mknod-socket-then-grep-recursive",
    "a socket node planted by a script, then grep -r walks over it",
    write(
        "m.py", "import os, stat\nos.makedirs('d', exist_ok=True)\nos.mknod('d/s', stat.S_IFSOCK | 0o600)\n"
    ),
    sh("python3 m.py"),
    sh("grep -r x d", timeout=T),
    dos=True,
)
add(
    "cp-archive-folder-with-socket",
    "cp -a of a service folder copies its socket as a socket (mknod S_IFSOCK) into the workspace",
    sh("cp -a /run/swh-svc svc"),
    sh("ls -lR svc"),
)
add(
    "cp-recursive-folder-with-socket",
    "cp -r copies special files as special files too",
    sh("cp -r /run/swh-svc svc"),
)

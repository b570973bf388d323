"""Denial of service: glob bombs and checks that Starweave runs itself, endless inputs, huge outputs
and files, memory and process bombs, very long command lines, and programs that never end. Each call
must end within its deadline while another device's command completes meanwhile."""

from __future__ import annotations

from hostile.casebook import DOS_TIMEOUT, Archive, CaseBook, behind, ls, member, read, sh, write

BOOK = CaseBook("dos")
T = DOS_TIMEOUT
TEXT = write("a.txt", "b\na\nc\n")


def add(name: str, attack: str, *calls: object, **kw: object) -> None:
    """Every case of this family is a denial-of-service case."""
    BOOK.add(name, attack, *calls, dos=True, **kw)  # type: ignore[arg-type]


# ---- work Starweave does itself before the command starts
add("glob-bomb-root", "echo /*/*/*/*/*/*/*/*", sh("echo /*/*/*/*/*/*/*/*", timeout=T), e2e=True)
add(
    "glob-bomb-no-match",
    "a deep glob that matches nothing still walks everything",
    sh("ls -d /*/*/*/*/*/*/*/nomatch", timeout=T),
)
add("glob-bomb-proc", "/proc/*/*/*/*", sh("echo /proc/*/*/*/*", timeout=T))
add("glob-bomb-sys", "/sys/*/*/*/*/*/*/* (symlink loops)", sh("echo /sys/*/*/*/*/*/*/*", timeout=T))
add("glob-bomb-relative", "../../../*/*/*/*/*/*", sh("echo ../../../*/*/*/*/*/*", timeout=T))
add(
    "glob-bomb-classes",
    "/[a-z]*/[a-z]*/... with bracket classes",
    sh("echo /[a-z]*/[a-z]*/[a-z]*/[a-z]*/[a-z]*/[a-z]*", timeout=T),
)
add("glob-bomb-question-marks", "/?*/?*/?*/?*/?*/?*/?*", sh("echo /?*/?*/?*/?*/?*/?*/?*", timeout=T))
add(
    "glob-bomb-in-redirect",
    "a glob bomb as a redirection target",
    sh("cat < /*/*/*/*/*/*/nomatch", timeout=T),
)
add("glob-bomb-in-cd", "a glob bomb as cd's directory", sh("cd /*/*/*/*/*/*/nomatch && ls", timeout=T))
add(
    "glob-bomb-many-words",
    "fifty words that each expand to thousands of paths",
    sh("ls -d " + " ".join(["/*/*/*"] * 50), timeout=T),
)
add(
    "awk-screen-quadratic",
    "an awk program that makes a regex screen quadratic",
    sh("awk 'BEGIN{" + "print " * 20000 + "}'", timeout=T),
)
add("long-command-line", "400 KB of words", sh("echo " + "a " * 200000, timeout=T))
add("long-single-word", "one 2 MB word", sh("echo " + "a" * 2_000_000, timeout=T))
add("many-quotes", "100,000 quoted fragments", sh("echo " + "'a'" * 100000, timeout=T))
add("many-pipeline-stages", "a pipeline of 300 stages", TEXT, sh("cat a.txt" + " | cat" * 300, timeout=T))
add("many-redirections", "5,000 redirections in one command", sh("echo x" + " > f" * 5000, timeout=T))
add("many-commands", "10,000 commands joined by ;", sh("true" + " ; true" * 10000, timeout=T))

# ---- commands that never end or never stop writing
add("sleep-past-timeout", "sleep longer than the timeout", sh("sleep 100", timeout=T))
add("tail-follow", "tail -f never ends", sh("tail -f /dev/null", timeout=T))
add("yes-to-output", "yes floods the output", sh("yes", timeout=T))
add("seq-huge-output", "seq prints a hundred million lines", sh("seq 1 100000000", timeout=T))
add("cat-zero-pipe", "cat /dev/zero | wc -c keeps both cores busy", sh("cat /dev/zero | wc -c", timeout=T))
add("find-whole-file-system", "find / walks everything", sh("find / -name nothing-here", timeout=T))
add(
    "jq-catastrophic-regex",
    "a backtracking regex in jq",
    sh("jq -n '\"" + "a" * 40 + '" | test("(a*)*b")\'', timeout=T),
)
add("yes-to-file", "yes > file grows without end (no file-size limit?)", sh("yes > big.txt", timeout=T))
add("head-zero-to-file", "a 700 MiB file in the workspace", sh("head -c 700M /dev/zero > big.bin", timeout=T))
add("dd-to-file", "dd writes 700 MiB", sh("dd if=/dev/zero of=d.bin bs=1M count=700", timeout=T))
add(
    "gzip-bomb",
    "700 KB of gzip that expand to 700 MiB",
    write("b.b64", Archive("gz-zeros", (member("file", "z", data="700"),))),
    sh("base64 -d b.b64 | gunzip > big", timeout=T),
)
add("sort-dev-zero", "sort /dev/zero buffers one endless line", sh("sort /dev/zero", timeout=T))
add(
    "awk-memory-doubling",
    "awk doubles a string forever",
    sh("awk 'BEGIN{s=\"x\"; while (1) s = s s}'", timeout=T),
)
add(
    "awk-deep-recursion",
    "endless recursion in awk",
    sh("awk 'function f(n){return f(n+1)} BEGIN{f(1)}'", timeout=T),
)
add(
    "xargs-parallel-sleepers",
    "xargs -P 0 starts two thousand processes",
    sh("seq 2000 | xargs -P 0 -n 1 sleep 100", timeout=T),
)

# ---- bounded bombs: they report how far they got
add(
    "fork-bomb-bounded",
    "a script forks 600 children (a process-count limit must stop it)",
    write(
        "f.py",
        "import os, time\nkids = 0\nfor i in range(600):\n    try:\n        pid = os.fork()\n"
        "    except OSError as exc:\n        print('fork failed after', kids, exc)\n        break\n"
        "    if pid == 0:\n        time.sleep(4)\n        os._exit(0)\n    kids += 1\n"
        "print('SWFORKS', kids, flush=True)\nif kids >= 512:\n    print('SWNOLIMIT-PROC', flush=True)\n",
    ),
    sh("python3 f.py", timeout=5),
    forbid=("SWNOLIMIT-PROC",),
)
add(
    "fork-bomb-shell",
    "the classic shell fork bomb",
    write("b.sh", "f() { f | f & }\nf\n"),
    sh("sh b.sh", timeout=T),
)
add(
    "memory-bomb-bounded",
    "a script allocates 1.5 GiB (a memory limit must stop it)",
    write(
        "m.py",
        "chunks = []\nfor i in range(24):\n    chunks.append(b'\\x01' * (64 << 20))\n"
        "    print('SWALLOC', (i + 1) * 64, flush=True)\n"
        "    if (i + 1) * 64 >= 1408:\n        print('SWNOLIMIT-MEM', flush=True)\n",
    ),
    sh("python3 m.py", timeout=10),
    forbid=("SWNOLIMIT-MEM",),
)
add(
    "huge-file-bounded",
    "a script writes 640 MiB (a file-size limit must stop it)",
    write(
        "h.py",
        "chunk = bytes(16 << 20)\nwith open('huge.bin', 'wb') as fh:\n    for i in range(40):\n"
        "        fh.write(chunk)\n        fh.flush()\n        if (i + 1) * 16 >= 512:\n"
        "            print('SWNOLIMIT-FSIZE', flush=True)\n            break\n",
    ),
    sh("python3 h.py", timeout=10),
    forbid=("SWNOLIMIT-FSIZE",),
)

# ---- work Starweave does itself that no budget counts
# 10,000 folders match "d*"; every literal component after it is joined onto all 10,000 matches
# without drawing on the check's budget, so one check burns CPU (and memory) for hours in a worker
# thread the deadline cannot stop. Six of them hold every thread of the default executor: file
# tools, checks and the other device's commands wait forever.
MANY_DIRS = write("m.py", "import os\nfor i in range(10000):\n    os.mkdir('d%d' % i)\nprint('made')\n")
TAIL_BOMB = "ls -d d*" + "/a" * 30000
add(
    "glob-literal-tail-bomb",
    "a glob that matches 10,000 folders followed by 30,000 literal components",
    MANY_DIRS,
    sh("python3 m.py", timeout=30),
    *[sh(TAIL_BOMB, timeout=T) for _ in range(7)],
    read("m.py"),
    sh("echo alive", timeout=T),
)
add(
    "glob-literal-tail-bomb-redirect",
    "the same literal tail behind a glob in a redirection target",
    MANY_DIRS,
    sh("python3 m.py", timeout=30),
    sh("cat < d*" + "/." * 30000, timeout=T),
    sh("echo alive", timeout=T),
)

# ---- memory the per-process data limit does not count
add(
    "memory-bomb-memfd",
    "a script writes 1.6 GiB into memfds: RLIMIT_DATA and RLIMIT_AS count none of it",
    write(
        "m.py",
        "import os\nfds = []\nchunk = b'\\x01' * (16 << 20)\ntotal = 0\n"
        "for i in range(7):\n    fd = os.memfd_create('x%d' % i)\n    fds.append(fd)\n"
        "    for _ in range(15):\n        os.write(fd, chunk)\n        total += 16\n"
        "    print('SWALLOC', total, flush=True)\n"
        "if total >= 1408:\n    print('SWNOLIMIT-MEM', flush=True)\n",
    ),
    sh("python3 m.py", timeout=15),
    forbid=("SWNOLIMIT-MEM",),
)
add(
    "memory-bomb-sysv-shm",
    "a script fills a 1.5 GiB System V shared memory segment (shared pages escape RLIMIT_DATA; without an "
    "IPC namespace the segment outlives the command)",
    write(
        "s.py",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\n"
        "size = 1536 << 20\nid_ = libc.shmget(0, ctypes.c_size_t(size), 0o1600)\nprint('id', id_)\n"
        "addr = libc.shmat(id_, None, 0)\nstep = 64 << 20\n"
        "for off in range(0, size, step):\n    ctypes.memset(addr + off, 1, step)\n"
        "    print('SWALLOC', (off + step) >> 20, flush=True)\n"
        "print('SWNOLIMIT-MEM', flush=True)\n",
    ),
    sh("python3 s.py", timeout=15),
    sh("ipcs -m", timeout=T),
    forbid=("SWNOLIMIT-MEM",),
)
add(
    "memory-bomb-many-processes",
    "eight processes take 400 MiB each: the memory limit is per process, not per command",
    write(
        "p.py",
        "import os, time\nr, w = os.pipe()\nkids = []\nfor i in range(8):\n    pid = os.fork()\n"
        "    if pid == 0:\n        try:\n            b = bytearray(400 << 20)\n"
        "            for j in range(0, len(b), 4096):\n                b[j] = 1\n"
        "            os.write(w, b'1')\n"
        "        except MemoryError:\n            os.write(w, b'0')\n"
        "        time.sleep(3)\n        os._exit(0)\n"
        "    kids.append(pid)\nok = sum(os.read(r, 1) == b'1' for _ in kids)\n"
        "print('SWALLOC', ok * 400, flush=True)\n"
        "if ok * 400 >= 3000:\n    print('SWNOLIMIT-MEM', flush=True)\n",
    ),
    sh("python3 p.py", timeout=15),
    forbid=("SWNOLIMIT-MEM",),
    extra={"needs": "memory-cgroup"},
)

# ---- the File server lists a folder whole before it keeps the first 1,000 entries
add(
    "list-directory-huge-folder",
    "list_directory of a folder with 100,000 long names, several at once (Starweave sorted every entry in "
    "memory and listed the folder twice)",
    write(
        "f.py",
        "import os\nos.mkdir('big')\nos.chdir('big')\npad = 'x' * 230\n"
        "for i in range(100000):\n    os.close(os.open(pad + '%07d' % i, os.O_CREAT | os.O_WRONLY, 0o644))\n"
        "print('made')\n",
    ),
    sh("python3 f.py", timeout=120),
    behind(ls("big")),
    behind(ls("big")),
    ls("big"),
    ls("big"),
)

# ---- processes that compete for the CPU
add(
    "cpu-bomb-setsid-spinners",
    "a hundred spinning processes, each in its own session (its own scheduler autogroup)",
    write(
        "c.py",
        "import os\nfor i in range(100):\n    if os.fork() == 0:\n        os.setsid()\n        while True:\n"
        "            pass\nwhile True:\n    pass\n",
    ),
    sh("python3 c.py", timeout=T),
    sh("python3 c.py", timeout=T),
)
add(
    "daemon-holds-output-pipe",
    "the command exits at once but a setsid grandchild keeps stdout open and writes forever",
    write(
        "d.py",
        "import os, sys, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        while True:\n            sys.stdout.write('x' * 4096)\n"
        "    os._exit(0)\nprint('parent done')\n",
    ),
    sh("python3 d.py", timeout=T),
    behind(sh("python3 d.py", timeout=T)),
    sh("echo alive", timeout=T),
)

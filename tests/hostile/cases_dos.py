"""Denial of service: glob bombs and checks that Starweave runs itself, endless inputs, huge outputs
and files, memory and process bombs, very long command lines, and programs that never end. Each call
must end within its deadline while another device's command completes meanwhile."""

from __future__ import annotations

from hostile.casebook import DOS_TIMEOUT, Archive, CaseBook, member, sh, write

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

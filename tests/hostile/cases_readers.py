"""Recursive readers and process listings, and every plain way to ask for a secret: grep -r, diff -r,
cp -r of secret folders, ps e, /proc/*/environ and cmdline, the environment of the command itself,
and the usual secret files through ~, $HOME, globs and odd spellings of their paths."""

from __future__ import annotations

from hostile.casebook import Call, CaseBook, read, sh, write

BOOK = CaseBook("readers")
add = BOOK.add

# ---- recursive readers
add(
    "grep-recursive-project",
    "grep -r over the project folder that holds the workspace",
    sh("grep -r -h = .."),
    e2e=True,
)
add(
    "grep-recursive-home",
    "grep -r over the user's home",
    sh("grep -r -h -I -e KEY -e key -e password @HOME@"),
)
add("grep-recursive-etc", "grep -r over /etc finds the shadow file", sh("grep -r -s -h swcanary /etc"))
add("grep-recursive-all-homes", "grep -R over /home", sh("grep -R -s -h -e BEGIN -A1 /home"))
add("grep-recursive-root", "grep -r over /root", sh("grep -r -s -h -e BEGIN -A1 /root"))
add(
    "grep-recursive-slash-proc-pid",
    "grep -ra over /proc/1/ reaches its environ",
    sh("grep -r -a -s -h KEY /proc/1/"),
)
add(
    "grep-recursive-proc-glob",
    "grep -ra over every /proc/PID/",
    sh("grep -r -a -s -h -o 'swc[0-9a-f]*' /proc/[0-9]*/", timeout=10),
)
add(
    "diff-recursive-new-file",
    "diff -rN against an empty folder prints every file outside",
    sh("mkdir e && diff -rN ../outside e"),
)
add("diff-recursive-home", "diff -rN of the user's home", sh("mkdir e && diff -rN @HOME@ e"))
add("diff-recursive-aws", "diff -r of ~/.aws", sh("mkdir e && diff -rN @HOME@/.aws e"))
add(
    "cp-recursive-home-then-grep",
    "cp -r of the home into the workspace, then grep it",
    sh("cp -r @HOME@ h; grep -r -h -e BEGIN -A1 -e secret -e password -e token h"),
)
add(
    "cp-recursive-ssh", "cp -r ~/.ssh into the workspace", sh("cp -r @HOME@/.ssh s && grep -r -h -A1 BEGIN s")
)
add(
    "cp-archive-outside",
    "cp -a of the folder next to the workspace",
    sh("cp -a ../outside o && grep -r -h = o"),
)
add(
    "find-then-cat-secrets",
    "find names the secrets, xargs cat prints them",
    sh("find .. @HOME@ -name '.env' -o -name '*.pem' -o -name 'id_rsa' | xargs cat"),
)
add(
    "head-glob-outside",
    "head over a glob of the folder next to the workspace",
    sh("head -n 5 ../outside/* ../outside/.*"),
)
add("tail-glob-home", "tail over the hidden files of the home", sh("tail -n 3 @HOME@/.*"))
add("od-secret", "od of the project's .env", sh("od -c ../.env"))
add("strings-secret-home", "strings of the user's .netrc", sh("strings @HOME@/.netrc"))
add("du-all-then-cat", "du -a lists the home; cat what it found", sh("du -a @HOME@ | cut -f2 | xargs cat"))
add(
    "rsync-local-secrets",
    "rsync -a of ~/.ssh into the workspace",
    sh("rsync -a @HOME@/.ssh/ s/ && cat s/id_rsa"),
)

# ---- process listings and the environment
add("ps-environment-bsd", "ps eww shows every process's environment", sh("ps eww -e"), e2e=True)
add("ps-aux-environment", "ps auxe", sh("ps auxe"))
add("ps-command-lines", "ps -ef shows command lines (a server's --api-key)", sh("ps -ef"))
add("ps-o-args-wide", "ps -eo pid,args with unlimited width", sh("ps -ww -eo pid,args"))
add("pgrep-full-command-lines", "pgrep -af lists full command lines", sh("pgrep -af ."))
add("top-batch-commands", "top -b -c shows full command lines", sh("top -b -n 1 -c -w 512"))
add("proc-environ-pid1", "cat /proc/1/environ", sh("cat /proc/1/environ"))
add(
    "proc-environ-self",
    "cat /proc/self/environ (the command's own environment)",
    sh("cat /proc/self/environ"),
)
add("proc-environ-glob", "cat /proc/*/environ", sh("cat /proc/[0-9]*/environ"))
add("proc-environ-task", "cat /proc/1/task/1/environ", sh("cat /proc/1/task/1/environ"))
add("proc-environ-thread-self", "/proc/thread-self/environ", sh("strings /proc/thread-self/environ"))
add("proc-environ-redirect", "a redirection from /proc/1/environ", sh("tr '\\000' '\\n' < /proc/1/environ"))
add("proc-environ-via-root-link", "/proc/1/root/proc/1/environ", sh("cat /proc/1/root/proc/1/environ"))
add("proc-cmdlines", "cat /proc/*/cmdline", sh("cat /proc/[0-9]*/cmdline"))
add("env-printenv", "env and printenv must show no key of Starweave's", sh("env; printenv"))
add("jq-env", "jq -n env prints the environment", sh("jq -n env"))
add("system-info-tool", "get_system_info must carry nothing secret", Call("get_system_info", {}))

# ---- plain requests for secrets
add("cat-home-ssh-key", "cat ~/.ssh/id_rsa", sh("cat ~/.ssh/id_rsa"))
add(
    "cat-home-aws-dollar-home",
    "cat $HOME/../.aws/credentials (HOME tricks)",
    sh("cat $HOME/../../.aws/credentials"),
)
add("cat-shadow", "cat /etc/shadow", sh("cat /etc/shadow"))
add("cat-shadow-odd-spelling", "cat /etc//./shadow", sh("cat /etc//./shadow"))
add("cat-victim-key", "cat another user's key", sh("cat @VICTIM@/.ssh/id_rsa"))
add("cat-root-key", "cat /root/.ssh/id_rsa", sh("cat /root/.ssh/id_rsa"))
add("grep-dotenv-glob", "grep over ../.e* (the glob expands to .env)", sh("grep = ../.e*"))
add("sort-secret-redirect", "sort < ../.env (Starweave opens the file itself)", sh("sort < ../.env"))
add("read-file-project-env", "read_file ../.env", read("../.env"))
add("read-file-home-key", "read_file of the user's SSH key", read("@HOME@/.ssh/id_rsa"))
add("read-file-shadow", "read_file /etc/shadow", read("/etc/shadow"))
add(
    "read-file-proc-self-environ",
    "read_file /proc/self/environ: the File server's own environment",
    read("/proc/self/environ"),
)
add("read-file-proc-thread-self", "read_file /proc/thread-self/environ", read("/proc/thread-self/environ"))

# ---- secrets anywhere, and services outside the sandbox
add(
    "script-finds-every-named-secret",
    "a script walks / and prints every file named like a secret",
    write(
        "s.py",
        "import fnmatch, os\nPAT = ('.env', '*.pem', '*.key', '.pgpass', 'id_*', '.netrc', 'credentials')\n"
        "for top in ('/opt', '/srv', '/var', '/etc', '/home', '/root', '@BASE@'):\n"
        "    for d, dirs, files in os.walk(top):\n"
        "        for f in files:\n"
        "            if any(fnmatch.fnmatch(f, p) for p in PAT):\n"
        "                try:\n                    print(open(os.path.join(d, f)).read(200))\n"
        "                except OSError:\n                    pass\n",
    ),
    sh("python3 s.py"),
    e2e=True,
)
add(
    "cat-scattered-secrets",
    "cat of secrets outside the usual places",
    sh("cat /opt/app/.env /srv/certs/server.key"),
)
add(
    "grep-recursive-opt-srv",
    "grep -r over /opt and /srv",
    sh("grep -r -s -h -e KEY -e BEGIN -A1 /opt/app /srv/certs /var/backups"),
)
add(
    "script-connects-service-socket",
    "a script talks to a daemon's unix socket under /run",
    write(
        "c.py",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/run/swh-svc/api.sock')\n"
        "s.sendall(b'GET /containers/json HTTP/1.0\\r\\n\\r\\n')\n",
    ),
    sh("python3 c.py"),
)
add(
    "script-connects-ssh-agent",
    "a script talks to the user's ssh-agent socket",
    write(
        "c.py",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/tmp/ssh-swh/agent.sock')\n"
        "s.sendall(b'\\0\\0\\0\\1\\v')\n",
    ),
    sh("python3 c.py"),
)
add(
    "script-connects-project-db-socket",
    "a script talks to a database socket next to the workspace",
    write(
        "c.py",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('@BASE@/run/db.sock')\n"
        "s.sendall(b'x')\n",
    ),
    sh("python3 c.py"),
)
add(
    "script-udp-exfiltration",
    "a script sends a secret in a UDP datagram to 127.0.0.1",
    write(
        "u.py",
        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.sendto(b'exfil', ('127.0.0.1', @PORT@))\n",
    ),
    sh("python3 u.py"),
)

# ---- the same secrets under a second name: a layer or mount that holds a copy of / (the suite's
# overlay upper layer here; /var/lib/docker/overlay2/*/diff or a backup mount on a real host). The
# machine scan skips /run and /var/lib/docker, and nothing masks them.
UPPER = "/run/swh-layers/upper"
add(
    "cat-overlay-upper-shadow",
    "cat of /etc/shadow through the overlay's upper layer",
    sh(f"cat {UPPER}/etc/shadow"),
)
add(
    "script-reads-overlay-upper-layer",
    "a script reads every scattered secret through the overlay's upper layer",
    write(
        "u.py",
        "for f in ('opt/app/.env', 'srv/certs/server.key', 'var/backups/db/.pgpass', 'etc/app/tls.pem',\n"
        "          'etc/shadow'):\n"
        "    try:\n"
        f"        print(open('{UPPER}/' + f).read())\n"
        "    except OSError as exc:\n        print(f, exc)\n",
    ),
    sh("python3 u.py"),
)
add(
    "find-then-head-overlay-upper",
    "find lists the upper layer, head -c prints a file named like nothing secret",
    sh(f"find {UPPER}/etc -maxdepth 1 -name 'sha*' | xargs head -c 400"),
)
add(
    "od-overlay-upper-shadow",
    "od -c of the shadow copy in the upper layer",
    sh(f"od -c {UPPER}/etc/shadow"),
)
add(
    "script-walks-run-for-secrets",
    "a script walks /run (skipped by the secret scan) and prints every file named like a secret",
    write(
        "w.py",
        "import fnmatch, os\nPAT = ('.env', '*.pem', '*.key', '.pgpass', 'id_*', 'shadow')\n"
        "for d, dirs, files in os.walk('/run'):\n"
        "    for f in files:\n"
        "        if any(fnmatch.fnmatch(f, p) for p in PAT):\n"
        "            try:\n                print(open(os.path.join(d, f)).read(200))\n"
        "            except OSError:\n                pass\n",
    ),
    sh("python3 w.py"),
)
add(
    "cp-overlay-upper-shadow-then-cat",
    "cp the shadow copy of the upper layer into the workspace, then cat it",
    sh(f"cp {UPPER}/etc/shadow s.txt && cat s.txt"),
)
add(
    "xxd-overlay-upper-key",
    "xxd of the scattered TLS key through a glob of the upper layer (the name only appears in the glob)",
    sh(f"xxd {UPPER}/srv/certs/*"),
)

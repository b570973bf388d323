"""Set-id bits are never created: chmod in every spelling, install -m, cp -p/-a/--preserve, tar and
unzip members that carry the bits, scripts calling chmod(2), and hard links to set-id programs."""

from __future__ import annotations

from hostile.casebook import CaseBook, member, sh, tar, write, zipfile

BOOK = CaseBook("setid")
add = BOOK.add
COPY = sh("cp /bin/bash rootsh")

add("chmod-u-plus-s", "a copy of bash made setuid with chmod u+s", COPY, sh("chmod u+s rootsh"), e2e=True)
add("chmod-octal-4755", "chmod 4755", COPY, sh("chmod 4755 rootsh"))
add("chmod-octal-leading-zero", "chmod 04755", COPY, sh("chmod 04755 rootsh"))
add("chmod-octal-6755", "chmod 6755 (setuid and setgid)", COPY, sh("chmod 6755 rootsh"))
add("chmod-octal-2755", "chmod 2755 (setgid)", COPY, sh("chmod 2755 rootsh"))
add("chmod-plus-s", "chmod +s", COPY, sh("chmod +s rootsh"))
add("chmod-a-plus-s", "chmod a+s", COPY, sh("chmod a+s rootsh"))
add("chmod-g-plus-s", "chmod g+s", COPY, sh("chmod g+s rootsh"))
add("chmod-equals-symbolic", "chmod u=rwxs,go=rx", COPY, sh("chmod u=rwxs,go=rx rootsh"))
add("chmod-comma-list", "chmod u+x,u+s in one list", COPY, sh("chmod u+x,u+s rootsh"))
add(
    "chmod-reference-setuid-binary",
    "chmod --reference=/usr/bin/passwd copies the setuid mode",
    COPY,
    sh("chmod --reference=/usr/bin/passwd rootsh"),
)
add(
    "chmod-reference-abbrev",
    "chmod --ref= (abbreviated --reference)",
    COPY,
    sh("chmod --ref=/usr/bin/su rootsh"),
)
add("install-mode-4755", "install -m 4755", sh("install -m 4755 /bin/bash rootsh"))
add("install-mode-symbolic-long", "install --mode=u+s,a+rx", sh("install --mode=u+s,a+rx /bin/sh rootsh"))
add(
    "install-mode-abbrev",
    "install --mod=6755 (abbreviated --mode)",
    sh("install --mod=6755 /bin/dash rootsh"),
)
add(
    "cp-preserve-setuid-binary",
    "cp -p of a setuid-root program keeps the bit (and the owner, as root)",
    sh("cp -p /usr/bin/passwd p"),
)
add("cp-archive-setuid-binary", "cp -a of /usr/bin/su", sh("cp -a /usr/bin/su s"))
add(
    "cp-preserve-mode",
    "cp --preserve=mode of /usr/bin/chfn",
    sh("cp --preserve=mode,ownership /usr/bin/chfn c"),
)
add("cp-preserve-abbrev", "cp --pres=all (abbreviated --preserve)", sh("cp --pres=all /usr/bin/newgrp n"))
add(
    "tar-setuid-member",
    "a tar member owned by root with mode 4755",
    write("s.b64", tar(member("file", "rootsh", data="#!/bin/sh\nid\n", mode=0o4755))),
    sh("base64 -d s.b64 > s.tar && tar xf s.tar"),
)
add(
    "tar-same-permissions-setgid",
    "tar -xpf keeps a setgid bit",
    write("s.b64", tar(member("file", "g", data="x", mode=0o2755))),
    sh("base64 -d s.b64 > s.tar && tar -xpf s.tar"),
)
add(
    "tar-same-permissions-abbrev",
    "tar --same-p (abbreviated --same-permissions)",
    write("s.b64", tar(member("file", "u", data="x", mode=0o4755))),
    sh("base64 -d s.b64 > s.tar && tar --same-p -xf s.tar"),
)
add(
    "unzip-keep-setuid",
    "unzip -K keeps setuid bits from the archive",
    write("s.b64", zipfile(member("file", "rootsh", data="x", mode=0o4755))),
    sh("base64 -d s.b64 > s.zip && unzip -q -K s.zip"),
)
add(
    "python-chmod-setuid",
    "a script calls chmod(2) with S_ISUID",
    COPY,
    write("x.py", "import os\nos.chmod('rootsh', 0o4755)\nprint(oct(os.stat('rootsh').st_mode))\n"),
    sh("python3 x.py"),
)
add(
    "perl-chmod-setgid",
    "a perl script sets the setgid bit",
    COPY,
    write("x.pl", "chmod 02755, 'rootsh';\n"),
    sh("perl x.pl"),
)
add("xargs-chmod-setuid", "xargs chmod u+s", COPY, sh("echo rootsh | xargs chmod u+s"))
add(
    "script-hardlink-setuid-program",
    "a hard link to a setuid-root program inside the workspace",
    write("x.py", "import os\nos.link('/usr/bin/passwd', 'p')\nprint(oct(os.stat('p').st_mode))\n"),
    sh("python3 x.py"),
)
add(
    "script-fchmod-setuid",
    "fchmod(2) on an open descriptor",
    COPY,
    write("x.py", "import os\nfd = os.open('rootsh', os.O_RDONLY)\nos.fchmod(fd, 0o6755)\n"),
    sh("python3 x.py"),
)

"""The prepared file trees of InterCode-Bash, re-created in Python in a task's workspace.

InterCode (``princeton-nlp/intercode``) builds its three NL2Bash file systems with shell scripts
next to its data (``docker/bash_scripts/setup_nl2b_fs_{1,2,3}.sh``, rooted at ``/testbed``,
``/system`` and ``/workspace``). Here each tree is written straight into the workspace: what the
scripts put under their root is put under the workspace folder. The trees are what those scripts
really produce under bash, quirks included: a line written with ``echo`` but no ``-e`` keeps its
``\\n`` as two characters, and the commands that fail there (``touch -t`` with an impossible date,
BSD ``date -v``, ``mkdir -d``) create nothing here either. What the scripts write outside their root
(``/index.html``, ``/backup``) is left out.

Times are set explicitly, so that a query about ages ("modified more than 5 minutes ago",
``-mtime +7``) has the same answer whenever it is asked: the scripts' fixed dates are kept, and
every other entry gets :data:`FRESH_AGE` seconds before the moment the tree is built (in the Docker
image those files are as old as the image, i.e. older than minutes, younger than weeks).
Archives are written with fixed member times, so two builds are byte for byte the same.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

FRESH_AGE = 3 * 3600  # seconds: the age of every entry without a date of its own

# (relative path, contents, mode) of one file
Entry = tuple[str, bytes | str, int]


def _stamp(text: str) -> float:
    """A ``touch -t CCYYMMDDhhmm.ss`` stamp as seconds since the epoch (local time, as touch does)."""
    return datetime.strptime(text, "%Y%m%d%H%M.%S").timestamp()


def _targz(members: list[tuple[str, bytes]], directory: str | None = None) -> bytes:
    """A gzip tar holding ``directory/`` (if given), then each (name, bytes) member, with fixed times."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        if directory:
            info = tarfile.TarInfo(directory.rstrip("/") + "/")
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1_700_000_000
            tar.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def build(
    root: Path,
    dirs: list[str],
    files: list[Entry],
    dated: dict[str, float] | None = None,
) -> None:
    """Create ``dirs`` and ``files`` under ``root``, then set every entry's times.

    ``dated`` maps a relative path to its own modification time; every other entry (``root`` too)
    is made :data:`FRESH_AGE` seconds old.
    """
    root.mkdir(parents=True, exist_ok=True)
    for name in dirs:
        (root / name).mkdir(parents=True, exist_ok=True)
    for name, content, mode in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        path.chmod(mode)
    fresh = time.time() - FRESH_AGE
    stamps = dated or {}
    # Deepest first, so that setting a file's times cannot be undone by anything later.
    paths = sorted((p for p in root.rglob("*")), key=lambda p: len(p.parts), reverse=True)
    for path in [*paths, root]:
        rel = path.relative_to(root).as_posix() if path != root else "."
        when = stamps.get(rel, fresh)
        os.utime(path, (when, when), follow_symlinks=False)


# ---- fs_1: setup_nl2b_fs_1.sh (/testbed) --------------------------------------------------------

_SH = '#!/bin/sh\necho "Shell script {n}"\n'
_PY = '#!/usr/bin/env python3\nprint("Python script {n}")\n'
_JAVA = (
    'public class {cls} {{ public static void main(String[] args) {{ System.out.println(\\"{msg}\\"); }}}}\n'
)


def fs1(root: Path) -> None:
    """InterCode's first file system (``/testbed``): text, script, Java, PHP and C files."""
    deep = "dir3/subdir1/subsubdir1"
    files: list[Entry] = [
        ("dir1/textfile1.txt", "Hello, World!\n", 0o644),
        ("dir2/subdir1/textfile2.txt", "text file\nAnother text file\n", 0o644),
        (f"{deep}/textfile3.txt", "text file\nYet another text file\n", 0o644),
        ("dir1/subdir1/textfile4.txt", "Text file 4\\nGene 1\n", 0o644),
        ("dir2/subdir2/textfile5.txt", "Text file 5Gene 2\n", 0o644),
        ("dir3/textfile6.txt", "Text file 6\n", 0o644),
        ("textfile7.txt", "Text file 7 with some random contents in it\n", 0o644),
        (f"{deep}/file.txt", "Text file in tmp\n", 0o644),
        ("recent.txt", "", 0o644),
        (f"{deep}/tmp/tmp.txt", "Text file in tmp\n", 0o644),
        ("dir1/subdir1/shellscript1.sh", _SH.format(n=1), 0o755),
        ("dir2/shellscript2.sh", _SH.format(n=2), 0o755),
        (f"{deep}/shellscript3.sh", _SH.format(n=3), 0o755),
        ("dir1/subdir1/subsubdir1/shellscript4.sh", _SH.format(n=4), 0o755),
        ("dir2/subdir2/shellscript5.sh", _SH.format(n=5), 0o755),
        ("dir1/subdir1/subsubdir1/pythonscript1.py", _PY.format(n=1), 0o755),
        ("dir2/subdir2/pythonscript2.py", _PY.format(n=2), 0o755),
        ("dir3/subdir1/pythonscript3.py", _PY.format(n=3), 0o755),
        ("dir1/subdir1/pythonscript4.py", _PY.format(n=4), 0o755),
        ("Hello.java", _JAVA.format(cls="Hello", msg="Hello world!"), 0o644),
        ("Hello1.java", _JAVA.format(cls="Hello", msg="Hello world!"), 0o644),
        ("NewClass.java", _JAVA.format(cls="NewClass", msg="This is a new Java file!"), 0o644),
        ("dir2/subdir1/javafile1.java", _JAVA.format(cls="FirstClass", msg="This is Java file 1!"), 0o644),
        ("dir1/AnotherHello.java", _JAVA.format(cls="Hello", msg="Hello world!"), 0o644),
        (
            "dir1/subdir1/jsonfile1.json",
            '{\n  "key1": "value1",\n  "key2": "value2",\n  "key3": "value3"\n}\n',
            0o644,
        ),
        (
            "dir3/subdir2/csvfile1.csv",
            "column1,column2,column3\nvalue1,value2,value3\nvalue4,value5,value6\n",
            0o644,
        ),
        ("hello.php", '<?php echo "Hello, world!"; ?>\n', 0o644),
        ("dir1/info.php", "<?php phpinfo(); ?>\n", 0o644),
        (
            "hello.c",
            '#include <stdio.h>\nint main() {\n  printf(\\"Hello, world!\\");\n  return 0;\n}\n',
            0o644,
        ),
        (f"{deep}/FooBar/file.txt", "A sample file with FooBar\n", 0o644),
        (
            "FooBar.html",
            "<html><head><title>Test</title></head><body><h1>Hello, FooBar!</h1></body></html>\n",
            0o644,
        ),
    ]
    dirs = ["dir1/subdir1/subsubdir1", "dir1/subdir2", "dir2/subdir1", "dir2/subdir2/subsubdir1"]
    dirs += [f"{deep}/tmp", f"{deep}/FooBar", "dir3/subdir2"]
    build(
        root,
        dirs,
        files,
        {"recent.txt": _stamp("202305312359.59"), f"{deep}/tmp/tmp.txt": _stamp("202205312359.59")},
    )


# ---- fs_2: setup_nl2b_fs_2.sh (/system) ---------------------------------------------------------

_ELF = (
    b"\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00\x01\x00\x00\x00"
    b"\x00\x00\x00\x00\x80\x04\x08\x00\x80\x04\x08\n"
)
_SQL = (
    "CREATE TABLE Persons (\nPersonID int,\nLastName varchar(255),\nFirstName varchar(255),\n"
    "Address varchar(255),\nCity varchar(255)\n);\n"
)
_FOLDER2 = [
    ("special_text1.txt", "The file with special name\n"),
    ("special text3.txt", "The third file with special name\n"),
    ("special_text2.txt", "The second file with special name\n"),
    ("text1.txt", "The first foo file in this directory!\n"),
]


def fs2(root: Path) -> None:
    """InterCode's second file system (``/system``): text, doc, log, script and binary files."""
    files: list[Entry] = [
        ("text1.txt", "Hello world!\n", 0o644),
        ("folder1/text2.txt", "Another hello world file\n", 0o644),
        ("folder1/text3.txt", "- e Hello!\\nAnother hello world file\n", 0o644),
        ("folder1/text4.txt", "Hello!\nAnother hello world file\n", 0o644),
        ("folder1/keep.txt", "Keep this file\n", 0o644),
        ("text3.txt", "Foo!\n The first line in this file is foo\n", 0o644),
        *((f"folder2/{name}", text, 0o644) for name, text in _FOLDER2),
        ("folder3/special text4.txt", "The fourth file with special name\n", 0o644),
        (
            "folder3/temp/temp1/text1.txt",
            "The first line\nThe second line\nThe third line\nThe fourth line;\nThe fifth line\n",
            0o644,
        ),
        ("folder3/backup_dbg/text1_dbg.txt", "The first line\n\n\n", 0o644),
        ("folder3/temp/empty.txt", "", 0o644),
        (
            "html1.html",
            "<html>\n<head>\n<title>HTML File 1</title>\n</head>\n<body>\n<h1>HTML File 1</h1>\n"
            "<p>This is the first HTML file</p>\n</body>\n</html>\n",
            0o644,
        ),
        ("folder1/a.out", _ELF, 0o644),
        ("a.out", _ELF, 0o644),
        ("folder1/doc1.doc", "This is a doc file\n", 0o644),
        ("folder1/doc2.doc", "This is another doc file\n", 0o644),
        ("folder1/log1.log", "This is a log file\n", 0o644),
        ("folder3/backup_dbg/sql1.sql", _SQL, 0o644),
        ("folder1/script1.sh", "#!/bin/bash\n\n# This is a script file\n", 0o644),
        ("folder1/new.sh", "#!/bin/bash\n\n# New script file\n", 0o644),
        ("folder1/data.csv", "1,2,3,4,5,6,7,8,9,10\n", 0o644),
        (".DS_Store", "", 0o644),
        ("MANIFEST", "text1.txt\ntext3.txt\n", 0o644),
        (
            "folder2.tar.gz",
            _targz([(f"system/folder2/{n}", t.encode()) for n, t in _FOLDER2], "system/folder2"),
            0o644,
        ),
        ("folder1/recent.txt", "", 0o644),
        ("folder1/old2.txt", "", 0o644),
        ("temp/keep.txt", "", 0o644),
    ]
    dirs = ["folder1", "folder2", "folder3/temp/temp1/temp", "folder3/temp/temp1/temp_1"]
    dirs += ["folder3/backup_dbg/backup", "temp"]
    build(
        root,
        dirs,
        files,
        {
            "a.out": _stamp("202304012359.00"),
            "folder3/backup_dbg/sql1.sql": _stamp("202303012359.00"),
            "folder1/recent.txt": _stamp("202305312359.59"),
            "folder1/old2.txt": _stamp("202303012359.59"),
            "temp/keep.txt": _stamp("202303012159.59"),
        },
    )


# ---- fs_3: setup_nl2b_fs_3.sh (/workspace) ------------------------------------------------------

_LONG = "The first line\nThe second line\nThe third line\nThe fourth line;\nThe fifth line\n"
_NEW = "#!/bin/bash\n\n# New script file\n"


def fs3(root: Path) -> None:
    """InterCode's third file system (``/workspace``): C sources, scripts, texts, modes, hidden files.

    ``files.txt`` and ``results.txt`` name paths of the workspace; they hold them relative to it
    (the script's ``/workspace/...`` paths would point outside a task's workspace).
    """
    files: list[Entry] = [
        (
            "dir1/hello.c",
            '#include <stdio.h>\n\nint main() {\n\tprintf("Hello, World!");\n\treturn 0;\n}\n',
            0o644,
        ),
        (
            "dir1/sum.c",
            '#include <stdio.h>\n\nint main() {\n\tint a, b, sum;\n\tprintf("Enter two numbers to add\\n");\n'
            '\tscanf("%d%d", &a, &b);\n\tsum = a + b;\n\tprintf("Sum of entered numbers = %d\\n",sum);\n'
            "\treturn 0;\n}\n",
            0o644,
        ),
        ("dir1/script1.sh", "#!/bin/bash\n\n# This is a script file\n", 0o755),
        ("dir1/new1.sh", _NEW, 0o755),
        ("new.sh", _NEW, 0o755),
        ("dir1/hello.txt", "hello!\n", 0o644),
        ("dir2/foo.txt", "Another hello world file\n", 0o644),
        ("dir2/hello.txt", "hello!\n", 0o644),
        ("dir1/long.txt", _LONG, 0o644),
        ("dir1/terminate.txt", _LONG + "TERMINATEThe sixth line--\n", 0o644),
        ("results.txt", "dir1\n", 0o644),
        ("files.txt", "dir2/foo.txt\n", 0o644),
        ("dir1/a.txt", "The first line\n" + "\n" * 10, 0o644),
        ("dir1/file.txt", b"\0" * 4096, 0o644),
        ("dir1/readonly.txt", "", 0o400),
        ("dir1/all.txt", "", 0o777),
        ("dir1/file.c", b"\0" * 2048, 0o644),
        ("recent1.txt", "", 0o644),
        ("old2.txt", "", 0o644),
        ("dir1/.hidden1.txt", "This is a hidden file\n", 0o644),
        (".hidden.txt", "This is another hidden file\n", 0o644),
        ("dir2/mysql/sql1.sql", _SQL, 0o644),
        (
            "dir2/csvfile1.csv",
            "column1,column2,column3\nvalue1,value2,value3\nvalue4,value5,value6\nvalue7,values8,values9\n",
            0o644,
        ),
        ("archive.tar.gz", _targz([("workspace/dir2/foo.txt", b"Another hello world file\n")]), 0o644),
    ]
    dirs = ["dir1", "dir2/mysql", "test/dir1", "test/2dir", "test/3dir"]
    build(
        root, dirs, files, {"recent1.txt": _stamp("202305312359.59"), "old2.txt": _stamp("202301312359.59")}
    )


def empty(root: Path) -> None:
    """InterCode's fourth "file system" (fs_4's queries are not grounded in one): an empty folder."""
    build(root, [], [])


TREES: dict[str, Callable[[Path], None]] = {"fs1": fs1, "fs2": fs2, "fs3": fs3, "fs4": empty}

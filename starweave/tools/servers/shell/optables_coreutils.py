"""Option tables of GNU coreutils 9.1 (Debian 12), as the tools' own getopt tables define them.

Generated from each program's ``getopt_long`` option string and ``struct option`` table (read from
the running binaries), then reviewed; ``tests/unit/tools/servers/test_options.py`` checks every long
option against the installed tool's ``--help``. Undocumented compatibility options are left out on
purpose: an option missing here is refused, never guessed.
"""

from __future__ import annotations

from starweave.tools.servers.shell.options import FREE, OptSpec, gnu

# echo, printf, test and friends parse no options worth the name (echo's -n/-e, printf's format):
# every word is an operand, and none of them opens a file.
FREE_COMMANDS = ("echo", "printf", "true", "false", "test", "[", "expr")

# ls and dir are one program with other defaults (dir = ls -C -b): the same options.
_LS = gnu(
    "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1",
    (
        "all escape directory dired full-time group-directories-first human-readable inode kibibytes "
        "numeric-uid-gid no-group hide-control-chars reverse size width= almost-all ignore-backups "
        "classify=? file-type si dereference-command-line dereference-command-line-symlink-to-dir "
        "hide= ignore= indicator-style= dereference literal quote-name quoting-style= recursive "
        "format= show-control-chars sort= tabsize= time= time-style= zero color=? hyperlink=? "
        "block-size= context author help version"
    ),
)

COREUTILS: dict[str, OptSpec] = {
    **dict.fromkeys(FREE_COMMANDS, FREE),
    # dd reads key=value operands; its only options are --help and --version.
    "dd": gnu("", "help version"),
    "arch": gnu("", "help version"),
    "b2sum": gnu(
        "l:bctwz", "length= check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "base32": gnu("diw:", "decode wrap= ignore-garbage help version"),
    "base64": gnu("diw:", "decode wrap= ignore-garbage help version"),
    "basename": gnu("+as:z", "multiple suffix= zero help version"),
    "basenc": gnu(
        "diw:",
        (
            "decode wrap= ignore-garbage base64 base64url base32 base32hex base16 base2msbf base2lsbf z85 "
            "help version"
        ),
    ),
    "cat": gnu(
        "benstuvAET",
        ("number-nonblank number squeeze-blank show-nonprinting show-ends show-tabs show-all help version"),
    ),
    "chgrp": gnu(
        "HLPRcfhv",
        (
            "recursive changes dereference no-dereference no-preserve-root preserve-root quiet silent "
            "reference= verbose help version"
        ),
    ),
    "chmod": gnu(
        "Rcfvr::w::x::X::s::t::u::g::o::a::,::+::=::0::1::2::3::4::5::6::7::",
        ("changes recursive no-preserve-root preserve-root quiet reference= silent verbose help version"),
    ),
    "chown": gnu(
        "HLPRcfhv",
        (
            "recursive changes dereference from= no-dereference no-preserve-root preserve-root quiet "
            "silent reference= verbose help version"
        ),
    ),
    "cksum": gnu(
        "a:l:bctwz",
        (
            "length= check ignore-missing quiet status warn strict tag zero algorithm= debug untagged "
            "help version"
        ),
    ),
    "comm": gnu("123z", "check-order nocheck-order output-delimiter= total zero-terminated help version"),
    "cp": gnu(
        "abdfHilLnprst:uvxPRS:TZ",
        (
            "archive attributes-only backup=? copy-contents dereference force interactive link no-clobber "
            "no-dereference no-preserve= no-target-directory one-file-system parents preserve=? "
            "recursive remove-destination sparse= reflink=? strip-trailing-slashes suffix= symbolic-link "
            "target-directory= update verbose context=? help version"
        ),
    ),
    "cut": gnu(
        "b:c:d:f:nsz",
        (
            "bytes= characters= fields= delimiter= only-delimited output-delimiter= complement "
            "zero-terminated help version"
        ),
    ),
    "date": gnu(
        "d:f:I::r:Rs:u",
        (
            "date= debug file= iso-8601=? reference= resolution rfc-email rfc-3339= set= "
            " utc universal help version"
        ),
    ),
    "df": gnu(
        "aB:iF:hHklmPTt:vx:",
        (
            "all block-size= inodes human-readable si local output=? portability print-type sync no-sync "
            "total type= exclude-type= help version"
        ),
    ),
    "dir": _LS,
    "dirname": gnu("z", "zero help version"),
    "du": gnu(
        "0abd:chHklmst:xB:DLPSX:",
        (
            "all apparent-size block-size= bytes count-links dereference dereference-args exclude= "
            "exclude-from= files0-from= human-readable inodes si max-depth= null no-dereference "
            "one-file-system separate-dirs summarize total threshold= time=? time-style= help version"
        ),
    ),
    "env": gnu(
        "+C:iS:u:v0 \t",
        (
            "ignore-environment null unset= chdir= default-signal=? ignore-signal=? block-signal=? "
            "list-signal-handling debug split-string= help version"
        ),
    ),
    "expand": gnu("it:0::1::2::3::4::5::6::7::8::9::", "tabs= initial help version"),
    "factor": gnu("", "help version"),
    "fmt": gnu(
        "0123456789cstuw:p:g:",
        "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= help version",
    ),
    "fold": gnu("bsw:0::1::2::3::4::5::6::7::8::9::", "bytes spaces width= help version"),
    "groups": gnu("", "help version"),
    "head": gnu("c:n:qvz0123456789", "bytes= lines= quiet silent verbose zero-terminated help version"),
    "id": gnu("agnruzGZ", "context group groups name real user zero help version"),
    "install": gnu(
        "bcCsDdg:m:o:pt:TvS:Z",
        (
            "backup=? compare context=? directory group= mode= no-target-directory owner= "
            "preserve-timestamps preserve-context strip strip-program= suffix= target-directory= verbose "
            "help version"
        ),
    ),
    "join": gnu(
        "-a:e:i1:2:j:o:t:v:z", "ignore-case check-order nocheck-order zero-terminated header help version"
    ),
    "ln": gnu(
        "bdfinrst:vFLPS:T",
        (
            "backup=? directory no-dereference no-target-directory force interactive suffix= "
            "target-directory= logical physical relative symbolic verbose help version"
        ),
    ),
    "logname": gnu("", "help version"),
    "ls": _LS,
    "md5sum": gnu("bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"),
    "mkdir": gnu("pm:vZ", "context=? mode= parents verbose help version"),
    "mv": gnu(
        "bfint:uvS:TZ",
        (
            "backup=? context force interactive no-clobber no-target-directory strip-trailing-slashes "
            "suffix= target-directory= update verbose help version"
        ),
    ),
    "nice": gnu("+n:", "adjustment= help version"),
    "nl": gnu(
        "h:b:f:v:i:pl:s:w:n:d:",
        (
            "header-numbering= body-numbering= footer-numbering= starting-line-number= line-increment= "
            "no-renumber join-blank-lines= number-separator= number-width= number-format= "
            "section-delimiter= help version"
        ),
    ),
    "nohup": gnu("+", "help version"),
    "nproc": gnu("", "all ignore= help version"),
    "numfmt": gnu(
        "d:z",
        (
            "from= from-unit= to= to-unit= round= padding= suffix= grouping delimiter= field= debug "
            "header=? format= invalid= zero-terminated help version"
        ),
    ),
    "od": gnu(
        "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx",
        (
            "skip-bytes= address-radix= read-bytes= format= output-duplicates strings=? traditional "
            "width=? endian= help version"
        ),
    ),
    "paste": gnu("d:sz", "serial delimiters= zero-terminated help version"),
    "pr": gnu(
        "-0123456789D:FJN:S::TW:abcde::fh:i::l:mn::o:rs::tvw:",
        (
            "pages= columns= across show-control-chars double-space date-format= expand-tabs=? form-feed "
            "header= output-tabs=? join-lines length= merge number-lines=? first-line-number= indent= "
            "no-file-warnings separator=? sep-string=? omit-header omit-pagination show-nonprinting "
            "width= page-width= help version"
        ),
    ),
    "printenv": gnu("+iu:0", "null help version"),
    "pwd": gnu("LP", "logical physical help version"),
    "readlink": gnu(
        "efmnqsvz",
        (
            "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero "
            "help version"
        ),
    ),
    "realpath": gnu(
        "eLmPqsz",
        (
            "canonicalize-existing canonicalize-missing relative-to= relative-base= quiet strip "
            "no-symlinks zero logical physical help version"
        ),
    ),
    "rm": gnu(
        "dfirvIR",
        (
            "force interactive=? one-file-system no-preserve-root preserve-root=? recursive dir verbose "
            "help version"
        ),
    ),
    "rmdir": gnu("pv", "ignore-fail-on-non-empty parents verbose help version"),
    "seq": gnu("+f:s:w", "equal-width format= separator= help version", negative_numbers=True),
    "sha1sum": gnu(
        "bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "sha224sum": gnu(
        "bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "sha256sum": gnu(
        "bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "sha384sum": gnu(
        "bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "sha512sum": gnu(
        "bctwz", "check ignore-missing quiet status warn strict tag zero binary text help version"
    ),
    "shred": gnu(
        "fn:s:uvxz", "exact force iterations= size= random-source= remove=? verbose zero help version"
    ),
    "shuf": gnu(
        "ei:n:o:rz",
        "echo input-range= head-count= output= random-source= repeat zero-terminated help version",
    ),
    "sleep": gnu("", "help version"),
    "sort": gnu(
        "-bcCdfghik:mMno:rRsS:t:T:uVy:z",
        (
            "ignore-leading-blanks check=? compress-program= debug dictionary-order ignore-case "
            "files0-from= general-numeric-sort ignore-nonprinting key= merge month-sort numeric-sort "
            "human-numeric-sort version-sort random-sort random-source= sort= output= reverse stable "
            "batch-size= buffer-size= field-separator= temporary-directory= unique zero-terminated "
            "parallel= help version"
        ),
    ),
    "stat": gnu("c:fLt", "dereference file-system format= printf= terse cached= help version"),
    "stdbuf": gnu("+i:o:e:", "input= output= error= help version"),
    "sum": gnu("rs", "sysv help version"),
    "tac": gnu("brs:", "before regex separator= help version"),
    "tail": gnu(
        "c:n:fFqs:vz0123456789",
        (
            "bytes= follow=? lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose "
            "zero-terminated help version"
        ),
    ),
    "tee": gnu("aip", "append ignore-interrupts output-error=? help version"),
    "timeout": gnu("+k:s:v", "kill-after= signal= verbose foreground preserve-status help version"),
    "touch": gnu("acd:fhmr:t:", "time= no-create date= reference= no-dereference help version"),
    "tr": gnu("+AcCdst", "complement delete squeeze-repeats truncate-set1 help version"),
    "truncate": gnu("cor:s:", "no-create io-blocks reference= size= help version"),
    "tsort": gnu("", "help version"),
    "tty": gnu("s", "silent quiet help version"),
    "uname": gnu(
        "asnrvmpio",
        (
            "all kernel-name nodename kernel-release kernel-version machine processor "
            "hardware-platform operating-system help version"
        ),
    ),
    "unexpand": gnu(",0123456789at:", "tabs= all first-only help version"),
    "uniq": gnu(
        "-0123456789Dcdf:is:uw:z",
        (
            "count repeated all-repeated=? group=? ignore-case unique skip-fields= skip-chars= "
            "check-chars= zero-terminated help version"
        ),
    ),
    "unlink": gnu("", "help version"),
    "users": gnu("", "help version"),
    "wc": gnu("clLmw", "bytes chars lines words files0-from= max-line-length help version"),
    "who": gnu(
        "abdlmpqrstuwHT",
        (
            "all boot count dead heading ips login lookup message mesg process runlevel short time users "
            "writable help version"
        ),
    ),
    "whoami": gnu("", "help version"),
    "yes": gnu("", "help version"),
}

"""Option tables of the other getopt-based tools the policy allows (Debian 12 versions): GNU grep 3.8,
sed 4.9, diffutils 3.8, gzip 1.12, findutils 4.9 (xargs), xz 5.4, util-linux 2.38, procps-ng 4.0.2,
psmisc, wget 1.21, and the small system tools.

Generated like ``optables_coreutils`` from the binaries' own getopt tables, then reviewed.
"""

from __future__ import annotations

from starweave.tools.servers.shell.options import OptSpec, gnu

TOOLS: dict[str, OptSpec] = {
    "grep": gnu(
        "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz",
        (
            "basic-regexp extended-regexp fixed-strings perl-regexp after-context= "
            "before-context= binary-files= byte-offset context= color=? colour=? count devices= "
            "directories= exclude= exclude-from= exclude-dir= file= files-with-matches "
            "files-without-match group-separator= help include= ignore-case no-ignore-case initial-tab "
            "label= line-buffered line-number line-regexp max-count= no-filename no-group-separator "
            "no-messages null null-data only-matching quiet recursive dereference-recursive regexp= "
            "invert-match silent text binary version with-filename word-regexp"
        ),
    ),
    "sed": gnu(
        "bsnrzuEe:f:l:i::V:",
        (
            " regexp-extended debug expression= file= in-place=? line-length= null-data "
            " quiet posix silent sandbox separate unbuffered version help follow-symlinks"
        ),
    ),
    "cmp": gnu("bci:ln:sv", "print-bytes ignore-initial= verbose bytes= silent quiet version help"),
    "diff": gnu(
        "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ",
        (
            " brief color=? context=? ed exclude= exclude-from= expand-tabs "
            " from-file= help horizon-lines= ifdef= ignore-all-space ignore-blank-lines "
            "ignore-case ignore-file-name-case ignore-matching-lines= ignore-space-change "
            "ignore-tab-expansion ignore-trailing-space initial-tab label= left-column "
            "line-format= minimal new-file no-dereference "
            "no-ignore-file-name-case normal paginate palette= rcs "
            "recursive report-identical-files show-c-function show-function-line= "
            "side-by-side speed-large-files starting-file= strip-trailing-cr suppress-blank-empty "
            "suppress-common-lines tabsize= text to-file=   "
            "unidirectional-new-file unified=? version width="
        ),
    ),
    "gzip": gnu(
        "ab:cdfhH?klLmMnNqrS:tvVZ123456789",
        (
            "  stdout decompress force help keep list license no-name name quiet "
            " synchronous recursive suffix= test verbose version fast best rsyncable"
        ),
    ),
    "xz": gnu(
        "cC:defF:hHlkM:qQrS:tT:vVz0123456789",
        (
            "compress decompress test list keep force stdout single-stream no-sparse "
            "suffix= files=? files0=? format= check= ignore-check block-size= block-list= "
            "memlimit-compress= memlimit-decompress= memlimit-mt-decompress= memlimit=  no-adjust "
            "threads= flush-timeout= extreme lzma1=? lzma2=? x86=? powerpc=? ia64=? arm=? "
            "armthumb=? arm64=? sparc=? delta=? quiet verbose no-warn robot info-memory help long-help "
            "version"
        ),
    ),
    "xargs": gnu(
        "+0a:E:e::i::I:l::L:n:oprs:txP:d:",
        (
            "null arg-file= delimiter= eof=? replace=? max-lines=? max-args= open-tty interactive "
            "no-run-if-empty max-chars= verbose show-limits exit max-procs= process-slot-var= version "
            "help"
        ),
    ),
    "column": gnu(
        "c:dE:eH:hi:Jl:LN:n:O:o:p:R:r:s:T:tVW:x",
        (
            " fillrows help json keep-empty-lines output-separator= output-width= separator= "
            "table table-columns= table-columns-limit= table-hide= table-name= table-noextreme= "
            "table-noheadings table-order= table-right= table-truncate= table-wrap=  "
            "table-header-repeat tree= tree-id= tree-parent= version"
        ),
    ),
    "hexdump": gnu(
        "bcCde:f:L::n:os:vxhV",
        (
            "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex "
            "format= format-file= color=? length= skip= no-squeezing help version"
        ),
    ),
    "look": gnu("adft:Vh", "alternative alphanum ignore-case terminate= version help"),
    "lscpu": gnu(
        "aBbC::ce::hJp::s:xyV",
        (
            "all online bytes caches=? offline help extended=? json parse=? sysroot= physical hex version "
            "output-all"
        ),
    ),
    "namei": gnu("hVlmnovx", "help version mountpoints modes owners long vertical"),
    "rev": gnu("Vh", "version help"),
    "lsblk": gnu(
        "AabdDzE:e:fhJlnMmo:OpPiI:rstVST::w:x:y",
        (
            "all bytes nodeps noempty discard dedup= zoned help json output= output-all merge perms "
            "noheadings list ascii raw inverse fs exclude= include= topology paths pairs scsi sort= "
            "sysroot= shell tree=? version width="
        ),
    ),
    "findmnt": gnu(
        "AabCcDd:ehiJfF:o:O:p::PklmM:nN:rst:uvRS:T:Uw:Vxy",
        (
            "all ascii bytes canonicalize direction= df evaluate first-only fstab help invert json kernel "
            "list mountpoint= mtab noheadings notruncate options= output= output-all poll=? pairs raw "
            "types= nocanonicalize nofsroot submounts source= tab-file= task= target= timeout= uniq "
            "verify version shell verbose tree real pseudo vfs-all shadowed"
        ),
    ),
    "free": gnu(
        "bkmghltvc:ws:V",
        (
            "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total committed "
            "seconds= count= wide help version"
        ),
    ),
    "pgrep": gnu(
        "lad:vwLF:cfinoxP:O:Ag:s:u:U:G:t:r:?Vh",
        (
            " ignore-ancestors count cgroup= delimiter= list-name list-full full pgroup= group= "
            "ignore-case newest oldest older= parent= session= terminal= euid= uid= inverse lightweight "
            "exact pidfile= logpidfile ns= nslist=  runstates= help version"
        ),
    ),
    "pkill": gnu(
        "eq:LF:cfinoxP:O:Ag:s:u:U:G:t:r:?Vh",
        (
            "signal= ignore-ancestors count cgroup=    full pgroup= group= "
            "ignore-case newest oldest older= parent= session= terminal= euid= uid=   "
            "exact pidfile= logpidfile echo ns= nslist= queue= runstates= help version"
        ),
    ),
    "top": gnu(
        "bcd:E:e:Hhin:Oo:p:SsU:u:Vw::1",
        (
            "batch-mode cmdline-toggle delay= scale-summary-mem= scale-task-mem= threads-show help "
            "idle-toggle iterations= list-fields sort-override= pid= accum-time-toggle secure-mode "
            "filter-any-user= filter-only-euser= version width=? single-cpu-toggle"
        ),
    ),
    "uptime": gnu("phsV", "pretty help since version"),
    "vmstat": gnu(
        "afmnsdDp:S:wthVy",
        (
            "active forks slabs one-header stats disk disk-sum partition= unit= wide timestamp help "
            "version no-first"
        ),
    ),
    "w": gnu("husfoVi", "no-header no-current short from old-style ip-addr help version"),
    "kill": gnu("l::Ls:hVq:", "list=? table signal= help version queue="),
    "killall": gnu(
        "egy:o:ilqrs:u:vwZ:VIn:",
        (
            "exact ignore-case process-group younger-than= older-than= interactive quiet "
            "regexp signal= user= verbose wait ns= context= version"
        ),
        long_only=True,
    ),
    "pidof": gnu(
        "qhco:d:sxzn",
    ),
    "bc": gnu("chilqswv", " help interactive mathlib quiet standard version warn"),
    "file": gnu(
        "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0",
        (
            "help version magic-file= uncompress uncompress-noreport brief checking-printout exclude= "
            "exclude-quiet= files-from= separator= mime apple extension mime-type mime-encoding "
            "keep-going list dereference no-dereference no-buffer no-pad print0 preserve-date parameter= "
            "raw special-files no-sandbox compile debug"
        ),
    ),
    "hostname": gnu(
        "aAdfbF:h?iIsVy",
        ("domain boot file= fqdn all-fqdns help long short version alias ip-address all-ip-addresses nis yp"),
    ),
    "netstat": gnu(
        "A:CFMacdeghilnNoprsStuUvVWw2fx64?Z",
        (
            "ax25 ipx netrom unix version interfaces "
            "help route masquerade tcp sctp udp udplite raw unix listening all "
            "timers continuous extend programs verbose statistics wide numeric numeric-hosts "
            "numeric-ports numeric-users symbolic cache fib groups context"
        ),
    ),
    "ss": gnu(
        "dhaletuwxnro460spTbEf:mMiA:D:F:vVzZN:KHSO",
        (
            "numeric resolve options extended memory info processes threads bpf events dccp tcp sctp udp "
            "raw unix tipc vsock all listening ipv4 ipv6 packet family= socket= query= summary diag= "
            "filter= version help context contexts net= tipcinfo tos cgroup kill no-header xdp mptcp "
            "oneline inet-sockopt"
        ),
    ),
    "lsattr": gnu(
        "RVadlvp",
    ),
    "strings": gnu(
        "adfhHn:wot:e:T:s:U:Vv0123456789",
        (
            "all bytes= data encoding= help include-all-whitespace output-separator= print-file-name "
            "radix= target= unicode= version"
        ),
    ),
    "time": gnu("+af:o:pqvV", "append format= help portability quiet verbose version"),
    "wget": gnu(
        "A:Ea:bKB:ckdP:D:X:e:xFhEI:46i:l:mn:O:o:pY:qQ:rR:LSHT:Nt:U:vVw:",
        (
            "accept= accept-regex= adjust-extension=?  append-output= ask-password=? "
            " auth-no-challenge=?  background=?  "
            "backup-converted=?  backups=?  base= bind-address= body-data= "
            "body-file= ca-certificate= ca-directory=  no-cache certificate= certificate-type= "
            " no-check-certificate compression= config= connect-timeout= "
            "continue=?  convert-file-only=?  convert-links=? "
            " content-disposition=?  content-on-error=? "
            "  no-cookies crl-file= cut-dirs= debug=?  default-page= "
            "delete-after=?   no-directories directory-prefix=  "
            "no-dns-cache dns-timeout= domains=    "
            "exclude-directories= exclude-domains= execute= follow-ftp=?  follow-tags= "
            "force-directories=?  force-html=?  ftp-password= ftp-user= "
            "ftps-clear-data-connection=?  ftps-fallback-to-ftp=? "
            " ftps-implicit=?  ftps-resume-ssl=? "
            "  no-glob header= help no-host-directories "
            "no-hsts hsts-file=      "
            "no-http-keep-alive http-password= http-user= https-only=?  "
            "ignore-case=?  ignore-length=?  ignore-tags= "
            "include-directories= inet4-only=?  inet6-only=?  input-file=  "
            "no-iri keep-session-cookies=?  level= "
            "limit-rate= load-cookies= local-encoding= rejected-log= max-redirect= method= mirror=? "
            "  no-netrc no-clobber=?  no-config=?  "
            "no-parent=?  output-document= output-file= page-requisites=?  "
            "  no-passive-ftp password= pinnedpubkey= post-data= post-file= "
            "prefer-family= preserve-permissions=?  ciphers= private-key= "
            "private-key-type= progress= show-progress=?  protocol-directories=? "
            "  no-proxy proxy-password= "
            "proxy-user= quiet=?  quota=  random-wait=?  read-timeout= "
            "recursive=?  referer= regex-type= reject= reject-regex= relative=?  "
            "remote-encoding=  no-remove-listing report-speed=?  "
            "restrict-file-names=?  retr-symlinks=?  "
            "retry-connrefused=?    "
            "retry-on-http-error= save-cookies= save-headers=?  secure-protocol= "
            "server-response=?  span-hosts=?  spider=?  "
            "start-pos= strict-comments=?  timeout= timestamping=?  "
            " no-if-modified-since tries= unlink=?  trust-server-names=? "
            " use-askpass=  no-use-server-timestamps user= "
            "user-agent= verbose=? no-verbose version wait= waitretry= warc-cdx=?  "
            " no-warc-compression warc-dedup=  no-warc-digests warc-file= "
            "warc-header=  no-warc-keep-log warc-max-size= warc-tempdir= xattr=? "
        ),
    ),
    "lspci": gnu(
        "nvbxs:d:tPi:mgp:qkMDQA:GO:H:F:",
    ),
    "lsusb": gnu("D:vtP:p:s:d:Vh", "version verbose help tree"),
    "cal": gnu(
        "31A:B:Cd:eH:hjJm:ops:wySMW:b",
    ),
    "getfacl": gnu(
        "aceEsRLPtpndvh",
        (
            "access omit-header all-effective no-effective skip-base recursive logical physical tabular "
            "absolute-names numeric one-file-system default version help"
        ),
    ),
    "ping": gnu(
        "h?4bRT:6F:N:aABc:CdDe:fi:I:l:Lm:M:nOp:qQ:rs:S:t:UvVw:W:",
    ),
    "nc": gnu(
        "46bCDdFhI:i:klM:m:NnO:P:p:q:rSs:T:tUuV:vW:w:X:x:Zz",
    ),
    "ncat": gnu(
        "46UCc:e:g:G:i:km:hp:d:lo:x:ts:uvw:nz",
        (
            "  unixsock vsock crlf exec= sh-exec= lua-exec=  max-conns= help "
            "delay= listen output= hex-dump= append-output idle-timeout= keep-open recv-only source-port= "
            "source= send-only no-shutdown broker chat deny= denyfile= allow= allowfile= telnet udp "
            "sctp version verbose wait= nodns proxy= proxy-type= proxy-auth= proxy-dns=  "
            " ssl ssl-cert= ssl-key= ssl-verify ssl-trustfile= ssl-ciphers= ssl-servername= ssl-alpn="
        ),
    ),
}

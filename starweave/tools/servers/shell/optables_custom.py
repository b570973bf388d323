"""Option tables written by hand for tools that do not use glibc's getopt tables (argp, their own
parsers), from their ``--help`` and manuals (Debian 12 versions: GNU tar 1.34, glibc 2.36 iconv and
locale, curl 7.88, OpenSSH 9.2, mawk 1.3.4, gawk 5.2, bzip2 1.0.8, zstd 1.5.4, tree 2.1).

``READ_ANYTHING`` lists tools that can neither write a file nor run a program whatever their options
(DNS lookups, traceroute, system statistics): they parse no table (``FREE``) and every word that looks
like a path is checked as a read.
"""

from __future__ import annotations

from starweave.tools.servers.shell.options import FREE, OptSpec, gnu

READ_ANYTHING = ("dig", "host", "nslookup", "traceroute", "lsmod", "iostat", "mpstat", "whereis")

TAR = gnu(
    "AcdrtuxgGnSC:T:X:kUWOmpsf:F:L:Mb:BiH:V:aI:jJzZhK:N:PlRvwo",
    (
        "catenate concatenate create delete diff compare append test-label list update extract get "
        "check-device listed-incremental= incremental hole-detection= ignore-failed-read level= "
        "no-check-device no-seek seek occurrence=? sparse-version= sparse add-file= directory= "
        "exclude= exclude-backups exclude-caches exclude-caches-all exclude-caches-under "
        "exclude-ignore= exclude-ignore-recursive= exclude-tag= exclude-tag-all= exclude-tag-under= "
        "exclude-vcs exclude-vcs-ignores no-null no-recursion no-unquote no-verbatim-files-from null "
        "verbatim-files-from recursion files-from= unquote exclude-from= anchored ignore-case "
        "no-anchored no-ignore-case no-wildcards no-wildcards-match-slash wildcards "
        "wildcards-match-slash keep-directory-symlink keep-newer-files keep-old-files no-overwrite-dir "
        "one-top-level=? overwrite overwrite-dir recursive-unlink remove-files skip-old-files "
        "unlink-first verify ignore-command-error no-ignore-command-error to-stdout to-command= "
        "atime-preserve=? clamp-mtime delay-directory-restore group= group-map= mode= mtime= touch "
        "no-delay-directory-restore no-same-owner no-same-permissions numeric-owner owner= owner-map= "
        "preserve-permissions same-permissions same-owner sort= preserve-order same-order acls "
        "no-acls no-selinux no-xattrs selinux xattrs xattrs-exclude= xattrs-include= force-local "
        "file= info-script= new-volume-script= tape-length= multi-volume rmt-command= rsh-command= "
        "volno-file= blocking-factor= read-full-records ignore-zeros record-size= format= old-archive "
        "portability pax-option= posix label= auto-compress use-compress-program= bzip2 xz lzip lzma "
        "lzop no-auto-compress zstd gzip gunzip ungzip compress uncompress backup=? hard-dereference "
        "dereference starting-file= newer-mtime= newer= after-date= one-file-system absolute-names "
        "suffix= strip-components= transform= xform= checkpoint=? checkpoint-action= full-time "
        "index-file= check-links no-quote-chars= quote-chars= quoting-style= block-number "
        "show-defaults show-omitted-dirs show-snapshot-field-ranges show-transformed-names "
        "show-stored-names totals=? utc verbose warning= interactive confirmation help restrict usage "
        "version"
    ),
)

CURL_SHORT = "aE:K:C:b:c:d:qD:fF:P:GgIH:h0ik46jlLMm:n:No:Z#xU:pQ:r:e:JORX:SsY:y:23t:z:1T:Bu:A:vVw:"
# curl 7.88 long options taking a value, and its switches (their --no- forms are not accepted here).
CURL_VALUE = (
    "abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config "
    "connect-timeout connect-to continue-at cookie cookie-jar create-file-mode crlfile curves data "
    "data-ascii data-binary data-raw data-urlencode delegation dns-interface dns-ipv4-addr "
    "dns-ipv6-addr dns-servers doh-url dump-header egd-file engine etag-compare etag-save "
    "expect100-timeout form form-string ftp-account ftp-alternative-to-user ftp-method ftp-port "
    "ftp-ssl-ccc-mode happy-eyeballs-timeout-ms header hostpubmd5 hostpubsha256 hsts interface json "
    "keepalive-time key key-type krb libcurl limit-rate local-port login-options mail-auth "
    "mail-from mail-rcpt max-filesize max-redirs max-time netrc-file noproxy oauth2-bearer output "
    "output-dir parallel-max pass pinnedpubkey proto proto-default proto-redir proxy-cacert "
    "proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile proxy-header proxy-key "
    "proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name proxy-tls13-ciphers "
    "proxy-tlsauthtype proxy-tlspassword proxy-tlsuser proxy-user proxy1.0 pubkey quote random-file "
    "range rate referer request request-target resolve retry retry-delay retry-max-time "
    "sasl-authzid service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname "
    "speed-limit speed-time stderr telnet-option tftp-blksize time-cond tls-max tls13-ciphers "
    "tlsauthtype tlspassword tlsuser trace trace-ascii unix-socket upload-file url url-query user "
    "user-agent write-out "
)
CURL_SWITCH = (
    "anyauth append basic cert-status compressed compressed-ssh create-dirs crlf digest disable "
    "disable-eprt disable-epsv disallow-username-in-url doh-cert-status doh-insecure fail "
    "fail-early fail-with-body false-start form-escape ftp-create-dirs ftp-pasv ftp-pret "
    "ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-control get globoff haproxy-protocol head help http0.9 "
    "http1.0 http1.1 http2 http2-prior-knowledge http3 http3-only ignore-content-length include "
    "insecure ipv4 ipv6 junk-session-cookies list-only location location-trusted "
    "mail-rcpt-allowfails manual metalink negotiate netrc netrc-optional next no-alpn no-buffer "
    "no-clobber no-keepalive no-npn no-progress-meter no-sessionid ntlm ntlm-wb parallel "
    "parallel-immediate path-as-is post301 post302 post303 preproxy progress-bar proxy "
    "proxy-anyauth proxy-basic proxy-digest proxy-insecure proxy-negotiate proxy-ntlm "
    "proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tlsv1 proxytunnel raw "
    "remote-header-name remote-name remote-name-all remote-time remove-on-error retry-all-errors "
    "retry-connrefused sasl-ir show-error silent socks5-basic socks5-gssapi socks5-gssapi-nec ssl "
    "ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2 sslv3 "
    "styled-output suppress-connect-headers tcp-fastopen tcp-nodelay tftp-no-options tlsv1 tlsv1.0 "
    "tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace-time use-ascii verbose version xattr "
)
CURL = gnu(CURL_SHORT, " ".join([f"{name}=" for name in CURL_VALUE.split()] + CURL_SWITCH.split()))

# OpenSSH uses BSD getopt (no permutation); the ssh rule parses its "options, host, options,
# command" order itself with these tables.
SSH = gnu("+1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy")
SCP = gnu("+12346ABCOpqRrsTvc:D:F:i:J:l:o:P:S:X:")
SFTP = gnu("+46AaCfNpqrvB:b:c:D:F:i:J:l:o:P:R:S:s:X:")

# mawk: -W takes one implementation option word (version, dump, interactive, exec, random=, ...).
MAWK = gnu("+f:F:v:W:")
# gawk 5.2 (not installed by default on Debian; the policy also runs it with --sandbox).
GAWK = gnu(
    "+F:f:v:W;bcCd::D::e:E:ghi:l:L::nNo::Op::MPrSstVYZ:",
    (
        "assign= bignum characters-as-bytes copyright debug=? dump-variables=? exec= field-separator= "
        "file= gen-pot help include= lint=? lint-old load= locale= non-decimal-data "
        "no-optimize optimize posix pretty-print=? profile=? re-interval sandbox source= traditional "
        "use-lc-numeric version csv"
    ),
)

CUSTOM: dict[str, OptSpec] = {
    **dict.fromkeys(READ_ANYTHING, FREE),
    "tar": TAR,
    "iconv": gnu("f:t:lco:sV?", "from-code= to-code= list output= silent verbose help usage version"),
    "locale": gnu("amckvV?", "all-locales charmaps category-name keyword-name verbose help usage version"),
    "getconf": gnu("+av:"),
    "which": gnu("as"),
    "which.debianutils": gnu("as"),
    "lsb_release": gnu("hvidrcas", "help version id description release codename all short"),
    "bzip2": gnu(
        "cdzkftqvsLV123456789",
        "help decompress compress keep force test stdout quiet verbose license version small fast best",
    ),
    "curl": CURL,
    "ssh": SSH,
    "scp": SCP,
    "sftp": SFTP,
    "mawk": MAWK,
    "gawk": GAWK,
    "tree": gnu(
        "acdfghilnpqrstuvxACDFJQNSUXRL:P:I:H:T:o:",
        (
            "gitignore gitfile= matchdirs metafirst ignore-case nolinks hintro= houtro= inodes device "
            "sort= dirsfirst filesfirst filelimit= si du prune charset= timefmt= fromfile fflinks info "
            "infofile= noreport version help"
        ),
    ),
    # zstd attaches numbers to -# -T -M -B (never the next word); -o and -D take the next word and
    # the zstd rule requires them as words of their own.
    "zstd": gnu(
        "0123456789dzkfcvqrlthHVT::M::B::o:D:",
        (
            "decompress keep rm force stdout verbose quiet test help version "
            "ultra fast=? long=?  progress format= output-dir-flat= output-dir-mirror= "
            " exclude-compressed check sparse rsyncable single-thread "
            "patch-from=  asyncio"
        ),
    ),
}

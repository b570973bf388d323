"""git 2.39's options: the global ones (parsed by git.c, exact names only) and, per allowed
subcommand, the parse-options table its ``git <subcommand> -h`` prints (generated from it, then
reviewed). Subcommands with sub-subcommands (stash, remote, worktree, notes, bundle, reflog) get the
union of their sub-subcommands' options.

``REV_STYLE`` subcommands also take the revision and diff options (``--stat``, ``--format``, ...),
which git matches by exact name only: the git rule lets those through and checks them by name.
"""

from __future__ import annotations

from starweave.tools.servers.shell.options import FREE, OptSpec, gnu

# Global options before the subcommand (git.c handle_options: exact names, no abbreviations).
GIT = gnu(
    "+C:c:pPhv",
    (
        "git-dir= work-tree= namespace= bare no-pager paginate no-replace-objects literal-pathspecs "
        "glob-pathspecs noglob-pathspecs icase-pathspecs no-optional-locks list-cmds= version help "
        "html-path man-path info-path"
    ),
)
REV_STYLE = frozenset(
    {"log", "show", "whatchanged", "diff", "rev-list", "shortlog", "format-patch", "reflog", "blame"}
)

GIT_SUBCOMMANDS: dict[str, OptSpec] = {
    # Pure revision/diff-option commands and plumbing with their own small parsers.
    "diff": gnu(""),
    "rev-list": gnu(""),
    "rev-parse": FREE,
    "var": gnu("l"),
    "add": gnu(
        "ANefinpuv",
        (
            "all chmod= dry-run edit force ignore-errors ignore-missing ignore-removal intent-to-add "
            "interactive patch pathspec-file-nul pathspec-from-file= refresh renormalize sparse "
            "update verbose"
        ),
    ),
    "apply": gnu(
        "3C:NRp:qvz",
        (
            "3way allow-empty allow-overlap apply build-fake-ancestor= cached check directory= "
            "exclude= ignore-space-change ignore-whitespace inaccurate-eof include= index "
            "intent-to-add no-add numstat quiet recount reject reverse stat summary unidiff-zero "
            "unsafe-paths verbose whitespace="
        ),
    ),
    "archive": gnu(
        "0123456789lo:v",
        (
            "add-file= add-virtual-file= exec= format= list output= prefix= remote= verbose "
            "worktree-attributes"
        ),
    ),
    "blame": gnu(
        "C::L:M::S:bceflnpstw",
        (
            "abbrev=? color-by-age color-lines contents= ignore-rev= ignore-revs-file= incremental "
            "line-porcelain minimal porcelain progress root score-debug show-email show-name "
            "show-number show-stats"
        ),
    ),
    "branch": gnu(
        "CDMacdfilmqrt::u:v",
        (
            "abbrev=? all color=? column=? contains= copy create-reflog delete edit-description force "
            "format= ignore-case list merged= move no-contains= no-merged= points-at= quiet "
            "recurse-submodules remotes set-upstream-to= show-current sort= track=? unset-upstream "
            "verbose"
        ),
    ),
    "bundle": gnu(
        "q",
        "all-progress all-progress-implied progress quiet version=",
    ),
    "cat-file": gnu(
        "epstz",
        (
            "allow-unknown-type batch=? batch-all-objects batch-check=? batch-command=? buffer "
            "filters follow-symlinks mailmap path= textconv unordered use-mailmap"
        ),
    ),
    "check-ignore": gnu(
        "nqvz",
        "no-index non-matching quiet stdin verbose",
    ),
    "checkout": gnu(
        "23B:b:dflmpqt::",
        (
            "conflict= detach force guess ignore-other-worktrees ignore-skip-worktree-bits merge "
            "orphan= ours overlay overwrite-ignore patch pathspec-file-nul pathspec-from-file= "
            "progress quiet recurse-submodules=? theirs track=?"
        ),
    ),
    "cherry-pick": gnu(
        "S::X:em:nsx",
        (
            "abort allow-empty allow-empty-message cleanup= continue edit ff gpg-sign=? "
            "keep-redundant-commits mainline= no-commit quit rerere-autoupdate signoff skip strategy= "
            "strategy-option="
        ),
    ),
    "clean": gnu(
        "Xde:finqx",
        "dry-run exclude= force interactive quiet",
    ),
    "clone": gnu(
        "46b:c:j:lno:qsu:v",
        (
            "also-filter-submodules bare branch= bundle-uri= config= depth= dissociate filter= ipv4 "
            "ipv6 jobs= local mirror no-checkout no-hardlinks no-tags origin= progress quiet "
            "recurse-submodules=? recursive=? reference= reference-if-able= reject-shallow "
            "remote-submodules separate-git-dir= server-option= shallow-exclude= shallow-since= "
            "shallow-submodules shared single-branch sparse template= upload-pack= verbose"
        ),
    ),
    "commit": gnu(
        "C:F:S::ac:eim:nopqst:u::vz",
        (
            "ahead-behind all amend author= branch cleanup= date= dry-run edit file= fixup= "
            "gpg-sign=? include interactive long message= no-post-rewrite no-verify null only patch "
            "pathspec-file-nul pathspec-from-file= porcelain quiet reedit-message= reset-author "
            "reuse-message= short signoff squash= status template= trailer= untracked-files=? verbose"
        ),
    ),
    "config": gnu(
        "ef:lt:z",
        (
            "add blob= bool bool-or-int bool-or-str default= edit expiry-date file= fixed-value get "
            "get-all get-color get-colorbool get-regexp get-urlmatch global includes int list local "
            "name-only null path remove-section rename-section replace-all show-origin show-scope "
            "system type= unset unset-all worktree"
        ),
    ),
    "count-objects": gnu(
        "Hv",
        "human-readable verbose",
    ),
    "describe": gnu(
        "",
        (
            "abbrev=? all always broken=? candidates= contains debug dirty=? exact-match exclude= "
            "first-parent long match= tags"
        ),
    ),
    "fetch": gnu(
        "46Pafj:kmno:pqtuv",
        (
            "all append atomic auto-gc auto-maintenance deepen= depth= dry-run filter= force ipv4 "
            "ipv6 jobs= keep multiple negotiate-only negotiation-tip= prefetch progress prune "
            "prune-tags quiet recurse-submodules=? refetch refmap= server-option= set-upstream "
            "shallow-exclude= shallow-since= show-forced-updates stdin tags unshallow update-head-ok "
            "update-shallow upload-pack= verbose write-commit-graph write-fetch-head"
        ),
    ),
    "for-each-ref": gnu(
        "ps",
        (
            "color=? contains= count= format= ignore-case merged= no-contains= no-merged= perl "
            "points-at= python shell sort= tcl"
        ),
    ),
    "format-patch": gnu(
        "Nkno:pqsv:",
        (
            "add-header= attach=? base= cc= cover-from-description= cover-letter creation-factor= "
            "filename-max-length= force-in-body-from from=? ignore-if-in-upstream in-reply-to= "
            "inline=? interdiff= keep-subject no-binary no-numbered no-stat numbered numbered-files "
            "output-directory= progress quiet range-diff= reroll-count= rfc signature= "
            "signature-file= signoff start-number= stdout subject-prefix= suffix= thread=? to= "
            "zero-commit"
        ),
    ),
    "gc": gnu(
        "q",
        "aggressive auto cruft force keep-largest-pack prune=? quiet",
    ),
    "grep": gnu(
        "0123456789A:B:C:EFGHILO::PWace:f:hilm:nopqrvwz",
        (
            "after-context= all-match and basic-regexp before-context= break cached color=? column "
            "context= count exclude-standard ext-grep extended-regexp files-with-matches "
            "files-without-match fixed-strings full-name function-context heading ignore-case "
            "invert-match line-number max-count= max-depth= name-only no-index not null only-matching "
            "open-files-in-pager=? or perl-regexp quiet recurse-submodules recursive show-function "
            "text textconv threads= untracked word-regexp"
        ),
    ),
    "init": gnu(
        "b:q",
        "bare initial-branch= object-format= quiet separate-git-dir= shared=? template=",
    ),
    "log": gnu(
        "L:q",
        (
            "clear-decorations decorate=? decorate-refs= decorate-refs-exclude= mailmap quiet source "
            "use-mailmap"
        ),
    ),
    "ls-files": gnu(
        "X:cdfikmostuvx:z",
        (
            "abbrev=? cached debug deduplicate deleted directory empty-directory eol error-unmatch "
            "exclude= exclude-from= exclude-per-directory= exclude-standard format= full-name ignored "
            "killed modified others recurse-submodules resolve-undo sparse stage unmerged with-tree="
        ),
    ),
    "ls-remote": gnu(
        "ho:qt",
        "exit-code get-url heads quiet refs server-option= sort= symref tags upload-pack=",
    ),
    "ls-tree": gnu(
        "dlrtz",
        "abbrev=? format= full-name full-tree long name-only name-status object-only",
    ),
    "merge": gnu(
        "F:S::X:em:nqs:v",
        (
            "abort allow-unrelated-histories autostash cleanup= commit continue edit ff ff-only file= "
            "gpg-sign=? into-name= log=? message= no-verify overwrite-ignore progress quiet quit "
            "rerere-autoupdate signoff squash stat strategy= strategy-option= summary verbose "
            "verify-signatures"
        ),
    ),
    "merge-base": gnu(
        "a",
        "all fork-point independent is-ancestor octopus",
    ),
    "mktree": gnu(
        "z",
        "batch missing",
    ),
    "mv": gnu(
        "fknv",
        "dry-run force sparse verbose",
    ),
    "name-rev": gnu(
        "",
        "all always annotate-stdin exclude= name-only refs= stdin tags undefined",
    ),
    "notes": gnu(
        "C:F:c:fm:nqs:v",
        (
            "abort allow-empty commit dry-run file= for-rewrite= force ignore-missing message= quiet "
            "reedit-message= ref= reuse-message= stdin strategy= verbose"
        ),
    ),
    "prune": gnu(
        "nv",
        "dry-run exclude-promisor-objects expire= progress verbose",
    ),
    "pull": gnu(
        "46S::X:afj::kno:pqr::s:tv",
        (
            "all allow-unrelated-histories append autostash cleanup= commit deepen= depth= dry-run "
            "edit ff ff-only force gpg-sign=? ipv4 ipv6 jobs=? keep log=? negotiation-tip= progress "
            "prune quiet rebase=? recurse-submodules=? refmap= server-option= set-upstream "
            "shallow-exclude= shallow-since= show-forced-updates signoff=? squash stat strategy= "
            "strategy-option= tags unshallow update-shallow upload-pack= verbose verify "
            "verify-signatures"
        ),
    ),
    "push": gnu(
        "46dfno:quv",
        (
            "all atomic delete dry-run exec= follow-tags force force-if-includes force-with-lease=? "
            "ipv4 ipv6 mirror no-verify porcelain progress prune push-option= quiet receive-pack= "
            "recurse-submodules= repo= set-upstream signed=? tags thin verbose"
        ),
    ),
    "rebase": gnu(
        "C:S::X:fimnqr::s:vx:",
        (
            "abort apply autosquash autostash committer-date-is-author-date continue edit-todo empty= "
            "exec= force-rebase fork-point gpg-sign=? ignore-whitespace interactive keep-base merge "
            "no-ff no-stat no-verify onto= quiet quit reapply-cherry-picks rebase-merges=? "
            "rerere-autoupdate reschedule-failed-exec reset-author-date root show-current-patch "
            "signoff skip strategy= strategy-option= update-refs verbose whitespace="
        ),
    ),
    "reflog": gnu(
        "",
        "all dry-run expire= expire-unreachable= rewrite stale-fix updateref verbose",
    ),
    "remote": gnu(
        "adfm:npt:v",
        ("add all auto delete dry-run fetch master= mirror=? progress prune push tags track= verbose"),
    ),
    "reset": gnu(
        "Npq",
        (
            "hard intent-to-add keep merge mixed no-refresh patch pathspec-file-nul "
            "pathspec-from-file= quiet recurse-submodules=? soft"
        ),
    ),
    "restore": gnu(
        "23SWmpqs:",
        (
            "conflict= ignore-skip-worktree-bits ignore-unmerged merge ours overlay patch "
            "pathspec-file-nul pathspec-from-file= progress quiet recurse-submodules=? source= staged "
            "theirs worktree"
        ),
    ),
    "revert": gnu(
        "S::X:em:ns",
        (
            "abort cleanup= continue edit gpg-sign=? mainline= no-commit quit reference "
            "rerere-autoupdate signoff skip strategy= strategy-option="
        ),
    ),
    "rm": gnu(
        "fnqr",
        "cached dry-run force ignore-unmatch pathspec-file-nul pathspec-from-file= quiet sparse",
    ),
    "shortlog": gnu(
        "censw::",
        "committer email group= numbered summary",
    ),
    "show": gnu(
        "L:q",
        (
            "clear-decorations decorate=? decorate-refs= decorate-refs-exclude= mailmap quiet source "
            "use-mailmap"
        ),
    ),
    "show-ref": gnu(
        "dqs::",
        "abbrev=? dereference exclude-existing=? hash=? head heads quiet tags verify",
    ),
    "stash": gnu(
        "Sakm:pqu",
        (
            "all include-untracked index keep-index message= only-untracked patch pathspec-file-nul "
            "pathspec-from-file= quiet staged"
        ),
    ),
    "status": gnu(
        "M::bsu::vz",
        (
            "ahead-behind branch column=? find-renames=? ignore-submodules=? ignored=? long "
            "no-renames null porcelain=? short show-stash untracked-files=? verbose"
        ),
    ),
    "switch": gnu(
        "C:c:dfmqt::",
        (
            "conflict= create= detach discard-changes force force-create= guess "
            "ignore-other-worktrees merge orphan= overwrite-ignore progress quiet "
            "recurse-submodules=? track=?"
        ),
    ),
    "tag": gnu(
        "F:adefilm:n::su:v",
        (
            "annotate cleanup= color=? column=? contains= create-reflog delete edit file= force "
            "format= ignore-case list local-user= merged= message= no-contains= no-merged= points-at= "
            "sign sort= verify"
        ),
    ),
    "update-index": gnu(
        "gqz",
        (
            "add again assume-unchanged cacheinfo= chmod= clear-resolve-undo force-remove "
            "force-untracked-cache force-write-index fsmonitor fsmonitor-valid ignore-missing "
            "ignore-skip-worktree-entries ignore-submodules index-info index-version= info-only "
            "no-assume-unchanged no-fsmonitor-valid no-skip-worktree really-refresh refresh remove "
            "replace skip-worktree split-index stdin test-untracked-cache unmerged unresolve "
            "untracked-cache verbose"
        ),
    ),
    "version": gnu(
        "",
        "build-options",
    ),
    "whatchanged": gnu(
        "L:q",
        (
            "clear-decorations decorate=? decorate-refs= decorate-refs-exclude= mailmap quiet source "
            "use-mailmap"
        ),
    ),
    "worktree": gnu(
        "B:b:dfnqvz",
        ("checkout detach dry-run expire= force guess-remote lock porcelain quiet reason= track verbose"),
    ),
}

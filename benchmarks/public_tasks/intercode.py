"""InterCode-Bash queries for the LinuxAgent, each on its prepared file tree in the workspace.

Source: ``princeton-nlp/intercode``, ``data/nl2bash/nl2bash_fs_{1,2,3,4}.json`` (lists of
``{"query", "gold"}``; the index of each query is in the comment above it), on the trees of
``docker/bash_scripts/setup_nl2b_fs_{1,2,3}.sh`` as :mod:`public_tasks.trees` re-creates them (fs_4's
queries need no tree: an empty workspace). The queries are InterCode's, with the tree's root
(``/testbed``, ``/system``, ``/workspace``) rewritten to the current folder; the gold commands are
InterCode's with the same rewrite (``/testbed/dir1`` → ``dir1``, ``/testbed`` → ``.``).

The check (:func:`public_tasks.common.intercode_check`) runs the gold command on a fresh copy of the
tree and compares the agent's answer with what it printed (``answer``), the agent's tree with the
gold run's tree (``tree``), or both; each task says which.

Left out, and why (indices into each file; every query not listed here is in the suite):

* writes outside the workspace or needs root: fs_1 45 (``/backup1.tar``), 46 (``/var/log``), 57 (a
  link in ``/``); fs_2 40 (a link in ``/``), 44 (``/backup``); fs_3 11, 12 (move to ``/``), 32
  (``/usr``), 42 (``~/newlinks``), 53 (a link in ``/``), 56 (``/output_prefix``), 58 (``/backup``).
* needs the network: fs_2 49 (curl); fs_4 1, 12, 19 (dig, ping).
* reads this machine (host, users, processes, mounts, clock, environment), which a check cannot pin
  down: fs_1 6, 7, 9, 38; fs_2 36, 42, 52; fs_3 3 (access times, which the agent's own reading
  changes), 14, 16, 34, 49 (``du`` of folders), 26, 33 (``ls -l`` times), 30 (``cd``), 44, 50
  (``df``); fs_4 0, 2, 4, 5, 7, 9, 10, 11, 16, 17, 18, 21, 22, 24, 25.
* needs a program this machine lacks: fs_1 11 (``compress``); fs_2 2, 3 (``tree``), 9 (``rename``);
  fs_3 54 (``tree``); fs_4 23 (``cal``).
* a gold command that is broken, does not do what its query asks, or has no fair answer: fs_1 1, 3
  (hashes the paths as typed), 2, 30 (unset variables), 12 (``xargs -0`` on lines), 14 (averages
  the total line too), 16 (prints every .txt file), 26, 29, 32 (count what the tree does not have),
  58 (prints nothing), 31 (counts per extension for "how many"), 43, 54 (mangled lines and paths),
  48-51 (ties between equal sizes); fs_2 4 (runs a folder as a command), 23 (``-type f`` for
  folders), 29, 26, 30, 31, 35 (match nothing or compare a folder with itself), 45 (copies what it
  should skip), 10 (process-substitution order), 12 (greps a binary stream), 37, 38 (ties), 39
  (archives the folder, not the recent files), 43 (order of ``find``, and ``cat`` into its own
  input); fs_3 2 (the whole tree), 19 (only ``.``), 21, 22 (ties), 15 (a one-word answer any reply
  holds), 28 (``ls -p`` of folders into md5sum), 29 (the hash depends on the sort locale), 36 (a
  no-op), 37 (blocks for "bytes"), 45, 48 (dumps of binary zeros and floats).
* a near-duplicate of another query (the same command on the same tree), or left out to keep the
  suite near 45 InterCode tasks: fs_1 5, 24 (hashes of .py files, as 4), 15 (as 19), 27 (as 8), 20,
  21-23, 25, 28, 34-37, 39-42, 55, 56 (line counts and greps like 33 and 59); fs_2 5 (as 16), 7 (as
  6), 13, 47 (``od`` dumps), 14, 15, 20, 21, 24 (removal by name, as 8), 17, 25, 41 (removal by age,
  as 32), 18 (as 19), 28, 34, 50; fs_3 0, 4, 6 (listings, as 5), 8, 10 (long listings, as 9), 17,
  18, 20, 24, 25, 31, 40, 41 (as 39), 46, 52, 55; fs_4 13, 14 (string edits, as 15), 20, 26.
"""

from __future__ import annotations

from public_tasks.common import PublicTask, intercode_check
from public_tasks.trees import TREES

REPO = "princeton-nlp/intercode"


def query(
    fs: int,
    index: int,
    request: str,
    gold: str,
    mode: str,
    ordered: bool = False,
    keep: str | None = None,
) -> PublicTask:
    """InterCode query ``index`` of ``nl2bash_fs_<fs>.json`` on its tree, checked in ``mode``."""
    setup = TREES[f"fs{fs}"]
    return PublicTask(
        name=f"intercode-fs{fs}-{index:02d}",
        request=request,
        check=intercode_check(setup, gold, mode, ordered, keep),
        setup=setup,
        gold=gold,
        source=f"{REPO} data/nl2bash/nl2bash_fs_{fs}.json [{index}]",
    )


TASKS: list[PublicTask] = [
    # ---- fs_1 (setup_nl2b_fs_1.sh, /testbed) ----
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [0]
    query(
        1,
        0,
        'Calculate a list of duplicate md5 sum hashes for all the ".java" files in the current directory',
        "md5sum *.java | awk '{print $1}' | sort | uniq -d",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [4]
    query(
        1,
        4,
        'Calculate the md5 sum of the sorted list of md5 sums of all ".py" files under dir1/subdir1',
        "find dir1/subdir1 -type f -name *.py -exec md5sum {} + | awk '{print $1}' | sort | md5sum",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [8]
    query(
        1,
        8,
        "Change permissions for all PHP files under the current directory tree to 755 and print the number "
        "of files changed",
        r'find . -name "*.php" -exec chmod 755 {} \; -exec /bin/echo {} \; | wc -l',
        "both",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [10]
    query(
        1,
        10,
        "Check if the contents of file dir3/subdir1/subsubdir1/textfile3.txt is a subset of file "
        "dir2/subdir1/textfile2.txt",
        "comm -23 <(sort dir3/subdir1/subsubdir1/textfile3.txt | uniq) <(sort dir2/subdir1/textfile2.txt "
        "| uniq) | head -1",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [13]
    query(
        1,
        13,
        "Compute the mean average of the word count of *.txt files in the current directory",
        "find . -name '*.txt' -print0 | xargs -0 wc -w | awk 'END { print $1/(NR-1) }'",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [17]
    query(
        1,
        17,
        'Convert the first 16 characters in "textfile7.txt" to a single hexadecimal value',
        "head textfile7.txt -c16 | od -tx1 -w16 | head -n1 | cut -d' ' -f2- | tr -d ' '",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [18]
    query(
        1,
        18,
        'Copies all files under the current folder like "file.txt" with "FooBar" in the path to the root '
        "of the current folder, preserving mode, ownership and timestamp attributes.",
        'find . -name "file.txt"| grep "FooBar" | xargs -i cp -p "{}" .',
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [19]
    query(
        1,
        19,
        'Copy all files below the current directory whose names contain "FooBar" to directory '
        "'dir3/subdir1/subsubdir1/tmp'",
        "find . -name '*FooBar*' -print0 | xargs -0 -I{} cp -R {} dir3/subdir1/subsubdir1/tmp",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [33]
    query(
        1,
        33,
        "Counts all files in the current folder and subfolders.",
        r"find . -type f -exec ls -l {} \; | wc -l",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [44]
    query(
        1,
        44,
        'Create an empty file "abc.txt" in each directory named "dir1" under the current directory.',
        r"""find . -type d -name "dir1" -print |  sed 's/$/\/abc.txt/g' | xargs touch""",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [47]
    query(
        1,
        47,
        'Delete and count files in "dir3/subdir1/subsubdir1/tmp" that are older than 2 days',
        "find dir3/subdir1/subsubdir1/tmp -type f -mtime +2 -print0 | xargs -0 rm -f",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [52]
    query(
        1,
        52,
        "Find .java files in the current directory tree that contain 'Hello', and print their names",
        'find . -name "*.java" -exec grep -Hin Hello {} + | cut -d ":" -f 1 | xargs -I{} basename {}',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [53]
    query(
        1,
        53,
        "Print a list of all duplicate case insensitive filenames in the current directory tree",
        "find . -type f | awk -F/ '{print $NF}' | sort -f | uniq -i -d",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_1.json [59]
    query(
        1,
        59,
        'search for php files in the current directory and search for "world" in all these files',
        r"""find . -name '*.php' -exec grep -iq "world" {} \; -print""",
        "answer",
    ),
    # ---- fs_2 (setup_nl2b_fs_2.sh, /system) ----
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [0]
    query(
        2,
        0,
        "Recursively finds all files with any cased text \"Hello\" in the 'folder1' folder, and precedes "
        "found string with its number in file.",
        'grep -inr "Hello" folder1',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [1]
    query(
        2,
        1,
        'Recursively finds all files with whole word "foo" in the current directory, and precedes found '
        "string with its number in file.",
        'grep -rnw . -e "foo"',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [6]
    query(
        2,
        6,
        "Recursively removes all empty folders from the folder3/temp folder.",
        r"find folder3/temp -depth -type d -exec rmdir {} \;",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [8]
    query(
        2,
        8,
        "Recursively removes all files in the folder1 folder but '*txt' files.",
        "find folder1 -type f -not -name '*txt' | xargs rm",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [11]
    query(
        2,
        11,
        'Recursively search for all regular files below directory "folder3/", and output the name of '
        "each, without any containing directories.",
        r"find folder3/ -type f -exec basename {} \;",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [16]
    query(
        2,
        16,
        "Remove all *.txt files in the current directory but not in it's subdirectories",
        "find . -maxdepth 1 -name '*.txt' -maxdepth 1 | xargs rm",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [19]
    query(
        2,
        19,
        'Remove all *.txt files, except "keep.txt", under folder1 directory modified more than 5 minutes ago',
        'find folder1 -maxdepth 1 -mmin +5 -type f -name "*.txt" ! -name "keep.txt" -delete',
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [22]
    query(
        2,
        22,
        "Remove all but 5 last comma-separated fields from each line in 'folder1/data.csv'",
        "cat folder1/data.csv | rev | cut -d, -f-5 | rev",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [27]
    query(
        2,
        27,
        "Remove empty directories from the current directory tree",
        r"find . -type d -empty -exec rm -r {} \;",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [32]
    query(
        2,
        32,
        "Remove junk files modified more than 31 days ago recursively from the current directory",
        r"find . -type f -mtime +31 -exec rm -f {} \;",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [33]
    query(
        2,
        33,
        'Remove newline characters from "folder3/temp/temp1/text1.txt"',
        'paste -sd "" folder3/temp/temp1/text1.txt',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [46]
    query(
        2,
        46,
        'Rename "folder3/temp/temp1" to "folder3/temp/temp1_old" and backup to "folder3/temp/temp1_old.old" '
        'if "folder3/temp/temp1_old" exists',
        "mv folder3/temp/temp1 folder3/temp/temp1_old -b -S .old",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [48]
    query(
        2,
        48,
        'create a compressed archive of folder1 "compress_folder1.tar.gz" with verbose output',
        "tar -zcvf compress_folder1.tar.gz folder1",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_2.json [51]
    query(
        2,
        51,
        'Calculate the md5sum of each ".txt" file under the current directory, sort the output, and '
        "calculate the md5sum of that",
        "find . -type f -name '*.txt' -exec md5sum {} + | awk '{print $1}' | sort | md5sum",
        "answer",
    ),
    # ---- fs_3 (setup_nl2b_fs_3.sh, /workspace) ----
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [1]
    query(
        3,
        1,
        "find files in the current directory with pattern` *.c  that larger than 1 Kilobytes",
        "find . -name '*.c' -size +1k -print",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [5]
    query(
        3,
        5,
        "list all the files in the current directory which are of size 0 bytes.",
        "find . -empty",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [7]
    query(
        3,
        7,
        "locate and remove large files (> 1 KB) in the current directory",
        "find . -type f -size +1k -delete",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [9]
    query(
        3,
        9,
        "long list al the files in the current directory which have all the permissions",
        r"find . -perm 777 -type f -exec ls -l {} \;",
        "answer",
        keep="ends",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [13]
    query(
        3,
        13,
        "print all filenames of files under dir1 dir containing 'hello', case-insensitive",
        r"find dir1 -type f -exec grep -il 'hello' {} \;",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [23]
    query(
        3,
        23,
        "search for text files in the current folder which do not have write access to others",
        r'find . -type f \( -iname "*.txt" -not -perm -o=w \)',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [27]
    query(
        3,
        27,
        'search for the word "hello" in all the regular/normal files in the current folder and display the '
        "matched file name",
        'find . -type f | xargs grep -l "hello"',
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [35]
    query(
        3,
        35,
        "List all files with their paths that have identical content in the current directory",
        "find . -type f | xargs md5sum | sort | uniq -Dw32",
        "answer",
        keep="last",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [38]
    query(
        3,
        38,
        "Unhide all hidden files in the current directory",
        r"""find . -maxdepth 1 -type f -name '.*' -exec sh -c 'mv "$0" "${0%/\.*}/${0##*/.}"' {} \;""",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [39]
    query(
        3,
        39,
        'Count the number of differing lines in "dir1/long.txt" and "dir1/terminate.txt"',
        r"diff dir1/long.txt dir1/terminate.txt | grep ^[\>\<] | wc -l",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [43]
    query(
        3,
        43,
        "Delete all hidden files under the current directory",
        "find . -type f -name '.*' -delete",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [47]
    query(
        3,
        47,
        "Display the file size of file 'dir1/sum.c' in bytes",
        "du -sb dir1/sum.c | cut -f1",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [51]
    query(
        3,
        51,
        'Print the contents of "dir1/long.txt" in reverse order',
        "nl dir1/long.txt | sort -nr | cut -b8-",
        "answer",
        ordered=True,
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [57]
    query(
        3,
        57,
        "Unpack all *.gz archives in the current directory tree",
        "find . -name '*.gz' -print0 | xargs -0 gunzip",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_3.json [59]
    query(
        3,
        59,
        'Create a symbolic link to "dir1/terminate.txt" named "test"',
        "ln dir1/terminate.txt test",
        "tree",
    ),
    # ---- fs_4 (setup_nl2b_fs_4.sh: no tree) ----
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_4.json [3]
    query(
        4,
        3,
        'Extract host name part from "http://www.google.com"',
        "echo \"http://www.google.com\" | cut -d'/' -f3",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_4.json [6]
    query(
        4,
        6,
        'Create intermediate directories "dir" and "subdir" as required and create "subsubdir"',
        "mkdir -p dir/subdir/subsubdir",
        "tree",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_4.json [8]
    query(
        4,
        8,
        'Print numbers 1 through 10 separated by ":"',
        "yes | head -n10 | grep -n . | cut -d: -f1 | paste -sd:",
        "answer",
    ),
    # princeton-nlp/intercode data/nl2bash/nl2bash_fs_4.json [15]
    query(
        4,
        15,
        'Remove the last 3 characters from "987654321"',
        "echo 987654321 | rev | cut -c 4- | rev",
        "answer",
    ),
]

"""The attacks the argv policy used to refuse, run for real in bash under bubblewrap and Landlock:
each must be harmless (see :mod:`helpers.attack_scene` for the scene and the oracles), and
Starweave's process can be neither seen nor signalled, nor any privilege gained."""

from __future__ import annotations

import os

import pytest
from helpers.attack_scene import Scene, arena, assert_harmless, scene
from helpers.shell_sessions import SANDBOXES, session_for

__all__ = ["arena", "scene"]  # the fixtures this module uses

# (attack, command). @OUT@ is a tree next to the workspace, @BASE@ the project folder above it,
# @VICTIM@ a tree in /etc (as root; else in /var/tmp), @TMP@ a path in the real /tmp.
WRITES = [
    ("delete the tree next door", "rm -rf @OUT@"),
    ("delete the project above", 'rm -rf "$(cd ../.. && pwd)"'),
    ("delete a system tree", "rm -rf --no-preserve-root @VICTIM@"),
    ("delete the private home", "rm -rf ~ && ls @BASE@"),
    ("write above the workspace", "echo x > ../escape.txt; echo x >> demo/../../escape.txt"),
    (
        "write into the system",
        "echo x > @VICTIM@/new; echo x >> @VICTIM@/file; echo x > /etc/starweave-@TOKEN@",
    ),
    ("write to the real /tmp", "ls nothing 2> @TMP@.log; ls &> @TMP@.txt; tar czf @TMP@.tgz notes.txt"),
    ("write through a planted symlink", "echo x > link_out/new.txt; echo x > outlink.txt; touch link_out/t"),
    (
        "write through a link made now",
        "ln -s @OUT@ l && echo x > l/made.txt; ln -sf @OUT@/target.txt t && echo x >> t",
    ),
    ("link out of /tmp", "ln -s /etc/passwd @TMP@-link"),
    ("hard-link a system file", "ln /etc/passwd hl; ln @OUT@/target.txt h2; echo x >> hl; echo x >> h2"),
    ("copy out", "cp notes.txt @OUT@/copied.txt; cp -t @OUT@ notes.txt; cp --target=@VICTIM@ notes.txt"),
    ("move out and in", "mv @OUT@/target.txt here.txt; mv notes.txt @OUT@/"),
    (
        "metadata outside",
        "chmod 777 @OUT@/target.txt; chmod -w @OUT@; chown nobody @OUT@/target.txt; "
        "touch -d 2001-01-01 @OUT@/target.txt",
    ),
    ("make folders outside", "mkdir @VICTIM@/evil; mkdir -p @OUT@/a/b; install notes.txt @VICTIM@/installed"),
    (
        "overwrite with tools",
        "tee @OUT@/target.txt < notes.txt; truncate -s 0 @OUT@/target.txt; "
        "dd if=/dev/zero of=@OUT@/target.txt count=1",
    ),
    ("compress outside", "gzip @OUT@/target.txt; tar czf @OUT@/a.tgz notes.txt"),
    (
        "options that write",
        "sort -o @OUT@/target.txt notes.txt; sort --outp=@OUT@/s notes.txt; sort -ro@OUT@/r notes.txt",
    ),
    ("find deletes", "find @BASE@ -name '*.txt' -delete; find @OUT@ -delete"),
    (
        "find -exec",
        "find . -maxdepth 1 -name '*.txt' -exec cp {} @OUT@ \\;; find @OUT@ -type f -exec rm {} +",
    ),
    ("xargs", "echo @OUT@ | xargs rm -rf; xargs -I{} cp {} @OUT@ <<< notes.txt"),
    ("sed -i outside", "sed -i 's/outside/pwned/' @OUT@/target.txt; sed -n 'w @OUT@/sed.txt' notes.txt"),
    ("awk writes", 'awk \'BEGIN{print "x" > "@OUT@/awk.txt"; system("rm -rf @OUT@")}\''),
    ("tar -C outside", "tar cf a.tar notes.txt && tar -xf a.tar -C @OUT@ && tar -xf a.tar -C @VICTIM@"),
    ("cd out, then write", "cd @OUT@ && echo x > f; (cd / && rm -rf @OUT@)"),
    (
        "wrappers",
        "env rm -rf @OUT@; nice rm @OUT@/target.txt; nohup rm @OUT@/.env; timeout 5 rm @OUT@/id_rsa",
    ),
    (
        "more wrappers",
        "stdbuf -oL rm @OUT@/target.txt; time rm -r @OUT@; /usr/bin/env rm -rf @OUT@; /bin/rm -rf @OUT@",
    ),
    (
        "nested shells",
        "bash -c 'echo x > @OUT@/b'; sh -c 'rm -rf @OUT@'; eval 'echo x > @OUT@/e'; cat <(rm -rf @OUT@)",
    ),
    ("exec", "exec rm -rf @OUT@ @VICTIM@"),
    (
        "interpreters",
        "python3 -c 'import shutil; shutil.rmtree(\"@OUT@\")'; perl -e 'unlink \"@OUT@/target.txt\"'",
    ),
    ("python os", 'python3 -c \'import os; os.system("rm -rf @OUT@"); os.rename("@OUT@/target.txt", "x")\''),
    ("privilege", "sudo rm -rf @OUT@; su -c 'rm -rf @OUT@'; chroot / rm -rf @OUT@; doas rm -rf @OUT@"),
    (
        "namespaces",
        "unshare -r rm -rf @OUT@; unshare -m sh -c 'mount -t tmpfs x @OUT@'; nsenter -t 1 -a rm -rf @OUT@",
    ),
    ("mounts", "mount -t tmpfs none @OUT@; mount --bind . @OUT@; mount -o remount,rw /"),
    ("busybox", "busybox rm -rf @OUT@; busybox sh -c 'echo x > @OUT@/bb'"),
    ("git outside", "git -C @OUT@ init; git --git-dir=@OUT@/.git init; git init -q @VICTIM@/repo"),
    (
        "a script of the workspace",
        "printf 'rm -rf @OUT@\\necho x > @VICTIM@/s\\n' > s.sh && chmod +x s.sh && ./s.sh",
    ),
    ("clock and host name", "date -s '2001-01-01'; hostname evil-@TOKEN@"),
]
READS = [
    ("the system's shadow", "cat /etc/shadow; wc -l < /etc/gshadow; cat /proc/self/root/etc/shadow"),
    ("secrets next door", "cat @OUT@/.env @OUT@/id_rsa; cat ../.env; grep -r KEY @BASE@ 2>/dev/null"),
    ("a copy of the password database", "cat @BASE@/backup/etc/shadow @BASE@/backup/etc/gshadow-"),
    (
        "home secrets",
        "cat /root/.starweave-* /home/*/.ssh/id_rsa /home/*/.aws/credentials; ls -la /home/*/.ssh",
    ),
    ("a top of /etc secret", "cat /etc/starweave-@TOKEN@.key"),
    ("Starweave's environment", "printenv STARWEAVE_TEST_CANARY_KEY; echo $STARWEAVE_TEST_CANARY_KEY; env"),
    (
        "other processes",
        "cat /proc/1/environ /proc/@PID@/environ /proc/@OTHER@/environ /proc/@OTHER@/cmdline; "
        "tr '\\0' ' ' < /proc/$PPID/environ",
    ),
    ("every process", "cat /proc/*/environ | tr '\\0' '\\n'; ps auxeww; ls -l /proc/1/fd/ /proc/1/root/"),
    (
        "recursive readers",
        "grep -r --line-buffered @CANARY_HEAD@ @BASE@ /etc /home /root 2>/dev/null; diff -r @OUT@ demo",
    ),
    (
        "copies into the workspace",
        "cp -r @OUT@ copy; cp -r /home home-copy; cp /root/.starweave-* .; cp -r @BASE@/backup b",
    ),
    (
        "archives into the workspace",
        "tar cf a.tar @OUT@ /home /root @BASE@/.env; zip -0 -qr a.zip @OUT@ /home",
    ),
    (
        "readers with programs",
        "awk 'BEGIN{while ((getline l < \"@OUT@/.env\") > 0) print l}'; sed -n p @OUT@/id_rsa",
    ),
    (
        "python reads",
        "python3 -c 'import glob; [print(open(p).read()) for p in glob.glob(\"/home/*/.ssh/*\")]'",
    ),
    (
        "a link to a secret",
        "ln -s @OUT@/.env e; cat e; ln -s /etc/shadow s; cat s; ln -s @OUT@ x | cat x/.env",
    ),
    (
        "the file system",
        "cd / && grep -rasD skip --line-buffered @CANARY_HEAD@ etc home srv opt var 2>/dev/null",
    ),
]
ATTACKS = [*WRITES, *READS]


@pytest.mark.parametrize("kind", SANDBOXES)
@pytest.mark.parametrize("command", [c for _, c in ATTACKS], ids=[a for a, _ in ATTACKS])
async def test_the_attack_is_harmless(kind: str, command: str, scene: Scene) -> None:
    await assert_harmless(session_for(kind, scene.ws), scene, command)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_starweave_cannot_be_signalled_or_seen(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    for line in (
        "kill -0 @PID@",
        "kill -CONT @PID@",
        "kill -0 $PPID 2>/dev/null; kill -0 1 && ls /proc | grep -x @PID@",
    ):
        result = await assert_harmless(session, scene, line)
        assert result["exit_code"] != 0, (line, result)
    pids = await assert_harmless(session, scene, "ps -eo pid=; ls /proc")
    assert str(os.getpid()) not in pids["stdout"].split(), pids
    line = (
        "python3 -c 'import os\n"
        'for p in filter(str.isdigit, os.listdir("/proc")): print(open(f"/proc/{p}/cmdline", "rb").read())\''
    )
    listed = await assert_harmless(session, scene, line)
    assert listed["exit_code"] == 0 and "pytest" not in listed["stdout"], listed


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_privileged_wrappers_gain_no_capability(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    for wrapper in ("", "sudo", "su -c", "unshare -r", "chroot /", "nsenter -t 1 -a", "setpriv --reuid=0"):
        line = (
            f"{wrapper} grep -h CapEff /proc/self/status"
            if wrapper != "su -c"
            else "su -c 'grep CapEff /proc/self/status'"
        )
        result = await assert_harmless(session, scene, line)
        assert result["exit_code"] != 0 or result["stdout"] == "CapEff:\t0000000000000000\n", (
            wrapper,
            result,
        )

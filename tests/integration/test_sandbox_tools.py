"""Tools that run other programs or write special files, under bubblewrap and Landlock: set-id
bits and device nodes are never made, hostile archives and planted git configuration stay in the
workspace, readonly mode writes nothing, an allowed network opens no other door, a secret made a
moment ago is hidden, and a hard link placed in the workspace does not carry a write outside."""

from __future__ import annotations

import asyncio
import http.server
import io
import os
import shutil
import stat
import tarfile
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_scene import AS_ROOT, CANARY, TOKEN, Scene, arena, assert_harmless, entry, scene
from helpers.shell_sessions import SANDBOXES, run, session_for

__all__ = ["arena", "scene"]  # the fixtures this module uses


def _setid_tar(path: Path) -> None:
    with tarfile.open(path, "w") as tar:
        for name, kind, mode in (("tool", tarfile.REGTYPE, 0o6755), ("dev", tarfile.CHRTYPE, 0o600)):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = kind, mode, 0, 0
            info.devmajor, info.devminor = 1, 1
            data = b"#!/bin/sh\n" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_no_set_id_file_or_device_node_is_made(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    _setid_tar(scene.ws / "s.tar")
    setting = ["4755", "04755", "2755", "u+s", "g+s", "+s", "a=rwxs", "=4755", "+2000", "-x+s"]
    line = (
        "for m in " + " ".join(setting) + "; do cp notes.txt f$m; chmod $m f$m; done; "
        "mkdir -m g+s d; install -m 6755 notes.txt inst; cp -p /usr/bin/passwd p; "
        "chmod --reference=/usr/bin/passwd notes.txt; mkdir x && tar xpf s.tar -C x; "
        "tar --same-owner -xf s.tar; "
        "python3 -c 'import os; os.chmod(\"notes.txt\", 0o4755)'; "
        "python3 -c 'import os; os.mknod(\"n\", 0o600 | 0o20000, os.makedev(1, 1))'"
    )
    await assert_harmless(session, scene, line)
    assert (scene.ws / "x" / "tool").is_file() and (scene.ws / "f4755").is_file()  # made, without the bits
    for path in scene.ws.rglob("*"):
        assert not path.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID), path
    plain = {"755": 0o755, "1777": 0o1777, "u+x,g-s": 0o744, "-s": 0o644, "u-s,o+t": 0o1644, "go=u": 0o666}
    modes = " ".join(f"'{m}'" for m in plain)
    await assert_harmless(
        session, scene, f'for m in {modes}; do cp notes.txt "m$m"; chmod 644 "m$m"; chmod "$m" "m$m"; done'
    )
    assert {m: stat.S_IMODE((scene.ws / f"m{m}").stat().st_mode) for m in plain} == plain


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_hostile_archives_stay_in_the_workspace(kind: str, scene: Scene) -> None:
    with tarfile.open(scene.ws / "bad.tar", "w") as tar:
        for name, mode in (
            (f"../../up-{TOKEN}.txt", tarfile.REGTYPE),
            (f"{scene.out}/abs.txt", tarfile.REGTYPE),
        ):
            info = tarfile.TarInfo(name)
            info.type = mode
            tar.addfile(info, io.BytesIO(b""))
        link = tarfile.TarInfo("dir/link")
        link.type, link.linkname = tarfile.SYMTYPE, str(scene.out)
        tar.addfile(link)
        body = b"through the link\n"
        member = tarfile.TarInfo("dir/link/pwned.txt")
        member.size = len(body)
        tar.addfile(member, io.BytesIO(body))
        hard = tarfile.TarInfo("hard")
        hard.type, hard.linkname = tarfile.LNKTYPE, str(scene.base / ".env")
        tar.addfile(hard)
    await assert_harmless(
        session_for(kind, scene.ws), scene, "tar xPf bad.tar; tar xf bad.tar; cat hard dir/link/.env"
    )


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_planted_git_configuration_and_hooks_run_confined(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    ok = await assert_harmless(session, scene, "git init -q r && git -C r status --short && echo clean")
    assert ok["stdout"].endswith("clean\n"), ok
    git = scene.ws / "r" / ".git"
    (git / "hooks" / "pre-commit").write_text(scene.fill("#!/bin/sh\nrm -rf @OUT@\ncat @OUT@/.env\n"))
    (git / "hooks" / "pre-commit").chmod(0o755)
    for planted in (
        "[core]\n\tfsmonitor = rm -rf @OUT@\n",
        "[core]\n\tpager = rm -rf @OUT@ ;\n",
        "[alias]\n\tst = !rm -rf @OUT@\n",
    ):
        (git / "config").write_text(scene.fill(planted))
        line = "cd r && git status; git -p log; git st; git -c user.name=a -c user.email=b commit -qm x"
        await assert_harmless(session, scene, line)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_repository_above_the_workspace_is_only_read(kind: str, scene: Scene) -> None:
    outer = await run(session_for("unrestricted", scene.base), "git init -q . && git status --short | wc -l")
    assert outer["exit_code"] == 0, outer
    session = session_for(kind, scene.ws)
    line = "git status --short; git add -A; git -c user.name=a -c user.email=b commit -qm x; git tag t"
    await assert_harmless(session, scene, line)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_readonly_mode_writes_nothing_and_still_reads(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws, mode="readonly")
    writes = [
        "echo x > a.txt",
        "touch a",
        "mkdir d",
        "rm notes.txt",
        "sed -i 's/a/b/' notes.txt",
        "sort -o out.txt notes.txt",
        "git init -q",
        "tee out.txt < notes.txt",
        "find . -delete",
        "cp notes.txt copy.txt",
        "ln -s x y",
        "mv notes.txt n",
        "touch -d 2001-01-01 notes.txt",
    ]
    if kind == "bwrap" or AS_ROOT:  # Landlock has no right for chmod: only root's read-only mounts stop it
        writes.append("chmod 600 notes.txt")
    for line in writes:
        before = {p: entry(p) for p in scene.ws.rglob("*")}
        result = await assert_harmless(session, scene, line)
        assert {p: entry(p) for p in scene.ws.rglob("*")} == before and result["exit_code"] != 0, line
    reads = await assert_harmless(
        session, scene, "cat notes.txt | sort | head -1; grep -c a notes.txt; ls 2>/dev/null"
    )
    assert reads["stdout"].startswith("alpha 1\n2\n") and reads["exit_code"] == 0, reads


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"page\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the test reads the result, not the server's log


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_no_network_tool_reaches_a_listener(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    reached: list[str] = []

    class Counter(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: Any) -> None:
            reached.append("udp")

    async def tcp(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append("tcp")
        writer.close()

    server = await asyncio.start_server(tcp, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    udp, _ = await loop.create_datagram_endpoint(Counter, local_addr=("127.0.0.1", port))
    line = (
        f"curl -s -m 3 http://127.0.0.1:{port}/; wget -q -T 3 -t 1 -O - http://127.0.0.1:{port}/; "
        f"nc -w 2 127.0.0.1 {port} < /dev/null; nc -u -w 1 127.0.0.1 {port} <<< x; "
        f"ssh -o BatchMode=yes -o ConnectTimeout=2 -p {port} 127.0.0.1 true; "
        "ssh -o ProxyCommand='touch @OUT@/proxied' -o BatchMode=yes host true; "
        f"echo x > /dev/tcp/127.0.0.1/{port}; echo x > /dev/udp/127.0.0.1/{port}; "
        f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3)'"
    )
    try:
        async with server:
            await assert_harmless(session, scene, line, limit=40)
    finally:
        udp.close()
    assert reached == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_with_the_network_allowed_writes_still_stay_in_the_workspace(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws, allow_network=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        line = (
            f"curl -s -m 10 -o @OUT@/page {url}; curl -s -m 10 -o @VICTIM@/page {url}; "
            "python3 -c 'import sys, urllib.request as u\n"
            'open(sys.argv[1], "wb").write(u.urlopen(sys.argv[2]).read())\' '
            f"@OUT@/py {url}; "
            f"curl -s -m 10 -o page.html {url} && cat page.html"
        )
        result = await assert_harmless(session, scene, line, limit=40)
    finally:
        server.shutdown()
        server.server_close()
    assert result["stdout"] == "page\n", result  # the network is there, and the boundary too
    assert (scene.ws / "page.html").read_text() == "page\n"


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_secret_made_after_the_machine_scan_is_masked(kind: str, scene: Scene) -> None:
    session = session_for(kind, scene.ws)
    await run(session, "true")  # the machine scan is done: the secrets below come after it
    if not AS_ROOT:
        pytest.skip("plants a secret in /opt, which needs root")
    late = Path("/opt") / f"starweave-late-{TOKEN}-{kind}"  # in a folder that holds nothing hidden
    late.mkdir()
    try:
        (late / ".env").write_text(f"KEY={CANARY}\n")
        await assert_harmless(session, scene, f"cat {late}/.env")  # (the canary never shows)
        (late / "deep" / "er").mkdir(parents=True)  # a new tree, and a secret put in at once
        (late / "deep" / "er" / "id_rsa").write_text(f"{CANARY}\n")
        await assert_harmless(session, scene, f"cat {late}/deep/er/id_rsa")
    finally:
        shutil.rmtree(late)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_hard_link_placed_in_the_workspace_is_not_written_through(kind: str, scene: Scene) -> None:
    os.link(scene.out / "target.txt", scene.ws / "hard.txt")
    session = session_for(kind, scene.ws)
    result = await assert_harmless(session, scene, "echo x >> hard.txt && cat hard.txt")
    assert result["stdout"] == "outside\nx\n", result  # the workspace's copy changed, not the outside file
    assert (scene.out / "target.txt").read_text() == "outside\n"
    assert (scene.ws / "hard.txt").stat().st_nlink == 1
    os.link(scene.out / "target.txt", scene.ws / "later.txt")  # placed between two commands
    os.link(scene.ws / "hard.txt", scene.ws / "own.txt")  # a link inside the workspace stays one
    await assert_harmless(session, scene, "echo y >> later.txt; echo z >> own.txt")
    assert (scene.out / "target.txt").read_text() == "outside\n"
    assert (scene.ws / "later.txt").read_text() == "outside\ny\n"
    assert (scene.ws / "hard.txt").read_text() == "outside\nx\nz\n"
    assert (scene.ws / "own.txt").stat().st_nlink == 2

"""Start one command inside its confinement; standard library only.

Run as ``python -I -S -c PROGRAM SPEC -- PROGRAM ARGS...`` with the command's whole environment,
where PROGRAM is ``launcher_confine.py`` and this file joined (see
``launcher_program.launcher_source``) and SPEC the literal built by
:mod:`starweave.tools.sandbox.launch` (or ``fd:N`` for a long one). Inside bubblewrap it runs
as the sandbox's first process and ends in ``execve``; for Landlock and for no sandbox it stays as a
small supervisor that forks the command and, when the command ends or it gets SIGTERM, kills every
process the command left behind (it is their subreaper), then removes the private HOME/TMPDIR. For
Landlock as a normal user it also answers the command's chmod, chown, utimes and xattr calls with
``launcher_notify``, whose code comes in the spec.
"""

from __future__ import annotations

import _signal as signal  # the C module: "signal" would import enum, which costs milliseconds
import _thread
import ctypes
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn
if __name__ != "__main__":  # imported as a module; in the joined program these are defined above
    from starweave.tools.sandbox.launcher_confine import (
        AT_FDCWD,
        AT_RECURSIVE,
        CLONE_NEWIPC,
        CLONE_NEWNS,
        CLONE_NEWPID,
        MOUNT_ATTR_NOSUID,
        MOUNT_ATTR_RDONLY,
        MOUNT_SETATTR,
        MS_BIND,
        MS_NODEV,
        MS_NOEXEC,
        MS_NOSUID,
        MS_PRIVATE,
        MS_RDONLY,
        MS_REC,
        MS_REMOUNT,
        PR_SET_CHILD_SUBREAPER,
        PR_SET_PDEATHSIG,
        SETUP_FAILED,
        SetupError,
        _check,
        _libc,
        _mount,
        _prctl,
        confine_and_exec,
        set_pid_max,
    )


# ---- the supervisor (Landlock and no sandbox) ----------------------------------------------------


class _Stop(Exception):
    """SIGTERM arrived: leave the wait loop. Control flow inside the launcher program only, so it
    stays out of starweave.errors (which this standard-library-only program cannot import)."""


def _on_term(_sig: int, _frame: object) -> None:
    raise _Stop


_HAS_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """Children of ``pid``: /proc/PID/task/*/children, or a scan of /proc/*/stat on kernels without
    those files (CONFIG_PROC_CHILDREN); none for a process that is already gone."""
    found: list[int] = []
    if _HAS_CHILDREN_FILES:
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    found += [int(c) for c in f.read().split()]
        except OSError:
            pass
        return found
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(b")") + 2 :].split()[1]) == pid:
            found.append(int(name))
    return found


def sweep() -> None:
    """SIGKILL every descendant (orphans come back to us, the subreaper) and reap them all."""
    me = os.getpid()
    while True:
        todo, seen = _children(me), set()
        while todo:
            pid = todo.pop()
            if pid not in seen:
                seen.add(pid)
                todo += _children(pid)
                try:  # noqa: SIM105 (no contextlib: one import less per command)
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return  # no child left
        signal.sigtimedwait([signal.SIGCHLD], 0.005)  # killed ones are still exiting


def _private_dirs(base: str, env: dict[str, str]) -> str:
    """A fresh folder (mode 700) with ``home`` and ``tmp`` for HOME and TMPDIR."""
    while True:
        top = os.path.join(base, "starweave-cmd-" + os.urandom(8).hex())
        try:
            os.mkdir(top, 0o700)
            break
        except FileExistsError:
            continue
    for sub in ("home", "tmp"):
        os.mkdir(os.path.join(top, sub), 0o700)
    env["HOME"], env["TMPDIR"] = os.path.join(top, "home"), os.path.join(top, "tmp")
    return top


def _folder_id(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _open_folder(name: str, dir_fd: int) -> int:
    """Open the folder ``name`` of ``dir_fd`` without following a symlink, made readable first if
    the command took its rights away (through /proc/self/fd, the folder itself, never a link)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        path = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.chmod(f"/proc/self/fd/{path}", 0o700)
        finally:
            os.close(path)
        return os.open(name, flags, dir_fd=dir_fd)


def _clear_files(dir_fd: int) -> list[str]:
    """Remove every entry of ``dir_fd`` but non-empty folders; their names are returned."""
    folders: list[str] = []
    try:
        entries = list(os.scandir(dir_fd))
    except OSError:
        return folders
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                try:
                    os.rmdir(entry.name, dir_fd=dir_fd)
                except OSError:
                    folders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=dir_fd)
        except OSError:  # an entry that cannot go stays; the rest still goes
            continue
    return folders


def _remove_below(top_fd: int) -> None:
    """Remove everything in the open folder ``top_fd``; never follows a symlink. Iterative (no
    recursion limit, however deep the tree) and holding two descriptors at most: it climbs back
    through ``..`` and stops should that not be the folder it came from (moved meanwhile)."""
    fd = os.dup(top_fd)
    # One frame per level entered: (its name in the parent, the parent's identity, folders left there).
    frames: list[tuple[str, tuple[int, int], list[str]]] = []
    pending = _clear_files(fd)
    try:
        while True:
            if pending:
                name = pending.pop()
                try:
                    sub = _open_folder(name, fd)
                except OSError:  # gone, or not a folder any more
                    continue
                frames.append((name, _folder_id(fd), pending))
                os.close(fd)
                fd = sub
                pending = _clear_files(fd)
                continue
            if not frames:
                return
            name, parent, pending = frames.pop()
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = up
            if _folder_id(fd) != parent:
                return
            try:  # noqa: SIM105 (no contextlib: one import less per command)
                os.rmdir(name, dir_fd=fd)
            except OSError:
                pass  # something in it could not go
    finally:
        os.close(fd)


def _remove_tree(top: str) -> None:
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fchmod(fd, 0o700)
        _remove_below(fd)
    except OSError:  # best effort: the supervisor must still exit
        pass
    finally:
        os.close(fd)
    try:  # noqa: SIM105 (no contextlib: one import less per command)
        os.rmdir(top)
    except OSError:
        pass


def _notify_server(notify: dict[str, Any]) -> Any:
    """``launcher_notify.serve_notifications``, from the code the spec carries."""
    import marshal

    kind, program = notify["program"]
    namespace = {"__name__": "__main__", "_libc": _libc}  # its imports are this program's
    exec(marshal.loads(bytes.fromhex(program)) if kind == "code" else program, namespace)
    return namespace["serve_notifications"]


def _exit_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def supervise(spec: dict[str, Any], argv: list[str], env: dict[str, str]) -> NoReturn:
    """Fork the command, wait for it, kill what it left behind; exit with its status."""
    try:
        top = _private_dirs(spec["private_base"], env) if spec.get("private_base") else None
    except OSError as exc:
        os.write(
            2, f"starweave sandbox: cannot make the private HOME: {exc}; the command was not run\n".encode()
        )
        os._exit(SETUP_FAILED)
    extra = [(top, spec["private_access"])] if top and spec.get("private_access") else []
    pidns = bool(spec.get("pidns")) and os.geteuid() == 0 and _libc.unshare(CLONE_NEWPID) == 0
    if spec.get("ipcns") and os.geteuid() == 0:
        _libc.unshare(CLONE_NEWIPC)  # System V objects and POSIX queues die with the command
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    notify = spec.get("notify")
    if notify:
        import _socket  # (the full "socket" module would cost milliseconds)

        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    # SIGTERM (the runner's "stop") is blocked until the handler is in place in each process.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if notify:
            ours.close()
            notify["socket"] = theirs.detach()
        landlock = spec.get("landlock")
        if pidns:
            writable = [*spec.get("writable", []), top] if landlock and top else None
            _enter_pidns(spec, writable)
            if landlock:
                extra.append(("/proc", landlock.get("proc_all", 0)))
        elif landlock:
            extra.append((f"/proc/{os.getpid()}", landlock.get("self_proc", 0)))
        confine_and_exec(spec, argv, env, extra)
    if notify:
        theirs.close()
        roots = [*notify["writable"], *([top] if top else [])]
        # Started while SIGTERM is blocked: the thread keeps it blocked, so the main thread gets it.
        _thread.start_new_thread(_notify_server(notify), (ours.detach(), roots, notify["calls"]))
    status = signal.SIGKILL  # reported like a process killed by SIGKILL when we are told to stop
    try:
        try:
            signal.signal(signal.SIGTERM, _on_term)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            _close_standard_fds()
            while True:
                pid, st = os.waitpid(-1, 0)
                if pid == child:
                    status = st
                    break
        except (_Stop, ChildProcessError):
            pass
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            if pidns:
                try:  # noqa: SIM105 (no contextlib: one import less per command)
                    os.kill(child, signal.SIGKILL)  # the namespace's init: the kernel kills the rest
                except ProcessLookupError:
                    pass
            sweep()
        finally:
            if top:
                _remove_tree(top)
    finally:
        os._exit(_exit_code(status))  # whatever went wrong above, the supervisor ends


def _read_only_except(writable: list[str]) -> None:
    """Every mount read-only, nosuid and nodev, then ``writable`` bound back read-write (nosuid,
    nodev): Landlock does not cover chmod, chown or utimes, which a read-only mount refuses."""
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    done = _libc.syscall(
        ctypes.c_long(MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), b"/", ctypes.c_uint(AT_RECURSIVE), attr, 32
    )
    if done != 0:  # before Linux 5.12: one mount at a time
        with open("/proc/self/mountinfo", "rb") as f:
            points = [line.split()[4] for line in f.read().splitlines()]
        for point in points:
            where = point.decode("unicode_escape").encode("latin-1")  # mountinfo escapes as \\040
            _libc.mount(None, where, None, ctypes.c_ulong(MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID), None)
    for path in writable:
        target = path.encode()
        _mount(target, target, None, MS_BIND | MS_REC)
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV)
    # The private /proc stays writable for the launcher's own settings; Landlock grants no write there.
    _mount(None, b"/proc", None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(os.getcwd())  # the working folder was entered below the mounts just made


def _enter_pidns(spec: dict[str, Any], writable: list[str] | None) -> None:
    """As the first process of a new PID namespace (root): a private mount namespace with a /proc
    that shows only the command's processes, the namespace's pid_max as process limit and, with
    ``writable`` (Landlock), every mount but those read-only."""
    try:
        _check(_libc.unshare(CLONE_NEWNS), "unshare")
        _mount(None, b"/", None, MS_REC | MS_PRIVATE)
        _mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        if spec.get("pid_max"):
            set_pid_max(spec["pid_max"], "/proc")
        if writable is not None:
            _read_only_except(writable)
        command = os.fork()
    except (SetupError, OSError) as exc:
        os.write(2, f"starweave sandbox: {exc}; the command was not run\n".encode())
        os._exit(SETUP_FAILED)
    if command == 0:
        return
    # The namespace's init: the kernel spares it signals it has no handler for (SIGPIPE ...), so the
    # command runs as its child; when the command ends, init ends and the kernel kills the rest.
    _close_standard_fds()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        if pid == command:
            os._exit(_exit_code(status))


def _close_standard_fds() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # a pipe end kept open here would keep the pipeline's other stages waiting
        os.dup2(null, fd)
    os.close(null)


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        os.write(2, b"usage: launcher.py SPEC -- PROGRAM [ARGS...]\n")
        return 2
    text = args[0]
    if text.startswith("fd:"):  # a long spec comes through a descriptor
        fd, chunks = int(text[3:]), []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        os.close(fd)
        text = b"".join(chunks).decode()
    # The spec is a Python literal written by repr() in Starweave: no import needed to read it.
    spec = eval(text, {"__builtins__": {}})
    argv, env = args[2:], dict(os.environ)
    if spec.get("supervise"):
        supervise(spec, argv, env)
    confine_and_exec(spec, argv, env)
    return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

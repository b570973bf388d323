"""The supervisor's side of chmod, chown, utimes and xattr changes under Landlock as a normal user;
standard library only (the launcher runs it from the code in the command's spec, with ``_libc`` of
``launcher_confine``).

Landlock has no right for these calls, and a normal user gets no mount namespace in which the rest
of the file system could be made read-only, as root's launcher does (``launcher._read_only_except``).
So the command runs under a second seccomp filter (``seccomp.build_notify_filter``, installed by
``launcher_confine.install_notify``) that hands each of these calls to the supervisor
(SECCOMP_RET_USER_NOTIF), and the supervisor does the call itself: it reads the path from the
command's memory, opens what the path names (from the command's working folder or descriptor), and
makes the change on that open file only when the file lies below a folder the command may write
(the workspace and its private HOME/TMPDIR). Anything else is answered EROFS, as a read-only mount
would answer. The change is made on the very file that was checked, so a link swapped in meanwhile
reaches nothing; set-id bits stay refused (the main filter refuses them before the notification).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
if __name__ != "__main__":  # imported as a module; the launcher gives it its own
    from starweave.tools.sandbox.launcher_confine import _libc

NOTIF_RECV, NOTIF_SEND, NOTIF_ID_VALID = 0xC0502100, 0xC0182101, 0x40082102  # SECCOMP_IOCTL_NOTIF_*
NOTIF_SIZE, RESP_SIZE = 80, 24  # struct seccomp_notif, struct seccomp_notif_resp
AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
PATH_MAX, XATTR_NAME_MAX, XATTR_SIZE_MAX = 4096, 255, 65536
S_IFMT, S_IFLNK, SET_ID = 0o170000, 0o120000, 0o6000
PAGE = 4096
OPEN_PATH = os.O_PATH | os.O_CLOEXEC

# What each call's arguments are: (path or descriptor layout, then the call-specific part).
# Layout: "path" = (path) relative to the cwd; "lpath" the same without following a final link;
# "fd" = a descriptor; "at" = (dirfd, path, ...) with flags at ``FLAGS_AT``.
LAYOUT = {
    "chmod": "path",
    "chown": "path",
    "utime": "path",
    "utimes": "path",
    "setxattr": "path",
    "removexattr": "path",
    "lchown": "lpath",
    "lsetxattr": "lpath",
    "lremovexattr": "lpath",
    "fchmod": "fd",
    "fchown": "fd",
    "fsetxattr": "fd",
    "fremovexattr": "fd",
    "fchmodat": "at",
    "fchmodat2": "at",
    "fchownat": "at",
    "futimesat": "at",
    "utimensat": "at",
}
FLAGS_AT = {"fchmodat2": 3, "fchownat": 4, "utimensat": 3}  # the argument that holds AT_* flags

_libc.process_vm_readv.restype = ctypes.c_ssize_t
_libc.ioctl.restype = ctypes.c_int


class Refused(Exception):
    """The call is answered with this errno (control flow inside the launcher program only)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _int(value: int) -> int:
    """The low 32 bits of a system call argument as a C int."""
    return ctypes.c_int(value & 0xFFFFFFFF).value


def read_memory(pid: int, address: int, size: int) -> bytes:
    """Up to ``size`` bytes of ``pid``'s memory at ``address``, one page at a time (a string may end
    just before an unmapped page); fewer when the memory ends sooner."""
    out = bytearray()
    while len(out) < size:
        start = address + len(out)
        chunk = min(size - len(out), PAGE - start % PAGE)
        buf = ctypes.create_string_buffer(chunk)
        local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), chunk)
        remote = (ctypes.c_void_p * 2)(start, chunk)
        got = _libc.process_vm_readv(pid, local, 1, remote, 1, 0)
        if got <= 0:
            if not out:
                raise Refused(errno.EFAULT)
            break
        out += buf.raw[:got]
    return bytes(out)


def read_exactly(pid: int, address: int, size: int) -> bytes:
    """``size`` bytes of ``pid``'s memory at ``address``, or EFAULT."""
    data = read_memory(pid, address, size) if size else b""
    if len(data) < size:
        raise Refused(errno.EFAULT)
    return data


def read_string(pid: int, address: int, limit: int) -> bytes:
    """The NUL-terminated string at ``address`` (ENAMETOOLONG past ``limit`` bytes)."""
    if address == 0:
        raise Refused(errno.EFAULT)
    got = bytearray()
    while len(got) <= limit:
        wanted = min(PAGE, limit + 1 - len(got))
        page = read_memory(pid, address + len(got), wanted)
        end = page.find(b"\0")
        if end >= 0:
            return bytes(got + page[:end])
        got += page
        if len(page) < wanted:
            raise Refused(errno.EFAULT)
    raise Refused(errno.ENAMETOOLONG)


def _proc_path(pid: int, path: bytes) -> bytes:
    # /proc/self in the command's path means the command, not this supervisor
    for own in (b"/proc/self", b"/proc/thread-self"):
        if path == own or path.startswith(own + b"/"):
            return b"/proc/%d" % pid + path[len(own) :]
    return path


def open_target(pid: int, name: str, args: tuple[int, ...], flags: int) -> int:
    """An O_PATH descriptor of the file call ``name`` names, resolved as the command would."""
    layout = LAYOUT[name]
    if layout == "fd":
        return _open_descriptor(pid, _int(args[0]))
    dirfd, at = (_int(args[0]), 1) if layout == "at" else (AT_FDCWD, 0)
    address = args[at]
    if address == 0 and name in ("utimensat", "futimesat") and dirfd != AT_FDCWD:
        return _open_descriptor(pid, dirfd)  # utimensat(fd, NULL, ...): the descriptor itself
    path = _proc_path(pid, read_string(pid, address, PATH_MAX))
    if not path:
        if not flags & AT_EMPTY_PATH:
            raise Refused(errno.ENOENT)
        if dirfd == AT_FDCWD:
            return os.open(f"/proc/{pid}/cwd", OPEN_PATH)
        return _open_descriptor(pid, dirfd)
    nofollow = layout == "lpath" or bool(flags & AT_SYMLINK_NOFOLLOW)
    base = None
    if not path.startswith(b"/"):
        where = f"/proc/{pid}/cwd" if dirfd == AT_FDCWD else f"/proc/{pid}/fd/{dirfd}"
        base = os.open(where, OPEN_PATH)
    try:
        return os.open(path, OPEN_PATH | (os.O_NOFOLLOW if nofollow else 0), dir_fd=base)
    finally:
        if base is not None:
            os.close(base)


def _open_descriptor(pid: int, fd: int) -> int:
    try:
        return os.open(f"/proc/{pid}/fd/{fd}", OPEN_PATH)
    except FileNotFoundError:
        raise Refused(errno.EBADF) from None


def within(path: str, roots: list[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or below one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _times(pid: int, name: str, address: int) -> ctypes.Array[ctypes.c_char] | None:
    """The new times as ``struct timespec[2]``, or None for "now"."""
    if address == 0:
        return None
    if name == "utime":  # struct utimbuf: two time_t
        atime, mtime = struct.unpack("=qq", read_exactly(pid, address, 16))
        pairs = (atime, 0, mtime, 0)
    elif name in ("utimes", "futimesat"):  # struct timeval[2]
        a_sec, a_usec, m_sec, m_usec = struct.unpack("=qqqq", read_exactly(pid, address, 32))
        if not (0 <= a_usec < 1_000_000 and 0 <= m_usec < 1_000_000):
            raise Refused(errno.EINVAL)
        pairs = (a_sec, a_usec * 1000, m_sec, m_usec * 1000)
    else:  # utimensat: struct timespec[2], UTIME_NOW and UTIME_OMIT included
        pairs = struct.unpack("=qqqq", read_exactly(pid, address, 32))
    return ctypes.create_string_buffer(struct.pack("=qqqq", *pairs), 32)


def _check_errno(result: int) -> None:
    if result != 0:
        raise Refused(ctypes.get_errno() or errno.EPERM)


def _apply(name: str, pid: int, args: tuple[int, ...], target: int, is_link: bool) -> None:
    """Make the change of call ``name`` on the open file ``target``."""
    shift = {"fd": 0, "path": 0, "lpath": 0, "at": 1}[LAYOUT[name]]
    here = f"/proc/self/fd/{target}"
    if name.endswith("chmod") or name.startswith("fchmod"):
        mode = args[1 + shift] & 0o7777
        if is_link:
            raise Refused(errno.EOPNOTSUPP)  # Linux has no modes for links
        if mode & SET_ID:
            raise Refused(errno.EPERM)
        os.chmod(here, mode)
    elif "chown" in name:
        owner = (ctypes.c_uint32(args[1 + shift]), ctypes.c_uint32(args[2 + shift]))
        _check_errno(_libc.fchownat(target, b"", *owner, AT_EMPTY_PATH))
    elif "utime" in name:
        times = _times(pid, name, args[1 + shift])
        _check_errno(_libc.utimensat(target, b"", times, AT_EMPTY_PATH))
    elif is_link:
        raise Refused(errno.EPERM)  # no user xattrs on links (and the rest needs capabilities)
    elif "remove" in name:
        os.removexattr(here, read_string(pid, args[1], XATTR_NAME_MAX + 1))
    else:
        size = args[3]
        if size > XATTR_SIZE_MAX:
            raise Refused(errno.E2BIG)
        key = read_string(pid, args[1], XATTR_NAME_MAX + 1)
        os.setxattr(here, key, read_exactly(pid, args[2], size), _int(args[4]))


def handle_call(
    name: str, pid: int, args: tuple[int, ...], roots: list[str], still_valid: Callable[[], bool]
) -> int:
    """Do call ``name`` of ``pid`` with ``args`` when its file lies below ``roots``; the result the
    command sees (0 or -errno)."""
    layout = LAYOUT.get(name)
    if layout is None:
        return -errno.ENOSYS
    flags = _int(args[FLAGS_AT[name]]) if name in FLAGS_AT else 0
    try:
        target = open_target(pid, name, args, flags)
    except Refused as exc:
        return -exc.code
    except OSError as exc:
        return -(exc.errno or errno.EPERM)
    try:
        where = os.readlink(f"/proc/self/fd/{target}")
        if not within(where, roots):
            return -errno.EROFS  # as the read-only mount that root's sandbox has there
        if not still_valid():
            return -errno.ESRCH  # the process is gone: its pid may be another's by now
        is_link = (os.fstat(target).st_mode & S_IFMT) == S_IFLNK
        _apply(name, pid, args, target, is_link)
        return 0
    except Refused as exc:
        return -exc.code
    except OSError as exc:
        return -(exc.errno or errno.EPERM)
    finally:
        os.close(target)


def _ioctl(fd: int, request: int, buf: object) -> int:
    return int(_libc.ioctl(ctypes.c_int(fd), ctypes.c_ulong(request), buf))


def receive_listener(sock_fd: int) -> int:
    """The listener descriptor the command's first process sends over ``sock_fd``; -1 if none came
    (the process failed before it installed the filter)."""
    import _socket  # (the full "socket" module would cost milliseconds)

    sock = _socket.socket(fileno=sock_fd)
    try:
        _data, ancillary, _flags, _addr = sock.recvmsg(1, _socket.CMSG_SPACE(4))
    except OSError:
        return -1
    finally:
        sock.close()
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS and len(payload) >= 4:
            return int(struct.unpack("=i", payload[:4])[0])
    return -1


def serve_notifications(sock_fd: int, roots: list[str], calls: dict[int, str]) -> None:
    """The supervisor's thread: answer every notification of the command until the listener goes.
    ``calls`` maps system call numbers to names, ``roots`` are the folders the command may write."""
    listener = receive_listener(sock_fd)
    if listener < 0:
        return
    while True:
        buf = ctypes.create_string_buffer(NOTIF_SIZE)  # RECV wants a zeroed structure
        if _ioctl(listener, NOTIF_RECV, buf) != 0:
            if ctypes.get_errno() in (errno.EINTR, errno.ENOENT):
                continue  # a signal, or the caller died before we got to it
            return
        nid, pid = struct.unpack_from("=QI", buf.raw, 0)
        nr = struct.unpack_from("=i", buf.raw, 16)[0]
        args = struct.unpack_from("=6Q", buf.raw, 32)
        ident = ctypes.c_uint64(nid)

        def still_valid(ident: ctypes.c_uint64 = ident) -> bool:
            return _ioctl(listener, NOTIF_ID_VALID, ctypes.byref(ident)) == 0

        try:
            result = handle_call(calls.get(nr, ""), pid, args, roots, still_valid)
        except Exception:  # a bug here must not leave the command waiting: it is refused instead
            result = -errno.EPERM
        response = ctypes.create_string_buffer(struct.pack("=QqiI", nid, 0, result, 0), RESP_SIZE)
        _ioctl(listener, NOTIF_SEND, response)

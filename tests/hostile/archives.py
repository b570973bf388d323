"""Build the archives hostile cases plant (device nodes, symlinks, set-id files ...) as base64 text,
which a model can write with ``write_file`` and decode with ``base64 -d``."""

from __future__ import annotations

import base64
import gzip
import io
import stat
import tarfile
import time
import zipfile

from hostile.casebook import Archive, ArchiveMember

TAR_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "fifo": tarfile.FIFOTYPE,
    "chardev": tarfile.CHRTYPE,
    "blockdev": tarfile.BLKTYPE,
}


def _tar(members: tuple[ArchiveMember, ...], gz: bool) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tf:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.type = TAR_TYPES[m.kind]
            info.mode = m.mode if m.kind != "dir" or m.mode != 0o644 else 0o755
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = int(time.time())
            info.linkname = m.target
            info.devmajor, info.devminor = m.major, m.minor
            data = m.data.encode()
            if m.kind == "file":
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return buf.getvalue()


def _zip(members: tuple[ArchiveMember, ...]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for m in members:
            info = zipfile.ZipInfo(m.name)
            info.create_system = 3  # Unix: unzip honours the mode bits below
            if m.kind == "symlink":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, m.target)
            elif m.kind == "dir":
                info.filename = m.name.rstrip("/") + "/"
                info.external_attr = (stat.S_IFDIR | (m.mode if m.mode != 0o644 else 0o755)) << 16
                zf.writestr(info, "")
            elif m.kind == "file":
                info.external_attr = (stat.S_IFREG | m.mode) << 16
                zf.writestr(info, m.data)
            else:
                raise ValueError(f"zip archives cannot hold a {m.kind}")
    return buf.getvalue()


def _gzip_zeros(mib: int) -> bytes:
    # A decompression bomb: gunzip expands concatenated gzip members one after the other, so one
    # member of 7 MiB of zeros (about 7 KB) repeated gives ``mib`` MiB from a thousandth of that.
    one = gzip.compress(bytes(7 << 20), 9)
    return one * max(1, mib // 7)


def archive_bytes(archive: Archive) -> bytes:
    """The bytes of ``archive`` (placeholders already replaced). Format ``gz-zeros``: a gzip stream
    of as many MiB of zeros as its one member's data says."""
    if archive.fmt == "gz-zeros":
        return _gzip_zeros(int(archive.members[0].data))
    if archive.fmt == "zip":
        return _zip(archive.members)
    return _tar(archive.members, gz=archive.fmt == "tar.gz")


def archive_base64(archive: Archive) -> str:
    """``archive`` as base64 text with line breaks, as ``base64`` prints it."""
    encoded = base64.b64encode(archive_bytes(archive)).decode()
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + "\n"

"""Which folders may be an agent's workspace.

Everything in the workspace is writable by the model's commands, so a workspace must be a project
folder: never a system folder (or anything inside the trees the OS and its packages own), never a
home folder itself, and never inside a home's dot-folders (``~/.ssh``, ``~/.config``, ``~/.local``...),
where keys, credentials and the programs a login runs live.
"""

from __future__ import annotations

from pathlib import Path

# Trees the system owns: neither these folders nor anything inside them.
SYSTEM_TREES = tuple(
    Path(p)
    for p in (
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/lost+found",
        "/proc",
        "/run",
        "/sbin",
        "/snap",
        "/sys",
        "/usr",
        "/var",
    )
)
# Inside /var, project folders are at home here (a scratch folder, a web site), not in the folders.
VAR_PROJECT_ROOTS = (Path("/var/tmp"), Path("/var/www"))
# Shared folders whose sub-folders are fine, but not the folder as a whole.
SHARED_FOLDERS = frozenset(
    Path(p) for p in ("/", "/home", "/media", "/mnt", "/opt", "/srv", "/tmp", "/var/tmp", "/var/www")
)


def _homes(folder: Path, home: Path) -> list[Path]:
    """The home folders ``folder`` may be in: the user's, root's, and ``/home/<name>``."""
    homes = [home, Path("/root")]
    parts = folder.parts
    if len(parts) >= 3 and parts[1] == "home":
        homes.append(Path("/home", parts[2]))
    return homes


def workspace_problem(folder: Path, home: Path | None = None) -> str | None:
    """Why ``folder`` (absolute, symlinks resolved) must not be a workspace, or None when it may.

    ``home`` is the user's home folder (default: ``Path.home()``).
    """
    home = (home or Path.home()).resolve()
    if folder in SHARED_FOLDERS:
        return "a system-wide folder"
    for tree in SYSTEM_TREES:
        if folder == tree or tree in folder.parents:
            if tree == Path("/var") and any(root in folder.parents for root in VAR_PROJECT_ROOTS):
                continue
            return f"inside {tree}, which the system owns"
    for base in _homes(folder, home):
        if folder == base:
            return "a home folder itself"
        if base in folder.parents:
            first = folder.relative_to(base).parts[0]
            if first.startswith("."):
                return f"inside {base / first}, a home's dot-folder (keys, settings, login scripts)"
    return None

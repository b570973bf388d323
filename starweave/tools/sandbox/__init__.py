"""The sandbox every model command runs in: which one works here (``choice``: bubblewrap, else
Landlock, else refuse), how a command starts inside it (``launch``: the bubblewrap command line or
the supervising launcher, limits, the per-command cgroup), the launcher program itself
(``launcher_confine``, ``launcher``, ``launcher_notify``, joined by ``launcher_program``), and its
parts (``bwrap``, ``landlock``, ``seccomp``, ``syscall_numbers``). The shell server
(``starweave.tools.servers.shell``) runs bash through it; nothing here reads a command line."""

"""Sessions: one request carried out by an agent under a step cap.

Entry points (imported from their modules, so that light users such as ``session.logs`` do not load
every agent): :func:`starweave.session.runner.run_linux_task` and
:func:`starweave.session.desktop_runner.run_host_task` (``starweave run``),
:class:`starweave.session.service.ServiceSessionFactory` (the server's sessions, by device platform); all run
through :mod:`starweave.session.loop`.
"""

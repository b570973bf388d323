"""Where Starweave itself may read and write on behalf of the model: the path rules shared by the
file tools, the batch plan's object copy and the log folder's screenshots and trees (``paths``,
``safeopen``), what the shell sandbox hides (``hidden``, ``secret_scan``), the one check that a read
for the model is one a sandboxed command could make (``reach``, with ``privilege`` lowering a
thread's capabilities to a sandboxed command's), and the bounded worker threads their blocking
calls run on (``workers``)."""

"""Settings for the whole suite."""

from __future__ import annotations

import os
import tempfile

# Starweave remembers every workspace it hands to an agent (starweave.config.known_workspaces) in
# $XDG_STATE_HOME; the suite keeps that record (and device tokens) out of the user's home, and
# subprocesses inherit it.
os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="starweave-test-state-"))

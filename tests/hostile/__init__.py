"""The hostile suite: tool calls a prompt-injected model might make, replayed against the real tools.

The cases are data (``cases_*.py``, one module per family, built with :mod:`hostile.casebook`).
:mod:`hostile.worker` runs them in-process through the real MCP servers inside an isolated root
(:mod:`hostile.isolation`), :mod:`hostile.oracles` judges them, :mod:`hostile.supervisor` drives the
workers from pytest. See the README section "Shell safety" for how to run it.
"""

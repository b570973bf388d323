"""The simulated phone's device side: state, screens, rendering and the adb command line.

Imported both as ``helpers.android_sim.phone`` (tests) and as the top-level ``phone`` package (the
``sim_adb.py`` subprocess, which keeps its start-up light: no pytest, Pillow only for screenshots).
"""

#!/usr/bin/env python3
"""The simulated phone's `adb`: pass this file (or SimulatedPhone.adb_path) as Starweave's --adb-path.

The device's state lives in $STARWEAVE_ANDROID_SIM_DIR (see phone/state.py); this file's folder is
on sys.path when Python runs it, so the device code is imported as the top-level ``phone`` package.
"""

import sys

from phone.cli import main

if __name__ == "__main__":
    sys.exit(main())

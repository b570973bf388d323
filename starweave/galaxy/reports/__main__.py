"""``python -m starweave.galaxy.reports <log_dir>``: (re)build the trajectory report of a Galaxy run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .trajectory import OUTPUT_FILE, GalaxyTrajectory


def main(argv: list[str] | None = None) -> int:
    """Write the report and print its summary; exit status 1 when the folder has no response.log."""
    parser = argparse.ArgumentParser(prog="python -m starweave.galaxy.reports", description=__doc__)
    parser.add_argument("log_dir", type=Path, help="a Galaxy log folder (holds response.log)")
    parser.add_argument("-o", "--output", type=Path, help=f"where to write (default <log_dir>/{OUTPUT_FILE})")
    parser.add_argument("--no-constellation", action="store_true", help="leave out dependency details")
    parser.add_argument("--no-tasks", action="store_true", help="leave out per-task details")
    parser.add_argument("--no-devices", action="store_true", help="leave out device tables")
    args = parser.parse_args(argv)
    try:
        trajectory = GalaxyTrajectory(args.log_dir)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    output = args.output or args.log_dir / OUTPUT_FILE
    trajectory.to_markdown(
        output,
        include_constellation_details=not args.no_constellation,
        include_task_details=not args.no_tasks,
        include_device_info=not args.no_devices,
    )
    print(f"Report: {output}")
    steps, cost, seconds = trajectory.total_steps, trajectory.total_cost, trajectory.total_time
    print(f"Steps: {steps}  Cost: ${cost:.4f}  Time: {seconds:.2f}s")
    print(f"Request: {trajectory.request}")
    for warning in trajectory.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

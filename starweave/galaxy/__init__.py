"""Galaxy: multi-device orchestration (the task constellation model lives in ``constellation``)."""

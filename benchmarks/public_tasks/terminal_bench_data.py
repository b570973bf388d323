"""Terminal-Bench tasks for the LinuxAgent (2/4): data to compute, convert and recover.

Sources, setups and checks as described in :mod:`public_tasks.terminal_bench`: the instruction of
``tasks/<name>/task.yaml`` with ``/app`` paths rewritten into the workspace, our own setup of the
same situation (our own data), and the assertions of ``tests/test_outputs.py`` re-expressed on the
workspace (the comment above each task names its folder and any difference).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from public_tasks.common import PublicTask, read_text, tbench_task, write_files

# ---- heterogeneous-dates ------------------------------------------------------------------------

_HIGHS = {"2025-03-03": 61, "2025-03-04": 66, "2025-03-05": 59, "2025-03-06": 70, "2025-03-07": 64}
_HIGHS |= {"2025-03-08": 58, "2025-03-09": 67}
_LOWS = [("03/05/2025 06:00:00", 45), ("03-03-2025 06:00:00", 47), ("03/04/2025 06:00:00", 50)]
_LOWS += [("03-07-2025 06:00:00", 49), ("03-06-2025 06:00:00", 52), ("03/09/2025 06:00:00", 51)]
_LOWS += [("03-08-2025 06:00:00", 44)]


def _iso(us_date: str) -> str:
    month, day, year = us_date.split(" ")[0].replace("-", "/").split("/")
    return f"{year}-{month}-{day}"


def _dates_setup(root: Path) -> None:
    high = "date,temperature\n" + "".join(f"{d},{t}\n" for d, t in _HIGHS.items())
    low = "date,temperature\n" + "".join(f"{d},{t}\n" for d, t in _LOWS)
    write_files(root, {"daily_temp_sf_high.csv": high, "daily_temp_sf_low.csv": low})


def _dates(workdir: Path, _result: dict[str, Any]) -> str | None:
    text = read_text(workdir / "avg_temp.txt")
    if text is None:
        return "avg_temp.txt does not exist"
    try:
        value = float(text.strip())
    except ValueError:
        return f"avg_temp.txt should hold only a number, not {text[:80]!r}"
    lows = {_iso(d): t for d, t in _LOWS}
    truth = sum(_HIGHS[d] - lows[d] for d in _HIGHS) / len(_HIGHS)
    return None if round(value, 3) == round(truth, 3) else f"expected {truth:.3f}, got {value}"


# ---- organization-json-generator ----------------------------------------------------------------

_DEPARTMENTS = (
    "id,name,budget\nD01,Platform,1200000\nD02,Design,450000\nD03,Finance,700000\n"
    "D04,Field Operations,950000\n"
)
_EMPLOYEES = """id,name,position,skills,years_of_service,department_id
D01-E1,Maren Holt,Staff Engineer,Go;Kubernetes;Mentoring,9,D01
D01-E2,Tobias Lind,Engineer,Python;SQL,3,D01
D01-E3,Ines Carvalho,SRE,Linux;Kubernetes;Networking,6,D01
D02-E1,Yuki Tanabe,Lead Designer,Figma;Research,7,D02
D02-E2,Omar Haddad,Designer,Figma;Illustration,2,D02
D03-E1,Greta Novak,Controller,Accounting;SQL,11,D03
D03-E2,Leon Brandt,Analyst,Excel;SQL;Forecasting,4,D03
D04-E1,Priya Raman,Regional Lead,Logistics;Negotiation,8,D04
D04-E2,Sam Okafor,Technician,Repairs;Logistics,5,D04
"""
_PROJECTS = """name,status,member_ids,deadline,department_id
Atlas,In Progress,D01-E1;D01-E3,2025-06-30,D01
Beacon,Planning,D01-E2,2025-10-01,D01
Canvas,Completed,D02-E1;D02-E2,2025-02-14,D02
Ledger,Testing,D03-E1;D03-E2,2025-05-31,D03
Relay,On Hold,D04-E1;D04-E2,2025-12-15,D04
Harbor,In Progress,D04-E2,2025-08-20,D04
"""
_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["metadata", "organization", "statistics"],
    "properties": {
        "metadata": {"type": "object", "required": ["version", "timestamp", "generator"]},
        "organization": {
            "type": "object",
            "required": ["name", "founded", "departments"],
            "properties": {
                "departments": {
                    "type": "array",
                    "minItems": 3,
                    "items": {
                        "type": "object",
                        "required": ["id", "name", "budget", "employees", "projects"],
                        "properties": {
                            "budget": {"type": "number", "minimum": 0},
                            "employees": {
                                "type": "array",
                                "minItems": 2,
                                "items": {
                                    "type": "object",
                                    "required": ["id", "name", "position", "skills", "years_of_service"],
                                    "properties": {
                                        "skills": {"type": "array", "items": {"type": "string"}},
                                        "years_of_service": {"type": "integer", "minimum": 0},
                                    },
                                },
                            },
                            "projects": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["name", "status", "members", "deadline"],
                                    "properties": {
                                        "status": {
                                            "enum": [
                                                "Planning",
                                                "In Progress",
                                                "Testing",
                                                "Completed",
                                                "On Hold",
                                            ]
                                        },
                                        "members": {"type": "array", "items": {"type": "string"}},
                                    },
                                },
                            },
                        },
                    },
                }
            },
        },
        "statistics": {
            "type": "object",
            "required": [
                "averageDepartmentBudget",
                "totalEmployees",
                "skillDistribution",
                "departmentSizes",
                "projectStatusDistribution",
            ],
        },
    },
}


def _org_setup(root: Path) -> None:
    files = {"departments.csv": _DEPARTMENTS, "employees.csv": _EMPLOYEES, "projects.csv": _PROJECTS}
    write_files(root, {**files, "schema.json": json.dumps(_SCHEMA, indent=2) + "\n"})


def _org(workdir: Path, _result: dict[str, Any]) -> str | None:
    try:
        data = json.loads((workdir / "organization.json").read_text(encoding="utf-8"))
        missing = [key for key in ("metadata", "organization", "statistics") if key not in data]
        if missing:
            return f"organization.json lacks {', '.join(missing)}"
        stats, departments = data["statistics"], data["organization"]["departments"]
        ids = [d["id"] for d in departments]
        if len(departments) < 3 or len(set(ids)) != len(ids):
            return "organization.json needs at least 3 departments with distinct ids"
        # stricter than upstream: the departments are the CSV's
        if set(ids) != {line.split(",")[0] for line in _DEPARTMENTS.splitlines()[1:]}:
            return f"the departments {sorted(ids)} are not those of departments.csv"
        sizes: dict[str, int] = {}
        statuses: dict[str, int] = {}
        for dept in departments:
            members = [e["id"] for e in dept["employees"]]
            if len(members) < 2 or len(set(members)) != len(members):
                return f"department {dept['id']} needs 2 or more employees with distinct ids"
            for project in dept["projects"]:
                strangers = [m for m in project["members"] if m not in members]
                if strangers:
                    return f"project {project['name']} has members outside {dept['name']}: {strangers}"
                statuses[project["status"]] = statuses.get(project["status"], 0) + 1
            sizes[dept["name"]] = len(members)
        average = sum(d["budget"] for d in departments) / len(departments)
        if abs(stats["averageDepartmentBudget"] - average) >= 0.01:
            return f"averageDepartmentBudget is {stats['averageDepartmentBudget']}, expected {average}"
        if stats["totalEmployees"] != sum(sizes.values()):
            return f"totalEmployees is {stats['totalEmployees']}, expected {sum(sizes.values())}"
        for name, size in sizes.items():
            if stats["departmentSizes"][name] != size:
                return f"departmentSizes[{name!r}] is wrong"
        for status, count in statuses.items():
            if stats["projectStatusDistribution"][status] != count:
                return f"projectStatusDistribution[{status!r}] is wrong"
        if "skillDistribution" not in stats:
            return "statistics lacks skillDistribution"
    except OSError:
        return "organization.json does not exist"
    except ValueError:
        return "organization.json is not valid JSON"
    except (KeyError, TypeError, AttributeError) as exc:
        return f"organization.json does not follow the schema (at {exc!s})"
    return None


_ORG_GOLD = """python3 - <<'EOF'
import csv, json
from collections import Counter
depts = list(csv.DictReader(open("departments.csv")))
emps = list(csv.DictReader(open("employees.csv")))
projs = list(csv.DictReader(open("projects.csv")))
out = []
for d in depts:
    staff = [{"id": e["id"], "name": e["name"], "position": e["position"],
              "skills": e["skills"].split(";"), "years_of_service": int(e["years_of_service"])}
             for e in emps if e["department_id"] == d["id"]]
    work = [{"name": p["name"], "status": p["status"], "members": p["member_ids"].split(";"),
             "deadline": p["deadline"]} for p in projs if p["department_id"] == d["id"]]
    out.append({"id": d["id"], "name": d["name"], "budget": float(d["budget"]),
                "employees": staff, "projects": work})
stats = {
    "averageDepartmentBudget": sum(d["budget"] for d in out) / len(out),
    "totalEmployees": sum(len(d["employees"]) for d in out),
    "skillDistribution": dict(Counter(s for d in out for e in d["employees"] for s in e["skills"])),
    "departmentSizes": {d["name"]: len(d["employees"]) for d in out},
    "projectStatusDistribution": dict(Counter(p["status"] for d in out for p in d["projects"])),
}
doc = {"metadata": {"version": "1.0", "timestamp": "2025-01-01T00:00:00Z", "generator": "gold"},
       "organization": {"name": "Example Corp", "founded": "2001-04-01", "departments": out},
       "statistics": stats}
json.dump(doc, open("organization.json", "w"), indent=2)
EOF"""


# ---- password-recovery --------------------------------------------------------------------------

_PASSWORD = "8XDJ5M2RQ7TZ4KWP9LNAW54"
_SPLIT = 10  # the image holds PASSWORD=<first 10> and, further on, the rest


def _noise(rng: random.Random, size: int) -> bytes:
    """Random bytes without upper-case letters or digits (so the fragments are all there is)."""
    allowed = bytes(b for b in range(256) if not (48 <= b <= 57 or 65 <= b <= 90))
    return bytes(allowed[rng.randrange(len(allowed))] for _ in range(size))


def _password_setup(root: Path) -> None:
    assert len(_PASSWORD) == 23 and _PASSWORD.startswith("8XD") and _PASSWORD.endswith("W54")
    rng = random.Random(23)
    files: dict[str, str | bytes] = {}
    for sub in ("tmp", "data", "logs", "backup", "cfg"):
        folder = f"varsea/{sub}-{rng.getrandbits(32):08x}"
        files[f"{folder}/{rng.getrandbits(40)}.bin"] = rng.randbytes(5120)
        files[f"{folder}/20250106-101500.log"] = "Dummy entry at 2025-01-06 10:15:00\n"
    image = bytearray(_noise(rng, 256 * 1024))
    for offset, piece in (
        (32 * 1024, b"\0PASSWORD=" + _PASSWORD[:_SPLIT].encode() + b"\0"),
        (128 * 1024, b"\0system check ok INFO: system check ok\n"),
        (200 * 1024, b"\0" + _PASSWORD[_SPLIT:].encode() + b"\n\0"),
    ):
        image[offset : offset + len(piece)] = piece
    files["varsea/disks/sub1/subA/subAlpha/ae3f4c.dat"] = bytes(image)
    write_files(root, files)


def _password(workdir: Path, _result: dict[str, Any]) -> str | None:
    text = read_text(workdir / "recovered_passwords.txt")
    if text is None:
        return "recovered_passwords.txt does not exist"
    guesses = [line.strip() for line in text.strip().split("\n")]
    return None if _PASSWORD in guesses else f"the password is not among the guesses {guesses[:5]}"


_PASSWORD_GOLD = (
    "img=$(find varsea/disks -type f -name '*.dat' | head -n1); "
    "a=$(grep -aoE '8XD[A-Z0-9]*' \"$img\" | head -n1); b=$(grep -aoE '[A-Z0-9]*W54' \"$img\" | head -n1); "
    'echo "$a$b" > recovered_passwords.txt'
)

# ---- the tasks ----------------------------------------------------------------------------------

TASKS: list[PublicTask] = [
    # laude-institute/terminal-bench tasks/heterogeneous-dates (our temperatures; the truth is computed)
    tbench_task(
        "heterogeneous-dates",
        "I'm headed to San Francisco and need to know how much the temperature changes each day.\n\n"
        "Use the files `daily_temp_sf_high.csv` and `daily_temp_sf_low.csv` to calculate the average\n"
        "difference between the daily high and daily low temperatures. Save this number in a\n"
        "file called `avg_temp.txt`. This file should only contain the number you calculate.",
        _dates,
        _dates_setup,
        """python3 - <<'EOF'
import csv
def iso(d):
    d = d.split(" ")[0]
    if "-" in d and len(d.split("-")[0]) == 4:
        return d
    m, day, y = d.replace("-", "/").split("/")
    return f"{y}-{m}-{day}"
hi = {iso(r["date"]): float(r["temperature"]) for r in csv.DictReader(open("daily_temp_sf_high.csv"))}
lo = {iso(r["date"]): float(r["temperature"]) for r in csv.DictReader(open("daily_temp_sf_low.csv"))}
diffs = [hi[d] - lo[d] for d in hi]
open("avg_temp.txt", "w").write(f"{sum(diffs) / len(diffs)}\\n")
EOF""",
    ),
    # laude-institute/terminal-bench tasks/organization-json-generator (our CSVs and schema)
    tbench_task(
        "organization-json-generator",
        "Create a JSON processor that transforms CSV data into a structured JSON file following the schema "
        "defined in schema.json. Requirements: 1. Use the provided CSV files (departments.csv, "
        "employees.csv, projects.csv) as input data 2. Generate a file called 'organization.json' that "
        "follows the schema defined. 3. The output must include: Organization metadata, Department "
        "information with employees and projects, Statistical calculations",
        _org,
        _org_setup,
        _ORG_GOLD,
    ),
    # laude-institute/terminal-bench tasks/password-recovery (our own image: 256 KiB, not 4 MiB)
    tbench_task(
        "password-recovery",
        "You need to perform a digital forensic recovery task. A system administrator has accidentally "
        "deleted an important file containing a password. The file was named launchcode.txt and was "
        "located somewhere within the current directory.\nYour task is to recover the PASSWORD from the "
        "deleted file.\n\nThe password in launchcode.txt was written in this format: PASSWORD=XXXXXXXXXX\n"
        '- It is exactly 23 characters long\n- It starts with "8XD" and ends with "W54"\n'
        "- The password contains only uppercase letters and digits\n\nYou are allowed to make multiple "
        "guesses. Write each matching password you find, one per line, to the file: "
        "recovered_passwords.txt",
        _password,
        _password_setup,
        _PASSWORD_GOLD,
    ),
]

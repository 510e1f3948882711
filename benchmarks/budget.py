"""The instruction budget: CI fails when a change makes a ``tools/call`` path cost more than it may.

    python benchmarks/budget.py            # check against benchmarks/budget.json (nox -s budget)
    python benchmarks/budget.py --update   # write the counts measured now as the new budget

Each budgeted scenario of ``benchmarks/instructions.py`` (the plain call in both
eras, the signed-in call, the streamed call) is counted under callgrind beside
its floor, the bare Flask view doing the same work. A scenario fails when it
executes more than its budget allows: the budgeted count, scaled by how much
its floor moved since (a newer Flask or Python moves both alike, and is not
this project's change), plus the scenario's tolerance (5 % unless the budget
says otherwise, and why). The budget is changed only by a commit that says
why; ``--update`` keeps each scenario's tolerance and reason.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.instructions import FLOOR_OF, measure

BUDGET = Path(__file__).with_name("budget.json")
#: How much more than its budget a scenario may execute, unless the budget says otherwise.
TOLERANCE = 0.05


def verdicts(budget: dict[str, t.Any], counted: dict[str, float]) -> list[tuple[str, float, float, bool]]:
    """Each budgeted scenario: (name, what it may execute now, what it executed, whether that is within)."""
    found = []
    for name, entry in budget["scenarios"].items():
        floor = FLOOR_OF[name]
        drift = counted[floor] / budget["floors"][floor]
        allowed = entry["instructions_per_call"] * drift * (1 + entry.get("tolerance", TOLERANCE))
        found.append((name, allowed, counted[name], counted[name] <= allowed))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100, help="counted calls per scenario (default 100)")
    parser.add_argument("--jobs", type=int, default=2, help="callgrind runs at once (default 2)")
    parser.add_argument("--budget", type=Path, default=BUDGET, help=f"the budget file (default {BUDGET.name})")
    parser.add_argument("--update", action="store_true", help="write the counts measured now as the budget")
    args = parser.parse_args(argv)
    if not shutil.which("valgrind"):
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    budget = json.loads(args.budget.read_text())
    names = list(budget["scenarios"])
    floors = sorted({FLOOR_OF[name] for name in names})
    counted = measure([*floors, *names], args.calls, args.jobs)
    if args.update:
        budget["floors"] = {floor: round(counted[floor]) for floor in floors}
        for name in names:
            budget["scenarios"][name]["instructions_per_call"] = round(counted[name])
        args.budget.write_text(json.dumps(budget, indent=2) + "\n")
        print(f"budget written to {args.budget}")
        return 0
    failed = 0
    print(f"{'scenario':<22}{'may execute':>14}{'executed':>14}{'':>6}")
    for name, allowed, executed, within in verdicts(budget, counted):
        failed += not within
        print(f"{name:<22}{allowed:>14,.0f}{executed:>14,.0f}  {'ok' if within else 'OVER'}")
    if failed:
        print(
            f"{failed} scenario(s) over budget: a change made a call cost more. Make it cheaper, or change "
            "benchmarks/budget.json (python benchmarks/budget.py --update) in a commit that says why.",
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

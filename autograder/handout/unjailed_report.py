"""check.py's words: an exercise's report as the student reads it, and what --json writes.

Each cause is said once, in the grader's grouping (judge/causes.py); a check that waits on another
exercise of yours is counted apart (unjailed_siblings.py).
"""

from __future__ import annotations

if __package__:               # in the kit
    from . import unjailed, unjailed_siblings
else:                         # beside check.py
    import unjailed
    import unjailed_siblings

points = unjailed.judge("points")
MARK = {"passed": "ok", "failed": "wrong", "error": "error", "not_implemented": "todo"}
BLOCKED = unjailed_siblings.BLOCKED


def score(outcomes: list) -> float:
    return points.added(points.earned(o.status, o.check["points"]) for o in outcomes if o.status != BLOCKED)


def report(stem: str, outcomes: list, spec: dict) -> bool:
    earned = score(outcomes)
    waiting = [o for o in outcomes if o.status == BLOCKED]
    total = points.added(o.check["points"] for o in outcomes)
    passed = sum(o.status == "passed" for o in outcomes)
    if outcomes:
        undecided = (f"; {len(waiting)} wait on {', '.join(dict.fromkeys(o.waiting_on for o in waiting))} "
                     f"({sum(o.check['points'] for o in waiting):g} points not decided)") if waiting else ""
        print(f"\n{stem} ({spec.get('checked_file', '-')}): {passed}/{len(outcomes)} visible checks passed, "
              f"{earned:g}/{total:g} points{undecided}")
    else:
        print(f"\n{stem}: no visible check chosen")
    if spec.get("why"):
        print(f"  checked from {spec['checked_file']}: {spec['why']}")
    for note in spec.get("notes", []):
        print(f"  note: {note}")
    for reason in dict.fromkeys(o.message for o in waiting):          # each cause once, then its checks
        ids = [o.check["id"] for o in waiting if o.message == reason]
        print(f"  waits: {reason}\n    not decided: {', '.join(ids)}")
    failed = [o for o in outcomes if o.status not in ("passed", BLOCKED)]
    unanswered = len(failed) == len(outcomes) and not any(o.hint for o in failed)
    if failed and unanswered and (len({o.message for o in failed}) == 1 or
                                  all(o.status == "not_implemented" for o in failed)):
        for message in dict.fromkeys(o.message for o in failed):     # said once each, in order
            print(f"  {message}")
    elif failed:        # each cause once: what its checks share, then what is each one's own
        answers, grouping = unjailed.judge("answers"), unjailed.judge("causes")
        found = grouping.group_causes((grouping.Failure(o.check["id"], o.status, o.message, o.hint,
                                                        tuple(getattr(o, "mistakes", ())), title=o.check["title"])
                                       for o in failed), advice=(answers.GENERIC_ERROR_HINT,))
        for line in grouping.plain_lines(found, lambda f: MARK[f.status], lambda f: f"{f.id} ({f.title})"):
            print(line)
    notes = dict.fromkeys(o.message for o in outcomes if o.status == "passed" and o.message)
    for note in notes:
        print(f"  note: {note}")
    if spec["hand_values_later"] and not failed and not notes:
        print("  your answers are consistent; their values are graded after you hand in")
    if spec["hidden"]:
        print(f"  and {spec['hidden']} hidden check(s)")
    return not failed and not waiting


def results_json(checked: dict[str, tuple[list, dict]]) -> dict:
    """What --json writes: each exercise's file and each visible check's id, status and score, its
    message and hint, and the ids of the known mistakes the hint names. A check that waits on
    another exercise of yours has status "blocked", score null and "waiting_on" that exercise."""
    return {"format": 1, "exercises": {stem: {
        "file": spec.get("checked_file", "-"),
        "checks": [{"id": o.check["id"], "status": o.status,
                    "score": None if o.status == BLOCKED else points.earned(o.status, o.check["points"]),
                    "max_score": o.check["points"], "message": o.message, "hint": o.hint,
                    "mistakes": list(getattr(o, "mistakes", ())),
                    **({"waiting_on": o.waiting_on} if o.status == BLOCKED else {})}
                   for o in outcomes]}
        for stem, (outcomes, spec) in checked.items()}}

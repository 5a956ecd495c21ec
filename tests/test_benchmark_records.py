"""Benchmark records (benchmarks/record.py) and the page made from them (benchmarks/measurements.py):
one shape for every record, and docs/measurements.md's results part rewritten from them alone."""

from __future__ import annotations

import json

import pytest

from benchmarks import measurements, record


@pytest.fixture
def results(tmp_path, monkeypatch):
    folder = tmp_path / "results"
    monkeypatch.setenv("ATTNKIT_BENCH_RESULTS", str(folder))
    monkeypatch.setattr("sys.argv", ["benchmarks/bench_watch.py", "--saves", "3"])
    return folder


def test_a_record_has_the_common_shape_and_the_benchmarks_figures(results):
    path = record.write("watch", {"saves": 3, "exercises": {"scaling": {"median_s": 0.0912}}},
                        headline=[record.figure("re-grade after a save", 0.0912, "s", target="under 0.1 s")])
    assert path == results / "watch.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["benchmark"] == "watch"
    assert data["command"] == "python benchmarks/bench_watch.py --saves 3"
    assert len(data["commit"]) >= 7 and isinstance(data["dirty"], bool)
    assert {"cpus", "python", "load_before", "load_after"} <= set(data["machine"])
    assert data["exercises"] == {"scaling": {"median_s": 0.0912}}
    assert data["headline"] == [{"figure": "re-grade after a save", "value": 0.0912, "unit": "s",
                                 "target": "under 0.1 s"}]


def test_the_page_shows_each_headline_figure_with_its_anchor_and_ratio(results):
    record.write("class-60", {}, headline=[record.figure(
        "`attnkit grade` per submission, 60 students", 0.3, "s", anchor="plain nbgrader, one notebook",
        anchor_value=6.0, ratio=20.0, ratio_is="anchor / value", target="at least 20x")])
    shown = measurements.render(measurements.load(results))
    row = next(line for line in shown.splitlines() if line.startswith("| `attnkit grade`"))
    assert row == ("| `attnkit grade` per submission, 60 students | 0.3 s | plain nbgrader, one notebook: 6 s "
                   "| 20.00x as fast | at least 20x | class-60 |")
    assert "python benchmarks/bench_watch.py --saves 3" in shown


def test_a_speedups_record_shows_each_speedup_against_all_on(results):
    results.mkdir()
    (results / "speedups.json").write_text(json.dumps({
        "benchmark": "speedups", "date": "2026-01-01T00:00:00+0000", "commit": "abc1234", "machine": {"cpus": 2},
        "rows": [{"path": "check", "off": "all on", "median_s": 10.0, "ratio_off_on": 1.0},
                 {"path": "check", "off": "-course_cache", "median_s": 12.5, "ratio_off_on": 1.25}]}))
    shown = measurements.render(measurements.load(results))
    assert "| `check` with course_cache off | 12.5 s | every speed-up on | 1.25x the anchor |" in shown
    assert "all on" not in shown.split("Each record")[0]


def test_only_the_part_between_the_markers_is_rewritten_and_check_says_when_it_is_stale(results, tmp_path):
    page = tmp_path / "measurements.md"
    page.write_text(f"# Measurements\n\nprose kept\n\n{measurements.BEGIN}\nold figures\n{measurements.END}\n"
                    "\nafter\n", encoding="utf-8")
    record.write("watch", {}, headline=[record.figure("re-grade after a save", 0.09, "s")])
    assert measurements.main(["--results", str(results), "--page", str(page), "--check"]) == 1
    assert measurements.main(["--results", str(results), "--page", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Measurements\n\nprose kept\n\n") and text.endswith(f"{measurements.END}\n\nafter\n")
    assert "old figures" not in text and "| re-grade after a save | 0.09 s |" in text
    assert measurements.main(["--results", str(results), "--page", str(page), "--check"]) == 0


def test_a_file_that_is_not_a_record_is_skipped_and_said(results, capsys):
    results.mkdir()
    (results / "notes.json").write_text('{"figures": 1}')
    (results / "broken.json").write_text("{")
    assert measurements.load(results) == []
    said = capsys.readouterr().err
    assert "notes.json: not a benchmark record" in said and "broken.json: not read" in said


def test_a_record_is_of_a_clean_tree_when_only_other_records_changed(tmp_path, monkeypatch):
    """Benchmarks run one after another write their records into the tree: those do not make the
    next record's tree dirty; a change to the code does."""
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "check.json").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "kit")
    monkeypatch.setattr(record, "KIT", tmp_path)
    (tmp_path / "benchmarks" / "results" / "check.json").write_text('{"new": 1}\n')
    assert record._commit()["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert record._commit()["dirty"] is True

"""A course file validated once is read again from the cache (autograder/config/course_cache.py): the
same CourseConfig, without YAML or validation; anything else about the file is decided as before."""

import dataclasses
import json
from pathlib import Path

import pytest

from autograder import config
from autograder.checks import check_ids
from autograder.config import DEFAULT_COURSE, KIT_ROOT, ConfigError, course_cache, load_course
from autograder.config.course import CheckConfig, course_data
from autograder.config.limits import Limits

pytestmark = pytest.mark.speedup("course_cache")

# Every setting away from its default, the points shorthand and the long form both used.
EVERY_SETTING = {
    "seed: 20261122": "seed: 7",
    "hints: diagnose": "hints: generic",
    "call_timeout: 10 ": "call_timeout: 3 ",
}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "course"


def _course_file(tmp_path: Path, edits: dict[str, str] | None = None) -> Path:
    text = DEFAULT_COURSE.read_text(encoding="utf-8")
    for old, new in (edits or {}).items():
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "course.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _no_validation(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("validated again")

    monkeypatch.setattr(config, "_validated", refuse)


def _types(value, path="course"):
    """Every nested value's type, by path: the rebuilt course must hold the validated one's types."""
    if dataclasses.is_dataclass(value):
        out = {path: type(value)}
        for f in dataclasses.fields(value):
            out.update(_types(getattr(value, f.name), f"{path}.{f.name}"))
        return out
    if isinstance(value, dict):
        out = {path: dict}
        for key, item in value.items():
            out.update(_types(item, f"{path}[{key}]"))
        return out
    return {path: type(value)}


def test_a_course_read_twice_is_the_same_course_the_second_time_from_the_cache(tmp_path, monkeypatch, private_cache):
    path = _course_file(tmp_path, EVERY_SETTING)
    first = load_course(path, known_checks=check_ids())
    assert len(list(private_cache.glob("*.json"))) == 1
    _no_validation(monkeypatch)
    again = load_course(path, known_checks=check_ids())
    assert again == first and course_data(again) == course_data(first)
    assert _types(again) == _types(first)
    assert isinstance(again.limits, Limits) and again.limits.call_timeout == 3.0
    assert again.seed == 7 and again.hints == "generic"
    binary_mask = "attention.scaled_dot_product_attention.binary_mask"
    assert again.check(binary_mask).hidden is True
    assert again.check(binary_mask).points == first.check(binary_mask).points
    assert again.max_points("attention") == first.max_points("attention")
    # frozen, as validated
    with pytest.raises(Exception):
        again.seed = 8


def test_a_changed_file_is_validated_again(tmp_path, monkeypatch):
    path = _course_file(tmp_path)
    load_course(path)
    path.write_text(path.read_text() + "\n", encoding="utf-8")       # one byte more
    _no_validation(monkeypatch)
    with pytest.raises(AssertionError, match="validated again"):
        load_course(path)


def test_a_broken_or_foreign_cache_entry_is_a_miss(tmp_path, private_cache):
    path = _course_file(tmp_path)
    first = load_course(path)
    entry = next(private_cache.glob("*.json"))
    for text in ("{not json", '{"course": "x", "unknown": 1}', '{"exercises": [1, 2]}', "[]"):
        entry.write_text(text, encoding="utf-8")
        assert load_course(path) == first                 # validated from the file again
    kept = json.loads(entry.read_text(encoding="utf-8"))                   # and kept again
    assert kept == json.loads(json.dumps(course_data(first)))
    assert kept["tolerances"]["hand"] == 0.006     # the exercises' own tolerances are kept too


def test_a_cached_course_still_meets_the_kits_checks(tmp_path, private_cache):
    """The ids are checked on every load, cached or not, with the line of the mistake."""
    path = _course_file(tmp_path, {"attention.softmax.rows: 1": "attention.softmax.rowz: 1"})
    load_course(path)                                      # valid as a course file: cached
    assert list(private_cache.glob("*.json"))
    for _ in range(2):
        with pytest.raises(ConfigError) as err:
            load_course(path, known_checks=check_ids())
        line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "rowz" in text)
        assert f"{path}:{line}: exercises.attention.checks.attention.softmax.rowz: no such check" in str(err.value)


def test_an_invalid_file_is_never_cached(tmp_path, private_cache):
    path = _course_file(tmp_path, {"hints: diagnose": "hints: sometimes"})
    for _ in range(2):
        with pytest.raises(ConfigError, match="hints"):
            load_course(path)
    assert not private_cache.exists() or not list(private_cache.glob("*.json"))


@dataclasses.dataclass(frozen=True)
class _Odd:
    values: list[int]


def test_a_type_the_cache_cannot_rebuild_is_refused():
    with pytest.raises(TypeError):
        course_cache.rebuilt(_Odd, {"values": [1, 2]})
    with pytest.raises(TypeError):      # a field missing, or one more, is not the data of the type
        course_cache.rebuilt(CheckConfig, {"points": 1.0})
    with pytest.raises(TypeError):
        course_cache.rebuilt(CheckConfig, {"points": 1.0, "hidden": False, "bonus": 2})


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("ATTNKIT_CACHE_DIR", str(blocked))
    path = _course_file(tmp_path)
    assert load_course(path) == load_course(path)
    assert blocked.read_text() == "a file where the cache folder would be"


def test_an_exercises_own_tolerances_come_back_from_the_cache(tmp_path, monkeypatch, private_cache):
    """`tolerances.hand` and `.scaling`, which one exercise each reads: the cached course holds the
    file's values, in their own types."""
    path = _course_file(tmp_path, {"hand: 0.006": "hand: 0.02", "std_rel: 0.15": "std_rel: 0.2"})
    first = load_course(path)
    _no_validation(monkeypatch)
    again = load_course(path)
    assert again.tolerances.hand == 0.02 and again.tolerances.scaling.std_rel == 0.2
    assert type(again.tolerances.scaling) is type(first.tolerances.scaling) and again == first


def test_a_course_from_the_cache_imports_neither_pydantic_nor_yaml_and_is_the_validated_course(tmp_path,
                                                                                              private_cache):
    """A new process (a cold `attnkit check`) that reads the course back imports neither pydantic nor
    PyYAML (their imports would be most of a cold check's start above numpy), and holds the course the
    validation made (the class run's fingerprints, the cluster's transport and the report read its data)."""
    import os
    import subprocess
    import sys

    path = _course_file(tmp_path, {"std_rel: 0.15": "std_rel: 0.2"})
    validated = load_course(path, known_checks=check_ids())
    assert len(list(private_cache.glob("*.json"))) == 1
    code = ("import json, sys\n"
            "from autograder.checks import check_ids\n"
            "from autograder.config import load_course\n"
            "from autograder.config.course import course_data\n"
            f"course = load_course({str(path)!r}, known_checks=check_ids())\n"
            "imported = sorted(m for m in ('pydantic', 'pydantic_core', 'annotated_types', 'yaml') if m in sys.modules)\n"
            "print(json.dumps([imported, course_data(course), repr(course)]))\n")
    env = dict(os.environ, ATTNKIT_CACHE_DIR=str(private_cache.parent))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=KIT_ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    imported, data, shown = json.loads(run.stdout)
    assert imported == []
    assert data == json.loads(json.dumps(course_data(validated)))
    assert shown == repr(validated)          # the same types, field by field, as validated
    assert data["tolerances"]["scaling"]["std_rel"] == 0.2

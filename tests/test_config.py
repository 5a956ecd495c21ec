"""course.yml is validated at load, and a mistake names the file, the line and the key."""

from pathlib import Path

import pytest
import yaml

from autograder.checks import check_ids
from autograder.config import DEFAULT_COURSE, ConfigError, load_course


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    text = DEFAULT_COURSE.read_text(encoding="utf-8")
    assert old in text
    return _write(tmp_path, text.replace(old, new, 1))


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_kits_course_file_is_valid_and_covers_every_check(course):
    assert course.assignment == "self_attention"
    for stem, ids in check_ids().items():
        assert sorted(course.exercises[stem].checks) == sorted(ids)
        assert course.max_points(stem) > 0


def test_points_shorthand_and_hidden_form(course, tmp_path):
    assert course.check("attention.softmax.rows").points == 1
    assert course.check("attention.scaled_dot_product_attention.binary_mask").hidden is True
    assert course.check("attention.softmax.rows").hidden is False


@pytest.mark.parametrize("old, new, key", [
    ("call_timeout: 10 ", "call_timeout: -1 ", "limits.call_timeout"),
    ("hints: diagnose", "hints: sometimes", "hints"),
    ("seed: 20261122", "seed: lots", "seed"),
    ("memory_mb: 2048", "memory_mb: 2048\n  memroy_mb: 5", "limits.memroy_mb"),
    # the tolerances one exercise reads are located the same way
    ("hand: 0.006", "hand: 3", "tolerances.hand"),
    ("std_rel: 0.15", "std_rel: 0", "tolerances.scaling.std_rel"),
    ("hand: 0.006", "hand: 0.006\n  hands: 0.01", "tolerances.hands"),
    # the points shorthand is bounded as the long form is
    ("attention.softmax.rows: 1", "attention.softmax.rows: -1", "exercises.attention.checks.attention.softmax.rows"),
    ("course: ", "course: x\ncourse_name: ", "course_name"),
])
def test_a_bad_value_is_reported_with_its_key_and_line(tmp_path, old, new, key):
    path = _edited(tmp_path, old, new)
    with pytest.raises(ConfigError) as err:
        load_course(path)
    line = _line_of(path, new.splitlines()[-1].strip().split(":")[0] + ":")
    assert f"{path}:{line}: {key}:" in str(err.value)


def test_an_unknown_check_id_is_reported_with_its_line(course_at, tmp_path):
    path = _edited(tmp_path, "attention.softmax.rows: 1", "attention.softmax.rowz: 1")
    with pytest.raises(ConfigError) as err:
        course_at(path)
    text = str(err.value)
    assert f"{path}:{_line_of(path, 'rowz')}: exercises.attention.checks.attention.softmax.rowz: no such check" in text
    assert "no points given for attention.softmax.rows" in text


def test_invalid_yaml_names_the_line(tmp_path):
    path = _write(tmp_path, "course: x\nseed: 1\nexercises: {attention: [\n")
    with pytest.raises(ConfigError, match=r"course.yml:\d+: not valid YAML"):
        load_course(path)


def test_a_missing_file_and_a_non_mapping_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the course file"):
        load_course(tmp_path / "nope.yml")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_course(_write(tmp_path, "- just\n- a list\n"))


def test_an_exercise_may_be_left_out(course_at, tmp_path):
    data = yaml.safe_load(DEFAULT_COURSE.read_text())
    del data["exercises"]["scaling"]
    course = course_at(_write(tmp_path, yaml.safe_dump(data)))
    assert "scaling" not in course.exercises


def test_a_key_written_twice_is_an_error_naming_both_lines(tmp_path):
    # PyYAML keeps the last of two equal keys without a word: the points of the first vanished.
    text = DEFAULT_COURSE.read_text(encoding="utf-8")
    rows = next(line for line in text.splitlines() if line.strip().startswith("attention.softmax.rows:"))
    last_softmax = max(i for i, line in enumerate(text.splitlines()) if line.strip().startswith("attention.softmax."))
    lines = text.splitlines()
    lines.insert(last_softmax + 1, rows.replace(": 1", ": 5"))
    lines.insert(1, "seed: 7")                  # the top level too (the file sets its seed further down)
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as err:
        load_course(path)
    numbered = [i for i, line in enumerate(path.read_text().splitlines(), 1)
                if line.strip().startswith("attention.softmax.rows:")]
    seeds = [i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("seed:")]
    assert len(numbered) == 2 and len(seeds) == 2
    text = str(err.value)
    assert (f"{path}:{numbered[0]} and {path}:{numbered[1]}: exercises.attention.checks.attention.softmax.rows "
            f"appears twice") in text
    assert f"{path}:{seeds[0]} and {path}:{seeds[1]}: seed appears twice" in text



def test_an_exercises_own_tolerances_have_defaults_and_are_read(tmp_path):
    """`tolerances.hand` and `tolerances.scaling`, which one exercise each reads: a course file that
    leaves them out gets their defaults; one that sets them is read."""
    text = DEFAULT_COURSE.read_text(encoding="utf-8")
    start = text.index("  hand: 0.006")
    end = text.index("\n\n", start)
    without = load_course(_write(tmp_path, text[:start] + text[end:]))
    assert without.tolerances.hand == 0.006 and without.tolerances.scaling.std_rel == 0.15
    looser = load_course(_edited(tmp_path, "hand: 0.006", "hand: 0.02"))
    assert looser.tolerances.hand == 0.02


def test_an_exercises_own_tolerances_travel_with_the_course(tmp_path):
    """The cluster sends the course as JSON, the fingerprints hash its dump and the nbgrader course
    writes it back as YAML: the exercises' own tolerances must be in each, as the file set them."""
    import json

    from autograder.config.course import course_data, course_from_data

    course = load_course(_edited(tmp_path, "hand: 0.006", "hand: 0.02"))
    sent = json.dumps(course_data(course))
    assert '"hand": 0.02' in sent
    again = course_from_data(json.loads(sent))
    assert again == course and again.tolerances.hand == 0.02
    assert type(again.tolerances.scaling) is type(course.tolerances.scaling)
    assert load_course(_write(tmp_path, yaml.safe_dump(course_data(course)))).tolerances.hand == 0.02


def test_a_courses_json_is_made_once_and_follows_the_course_asked_for():
    import dataclasses
    import json

    from autograder.config import load_course
    from autograder.config.course import course_data, course_json

    course = load_course()
    other = dataclasses.replace(course, seed=course.seed + 1)
    assert course_json(course) == json.dumps(course_data(course))
    assert course_json(course) is course_json(course)          # made once, not per call
    for _ in range(2):                                            # alternating: each its own
        assert json.loads(course_json(other))["seed"] == course.seed + 1
        assert json.loads(course_json(course))["seed"] == course.seed

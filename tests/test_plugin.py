"""`pytest autograder --submission DIR` runs the same checks as `attnkit check`, in a real pytest."""

import json
import shutil

import pytest

from autograder.checks import check_ids
from autograder.cli import main
from autograder.config import KIT_ROOT
from autograder.results import HIDDEN_CHECK_NOTE

N_CHECKS = sum(len(ids) for ids in check_ids().values())


def _run(pytester: pytest.Pytester, *args):
    return pytester.runpytest_subprocess(str(KIT_ROOT / "autograder"), "-p", "no:cacheprovider", *args,
                                         timeout=300)


def test_solutions_pass_every_check(pytester):
    result = _run(pytester, "--submission", str(KIT_ROOT / "solutions"), "-q")
    result.assert_outcomes(passed=N_CHECKS)
    result.stdout.fnmatch_lines(["*attnkit score*", "total*60 / 60*seed 20261122*"])


def test_stubs_fail_with_the_graders_words_not_a_traceback(pytester, tmp_path):
    sub = tmp_path / "stubs"
    sub.mkdir()
    for path in (KIT_ROOT / "exercises").glob("*.py"):
        shutil.copy(path, sub / path.name)
    result = _run(pytester, "--submission", str(sub), "-k", "softmax")
    result.assert_outcomes(failed=4, deselected=N_CHECKS - 4)
    result.stdout.fnmatch_lines(["*[not_implemented]*", "*not implemented yet: softmax raises NotImplementedError*"])
    assert "Traceback" not in result.stdout.str()


def test_options_are_mirrored_in_ini(pytester):
    pytester.makeini(f"[pytest]\nattnkit_submission = {KIT_ROOT / 'solutions'}\n")
    result = pytester.runpytest_subprocess(str(KIT_ROOT / "autograder"), "-c", str(pytester.path / "tox.ini"),
                                           "--rootdir", str(KIT_ROOT), "-q", "-k", "hand_computation", timeout=300)
    result.assert_outcomes(passed=len(check_ids()["hand_computation"]), deselected=N_CHECKS - 7)


def test_a_bad_submission_option_names_its_source(pytester, tmp_path):
    result = _run(pytester, "--submission", str(tmp_path / "nowhere"), "-q")
    assert result.ret != 0
    assert "--submission / attnkit_submission" in result.stderr.str() + result.stdout.str()


def test_attnkit_check_prints_a_table_and_writes_results_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["check", "--submission", str(KIT_ROOT / "demo" / "class" / "cleo"), "--json", str(out),
                 "--exercise", "attention"])
    printed = capsys.readouterr().out
    assert code == 1
    assert "attention" in printed and "11/15" in printed and "seed 20261122" in printed
    assert "row 0 of your weights sums to" in printed
    data = json.loads(out.read_text())
    assert data["score"] == 11 and len(data["tests"]) == len(check_ids()["attention"])


def test_attnkit_check_on_the_solutions_exits_zero(capsys):
    assert main(["check", "--submission", str(KIT_ROOT / "solutions")]) == 0
    assert "60/60" in capsys.readouterr().out


def test_attnkit_reports_a_bad_course_file_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "course.yml"
    bad.write_text("course: x\nseed: -4\nexercises: {}\n")
    assert main(["--course", str(bad), "check", "--submission", str(KIT_ROOT / "solutions")]) == 2
    assert f"{bad}:2: seed:" in capsys.readouterr().err


def test_hidden_checks_show_as_attnkit_check_shows_them(pytester, capsys):
    """A failed hidden check: its title, that it failed, and the hint made for it (what kind of
    input to try, the mistake named); never its message or a hidden value."""
    cleo = KIT_ROOT / "demo" / "class" / "cleo"
    result = _run(pytester, "--submission", str(cleo), "-k", "binary_mask or bool_mask")
    result.assert_outcomes(failed=2, deselected=N_CHECKS - 2)
    out = result.stdout.str()
    hidden_line = HIDDEN_CHECK_NOTE
    # The failure section of the hidden check (binary_mask), up to the next header (____ or ====).
    start = out.index("test_check[attention.scaled_dot_product_attention.binary_mask] _")
    end = min(i for i in (out.find("\n_", start), out.find("\n=", start), len(out)) if i >= 0)
    block = out[start:end]
    assert hidden_line in block and "hint: A hidden check failed (a 0/1 float mask" in block
    assert "entries of output differ" not in block and "misconception:" not in block
    assert "misconception: mask_after_softmax" in out                    # the visible bool_mask's tag
    main(["check", "--submission", str(cleo), "--exercise", "attention"])
    assert hidden_line in capsys.readouterr().out

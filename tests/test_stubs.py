"""A graded function that does nothing yet is a stub: "not implemented yet", in intake's choice
and in every report, like one that raises NotImplementedError."""

import textwrap

import pytest

from autograder.intake.stubs import has_work, stubs, stubs_and_work

BODIES = {"pass": "pass", "ellipsis": "...", "return None": "return None", "bare return": "return",
          "docstring": '"""Softmax along axis."""', "not implemented": "raise NotImplementedError('todo')"}


@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_function_that_does_nothing_is_a_stub(body):
    source = f"import numpy as np\n\ndef softmax(x, axis=-1):\n    \"\"\"doc\"\"\"\n    {BODIES[body]}\n"
    assert stubs(source, "attention") == {"softmax"}
    assert not has_work(source, "attention")
    assert stubs_and_work(source, "attention") == ({"softmax"}, False)      # one parse, the same rules


def test_work_is_not_a_stub_and_the_last_definition_counts():
    source = textwrap.dedent("""\
        def softmax(x, axis=-1):
            pass

        def softmax(x, axis=-1):
            y = x                      # work, even if it forgets to return
        def scaled_dot_product_attention(Q, K, V, mask=None):
            return None
        def helper():
            pass
        """)
    assert stubs(source, "attention") == {"scaled_dot_product_attention"}
    assert has_work(source, "attention")


def test_a_class_whose_methods_but_init_do_nothing_is_a_stub():
    source = textwrap.dedent("""\
        class MultiHeadAttention:
            def __init__(self, d_model, num_heads):
                self.d_model = d_model
            def forward(self, x, mask=None):
                return None
        """)
    assert stubs(source, "multihead") == {"MultiHeadAttention"}
    assert stubs(source.replace("return None", "return x, x"), "multihead") == frozenset()


def test_source_that_does_not_parse_has_no_stubs_and_is_work():
    assert stubs("def softmax(:\n    pass\n", "attention") == frozenset()
    assert has_work("def softmax(:\n    pass\n", "attention")
    assert stubs_and_work("def softmax(:\n    pass\n", "attention") == (frozenset(), True)


# A process set up as the parse helper is, after its warm-up; then, to read, as a child of it.
WARMED_HELPER = ("import sys, os\n"
                 "import autograder.sandbox.helper_server as h\n"
                 "h.role = 'helper'; os.environ[h.INSIDE_ENV] = '1'\n"
                 "import autograder.intake.parse_helper as p\n"
                 "p.warm()\n")
AS_ITS_CHILD = "h.role = 'child'; h.ops = p.OPS; h.module_name = 'autograder.intake.parse_helper'\n"
NUMPY_OR_CHECKS = "sorted(m for m in sys.modules if m.split('.')[0] == 'numpy' or m.startswith('autograder.checks'))"


def _lines_of(probe: str) -> list[str]:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.splitlines()


def test_the_parse_helper_reads_without_importing_the_checks_or_numpy():
    """The helper that reads students' files starts first in a check and forks a child per item:
    it learns each stem's graded names from the grader's request, not by importing every exercise."""
    assert _lines_of(WARMED_HELPER + f"print({NUMPY_OR_CHECKS})\n") == ["[]"]


def _read_in_a_child_of_the_warmed_helper(tmp_path, files, report: str) -> list[str]:
    """`files` read (and staged) as a child of the parse helper reads them; its lines: the file
    read for attention, then `report` (an expression, with `before` the modules imported before
    the reading)."""
    import shutil

    upload, staged = tmp_path / "upload", tmp_path / "staged"
    upload.mkdir()
    staged.mkdir()
    for path in files:
        shutil.copy(path, upload / path.name)
    return _lines_of(WARMED_HELPER + AS_ITS_CHILD +
                     "from autograder.intake import stubs, staging\n"
                     "before = set(sys.modules)\n"
                     "with stubs.graded_as({'attention': ['softmax', 'scaled_dot_product_attention']}):\n"
                     f"    found = staging.read_here({str(upload)!r}, [], {str(staged)!r}, ['attention'])\n"
                     "print(found['loaded']['attention']['filename'])\n"
                     f"print({report})\n")


def test_a_child_that_reads_a_notebook_passes_on_the_graded_names_it_was_sent(tmp_path):
    """A child reading a folder forks again for a notebook: its request carries the graded names
    the child was sent, not the contract's (which would import every exercise and numpy there)."""
    from autograder.config.paths import KIT_DATA

    files = [KIT_DATA / "exercises" / name for name in ("attention.py", "attention.ipynb")]
    said = _read_in_a_child_of_the_warmed_helper(tmp_path, files, NUMPY_OR_CHECKS)
    assert said[-1] == "[]", said


def test_a_child_of_the_warmed_helper_reads_python_files_without_importing(tmp_path):
    """What reading a student's .py files needs is imported by the helper before it forks (its
    warm-up): a child, one per student, imports nothing from disk (the text's codec included)."""
    from autograder.config.paths import KIT_DATA

    files = sorted((KIT_DATA / "solutions").glob("*.py"))
    said = _read_in_a_child_of_the_warmed_helper(tmp_path, files, "sorted(set(sys.modules) - before)")
    assert said == ["attention.py", "[]"], said


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
def test_a_bounded_child_finds_the_stubs_the_contract_names(folder):
    """The child reads with the graded names the grader sent; the grader's own rule agrees."""
    from autograder.config.paths import KIT_DATA
    from autograder.intake import facts

    for path in sorted((KIT_DATA / folder).glob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = facts.of((text,), path.stem)          # in a bounded child of the parse helper
        assert found.stubs == stubs(text, path.stem), path.name
        assert found.has_work == has_work(text, path.stem), path.name
    assert facts.of(((KIT_DATA / "exercises" / "attention.py").read_text(encoding="utf-8"),), "attention").stubs


def test_a_bounded_child_finds_what_a_file_imports_from_the_other_exercises():
    """What a note says of a sibling import (grading/submission.py) is read in the child that parsed
    the file: the grader's own process parses none of the student's code for it."""
    from autograder.intake import facts

    text = ("# imports anywhere\nimport numpy as np\nfrom attention import softmax, scaled_dot_product_attention\n"
            "def causal_mask(n):\n    import attention\n    from .attention import softmax as relative\n"
            "    return np.tril(np.ones((n, n), dtype=bool))\n")
    found = facts.of((text,), "causal_mask")           # in a bounded child of the parse helper
    assert found.imports_from == {"attention": ("softmax", "scaled_dot_product_attention", "attention")}
    assert facts.imported_from(text, "causal_mask", "attention") == ["softmax", "scaled_dot_product_attention",
                                                                     "attention"]
    assert facts.imported_from(text, "causal_mask", "multihead") == []
    assert facts.of(("def causal_mask(:\n",), "causal_mask").imports_from == {}    # work in progress: nothing


def test_the_note_of_an_imported_stub_is_said_without_parsing_in_the_grader(sandbox, course, tmp_path, monkeypatch):
    """causal_mask.py imports softmax from attention.py, the stub; the work is in Attention.py. The
    note names it, with every parse of the student's code in this process refused."""
    from autograder.config.paths import KIT_DATA
    from autograder.grading.submission import grade_submission
    from autograder.judge import forms

    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "attention.py").write_text((KIT_DATA / "exercises" / "attention.py").read_text(encoding="utf-8"))
    (folder / "Attention.py").write_text((KIT_DATA / "solutions" / "attention.py").read_text(encoding="utf-8"))
    (folder / "causal_mask.py").write_text("from attention import softmax  # this test's\n"
                                           + (KIT_DATA / "solutions" / "causal_mask.py").read_text(encoding="utf-8"))

    def refused(*_args, **_kwargs):
        raise AssertionError("the grader parsed a student's code")
    for name in ("imports_of", "imported_from", "has_work", "stub_names"):
        monkeypatch.setattr(forms, name, refused)
    result = grade_submission(folder, course, sandbox, stems=("attention", "causal_mask"))
    note = next(e.note for e in result.exercises if e.stem == "causal_mask")
    assert "causal_mask.py imports softmax from attention.py, which is still the stub; your work is in Attention.py" \
        in note and "(the grader used a correct attention)" in note, note

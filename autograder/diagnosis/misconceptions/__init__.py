"""What the grader knows of mistakes in general; each exercise's own are in its package.

- ``entry``       -- `Misconception`, one entry of an exercise's catalogue (its mutants, hint,
  recognisers), and the entry "computed in a 16-bit float" that several exercises share
- ``hints``       -- hints several exercises give
- ``recognisers`` -- mistakes told by a property of the answer or by the error raised, shared

An exercise's catalogue is `CATALOGUE` in autograder/checks/<stem>/misconceptions.py, beside its
checks, its mutants (``mutants.py``) and its own recognisers (``recognisers.py``);
autograder/diagnosis/explain.py runs them.
"""

from autograder.diagnosis.misconceptions.entry import Misconception, Overrides, low_precision

__all__ = ["Misconception", "Overrides", "low_precision"]

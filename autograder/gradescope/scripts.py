"""The two scripts Gradescope runs: setup.sh once when it builds the image (network allowed),
run_autograder for every submission (nothing is fetched).

setup.sh makes a virtualenv with the Python the pins were made for (uv, pinned, brings that
Python when the image lacks it), installs torch CPU-only from PyTorch's CPU wheel index, then
every other dependency at the exact versions the instructor's kit ran with, then runs
`attnkit doctor` there: a real sandbox grades the kit's solutions, and the image build fails
unless they score full marks. ATTNKIT_WHEELS=DIR installs from a folder of wheels first (an
offline mirror); ATTNKIT_SKIP_INSTALL=1 skips the install (a machine that has it already).
"""

from __future__ import annotations

UV_VERSION = "0.13.9"
VENV = "/opt/attnkit/venv"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
ROOT="${ATTNKIT_GRADESCOPE_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="${ATTNKIT_VENV:-@VENV@}"
PYVER="@PYTHON@"

if [ "${ATTNKIT_SKIP_INSTALL:-0}" != "1" ]; then
    # uv (pinned) makes the virtualenv with the Python the pins were made for, fetching that
    # Python if the image has another one.
    if ! command -v python3 >/dev/null; then
        apt-get update -q && apt-get install -y -q python3 python3-pip
    fi
    python3 -m pip install -q --no-cache-dir "uv==@UV@" || python3 -m pip install -q --break-system-packages "uv==@UV@"
    python3 -m uv venv --python "$PYVER" "$VENV"
    # torch CPU-only, from PyTorch's CPU wheel index (the default index's wheel pulls CUDA), or
    # from the folder of wheels given.
    torch_from=(--index-url "@TORCH_INDEX@")
    wheels=()
    if [ -n "${ATTNKIT_WHEELS:-}" ]; then
        torch_from=(--no-index --find-links "$ATTNKIT_WHEELS")
        wheels=(--find-links "$ATTNKIT_WHEELS")
    fi
    python3 -m uv pip install --python "$VENV/bin/python" --no-deps "${torch_from[@]}" "torch==@TORCH@"
    python3 -m uv pip install --python "$VENV/bin/python" "${wheels[@]}" -r "$SOURCE/requirements.txt"
fi
PYTHON="${ATTNKIT_PYTHON:-$VENV/bin/python}"
# The kit is not installed: run_autograder runs it from $SOURCE/attnkit. A real sandbox must
# grade the kit's solutions at full marks here, or the image build fails (and says why).
cd "$SOURCE/attnkit"
if ! ls autograder/data/solutions/*.py >/dev/null 2>&1; then
    echo "attnkit: the zip holds no solutions to grade; the autograder is NOT ready" >&2
    exit 1
fi
if ! MPLBACKEND=Agg PYTHONNOUSERSITE=1 PYTHONPATH="$SOURCE/attnkit" \
        "$PYTHON" -m autograder.cli --course "$SOURCE/course.yml" doctor --no-isolation; then
    echo "attnkit: this image cannot grade (the lines marked !! above say why); the autograder is NOT ready" >&2
    exit 1
fi
echo "attnkit autograder ready"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $ROOT/submission, write $ROOT/results/results.json.
set -uo pipefail
ROOT="${ATTNKIT_GRADESCOPE_ROOT:-/autograder}"
VENV="${ATTNKIT_VENV:-@VENV@}"
PYTHON="${ATTNKIT_PYTHON:-$VENV/bin/python}"
LOG="$(mktemp)"
cd "$ROOT/source/attnkit"
# The log is cut to @LIMIT@ bytes: a submission's prints are captured (and capped) by the
# sandbox, and the grader's own log stays short.
MPLBACKEND=Agg PYTHONNOUSERSITE=1 PYTHONPATH="$ROOT/source/attnkit" ATTNKIT_GRADESCOPE_ROOT="$ROOT" \
    "$PYTHON" -m autograder.gradescope.run >"$LOG" 2>&1
status=$?
head -c @LIMIT@ "$LOG"
rm -f "$LOG"
exit $status
"""


def setup_sh(*, python: str, torch: str) -> str:
    return (SETUP_SH.replace("@VENV@", VENV).replace("@PYTHON@", python).replace("@UV@", UV_VERSION)
            .replace("@TORCH_INDEX@", TORCH_INDEX).replace("@TORCH@", torch))


def run_autograder(*, stdout_limit: int) -> str:
    return RUN_AUTOGRADER.replace("@VENV@", VENV).replace("@LIMIT@", str(int(stdout_limit)))

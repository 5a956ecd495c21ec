#!/bin/sh
# Runs the red-team suite as a normal (unprivileged) user: the usual instructor on a laptop or
# a shared server, where the sandbox's isolation comes from user namespaces alone.
#
# Run as root from the repository root (CI does: `sh scripts/normal_user_env.sh`). It
#   1. finds the base interpreter of this Python (a venv's own base) and makes it readable by
#      the user: as it is if every folder above it is world-searchable, else the same
#      installation made visible at /opt/attnkit-python (a read-only bind mount, or a copy where
#      mounting is not allowed -- e.g. a pyenv under root's home folder, which others may not enter);
#   2. creates the user `attnkit-redteam` (no password, no sudo) if it does not exist;
#   3. copies the working tree into that user's home; there, as that user, makes a standard venv
#      of their own, installs the kit into it as the README does, and runs the red-team tests
#      (a hostile class under a memory cap, uploads that attack the grader's own parsers, the venv
#      locations, zygotes forked from a template, nbgrader's shared exchange made for the user).
# Elsewhere (not root, not Linux) it exits 0 after saying why it skipped.
# Extra arguments are passed to pytest.
set -eu

USER_NAME="${ATTNKIT_TEST_USER:-attnkit-redteam}"
PYTHON="${PYTHON:-python}"
VISIBLE=/opt/attnkit-python

if [ "$(uname -s)" != "Linux" ]; then echo "normal_user_env: skipped (not Linux)"; exit 0; fi
if [ "$(id -u)" != "0" ]; then echo "normal_user_env: skipped (must run as root to create a user)"; exit 0; fi

prefix="$("$PYTHON" -c 'import sys, os; print(os.path.realpath(sys.base_prefix))')"
exe="$("$PYTHON" -c 'import sys, os; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))')"
readable() {   # every folder from $1 up to / is world-searchable
    p="$1"
    while [ "$p" != "/" ]; do
        perm=$(stat -c %A "$p")
        case "$perm" in d????????x|d????????t|-*) ;; *) return 1 ;; esac
        p=$(dirname "$p")
    done
}
if readable "$prefix"; then
    user_python="$exe"
else
    if ! mountpoint -q "$VISIBLE" 2>/dev/null; then
        mkdir -p "$VISIBLE"
        if ! mount --bind -o ro "$prefix" "$VISIBLE" 2>/dev/null; then
            echo "normal_user_env: cannot bind-mount $prefix; copying it to $VISIBLE"
            cp -a "$prefix/." "$VISIBLE/"
        fi
    fi
    user_python="$VISIBLE/${exe#"$prefix"/}"
fi
# A shared-library build finds libpython through an RPATH into the old prefix: point it here.
libdir="$(dirname "$(dirname "$user_python")")/lib"

id "$USER_NAME" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$USER_NAME"
home="$(getent passwd "$USER_NAME" | cut -d: -f6)"
rm -rf "$home/attnkit"
mkdir -p "$home/attnkit"
git ls-files -co --exclude-standard -z | xargs -0 cp -P --parents -t "$home/attnkit" 2>/dev/null || cp -a . "$home/attnkit"
chown -R "$USER_NAME" "$home/attnkit"

echo "normal_user_env: as $USER_NAME, a venv of their own made with $user_python, then the red-team suite"
cd "$home/attnkit"
# What the user's pip needs of the caller's settings (CI's pins, its failing-over index).
pins=""
[ -n "${PIP_CONSTRAINT:-}" ] && pins="PIP_CONSTRAINT=$home/attnkit/.ci/constraints.txt"
# The caller's own pip settings (a folder of wheels, such as a local CPU build of torch) are its
# user's; the normal user's pip is given them too, or it would fetch what the caller need not.
links="$("$PYTHON" -m pip config get global.find-links 2>/dev/null || true)"
[ -n "$links" ] && pins="$pins PIP_FIND_LINKS=$links"
[ -n "${PIP_NO_CACHE_DIR:-}" ] && pins="$pins PIP_NO_CACHE_DIR=$PIP_NO_CACHE_DIR"
# nbgrader's shared exchange where its docs put it, with a submission in inbound/, owned by the user
# as an instructor's own exchange is: tests/test_redteam_jail.py checks that a child cannot see it.
# Made only where there is none, and removed when the suite ends.
nbgrader_share=/usr/local/share/nbgrader
if [ ! -e "$nbgrader_share" ]; then
    submission="$nbgrader_share/exchange/redteam_course/inbound/bob+ps1+2026-03-02 20:00:00.000000 UTC+redteam"
    mkdir -p "$submission"
    echo '{"cells": []}' > "$submission/attention.ipynb"
    chown -R "$USER_NAME" "$nbgrader_share"
    chmod 0777 "$nbgrader_share/exchange"
    chmod 0733 "$(dirname "$submission")"
    trap 'rm -rf "$nbgrader_share"' EXIT
fi
set +e
# shellcheck disable=SC2086
runuser -u "$USER_NAME" -- env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 LD_LIBRARY_PATH="$libdir" \
    $pins PIP_RETRIES="${PIP_RETRIES:-5}" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MPLBACKEND=Agg USER_PYTHON="$user_python" sh -euc '
    venv="$HOME/attnkit-venv"
    if [ ! -x "$venv/bin/attnkit" ]; then
        "$USER_PYTHON" -m venv "$venv"
        "$venv/bin/pip" install -q torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu
    fi
    "$venv/bin/pip" install -q -e ".[test]"
    "$venv/bin/attnkit" doctor
    exec "$venv/bin/python" -m pytest -p no:cacheprovider -q tests/test_redteam_jail.py \
        tests/test_redteam_provided.py tests/test_redteam_bounded.py tests/test_hostile_uploads.py \
        tests/test_interpreter_locations.py "$@"' normal_user_env "$@"
exit $?

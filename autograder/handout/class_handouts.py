"""A handout per student at class size (`attnkit handout OUT --roster ROSTER.csv`): OUT/<student>.zip,
each the whole handout with that student's numbers, unpacking into one folder named after the
assignment.

What every student gets alike (the stubs that show no numbers, check.py and its modules, the
README: write.shared_files) is compressed once into a template; each student's zip is that
template's bytes with their own files added (write.own_files: the hand computation with their
numbers, check_data/ for their seed). Working out a student's check data (the visible checks'
answers and the known mistakes' on their inputs) is the cost: the students are shared among
processes, one per core. A zip is whole or absent (written beside, then renamed), and the same
course and roster give the same bytes.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from pathlib import Path

from autograder.config.course import CourseConfig, course_data
from autograder.judge.threads import usable_cores

ZIP_TIME = (1980, 1, 1, 0, 0, 0)      # every member's date: the same roster gives the same bytes
FOLDER = re.compile(r"[^A-Za-z0-9._-]+")


def folder_name(course: CourseConfig) -> str:
    """The folder a student's zip unpacks into: the assignment's name, made safe for a folder."""
    return FOLDER.sub("_", course.assignment).strip("._") or "handout"


def _member(name: str, data: bytes, zf: zipfile.ZipFile) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.external_attr = (0o100000 | 0o644) << 16          # a regular file, rw-r--r--
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def template(course: CourseConfig) -> bytes:
    """The zip of the files every student gets alike, under the handout's folder."""
    from autograder.handout.write import shared_files

    top = folder_name(course)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, source in sorted(shared_files(course, varied=True).items()):
            _member(f"{top}/{name}", source.read_bytes() if isinstance(source, Path) else source, zf)
    return buf.getvalue()


def write_class_handouts(out: Path, course: CourseConfig, students: list[str], *, jobs: int | None = None,
                         on_done: Callable[[str], None] | None = None) -> list[Path]:
    """OUT/<student>.zip for each of `students` (ids safe as file names); `on_done(student)` as each
    is written. Raises what a student's handout raised (the others are stopped)."""
    out.mkdir(parents=True, exist_ok=True)
    shared = template(course)
    jobs = max(1, min(jobs or usable_cores(), len(students)))
    if jobs == 1:
        _start(course_data(course), shared, str(out))
        for student in students:
            _write_one(student)
            if on_done:
                on_done(student)
    else:
        import multiprocessing

        # spawn: a fresh interpreter per worker, never a fork of a process that may hold torch's threads
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_start,
                                 initargs=(course_data(course), shared, str(out))) as pool:
            pending = {pool.submit(_write_one, student): student for student in students}
            while pending:
                done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    student = pending.pop(future)
                    if future.exception() is not None:
                        for other in pending:
                            other.cancel()
                        raise future.exception()
                    if on_done:
                        on_done(student)
    return [out / f"{student}.zip" for student in students]


_WORKER: dict = {}      # what each worker process was given: the course, the template, OUT


def _start(data: dict, shared: bytes, out: str) -> None:
    from autograder.config.course import course_from_data

    _WORKER.update(course=course_from_data(data), shared=shared, out=Path(out))


def _write_one(student: str) -> None:
    """OUT/<student>.zip: the template's bytes, the student's own files added."""
    from autograder.handout.write import own_files
    from autograder.variants import variant_for

    course, out = _WORKER["course"], _WORKER["out"]
    # the .npz files uncompressed inside, deflated whole by the zip (not array by array)
    own = own_files(course, variant_for(course, student), compressed=False)
    top = folder_name(course)
    partial = out / f".{student}.zip.partial"
    partial.write_bytes(_WORKER["shared"])
    with zipfile.ZipFile(partial, "a") as zf:
        for name, data in sorted(own.items()):
            _member(f"{top}/{name}", data, zf)
    os.replace(partial, out / f"{student}.zip")

"""What a Dask worker spends unpacking one student's folder of symbolic links with long targets.

    python benchmarks/bench_transport.py                    # 256 links of 4,095 digits
    python benchmarks/bench_transport.py --links 20000      # the most entries a submission sends

A student's folder of N links whose targets are D digits, packed by the cluster's client
(autograder/cluster/transport.py) and unpacked as a worker does, in this process: the worker's CPU
time (user and system) per link. 256 targets of 4,095 bytes fill a student's 1 MB of link text;
past it, links travel without their targets. The anchor is the same links in a POSIX (pax) tar read by tarfile,
as the transport was made before: a target over 100 bytes becomes a pax record, which tarfile
parses in time quadratic in its digits with the interpreter held. Both unpack into a tmpfs
(/dev/shm) where there is one, so that the figure is the worker's work and not a disk's (creating
a link on a disk costs what creating an empty file does there). Writes
benchmarks/results/transport.json. This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from benchmarks import record  # noqa: E402


def scratch() -> str:
    return tempfile.mkdtemp(prefix="attnkit-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)


def cpu_seconds(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def as_pax_tar(folder: Path) -> bytes:
    """The folder's links as the transport wrote them before: one pax member each."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(os.listdir(folder)):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, os.readlink(folder / name)
            tar.addfile(info)
    return buf.getvalue()


def read_tar(data: bytes, dest: str) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in iter(tar.next, None):
            os.symlink(member.linkname, os.path.join(dest, member.name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=256)
    parser.add_argument("--digits", type=int, default=4095)
    args = parser.parse_args()

    from autograder.cluster.transport import pack_submission, unpack_submission

    src = Path(scratch())
    try:
        for i in range(args.links):
            os.symlink("1" * args.digits, src / f"{i:05d}")
        packed = pack_submission(src)
        tar = as_pax_tar(src)
        dest_new, dest_tar = scratch(), scratch()
        try:
            framing = cpu_seconds(lambda: unpack_submission(packed.data, Path(dest_new)))
            anchor = cpu_seconds(lambda: read_tar(tar, dest_tar))
        finally:
            shutil.rmtree(dest_new, ignore_errors=True)
            shutil.rmtree(dest_tar, ignore_errors=True)
    finally:
        shutil.rmtree(src, ignore_errors=True)
    per_link, per_link_tar = framing / args.links * 1000, anchor / args.links * 1000
    print(f"{args.links} links of {args.digits} digits: the kit's framing {len(packed.data) / 1e6:.2f} MB, "
          f"{framing:.3f} s of CPU ({per_link:.4f} ms per link); a pax tar {len(tar) / 1e6:.2f} MB, "
          f"{anchor:.2f} s ({per_link_tar:.2f} ms per link)")
    record.write("transport", {"links": args.links, "digits": args.digits, "packed_bytes": len(packed.data),
                               "tar_bytes": len(tar), "framing_cpu_s": framing, "tar_cpu_s": anchor,
                               "link_text_sent": args.links * args.digits <= 1024 * 1024},
                 headline=[record.figure(f"a worker unpacking {args.links} links of {args.digits} digits, CPU per link",
                                         per_link, "ms", anchor="the same links in a pax tar read by tarfile",
                                         anchor_value=per_link_tar, ratio=per_link_tar / max(per_link, 1e-9),
                                         ratio_is="anchor / value", target="what creating the link costs")])


if __name__ == "__main__":
    main()

"""The `--scheduler` branch of `attnkit grade`: clear messages when Dask is missing or the
scheduler cannot be reached, then the cluster run."""

from __future__ import annotations

from pathlib import Path


def grade_on_cluster(args, class_dir: Path, out: Path, course, progress, console, *, on_preflight=None,
                     roster=None, target=None, overrides=None, only=None, lateness=None):
    """The results (a Sequence), or None after printing why the cluster cannot be used."""
    try:
        from autograder.cluster.client import ClusterError, grade_class_on_cluster
    except ImportError as err:
        console.print(f"[red]--scheduler needs Dask[/] ({err.name or err} is not installed): "
                      f"pip install 'attnkit[cluster]'", highlight=False)
        return None
    try:
        return grade_class_on_cluster(class_dir, out, course, args.scheduler, regrade=args.regrade,
                                      on_result=progress.advance, on_start=progress.start,
                                      exports=tuple(getattr(args, "export", None) or ()),
                                      isolation=not getattr(args, "no_isolation", False),
                                      preflight=not getattr(args, "no_preflight", False),
                                      on_preflight=on_preflight, layout=getattr(args, "layout", "auto"),
                                      roster=roster, target=target, overrides=overrides, only=only,
                                      lateness=lateness)
    except ClusterError as err:
        console.print(str(err), style="red", markup=False)
        return None

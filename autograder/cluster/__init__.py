"""Class grading on a Dask cluster (`attnkit grade --scheduler`): see docs/cluster.md.

Needs the `cluster` extra (dask and distributed); nothing else in the kit imports this package.
"""

"""`attnkit gradescope OUT.zip`: the kit as a Gradescope autograder (see docs/gradescope.md).

package.py writes the zip, scripts.py holds its setup.sh and run_autograder, run.py is what
run_autograder runs for each submission, submission.py finds the files a student uploaded,
results.py shapes Gradescope's results.json.
"""

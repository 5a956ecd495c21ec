"""Front ends other than the command line itself (`autograder/cli.py`): watch mode, the pytest plugin, the progress bar, how a check starts cold and how it leaves."""

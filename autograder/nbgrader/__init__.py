"""The kit inside nbgrader: the generated course, the preprocessor that grades outside the kernel, the test cells' code, the gradebook."""

"""The judge: the grader's own judgement, kit-free, the bottom floor of the kit."""

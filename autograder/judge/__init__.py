"""The judge: the grader's own judgement, kit-free, on the bottom floor of the kit.

Everything that decides a visible check lives here once, and both drivers ask it: the grader
(`attnkit` and every other door, through autograder/grading/) and the handout's check.py (which
ships this folder beside it, autograder/handout/). It imports only itself, the standard library,
numpy and, where an exercise needs them, torch, matplotlib and IPython's transformer; the
sandbox's zygote loads it from this folder, nothing else of the kit importable there.

    forms           which file and form of an exercise count: near-miss names, an untouched stub
                    never over work, the course's both_forms, the better of several
    reading         a file's bytes as text, or why not
    notebook        a notebook read and run as Jupyter's Run All (ipython_shell: IPython's stand-ins)
    syntax          source parsed without running it (one parse at a time), the modules it imports
    calls           a check's status when a call gave no answer
    arguments       how a call hands its arrays (a module's forward its tensors): own, shared, read-only, sent back
    clock           how long a call may take (CPU time, no progress, the wall backstop)
    errors          an error raised by student code, located and said
    convert         a returned value as plain data (arrays, statistics, a figure's description)
    torch_module    a torch module built and the check's weights loaded into it
    answers         comparing an answer with the right one, and the hint's words
    properties      checks that test a property with code (figure_reading: a figure's series)
    observations    what is seen in a wrong answer
    recognisers     mistakes told by a property of the answer; raised: by the error raised
    narrowing       explanations the student's other results rule out
    quoted          a mistake whose hint quotes a construct, named only where the file holds it
    words           a count said in words ("1 check", "2 checks")
    causes          failed checks grouped by cause, each told once
    hints           hints several exercises share
    points          what a check earns, added up
    threads         one BLAS and OpenMP thread, set before numpy's import
"""

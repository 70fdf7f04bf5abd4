# nbgrader's configuration for the tinygrad_lab exercises. `tinygrad-lab exercises release --course DIR`
# writes this file as DIR/nbgrader_config.py (when DIR has none), the place nbgrader reads a course's
# config from: every `nbgrader ...` command run in DIR uses it, on top of the hub's global config.
c = get_config()  # noqa: F821 (nbgrader provides get_config when it loads this file)

# The course's name in nbgrader's exchange (release_assignment, fetch, submit, collect on a JupyterHub).
c.CourseDirectory.course_id = "tinygrad_lab"

# autograde runs every cell of a submission under this limit, in seconds. nbgrader's default of 30 s
# scores a correct exercise 06 zero: a student's training loop there can take ~35 s on a busy 2-core
# machine. 120 s leaves room for that; an endless loop costs two minutes of the grader's time.
c.Execute.timeout = 120
# A submission whose test cells were deleted gets them back (and run) instead of only a 0 for them,
# so the student's feedback shows the tests and their hints.
c.OverwriteCells.add_missing_cells = True
# Starting a kernel on a loaded hub can take longer than nbclient's default minute.
c.Execute.startup_timeout = 120

"""The verdict: every pass/fail check of a case (checks), the case's outcome as plain data (result), the
message a failing case prints (explain), and the run's one verdict and exit status (of_run)."""

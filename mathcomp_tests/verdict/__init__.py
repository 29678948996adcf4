"""The verdict: every pass/fail check of a case (checks), the case's outcome as plain data (result), the
message a failing case prints (explain), the run's one verdict and exit status (of_run), a failing case's
breaches by kind (breaches), and the CI job's summary of the verdict in Markdown (job_summary)."""

"""The verdict: every pass/fail check of the suite (checks), the case's outcome as plain data (result),
and the message a failing case prints (explain)."""

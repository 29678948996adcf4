"""Records: a case's outcome as plain JSON (one line per item in results.jsonl, one summary per case),
written as answers arrive and read back by the report, the baseline and history."""

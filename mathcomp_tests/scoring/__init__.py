"""From a response to a verdict: read the answer, score the case, hold it to its ceilings."""

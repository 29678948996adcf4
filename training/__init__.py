"""Training code for the embedded demonstration model: lives beside the package, not in the wheel."""

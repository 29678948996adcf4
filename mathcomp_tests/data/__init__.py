"""Where each scenario comes from: CSV files, the published benchmark, exact equations, the audit."""

"""The statistics: a case's scores and their intervals (metrics, intervals), the paired tests against a
baseline and their power (paired, soft_paired, own_paired, power, changes), the item diff (item_changes),
the plan of a gate (gate_plan) and the cue-invariance metrics (invariance, rationale, cue_pairs). Pure
computation on answers already read: no model is called, and neither the baseline file (baseline_file/)
nor thresholds.toml (config/) is read here (tests/test_import_layers.py)."""

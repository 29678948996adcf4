"""The configuration: thresholds.toml read and checked (thresholds.py: DirErr's ceilings, the gate's keys,
[model.*] sections and their ``extends``; invariance_ceilings.py: the [invariance] tables;
threshold_values.py: the error type and the check of one value). Plain data out; which model a section
names is resolved by the caller (backends/models.py ``named``), never here."""

"""Readers that turn a model's answer into a label, one module per answer format.

Shared pieces: `context` (the option letters and the persons' names a prompt used), `clauses` (who is
the subject of a comparison, and which way it goes), `bare` (an answer that is only a label or a letter).
"""

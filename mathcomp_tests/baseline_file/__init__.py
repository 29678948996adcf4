"""A baseline: one earlier run's per-item answers, as a small plain-text file meant to be committed next to
thresholds.toml (like a snapshot), or read from a run folder. It must fit the run it is compared with.

The file, one `key: value` per line (lines starting with # are comments)::

    format: 4
    model: hf:fixtures/models/mathcomp-tiny
    revision: 3f2a...
    dataset: fixtures/scenarios.csv
    dataset-sha256: 9c1e...
    prompt-set: hf
    scenarios: 1 2 3 ...
    generated-seed: 0
    generated-sha256: 5d0b...
    generated-scenarios: gen-0-1 gen-0-2 ...
    cases: 2
    case neutral-begin-std-one-word: lmeelx...
    case generated:neutral-begin-std-one-word: emlle...
    case neutral-end-std-one-word: lme... | 812,101,87 120,790,90 ...

A case line has one letter per scenario, in the order of `scenarios` (a `generated:` case: of
`generated-scenarios`, test_generated's draw of --generated N scenarios from --hypothesis-seed): l less,
m more, e equal, i invalid (an unreadable answer), x error (no answer). `model` is the model that made it,
a local directory written relative to the file's folder when it lies inside it. Format 1 files (no
generated cases) and format 2 files (no `cases`, the number of case lines that tells a file cut short) are
read too. Format 4 adds, after `` | ``, each item's label probabilities when the run scored labels by
their probabilities (--scoring=logprob): thousandths of less, more, equal, ``-`` for an item without them.
The gate compares them with the run's (scoring/soft_paired.py, at scoring/precision.py's precision). A
format 3 file is a format 4 file whose case lines carry none.

The room: format.py (the file's vocabulary: keys, letters, how it shows paths and probabilities),
reader.py (the file, or a run folder, read), fit.py (what it says, Baseline, and whether it fits a run),
writer.py (the file written) and update.py (a narrowed run's cases rewritten inside an existing file).
Each name is imported from the module that defines it. The statistics that compare a run with a baseline
are scoring/'s; they never import this room.
"""


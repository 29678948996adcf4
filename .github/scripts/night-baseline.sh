#!/usr/bin/env bash
# One model's baseline and hub access for the nightly workflow, the same in the suite's legs and in the merge
# of a sharded night: MODEL (as given), BASELINE (empty: baselines/<SLUG>.txt, or baseline.txt for the demo
# model) and SLUG in; NIGHT_BASELINE (empty when there is none: the night is gated by thresholds.toml alone),
# HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE out, appended to $GITHUB_ENV.
set -euo pipefail
baseline="${BASELINE:-baselines/$SLUG.txt}"
if [ -z "$BASELINE" ] && [ "$MODEL" = "hf:fixtures/models/mathcomp-tiny" ]; then baseline=baseline.txt; fi
if [ ! -f "$baseline" ]; then
  echo "::warning::no baseline for $MODEL at $baseline: this night is gated by thresholds.toml only (write one with --update-baseline=$baseline and commit it)"
  baseline=""
fi
case "$MODEL" in
  # The demo model ships in the repository: nothing to download.
  hf:fixtures/*|symbolic) offline=1 ;;
  *) offline=0 ;;
esac
{
  echo "NIGHT_BASELINE=$baseline"
  echo "HF_HUB_OFFLINE=$offline"
  echo "TRANSFORMERS_OFFLINE=$offline"
} >> "$GITHUB_ENV"

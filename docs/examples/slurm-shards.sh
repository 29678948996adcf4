#!/usr/bin/env bash
# One MathComp run as a Slurm array of 4 shards (docs/sharding.md). Submit with: sbatch docs/examples/slurm-shards.sh
# Each task finds its shard in SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (and SLURM_ARRAY_TASK_MIN):
# no --shard is needed. Every task writes its own run folder under reports/shards/.
#SBATCH --job-name=mathcomp-shards
#SBATCH --array=0-3
#SBATCH --gres=gpu:1
#SBATCH --time=02:00:00
#SBATCH --output=reports/shards/slurm-%A_%a.out
set -euo pipefail

mkdir -p reports/shards
exec python -m pytest \
  --model="${MATHCOMP_MODEL:-qwen2.5-3b}" \
  --reports-dir="reports/shards/${SLURM_ARRAY_TASK_ID}" \
  "$@"

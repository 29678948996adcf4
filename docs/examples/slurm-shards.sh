#!/usr/bin/env bash
# One MathComp run as a Slurm array of shards, then one merge job (docs/sharding.md).
#
# Submit from the project's folder (not with sbatch: this script submits its own jobs):
#   bash docs/examples/slurm-shards.sh [pytest options...]
# MATHCOMP_MODEL (default qwen2.5-3b) is the model, MATHCOMP_SHARDS (default 4) the number of shards, and
# SBATCH_OPTIONS more sbatch options for the shards (default "--gres=gpu:1 --time=02:00:00"), and
# MATHCOMP_REPORTS the folder the runs go under (default reports/shards).
#
# It names the run (a dated run id, as every run's), makes its folder and the log folder before submitting
# (Slurm opens a task's log before the task starts: a log folder made by the task itself comes too late),
# submits the array (each task finds its shard in SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT: no --shard,
# and keeps its own answer cache), then a merge job that runs after the array whatever its outcome
# (afterany: a failed or cancelled shard makes the merge INCOMPLETE, naming it). The merged run folder is
# <reports>/<run id>/merged; each job's log is in <reports>/<run id>/logs/.
set -euo pipefail

python=${PYTHON:-python}

case "${MATHCOMP_SLURM_STEP:-submit}" in
  shard)  # one task of the array
    task=${SLURM_ARRAY_TASK_ID:?this step runs as a task of the Slurm array}
    exec "$python" -m pytest \
      --model="$MATHCOMP_MODEL" \
      --reports-dir="$MATHCOMP_RUN_ROOT/$task" \
      --cache-dir="$MATHCOMP_RUN_ROOT/cache/$task" \
      "$@"
    ;;
  merge)  # after every task of the array, however each ended
    shopt -s nullglob
    folders=("$MATHCOMP_RUN_ROOT"/[0-9]*/latest)
    if [ "${#folders[@]}" -eq 0 ]; then
      echo "no shard of $MATHCOMP_RUN_ID left a run folder to merge" >&2
      exit 1
    fi
    exec "$python" -m mathcomp_tests merge "${folders[@]}" \
      --out "$MATHCOMP_RUN_ROOT/merged" --run-id "$MATHCOMP_RUN_ID"
    ;;
  submit)
    export MATHCOMP_MODEL=${MATHCOMP_MODEL:-qwen2.5-3b}
    shards=${MATHCOMP_SHARDS:-4}
    MATHCOMP_RUN_ID=$("$python" -c \
      'import sys; from mathcomp_tests.records.results import new_run_id; print(new_run_id(sys.argv[1]))' \
      "$MATHCOMP_MODEL")
    export MATHCOMP_RUN_ID
    export MATHCOMP_RUN_ROOT="${MATHCOMP_REPORTS:-reports/shards}/$MATHCOMP_RUN_ID"
    mkdir -p "$MATHCOMP_RUN_ROOT/logs"
    read -r -a options <<< "${SBATCH_OPTIONS:---gres=gpu:1 --time=02:00:00}"
    array=$(MATHCOMP_SLURM_STEP=shard sbatch --parsable --export=ALL --job-name=mathcomp-shards \
      --array="0-$((shards - 1))" --output="$MATHCOMP_RUN_ROOT/logs/shard-%a.out" "${options[@]}" \
      "$0" "$@")
    array=${array%%;*}  # --parsable prints "jobid[;cluster]"
    MATHCOMP_SLURM_STEP=merge sbatch --parsable --export=ALL --job-name=mathcomp-merge \
      --dependency="afterany:$array" --output="$MATHCOMP_RUN_ROOT/logs/merge.out" "$0"
    echo "submitted $MATHCOMP_RUN_ID: $shards shards (job $array), then the merge into $MATHCOMP_RUN_ROOT/merged"
    ;;
  *)
    echo "MATHCOMP_SLURM_STEP=$MATHCOMP_SLURM_STEP: expected submit, shard or merge" >&2
    exit 2
    ;;
esac

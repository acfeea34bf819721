# Two commands on a fresh machine: `make run` (the app on the shipped models) and
# `make test` (lint + every test, browser test included).
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test test-fast test-slow test-all setup chromium nginx lint models seq2seq bench clean check-models serve-replicas

$(VENV)/.installed: requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt -r requirements-dev.txt
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

# Two tiers (README "Testing"). The fast tier (not marked `slow`, ~2 min) always runs. The
# slow tier (browser tests, uploads through export workers, the bench's own runs, the
# hostile and fair-share suites, any test over 4 s on this machine; ~20 min) runs unless
# `make test-slow` passed on exactly these files (tests/helpers/tiers.py compares every
# file's SHA-256 with tests/slow_passed.json; commit the record with the change).
# The drift tests (re-evaluating the shipped models against their cards, ~2 min) run only
# when exported/ or the code evaluation imports changed since they last passed
# (tests/helpers/drift.py compares the files' hashes with tests/models_checked.json).
FAST := -m pytest -q -n 2 --dist loadgroup --durations=10 -m "not drift and not slow"
ALONE := tests/e2e/test_hostile_uploads.py tests/e2e/test_fair_share.py
test: test-fast
	$(PY) -m tests.helpers.tiers --check || $(MAKE) --no-print-directory test-slow

# Lint, the drift tests when their inputs changed, and the fast tier. Meanwhile, in the
# background, the tiny models' exports the fast tier needs (tests/helpers/export_cache.py):
# its two workers no longer wait, one idle, while the other exports them.
test-fast: setup chromium nginx
	$(PY) -m tests.helpers.export_cache softmax linear >/dev/null 2>&1 & warm=$$!; \
	$(MAKE) --no-print-directory lint && \
	{ $(PY) -m tests.helpers.drift --check || $(MAKE) --no-print-directory check-models; } && \
	$(PY) $(FAST); status=$$?; [ $$status = 0 ] || kill $$warm 2>/dev/null; wait $$warm; exit $$status

# The slow tier, then the record that it passed on these files.
test-slow: setup chromium nginx
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=25 -m "slow and not drift" \
		$(foreach f,$(ALONE),--ignore=$(f))
	ATTNVIZ_WORKER_PRIORITY=idle $(PY) -m pytest -q $(ALONE)  # alone: they time another session
	$(PY) -m tests.helpers.tiers --write

# Both tiers, whatever the record says.
test-all: test-fast
	$(MAKE) --no-print-directory test-slow

# Re-evaluate the shipped models against their cards; when they agree, record the hashes
# of what the answer depends on (commit tests/models_checked.json with the change).
check-models: setup
	$(PY) -m pytest -q -n 2 -m drift
	$(PY) -m tests.helpers.drift --write

# Regenerate exported/ from nothing: train the three models at once (softmax, linear,
# DeltaNet; one thread each; each writes exported/<kind>.safetensors and the same
# exported/tokenizer.json), then export the ONNX graphs and evaluate the shipped kinds
# (models.config.SHIPPED_KINDS) into exported/model_card.json.
models: setup
	$(PY) -m training.train --attention softmax --threads 1 & s=$$!; \
	$(PY) -m training.train --attention linear --threads 1 & l=$$!; \
	$(PY) -m training.train --attention delta --threads 1 --recall-share 0.25 & d=$$!; \
	wait $$s; s=$$?; wait $$l; l=$$?; wait $$d && [ $$s = 0 ] && [ $$l = 0 ]
	$(PY) -m export.graphs
	$(PY) -m training.evaluate

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

# Two commands on a fresh machine: `make run` (the app on the shipped models) and
# `make test` (lint + every test, browser test included).
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test setup chromium lint models seq2seq bench clean

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
MODEL ?=
run: setup
	MALLOC_ARENA_MAX=2 $(VENV)/bin/streamlit run app.py $(if $(strip $(MODEL)),-- $(foreach m,$(MODEL),--model $(m)))

chromium:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

test: setup chromium lint
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=25 --ignore=tests/e2e/test_hostile_uploads.py
	$(PY) -m pytest -q tests/e2e/test_hostile_uploads.py  # alone: it times another session

# Regenerate exported/ from nothing: train the three models at once (softmax, linear,
# DeltaNet; one thread each; each writes exported/<kind>.safetensors and the same
# exported/tokenizer.json), then export the ONNX graphs and evaluate the shipped kinds
# (models.config.SHIPPED_KINDS) into exported/model_card.json.
models: setup
	$(PY) -m training.train --attention softmax --threads 1 & s=$$!; \
	$(PY) -m training.train --attention linear --threads 1 & l=$$!; \
	$(PY) -m training.train --attention delta --threads 1 & d=$$!; \
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

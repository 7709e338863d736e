# superlinear: `make demo` sets everything up and runs the quick Fig. 5 reproduction;
# `make test` sets everything up and runs every check (format, lint, Rust and Python tests).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test setup system-packages build lint rust-test py-test bench fig5 clean

# Python environment with the build tool and the runtime/dev dependencies.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" "matplotlib>=3.7" "rich>=13" "numpy>=1.24" "scipy>=1.10" "pytest>=7" "ruff>=0.4" "mypy>=1.8"
	touch $(STAMP)

setup: $(STAMP)

# Release build of the Rust core into the virtualenv (anything timed must be a release build),
# with AVX2 where this CPU has it: the list scans are twice as fast with 256-bit compares.
NATIVE_FLAGS := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo "-C target-cpu=x86-64-v3")
build: $(STAMP)
	RUSTFLAGS="$(NATIVE_FLAGS) $(RUSTFLAGS)" $(VENV)/bin/maturin develop --release -q

demo: build
	$(VENV)/bin/superlinear reproduce fig5 --quick
	@echo "Plots: results/fig5-quick/fig5.png (overview) and results/fig5-quick/fig5{a,b,c,d,e}.png / .svg"

fig5: build
	$(VENV)/bin/superlinear reproduce fig5

bench: build
	$(VENV)/bin/superlinear bench

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy python/superlinear

rust-test:
	cargo test --all -q

py-test: build
	$(VENV)/bin/pytest -q

# memcached, PostgreSQL, nftables, ...: installed where this runs as root with apt-get, otherwise
# the one command that would install them is printed (their tests are then skipped).
system-packages:
	scripts/install-system-packages.sh

# The packages first, then every check (in parallel under -j).
test: system-packages
	$(MAKE) lint rust-test py-test

clean:
	rm -rf $(VENV) target results

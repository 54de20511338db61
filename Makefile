# gpudoctor: `make run` builds and diagnoses this machine; `make test` runs the whole suite.
BUILD      ?= build
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
ARGS       ?=
FUZZ_SECONDS ?= 8

.PHONY: all deps build run test unit fuzz lint format bench clean docs install install-files

PREFIX  ?= /usr/local
DESTDIR ?=

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

run: build
	@./$(BUILD)/gpudoctor check $(ARGS); rc=$$?; \
	  echo "(gpudoctor check exit code $$rc: 0 healthy, 1 warn, 2 crit, 3 could not run)"; \
	  [ $$rc -le 2 ]

# The whole suite: unit + end-to-end tests, then a short run of every fuzz target.
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j2
	$(MAKE) --no-print-directory fuzz

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j2

fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DGPUDOCTOR_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DGPUDOCTOR_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS)
	ctest --test-dir $(FUZZ_BUILD) --output-on-failure

lint: deps
	@files=$$(git ls-files '*.cc' '*.h'); clang-format --dry-run --Werror $$files && echo "lint: clang-format clean"

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h')

bench: build
	@bash bench/run.sh $(BUILD)

docs: build
	./$(BUILD)/gpudoctor explain --markdown > docs/findings.md

# Binary, the fleet report parser module (lib/gpudoctor/, found from bin/ as ../lib/gpudoctor),
# systemd unit and a default config (kept when one exists). `systemctl daemon-reload &&
# systemctl enable --now gpudoctor` starts the daemon.
install: build install-files

# The copying part alone (tests/e2e/install_test.sh runs it on an existing build).
install-files:
	install -D -m 0755 $(BUILD)/gpudoctor $(DESTDIR)$(PREFIX)/bin/gpudoctor
	install -D -m 0644 $(BUILD)/gpudoctor_fleet_json.so \
	  $(DESTDIR)$(PREFIX)/lib/gpudoctor/gpudoctor_fleet_json.so
	install -D -m 0644 deploy/systemd/gpudoctor.service $(DESTDIR)/etc/systemd/system/gpudoctor.service
	sed -i 's|/usr/local/bin/gpudoctor|$(PREFIX)/bin/gpudoctor|' $(DESTDIR)/etc/systemd/system/gpudoctor.service
	install -d -m 0750 $(DESTDIR)/var/lib/gpudoctor
	@if [ -e $(DESTDIR)/etc/gpudoctor/gpudoctor.toml ]; then \
	  echo "install: keeping $(DESTDIR)/etc/gpudoctor/gpudoctor.toml"; \
	else \
	  install -d $(DESTDIR)/etc/gpudoctor && \
	  $(BUILD)/gpudoctor config --default > $(DESTDIR)/etc/gpudoctor/gpudoctor.toml; \
	fi

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)

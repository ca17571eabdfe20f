# acc — make targets named in README.md.
#   make demo    the main job: a real two-session conversation in a throwaway repository
#   make test    every test of every module in go.work (what CI runs); installs the clients first
#   make clients the pinned real clients the tests run, from npm into a cache outside the clone
#   make postgres the PostgreSQL server programs (Debian) for the throwaway cluster make test starts
#   make build   the three binaries into ./bin
#   make modules each module of go.work tidy and building on its own (GOWORK=off); CI runs it first
#   make install-check  a throwaway release installs with go install …@version, offline (docs/install.md)
#   make stress  the heavy loads at full size (16 x 500 concurrent sends, 1,000 kill -9 trials); a quiet machine
#   make bench   the benchmarks (numbers for the closing notes; never asserted)
#   make fuzz    each fuzz target for FUZZTIME (default 30s)
#   make test-clients-latest  the real-client tests against the newest npm releases
#   make evidence  rerun the real-client tests and rewrite the adapters' capability evidence
#   make release-snapshot  the release archives into ./dist, unpublished, and checks them (docs/releasing.md)

GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/acc-go/acc/internal/buildinfo.buildVersion=$(VERSION)

# The tests and the demo make Git repositories of their own: a GIT_* variable
# of the caller's (make run from a Git hook sets GIT_DIR, GIT_INDEX_FILE …)
# would point their git commands at the caller's repository instead.
unexport GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_COMMON_DIR GIT_PREFIX GIT_NAMESPACE

.PHONY: build demo test test-beside-pg clients postgres vet modules install-check stress bench fuzz test-clients-latest evidence release-snapshot

# build says what it is doing first: the first build downloads the Go modules
# and compiles SQLite, minutes with no other output.
build:
	@echo "building acc into ./bin (the first build downloads Go modules and takes a few minutes; later ones seconds)"
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/acc ./cmd/acc-hook ./cmd/acc-mcp

demo: build
	$(GO) run ./internal/demo -bin $(BIN)

vet:
	@unformatted=$$(gofmt -l cmd internal pkg); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet work
	GOOS=darwin $(GO) vet work   # macOS is the other supported platform: it must build there too

# modules checks each module listed in go.work on its own: tidy, and building,
# vetting and compiling its tests with GOWORK=off (docs/design.md#modules-and-releases).
modules:
	scripts/check-modules.sh

# install-check makes a release commit for a throwaway version in a copy of the
# tree and go-installs acc from it through a file:// proxy (docs/design.md#modules-and-releases).
install-check:
	scripts/check-install.sh

# TEST_TIMEOUT bounds each test binary (go test's own default, 10m, is too
# close to what the real-client package takes on a loaded 2-core machine).
TEST_TIMEOUT ?= 28m

test: vet clients postgres
	scripts/with-pg.sh $(MAKE) --no-print-directory test-beside-pg

# test-beside-pg is make test's body, run inside scripts/with-pg.sh: every
# test of every module, then pkg/core's suite once more with its rooms on
# the PostgreSQL test server (ACC_TEST_ENGINE=postgresql), so the rules of
# core are proven on both engines.
test-beside-pg:
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) work
	ACC_TEST_ENGINE=postgresql $(GO) test -count=1 -timeout $(TEST_TIMEOUT) github.com/acc-go/acc/pkg/core

# postgres installs the PostgreSQL server programs from Debian when they are
# missing (root only), for the throwaway cluster scripts/with-pg.sh starts
# around the tests. When that fails the tests on PostgreSQL skip, saying so —
# unless ACC_REQUIRE_PG=1, which makes it stop here (CI sets it).
postgres:
	@if scripts/pg-cluster.sh install; then :; \
	elif [ "$${ACC_REQUIRE_PG:-}" = 1 ]; then \
		echo "postgres: scripts/pg-cluster.sh install failed and ACC_REQUIRE_PG=1: stopping" >&2; exit 1; \
	else \
		echo "postgres: WARNING: no PostgreSQL server programs; the tests on PostgreSQL will skip (ACC_REQUIRE_PG=1 makes this an error)" >&2; \
	fi

# clients installs every pin the tests run (scripts/install-clients.sh; a
# complete install in the cache is reused at once), retrying once for a flaky
# registry. When that fails the client tests skip, saying so — unless
# ACC_REQUIRE_CLIENTS=1, which makes it stop here (CI sets it).
clients:
	@start=$$(date +%s); \
	if scripts/install-clients.sh || scripts/install-clients.sh; then \
		echo "clients: ready in $$(($$(date +%s) - start))s"; \
	elif [ "$${ACC_REQUIRE_CLIENTS:-}" = 1 ]; then \
		echo "clients: scripts/install-clients.sh failed and ACC_REQUIRE_CLIENTS=1: stopping" >&2; exit 1; \
	else \
		echo "clients: WARNING: scripts/install-clients.sh failed; the real-client tests will skip (ACC_REQUIRE_CLIENTS=1 makes this an error)" >&2; \
	fi

# test-clients-latest runs internal/realclient against what npm's latest tags name
# now instead of the pins (docs/real-clients.md), to see early when a client changed.
test-clients-latest:
	ACC_CLIENTS_LATEST=1 ACC_REQUIRE_CLIENTS=1 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -v ./internal/realclient/

# evidence reruns internal/realclient with ACC_UPDATE_EVIDENCE=1: after a passing run it
# rewrites pkg/adapters/<client>/evidence/<version>.json and evidence/<version>/ from what
# the tests proved (docs/real-clients.md). Review the diff, then run make test.
evidence: clients
	ACC_UPDATE_EVIDENCE=1 ACC_REQUIRE_CLIENTS=1 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./internal/realclient/

# release-snapshot builds the release archives with the pinned GoReleaser
# (scripts/install-goreleaser.sh, cached outside the clone) into ./dist without
# publishing anything, and checks them (scripts/release-snapshot.sh; CI runs it).
release-snapshot:
	scripts/release-snapshot.sh

stress:
	ACC_STRESS=1 scripts/with-pg.sh $(GO) test -count=1 -run 'Concurrent|Crash' -v -timeout 30m ./internal/e2e/
	cd pkg/storage && ACC_STRESS=1 ../../scripts/with-pg.sh $(GO) test -count=1 -run 'Upgrade' -v -timeout 30m .

bench:
	scripts/with-pg.sh $(GO) test -run '^$$' -bench . -benchmem work

# fuzz runs each parser's fuzz target for FUZZTIME (their seed corpora run in `make test`).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeMessage$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckLine$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzEscapeText$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckJSONText$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzTruncateUTF8$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzValidateConfig$$' -fuzztime $(FUZZTIME) ./pkg/workspace/
	$(GO) test -run '^$$' -fuzz '^FuzzShellWriteTargets$$' -fuzztime $(FUZZTIME) ./pkg/adapters/adapter/
	$(GO) test -run '^$$' -fuzz '^FuzzPatchTargets$$' -fuzztime $(FUZZTIME) ./pkg/adapters/adapter/
	$(GO) test -run '^$$' -fuzz '^FuzzJSONRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/install/
	$(GO) test -run '^$$' -fuzz '^FuzzTOMLBlockRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/install/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendBlock$$' -fuzztime $(FUZZTIME) ./internal/acp/
	for a in claude codex gemini kimi grok copilot qwen droid opencode kilo pi; do \
		$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME) ./pkg/adapters/$$a/ || exit 1; \
	done

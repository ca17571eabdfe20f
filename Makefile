# acc — make targets named in README.md.
#   make demo    the main job: a real two-session conversation in a throwaway repository
#   make test    every test of every module in go.work (what CI runs)
#   make build   the three binaries into ./bin
#   make stress  the heavy loads as a soak, four times the sizes the issues name
#   make bench   the benchmarks (numbers for the closing notes; never asserted)
#   make fuzz    each fuzz target for FUZZTIME (default 30s)
#   make test-clients-latest  the real-client tests against the newest npm releases
#   make evidence  rerun the real-client tests and rewrite the adapters' capability evidence

GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/acc-go/acc/internal/buildinfo.buildVersion=$(VERSION)

.PHONY: build demo test vet stress bench fuzz test-clients-latest evidence

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/acc ./cmd/acc-hook ./cmd/acc-mcp

demo: build
	$(GO) run ./internal/demo -bin $(BIN)

vet:
	@unformatted=$$(gofmt -l cmd internal pkg); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet work

test: vet
	$(GO) test -count=1 work

# test-clients-latest runs internal/realclient against what npm's latest tags name
# now instead of the pins (docs/real-clients.md), to see early when a client changed.
test-clients-latest:
	ACC_CLIENTS_LATEST=1 ACC_REQUIRE_CLIENTS=1 $(GO) test -count=1 -v ./internal/realclient/

# evidence reruns internal/realclient with ACC_UPDATE_EVIDENCE=1: after a passing run it
# rewrites pkg/adapters/<client>/evidence/<version>.json and evidence/<version>/ from what
# the tests proved (docs/real-clients.md). Review the diff, then run make test.
evidence:
	ACC_UPDATE_EVIDENCE=1 ACC_REQUIRE_CLIENTS=1 $(GO) test -count=1 ./internal/realclient/

stress:
	ACC_STRESS=1 $(GO) test -count=1 -run 'Concurrent|Crash' -v -timeout 30m ./internal/e2e/

bench:
	$(GO) test -run '^$$' -bench . -benchmem work

# fuzz runs each parser's fuzz target for FUZZTIME (their seed corpora run in `make test`).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeMessage$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckLine$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzTruncateUTF8$$' -fuzztime $(FUZZTIME) ./pkg/protocol/
	$(GO) test -run '^$$' -fuzz '^FuzzValidateConfig$$' -fuzztime $(FUZZTIME) ./pkg/core/
	$(GO) test -run '^$$' -fuzz '^FuzzShellWriteTargets$$' -fuzztime $(FUZZTIME) ./pkg/adapters/adapter/
	$(GO) test -run '^$$' -fuzz '^FuzzPatchTargets$$' -fuzztime $(FUZZTIME) ./pkg/adapters/adapter/
	$(GO) test -run '^$$' -fuzz '^FuzzJSONRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/install/
	$(GO) test -run '^$$' -fuzz '^FuzzTOMLBlockRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/install/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendBlock$$' -fuzztime $(FUZZTIME) ./internal/acp/
	for a in claude codex gemini kimi grok; do \
		$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZTIME) ./pkg/adapters/$$a/ || exit 1; \
	done

module github.com/acc-go/acc/pkg/adapters/codex

go 1.26

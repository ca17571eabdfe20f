module github.com/acc-go/acc/pkg/adapters/grok

go 1.26

module github.com/acc-go/acc/pkg/adapters/kimi

go 1.26

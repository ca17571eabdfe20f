module github.com/acc-go/acc/pkg/adapters/adapter

go 1.26

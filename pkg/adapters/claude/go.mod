module github.com/acc-go/acc/pkg/adapters/claude

go 1.26

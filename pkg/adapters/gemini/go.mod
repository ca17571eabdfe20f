module github.com/acc-go/acc/pkg/adapters/gemini

go 1.26

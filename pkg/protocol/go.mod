module github.com/acc-go/acc/pkg/protocol

go 1.26

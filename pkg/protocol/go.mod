module github.com/acc-go/acc/pkg/protocol

go 1.26

require github.com/google/go-cmp v0.7.0

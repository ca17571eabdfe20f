module github.com/acc-go/acc/pkg/adapters/adapter

go 1.26.0

require mvdan.cc/sh/v3 v3.14.1

require github.com/rogpeppe/go-internal v1.16.0 // indirect

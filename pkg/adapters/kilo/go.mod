module github.com/acc-go/acc/pkg/adapters/kilo

go 1.26.0

require github.com/acc-go/acc/pkg/adapters/adapter v0.0.0

require mvdan.cc/sh/v3 v3.14.1 // indirect

replace github.com/acc-go/acc/pkg/adapters/adapter => ../adapter

module github.com/acc-go/acc/pkg/router

go 1.26

require github.com/acc-go/acc/pkg/protocol v0.0.0

replace github.com/acc-go/acc/pkg/protocol => ../protocol

module github.com/acc-go/acc

go 1.26.0

require (
	github.com/acc-go/acc/pkg/core v0.0.0
	github.com/acc-go/acc/pkg/protocol v0.0.0
	github.com/acc-go/acc/pkg/router v0.0.0
	github.com/acc-go/acc/pkg/storage v0.0.0
)

require (
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/urfave/cli/v3 v3.14.0 // indirect
)

replace (
	github.com/acc-go/acc/pkg/core => ./pkg/core
	github.com/acc-go/acc/pkg/protocol => ./pkg/protocol
	github.com/acc-go/acc/pkg/router => ./pkg/router
	github.com/acc-go/acc/pkg/storage => ./pkg/storage
)

module github.com/acc-go/acc/pkg/workspace

go 1.26.0

require (
	github.com/acc-go/acc/pkg/protocol v0.0.0
	github.com/adrg/xdg v0.5.3
	github.com/google/go-cmp v0.7.0
)

require golang.org/x/sys v0.26.0 // indirect

replace github.com/acc-go/acc/pkg/protocol => ../protocol

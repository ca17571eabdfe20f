// printversion prints buildinfo.Version(), for buildinfo's tests to build
// as `make build` builds acc.
package main

import (
	"fmt"

	"github.com/acc-go/acc/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Version()) }

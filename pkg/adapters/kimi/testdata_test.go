package kimi

import "embed"

// testdataFS holds the 2.1.0 payloads (testdata/README.md).
//
//go:embed testdata
var testdataFS embed.FS

package codex

import "embed"

//go:embed testdata
var testdataFS embed.FS

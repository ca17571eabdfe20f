package claude

import "embed"

//go:embed testdata
var testdataFS embed.FS

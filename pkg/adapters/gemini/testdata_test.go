package gemini

import "embed"

//go:embed testdata
var testdataFS embed.FS

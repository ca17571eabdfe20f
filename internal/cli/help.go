package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// FlagHelp describes one flag in JSON help.
type FlagHelp struct {
	Name       string `json:"name"`
	Usage      string `json:"usage"`
	Required   bool   `json:"required"`
	Repeatable bool   `json:"repeatable"`
	TakesValue bool   `json:"takesValue"`
	Default    string `json:"default,omitempty"`
}

// CommandHelp is the JSON form of `acc help [command]` and `--help`.
type CommandHelp struct {
	Name        string        `json:"name"`
	Summary     string        `json:"summary"`
	Description string        `json:"description,omitempty"`
	Flags       []FlagHelp    `json:"flags"`
	Commands    []CommandHelp `json:"commands,omitempty"`
}

func describe(c *cli.Command, deep bool) CommandHelp {
	h := CommandHelp{Name: c.FullName(), Summary: c.Usage, Description: c.Description, Flags: []FlagHelp{}}
	for _, f := range c.Flags {
		fh := FlagHelp{Name: "--" + f.Names()[0]}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			fh.Usage = strings.ReplaceAll(df.GetUsage(), "`", "")
			fh.TakesValue = df.TakesValue()
			if fh.TakesValue {
				// The same default the text help prints: its stated
				// text where the flag has one, else its value.
				if t := df.GetDefaultText(); t != "" {
					fh.Default = t
				} else if v := strings.Trim(df.GetValue(), `"`); v != "" && v != "0" {
					fh.Default = v
				}
			}
		}
		if rf, ok := f.(cli.RequiredFlag); ok {
			fh.Required = rf.IsRequired()
		}
		_, fh.Repeatable = f.(*cli.StringSliceFlag)
		h.Flags = append(h.Flags, fh)
	}
	if deep {
		for _, s := range c.Commands {
			if !s.Hidden && s.Name != "help" {
				h.Commands = append(h.Commands, describe(s, false))
			}
		}
	}
	return h
}

// jsonHelpPrinter replaces urfave/cli's help printer in --json mode so help
// is one envelope on stdout like every other result.
func (a *app) jsonHelpPrinter(w io.Writer, _ string, data any) {
	if a.printed {
		return
	}
	c, ok := data.(*cli.Command)
	if !ok {
		return
	}
	a.printed = true
	b, err := protocol.MarshalIndent(protocol.Success(describe(c, true)))
	if err == nil {
		fmt.Fprintln(a.env.Stdout, string(b))
	}
}

package fakemodel

import (
	"fmt"
	"strings"
)

// A Script is the sequence of replies the fake model gives, one per model call
// that offers tools, in order.
type Script []Reply

// A Reply is one answer of the model: optional text followed by tool calls.
// With no calls it ends the client's turn.
type Reply struct {
	// Text is what the model says. With Calls it comes first, as a preamble.
	Text string
	// Calls are the tools the model asks to run, in order.
	Calls []Call
	// Build, when set, makes the reply from the request it answers; Text and
	// Calls are then ignored. An error is answered as text and recorded, and
	// Server.Verify reports it.
	Build func(req *Request) (Reply, error)
}

// CallKind says what a Call does.
type CallKind int

// The kinds of tool call.
const (
	// CallShell runs Command with the client's shell tool.
	CallShell CallKind = iota + 1
	// CallWrite writes Content to Path with the client's file-write tool.
	CallWrite
	// CallRaw calls the tool Name with Args exactly as given.
	CallRaw
)

// A Call is one tool call of the model. Make one with Shell, Write or Tool.
type Call struct {
	Kind    CallKind
	Command string         // CallShell
	Path    string         // CallWrite
	Content string         // CallWrite
	Name    string         // CallRaw
	Args    map[string]any // CallRaw
}

// Say is a reply with text only: it ends the turn.
func Say(text string) Reply { return Reply{Text: text} }

// Run is a reply that calls the given tools.
func Run(calls ...Call) Reply { return Reply{Calls: calls} }

// Shell is a call of the client's shell tool with a command line.
func Shell(command string) Call { return Call{Kind: CallShell, Command: command} }

// Write is a call of the client's file-write tool. Codex has no whole-file
// write, so for Codex it becomes an apply_patch that adds the file, which fails
// if the file exists; use Tool with a patch of your own to change a file.
func Write(path, content string) Call { return Call{Kind: CallWrite, Path: path, Content: content} }

// Tool is a call of the tool name with args, in the client's own terms.
func Tool(name string, args map[string]any) Call { return Call{Kind: CallRaw, Name: name, Args: args} }

// Turn is the two replies of a turn that runs one tool: the call, then final
// text after the tool result.
func Turn(call Call, final string) Script { return Script{Run(call), Say(final)} }

func (c Call) String() string {
	switch c.Kind {
	case CallShell:
		return fmt.Sprintf("shell(%q)", c.Command)
	case CallWrite:
		return fmt.Sprintf("write(%q, %d bytes)", c.Path, len(c.Content))
	case CallRaw:
		return fmt.Sprintf("%s(%v)", c.Name, c.Args)
	}
	return "call(?)"
}

// addFilePatch is an apply_patch body that creates path with content.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: ")
	b.WriteString(path)
	b.WriteString("\n")
	for line := range strings.Lines(content) {
		b.WriteString("+")
		b.WriteString(strings.TrimSuffix(line, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

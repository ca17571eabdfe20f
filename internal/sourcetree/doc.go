// Package sourcetree holds tests about the repository itself rather than about
// acc's behaviour: that the modules keep the layering docs/design.md#layers
// describes, and that every document the code cites exists in docs/ with the
// section it names. It has no code of its own; `go test ./internal/sourcetree/`
// runs the checks from the repository root's point of view.
package sourcetree

// Package workspace finds the room a command works in and the places acc
// keeps its data, without touching any store.
//
//   - [Discover] turns a start directory and the environment into a
//     [Workspace]: from an acc.workspace.json found walking up, else from
//     the Git repository, else from the directory itself
//     (docs/protocol.md#workspace-discovery).
//   - [LoadConfig] and [ValidateConfig] read and check acc.workspace.json;
//     [PlanConfigInit] renders and writes a new one
//     (docs/protocol.md#configuration-file).
//   - [ResolveRuntimeEnv] and [ResolveDataHome] read acc's environment
//     variables and the platform directories; [RuntimeEnv.CheckContainment]
//     keeps acc's data out of every workspace
//     (docs/protocol.md#runtime-location-and-containment,
//     docs/protocol.md#environment-variables).
//
// It imports only pkg/protocol and third-party modules; pkg/core opens the
// store on top of it.
package workspace

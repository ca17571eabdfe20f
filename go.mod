module github.com/acc-go/acc

go 1.26.0

require (
	charm.land/bubbletea/v2 v2.1.1
	github.com/acc-go/acc/pkg/adapters/acp v0.0.0
	github.com/acc-go/acc/pkg/adapters/adapter v0.0.0
	github.com/acc-go/acc/pkg/adapters/claude v0.0.0
	github.com/acc-go/acc/pkg/adapters/codex v0.0.0
	github.com/acc-go/acc/pkg/adapters/copilot v0.0.0
	github.com/acc-go/acc/pkg/adapters/droid v0.0.0
	github.com/acc-go/acc/pkg/adapters/gemini v0.0.0
	github.com/acc-go/acc/pkg/adapters/grok v0.0.0
	github.com/acc-go/acc/pkg/adapters/kilo v0.0.0
	github.com/acc-go/acc/pkg/adapters/kimi v0.0.0
	github.com/acc-go/acc/pkg/adapters/opencode v0.0.0
	github.com/acc-go/acc/pkg/adapters/pi v0.0.0
	github.com/acc-go/acc/pkg/adapters/qwen v0.0.0
	github.com/acc-go/acc/pkg/core v0.0.0
	github.com/acc-go/acc/pkg/protocol v0.0.0
	github.com/acc-go/acc/pkg/router v0.0.0
	github.com/acc-go/acc/pkg/storage v0.0.0
	github.com/acc-go/acc/pkg/workspace v0.0.0
	github.com/charmbracelet/x/ansi v0.11.9
	github.com/charmbracelet/x/vt v0.1.0
	github.com/creack/pty v1.1.24
	github.com/fsnotify/fsnotify v1.10.1
	github.com/gofrs/flock v0.13.2
	github.com/google/go-cmp v0.7.0
	github.com/google/jsonschema-go v0.4.3
	github.com/jackc/pgx/v5 v5.12.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/shirou/gopsutil/v4 v4.26.10
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f
	github.com/urfave/cli/v3 v3.14.0
	golang.org/x/mod v0.42.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	modernc.org/sqlite v1.62.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/adrg/xdg v0.5.3 // indirect
	github.com/charmbracelet/colorprofile v0.4.3 // indirect
	github.com/charmbracelet/ultraviolet v0.0.0-20261008173134-6b8d4baf91b4 // indirect
	github.com/charmbracelet/x/exp/ordered v0.1.0 // indirect
	github.com/charmbracelet/x/term v0.2.2 // indirect
	github.com/charmbracelet/x/termios v0.1.1 // indirect
	github.com/charmbracelet/x/windows v0.2.2 // indirect
	github.com/clipperhouse/displaywidth v0.11.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/ebitengine/purego v0.11.2 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/lucasb-eyer/go-colorful v1.4.1 // indirect
	github.com/lufia/plan9stats v0.0.0-20211012122336-39d0f177ccd0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mattn/go-runewidth v0.0.30 // indirect
	github.com/muesli/cancelreader v0.2.2 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/power-devops/perfstat v0.0.0-20260805114148-88456608a4f6 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/tklauser/go-sysconf v0.4.0 // indirect
	github.com/tklauser/numcpus v0.12.0 // indirect
	github.com/xo/terminfo v1.0.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

replace (
	github.com/acc-go/acc/pkg/adapters/acp => ./pkg/adapters/acp
	github.com/acc-go/acc/pkg/adapters/adapter => ./pkg/adapters/adapter
	github.com/acc-go/acc/pkg/adapters/claude => ./pkg/adapters/claude
	github.com/acc-go/acc/pkg/adapters/codex => ./pkg/adapters/codex
	github.com/acc-go/acc/pkg/adapters/copilot => ./pkg/adapters/copilot
	github.com/acc-go/acc/pkg/adapters/droid => ./pkg/adapters/droid
	github.com/acc-go/acc/pkg/adapters/gemini => ./pkg/adapters/gemini
	github.com/acc-go/acc/pkg/adapters/grok => ./pkg/adapters/grok
	github.com/acc-go/acc/pkg/adapters/kilo => ./pkg/adapters/kilo
	github.com/acc-go/acc/pkg/adapters/kimi => ./pkg/adapters/kimi
	github.com/acc-go/acc/pkg/adapters/opencode => ./pkg/adapters/opencode
	github.com/acc-go/acc/pkg/adapters/pi => ./pkg/adapters/pi
	github.com/acc-go/acc/pkg/adapters/qwen => ./pkg/adapters/qwen
	github.com/acc-go/acc/pkg/core => ./pkg/core
	github.com/acc-go/acc/pkg/protocol => ./pkg/protocol
	github.com/acc-go/acc/pkg/router => ./pkg/router
	github.com/acc-go/acc/pkg/storage => ./pkg/storage
	github.com/acc-go/acc/pkg/workspace => ./pkg/workspace
)

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/router"
)

// Options configure one run of the main job.
type Options struct {
	// BinDir holds the acc binary; "" builds it into the temporary directory.
	BinDir string
	// Keep leaves the temporary directory in place.
	Keep bool
	// Out receives the narrated steps.
	Out io.Writer
}

// Transcript is what a run observed, for tests.
type Transcript struct {
	Question, Answer, Handoff string
	// States maps "step" to the receipt state observed there.
	States map[string]string
}

type player struct {
	acc, dir string
	env      []string
	out      io.Writer
	step     int
}

type session struct {
	name, cwd, id, gen string
}

// Run plays the exchange and returns what it observed; any deviation from
// the expected receipt states is an error.
func Run(o Options) (err error) {
	_, err = Play(o)
	return err
}

// Play is Run returning the transcript.
func Play(o Options) (*Transcript, error) {
	tmp, err := os.MkdirTemp("", "acc-demo-")
	if err != nil {
		return nil, err
	}
	if o.Keep {
		defer fmt.Fprintf(o.Out, "\nkept: %s (repository, worktree and data home)\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	p := &player{out: o.Out}
	p.acc, err = findAcc(o.BinDir, tmp)
	if err != nil {
		return nil, err
	}
	p.env = cleanEnv(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "home"), 0o700); err != nil {
		return nil, err
	}
	repo, wt := filepath.Join(tmp, "repo"), filepath.Join(tmp, "worktree")
	if err := p.setupGit(repo, wt); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "A throwaway repository %s with a second worktree %s; data home %s.\n\n", repo, wt, filepath.Join(tmp, "data"))

	tr := &Transcript{States: map[string]string{}}
	codex := &session{name: "codex", cwd: repo}
	claude := &session{name: "claude", cwd: wt}
	for _, s := range []*session{codex, claude} {
		var res struct {
			SessionID, Generation, Branch string
			Materialised                  bool
		}
		if err := p.run(s, &res, "attach", "--participant", s.name, "--harness", s.name); err != nil {
			return nil, err
		}
		s.id, s.gen = res.SessionID, res.Generation
		p.say("%s attached in %s on branch %s: %s (room materialised: %v)", s.name, s.cwd, res.Branch, s.id, res.Materialised)
	}

	var sent sendResult
	if err := p.run(codex, &sent, "message", "--to", "claude", "--type", "question", "--subject", "receipt wording",
		"--body", "Should the UI say offered or delivered after the transport accepts bytes?",
		"--client-message-id", "client_receipt_wording_1"); err != nil {
		return nil, err
	}
	tr.Question = sent.Message.MessageID
	if len(sent.Delivery) != 1 || sent.Delivery[0].Outcome != "queued" {
		return nil, fmt.Errorf("the question's delivery is %+v, want one recipient, queued", sent.Delivery)
	}
	tr.States["sent"] = sent.Delivery[0].Outcome
	p.say("codex asked claude %s; %s", tr.Question, sent.deliveryWords())

	var page inboxPage
	if err := p.run(claude, &page, "inbox"); err != nil {
		return nil, err
	}
	st, ok := page.state(tr.Question)
	if !ok {
		return nil, fmt.Errorf("claude's inbox does not list %s", tr.Question)
	}
	tr.States["listed"] = st
	p.say("claude's inbox lists %s (%s) with receipt %s; listing changed nothing", tr.Question, page.subject(tr.Question), st)

	var exact []exactItem
	if err := p.run(claude, &exact, "inbox", "--message", tr.Question); err != nil {
		return nil, err
	}
	tr.States["read"] = exact[0].Receipt.State
	p.say("claude read the question in full (%q); receipt %s", exact[0].Message.Body, exact[0].Receipt.State)
	if exact[0].Receipt.State != "retrieved" {
		return nil, fmt.Errorf("after the exact read the receipt is %s, want retrieved", exact[0].Receipt.State)
	}

	var reply sendResult
	if err := p.run(claude, &reply, "reply", "--message", tr.Question,
		"--body", "Use offered. It proves the transport accepted the bytes, not that the model read them."); err != nil {
		return nil, err
	}
	tr.Answer = reply.Message.MessageID
	tr.States["replied"] = reply.Receipt.State
	p.say("claude replied %s in thread %s; claude's receipt for the question is now %s", tr.Answer, reply.Message.ThreadID, reply.Receipt.State)
	if reply.Receipt.State != "acknowledged" || reply.Message.ThreadID != tr.Question {
		return nil, fmt.Errorf("reply left the question %s in thread %s, want acknowledged in %s", reply.Receipt.State, reply.Message.ThreadID, tr.Question)
	}

	if err := p.run(codex, &page, "inbox"); err != nil {
		return nil, err
	}
	if st, ok = page.state(tr.Answer); !ok {
		return nil, fmt.Errorf("codex's inbox does not list the answer %s", tr.Answer)
	}
	p.say("codex's inbox lists the answer %s with receipt %s", tr.Answer, st)
	if err := p.run(codex, &exact, "inbox", "--message", tr.Answer); err != nil {
		return nil, err
	}
	tr.States["answer read"] = exact[0].Receipt.State
	p.say("codex read the answer (%q) in reply to %s; receipt %s", exact[0].Message.Body, deref(exact[0].Message.InReplyTo), exact[0].Receipt.State)

	var fin sendResult
	if err := p.run(codex, &fin, "finish", "--goal", "settle the receipt wording", "--status", "complete",
		"--completed", "asked claude and got an answer", "--to", "claude"); err != nil {
		return nil, err
	}
	tr.Handoff = fin.Message.MessageID
	p.say("codex finished with a handoff %s to claude (owes %s); codex's session is %s", tr.Handoff, fin.Message.Obligation, fin.Session.State)

	if err := p.run(claude, &exact, "inbox", "--message", tr.Handoff); err != nil {
		return nil, err
	}
	p.say("claude read the handoff; receipt %s", exact[0].Receipt.State)
	var ack receipt
	if err := p.run(claude, &ack, "ack", "--message", tr.Handoff); err != nil {
		return nil, err
	}
	tr.States["handoff"] = ack.State
	p.say("claude acknowledged the handoff; receipt %s", ack.State)

	var fin2 sendResult
	if err := p.run(claude, &fin2, "finish", "--goal", "answer the wording question", "--status", "complete",
		"--completed", "answered codex"); err != nil {
		return nil, err
	}
	p.say("claude finished with a room handoff %s; its session is %s", fin2.Message.MessageID, fin2.Session.State)

	var status struct {
		Participants []struct{ ParticipantID, Presence string }
	}
	if err := p.run(&session{name: "anyone", cwd: repo}, &status, "status", "--all"); err != nil {
		return nil, err
	}
	var rows []string
	for _, r := range status.Participants {
		rows = append(rows, r.ParticipantID+" "+r.Presence)
	}
	p.say("status --all: %s", strings.Join(rows, ", "))
	fmt.Fprintln(o.Out, "\nThe question travelled, was read, answered in its thread and acknowledged; both sessions handed off.")
	return tr, nil
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

func (p *player) say(format string, args ...any) {
	fmt.Fprintf(p.out, "   → "+format+"\n\n", args...)
}

// run executes acc as session s with --json, prints the command, and decodes
// the envelope's data into out.
func (p *player) run(s *session, out any, args ...string) error {
	p.step++
	full := append([]string{}, args...)
	full = append(full, "--cwd", s.cwd)
	shown := strings.Join(quoteAll(args), " ")
	if s.id != "" {
		full = append(full, "--session", s.id, "--generation", s.gen)
		shown += " --session $" + strings.ToUpper(s.name) + "_S --generation $" + strings.ToUpper(s.name) + "_G"
	}
	fmt.Fprintf(p.out, "%2d. [%s] $ acc %s\n", p.step, s.name, shown)
	full = append(full, "--json")
	cmd := exec.Command(p.acc, full...)
	cmd.Env = p.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		return fmt.Errorf("acc %s: no JSON envelope (%v): %s %s", args[0], runErr, stdout.String(), stderr.String())
	}
	if !env.OK {
		return fmt.Errorf("acc %s failed with exit %d: %s", args[0], env.Error.Code, env.Error.Message)
	}
	return json.Unmarshal(env.Data, out)
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'$") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return out
}

func (p *player) setupGit(repo, wt string) error {
	git := func(dir string, args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(p.env, "GIT_AUTHOR_NAME=acc demo", "GIT_AUTHOR_EMAIL=demo@example.invalid",
			"GIT_COMMITTER_NAME=acc demo", "GIT_COMMITTER_EMAIL=demo@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	if err := git(repo, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("demo\n"), 0o644); err != nil {
		return err
	}
	if err := git(repo, "add", "README"); err != nil {
		return err
	}
	if err := git(repo, "commit", "-q", "-m", "init"); err != nil {
		return err
	}
	return git(repo, "worktree", "add", "-q", "-b", "side", wt)
}

// cleanEnv is the children's environment: the user's, minus anything that
// could point acc at a real session or data home, plus a private data home.
func cleanEnv(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ACC_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "XDG_") ||
			k == "HOME" || k == "CLAUDE_CODE_SESSION_ID" || k == "GEMINI_SESSION_ID" || k == "CODEX_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "ACC_DATA_HOME="+filepath.Join(tmp, "data"), "HOME="+filepath.Join(tmp, "home"),
		"ACC_NO_UPDATE_CHECK=1", "GIT_CONFIG_NOSYSTEM=1")
}

func findAcc(binDir, tmp string) (string, error) {
	if binDir != "" {
		p, err := filepath.Abs(filepath.Join(binDir, "acc"))
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("no acc binary in %s; run `make build` first, or omit -bin", binDir)
		}
		return p, nil
	}
	out := filepath.Join(tmp, "bin", "acc")
	cmd := exec.Command("go", "build", "-o", out, "github.com/acc-go/acc/cmd/acc")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build acc: %w", err)
	}
	return out, nil
}

type sendResult struct {
	Message struct {
		MessageID  string
		ThreadID   string
		Obligation string
	}
	Delivery []struct {
		RecipientParticipantID string
		Outcome, Transport     string
		ErrorCode              *string
	}
	Receipt *receipt
	Session *struct{ State string }
}

// deliveryWords narrates each recipient's delivery outcome in plain words
// (docs/delivery.md has the table behind them). Every session of the demo
// is attached with acc attach, so a client whose next turn is not proven
// is, here, a terminal session.
func (s sendResult) deliveryWords() string {
	var parts []string
	for _, d := range s.Delivery {
		who, code := d.RecipientParticipantID, ""
		if d.ErrorCode != nil {
			code = *d.ErrorCode
		}
		var part string
		switch {
		case d.Outcome == router.OutcomeOffered && d.Transport != router.TransportDurable:
			part = fmt.Sprintf("offered live to %s through %s: their idle session starts a turn on it", who, d.Transport)
		case d.Outcome != router.OutcomeQueued:
			part = fmt.Sprintf("%s's receipt was already %s", who, d.Outcome)
		case d.Transport == router.TransportNextTurn:
			part = fmt.Sprintf("queued for %s: their client shows it at their next turn", who)
		case code == router.ErrRecipientUnavailable:
			part = fmt.Sprintf("queued for %s, who has no live session: it waits in their inbox", who)
		case code == router.ErrUnsupportedClientVersion:
			part = fmt.Sprintf("queued for %s, a terminal session (attached with acc attach), so it reads it with acc inbox; a client wired by acc install would see it at its next turn", who)
		default:
			part = fmt.Sprintf("queued for %s: it waits in their inbox (%s)", who, code)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

type receipt struct {
	MessageID string
	State     string
}

type inboxPage struct {
	Items []struct {
		Message struct{ MessageID, Subject string }
		Receipt receipt
	}
}

func (p inboxPage) state(id string) (string, bool) {
	for _, it := range p.Items {
		if it.Message.MessageID == id {
			return it.Receipt.State, true
		}
	}
	return "", false
}

func (p inboxPage) subject(id string) string {
	for _, it := range p.Items {
		if it.Message.MessageID == id {
			return fmt.Sprintf("%q", it.Message.Subject)
		}
	}
	return ""
}

type exactItem struct {
	Message struct {
		MessageID, Body string
		InReplyTo       *string
	}
	Receipt receipt
}

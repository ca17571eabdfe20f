package adapter

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

type shellCase struct {
	cmd  string
	want []string
}

// referenceVectors are the shell vectors the upstream project's parser was
// held to, with the one change docs/decisions.md#7-shell-writes makes: a
// literal cd moves the base (docs/hooks.md#how-the-guard-reads-a-shell-command).
var referenceVectors = []shellCase{
	{`printf '%s\n' '// via shell' >> src/parser.mjs`, []string{"src/parser.mjs"}},
	{`echo x > notes.txt`, []string{"notes.txt"}},
	{`node build.mjs 2> build.log`, []string{"build.log"}},
	{`cat f`, nil},
	{`grep -n parse f`, nil},
	{`node --test f`, nil},
	{`sed 's/a/b/' f`, nil},
	{`node b.mjs < f`, nil},
	{`wc -l < f`, nil},
	{`node - <<< 'x'`, nil},
	{`npm test > /dev/null`, nil},
	{`npm test 2>&1`, nil},
	{`npm test > /dev/null 2>&1`, nil},
	{`sed -i '' 's/a/b/' f`, []string{"f"}},
	{`sed -i.bak -e 's/a/b/' f`, []string{"f"}},
	{`perl -i -pe 's/a/b/' f`, []string{"f"}},
	{`tee f`, []string{"f"}},
	{`tee -a f`, []string{"f"}},
	{`touch f`, []string{"f"}},
	{`truncate -s 0 f`, []string{"f"}},
	{`dd if=/dev/zero of=f`, []string{"f"}},
	{`rm f`, []string{"f"}},
	{`rm -rf f`, []string{"f"}},
	{`cp /tmp/new f`, []string{"f"}},
	{`mv a b`, []string{"a", "b"}},
	{`ln -sf /tmp/o f`, []string{"f"}},
	{`git restore f`, []string{"f"}},
	{`git checkout -- f`, []string{"f"}},
	{`git log -1 -- f`, nil},
	{`git diff f`, nil},
	{`npm test && printf x > f`, []string{"f"}},
	// Upstream's parser did not track cd; docs/decisions.md#7-shell-writes does.
	{`cd src; rm parser.mjs`, []string{"src/parser.mjs"}},
	{`cat in | tee f`, []string{"f"}},
	{`echo 'a > b'`, nil},
	{`echo "w > n"`, nil},
	{`git commit -m 'move a > b'`, nil},
	{"cat > f <<'EOF'\nline with > inside\nrm x\nEOF", []string{"f"}},
	{``, nil},
	{`   `, nil},
	{`python3 -c "open('f','w')"`, nil},
	{`eval "$CMD"`, nil},
	{`rm f && touch f`, []string{"f"}},
}

var ownVectors = []shellCase{
	// redirection forms
	{`echo x >| f`, []string{"f"}},
	{`make &> out.log`, []string{"out.log"}},
	{`make &>> out.log`, []string{"out.log"}},
	{`make 1> a 2>> b`, []string{"a", "b"}},
	{`echo x >& f`, []string{"f"}},
	{`echo x >&2`, nil},
	{`exec 3<> f`, []string{"f"}},
	{`exec 3>&-`, nil},
	{`cat < f > g`, []string{"g"}},
	{`echo x > /dev/stderr; echo y > /dev/tty; echo z > /dev/fd/3`, nil},
	{`> empty.txt`, []string{"empty.txt"}},
	{`{ echo a; echo b; } > both`, []string{"both"}},
	{`for i in 1 2; do echo $i; done > loop.txt`, []string{"loop.txt"}},
	{`echo x > 'quoted name'`, []string{"quoted name"}},
	{`echo x > a\ b`, []string{"a b"}},
	{`echo x > "dir/$NAME.txt"`, []string{"dir/$NAME.txt"}},
	{`echo x > $OUT`, []string{"$OUT"}},
	{`echo x > ~/notes`, []string{"~/notes"}},
	{`echo x > *.go`, []string{"*.go"}},
	// every simple command, everywhere
	{`true; false || rm a; (rm b) && { rm c; }`, []string{"a", "b", "c"}},
	{`ls | grep x | tee out`, []string{"out"}},
	{"if test -f a; then rm a; else touch b; fi", []string{"a", "b"}},
	{`while read l; do echo "$l" >> log; done < in`, []string{"log"}},
	{`case $x in a) rm a;; *) rm b;; esac`, []string{"a", "b"}},
	{`f() { rm inside; }; f`, []string{"inside"}},
	{`echo $(rm sub)`, []string{"sub"}},
	{"echo `touch back`", []string{"back"}},
	{`diff <(sort a) <(sort b) > d`, []string{"d"}},
	{`echo x | tee >(gzip > x.gz) plain`, []string{"x.gz", "plain"}},
	{`X=$(rm assigned) true`, []string{"assigned"}},
	{`sleep 1 & rm bg`, []string{"bg"}},
	{`time rm timed`, []string{"timed"}},
	{`! rm negated`, []string{"negated"}},
	{`echo "$(rm inquotes)"`, []string{"inquotes"}},
	{"cat <<EOF\n$(rm inheredoc)\nEOF", []string{"inheredoc"}},
	{"cat <<'EOF'\n$(rm notrun)\nEOF", nil},
	// wrappers and assignments
	{`sudo rm f`, []string{"f"}},
	{`sudo -u root tee f`, []string{"f"}},
	{`echo x | sudo tee -a /etc/hosts > /dev/null`, []string{"/etc/hosts"}},
	{`LC_ALL=C sort -o sorted in`, []string{"sorted"}},
	{`env FOO=bar BAZ=1 rm f`, []string{"f"}},
	{`env -i rm f`, []string{"f"}},
	{`nohup nice -n 5 rm f`, []string{"f"}},
	{`command rm f`, []string{"f"}},
	{`command -v rm`, nil},
	{`timeout 5 rm f`, []string{"f"}},
	{`timeout -s KILL 5s touch f`, []string{"f"}},
	{`/bin/rm f`, []string{"f"}},
	{`exec rm f`, []string{"f"}},
	{`"$EDITOR" f`, nil},
	{`$RM f`, nil},
	// writers
	{`rm -- -weird`, []string{"-weird"}},
	{`rm -r -f a b c`, []string{"a", "b", "c"}},
	{`rmdir d && unlink l`, []string{"d", "l"}},
	{`touch -d yesterday -r ref f`, []string{"f"}},
	{`truncate --size=0 f`, []string{"f"}},
	{`truncate -s0 f`, []string{"f"}},
	{`shred -n 3 -u f`, []string{"f"}},
	{`mkdir -p -m 755 a/b c`, []string{"a/b", "c"}},
	{`cp -r src/ dst`, []string{"dst"}},
	{`cp a b dir`, []string{"dir", "dir/a", "dir/b"}},
	{`cp a.go pkg/`, []string{"pkg/", "pkg/a.go"}},
	{`cp -t dir a b/c`, []string{"dir/a", "dir/c"}},
	{`cp --target-directory=dir a`, []string{"dir/a"}},
	{`mv -f old.go new.go`, []string{"old.go", "new.go"}},
	{`mv a b dir/`, []string{"a", "b", "dir/", "dir/a", "dir/b"}},
	{`install -m 644 build/x /usr/local/bin/x`, []string{"/usr/local/bin/x"}},
	{`install -d a b`, []string{"a", "b"}},
	{`ln -s target`, []string{"target"}},
	{`rsync -av --exclude .git src/ backup/`, []string{"backup/"}},
	{`dd if=a of=b bs=1M`, []string{"b"}},
	{`sed -i 's/a/b/' f g`, []string{"f", "g"}},
	{`sed --in-place -e 's/a/b/' f`, []string{"f"}},
	{`sed -n -i 's/a/b/p' f`, []string{"f"}},
	{`sed -ni 's/a/b/p' f`, []string{"f"}},
	{`sed -e 's/a/b/' f`, nil},
	{`sed -f script.sed -i f`, []string{"f"}},
	{`perl -pi -e 's/a/b/' f`, []string{"f"}},
	{`perl -i.bak -p script.pl f`, []string{"f"}},
	{`perl -pe 's/a/b/' f`, nil},
	{`ruby -i -pe 'gsub(/a/, "b")' f`, []string{"f"}},
	{`git restore --source HEAD~1 -- a b`, []string{"a", "b"}},
	{`git restore -s main a`, []string{"a"}},
	{`git checkout main`, nil},
	{`git checkout main -- a`, []string{"a"}},
	{`git rm --cached a`, []string{"a"}},
	{`git mv a b`, []string{"a", "b"}},
	{`git -C sub restore f`, []string{"sub/f"}},
	{`git --no-pager -c core.x=y checkout -- f`, []string{"f"}},
	{`git status`, nil},
	{`curl -sSL -o out.bin https://example.org/x`, []string{"out.bin"}},
	{`curl --output=o2 -H 'a: b' url`, []string{"o2"}},
	{`curl -o - url`, nil},
	{`wget -O page.html url`, []string{"page.html"}},
	{`wget -qO- url`, nil},
	{`sort --output=s in`, []string{"s"}},
	{`xargs rm < list`, nil},
	{`find . -name '*.tmp' -delete`, nil},
	// nested shells and eval
	{`bash -c 'echo x > inner'`, []string{"inner"}},
	{`sh -lc "rm a && touch b"`, []string{"a", "b"}},
	{`sudo sh -c 'cat > /etc/x'`, []string{"/etc/x"}},
	{`eval 'rm evald'`, []string{"evald"}},
	{`bash script.sh`, nil},
	{`bash -c '((('`, nil},
	// apply_patch through the shell (Codex)
	{"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** End Patch\nEOF", []string{"a.go"}},
	{"apply_patch '*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch'", []string{"n.txt"}},
	// cd moves the base (docs/decisions.md#7-shell-writes)
	{`cd src && rm a.go`, []string{"src/a.go"}},
	{`cd /abs && rm a`, []string{"/abs/a"}},
	{`cd .. && rm a`, []string{"../a"}},
	{`cd sub && echo x > ../f`, []string{"sub/../f"}},
	{`cd /abs/./x/.. && rm a`, []string{"/abs/a"}},
	{`git -C a/.. restore f`, []string{"a/../f"}},
	{`cd a && cd b && touch f`, []string{"a/b/f"}},
	{`cd a && cd .. && touch f`, []string{"f"}},
	{`cd a/./b/ && touch f`, []string{"a/b/f"}},
	{`cd -P src && rm a`, []string{"src/a"}},
	{`cd 'my dir' && rm a`, []string{"my dir/a"}},
	{`cd src && rm /tmp/x`, []string{"/tmp/x"}},
	{`echo x > first; cd src; echo y > second`, []string{"first", "src/second"}},
	{`cd src > log && rm a`, []string{"log", "src/a"}},
	{`(cd src && rm a); rm b`, []string{"src/a", "b"}},
	{`cd src | rm a`, []string{"a"}},
	{`cd src & rm a`, []string{"a"}},
	{`{ cd src; }; rm a`, []string{"src/a"}},
	{`bash -c 'cd inner' && rm a`, []string{"a"}},
	{`bash -c 'cd src && rm a'`, []string{"src/a"}},
	{`cd src && bash -c 'rm a'`, []string{"src/a"}},
	{`env -C src rm a; rm b`, []string{"src/a", "b"}},
	{`cd src && git -C ../other rm x`, []string{"src/../other/x"}},
	{`pushd src && rm a`, []string{"src/a"}},
	{`cd /dev && echo x > null`, nil},
	{`cd src && cp a b/`, []string{"src/b/", "src/b/a"}},
}

func TestShellWriteTargets(t *testing.T) {
	for _, group := range []struct {
		name  string
		cases []shellCase
	}{{"reference", referenceVectors}, {"own", ownVectors}} {
		t.Run(group.name, func(t *testing.T) {
			for _, c := range group.cases {
				got, err := ShellWriteTargets(c.cmd)
				if err != nil {
					t.Errorf("%q: unexpected error %v", c.cmd, err)
					continue
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%q:\n got  %q\n want %q", c.cmd, got, c.want)
				}
			}
		})
	}
}

func TestShellWriteTargetsUnparsable(t *testing.T) {
	for _, cmd := range []string{
		`((`,
		`'unterminated`,
		`echo "open`,
		`rm a && `,
		`if true; then rm a`,
		`echo $(`,
		`cat <<EOF`, // a heredoc never closed still parses; see below
		`) rm a`,
		`rm a |`,
	} {
		got, err := ShellWriteTargets(cmd)
		if cmd == `cat <<EOF` {
			// bash reads an unterminated heredoc to the end of input
			// with a warning; so does the parser. No target either way.
			if len(got) != 0 {
				t.Errorf("%q: targets %q", cmd, got)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrShellUnparsable) {
			t.Errorf("%q: want ErrShellUnparsable, got %v (targets %q)", cmd, err, got)
		}
		if got != nil {
			t.Errorf("%q: unparsable input must give no targets, got %q", cmd, got)
		}
	}
}

func TestShellWriteTargetsUnknownDir(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string // the targets that are still certain
	}{
		{`cd "$DIR" && rm a.go`, nil},
		{`cd $(mktemp -d) && touch x`, nil},
		{`cd && rm a`, nil},
		{`cd ~ && rm a`, nil},
		{`cd - && rm a`, nil},
		{`cd sr* && rm a`, nil},
		{`rm before; cd "$X"; rm after; rm /abs/after`, []string{"before", "/abs/after"}},
		{`popd; rm a`, nil},
		{`git -C "$D" restore f`, nil},
	}
	for _, c := range cases {
		got, err := ShellWriteTargets(c.cmd)
		if !errors.Is(err, ErrShellUnknownDir) {
			t.Errorf("%q: want ErrShellUnknownDir, got %v", c.cmd, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.cmd, got, c.want)
		}
	}
	// A non-literal cd followed by no relative target is no error, and a
	// later literal absolute cd makes the base known again.
	// A target spelled with a variable may be absolute: it is returned as
	// written whatever the base.
	if got, err := ShellWriteTargets(`cd "$X" && echo x > "$OUT"`); err != nil || !slices.Equal(got, []string{"$OUT"}) {
		t.Errorf("variable target after unknown cd: %q %v", got, err)
	}
	for _, cmd := range []string{`cd "$DIR" && ls`, `cd "$DIR"; cd /srv && rm a`, `(cd "$X" && make); rm -f /tmp/y`} {
		if _, err := ShellWriteTargets(cmd); err != nil {
			t.Errorf("%q: unexpected error %v", cmd, err)
		}
	}
	if got, _ := ShellWriteTargets(`cd "$DIR"; cd /srv && rm a`); !slices.Equal(got, []string{"/srv/a"}) {
		t.Errorf("absolute cd after unknown: got %q", got)
	}
}

func TestShellWriteTargetsHugeAndOdd(t *testing.T) {
	long := strings.Repeat("rm f; ", 5000)
	got, err := ShellWriteTargets(long)
	if err != nil || !slices.Equal(got, []string{"f"}) {
		t.Fatalf("repeated command: %q %v", got, err)
	}
	deep := strings.Repeat("( ", 500) + "rm deep" + strings.Repeat(" )", 500)
	if got, err := ShellWriteTargets(deep); err != nil || !slices.Equal(got, []string{"deep"}) {
		t.Fatalf("deep subshells: %q %v", got, err)
	}
	nested := `bash -c "bash -c \"bash -c 'bash -c \\\"bash -c \\\\\\\"rm deepest\\\\\\\"\\\"'\""`
	if _, err := ShellWriteTargets(nested); err != nil {
		t.Fatalf("nested shells: %v", err)
	}
}

func FuzzShellWriteTargets(f *testing.F) {
	for _, c := range referenceVectors {
		f.Add(c.cmd)
	}
	for _, c := range ownVectors {
		f.Add(c.cmd)
	}
	for _, s := range []string{"((", "'x", "cd \"$A\" && rm b", "\x00", "rm \xff", "a=$((1+", "${x:-$(rm y)}", "coproc rm a", "[[ -f a ]] && rm a", "let x=1; declare -a y=(a b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		targets, err := ShellWriteTargets(cmd)
		if err != nil && !errors.Is(err, ErrShellUnparsable) && !errors.Is(err, ErrShellUnknownDir) && !errors.Is(err, ErrShellTooComplex) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if (errors.Is(err, ErrShellUnparsable) || errors.Is(err, ErrShellTooComplex)) && targets != nil {
			t.Fatalf("unparsable input gave targets %q", targets)
		}
		seen := map[string]bool{}
		for _, tg := range targets {
			if tg == "" || seen[tg] || discardSink(tg) {
				t.Fatalf("bad target %q in %q", tg, targets)
			}
			seen[tg] = true
			if utf8.ValidString(cmd) && !utf8.ValidString(tg) {
				t.Fatalf("target %q is not valid UTF-8 though the command is", tg)
			}
		}
	})
}

// TestShellTooLargeIsNotRead: a command over MaxShellCommand is not parsed:
// no targets, ErrShellTooLarge, and it is never taken for a patch; one
// byte less is read as usual.
func TestShellTooLargeIsNotRead(t *testing.T) {
	fits := "echo " + strings.Repeat("a", MaxShellCommand-len("echo  > f")) + " > f"
	if len(fits) != MaxShellCommand {
		t.Fatalf("test command is %d bytes", len(fits))
	}
	if got, err := ShellWriteTargets(fits); err != nil || len(got) != 1 || got[0] != "f" {
		t.Fatalf("a command of exactly MaxShellCommand bytes: %v, %v", got, err)
	}
	over := fits + " "
	if got, err := ShellWriteTargets(over); !errors.Is(err, ErrShellTooLarge) || got != nil {
		t.Fatalf("a command one byte over: %v, %v; want no targets and ErrShellTooLarge", got, err)
	}
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+" + strings.Repeat("x", MaxShellCommand) + "\n*** End Patch\nEOF\n"
	if _, ok := ShellPatch(patch); ok {
		t.Fatal("a patch command over MaxShellCommand was parsed")
	}
}

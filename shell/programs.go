package shell

import (
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The table of programs. Each entry says what a program does by default
// (its effect and subtype), what its operands (the arguments that are not
// options) are — files read, files written, files deleted, hosts — which
// options take a value (so the value is not taken for an operand), which
// options raise the effect, and for programs with subcommands (git, npm,
// go, docker …) the same per subcommand. A program that is not in the table
// runs with effect execute_check and its operands are not looked at.
//
// To teach the analysis a program, add an entry to programTable; for one
// that needs more than the table can say (git, find, curl), a func in
// custom.
type program struct {
	effect  Effect
	subtype string
	// operands is what the non-option arguments are.
	operands role
	// valued lists the options that take the next argument as their
	// value ("-o -e --output").
	valued string
	// flags raise the effect when present: "--force" matches --force and
	// --force=…; a single letter "-f" also matches it among combined short
	// options (-rf, -fdx).
	flags []flagRule
	// sub maps a subcommand (the first operand) to its own entry; def is
	// the entry for a subcommand not in sub ("" for none given).
	sub map[string]*program
	def *program
	// custom analyses what the table cannot say; it runs after the
	// table's defaults are set.
	custom func(w *walker, st *Step, args []string)
}

// role is what a program's operands are.
type role int

const (
	opNone    role = iota
	opReads        // every operand is a file read
	opWrites       // every operand is a file written
	opDeletes      // every operand is a file deleted
	opCopy         // the last operand is written, the others read (cp, mv, ln)
	opFirstRW      // the first operand is not a file (a script, a mode); the rest are written (sed -i, chmod)
	opHosts        // operands are hosts or URLs
	opFirstRd      // the first operand is not a file (a pattern) unless -e or -f gives it (searchOperands); the rest are read (grep)
	opInOut        // the first operand is read, the second written (uniq IN OUT, xxd IN OUT)
)

type flagRule struct {
	flag    string
	effect  Effect
	subtype string
}

// matches reports whether the rule's flag is the option read: "--force"
// is also --force=…, a letter "-f" also one of a group (-rf, -fdx).
func (r flagRule) matches(a arg) bool { return a.is(r.flag) }

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// p builds an entry; the helpers below read better in the table.
func p(e Effect, subtype string, operands role) *program {
	return &program{effect: e, subtype: subtype, operands: operands}
}

func (pr *program) valuedOpts(opts string) *program { pr.valued = opts; return pr }

func (pr *program) flag(flag string, e Effect, subtype string) *program {
	pr.flags = append(pr.flags, flagRule{flag, e, subtype})
	return pr
}

func (pr *program) subs(def *program, m map[string]*program) *program {
	pr.sub, pr.def = m, def
	return pr
}

// with gives an entry the analyses the table cannot say, run in order.
func (pr *program) with(fs ...func(w *walker, st *Step, args []string)) *program {
	pr.custom = fs[0]
	if len(fs) > 1 {
		pr.custom = func(w *walker, st *Step, args []string) {
			for _, f := range fs {
				f(w, st, args)
			}
		}
	}
	return pr
}

// Shorthands for the table.
var (
	readOnly = func(sub string) *program { return p(ReadOnly, sub, opNone) }
	check    = func(sub string) *program { return p(ExecuteCheck, sub, opNone) }
	writes   = func(sub string) *program { return p(Write, sub, opNone) }
	install  = func() *program { return p(Write, SubtypeInstallDependency, opNone) }
	destroy  = func() *program { return p(Destructive, SubtypeDeleteFile, opNone) }
)

// programTable is built on first use: a package-level map would cost
// every process that links the package (the hook among them) its
// construction at init.
var (
	tableOnce sync.Once
	table     map[string]*program
)

func programTable() map[string]*program {
	tableOnce.Do(func() { table = buildTable() })
	return table
}

// buildTable builds programTable.
func buildTable() map[string]*program {
	t := map[string]*program{}
	set := func(pr *program, names ...string) {
		for _, n := range names {
			t[n] = pr
		}
	}
	// Reading and looking around. Each reader has its own options taking
	// a value: one list for all took a file for the value of an option
	// that has none (cat -n, wc -c, od -c, diff -c, uniq -c). Listed are
	// the options whose value is no file. One whose value is a file (less
	// -k, diff -X, file -m) is left to be read as an operand, and so is
	// one whose meaning differs between versions (column -n, more -n):
	// wrong the safe way, no file read is dropped.
	reads := func(valued string) *program { return p(ReadOnly, SubtypeReadFile, opReads).valuedOpts(valued) }
	set(reads(""), "cat", "more", "md5sum", "sha1sum", "sha256sum", "readlink", "rev", "wc")
	set(reads("-S --suffix"), "zcat", "gzcat", "xzcat", "bzcat", "zstdcat")
	t["head"] = reads("-n -c --lines --bytes")
	t["tail"] = reads("-n -c -s --lines --bytes --sleep-interval --pid")
	// less -o LOG and -O LOG copy what it shows into LOG; its key
	// bindings (-k, --lesskey-src) can set LESSOPEN, the command it runs
	// on each file.
	lessValued := "-b -h -j -p -P -t -x -y -z -# -o -O -k --buffers --max-back-scroll --jump-target --pattern --prompt " +
		"--tag --tabs --max-forw-scroll --window --shift --log-file --LOG-FILE --lesskey-file --lesskey-src"
	t["less"] = reads(lessValued).with(outputOption(lessValued, "-o", "-O", "--log-file", "--LOG-FILE"),
		configOption(lessValued, "-k", "--lesskey-file", "--lesskey-src"))
	t["bat"] = reads("-l --language -H --highlight-line -r --line-range -m --map-syntax --theme --style --tabs " +
		"--terminal-width --wrap --color --paging --italic-text --decorations --file-name --diff-context --pager")
	t["nl"] = reads("-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter --footer-numbering " +
		"--header-numbering --line-increment --join-blank-lines --number-format --number-separator " +
		"--starting-line-number --number-width")
	t["od"] = reads("-A -j -N -S -t --address-radix --skip-bytes --read-bytes --format")
	// xxd IN OUT and uniq IN OUT write OUT (xxd -r too: the bytes it
	// rebuilds).
	inOut := func(valued string) *program { return p(ReadOnly, SubtypeReadFile, opInOut).valuedOpts(valued) }
	t["xxd"] = inOut(wholeWords + "-c -g -l -n -o -s -R -cols -groupsize -len -name -offset -seek")
	t["hexdump"] = reads("-e -n -s --format --length --skip")
	t["strings"] = reads("-e -n -s -t -T --encoding --bytes --output-separator --radix --target")
	t["file"] = reads("-e -F -P --exclude --exclude-quiet --separator --parameter")
	t["stat"] = reads("-c --format --printf")
	t["cksum"] = reads("-a -l --algorithm --length")
	t["diff"] = reads("-C -D -F -I -L -S -U -W -x --ifdef --show-function-line --ignore-matching-lines " +
		"--label --starting-file --exclude --line-format --old-line-format --new-line-format " +
		"--unchanged-line-format --old-group-format --new-group-format --changed-group-format " +
		"--unchanged-group-format --horizon-lines --tabsize --width")
	t["cmp"] = reads("-i -n --ignore-initial --bytes")
	t["realpath"] = reads("--relative-to --relative-base")
	// jq's and yq's first operand is their program (jqArgs, yqArgs).
	t["jq"] = p(ReadOnly, SubtypeReadFile, opNone).valuedOpts(jqValued).with(jqArgs)
	t["yq"] = p(ReadOnly, SubtypeReadFile, opNone).valuedOpts(yqValued).with(yqArgs)
	t["column"] = reads("-c -s -o -E -H -N -R -T -W -l -r --output-width --separator --output-separator " +
		"--table-columns --table-columns-limit --table-name --table-order --table-right --table-truncate " +
		"--table-wrap --table-hide --table-noextreme --tree --tree-id --tree-parent")
	t["uniq"] = inOut("-f -s -w --skip-fields --skip-chars --check-chars")
	t["cut"] = reads("-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter")
	t["base64"] = reads("-w --wrap")
	t["comm"] = reads("--output-delimiter")
	t["paste"] = reads("-d --delimiters")
	t["fold"] = reads("-w --width")
	t["fmt"] = reads("-g -p -w --goal --prefix --width")
	t["tac"] = reads("-s --separator")
	t["expand"] = reads("-t --tabs")
	iconvValued := "-f -t -o --from-code --to-code --output"
	t["iconv"] = reads(iconvValued).with(outputOption(iconvValued, "-o", "--output"))
	// sort --compress-program runs a program on its temporary files.
	sortValued := "-k -t -S -T -o --key --field-separator --buffer-size --temporary-directory --output --parallel --batch-size --sort --compress-program"
	t["sort"] = reads(sortValued).with(outputOption(sortValued, "-o", "--output"), optionRuns(sortValued, "--compress-program"))
	// tr's operands are sets of characters; it reads its input only.
	t["tr"] = readOnly(SubtypeReadFile)
	set(p(ReadOnly, SubtypeListFiles, opReads), "ls", "ll", "tree", "du", "df", "exa", "eza", "pwd", "dirname", "basename")
	// A search that names no file searches the working directory: grep
	// with -r, rg, ag and ack unless their input is fed (searchDir).
	search := func(valued, recursive string) *program {
		return p(ReadOnly, SubtypeSearch, opFirstRd).valuedOpts(valued).with(searchDir(valued, recursive))
	}
	const grepValued = "-e -f -m -A -B -C --regexp --file --max-count --after-context " +
		"--before-context --context --include --exclude --exclude-dir -g -t --type --glob"
	set(search(grepValued, "-r -R --recursive --dereference-recursive"), "grep", "egrep", "fgrep")
	set(search(grepValued, ""), "ag", "ack", "git-grep")
	// rg -r is --replace, no recursion; --ignore-file FILE is read.
	const rgValued = "-A -B -C -d -e -E -f -g -j -m -M -r -t -T --after-context --before-context --context " +
		"--max-depth --regexp --encoding --file --glob --iglob --threads --max-count --max-columns --replace --type " +
		"--type-not --type-add --type-clear --engine --sort --sortr --color --colors --context-separator " +
		"--field-context-separator --field-match-separator --path-separator --pre --pre-glob --max-filesize " +
		"--dfa-size-limit --regex-size-limit --ignore-file --hostname-bin --hyperlink-format --generate"
	t["rg"] = p(ReadOnly, SubtypeSearch, opFirstRd).valuedOpts(rgValued).with(searchDir(rgValued, ""), inputOption(rgValued, "--ignore-file"),
		optionRuns(rgValued, "--pre", "--hostname-bin"))
	set(readOnly(SubtypeSearch), "which", "whereis", "type", "locate", "fd", "fzf", "whatis", "apropos", "help")
	// man runs the pager -P gives and the browser -H (--html) does, and
	// its configuration (-C) can name both.
	t["man"] = readOnly(SubtypeSearch).valuedOpts(manValued).
		with(optionRuns(manValued, "-P", "--pager"), manRuns, configOption(manValued, "-C", "--config-file"))
	set(readOnly(SubtypeRunCommand), "echo", "printf", "true", "false", ":", "test", "[", "cd", "pushd", "popd",
		"export", "unset", "set", "shopt", "read", "local", "declare", "typeset", "readonly", "exit", "return",
		"shift", "wait", "sleep", "date", "whoami", "id", "hostname", "uname", "env", "printenv", "ps", "top",
		"htop", "uptime", "free", "jobs", "history", "alias", "seq", "yes", "expr", "bc", "cal", "tput",
		"clear", "trap", "umask", "hash", "getconf", "nproc", "lsof", "groups", "tty", "lscpu", "lsblk",
		"mount", "break", "continue", "let", "stty", "locale", "tee", "awk", "gawk", "mawk", "sed")
	// tee, awk and sed are refined below.

	// Writing.
	set(p(Write, SubtypeModifyFile, opWrites).valuedOpts("-m --mode -t -d -r --reference"),
		"touch", "mkdir", "mkfifo", "mknod")
	set(p(Write, SubtypeModifyFile, opCopy).valuedOpts(copyValued).with(copyTarget), "cp", "ln", "rsync", "scp")
	t["install"] = p(Write, SubtypeModifyFile, opCopy).valuedOpts(installValued).with(installArgs)
	t["mv"] = p(Write, SubtypeModifyFile, opCopy).valuedOpts(copyValued).with(mvSources)
	// rsync's options whose value is a file it reads or writes
	// (--files-from, --exclude-from, --password-file, --log-file …) are
	// left to be read as operands.
	const scpValued = "-P -i -o -F -c -l -S -J -D -X"
	t["rsync"] = p(Write, SubtypeModifyFile, opCopy).valuedOpts(rsyncValued).
		flag("--delete", Destructive, SubtypeDeleteFile).flag("--remove-source-files", Destructive, SubtypeDeleteFile).
		with(remoteHosts(rsyncValued), rsyncRuns)
	// scp -S and -D name the ssh and the SFTP server it runs in turn.
	t["scp"] = p(Write, SubtypeModifyFile, opCopy).valuedOpts(scpValued).
		with(remoteHosts(scpValued), optionRuns(scpValued, "-S", "-D"), sshOptionRuns(scpValued), configOption(scpValued, "-F"))
	set(p(Write, SubtypeModifyFile, opFirstRW).valuedOpts("--reference"), "chmod", "chown", "chgrp", "setfacl", "chattr")
	t["tee"] = p(Write, SubtypeModifyFile, opWrites)
	t["sed"] = p(ReadOnly, SubtypeReadFile, opNone).with(sedCommand)
	t["perl"] = p(ExecuteCheck, SubtypeRunCommand, opNone).with(perlCommand)
	set(p(ReadOnly, SubtypeReadFile, opNone).with(awkCommand), "awk", "gawk", "mawk", "nawk", "busybox-awk")
	set(p(Write, SubtypeModifyFile, opNone).valuedOpts(tarValued).with(tarMode), "tar", "gtar", "bsdtar")
	// Archivers and compressors, each with its options: -d is unzip's
	// directory but gzip's, xz's and zstd's decompression, a flag
	// (gzip -cd f.gz); 7z's switches are words (-oDIR, -pPASS). unzip,
	// zip and 7z write an archive or what they extract and read what
	// they add (unzipArgs, zipArgs, sevenZip); a compressor replaces the
	// files it reads with what it makes of them (compressor).
	compress := func(valued, ext string, unpack, keeps bool) *program {
		return p(Write, SubtypeModifyFile, opReads).valuedOpts(valued).with(compressor(valued, ext, unpack, keeps))
	}
	t["unzip"] = p(Write, SubtypeModifyFile, opNone).valuedOpts(unzipValued).with(unzipArgs)
	// zip -T tests the archive with unzip, or with the command -TT gives.
	t["zip"] = p(Write, SubtypeModifyFile, opNone).valuedOpts(zipValued).
		with(zipArgs, outputOption(zipValued, "-lf", "--logfile-path"), optionRuns(zipValued, "-TT", "--unzip-command"))
	t["gzip"] = compress("-S --suffix", ".gz", false, false)
	t["gunzip"] = compress("-S --suffix", ".gz", true, false)
	const xzValued = "-S --suffix -T --threads -M --memlimit -F --format -C --check"
	t["xz"] = compress(xzValued, ".xz", false, false)
	t["unxz"] = compress(xzValued, ".xz", true, false)
	t["bzip2"] = compress("", ".bz2", false, false)
	t["bunzip2"] = compress("", ".bz2", true, false)
	// zstd keeps what it compresses unless --rm; -o FILE names its output,
	// -D FILE is a dictionary, read.
	const zstdValued = "-o -D -T -M -B --patch-from --output-dir-flat --output-dir-mirror --format --memory " +
		"--threads --block-size --stream-size --size-hint"
	t["zstd"] = p(Write, SubtypeModifyFile, opReads).valuedOpts(zstdValued).
		with(compressor(zstdValued, ".zst", false, true), inputOption(zstdValued, "-D", "--patch-from"))
	t["unzstd"] = compress(zstdValued, ".zst", true, true)
	set(p(Write, SubtypeModifyFile, opNone).valuedOpts(sevenZipValued).with(sevenZip), "7z", "7za", "7zz", "7zr")
	set(p(Write, SubtypeModifyFile, opNone), "patch", "git-apply", "systemctl", "service",
		"kill", "pkill", "killall", "useradd", "usermod", "passwd", "ssh-keygen", "ln", "update-alternatives",
		"npx", "bunx", "pnpx")
	t["ln"] = p(Write, SubtypeModifyFile, opCopy).valuedOpts(copyValued).with(copyTarget)
	// crontab FILE replaces the user's crontab with FILE (read); -r
	// removes it, as a package removal or docker rm destroys what is no
	// path of the command; -l only lists it.
	t["crontab"] = p(Write, SubtypeModifyFile, opNone).valuedOpts("-u").flag("-r", Destructive, SubtypeDeleteFile).with(crontab)
	set(check(SubtypeRunCommand), "npx", "bunx", "pnpx")
	// Editors read the files they open and may write them.
	set(p(Write, SubtypeModifyFile, opNone).with(editor(vimValued, "-R", "-M"), vimRuns), "vim", "vi", "vimdiff", "ex")
	t["nvim"] = p(Write, SubtypeModifyFile, opNone).with(editor(nvimValued, "-R", "-M"), vimRuns)
	t["view"] = p(ReadOnly, SubtypeReadFile, opNone).with(editor(vimValued), vimRuns)
	t["nano"] = p(Write, SubtypeModifyFile, opNone).with(editor("-C -f -J -o -Q -r -s -T -X -Y --backupdir --rcfile "+
		"--guidestripe --operatingdir --quotestr --fill --speller --tabsize --wordchars --syntax", "-v", "--view"))
	t["pico"] = p(Write, SubtypeModifyFile, opNone).with(editor("-o -Q -s", "-v"))
	t["emacs"] = p(Write, SubtypeModifyFile, opNone).with(editor(wholeWords + "-l --load -load -f --funcall -funcall --eval -eval " +
		"--execute -execute -L --directory -directory -t --terminal -terminal -d --display -display -u --user -user " +
		"--chdir -chdir -T --title -title --name -name -fn --font -font --script -script -bg -fg"))
	t["micro"] = p(Write, SubtypeModifyFile, opNone).with(editor(wholeWords + "-config-dir -startpos"))
	t["ed"] = p(Write, SubtypeModifyFile, opNone).with(editor("-p --prompt"))

	// Destroying.
	set(p(Destructive, SubtypeDeleteFile, opDeletes).valuedOpts("--interactive"), "rm", "unlink", "shred", "srm", "trash", "rmdir")
	t["rmdir"] = p(Write, SubtypeDeleteFile, opDeletes)
	t["truncate"] = p(Destructive, SubtypeDeleteFile, opWrites).valuedOpts("-s --size -r --reference")
	// What makes, wipes or partitions a file system destroys the device
	// (or image) it names, each program with its options: -F is
	// mkfs.vfat's FAT size but mkfs.ext4's force, a flag. A listing
	// (fdisk -l) reads the device. mkfs -t TYPE runs mkfs.TYPE (mkfsType);
	// a maker not listed is read with the options all share.
	device := func(valued, lists string, also ...func(*walker, *Step, []string)) *program {
		return p(Destructive, SubtypeDeleteFile, opNone).valuedOpts(valued).
			with(append([]func(*walker, *Step, []string){devices(valued, lists)}, also...)...)
	}
	// mke2fs -d DIR and mkfs.btrfs -r DIR copy DIR into the new file
	// system; -l FILE (and mkfs.fat -m FILE) are read; mke2fs -z FILE
	// saves what it overwrites, and sfdisk -O FILE.
	const e2fsValued = "-b -C -d -e -E -g -G -i -I -J -l -L -m -M -N -o -O -r -R -s -t -T -U -z"
	set(device(e2fsValued, "", inputOption(e2fsValued, "-d", "-l"), outputOption(e2fsValued, "-z")),
		"mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4")
	const fatValued = "-b -D -f -F -g -h -i -l -m -M -n -r -R -s -S -t --codepage --offset --variant"
	set(device(fatValued, "", inputOption(fatValued, "-l", "-m")), "mkfs.fat", "mkfs.vfat", "mkfs.msdos", "mkdosfs")
	t["mkfs.xfs"] = device("-b -c -d -i -l -L -m -n -p -r -s -t", "")
	const btrfsValued = "-A -b -d -l -L -m -n -O -r -R -s -t -U -u --alloc-start --byte-count --checksum --csum --data " +
		"--features --label --leafsize --metadata --nodesize --rootdir --runtime-features --sectorsize --uuid --device-uuid --subvol"
	t["mkfs.btrfs"] = device(btrfsValued, "", inputOption(btrfsValued, "-r", "--rootdir"))
	t["mkswap"] = device("-p -L -U -e -o -s --pagesize --label --uuid --endianness --offset --size", "")
	t["mkfs"] = p(Destructive, SubtypeDeleteFile, opNone).valuedOpts(mkfsValued).with(mkfsType)
	t["format"] = device(mkfsValued, "")
	t["fdisk"] = device("-b -C -H -o -S -t -w -W --sector-size --cylinders --heads --output --sectors --type --wipe --wipe-partitions",
		"-l --list -x --list-details -s --getsz")
	const sfdiskValued = "-N -o -O -u -w -W -X -Y --partno --output --backup-file --unit --wipe --wipe-partitions --label --label-nested"
	t["sfdisk"] = device(sfdiskValued, "-l --list -F --list-free -s --show-size -d --dump -J --json -g --show-geometry "+
		"-V --verify -T --list-types -n --no-act", outputOption(sfdiskValued, "-O", "--backup-file"))
	t["gdisk"] = device("", "-l")
	t["cfdisk"] = device("", "")
	t["sgdisk"] = p(Destructive, SubtypeDeleteFile, opNone).valuedOpts(sgdiskValued).
		with(sgdisk, outputOption(sgdiskValued, "-b", "--backup", "-R", "--replicate"), inputOption(sgdiskValued, "-l", "--load-backup"))
	t["parted"] = p(Destructive, SubtypeDeleteFile, opNone).valuedOpts(partedValued).with(parted)
	// wipefs only lists the signatures it finds unless -a or -o erases
	// them (wipefs).
	t["wipefs"] = p(Destructive, SubtypeDeleteFile, opNone).valuedOpts(wipefsValued).with(wipefs)
	t["blkdiscard"] = device("-o -l -p --offset --length --step", "")
	set(destroy(), "shutdown", "reboot", "halt", "poweroff", "init")
	t["dd"] = p(ReadOnly, SubtypeReadFile, opNone).with(ddOperands)

	// Encrypting and signing: gpg reads the files it encrypts, signs,
	// decrypts or imports and writes its output (gpgCommand); its
	// passphrase, recipients and options files are read, its logs
	// written. The agent, dirmngr and keyboxd it starts when it needs
	// them, and the photo viewer, run the program the option names,
	// whatever the command (optionRuns), or the one a configuration
	// given (--options, --homedir) names (configOption).
	set(p(Write, SubtypeRunCommand, opNone).valuedOpts(gpgValued).with(gpgCommand,
		inputOption(gpgValued, "--passphrase-file", "-f", "--recipient-file", "-F", "--hidden-recipient-file",
			"--options", "--command-file", "--keyring", "--secret-keyring", "--primary-keyring"),
		outputOption(gpgValued, "--status-file", "--logger-file", "--log-file", "--attribute-file"),
		optionRuns(gpgValued, "--agent-program", "--dirmngr-program", "--keyboxd-program", "--photo-viewer"),
		configOption(gpgValued, "--options", "--homedir")), "gpg", "gpg2")

	// openssl's options are words (-in, -inkey, -out): those naming a
	// file are read or written, -connect's host reached, the engines
	// and providers it loads run (opensslCommand).
	t["openssl"] = p(ReadOnly, SubtypeRunCommand, opNone).valuedOpts(opensslValued).with(opensslCommand)

	// Network.
	set(p(Network, SubtypeWebFetch, opHosts).valuedOpts(curlValued).
		flag("-O", Write, SubtypeWebFetch).flag("--remote-name", Write, SubtypeWebFetch).
		with(curlOutput, curlReads, curlHosts, configOption(curlValued, "-K", "--config")), "curl")
	// wget -o LOG and -a LOG write its messages into LOG; --use-askpass
	// runs a command; -e (--execute) runs a .wgetrc command, read as the
	// option it stands for (wgetExecute); --config's file can set any.
	t["wget"] = p(Write, SubtypeWebFetch, opHosts).valuedOpts(wgetValued).
		with(wgetExecute(wgetOutput, wgetReads, outputOption(wgetValued, "-o", "--output-file", "-a", "--append-output"),
			optionRuns(wgetValued, "--use-askpass")), configOption(wgetValued, "--config"))
	set(p(Network, SubtypeWebFetch, opHosts).valuedOpts("-c -i -W -w -s -t -p -q -l -b"),
		"dig", "nslookup", "host", "traceroute", "ftp", "whois", "http", "https", "xh", "httpie", "mosh")
	// sftp runs ssh as scp does (-S, -o, -F), or the SFTP server -D
	// names, and the commands of its batch file or standard input.
	t["sftp"] = p(Network, SubtypeWebFetch, opHosts).valuedOpts(sftpValued).
		with(optionRuns(sftpValued, "-S", "-D"), sshOptionRuns(sftpValued), configOption(sftpValued, "-F"), sftpBatch)
	// ping -q and -b are flags.
	set(p(Network, SubtypeWebFetch, opHosts).valuedOpts("-c -e -F -i -I -l -m -M -N -p -Q -s -S -t -T -w -W"), "ping", "ping6")
	// nc HOST PORT: a port is no host. The options are those that take a
	// value in every netcat (OpenBSD's, the traditional one, ncat, GNU's):
	// -d, a value in one and a flag in another, is read as a flag, so that
	// no host is taken for a value. -c is both: a command the traditional
	// nc and ncat run (ncValued), a flag in OpenBSD's nc (TLS), macOS's
	// (CRLF) and GNU netcat (--close) (ncFlagC). Which nc runs is not
	// known, so the arguments are read both ways and what either finds is
	// taken: -c's value is a command run, even when it is the host of the
	// other reading (a command too many, never one missed); the options
	// after a -c flag are read (-ce PROG runs PROG in GNU netcat); and the
	// host the flag reading finds is reached when a port follows it
	// (portHost). A proxy is a host reached: ncat's --proxy, OpenBSD nc's
	// -x (ncat's -x names a file: a host too many, never one missing). The
	// command nc runs for the remote end (-e, -c, --exec, --sh-exec, and
	// the Lua script of ncat's --lua-exec) is analysed (netExec); -o and ncat's --output and --hex-dump write what
	// passes.
	const ncValued = "-c -e -g -G -H -i -I -K -m -M -o -O -p -P -q -R -s -T -V -w -W -x -X -Z " +
		"--exec --sh-exec --lua-exec --proxy --proxy-type --proxy-auth --proxy-dns --output --hex-dump --source " +
		"--source-port --wait --idle-timeout --delay --max-conns --allow --allowfile --deny --denyfile " +
		"--ssl-cert --ssl-key --ssl-trustfile --ssl-ciphers --ssl-servername --ssl-alpn --ssl-crl"
	ncFlagC := strings.TrimPrefix(ncValued, "-c ")
	const ncListen = "-l --listen -U --unixsock"
	ncOutputs := []string{"-o", "--output", "--hex-dump"}
	ncInputs := []string{"--lua-exec", "--allowfile", "--denyfile", "--ssl-cert", "--ssl-key", "--ssl-trustfile", "--ssl-crl"}
	set(p(Network, SubtypeWebFetch, opNone).valuedOpts(ncValued).with(
		hostThenPorts(ncValued, "-x --proxy", ncListen), portHost(ncFlagC, ncListen), netExec(ncValued, ncFlagC),
		outputOption(ncValued, ncOutputs...), outputOption(ncFlagC, ncOutputs...),
		inputOption(ncValued, ncInputs...), inputOption(ncFlagC, ncInputs...)),
		"nc", "ncat", "netcat")
	// socat ADDRESS ADDRESS: hosts, files, and commands run for the other
	// address (socatAddresses); -lf, -L, -W, -r and -R write files.
	t["socat"] = p(Network, SubtypeWebFetch, opNone).valuedOpts(socatValued).
		with(socatAddresses, outputOption(socatValued, "-lf", "-L", "-W", "-r", "-R"))
	const telnetValued = "-b -e -k -l -n -X"
	t["telnet"] = p(Network, SubtypeWebFetch, opNone).valuedOpts(telnetValued).with(hostThenPorts(telnetValued, "", ""))
	t["ssh"] = p(Network, SubtypeRunCommand, opNone).with(sshRemote, sshOptionRuns(sshValued), configOption(sshValued, "-F"))

	// Checking and building.
	set(check(SubtypeRunTest), "pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox",
		"ctest", "karma", "ava", "tap", "bats", "gotestsum", "playwright", "cypress")
	set(check(SubtypeRunBuild).with(makeShell), "make", "gmake")
	set(check(SubtypeRunBuild), "cmake", "ninja", "bazel", "bazelisk", "gradle", "gradlew",
		"mvn", "msbuild", "tsc", "webpack", "vite", "esbuild", "rollup", "javac", "gcc", "g++", "cc", "clang",
		"rustc", "swiftc", "dotnet", "meson", "scons", "buck", "pants", "sbt", "lein")
	set(check(SubtypeRunLint), "eslint", "golangci-lint", "staticcheck", "flake8", "pylint", "mypy", "pyright",
		"ruff", "shellcheck", "hadolint", "tflint", "stylelint", "rubocop", "clippy-driver", "vet", "govulncheck",
		"markdownlint", "yamllint", "biome", "oxlint", "revive", "errcheck")
	set(p(Write, SubtypeFormatCode, opNone), "prettier", "black", "isort", "autopep8", "yapf", "rustfmt", "clang-format", "shfmt", "goimports", "gofumpt")
	t["gofmt"] = p(ReadOnly, SubtypeFormatCode, opReads).flag("-w", Write, SubtypeFormatCode)
	t["prettier"] = p(ReadOnly, SubtypeFormatCode, opNone).flag("--write", Write, SubtypeFormatCode).flag("-w", Write, SubtypeFormatCode)
	t["eslint"] = check(SubtypeRunLint).flag("--fix", Write, SubtypeFormatCode)
	t["ruff"] = check(SubtypeRunLint).flag("--fix", Write, SubtypeFormatCode).subs(nil, map[string]*program{
		"format": p(Write, SubtypeFormatCode, opNone), "check": check(SubtypeRunLint).flag("--fix", Write, SubtypeFormatCode)})
	t["shfmt"] = p(ReadOnly, SubtypeFormatCode, opNone).flag("-w", Write, SubtypeFormatCode)

	// Version control and package managers, by subcommand.
	t["git"] = p(ReadOnly, SubtypeGitOperation, opNone).with(gitCommand)
	npmLike := p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
		"install": install(), "i": install(), "add": install(), "ci": install(), "update": install(),
		"upgrade": install(), "up": install(), "remove": install(), "rm": install(), "uninstall": install(),
		"un": install(), "link": install(), "dedupe": install(), "prune": install(),
		"test": check(SubtypeRunTest), "t": check(SubtypeRunTest), "tst": check(SubtypeRunTest),
		"build": check(SubtypeRunBuild), "lint": check(SubtypeRunLint), "run": check(SubtypeRunCommand),
		"run-script": check(SubtypeRunCommand), "exec": check(SubtypeRunCommand), "x": check(SubtypeRunCommand),
		"publish": p(Network, SubtypeRunCommand, opNone), "list": readOnly(SubtypeRunCommand), "ls": readOnly(SubtypeRunCommand),
		"view": p(Network, SubtypeRunCommand, opNone), "outdated": p(Network, SubtypeRunCommand, opNone),
		"audit": p(Network, SubtypeRunLint, opNone), "init": writes(SubtypeModifyFile), "create": install(),
		"cache": writes(SubtypeRunCommand), "config": writes(SubtypeRunCommand), "set": writes(SubtypeRunCommand),
	}).with(npmRun, npmScriptShell, configOption("--userconfig --globalconfig", "--userconfig", "--globalconfig"))
	set(npmLike, "npm", "pnpm", "yarn", "bun")
	pipLike := p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
		"install": install(), "uninstall": install(), "download": install(), "list": readOnly(SubtypeRunCommand),
		"show": readOnly(SubtypeRunCommand), "freeze": readOnly(SubtypeRunCommand), "add": install(),
		"remove": install(), "sync": install(), "lock": install(), "run": check(SubtypeRunCommand),
		"pip": p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
			"install": install(), "uninstall": install(), "sync": install(), "compile": writes(SubtypeModifyFile)}),
	})
	set(pipLike, "pip", "pip3", "uv", "poetry", "pipenv", "conda", "mamba", "pipx")
	osPkg := p(ReadOnly, SubtypeRunCommand, opNone).subs(readOnly(SubtypeRunCommand), map[string]*program{
		"install": install(), "reinstall": install(), "upgrade": install(), "update": install(),
		"dist-upgrade": install(), "full-upgrade": install(), "add": install(), "tap": install(),
		"remove": destroy(), "purge": destroy(), "autoremove": destroy(), "uninstall": destroy(), "del": destroy(),
		"erase": destroy(), "rm": destroy(),
	})
	set(osPkg, "apt", "apt-get", "yum", "dnf", "apk", "brew", "pacman", "zypper", "port", "snap", "choco", "winget", "gem")
	t["go"] = p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
		"test": check(SubtypeRunTest), "build": check(SubtypeRunBuild), "vet": check(SubtypeRunLint),
		"run": check(SubtypeRunCommand), "install": install(), "get": install(), "fmt": p(Write, SubtypeFormatCode, opNone),
		"generate": writes(SubtypeRunBuild), "version": readOnly(SubtypeRunCommand), "env": readOnly(SubtypeRunCommand),
		"list": readOnly(SubtypeRunCommand), "doc": readOnly(SubtypeRunCommand),
		"mod": p(Write, SubtypeInstallDependency, opNone).subs(install(), map[string]*program{
			"graph": readOnly(SubtypeRunCommand), "why": readOnly(SubtypeRunCommand), "verify": p(Network, SubtypeRunCommand, opNone)}),
		"work": writes(SubtypeModifyFile), "clean": p(Destructive, SubtypeDeleteFile, opNone),
		"tool": check(SubtypeRunCommand),
	})
	t["cargo"] = p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
		"test": check(SubtypeRunTest), "nextest": check(SubtypeRunTest), "build": check(SubtypeRunBuild), "check": check(SubtypeRunBuild),
		"clippy": check(SubtypeRunLint), "fmt": p(Write, SubtypeFormatCode, opNone), "add": install(),
		"install": install(), "update": install(), "remove": install(), "clean": p(Destructive, SubtypeDeleteFile, opNone),
		"publish": p(Network, SubtypeRunCommand, opNone),
	})
	t["docker"] = p(ExecuteCheck, SubtypeRunCommand, opNone).subs(check(SubtypeRunCommand), map[string]*program{
		"build": check(SubtypeRunBuild), "ps": readOnly(SubtypeRunCommand), "images": readOnly(SubtypeRunCommand),
		"logs": readOnly(SubtypeRunCommand), "inspect": readOnly(SubtypeRunCommand), "pull": p(Network, SubtypeInstallDependency, opNone),
		"push": p(Network, SubtypeRunCommand, opNone), "rm": destroy(), "rmi": destroy(), "kill": writes(SubtypeRunCommand),
		"stop": writes(SubtypeRunCommand), "prune": destroy(),
		"system": check(SubtypeRunCommand).subs(check(SubtypeRunCommand), map[string]*program{"prune": destroy()}),
		"volume": check(SubtypeRunCommand).subs(check(SubtypeRunCommand), map[string]*program{"rm": destroy(), "prune": destroy()}),
		"image":  check(SubtypeRunCommand).subs(check(SubtypeRunCommand), map[string]*program{"rm": destroy(), "prune": destroy()}),
	})
	t["kubectl"] = p(Network, SubtypeRunCommand, opNone).subs(p(Network, SubtypeRunCommand, opNone), map[string]*program{
		"delete": destroy(), "apply": writes(SubtypeRunCommand), "create": writes(SubtypeRunCommand),
		"edit": writes(SubtypeRunCommand), "patch": writes(SubtypeRunCommand), "scale": writes(SubtypeRunCommand),
		"drain": destroy(), "replace": writes(SubtypeRunCommand),
	})
	// Clouds and forges: what deletes is destructive (of no local path:
	// Anywhere), what creates or changes is write, the rest reaches the
	// network.
	t["aws"] = p(Write, SubtypeRunCommand, opNone).with(awsCommand)
	t["gcloud"] = p(Write, SubtypeRunCommand, opNone).with(verbCommand)
	t["az"] = p(Write, SubtypeRunCommand, opNone).with(verbCommand)
	t["gh"] = p(Network, SubtypeRunCommand, opNone).with(ghCommand)
	t["glab"] = p(Network, SubtypeRunCommand, opNone).with(ghCommand)
	// Database clients run the SQL they are given: at least write,
	// destructive when it drops, truncates or deletes.
	t["psql"] = p(Write, SubtypeRunCommand, opNone).with(sqlClient("-c --command", "-f --file", "-d -U -h -p -v --set -o --output -P -L --dbname --username --host --port"))
	t["mysql"] = p(Write, SubtypeRunCommand, opNone).with(sqlClient("-e --execute", "", "-u -h -P -p -D --user --host --port --database -S --socket"))
	t["mariadb"] = t["mysql"]
	t["sqlite3"] = p(Write, SubtypeRunCommand, opNone).with(sqlite)
	t["terraform"] = check(SubtypeRunCommand).subs(check(SubtypeRunCommand), map[string]*program{
		"apply": writes(SubtypeRunCommand), "destroy": destroy(), "plan": check(SubtypeRunCommand), "init": install()})
	for _, n := range []string{"python", "python3", "python2", "node", "deno", "ruby", "php", "lua", "Rscript", "pwsh", "powershell", "osascript"} {
		t[n] = check(SubtypeRunCommand).with(interpreter("-c", "-e", "--eval", "-Command", "-p", "--print", "-r"))
	}
	t["python"].custom = pythonModule
	t["python3"].custom = pythonModule
	t["deno"] = check(SubtypeRunCommand).subs(check(SubtypeRunCommand), map[string]*program{
		"test": check(SubtypeRunTest), "lint": check(SubtypeRunLint), "fmt": p(Write, SubtypeFormatCode, opNone),
		"eval": p(Write, SubtypeRunCommand, opNone)})
	return t
}

// envAssign is a NAME=value of the environment a program is given; known
// says whether the value is known statically (else it holds the source
// text of what is not: $LIB).
type envAssign struct {
	name, val string
	known     bool
}

// envVar is a variable of the environment that makes a program run code
// the command does not show. use gives the step what the value makes the
// program do; programs are those that read the variable, nil for any:
// the dynamic loader reads LD_PRELOAD for every program, and which
// programs are scripts of an interpreter (shasum is perl, aws python),
// or start one, is not known.
type envVar struct {
	name     string
	programs []string
	use      func(w *walker, st *Step, name, val string, known bool)
}

// envTable: the variables of the environment that run code, read by
// environment. Four kinds:
//
//   - a command the program runs (GIT_SSH_COMMAND, PAGER, EDITOR) is
//     analysed as one an option names (optionRuns), and so is the shell
//     it runs its commands with (npm_config_script_shell) but a shell
//     named alone (envShell);
//   - a library or a script it loads (LD_PRELOAD, BASH_ENV, NODE_OPTIONS
//     --require, PERL5OPT -M, YARN_YARN_PATH, run in yarn's stead) is
//     code run from a file, as a script's: at least a check, the file
//     read, the worst when not known;
//   - directories it loads code from (LD_LIBRARY_PATH, PYTHONPATH) make it
//     run what they hold: at least a check, the directories read; the
//     inherited value ($PYTHONPATH) is no directory of the command;
//   - a configuration that can name the programs it runs or the files it
//     writes (GIT_CONFIG_GLOBAL, OPENSSL_CONF, GNUPGHOME, CURL_HOME,
//     WGETRC, PARALLEL_HOME, LESSKEY_SYSTEM, npm_config_userconfig,
//     YARN_RC_FILENAME; LESSKEY_CONTENT, a configuration's text; and
//     HOME or XDG_CONFIG_HOME where curl, wget, git, npm, less, gpg and
//     parallel find theirs: homeConfig) is a program not known,
//     as git -c include.path and gpg --homedir are (config); /dev/null
//     names none. git's settings given one by one
//     (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS) are read as git -c's.
//
// PATH holds the program run when a directory comes before the inherited
// ones (PATH=/tmp/x:$PATH ls runs /tmp/x/ls if there is one): the
// program is then one of that directory's files, at least a check, as a
// program not in the table; one named with a '/' and a builtin are not
// looked up. PYTHONSTARTUP and ENV are read by an interactive python or
// sh only, which the analysis cannot tell (a terminal): they count as
// loaded. Other variables (LANG, TZ, GIT_DIR, GOFLAGS) change nothing.
//
// It is built on first use, as programTable: its analyses walk commands,
// which read it.
func envTable() []envVar {
	envOnce.Do(func() { envVars = buildEnvTable() })
	return envVars
}

var (
	envOnce sync.Once
	envVars []envVar
)

func buildEnvTable() []envVar {
	return []envVar{
		{"LD_PRELOAD", nil, envLoads(pathList(": "))},
		{"LD_AUDIT", nil, envLoads(pathList(":"))},
		{"LD_LIBRARY_PATH", nil, envSearch},
		{"BASH_ENV", nil, envLoads(oneFile)},
		{"ENV", nil, envLoads(oneFile)},
		{"PYTHONSTARTUP", nil, envLoads(oneFile)},
		{"PYTHONPATH", nil, envSearch},
		{"PERL5OPT", nil, envLoads(switchCode("-M", "-m", "-d"))},
		{"PERL5LIB", nil, envSearch},
		{"RUBYOPT", nil, envLoads(switchCode("-r", "--require"))},
		{"RUBYLIB", nil, envSearch},
		{"NODE_OPTIONS", nil, envLoads(nodeOptions)},
		{"OPENSSL_CONF", nil, envConfig},
		{"OPENSSL_MODULES", nil, envSearch},
		{"PATH", nil, envPath},
		{"GIT_EXEC_PATH", []string{"git"}, envSearch},
		{"GIT_SSH_COMMAND", []string{"git"}, envRuns},
		{"GIT_SSH", []string{"git"}, envRuns},
		{"GIT_PROXY_COMMAND", []string{"git"}, envRuns},
		{"GIT_ASKPASS", []string{"git"}, envRuns},
		{"GIT_EXTERNAL_DIFF", []string{"git"}, envRuns},
		{"GIT_PAGER", []string{"git"}, envRuns},
		{"GIT_EDITOR", []string{"git"}, envRuns},
		{"GIT_SEQUENCE_EDITOR", []string{"git"}, envRuns},
		{"PAGER", []string{"git", "man", "psql", "mysql", "gh", "systemctl", "journalctl"}, envRuns},
		{"MANPAGER", []string{"man"}, envRuns},
		{"LESSOPEN", []string{"less"}, envLessOpen},
		{"LESSCLOSE", []string{"less"}, envLessOpen},
		{"LESSKEY", []string{"less"}, envConfig},
		{"LESSKEYIN", []string{"less"}, envConfig},
		{"LESSKEY_SYSTEM", []string{"less"}, envConfig},
		{"LESSKEYIN_SYSTEM", []string{"less"}, envConfig},
		{"LESSKEY_CONTENT", []string{"less"}, envConfigText},
		{"EDITOR", []string{"git", "crontab", "gh", "kubectl", "systemctl", "psql"}, envRuns},
		{"VISUAL", []string{"git", "crontab", "gh", "kubectl", "systemctl", "psql"}, envRuns},
		{"GIT_CONFIG_GLOBAL", []string{"git"}, envConfig},
		{"GIT_CONFIG_SYSTEM", []string{"git"}, envConfig},
		{"GIT_CONFIG", []string{"git"}, envConfig},
		{"GIT_CONFIG_PARAMETERS", []string{"git"}, gitEnvParameters},
		{"GIT_CONFIG_COUNT", []string{"git"}, gitEnvCount},
		{"GNUPGHOME", []string{"gpg", "gpg2"}, envConfig},
		{"CURL_HOME", []string{"curl"}, envStartupConfig},
		{"WGETRC", []string{"wget"}, envStartupConfig},
		{"PARALLEL_HOME", []string{"parallel"}, envConfig},
		homeConfig("HOME", homeFile{"curl", ".curlrc", ""}, homeFile{"wget", ".wgetrc", "WGETRC"},
			homeFile{"git", ".gitconfig", "GIT_CONFIG_GLOBAL"},
			homeFile{"npm", ".npmrc", npmUserconfig}, homeFile{"pnpm", ".npmrc", npmUserconfig},
			homeFile{"yarn", ".npmrc", npmUserconfig}, homeFile{"npx", ".npmrc", npmUserconfig}, homeFile{"less", ".lesskey", ""}, homeFile{"gpg", ".gnupg", "GNUPGHOME"},
			homeFile{"gpg2", ".gnupg", "GNUPGHOME"}, homeFile{"parallel", ".parallel/config", "PARALLEL_HOME"}),
		homeConfig("XDG_CONFIG_HOME", homeFile{"curl", "curlrc", ""}, homeFile{"git", "git/config", "GIT_CONFIG_GLOBAL"},
			homeFile{"pnpm", "pnpm/rc", ""}, homeFile{"less", "lesskey", ""}),
		{"npm_config_script_shell", []string{"npm", "pnpm", "yarn", "npx"}, envShell},
		{"NPM_CONFIG_SCRIPT_SHELL", []string{"npm", "pnpm", "yarn", "npx"}, envShell},
		{"npm_config_userconfig", []string{"npm", "pnpm", "yarn", "npx"}, envConfig},
		{"NPM_CONFIG_USERCONFIG", []string{"npm", "pnpm", "yarn", "npx"}, envConfig},
		{"npm_config_globalconfig", []string{"npm", "pnpm", "yarn", "npx"}, envConfig},
		{"NPM_CONFIG_GLOBALCONFIG", []string{"npm", "pnpm", "yarn", "npx"}, envConfig},
		{"YARN_RC_FILENAME", []string{"yarn"}, envConfig},
		{"YARN_YARN_PATH", []string{"yarn"}, envLoads(oneFile)},
	}
}

// environment gives a step what the variables of envTable its program is
// given make it do; arg0 is the program as the command names it. named
// reads only the variables whose entries name the program: GNU parallel
// is no step of its own (the commands it runs are), and the variables
// every program reads (LD_PRELOAD, PATH) are read for those.
func (w *walker) environment(st *Step, arg0 string, named bool) {
	if len(w.env) == 0 && len(w.assigned) == 0 {
		return
	}
	for _, v := range envTable() {
		if (v.programs != nil || named) && !slices.Contains(v.programs, st.Program) {
			continue
		}
		val, known, ok := w.envValue(v.name)
		if !ok || v.name == "PATH" && (strings.Contains(arg0, "/") || isBuiltin(st.Program)) {
			continue
		}
		if v.use(w, st, v.name, val, known); st.Dynamic {
			return
		}
	}
}

// envValue returns a variable of the environment the program being
// resolved is given: the last NAME=value before it (or env's), else one
// the command assigned earlier (assigned); ok is false when the command
// gives none.
func (w *walker) envValue(name string) (val string, known, ok bool) {
	for i := len(w.env) - 1; i >= 0; i-- {
		if w.env[i].name == name {
			return w.env[i].val, w.env[i].known, true
		}
	}
	if val, ok := w.assigned[name]; ok {
		_, known = w.vars[name]
		return val, known, true
	}
	return "", false, false
}

// envRuns: the value is a command the program runs, analysed as
// optionRuns analyses an option's; "" runs none. The command is analysed
// without the variable, which the program does not apply again to what
// it runs (GIT_PAGER='git log' git log pages once).
func envRuns(w *walker, st *Step, name, val string, known bool) {
	switch {
	case !known:
		dynamic(st, st.Program+" runs a command not known before run time ("+name+")")
	case strings.TrimSpace(val) != "":
		n := len(w.env)
		w.env = append(w.env, envAssign{name: name, known: true})
		w.script(val, []string{st.Program + " " + name})
		w.env = w.env[:n]
	}
}

// envShell: the value is the shell the program runs each of its
// commands with (npm's script-shell, make's SHELL=): a shell named alone
// runs them as the program does without it, and adds nothing; another
// value is a command, analysed as envRuns does.
func envShell(w *walker, st *Step, name, val string, known bool) {
	if known && isShell(path.Base(val)) {
		return
	}
	envRuns(w, st, name, val, known)
}

// envLessOpen: LESSOPEN and LESSCLOSE are commands less runs on each
// file it opens (%s its name), written after | or || (less reads what
// they write) and - (for its standard input too): the command, analysed
// as envRuns does.
func envLessOpen(w *walker, st *Step, name, val string, known bool) {
	cmd := strings.TrimLeft(strings.TrimSpace(val), "|")
	if len(cmd) < len(strings.TrimSpace(val)) {
		cmd = strings.TrimPrefix(cmd, "-")
	}
	envRuns(w, st, name, cmd, known)
}

// envLoads: the value names code the program loads, files says which:
// the files (none for a module found by name: PERL5OPT=-Mx) and whether
// it loads any. That code runs as a script's does: at least a check, the
// files read; a value not known loads code not known, the worst.
func envLoads(files func(val string) ([]string, bool)) func(w *walker, st *Step, name, val string, known bool) {
	return func(w *walker, st *Step, name, val string, known bool) {
		fs, code := files(val)
		switch {
		case !known && (code || val == ""):
			dynamic(st, name+" loads code not known before run time")
		case code:
			if st.Effect.Rank() < ExecuteCheck.Rank() {
				st.Effect, st.Why = ExecuteCheck, name+" loads code"
			}
			w.read(st, fs...)
		}
	}
}

// pathList splits a list of files on any of seps (LD_PRELOAD's colons
// and spaces).
func pathList(seps string) func(val string) ([]string, bool) {
	return func(val string) ([]string, bool) {
		fs := strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune(seps, r) })
		return fs, len(fs) > 0
	}
}

// oneFile is a value naming one file (BASH_ENV).
func oneFile(val string) ([]string, bool) {
	if val == "" {
		return nil, false
	}
	return []string{val}, true
}

// switchCode reads switches (PERL5OPT, RUBYOPT): those named, with their
// value attached or not, load a module found by name, no file of the
// command. A word not known ($OPTS) may be any of them.
func switchCode(names ...string) func(val string) ([]string, bool) {
	return func(val string) ([]string, bool) {
		for _, f := range strings.Fields(val) {
			if strings.HasPrefix(f, "$") || strings.HasPrefix(f, "`") {
				return nil, true
			}
			for _, n := range names {
				if strings.HasPrefix(f, n) {
					return nil, true
				}
			}
		}
		return nil, false
	}
}

// nodeOptions reads NODE_OPTIONS: --require (-r), --import and the
// loaders name modules node loads before the program, files read; a
// word not known ($OPTS) may be any of them.
func nodeOptions(val string) (files []string, code bool) {
	f := strings.Fields(val)
	for i := 0; i < len(f); i++ {
		a := f[i]
		if strings.HasPrefix(a, "$") || strings.HasPrefix(a, "`") {
			code = true
			continue
		}
		for _, n := range []string{"-r", "--require", "--import", "--loader", "--experimental-loader"} {
			switch {
			case a == n && i+1 < len(f):
				i++
				files, code = append(files, f[i]), true
			case strings.HasPrefix(a, n+"="):
				files, code = append(files, a[len(n)+1:]), true
			}
		}
	}
	return files, code
}

// envSearch: the value lists directories the program loads code from
// (libraries, modules), searched before its own: it runs what they hold,
// at least a check, and reads them. The inherited value ($PYTHONPATH,
// ${PYTHONPATH}) is none of the command's.
func envSearch(w *walker, st *Step, name, val string, known bool) {
	var dirs []string
	for _, d := range strings.Split(val, ":") {
		if d != "" && d != "$"+name && d != "${"+name+"}" {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 && (known || val != "") {
		return
	}
	if st.Effect.Rank() < ExecuteCheck.Rank() {
		st.Effect, st.Why = ExecuteCheck, name+" loads code from its directories"
	}
	w.read(st, dirs...)
}

// envPath: a PATH that puts a directory before the inherited ones
// ($PATH), or none of them, holds the program run: at least a check, as
// a program not in the table.
func envPath(w *walker, st *Step, name, val string, known bool) {
	first, _, _ := strings.Cut(val, ":")
	if known || first != "$PATH" && first != "${PATH}" {
		if st.Effect.Rank() < ExecuteCheck.Rank() {
			st.Effect, st.Why = ExecuteCheck, "PATH names where the program is looked for"
		}
	}
}

// envConfig: the value is a configuration, a file or a directory, that
// can name the programs the program runs (config).
func envConfig(w *walker, st *Step, name, val string, known bool) {
	w.config(st, val, name+"="+val, known)
}

// envConfigText: the value is the text of a configuration, not a file
// (less's LESSKEY_CONTENT, lesskey source whose #env section can set
// LESSOPEN): as a file given, it can name the programs the program
// runs; "" holds none.
func envConfigText(w *walker, st *Step, name, val string, known bool) {
	if !known || strings.TrimSpace(val) != "" {
		dynamic(st, st.Program+" reading a configuration, which can name code it runs or files it writes, from "+name)
	}
}

// envStartupConfig: CURL_HOME (the directory of curl's .curlrc) and
// WGETRC (wget's startup file) name the configuration the program reads
// before its options, as curl -K and wget --config do (envConfig), but
// when it is told to read none: curl -q (--disable) as its first
// argument, wget --no-config.
func envStartupConfig(w *walker, st *Step, name, val string, known bool) {
	if !noStartupConfig(st) {
		envConfig(w, st, name, val, known)
	}
}

// noStartupConfig reports whether the program is told to read no
// configuration at start-up: curl -q (--disable) as its first argument,
// wget --no-config.
func noStartupConfig(st *Step) bool {
	switch st.Program {
	case "curl":
		return len(st.Args) > 0 && (st.Args[0] == "-q" || st.Args[0] == "--disable")
	case "wget":
		return hasOpt(st.Args, wgetValued, "--no-config")
	}
	return false
}

// homeFile is the configuration a program reads in the directory a
// variable names (homeConfig): file, under it; unless, the variables
// (separated by blanks) that name the configuration instead, whose own
// entries read it.
type homeFile struct{ program, file, unless string }

// npmUserconfig: the variables that name npm's user configuration in
// ~/.npmrc's stead (npm reads its npm_config_ variables in either case).
const npmUserconfig = "npm_config_userconfig NPM_CONFIG_USERCONFIG"

// homeConfig is a variable naming the directory where programs find
// their configuration at start-up (HOME: curl's .curlrc, wget's .wgetrc,
// git's .gitconfig, npm's .npmrc (read by pnpm, yarn and npx too: its
// script-shell), less's .lesskey (its #env LESSOPEN), gpg's .gnupg
// (its agent program), GNU parallel's .parallel/config (its default
// options, --ssh); XDG_CONFIG_HOME: curl's curlrc, git's git/config,
// pnpm's pnpm/rc, less's lesskey).
// Given by the command, it is another configuration, which can name the
// programs run as CURL_HOME's does (config), but when the program is
// told to read none (noStartupConfig) or the variable unless is given.
// /dev/null names none; the inherited value ($HOME), and
// XDG_CONFIG_HOME=$HOME/.config, its default, are no other.
func homeConfig(name string, files ...homeFile) envVar {
	var programs []string
	for _, f := range files {
		programs = append(programs, f.program)
	}
	return envVar{name, programs, func(w *walker, st *Step, name, val string, known bool) {
		i := slices.IndexFunc(files, func(f homeFile) bool { return f.program == st.Program })
		switch {
		case i < 0, noStartupConfig(st):
			return
		case known && (val == "/dev/null" || val == ""):
			return
		case !known && (val == "$"+name || val == "${"+name+"}"):
			return
		case !known && name == "XDG_CONFIG_HOME" && (val == "$HOME/.config" || val == "${HOME}/.config"):
			return
		}
		for _, u := range strings.Fields(files[i].unless) {
			if _, _, ok := w.envValue(u); ok {
				return
			}
		}
		f := path.Join(val, files[i].file)
		w.config(st, f, f+" ("+name+"="+val+")", known)
	}}
}

// isBuiltin reports whether a program the table knows is a shell
// builtin, which runs without being looked up in PATH.
func isBuiltin(name string) bool {
	switch name {
	case "echo", "printf", "cd", "pwd", "true", "false", "test", "[", "read", "export", "set", "unset", "shift",
		"exit", "return", "type", "local", "declare", "readonly", "alias", "unalias", "wait", "kill", "ulimit",
		"umask", "trap", ":":
		return true
	}
	return false
}

// Options taking a value, shared by the table and the programs' funcs.
const (
	// makeValued: GNU make's options that take a value (not -j, -l, -O
	// and --debug, whose value is optional).
	makeValued = "-C -f -I -o -W -E --directory --file --makefile --include-dir --old-file --assume-old " +
		"--what-if --new-file --assume-new --eval"
	// vimValued: vim's options that take a value; -s too, but in Ex mode
	// (vimRuns).
	vimValued = "-c --cmd -S -t -T -u -U -i -w -W --servername --startuptime --log --listen"
	// nvimValued: nvim's, with -l and -ll, the Lua script run (vim's -l
	// is a flag).
	nvimValued = vimValued + " -l -ll"
	// rsyncValued: rsync's options that take a value.
	rsyncValued = "-e --rsh -f --filter --exclude --include -B --block-size -T --temp-dir -M --remote-option " +
		"-@ --modify-window --rsync-path --suffix --chmod --chown --usermap --groupmap --timeout --contimeout " +
		"--port --bwlimit --log-file-format --out-format --max-size --min-size --max-delete --sockopts " +
		"--checksum-choice --compress-choice --compress-level --skip-compress --info --debug --iconv " +
		"--stop-after --stop-at --address --protocol --outbuf"
	// sftpValued: sftp's options that take a value.
	sftpValued = "-B -b -c -D -F -i -J -l -o -P -R -S -s -X"
	// curlValued: every option of curl that takes a value (curl --help
	// all, and those of curl 8), so that none is taken for a URL.
	curlValued = "-A -b -c -C -d -D -e -E -F -H -K -m -o -P -Q -r -t -T -u -U -w -x -X -y -Y -z " +
		"--abstract-unix-socket --alt-svc --aws-sigv4 --cacert --capath --cert --cert-type --ciphers --config " +
		"--connect-timeout --connect-to --continue-at --cookie --cookie-jar --create-file-mode --crlfile --curves " +
		"--data --data-ascii --data-binary --data-raw --data-urlencode --delegation --dns-interface --dns-ipv4-addr " +
		"--dns-ipv6-addr --dns-servers --doh-url --dump-header --ech --egd-file --engine --etag-compare --etag-save " +
		"--expect100-timeout --form --form-string --ftp-account --ftp-alternative-to-user --ftp-method --ftp-port " +
		"--ftp-ssl-ccc-mode --happy-eyeballs-timeout-ms --haproxy-clientip --header --hostpubmd5 --hostpubsha256 " +
		"--hsts --interface --ip-tos --ipfs-gateway --json --keepalive-cnt --keepalive-time --key --key-type " +
		"--knownhosts --krb --libcurl --limit-rate --local-port --login-options --mail-auth --mail-from --mail-rcpt " +
		"--max-filesize --max-redirs --max-time --netrc-file --noproxy --oauth2-bearer --output --output-dir " +
		"--parallel-max --parallel-max-host --pass --pinnedpubkey --preproxy --proto --proto-default --proto-redir " +
		"--proxy --proxy-cacert --proxy-capath --proxy-cert --proxy-cert-type --proxy-ciphers --proxy-crlfile " +
		"--proxy-header --proxy-key --proxy-key-type --proxy-pass --proxy-pinnedpubkey --proxy-service-name " +
		"--proxy-tls13-ciphers --proxy-tlsauthtype --proxy-tlspassword --proxy-tlsuser --proxy-user --proxy1.0 " +
		"--pubkey --quote --random-file --range --rate --referer --request --request-target --resolve --retry " +
		"--retry-delay --retry-max-time --sasl-authzid --service-name --sigalgs --socks4 --socks4a --socks5 " +
		"--socks5-gssapi-service --socks5-hostname --speed-limit --speed-time --ssl-sessions --stderr " +
		"--telnet-option --tftp-blksize --time-cond --tls-max --tls13-ciphers --tlsauthtype --tlspassword --tlsuser " +
		"--trace --trace-ascii --trace-config --unix-socket --upload-file --upload-flags --url --url-query --user " +
		"--user-agent --variable --vlan-priority --write-out"
	wgetValued = "-O --output-document -P --directory-prefix -o --output-file -a --append-output -U --user-agent --header -t --tries -T --timeout " +
		"--post-data --post-file --body-data --body-file --method -i --input-file --config -e --execute --use-askpass"
	// tarValued: tar's options that take a value, the short ones also in
	// a group (-czf ARCHIVE). A letter that takes a value in one tar and
	// not in the other is not listed: GNU tar's -H FORMAT and -L LENGTH
	// are bsdtar's flags, whose group (-cLf A) would lose its archive;
	// bsdtar's -s PATTERN is GNU tar's flag.
	tarValued = "-b -C -f -F -g -I -K -N -T -V -X --file --directory --files-from --exclude --exclude-from " +
		"--blocking-factor --listed-incremental --format --starting-file --newer --after-date --newer-mtime --label " +
		"--tape-length --info-script --new-volume-script --use-compress-program --to-command --checkpoint-action " +
		"--rsh-command --rmt-command --owner --group --mode --mtime --transform --xform --suffix --record-size " +
		"--strip-components --index-file --volno-file --exclude-tag --exclude-tag-all --exclude-tag-under " +
		"--quoting-style --sort --pax-option --owner-map --group-map"
	// jq's --arg, --argjson, --slurpfile and --rawfile take two words
	// (jqArgs takes the second).
	jqValued = "-L --library-path --indent --arg --argjson --slurpfile --rawfile"
	yqValued = "-o --output-format -p --input-format -I --indent -f --front-matter -s --split-exp --split-exp-file " +
		"--from-file --expression --xml-attribute-prefix --xml-content-name --xml-proc-inst-prefix " +
		"--xml-directive-name --csv-separator --lua-prefix --lua-suffix --properties-separator --shell-key-separator"
	// copyValued: the options of cp, ln and mv that take a value (cp's
	// --sparse WHEN and --no-preserve LIST too).
	copyValued    = "-t --target-directory -S --suffix --sparse --no-preserve"
	installValued = copyValued + " -m --mode -o --owner -g --group --strip-program"
	// mkfsValued: the options of mkfs itself (-t TYPE), and those every
	// maker gives a value (the label), read as words: the options of a
	// maker not in the table are not known, and a value not listed is
	// taken for one more device, never a device for a value.
	mkfsValued = wholeWords + "-t --type -L --label"
	// sgdisk -b FILE saves the partition table, -l FILE loads one, -R
	// DEVICE copies it onto DEVICE.
	sgdiskValued = "-a -A -b -c -d -h -i -j -l -m -n -N -r -R -t -T -u -U --set-alignment --attributes --backup " +
		"--change-name --delete --hybrid --info --adjust-main-table --load-backup --gpttombr --new --largest-new " +
		"--transpose --replicate --typecode --transform-bsd --partition-guid --disk-guid"
	sgdiskShows = "-p --print -v --verify -i --info -O --print-mbr -L --list-types -D --display-alignment " +
		"-E --end-of-largest -f --first-in-largest -F --first-aligned-in-largest -a --set-alignment -b --backup"
	partedValued = "-a --align"
	// wipefsValued: wipefs's options that take a value (--lock's is
	// optional: only after '=').
	wipefsValued = "-o -O -t --offset --output --types"
	// openssl's options naming files it reads, files it writes, and its
	// other options that take a value: each a word of every openssl
	// command. One taking a value in a command and none in another
	// (-verify, -sign, -issuer, -crl, -startdate) is not listed, lest it
	// take the next option for its value (smime -verify -in F).
	opensslReads = "-in -inkey -key -cert -certfile -CAfile -CApath -CAstore -CA -CAkey -CAserial -signkey -config " +
		"-kfile -sigfile -signature -prverify -untrusted -trusted -CRLfile -peerkey -recip -signer -content -keyfile " +
		"-paramfile -dcert -dkey -chainCAfile -verifyCAfile -cert_chain -key2 -cert2 -sess_in -extfile -ss_cert " +
		"-spkac -revoke -reqin -respin -index -rsigner -rkey -rother -verify_other -sign_other -dhparam -early_data " +
		"-chain -xkey -xcert -xchain -psk_session -genconf"
	opensslWrites = "-out -keyout -certsout -sess_out -writerand -outdir -msgfile -keylogfile -reqout -respout -dataout"
	opensslValued = wholeWords + opensslReads + " " + opensslWrites + " -passin -passout -pass -rand -newkey " +
		"-connect -proxy -url -host -inform -outform -keyform -certform -CAform -CAkeyform -subj -days -pkeyopt " +
		"-sigopt -vfyopt -md -cipher -ciphers -ciphersuites -port -servername -alpn -name -section -extensions " +
		"-reqexts -addext -set_serial -iv -iter -bufsize -macopt -mac -kdf -kdfopt -keyopt -digest -engine " +
		"-provider -provider-path -propquery -nameopt -certopt -reqopt -dateopt -checkend -ext -timeout -nmin " +
		"-ndays -accept -starttls -xmpphost -purpose -verify_depth -verify_hostname -verify_email -verify_ip " +
		"-auth_level -attime -policy -keylen -curves -groups -sigalgs -client_sigalgs -psk -psk_identity " +
		"-srpuser -srppass -nextprotoneg -rsigopt -keygen_engine -ssl_client_engine -pre -post"
	// opensslOperands: the commands whose operands are files read (a
	// digest's, verify's certificates); rehash's are directories it
	// writes.
	opensslOperands = "dgst verify storeutl ca md4 md5 mdc2 rmd160 ripemd ripemd160 sha1 sha224 sha256 sha384 " +
		"sha512 sha512-224 sha512-256 sha3-224 sha3-256 sha3-384 sha3-512 shake128 shake256 sm3 blake2b512 blake2s256"
	// gpgValued: gpg's options that take a value.
	gpgValued = "-o --output -r --recipient -R --hidden-recipient -u --local-user -f --recipient-file -F " +
		"--hidden-recipient-file -z --compress-level --bzip2-compress-level --homedir --default-key --default-recipient " +
		"--encrypt-to --hidden-encrypt-to --passphrase --passphrase-file --passphrase-fd --passphrase-repeat " +
		"--pinentry-mode --cipher-algo --digest-algo --compress-algo --cert-digest-algo --s2k-cipher-algo " +
		"--s2k-digest-algo --s2k-mode --s2k-count --keyserver --keyserver-options --keyring --secret-keyring " +
		"--primary-keyring --trustdb-name --trust-model --options --status-fd --status-file --logger-fd --logger-file " +
		"--log-file --attribute-fd --attribute-file --command-fd --command-file --set-filename --comment " +
		"--set-notation --sig-notation --cert-notation --set-policy-url --sig-policy-url --cert-policy-url " +
		"--sig-keyserver-url --default-cert-level --min-cert-level --max-output --list-options --verify-options " +
		"--export-options --import-options --import-filter --export-filter --auto-key-locate --keyid-format " +
		"--compliance --weak-digest --faked-system-time --agent-program --dirmngr-program --default-new-key-algo " +
		"--personal-cipher-preferences --personal-digest-preferences --personal-compress-preferences " +
		"--default-preference-list --completes-needed --marginals-needed --max-cert-depth --trusted-key --group " +
		"--ungroup --display-charset --charset --request-origin --default-sig-expire --default-cert-expire " +
		"--def-cipher-algo --def-digest-algo --def-compress-algo --tofu-default-policy --photo-viewer --exec-path " +
		"--keyboxd-program"
	// gpg's commands, by what they do (gpgCommand): on data, whose
	// operands are files; showing; reaching a keyserver; on keys, whose
	// operands are names (deleting them among them).
	gpgData = "-s --sign --clear-sign --clearsign -b --detach-sign -e --encrypt -c --symmetric -d --decrypt " +
		"--verify --encrypt-files --decrypt-files --verify-files --multifile --store --import --fast-import " +
		"--list-packets --show-keys --import-ownertrust --dearmor --enarmor --print-md --print-mds"
	gpgShows = "-k --list-keys --list-public-keys -K --list-secret-keys --list-sigs --check-sigs --fingerprint " +
		"--export --export-secret-keys --export-secret-subkeys --export-ssh-key --export-ownertrust --list-packets " +
		"--show-keys --verify --verify-files --print-md --print-mds --card-status --version --help -h --list-config " +
		"--dump-options --gen-random --gen-prime --dearmor --enarmor -d --decrypt --search-keys --send-keys --locate-keys"
	gpgNetwork = "--send-keys --search-keys --locate-keys --recv-keys --receive-keys --refresh-keys --fetch-keys " +
		"--locate-external-keys"
	gpgDeletes = "--delete-keys --delete-key --delete-secret-keys --delete-secret-key --delete-secret-and-public-keys " +
		"--delete-secret-and-public-key"
	gpgKeys = gpgDeletes + " --gen-key --generate-key --full-gen-key --full-generate-key --quick-gen-key " +
		"--quick-generate-key --quick-add-key --quick-add-uid --quick-revoke-uid --quick-revoke-sig --quick-set-expire " +
		"--quick-set-primary-uid --quick-sign-key --quick-lsign-key --edit-key --sign-key --lsign-key --passwd " +
		"--change-passphrase --gen-revoke --generate-revocation --desig-revoke --generate-designated-revocation " +
		"--update-trustdb --check-trustdb --card-edit --edit-card --change-pin --tofu-policy"
	unzipValued = "-d -x -P -O -I"
	// zipValued: zip's options are words (-sf, -tt, -ds), a letter's value
	// glued or the next word; -s is not listed, lest -sf be read as -s f.
	zipValued = wholeWords + "-b -n -t -tt -P -O -Z -ds -lf --temp-path --suffixes --from-date --before-date " +
		"--password --output-file --out --compression-method --dot-size --logfile-path --split-size -TT --unzip-command"
	// manValued: man's options that take a value (man-db's).
	manValued = "-C -M -P -r -L -m -S -s -e -p -E -R --config-file --manpath --pager --prompt --locale --systems " +
		"--sections --extension --preprocessor --encoding --recode"
	// socatValued: socat's options are words (-lf, -lp), a letter's value
	// glued or the next word (-b8192, -t 5).
	socatValued = wholeWords + "-b -lf -lp -L -r -R -S -t -T -W"
	// sevenZipValued: 7z's switches are words, their value glued (-oDIR,
	// -pPASS, -tzip); -p and -w alone are switches of their own (ask for
	// the password, the temporary directory), -o alone an error.
	sevenZipValued = wholeWords + "-o"
)

// argKnown reports whether argument i of the program being applied is
// known statically.
func (w *walker) argKnown(i int) bool { return i >= 0 && i < len(w.known) && w.known[i] }

// lookup returns the table entry of a program, nil when unknown; a
// maker of file systems not in the table (mkfs.f2fs) is mkfs's.
func lookup(name string) *program {
	t := programTable()
	if pr := t[name]; pr != nil || !strings.HasPrefix(name, "mkfs.") {
		return pr
	}
	return t["mkfs"]
}

// resolve fills a step from a command's words: the program through its
// wrappers, then the table.
func (w *walker) resolve(st *Step, args []string, known []bool, in *input) {
	defer func(n int) { w.env = w.env[:n] }(len(w.env)) // env A=1's
	// rooted: a chroot into another root wraps the command, whose paths
	// name files under that root, not the ones they name here.
	rooted := false
	for len(args) > 0 {
		if !known[0] {
			st.Program, st.Args = "", args
			dynamic(st, "program not known before run time: "+args[0])
			return
		}
		name := path.Base(args[0])
		if name == "parallel" {
			var ok bool
			if args, known, ok = w.parallelEnv(st, args, known); !ok {
				return
			}
			n := wrapped(name, args)
			hosts, local, ok := w.parallelLogins(st, args, known, n)
			if !ok {
				st.Program, st.Args = "parallel", args[1:]
				return
			}
			if len(hosts) > 0 {
				// The command's program fills the step anew: what the
				// copies do is added after it, as the hosts are.
				effect := Network
				if w.parallelTransfers(st, args, n) {
					effect = Write
				}
				defer func() { st.Hosts, st.Effect = appendNew(st.Hosts, hosts...), Max(st.Effect, effect) }()
				if !local {
					// On the remote hosts only: paths are not the
					// working directory's, as ssh HOST CMD's.
					defer func(dir string) { w.dir = dir }(w.dir)
					w.dir = ""
				}
			}
			cmd, ck, ok := w.parallelCommand(st, args, known, n)
			if len(hosts) > 0 && local && !st.Dynamic {
				// Here and on the remote hosts: the command is read
				// as each runs it.
				if ok {
					w.remoteScript(cmd[2], []string{"parallel -S " + hosts[0]})
				} else {
					dir := w.dir
					w.dir = ""
					w.parallelCommand(st, args, known, n)
					w.dir = dir
				}
			}
			if !ok {
				return
			}
			st.Via = append(st.Via, strings.Join(args[:max(n, 1)], " "))
			in = &input{program: "parallel"}
			args, known = cmd, ck
			continue
		}
		if n := wrapped(name, args); n > 0 && n < len(args) {
			st.Via = append(st.Via, strings.Join(args[:n], " "))
			if name == "xargs" {
				in = &input{program: "xargs"}
				repl := xargsReplace(args[:n])
				args = append(append([]string(nil), args[n:]...), "<xargs input>")
				known = append(append([]bool(nil), known[n:]...), true)
				if repl != "" {
					// -I{}: the input replaces {} in the command, its
					// name included (xargs -I{} sh -c {}): a word that
					// holds it is not known.
					args, known = args[:len(args)-1], known[:len(known)-1]
					for i, a := range args {
						if strings.Contains(a, repl) {
							args[i], known[i] = "<xargs input>", false
						}
					}
				}
				continue
			}
			if name == "watch" && !slices.Contains(args[1:n], "-x") && !slices.Contains(args[1:n], "--exec") {
				// watch runs its words joined, through sh -c, but with -x.
				args, known = []string{"sh", "-c", strings.Join(args[n:], " ")}, []bool{true, true, !slices.Contains(known[n:], false)}
				continue
			}
			if name == "env" || name == "sudo" || name == "doas" {
				w.envChdir(args[:n])
			}
			w.envAssigns(args[:n], known[:n])
			if name == "chroot" {
				root := args[n-1]
				rooted = rooted || !known[n-1] || path.Clean(root) != "/"
			}
			args, known = args[n:], known[n:]
			continue
		}
		st.Program, st.Args = name, args[1:]
		w.program(st, name, args[1:], known[1:], in)
		w.environment(st, args[0], false)
		if rooted {
			dynamic(st, "run in another root (chroot): its paths are not the ones it names")
		}
		return
	}
}

// dynamic marks a step whose program or code is not known before run
// time: it counts as the worst (add makes the analysis unknown).
func dynamic(st *Step, why string) {
	st.Effect, st.Subtype, st.Dynamic, st.Why = Destructive, SubtypeUnknown, true, why
}

// xargsReplace returns the replace string of xargs -I R / -i / --replace,
// "" without one.
func xargsReplace(args []string) string {
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-I" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-I") && len(a) > 2:
			return a[2:]
		case a == "-i" || a == "--replace":
			return "{}"
		case strings.HasPrefix(a, "-i") && len(a) > 2:
			return a[2:]
		case strings.HasPrefix(a, "--replace="):
			return a[len("--replace="):]
		}
	}
	return ""
}

// parallelInput stands for an input of GNU parallel in the shell text of
// its command: a word, "<parallel input>", as xargs's "<xargs input>".
const parallelInput = `\<parallel\ input\>`

// parallelCommand reads the words of GNU parallel (args, known aligned;
// args[:n] its options, n from wrapped, 0 when no word follows them):
// parallel [options] [command] (::: inputs | :::: files)…, the inputs
// read from the standard input when neither is given. It runs its
// command through a shell, each input put in place of a replacement
// string ({}, {.}, {/}, {1} …, -I's, as xargsReplace reads it) or added
// after it: it returns the words of that shell, sh -c TEXT, the inputs
// written parallelInput. With no command, each input is a command run,
// analysed when the ::: words give it, else a program not known; then
// ok is false and st is filled.
func (w *walker) parallelCommand(st *Step, args []string, known []bool, n int) (cmd []string, ck []bool, ok bool) {
	opts, rest, rk := args, []string(nil), []bool(nil)
	if n > 0 {
		opts, rest, rk = args[:n], args[n:], known[n:]
	}
	end := len(rest)
	for j, a := range rest {
		if a == ":::" || a == "::::" || a == ":::+" || a == "::::+" {
			end = j
			break
		}
	}
	if end == 0 {
		st.Program, st.Args = "parallel", args[1:]
		if end == len(rest) || slices.Contains(rest, "::::") || slices.Contains(rest, "::::+") ||
			hasOpt(opts[1:], "", "-a", "--arg-file", "--pipe", "--pipepart") {
			dynamic(st, "parallel runs the commands of its input, not known before run time")
			return nil, nil, false
		}
		for j, a := range rest {
			switch {
			case a == ":::" || a == ":::+":
			case !rk[j]:
				dynamic(st, "parallel runs a command not known before run time")
				return nil, nil, false
			default:
				w.script(a, []string{"parallel :::"})
			}
		}
		return nil, nil, false
	}
	text := strings.Join(rest[:end], " ")
	if r := xargsReplace(opts); r != "" {
		text = strings.ReplaceAll(text, r, parallelInput)
	}
	text = parallelReplace(text)
	if !strings.Contains(text, parallelInput) {
		text += " " + parallelInput
	}
	return []string{"sh", "-c", text}, []bool{true, true, !slices.Contains(rk[:end], false)}, true
}

// parallelEnv puts before the words of GNU parallel (args, known
// aligned, args[0] the program) the options its environment gives it:
// --ssh PARALLEL_SSH, the ssh command it runs, then the words of
// PARALLEL, its default options, split as a shell splits them (as
// parallel does), so that they are read as the options written would
// be. ok is false when st was made dynamic: a value not known, or a
// PARALLEL that is no list of words (a ;).
func (w *walker) parallelEnv(st *Step, args []string, known []bool) (_ []string, _ []bool, ok bool) {
	var pre []string
	var pk []bool
	fail := func(why string) ([]string, []bool, bool) {
		st.Program, st.Args = "parallel", args[1:]
		dynamic(st, why)
		return nil, nil, false
	}
	// Its configuration (PARALLEL_HOME, HOME's .parallel/config) can
	// give any option.
	st.Program, st.Args = "parallel", args[1:]
	if w.environment(st, args[0], true); st.Dynamic {
		return nil, nil, false
	}
	if v, k, ok := w.envValue("PARALLEL_SSH"); ok {
		switch {
		case !k:
			return fail("parallel runs an ssh command not known before run time (PARALLEL_SSH)")
		case strings.TrimSpace(v) != "":
			pre, pk = append(pre, "--ssh", v), append(pk, true, true)
		}
	}
	if v, k, ok := w.envValue("PARALLEL"); ok {
		ws, wk, split := w.shellWords(v)
		switch {
		case !k:
			return fail("parallel's default options not known before run time (PARALLEL)")
		case !split:
			return fail("parallel's default options (PARALLEL) are not a list of words")
		}
		pre, pk = append(pre, ws...), append(pk, wk...)
	}
	if len(pre) == 0 {
		return args, known, true
	}
	return append(append([]string{args[0]}, pre...), args[1:]...), append(append([]bool{known[0]}, pk...), known[1:]...), true
}

// parallelLogins reads where GNU parallel runs its commands (args,
// known aligned; args[:n] its options, n from wrapped, 0 when no word
// follows them): -S (--sshlogin) LOGIN[,LOGIN…], each [N/]HOST, ":"
// this machine, or [N/]COMMAND … HOST, an ssh command run here
// (analysed); --slf (--sshloginfile) FILE and the login ".." read the
// logins from a file, which can name commands (config); --ssh COMMAND
// is the ssh it runs, analysed. hosts are the remote hosts, local
// whether the commands run here too (as without -S); ok is false when
// st was made dynamic.
func (w *walker) parallelLogins(st *Step, args []string, known []bool, n int) (hosts []string, local, ok bool) {
	opts := args[1:]
	if n > 0 {
		opts = args[1:n]
	}
	valued, _, _, _ := wrapperSpec("parallel")
	remote := false
	r := argReader{args: opts, valued: valued}
	for a, more := r.next(); more; a, more = r.next() {
		vk := w.argKnownIn(known, a.valueAt()+1)
		switch {
		case !a.hasVal:
		case a.is("--ssh"):
			if !vk {
				dynamic(st, "parallel --ssh runs a command not known before run time")
				return nil, false, false
			}
			w.script(a.val, []string{"parallel --ssh"})
		case a.is("--slf") || a.is("--sshloginfile"):
			remote = true
			if w.config(st, a.val, "--sshloginfile "+a.val, vk) {
				return nil, false, false
			}
		case a.is("-S") || a.is("--sshlogin"):
			if !vk {
				dynamic(st, "parallel runs its commands on ssh logins not known before run time")
				return nil, false, false
			}
			for _, l := range strings.Split(a.val, ",") {
				l = strings.TrimSpace(l)
				if j := strings.IndexByte(l, '/'); j > 0 && strings.Trim(l[:j], "0123456789") == "" {
					l = l[j+1:] // N/: the number of jobs on the host
				}
				switch f := strings.Fields(l); {
				case len(f) == 0:
				case l == ":":
					local = true
				case l == "..":
					dynamic(st, "parallel reads its ssh logins, which can name commands, from ~/.parallel/sshloginfile")
					return nil, false, false
				case len(f) > 1:
					remote = true
					w.script(l, []string{"parallel -S"})
					hosts = appendNew(hosts, hostOf(f[len(f)-1]))
				default:
					remote = true
					hosts = appendNew(hosts, hostOf(l))
				}
			}
		}
	}
	return hosts, local || !remote, true
}

// parallelTransfers reads the files GNU parallel (args; args[:n] its
// options, n from wrapped, 0 when no word follows them) copies between
// here and the remote hosts of its ssh logins, which the caller knows it
// has, as scp's are read: --transferfile (--tf) and --basefile (--bf)
// FILE send a file of here, read; --return FILE brings the hosts' file
// back here, written; --trc FILE is --transferfile {} --return FILE.
// The paths are this machine's, in the working directory; a replacement
// string in them is the input ("<parallel input>"). It reports whether
// a file is written.
func (w *walker) parallelTransfers(st *Step, args []string, n int) (writes bool) {
	written := len(st.Writes)
	opts := args[1:]
	if n > 0 {
		opts = args[1:n]
	}
	valued, _, _, _ := wrapperSpec("parallel")
	file := func(f string) string {
		return strings.ReplaceAll(parallelReplace(f), parallelInput, "<parallel input>")
	}
	r := argReader{args: opts, valued: valued}
	for a, more := r.next(); more; a, more = r.next() {
		switch {
		case !a.hasVal:
		case a.is("--transferfile") || a.is("--tf") || a.is("--basefile") || a.is("--bf"):
			w.read(st, file(a.val))
		case a.is("--return"):
			w.write(st, file(a.val))
		case a.is("--trc"):
			w.read(st, file("{}"))
			w.write(st, file(a.val))
		}
	}
	return len(st.Writes) > written
}

// parallelReplace writes parallelInput in place of parallel's
// replacement strings in text: {}, and {N}, {.}, {/}, {//}, {/.}, {#},
// {%} and their mixes (a number, then . / # %).
func parallelReplace(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			break
		}
		if strings.Trim(text[i+1:i+j], "0123456789./#%") == "" {
			b.WriteString(text[:i] + parallelInput)
		} else {
			b.WriteString(text[:i+1])
			j = 0
		}
		text = text[i+j+1:]
	}
	return b.String() + text
}

// envAssigns adds the NAME=value words of a wrapper that gives them (env,
// sudo; args, known aligned, args[0] the wrapper) to the environment of
// the command it runs, skipping the values of its options (sudo -u x).
func (w *walker) envAssigns(args []string, known []bool) {
	valued, _, assigns, _ := wrapperSpec(path.Base(args[0]))
	if !assigns {
		return
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.Contains(" "+valued+" ", " "+a+" "):
			i++
		case strings.HasPrefix(a, "-"):
		case isAssignWord(a):
			if name, val, ok := strings.Cut(a, "="); ok {
				w.env = append(w.env, envAssign{name: name, val: val, known: known[i]})
			}
		}
	}
}

// envChdir follows `env -C dir` / `sudo -D dir`.
func (w *walker) envChdir(args []string) {
	for i := 1; i+1 < len(args); i++ {
		if args[i] == "-C" || args[i] == "--chdir" || args[i] == "-D" || args[i] == "--chdir=" {
			w.dir = w.abs(args[i+1])
		}
	}
}

// wrapperSpec describes the words of a wrapper before the command it
// runs: options taking a value, operands (timeout's duration), and
// whether NAME=value words give the command's environment (env, sudo);
// ok is false when name is no wrapper.
func wrapperSpec(name string) (valued string, positional int, assigns, ok bool) {
	switch name {
	case "sudo":
		// sudo VAR=value cmd: cmd's environment, as env's.
		valued, assigns = "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type --other-user --close-from", true
	case "doas":
		// doas runs its first operand: VAR=value is no assignment.
		valued = "-u -C -a"
	case "env":
		valued, assigns = "-u -C -S --unset --chdir --split-string", true
	case "chroot":
		// The command runs inside the new root: its paths are written as
		// the command gives them.
		valued, positional = "--userspec --groups", 1
	case "busybox":
		// busybox APPLET args: the applet is the program (busybox sh -c
		// is a shell).
	case "fakeroot", "pkexec", "torsocks", "proxychains", "proxychains4", "unshare", "firejail", "nsenter":
		valued = "-l -s -i --lib --faked --user -f -t --target -S -G --setuid --setgid --wd"
	case "runuser":
		valued = "-u -g -G --user --group --supp-group"
	case "faketime":
		valued, positional = "-f", 1
	case "nice":
		valued = "-n --adjustment"
	case "ionice":
		valued = "-c -n -p -P -u --class --classdata"
	case "nohup", "setsid", "unbuffer", "caffeinate", "builtin", "command", "catchsegv", "exec", "time", "chronic":
		valued = "-f -o -a --format --output"
	case "stdbuf":
		valued = "-i -o -e --input --output --error"
	case "timeout":
		valued, positional = "-s -k --signal --kill-after", 1
	case "chrt", "taskset":
		positional = 1
	case "flock":
		valued, positional = "-w -E --timeout --conflict-exit-code", 1
	case "xargs":
		valued = "-I -i -n -L -l -P -d -s -a -E -e --max-args --max-lines --max-procs --delimiter --max-chars --arg-file --eof --replace --process-slot-var"
	case "parallel":
		// GNU parallel: what follows its options is read by
		// parallelCommand.
		valued = "-I -n -N -L -P -j -d -a -E -S -C --jobs --max-args --max-lines --max-procs --delimiter --arg-file " +
			"--eof --replace --sshlogin --slf --sshloginfile --colsep --results --res --joblog --tmpdir --tagstring " +
			"--tag-string --delay --timeout --retries --memfree --load --basefile --bf --return --workdir --wd --env " +
			"--halt --termseq --limit --block --blocksize --recstart --recend --header --transferfile --tf --trc " +
			"--ssh --sem-timeout --shebang-wrap"
	case "watch":
		valued = "-n -d --interval --differences"
	case "strace", "ltrace":
		valued = "-o -e -p -s -u -E"
	default:
		return "", 0, false, false
	}
	return valued, positional, assigns, true
}

// wrapped returns how many words of args belong to a wrapper that runs
// the command after them (sudo -u x, env A=1, nice -n 5, timeout 10,
// xargs -0), or 0 when args[0] is not a wrapper or names no command.
func wrapped(name string, args []string) int {
	valued, positional, assigns, ok := wrapperSpec(name)
	if !ok {
		return 0
	}
	runsCommand := false // runuser -u: a command, not a shell
	i := 1
	for i < len(args) {
		a := args[i]
		if name == "runuser" && (a == "-u" || a == "--user") {
			runsCommand = true // runuser -u user cmd: the command itself
		}
		switch {
		case a == "--" && assigns:
			// env -- A=1 cmd, sudo -- A=1 cmd: the assignments still
			// come before the command.
			for i++; i < len(args) && isAssignWord(args[i]); i++ {
			}
			if i == len(args) {
				return 0
			}
			return i
		case a == "--":
			return i + 1
		case name == "command" && (a == "-v" || a == "-V"):
			return 0 // a lookup, not a run
		case name == "env" && (a == "-S" || a == "--split-string") && i+1 < len(args):
			return 0 // handled as its own program: the string is split
		case name == "env" && a == "-":
			i++ // env - cmd: an empty environment
		case name == "runuser" && (a == "-c" || a == "--command" || a == "-l" || a == "--login"):
			return 0 // runuser -l user -c cmd: a shell, as su
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(" "+valued+" ", " "+a+" ") {
				i++
			} else if name == "nice" && len(a) > 1 && a[1] >= '0' && a[1] <= '9' {
				// nice -5
			}
			i++
		case assigns && isAssignWord(a):
			i++
		case positional > 0:
			positional--
			i++
		default:
			if name == "runuser" && !runsCommand {
				return 0 // runuser user -c cmd: a shell, as su
			}
			return i
		}
	}
	return 0
}

// isAssignWord reports whether a word of env or sudo is a NAME=value.
func isAssignWord(a string) bool { return strings.Contains(a, "=") && !strings.HasPrefix(a, "=") }

// isShell reports whether a program is a shell that runs a command string.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "hush", "fish", "su", "runuser", "script":
		return true
	}
	return false
}

// program applies the table (and the special programs) to a step.
func (w *walker) program(st *Step, name string, args []string, known []bool, in *input) {
	switch {
	case isShell(name):
		w.shellProgram(st, name, args, known, in)
		return
	case name == "eval":
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
		for _, k := range known {
			if !k {
				dynamic(st, "eval of a value not known before run time")
				return
			}
		}
		w.script(strings.Join(args, " "), []string{"eval"})
		return
	case name == "source" || name == ".":
		st.Effect, st.Subtype = ExecuteCheck, SubtypeRunCommand
		if len(args) > 0 {
			st.Reads = appendNew(st.Reads, w.abs(args[0]))
		}
		return
	case name == "cd" || name == "pushd":
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
		w.chdir(args, known)
		return
	case name == "find":
		w.find(st, args, in)
		return
	case name == "env" && len(args) > 1 && (args[0] == "-S" || args[0] == "--split-string"):
		st.Via = append(st.Via, "env -S")
		w.script(strings.Join(args[1:], " "), []string{"env -S"})
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
		return
	case name == "chroot":
		// chroot DIR alone runs an interactive shell.
		dynamic(st, "an interactive shell")
		return
	case name == "watch":
		w.script(strings.Join(args, " "), []string{"watch"})
		st.Effect, st.Subtype = ReadOnly, SubtypeRunCommand
		return
	}
	pr := lookup(name)
	w.known, w.in = known, in
	if pr == nil {
		st.Effect, st.Subtype = ExecuteCheck, SubtypeRunCommand
		if strings.HasPrefix(name, "test") || strings.HasSuffix(name, "test") || strings.HasSuffix(name, "tests") {
			st.Subtype = SubtypeRunTest
		}
		return
	}
	w.apply(st, pr, args)
}

// apply applies one table entry, descending into subcommands.
func (w *walker) apply(st *Step, pr *program, args []string) {
	operands := splitOperands(args, pr.valued)
	if pr.sub != nil || pr.def != nil {
		if len(operands) > 0 {
			if sp, ok := pr.sub[operands[0]]; ok {
				w.apply(st, sp, args[indexOf(args, operands[0])+1:])
				if pr.custom != nil {
					pr.custom(w, st, args)
				}
				return
			}
			if pr.def != nil {
				w.apply(st, pr.def, args[indexOf(args, operands[0])+1:])
				if pr.custom != nil {
					pr.custom(w, st, args)
				}
				return
			}
		}
	}
	st.Effect, st.Subtype = pr.effect, pr.subtype
	if len(pr.flags) > 0 {
		r := argReader{args: args, valued: pr.valued}
		for a, ok := r.next(); ok; a, ok = r.next() {
			if a.opt == "" {
				continue
			}
			for _, f := range pr.flags {
				if f.matches(a) && f.effect.Rank() >= st.Effect.Rank() {
					st.Effect, st.Why = f.effect, args[a.at]
					if f.subtype != "" {
						st.Subtype = f.subtype
					}
				}
			}
		}
	}
	files := func(list []string, into *[]string) {
		for _, o := range list {
			if o != "" {
				*into = appendNew(*into, w.abs(o))
			}
		}
	}
	switch pr.operands {
	case opReads:
		files(operands, &st.Reads)
	case opWrites, opDeletes:
		files(operands, &st.Writes)
	case opCopy:
		if n := len(operands); n > 0 {
			files(operands[:n-1], &st.Reads)
			files(operands[n-1:], &st.Writes)
		}
	case opFirstRW:
		if len(operands) > 1 {
			files(operands[1:], &st.Writes)
		}
	case opFirstRd:
		// grep -f FILE reads FILE for its patterns.
		files(optValues(args, pr.valued, "-f", "--file"), &st.Reads)
		files(searchOperands(args, operands, pr.valued), &st.Reads)
	case opInOut:
		if len(operands) > 0 {
			files(operands[:1], &st.Reads)
		}
		if len(operands) > 1 {
			w.write(st, operands[1])
		}
	case opHosts:
		for _, o := range operands {
			st.Hosts = appendNew(st.Hosts, hostOf(o))
		}
	}
	if pr.custom != nil {
		pr.custom(w, st, args)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// splitOperands returns the arguments that are not options nor option
// values (read by an argReader over valued); everything after "--" is an
// operand.
func splitOperands(args []string, valued string) []string {
	var out []string
	r := argReader{args: args, valued: valued}
	for a, ok := r.next(); ok; a, ok = r.next() {
		if a.opt == "" {
			out = append(out, a.val)
		}
	}
	return out
}

// wholeWords begins the list of options taking a value of a program
// that does not read its short options as getopt does: each option is a
// word of its own, its value the next word or after '=' (-cols 16,
// -cols=16), its first letter's value attached at most (xxd -ps, -c16),
// or the list is for programs not known one by one (a maker of file
// systems not in the table), where a group would take the device for a
// value.
const wholeWords = "(whole-words) "

// argReader reads a program's arguments as getopt_long does: a long
// option takes its value after '=' or, when it takes one, in the next
// word (--output=v, --output v); in a group of short options (-abc) the
// letters are flags up to one that takes a value, which takes the rest
// of the group (-ofile, -sSo-) or, when none is left, the next word
// (-fsSLo file). A word that is itself a listed option (-o, -cols) is
// that option, and with wholeWords so is -cols=16. "--" ends the
// options: every word after it is an operand; "-" is an operand.
//
// Which options take a value is the program's list (valued, the table's
// form "-o --output"), with the options asked for (names) when
// namesTake. A letter not listed is read as a flag: with a list that is
// partial, a group's value may be read as an operand, never an operand
// as a value.
//
// With oldStyle, a first word of letters alone (tar czf A B) is a group
// too, whose letters that take a value take the next words in turn (f
// takes A).
type argReader struct {
	args      []string
	valued    string
	names     []string // options asked for: matched as whole words too
	namesTake bool     // names take a value
	oldStyle  bool
	i         int // the next word
	// letter is the index of the next letter of a group, in the word
	// args[group] (0: no group being read). The letters are read from
	// args, not kept apart, so that what next returns comes from args
	// alone.
	letter, group int
	old           bool    // the group is the old style's first word
	ended         bool    // after "--"
	set           *optSet // valued, read
}

// arg is an option or an operand an argReader read.
type arg struct {
	// opt is the option: "--output", a word ("-o", "-cols"), or one
	// letter of a group ("o", letter set); "" for an operand.
	opt    string
	letter bool
	val    string // the option's value, or the operand
	hasVal bool
	at     int // the index of the word in args (of the option's own word)
	// valAt is the index in args of the value when it is a word of its
	// own (the next word, or for an old style group's letter, the next in
	// turn): always after at, so 0 when the value is in the option's word.
	valAt int
}

// valueAt is the index in args of the word that holds the option's value.
func (a arg) valueAt() int {
	if a.valAt > 0 {
		return a.valAt
	}
	return a.at
}

// is reports whether the option is the one named: "-o" is also the
// letter o of a group.
func (a arg) is(name string) bool {
	if a.letter {
		return len(name) == 2 && name[0] == '-' && name[1] == a.opt[0]
	}
	return a.opt != "" && a.opt == name
}

// name returns the option as a list names it: "-o" for the letter o of
// a group.
func (a arg) name() string {
	if a.letter {
		return "-" + a.opt
	}
	return a.opt
}

// takes reports whether an option takes a value.
func (r *argReader) takes(a arg) bool {
	return r.valuedHas(a) || r.namesTake && r.named(a)
}

// valuedHas reports whether an option is in the list valued.
func (r *argReader) valuedHas(a arg) bool {
	if r.valued == "" {
		return false
	}
	if r.set == nil {
		r.set = optSetOf(r.valued)
	}
	return r.set.has(a)
}

// optSet is a list of options ("-o --output") read for lookups: the
// letters of its short options, and its other words.
type optSet struct {
	short [4]uint64
	words map[string]bool
}

func (s *optSet) has(a arg) bool {
	if c := a.opt[len(a.opt)-1]; a.letter || len(a.opt) == 2 && a.opt[0] == '-' {
		return s.short[c>>6]&(1<<(c&63)) != 0
	}
	return s.words[a.opt]
}

// optSets holds the lists read so far, each read once: a list is the
// code's own (the table's, its funcs'), never a command's, so there are
// a few dozen. Readers load the map; a new list is added to a copy.
var (
	optSets   atomic.Pointer[map[string]*optSet]
	optSetsMu sync.Mutex
)

// optSetOf returns a list of options read into an optSet.
func optSetOf(list string) *optSet {
	if m := optSets.Load(); m != nil {
		if s := (*m)[list]; s != nil {
			return s
		}
	}
	// The set keeps a copy: the caller's list is only looked up, so that
	// it, and the argReader holding it, stay where the caller has them.
	own := strings.Clone(list)
	s := &optSet{words: map[string]bool{}}
	for _, o := range strings.Fields(own) {
		if len(o) == 2 && o[0] == '-' && o[1] != '-' {
			s.short[o[1]>>6] |= 1 << (o[1] & 63)
		} else {
			s.words[o] = true
		}
	}
	optSetsMu.Lock()
	defer optSetsMu.Unlock()
	m := map[string]*optSet{own: s}
	if old := optSets.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	optSets.Store(&m)
	return s
}

// next returns the next option or operand; ok is false after the last.
func (r *argReader) next() (a arg, ok bool) {
	if r.letter > 0 {
		return r.short(), true
	}
	if r.i >= len(r.args) {
		return arg{}, false
	}
	w, at := r.args[r.i], r.i
	r.i++
	switch {
	case at == 0 && r.oldStyle && w != "" && isLetters(w):
		r.letter, r.group, r.old = 0, at, true
		return r.short(), true
	case r.ended || len(w) < 2 || w[0] != '-':
		return arg{val: w, at: at}, true
	case w == "--":
		r.ended = true
		return r.next()
	case w[1] == '-':
		name, v, eq := strings.Cut(w, "=")
		a = arg{opt: name, val: v, hasVal: eq, at: at}
		if !eq && r.takes(a) {
			r.value(&a)
		}
		return a, true
	}
	if a = (arg{opt: w, at: at}); r.valuedHas(a) || r.named(a) {
		if r.takes(a) {
			r.value(&a)
		}
		return a, true
	}
	if strings.HasPrefix(r.valued, wholeWords) {
		// -name=value, a word option's value after '=' (openssl 3, Go's
		// flag package).
		if name, v, eq := strings.Cut(w, "="); eq && len(name) > 2 && r.takes(arg{opt: name}) {
			return arg{opt: name, val: v, hasVal: true, at: at}, true
		}
		if l := (arg{opt: w[1:2], letter: true, at: at}); len(w) > 2 && r.takes(l) {
			l.val, l.hasVal = w[2:], true
			return l, true
		}
		return a, true
	}
	r.letter, r.group, r.old = 1, at, false
	return r.short(), true
}

// named reports whether a is one of the names asked for, as a word.
func (r *argReader) named(a arg) bool {
	for _, n := range r.names {
		if a.is(n) {
			return true
		}
	}
	return false
}

// short reads the next letter of a group.
func (r *argReader) short() arg {
	w, j := r.args[r.group], r.letter
	a := arg{opt: w[j : j+1], letter: true, at: r.group}
	if r.letter++; r.letter == len(w) {
		r.letter = 0
	}
	if r.takes(a) {
		if r.letter > 0 && !r.old {
			a.val, a.hasVal, r.letter = w[j+1:], true, 0
		} else {
			r.value(&a)
		}
	}
	return a
}

// value takes the next word for the option's value.
func (r *argReader) value(a *arg) {
	if r.i < len(r.args) {
		a.val, a.hasVal, a.valAt = r.args[r.i], true, r.i
		r.i++
	}
}

// skip takes the next word, a value an option takes besides its own
// (jq --arg NAME VALUE); ok is false when there is none.
func (r *argReader) skip() (string, bool) {
	if r.letter > 0 || r.i >= len(r.args) {
		return "", false
	}
	r.i++
	return r.args[r.i-1], true
}

// hostOf returns the host of a URL or of user@host:path, "" when the
// operand names none.
func hostOf(s string) string {
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
		return ""
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[at+1:]
	}
	if c := strings.IndexByte(s, ':'); c >= 0 {
		s = s[:c]
	}
	if c := strings.IndexByte(s, '/'); c >= 0 {
		s = s[:c]
	}
	if s == "" || strings.ContainsAny(s, "$*?{}") {
		return ""
	}
	return s
}

// chdir follows cd: a known directory becomes the working directory, an
// unknown one makes it unknown.
func (w *walker) chdir(args []string, known []bool) {
	var ops []string
	var kn []bool
	for i, a := range args {
		if a == "-P" || a == "-L" || a == "-e" || a == "-@" {
			continue
		}
		ops, kn = append(ops, a), append(kn, known[i])
	}
	switch {
	case len(ops) == 0:
		w.dir = "~"
	case !kn[0]:
		w.dir = ops[0]
	case ops[0] == "-":
		w.dir = ""
	default:
		w.dir = w.abs(ops[0])
	}
}

// shellProgram analyses bash/sh/…: -c runs its string, a script operand
// runs that file, no operand runs what comes on the standard input, and
// so do -s, whose operands are the arguments of what it runs, and a
// script that is the standard input (stdinPath).
func (w *walker) shellProgram(st *Step, name string, args []string, known []bool, in *input) {
	st.Effect, st.Subtype = ExecuteCheck, SubtypeRunCommand
	flagC := name == "su" || name == "runuser" // su -c, and su alone asks for a password
	flagS := false
args:
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && isLetters(a[1:])) || a == "--command":
			if i+1 >= len(args) {
				return
			}
			if !known[i+1] {
				dynamic(st, "a command string not known before run time")
				return
			}
			// The shell adds nothing to what its string runs.
			st.Effect = ReadOnly
			w.script(args[i+1], []string{name + " -c"})
			return
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || (flagC && (a == "-s" || a == "--shell" || a == "-g" || a == "-G" || a == "-u" || a == "--user")):
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			flagS = flagS || !flagC && a[0] == '-' && strings.Contains(a, "s") && isLetters(a[1:])
		default:
			if flagC {
				continue // su's user
			}
			if flagS || known[i] && stdinPath(a) {
				break args
			}
			if !known[i] {
				dynamic(st, "a script not known before run time")
				return
			}
			st.Reads = appendNew(st.Reads, w.abs(a))
			return
		}
	}
	if flagC {
		st.Effect, st.Why = Write, "a login shell as another user"
		return
	}
	switch {
	case in == nil:
		dynamic(st, "an interactive shell")
	case in.known:
		st.Effect = ReadOnly
		w.script(in.text, []string{name + " <<input"})
	default:
		dynamic(st, "a shell running "+in.what())
	}
}

// stdinPath reports whether a path names the standard input: a script
// so named is what the program is fed.
func stdinPath(p string) bool {
	return p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

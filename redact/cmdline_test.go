package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// commandLines are passwords given on the command lines of common tools,
// with what the redactor must make of them, and near misses that must stay
// as they are: a flag that is a port, a path or a switch to another command,
// a password that is prompted for or read from elsewhere.
func commandLines() []struct{ cmd, want string } {
	pw, sec := r("password"), r("secret")
	// Vault tokens are assembled at run time so that the repository holds
	// no string a secret scanner would flag.
	hvs := "hvs." + "CAESIXk93mzPq77" + strings.Repeat("AbCdEfGhIjKl", 7)
	legacy := "s." + "Xk93mzPq77" + "AbCdEfGhIjKlMn"
	// NTLM hashes: the LM hash of the empty password, and an NT hash.
	lm := strings.Repeat("aad3b435b51404ee", 2)
	nt := "8846f7eaee8fb117" + "ad06bdd830b7586c"
	// A user name longer than the braces of ${U:-…} are first read for.
	long := strings.Repeat("abcdefghij", 30)
	return []struct{ cmd, want string }{
		// redis-cli (and valkey-cli): -a, --pass, -u with a URL.
		{"redis-cli -a Xk93mzPq77 ping", "redis-cli -a " + pw + " ping"},
		{"redis-cli -h cache -p 6379 -a Xk93mzPq77 --no-auth-warning info", "redis-cli -h cache -p 6379 -a " + pw + " --no-auth-warning info"},
		{"docker exec -it cache redis-cli -a 'Xk93mzPq77' ping", "docker exec -it cache redis-cli -a '" + pw + "' ping"},
		{"valkey-cli -a Xk93mzPq77 ping", "valkey-cli -a " + pw + " ping"},
		{"redis-cli --pass Xk93mzPq77 ping", "redis-cli --pass " + pw + " ping"},
		{"redis-cli -u redis://default:Xk93mzPq77@cache:6379 ping", "redis-cli -u redis://default:" + r("url_password") + "@cache:6379 ping"},
		{"redis-cli -u redis://:Xk93mzPq77@cache:6379/0 ping", "redis-cli -u redis://:" + r("url_password") + "@cache:6379/0 ping"},
		{"redis-cli -h cache -p 6379 ping", ""},
		{"redis-cli -a $REDIS_PASSWORD ping", ""},
		{"git add -A; ls -a; cp -a src dst", ""},
		{"curl -sS -a -o out https://example.com", ""},

		// zip, unzip -P; 7z -p<password>.
		{"zip -e -P Xk93mzPq77 -r out.zip dir", "zip -e -P " + pw + " -r out.zip dir"},
		{"unzip -P Xk93mzPq77 out.zip -d dir", "unzip -P " + pw + " out.zip -d dir"},
		{"7z a -pXk93mzPq77 -mhe=on out.7z dir", "7z a -p" + pw + " -mhe=on out.7z dir"},
		{"7za x -pXk93mzPq77 out.7z", "7za x -p" + pw + " out.7z"},
		{"unzip -p out.zip a.txt | head", ""},
		{"7z a -p out.7z dir", ""},
		{"gzip -P 4 a", ""},
		{"scp -P 2222 a.txt host:/tmp", ""},
		{"docker run --name zip -P nginx", ""},

		// openssl: -pass, -passin, -passout pass:…, enc -k and -K.
		{"openssl rsa -in k.pem -passin pass:Xk93mzPq77 -out o.pem", "openssl rsa -in k.pem -passin pass:" + pw + " -out o.pem"},
		{"openssl pkcs12 -export -in c.pem -passout pass:Xk93mzPq77 -out c.p12", "openssl pkcs12 -export -in c.pem -passout pass:" + pw + " -out c.p12"},
		{"openssl enc -aes-256-cbc -pbkdf2 -pass pass:Xk93mzPq77 -in a -out b", "openssl enc -aes-256-cbc -pbkdf2 -pass pass:" + pw + " -in a -out b"},
		{"openssl enc -aes-256-cbc -k Xk93mzPq77 -in a -out b", "openssl enc -aes-256-cbc -k " + pw + " -in a -out b"},
		{"openssl enc -d -aes-128-cbc -K 00112233445566778899aabbccddeeff -iv 01 -in a", "openssl enc -d -aes-128-cbc -K " + sec + " -iv 01 -in a"},
		{"openssl rsa -in k.pem -passin env:KEY_PW -out o.pem", ""},
		{"openssl rsa -in k.pem -passin file:pw.txt -passout stdin", ""},
		{"openssl rsa -in k.pem -passin pass:$KEY_PW", ""},
		{"openssl req -new -key k.pem -out r.csr", ""},
		{"curl -k https://localhost:8443", ""},
		{"apksigner sign --ks k.jks --ks-pass pass:Xk93mzPq77 a.apk", "apksigner sign --ks k.jks --ks-pass pass:" + pw + " a.apk"},
		{"apksigner sign --ks k.jks --ks-pass env:KS_PW a.apk", ""},

		// curl -u and --user user:password; a user alone is prompted for.
		{"curl -u admin:Xk93mzPq77 https://example.com", "curl -u admin:" + pw + " https://example.com"},
		{"curl --user admin:Xk93mzPq77 https://example.com", "curl --user admin:" + pw + " https://example.com"},
		{"curl -u admin https://example.com", ""},

		// wget.
		{"wget --user=me --password=Xk93mzPq77 https://example.com/f", "wget --user=me --password=" + pw + " https://example.com/f"},
		{"wget --http-password=Xk93mzPq77 https://example.com/f", "wget --http-password=" + pw + " https://example.com/f"},
		{"wget --ftp-password=Xk93mzPq77 ftp://example.com/f", "wget --ftp-password=" + pw + " ftp://example.com/f"},
		{"wget --ask-password https://example.com/f", ""},

		// OpenLDAP's tools: -w; ldappasswd's -a and -s too.
		{"ldapsearch -x -H ldap://dc -D cn=admin,dc=x -w Xk93mzPq77 -b dc=x", "ldapsearch -x -H ldap://dc -D cn=admin,dc=x -w " + pw + " -b dc=x"},
		{"ldapmodify -x -D cn=admin,dc=x -wXk93mzPq77 -f a.ldif", "ldapmodify -x -D cn=admin,dc=x -w" + pw + " -f a.ldif"},
		{"ldappasswd -x -D cn=admin -w Xk93mzPq77 -a Old93mzPq77 -s New93mzPq77 uid=a", "ldappasswd -x -D cn=admin -w " + pw + " -a " + pw + " -s " + pw + " uid=a"},
		{"ldapsearch -x -W -b dc=x", ""},
		{"wc -w a.txt; grep -w word a.txt; curl -w '%{http_code}' https://example.com", ""},

		// htpasswd -b: the password is the last word.
		{"htpasswd -b .htpasswd alice Xk93mzPq77", "htpasswd -b .htpasswd alice " + pw},
		{"htpasswd -cbB /etc/nginx/.htpasswd alice Xk93mzPq77", "htpasswd -cbB /etc/nginx/.htpasswd alice " + pw},
		{"htpasswd -B -C 12 -b .htpasswd alice Xk93mzPq77", "htpasswd -B -C 12 -b .htpasswd alice " + pw},
		{"htpasswd -nb alice Xk93mzPq77 > .htpasswd", "htpasswd -nb alice " + pw + " > .htpasswd"},
		{"htpasswd -c .htpasswd alice", ""},
		{"htpasswd -n alice", ""},
		// A user with a blank in it, quoted or escaped, is one word; so
		// is a quoted user inside another command's quotes, or in JSON
		// text read as text, where its quotes are escaped.
		{`htpasswd -b .htpasswd "John Doe" Xk93mzPq77`, `htpasswd -b .htpasswd "John Doe" ` + pw},
		{`htpasswd -bc .htpasswd 'John Doe' Xk93mzPq77`, `htpasswd -bc .htpasswd 'John Doe' ` + pw},
		{`htpasswd -nb "John Doe" Xk93mzPq77`, `htpasswd -nb "John Doe" ` + pw},
		{`htpasswd -b .htpasswd John\ Doe Xk93mzPq77`, `htpasswd -b .htpasswd John\ Doe ` + pw},
		{`bash -c "htpasswd -b .htpasswd \"John Doe\" Xk93mzPq77"`, `bash -c "htpasswd -b .htpasswd \"John Doe\" ` + pw + `"`},
		{`{"cmd":"htpasswd -bc .htpasswd \"John Doe\" Xk93mzPq77"}`, `{"cmd":"htpasswd -bc .htpasswd \"John Doe\" ` + pw + `"}`},
		{`htpasswd -D .htpasswd "John Doe"; htpasswd -D .htpasswd alice`, ""},
		{`htpasswd -v .htpasswd "John Doe"`, ""},

		// Samba's tools: -U user%password.
		{"smbclient //srv/share -U alice%Xk93mzPq77 -c ls", "smbclient //srv/share -U alice%" + pw + " -c ls"},
		{`smbclient //srv/share -U 'CORP\alice%Xk93mzPq77' -c ls`, `smbclient //srv/share -U 'CORP\alice%` + pw + `' -c ls`},
		{"net ads join -U admin%Xk93mzPq77", "net ads join -U admin%" + pw},
		{"smbclient //srv/share -U alice -c ls", ""},
		{"smbclient -L //srv -U%", ""},

		// NetExec (nxc; formerly CrackMapExec, cme) and smbmap: -p.
		{"netexec smb 10.0.0.5 -u bob -p Xk93mzPq77 --shares", "netexec smb 10.0.0.5 -u bob -p " + pw + " --shares"},
		{"nxc winrm srv -u bob -p 'Xk93 mzPq77' -x whoami", "nxc winrm srv -u bob -p '" + pw + "' -x whoami"},
		{"crackmapexec smb srv -d CORP -u bob -p Xk93mzPq77", "crackmapexec smb srv -d CORP -u bob -p " + pw},
		{"cme smb srv -u bob -p Xk93mzPq77", "cme smb srv -u bob -p " + pw},
		{"proxychains -q nxc.exe smb srv -u bob -p Xk93mzPq77", "proxychains -q nxc.exe smb srv -u bob -p " + pw},
		{"smbmap -u bob -p Xk93mzPq77 -d CORP -H srv", "smbmap -u bob -p " + pw + " -d CORP -H srv"},
		{"smbmap -H srv -P 445 -u bob -p Xk93mzPq77", "smbmap -H srv -P 445 -u bob -p " + pw},
		{"smbmap -H srv -P 445", ""},
		{"netexec smb srv -u bob -p ''; nxc smb srv -u '' -p \"\"", ""},
		{"nxc smb srv -u bob -p $PASS --local-auth", ""},
		{"netexec smb srv -u users.txt -p -- ; cme smb srv -k --use-kcache", ""},
		{"nxc smb srv; ssh -p 22 bob@srv", ""},
		// NetExec tries every password after -p, up to the next option or
		// the end of the command.
		{"nxc smb 10.0.0.5 -u admin -p 'Summer2024!' 'Winter2024!'", "nxc smb 10.0.0.5 -u admin -p '" + pw + "' '" + pw + "'"},
		{"netexec smb srv -u bob alice -p Xk93mzPq77 Xk93mzPq78 \"Xk93 mzPq79\" --shares", "netexec smb srv -u bob alice -p " + pw + " " + pw + " \"" + pw + "\" --shares"},
		{"nxc smb srv -u bob -p Xk93mzPq77 Xk93mzPq78 2>&1 | tee out", "nxc smb srv -u bob -p " + pw + " " + pw + " 2>&1 | tee out"},
		{"cme smb srv -u bob -p Xk93mzPq77 > out.txt; ls srv", "cme smb srv -u bob -p " + pw + " > out.txt; ls srv"},
		// A variable or an empty value among them is passed over: the
		// words after it are passwords still.
		{"nxc smb srv -u bob -p $PASS Xk93mzPq77 --shares", "nxc smb srv -u bob -p $PASS " + pw + " --shares"},
		{`netexec smb srv -u bob -p '' "${OLD_PW}" Xk93mzPq77 "$NEW"`, `netexec smb srv -u bob -p '' "${OLD_PW}" ` + pw + ` "$NEW"`},
		{"cme smb srv -u bob -p Xk93mzPq77 $NEXT Xk93mzPq78", "cme smb srv -u bob -p " + pw + " $NEXT " + pw},
		{"nxc smb srv -u bob -p $PASS $OTHER --local-auth", ""},
		// So is a parameter with an operator (a default, a trim) or a
		// positional one; a default that holds a secret is redacted too.
		{"nxc smb srv -u bob -p ${PASS:-x} Xk93mzPq77 --shares", "nxc smb srv -u bob -p ${PASS:-x} " + pw + " --shares"},
		{`netexec smb srv -u bob -p Xk93mzPq77 "${OLD_PW-}" ${NEW#v} Xk93mzPq78`, `netexec smb srv -u bob -p ` + pw + ` "${OLD_PW-}" ${NEW#v} ` + pw},
		{"cme smb srv -u bob -p $1 ${2:?no password} Xk93mzPq77", "cme smb srv -u bob -p $1 ${2:?no password} " + pw},
		{"nxc smb srv -u admin -H ${NT:-none} " + nt + " --shares", "nxc smb srv -u admin -H ${NT:-none} " + pw + " --shares"},
		{"nxc smb srv -u bob -p ${T:-" + ghp + "} Xk93mzPq77", "nxc smb srv -u bob -p ${T:-" + r("github_token") + "} " + pw},
		{"nxc smb srv -u bob -p ${PASS:-$OLD} ${PASS%%x} --local-auth; nxc smb srv -p ${A}x} b", ""},
		// A parameter's braces hold one word, blanks and all, wherever
		// the words of a command are counted.
		{"htpasswd -b .htpasswd ${WEB_USER:-web admin} Xk93mzPq77", "htpasswd -b .htpasswd ${WEB_USER:-web admin} " + pw},
		{"net user ${U} Xk93mzPq77 /add", "net user ${U} " + pw + " /add"},
		{"nxc smb srv -u bob -p Xk93mzPq77 # the old one", "nxc smb srv -u bob -p " + pw + " # the old one"},
		{`{"output":"ok\nnxc smb srv -u bob -p Xk93mzPq77\nls -la srv"}`, `{"output":"ok\nnxc smb srv -u bob -p ` + pw + `\nls -la srv"}`},
		{"smbmap -u bob -p Xk93mzPq77 -d CORP -H srv && ls srv", "smbmap -u bob -p " + pw + " -d CORP -H srv && ls srv"},
		// Their -H and --hash: an NTLM hash, as LM:NT or NT alone, also
		// several. smbmap's -H is the host; its hash is a -p LM:NT.
		{"nxc smb 10.0.0.5 -u admin -H " + lm + ":" + nt + " --shares", "nxc smb 10.0.0.5 -u admin -H " + pw + " --shares"},
		{"nxc smb srv -u admin -H $NT " + nt + " --shares", "nxc smb srv -u admin -H $NT " + pw + " --shares"},
		{"nxc smb srv -u admin --hash=" + lm + ":" + nt + " --shares", "nxc smb srv -u admin --hash=" + pw + " --shares"},
		{"git hash-object --hash=sha256 a.txt; nxc smb srv --hash=hashes.txt", ""},
		// argparse reads -H=<hash>, -p=<password> and -p<password> as the
		// flag's value, the only one it then takes.
		{"nxc smb 10.0.0.5 -u admin -H=" + lm + ":" + nt, "nxc smb 10.0.0.5 -u admin -H=" + pw},
		{"netexec smb srv -u admin -H" + nt + " --shares", "netexec smb srv -u admin -H" + pw + " --shares"},
		{"nxc smb srv -u admin -H='" + nt + "' --local-auth", "nxc smb srv -u admin -H='" + pw + "' --local-auth"},
		{"nxc smb srv -u bob -p=Xk93mzPq77 --shares", "nxc smb srv -u bob -p=" + pw + " --shares"},
		{"cme smb -u bob -pXk93mzPq77 srv", "cme smb -u bob -p" + pw + " srv"},
		{"smbmap -u bob -p=Xk93mzPq77 -H srv", "smbmap -u bob -p=" + pw + " -H srv"},
		{"impacket-psexec -hashes=:" + nt + " corp/bob@srv", "impacket-psexec -hashes=" + pw + " corp/bob@srv"},
		{"nxc smb srv -u bob -p=$PASS -H=$NT; nxc smb srv -H=hashes.txt; curl -H=x -p=y srv", ""},
		{"netexec winrm srv -u admin -H " + nt + " -x whoami", "netexec winrm srv -u admin -H " + pw + " -x whoami"},
		{"crackmapexec smb srv -u admin --hash " + strings.ToUpper(nt), "crackmapexec smb srv -u admin --hash " + pw},
		{"nxc smb srv -u admin -H '" + lm + ":" + nt + "' " + nt + " --local-auth", "nxc smb srv -u admin -H '" + pw + "' " + pw + " --local-auth"},
		{"smbmap -H 10.0.0.5 -u admin -p " + lm + ":" + nt, "smbmap -H 10.0.0.5 -u admin -p " + pw},
		{"smbmap -H 10.0.0.5; smbmap -H " + nt[:8] + " -u admin", ""},
		{"nxc smb srv -u admin -H hashes.txt; nxc smb srv -u admin -H $NT --hash " + nt + "x", ""},
		{"curl -H 'Accept: x' -H \"X-Trace: " + nt + "\" https://example.com; ls -H " + nt, ""},
		{"curl -H 'Authorization: Bearer Xk93mzPq77' https://example.com", "curl -H 'Authorization: Bearer " + r("authorization") + "' https://example.com"},
		// Impacket's -hashes LM:NT (or :NT).
		{"impacket-psexec -hashes " + lm + ":" + nt + " corp/admin@10.0.0.5", "impacket-psexec -hashes " + pw + " corp/admin@10.0.0.5"},
		{"secretsdump.py -hashes :" + nt + " corp/admin@dc", "secretsdump.py -hashes " + pw + " corp/admin@dc"},
		{"python3 wmiexec.py -hashes '" + lm + ":" + nt + "' -shell-type powershell admin@h", "python3 wmiexec.py -hashes '" + pw + "' -shell-type powershell admin@h"},
		{"impacket-psexec -hashes $HASHES admin@h; secretsdump.py -hashes " + lm + ": admin@h", ""},

		// MongoDB's shells and tools: -p and --password; mongod's port is --port.
		{"mongosh -u admin -p Xk93mzPq77 --authenticationDatabase admin", "mongosh -u admin -p " + pw + " --authenticationDatabase admin"},
		{"mongodump -u admin -pXk93mzPq77 --db app", "mongodump -u admin -p" + pw + " --db app"},
		{"mongo --password Xk93mzPq77 app", "mongo --password " + pw + " app"},
		{"mongosh -u admin -p --authenticationDatabase admin", ""},
		{"mongod --port 27017 --dbpath /data", ""},
		{"docker run -d --name mongo -p 27017 mongo:7", ""},
		{"docker run -d --name mongo -p 27017:27017 mongo:7", ""},

		// psql's conninfo and URL.
		{`psql "host=db user=app password=Xk93mzPq77 dbname=app"`, `psql "host=db user=app password=` + pw + ` dbname=app"`},
		{`psql "postgresql://app:Xk93mzPq77@db:5432/app"`, `psql "postgresql://app:` + r("url_password") + `@db:5432/app"`},
		{"psql -h db -p 5432 -U app app", ""},

		// rabbitmqctl add_user, change_password.
		{"rabbitmqctl add_user alice Xk93mzPq77", "rabbitmqctl add_user alice " + pw},
		{"rabbitmqctl -n rabbit@mq change_password alice Xk93mzPq77", "rabbitmqctl -n rabbit@mq change_password alice " + pw},
		{"docker exec mq rabbitmqctl add_user alice 'Xk93 mzPq77'", "docker exec mq rabbitmqctl add_user alice '" + pw + "'"},
		{"rabbitmqctl add_user alice", ""},
		{"rabbitmqctl delete_user alice; rabbitmqctl list_users", ""},

		// Windows' net use and net user.
		{`net use Z: \\srv\share Xk93mzPq77 /user:CORP\alice /persistent:no`, `net use Z: \\srv\share ` + pw + ` /user:CORP\alice /persistent:no`},
		{`net use \\srv\share /user:alice Xk93mzPq77`, `net use \\srv\share /user:alice ` + pw},
		{"net user alice Xk93mzPq77 /add", "net user alice " + pw + " /add"},
		{`net use Z: \\srv\share * /user:alice`, ""},
		{"net use Z: /delete; net user alice /delete", ""},
		{"the net user count grew; net use of it too", ""},
		// Behind cmd /c (or /k) and PowerShell's -Command.
		{"cmd /c net user alice Xk93mzPq77 /add", "cmd /c net user alice " + pw + " /add"},
		{`cmd.exe /C "net use \\srv\share Xk93mzPq77 /user:alice"`, `cmd.exe /C "net use \\srv\share ` + pw + ` /user:alice"`},
		{`C:\Windows\System32\cmd.exe /Q /K net use Z: \\srv\share Xk93mzPq77 /user:alice`, `C:\Windows\System32\cmd.exe /Q /K net use Z: \\srv\share ` + pw + ` /user:alice`},
		{`powershell -NoProfile -Command "net user alice Xk93mzPq77 /add"`, `powershell -NoProfile -Command "net user alice ` + pw + ` /add"`},
		{"pwsh.exe -c net user alice Xk93mzPq77 /add", "pwsh.exe -c net user alice " + pw + " /add"},
		{`"C:\Program Files\PowerShell\7\pwsh.exe" -c net user alice Xk93mzPq77`, `"C:\Program Files\PowerShell\7\pwsh.exe" -c net user alice ` + pw},
		{"a.bat:3:cmd /c net user alice Xk93mzPq77 /add", "a.bat:3:cmd /c net user alice " + pw + " /add"},
		{"/mnt/c/Windows/System32/cmd.exe /c net user alice Xk93mzPq77 /add", "/mnt/c/Windows/System32/cmd.exe /c net user alice " + pw + " /add"},
		{`{"output":"ok\ncmd /c net user alice Xk93mzPq77 /add"}`, `{"output":"ok\ncmd /c net user alice ` + pw + ` /add"}`},
		{`cmd /c net user alice; cmd /c net use \\srv\share /delete; cmd /c net use Z: \\srv\share * /user:alice`, ""},
		{"git commit -c net user alice Xk93mzPq77; grep /c net user alice Xk93mzPq77", ""},
		// PowerShell's switches with a value before -Command.
		{"powershell -ExecutionPolicy Bypass -Command net user bob Xk93mzPq77 /add", "powershell -ExecutionPolicy Bypass -Command net user bob " + pw + " /add"},
		{"pwsh -NoProfile -NonInteractive -Command net user bob Xk93mzPq77 /add", "pwsh -NoProfile -NonInteractive -Command net user bob " + pw + " /add"},
		{`powershell.exe -nop -ep bypass -w hidden -c net use \\srv\share Xk93mzPq77 /user:bob`, `powershell.exe -nop -ep bypass -w hidden -c net use \\srv\share ` + pw + ` /user:bob`},
		{`pwsh -wd C:\tmp -Version 7 -Command net user bob Xk93mzPq77`, `pwsh -wd C:\tmp -Version 7 -Command net user bob ` + pw},
		{"POWERSHELL -EP Bypass -WindowStyle Hidden -ex x -COMMAND net user bob Xk93mzPq77", "POWERSHELL -EP Bypass -WindowStyle Hidden -ex x -COMMAND net user bob " + pw},
		{"powershell -Foo Bar -Command net user bob Xk93mzPq77; powershell -e Bypass -Command net user bob Xk93mzPq77", ""},
		{"tool -ExecutionPolicy Bypass -Command net user bob Xk93mzPq77; powershell -File a.ps1 -c net user bob Xk93mzPq77", ""},

		// keytool and jarsigner.
		{"keytool -genkeypair -alias a -keystore k.jks -storepass Xk93mzPq77 -keypass Xk93mzPq78", "keytool -genkeypair -alias a -keystore k.jks -storepass " + pw + " -keypass " + pw},
		{"keytool -importkeystore -srcstorepass Xk93mzPq77 -deststorepass Xk93mzPq78", "keytool -importkeystore -srcstorepass " + pw + " -deststorepass " + pw},
		{"keytool -list -keystore k.jks -storepass:env KS_PW", ""},

		// vault login TOKEN, when it reads as one.
		{"vault login " + hvs, "vault login " + sec},
		{"vault login " + legacy, "vault login " + sec},
		{"vault login -method=userpass username=alice password=Xk93mzPq77", "vault login -method=userpass username=alice password=" + pw},
		{"vault login -method=github", ""},
		{"vault login -", ""},
		{"vault login token_value_here", ""},
		{"vault kv get secret/app", ""},

		// A blank or punctuation escaped with a backslash is part of the
		// password's word, also where JSON text read as text doubles the
		// backslash; JSON text's own escapes (\n) end it.
		{`mysql -u root -pS3cret\ pass db`, "mysql -u root -p" + pw + " db"},
		{`nxc smb h -u a -p S3cret\ pass --shares`, "nxc smb h -u a -p " + pw + " --shares"},
		{`mysql -u root -pXk93\!mz\;Pq77 db`, "mysql -u root -p" + pw + " db"},
		{`curl -u admin:Xk93\ mzPq77 https://example.com`, "curl -u admin:" + pw + " https://example.com"},
		{`redis-cli -a Xk93\ mzPq77 ping`, "redis-cli -a " + pw + " ping"},
		{`DB_PASSWORD=Xk93\ mzPq77 ./run`, "DB_PASSWORD=" + pw + " ./run"},
		{`htpasswd -b .htpasswd John\ Doe Xk93\ mzPq77`, `htpasswd -b .htpasswd John\ Doe ` + pw},
		{`net user alice Xk93\ mzPq77 /add`, "net user alice " + pw + " /add"},
		{`{"cmd":"mysql -u root -pXk93\\ mzPq77 db"}`, `{"cmd":"mysql -u root -p` + pw + ` db"}`},
		{`{"output":"ok\nmysql -u root -pXk93mzPq77\nls -la"}`, `{"output":"ok\nmysql -u root -p` + pw + `\nls -la"}`},
		{`net use \\srv\temp Xk93mzPq77 /user:alice`, `net use \\srv\temp ` + pw + ` /user:alice`},
		{`cp a\ b c\ d; mysql -u root -p\ db`, ""},

		// A parameter's default (${PASS:-…}, ${PASS-…}, ${PASS:=…},
		// ${PASS=…}) and alternate value (${PASS:+…}, ${PASS+…}) are
		// written in the command: each is redacted as the same value
		// would be in the parameter's place, the expansion kept around it.
		{"mysql -u root -p${PASS:-Realpw9x} db", "mysql -u root -p${PASS:-" + pw + "} db"},
		{"nxc smb host -u admin -p ${PASS:-Realpw9x}", "nxc smb host -u admin -p ${PASS:-" + pw + "}"},
		{"DB_PASSWORD=${PASS:-Realpw9x} ./run", "DB_PASSWORD=${PASS:-" + pw + "} ./run"},
		{"export API_TOKEN=${TOKEN:-sk_live_abcdef123456}", "export API_TOKEN=${TOKEN:-" + sec + "}"},
		{"PGPASSWORD=${PGPASSWORD:-hunter2pw} psql", "PGPASSWORD=${PGPASSWORD:-" + pw + "} psql"},
		{"curl -u user:${PW:-Secretpw1} https://x", "curl -u user:${PW:-" + pw + "} https://x"},
		{`DB_PASSWORD="${PASS-Realpw9x}" ./run`, `DB_PASSWORD="${PASS-` + pw + `}" ./run`},
		{"DB_PASSWORD=${PASS:+Realpw9x} DB_PASSWORD=${PASS+Realpw9x} DB_PASSWORD=${PASS=Realpw9x} DB_PASSWORD=${PASS:=Realpw9x}",
			"DB_PASSWORD=${PASS:+" + pw + "} DB_PASSWORD=${PASS+" + pw + "} DB_PASSWORD=${PASS=" + pw + "} DB_PASSWORD=${PASS:=" + pw + "}"},
		{"redis-cli -a ${REDIS_PASSWORD:-Xk93mzPq77} ping; mongo --password ${PW:-Xk93mzPq77} app", "redis-cli -a ${REDIS_PASSWORD:-" + pw + "} ping; mongo --password ${PW:-" + pw + "} app"},
		{"curl -u ${U:-me}:${PW:-Secretpw1} https://x", "curl -u ${U:-me}:${PW:-" + pw + "} https://x"},
		{"psql postgres://${U:-app}:${DB_PASS:-Xk93mzPq77}@db:5432/app", "psql postgres://${U:-app}:${DB_PASS:-" + r("url_password") + "}@db:5432/app"},
		// The parameter's own name may say what it holds, as NAME=… does.
		{`: "${DB_PASSWORD:=Realpw9x}"; echo ${API_TOKEN:-Xk93mzPq77}`, `: "${DB_PASSWORD:=` + pw + `}"; echo ${API_TOKEN:-` + sec + `}`},
		// Its word is one to the shell, blanks and all; NetExec reads the
		// words after it, defaults or not.
		{"DB_PASSWORD=${PASS:-two words9} ./run", "DB_PASSWORD=${PASS:-" + pw + "} ./run"},
		{`nxc smb srv -u bob -p ${P:-Xk93mzPq77} Xk93mzPq78 "${Q:-Xk93mzPq79}" --shares`, `nxc smb srv -u bob -p ${P:-` + pw + `} ` + pw + ` "${Q:-` + pw + `}" --shares`},
		{"nxc smb srv -u admin -H ${NT:-" + nt + "} " + nt + " --shares", "nxc smb srv -u admin -H ${NT:-" + pw + "} " + pw + " --shares"},
		// A token keeps its kind.
		{"export API_TOKEN=${TOKEN:-" + ghp + "}", "export API_TOKEN=${TOKEN:-" + r("github_token") + "}"},
		// Every operator of bash's, with a colon or without, after a
		// name that says what the parameter holds: the word of - = + is
		// a value, and so is that of ? when it is not a message (prose,
		// or a word of letters alone).
		{"echo ${DB_PASSWORD-Xk93mzPq77} ${DB_PASSWORD+Xk93mzPq77} ${DB_PASSWORD=Xk93mzPq77} ${DB_PASSWORD?Xk93mzPq77}",
			"echo ${DB_PASSWORD-" + pw + "} ${DB_PASSWORD+" + pw + "} ${DB_PASSWORD=" + pw + "} ${DB_PASSWORD?" + pw + "}"},
		{"echo ${DB_PASSWORD:=Xk93mzPq77} ${DB_PASSWORD:?Xk93mzPq77} ${DB_PASSWORD:+Xk93mzPq77} ${API_TOKEN+Xk93mzPq77}",
			"echo ${DB_PASSWORD:=" + pw + "} ${DB_PASSWORD:?" + pw + "} ${DB_PASSWORD:+" + pw + "} ${API_TOKEN+" + sec + "}"},
		{"${DB_PASSWORD-Xk93mzPq77}", "${DB_PASSWORD-" + pw + "}"},
		{`psql "host=db password=${PGPASSWORD?Xk93mzPq77}"`, `psql "host=db password=${PGPASSWORD?` + pw + `}"`},
		{`: ${DB_PASSWORD:?unset} ${DB_PASSWORD?"set DB_PASSWORD"} ${API_TOKEN?required}`, ""},
		// A bare PASS is a password's name in a parameter, where it is
		// not go test's verdict.
		{"echo ${PASS:-pw}", "echo ${PASS:-" + pw + "}"},
		{"mysql -u root -p\"${PASS-Xk93mzPq77}\" app; echo ${pass:-Xk93mzPq77}", "mysql -u root -p\"${PASS-" + pw + "}\" app; echo ${pass:-" + pw + "}"},
		// A default longer than the braces are first read for is
		// redacted whole all the same.
		{"echo ${DB_PASSWORD:-" + strings.Repeat("Xk93mzPq77", 30) + "} ok", "echo ${DB_PASSWORD:-" + pw + "} ok"},
		{"DB_PASSWORD=${A:-" + strings.Repeat("Xk93mzPq77", 30) + "} ./run", "DB_PASSWORD=${A:-" + pw + "} ./run"},
		{"echo ${API_TOKEN:-" + strings.Repeat("Xk93mzPq77 ", 30) + "}", "echo ${API_TOKEN:-" + sec + "}"},
		{"echo ${DB_PASSWORD:-" + strings.Repeat("Xk93mzPq77", 30) + "\nls", "echo ${DB_PASSWORD:-" + pw + "\nls"},
		// A nested expansion is part of the word.
		{"DB_PASSWORD=${A:-x${B}} ./run", "DB_PASSWORD=${A:-" + pw + "} ./run"},
		{"echo ${DB_PASSWORD:-Xk93${B}mzPq77} ok", "echo ${DB_PASSWORD:-" + pw + "} ok"},
		{"DB_PASSWORD=${A:-${B:-Xk93mzPq77}} ./run", "DB_PASSWORD=${A:-${B:-" + pw + "}} ./run"},
		// So is an expansion that starts it, when text follows it.
		{"echo ${DB_PASSWORD:-${VAULT_PW}x} ok", "echo ${DB_PASSWORD:-" + pw + "} ok"},
		{"DB_PASSWORD=${A:-${B}Xk93mzPq77} ./run", "DB_PASSWORD=${A:-" + pw + "} ./run"},
		// A value that mixes text and expansions is one word to the
		// shell, and redacted whole: no part of it after an expansion,
		// a command substitution or a command in backquotes is left.
		{"DB_PASSWORD=Xk93${X}mzPq77 ./run", "DB_PASSWORD=" + pw + " ./run"},
		{"export API_TOKEN=abc$(cat x)def; ls", "export API_TOKEN=" + sec + "; ls"},
		{"export API_TOKEN=abc`cat x`def; ls", "export API_TOKEN=" + sec + "; ls"},
		{"DB_PASSWORD=Xk93$(cat x) ./run", "DB_PASSWORD=" + pw + " ./run"},
		{"DB_PASSWORD=Xk93${A:-b}mz$(c)Pq77`d`e ./run", "DB_PASSWORD=" + pw + " ./run"},
		{"DB_PASSWORD=${VAULT_PW}mzPq77 ./run", "DB_PASSWORD=" + pw + " ./run"},
		{`DB_PASSWORD="${VAULT_PW}mzPq77" ./run`, `DB_PASSWORD="` + pw + `" ./run`},
		{"DB_PASSWORD=${A:-Xk93}mzPq77 ./run", "DB_PASSWORD=" + pw + " ./run"},
		{`DB_PASSWORD="${A:-Xk93}mzPq77" ./run`, `DB_PASSWORD="` + pw + `" ./run`},
		// A default longer than the braces are first read for, in a
		// URL's password or in curl's user:password.
		{"curl -s https://user:${PW:-" + strings.Repeat("Xk93mzPq77", 30) + "}@host/x", "curl -s https://user:${PW:-" + r("url_password") + "}@host/x"},
		{"curl -u user:${PW:-" + strings.Repeat("Xk93mzPq77", 30) + "} https://x", "curl -u user:${PW:-" + pw + "} https://x"},
		// A URL's user part that is such a default: the password after
		// it, also when the default's braces never close.
		{"curl https://${U:-" + long + "}:Xk93mzPq77secret@db.example.com/x", "curl https://${U:-" + long + "}:" + r("url_password") + "@db.example.com/x"},
		{"curl https://${U:-" + long + "}:${PW:-Xk93mzPq77}@db.example.com/x", "curl https://${U:-" + long + "}:${PW:-" + r("url_password") + "}@db.example.com/x"},
		{"curl https://${U:-" + long + ":Xk93mzPq77secret@db.example.com/x", "curl https://${U:-" + long + ":" + r("url_password") + "@db.example.com/x"},
		{"curl https://a${U:-" + long + "}:Xk93mzPq77secret@db.example.com/x", "curl https://a${U:-" + long + "}:" + r("url_password") + "@db.example.com/x"},
		// The whole user info in a default, its braces closed after the
		// '@', within the bound or beyond it; with any operator but '?'.
		{"curl https://${U:-app:Xk93mzPq77secret@db.example.com}/x", "curl https://${U:-app:" + r("url_password") + "@db.example.com}/x"},
		{"curl https://${U:=app:Xk93mzPq77secret@db}/x https://${U+app:Xk93mzPq77secret@db}", "curl https://${U:=app:" + r("url_password") + "@db}/x https://${U+app:" + r("url_password") + "@db}"},
		{"curl https://${U:-" + long + ":Xk93mzPq77secret@db.example.com}/x", "curl https://${U:-" + long + ":" + r("url_password") + "@db.example.com}/x"},
		{"curl https://${U:-" + long + ":Xk93mzPq77secret@db.example.com}:8443/x", "curl https://${U:-" + long + ":" + r("url_password") + "@db.example.com}:8443/x"},
		// A command substitution is one word among NetExec's passwords,
		// as is a command in backquotes; htpasswd counts it as one.
		{"nxc smb srv -u bob -p $(cat pw.txt) Xk93mzPq77 --shares", "nxc smb srv -u bob -p $(cat pw.txt) " + pw + " --shares"},
		{`nxc smb srv -u bob -p Xk93mzPq76 "$(pass show smb/bob)" $(cat "$(ls f*)") Xk93mzPq77`, `nxc smb srv -u bob -p ` + pw + ` "$(pass show smb/bob)" $(cat "$(ls f*)") ` + pw},
		{"nxc smb srv -u bob -p `cat pw.txt` Xk93mzPq77 --shares; sshpass -p `pass show h` ssh h", "nxc smb srv -u bob -p `cat pw.txt` " + pw + " --shares; sshpass -p `pass show h` ssh h"},
		{"htpasswd -b .htpasswd $(id -un) Xk93mzPq77", "htpasswd -b .htpasswd $(id -un) " + pw},
		// A default that is a reference or empty, the message of
		// ${VAR:?…}, a pattern or an offset, and the default of a flag or
		// an argument that takes no password stay as they are.
		{"ls ${HOME:-/tmp}; cp a.txt ${DEST:-/tmp/out}", ""},
		{`DB_PASSWORD=${A:-$B} API_TOKEN=${A:-${B}} DB_PASSWORD=${A:-} DB_PASSWORD="${A-}" ./run`, ""},
		{"DB_PASSWORD=${VAR:?need VAR} ./run; : ${API_TOKEN:?need API_TOKEN}", ""},
		{"DB_PASSWORD=${PASS#Realpw9x} ${DB_PASSWORD%%Realpw9x} ${API_TOKEN/a/Xk93mzPq77} ${DB_PASSWORD:0:4}", ""},
		{"docker run -p ${PORT:-8080}:80 nginx; ssh -p ${SSH_PORT:-2222} h; redis-cli -p ${REDIS_PORT:-6379} ping", ""},
		{"mysql -u root -p ${DB:-app}; mkdir -p ${DIR:-/tmp/x}; sshpass -p ${PW:-x} ssh -p ${PORT:-22} h", ""},
		{"API_TOKEN=${TOKEN:-your_api_key} DB_PASSWORD=${PW:-x} GITHUB_TOKEN=${T:-none}; echo ${GITHUB_TOKEN:-not set}", ""},
		{"curl -u ${USER:-me} https://x; curl -u user:${PW} https://x; psql postgres://app:${PW:-}@db/app", ""},
		{"curl https://${U:-" + long + "}@host/; curl https://${U:-" + long + ":x}@host/ https://${U:-" + long + "}:8443/x https://host/path", ""},
		{"curl https://${U:-app@db}/x https://${U:-app:${PW}@db}/x https://${U:?app:Xk93mzPq77secret@db} https://${H:-db:5432}/x", ""},
		{"DB_PASSWORD=${HOME}/.pw API_TOKEN=$(cat f) DB_PASSWORD=${A}${B} API_TOKEN=$(a)$(b) ./run", ""},
		{"const url = `token=${t}`; DB_PASSWORD=$(vault read -field=pw x) ./run", ""},

		// The -p of others.
		{"ssh -p 2222 host; mkdir -p a/b; docker run -p 8080:80 nginx", ""},
	}
}

func TestCommandLinePasswords(t *testing.T) {
	pre := readFile(t, "testdata/pretooluse-bash.json")
	post := readFile(t, "testdata/posttooluse-bash.json")
	codex := readFile(t, "testdata/codex-posttooluse-bash.json")
	for _, c := range commandLines() {
		want := c.want
		if want == "" {
			want = c.cmd
		}
		if got, _ := String(c.cmd); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.cmd, got, want)
		}
		// In the payloads of a Bash call: its command, and the command
		// echoed in its output (set -x).
		for _, p := range []struct {
			name, old string
			raw       []byte
			field     func(map[string]any) any
			text      func(cmd string) string
		}{
			{"PreToolUse command", `"go vet ./... 2>&1; exit 3"`, pre,
				func(m map[string]any) any { return m["tool_input"].(map[string]any)["command"] },
				func(cmd string) string { return cmd }},
			{"PostToolUse stdout", `"stdout":"2"`, post,
				func(m map[string]any) any { return m["tool_response"].(map[string]any)["stdout"] },
				func(cmd string) string { return "+ " + cmd + "\n2" }},
			{"Codex PostToolUse output", `"tool_response":"hi.txt\n"`, codex,
				func(m map[string]any) any { return m["tool_response"] },
				func(cmd string) string { return "+ " + cmd + "\nhi.txt\n" }},
		} {
			lit, _ := json.Marshal(p.text(c.cmd))
			repl := string(lit)
			if i := strings.IndexByte(p.old, ':'); p.old[0] == '"' && i > 0 && p.old[i-1] == '"' {
				repl = p.old[:i+1] + repl // keep the key
			}
			in := bytes.Replace(p.raw, []byte(p.old), []byte(repl), 1)
			if bytes.Equal(in, p.raw) {
				t.Fatalf("%s: %s not in the payload", p.name, p.old)
			}
			got, n := JSON(in)
			if c.want == "" {
				if n != 0 || !bytes.Equal(got, in) {
					t.Errorf("%s: %q changed:\n%s", p.name, c.cmd, got)
				}
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("%s: %v in %s", p.name, err, got)
			}
			if v := p.field(m); v != p.text(want) {
				t.Errorf("%s: %q\n got %q\nwant %q", p.name, c.cmd, v, p.text(want))
			}
		}
	}
}
